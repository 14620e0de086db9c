//! Turns the `@pattern` validator's findings ([`super::pattern`]) into diagnostics that point
//! inside the string literal.

use super::pattern::{check_pattern, PatternError};
use crate::diagnostics::Diagnostic;
use crate::span::Span;

/// `literal` is the span of the string literal as written; `raw` is `Some(hashes)` for `r"…"`.
/// For a raw string, bytes of the pattern map one to one onto the source after `r#"`; in an
/// ordinary string escapes shift them, so the whole literal is pointed at.
pub(crate) fn check(text: &str, literal: Span, raw: Option<u8>) -> Vec<Diagnostic> {
    match check_pattern(text) {
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
    Diagnostic::new(
        "E0307",
        format!("this pattern is not portable: {}", e.message),
    )
    .primary(
        at,
        "not in the syntax common to RE2, ECMA-262 and Rust `regex`",
    )
    .help(e.help.clone())
}
