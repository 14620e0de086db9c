//! The lexer: source text → significant tokens, comments, doc comments and lex errors.
//!
//! Comments never reach the parser. Ordinary comments are kept for the formatter; `///` lines
//! are grouped into [`DocBlock`]s keyed by the start of the next significant token, which is
//! how [`super::docs`] attaches them after parsing. Every error leaves a [`Token::Error`] in the
//! stream so that the parser reports nothing more about that spot.

use chumsky::span::SimpleSpan;
use logos::Logos;

use crate::span::{FileId, Span};
use crate::syntax::ast::{Comment, Doc};
use crate::syntax::error::SyntaxError;
use crate::syntax::token::{CommentKind, Token};

/// How deep brackets may nest. Deeper input is refused before parsing, so that neither the
/// parser nor later passes can run out of stack.
pub const MAX_NESTING: usize = 128;

/// A token's place in the text being lexed: byte offsets as `u32` (a file's size is bounded
/// far below 4 GiB, and [`Span`] is `u32` too), so that a token and its span take 32 bytes.
pub type TokenSpan = SimpleSpan<u32>;

/// A byte range of the lexed text as a [`TokenSpan`].
pub fn token_span(range: std::ops::Range<usize>) -> TokenSpan {
    let at = |offset: usize| u32::try_from(offset).unwrap_or(u32::MAX);
    TokenSpan::from(at(range.start)..at(range.end))
}

/// Consecutive `///` lines and the offset of the token they stand before.
#[derive(Clone, Debug)]
pub struct DocBlock {
    pub doc: Doc,
    /// Start of the next significant token (`None`: the file ends).
    pub next_token: Option<u32>,
}

/// What lexing one file produced.
#[derive(Debug, Default)]
pub struct Lexed<'src> {
    pub tokens: Vec<(Token<'src>, TokenSpan)>,
    pub comments: Vec<Comment>,
    pub docs: Vec<DocBlock>,
    /// `//!` lines, joined.
    pub module_doc: Option<Doc>,
    pub errors: Vec<SyntaxError>,
    /// Where the tokens first nest deeper than [`MAX_NESTING`] ([`Nesting`]): such a file is
    /// not parsed.
    pub too_deep: Option<SyntaxError>,
}

/// Lexes `text`, whose first byte is at `offset` in its file (0 for a whole file).
pub fn lex(file: FileId, text: &str, offset: usize) -> Lexed<'_> {
    lex_with(file, text, offset, true)
}

/// [`lex`]; without `doc_text`, every doc comment's text is left empty and only its span is
/// kept ([`crate::syntax::parse_lean`]): the documented fields of a project were one
/// allocation each, live through the whole check.
pub fn lex_with(file: FileId, text: &str, offset: usize, doc_text: bool) -> Lexed<'_> {
    // Real sources hold a token per 5 to 7 bytes: room for one per 4 means the buffer is never
    // copied to grow in practice (a 3 MB file one token past a reserve of one per 5 spent a
    // sixth of its parse time copying 24 MB). Room never written costs no memory.
    let mut out = Lexed {
        tokens: Vec::with_capacity(text.len() / 4 + 16),
        ..Lexed::default()
    };
    // The doc block being built, and whether a token or blank comment broke it.
    let mut pending_doc: Option<Growing> = None;
    let mut module_doc: Option<Growing> = None;
    let mut nesting = Nesting::new();
    let mut lexer = Token::lexer(text);
    while let Some(result) = lexer.next() {
        let range = lexer.span();
        let span = Span::new(file, range.start + offset..range.end + offset);
        match result {
            Ok(Token::Comment(kind)) => {
                let body = lexer.slice();
                match kind {
                    CommentKind::Plain => {
                        flush_doc(&mut pending_doc, &mut out, None);
                        out.comments.push(Comment {
                            text: body.to_owned(),
                            span,
                        });
                    }
                    CommentKind::Doc => {
                        let line = strip_marker(body, "///");
                        match pending_doc.as_mut() {
                            Some(doc) if only_space_between(text, doc.span.end, span.start) => {
                                doc.add(line, span, doc_text);
                            }
                            _ => {
                                flush_doc(&mut pending_doc, &mut out, None);
                                pending_doc = Some(Growing::new(line, span, doc_text));
                            }
                        }
                    }
                    CommentKind::ModuleDoc => {
                        let line = strip_marker(body, "//!");
                        match module_doc.as_mut() {
                            Some(doc) => doc.add(line, span, doc_text),
                            None => module_doc = Some(Growing::new(line, span, doc_text)),
                        }
                    }
                }
            }
            Ok(token) => {
                flush_doc(&mut pending_doc, &mut out, Some(span.start));
                // Checked here, while the token is at hand: a pass of its own over the token
                // buffer afterwards read a large file's tokens from memory a second time.
                if out.too_deep.is_none() && nesting.too_deep_after(&token) {
                    out.too_deep = Some(SyntaxError::TooDeep {
                        span,
                        limit: MAX_NESTING,
                    });
                }
                out.tokens.push((token, token_span(range.clone())));
            }
            Err(error) => {
                flush_doc(&mut pending_doc, &mut out, Some(span.start));
                let is_comment =
                    matches!(error, crate::syntax::token::LexError::UnterminatedComment);
                out.errors.push(SyntaxError::Lex {
                    error,
                    span,
                    text: lexer.slice().to_owned(),
                });
                if is_comment {
                    out.comments.push(Comment {
                        text: lexer.slice().to_owned(),
                        span,
                    });
                } else {
                    // An error token breaks a run of prefix operators, as it did when the
                    // check was a pass of its own; it can never make the tree deeper.
                    nesting.too_deep_after(&Token::Error);
                    out.tokens.push((Token::Error, token_span(range.clone())));
                }
            }
        }
    }
    flush_doc(&mut pending_doc, &mut out, None);
    out.module_doc = module_doc.map(Growing::done);
    out
}

/// A doc comment while its lines are read.
struct Growing {
    text: String,
    span: Span,
}

impl Growing {
    /// A doc's first line, its text kept only with `doc_text` ([`lex_with`]).
    fn new(line: &str, span: Span, doc_text: bool) -> Growing {
        let text = match doc_text {
            true => line.to_owned(),
            false => String::new(),
        };
        Growing { text, span }
    }

    /// The doc's next line.
    fn add(&mut self, line: &str, span: Span, doc_text: bool) {
        if doc_text {
            self.text.push('\n');
            self.text.push_str(line);
        }
        self.span = self.span.to(span);
    }

    /// The finished doc: it lives as long as the tree, without the room its growth left.
    fn done(self) -> Doc {
        // A doc of several lines grew: copied to its length rather than `into_boxed_str`,
        // which would keep the grown buffer whole (`allocator::without_slack`).
        let text = match self.text.capacity() == self.text.len() {
            true => self.text.into_boxed_str(),
            false => Box::from(self.text.as_str()),
        };
        Doc {
            text,
            span: self.span,
        }
    }
}

fn flush_doc(pending: &mut Option<Growing>, out: &mut Lexed<'_>, next_token: Option<u32>) {
    if let Some(doc) = pending.take() {
        out.docs.push(DocBlock {
            doc: doc.done(),
            next_token,
        });
    }
}

/// `/// text` → `text`: the marker and one following space removed.
fn strip_marker<'a>(line: &'a str, marker: &str) -> &'a str {
    let rest = line.get(marker.len()..).unwrap_or("");
    let rest = rest.strip_prefix(' ').unwrap_or(rest);
    // Trailing blanks (and a `\r`) are no part of the doc: the formatter drops them, and the
    // doc must stay the same (found by `aelc-fuzz fmt`: `//! a ` formatted to another tree).
    rest.trim_end()
}

fn only_space_between(text: &str, from: u32, to: u32) -> bool {
    text.get(from as usize..to as usize)
        .is_some_and(|gap| gap.chars().all(char::is_whitespace))
}

/// How deep the syntax tree grows, token by token: the lexer asks after every token whether
/// the tree would now be deeper than [`MAX_NESTING`].
///
/// Brackets nest, but so do chains at one bracket level: `a + b + c` is a tree two deep on its
/// left, and so are `x.a.b`, `if … else if …`, `|x| |y| …` and `List<List<…>>`. Depth here is
/// the open brackets plus, at each open level, the chain links since that level's last `,` or
/// `;` (or item keyword, at the top). A file of any size thus yields a tree that every
/// recursive pass (drop, `Debug`, the formatter, sema) walks without running out of stack.
struct Nesting {
    /// Chain links at each open bracket level; `levels[0]` is the top.
    levels: Vec<usize>,
    /// Open brackets plus every level's links.
    depth: usize,
    /// Prefix operators (`!`, `-`, `|`, `if`, `match`, `some`) in a row.
    prefix_run: usize,
}

impl Nesting {
    fn new() -> Nesting {
        Nesting {
            levels: vec![0],
            depth: 0,
            prefix_run: 0,
        }
    }

    /// Takes the next significant token; `true` if the tree is now too deep.
    fn too_deep_after(&mut self, token: &Token<'_>) -> bool {
        let Nesting {
            levels,
            depth,
            prefix_run,
        } = self;
        match token {
            Token::LParen | Token::LBrace | Token::LBracket => {
                *depth += 1;
                levels.push(0);
            }
            Token::RParen | Token::RBrace | Token::RBracket if levels.len() > 1 => {
                let links = levels.pop().unwrap_or(0);
                *depth = depth.saturating_sub(links + 1);
            }
            Token::RParen | Token::RBrace | Token::RBracket => {}
            Token::Comma | Token::Semi => {
                if let Some(links) = levels.last_mut() {
                    *depth = depth.saturating_sub(*links);
                    *links = 0;
                }
            }
            token if levels.len() == 1 && is_item_keyword(token) => {
                *depth = depth.saturating_sub(levels[0]);
                levels[0] = 0;
            }
            token if is_chain_link(token) => {
                if let Some(links) = levels.last_mut() {
                    *links += 1;
                    *depth += 1;
                }
            }
            _ => {}
        }
        *prefix_run = match token {
            Token::Bang | Token::Minus | Token::Pipe | Token::If | Token::Match | Token::Some => {
                *prefix_run + 1
            }
            _ => 0,
        };
        *depth > MAX_NESTING || *prefix_run > MAX_NESTING
    }
}

/// A token that starts an item; at the top level it ends whatever chain came before.
fn is_item_keyword(token: &Token<'_>) -> bool {
    matches!(
        token,
        Token::Use
            | Token::Type
            | Token::Struct
            | Token::Enum
            | Token::Errors
            | Token::Fn
            | Token::Extern
            | Token::Check
            | Token::Node
            | Token::Agent
            | Token::Stream
            | Token::Builder
            | Token::At
    )
}

/// A token that nests what follows it one level deeper than what came before: a binary
/// operator (a left fold), `.` (a postfix chain), `else` (an `else if` chain), `|` (a closure
/// or pattern alternative), `<` / `>` (type arguments).
fn is_chain_link(token: &Token<'_>) -> bool {
    matches!(
        token,
        Token::Plus
            | Token::Minus
            | Token::Star
            | Token::Slash
            | Token::Percent
            | Token::EqEq
            | Token::Ne
            | Token::Lt
            | Token::Gt
            | Token::Le
            | Token::Ge
            | Token::AndAnd
            | Token::OrOr
            | Token::Dot
            | Token::Else
            | Token::Pipe
    )
}
