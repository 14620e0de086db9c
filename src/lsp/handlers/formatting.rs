//! `textDocument/formatting`: the buffer through the formatter of `aelc fmt`, as one edit.
//!
//! A buffer with syntax errors is left alone (the formatter refuses it, and so do we: no edit),
//! exactly as `aelc fmt` leaves such a file untouched.

use lsp_types::{DocumentFormattingParams, Position, Range, TextEdit};

use crate::driver::MAX_SOURCE_BYTES;
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
    // The buffer and its line index are borrowed, not copied: a request must not double
    // the memory of a large document.
    let read;
    let (text, lines) = match server.overlay.get(&path) {
        Some(doc) => (doc.text.as_str(), Some(&doc.lines)),
        None => {
            read = std::fs::read_to_string(&path)
                .map_err(|e| HandlerError::request_failed(format!("cannot read the file: {e}")))?;
            (read.as_str(), None)
        }
    };
    if text.len() > MAX_SOURCE_BYTES {
        return Err(HandlerError::request_failed(format!(
            "this document is larger than {} MiB, the most aelc reads (E0011): not formatted",
            MAX_SOURCE_BYTES >> 20
        )));
    }
    let Ok(formatted) = format::format_source(FileId(0), text) else {
        return Ok(None);
    };
    if formatted == text {
        return Ok(Some(Vec::new()));
    }
    let built;
    let lines = match lines {
        Some(lines) => lines,
        None => {
            built = LineIndex::new(text);
            &built
        }
    };
    let end = Lines::new(text, lines, server.encoding).position(text.len() as u32);
    Ok(Some(vec![TextEdit {
        range: Range::new(Position::new(0, 0), end),
        new_text: formatted,
    }]))
}
