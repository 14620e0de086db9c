//! `aelc schema NODE --input|--output [--variant openai|gemini|anthropic] [--project DIR]`:
//! prints one schema as one document: a model-facing variant exactly as `aelc build` writes
//! it; an input or output schema self-contained, with its named types in its own `$defs`
//! (the file under `schemas/` refers to `schemas/defs.json` for them instead).

use std::io::Write;
use std::path::PathBuf;

use super::args::SchemaArgs;
use super::shown::load_project;
use super::{Output, Status};
use crate::codegen::emit::json_bytes;
use crate::codegen::json_schema::{DefKeys, SchemaBuilder};
use crate::codegen::model_schema::{model_schema, ProviderKind};
use crate::driver::project::find_node;

pub fn run(out: &Output, args: &SchemaArgs) -> Status {
    let start = args.project.clone().unwrap_or_else(|| PathBuf::from("."));
    let project = match load_project(&start) {
        Ok(p) => p,
        Err(message) => return out.fatal(&message),
    };
    let Some(program) = project.program.as_ref() else {
        out.diagnostics(&project.sources, &project.diagnostics);
        return Status::Failed;
    };
    let node = match find_node(program, &args.node) {
        Ok(n) => n,
        Err(message) => return out.fatal(&message),
    };
    let keys = DefKeys::new(&program.types);
    let builder = SchemaBuilder::new(&program.types, &keys);
    let document = if args.input {
        builder.input_document(node)
    } else {
        builder.output_document(node)
    };
    let document = match &args.variant {
        None => document,
        Some(_) if args.input => {
            return out.fatal("--variant applies to the output schema (the model's answer)")
        }
        Some(name) => match ProviderKind::parse(name) {
            Some(provider) => model_schema(provider, &node.name, &document),
            None => {
                return out.fatal(&format!(
                    "unknown variant `{name}`: use openai, gemini or anthropic"
                ))
            }
        },
    };
    let _ = std::io::stdout().write_all(&json_bytes(&document));
    Status::Ok
}
