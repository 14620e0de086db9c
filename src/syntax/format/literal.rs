//! Printing literals exactly: numbers as their value (floats and money as written), units with
//! their suffix, strings re-escaped canonically and raw strings kept raw.

use std::fmt::Write as _;

use crate::syntax::ast::{LitKind, Literal};

pub fn literal(lit: &Literal) -> String {
    match &lit.kind {
        LitKind::Bool(value) => value.to_string(),
        LitKind::Int(value) => value.to_string(),
        LitKind::Float { text } => text.to_string(),
        LitKind::Str { value, raw: None } => quoted(value),
        LitKind::Str {
            value,
            raw: Some(hashes),
        } => {
            let hashes = "#".repeat(usize::from(*hashes));
            format!("r{hashes}\"{value}\"{hashes}")
        }
        LitKind::Duration { value, unit } => format!("{value}{}", unit.suffix()),
        LitKind::Size { value, unit } => format!("{value}{}", unit.suffix()),
        LitKind::Rate { count, per } => format!("{count}/{}", per.suffix()),
        LitKind::Money { amount, currency } => format!("{amount} {currency}"),
    }
}

/// `"…"` with the escapes of spec §2 only: `\n \t \\ \"` and `\u{…}` for other control
/// characters. Everything else is written as itself.
pub fn quoted(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped_canonically() {
        assert_eq!(
            quoted("a\"b\\c\nd\te\r\u{7f}é"),
            r#""a\"b\\c\nd\te\u{d}\u{7f}é""#
        );
    }
}
