//! Steps 4 and 5 for compiled AEL: an [`OutputStage`] that runs `check`s and a transform `fn`
//! from the expression IR with the [`Evaluator`], next to Rust-written `extern check`s.
//!
//! Each check or transform names where its arguments come from ([`Arg`]): the output being
//! accepted, or one of the node's (already decoded) inputs. Arguments are borrowed, never
//! copied, so checks cost what their expressions cost.

use crate::bounds::Patterns;
use crate::eval::{CheckOutcome, EvalError, Evaluator, FnTable, Host};
use crate::expr::{Check, FnDef, FnId};
use crate::pipeline::{CheckFailure, OutputStage};
use crate::value::Value;

/// Where a check or transform parameter gets its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// The output under test.
    Output,
    /// The node's input parameter at this index.
    Input(usize),
}

/// A Rust-written check: gets its arguments, answers `None` (passed) or `(code, message)`.
pub type ExternCheckFn<'p> =
    Box<dyn FnMut(&[&Value]) -> Result<Option<(String, Option<String>)>, EvalError> + 'p>;

/// One declared output check.
pub enum StageCheck<'p> {
    Ir {
        check: &'p Check,
        args: Vec<Arg>,
    },
    Extern {
        name: String,
        args: Vec<Arg>,
        run: ExternCheckFn<'p>,
    },
    /// An `extern check` the stage's host answers ([`Host::call_check`], by the program's
    /// check id).
    Host {
        id: u32,
        name: String,
        args: Vec<Arg>,
    },
}

/// The output checks and transform of one node, over IR.
pub struct IrStage<'p> {
    pub fns: &'p dyn FnTable,
    pub host: &'p mut dyn Host,
    pub inputs: &'p [Value],
    pub checks: Vec<StageCheck<'p>>,
    pub transform: Option<(&'p FnDef, Vec<Arg>)>,
    /// A transform that is an `extern fn`, answered by the host.
    pub extern_transform: Option<(FnId, Vec<Arg>)>,
    /// Raw mode: the `extern fn` that parses the answer's text (`parse: f;`), answered by the
    /// host with the text as its one argument.
    pub raw_parse: Option<FnId>,
    /// Where the `matches` patterns compile: the fn table's shared cache when it has one (a
    /// program's, so once per program), else the stage's own, kept for its life (every check
    /// of every attempt of one node run compiles a pattern once).
    pub patterns: Patterns,
}

/// The argument values of a check or transform call. Checks take one or two (the output, an
/// input): they stay on the stack, as this runs for every answer (spec §6.1 step 4 costs
/// next to nothing on top of decoding).
enum Args<'v> {
    Few([&'v Value; 4], usize),
    Many(Vec<&'v Value>),
}

impl<'v> std::ops::Deref for Args<'v> {
    type Target = [&'v Value];

    fn deref(&self) -> &[&'v Value] {
        match self {
            Args::Few(values, len) => values.get(..*len).unwrap_or_default(),
            Args::Many(values) => values,
        }
    }
}

fn resolve<'v>(
    args: &[Arg],
    output: &'v Value,
    inputs: &'v [Value],
) -> Result<Args<'v>, EvalError> {
    let one = |arg: &Arg| match arg {
        Arg::Output => Ok(output),
        Arg::Input(i) => inputs.get(*i).ok_or_else(|| {
            EvalError::new(
                crate::eval::EvalErrorKind::UnboundLocal,
                format!("the node has no input #{i}"),
            )
        }),
    };
    if args.len() <= 4 {
        let mut few = [output; 4];
        for (slot, arg) in few.iter_mut().zip(args) {
            *slot = one(arg)?;
        }
        Ok(Args::Few(few, args.len()))
    } else {
        Ok(Args::Many(args.iter().map(one).collect::<Result<_, _>>()?))
    }
}

impl<'p> IrStage<'p> {
    /// A stage of `checks` over `inputs`, with no transform, compiling patterns into the fn
    /// table's cache (set `transform` with struct update syntax).
    pub fn new(
        fns: &'p dyn FnTable,
        host: &'p mut dyn Host,
        inputs: &'p [Value],
        checks: Vec<StageCheck<'p>>,
    ) -> IrStage<'p> {
        IrStage {
            fns,
            host,
            inputs,
            checks,
            transform: None,
            extern_transform: None,
            raw_parse: None,
            patterns: fns.patterns().cloned().unwrap_or_default(),
        }
    }
}

impl OutputStage for IrStage<'_> {
    fn check(&mut self, output: &Value) -> Result<Option<CheckFailure>, EvalError> {
        let inputs = self.inputs;
        for check in &mut self.checks {
            match check {
                StageCheck::Ir { check, args } => {
                    let values = resolve(args, output, inputs)?;
                    let mut eval = Evaluator::new(self.fns, &mut *self.host)
                        .with_patterns(self.patterns.clone());
                    let outcome = eval.run_check(check, &values);
                    if let CheckOutcome::Failed { code, message } = outcome? {
                        return Ok(Some(CheckFailure {
                            check: check.name.clone(),
                            code,
                            message,
                        }));
                    }
                }
                StageCheck::Host { id, name, args } => {
                    let values = resolve(args, output, inputs)?;
                    if let Some((code, message)) = self.host.call_check(*id, &values)? {
                        return Ok(Some(CheckFailure {
                            check: name.clone(),
                            code,
                            message,
                        }));
                    }
                }
                StageCheck::Extern { name, args, run } => {
                    let values = resolve(args, output, inputs)?;
                    if let Some((code, message)) = run(&values)? {
                        return Ok(Some(CheckFailure {
                            check: name.clone(),
                            code,
                            message,
                        }));
                    }
                }
            }
        }
        Ok(None)
    }

    fn has_transform(&self) -> bool {
        self.transform.is_some() || self.extern_transform.is_some()
    }

    fn parse_raw(&mut self, text: &str) -> Option<Result<Value, EvalError>> {
        let parser = self.raw_parse?;
        Some(self.host.call_extern(parser, vec![Value::Str(text.into())]))
    }

    fn transform(&mut self, output: Value) -> Result<Value, EvalError> {
        if let Some((f, args)) = &self.extern_transform {
            let values = resolve(args, &output, self.inputs)?;
            let owned = values.iter().map(|v| (*v).clone()).collect();
            return self.host.call_extern(*f, owned);
        }
        let Some((f, args)) = &self.transform else {
            return Ok(output);
        };
        let values = resolve(args, &output, self.inputs)?;
        Evaluator::new(self.fns, &mut *self.host)
            .with_patterns(self.patterns.clone())
            .run_fn(f, &values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_resolve_in_order_few_or_many() {
        let output = Value::Int(0);
        let inputs = [Value::Int(1), Value::Int(2)];
        let ints = |args: &[Arg]| -> Vec<Value> {
            match resolve(args, &output, &inputs) {
                Ok(values) => values.iter().map(|v| (*v).clone()).collect(),
                Err(e) => panic!("{e:?}"),
            }
        };
        assert_eq!(
            ints(&[Arg::Input(1), Arg::Output]),
            [Value::Int(2), Value::Int(0)]
        );
        let many = [
            Arg::Output,
            Arg::Input(0),
            Arg::Input(1),
            Arg::Input(0),
            Arg::Output,
        ];
        assert_eq!(
            ints(&many),
            [0, 1, 2, 1, 0].map(Value::Int).to_vec(),
            "more than fit on the stack"
        );
        assert!(ints(&[]).is_empty());
        assert!(resolve(&[Arg::Output, Arg::Input(2)], &output, &inputs).is_err());
    }

    /// A `matches` pattern is compiled once per stage, not once per answer: the stage keeps
    /// what its evaluators compiled, across checks and attempts.
    #[test]
    fn patterns_outlive_one_answer() {
        use crate::eval::NoHost;
        use crate::expr::{Expr, Method, Param, Require};
        use crate::ty::{StrTy, Ty};
        let check = Check {
            name: "code_like".into(),
            params: vec![Param {
                name: "output".into(),
                ty: Ty::Str(StrTy {
                    min: 0,
                    max: 10,
                    pattern: None,
                    format: None,
                }),
            }],
            locals: 1,
            requires: vec![Require {
                cond: Expr::method(
                    Expr::local(0),
                    Method::Matches {
                        pattern: "^[A-Z]+$".into(),
                    },
                ),
                code: "not_a_code".into(),
                message: None,
            }],
        };
        let fns: Vec<FnDef> = Vec::new();
        let mut host = NoHost;
        let checks = vec![StageCheck::Ir {
            check: &check,
            args: vec![Arg::Output],
        }];
        let mut stage = IrStage::new(&fns, &mut host, &[], checks);
        let passed = |r: Result<Option<CheckFailure>, EvalError>| matches!(r, Ok(None));
        assert!(passed(stage.check(&Value::Str("ABC".into()))));
        assert!(!passed(stage.check(&Value::Str("abc".into()))));
        assert!(passed(stage.check(&Value::Str("XYZ".into()))));
        assert_eq!(stage.patterns.len(), 1);
    }
}
