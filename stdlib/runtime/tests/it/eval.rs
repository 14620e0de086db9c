//! Evaluator tests: arithmetic is checked, methods behave as spec §5 says, match binds, calls
//! and externs work, and nothing panics on a bad IR.

use aelc_runtime::eval::{
    compare, CheckOutcome, EvalError, EvalErrorKind, Evaluator, Host, NoHost,
};
use aelc_runtime::expr::{
    Arm, BinaryOp, Check, Closure, Expr, FieldPattern, FnDef, FnId, Method, Pattern, Require, Slot,
    UnaryOp,
};
use aelc_runtime::value::Value;

fn int(i: i128) -> Expr {
    Expr::constant(Value::Int(i))
}

fn text(s: &str) -> Expr {
    Expr::constant(Value::Str(s.into()))
}

fn eval(e: &Expr) -> Result<Value, EvalError> {
    let fns: Vec<FnDef> = Vec::new();
    let mut host = NoHost;
    Evaluator::new(&fns, &mut host).eval_with(e, &[])
}

fn eval_on(e: &Expr, arg: &Value) -> Result<Value, EvalError> {
    let fns: Vec<FnDef> = Vec::new();
    let mut host = NoHost;
    Evaluator::new(&fns, &mut host).eval_with(e, &[arg])
}

fn kind(r: Result<Value, EvalError>) -> Option<EvalErrorKind> {
    r.err().map(|e| e.kind)
}

#[test]
fn integer_arithmetic_is_checked() {
    assert_eq!(
        eval(&Expr::binary(BinaryOp::Add, int(2), int(3))),
        Ok(Value::Int(5))
    );
    assert_eq!(
        eval(&Expr::binary(BinaryOp::Div, int(-7), int(2))),
        Ok(Value::Int(-3))
    );
    assert_eq!(
        eval(&Expr::binary(BinaryOp::Rem, int(-7), int(2))),
        Ok(Value::Int(-1))
    );
    assert_eq!(
        kind(eval(&Expr::binary(BinaryOp::Div, int(1), int(0)))),
        Some(EvalErrorKind::DivisionByZero)
    );
    assert_eq!(
        kind(eval(&Expr::binary(BinaryOp::Rem, int(1), int(0)))),
        Some(EvalErrorKind::DivisionByZero)
    );
    assert_eq!(
        kind(eval(&Expr::binary(BinaryOp::Mul, int(i128::MAX), int(2)))),
        Some(EvalErrorKind::Overflow)
    );
    let neg = Expr::Unary {
        op: UnaryOp::Neg,
        operand: Box::new(int(i128::MIN)),
    };
    assert_eq!(kind(eval(&neg)), Some(EvalErrorKind::Overflow));
    let inf = Expr::binary(
        BinaryOp::Div,
        Expr::constant(Value::Float(1.0)),
        Expr::constant(Value::Float(0.0)),
    );
    assert_eq!(kind(eval(&inf)), Some(EvalErrorKind::NotFinite));
    assert_eq!(
        kind(eval(&Expr::binary(BinaryOp::Add, int(1), text("a")))),
        Some(EvalErrorKind::TypeMismatch)
    );
}

#[test]
fn text_and_comparisons() {
    assert_eq!(
        eval(&Expr::binary(BinaryOp::Add, text("ab"), text("cd"))),
        Ok(Value::Str("abcd".into()))
    );
    assert_eq!(
        eval(&Expr::method(text("  é x "), Method::Trim)),
        Ok(Value::Str("é x".into()))
    );
    assert_eq!(
        eval(&Expr::method(text("héllo"), Method::Len)),
        Ok(Value::Int(5))
    );
    assert_eq!(
        eval(&Expr::method(text("Ab"), Method::ToUpper)),
        Ok(Value::Str("AB".into()))
    );
    assert_eq!(
        eval(&Expr::method(text("Ab"), Method::ToLower)),
        Ok(Value::Str("ab".into()))
    );
    assert_eq!(
        eval(&Expr::method(text(""), Method::IsEmpty)),
        Ok(Value::Bool(true))
    );
    assert_eq!(
        eval(&Expr::method(
            text("abc"),
            Method::Contains {
                arg: Box::new(text("b"))
            }
        )),
        Ok(Value::Bool(true))
    );
    assert_eq!(
        eval(&Expr::method(
            text("abc"),
            Method::StartsWith {
                arg: Box::new(text("ab"))
            }
        )),
        Ok(Value::Bool(true))
    );
    assert_eq!(
        eval(&Expr::method(
            text("abc"),
            Method::EndsWith {
                arg: Box::new(text("ab"))
            }
        )),
        Ok(Value::Bool(false))
    );
    assert_eq!(
        eval(&Expr::method(
            text("en-GB"),
            Method::Matches {
                pattern: "^[a-z]{2}-".into()
            }
        )),
        Ok(Value::Bool(true))
    );
    assert_eq!(
        eval(&Expr::method(
            text("x en"),
            Method::Matches {
                pattern: "[a-z]{2}".into()
            }
        )),
        Ok(Value::Bool(true))
    );
    assert_eq!(
        eval(&Expr::binary(BinaryOp::Lt, text("a"), text("b"))),
        Ok(Value::Bool(true))
    );
    assert_eq!(
        eval(&Expr::binary(BinaryOp::Ge, int(3), int(3))),
        Ok(Value::Bool(true))
    );
    assert!(compare(&Value::Int(1), &Value::Float(1.0)).is_err());
    // Short-circuit: the right side (a division by zero) is never evaluated.
    let guarded = Expr::binary(
        BinaryOp::And,
        Expr::constant(Value::Bool(false)),
        Expr::binary(
            BinaryOp::Eq,
            Expr::binary(BinaryOp::Div, int(1), int(0)),
            int(0),
        ),
    );
    assert_eq!(eval(&guarded), Ok(Value::Bool(false)));
}

fn list(items: &[i128]) -> Value {
    Value::List(items.iter().map(|i| Value::Int(*i)).collect())
}

fn closure(body: Expr) -> Closure {
    Closure {
        param: Slot(1),
        body: Box::new(body),
    }
}

#[test]
fn list_methods_with_closures() {
    let xs = list(&[3, 1, 2]);
    let positive = || closure(Expr::binary(BinaryOp::Gt, Expr::local(1), int(1)));
    let on = |m: Method| eval_on(&Expr::method(Expr::local(0), m), &xs);
    assert_eq!(on(Method::Len), Ok(Value::Int(3)));
    assert_eq!(on(Method::Sum { float: false }), Ok(Value::Int(6)));
    assert_eq!(on(Method::First), Ok(Value::some(Value::Int(3))));
    assert_eq!(on(Method::Last), Ok(Value::some(Value::Int(2))));
    assert_eq!(
        on(Method::All {
            closure: positive()
        }),
        Ok(Value::Bool(false))
    );
    assert_eq!(
        on(Method::Any {
            closure: positive()
        }),
        Ok(Value::Bool(true))
    );
    assert_eq!(
        on(Method::Count {
            closure: positive()
        }),
        Ok(Value::Int(2))
    );
    assert_eq!(
        on(Method::Filter {
            closure: positive()
        }),
        Ok(list(&[3, 2]))
    );
    let double = closure(Expr::binary(BinaryOp::Mul, Expr::local(1), int(2)));
    assert_eq!(on(Method::Map { closure: double }), Ok(list(&[6, 2, 4])));
    assert_eq!(
        on(Method::SortBy {
            closure: closure(Expr::local(1))
        }),
        Ok(list(&[1, 2, 3]))
    );
    assert_eq!(
        on(Method::Contains {
            arg: Box::new(int(2))
        }),
        Ok(Value::Bool(true))
    );
    let empty = list(&[]);
    assert_eq!(
        eval_on(&Expr::method(Expr::local(0), Method::First), &empty),
        Ok(Value::None)
    );
    assert_eq!(
        eval_on(
            &Expr::method(Expr::local(0), Method::Sum { float: false }),
            &empty
        ),
        Ok(Value::Int(0))
    );
    let big = list(&[i128::MAX, 1]);
    assert_eq!(
        kind(eval_on(
            &Expr::method(Expr::local(0), Method::Sum { float: false }),
            &big
        )),
        Some(EvalErrorKind::Overflow)
    );
}

#[test]
fn sort_by_is_stable_on_enum_keys() {
    // (severity, id): sort by severity keeps the ids' order among equals.
    let item = |sev: u32, id: i128| {
        Value::Struct(vec![
            Value::Enum {
                variant: sev,
                fields: vec![],
            },
            Value::Int(id),
        ])
    };
    let xs = Value::List(vec![item(2, 0), item(0, 1), item(2, 2), item(0, 3)]);
    let by = Method::SortBy {
        closure: closure(Expr::field(Expr::local(1), 0)),
    };
    let sorted = eval_on(&Expr::method(Expr::local(0), by), &xs);
    assert_eq!(
        sorted,
        Ok(Value::List(vec![
            item(0, 1),
            item(0, 3),
            item(2, 0),
            item(2, 2)
        ]))
    );
}

#[test]
fn options_and_match() {
    let some = Value::some(Value::Int(4));
    let on = |e: &Expr, v: &Value| eval_on(e, v);
    assert_eq!(
        on(&Expr::method(Expr::local(0), Method::IsSome), &some),
        Ok(Value::Bool(true))
    );
    assert_eq!(
        on(&Expr::method(Expr::local(0), Method::IsNone), &Value::None),
        Ok(Value::Bool(true))
    );
    let unwrap = Expr::method(
        Expr::local(0),
        Method::UnwrapOr {
            default: Box::new(int(9)),
        },
    );
    assert_eq!(on(&unwrap, &some), Ok(Value::Int(4)));
    assert_eq!(on(&unwrap, &Value::None), Ok(Value::Int(9)));
    let m = Expr::Match {
        scrutinee: Box::new(Expr::local(0)),
        arms: vec![
            Arm {
                pattern: Pattern::Some {
                    pattern: Box::new(Pattern::Bind { slot: Slot(1) }),
                },
                body: Expr::binary(BinaryOp::Add, Expr::local(1), int(1)),
            },
            Arm {
                pattern: Pattern::None,
                body: int(0),
            },
        ],
    };
    assert_eq!(on(&m, &some), Ok(Value::Int(5)));
    assert_eq!(on(&m, &Value::None), Ok(Value::Int(0)));
    // Variants: `circle { radius } => radius`, `_ => 0.0`.
    let circle = Value::Enum {
        variant: 0,
        fields: vec![Value::Float(1.5)],
    };
    let square = Value::Enum {
        variant: 1,
        fields: vec![Value::Float(2.0)],
    };
    let shape = Expr::Match {
        scrutinee: Box::new(Expr::local(0)),
        arms: vec![
            Arm {
                pattern: Pattern::Variant {
                    variant: 0,
                    fields: vec![FieldPattern {
                        index: 0,
                        pattern: Pattern::Bind { slot: Slot(1) },
                    }],
                    bind: None,
                },
                body: Expr::local(1),
            },
            Arm {
                pattern: Pattern::Wildcard,
                body: Expr::constant(Value::Float(0.0)),
            },
        ],
    };
    assert_eq!(on(&shape, &circle), Ok(Value::Float(1.5)));
    assert_eq!(on(&shape, &square), Ok(Value::Float(0.0)));
    let no_arm = Expr::Match {
        scrutinee: Box::new(int(1)),
        arms: vec![Arm {
            pattern: Pattern::Literal {
                value: Value::Int(2),
            },
            body: int(0),
        }],
    };
    assert_eq!(kind(eval(&no_arm)), Some(EvalErrorKind::NoMatchingArm));
    let lets = Expr::Let {
        slot: Slot(0),
        value: Box::new(int(2)),
        body: Box::new(Expr::binary(BinaryOp::Mul, Expr::local(0), Expr::local(0))),
    };
    assert_eq!(eval(&lets), Ok(Value::Int(4)));
    let iff = Expr::If {
        cond: Box::new(Expr::constant(Value::Bool(true))),
        then: Box::new(int(1)),
        otherwise: Box::new(int(2)),
    };
    assert_eq!(eval(&iff), Ok(Value::Int(1)));
}

struct Doubler;
impl Host for Doubler {
    fn call_extern(&mut self, func: FnId, args: Vec<Value>) -> Result<Value, EvalError> {
        match (func, args.as_slice()) {
            (FnId(7), [Value::Int(i)]) => Ok(Value::Int(i * 2)),
            _ => Err(EvalError::new(EvalErrorKind::Extern, "no such extern")),
        }
    }
}

#[test]
fn calls_externs_and_checks() {
    // fn inc(x) -> x + 1 ; fn loop_() -> loop_()
    let fns = vec![
        FnDef {
            name: "inc".into(),
            params: vec![],
            locals: 1,
            ret: None,
            body: Expr::binary(BinaryOp::Add, Expr::local(0), int(1)),
        },
        FnDef {
            name: "forever".into(),
            params: vec![],
            locals: 0,
            ret: None,
            body: Expr::Call {
                func: FnId(1),
                args: vec![],
            },
        },
    ];
    let mut host = Doubler;
    let mut ev = Evaluator::new(&fns, &mut host);
    let call = Expr::Call {
        func: FnId(0),
        args: vec![Expr::CallExtern {
            func: FnId(7),
            args: vec![int(20)],
        }],
    };
    assert_eq!(ev.eval_with(&call, &[]), Ok(Value::Int(41)));
    assert_eq!(
        ev.call(FnId(1), &[]).err().map(|e| e.kind),
        Some(EvalErrorKind::TooDeep)
    );
    assert_eq!(
        ev.call(FnId(9), &[]).err().map(|e| e.kind),
        Some(EvalErrorKind::UnknownFn)
    );
    let check = Check {
        name: "not_blank".into(),
        params: vec![],
        locals: 1,
        requires: vec![
            Require {
                cond: Expr::binary(
                    BinaryOp::Gt,
                    Expr::method(Expr::method(Expr::local(0), Method::Trim), Method::Len),
                    int(0),
                ),
                code: "empty_document".into(),
                message: Some("the document is blank".into()),
            },
            Require {
                cond: Expr::constant(Value::Bool(false)),
                code: "second".into(),
                message: None,
            },
        ],
    };
    let blank = Value::Str("   ".into());
    assert_eq!(
        ev.run_check(&check, &[&blank]),
        Ok(CheckOutcome::Failed {
            code: "empty_document".into(),
            message: Some("the document is blank".into())
        })
    );
    let full = Value::Str("x".into());
    assert_eq!(
        ev.run_check(&check, &[&full])
            .map(|o| o != CheckOutcome::Passed),
        Ok(true)
    );
    // Reading an unset slot is an error, not a panic.
    assert_eq!(
        kind(eval(&Expr::local(5))),
        Some(EvalErrorKind::UnboundLocal)
    );
    assert_eq!(
        kind(eval(&Expr::field(int(1), 0))),
        Some(EvalErrorKind::TypeMismatch)
    );
}
