//! `aelc run NODE --input F [--replay F] [--binding NAME=…] [--project DIR]`: runs one node on
//! one input against its bindings' models (or recorded answers) and prints the output and the
//! receipt (spec §11). The work is [`crate::driver::run`]; this file reads files and flags.
//!
//! Output: the accepted output as one line of JSON on stdout (nothing when there is none), then
//! the receipt as one line of JSON. Input errors (spec §4 sentences) and the reason a run ended
//! before any call go to stderr. Exit 0 when the run `succeeded`, 1 otherwise, 2 for usage and
//! I/O errors (an unreadable file, an unknown node, a malformed replay file or override).
//!
//! `--binding NAME=KEY=VALUE` changes one setting of binding NAME for this run (`provider`,
//! `model`, `base_url`, `api_key_env`, `accepts` as a comma list); `--binding NAME=OTHER` serves
//! NAME with binding OTHER's settings. API keys are read from the environment variable the
//! binding names, only when a call is made; they are never printed.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use aelc_runtime::model::ReplayModel;
use aelc_runtime::pipeline::{Status as RunStatus, SystemClock};
use aelc_runtime::provider::{NodeCall, PartKind};

use super::args::RunArgs;
use super::build::load_project;
use super::{Output, Status};
use crate::codegen::emit::find_node;
use crate::driver::run::{self as driver_run, ModelRouter, NodeRun};
use crate::driver::DiskWorld;
use crate::ir::{Binding, Program};

pub fn run(out: &Output, args: &RunArgs) -> Status {
    let start = args.project.clone().unwrap_or_else(|| PathBuf::from("."));
    let project = match load_project(&DiskWorld, &start) {
        Ok(p) => p,
        Err(message) => return out.fatal(&message),
    };
    let Some(mut program) = project.program else {
        out.diagnostics(&project.sources, &project.diagnostics);
        return Status::Failed;
    };
    for spec in &args.bindings {
        if let Err(message) = override_binding(&mut program, spec) {
            return out.fatal(&message);
        }
    }
    let node = match find_node(&program, &args.node) {
        Ok(n) => n,
        Err(message) => return out.fatal(&message),
    };
    if let Err(e) = driver_run::runnable(&program, node) {
        return out.fatal(&e.to_string());
    }
    let input = match read_input(&args.input) {
        Ok(bytes) => bytes,
        Err(message) => return out.fatal(&message),
    };
    let replay = match &args.replay {
        None => None,
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => match ReplayModel::from_jsonl(&text) {
                Ok(model) => Some(model),
                Err(e) => return out.fatal(&format!("{}: {e}", path.display())),
            },
            Err(e) => return out.fatal(&format!("cannot read {}: {e}", path.display())),
        },
    };
    let (document, schemas) = driver_run::output_schemas(&program, node);
    let schema_text = driver_run::output_schema_text(&program, node, &document, &schemas);
    let mut call = NodeCall::new(node.config.timeout_ms.map_or(
        driver_run::DEFAULT_TIMEOUT,
        std::time::Duration::from_millis,
    ));
    call.temperature = node.config.temperature;
    call.schemas = schemas;
    call.grammar = crate::codegen::grammar::node_grammars(&program, node).map(|g| g.gbnf);
    let used = used_bindings(&program, node);
    let router = ModelRouter::new(call, replay).with_bindings(&used);
    let mut router = match router {
        Ok(r) => r,
        Err(e) => return out.fatal(&e.to_string()),
    };
    // A replay answers whatever it is asked; only a live binding's `accepts` is checked here
    // (a fallback's is checked by its provider before its call).
    let accepts: Option<Vec<PartKind>> = match &args.replay {
        Some(_) => None,
        None => node
            .config
            .model
            .as_deref()
            .and_then(|name| used.iter().find(|b| b.name == name))
            .map(|b| {
                b.accepts
                    .iter()
                    .filter_map(|a| PartKind::parse(a))
                    .collect()
            }),
    };
    let run = NodeRun::new(&program, node);
    let mut clock = SystemClock::default();
    let report = run.run(
        &input,
        accepts.as_deref(),
        &schema_text,
        &mut router,
        &mut clock,
    );
    let mut stderr = std::io::stderr();
    for error in &report.input_errors {
        let _ = writeln!(stderr, "error: {}", error.message);
    }
    if let Some(why) = &report.refusal {
        let _ = writeln!(stderr, "error: {why}");
    }
    let mut stdout = std::io::stdout();
    if let Some(json) = &report.outcome.output_json {
        let _ = writeln!(stdout, "{json}");
    }
    let _ = writeln!(stdout, "{}", report.receipt.to_json_string());
    if report.outcome.status == RunStatus::Succeeded {
        Status::Ok
    } else {
        Status::Failed
    }
}

/// The input document: a file, or stdin for `-`.
fn read_input(path: &Path) -> Result<Vec<u8>, String> {
    if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read the input from stdin: {e}"))?;
        return Ok(bytes);
    }
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// The bindings a run of `node` may call: its own, then its fallbacks', each once.
fn used_bindings(program: &Program, node: &crate::ir::NodeIr) -> Vec<Binding> {
    let mut names: Vec<&str> = node.config.model.as_deref().into_iter().collect();
    for policy in &node.output_stage.on_failure {
        if let crate::ir::Policy::Fallback { binding } = policy {
            if !names.contains(&binding.as_str()) {
                names.push(binding);
            }
        }
    }
    names
        .into_iter()
        .filter_map(|n| program.bindings.iter().find(|b| b.name == n).cloned())
        .collect()
}

/// Applies one `--binding NAME=KEY=VALUE` or `--binding NAME=OTHER`.
fn override_binding(program: &mut Program, spec: &str) -> Result<(), String> {
    let usage = "write --binding NAME=KEY=VALUE (keys: provider, model, base_url, api_key_env, accepts) or --binding NAME=OTHER_BINDING";
    let Some((name, rest)) = spec.split_once('=') else {
        return Err(format!("--binding `{spec}`: {usage}"));
    };
    let known: Vec<String> = program.bindings.iter().map(|b| b.name.clone()).collect();
    let Some(index) = program.bindings.iter().position(|b| b.name == name) else {
        return Err(format!(
            "--binding: ael.toml declares no binding `{name}` (bindings: {})",
            known.join(", ")
        ));
    };
    let Some((key, value)) = rest.split_once('=') else {
        let Some(other) = program.bindings.iter().find(|b| b.name == rest).cloned() else {
            return Err(format!(
                "--binding {name}={rest}: no binding `{rest}` to copy; {usage}"
            ));
        };
        program.bindings[index] = Binding {
            name: name.to_owned(),
            ..other
        };
        return Ok(());
    };
    let binding = &mut program.bindings[index];
    match key {
        "provider" => match value {
            "openai" | "anthropic" | "replay" => binding.provider = value.to_owned(),
            _ => {
                return Err(format!(
                    "--binding {name}: provider `{value}` is not openai, anthropic or replay"
                ))
            }
        },
        "model" => binding.model = value.to_owned(),
        "base_url" => binding.base_url = (!value.is_empty()).then(|| value.to_owned()),
        "api_key_env" => binding.api_key_env = (!value.is_empty()).then(|| value.to_owned()),
        "accepts" => {
            let kinds: Vec<String> = value.split(',').map(|k| k.trim().to_owned()).collect();
            if let Some(bad) = kinds.iter().find(|k| PartKind::parse(k).is_none()) {
                return Err(format!(
                    "--binding {name}: `{bad}` is not a part kind (text, image, audio, video, file)"
                ));
            }
            binding.accepts = kinds;
        }
        _ => return Err(format!("--binding {name}: unknown key `{key}`; {usage}")),
    }
    Ok(())
}
