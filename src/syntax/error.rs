//! Typed lexing and parsing errors, and their one conversion into [`Diagnostic`]s.
//!
//! The lexer and the parser produce [`SyntaxError`] values that hold spans and the tokens
//! involved; text for people is made only in [`SyntaxError::to_diagnostic`]. The codes are
//! registered in `diagnostics/codes/syntax.rs`.

use crate::diagnostics::Diagnostic;
use crate::span::Span;
use crate::syntax::token::{LexError, UNITS_HELP};

/// One syntax error (or warning).
#[derive(Clone, Debug, PartialEq)]
pub enum SyntaxError {
    /// The lexer could not read a token at `span`.
    Lex {
        error: LexError,
        span: Span,
        text: String,
    },
    /// The parser expected one of `expected` and found `found` (`None`: end of file).
    Unexpected {
        span: Span,
        found: Option<String>,
        expected: Vec<String>,
        /// The construct being parsed, e.g. "field", and where it started.
        context: Option<(String, Span)>,
        /// At the end of the file: the innermost bracket still open.
        unclosed: Option<Span>,
    },
    /// `if` with no `else` branch.
    MissingElse { if_span: Span, at: Span },
    /// `a < b < c`.
    ChainedComparison { first: Span, second: Span },
    /// Brackets or prefix operators nested deeper than the parser allows.
    TooDeep { span: Span, limit: usize },
    /// A `///` comment followed by nothing it could document.
    DanglingDoc { span: Span },
}

impl SyntaxError {
    /// Where the error is reported, for ordering and de-duplication.
    pub fn span(&self) -> Span {
        match self {
            SyntaxError::Lex { span, .. }
            | SyntaxError::Unexpected { span, .. }
            | SyntaxError::TooDeep { span, .. }
            | SyntaxError::DanglingDoc { span } => *span,
            SyntaxError::MissingElse { at, .. } => *at,
            SyntaxError::ChainedComparison { second, .. } => *second,
        }
    }

    pub fn to_diagnostic(&self) -> Diagnostic {
        match self {
            SyntaxError::Lex { error, span, text } => lex_diagnostic(error, *span, text),
            SyntaxError::Unexpected {
                span,
                found,
                expected,
                context,
                unclosed,
            } => {
                let diagnostic =
                    unexpected_diagnostic(*span, found.as_deref(), expected, context.as_ref());
                match unclosed {
                    Some(open) => diagnostic.secondary(*open, "this is never closed"),
                    None => diagnostic,
                }
            }
            SyntaxError::MissingElse { if_span, at } => Diagnostic::new(
                "E0102",
                "this `if` has no `else` branch",
            )
            .primary(*at, "expected `else` here")
            .secondary(*if_span, "this `if` needs an `else`")
            .help("every `if` is an expression and needs a value in both cases: add `else { … }`"),
            SyntaxError::ChainedComparison { first, second } => {
                Diagnostic::new("E0103", "comparison operators cannot be chained")
                    .primary(*second, "second comparison")
                    .secondary(*first, "first comparison")
                    .help("add parentheses, or split it with `&&`: `a < b && b < c`")
            }
            SyntaxError::TooDeep { span, limit } => Diagnostic::new(
                "E0104",
                format!("this is nested more than {limit} levels deep"),
            )
            .primary(*span, "too deep")
            .help("split the expression or type into named parts"),
            SyntaxError::DanglingDoc { span } => {
                Diagnostic::new("W0001", "this doc comment documents nothing")
                    .primary(
                        *span,
                        "not followed by an item, field, variant or error code",
                    )
                    .help(
                        "move it before the thing it describes, or write `//` for a plain comment",
                    )
            }
        }
    }
}

fn lex_diagnostic(error: &LexError, span: Span, text: &str) -> Diagnostic {
    let sub = |at: usize, len: usize| {
        let start = (span.start as usize + at).min(span.end as usize);
        let end = (start + len).min(span.end as usize);
        Span::new(span.file, start..end)
    };
    match error {
        LexError::UnexpectedChar => {
            let c = text.chars().next().unwrap_or('?');
            if c.is_alphabetic() {
                Diagnostic::new(
                    "E0002",
                    format!("identifiers are ASCII; `{c}` is not allowed"),
                )
                .primary(span, "non-ASCII letter")
                .help("names use `A-Z a-z 0-9 _`; non-ASCII text belongs in strings")
            } else {
                Diagnostic::new(
                    "E0002",
                    format!("unexpected character `{}`", c.escape_debug()),
                )
                .primary(span, "no token starts with this character")
            }
        }
        LexError::IntOverflow => Diagnostic::new("E0003", "this number is too large")
            .primary(span, "larger than 18446744073709551615")
            .help("numbers in AEL fit in 64 bits"),
        LexError::UnknownUnit { unit, at } => {
            Diagnostic::new("E0004", format!("unknown unit `{unit}`: {UNITS_HELP}"))
                .primary(sub(*at, unit.len()), "unknown unit")
                .help(unit_help(unit))
        }
        LexError::FractionalUnit { unit } => Diagnostic::new(
            "E0005",
            format!("a number with the unit `{unit}` must be a whole number"),
        )
        .primary(span, "fractional value")
        .help("use a smaller unit: `1500ms` rather than `1.5s`, `1536KiB` rather than `1.5MiB`"),
        LexError::UnknownRateUnit { unit, at } => Diagnostic::new(
            "E0009",
            format!("`/{unit}` is not a rate unit; rates take /s, /m, /h"),
        )
        .primary(sub(*at, unit.len()), "not s, m or h")
        .help("write a rate as `50/s`, or put spaces around `/` for a division: `a / b`"),
        LexError::InvalidEscape { at, len } => {
            let escape = text.get(*at..*at + *len).unwrap_or("\\");
            Diagnostic::new("E0006", format!("unknown escape `{escape}` in a string"))
                .primary(sub(*at, *len), "invalid escape")
                .help("escapes are \\n \\t \\r \\\\ \\\" \\0 and \\u{…}; for patterns use a raw string r\"…\"")
        }
        LexError::UnterminatedString => Diagnostic::new("E0007", "this string is never closed")
            .primary(sub(0, 1), "string starts here")
            .help("add the closing `\"`"),
        LexError::UnterminatedRawString { hashes } => {
            let close = format!("\"{}", "#".repeat(*hashes));
            Diagnostic::new("E0007", "this raw string is never closed")
                .primary(sub(0, 2 + hashes), "raw string starts here")
                .help(format!("add the closing `{close}`"))
        }
        LexError::TooManyHashes => {
            Diagnostic::new("E0010", "a raw string may have at most 255 `#`")
                .primary(span, "too many `#`")
        }
        LexError::UnterminatedComment => {
            Diagnostic::new("E0008", "this block comment is never closed")
                .primary(sub(0, 2), "comment starts here")
                .help("add `*/`; block comments nest, so every `/*` needs its own `*/`")
        }
    }
}

/// A close unit for a mistyped one, e.g. `min` → `m`.
fn unit_help(unit: &str) -> String {
    let suggestion = match unit.to_ascii_lowercase().as_str() {
        "min" | "mins" | "minute" | "minutes" => Some("m"),
        "sec" | "secs" | "second" | "seconds" => Some("s"),
        "hr" | "hrs" | "hour" | "hours" => Some("h"),
        "msec" | "millis" => Some("ms"),
        "kib" | "kb" | "k" => Some("KiB"),
        "mib" | "mb" => Some("MiB"),
        "gib" | "gb" => Some("GiB"),
        "b" | "byte" | "bytes" => Some("B"),
        _ => None,
    };
    match suggestion {
        Some(unit) => format!("did you mean `{unit}`?"),
        None => "write the number with one of the units above, e.g. `30s` or `16KiB`".to_owned(),
    }
}

fn unexpected_diagnostic(
    span: Span,
    found: Option<&str>,
    expected: &[String],
    context: Option<&(String, Span)>,
) -> Diagnostic {
    let found_text = found.unwrap_or("the end of the file");
    let expected_text = join_alternatives(expected);
    let message = match (expected_text.as_deref(), context) {
        (Some(exp), Some((ctx, _))) => format!("expected {exp} in this {ctx}, found {found_text}"),
        (Some(exp), None) => format!("expected {exp}, found {found_text}"),
        (None, Some((ctx, _))) => format!("unexpected {found_text} in this {ctx}"),
        (None, None) => format!("unexpected {found_text}"),
    };
    let mut diagnostic = Diagnostic::new("E0101", message).primary(
        span,
        match (found, expected_text.as_deref()) {
            (None, _) => "the file ends here".to_owned(),
            (Some(_), Some(exp)) if expected.len() <= 2 => format!("expected {exp}"),
            (Some(_), _) => "not expected here".to_owned(),
        },
    );
    if let Some((ctx, ctx_span)) = context {
        if ctx_span.start != span.start {
            diagnostic = diagnostic.secondary(
                ctx_span.shrink_to_start(),
                format!("this {ctx} starts here"),
            );
        }
    }
    if let Some(help) = known_fix(expected, found) {
        diagnostic = diagnostic.help(help);
    }
    diagnostic
}

/// A fix for the common cases: a missing separator or closing delimiter.
fn known_fix(expected: &[String], found: Option<&str>) -> Option<String> {
    let has = |t: &str| expected.iter().any(|e| e == t);
    // `}` or a name where `;` could go: the `;` of the previous line is missing.
    let found_word = found.is_some_and(|f| {
        f.len() > 2
            && f.starts_with('`')
            && f[1..f.len() - 1]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    });
    if has("`;`") && (found == Some("`}`") || found_word && expected.len() > 3) {
        return Some("add `;` at the end of the previous entry or statement".to_owned());
    }
    if has("`,`") && has("`}`") && found.is_some_and(|f| f.starts_with('`')) {
        return Some("separate the entries with `,`".to_owned());
    }
    if found.is_none() && (has("`}`") || has("`)`") || has("`]`")) {
        return Some("a delimiter opened earlier is never closed".to_owned());
    }
    if has("`;`") && expected.len() <= 3 {
        return Some("add `;`".to_owned());
    }
    None
}

/// `a`, `a or b`, `a, b or c`; long lists are cut.
fn join_alternatives(items: &[String]) -> Option<String> {
    const MAX: usize = 6;
    match items {
        [] => None,
        [one] => Some(one.clone()),
        _ if items.len() > MAX => Some(format!("{} or …", items[..MAX].join(", "))),
        [init @ .., last] => Some(format!("{} or {last}", init.join(", "))),
    }
}
