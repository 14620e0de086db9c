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

use crate::allocator::without_slack;
use crate::span::{FileId, Span};
use crate::syntax::ast::{self, DeferredKind};
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

/// The starts of the openers (`{`, `(`, `[`) of the text being parsed that have a closer,
/// sorted: recovery skips a bracketed group as a whole ([`closed_group`]), and an opener that
/// is never closed fails at once instead of scanning to the end of the file. Without it, each
/// level of `n` unclosed blocks retried that scan from every recovery point: a 5 KB file of
/// 120 unclosed `node … {` took 0.9 s and grew with the cube of the depth (found by
/// `aelc-fuzz parse`).
///
/// A thread-local rather than a field of [`Ctx`]: the grammar is built once per parse, and
/// the table is a fact of the tokens that every recovery point reads.
mod closed {
    use std::cell::RefCell;

    use crate::syntax::lexer::TokenSpan;
    use crate::syntax::token::Token;

    /// What recovery may know of the tokens ahead.
    #[derive(Default)]
    struct Table {
        /// The starts of the openers that have a closer, sorted.
        closed: Vec<u32>,
        /// By start, sorted, the openers that recovery skips with all that follows them up
        /// to where they end unclosed: those still open at the end of the text (up to its
        /// end, `u32::MAX`) and the `{` given a closer of the wrong kind (up to that closer).
        /// Nothing in between can close a list around them.
        unclosed_ends: Vec<(u32, u32)>,
        /// The start of every token, in order.
        starts: Vec<u32>,
        /// By token: whether skipping from it (a closed group whole, any other token alone)
        /// reaches a `}`, which is what a block's recovery scans for.
        reaches_brace: Vec<bool>,
    }

    thread_local! {
        static TABLE: RefCell<Table> = RefCell::new(Table::default());
    }

    /// Whether the opener starting at byte `start` has a closer.
    pub(super) fn is_closed(start: u32) -> bool {
        TABLE.with(|table| table.borrow().closed.binary_search(&start).is_ok())
    }

    thread_local! {
        /// Where the skip begun by [`skip_from`] stops (the start of the first token not
        /// skipped).
        static SKIP_END: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    }

    /// Whether the opener starting at byte `start` is skipped with what follows it (see
    /// `Table::unclosed_ends`); if so, [`skipping`] says how far from now on.
    pub(super) fn skip_from(start: u32) -> bool {
        let end = TABLE.with(|table| {
            let table = table.borrow();
            let at = table
                .unclosed_ends
                .binary_search_by_key(&start, |(s, _)| *s);
            at.ok().map(|at| table.unclosed_ends[at].1)
        });
        if let Some(end) = end {
            SKIP_END.with(|e| e.set(end));
        }
        end.is_some()
    }

    /// Whether the token starting at `start` lies before the end of the skip [`skip_from`]
    /// began.
    pub(super) fn skipping(start: u32) -> bool {
        SKIP_END.with(|e| start < e.get())
    }

    /// Whether skipping from the token starting at byte `start` reaches a `}`.
    pub(super) fn reaches_brace(start: u32) -> bool {
        TABLE.with(|table| {
            let table = table.borrow();
            table
                .starts
                .binary_search(&start)
                .is_ok_and(|at| table.reaches_brace[at])
        })
    }

    /// Sets the table for `tokens` while `f` runs (restoring the previous one, so a parse
    /// inside a parse keeps its own).
    pub(super) fn with<R>(tokens: &[(Token<'_>, TokenSpan)], f: impl FnOnce() -> R) -> R {
        let (closed, closers, unclosed_ends) = closed_openers(tokens);
        let mut reaches_brace = vec![false; tokens.len() + 1];
        for at in (0..tokens.len()).rev() {
            reaches_brace[at] = match closers[at] {
                _ if tokens[at].0 == Token::RBrace => true,
                Some(closer) => reaches_brace[closer + 1],
                None => reaches_brace[at + 1],
            };
        }
        reaches_brace.pop();
        let table = Table {
            closed,
            unclosed_ends,
            starts: tokens.iter().map(|(_, span)| span.start).collect(),
            reaches_brace,
        };
        let previous = TABLE.with(|t| t.replace(table));
        let result = f();
        TABLE.with(|t| *t.borrow_mut() = previous);
        result
    }

    /// What [`closed_openers`] finds: the closed openers' starts, each token's closer, and
    /// `Table::unclosed_ends`.
    type Matched = (Vec<u32>, Vec<Option<usize>>, Vec<(u32, u32)>);

    /// A bracket matcher over all three kinds, as chumsky's `nested_delimiters` matches when
    /// given all three: a closer of the wrong kind leaves every group still open unclosed.
    /// The sorted starts of the closed openers, by token the index of its closer, and
    /// `Table::unclosed_ends`.
    fn closed_openers(tokens: &[(Token<'_>, TokenSpan)]) -> Matched {
        let mut open: Vec<(Token<'_>, usize)> = Vec::new();
        let mut closed = Vec::new();
        let mut ends = Vec::new();
        let mut closers = vec![None; tokens.len()];
        for (at, (token, _)) in tokens.iter().enumerate() {
            let opener = match token {
                Token::RBrace => Some(Token::LBrace),
                Token::RParen => Some(Token::LParen),
                Token::RBracket => Some(Token::LBracket),
                Token::LBrace | Token::LParen | Token::LBracket => {
                    open.push((*token, at));
                    continue;
                }
                _ => None,
            };
            let Some(opener) = opener else { continue };
            match open.last() {
                Some((top, start)) if *top == opener => {
                    closed.push(tokens[*start].1.start);
                    closers[*start] = Some(at);
                    open.pop();
                }
                Some(_) => {
                    let end = tokens[at].1.start;
                    for (token, start) in open.drain(..) {
                        if token == Token::LBrace {
                            ends.push((tokens[start].1.start, end));
                        }
                    }
                }
                None => {}
            }
        }
        closed.sort_unstable();
        ends.extend(open.iter().map(|(_, at)| (tokens[*at].1.start, u32::MAX)));
        ends.sort_unstable();
        (closed, closers, ends)
    }
}

/// One token that `accept` admits (with its span), consumed; any other fails at once with a
/// plain "unexpected token". The lookups in the table of closed brackets are built on it.
fn token_if<'tok, 'src: 'tok, E: Fail<'tok, 'src>>(
    accept: impl Fn(&Token<'src>, &TokenSpan) -> bool + Clone + 'tok,
) -> impl Parser<'tok, In<'tok, 'src>, (), Extra<E>> + Clone {
    any().try_map(move |token: Token<'src>, span: TokenSpan| {
        if accept(&token, &span) {
            Ok(())
        } else {
            Err(
                <E as LabelError<'tok, In<'tok, 'src>, &'static str>>::expected_found(
                    std::iter::empty(),
                    Some(MaybeRef::Val(token)),
                    span,
                ),
            )
        }
    })
}

/// Succeeds, consuming nothing, where a block's recovery (skip to its `}`) can succeed;
/// fails at once where it would scan to the end in vain. Without it, each of `n` blocks left
/// open by a wrong closer (`{ a) }`) scanned the rest of the file: 38 KB of them took 0.7 s,
/// four times as long for twice the size (found by `aelc-fuzz parse`).
fn brace_ahead<'tok, 'src: 'tok, E: Fail<'tok, 'src>>() -> expr::P<'tok, 'src, (), E> {
    token_if(|_, span| closed::reaches_brace(span.start))
        .rewind()
        .boxed()
}

/// An opener that is never closed, with the tokens after it up to where it ends unclosed (see
/// `closed::Table::unclosed_ends`): at the end of the text, or for a `{`, at the closer of the
/// wrong kind that ends it. Fails on any other token.
fn unclosed_rest<'tok, 'src: 'tok, E: Fail<'tok, 'src>>() -> expr::P<'tok, 'src, (), E> {
    let within = token_if(|_, span| closed::skipping(span.start)).repeated();
    token_if(|token, span| {
        matches!(token, Token::LBrace | Token::LParen | Token::LBracket)
            && closed::skip_from(span.start)
    })
    .ignore_then(within)
    .boxed()
}

/// chumsky's `nested_delimiters` (with the other two bracket kinds as `others`), failing at
/// once, without scanning, at an opener that is never closed.
fn closed_group<'tok, 'src: 'tok, O, E: Fail<'tok, 'src>, F, const N: usize>(
    start: Token<'src>,
    end: Token<'src>,
    others: [(Token<'src>, Token<'src>); N],
    fallback: F,
) -> impl Parser<'tok, In<'tok, 'src>, O, Extra<E>> + Clone
where
    F: Fn(TokenSpan) -> O + Clone + 'tok,
    O: 'tok,
{
    let opener = start;
    token_if(move |token, span| *token == opener && closed::is_closed(span.start))
        .rewind()
        .ignore_then(nested_delimiters(start, end, others, fallback))
}

/// Skips one balanced `{…}`, `(…)` or `[…]` group.
fn balanced<'tok, 'src: 'tok, E: Fail<'tok, 'src>>() -> expr::P<'tok, 'src, (), E> {
    choice((
        closed_group(
            Token::LBrace,
            Token::RBrace,
            [
                (Token::LParen, Token::RParen),
                (Token::LBracket, Token::RBracket),
            ],
            |_| (),
        ),
        closed_group(
            Token::LParen,
            Token::RParen,
            [
                (Token::LBrace, Token::RBrace),
                (Token::LBracket, Token::RBracket),
            ],
            |_| (),
        ),
        closed_group(
            Token::LBracket,
            Token::RBracket,
            [
                (Token::LBrace, Token::RBrace),
                (Token::LParen, Token::RParen),
            ],
            |_| (),
        ),
    ))
    .boxed()
}

/// A list collected with no room to spare ([`without_slack`]) and, for the most frequent
/// lengths, without the copy that makes: none or one item (a call with one argument, a type
/// with one argument) is allocated exactly once, at its size. A list collected item by item has
/// room for at least four (`Vec`'s first allocation) and then twice what it held: a path of one
/// segment held the room of four, an argument list of one the room of four 176-byte type
/// arguments. The tree of every module lives through the whole check, and that slack was a
/// third of it. Taking room for four and then giving the rest back was, for the million paths
/// of a million-line project, a million needless reallocations (paths now collect into
/// `ast::Segments`, which keeps one segment inline).
struct Exact<T>(Vec<T>);

impl<T> FromIterator<T> for Exact<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Exact<T> {
        let mut items = items.into_iter();
        let Some(first) = items.next() else {
            return Exact(Vec::new());
        };
        let Some(second) = items.next() else {
            return Exact(vec![first]);
        };
        let mut list = Vec::with_capacity(4);
        list.push(first);
        list.push(second);
        list.extend(items);
        Exact(without_slack(list))
    }
}

impl<T> Exact<T> {
    fn into_vec(self) -> Vec<T> {
        self.0
    }

    fn into_boxed(self) -> Box<[T]> {
        // The capacity is the length: no reallocation.
        self.0.into_boxed_slice()
    }
}

/// What every grammar rule needs: the file, the text (for literals as written) and the offset
/// that turns token positions into file positions.
#[derive(Clone, Copy)]
struct Ctx<'src> {
    file: FileId,
    src: &'src str,
    offset: usize,
    /// Whether fn and check bodies are only delimited, not parsed ([`ast::Body::Deferred`]).
    defer_bodies: bool,
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

/// Lexes and parses one module; errors come back typed, in source order. `lean` trees are
/// for a check alone ([`crate::syntax::parse_lean`]): a module without a single error gets
/// its fn and check bodies delimited rather than parsed ([`ast::Body::Deferred`], read by
/// [`parse_deferred`]), while a module with an error is parsed whole, so that its
/// diagnostics and its recovery are those of any parse; doc comments keep no text.
pub fn parse_module(
    file: FileId,
    text: &str,
    lean: bool,
) -> (ast::Module, Vec<ast::Comment>, Vec<SyntaxError>) {
    let Lexed {
        tokens,
        comments,
        docs,
        module_doc,
        mut errors,
        too_deep,
    } = lexer::lex_with(file, text, 0, !lean);
    let cx = Ctx {
        file,
        src: text,
        offset: 0,
        defer_bodies: false,
    };
    let mut items = Vec::new();
    if let Some(too_deep) = too_deep {
        errors.push(too_deep);
    } else {
        let eoi = lexer::token_span(text.len()..text.len());
        let input = || tokens.as_slice().split_token_span(eoi);
        let fast_cx = Ctx {
            defer_bodies: lean && errors.is_empty(),
            ..cx
        };
        items = closed::with(&tokens, || {
            let fast = item::module::<EmptyErr>(fast_cx).parse(input());
            match fast.into_result() {
                Ok(items) => items,
                Err(_) => {
                    let (output, parse_errors) = item::module::<ParseError>(cx)
                        .parse(input())
                        .into_output_errors();
                    errors.extend(convert_errors(cx, &tokens, parse_errors));
                    output.unwrap_or_default()
                }
            }
        });
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
        defer_bodies: false,
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
    let output = closed::with(&tokens, || {
        match item::lone_expr::<EmptyErr>(cx).parse(input()).into_result() {
            Ok(expr) => Some(expr),
            Err(_) => {
                let (output, parse_errors) = item::lone_expr::<ParseError>(cx)
                    .parse(input())
                    .into_output_errors();
                errors.extend(convert_errors(cx, &tokens, parse_errors));
                output
            }
        }
    });
    errors.sort_by_key(|e| (e.span().start, e.span().end));
    (output.unwrap_or(error_expr), errors)
}

/// [`parse_expr`] of each of `pieces` of `text`, with one grammar for them all, as
/// [`parse_deferred`] reads bodies: each piece is lexed alone and its tokens placed at their
/// offsets in `text`. A piece that does not lex or parse cleanly is parsed alone by
/// [`parse_expr`], which reports what is wrong, so every result is what [`parse_expr`] gives.
pub fn parse_exprs(
    file: FileId,
    text: &str,
    pieces: &[std::ops::Range<usize>],
) -> Vec<(ast::Expr, Vec<SyntaxError>)> {
    let mut tokens = Vec::new();
    let ranges: Vec<Option<std::ops::Range<usize>>> = pieces
        .iter()
        .map(|piece| lex_piece(file, text, piece.clone(), &mut tokens))
        .collect();
    let cx = Ctx {
        file,
        src: text,
        offset: 0,
        defer_bodies: false,
    };
    let clean: Vec<Option<ast::Expr>> = closed::with(&tokens, || {
        let grammar = item::lone_expr::<EmptyErr>(cx);
        pieces
            .iter()
            .zip(ranges)
            .map(|(piece, range)| {
                let eoi = lexer::token_span(piece.end..piece.end);
                let input = tokens.get(range?)?.split_token_span(eoi);
                grammar.parse(input).into_result().ok()
            })
            .collect()
    });
    pieces
        .iter()
        .zip(clean)
        .map(|(piece, clean)| match clean {
            Some(expr) => (expr, Vec::new()),
            None => parse_expr(
                file,
                text.get(piece.clone()).unwrap_or(""),
                piece.start as u32,
            ),
        })
        .collect()
}

/// Lexes `piece` of `text` alone and adds its tokens to `tokens`, placed at their offsets in
/// `text`, for one grammar built for `text` to read ([`parse_exprs`], [`parse_deferred`]).
/// Where they are in `tokens`, or `None` (and nothing added) when the piece does not lex
/// cleanly or is no piece of `text`.
fn lex_piece<'src>(
    file: FileId,
    text: &'src str,
    piece: std::ops::Range<usize>,
    tokens: &mut Vec<(Token<'src>, TokenSpan)>,
) -> Option<std::ops::Range<usize>> {
    let base = piece.start;
    let lexed = lexer::lex(file, text.get(piece)?, base);
    if !lexed.errors.is_empty() || lexed.too_deep.is_some() {
        return None;
    }
    let from = tokens.len();
    tokens.extend(lexed.tokens.into_iter().map(|(token, at)| {
        let at = lexer::token_span(at.start as usize + base..at.end as usize + base);
        (token, at)
    }));
    Some(from..tokens.len())
}

/// Parses the bodies that [`parse_module`] deferred in `text` (each the span of a
/// [`ast::Body::Deferred`] and whether it is a check's), in the order given. `None` when one of
/// them is not clean: the module must then be parsed whole ([`parse_module`] without deferring),
/// which says what is wrong and where, as any parse of it does.
///
/// A clean body gives the very tree a whole parse gives: the grammar is the same, a body's
/// parse reads nothing outside its braces, and only a recovery (which reports an error) could.
/// Each body is lexed alone (it starts and ends at a token boundary, so its tokens are the
/// module's own) and its tokens placed at their offsets in the module, so that one grammar,
/// built for the module's text, reads them all and the rest of the text is not lexed again.
pub fn parse_deferred(
    file: FileId,
    text: &str,
    bodies: &[(Span, DeferredKind)],
) -> Option<Vec<ParsedBody>> {
    let mut tokens = Vec::new();
    let ranges = bodies
        .iter()
        .map(|&(span, _)| {
            lex_piece(
                file,
                text,
                span.start as usize..span.end as usize,
                &mut tokens,
            )
        })
        .collect::<Option<Vec<_>>>()?;
    let cx = Ctx {
        file,
        src: text,
        offset: 0,
        defer_bodies: false,
    };
    closed::with(&tokens, || {
        let (fn_body, check_body) = item::bodies::<EmptyErr>(cx);
        bodies
            .iter()
            .zip(ranges)
            .map(|(&(span, kind), range)| {
                let eoi = lexer::token_span(span.end as usize..span.end as usize);
                let input = tokens.get(range)?.split_token_span(eoi);
                match kind {
                    DeferredKind::Fn => fn_body
                        .parse(input)
                        .into_result()
                        .ok()
                        .map(|body| ParsedBody::Fn(Box::new(body))),
                    DeferredKind::Check => check_body
                        .parse(input)
                        .into_result()
                        .ok()
                        .map(ParsedBody::Check),
                }
            })
            .collect()
    })
}

/// A deferred body, parsed ([`parse_deferred`]).
#[derive(Clone, Debug, PartialEq)]
pub enum ParsedBody {
    Fn(Box<ast::Expr>),
    Check(Vec<ast::Require>),
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
                    // more (tried by recovery) is beside the point, and the closer of the
                    // innermost open bracket is expected (recovery no longer scans to the
                    // end for it, see `closed_group`, so no failed scan reports it).
                    expected.retain(|t| !["`{`", "`(`", "`[`", "more input"].contains(&t.as_str()));
                    if let Some(closer) = unclosed_closer(tokens) {
                        if !expected.iter().any(|t| t == closer) {
                            expected.push(closer.to_owned());
                        }
                    }
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
/// The closer (as an error names it) of the innermost bracket left open at the end.
fn unclosed_closer(tokens: &[(Token<'_>, TokenSpan)]) -> Option<&'static str> {
    let at = unclosed(tokens)?;
    let opener = tokens.iter().find(|(_, span)| *span == at)?;
    Some(match opener.0 {
        Token::LBrace => "`}`",
        Token::LParen => "`)`",
        _ => "`]`",
    })
}

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

    /// The openers that `closed_group` may skip are those chumsky's `nested_delimiters`
    /// closes: a closer of the wrong kind leaves every group still open unclosed, a stray
    /// closer is passed over, and openers left at the end are unclosed.
    #[test]
    fn closed_openers_are_those_nested_delimiters_closes() {
        let text = "{ ( ) } [ ( } { ) ( [ ] (";
        let lexed = lexer::lex(FileId(0), text, 0);
        let starts: Vec<u32> = closed::with(&lexed.tokens, || {
            (0..text.len() as u32)
                .filter(|at| closed::is_closed(*at))
                .collect()
        });
        assert_eq!(starts, [0, 2, 20]);
    }

    /// How much slower than usual a host may run these tests: a debug build of the fuzz
    /// regressions below took over 6 s among the test binary's parallel tests on a host at a
    /// quarter of its speed. The blow-ups these bounds stop were tens to hundreds of times a
    /// linear parse (minutes unoptimized), so they still fail.
    const SLOW_HOST: u64 = 5;

    /// `text` fails to parse, and the parse takes less than `seconds` times [`SLOW_HOST`] (a
    /// bound far above a linear parse, far below the blow-up a fuzz finding showed).
    fn fails_within(text: &str, seconds: u64) {
        let started = std::time::Instant::now();
        let (_, _, errors) = parse_module(FileId(0), text, false);
        let elapsed = started.elapsed();
        assert!(!errors.is_empty());
        assert!(
            elapsed < std::time::Duration::from_secs(seconds * SLOW_HOST),
            "{elapsed:?} for {} bytes",
            text.len()
        );
    }

    /// Found by `aelc-fuzz parse`: 120 unclosed `node … {` (5 KB) took 0.86 s in a release
    /// build and eight times as long for twice the depth, every level's recovery scanning to
    /// the end for each unclosed group inside it. Now such a group fails at once.
    #[test]
    fn unclosed_blocks_are_not_scanned_again_from_every_level() {
        let text = "struct X { x: u8 }\nnode n(a: A) -> A {\n    t ".repeat(120);
        fails_within(&text, 3);
    }

    /// Found by `aelc-fuzz parse` (`fuzz/regressions/parse-f8817c2331014794`): a run of
    /// attributes after an unclosed brace was parsed again from each of its `@`s (1,600 took
    /// 0.6 s in a release build, four times as long for twice as many).
    #[test]
    fn a_run_of_attributes_is_skipped_once() {
        let text = format!("struct A {{ s: Str<100> {}", "@form".repeat(1600));
        fails_within(&text, 2);
    }

    /// Found by `aelc-fuzz parse` (`fuzz/regressions/parse-206c2952f85ec8f2`): each block left
    /// open by a wrong closer scanned the rest of the file for its `}` (400 took 0.73 s in a
    /// release build, four times as long for twice as many).
    #[test]
    fn blocks_left_open_by_a_wrong_closer_do_not_each_scan_the_rest() {
        let text =
            "fn head(xs: List<u8, 4>) -> u8 { xs.first().unw u8) -> u8 { some(x) }\n\n".repeat(400);
        fails_within(&text, 2);
    }

    /// Found by `aelc-fuzz parse` (`fuzz/regressions/parse-unclosed-structs` and
    /// `parse-unclosed-nodes`): with 120 levels left open at the end, each level's recovery
    /// parsed the rest of the file as its own fields or statements, 2.1 s and 1.5 s for 57 KB in
    /// a release build (0.04 s with one level). Now a level skips from the unclosed opener
    /// inside it to the end; twice the depth must not cost twice the time.
    #[test]
    fn levels_left_open_do_not_each_parse_the_rest() {
        for text in [
            include_str!("../../fuzz/regressions/parse-unclosed-structs"),
            include_str!("../../fuzz/regressions/parse-unclosed-nodes"),
            // 110 `config {` left open by a stray `)` rather than by the end (3 s for 18 KB in
            // a release build; found by `aelc-fuzz fmt`).
            include_str!("../../fuzz/regressions/fmt-67b17fdb6d098d25"),
        ] {
            // 0.1 s in a release build, about ten times that in a debug one, before the fix
            // twenty times that.
            fails_within(text, 6);
        }
        let fields = "    a: u8,\n".repeat(8000);
        // What this holds is the ratio below; the absolute bound only stops a blow-up early
        // (before the fix, about 50 times one level: minutes unoptimized). 4 s was too tight
        // for a debug build among a test binary's parallel tests on a slow host (4.6 s in CI).
        let time = |depth: usize| {
            let text = format!("{}{fields}", "struct X {\n".repeat(depth));
            let started = std::time::Instant::now();
            fails_within(&text, 20);
            started.elapsed()
        };
        // Best of five, so a busy machine does not fail it.
        let best = |depth| (0..5).map(|_| time(depth)).min().unwrap_or_default();
        let (shallow, deep) = (best(1), best(120));
        // Before: about 50 times as long.
        assert!(
            deep < shallow * 8,
            "120 levels took {deep:?}, one level {shallow:?}"
        );
    }

    /// The same error as before for a file cut short inside three levels: the end of the file,
    /// the innermost opener named.
    #[test]
    fn the_error_for_levels_left_open_is_at_the_end() {
        let text = "node n(x: X) -> Y {\n    config {\n        prompt: file(\"p.md\"\n";
        let (_, _, errors) = parse_module(FileId(0), text, false);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].span().start as usize, text.len());
    }

    /// Found by `aelc-fuzz parse` (`fuzz/regressions/parse-81edfeed35ef2c3a`): every bare `@`
    /// of a run (with invalid bytes between them) was an item of its own and an error of its
    /// own, 0.34 s for 40 KB in a release build. Now the run is skipped as one item.
    #[test]
    fn a_run_of_bare_at_signs_is_one_error() {
        let text = "@".repeat(20_000);
        fails_within(&text, 2);
        let (_, _, errors) = parse_module(FileId(0), &text, false);
        assert_eq!(errors.len(), 1, "{:?}", &errors[..errors.len().min(3)]);
        let bytes = include_bytes!("../../fuzz/regressions/parse-81edfeed35ef2c3a");
        fails_within(&String::from_utf8_lossy(bytes), 2);
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
                defer_bodies: false,
            };
            let eoi = lexer::token_span(text.len()..text.len());
            let input = || tokens.as_slice().split_token_span(eoi);
            let (fast, (rich, rich_errors)) = closed::with(&tokens, || {
                (
                    item::module::<EmptyErr>(cx).parse(input()).into_result(),
                    item::module::<ParseError>(cx)
                        .parse(input())
                        .into_output_errors(),
                )
            });
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

    /// Expressions parsed together (`parse_exprs`, one grammar) are what each parses to alone,
    /// clean or not, placed among other text as a prompt template places them.
    #[test]
    fn expressions_parsed_together_are_those_parsed_alone() {
        let deep = format!("{}x{}", "(".repeat(300), ")".repeat(300));
        let exprs = [
            "request.document.trim().len() > 0",
            "x +",
            "\"unterminated",
            "if c { 1 } else { 2 }",
            "f(",
            "a.b(c, 1)",
            "#",
            "Review { summary: s, ..base }",
            "",
            "  spaced  ",
            "items.any(|i| i.level == high)",
            &deep,
            "[1, 2, 3].len()",
            "x y",
        ];
        let mut text = String::from("Dear {{ ");
        let mut pieces = Vec::new();
        for expr in exprs {
            let start = text.len();
            text.push_str(expr);
            pieces.push(start..text.len());
            text.push_str(" }}, then {% if ");
        }
        let file = FileId(3);
        let together = parse_exprs(file, &text, &pieces);
        assert_eq!(together.len(), pieces.len());
        let mut clean = 0;
        for (piece, got) in pieces.iter().zip(together) {
            let alone = parse_expr(file, &text[piece.clone()], piece.start as u32);
            assert_eq!(got, alone, "{:?}", &text[piece.clone()]);
            clean += usize::from(got.1.is_empty());
        }
        assert!(
            (6..pieces.len() - 4).contains(&clean),
            "{clean} parsed cleanly"
        );
    }

    /// Every doc text of `module`, which docs attach to: the module, items, variants, error
    /// codes and fields.
    fn doc_texts(module: &mut ast::Module) -> Vec<&mut Box<str>> {
        fn fields(fields: &mut [ast::Field]) -> impl Iterator<Item = &mut Option<ast::Doc>> {
            fields.iter_mut().map(|f| &mut f.docs)
        }
        let mut docs = vec![&mut module.docs];
        for item in &mut module.items {
            docs.push(&mut item.docs);
            match &mut item.kind {
                ast::ItemKind::Struct(def) => docs.extend(fields(&mut def.fields)),
                ast::ItemKind::Enum(def) => {
                    for variant in &mut def.variants {
                        docs.push(&mut variant.docs);
                        docs.extend(variant.fields.iter_mut().flat_map(|f| fields(f)));
                    }
                }
                ast::ItemKind::Errors(def) => {
                    docs.extend(def.codes.iter_mut().map(|c| &mut c.docs))
                }
                _ => {}
            }
        }
        docs.into_iter().flatten().map(|d| &mut d.text).collect()
    }

    /// A lean parse reports what a whole parse reports, and its tree is the whole parse's
    /// without doc texts: each deferred body, parsed on its own, is the body the whole parse
    /// built, and a module with an error defers nothing. Over the UI corpus and bodies written
    /// to fail only when parsed.
    #[test]
    fn a_lean_parse_is_the_whole_parse() {
        let mut corpus = corpus();
        assert!(corpus.len() > 60, "the UI corpus was not found");
        corpus.push((
            "a broken body".into(),
            "fn f(x: u32) -> u32 { x + }\ncheck c(x: u32) { require x > else bad; }\n".into(),
        ));
        let (mut deferred, mut refused) = (0, 0);
        for (name, text) in &corpus {
            let file = FileId(0);
            let (mut whole, _, whole_errors) = parse_module(file, text, false);
            let (mut module, _, errors) = parse_module(file, text, true);
            // A lean tree's docs keep their places and no text.
            assert_eq!(
                doc_texts(&mut module).iter().find(|t| !t.is_empty()),
                None,
                "{name}: a lean tree kept a doc's text"
            );
            doc_texts(&mut whole)
                .into_iter()
                .for_each(|t| *t = "".into());
            let spans = module.deferred_bodies();
            if spans.is_empty() {
                assert_eq!(module, whole, "{name}: nothing deferred, yet another tree");
                assert_eq!(errors, whole_errors, "{name}");
                continue;
            }
            assert!(
                !errors.iter().any(|e| e.to_diagnostic().is_error()),
                "{name}: a module with an error deferred its bodies"
            );
            let Some(bodies) = parse_deferred(file, text, &spans) else {
                assert!(
                    whole_errors.iter().any(|e| e.to_diagnostic().is_error()),
                    "{name}: a deferred body did not parse in a clean module"
                );
                refused += 1;
                continue;
            };
            assert_eq!(errors, whole_errors, "{name}");
            let mut bodies = bodies.into_iter();
            for item in &mut module.items {
                match &mut item.kind {
                    ast::ItemKind::Fn(ast::FnDef {
                        body: Some(body @ ast::Body::Deferred(_)),
                        ..
                    }) => match bodies.next() {
                        Some(ParsedBody::Fn(expr)) => *body = ast::Body::Parsed(expr),
                        other => panic!("{name}: a fn body parsed as {other:?}"),
                    },
                    ast::ItemKind::Check(ast::CheckDef {
                        body: Some(body @ ast::Body::Deferred(_)),
                        ..
                    }) => match bodies.next() {
                        Some(ParsedBody::Check(requires)) => *body = ast::Body::Parsed(requires),
                        other => panic!("{name}: a check body parsed as {other:?}"),
                    },
                    _ => {}
                }
            }
            assert_eq!(
                module, whole,
                "{name}: a deferred body parsed to another tree"
            );
            deferred += spans.len();
        }
        assert!(deferred > 30, "only {deferred} bodies were deferred");
        assert!(refused > 0, "no deferred body failed to parse");
    }
}
