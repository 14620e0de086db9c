//! The JSON Schema fragment of a type or field, for hover: the same schema `aelc build` emits
//! (through [`crate::codegen::json_schema`]), so what the editor shows is what providers and the
//! gateway check.
//!
//! Schemas come from the typed program, which the compiler only produces when the project has no
//! error. While the author is mid-edit the server keeps the program of the last error-free check
//! ([`crate::lsp::analysis::Analysis::program`]) and says so under the schema.

use aelc_runtime::ty::{DefId, DefKind, FieldTy, Ty, TypeDef};

use crate::codegen::json_schema::{DefKeys, SchemaBuilder};
use crate::ir::Program;

/// Longest schema shown in a hover, in lines; longer ones are cut with a note.
const MAX_LINES: usize = 60;

/// The definition named `name`, preferring the one declared in `module` when several share it.
fn find_def(program: &Program, name: &str, module: Option<&str>) -> Option<DefId> {
    let named = |d: &&TypeDef| d.name == name;
    let defs = &program.types.defs;
    let position = module
        .and_then(|m| defs.iter().position(|d| named(&d) && d.module == m))
        .or_else(|| {
            let mut candidates = defs.iter().enumerate().filter(|(_, d)| named(d));
            match (candidates.next(), candidates.next()) {
                (Some((i, _)), None) => Some(i),
                _ => None,
            }
        })?;
    u32::try_from(position).ok().map(DefId)
}

/// The schema document of the named type (struct, enum or alias), pretty-printed.
pub fn of_type(program: &Program, name: &str, module: Option<&str>) -> Option<String> {
    let def = find_def(program, name, module)?;
    let keys = DefKeys::new(&program.types);
    let docs = program.types.get(def)?.docs.as_deref();
    let document = SchemaBuilder::new(&program.types, &keys).document(name, docs, &Ty::Ref { def });
    Some(pretty(&document))
}

/// The schema of field `field` of the struct or enum `owner` (a variant's field included).
pub fn of_field(
    program: &Program,
    owner: &str,
    module: Option<&str>,
    field: &str,
) -> Option<String> {
    let def = find_def(program, owner, module)?;
    let fields: Vec<&FieldTy> = match &program.types.get(def)?.kind {
        DefKind::Struct { fields } => fields.iter().collect(),
        DefKind::Enum { variants, .. } => variants
            .iter()
            .filter_map(|v| v.fields.as_ref())
            .flatten()
            .collect(),
        DefKind::Alias { .. } => return None,
    };
    let found = fields.into_iter().find(|f| f.name == field)?;
    let keys = DefKeys::new(&program.types);
    let schema = SchemaBuilder::new(&program.types, &keys).ty(&found.ty);
    Some(pretty(&schema))
}

fn pretty(value: &serde_json::Value) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    let mut lines: Vec<&str> = text.lines().collect();
    if lines.len() > MAX_LINES {
        lines.truncate(MAX_LINES);
        lines.push("…");
    }
    lines.join("\n")
}
