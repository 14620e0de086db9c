//! Prompt templates (spec §6): the `{{ … }}` and `{% if/for %}` expressions of a node's prompt
//! file are type-checked against the node's parameters (plus `output_schema`), and errors point
//! at their line and column in the `.md` file, which is added to the source map for that.
//!
//! A template that checks is lowered into the runtime's [`Template`] (text, values, `if`,
//! `for`, expressions in the runtime's `expr` form), which `aelc_runtime::prompt` renders.
//! Slots: the node's parameters, then `output_schema`, then `for` variables and closure
//! parameters in the order they are bound.
//!
//! Codes: a tag never closed `E0720`, an unknown tag `E0721`, `else`/`end` with nothing open
//! `E0722`, a block never closed `E0723`, a tag of the wrong shape `E0724`, blocks nested deeper
//! than [`MAX_NESTING`] `E0725`, a file that is not UTF-8 `E0001`; inside a tag, an
//! expression that does not parse `E0702` (with the parser's message), a type error `E0701`,
//! and the checker's own codes (an unknown name is `E0205`) noted "in a prompt template".

use aelc_runtime::expr as rt;
use aelc_runtime::prompt::{Segment, Template};
use aelc_runtime::ty::Ty;

use super::error::{MalformedTag, TemplateError};
use super::expr::ExprCx;
use super::resolution::SymbolKind;
use super::sty::STy;
use super::Cx;
use crate::diagnostics::Diagnostic;
use crate::source::decode_source;
use crate::span::{FileId, Span};
use crate::syntax;
use crate::syntax::ast;
use crate::syntax::template::{self, RawTag, Scanned, TagKind};
use crate::syntax::MAX_NESTING;

/// A tag as read; expressions are the text inside the tag with their byte offset in the file.
#[derive(Debug, PartialEq)]
enum Tag<'t> {
    Value(&'t str, u32),
    If(&'t str, u32),
    For(&'t str, &'t str, u32),
    Else,
    End,
    /// A word that is no tag (`E0721`), and whether it looks like it opens a block.
    Unknown(&'t str, bool),
    /// A known tag of the wrong shape (`E0724`).
    Malformed(MalformedTag),
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
///
/// `if` and `for` blocks nest at most [`MAX_NESTING`] deep, the bound of AEL source: the
/// lowered [`Template`] is a tree that the runtime clones, renders and drops recursively, so a
/// deeper one (20,000 nested `if`s) would overflow the stack. The tag that goes deeper is
/// reported (`E0725`) and checking the template stops there, before anything deeper is built.
pub(crate) fn check_prompt(
    cx: &mut Cx<'_, '_>,
    module: usize,
    path: &str,
    params: &[(String, Ty)],
    written: &[ast::Param],
) -> Option<Template> {
    let bytes = cx.input.files.read(path)?;
    let errors_before = cx.diags.iter().filter(|d| d.is_error()).count();
    // Text that is not UTF-8 is reported at its first bad byte, like a module's; the rest is
    // checked with the bad bytes replaced, and the template is not lowered.
    let (text, not_utf8) = decode_source(FileId(cx.sources.len() as u32), bytes);
    let file = cx.sources.add(path, text.clone());
    if let Some(d) = not_utf8 {
        cx.report(TemplateError::NotUtf8 { decoded: d });
    }
    let mut ecx = ExprCx::new(cx, module);
    ecx.bind_params(params, written);
    let declared: Vec<Span> = written.iter().map(|p| p.name.span).collect();
    ecx.cx.prompt_scope(file, &declared);
    ecx.bind("output_schema", STy::Str);
    // `body` collects the segments of the innermost open block (the whole template at the
    // bottom); opening a block saves it in `open`, closing restores it.
    let mut body: Vec<Segment> = Vec::new();
    let mut saved: Vec<Vec<Segment>> = Vec::new();
    let mut open: Vec<Open> = Vec::new();
    let mut rest = 0usize;
    let scanned: Vec<Scanned<'_>> = template::scan(&text).collect();
    // Every tag's expression, parsed with one grammar, taken in the tags' order below.
    let mut exprs = syntax::parse_exprs(file, &text, &expression_pieces(&scanned)).into_iter();
    for scanned in scanned {
        push_text(&mut body, text.get(rest..scanned.start()).unwrap_or(""));
        let RawTag {
            kind,
            start,
            inner,
            inner_at,
            end,
        } = match scanned {
            Scanned::Tag(tag) => tag,
            Scanned::Unclosed {
                kind,
                start,
                resume,
            } => {
                // A tag whose closing comes only after the next tag opens was never closed:
                // reading up to that later close would report a confusing expression error.
                let (open, close) = (kind.open(), kind.close());
                ecx.cx.report(TemplateError::Unclosed {
                    span: Span::new(file, start..start + 2),
                    open,
                    close,
                });
                rest = resume;
                continue;
            }
        };
        let tag_span = Span::new(file, start..end);
        let tag = tag_of(kind, inner, inner_at);
        let opens = matches!(tag, Tag::If(..) | Tag::For(..) | Tag::Unknown(_, true))
            || matches!(tag, Tag::Malformed(t) if t.opens());
        if opens && open.len() >= MAX_NESTING {
            let outer = open.first().map(|block| block.span);
            ecx.cx.report(TemplateError::TooDeep {
                span: tag_span,
                outer,
                limit: MAX_NESTING,
            });
            return None;
        }
        match tag {
            Tag::Value(e, at) => {
                let (ty, expr) = check_expr(&mut ecx, exprs.next(), file, e, at, None);
                body.push(Segment::Value {
                    expr,
                    ty: print_ty(&ty),
                });
            }
            Tag::If(e, at) => {
                let (_, cond) = check_expr(&mut ecx, exprs.next(), file, e, at, Some(&STy::Bool));
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
                let (ty, list) = check_expr(&mut ecx, exprs.next(), file, e, at, None);
                let depth = ecx.scope_depth();
                let item = match ty {
                    STy::List { item, .. } => *item,
                    STy::Error => STy::Error,
                    other => {
                        let found = other.describe(&ecx.cx.table);
                        let at = at as usize;
                        ecx.cx.report(TemplateError::ForNotAList {
                            span: Span::new(file, at..at + e.len()),
                            found,
                        });
                        STy::Error
                    }
                };
                let slot = match loop_variable(&text, name.trim(), file) {
                    Some(ident) if ecx.cx.resolution.is_some() => {
                        ecx.bind_declared(&ident, tag_span, SymbolKind::Local, None, item)
                    }
                    _ => ecx.bind(name.trim(), item),
                };
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
                Some(Open {
                    block: Block::If { .. },
                    span,
                    ..
                }) => {
                    let span = *span;
                    ecx.cx.report(TemplateError::SecondElse {
                        span: tag_span,
                        if_span: span,
                    });
                }
                Some(Open { span, .. }) => {
                    let span = *span;
                    ecx.cx.report(TemplateError::ElseInFor {
                        span: tag_span,
                        for_span: span,
                    });
                }
                None => ecx
                    .cx
                    .report(TemplateError::ElseOutsideIf { span: tag_span }),
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
                None => ecx
                    .cx
                    .report(TemplateError::EndOfNothing { span: tag_span }),
            },
            Tag::Unknown(word, opens) => {
                ecx.cx.report(TemplateError::UnknownTag {
                    span: tag_span,
                    word: word.to_owned(),
                });
                if opens {
                    open_broken(
                        &mut open,
                        &mut saved,
                        &mut body,
                        ecx.scope_depth(),
                        tag_span,
                    );
                }
            }
            Tag::Malformed(tag) => {
                ecx.cx.report(TemplateError::Malformed {
                    span: tag_span,
                    tag,
                });
                if tag.opens() {
                    open_broken(
                        &mut open,
                        &mut saved,
                        &mut body,
                        ecx.scope_depth(),
                        tag_span,
                    );
                }
            }
        }
        rest = end;
    }
    push_text(&mut body, text.get(rest..).unwrap_or(""));
    for block in &open {
        // Named by the tag's own word: a broken `{% unless … %}` opens a block too.
        let (start, end) = (block.span.start as usize, block.span.end as usize);
        let word = text
            .get(start + 2..end.saturating_sub(2))
            .and_then(|t| t.split_whitespace().next())
            .unwrap_or("if");
        ecx.cx.report(TemplateError::NeverClosed {
            span: block.span,
            word: word.to_owned(),
        });
    }
    let locals = ecx.locals_used();
    let errors_after = cx.diags.iter().filter(|d| d.is_error()).count();
    (errors_after == errors_before && open.is_empty()).then_some(Template {
        params: params.len() as u32,
        locals,
        body,
    })
}

/// Opens a block for a broken opening tag, so that its `{% end %}` is not reported as closing
/// nothing. The template has an error already, so the block is never lowered.
fn open_broken(
    open: &mut Vec<Open>,
    saved: &mut Vec<Vec<Segment>>,
    body: &mut Vec<Segment>,
    depth: usize,
    span: Span,
) {
    open.push(Open {
        block: Block::If {
            cond: rt::Expr::None,
            then: Vec::new(),
            in_else: false,
        },
        depth,
        span,
    });
    saved.push(std::mem::take(body));
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
        STy::Media(kind) => Ty::Media(Box::new(MediaTy {
            kind: *kind,
            max_bytes: u64::MAX,
            content_types: Vec::new(),
            max_pixels: None,
            max_duration_ms: None,
            sample_rate: None,
        })),
        STy::Bool | STy::Unknown | STy::Error => Ty::Bool,
    }
}

/// Reads the inside of a `{% … %}` tag; `offset` is the file offset of `inner`.
/// What a tag of `kind` whose text between the delimiters is `inner` (at `inner_at`) says.
fn tag_of(kind: TagKind, inner: &str, inner_at: usize) -> Tag<'_> {
    let offset = inner_at as u32;
    if kind != TagKind::Value {
        parse_tag(inner, offset)
    } else if inner.trim().is_empty() {
        Tag::Malformed(MalformedTag::EmptyValue)
    } else {
        Tag::Value(inner, offset)
    }
}

/// Where the expression of each tag that has one (`{{ … }}`, `{% if … %}`, `{% for … in … %}`)
/// is in the template, in the tags' order: the order in which [`check_prompt`] checks them.
fn expression_pieces(scanned: &[Scanned<'_>]) -> Vec<std::ops::Range<usize>> {
    scanned
        .iter()
        .filter_map(|scanned| match scanned {
            Scanned::Tag(tag) => Some(tag),
            Scanned::Unclosed { .. } => None,
        })
        .filter_map(|tag| match tag_of(tag.kind, tag.inner, tag.inner_at) {
            Tag::Value(e, at) | Tag::If(e, at) | Tag::For(_, e, at) => {
                Some(at as usize..at as usize + e.len())
            }
            _ => None,
        })
        .collect()
}

fn parse_tag(inner: &str, offset: u32) -> Tag<'_> {
    let body = inner.trim();
    let at = offset + (inner.len() - inner.trim_start().len()) as u32;
    // The byte offset in the file of `part`, a suffix of `body`.
    let offset_of = |part: &str| at + (body.len() - part.len()) as u32;
    let word = body.split_whitespace().next().unwrap_or("");
    let rest = body.get(word.len()..).unwrap_or("").trim_start();
    match word {
        "" => Tag::Malformed(MalformedTag::Empty),
        "else" if rest.is_empty() => Tag::Else,
        "end" if rest.is_empty() => Tag::End,
        "else" => Tag::Malformed(MalformedTag::ElseWithCondition),
        "end" => Tag::Malformed(MalformedTag::EndWithSomething),
        "if" if rest.is_empty() => Tag::Malformed(MalformedTag::IfWithoutCondition),
        "if" => Tag::If(rest, offset_of(rest)),
        "for" => {
            let name = rest.split_whitespace().next().unwrap_or("");
            let after = rest.get(name.len()..).unwrap_or("").trim_start();
            let list = after
                .strip_prefix("in")
                .filter(|l| l.starts_with(char::is_whitespace))
                .map(str::trim_start)
                .unwrap_or("");
            if is_identifier(name) && !list.is_empty() {
                Tag::For(name, list, offset_of(list))
            } else {
                Tag::Malformed(MalformedTag::For)
            }
        }
        // `{% unless x %}`, `{% with x %}`: a word with an argument most likely opens a block;
        // `{% elif x %}` continues one and `{% endif %}` closes one.
        other => Tag::Unknown(
            other,
            !rest.is_empty() && !other.starts_with("el") && !other.starts_with("end"),
        ),
    }
}

/// The loop variable `name` of a `{% for %}` as a name of the prompt `file`: `name` is a slice
/// of `text`, so its place is where it starts in `text`.
fn loop_variable(text: &str, name: &str, file: FileId) -> Option<ast::Ident> {
    let at = (name.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    (text.get(at..at + name.len()) == Some(name)).then(|| ast::Ident {
        name: name.into(),
        span: Span::new(file, at..at + name.len()),
    })
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Types and lowers a tag's expression `text` at `offset`, parsed before (`parsed`, the next
/// of [`expression_pieces`]) or, should there be none, now.
fn check_expr(
    ecx: &mut ExprCx<'_, '_, '_>,
    parsed: Option<(ast::Expr, Vec<Diagnostic>)>,
    file: FileId,
    text: &str,
    offset: u32,
    expected: Option<&STy>,
) -> (STy, rt::Expr) {
    let (expr, diagnostics) = parsed.unwrap_or_else(|| syntax::parse_expr(file, text, offset));
    if !diagnostics.is_empty() {
        for parsed in diagnostics {
            ecx.cx.report(TemplateError::InExpression { parsed });
        }
        return (STy::Error, rt::Expr::None);
    }
    let before = ecx.cx.diags.len();
    let (ty, lowered) = ecx.expr(&expr, expected);
    // Errors inside the expression keep the checker's codes (an unknown name is E0205 here as
    // in a module); the note says where they come from.
    for d in ecx.cx.diags.iter_mut().skip(before) {
        d.notes.push("in a prompt template".to_owned());
    }
    if let Some(want) = expected {
        if !ty.fits(want) {
            let found = ty.describe(&ecx.cx.table);
            ecx.cx.report(TemplateError::ConditionNotBool {
                span: expr.span,
                found,
            });
        }
    }
    (ty, lowered)
}

#[cfg(test)]
mod tests {
    use super::{parse_tag, Tag};

    #[test]
    fn tags_are_read_with_the_offsets_of_their_expressions() {
        // `{% if a.b %}` at offset 0: the inside starts at 2, the condition at 6.
        assert_eq!(parse_tag(" if a.b ", 2), Tag::If("a.b", 6));
        assert_eq!(parse_tag("if\ta", 2), Tag::If("a", 5));
        assert_eq!(parse_tag(" for x in xs ", 2), Tag::For("x", "xs", 12));
        assert_eq!(parse_tag(" else ", 2), Tag::Else);
        assert_eq!(parse_tag("end", 2), Tag::End);
    }

    proptest::proptest! {
        /// The expression of a tag is the very text at its offset, so errors inside it land
        /// on the right line and column of the `.md` file.
        #[test]
        fn expressions_sit_at_their_offsets(inner in "[ \t\nifornelsdx.()!_1]{0,24}") {
            let offset = 7u32;
            let at_of = |e: &str, at: u32| {
                let start = (at - offset) as usize;
                inner.get(start..start + e.len()) == Some(e)
            };
            match parse_tag(&inner, offset) {
                Tag::If(e, at) => proptest::prop_assert!(at_of(e, at) && !e.trim().is_empty()),
                Tag::For(name, e, at) => {
                    proptest::prop_assert!(at_of(e, at) && !e.is_empty() && !name.is_empty())
                }
                _ => {}
            }
        }
    }

    #[test]
    fn unknown_and_malformed_tags_are_told_apart() {
        assert_eq!(parse_tag(" elif x ", 2), Tag::Unknown("elif", false));
        assert_eq!(parse_tag(" endif ", 2), Tag::Unknown("endif", false));
        assert_eq!(parse_tag(" iffy ", 2), Tag::Unknown("iffy", false));
        assert_eq!(parse_tag(" unless x ", 2), Tag::Unknown("unless", true));
        for inner in [
            " ",
            " if ",
            " for ",
            " for x ",
            " for x in ",
            " for 1x in xs ",
            " for x of xs ",
            " for x inxs ",
            " else if x ",
            " end if ",
        ] {
            assert!(
                matches!(parse_tag(inner, 2), Tag::Malformed(..)),
                "{inner:?} → {:?}",
                parse_tag(inner, 2)
            );
        }
    }
}
