//! Prompt templates (spec §6): the `{{ … }}` and `{% if/for %}` expressions of a node's prompt
//! file are type-checked against the node's parameters (plus `output_schema`), and errors point
//! at their line and column in the `.md` file, which is added to the source map for that.
//!
//! A template that checks is lowered into the runtime's [`Template`] (text, values, `if`,
//! `for`, expressions in the runtime's `expr` form), which `aelc_runtime::prompt` renders.
//! Slots: the node's parameters, then `output_schema`, then `for` variables and closure
//! parameters in the order they are bound.

use aelc_runtime::expr as rt;
use aelc_runtime::prompt::{Segment, Template};
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

/// An open `if` or `for` while the template is read: what it collects, and where it started.
struct Open {
    block: Block,
    depth: usize,
    span: Span,
}

enum Block {
    If {
        cond: rt::Expr,
        then: Vec<Segment>,
        in_else: bool,
    },
    For {
        slot: u32,
        list: rt::Expr,
    },
}

/// Checks the prompt at `path` against the node's parameters and lowers it. `None` when the file
/// cannot be read (reported where `file(…)` is written) or the template has errors.
pub(crate) fn check_prompt(
    cx: &mut Cx<'_, '_>,
    module: usize,
    path: &str,
    params: &[(String, Ty)],
) -> Option<Template> {
    let text = cx.input.files.read(path)?;
    let file = cx.sources.add(path, text.clone());
    let errors_before = cx.diags.iter().filter(|d| d.is_error()).count();
    let mut ecx = ExprCx::new(cx, module);
    for (name, ty) in params {
        let sty = STy::of(ty, &ecx.cx.table);
        ecx.bind(name, sty);
    }
    ecx.bind("output_schema", STy::Str);
    // `body` collects the segments of the innermost open block (the whole template at the
    // bottom); opening a block saves it in `open`, closing restores it.
    let mut body: Vec<Segment> = Vec::new();
    let mut saved: Vec<Vec<Segment>> = Vec::new();
    let mut open: Vec<Open> = Vec::new();
    let mut rest = 0usize;
    while let Some(start) = find_open(&text, rest) {
        push_text(&mut body, text.get(rest..start).unwrap_or(""));
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
            rest = text.len();
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
                let (ty, expr) = check_expr(&mut ecx, file, e, at, None);
                body.push(Segment::Value {
                    expr,
                    ty: print_ty(&ty),
                });
            }
            Tag::If(e, at) => {
                let (_, cond) = check_expr(&mut ecx, file, e, at, Some(&STy::Bool));
                open.push(Open {
                    block: Block::If {
                        cond,
                        then: Vec::new(),
                        in_else: false,
                    },
                    depth: ecx.scope_depth(),
                    span: tag_span,
                });
                saved.push(std::mem::take(&mut body));
            }
            Tag::For(name, e, at) => {
                let (ty, list) = check_expr(&mut ecx, file, e, at, None);
                let depth = ecx.scope_depth();
                let item = match ty {
                    STy::List { item, .. } => *item,
                    STy::Error => STy::Error,
                    other => {
                        let found = other.describe(&ecx.cx.table);
                        ecx.cx.report(
                            Diagnostic::new("E0701", format!("`for` needs a list, found {found}"))
                                .primary(tag_span, "not a list"),
                        );
                        STy::Error
                    }
                };
                let slot = ecx.bind(name.trim(), item);
                open.push(Open {
                    block: Block::For { slot, list },
                    depth,
                    span: tag_span,
                });
                saved.push(std::mem::take(&mut body));
            }
            Tag::Else => match open.last_mut() {
                Some(Open {
                    block: Block::If { then, in_else, .. },
                    ..
                }) if !*in_else => {
                    *then = std::mem::take(&mut body);
                    *in_else = true;
                }
                _ => ecx.cx.report(
                    Diagnostic::new("E0702", "`{% else %}` outside `{% if %}`")
                        .primary(tag_span, "nothing to continue"),
                ),
            },
            Tag::End => match open.pop() {
                Some(block) => {
                    ecx.leave_scope(block.depth);
                    let inner = std::mem::replace(&mut body, saved.pop().unwrap_or_default());
                    body.push(match block.block {
                        Block::If {
                            cond,
                            then,
                            in_else,
                        } => {
                            let (then, otherwise) = if in_else {
                                (then, inner)
                            } else {
                                (inner, Vec::new())
                            };
                            Segment::If {
                                cond,
                                then,
                                otherwise,
                            }
                        }
                        Block::For { slot, list } => Segment::For {
                            slot: rt::Slot(slot),
                            list,
                            body: inner,
                        },
                    });
                }
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
    push_text(&mut body, text.get(rest..).unwrap_or(""));
    for block in &open {
        ecx.cx.report(
            Diagnostic::new("E0702", "this block is never closed")
                .primary(block.span, "add `{% end %}`"),
        );
    }
    let locals = ecx.locals_used();
    let errors_after = cx.diags.iter().filter(|d| d.is_error()).count();
    (errors_after == errors_before && open.is_empty()).then_some(Template {
        params: params.len() as u32,
        locals,
        body,
    })
}

fn push_text(body: &mut Vec<Segment>, text: &str) {
    if text.is_empty() {
        return;
    }
    if let Some(Segment::Text { text: last }) = body.last_mut() {
        last.push_str(text);
    } else {
        body.push(Segment::Text {
            text: text.to_owned(),
        });
    }
}

/// How a `{{ … }}` value of type `ty` prints: scalars need no type; anything else is printed
/// through its (loosened: bounds play no part in printing) declared shape.
fn print_ty(ty: &STy) -> Option<Ty> {
    match ty {
        STy::Bool | STy::Int | STy::Float | STy::Str | STy::Unknown | STy::Error => None,
        other => Some(loose_ty(other)),
    }
}

fn loose_ty(ty: &STy) -> Ty {
    use aelc_runtime::ty::{
        limits::MAX_STR_LEN, FloatKind, FloatTy, IntKind, IntTy, ListTy, MapTy, MediaTy, StrTy,
    };
    match ty {
        STy::Int => Ty::Int(IntTy {
            kind: IntKind::I64,
            min: i128::from(i64::MIN),
            max: i128::from(i64::MAX),
            max_exclusive: false,
        }),
        STy::Float => Ty::Float(FloatTy {
            kind: FloatKind::F64,
            min: None,
            max: None,
        }),
        STy::Str => Ty::Str(StrTy {
            min: 0,
            max: MAX_STR_LEN,
            pattern: None,
            format: None,
        }),
        STy::List { item, unique } => Ty::List(ListTy {
            item: Box::new(loose_ty(item)),
            min: 0,
            max: aelc_runtime::ty::limits::MAX_ITEMS,
            unique: *unique,
        }),
        STy::Map { key, value } => Ty::Map(MapTy {
            key: Box::new(loose_ty(key)),
            value: Box::new(loose_ty(value)),
            min: 0,
            max: aelc_runtime::ty::limits::MAX_ITEMS,
        }),
        STy::Option(some) => Ty::Option {
            some: Box::new(loose_ty(some)),
        },
        STy::Def(def) => Ty::Ref { def: *def },
        STy::Media(kind) => Ty::Media(MediaTy {
            kind: *kind,
            max_bytes: u64::MAX,
            content_types: Vec::new(),
            max_pixels: None,
            max_duration_ms: None,
            sample_rate: None,
        }),
        STy::Bool | STy::Unknown | STy::Error => Ty::Bool,
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
) -> (STy, rt::Expr) {
    let (expr, diagnostics) = syntax::parse_expr(file, text, offset);
    if !diagnostics.is_empty() {
        for d in diagnostics {
            ecx.cx.report(d);
        }
        return (STy::Error, rt::Expr::None);
    }
    let before = ecx.cx.diags.len();
    let (ty, lowered) = ecx.expr(&expr, expected);
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
    (ty, lowered)
}
