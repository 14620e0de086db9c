//! `textDocument/codeAction`: the quick fixes of the diagnostics at the requested range — each
//! diagnostic's [`crate::diagnostics::Fix`] edits (a misspelt name, key or provider replaced
//! by the one its "did you mean" names), offered as preferred `quickfix` actions.

use std::collections::HashMap;

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeActionResponse,
    NumberOrString, TextEdit, WorkspaceEdit,
};

use crate::lsp::publish;
use crate::lsp::server::{HandlerError, HandlerResult, Server};
use crate::lsp::uri;

pub fn handle(
    server: &mut Server,
    params: CodeActionParams,
) -> HandlerResult<Option<CodeActionResponse>> {
    let path = uri::to_path(&params.text_document.uri)
        .ok_or_else(|| HandlerError::invalid_params("only file:// documents are analysed"))?;
    let wanted = params.range;
    let encoding = server.encoding;
    let analysis = server.analysis(&path);
    let Some(file) = analysis.file_id(&path) else {
        return Ok(None);
    };
    let mut actions = Vec::new();
    // Only the diagnostics that carry a fix are placed at all.
    for diagnostic in analysis
        .compilation
        .diagnostics
        .iter()
        .filter(|d| !d.fixes.is_empty())
    {
        let Some(span) = diagnostic.primary_span().filter(|s| s.file == file) else {
            continue;
        };
        let Some(range) = publish::range(analysis, encoding, span) else {
            continue;
        };
        // The diagnostic's range touches the requested one (a cursor inside it included).
        if range.end < wanted.start || wanted.end < range.start {
            continue;
        }
        // The client's own copy of the diagnostic, when it sent one, so it can tie the
        // actions to what it shows.
        let shown = params
            .context
            .diagnostics
            .iter()
            .filter(|d| {
                d.range == range
                    && d.code == Some(NumberOrString::String(diagnostic.code.to_owned()))
            })
            .cloned()
            .collect::<Vec<_>>();
        for fix in &diagnostic.fixes {
            let Some(location) = publish::location(analysis, encoding, fix.span) else {
                continue;
            };
            let edit = TextEdit {
                range: location.range,
                new_text: fix.replacement.clone(),
            };
            // An empty span inserts; the title shows the text on one line.
            let shown_text = fix
                .replacement
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let title = if fix.span.start == fix.span.end {
                format!("Insert `{shown_text}`")
            } else {
                format!("Replace with `{shown_text}`")
            };
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: (!shown.is_empty()).then(|| shown.clone()),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(location.uri, vec![edit])])),
                    ..Default::default()
                }),
                // One fix is the fix; of several, the author chooses.
                is_preferred: Some(diagnostic.fixes.len() == 1),
                ..Default::default()
            }));
        }
    }
    Ok(Some(actions))
}
