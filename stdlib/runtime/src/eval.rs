//! The evaluator of [`crate::expr`] over [`Value`]s: fn bodies, checks and transforms.
//!
//! It is total: it never panics on any IR or value. What cannot be computed — integer overflow,
//! division by zero, a non-finite float, a value of the wrong shape (an IR the compiler should
//! not have produced), a failing extern fn — is an [`EvalError`], which the pipeline records as
//! `internal_error`. Calls nest at most [`MAX_CALL_DEPTH`] deep and expressions at most
//! [`MAX_EXPR_DEPTH`], so even a hand-made cyclic or very deep IR ends with an error, not a
//! stack overflow.

use crate::bounds::Patterns;
use crate::expr::{BinaryOp, Check, Closure, Expr, FnDef, FnId, Method, Pattern, Slot, UnaryOp};
use crate::value::Value;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::fmt;

/// Deepest nesting of fn calls.
pub const MAX_CALL_DEPTH: usize = 64;
/// Deepest nesting of expressions being evaluated (across calls).
pub const MAX_EXPR_DEPTH: usize = 2_000;

/// Why an evaluation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EvalErrorKind {
    Overflow,
    DivisionByZero,
    NotFinite,
    /// A value of the wrong shape for an operation (an IR sema should not produce).
    TypeMismatch,
    UnboundLocal,
    NoMatchingArm,
    UnknownFn,
    TooDeep,
    /// An extern fn failed.
    Extern,
    /// A delegated call did not succeed (its receipt says why).
    Delegated,
}

/// An evaluation error: its kind and a sentence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EvalError {
    pub kind: EvalErrorKind,
    pub message: String,
}

impl EvalError {
    pub fn new(kind: EvalErrorKind, message: impl Into<String>) -> EvalError {
        EvalError {
            kind,
            message: message.into(),
        }
    }

    fn mismatch(what: &str, found: &Value) -> EvalError {
        EvalError::new(
            EvalErrorKind::TypeMismatch,
            format!(
                "{what} needs another kind of value, found {}",
                found.kind_name()
            ),
        )
    }
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

type Eval<T> = Result<T, EvalError>;

/// Where pure fns are found by id.
pub trait FnTable {
    fn pure_fn(&self, id: FnId) -> Option<&FnDef>;

    /// The program's compiled patterns, shared by every evaluator over this table (a run's
    /// checks run on a new evaluator per answer); `None` gives each evaluator its own.
    fn patterns(&self) -> Option<&Patterns> {
        None
    }
}

impl FnTable for [FnDef] {
    fn pure_fn(&self, id: FnId) -> Option<&FnDef> {
        self.get(id.0 as usize)
    }
}

impl FnTable for Vec<FnDef> {
    fn pure_fn(&self, id: FnId) -> Option<&FnDef> {
        self.get(id.0 as usize)
    }
}

/// Answers `extern fn` calls (author code, generated glue, test doubles) and a node body's
/// delegated calls (the executor).
pub trait Host {
    fn call_extern(&mut self, func: FnId, args: Vec<Value>) -> Eval<Value>;

    /// A delegated call of node `node` (spec §12). `depth` is how deep the caller's
    /// expressions already nest, so that the callee's evaluation continues the count and a
    /// chain of delegations cannot nest deeper than one evaluation may.
    /// An `extern check` (by the program's check id): `None` when it passes, else its code
    /// and message.
    fn call_check(
        &mut self,
        check: u32,
        args: &[&Value],
    ) -> Eval<Option<(String, Option<String>)>> {
        let _ = args;
        Err(EvalError::new(
            EvalErrorKind::Extern,
            format!("extern check #{check} has no implementation here"),
        ))
    }

    fn call_node(&mut self, node: u32, args: Vec<Value>, depth: usize) -> Eval<Value> {
        let _ = (args, depth);
        Err(EvalError::new(
            EvalErrorKind::Delegated,
            format!("node #{node} cannot be called here: delegated calls run in the executor"),
        ))
    }
}

/// A host without extern fns: every call is an error.
pub struct NoHost;

impl Host for NoHost {
    fn call_extern(&mut self, func: FnId, _args: Vec<Value>) -> Eval<Value> {
        Err(EvalError::new(
            EvalErrorKind::Extern,
            format!("extern fn #{} has no implementation here", func.0),
        ))
    }
}

/// The result of running a check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckOutcome {
    Passed,
    /// The first failing `require`'s code and message.
    Failed {
        code: String,
        message: Option<String>,
    },
}

/// Runs expressions; `matches` patterns compile into the fn table's shared cache
/// ([`FnTable::patterns`]), or the evaluator's own when the table has none.
pub struct Evaluator<'p> {
    fns: &'p dyn FnTable,
    host: &'p mut dyn Host,
    patterns: Patterns,
    calls: usize,
    depth: usize,
}

/// One frame: the parameters, borrowed from the caller, then every other slot.
struct Frame<'a> {
    params: &'a [&'a Value],
    locals: Vec<Option<Value>>,
}

impl<'p> Evaluator<'p> {
    pub fn new(fns: &'p dyn FnTable, host: &'p mut dyn Host) -> Evaluator<'p> {
        Evaluator {
            fns,
            host,
            patterns: fns.patterns().cloned().unwrap_or_default(),
            calls: 0,
            depth: 0,
        }
    }

    /// Starts counting expression depth at `depth` (a delegated call's body continues its
    /// caller's count).
    pub fn with_depth(mut self, depth: usize) -> Evaluator<'p> {
        self.depth = depth;
        self
    }

    /// Compiles `matches` patterns into `patterns` (a handle: a clone shares the cache).
    pub fn with_patterns(mut self, patterns: Patterns) -> Evaluator<'p> {
        self.patterns = patterns;
        self
    }

    /// Calls the pure fn `id`.
    pub fn call(&mut self, id: FnId, args: &[&Value]) -> Eval<Value> {
        let fns = self.fns;
        let Some(f) = fns.pure_fn(id) else {
            return Err(EvalError::new(
                EvalErrorKind::UnknownFn,
                format!("fn #{} does not exist or is extern", id.0),
            ));
        };
        self.run_fn(f, args)
    }

    /// Runs a fn body with its arguments in slots `0..`.
    pub fn run_fn(&mut self, f: &FnDef, args: &[&Value]) -> Eval<Value> {
        if self.calls >= MAX_CALL_DEPTH {
            return Err(EvalError::new(
                EvalErrorKind::TooDeep,
                format!("calls nest deeper than {MAX_CALL_DEPTH} (in fn {})", f.name),
            ));
        }
        self.calls += 1;
        let mut frame = new_frame(args, f.locals);
        let result = self.eval(&f.body, &mut frame);
        self.calls -= 1;
        result
    }

    /// Runs a check's requires in order; the first false one fails it.
    pub fn run_check(&mut self, check: &Check, args: &[&Value]) -> Eval<CheckOutcome> {
        let mut frame = new_frame(args, check.locals);
        for require in &check.requires {
            match self.eval(&require.cond, &mut frame)? {
                Value::Bool(true) => {}
                Value::Bool(false) => {
                    return Ok(CheckOutcome::Failed {
                        code: require.code.clone(),
                        message: require.message.clone(),
                    })
                }
                other => return Err(EvalError::mismatch("a require condition", &other)),
            }
        }
        Ok(CheckOutcome::Passed)
    }

    /// Evaluates `e` with `params` in slots `0..` (for tests and tools).
    pub fn eval_with(&mut self, e: &Expr, params: &[&Value]) -> Eval<Value> {
        let mut frame = new_frame(params, 0);
        self.eval(e, &mut frame)
    }

    fn eval(&mut self, e: &Expr, frame: &mut Frame<'_>) -> Eval<Value> {
        if self.depth >= MAX_EXPR_DEPTH {
            return Err(EvalError::new(
                EvalErrorKind::TooDeep,
                format!("expressions nest deeper than {MAX_EXPR_DEPTH}"),
            ));
        }
        self.depth += 1;
        let result = self.eval_inner(e, frame);
        self.depth -= 1;
        result
    }

    fn eval_inner(&mut self, e: &Expr, frame: &mut Frame<'_>) -> Eval<Value> {
        match e {
            Expr::Const { value } => Ok(value.clone()),
            Expr::Local { .. } | Expr::Field { .. } => {
                if let Some(place) = place(e, frame) {
                    return place.cloned();
                }
                let Expr::Field { base, index } = e else {
                    return Err(EvalError::new(EvalErrorKind::UnboundLocal, "unbound local"));
                };
                let base = self.eval(base, frame)?;
                field(&base, *index).map(|v| v.into_owned())
            }
            Expr::Call { func, args } => {
                let args = self.eval_all(args, frame)?;
                let refs: Vec<&Value> = args.iter().collect();
                self.call(*func, &refs)
            }
            Expr::CallExtern { func, args } => {
                let args = self.eval_all(args, frame)?;
                self.host.call_extern(*func, args)
            }
            Expr::CallNode { node, args } => {
                let args = self.eval_all(args, frame)?;
                self.host.call_node(*node, args, self.depth)
            }
            Expr::Method { receiver, method } => self.method(receiver, method, frame),
            Expr::Struct { fields, .. } => Ok(Value::Struct(self.eval_all(fields, frame)?)),
            Expr::Variant {
                variant, fields, ..
            } => Ok(Value::Enum {
                variant: *variant,
                fields: self.eval_all(fields, frame)?,
            }),
            Expr::List { items } => Ok(Value::List(self.eval_all(items, frame)?)),
            Expr::Some { value } => Ok(Value::some(self.eval(value, frame)?)),
            Expr::None => Ok(Value::None),
            Expr::If {
                cond,
                then,
                otherwise,
            } => match self.eval(cond, frame)? {
                Value::Bool(true) => self.eval(then, frame),
                Value::Bool(false) => self.eval(otherwise, frame),
                other => Err(EvalError::mismatch("an if condition", &other)),
            },
            Expr::Match { scrutinee, arms } => {
                let v = self.eval(scrutinee, frame)?;
                for arm in arms {
                    if bind(&arm.pattern, &v, frame)? {
                        return self.eval(&arm.body, frame);
                    }
                }
                Err(EvalError::new(
                    EvalErrorKind::NoMatchingArm,
                    format!("no match arm takes this {}", v.kind_name()),
                ))
            }
            Expr::Let { slot, value, body } => {
                let v = self.eval(value, frame)?;
                set(frame, *slot, v);
                self.eval(body, frame)
            }
            Expr::Unary { op, operand } => {
                let v = self.eval(operand, frame)?;
                match (op, v) {
                    (UnaryOp::Not, Value::Bool(b)) => Ok(Value::Bool(!b)),
                    (UnaryOp::Neg, Value::Int(i)) => {
                        i.checked_neg().map(Value::Int).ok_or_else(|| overflow("-"))
                    }
                    (UnaryOp::Neg, Value::Float(f)) => Ok(Value::Float(-f)),
                    (_, other) => Err(EvalError::mismatch("this unary operator", &other)),
                }
            }
            Expr::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs, frame),
        }
    }

    fn eval_all(&mut self, es: &[Expr], frame: &mut Frame<'_>) -> Eval<Vec<Value>> {
        es.iter().map(|e| self.eval(e, frame)).collect()
    }

    fn binary(
        &mut self,
        op: BinaryOp,
        lhs: &Expr,
        rhs: &Expr,
        frame: &mut Frame<'_>,
    ) -> Eval<Value> {
        if matches!(op, BinaryOp::And | BinaryOp::Or) {
            let l = match self.eval(lhs, frame)? {
                Value::Bool(b) => b,
                other => return Err(EvalError::mismatch("`&&`/`||`", &other)),
            };
            if (op == BinaryOp::And) != l {
                return Ok(Value::Bool(l));
            }
            return match self.eval(rhs, frame)? {
                Value::Bool(b) => Ok(Value::Bool(b)),
                other => Err(EvalError::mismatch("`&&`/`||`", &other)),
            };
        }
        let l = self.eval(lhs, frame)?;
        // A constant right operand (`len() <= 50`, the usual check) is read where it stands.
        let r = match rhs {
            Expr::Const { value } => std::borrow::Cow::Borrowed(value),
            _ => std::borrow::Cow::Owned(self.eval(rhs, frame)?),
        };
        match op {
            BinaryOp::Eq => Ok(Value::Bool(l == *r)),
            BinaryOp::Ne => Ok(Value::Bool(l != *r)),
            BinaryOp::Lt => Ok(Value::Bool(compare(&l, &r)? == Ordering::Less)),
            BinaryOp::Le => Ok(Value::Bool(compare(&l, &r)? != Ordering::Greater)),
            BinaryOp::Gt => Ok(Value::Bool(compare(&l, &r)? == Ordering::Greater)),
            BinaryOp::Ge => Ok(Value::Bool(compare(&l, &r)? != Ordering::Less)),
            _ => arithmetic(op, l, r.into_owned()),
        }
    }

    fn method(&mut self, receiver: &Expr, method: &Method, frame: &mut Frame<'_>) -> Eval<Value> {
        // Closure methods need the frame mutably while walking the items: take the list by value.
        if let Some(closure) = closure_of(method) {
            let list = match self.eval(receiver, frame)? {
                Value::List(items) => items,
                other => return Err(EvalError::mismatch("this list method", &other)),
            };
            return self.closure_method(method, closure, list, frame);
        }
        // Other methods only read the receiver: borrow it when it is a local or a field path.
        let owned;
        let recv: &Value = match place(receiver, frame) {
            Some(Ok(v)) => v,
            _ => {
                owned = self.eval(receiver, frame)?;
                &owned
            }
        };
        // Arguments are evaluated after the receiver; they may not borrow the frame meanwhile,
        // so the receiver is cloned only when an argument needs evaluating.
        match method {
            // The usual method of a check (`findings.len() <= 50`), without the general table.
            Method::Len => Ok(Value::Int(len_of(recv)? as i128)),
            Method::Contains { arg } | Method::StartsWith { arg } | Method::EndsWith { arg } => {
                let recv = recv.clone();
                let arg = self.eval(arg, frame)?;
                text_or_list_query(method, &recv, &arg)
            }
            Method::UnwrapOr { default } => match recv {
                Value::None => self.eval(default, frame),
                some => Ok(some.clone()),
            },
            Method::Matches { pattern } => {
                let Value::Str(s) = recv else {
                    return Err(EvalError::mismatch("matches", recv));
                };
                match self.patterns.is_match(pattern, s) {
                    Some(matched) => Ok(Value::Bool(matched)),
                    None => Err(EvalError::new(
                        EvalErrorKind::TypeMismatch,
                        format!("the pattern {pattern} does not compile"),
                    )),
                }
            }
            _ => simple_method(method, recv),
        }
    }

    fn closure_method(
        &mut self,
        method: &Method,
        closure: &Closure,
        items: Vec<Value>,
        frame: &mut Frame<'_>,
    ) -> Eval<Value> {
        let apply = |this: &mut Self, item: &Value, frame: &mut Frame<'_>| -> Eval<Value> {
            set(frame, closure.param, item.clone());
            this.eval(&closure.body, frame)
        };
        let truth = |v: Value| match v {
            Value::Bool(b) => Ok(b),
            other => Err(EvalError::mismatch(
                "a closure that answers true or false",
                &other,
            )),
        };
        match method {
            Method::All { .. } => {
                for item in &items {
                    if !truth(apply(self, item, frame)?)? {
                        return Ok(Value::Bool(false));
                    }
                }
                Ok(Value::Bool(true))
            }
            Method::Any { .. } => {
                for item in &items {
                    if truth(apply(self, item, frame)?)? {
                        return Ok(Value::Bool(true));
                    }
                }
                Ok(Value::Bool(false))
            }
            Method::Count { .. } => {
                let mut n: i128 = 0;
                for item in &items {
                    if truth(apply(self, item, frame)?)? {
                        n += 1;
                    }
                }
                Ok(Value::Int(n))
            }
            Method::Filter { .. } => {
                let mut kept = Vec::new();
                for item in items {
                    if truth(apply(self, &item, frame)?)? {
                        kept.push(item);
                    }
                }
                Ok(Value::List(kept))
            }
            Method::Map { .. } => {
                let mut out = Vec::with_capacity(items.len());
                for item in &items {
                    out.push(apply(self, item, frame)?);
                }
                Ok(Value::List(out))
            }
            Method::SortBy { .. } => {
                let mut keyed = Vec::with_capacity(items.len());
                for item in items {
                    let key = apply(self, &item, frame)?;
                    keyed.push((key, item));
                }
                // Check comparability first so the sort itself cannot fail half-way.
                for pair in keyed.windows(2) {
                    if let [(a, _), (b, _)] = pair {
                        compare(a, b)?;
                    }
                }
                keyed.sort_by(|(a, _), (b, _)| compare(a, b).unwrap_or(Ordering::Equal));
                Ok(Value::List(keyed.into_iter().map(|(_, v)| v).collect()))
            }
            _ => Err(EvalError::new(
                EvalErrorKind::TypeMismatch,
                "this method takes no closure",
            )),
        }
    }
}

fn new_frame<'a>(params: &'a [&'a Value], locals: u32) -> Frame<'a> {
    let extra = (locals as usize).saturating_sub(params.len());
    Frame {
        params,
        locals: Vec::with_capacity(extra),
    }
}

/// Sets a non-parameter slot (parameters are never reassigned: every binding has its own slot).
fn set(frame: &mut Frame<'_>, slot: Slot, v: Value) {
    let Some(i) = (slot.0 as usize).checked_sub(frame.params.len()) else {
        return;
    };
    if frame.locals.len() <= i {
        frame.locals.resize_with(i + 1, || None);
    }
    if let Some(s) = frame.locals.get_mut(i) {
        *s = Some(v);
    }
}

fn get<'f>(frame: &'f Frame<'_>, slot: Slot) -> Option<&'f Value> {
    let i = slot.0 as usize;
    match i.checked_sub(frame.params.len()) {
        None => frame.params.get(i).copied(),
        Some(j) => frame.locals.get(j).and_then(Option::as_ref),
    }
}

/// A local or a chain of field reads on a local, borrowed from the frame; `None` if `e` is not
/// such a path.
fn place<'f>(e: &Expr, frame: &'f Frame<'_>) -> Option<Eval<&'f Value>> {
    match e {
        Expr::Local { slot } => Some(get(frame, *slot).ok_or_else(|| {
            EvalError::new(
                EvalErrorKind::UnboundLocal,
                format!("slot {} is read before it is set", slot.0),
            )
        })),
        Expr::Field { base, index } => {
            let base = match place(base, frame)? {
                Ok(b) => b,
                Err(e) => return Some(Err(e)),
            };
            // The common case first, by reference: a field of a struct or a variant.
            if let Value::Struct(fields) | Value::Enum { fields, .. } = base {
                if let Some(v) = fields.get(*index as usize) {
                    return Some(Ok(v));
                }
            }
            Some(match field(base, *index) {
                Ok(std::borrow::Cow::Borrowed(v)) => Ok(v),
                // Media fields are computed; the caller evaluates them by value instead.
                Ok(std::borrow::Cow::Owned(_)) => return None,
                Err(e) => Err(e),
            })
        }
        _ => None,
    }
}

/// Field `index` of a struct, data-variant or media value.
fn field(base: &Value, index: u32) -> Eval<std::borrow::Cow<'_, Value>> {
    use std::borrow::Cow;
    let missing = || {
        EvalError::new(
            EvalErrorKind::TypeMismatch,
            format!("field {index} does not exist on this {}", base.kind_name()),
        )
    };
    match base {
        Value::Struct(fields) | Value::Enum { fields, .. } => fields
            .get(index as usize)
            .map(Cow::Borrowed)
            .ok_or_else(missing),
        Value::Media(m) => {
            let text = |s: &str| Value::Str(s.into());
            let opt_text = |s: &Option<String>| match s {
                Some(s) => Value::some(text(s)),
                None => Value::None,
            };
            let opt_count = |n: Option<u64>| match n {
                Some(n) => Value::some(Value::Int(n.into())),
                None => Value::None,
            };
            let v = match index {
                0 => text(&m.reference),
                1 => text(&m.content_type),
                2 => Value::Int(m.size.into()),
                3 => text(&m.sha256),
                4 => opt_text(&m.expires_at),
                5 => opt_text(&m.source),
                6 => opt_count(m.width),
                7 => opt_count(m.height),
                8 => opt_count(m.duration_ms),
                9 => opt_count(m.sample_rate),
                10 => opt_count(m.pages),
                _ => return Err(missing()),
            };
            Ok(Cow::Owned(v))
        }
        _ => Err(missing()),
    }
}

/// Matches `v` against `p`, setting the pattern's bindings.
fn bind(p: &Pattern, v: &Value, frame: &mut Frame<'_>) -> Eval<bool> {
    match p {
        Pattern::Wildcard => Ok(true),
        Pattern::Bind { slot } => {
            set(frame, *slot, v.clone());
            Ok(true)
        }
        Pattern::Literal { value } => Ok(value == v),
        Pattern::Variant {
            variant,
            fields,
            bind: whole,
        } => {
            let Value::Enum {
                variant: actual,
                fields: values,
            } = v
            else {
                return Err(EvalError::mismatch("a variant pattern", v));
            };
            if actual != variant {
                return Ok(false);
            }
            for fp in fields {
                let Some(fv) = values.get(fp.index as usize) else {
                    return Err(EvalError::mismatch("a field pattern", v));
                };
                if !bind(&fp.pattern, fv, frame)? {
                    return Ok(false);
                }
            }
            if let Some(slot) = whole {
                set(frame, *slot, v.clone());
            }
            Ok(true)
        }
        Pattern::Some { pattern } => match v {
            Value::None => Ok(false),
            some => bind(pattern, some, frame),
        },
        Pattern::None => Ok(matches!(v, Value::None)),
    }
}

fn closure_of(m: &Method) -> Option<&Closure> {
    match m {
        Method::All { closure }
        | Method::Any { closure }
        | Method::Count { closure }
        | Method::Filter { closure }
        | Method::Map { closure }
        | Method::SortBy { closure } => Some(closure),
        _ => None,
    }
}

fn len_of(v: &Value) -> Eval<usize> {
    match v {
        Value::Str(s) => Ok(s.chars().count()),
        Value::List(items) => Ok(items.len()),
        Value::Map(entries) => Ok(entries.len()),
        other => Err(EvalError::mismatch("len/is_empty", other)),
    }
}

fn simple_method(method: &Method, recv: &Value) -> Eval<Value> {
    let text = |what: &str| match recv {
        Value::Str(s) => Ok(s.as_str()),
        other => Err(EvalError::mismatch(what, other)),
    };
    let list = |what: &str| match recv {
        Value::List(items) => Ok(items.as_slice()),
        other => Err(EvalError::mismatch(what, other)),
    };
    Ok(match method {
        Method::Len => Value::Int(len_of(recv)? as i128),
        Method::IsEmpty => Value::Bool(len_of(recv)? == 0),
        Method::Trim => Value::Str(text("trim")?.trim().into()),
        Method::ToLower => Value::Str(text("to_lower")?.to_lowercase().into()),
        Method::ToUpper => Value::Str(text("to_upper")?.to_uppercase().into()),
        Method::First => match list("first")?.first() {
            Some(v) => Value::some(v.clone()),
            None => Value::None,
        },
        Method::Last => match list("last")?.last() {
            Some(v) => Value::some(v.clone()),
            None => Value::None,
        },
        Method::Sum { float } => {
            let items = list("sum")?;
            if *float {
                let mut total = 0.0f64;
                for item in items {
                    match item {
                        Value::Float(f) => total += f,
                        other => return Err(EvalError::mismatch("sum", other)),
                    }
                }
                finite(total)?
            } else {
                let mut total: i128 = 0;
                for item in items {
                    match item {
                        Value::Int(i) => {
                            total = total.checked_add(*i).ok_or_else(|| overflow("sum"))?
                        }
                        other => return Err(EvalError::mismatch("sum", other)),
                    }
                }
                Value::Int(total)
            }
        }
        Method::IsSome => Value::Bool(!matches!(recv, Value::None)),
        Method::IsNone => Value::Bool(matches!(recv, Value::None)),
        _ => {
            return Err(EvalError::new(
                EvalErrorKind::TypeMismatch,
                "this method needs arguments",
            ))
        }
    })
}

fn text_or_list_query(method: &Method, recv: &Value, arg: &Value) -> Eval<Value> {
    match (method, recv, arg) {
        (Method::Contains { .. }, Value::Str(s), Value::Str(a)) => {
            Ok(Value::Bool(s.contains(a.as_str())))
        }
        (Method::Contains { .. }, Value::List(items), a) => Ok(Value::Bool(items.contains(a))),
        (Method::Contains { .. }, Value::Map(entries), Value::Str(k)) => {
            Ok(Value::Bool(entries.iter().any(|(key, _)| key == k)))
        }
        (Method::StartsWith { .. }, Value::Str(s), Value::Str(a)) => {
            Ok(Value::Bool(s.starts_with(a.as_str())))
        }
        (Method::EndsWith { .. }, Value::Str(s), Value::Str(a)) => {
            Ok(Value::Bool(s.ends_with(a.as_str())))
        }
        (_, recv, _) => Err(EvalError::mismatch("contains/starts_with/ends_with", recv)),
    }
}

fn overflow(op: &str) -> EvalError {
    EvalError::new(
        EvalErrorKind::Overflow,
        format!("integer overflow in `{op}`"),
    )
}

fn finite(f: f64) -> Eval<Value> {
    if f.is_finite() {
        Ok(Value::Float(f))
    } else {
        Err(EvalError::new(
            EvalErrorKind::NotFinite,
            "a float computation is not finite",
        ))
    }
}

fn arithmetic(op: BinaryOp, l: Value, r: Value) -> Eval<Value> {
    match (l, r) {
        (Value::Int(a), Value::Int(b)) => {
            let (v, name) = match op {
                BinaryOp::Add => (a.checked_add(b), "+"),
                BinaryOp::Sub => (a.checked_sub(b), "-"),
                BinaryOp::Mul => (a.checked_mul(b), "*"),
                BinaryOp::Div | BinaryOp::Rem if b == 0 => {
                    return Err(EvalError::new(
                        EvalErrorKind::DivisionByZero,
                        "integer division by zero",
                    ))
                }
                BinaryOp::Div => (a.checked_div(b), "/"),
                BinaryOp::Rem => (a.checked_rem(b), "%"),
                _ => (None, "?"),
            };
            v.map(Value::Int).ok_or_else(|| overflow(name))
        }
        (Value::Float(a), Value::Float(b)) => finite(match op {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            BinaryOp::Mul => a * b,
            BinaryOp::Div => a / b,
            BinaryOp::Rem => a % b,
            _ => f64::NAN,
        }),
        (Value::Str(mut a), Value::Str(b)) if op == BinaryOp::Add => {
            a.push_str(&b);
            Ok(Value::Str(a))
        }
        (l, _) => Err(EvalError::mismatch("this arithmetic operator", &l)),
    }
}

/// The order of `<` and `sort_by`: integers, floats, texts, bools, enum values (variant, then
/// fields), options (`none` first), lists (lexicographic). Other pairs are not comparable.
pub fn compare(a: &Value, b: &Value) -> Eval<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Ok(x.cmp(y)),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y).ok_or_else(|| {
            EvalError::new(EvalErrorKind::NotFinite, "a float comparison is undefined")
        }),
        (Value::Str(x), Value::Str(y)) => Ok(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Ok(x.cmp(y)),
        (
            Value::Enum {
                variant: v1,
                fields: f1,
            },
            Value::Enum {
                variant: v2,
                fields: f2,
            },
        ) => match v1.cmp(v2) {
            Ordering::Equal => compare_seq(f1, f2),
            other => Ok(other),
        },
        // Options: `none` before every `some`, which compare as their values.
        (Value::None, Value::None) => Ok(Ordering::Equal),
        (Value::None, _) => Ok(Ordering::Less),
        (_, Value::None) => Ok(Ordering::Greater),
        (Value::List(x), Value::List(y)) => compare_seq(x, y),
        (a, _) => Err(EvalError::mismatch("a comparison", a)),
    }
}

fn compare_seq(a: &[Value], b: &[Value]) -> Eval<Ordering> {
    for (x, y) in a.iter().zip(b) {
        match compare(x, y)? {
            Ordering::Equal => {}
            other => return Ok(other),
        }
    }
    Ok(a.len().cmp(&b.len()))
}
