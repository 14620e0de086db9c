//! `textDocument/definition`: where the name under the cursor is declared, in any file of the
//! project; `binding("x")` jumps into `ael.toml`, `file("p")` to the top of the file.

use lsp_types::{GotoDefinitionParams, GotoDefinitionResponse, Location, Position, Range};

use crate::lsp::publish;
use crate::lsp::server::{HandlerResult, Server};
use crate::lsp::uri;
use crate::sema::resolution::Symbol;

pub fn handle(
    server: &mut Server,
    params: GotoDefinitionParams,
) -> HandlerResult<Option<GotoDefinitionResponse>> {
    let at = server.locate(&params.text_document_position_params)?;
    let resolution = &at.analysis.resolution;
    let Some(occurrence) = resolution.at(at.file, at.offset) else {
        return Ok(None);
    };
    let location = match &occurrence.symbol {
        Symbol::File(path) => uri::from_path(&at.analysis.dir.join(&**path))
            .map(|uri| Location::new(uri, Range::new(Position::new(0, 0), Position::new(0, 0)))),
        symbol => resolution
            .definition(symbol)
            .and_then(|d| publish::location(at.analysis, at.encoding, d.span)),
    };
    Ok(location.map(GotoDefinitionResponse::Scalar))
}
