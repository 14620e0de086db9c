//! `aelc validate NODE --input F | --output F [--project DIR]`: decodes a JSON file against a
//! node's input or output type (spec §4, §11).
//!
//! Every error is printed with its JSON Pointer, its path from the parameter (or `output`), its
//! stable code and its sentence: human text on stderr, or with `--message-format json` one JSON
//! object per error on stdout (`file`, `pointer`, `path`, `code`, `severity`, `message`).
//! Exit 0 when the document is valid, 1 when it is not (or the project has errors), 2 for usage
//! and I/O errors.

use std::io::Write;
use std::path::PathBuf;

use super::args::{MessageFormat, ValidateArgs};
use super::shown::load_project;
use super::{read, Output, Status};
use crate::driver::project::find_node;
use aelc_runtime::exec::{Executor, Schemas};

pub fn run(out: &Output, args: &ValidateArgs) -> Status {
    let (file, is_input) = match (&args.input, &args.output) {
        (Some(f), None) => (f, true),
        (None, Some(f)) => (f, false),
        _ => return out.fatal("give exactly one of --input FILE and --output FILE"),
    };
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
    // The decoder's bound: `max_input_bytes` for an input, the node's `max_answer` for an output.
    let limit = if is_input {
        program.limits.max_input_bytes
    } else {
        node.config.max_answer
    };
    let bytes = match read::read_document(file, limit) {
        Ok(b) => b,
        Err(message) => return out.fatal(&message),
    };
    // Decoding needs no schemas: the executor's decoder is the gate itself.
    let exec = Executor::new(program, Schemas::default());
    let errors = if is_input {
        exec.decode_input(node, &bytes).err()
    } else {
        exec.decode_output(node, &bytes).err()
    };
    let shown = file.display().to_string();
    let which = if is_input { "input" } else { "output" };
    let Some(errors) = errors else {
        if out.format == MessageFormat::Human {
            super::eprint_line(&format!("{shown}: a valid {which} of `{}`", node.name));
        }
        return Status::Ok;
    };
    let mut text = String::new();
    for e in &errors {
        match out.format {
            MessageFormat::Human => {
                let at = if e.pointer.is_empty() {
                    "/"
                } else {
                    &e.pointer
                };
                text.push_str(&format!(
                    "error[{}]: {}\n  --> {shown} at {at}\n",
                    e.code, e.message
                ));
            }
            MessageFormat::Json => {
                let line = serde_json::json!({
                    "file": shown,
                    "pointer": e.pointer,
                    "path": e.path,
                    "code": e.code.as_str(),
                    "severity": "error",
                    "message": e.message,
                });
                text.push_str(&line.to_string());
                text.push('\n');
            }
        }
    }
    match out.format {
        MessageFormat::Human => {
            text.push_str(&format!(
                "{shown} is not a valid {which} of `{}`: {} error(s)\n",
                node.name,
                errors.len()
            ));
            let _ = std::io::stderr().write_all(text.as_bytes());
        }
        MessageFormat::Json => {
            let _ = std::io::stdout().write_all(text.as_bytes());
        }
    }
    Status::Failed
}
