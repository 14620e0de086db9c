//! The parser: significant tokens → [`ast::Module`], with recovery (chumsky 0.13).
//!
//! chumsky stays inside this module and its children: the grammar is in [`expr`] and [`item`],
//! and its `Rich` errors become [`SyntaxError`]s here, de-duplicated so that one broken region
//! yields one error. Parsing never fails: the worst case is a module with no items.

mod expr;
mod item;

use chumsky::error::{RichPattern, RichReason};
use chumsky::input::{Input as _, MappedInput};
use chumsky::prelude::*;
use chumsky::util::MaybeRef;

use crate::span::{FileId, Span};
use crate::syntax::ast;
use crate::syntax::error::SyntaxError;
use crate::syntax::lexer::{self, Lexed};
use crate::syntax::token::Token;

/// The parser's input: the token slice, split into tokens and spans.
type In<'tok, 'src> = MappedInput<'tok, Token<'src>, SimpleSpan, &'tok [(Token<'src>, SimpleSpan)]>;
type ParseError<'tok, 'src> = Rich<'tok, Token<'src>, SimpleSpan, SyntaxError>;
type Extra<'tok, 'src> = extra::Err<ParseError<'tok, 'src>>;

/// What every grammar rule needs: the file, the text (for literals as written) and the offset
/// that turns token positions into file positions.
#[derive(Clone, Copy)]
struct Ctx<'src> {
    file: FileId,
    src: &'src str,
    offset: usize,
}

impl<'src> Ctx<'src> {
    fn span(&self, span: SimpleSpan) -> Span {
        Span::new(self.file, span.start + self.offset..span.end + self.offset)
    }

    fn text(&self, span: SimpleSpan) -> &'src str {
        self.src.get(span.start..span.end).unwrap_or("")
    }
}

/// Lexes and parses one module; errors come back typed, in source order.
pub fn parse_module(
    file: FileId,
    text: &str,
) -> (ast::Module, Vec<ast::Comment>, Vec<SyntaxError>) {
    let Lexed {
        tokens,
        comments,
        docs,
        module_doc,
        mut errors,
    } = lexer::lex(file, text, 0);
    let cx = Ctx {
        file,
        src: text,
        offset: 0,
    };
    let mut items = Vec::new();
    if let Some(too_deep) = lexer::check_nesting(file, 0, &tokens) {
        errors.push(too_deep);
    } else {
        let eoi = SimpleSpan::from(text.len()..text.len());
        let (output, parse_errors) = item::module(cx)
            .parse(tokens.as_slice().split_token_span(eoi))
            .into_output_errors();
        items = output.unwrap_or_default();
        errors.extend(convert_errors(cx, &tokens, parse_errors));
    }
    let mut module = ast::Module {
        docs: module_doc,
        items,
        span: Span::new(file, 0..text.len()),
    };
    crate::syntax::docs::attach(&mut module, docs, &mut errors);
    errors.sort_by_key(|e| (e.span().start, e.span().end));
    (module, comments, errors)
}

/// Parses one expression whose text starts at byte `offset` of its file.
pub fn parse_expr(file: FileId, text: &str, offset: u32) -> (ast::Expr, Vec<SyntaxError>) {
    let offset = offset as usize;
    let Lexed {
        tokens, mut errors, ..
    } = lexer::lex(file, text, offset);
    let cx = Ctx {
        file,
        src: text,
        offset,
    };
    let whole = Span::new(file, offset..offset + text.len());
    let error_expr = ast::Expr {
        kind: ast::ExprKind::Error,
        span: whole,
    };
    if let Some(too_deep) = lexer::check_nesting(file, offset, &tokens) {
        errors.push(too_deep);
        return (error_expr, errors);
    }
    let eoi = SimpleSpan::from(text.len()..text.len());
    let (output, parse_errors) = item::lone_expr(cx)
        .parse(tokens.as_slice().split_token_span(eoi))
        .into_output_errors();
    errors.extend(convert_errors(cx, &tokens, parse_errors));
    errors.sort_by_key(|e| (e.span().start, e.span().end));
    (output.unwrap_or(error_expr), errors)
}

/// Turns chumsky's errors into ours: one per position, none where the lexer already reported
/// an invalid token.
fn convert_errors(
    cx: Ctx<'_>,
    tokens: &[(Token<'_>, SimpleSpan)],
    errors: Vec<ParseError<'_, '_>>,
) -> Vec<SyntaxError> {
    // An error at, or right after, a token the lexer rejected is a cascade of that error.
    let lex_error_at = |start: usize| {
        let index = tokens.partition_point(|(_, span)| span.start < start);
        let is_error = |i: usize| tokens.get(i).is_some_and(|(t, _)| *t == Token::Error);
        is_error(index) || index.checked_sub(1).is_some_and(is_error)
    };
    let mut seen_starts = Vec::new();
    let mut out = Vec::new();
    for error in errors {
        let span = *error.span();
        if lex_error_at(span.start) || seen_starts.contains(&span.start) {
            continue;
        }
        seen_starts.push(span.start);
        out.push(match error.reason() {
            RichReason::Custom(custom) => custom.clone(),
            RichReason::ExpectedFound { expected, found } => {
                let mut expected: Vec<String> = expected
                    .iter()
                    .filter_map(pattern_text)
                    .map(|text| match OPERATORS.contains(&text.as_str()) {
                        // A list of every operator says less than the word.
                        true => "an operator".to_owned(),
                        false => text,
                    })
                    .collect();
                expected.sort();
                expected.dedup();
                let context = error.contexts().next().and_then(|(pattern, ctx_span)| {
                    let label = pattern_text(pattern)?;
                    // "a field" → "field", for "in this field".
                    let noun = label
                        .strip_prefix("a ")
                        .or_else(|| label.strip_prefix("an "))
                        .unwrap_or(&label)
                        .to_owned();
                    Some((noun, cx.span(*ctx_span)))
                });
                SyntaxError::Unexpected {
                    span: cx.span(span),
                    found: found.as_ref().map(|t| found_text(t)),
                    expected,
                    context,
                }
            }
        });
    }
    out
}

/// Tokens that may continue an expression, reported together as "an operator".
const OPERATORS: &[&str] = &[
    "`!=`", "`%`", "`&&`", "`*`", "`+`", "`-`", "`/`", "`<`", "`<=`", "`==`", "`>`", "`>=`",
    "`||`", "`.`",
];

fn found_text(token: &MaybeRef<'_, Token<'_>>) -> String {
    let token: &Token<'_> = token;
    token.to_string()
}

fn pattern_text(pattern: &RichPattern<'_, Token<'_>>) -> Option<String> {
    Some(match pattern {
        RichPattern::Token(token) => {
            let token: &Token<'_> = token;
            token.to_string()
        }
        RichPattern::Label(label) => label.to_string(),
        RichPattern::Identifier(name) => format!("`{name}`"),
        RichPattern::Any => "more input".to_owned(),
        RichPattern::EndOfInput => "the end of the file".to_owned(),
        _ => return None,
    })
}
