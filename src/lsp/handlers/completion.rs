//! `textDocument/completion`, by what the text just before the cursor says (so it works on
//! half-typed, unparsable text):
//!
//! - inside `binding("…`: the bindings of `ael.toml`;
//! - after `else ` (in a `require`) or inside `fail(`: error codes, those of the check's
//!   `fails` set first;
//! - after `base.`: the fields of `base`'s type when it is known (a parameter, a field of a
//!   known struct), with the built-in methods of text, lists and options;
//! - at the start of an entry inside `config {`, `input {`, `output {`, … of a node, or inside a
//!   `stream`: the keys that block takes;
//! - otherwise: keywords, built-in and project types, fns, checks, nodes, and the locals of the
//!   enclosing item.

use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionParams, CompletionResponse, Documentation,
    MarkupContent, MarkupKind,
};

use crate::lsp::index::{type_name, Definition, Index, Key, SymbolKind};
use crate::lsp::server::{HandlerResult, Server};
use crate::sema::methods::{Receiver, METHODS};
use crate::sema::{blocks, builtin_types};
use crate::syntax::ast::{ItemKind, TypeKind};
use crate::syntax::token::Token;

pub fn handle(
    server: &mut Server,
    params: CompletionParams,
) -> HandlerResult<Option<CompletionResponse>> {
    let at = server.locate(&params.text_document_position)?;
    let text = at.text();
    let offset = (at.offset as usize).min(text.len());
    let before = text.get(..offset).unwrap_or("");
    let line = before.rsplit('\n').next().unwrap_or("");
    let index = &at.analysis.index;

    let items = if let Some(rest) = after_last(line, "binding(\"") {
        if rest.contains('"') {
            Vec::new()
        } else {
            of_kind(index, SymbolKind::Binding, CompletionItemKind::VALUE)
        }
    } else if is_error_code_position(line) {
        error_codes(at.analysis, at.file, at.offset)
    } else if let Some(chain) = member_chain(line) {
        // Only what fits the name typed so far after the dot (clients filter too, but a list
        // of every field of the project is noise over the wire and in clients that do not).
        let typed = &line[after_last_char(line, |c| !(c.is_ascii_alphanumeric() || c == '_'))..];
        let mut items = members(at.analysis, at.file, at.offset, &chain);
        items.retain(|item| starts_with_ignoring_case(&item.label, typed));
        items
    } else if let Some(block) = enclosing_block(before).filter(|_| at_entry_start(line)) {
        let keys = match block {
            "stream" => Some(blocks::STREAM_LIMITS),
            node_block => blocks::node_block_keys(node_block),
        };
        keys.map(|keys| {
            keys.iter()
                .map(|k| {
                    simple(
                        k,
                        CompletionItemKind::PROPERTY,
                        Some(&format!("{block} key")),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
    } else {
        everything(at.analysis, at.file, at.offset)
    };
    Ok(Some(CompletionResponse::Array(items)))
}

fn starts_with_ignoring_case(label: &str, typed: &str) -> bool {
    label
        .get(..typed.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(typed))
}

fn after_last<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    line.rfind(marker).map(|at| &line[at + marker.len()..])
}

fn is_error_code_position(line: &str) -> bool {
    let trimmed = line.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_');
    let words = trimmed.trim_end();
    (words.ends_with(" else") || words == "else") && trimmed.len() > words.len()
        || after_last(line, "fail(").is_some_and(|rest| !rest.contains(')'))
}

/// The byte offset just after the last character of `text` that is `stop`, or 0: where the
/// word before the cursor starts. The character may be wider than one byte (`Café {`).
fn after_last_char(text: &str, stop: impl Fn(char) -> bool) -> usize {
    text.char_indices()
        .rev()
        .find(|(_, c)| stop(*c))
        .map_or(0, |(at, c)| at + c.len_utf8())
}

/// `request.document.` → `["request", "document"]` (the cursor may follow a partial name).
fn member_chain(line: &str) -> Option<Vec<String>> {
    let trimmed = line.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_');
    let chain = trimmed.strip_suffix('.')?;
    let start = after_last_char(chain, |c| {
        !(c.is_ascii_alphanumeric() || c == '_' || c == '.')
    });
    let names: Vec<String> = chain[start..].split('.').map(str::to_owned).collect();
    if names
        .iter()
        .any(|n| n.is_empty() || n.starts_with(|c: char| c.is_ascii_digit()))
    {
        return None;
    }
    Some(names)
}

/// The block whose `{` encloses the end of `before`: `config`, `output`, … or `stream`.
fn enclosing_block(before: &str) -> Option<&'static str> {
    let mut depth = 0usize;
    for (at, c) in before.char_indices().rev() {
        match c {
            '}' => depth += 1,
            '{' if depth > 0 => depth -= 1,
            '{' => {
                let head = before[..at].trim_end();
                let word_start =
                    after_last_char(head, |c| !(c.is_ascii_alphanumeric() || c == '_'));
                let word = &head[word_start..];
                let line = head.rsplit('\n').next().unwrap_or("").trim_start();
                if line.starts_with("stream ") {
                    return Some("stream");
                }
                return blocks::node_block_names().find(|n| *n == word);
            }
            _ => {}
        }
    }
    None
}

fn at_entry_start(line: &str) -> bool {
    line.trim_start()
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn simple(label: &str, kind: CompletionItemKind, detail: Option<&str>) -> CompletionItem {
    CompletionItem {
        label: label.to_owned(),
        kind: Some(kind),
        detail: detail.map(str::to_owned),
        ..Default::default()
    }
}

fn from_definition(def: &Definition, kind: CompletionItemKind) -> CompletionItem {
    CompletionItem {
        label: def.name.clone(),
        kind: Some(kind),
        detail: Some(def.signature.lines().next().unwrap_or("").to_owned()),
        documentation: def.docs.as_ref().map(|d| {
            Documentation::MarkupContent(MarkupContent {
                kind: MarkupKind::Markdown,
                value: d.clone(),
            })
        }),
        ..Default::default()
    }
}

fn of_kind(index: &Index, kind: SymbolKind, item_kind: CompletionItemKind) -> Vec<CompletionItem> {
    let mut seen = std::collections::BTreeSet::new();
    index
        .definitions
        .iter()
        .filter(|d| d.kind == kind && seen.insert(d.name.clone()))
        .map(|d| from_definition(d, item_kind))
        .collect()
}

/// The `fails` set of the check enclosing `offset`, if any.
fn enclosing_fails(
    analysis: &crate::lsp::analysis::Analysis,
    file: crate::span::FileId,
    offset: u32,
) -> Option<String> {
    let parsed = analysis.parsed(file)?;
    parsed.module.items.iter().find_map(|item| {
        if item.span.start > offset || offset > item.span.end {
            return None;
        }
        match &item.kind {
            ItemKind::Check(c) => c.fails.as_ref()?.last().map(|l| l.name.to_string()),
            ItemKind::Node(n) => n.fails.as_ref()?.last().map(|l| l.name.to_string()),
            _ => None,
        }
    })
}

fn error_codes(
    analysis: &crate::lsp::analysis::Analysis,
    file: crate::span::FileId,
    offset: u32,
) -> Vec<CompletionItem> {
    let index = &analysis.index;
    let preferred = enclosing_fails(analysis, file, offset);
    let mut items = of_kind(
        index,
        SymbolKind::ErrorCode,
        CompletionItemKind::ENUM_MEMBER,
    );
    if let Some(set) = preferred {
        let prefix = format!("errors {set} ");
        for item in &mut items {
            let first = item
                .detail
                .as_deref()
                .is_some_and(|d| d.starts_with(&prefix));
            item.sort_text = Some(format!("{}{}", if first { 0 } else { 1 }, item.label));
        }
    }
    items
}

/// The type name and the type's head (`Str`, `List`, …) of a local in scope at `offset`.
fn local_type(
    index: &Index,
    file: crate::span::FileId,
    offset: u32,
    name: &str,
) -> Option<crate::syntax::ast::TypeExpr> {
    index
        .definitions
        .iter()
        .filter(|d| {
            matches!(&d.key, Key::Local { file: f, scope, name: n } if *f == file && *scope <= offset && n == name)
        })
        .max_by_key(|d| d.span.start)
        .and_then(|d| d.ty.clone())
}

fn members(
    analysis: &crate::lsp::analysis::Analysis,
    file: crate::span::FileId,
    offset: u32,
    chain: &[String],
) -> Vec<CompletionItem> {
    let index = &analysis.index;
    let first = chain.first().map_or("", String::as_str);
    // In a prompt template the first name is a variable of the node naming the prompt.
    let (mut ty, rest) = match index.prompt_variable(file, offset, first) {
        Some(owner) => {
            let Some(owner) = owner else {
                return Vec::new(); // a variable of unknown type: nothing sure to offer
            };
            let Some(second) = chain.get(1) else {
                return fields_of(index, &owner);
            };
            let ty = index
                .definition(&Key::Field {
                    owner: Some(owner),
                    name: second.clone(),
                })
                .and_then(|d| d.ty.clone());
            (ty, 2)
        }
        None => (local_type(index, file, offset, first), 1),
    };
    for field in chain.iter().skip(rest) {
        ty = ty.as_ref().and_then(type_name).and_then(|owner| {
            index
                .definition(&Key::Field {
                    owner: Some(owner),
                    name: field.clone(),
                })
                .and_then(|d| d.ty.clone())
        });
    }
    let head = ty.as_ref().and_then(|t| match &t.kind {
        TypeKind::Named { path, .. } => path.last().map(|l| l.name.clone()),
        TypeKind::Error => None,
    });
    // The built-in methods, from sema's one table, each with what it does.
    let methods = |receivers: &[Receiver]| -> Vec<CompletionItem> {
        let mut items: Vec<CompletionItem> = Vec::new();
        for info in METHODS.iter().filter(|m| receivers.contains(&m.receiver)) {
            if !items.iter().any(|i| i.label == info.name) {
                items.push(simple(
                    info.name,
                    CompletionItemKind::METHOD,
                    Some(info.doc),
                ));
            }
        }
        items
    };
    match (head.as_deref(), ty.as_ref().and_then(type_name)) {
        (Some("Str"), _) => methods(&[Receiver::Text]),
        (Some("List" | "Set"), _) => methods(&[Receiver::List]),
        (Some("Map"), _) => methods(&[Receiver::Map]),
        (Some("Option"), Some(owner)) => {
            let mut items = fields_of(index, &owner);
            items.extend(methods(&[Receiver::Option]));
            items
        }
        (Some("Option"), None) => methods(&[Receiver::Option]),
        (_, Some(owner)) => fields_of(index, &owner),
        _ => {
            let mut items = of_kind(index, SymbolKind::Field, CompletionItemKind::FIELD);
            let mut all = methods(&[Receiver::Text, Receiver::List, Receiver::Option]);
            all.sort_by(|a, b| a.label.cmp(&b.label));
            items.extend(all);
            items
        }
    }
}

fn fields_of(index: &Index, owner: &str) -> Vec<CompletionItem> {
    index
        .definitions
        .iter()
        .filter(|d| matches!(&d.key, Key::Field { owner: Some(o), .. } if o == owner))
        .map(|d| from_definition(d, CompletionItemKind::FIELD))
        .collect()
}

fn everything(
    analysis: &crate::lsp::analysis::Analysis,
    file: crate::span::FileId,
    offset: u32,
) -> Vec<CompletionItem> {
    let index = &analysis.index;
    let mut items: Vec<CompletionItem> = Token::KEYWORDS
        .iter()
        .map(|k| simple(k.symbol(), CompletionItemKind::KEYWORD, None))
        .collect();
    items.extend(
        builtin_types::all().map(|t| simple(t, CompletionItemKind::STRUCT, Some("built-in type"))),
    );
    let mut seen = std::collections::BTreeSet::new();
    for def in &index.definitions {
        let kind = match def.kind {
            SymbolKind::Struct | SymbolKind::Alias | SymbolKind::Stream => {
                CompletionItemKind::STRUCT
            }
            SymbolKind::Enum | SymbolKind::Errors => CompletionItemKind::ENUM,
            SymbolKind::Fn | SymbolKind::Check | SymbolKind::Builder => {
                CompletionItemKind::FUNCTION
            }
            SymbolKind::Node | SymbolKind::Agent => CompletionItemKind::CLASS,
            SymbolKind::Param | SymbolKind::Local => {
                let in_scope = matches!(&def.key, Key::Local { file: f, scope, .. } if *f == file && *scope <= offset)
                    && enclosing_item_start(analysis, file, offset) == Some(def_scope(def));
                if !in_scope {
                    continue;
                }
                CompletionItemKind::VARIABLE
            }
            _ => continue,
        };
        if seen.insert(def.name.clone()) {
            items.push(from_definition(def, kind));
        }
    }
    items
}

fn def_scope(def: &Definition) -> u32 {
    match &def.key {
        Key::Local { scope, .. } => *scope,
        _ => u32::MAX,
    }
}

fn enclosing_item_start(
    analysis: &crate::lsp::analysis::Analysis,
    file: crate::span::FileId,
    offset: u32,
) -> Option<u32> {
    let parsed = analysis.parsed(file)?;
    parsed
        .module
        .items
        .iter()
        .find(|i| i.span.start <= offset && offset <= i.span.end)
        .map(|i| i.span.start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts_are_read_from_the_text_before_the_cursor() {
        assert_eq!(
            member_chain("    require request.document.tr"),
            Some(vec!["request".to_owned(), "document".to_owned()])
        );
        assert_eq!(member_chain("x = 1.5"), None);
        assert!(is_error_code_position("    require x > 0 else emp"));
        assert!(is_error_code_position("    require x > 0 else "));
        assert!(!is_error_code_position("if a { b } else"));
        assert!(is_error_code_position("on_failure: repair(2), fail("));
        assert_eq!(
            enclosing_block("node n() -> T {\n  config {\n    pro"),
            Some("config")
        );
        assert_eq!(
            enclosing_block("node n() -> T {\n  config { a: 1; }\n  "),
            None
        );
    }
}
