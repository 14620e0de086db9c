//! `workspace/symbol`: the types, errors, fns, checks, builders, nodes, agents and streams of
//! every project of the workspace whose name fits the query.
//!
//! The projects are the workspace folders given at `initialize` (and the folders up to two levels
//! below them that hold an `ael.toml`, for repositories of several projects) plus every project
//! already analysed. Matching is case-insensitive and ranked: the exact name, then a prefix, then
//! a substring, then the query's letters in order (`rvreq` finds `ReviewRequest`); at most
//! [`LIMIT`] answers, so a one-letter query in a large workspace stays cheap to send.

use std::path::{Path, PathBuf};

use lsp_types::{
    SymbolInformation, SymbolKind as LspKind, WorkspaceSymbolParams, WorkspaceSymbolResponse,
};

use crate::lsp::publish;
use crate::lsp::server::{HandlerResult, Server};
use crate::sema::resolution::SymbolKind;

/// The most symbols one answer holds.
pub const LIMIT: usize = 128;

pub fn handle(
    server: &mut Server,
    params: WorkspaceSymbolParams,
) -> HandlerResult<Option<WorkspaceSymbolResponse>> {
    let query = params.query.as_str();
    let encoding = server.encoding;
    let mut found: Vec<(u8, SymbolInformation)> = Vec::new();
    for target in server.workspace_targets() {
        let analysis = server.analysis(&target);
        for definition in &analysis.resolution.definitions {
            let Some(kind) = lsp_kind(definition.kind) else {
                continue;
            };
            // The std library is not the workspace's; its symbols would drown the answer.
            let embedded = analysis
                .compilation
                .sources
                .get(definition.span.file)
                .is_none_or(|f| f.embedded);
            if embedded {
                continue;
            }
            let Some(rank) = rank(&definition.name, query) else {
                continue;
            };
            let Some(location) = publish::location(analysis, encoding, definition.span) else {
                continue;
            };
            if found
                .iter()
                .any(|(_, s)| s.location == location && s.name == definition.name)
            {
                continue;
            }
            #[allow(deprecated)] // `deprecated` is a required field of the 0.97 struct.
            found.push((
                rank,
                SymbolInformation {
                    name: definition.name.clone(),
                    kind,
                    tags: None,
                    deprecated: None,
                    location,
                    container_name: analysis.module_of(definition.span.file),
                },
            ));
        }
    }
    found.sort_by(|(a, x), (b, y)| a.cmp(b).then_with(|| x.name.cmp(&y.name)));
    found.truncate(LIMIT);
    Ok(Some(WorkspaceSymbolResponse::Flat(
        found.into_iter().map(|(_, s)| s).collect(),
    )))
}

/// How well `name` fits `query`, best first (the name as typed, then ignoring case: the
/// whole name, a prefix, a substring, letters in order); `None` when it does not.
fn rank(name: &str, query: &str) -> Option<u8> {
    if name == query {
        return Some(0);
    }
    let (name, query) = (name.to_lowercase(), query.to_lowercase());
    if query.is_empty() {
        Some(4)
    } else if name == query {
        Some(1)
    } else if name.starts_with(&query) {
        Some(2)
    } else if name.contains(&query) {
        Some(3)
    } else {
        let mut letters = name.chars();
        query
            .chars()
            .all(|wanted| letters.any(|c| c == wanted))
            .then_some(4)
    }
}

/// The LSP kind of the declarations `workspace/symbol` lists (items only, not their fields).
fn lsp_kind(kind: SymbolKind) -> Option<LspKind> {
    Some(match kind {
        SymbolKind::Struct => LspKind::STRUCT,
        SymbolKind::Enum => LspKind::ENUM,
        SymbolKind::Alias => LspKind::TYPE_PARAMETER,
        SymbolKind::Stream => LspKind::EVENT,
        SymbolKind::Errors => LspKind::ENUM,
        SymbolKind::Fn => LspKind::FUNCTION,
        SymbolKind::Check => LspKind::BOOLEAN,
        SymbolKind::Builder => LspKind::CONSTRUCTOR,
        SymbolKind::Node | SymbolKind::Agent => LspKind::CLASS,
        _ => return None,
    })
}

/// The project folders below `folder` (itself included), two levels deep, skipping hidden,
/// `target` and `node_modules` folders: a workspace that is a repository of several projects.
pub fn projects_below(folder: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut level = vec![folder.to_path_buf()];
    for depth in 0..3 {
        let mut next = Vec::new();
        for dir in level {
            if dir.join("ael.toml").is_file() {
                out.push(dir.clone());
            }
            if depth == 2 {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if name.starts_with('.') || name == "target" || name == "node_modules" {
                    continue;
                }
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    next.push(entry.path());
                }
            }
        }
        level = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::rank;

    #[test]
    fn exact_beats_prefix_beats_substring_beats_letters_in_order() {
        assert_eq!(rank("review", "review"), Some(0));
        assert_eq!(rank("Review", "review"), Some(1));
        assert_eq!(rank("ReviewRequest", "review"), Some(2));
        assert_eq!(rank("MyReview", "review"), Some(3));
        assert_eq!(rank("ReviewRequest", "rvreq"), Some(4));
        assert_eq!(rank("ReviewRequest", "qr"), None);
        assert_eq!(rank("anything", ""), Some(4));
    }
}
