//! `textDocument/formatting`: the buffer through the formatter of `aelc fmt`, as one edit.
//!
//! A buffer with syntax errors is left alone (the formatter refuses it, and so do we: no edit),
//! exactly as `aelc fmt` leaves such a file untouched.

use lsp_types::{DocumentFormattingParams, Position, Range, TextEdit};

use crate::lsp::convert::Lines;
use crate::lsp::server::{HandlerError, HandlerResult, Server};
use crate::lsp::uri;
use crate::source::LineIndex;
use crate::span::FileId;
use crate::syntax::format;

pub fn handle(
    server: &mut Server,
    params: DocumentFormattingParams,
) -> HandlerResult<Option<Vec<TextEdit>>> {
    let path = uri::to_path(&params.text_document.uri)
        .ok_or_else(|| HandlerError::invalid_params("only file:// documents are formatted"))?;
    let text = match server.overlay.get(&path) {
        Some(doc) => doc.text.clone(),
        None => std::fs::read_to_string(&path)
            .map_err(|e| HandlerError::request_failed(format!("cannot read the file: {e}")))?,
    };
    let Ok(formatted) = format::format_source(FileId(0), &text) else {
        return Ok(None);
    };
    if formatted == text {
        return Ok(Some(Vec::new()));
    }
    let lines = LineIndex::new(&text);
    let end = Lines::new(&text, &lines, server.encoding).position(text.len() as u32);
    Ok(Some(vec![TextEdit {
        range: Range::new(Position::new(0, 0), end),
        new_text: formatted,
    }]))
}
