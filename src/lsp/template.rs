//! The expressions of a prompt template (spec §6), found the way sema's template checker finds
//! them: `{{ expr }}`, `{% if expr %}`, `{% for name in expr %}`, `{% else %}`, `{% end %}`.
//!
//! Sema checks templates but keeps no spans of what the names resolve to, so the index
//! ([`crate::lsp::index`]) walks these expressions itself: a field renamed in a struct is renamed
//! in `{{ request.document }}` too, and go to definition works from a prompt file.

use crate::syntax::template::{self, RawTag, Scanned, TagKind};

/// One tag of a template, in source order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tag<'t> {
    /// An expression (of `{{ }}` or `{% if %}`) and its byte offset in the file.
    Expr(&'t str, u32),
    /// `{% for name in expr %}`: the loop variable and the list expression with its offset.
    For(&'t str, &'t str, u32),
    /// `{% end %}` and its byte offset: the innermost `if`/`for` closes.
    End(u32),
}

/// The tags of `text`; malformed and unclosed ones are skipped (sema reports them).
pub fn tags(text: &str) -> Vec<Tag<'_>> {
    let mut out = Vec::new();
    for scanned in template::scan(text) {
        let Scanned::Tag(RawTag {
            kind,
            inner,
            inner_at,
            ..
        }) = scanned
        else {
            continue;
        };
        let offset = inner_at as u32;
        if kind == TagKind::Value {
            out.push(Tag::Expr(inner, offset));
        } else {
            let lead = inner.len() - inner.trim_start().len();
            let body = inner.trim();
            let at = offset + lead as u32;
            if body == "end" {
                out.push(Tag::End(at));
            } else if let Some(cond) = body.strip_prefix("if ") {
                out.push(Tag::Expr(cond, at + 3));
            } else if let Some(rest) = body.strip_prefix("for ") {
                if let Some((name, list)) = rest.split_once(" in ") {
                    let list_at = at + 4 + name.len() as u32 + 4;
                    out.push(Tag::For(name.trim(), list, list_at));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_values_conditions_and_loops_with_offsets() {
        let text = "A {{ r.doc }} {% if r.strict %}x{% end %}{% for f in r.items %}{{ f.name }}{% end %} {{ oops";
        let found = tags(text);
        assert_eq!(
            found,
            [
                Tag::Expr(" r.doc ", 4),
                Tag::Expr("r.strict", 20),
                Tag::End(35),
                Tag::For("f", "r.items", 53),
                Tag::Expr(" f.name ", 65),
                Tag::End(78),
            ]
        );
        assert_eq!(&text[20..28], "r.strict");
        assert_eq!(&text[53..60], "r.items");
    }
}
