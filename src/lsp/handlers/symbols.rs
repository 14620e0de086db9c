//! `textDocument/documentSymbol`: the outline of one file — items, with their fields,
//! variants, error codes and blocks as children.

use lsp_types::{DocumentSymbol, DocumentSymbolParams, DocumentSymbolResponse, SymbolKind};

use crate::lsp::analysis::Analysis;
use crate::lsp::convert::Encoding;
use crate::lsp::publish;
use crate::lsp::server::{HandlerError, HandlerResult, Server};
use crate::lsp::uri;
use crate::span::Span;
use crate::syntax::ast::{Field, ItemKind, NodeKind};

pub fn handle(
    server: &mut Server,
    params: DocumentSymbolParams,
) -> HandlerResult<Option<DocumentSymbolResponse>> {
    let path = uri::to_path(&params.text_document.uri)
        .ok_or_else(|| HandlerError::invalid_params("only file:// documents are analysed"))?;
    let encoding = server.encoding;
    let analysis = server.analysis(&path);
    let Some(parsed) = analysis.file_id(&path).and_then(|id| analysis.parsed(id)) else {
        return Ok(None);
    };
    let mut symbols = Vec::new();
    for item in &parsed.module.items {
        let Some(name) = item.kind.name() else {
            continue;
        };
        let (kind, detail, children) = match &item.kind {
            ItemKind::Struct(s) => (
                SymbolKind::STRUCT,
                "struct",
                fields(analysis, encoding, &s.fields),
            ),
            ItemKind::Enum(e) => {
                let children = e
                    .variants
                    .iter()
                    .filter_map(|v| {
                        let mut symbol = symbol(
                            analysis,
                            encoding,
                            &v.name.name,
                            SymbolKind::ENUM_MEMBER,
                            None,
                            v.span,
                            v.name.span,
                        )?;
                        if let Some(fields) = &v.fields {
                            symbol.children = Some(self::fields(analysis, encoding, fields));
                        }
                        Some(symbol)
                    })
                    .collect();
                (SymbolKind::ENUM, "enum", children)
            }
            ItemKind::TypeAlias(_) => (SymbolKind::TYPE_PARAMETER, "type", Vec::new()),
            ItemKind::Errors(e) => {
                let children = e
                    .codes
                    .iter()
                    .filter_map(|c| {
                        symbol(
                            analysis,
                            encoding,
                            &c.name.name,
                            SymbolKind::CONSTANT,
                            None,
                            c.span,
                            c.name.span,
                        )
                    })
                    .collect();
                (SymbolKind::ENUM, "errors", children)
            }
            ItemKind::Fn(_) => (SymbolKind::FUNCTION, "fn", Vec::new()),
            ItemKind::Check(_) => (SymbolKind::FUNCTION, "check", Vec::new()),
            ItemKind::Builder(_) => (SymbolKind::FUNCTION, "builder", Vec::new()),
            ItemKind::Stream(_) => (SymbolKind::STRUCT, "stream", Vec::new()),
            ItemKind::Node(n) => {
                let children = n
                    .blocks
                    .iter()
                    .filter_map(|b| {
                        symbol(
                            analysis,
                            encoding,
                            &b.name.name,
                            SymbolKind::NAMESPACE,
                            None,
                            b.span,
                            b.name.span,
                        )
                    })
                    .collect();
                let detail = if n.kind == NodeKind::Agent {
                    "agent"
                } else {
                    "node"
                };
                (SymbolKind::CLASS, detail, children)
            }
            ItemKind::Use(_) | ItemKind::Error => continue,
        };
        if let Some(mut s) = symbol(
            analysis,
            encoding,
            &name.name,
            kind,
            Some(detail),
            item.span,
            name.span,
        ) {
            s.children = (!children.is_empty()).then_some(children);
            symbols.push(s);
        }
    }
    Ok(Some(DocumentSymbolResponse::Nested(symbols)))
}

fn fields(analysis: &Analysis, encoding: Encoding, fields: &[Field]) -> Vec<DocumentSymbol> {
    fields
        .iter()
        .filter_map(|f| {
            let ty = analysis
                .compilation
                .sources
                .get(f.ty.span().file)
                .map(|s| s.slice(f.ty.span()).to_owned());
            symbol(
                analysis,
                encoding,
                &f.name.name,
                SymbolKind::FIELD,
                ty.as_deref(),
                f.span(),
                f.name.span,
            )
        })
        .collect()
}

#[allow(deprecated)] // `DocumentSymbol::deprecated` must be written even though it is deprecated.
fn symbol(
    analysis: &Analysis,
    encoding: Encoding,
    name: &str,
    kind: SymbolKind,
    detail: Option<&str>,
    full: Span,
    selection: Span,
) -> Option<DocumentSymbol> {
    let range = publish::range(analysis, encoding, full.to(selection))?;
    let selection_range = publish::range(analysis, encoding, selection)?;
    Some(DocumentSymbol {
        name: if name.is_empty() {
            "?".into()
        } else {
            name.to_owned()
        },
        detail: detail.map(str::to_owned),
        kind,
        tags: None,
        deprecated: None,
        range,
        selection_range,
        children: None,
    })
}
