//! Every file `aelc build` writes, as bytes (spec §9), computed from a [`Program`] without IO.
//!
//! | path | content |
//! |---|---|
//! | `schemas/<node>.input.json`, `schemas/<node>.output.json` | draft 2020-12 ([`super::json_schema`]), referring to `schemas/defs.json` for named types |
//! | `schemas/defs.json` | the named types the node schemas refer to, each once ([`super::shared_defs`]) |
//! | `model/<node>.<provider>.json` | the model-facing output schema ([`super::model_schema`]); not for raw-mode nodes, whose answer is text |
//! | `grammar/<node>.gbnf`, `grammar/<node>.lark` | the answer's grammar for constrained decoding ([`super::grammar`]); not for raw-mode nodes |
//! | `mcp/tools.json` | one MCP tool per agent ([`super::mcp`]) |
//! | `agents/<agent>/holon.yaml` | the manifest ([`super::manifest`]) |
//! | `ir.json`, `ir.schema.json` | the program, and the JSON Schema of that format (schemars) |
//! | `rust/<package>.rs` | the Rust glue ([`super::rust`]) |
//!
//! `<node>` is the node's name, or `module.path.name` when two modules declare the same name.
//! Output is byte-deterministic: JSON is pretty-printed with two spaces and a final newline,
//! keys in a fixed order, files in a sorted map. When a publishing rule fails
//! ([`super::publish`]), no file is produced at all, so nothing half-valid is ever written.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use super::error::CodegenError;
use super::json_schema::{node_schemas, NodeSchemas};
use super::manifest;
use super::mcp::{self, ToolSource};
use super::model_schema::{model_schema, ProviderKind};
use super::publish::{self, Example, Place};
use super::shared_defs;
use crate::diagnostics::Diagnostic;
use crate::ir::{NodeKind, Program};

/// What emitting produced: the files (empty if any error was found) and the diagnostics.
#[derive(Clone, Debug, Default)]
pub struct Emission {
    /// Paths relative to the output folder, with `/` separators.
    pub files: BTreeMap<PathBuf, Vec<u8>>,
    pub diagnostics: Vec<Diagnostic>,
    /// The declaration a diagnostic is about, by its index in `diagnostics` (the IR has no
    /// spans: the driver finds the declaration's, so every diagnostic names a file).
    pub places: BTreeMap<usize, Place>,
}

impl Emission {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Pretty JSON with a final newline: the one format of every emitted JSON file.
pub fn json_bytes(value: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// Every output file of `program`; `examples` are the agents' example files, already read. The
/// publishing rules ([`publish::check`]) run first: when one fails, no file is produced.
pub fn emit(program: &Program, examples: &[Example]) -> Emission {
    let schemas = node_schemas(program);
    let findings = publish::check(program, &schemas, examples);
    let checked: Vec<Diagnostic> = findings.into_iter().map(|f| f.diagnostic).collect();
    if checked.iter().any(Diagnostic::is_error) {
        return Emission {
            files: BTreeMap::new(),
            diagnostics: checked,
            places: BTreeMap::new(),
        };
    }
    let mut emission = emit_checked(program, &schemas, examples);
    let shift = checked.len();
    emission.places = std::mem::take(&mut emission.places)
        .into_iter()
        .map(|(at, place)| (at + shift, place))
        .collect();
    emission.diagnostics.splice(0..0, checked);
    emission
}

/// Every output file of a program whose publishing rules the caller has checked with no error
/// (the driver does, for `aelc build`, so they run once); `schemas` are its
/// [`node_schemas`]. The diagnostics are the writing's own (the glue's E0850, a manifest
/// that cannot be written).
pub fn emit_checked(program: &Program, schemas: &[NodeSchemas], examples: &[Example]) -> Emission {
    let mut emission = Emission::default();
    let stems = program.node_file_names();
    let files = &mut emission.files;
    let mut tools = Vec::new();
    let mut defs = BTreeMap::new();
    for ((node, s), stem) in program.nodes.iter().zip(schemas).zip(&stems) {
        files.insert(
            PathBuf::from(format!("schemas/{stem}.input.json")),
            json_bytes(&shared_defs::share(&s.input, &mut defs)),
        );
        files.insert(
            PathBuf::from(format!("schemas/{stem}.output.json")),
            json_bytes(&shared_defs::share(&s.output, &mut defs)),
        );
        if node.output_stage.raw_parse.is_none() {
            for provider in ProviderKind::ALL {
                files.insert(
                    PathBuf::from(format!("model/{stem}.{}.json", provider.as_str())),
                    json_bytes(&model_schema(provider, &node.name, &s.output)),
                );
            }
        }
        if let Some(g) = super::grammar::node_grammars(program, node) {
            files.insert(
                PathBuf::from(format!("grammar/{stem}.gbnf")),
                g.gbnf.into_bytes(),
            );
            files.insert(
                PathBuf::from(format!("grammar/{stem}.lark")),
                g.lark.into_bytes(),
            );
        }
        if node.kind == NodeKind::Agent {
            let value = manifest::manifest(program, node, &s.input, &s.output, examples);
            match manifest::to_yaml(&value) {
                Ok(text) => {
                    files.insert(
                        PathBuf::from(format!("agents/{stem}/holon.yaml")),
                        text.into_bytes(),
                    );
                }
                Err(err) => {
                    emission.places.insert(
                        emission.diagnostics.len(),
                        Place::item(&node.module, &node.name),
                    );
                    emission.diagnostics.push(
                        CodegenError::ManifestYaml {
                            node: node.name.clone(),
                            error: err.to_string(),
                        }
                        .into(),
                    );
                }
            }
            tools.push(ToolSource {
                name: &node.name,
                description: node.docs.as_deref(),
                input: &s.input,
                output: &s.output,
            });
        }
    }
    files.insert(
        PathBuf::from(shared_defs::DEFS_PATH),
        json_bytes(&shared_defs::defs_document(defs)),
    );
    files.insert(
        PathBuf::from("mcp/tools.json"),
        json_bytes(&mcp::tools(&tools)),
    );
    files.insert(PathBuf::from("ir.json"), ir_json(program));
    files.insert(PathBuf::from("ir.schema.json"), ir_schema_json());
    match super::rust::glue_placed(program) {
        Ok(text) => {
            files.insert(
                PathBuf::from(super::rust::glue_path(program)),
                text.into_bytes(),
            );
        }
        Err(bad) => {
            for (diagnostic, place) in bad {
                if let Some(place) = place {
                    emission.places.insert(emission.diagnostics.len(), place);
                }
                emission.diagnostics.push(diagnostic);
            }
        }
    }
    if emission.diagnostics.iter().any(Diagnostic::is_error) {
        emission.files.clear();
    }
    emission
}

/// `ir.json`: the program as data.
pub fn ir_json(program: &Program) -> Vec<u8> {
    json_bytes(&serde_json::to_value(program).unwrap_or(Value::Null))
}

/// `ir.schema.json`: the published JSON Schema of `ir.json`.
pub fn ir_schema_json() -> Vec<u8> {
    let schema = schemars::schema_for!(Program);
    json_bytes(&serde_json::to_value(&schema).unwrap_or(Value::Null))
}
