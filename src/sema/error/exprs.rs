//! [`ExprError`]: expressions, calls, `match`, fns, checks and failure codes (`E04xx`).

use crate::diagnostics::Diagnostic;
use crate::span::Span;

/// Where an `Option<Option<T>>` would arise (`E0416`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NestedOption {
    /// `some(x)` where `x` is an option already.
    Some,
    /// `first()`/`last()` of a list of options.
    FirstOrLast,
}

/// What a pattern matches, when the value is of another type (`E0401`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PatternShape {
    /// `none`.
    None,
    /// `some(…)`.
    Some,
    /// `Variant { … }`.
    Variant,
}

/// An expression of the wrong type or form. Types are as the checker describes them
/// ("`Str<1..=80>`", "a list of `u8`").
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ExprError {
    /// `E0401`: `found` where `expected` is wanted.
    Mismatch {
        span: Span,
        expected: String,
        found: String,
    },
    /// `E0401`: a duration, size, rate or money literal in an expression.
    UnitLiteral { span: Span },
    /// `E0401`: `path` is `noun` ("a fn"), not a value; `callable`: a fn, node or check.
    NotAValue {
        span: Span,
        path: String,
        noun: &'static str,
        callable: bool,
    },
    /// `E0401`: `matches` with no string literal.
    MatchesLiteral { span: Span },
    /// `E0401`: the closure of `method` returns `found`, not a bool.
    ClosureNotBool {
        span: Span,
        method: String,
        found: String,
    },
    /// `E0401`: a node called outside a node's body.
    NodeCall { span: Span },
    /// `E0401`: `path` is `noun`, which cannot be called.
    NotAFn {
        span: Span,
        path: String,
        noun: &'static str,
    },
    /// `E0401`: a literal of `path`, which is no struct.
    NotAStruct { span: Span, path: String },
    /// `E0401`: `return` in a block.
    ReturnInBlock { span: Span },
    /// `E0401`: a pattern of shape `shape` against a value of type `ty`.
    BadPattern {
        span: Span,
        ty: String,
        shape: PatternShape,
    },
    /// `E0401`: a `require` condition of type `found`.
    RequirementNotBool { span: Span, found: String },
    /// `E0401`: the part `kind(…)` of a builder takes `want`, not `found`.
    PartArg {
        span: Span,
        kind: String,
        want: String,
        found: String,
    },
    /// `E0401`: a statement after a node body's `return`.
    AfterReturn { span: Span },
    /// `E0401`: a node body without `return` (`span`: the node's name).
    NoReturn { span: Span },
    /// `E0402`: a list method that takes a closure, with none.
    NeedsClosure { span: Span },
    /// `E0402`: the method `method` takes `expected` arguments, not `found`.
    MethodArity {
        span: Span,
        method: String,
        expected: usize,
        found: usize,
    },
    /// `E0402`: the fn or node `name` takes `params`, not `found` arguments.
    CallArity {
        span: Span,
        name: String,
        params: Vec<String>,
        found: usize,
    },
    /// `E0402`: the part `kind(…)` with other than one argument.
    PartArity { span: Span, kind: String },
    /// `E0403`: a `match` that does not cover `missing`.
    NotCovered { span: Span, missing: Vec<String> },
    /// `E0403`: a pattern of `variant` that names only some fields, without `..`.
    FieldsNotNamed { span: Span, variant: String },
    /// `E0405`: a literal of `strukt` without the fields `missing`.
    MissingFields {
        span: Span,
        strukt: String,
        missing: Vec<String>,
    },
    /// `E0406`: `field` given twice in a struct literal.
    FieldTwice {
        span: Span,
        first: Span,
        field: String,
    },
    /// `E0407`: `code` is not a code of the `fails` set `set` (`suggestion`: the closest).
    NotACode {
        span: Span,
        code: String,
        set: String,
        suggestion: Option<String>,
    },
    /// `E0408`: `errors` declares `code`, which the platform reserves.
    ReservedCode { span: Span, code: String },
    /// `E0409`: fn calls form a cycle through `names` (`span`: the call that closes it).
    FnCycle { span: Span, names: Vec<String> },
    /// `E0410`: the fn `name` has no body (`span`: the `;`, `name_span`: its name).
    NoBody {
        span: Span,
        name_span: Span,
        name: String,
    },
    /// `E0411`: `code` is used but `whose` ("node `x`") has no `fails` set.
    NoFailsSet {
        span: Span,
        code: String,
        whose: String,
    },
    /// `E0412`: `code` declared twice in one `errors` set.
    CodeTwice {
        span: Span,
        first: Span,
        code: String,
    },
    /// `E0413`: a constant that never fits the declared type; `why` is the decoder's message.
    NeverFits { span: Span, why: String },
    /// `E0413`: a division by the literal zero.
    DivisionByZero { span: Span },
    /// `E0414`: `!` (`not`) or `-` applied to a `found`.
    Operand {
        span: Span,
        not: bool,
        found: String,
    },
    /// `E0414`: `sum` of a list of `found`.
    SumOfNonNumbers { span: Span, found: String },
    /// `E0414`: `sort_by` with a key of type `found`.
    SortKey { span: Span, found: String },
    /// `E0414`: the operator `op` applied to `left` and `right`.
    Operands {
        span: Span,
        op: &'static str,
        left: String,
        right: String,
        /// One side an integer, the other a float: no implicit conversion.
        int_and_float: bool,
    },
    /// `E0415`: a closure outside the argument of a list method.
    ClosureHere { span: Span },
    /// `E0415`: a value where a closure is wanted.
    ExpectedClosure { span: Span },
    /// `E0415`: a closure with other than one parameter.
    ClosureParams { span: Span },
    /// `E0416`: an option of an option would arise (`at`: how).
    OptionOfOption { span: Span, at: NestedOption },
}

impl ExprError {
    pub(crate) fn to_diagnostic(&self) -> Diagnostic {
        match self {
            ExprError::Mismatch {
                span,
                expected,
                found,
            } => Diagnostic::new("E0401", format!("expected {expected}, found {found}"))
                .primary(*span, format!("this is {found}")),
            ExprError::UnitLiteral { span } => Diagnostic::new(
                "E0401",
                "durations, sizes, rates and money are not values of expressions",
            )
            .primary(*span, "only allowed in configuration blocks"),
            ExprError::NotAValue {
                span,
                path,
                noun,
                callable,
            } => Diagnostic::new("E0401", format!("`{path}` is {noun}, not a value")).primary(
                *span,
                if *callable {
                    "call it with `(…)`"
                } else {
                    "expected a value"
                },
            ),
            ExprError::MatchesLiteral { span } => {
                Diagnostic::new("E0401", "`matches` takes a string literal").primary(
                    *span,
                    "the pattern must be a literal (it is compiled once)",
                )
            }
            ExprError::ClosureNotBool {
                span,
                method,
                found,
            } => Diagnostic::new(
                "E0401",
                format!("the closure of `{method}` must return a bool, found {found}"),
            )
            .primary(*span, "not a condition")
            .help("the closure must say yes or no for each item, such as `|x| x > 0`"),
            ExprError::NodeCall { span } => {
                Diagnostic::new("E0401", "only a node's body can call a node")
                    .primary(*span, "a delegated call is not pure")
                    .help("fns and checks are pure; call the node from a node body")
            }
            ExprError::NotAFn { span, path, noun } => {
                Diagnostic::new("E0401", format!("`{path}` is {noun}, not a fn"))
                    .primary(*span, "cannot be called")
            }
            ExprError::NotAStruct { span, path } => {
                Diagnostic::new("E0401", format!("`{path}` is not a struct"))
                    .primary(*span, "only structs have literals")
            }
            ExprError::ReturnInBlock { span } => {
                Diagnostic::new("E0401", "`return` is only a statement of a node body")
                    .primary(*span, "the block's value is its last expression")
            }
            ExprError::BadPattern { span, ty, shape } => {
                Diagnostic::new("E0401", format!("this pattern cannot match {ty}")).primary(
                    *span,
                    match shape {
                        PatternShape::None => "`none` matches only an `Option`",
                        PatternShape::Some => "`some(…)` matches only an `Option`",
                        PatternShape::Variant => "a variant pattern matches only a data enum",
                    },
                )
            }
            ExprError::RequirementNotBool { span, found } => Diagnostic::new(
                "E0401",
                format!("a requirement must be a bool, found {found}"),
            )
            .primary(*span, "not a condition")
            .help("write a comparison, such as `x.len() > 0`"),
            ExprError::PartArg {
                span,
                kind,
                want,
                found,
            } => Diagnostic::new("E0401", format!("`{kind}(…)` takes {want}, found {found}"))
                .primary(*span, format!("this is {found}"))
                .help(format!("pass a value of type {want}")),
            ExprError::AfterReturn { span } => {
                Diagnostic::new("E0401", "code after `return` never runs")
                    .primary(*span, "unreachable")
            }
            ExprError::NoReturn { span } => {
                Diagnostic::new("E0401", "a node body must end with `return …;`")
                    .primary(*span, "the body computes no answer")
            }
            ExprError::NeedsClosure { span } => {
                Diagnostic::new("E0402", "this method takes a closure")
                    .primary(*span, "write `|x| …`")
            }
            ExprError::MethodArity {
                span,
                method,
                expected,
                found,
            } => Diagnostic::new(
                "E0402",
                format!(
                    "`{method}` takes {expected} argument{}, found {found}",
                    if *expected == 1 { "" } else { "s" },
                ),
            )
            .primary(*span, "wrong number of arguments"),
            ExprError::CallArity {
                span,
                name,
                params,
                found,
            } => Diagnostic::new(
                "E0402",
                format!(
                    "`{name}` takes {} argument{}, found {found}",
                    params.len(),
                    if params.len() == 1 { "" } else { "s" },
                ),
            )
            .primary(*span, "wrong number of arguments")
            .help(format!("`{name}` takes ({})", params.join(", "))),
            ExprError::PartArity { span, kind } => {
                Diagnostic::new("E0402", format!("`{kind}(…)` takes one argument"))
                    .primary(*span, "wrong number of arguments")
            }
            ExprError::NotCovered { span, missing } => Diagnostic::new(
                "E0403",
                format!("this `match` does not cover {}", missing.join(", ")),
            )
            .primary(*span, "not every case is covered")
            .help("add the missing arms, or a final `_ => …`"),
            ExprError::FieldsNotNamed { span, variant } => Diagnostic::new(
                "E0403",
                format!("this pattern does not name every field of `{variant}`"),
            )
            .primary(*span, "fields missing")
            .help("name the other fields or end with `..`"),
            ExprError::MissingFields {
                span,
                strukt,
                missing,
            } => {
                let list = missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                Diagnostic::new(
                    "E0405",
                    format!(
                        "missing field{} {list} in `{strukt}`",
                        if missing.len() == 1 { "" } else { "s" },
                    ),
                )
                .primary(*span, "every field without a default needs a value")
                .help("give the fields, or copy the rest from a value with `..base`")
            }
            ExprError::FieldTwice { span, first, field } => {
                Diagnostic::new("E0406", format!("field `{field}` is given twice"))
                    .primary(*span, "second value")
                    .secondary(*first, "first value")
                    .help("give each field once")
            }
            ExprError::NotACode {
                span,
                code,
                set,
                suggestion,
            } => {
                let d = Diagnostic::new("E0407", format!("`{code}` is not a code of `{set}`"))
                    .primary(*span, "not declared in the `fails` set");
                match suggestion {
                    Some(s) => d.did_you_mean(*span, s),
                    None => d.help(format!("declare it in `errors {set} {{ … }}`")),
                }
            }
            ExprError::ReservedCode { span, code } => {
                Diagnostic::new("E0408", format!("`{code}` is a reserved code"))
                    .primary(*span, "the platform uses this code itself")
                    .help("choose a name that says what failed in your domain, e.g. `empty_document`")
            }
            ExprError::FnCycle { span, names } => {
                let first = names.first().cloned().unwrap_or_default();
                Diagnostic::new(
                    "E0409",
                    format!("fn calls form a cycle: {} -> {first}", names.join(" -> ")),
                )
                .primary(*span, "this call closes the cycle")
                .help("calls between fns may not form a cycle, so that every check terminates; use the list methods to iterate")
            }
            ExprError::NoBody {
                span,
                name_span,
                name,
            } => Diagnostic::new("E0410", format!("fn `{name}` has no body"))
                .primary(*span, "a `;` where the body `{ … }` should be")
                .secondary(*name_span, "this fn is not `extern`")
                .help("write the body, or declare it `extern fn` to implement it in Rust"),
            ExprError::NoFailsSet { span, code, whose } => Diagnostic::new(
                "E0411",
                format!("`{code}` is not declared: {whose} declares no failure codes"),
            )
            .primary(*span, "no `fails` set")
            .help("add `fails ErrorSet` and declare the code in that `errors` set"),
            ExprError::CodeTwice { span, first, code } => {
                Diagnostic::new("E0412", format!("code `{code}` is declared twice"))
                    .primary(*span, "second declaration")
                    .secondary(*first, "first declared here")
                    .help("remove the second one")
            }
            ExprError::NeverFits { span, why } => {
                Diagnostic::new("E0413", "this constant never fits the declared type")
                    .primary(*span, why.as_str())
                    .help("the bound is checked when the value becomes a field; change the constant or the type")
            }
            ExprError::DivisionByZero { span } => Diagnostic::new("E0413", "division by zero")
                .primary(*span, "this is always zero")
                .help("dividing by zero is always an evaluation error"),
            ExprError::Operand { span, not, found } => {
                let want = if *not {
                    "`!` needs a bool"
                } else {
                    "`-` needs a number"
                };
                Diagnostic::new("E0414", format!("{want}, found {found}"))
                    .primary(*span, format!("this is {found}"))
            }
            ExprError::SumOfNonNumbers { span, found } => Diagnostic::new(
                "E0414",
                format!("`sum` needs a list of numbers, found a list of {found}"),
            )
            .primary(*span, "not numbers")
            .help("map the items to numbers first, such as `.map(|x| x.len()).sum()`"),
            ExprError::SortKey { span, found } => Diagnostic::new(
                "E0414",
                format!("`sort_by` needs a key that can be ordered, found {found}"),
            )
            .primary(*span, "sort by a number, a text, a bool or an enum"),
            ExprError::Operands {
                span,
                op,
                left,
                right,
                int_and_float,
            } => Diagnostic::new(
                "E0414",
                format!("`{op}` cannot be applied to {left} and {right}"),
            )
            .primary(*span, "wrong operand types")
            .help(if *int_and_float {
                "AEL has no implicit conversions: write the integer as a float (`1.0`)"
            } else {
                "both sides must have the same type"
            }),
            ExprError::ClosureHere { span } => Diagnostic::new(
                "E0415",
                "a closure can only be the argument of a list method",
            )
            .primary(*span, "not allowed here")
            .help("closures are arguments of `all any count filter map sort_by`"),
            ExprError::ExpectedClosure { span } => {
                Diagnostic::new("E0415", "expected a closure").primary(*span, "write `|x| …`")
            }
            ExprError::ClosureParams { span } => {
                Diagnostic::new("E0415", "this closure takes exactly one parameter")
                    .primary(*span, "write `|x| …`")
            }
            ExprError::OptionOfOption { span, at } => {
                let (label, help) = match at {
                    NestedOption::Some => (
                        "this is an option already",
                        "use it as it is, without `some`",
                    ),
                    NestedOption::FirstOrLast => (
                        "a list of options",
                        "`none` would mean both an empty list and a `none` item; test `is_empty()` and the items apart",
                    ),
                };
                Diagnostic::new(
                    "E0416",
                    "this would be an option of an option, which cannot be told apart from `none`",
                )
                .primary(*span, label)
                .help(help)
            }
        }
    }
}
