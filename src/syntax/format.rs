//! `aelc fmt`: the canonical layout of AEL source.
//!
//! The formatter prints the syntax tree again, so the layout depends only on the tree and the
//! comments: formatting is deterministic and idempotent (`format(format(x)) == format(x)`), and
//! parsing the output gives back the same tree (spans aside). What it keeps from the source:
//! every ordinary comment (before the element it precedes, or at the end of the line it
//! followed), doc comments, at most one empty line where the author left one between fields,
//! entries, statements and arms, raw strings with their hashes, parentheses, and literals as
//! written (floats and money amounts keep their digits; integers lose their `_`).
//!
//! The rules of the layout are written down in `book/src/formatting.md`. The pieces:
//! [`doc`] is the pretty-printing algebra and its renderer, `comments` hands out comments in
//! source order, and the printer (`printer`, `item`, `expr`, `ty`, `literal`) builds the
//! document from the tree.

mod comments;
pub mod doc;
mod expr;
mod item;
mod literal;
mod printer;
mod ty;

use crate::diagnostics::Diagnostic;
use crate::span::{FileId, Span};
use crate::syntax::ast::{Comment, Module};
use crate::syntax::{self, Parse};

pub use literal::quoted;

/// Formats a parsed file. A file with syntax errors is refused: its error diagnostics come back
/// as `Err`, and nothing is printed, so a broken file is never rewritten.
pub fn format(parse: &Parse, source: &str) -> Result<String, Vec<Diagnostic>> {
    let errors: Vec<Diagnostic> = parse
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .cloned()
        .collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut comments = parse.comments.clone();
    comments.extend(dangling_docs(parse, source));
    Ok(print_module(&parse.module, &comments, source))
}

/// The parser drops a `///` block that documents nothing (and warns, `W0001`). The formatter
/// must not lose its text, so each of its lines comes back as an ordinary `//` comment, where it
/// was. Kept as `///`, it would document whatever follows it once the formatter moves it (after
/// the `,` of its line, or next to another `///` block once a `//!` line between them moves to
/// the top), and the next `aelc fmt` would change the file again.
fn dangling_docs(parse: &Parse, source: &str) -> Vec<Comment> {
    let mut out = Vec::new();
    for diagnostic in parse.diagnostics.iter().filter(|d| d.code == DANGLING_DOC) {
        let Some(label) = diagnostic.labels.iter().find(|l| l.primary) else {
            continue;
        };
        let span = label.span;
        let Some(text) = source.get(span.range()) else {
            continue;
        };
        let mut offset = span.start as usize;
        for line in text.split_inclusive('\n') {
            let trimmed = line.trim();
            let lead = line.len() - line.trim_start().len();
            if !trimmed.is_empty() {
                let start = offset + lead;
                out.push(Comment {
                    text: plain_comment(trimmed),
                    span: Span::new(span.file, start..start + trimmed.len()),
                });
            }
            offset += line.len();
        }
    }
    out
}

/// `/// text` as the plain comment `// text`. A text starting with `!` or `/` gets a space
/// first: `///!x` printed as `//!x` became a module doc (found by `aelc-fuzz fmt`).
fn plain_comment(doc_line: &str) -> String {
    match doc_line.strip_prefix("///") {
        Some(rest) if rest.starts_with(['!', '/']) => format!("// {rest}"),
        Some(rest) => format!("//{rest}"),
        None => doc_line.to_owned(),
    }
}

/// The warning the parser gives for a doc comment that documents nothing.
const DANGLING_DOC: &str = "W0001";

/// Parses `source` and formats it (see [`format`]).
pub fn format_source(file: FileId, source: &str) -> Result<String, Vec<Diagnostic>> {
    format(&syntax::parse(file, source), source)
}

/// Prints a module with its comments, without looking at diagnostics. `source` is the text the
/// spans point into; it is used only to see where the author left empty lines and which
/// comments shared a line with code, so a tree built by hand can pass `""`.
pub fn print_module(module: &Module, comments: &[Comment], source: &str) -> String {
    let mut printer = printer::Printer::new(comments::Comments::new(comments, source));
    let mut doc = vec![printer.module(module)];
    let rest = printer.comments.take_rest();
    doc.push(
        printer
            .comments
            .dangling(&rest, true, module.items.is_empty()),
    );
    let text = doc::render(&doc::Doc::Concat(doc));
    let text = text.trim_start_matches('\n').trim_end();
    if text.is_empty() {
        String::new()
    } else {
        format!("{text}\n")
    }
}
