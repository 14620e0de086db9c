//! Turns the `@pattern` validator's findings ([`super::pattern`]) into diagnostics that point
//! inside the string literal: `E0350` for a construct outside the common syntax, `E0307` for
//! one every engine accepts but reads differently.

use std::collections::HashMap;

use super::pattern::{check_pattern, PatternError, PatternErrorKind};
use crate::diagnostics::Diagnostic;
use crate::span::Span;

/// The verdict on each pattern text seen so far. A project repeats its patterns (a code
/// format on every struct that holds one), and parsing a pattern costs far more than a lookup.
#[derive(Default)]
pub(crate) struct Verdicts(HashMap<String, Result<(), Vec<PatternError>>>);

/// `literal` is the span of the string literal as written; `raw` is `Some(hashes)` for `r"…"`.
/// For a raw string, bytes of the pattern map one to one onto the source after `r#"`; in an
/// ordinary string escapes shift them, so the whole literal is pointed at.
pub(crate) fn check(
    verdicts: &mut Verdicts,
    text: &str,
    literal: Span,
    raw: Option<u8>,
) -> Vec<Diagnostic> {
    let verdict = match verdicts.0.get(text) {
        Some(v) => v,
        None => verdicts
            .0
            .entry(text.to_owned())
            .or_insert_with(|| check_pattern(text)),
    };
    match verdict {
        Ok(()) => Vec::new(),
        Err(errors) => errors
            .iter()
            .map(|e| to_diagnostic(e, literal, raw))
            .collect(),
    }
}

fn to_diagnostic(e: &PatternError, literal: Span, raw: Option<u8>) -> Diagnostic {
    let at = match raw {
        Some(hashes) => {
            let start = literal.start as usize + 2 + hashes as usize + e.offset;
            let end = (start + e.len.max(1)).min(literal.end as usize);
            Span::new(literal.file, start.min(end)..end)
        }
        None => literal,
    };
    let (code, label) = match e.kind {
        PatternErrorKind::Unsupported => (
            "E0350",
            "not in the syntax common to RE2, ECMA-262 and Rust `regex`",
        ),
        PatternErrorKind::ReadDifferently => (
            "E0307",
            "RE2, ECMA-262 and Rust `regex` match different texts here",
        ),
    };
    Diagnostic::new(code, format!("this pattern is not portable: {}", e.message))
        .primary(at, label)
        .help(e.help.clone())
}
