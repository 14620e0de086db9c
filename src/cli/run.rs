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

use std::io::Write;
use std::path::PathBuf;

use aelc_runtime::exec::{
    parse_observation, Arrival, Env, Executor, Externs, MediaAccess, Session,
};
use aelc_runtime::files::{Files, LOCAL_TENANT};
use aelc_runtime::model::ReplayModel;
use aelc_runtime::pipeline::{Status as RunStatus, SystemClock};
use aelc_runtime::provider::PartKind;
use aelc_runtime::receipt::UuidIds;

use super::args::RunArgs;
use super::shown::load_project;
use super::{read, Output, Status};
use crate::driver::project::find_node;
use crate::driver::run::{node_id, schemas, ModelRouter};
use crate::ir::{Binding, Program, Provider};

pub fn run(out: &Output, args: &RunArgs) -> Status {
    let start = args.project.clone().unwrap_or_else(|| PathBuf::from("."));
    let project = match load_project(&start) {
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
        Ok(n) => node_id(&program, n),
        Err(message) => return out.fatal(&message),
    };
    let exec = Executor::new(&program, schemas(&program));
    // `aelc run` links no Rust: a node that needs an extern (other than its model call) cannot
    // run here, and says so before anything is read or called.
    let mut externs = Externs::new();
    let missing = exec.missing(node, &externs);
    if !missing.is_empty() {
        let name = program.node(node).map_or("?", |n| n.name.as_str());
        return out.fatal(&format!(
            "node `{name}` needs {}, which is Rust code `aelc run` does not have; run it from Rust through the generated glue (book: rust.md)",
            missing.join(", ")
        ));
    }
    let replay = match &args.replay {
        None => None,
        // Any node of the run may take an answer (delegated calls): the largest `max_answer`.
        Some(path) => match read::read_replay(path, largest_answer(&program)) {
            Ok(text) => match ReplayModel::from_jsonl(&text) {
                Ok(model) => Some(model),
                Err(e) => return out.fatal(&format!("{}: {e}", path.display())),
            },
            Err(message) => return out.fatal(&message),
        },
    };
    // A replay answers whatever it is asked; a live binding's `accepts` is checked before
    // each call.
    let check_accepts = replay.is_none();
    let mut router = match ModelRouter::new(&program.bindings, replay) {
        Ok(r) => r,
        Err(e) => return out.fatal(&e.to_string()),
    };
    // A live run checks and reads media through the project's file store (`aelc files put`),
    // for the local tenant; a replay takes references as they are.
    let files = Files::in_project(&project.root);
    let media = check_accepts.then_some(MediaAccess {
        store: &files,
        tenant: LOCAL_TENANT,
    });
    let mut env = Env {
        model: &mut router,
        clock: &mut SystemClock::default(),
        ids: &mut UuidIds,
        externs: &mut externs,
        check_accepts,
        media,
    };
    if let Some(session) = &args.session {
        if let Some(ir) = program.node(node) {
            let streams: Vec<u32> = ir.params.iter().filter_map(|p| p.stream).collect();
            match streams.as_slice() {
                [] => {}
                [stream] => {
                    return super::stream::run_stream(
                        out, &exec, node, ir, *stream, session, &mut env,
                    )
                }
                _ => {
                    return out.fatal(&format!(
                        "node `{}` takes {} streams; `aelc run --session` feeds one stream (beside any other inputs)",
                        ir.name,
                        streams.len()
                    ))
                }
            }
        }
        return run_session(out, &exec, node, session, &mut env);
    }
    let Some(input_path) = &args.input else {
        return out.fatal("give --input FILE (or --session FILE for a node with several inputs)");
    };
    let input = match read::read_document(input_path, program.limits.max_input_bytes) {
        Ok(bytes) => bytes,
        Err(message) => return out.fatal(&message),
    };
    let report = match exec.run(node, &input, &mut env) {
        Ok(run) => run,
        Err(e) => return out.fatal(&e.to_string()),
    };
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

/// `--session F.jsonl`: the observations fed one line at a time (spec §12.1), each line read
/// within its bound. Every run prints its output (when there is one) and its receipt, one JSON
/// line each; a refused observation is an error on stderr naming its line. Exit 0 when every
/// observation was taken and every run succeeded.
fn run_session(
    out: &Output,
    exec: &Executor<'_>,
    node: crate::ir::NodeId,
    path: &std::path::Path,
    env: &mut Env<'_>,
) -> Status {
    let mut session = match Session::new(exec, node, &*env.externs) {
        Ok(s) => s,
        Err(e) => return out.fatal(&e.to_string()),
    };
    let line_bound = read::session_line_bound(exec.program().limits.max_input_bytes);
    let mut lines = match read::lines(path, line_bound) {
        Ok(lines) => lines,
        Err(message) => return out.fatal(&message),
    };
    let (mut stdout, mut stderr) = (std::io::stdout(), std::io::stderr());
    let mut all_ok = true;
    let mut number = 0usize;
    loop {
        number += 1;
        let text = match lines.next_line() {
            Ok(Some(text)) => text,
            Ok(None) => break,
            Err(message) => return out.fatal(&format!("{message} (line {number})")),
        };
        let observation = match parse_observation(number, &text) {
            Ok(Some(o)) => o,
            Ok(None) => continue,
            Err(e) => return out.fatal(&format!("{}: {e}", path.display())),
        };
        match session.observe(&observation, env) {
            Arrival::Waiting => {}
            Arrival::Refused { errors, why } => {
                all_ok = false;
                let _ = writeln!(stderr, "error: {why}");
                for e in errors {
                    let _ = writeln!(stderr, "error: {}", e.message);
                }
            }
            Arrival::Ran(run) => {
                if let Some(why) = &run.refusal {
                    let _ = writeln!(stderr, "error: line {number}: {why}");
                }
                if let Some(json) = &run.outcome.output_json {
                    let _ = writeln!(stdout, "{json}");
                }
                let _ = writeln!(stdout, "{}", run.receipt.to_json_string());
                all_ok &= run.outcome.status == RunStatus::Succeeded;
            }
        }
    }
    if all_ok {
        Status::Ok
    } else {
        Status::Failed
    }
}

fn largest_answer(program: &Program) -> u64 {
    program
        .nodes
        .iter()
        .map(|n| n.config.max_answer)
        .max()
        .unwrap_or(0)
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
        "provider" => match Provider::parse(value) {
            Some(provider) => binding.provider = provider,
            None => {
                let known: Vec<&str> = Provider::ALL.iter().map(|p| p.as_str()).collect();
                return Err(format!(
                    "--binding {name}: provider `{value}` is not one of {}",
                    known.join(", ")
                ));
            }
        },
        "model" => binding.model = value.to_owned(),
        "base_url" => binding.base_url = (!value.is_empty()).then(|| value.to_owned()),
        "api_key_env" => binding.api_key_env = (!value.is_empty()).then(|| value.to_owned()),
        "accepts" => {
            let mut kinds = Vec::new();
            for word in value.split(',').map(str::trim) {
                match PartKind::parse(word) {
                    Some(kind) => kinds.push(kind),
                    None => {
                        return Err(format!(
                            "--binding {name}: `{word}` is not a part kind (text, image, audio, video, file)"
                        ))
                    }
                }
            }
            binding.accepts = kinds;
        }
        _ => return Err(format!("--binding {name}: unknown key `{key}`; {usage}")),
    }
    Ok(())
}
