//! How a definition of sema's resolution reads in a hover or a completion's detail: its
//! declaration as written in the source (a signature, a field with its type, a struct, the
//! `[bindings.NAME]` table of `ael.toml`), or, for a local sema typed, its name and type.

use crate::sema::resolution::{Definition, SymbolKind};
use crate::source::SourceMap;
use crate::span::Span;

/// The most lines of a declaration shown (a big struct is cut).
const MAX_LINES: usize = 40;

/// The declaration of `def` as source text.
pub fn signature(sources: &SourceMap, def: &Definition) -> String {
    let text = sources.get(def.full.file).map_or("", |f| f.text.as_str());
    let full = slice(text, def.full);
    let owner = def.owner.as_deref().unwrap_or("");
    match def.kind {
        SymbolKind::Fn
        | SymbolKind::Check
        | SymbolKind::Node
        | SymbolKind::Agent
        | SymbolKind::Builder => first_lines(
            full.split_once('{')
                .map_or(full, |(head, _)| head)
                .trim_end(),
        ),
        SymbolKind::Variant => format!("{owner}::{}", def.name),
        SymbolKind::ErrorCode => format!("errors {owner} {{ {} }}", def.name),
        SymbolKind::Field => format!("{owner}.{full}"),
        SymbolKind::Binding => binding_table(text, def.span),
        SymbolKind::Local if def.declared.is_none() => match &def.ty {
            Some(ty) => format!("{}: {}", def.name, ty.text),
            None => full.to_owned(),
        },
        SymbolKind::Param | SymbolKind::Local => full.to_owned(),
        _ => first_lines(full),
    }
}

fn slice(text: &str, span: Span) -> &str {
    text.get(span.range()).unwrap_or("")
}

fn first_lines(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().take(MAX_LINES + 1).collect();
    if lines.len() > MAX_LINES {
        lines.truncate(MAX_LINES);
        lines.push("    …");
    }
    lines.join("\n")
}

/// The lines of `ael.toml` declaring the binding named at `name`: its `[bindings.NAME]` header
/// and the keys up to the next table (or the one `NAME = …` line of a `[bindings]` table).
fn binding_table(text: &str, name: Span) -> String {
    let start = text
        .get(..name.start as usize)
        .and_then(|before| before.rfind('\n'))
        .map_or(0, |at| at + 1);
    let mut lines = text.get(start..).unwrap_or("").lines();
    let Some(head) = lines.next() else {
        return String::new();
    };
    let mut out = head.trim().to_owned();
    if !out.starts_with('[') {
        return out;
    }
    for line in lines {
        let line = line.trim();
        if line.starts_with('[') {
            break;
        }
        if !line.is_empty() && !line.starts_with('#') {
            out.push('\n');
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::FileId;

    #[test]
    fn a_binding_reads_as_its_table() {
        let text = "[package]\nname = \"a/b\"\n\n[bindings.main]\nprovider = \"openai\"\n# note\nmodel = \"m\"\n\n[limits]\n";
        let at = text.find("main").unwrap();
        let shown = binding_table(text, Span::new(FileId(0), at..at + 4));
        assert_eq!(
            shown,
            "[bindings.main]\nprovider = \"openai\"\nmodel = \"m\""
        );
    }
}
