//! The syntax layer: tokens, lexer, parser, syntax tree and formatter.
//!
//! `parse` never fails: it returns a tree (with error nodes where the source is broken) and the
//! diagnostics found on the way. Nothing here knows about types or names.

pub mod ast;
mod docs;
pub mod error;
pub mod format;
mod lexer;
mod parser;
pub mod template;
pub mod token;

pub use lexer::MAX_NESTING;

use crate::diagnostics::Diagnostic;
use crate::span::FileId;

/// The result of parsing one file.
#[derive(Clone, Debug)]
pub struct Parse {
    pub module: ast::Module,
    /// Ordinary comments in source order, for the formatter.
    pub comments: Vec<ast::Comment>,
    pub diagnostics: Vec<Diagnostic>,
}

pub use parser::{parse_deferred, ParsedBody};

/// Lexes and parses one module.
pub fn parse(file: FileId, text: &str) -> Parse {
    parse_with(file, text, false)
}

/// [`parse`] for a check of the diagnostics alone (`aelc check`), whose trees hold less:
/// - the fn and check bodies of a module that has no error are deferred
///   ([`ast::Body::Deferred`]), for a check that reads each body once ([`parse_deferred`]) and
///   keeps no tree of it;
/// - a doc comment keeps where it is, not what it says ([`ast::Doc::text`] is empty): the
///   check asks only whether a thing is documented.
///
/// The diagnostics are those of [`parse`].
pub fn parse_lean(file: FileId, text: &str) -> Parse {
    parse_with(file, text, true)
}

fn parse_with(file: FileId, text: &str, lean: bool) -> Parse {
    let (module, comments, errors) = parser::parse_module(file, text, lean);
    Parse {
        module,
        comments,
        diagnostics: diagnostics(&errors),
    }
}

/// Syntax errors as the diagnostics every caller reports.
fn diagnostics(errors: &[error::SyntaxError]) -> Vec<Diagnostic> {
    errors
        .iter()
        .map(error::SyntaxError::to_diagnostic)
        .collect()
}

/// The significant tokens of `text` with their spans, and the spans of all its comments (doc
/// comments included), each in source order: what an editor colours. Lex errors stand as
/// [`token::Token::Error`]; nothing is reported.
pub fn lex(
    file: FileId,
    text: &str,
) -> (
    Vec<(token::Token<'_>, crate::span::Span)>,
    Vec<crate::span::Span>,
) {
    let lexed = lexer::lex(file, text, 0);
    let tokens = lexed
        .tokens
        .iter()
        .map(|(token, span)| {
            let span = crate::span::Span {
                file,
                start: span.start,
                end: span.end,
            };
            (*token, span)
        })
        .collect();
    let mut comments: Vec<crate::span::Span> = lexed
        .comments
        .iter()
        .map(|c| c.span)
        .chain(lexed.docs.iter().map(|d| d.doc.span))
        .chain(lexed.module_doc.iter().map(|d| d.span))
        .collect();
    comments.sort();
    (tokens, comments)
}

/// Parses one expression, e.g. the content of a prompt template's `{{ … }}`. `offset` is where
/// `text` starts in its file, so spans point into that file.
pub fn parse_expr(file: FileId, text: &str, offset: u32) -> (ast::Expr, Vec<Diagnostic>) {
    let (expr, errors) = parser::parse_expr(file, text, offset);
    (expr, diagnostics(&errors))
}

/// [`parse_expr`] of each of `pieces` of `text` (ranges of bytes, e.g. the expressions of a
/// prompt template's tags), in the order given, each exactly as [`parse_expr`] parses it alone,
/// with one expression grammar built for them all rather than one each: building it was 4% of
/// `aelc check`'s time on a project whose prompts have a few tags each.
pub fn parse_exprs(
    file: FileId,
    text: &str,
    pieces: &[std::ops::Range<usize>],
) -> Vec<(ast::Expr, Vec<Diagnostic>)> {
    parser::parse_exprs(file, text, pieces)
        .into_iter()
        .map(|(expr, errors)| (expr, diagnostics(&errors)))
        .collect()
}
