//! The executable expression IR: what sema lowers AEL expressions (spec §5), `fn` bodies and
//! `check`s into, and what [`crate::eval`] runs over [`Value`]s. It is part of `ir.json`.
//!
//! # Frames and slots
//! Each [`FnDef`] and [`Check`] runs in one *frame*: a vector of local slots. Slot `i` for
//! `i < params.len()` holds parameter `i`. Every other binding — `let`, a closure parameter, a
//! name bound by a `match` pattern — gets its own slot number, unique inside the fn or check
//! (the lowerer counts up from `params.len()`; `locals` is one past the highest slot used).
//! Shadowing is therefore resolved by the lowerer: two `let x` get two slots. A closure reads
//! the slots of the frame it is written in (closures never escape: they are only arguments of
//! the built-in methods), and its parameter is one more slot of that frame.
//!
//! # Values and ids
//! - Constants are [`Value`]s ([`Expr::Const`]): integers are `Value::Int` (i128), text
//!   `Value::Str`, `none` is [`Expr::None`] or `Value::None`, a unit-enum constant is
//!   `Value::Enum { variant, fields: [] }`.
//! - Struct fields are read by index in declaration order ([`Expr::Field`]); the same op reads
//!   field `i` of a data-enum value (after a `match` arm bound it) and the fields of a media
//!   reference in the order of [`crate::media::MEDIA_FIELDS`] (`ref` is 0; optional fields read
//!   as options).
//! - `..base` in a struct literal is desugared by the lowerer into `Field` reads of `base` (bind
//!   `base` to a `let` slot first to evaluate it once).
//! - [`FnId`] is the index of the callee in the program's fn list (the compiler's `FnId`); the
//!   evaluator finds a pure fn's [`FnDef`] through [`crate::eval::FnTable`], and sends
//!   [`Expr::CallExtern`] to the host ([`crate::eval::Host`]) with the same id.
//! - [`Expr::CallNode`] (a node body's delegated call) goes to the host too, by node index: the
//!   executor ([`crate::exec`]) runs the callee as a run of its own.
//!
//! # Semantics (all total: failures are evaluation errors, never panics)
//! - Integer `+ - * / %` are checked i128 arithmetic: overflow, division or remainder by zero
//!   are errors. `/` truncates toward zero, `%` has the sign of the left operand.
//! - Float `+ - * / %` are IEEE; a non-finite result is an error.
//! - `+` on two texts joins them.
//! - `== !=` compare any two values structurally. `< <= > >=` compare integers, floats, texts
//!   (by Unicode scalar values), bools (`false < true`) and enum values (by variant index, then
//!   fields); options order `none` first. Comparing an integer with a float is an error: the
//!   lowerer must insert no implicit conversion (AEL has none).
//! - `&&` and `||` short-circuit. `!` negates a bool, unary `-` an integer or float.
//! - `if` needs a bool condition. `match` tries arms in order; the first whose pattern matches
//!   runs, with its bindings set; no arm matching is an error (sema guarantees exhaustiveness).
//! - Methods ([`Method`]): see each variant. Text length is in Unicode scalar values.
//!   `sort_by` is stable and orders by the key the closure returns (same ordering as `<`).
//!   `sum` of an empty list is `0` (or `0.0` with `float`). `first`/`last` return options.
//!
//! # Checks
//! A [`Check`] runs its [`Require`]s in order; the first whose condition is `false` fails the
//! check with that require's `code` and `message`. A condition that is not a bool, or that fails
//! to evaluate, is an evaluation error (the pipeline records `internal_error`).

use crate::ty::{DefId, Ty};
use crate::value::Value;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The index of a fn (pure or extern) in the program's fn list.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
pub struct FnId(pub u32);

/// A local slot of the current frame (see the module doc).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
pub struct Slot(pub u32);

/// A parameter of a fn or check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Param {
    pub name: String,
    pub ty: Ty,
}

/// A pure `fn name(p: T) -> U { body }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FnDef {
    pub name: String,
    /// Slots `0..params.len()`.
    pub params: Vec<Param>,
    /// One past the highest slot the body uses (at least `params.len()`); the evaluator sizes
    /// the frame with it (and grows it if a lowerer undercounts).
    #[serde(default)]
    pub locals: u32,
    /// The declared return type, when it is a data type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ret: Option<Ty>,
    pub body: Expr,
}

/// `check name(params) fails E { require …; }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Check {
    pub name: String,
    pub params: Vec<Param>,
    /// As in [`FnDef::locals`].
    #[serde(default)]
    pub locals: u32,
    pub requires: Vec<Require>,
}

/// `require cond else code ["message"];`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Require {
    pub cond: Expr,
    /// The declared failure code (`empty_document`).
    pub code: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// An expression. Serialized with an `expr` tag: `{"expr": "local", "slot": 0}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "expr", rename_all = "snake_case")]
pub enum Expr {
    /// A literal or any other constant.
    Const {
        value: Value,
    },
    /// Reads a parameter, `let` binding, closure parameter or pattern binding.
    Local {
        slot: Slot,
    },
    /// Field `index` (declaration order) of a struct, data-enum or media value.
    Field {
        base: Box<Expr>,
        index: u32,
    },
    /// A call of a pure `fn`; arguments evaluated left to right.
    Call {
        func: FnId,
        args: Vec<Expr>,
    },
    /// A call of an `extern fn`, answered by the host.
    CallExtern {
        func: FnId,
        args: Vec<Expr>,
    },
    /// A delegated call of another node or agent (only in a node body): answered by the host,
    /// which runs that node with its own input gate, pipeline, policies and receipt.
    CallNode {
        /// The callee's index in the program's node list.
        node: u32,
        args: Vec<Expr>,
    },
    /// `receiver.method(…)`.
    Method {
        receiver: Box<Expr>,
        method: Method,
    },
    /// `Name { a: …, b: … }`: every field in declaration order.
    Struct {
        def: DefId,
        fields: Vec<Expr>,
    },
    /// An enum variant: `Severity::low`, `Shape::circle { radius: 1.0 }` (fields in declaration
    /// order, empty for a unit variant).
    Variant {
        def: DefId,
        variant: u32,
        fields: Vec<Expr>,
    },
    /// `[a, b, c]`.
    List {
        items: Vec<Expr>,
    },
    /// `some(x)`.
    Some {
        value: Box<Expr>,
    },
    /// `none`.
    None,
    /// `if cond { then } else { otherwise }`.
    If {
        cond: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    /// `match scrutinee { arms }`.
    Match {
        scrutinee: Box<Expr>,
        arms: Vec<Arm>,
    },
    /// `let slot = value; body`.
    Let {
        slot: Slot,
        value: Box<Expr>,
        body: Box<Expr>,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
}

/// A closure argument of a method: `|f| body`, with `f` in `param`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Closure {
    pub param: Slot,
    pub body: Box<Expr>,
}

/// The built-in methods of spec §5. Serialized with a `name` tag: `{"name": "len"}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum Method {
    /// Text: Unicode scalar values. List, set, map: entries.
    Len,
    /// Text, list, set, map.
    IsEmpty,
    /// Text: strips leading and trailing Unicode whitespace.
    Trim,
    /// Text: Unicode lower case.
    ToLower,
    /// Text: Unicode upper case.
    ToUpper,
    /// Text: substring. List/set: an item equal to `arg`. Map: a key equal to `arg` (text).
    Contains { arg: Box<Expr> },
    /// Text.
    StartsWith { arg: Box<Expr> },
    /// Text.
    EndsWith { arg: Box<Expr> },
    /// Text: the pattern (a literal) matches somewhere (unanchored, Rust `regex`).
    Matches { pattern: String },
    /// List: `some(first item)` or `none`.
    First,
    /// List: `some(last item)` or `none`.
    Last,
    /// List: the closure returns `true` for every item (`true` when empty).
    All { closure: Closure },
    /// List: the closure returns `true` for some item.
    Any { closure: Closure },
    /// List: how many items the closure returns `true` for.
    Count { closure: Closure },
    /// List: the items the closure returns `true` for, in order.
    Filter { closure: Closure },
    /// List: the closure applied to each item.
    Map { closure: Closure },
    /// List: stably sorted by the key the closure returns.
    SortBy { closure: Closure },
    /// List of integers (or floats when `float`): their sum; overflow is an error.
    Sum {
        #[serde(default)]
        float: bool,
    },
    /// Option.
    IsSome,
    /// Option.
    IsNone,
    /// Option: the value, or `default` (evaluated only when `none`).
    UnwrapOr { default: Box<Expr> },
}

/// One arm of a `match`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Arm {
    pub pattern: Pattern,
    pub body: Expr,
}

/// A `match` pattern. Serialized with a `kind` tag.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Pattern {
    /// `_`: matches anything, binds nothing.
    Wildcard,
    /// `x`: matches anything and binds it to `slot`.
    Bind { slot: Slot },
    /// A literal (integer, text, bool, unit variant as a constant): matches an equal value.
    Literal { value: Value },
    /// An enum variant by index (`low`, `circle`); `fields` optionally match the variant's
    /// fields by index, and `bind` optionally binds the whole enum value (whose fields can then
    /// be read with [`Expr::Field`]).
    Variant {
        variant: u32,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        fields: Vec<FieldPattern>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bind: Option<Slot>,
    },
    /// `some(p)`.
    Some { pattern: Box<Pattern> },
    /// `none`.
    None,
}

/// Field `index` of a variant must match `pattern`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FieldPattern {
    pub index: u32,
    pub pattern: Pattern,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UnaryOp {
    /// `!b`
    Not,
    /// `-x`
    Neg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BinaryOp {
    /// `+`: numbers, or text joined.
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `&&`, short-circuit.
    And,
    /// `||`, short-circuit.
    Or,
}

/// What an expression calls (see [`Expr::callees`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Callee {
    Fn(FnId),
    Extern(FnId),
    Node(u32),
}

impl Expr {
    /// Every call in the expression, in no particular order, found without recursion (an
    /// explicit stack), so any IR is walked whatever its depth.
    pub fn callees(&self, found: &mut Vec<Callee>) {
        let mut stack: Vec<&Expr> = vec![self];
        while let Some(e) = stack.pop() {
            match e {
                Expr::Const { .. } | Expr::Local { .. } | Expr::None => {}
                Expr::Field { base, .. } => stack.push(base),
                Expr::Call { func, args } => {
                    found.push(Callee::Fn(*func));
                    stack.extend(args);
                }
                Expr::CallExtern { func, args } => {
                    found.push(Callee::Extern(*func));
                    stack.extend(args);
                }
                Expr::CallNode { node, args } => {
                    found.push(Callee::Node(*node));
                    stack.extend(args);
                }
                Expr::Method { receiver, method } => {
                    stack.push(receiver);
                    match method {
                        Method::Contains { arg }
                        | Method::StartsWith { arg }
                        | Method::EndsWith { arg } => stack.push(arg),
                        Method::UnwrapOr { default } => stack.push(default),
                        Method::All { closure }
                        | Method::Any { closure }
                        | Method::Count { closure }
                        | Method::Filter { closure }
                        | Method::Map { closure }
                        | Method::SortBy { closure } => stack.push(&closure.body),
                        Method::Len
                        | Method::IsEmpty
                        | Method::Trim
                        | Method::ToLower
                        | Method::ToUpper
                        | Method::Matches { .. }
                        | Method::First
                        | Method::Last
                        | Method::Sum { .. }
                        | Method::IsSome
                        | Method::IsNone => {}
                    }
                }
                Expr::Struct { fields, .. } | Expr::Variant { fields, .. } => stack.extend(fields),
                Expr::List { items } => stack.extend(items),
                Expr::Some { value } => stack.push(value),
                Expr::If {
                    cond,
                    then,
                    otherwise,
                } => stack.extend([&**cond, &**then, &**otherwise]),
                Expr::Match { scrutinee, arms } => {
                    stack.push(scrutinee);
                    stack.extend(arms.iter().map(|a| &a.body));
                }
                Expr::Let { value, body, .. } => stack.extend([&**value, &**body]),
                Expr::Unary { operand, .. } => stack.push(operand),
                Expr::Binary { lhs, rhs, .. } => stack.extend([&**lhs, &**rhs]),
            }
        }
    }

    /// A constant.
    pub fn constant(value: Value) -> Expr {
        Expr::Const { value }
    }

    /// Reads slot `i`.
    pub fn local(i: u32) -> Expr {
        Expr::Local { slot: Slot(i) }
    }

    /// `base.<field index>`.
    pub fn field(base: Expr, index: u32) -> Expr {
        Expr::Field {
            base: Box::new(base),
            index,
        }
    }

    /// `receiver.method`.
    pub fn method(receiver: Expr, method: Method) -> Expr {
        Expr::Method {
            receiver: Box::new(receiver),
            method,
        }
    }

    /// `lhs op rhs`.
    pub fn binary(op: BinaryOp, lhs: Expr, rhs: Expr) -> Expr {
        Expr::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_round_trip_through_json() {
        let e = Expr::binary(
            BinaryOp::Le,
            Expr::method(Expr::field(Expr::local(0), 1), Method::Len),
            Expr::Const {
                value: Value::Int(u64::MAX as i128),
            },
        );
        let text = serde_json::to_string(&e).unwrap_or_default();
        assert!(text.starts_with(r#"{"expr":"binary","op":"le""#), "{text}");
        let back: Expr = serde_json::from_str(&text)
            .map_err(|e| e.to_string())
            .unwrap();
        assert_eq!(back, e);
        let schema = schemars::schema_for!(Check);
        assert!(serde_json::to_string(&schema).is_ok());
    }
}
