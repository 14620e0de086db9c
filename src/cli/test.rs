//! `aelc test [DIR]`: replays every example of every agent (spec §6, §11) and prints one line
//! per example, the reasons of each failure, and a closing line `N passed, N failed`.
//!
//! With `--message-format json`, one JSON object per line on stdout instead: an example's
//! `{"example", "agent", "passed", "problems"}`, then `{"passed": N, "failed": N}`.
//!
//! Exit 0 when every example passed, 1 when one failed or the project has errors, 2 for usage
//! and I/O errors. The replay itself is [`crate::driver::replay`].

use std::io::Write;
use std::path::PathBuf;

use super::args::{MessageFormat, TestArgs};
use super::shown::load_project;
use super::{Output, Status};
use crate::driver::publish::load_examples;
use aelc_runtime::exec::Executor;

use crate::driver::replay::replay;
use crate::driver::run::schemas;
use crate::driver::DiskWorld;
use crate::ir::NodeId;

pub fn run(out: &Output, args: &TestArgs) -> Status {
    let start = args.path.clone().unwrap_or_else(|| PathBuf::from("."));
    let project = match load_project(&start) {
        Ok(p) => p,
        Err(message) => return out.fatal(&message),
    };
    let Some(program) = project.program.as_ref() else {
        out.diagnostics(&project.sources, &project.diagnostics);
        return Status::Failed;
    };
    let examples = match load_examples(&DiskWorld, &project.root, program) {
        Ok(e) => e,
        Err(message) => return out.fatal(&message),
    };
    let mut report = String::new();
    let (mut passed, mut failed) = (0usize, 0usize);
    let exec = Executor::new(program, schemas(program));
    for (index, node) in program.nodes.iter().enumerate() {
        let mine: Vec<_> = examples.iter().filter(|e| e.agent == node.name).collect();
        if mine.is_empty() {
            continue;
        }
        for example in mine {
            let verdict = replay(&exec, NodeId(index as u32), &example.text);
            let ok = verdict.passed();
            if ok {
                passed += 1;
            } else {
                failed += 1;
            }
            match out.format {
                MessageFormat::Human => {
                    let word = if ok { "ok  " } else { "FAIL" };
                    report.push_str(&format!("{word}  {}\n", example.path));
                    for problem in &verdict.problems {
                        report.push_str(&format!("      {problem}\n"));
                    }
                }
                MessageFormat::Json => {
                    let line = serde_json::json!({
                        "example": example.path,
                        "agent": node.name,
                        "passed": ok,
                        "problems": verdict.problems,
                    });
                    report.push_str(&line.to_string());
                    report.push('\n');
                }
            }
        }
    }
    match out.format {
        MessageFormat::Human => {
            report.push_str(&format!("{passed} passed, {failed} failed\n"));
        }
        MessageFormat::Json => {
            let line = serde_json::json!({ "passed": passed, "failed": failed });
            report.push_str(&line.to_string());
            report.push('\n');
        }
    }
    let _ = std::io::stdout().write_all(report.as_bytes());
    if failed > 0 {
        Status::Failed
    } else {
        Status::Ok
    }
}
