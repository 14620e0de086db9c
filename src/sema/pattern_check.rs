//! Turns the `@pattern` validator's findings ([`super::pattern`]) into diagnostics that point
//! inside the string literal: `E0350` for a construct outside the common syntax, `E0307` for
//! one every engine accepts but reads differently.

use std::collections::HashMap;

use super::error::TypeError;
use super::pattern::{check_pattern, PatternError};
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
) -> Vec<TypeError> {
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
            .map(|e| to_error(e, text, literal, raw))
            .collect(),
    }
}

fn to_error(e: &PatternError, text: &str, literal: Span, raw: Option<u8>) -> TypeError {
    let at = match raw {
        Some(hashes) => {
            let base = literal.start as usize + 2 + hashes as usize;
            let (start, end) = char_range(text, e.offset, e.len);
            // An empty range (the end of the pattern) points at the closing quote, one byte.
            let end = if end == start { end + 1 } else { end };
            let end = (base + end).min(literal.end as usize);
            Span::new(literal.file, (base + start).min(end)..end)
        }
        None => literal,
    };
    TypeError::Pattern {
        span: at,
        problem: e.problem.clone(),
        fix: fix(e, text, literal, raw, at),
    }
}

/// The edit that applies `e`'s replacement, if it names one: in a raw string the construct
/// itself (at `at`, the bytes of the pattern as written); in an ordinary string, where escapes
/// shift the bytes, the whole literal, written again with the replacement.
fn fix(
    e: &PatternError,
    text: &str,
    literal: Span,
    raw: Option<u8>,
    at: Span,
) -> Option<(Span, String)> {
    let replacement = e.replacement.as_ref()?;
    if e.len == 0 {
        return None;
    }
    if raw.is_some() {
        return Some((at, replacement.clone()));
    }
    let fixed = format!(
        "{}{replacement}{}",
        text.get(..e.offset)?,
        text.get(e.offset + e.len..)?
    );
    // Only `\` and `"` need an escape in an ordinary string; a pattern holding another
    // character that does (a control character) is left to the author.
    if fixed.chars().any(char::is_control) {
        return None;
    }
    let escaped = fixed.replace('\\', "\\\\").replace('"', "\\\"");
    Some((literal, format!("\"{escaped}\"")))
}

/// The bytes `offset..offset + len` of `text`, widened to whole characters and to at least
/// one character where there is one: a span must never start or end inside a character (a
/// BOM in a count, `{\u{FEFF}2}`, got an `E0350` starting in its second byte; found by
/// `aelc-fuzz check`), or a slice of the source at it would panic.
fn char_range(text: &str, offset: usize, len: usize) -> (usize, usize) {
    let mut start = offset.min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = offset.saturating_add(len.max(1)).min(text.len()).max(start);
    while !text.is_char_boundary(end) {
        end += 1;
    }
    (start, end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::FileId;

    /// Every E0350/E0307 span of a raw pattern holding multi-byte characters starts and ends
    /// on character boundaries of the source (`fuzz/regressions/check-span-inside-character`).
    #[test]
    fn spans_lie_on_character_boundaries() {
        let patterns = [
            "^[a-z]{\u{FEFF}2}$",
            "{\u{FEFF}2}",
            "é{é}",
            "(?<é>x)",
            "[[é]]",
            "x{2}+é",
            "é\\",
        ];
        for pattern in patterns {
            let source = format!("@pattern(r\"{pattern}\")");
            let start = "@pattern(".len();
            let literal = Span::new(FileId(0), start..source.len() - 1);
            let diagnostics: Vec<_> = check(&mut Verdicts::default(), pattern, literal, Some(0))
                .iter()
                .map(|e| e.to_diagnostic())
                .collect();
            if pattern.contains('\u{FEFF}') {
                assert!(diagnostics.iter().any(|d| d.code == "E0350"), "{pattern:?}");
            }
            for d in &diagnostics {
                for label in &d.labels {
                    let span = label.span;
                    assert!(
                        source.get(span.start as usize..span.end as usize).is_some(),
                        "{pattern:?}: {}..{} splits a character of {source:?}",
                        span.start,
                        span.end
                    );
                }
            }
        }
    }
}
