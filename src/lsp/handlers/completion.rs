//! `textDocument/completion`, by what the text just before the cursor says (so it works on
//! half-typed, unparsable text):
//!
//! - inside `binding("…`: the bindings of `ael.toml`;
//! - after `else ` (in a `require`) or inside `fail(`: error codes, those of the check's
//!   `fails` set first;
//! - after `base.`: the fields of `base`'s type as sema typed it (or, in text too broken to
//!   check, the type of the local or parameter named `base`), with the built-in methods of text,
//!   lists and options;
//! - at the start of an entry inside `config {`, `input {`, `output {`, … of a node (after the
//!   `{` or a `;` on the same line too), or inside a `stream`: the keys that block takes;
//! - otherwise: keywords, built-in and project types, fns, checks, nodes, and the locals of the
//!   enclosing item.

use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionParams, CompletionResponse, Documentation,
    MarkupContent, MarkupKind,
};

use crate::lsp::analysis::Analysis;
use crate::lsp::declaration::signature;
use crate::lsp::server::{HandlerResult, Server};
use crate::sema::methods::{Receiver, METHODS};
use crate::sema::resolution::{Definition, Resolution, SymbolKind, TypeInfo};
use crate::sema::{blocks, builtin_types, ItemRef};
use crate::span::FileId;
use crate::syntax::ast::{ItemKind, TypeArg, TypeExpr, TypeKind};
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
    let analysis = at.analysis;

    let items = if let Some(rest) = after_last(line, "binding(\"") {
        if rest.contains('"') {
            Vec::new()
        } else {
            of_kind(analysis, SymbolKind::Binding, CompletionItemKind::VALUE)
        }
    } else if is_error_code_position(line) {
        error_codes(at.analysis, at.file, at.offset)
    } else if let Some(chain) = member_chain(line) {
        // Only what fits the name typed so far after the dot (clients filter too, but a list
        // of every field of the project is noise over the wire and in clients that do not).
        let typed = &line[after_last_char(line, |c| !(c.is_ascii_alphanumeric() || c == '_'))..];
        let dot = at.offset.saturating_sub(typed.len() as u32 + 1);
        let mut items = members(at.analysis, at.file, dot, &chain);
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

/// Whether the cursor starts an entry: only a partial name since the line's start, its last `{`
/// or its last `;`.
fn at_entry_start(line: &str) -> bool {
    let entry = &line[after_last_char(line, |c| c == '{' || c == ';')..];
    entry
        .trim_start()
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

fn from_definition(
    analysis: &Analysis,
    def: &Definition,
    kind: CompletionItemKind,
) -> CompletionItem {
    let declared = signature(&analysis.compilation.sources, def);
    CompletionItem {
        label: def.name.clone(),
        kind: Some(kind),
        detail: Some(declared.lines().next().unwrap_or("").to_owned()),
        documentation: def.docs.as_ref().map(|d| {
            Documentation::MarkupContent(MarkupContent {
                kind: MarkupKind::Markdown,
                value: d.clone(),
            })
        }),
        ..Default::default()
    }
}

fn of_kind(
    analysis: &Analysis,
    kind: SymbolKind,
    item_kind: CompletionItemKind,
) -> Vec<CompletionItem> {
    let mut seen = std::collections::BTreeSet::new();
    analysis
        .resolution
        .definitions
        .iter()
        .filter(|d| d.kind == kind && seen.insert(d.name.clone()))
        .map(|d| from_definition(analysis, d, item_kind))
        .collect()
}

/// The item of `file` enclosing `offset`.
fn enclosing_item(
    analysis: &Analysis,
    file: FileId,
    offset: u32,
) -> Option<&crate::syntax::ast::Item> {
    let parsed = analysis.parsed(file)?;
    parsed
        .module
        .items
        .iter()
        .find(|i| i.span.start <= offset && offset <= i.span.end)
}

/// The `fails` set of the check or node enclosing `offset`, if any.
fn enclosing_fails(analysis: &Analysis, file: FileId, offset: u32) -> Option<String> {
    match &enclosing_item(analysis, file, offset)?.kind {
        ItemKind::Check(c) => c.fails.as_ref()?.last().map(|l| l.name.to_string()),
        ItemKind::Node(n) => n.fails.as_ref()?.last().map(|l| l.name.to_string()),
        _ => None,
    }
}

fn error_codes(analysis: &Analysis, file: FileId, offset: u32) -> Vec<CompletionItem> {
    let preferred = enclosing_fails(analysis, file, offset);
    let mut seen = std::collections::BTreeSet::new();
    let mut items = Vec::new();
    for def in &analysis.resolution.definitions {
        if def.kind != SymbolKind::ErrorCode || !seen.insert(def.name.clone()) {
            continue;
        }
        let mut item = from_definition(analysis, def, CompletionItemKind::ENUM_MEMBER);
        if let Some(set) = &preferred {
            let first = def.owner.as_ref() == Some(set);
            item.sort_text = Some(format!("{}{}", if first { 0 } else { 1 }, item.label));
        }
        items.push(item);
    }
    items
}

/// The locals visible at `offset` of `file`, latest declaration of each name last: the
/// parameters of the node a prompt is checked for and its loop variables, or the parameters
/// and locals of the enclosing item declared before `offset`.
fn locals_at(analysis: &Analysis, file: FileId, offset: u32) -> impl Iterator<Item = &Definition> {
    let resolution = &analysis.resolution;
    let item = enclosing_item(analysis, file, offset).map(|i| i.span);
    let is_prompt = analysis.parsed(file).is_none();
    let declared = resolution.definitions.iter().filter(move |d| {
        matches!(d.kind, SymbolKind::Param | SymbolKind::Local)
            && d.span.file == file
            && d.span.start <= offset
            && (is_prompt || item.is_some_and(|i| i.start <= d.span.start && d.span.end <= i.end))
    });
    resolution.prompt_params(file).chain(declared)
}

/// The type of `base.` where the `.` is at byte `dot`, for the chain of names `base` is: as
/// sema typed the expression, else (text too broken to check) through the local or
/// parameter named first and the fields named after it.
fn type_before_dot(
    analysis: &Analysis,
    file: FileId,
    dot: u32,
    chain: &[String],
) -> Option<TypeInfo> {
    let resolution = &analysis.resolution;
    if let Some(ty) = resolution.type_ending_at(file, dot) {
        return Some(ty.clone());
    }
    let first = chain.first()?;
    let local = locals_at(analysis, file, dot)
        .filter(|d| d.name == *first)
        .last()
        .and_then(|d| d.ty.clone());
    let mut ty = match local {
        Some(ty) => ty,
        None => parameter_type(analysis, file, dot, first)?,
    };
    for name in chain.iter().skip(1) {
        let owner = ty.def?;
        ty = resolution
            .fields_of(owner)
            .find(|f| f.name == *name)?
            .ty
            .clone()?;
    }
    Some(ty)
}

/// The type of parameter `name` of the item enclosing `offset`, read from its declaration
/// (sema types a parameter only when it checks the body, which may not parse yet).
fn parameter_type(analysis: &Analysis, file: FileId, offset: u32, name: &str) -> Option<TypeInfo> {
    let params = match &enclosing_item(analysis, file, offset)?.kind {
        ItemKind::Fn(f) => &f.params,
        ItemKind::Check(c) => &c.params,
        ItemKind::Builder(b) => &b.params,
        ItemKind::Node(n) => &n.params,
        _ => return None,
    };
    let param = params.iter().find(|p| p.name.name == name)?;
    declared_type(&analysis.resolution, &param.ty)
}

/// What a declared type is, as far as completion needs: the methods of its head, the fields of
/// the project type it holds (the name's meaning is sema's).
fn declared_type(resolution: &Resolution, ty: &TypeExpr) -> Option<TypeInfo> {
    let TypeKind::Named { path, args } = &ty.kind else {
        return None;
    };
    let last = path.last()?;
    let receiver = match last.name.as_str() {
        "Str" => Some(Receiver::Text),
        "List" | "Set" => Some(Receiver::List),
        "Map" => Some(Receiver::Map),
        "Option" => Some(Receiver::Option),
        _ => None,
    };
    let def = match receiver {
        Some(Receiver::List | Receiver::Option) => args.iter().find_map(|a| match a {
            TypeArg::Type(t) => declared_type(resolution, t)?.def,
            _ => None,
        }),
        Some(_) => None,
        None => match resolution.at(last.span.file, last.span.start)?.symbol {
            crate::sema::resolution::Symbol::Item(ItemRef::Type(def)) => Some(def),
            _ => None,
        },
    };
    Some(TypeInfo {
        text: path.to_text(),
        def,
        receiver,
    })
}

fn members(analysis: &Analysis, file: FileId, dot: u32, chain: &[String]) -> Vec<CompletionItem> {
    let ty = type_before_dot(analysis, file, dot, chain);
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
    let fields_of = |owner: u32| -> Vec<CompletionItem> {
        analysis
            .resolution
            .fields_of(owner)
            .map(|d| from_definition(analysis, d, CompletionItemKind::FIELD))
            .collect()
    };
    match ty.map(|t| (t.receiver, t.def)) {
        Some((Some(Receiver::Option), Some(owner))) => {
            let mut items = fields_of(owner);
            items.extend(methods(&[Receiver::Option]));
            items
        }
        Some((Some(receiver), _)) => methods(&[receiver]),
        Some((None, Some(owner))) => fields_of(owner),
        Some((None, None)) => Vec::new(),
        None => {
            let mut items = of_kind(analysis, SymbolKind::Field, CompletionItemKind::FIELD);
            let mut all = methods(&[Receiver::Text, Receiver::List, Receiver::Option]);
            all.sort_by(|a, b| a.label.cmp(&b.label));
            items.extend(all);
            items
        }
    }
}

fn everything(analysis: &Analysis, file: FileId, offset: u32) -> Vec<CompletionItem> {
    let mut items: Vec<CompletionItem> = Token::KEYWORDS
        .iter()
        .map(|k| simple(k.symbol(), CompletionItemKind::KEYWORD, None))
        .collect();
    items.extend(
        builtin_types::all().map(|t| simple(t, CompletionItemKind::STRUCT, Some("built-in type"))),
    );
    let mut seen = std::collections::BTreeSet::new();
    for def in &analysis.resolution.definitions {
        let kind = match def.kind {
            SymbolKind::Struct | SymbolKind::Alias | SymbolKind::Stream => {
                CompletionItemKind::STRUCT
            }
            SymbolKind::Enum | SymbolKind::Errors => CompletionItemKind::ENUM,
            SymbolKind::Fn | SymbolKind::Check | SymbolKind::Builder => {
                CompletionItemKind::FUNCTION
            }
            SymbolKind::Node | SymbolKind::Agent => CompletionItemKind::CLASS,
            _ => continue,
        };
        if seen.insert(def.name.clone()) {
            items.push(from_definition(analysis, def, kind));
        }
    }
    for def in locals_at(analysis, file, offset) {
        if seen.insert(def.name.clone()) {
            items.push(from_definition(analysis, def, CompletionItemKind::VARIABLE));
        }
    }
    items
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
