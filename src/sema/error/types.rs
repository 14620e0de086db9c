//! [`TypeError`]: types, their bounds and refinements, attributes and defaults (`E03xx`).

use super::{string_fix, PatternProblem};
use crate::diagnostics::Diagnostic;
use crate::sema::pattern::PatternErrorKind;
use crate::span::Span;

/// A type that cannot be lowered as written, or a default that does not fit it. Types are
/// named as written (`form`, e.g. "`Str<N>`"), bounds as numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TypeError {
    /// `E0301`: a bound of the integer type `kind` ("u8") is not an integer.
    IntBound { span: Span, kind: &'static str },
    /// `E0301`: `value` is outside `lo..=hi`, the range of `kind`; `wider` is a base type
    /// that holds more.
    OutOfRange {
        span: Span,
        value: i128,
        kind: &'static str,
        lo: i128,
        hi: i128,
        wider: &'static str,
    },
    /// `E0301`: a bound of the float type `kind` is not a finite number of it.
    FloatBound { span: Span, kind: &'static str },
    /// `E0302`: `what` ("the length of `Str`") must be a whole number.
    NotACount { span: Span, what: String },
    /// `E0302`: a bound of the range `what` is not a whole number.
    NotCounts { span: Span, what: String },
    /// `E0302`: `Str` with no length bound.
    StrUnbounded { span: Span },
    /// `E0302`: `Str<0>`.
    StrZero { span: Span },
    /// `E0303`: `form` ("List<T, N>") has no upper bound; `limit` is the platform's.
    NoUpperBound {
        span: Span,
        form: String,
        limit: u32,
    },
    /// `E0302` (text) or `E0303`: `form` allows at most `limit`, not `max`; `why` says why the
    /// limit is what it is.
    OverLimit {
        span: Span,
        form: String,
        limit: u32,
        max: i128,
        why: String,
    },
    /// `E0304`: the enum `name` has no variants.
    NoVariants { span: Span, name: String },
    /// `E0304`: the type `path` takes no type arguments.
    NoTypeArgs { span: Span, path: String },
    /// `E0304`: `Option<Option<T>>`.
    OptionOfOption { span: Span },
    /// `E0304`: the built-in type `name` takes `form` ("`Option<T>`").
    WrongTypeArgs {
        span: Span,
        name: String,
        form: String,
    },
    /// `E0304`: a type where `what` (a count) is expected.
    CountIsAType { span: Span, what: String },
    /// `E0305`: `@name` on a type it does not refine (`target`: "`Str`").
    AttrNotForType {
        span: Span,
        name: String,
        target: &'static str,
    },
    /// `E0305`: a media attribute `@name` on a media kind it does not refine.
    AttrNotForMedia { span: Span, name: String },
    /// `E0306`: `@name` (pattern or format) without its one string.
    AttrString { span: Span, name: String },
    /// `E0306`: `@format("text")` names no format (`span`: the string literal).
    UnknownFormat {
        span: Span,
        text: String,
        suggestion: Option<String>,
        /// The literal is written `"text"`: the fix replaces the text between its quotes;
        /// otherwise it rewrites the literal whole.
        plain: bool,
    },
    /// `E0307` or `E0350` (see [`PatternProblem::kind`]): a construct of a `@pattern` that
    /// is not portable; `fix` is the edit of the source that applies the help, when it names
    /// one replacement.
    Pattern {
        span: Span,
        problem: PatternProblem,
        fix: Option<(Span, String)>,
    },
    /// `E0308`: a map key that is neither text nor a unit enum.
    MapKey { span: Span },
    /// `E0309`: `@name` on an item that takes no such attribute.
    AttrNotHere { span: Span, name: String },
    /// `E0309`: `@tag` on an enum of unit variants.
    TagOnUnitEnum { span: Span },
    /// `E0309`: `@tag` without its one non-empty string.
    TagArg { span: Span },
    /// `E0310`: a default that is no constant.
    DefaultNotConstant { span: Span },
    /// `E0310`: a default the field's type refuses; `why` is the decoder's first message.
    DefaultInvalid { span: Span, why: String },
    /// `E0311`: a default on an `Option` field.
    OptionDefault { span: Span },
    /// `E0312`: the type `name` contains itself through `path` ("A -> B -> A"); `others` are
    /// the other types of the cycle.
    Cycle {
        span: Span,
        name: String,
        path: String,
        others: Vec<Span>,
    },
    /// `E0312`: the stream `path` is a stream of itself.
    StreamOfItself { span: Span, path: String },
    /// `E0313`: every value of `name` nests deeper than `max_depth`.
    TooDeep {
        span: Span,
        name: String,
        max_depth: usize,
    },
    /// `E0314`: a media type without its largest size.
    MediaUnbounded { span: Span },
    /// `E0314`: the media attribute `@name` takes `what`.
    MediaAttrArgs {
        span: Span,
        name: String,
        what: &'static str,
    },
    /// `E0314`: `value` is not a content type of the media kind (`prefix`: "image/").
    ContentTypeKind {
        span: Span,
        value: String,
        prefix: &'static str,
    },
    /// `E0314`: an argument of `@types` that is not a content type string.
    ContentTypeArg { span: Span },
    /// `E0315`: an empty range of values.
    EmptyRange { span: Span },
    /// `E0315`: an empty count range, at least `min` but at most `max`.
    EmptyCounts { span: Span, min: i128, max: i128 },
    /// `E0316`: `Raw` or `Parts` (`name`) where a data type is wanted.
    NotData { span: Span, name: String },
}

impl TypeError {
    pub(crate) fn to_diagnostic(&self) -> Diagnostic {
        match self {
            TypeError::IntBound { span, kind } => Diagnostic::new(
                "E0301",
                format!("a bound of `{kind}` must be an integer"),
            )
            .primary(*span, "not an integer"),
            TypeError::OutOfRange {
                span,
                value,
                kind,
                lo,
                hi,
                wider,
            } => Diagnostic::new("E0301", format!("{value} is outside the range of `{kind}`"))
                .primary(*span, format!("`{kind}` holds {lo}..={hi}"))
                .help(format!(
                    "a refinement narrows its base type; use a wider base type such as `{wider}` or a bound inside {lo}..={hi}"
                )),
            TypeError::FloatBound { span, kind } => Diagnostic::new(
                "E0301",
                format!("a bound of `{kind}` must be a finite number"),
            )
            .primary(*span, "not a finite number of this type"),
            TypeError::NotACount { span, what } => {
                Diagnostic::new("E0302", format!("{what} must be a whole number"))
                    .primary(*span, "expected a count such as `100`")
            }
            TypeError::NotCounts { span, what } => {
                Diagnostic::new("E0302", format!("{what} must be whole numbers"))
                    .primary(*span, "expected a count")
            }
            TypeError::StrUnbounded { span } => Diagnostic::new("E0302", "`Str` needs a length bound")
                .primary(*span, "no bound")
                .help("every type is bounded: write `Str<N>` (at most N characters) or `Str<M..=N>`"),
            TypeError::StrZero { span } => {
                Diagnostic::new("E0302", "`Str<0>` can hold only the empty text")
                    .primary(*span, "the bound must be at least 1")
                    .help("`Str<N>` holds 1 <= N <= 16777216 characters")
            }
            TypeError::NoUpperBound { span, form, limit } => {
                Diagnostic::new("E0303", format!("`{form}` needs an upper bound"))
                    .primary(*span, "no upper bound")
                    .help(format!("every type is bounded: write `..={limit}` or less"))
            }
            TypeError::OverLimit {
                span,
                form,
                limit,
                max,
                why,
            } => {
                let code = if form.starts_with("Str") {
                    "E0302"
                } else {
                    "E0303"
                };
                Diagnostic::new(code, format!("`{form}` allows at most {limit}, not {max}"))
                    .primary(*span, format!("the limit is {limit}"))
                    .help(why.as_str())
            }
            TypeError::NoVariants { span, name } => {
                Diagnostic::new("E0304", format!("enum `{name}` has no variants"))
                    .primary(*span, "no value of this type exists")
                    .help("add at least one variant")
            }
            TypeError::NoTypeArgs { span, path } => {
                Diagnostic::new("E0304", format!("`{path}` takes no type arguments"))
                    .primary(*span, "remove the `<…>`")
            }
            TypeError::OptionOfOption { span } => Diagnostic::new(
                "E0304",
                "`Option<Option<T>>` cannot be told apart from `Option<T>`",
            )
            .primary(*span, "nested option")
            .help("absent and `null` both mean `none`; use one `Option`"),
            TypeError::WrongTypeArgs { span, name, form } => {
                Diagnostic::new("E0304", format!("wrong type arguments for `{name}`"))
                    .primary(*span, format!("expected {form}"))
            }
            TypeError::CountIsAType { span, what } => {
                Diagnostic::new("E0304", format!("expected {what}, found a type"))
                    .primary(*span, "expected a number such as `100`")
            }
            TypeError::AttrNotForType { span, name, target } => Diagnostic::new(
                "E0305",
                format!("`@{name}` does not apply to this type"),
            )
            .primary(*span, format!("only for {target}"))
            .help("remove the attribute or change the type"),
            TypeError::AttrNotForMedia { span, name } => Diagnostic::new(
                "E0305",
                format!("`@{name}` does not apply to this media kind"),
            )
            .primary(*span, "not for this kind of media")
            .help(match name.as_str() {
                "max_pixels" => "`@max_pixels` is for `Image` and `Video`; remove it",
                "max_duration" => "`@max_duration` is for `Audio` and `Video`; remove it",
                _ => "`@sample_rate` is for `Audio`; remove it",
            }),
            TypeError::AttrString { span, name } => {
                Diagnostic::new("E0306", format!("`@{name}` takes one string"))
                    .primary(*span, "expected one string literal")
            }
            TypeError::UnknownFormat {
                span,
                text,
                suggestion,
                plain,
            } => {
                let d = Diagnostic::new("E0306", format!("unknown format `{text}`"))
                    .primary(*span, "not a known format");
                match suggestion {
                    Some(k) => string_fix(d, *span, *plain, k),
                    None => d.help(format!(
                        "formats: {}",
                        aelc_runtime::ty::Format::ALL.map(|f| f.as_str()).join(", ")
                    )),
                }
            }
            TypeError::Pattern { span, problem, fix } => {
                let read_differently = problem.kind() == PatternErrorKind::ReadDifferently;
                let (code, label) = if read_differently {
                    (
                        "E0307",
                        "RE2, ECMA-262 and Rust `regex` match different texts here",
                    )
                } else {
                    (
                        "E0350",
                        "not in the syntax common to RE2, ECMA-262 and Rust `regex`",
                    )
                };
                let d = Diagnostic::new(
                    code,
                    format!("this pattern is not portable: {}", problem.message()),
                )
                .primary(*span, label)
                .help(problem.help());
                match fix {
                    Some((at, replacement)) => d.fix(*at, replacement.as_str()),
                    None => d,
                }
            }
            TypeError::MapKey { span } => {
                Diagnostic::new("E0308", "a map key must be a `Str<…>` or a unit enum")
                    .primary(*span, "not a text or unit-enum type")
                    .help("JSON object keys are text; use `Str<N>` or an enum whose variants have no fields")
            }
            TypeError::AttrNotHere { span, name } => {
                let d = Diagnostic::new("E0309", format!("`@{name}` cannot stand here"))
                    .primary(*span, "not an attribute of this item");
                if name == "tag" {
                    d.help("`@tag(\"…\")` names the tag field of a data enum; write it before `enum`")
                } else {
                    d.help("refinements such as `@pattern` follow a field's type, not an item")
                }
            }
            TypeError::TagOnUnitEnum { span } => {
                Diagnostic::new("E0309", "`@tag` is only for data enums")
                    .primary(*span, "this enum has only unit variants")
                    .help("a unit enum is a JSON string and has no tag field; remove `@tag`")
            }
            TypeError::TagArg { span } => {
                Diagnostic::new("E0309", "`@tag` takes one non-empty string")
                    .primary(*span, "expected `@tag(\"kind\")`")
            }
            TypeError::DefaultNotConstant { span } => {
                Diagnostic::new("E0310", "a default must be a constant")
                    .primary(
                        *span,
                        "not a literal, a list of literals or an enum variant",
                    )
                    .help(
                        "write a literal such as `10`, `\"text\"`, `false`, `[1, 2]` or a variant name",
                    )
            }
            TypeError::DefaultInvalid { span, why } => Diagnostic::new(
                "E0310",
                "this default is not a valid value of the field's type",
            )
            .primary(*span, why.as_str())
            .help("change the default so that it fits the type and its bounds"),
            TypeError::OptionDefault { span } => {
                Diagnostic::new("E0311", "an `Option` field cannot have a default")
                    .primary(*span, "remove this default")
                    .help("an absent `Option` field is already `none`")
            }
            TypeError::Cycle {
                span,
                name,
                path,
                others,
            } => {
                let mut d = Diagnostic::new("E0312", format!("`{name}` contains itself: {path}"))
                    .primary(*span, "no finite value of this type exists")
                    .help("break the cycle with `Option<…>`, `List<…>`, `Set<…>` or `Map<…>`");
                for other in others {
                    d = d.secondary(*other, "part of the cycle");
                }
                d
            }
            TypeError::StreamOfItself { span, path } => {
                Diagnostic::new("E0312", format!("`{path}` is a stream of itself"))
                    .primary(*span, "a list of its own items has no finite value")
                    .help("give the stream the type of one item: `stream R of Reading`")
            }
            TypeError::TooDeep {
                span,
                name,
                max_depth,
            } => Diagnostic::new(
                "E0313",
                format!("every value of `{name}` nests deeper than {max_depth}"),
            )
            .primary(*span, "no payload can hold this type")
            .help("payloads nest at most 64 arrays and objects (spec §8): make a level optional or flatten it"),
            TypeError::MediaUnbounded { span } => {
                Diagnostic::new("E0314", "a media type needs its largest size")
                    .primary(*span, "expected a size such as `Image<5MiB>`")
                    .help("the size is checked before the file is fetched (spec §7)")
            }
            TypeError::MediaAttrArgs { span, name, what } => {
                Diagnostic::new("E0314", format!("`@{name}` takes {what}"))
                    .primary(*span, "wrong arguments")
            }
            TypeError::ContentTypeKind {
                span,
                value,
                prefix,
            } => Diagnostic::new(
                "E0314",
                format!("`{value}` is not a content type of this media kind"),
            )
            .primary(*span, format!("expected a type starting with `{prefix}`"))
            .help(format!(
                "list only `{prefix}…` content types here, or declare the media kind that `{value}` is"
            )),
            TypeError::ContentTypeArg { span } => Diagnostic::new(
                "E0314",
                "`@types` takes content types such as \"image/png\"",
            )
            .primary(*span, "expected a content type string"),
            TypeError::EmptyRange { span } => {
                Diagnostic::new("E0315", "this range holds no value")
                    .primary(*span, "empty range")
                    .help("write the smaller bound first: `lo..=hi`")
            }
            TypeError::EmptyCounts { span, min, max } => {
                Diagnostic::new("E0315", "this range holds no value")
                    .primary(*span, format!("at least {min} but at most {max}"))
                    .help("write the smaller bound first: `lo..=hi`")
            }
            TypeError::NotData { span, name } => {
                Diagnostic::new("E0316", format!("`{name}` is not a data type"))
                    .primary(*span, "not allowed here")
                    .help(if name == "Raw" {
                        "`Raw` is only the parameter of the `parse:` fn of a raw output"
                    } else {
                        "`Parts` is only what a builder returns"
                    })
            }
        }
    }
}
