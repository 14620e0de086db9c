//! [`TemplateError`]: prompt templates, their tags and expressions (`E07xx`).

use crate::diagnostics::Diagnostic;
use crate::span::Span;

/// A known tag of the wrong shape (`E0724`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MalformedTag {
    /// `{{ }}`.
    EmptyValue,
    /// `{% %}`.
    Empty,
    /// `{% else x %}`.
    ElseWithCondition,
    /// `{% end x %}`.
    EndWithSomething,
    /// `{% if %}`.
    IfWithoutCondition,
    /// A `for` that is not `{% for NAME in LIST %}`.
    For,
}

impl MalformedTag {
    /// Whether the broken tag opens a block (a broken `if` or `for`), so that its
    /// `{% end %}` is not reported as closing nothing.
    pub(crate) fn opens(self) -> bool {
        matches!(self, MalformedTag::IfWithoutCondition | MalformedTag::For)
    }
}

/// A prompt template that cannot be checked or lowered. Types are as the checker describes
/// them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TemplateError {
    /// `E0001`: the prompt file is not UTF-8; `decoded` is the source reader's diagnostic.
    NotUtf8 { decoded: Diagnostic },
    /// `E0702`: the expression of a tag does not parse; `parsed` is the parser's diagnostic.
    InExpression { parsed: Diagnostic },
    /// `E0701`: `{% for %}` over a `found`, not a list.
    ForNotAList { span: Span, found: String },
    /// `E0701`: an `{% if %}` condition of type `found`.
    ConditionNotBool { span: Span, found: String },
    /// `E0720`: the tag opened with `open` at `span` is never closed by `close`.
    Unclosed {
        span: Span,
        open: &'static str,
        close: &'static str,
    },
    /// `E0721`: `{% word … %}`, no tag of AEL's.
    UnknownTag { span: Span, word: String },
    /// `E0722`: a second `{% else %}` for the `if` at `if_span`.
    SecondElse { span: Span, if_span: Span },
    /// `E0722`: `{% else %}` whose nearest open block is the `for` at `for_span`.
    ElseInFor { span: Span, for_span: Span },
    /// `E0722`: `{% else %}` with no open `if`.
    ElseOutsideIf { span: Span },
    /// `E0722`: `{% end %}` with no open block.
    EndOfNothing { span: Span },
    /// `E0723`: the block `{% word … %}` at `span` is never closed.
    NeverClosed { span: Span, word: String },
    /// `E0724`: a known tag of the wrong shape.
    Malformed { span: Span, tag: MalformedTag },
    /// `E0725`: blocks nested more than `limit` deep (`outer`: the outermost open one).
    TooDeep {
        span: Span,
        outer: Option<Span>,
        limit: usize,
    },
}

impl TemplateError {
    pub(crate) fn to_diagnostic(&self) -> Diagnostic {
        match self {
            TemplateError::NotUtf8 { decoded } => decoded.clone().note("in a prompt template"),
            TemplateError::InExpression { parsed } => {
                // The parser's message and labels, under the template code: the parser's own
                // codes explain AEL source files, not tags in a prompt, and its input ends
                // with the tag.
                let mut d = parsed.clone();
                d.code = "E0702";
                d.message = d
                    .message
                    .replace("the end of the file", "the end of the tag");
                for label in &mut d.labels {
                    label.message = label.message.replace("the file ends", "the tag ends");
                }
                d.notes.push("in a prompt template".to_owned());
                if d.help.is_none() {
                    d.help = Some(
                        "a tag holds one AEL expression, e.g. `{{ request.document }}` or \
                         `{% if request.notes.is_some() %}`"
                            .to_owned(),
                    );
                }
                d
            }
            TemplateError::ForNotAList { span, found } => {
                Diagnostic::new("E0701", format!("`for` needs a list, found {found}"))
                    .primary(*span, "not a list")
                    .note("in a prompt template")
                    .help("`{% for NAME in LIST %}` repeats its body for each item of a `List` or a `Set`")
            }
            TemplateError::ConditionNotBool { span, found } => {
                Diagnostic::new("E0701", format!("expected a bool condition, found {found}"))
                    .primary(*span, "not a condition")
                    .note("in a prompt template")
                    .help("a condition is a `bool`: compare the value, or test it with a method such as `is_empty()` or `is_some()`")
            }
            TemplateError::Unclosed { span, open, close } => {
                Diagnostic::new("E0720", format!("this `{open}` is never closed"))
                    .primary(
                        *span,
                        format!("no `{close}` before the next tag or the end of the file"),
                    )
                    .help(format!("close the tag with `{close}`"))
            }
            TemplateError::UnknownTag { span, word } => {
                Diagnostic::new("E0721", format!("unknown template tag `{word}`"))
                    .primary(*span, "expected `if`, `for`, `else` or `end`")
                    .help(unknown_tag_help(word))
            }
            TemplateError::SecondElse { span, if_span } => {
                Diagnostic::new("E0722", "a second `{% else %}` for one `{% if %}`")
                    .primary(*span, "this `if` already has its `else`")
                    .secondary(*if_span, "the `if`")
                    .help("there is no `elif`: nest an `{% if %}` inside the `else`")
            }
            TemplateError::ElseInFor { span, for_span } => {
                Diagnostic::new("E0722", "`{% else %}` inside a `{% for %}`")
                    .primary(*span, "the nearest open block is a `for`")
                    .secondary(*for_span, "this `for`")
                    .help("close the `for` with `{% end %}` before the `else`")
            }
            TemplateError::ElseOutsideIf { span } => {
                Diagnostic::new("E0722", "`{% else %}` outside `{% if %}`")
                    .primary(*span, "no open `if` to continue")
                    .help("open the block with `{% if CONDITION %}`, or remove the `else`")
            }
            TemplateError::EndOfNothing { span } => {
                Diagnostic::new("E0722", "`{% end %}` closes nothing")
                    .primary(*span, "no open `if` or `for`")
                    .help("remove it, or open the block it should close")
            }
            TemplateError::NeverClosed { span, word } => {
                Diagnostic::new("E0723", format!("this `{{% {word} %}}` is never closed"))
                    .primary(*span, "opened here")
                    .help("add `{% end %}` where the block ends")
            }
            TemplateError::Malformed { span, tag } => {
                let (what, fix) = malformed(*tag);
                Diagnostic::new("E0724", what)
                    .primary(*span, "malformed tag")
                    .help(fix)
            }
            TemplateError::TooDeep { span, outer, limit } => {
                let d = Diagnostic::new(
                    "E0725",
                    format!("template blocks nested more than {limit} levels deep"),
                )
                .primary(*span, "too deep")
                .help("join conditions with `&&` instead of nesting an `if` in an `if`");
                match outer {
                    Some(outer) => d.secondary(*outer, "the outermost open block"),
                    None => d,
                }
            }
        }
    }
}

/// What is wrong with a malformed tag, and how to write it.
fn malformed(tag: MalformedTag) -> (&'static str, &'static str) {
    match tag {
        MalformedTag::EmptyValue => (
            "`{{ }}` holds no expression",
            "write the value to insert, e.g. `{{ request.text }}`",
        ),
        MalformedTag::Empty => (
            "an empty `{% %}` tag",
            "write `{% if CONDITION %}`, `{% for NAME in LIST %}`, `{% else %}` or `{% end %}`",
        ),
        MalformedTag::ElseWithCondition => (
            "`{% else %}` takes no condition",
            "there is no `elif`: write `{% else %}` and nest an `{% if %}` inside it",
        ),
        MalformedTag::EndWithSomething => (
            "`{% end %}` takes nothing",
            "write `{% end %}`: it closes the nearest open `if` or `for`",
        ),
        MalformedTag::IfWithoutCondition => (
            "`{% if %}` needs a condition",
            "write `{% if CONDITION %}`, e.g. `{% if request.notes.is_some() %}`",
        ),
        MalformedTag::For => (
            "a `for` is written `{% for NAME in LIST %}`",
            "name each item and give the list, e.g. `{% for finding in review.findings %}`",
        ),
    }
}

/// The fix for a tag word from another template language.
fn unknown_tag_help(word: &str) -> &'static str {
    match word {
        "elif" | "elsif" | "elseif" | "else_if" => {
            "there is no `elif`: write `{% else %}` and nest an `{% if %}` inside it"
        }
        "endif" | "endfor" | "fi" | "done" => "every block is closed by `{% end %}`",
        "unless" => "write `{% if !CONDITION %}`",
        "each" | "foreach" => "write `{% for NAME in LIST %}`",
        _ => "the tags are `{% if CONDITION %}`, `{% else %}`, `{% for NAME in LIST %}` and `{% end %}`",
    }
}
