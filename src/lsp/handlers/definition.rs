//! `textDocument/definition`: where the name under the cursor is declared, in any file of the
//! project; `binding("x")` jumps into `ael.toml`, `file("p")` to the top of the file.

use lsp_types::{GotoDefinitionParams, GotoDefinitionResponse, Location, Position, Range};

use crate::lsp::index::Key;
use crate::lsp::publish;
use crate::lsp::server::{HandlerResult, Server};
use crate::lsp::uri;

pub fn handle(
    server: &mut Server,
    params: GotoDefinitionParams,
) -> HandlerResult<Option<GotoDefinitionResponse>> {
    let at = server.locate(&params.text_document_position_params)?;
    let index = &at.analysis.index;
    let Some(occurrence) = index.at(at.file, at.offset) else {
        return Ok(None);
    };
    let locations: Vec<Location> = match &occurrence.key {
        Key::File(path) => uri::from_path(path)
            .map(|uri| Location::new(uri, Range::new(Position::new(0, 0), Position::new(0, 0))))
            .into_iter()
            .collect(),
        key => index
            .definitions_of(key)
            .filter_map(|d| publish::location(at.analysis, at.encoding, d.span))
            .collect(),
    };
    Ok(match locations.len() {
        0 => None,
        1 => locations
            .into_iter()
            .next()
            .map(GotoDefinitionResponse::Scalar),
        _ => Some(GotoDefinitionResponse::Array(locations)),
    })
}
