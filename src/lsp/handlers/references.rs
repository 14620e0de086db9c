//! `textDocument/references`: every place the symbol under the cursor is named, across the
//! project's files (and `ael.toml` for bindings), as sema resolved them.

use lsp_types::{Location, ReferenceParams};

use crate::lsp::publish;
use crate::lsp::server::{HandlerResult, Server};

pub fn handle(
    server: &mut Server,
    params: ReferenceParams,
) -> HandlerResult<Option<Vec<Location>>> {
    let include_declaration = params.context.include_declaration;
    let at = server.locate(&params.text_document_position)?;
    let resolution = &at.analysis.resolution;
    let Some(occurrence) = resolution.at(at.file, at.offset) else {
        return Ok(None);
    };
    let locations = resolution
        .references(&occurrence.symbol)
        .filter(|o| include_declaration || !o.is_definition)
        .filter_map(|o| publish::location(at.analysis, at.encoding, o.span))
        .collect();
    Ok(Some(locations))
}
