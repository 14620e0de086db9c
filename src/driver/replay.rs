//! Replaying an agent's examples (spec §6): what `aelc test` runs for each example file.
//!
//! For one example: the input must decode (§4) unless the example expects `rejected_input`,
//! and an expected output must decode as the node's output type; both report the exact JSON
//! Pointer of what is wrong. Then the node runs through the one executor
//! ([`Executor::run`]) with the answers as its model: each model call of the run takes the
//! next answer, in order, across delegated calls. The result is compared:
//!
//! - an expected output is compared with the accepted one as values of the output type (an
//!   absent `Option` and `null` are the same; book: reference/nodes.md);
//! - an expected `status` (and `code`, when given) with the run's;
//! - every answer must have been used: a left-over answer means the example is not what the
//!   pipeline does.
//!
//! A run that needs Rust code `aelc test` does not have (an `extern check`, a raw parser, an
//! extern fn other than the node's model call) cannot be replayed: its examples fail and name
//! it (book: reference/testing.md).

use aelc_runtime::example::{ExampleFile, Expect};
use aelc_runtime::exec::{Env, Executor, Externs};
use aelc_runtime::model::ReplayModel;
use aelc_runtime::pipeline::{Clock, Status, SystemClock};
use aelc_runtime::receipt::UuidIds;
use aelc_runtime::value::Value;

use crate::ir::NodeId;

/// The clock of a replay: real time for budgets, and no wall time for expiry. An example is a
/// recording that must replay the same way on any day, so the references in it never expire
/// in `aelc test` (they are judged when a run is live).
struct ReplayClock(SystemClock);

impl Clock for ReplayClock {
    fn now_ms(&mut self) -> u64 {
        self.0.now_ms()
    }

    fn unix_ms(&mut self) -> i64 {
        i64::MIN
    }
}

/// The verdict on one example.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Empty when the example passed; otherwise one sentence per problem.
    pub problems: Vec<String>,
}

impl Verdict {
    pub fn passed(&self) -> bool {
        self.problems.is_empty()
    }

    fn fail(problem: impl Into<String>) -> Verdict {
        Verdict {
            problems: vec![problem.into()],
        }
    }
}

/// Lists decode errors as `the input at /pointer: message` sentences.
fn pointer_errors(which: &str, errors: &[aelc_runtime::error::DecodeError]) -> Vec<String> {
    errors
        .iter()
        .map(|e| {
            let at = if e.pointer.is_empty() {
                "/"
            } else {
                &e.pointer
            };
            format!(
                "the {which} at `{at}` does not match the {which} schema: {}",
                e.message
            )
        })
        .collect()
}

/// Replays the example `text` against `node` of `exec`.
pub fn replay(exec: &Executor<'_>, node: NodeId, text: &str) -> Verdict {
    let example = match ExampleFile::parse(text) {
        Ok(e) => e,
        Err(e) => return Verdict::fail(e.0),
    };
    let Some(ir) = exec.program().node(node) else {
        return Verdict::fail(format!("the program has no node #{}", node.0));
    };
    let input = example.input.get().as_bytes();
    let expects_refusal =
        matches!(&example.expect, Expect::Failure { status, .. } if status == "rejected_input");
    if !expects_refusal {
        if let Err(errors) = exec.decode_input(ir, input) {
            return Verdict {
                problems: pointer_errors("input", &errors),
            };
        }
    }
    let expected_output: Option<Value> = match &example.expect {
        Expect::Output(raw) => match exec.decode_output(ir, raw.get().as_bytes()) {
            Ok(v) => Some(v),
            Err(errors) => {
                return Verdict {
                    problems: pointer_errors("output", &errors),
                }
            }
        },
        Expect::Failure { .. } => None,
    };
    let answers = example.answers.len();
    let mut model = ReplayModel::new(example.answers);
    let mut externs = Externs::new();
    let mut env = Env {
        model: &mut model,
        clock: &mut ReplayClock(SystemClock::default()),
        ids: &mut UuidIds,
        externs: &mut externs,
        check_accepts: false,
        media: None,
    };
    let run = match exec.run(node, input, &mut env) {
        Ok(run) => run,
        Err(unrunnable) => {
            return Verdict::fail(format!(
            "cannot replay: {unrunnable}; `aelc test` runs AEL only (book: reference/testing.md)"
        ))
        }
    };
    let outcome = &run.outcome;
    let mut problems = Vec::new();
    let got = match &outcome.code {
        Some(code) => format!("{} ({code})", outcome.status.as_str()),
        None => outcome.status.as_str().to_owned(),
    };
    let why = || -> String {
        if let Some(e) = run.input_errors.first() {
            return format!("; the input was refused: {}", e.message);
        }
        if let Some(why) = &run.refusal {
            return format!("; {why}");
        }
        let reasons: Vec<String> = outcome
            .attempts
            .iter()
            .enumerate()
            .filter_map(|(i, a)| {
                a.rejected
                    .as_ref()
                    .map(|r| format!("answer {}: step {}: {}", i + 1, r.step, r.message))
            })
            .collect();
        if reasons.is_empty() {
            String::new()
        } else {
            format!("; {}", reasons.join("; "))
        }
    };
    match (&example.expect, expected_output) {
        (Expect::Output(_), Some(expected)) => {
            if outcome.status != Status::Succeeded {
                problems.push(format!("expected an output, got {got}{}", why()));
            } else if outcome.output.as_ref() != Some(&expected) {
                let ty = &ir.output;
                let types = &exec.program().types;
                problems.push(format!(
                    "the output differs:\n    expected {}\n    got      {}",
                    expected.to_json_string(ty, types),
                    outcome.output_json.as_deref().unwrap_or("nothing")
                ));
            }
        }
        (Expect::Failure { status, code }, _) => {
            let status_ok = outcome.status.as_str() == status;
            let code_ok = code.is_none() || outcome.code == *code;
            if !(status_ok && code_ok) {
                let want = match code {
                    Some(c) => format!("{status} ({c})"),
                    None => status.clone(),
                };
                problems.push(format!("expected {want}, got {got}{}", why()));
            }
        }
        (Expect::Output(_), None) => {}
    }
    let used = model.requests.len();
    if problems.is_empty() && used < answers {
        problems.push(format!(
            "{} of {answers} answers were not used (the run made {used} model call(s))",
            answers - used
        ));
    }
    Verdict { problems }
}
