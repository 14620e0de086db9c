//! Prompt templates (spec §6): the `{{ … }}` and `{% if/for %}` expressions of a node's prompt
//! file are type-checked against the node's parameters (plus `output_schema`), and errors point
//! at their line and column in the `.md` file, which is added to the source map for that.

use aelc_runtime::ty::Ty;

use super::expr::ExprCx;
use super::sty::STy;
use super::Cx;
use crate::diagnostics::Diagnostic;
use crate::span::{FileId, Span};
use crate::syntax;

enum Tag<'t> {
    Value(&'t str, u32),
    If(&'t str, u32),
    For(&'t str, &'t str, u32),
    Else,
    End,
    Bad(&'t str),
}

pub(crate) fn check_prompt(
    cx: &mut Cx<'_, '_>,
    module: usize,
    path: &str,
    params: &[(String, Ty)],
) {
    let Some(text) = cx.input.files.read(path) else {
        return;
    };
    let file = cx.sources.add(path, text.clone());
    let mut ecx = ExprCx::new(cx, module);
    for (name, ty) in params {
        let sty = STy::of(ty, &ecx.cx.table);
        ecx.bind(name, sty);
    }
    ecx.bind("output_schema", STy::Str);
    let mut open: Vec<(usize, Span)> = Vec::new();
    let mut rest = 0usize;
    while let Some(start) = find_open(&text, rest) {
        let Some(kind) = text.get(start..start + 2) else {
            break;
        };
        let close = if kind == "{{" { "}}" } else { "%}" };
        let Some(end) = text
            .get(start + 2..)
            .and_then(|t| t.find(close))
            .map(|e| start + 2 + e)
        else {
            ecx.cx.report(
                Diagnostic::new("E0702", format!("this `{kind}` is never closed")).primary(
                    Span::new(file, start..start + 2),
                    format!("expected `{close}`"),
                ),
            );
            break;
        };
        let inner = text.get(start + 2..end).unwrap_or("");
        let tag_span = Span::new(file, start..end + 2);
        let offset = (start + 2) as u32;
        let tag = if kind == "{{" {
            Tag::Value(inner, offset)
        } else {
            parse_tag(inner, offset)
        };
        match tag {
            Tag::Value(e, at) => {
                check_expr(&mut ecx, file, e, at, None);
            }
            Tag::If(e, at) => {
                check_expr(&mut ecx, file, e, at, Some(&STy::Bool));
                open.push((ecx.scope_depth(), tag_span));
            }
            Tag::For(name, e, at) => {
                let ty = check_expr(&mut ecx, file, e, at, None);
                let depth = ecx.scope_depth();
                match ty {
                    STy::List { item, .. } => {
                        ecx.bind(name.trim(), *item);
                    }
                    STy::Error => {
                        ecx.bind(name.trim(), STy::Error);
                    }
                    other => {
                        let found = other.describe(&ecx.cx.table);
                        ecx.cx.report(
                            Diagnostic::new("E0701", format!("`for` needs a list, found {found}"))
                                .primary(tag_span, "not a list"),
                        );
                        ecx.bind(name.trim(), STy::Error);
                    }
                }
                open.push((depth, tag_span));
            }
            Tag::Else => {
                if open.is_empty() {
                    ecx.cx.report(
                        Diagnostic::new("E0702", "`{% else %}` outside `{% if %}`")
                            .primary(tag_span, "nothing to continue"),
                    );
                }
            }
            Tag::End => match open.pop() {
                Some((depth, _)) => ecx.leave_scope(depth),
                None => ecx.cx.report(
                    Diagnostic::new("E0702", "`{% end %}` closes nothing")
                        .primary(tag_span, "no open `if` or `for`"),
                ),
            },
            Tag::Bad(word) => ecx.cx.report(
                Diagnostic::new("E0702", format!("unknown template tag `{word}`"))
                    .primary(tag_span, "expected `if`, `for`, `else` or `end`"),
            ),
        }
        rest = end + 2;
    }
    for (_, span) in open {
        ecx.cx.report(
            Diagnostic::new("E0702", "this block is never closed").primary(span, "add `{% end %}`"),
        );
    }
}

fn find_open(text: &str, from: usize) -> Option<usize> {
    let t = text.get(from..)?;
    let a = t.find("{{");
    let b = t.find("{%");
    let first = match (a, b) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) => a,
        (None, Some(b)) => b,
        (None, None) => return None,
    };
    Some(from + first)
}

fn parse_tag(inner: &str, offset: u32) -> Tag<'_> {
    let lead = inner.len() - inner.trim_start().len();
    let body = inner.trim();
    let at = offset + lead as u32;
    if body == "else" {
        return Tag::Else;
    }
    if body == "end" {
        return Tag::End;
    }
    if let Some(rest) = body.strip_prefix("if ") {
        return Tag::If(rest, at + 3);
    }
    if let Some(rest) = body.strip_prefix("for ") {
        if let Some(pos) = rest.find(" in ") {
            let name = rest.get(..pos).unwrap_or("");
            let list = rest.get(pos + 4..).unwrap_or("");
            return Tag::For(name, list, at + 4 + pos as u32 + 4);
        }
    }
    Tag::Bad(body.split_whitespace().next().unwrap_or(""))
}

fn check_expr(
    ecx: &mut ExprCx<'_, '_, '_>,
    file: FileId,
    text: &str,
    offset: u32,
    expected: Option<&STy>,
) -> STy {
    let (expr, diagnostics) = syntax::parse_expr(file, text, offset);
    if !diagnostics.is_empty() {
        for d in diagnostics {
            ecx.cx.report(d);
        }
        return STy::Error;
    }
    let before = ecx.cx.diags.len();
    let (ty, _) = ecx.expr(&expr, expected);
    // Template errors carry the template code range's own code for `aelc explain`.
    for d in ecx.cx.diags.iter_mut().skip(before) {
        d.notes.push("in a prompt template".to_owned());
    }
    if let Some(want) = expected {
        if !ty.fits(want) {
            let found = ty.describe(&ecx.cx.table);
            ecx.cx.report(
                Diagnostic::new("E0701", format!("expected a bool condition, found {found}"))
                    .primary(expr.span, "not a condition"),
            );
        }
    }
    ty
}
