//! The parser: significant tokens → [`ast::Module`], with recovery (chumsky 0.13).
//!
//! chumsky stays inside this module and its children: the grammar is in [`expr`] and [`item`],
//! and its `Rich` errors become [`SyntaxError`]s here, de-duplicated so that one broken region
//! yields one error. Parsing never fails: the worst case is a module with no items.
//!
//! Two passes, one grammar. The grammar is generic over its error type ([`Fail`]). The first
//! pass uses chumsky's zero-sized `EmptyErr`, for which chumsky skips all error bookkeeping
//! (every failed alternative of a `choice` would otherwise build or merge a `Rich` error, even
//! in a file without a single mistake); that is most of the parse time. Only when that pass
//! fails or reports an error is the file parsed again with `Rich` errors, for the diagnostics.
//! The error type never steers the parse, so a clean first pass yields the very tree the
//! second would (`tests::fast_pass_agrees_with_rich_pass` checks it on the UI corpus).

mod expr;
mod item;

use chumsky::error::{EmptyErr, LabelError, RichPattern, RichReason};
use chumsky::input::{Input as _, MappedInput};
use chumsky::prelude::*;
use chumsky::util::MaybeRef;

use crate::span::{FileId, Span};
use crate::syntax::ast;
use crate::syntax::error::SyntaxError;
use crate::syntax::lexer::{self, Lexed, TokenSpan};
use crate::syntax::token::Token;

/// The parser's input: the token slice, split into tokens and spans.
type In<'tok, 'src> = MappedInput<'tok, Token<'src>, TokenSpan, &'tok [(Token<'src>, TokenSpan)]>;
type ParseError<'tok, 'src> = Rich<'tok, Token<'src>, TokenSpan, SyntaxError>;
type Extra<E> = extra::Err<E>;

/// An error type the grammar can be built for: [`ParseError`] (diagnostics) or `EmptyErr`
/// (the fast first pass, which only learns whether the file is clean).
trait Fail<'tok, 'src: 'tok>:
    chumsky::error::Error<'tok, In<'tok, 'src>> + LabelError<'tok, In<'tok, 'src>, &'static str> + 'tok
{
    /// One of our own errors, found by a `validate` step.
    fn custom(span: TokenSpan, error: SyntaxError) -> Self;
}

impl<'tok, 'src: 'tok> Fail<'tok, 'src> for ParseError<'tok, 'src> {
    fn custom(span: TokenSpan, error: SyntaxError) -> Self {
        Rich::custom(span, error)
    }
}

impl<'tok, 'src: 'tok> Fail<'tok, 'src> for EmptyErr {
    fn custom(_: TokenSpan, _: SyntaxError) -> Self {
        EmptyErr::default()
    }
}

/// What every grammar rule needs: the file, the text (for literals as written) and the offset
/// that turns token positions into file positions.
#[derive(Clone, Copy)]
struct Ctx<'src> {
    file: FileId,
    src: &'src str,
    offset: usize,
}

impl<'src> Ctx<'src> {
    fn span(&self, span: TokenSpan) -> Span {
        let (start, end) = (span.start as usize, span.end as usize);
        Span::new(self.file, start + self.offset..end + self.offset)
    }

    fn text(&self, span: TokenSpan) -> &'src str {
        self.src
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
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
        too_deep,
    } = lexer::lex(file, text, 0);
    let cx = Ctx {
        file,
        src: text,
        offset: 0,
    };
    let mut items = Vec::new();
    if let Some(too_deep) = too_deep {
        errors.push(too_deep);
    } else {
        let eoi = lexer::token_span(text.len()..text.len());
        let input = || tokens.as_slice().split_token_span(eoi);
        let fast = item::module::<EmptyErr>(cx).parse(input());
        items = match fast.into_result() {
            Ok(items) => items,
            Err(_) => {
                let (output, parse_errors) = item::module::<ParseError>(cx)
                    .parse(input())
                    .into_output_errors();
                errors.extend(convert_errors(cx, &tokens, parse_errors));
                output.unwrap_or_default()
            }
        };
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
        tokens,
        mut errors,
        too_deep,
        ..
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
    if let Some(too_deep) = too_deep {
        errors.push(too_deep);
        return (error_expr, errors);
    }
    let eoi = lexer::token_span(text.len()..text.len());
    let input = || tokens.as_slice().split_token_span(eoi);
    let output = match item::lone_expr::<EmptyErr>(cx).parse(input()).into_result() {
        Ok(expr) => Some(expr),
        Err(_) => {
            let (output, parse_errors) = item::lone_expr::<ParseError>(cx)
                .parse(input())
                .into_output_errors();
            errors.extend(convert_errors(cx, &tokens, parse_errors));
            output
        }
    };
    errors.sort_by_key(|e| (e.span().start, e.span().end));
    (output.unwrap_or(error_expr), errors)
}

/// Turns chumsky's errors into ours: one per position, none where the lexer already reported
/// an invalid token.
fn convert_errors(
    cx: Ctx<'_>,
    tokens: &[(Token<'_>, TokenSpan)],
    errors: Vec<ParseError<'_, '_>>,
) -> Vec<SyntaxError> {
    // An error at, or right after, a token the lexer rejected is a cascade of that error.
    let lex_error_at = |start: u32| {
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
                let mut expected: Vec<String> = expected.iter().filter_map(pattern_text).collect();
                // A list of every operator says less than the word; one or two (a closing
                // `>`, say) are named, unless the binary operators already stand as the word
                // (then a `.` joins them).
                let operators = expected
                    .iter()
                    .filter(|text| OPERATORS.contains(&text.as_str()))
                    .count();
                let any_operator = expected.iter().any(|text| text == "an operator");
                if operators > 2 || (operators > 0 && any_operator) {
                    for text in &mut expected {
                        if OPERATORS.contains(&text.as_str()) {
                            "an operator".clone_into(text);
                        }
                    }
                }
                let closers = ["`}`", "`)`", "`]`"];
                if found.is_none() && expected.iter().any(|t| closers.contains(&t.as_str())) {
                    // Something is left open at the end of the file: what could open
                    // more (tried by recovery) is beside the point.
                    expected.retain(|t| !["`{`", "`(`", "`[`", "more input"].contains(&t.as_str()));
                }
                if operators <= 2 && expected.iter().any(|text| text == "an expression") {
                    // `!` and `-` start expressions: the word says it.
                    expected.retain(|text| text != "`!`" && text != "`-`");
                }
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
                    unclosed: match found {
                        None => unclosed(tokens).map(|at| cx.span(at)),
                        Some(_) => None,
                    },
                }
            }
        });
    }
    out
}

/// The innermost bracket left open at the end of the file, for errors found there.
fn unclosed(tokens: &[(Token<'_>, TokenSpan)]) -> Option<TokenSpan> {
    let mut open = Vec::new();
    for (token, span) in tokens {
        match token {
            Token::LBrace | Token::LParen | Token::LBracket => open.push(*span),
            Token::RBrace | Token::RParen | Token::RBracket => {
                open.pop();
            }
            _ => {}
        }
    }
    open.pop()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `.ael` file of the UI corpus, with its text.
    fn corpus() -> Vec<(String, String)> {
        let mut out = Vec::new();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui");
        let mut dirs = vec![root];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "ael") {
                    let bytes = std::fs::read(&path).unwrap_or_default();
                    let text = String::from_utf8_lossy(&bytes).into_owned();
                    out.push((path.display().to_string(), text));
                }
            }
        }
        out
    }

    /// Where the fast pass succeeds, the `Rich` pass reports nothing and builds the same tree;
    /// where the `Rich` pass reports nothing, the fast pass succeeds.
    #[test]
    fn fast_pass_agrees_with_rich_pass() {
        let corpus = corpus();
        assert!(corpus.len() > 60, "the UI corpus was not found");
        let mut clean = 0;
        for (name, text) in &corpus {
            let file = FileId(0);
            let lexed = lexer::lex(file, text, 0);
            if lexed.too_deep.is_some() {
                continue;
            }
            let tokens = lexed.tokens;
            let cx = Ctx {
                file,
                src: text,
                offset: 0,
            };
            let eoi = lexer::token_span(text.len()..text.len());
            let input = || tokens.as_slice().split_token_span(eoi);
            let fast = item::module::<EmptyErr>(cx).parse(input()).into_result();
            let (rich, rich_errors) = item::module::<ParseError>(cx)
                .parse(input())
                .into_output_errors();
            match fast {
                Ok(items) => {
                    clean += 1;
                    assert!(rich_errors.is_empty(), "{name}: only the rich pass failed");
                    assert_eq!(
                        Some(items),
                        rich,
                        "{name}: the passes built different trees"
                    );
                }
                Err(_) => assert!(!rich_errors.is_empty(), "{name}: only the fast pass failed"),
            }
        }
        assert!(clean > 30, "only {clean} files parsed cleanly");
    }
}
