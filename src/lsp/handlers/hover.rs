//! `textDocument/hover`: the declaration under the cursor as written (a type with its bounds, a
//! signature), the bounds in words, and its doc comment. On a parameter or a field whose type is
//! a project type, that type's doc comment follows. On a type or a field, the JSON Schema
//! fragment `aelc build` emits for it ([`crate::lsp::schema`]).

use lsp_types::{Hover, HoverContents, HoverParams, MarkupContent, MarkupKind};

use crate::lsp::analysis::Analysis;
use crate::lsp::declaration::signature;
use crate::lsp::server::{HandlerResult, Server};
use crate::lsp::{publish, schema};
use crate::sema::resolution::{Definition, Symbol, SymbolKind};
use crate::sema::ItemRef;
use crate::syntax::ast::{LitKind, TypeArg, TypeExpr, TypeKind};

pub fn handle(server: &mut Server, params: HoverParams) -> HandlerResult<Option<Hover>> {
    let at = server.locate(&params.text_document_position_params)?;
    let resolution = &at.analysis.resolution;
    let Some(occurrence) = resolution.at(at.file, at.offset) else {
        return Ok(None);
    };
    let text = match &occurrence.symbol {
        Symbol::File(path) => {
            let path = at.analysis.dir.join(&**path);
            let exists = path.is_file() || server_has_document(at.analysis, &path);
            format!(
                "prompt file `{}`{}",
                path.display(),
                if exists { "" } else { " (not found)" }
            )
        }
        symbol => {
            let Some(definition) = resolution.definition(symbol) else {
                return Ok(None);
            };
            let mut text = describe(at.analysis, definition);
            if let Some(schema) = schema_of(at.analysis, definition) {
                text.push_str(&schema);
            }
            // The project type of a parameter, field or local: its docs follow.
            let named = definition
                .ty
                .as_ref()
                .and_then(|ty| ty.def)
                .map(|def| Symbol::Item(ItemRef::Type(def)));
            if let Some(named) = named.filter(|n| n != symbol) {
                if let Some(named) = resolution.definition(&named) {
                    text.push_str(&format!("\n\n---\n\n`{}`", named.name));
                    if let Some(docs) = &named.docs {
                        text.push_str(&format!(": {docs}"));
                    }
                }
            }
            text
        }
    };
    Ok(Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: text,
        }),
        range: publish::range(at.analysis, at.encoding, occurrence.span),
    }))
}

/// The JSON Schema section of a hover on a type or a field, when the typed program is known.
fn schema_of(analysis: &Analysis, definition: &Definition) -> Option<String> {
    let program = analysis.program.as_deref()?;
    let module = analysis.module_of(definition.span.file);
    let schema = match definition.kind {
        SymbolKind::Struct | SymbolKind::Enum | SymbolKind::Alias => {
            schema::of_type(program, &definition.name, module.as_deref())?
        }
        SymbolKind::Field => {
            let owner = definition.owner.as_deref()?;
            schema::of_field(program, owner, module.as_deref(), &definition.name)?
        }
        _ => return None,
    };
    let note = if analysis.program_is_current {
        ""
    } else {
        "\n\n*(as of the last check without errors)*"
    };
    Some(format!(
        "\n\n---\n\nJSON Schema:\n```json\n{schema}\n```{note}"
    ))
}

fn server_has_document(analysis: &Analysis, path: &std::path::Path) -> bool {
    analysis.file_id(path).is_some()
}

/// Markdown for a definition: the declaration, its bounds in words, its docs.
pub fn describe(analysis: &Analysis, definition: &Definition) -> String {
    let language = if definition.kind == SymbolKind::Binding {
        "toml"
    } else {
        "ael"
    };
    let declared = signature(&analysis.compilation.sources, definition);
    let mut text = format!("```{language}\n{declared}\n```");
    if let Some(bounds) = definition.declared.as_ref().and_then(bounds_in_words) {
        text.push_str(&format!("\n\n{bounds}"));
    }
    if let Some(docs) = &definition.docs {
        text.push_str(&format!("\n\n{docs}"));
    }
    text
}

/// What a built-in type's bounds mean: `Str<4000>` → "text of at most 4000 characters".
pub fn bounds_in_words(ty: &TypeExpr) -> Option<String> {
    let TypeKind::Named { path, args } = &ty.kind else {
        return None;
    };
    let head = path.last()?.name.as_str();
    let bound = |arg: Option<&TypeArg>| -> Option<String> {
        match arg? {
            TypeArg::Bound(b) => Some(format!(
                "{}{}",
                if b.negative { "-" } else { "" },
                literal(&b.lit.kind)
            )),
            TypeArg::Range(r) => {
                let start = r.start.as_ref().map(|b| {
                    format!(
                        "{}{}",
                        if b.negative { "-" } else { "" },
                        literal(&b.lit.kind)
                    )
                });
                let end = r.end.as_ref().map(|b| {
                    format!(
                        "{}{}",
                        if b.negative { "-" } else { "" },
                        literal(&b.lit.kind)
                    )
                });
                Some(match (start, end) {
                    (Some(a), Some(b)) if r.inclusive => format!("{a} to {b}"),
                    (Some(a), Some(b)) => format!("{a} to below {b}"),
                    (Some(a), None) => format!("at least {a}"),
                    (None, Some(b)) if r.inclusive => format!("at most {b}"),
                    (None, Some(b)) => format!("below {b}"),
                    (None, None) => "any".into(),
                })
            }
            TypeArg::Type(_) => None,
        }
    };
    let inner = |i: usize| match args.get(i) {
        Some(TypeArg::Type(t)) => Some(type_name(t).unwrap_or_else(|| head_of(t))),
        _ => None,
    };
    let count = |arg: Option<&TypeArg>| -> Option<String> {
        let words = bound(arg)?;
        Some(match arg? {
            TypeArg::Bound(_) => format!("at most {words}"),
            _ => words,
        })
    };
    let words = match head {
        "Str" => format!("text of {} characters", count(args.first())?),
        "List" => format!("a list of {} `{}`", count(args.get(1))?, inner(0)?),
        "Set" => format!("a set of {} distinct `{}`", count(args.get(1))?, inner(0)?),
        "Map" => format!(
            "a map of {} entries from `{}` to `{}`",
            count(args.get(2))?,
            inner(0)?,
            inner(1)?
        ),
        "Option" => {
            let Some(TypeArg::Type(t)) = args.first() else {
                return None;
            };
            let rest = bounds_in_words(t).unwrap_or_else(|| format!("a `{}`", head_of(t)));
            format!("absent or `null`, or {rest}")
        }
        "u8" | "u16" | "u32" | "u64" | "i8" | "i16" | "i32" | "i64" => match bound(args.first()) {
            Some(range) => format!("an integer from {range}"),
            None => format!("an integer ({})", integer_range(head)),
        },
        "f32" | "f64" => match bound(args.first()) {
            Some(range) => format!("a finite number from {range}"),
            None => "a finite number".into(),
        },
        "Image" | "Audio" | "Video" | "File" => {
            format!("a media reference of at most {}", bound(args.first())?)
        }
        _ => return None,
    };
    let attrs: Vec<String> = ty
        .attrs
        .iter()
        .map(|a| format!("`@{}`", a.name.name))
        .collect();
    if attrs.is_empty() {
        Some(words)
    } else {
        Some(format!("{words}, refined by {}", attrs.join(", ")))
    }
}

/// The project type a value of `ty` has, seen through `Option`, `List` and `Set`.
fn type_name(ty: &TypeExpr) -> Option<String> {
    let TypeKind::Named { path, args } = &ty.kind else {
        return None;
    };
    let last = path.last()?;
    match last.name.as_str() {
        "Option" | "List" | "Set" => args.iter().find_map(|a| match a {
            TypeArg::Type(t) => type_name(t),
            _ => None,
        }),
        name if crate::sema::builtin_types::is_builtin(name) => None,
        name => Some(name.to_owned()),
    }
}

fn head_of(ty: &TypeExpr) -> String {
    match &ty.kind {
        TypeKind::Named { path, .. } => path.to_text(),
        TypeKind::Error { .. } => "?".into(),
    }
}

fn integer_range(head: &str) -> &'static str {
    match head {
        "u8" => "0 to 255",
        "u16" => "0 to 65535",
        "u32" => "0 to 4294967295",
        "u64" => "0 to 18446744073709551615",
        "i8" => "-128 to 127",
        "i16" => "-32768 to 32767",
        "i32" => "-2147483648 to 2147483647",
        _ => "-9223372036854775808 to 9223372036854775807",
    }
}

fn literal(kind: &LitKind) -> String {
    match kind {
        LitKind::Int(n) => n.to_string(),
        LitKind::Float { text } => text.to_string(),
        LitKind::Size { value, unit } => format!("{value}{}", unit.suffix()),
        LitKind::Duration { value, unit } => format!("{value}{}", unit.suffix()),
        LitKind::Bool(b) => b.to_string(),
        LitKind::Str { value, .. } => format!("{value:?}"),
        LitKind::Rate { count, per } => format!("{count}/{}", per.suffix()),
        LitKind::Money { amount, currency } => format!("{amount} {currency}"),
    }
}
