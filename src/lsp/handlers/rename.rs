//! `textDocument/rename` and `prepareRename`: renames a type, field, check, fn, node, error
//! code, variant, binding or local everywhere in the project (and in `ael.toml` for bindings),
//! as sema resolved each name: a field is renamed where a value of its struct is read, never
//! where another struct's field of the same name is.

use std::collections::HashMap;

use lsp_types::{
    DocumentChangeOperation, DocumentChanges, OneOf, OptionalVersionedTextDocumentIdentifier,
    PrepareRenameResponse, RenameFile, RenameParams, ResourceOp, TextDocumentEdit,
    TextDocumentPositionParams, TextEdit, Uri, WorkspaceEdit,
};

use crate::lsp::example_edits;
use crate::lsp::publish;
use crate::lsp::server::{HandlerError, HandlerResult, Server};
use crate::lsp::uri;
use crate::sema::resolution::{Symbol, SymbolKind};
use crate::span::Span;
use crate::syntax::token::Token;

pub fn prepare(
    server: &mut Server,
    params: TextDocumentPositionParams,
) -> HandlerResult<Option<PrepareRenameResponse>> {
    let at = server.locate(&params)?;
    let Some(occurrence) = at.analysis.resolution.at(at.file, at.offset) else {
        return Ok(None);
    };
    if matches!(occurrence.symbol, Symbol::File(_)) {
        return Ok(None);
    }
    let span = name_span(at.text(), occurrence.span);
    Ok(publish::range(at.analysis, at.encoding, span).map(PrepareRenameResponse::Range))
}

pub fn handle(server: &mut Server, params: RenameParams) -> HandlerResult<Option<WorkspaceEdit>> {
    let new_name = params.new_name.clone();
    let is_identifier = new_name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && new_name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    let at = server.locate(&params.text_document_position)?;
    let resolution = &at.analysis.resolution;
    let Some(occurrence) = resolution.at(at.file, at.offset) else {
        return Ok(None);
    };
    let is_binding = matches!(occurrence.symbol, Symbol::Binding(_));
    if matches!(occurrence.symbol, Symbol::File(_)) {
        return Err(HandlerError::request_failed(
            "a file name cannot be renamed here",
        ));
    }
    if !is_binding && (!is_identifier || Token::KEYWORDS.iter().any(|k| k.symbol() == new_name)) {
        return Err(HandlerError::request_failed(format!(
            "`{new_name}` is not a valid name: use letters, digits and `_`, not starting with a digit, and no keyword"
        )));
    }
    // `Uri` caches its parse internally; it is never mutated while a key here.
    #[allow(clippy::mutable_key_type)]
    let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
    for found in resolution.references(&occurrence.symbol) {
        let text = at
            .analysis
            .compilation
            .sources
            .get(found.span.file)
            .map_or("", |f| f.text.as_str());
        let span = name_span(text, found.span);
        let Some(location) = publish::location(at.analysis, at.encoding, span) else {
            continue;
        };
        let edits = changes.entry(location.uri).or_default();
        if !edits.iter().any(|e| e.range == location.range) {
            edits.push(TextEdit {
                range: location.range,
                new_text: new_name.clone(),
            });
        }
    }
    // A renamed field is renamed in the agents' example files too, or `aelc build` fails them.
    let examples =
        example_edits::field_edits(at.analysis, at.encoding, &occurrence.symbol, &new_name);
    for (path, edits) in examples {
        if let Some(uri) = uri::from_path(&path) {
            changes.entry(uri).or_default().extend(edits);
        }
    }
    // An agent's examples live in `examples/<agent>/`: the folder moves with the name.
    let folder = resolution
        .definition(&occurrence.symbol)
        .filter(|d| d.kind == SymbolKind::Agent)
        .map(|d| at.analysis.dir.join("examples").join(&d.name))
        .filter(|folder| folder.is_dir());
    let Some(folder) = folder else {
        return Ok(Some(WorkspaceEdit {
            changes: Some(changes),
            ..Default::default()
        }));
    };
    let (Some(old_uri), Some(new_uri)) = (
        uri::from_path(&folder),
        uri::from_path(&folder.with_file_name(&new_name)),
    ) else {
        return Err(HandlerError::request_failed(
            "the examples folder has no file:// URI",
        ));
    };
    // A folder move is a resource operation, which only `documentChanges` can carry; the text
    // edits go first, on the files as they are named before the move.
    let mut operations: Vec<DocumentChangeOperation> = changes
        .into_iter()
        .map(|(uri, edits)| {
            DocumentChangeOperation::Edit(TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier { uri, version: None },
                edits: edits.into_iter().map(OneOf::Left).collect(),
            })
        })
        .collect();
    operations.push(DocumentChangeOperation::Op(ResourceOp::Rename(
        RenameFile {
            old_uri,
            new_uri,
            options: None,
            annotation_id: None,
        },
    )));
    Ok(Some(WorkspaceEdit {
        document_changes: Some(DocumentChanges::Operations(operations)),
        ..Default::default()
    }))
}

/// The part of an occurrence that is the name: a `"binding"` literal without its quotes.
fn name_span(text: &str, span: Span) -> Span {
    let written = text.get(span.range()).unwrap_or("");
    if written.len() >= 2 && written.starts_with('"') && written.ends_with('"') {
        Span {
            start: span.start + 1,
            end: span.end - 1,
            ..span
        }
    } else {
        span
    }
}
