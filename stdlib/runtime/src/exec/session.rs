//! Sessions of observations (spec §6 "several inputs", §12.1): a node with several inputs and
//! `combine: latest` or `zip` is fed its inputs one observation at a time, and runs when they
//! combine.
//!
//! A session is JSON Lines, one observation a line:
//! `{"input": "camera", "at": "2026-12-02T14:00:00.120Z", "value": {…}}` ([`parse_session`]).
//! Each value is decoded against its parameter's type as it arrives (spec §4; a value that does
//! not decode is refused on its own, with its errors, and never combined). Then:
//!
//! - `latest`: once every input has a value, the node runs on each arrival, with the latest value
//!   of every input;
//! - `zip`: the node runs when every input has a new value since its last run, each input's
//!   newest, and waits again.
//!
//! **Freshness.** The session's clock is the time of the arrival that would make the node run
//! (`at` of that line): a session replays the same way every time, and a live host passes its
//! own arrivals. An input whose value is older than its `fresh` bound at that time is stale:
//! the run is refused with `stale_input` (a receipt with status `rejected_input`, nothing called,
//! nothing billed, the stale input named in `refusal`), and the stale value is dropped, never
//! combined: the node waits for a fresh one. An input without a `fresh` bound never goes stale.
//! Observations must arrive in time order; one that goes back in time is refused.

use crate::reserved::ReservedCode;
use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{Env, Executor, Run, Unrunnable};
use crate::decode::Decoder;
use crate::error::DecodeError;
use crate::program::{Combine, NodeId, NodeIr};
use crate::value::Value;

/// The receipt code of a run refused because an input was older than its `fresh` bound.
pub const STALE_INPUT: &str = ReservedCode::StaleInput.as_str();

/// Room on one session line for everything but the value: the input's name and the timestamp.
pub const SESSION_LINE_ENVELOPE: u64 = 1024;

/// The most bytes one session line may have: the input document bound, for its value, plus
/// [`SESSION_LINE_ENVELOPE`]. A session has no bound on its length: it is read line by line.
pub fn session_line_bound(max_input_bytes: u64) -> u64 {
    max_input_bytes.saturating_add(SESSION_LINE_ENVELOPE)
}

/// One line of a session.
#[derive(Clone, Debug)]
pub struct Observation {
    /// The 1-based line of the session it came from.
    pub line: usize,
    /// The parameter it is a value of.
    pub input: String,
    /// When it was observed, in milliseconds since the Unix epoch.
    pub at_ms: i64,
    /// The value's JSON text, as sent.
    pub value: Box<RawValue>,
}

/// A malformed session line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionError {
    pub line: usize,
    /// The field at fault: `input`, `at`, `value`, or `line` when the line is not an
    /// observation at all.
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    input: String,
    at: String,
    value: Box<RawValue>,
}

/// Reads a session's JSON Lines (blank lines skipped).
pub fn parse_session(text: &str) -> Result<Vec<Observation>, SessionError> {
    let mut out = Vec::new();
    for (i, text) in text.lines().enumerate() {
        if let Some(observation) = parse_observation(i + 1, text)? {
            out.push(observation);
        }
    }
    Ok(out)
}

/// Reads line `line` of a session (`None` for a blank line), so a host can read a session
/// as it arrives, one line at a time.
pub fn parse_observation(line: usize, text: &str) -> Result<Option<Observation>, SessionError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let parsed: Line = serde_json::from_str(text).map_err(|e| SessionError {
        line,
        field: named_field(&e.to_string()),
        message: format!(
            "{e}; each line is {{\"input\": \"name\", \"at\": \"2026-12-02T14:00:00.120Z\", \"value\": …}}"
        ),
    })?;
    let at: jiff::Timestamp = parsed.at.parse().map_err(|e| SessionError {
        line,
        field: "at".to_owned(),
        message: format!("`at` is not an RFC 3339 date-time ({e})"),
    })?;
    Ok(Some(Observation {
        line,
        input: parsed.input,
        at_ms: at.as_millisecond(),
        value: parsed.value,
    }))
}

/// The field serde's message names (`missing field `at``, `unknown field `x``), else `line`.
fn named_field(message: &str) -> String {
    let named = ["missing field `", "unknown field `"]
        .iter()
        .any(|p| message.starts_with(p));
    match message.split('`').nth(1) {
        Some(name) if named => name.to_owned(),
        _ => "line".to_owned(),
    }
}

/// What became of one observation.
#[derive(Clone, Debug)]
pub enum Arrival {
    /// Kept; the node is waiting for other inputs.
    Waiting,
    /// The value did not decode (or names no input, or goes back in time): refused on its own.
    Refused {
        errors: Vec<DecodeError>,
        why: String,
    },
    /// The node ran (or was refused as stale): its run.
    Ran(Box<Run>),
}

/// What one observation combines into ([`Session::combine`]).
#[derive(Clone, Debug)]
pub enum Combined {
    /// Kept; the node is waiting for other inputs.
    Waiting,
    /// Refused on its own (names no input, goes back in time, does not decode); `field` is the
    /// line's field at fault: `input`, `at` or `value`.
    Refused {
        errors: Vec<DecodeError>,
        why: String,
        field: &'static str,
    },
    /// The node would run, but an input is older than its `fresh` bound: a `stale_input`
    /// refusal (why, naming the inputs); the stale values were dropped.
    Stale(String),
    /// The node runs on these inputs, in parameter order.
    Ready(Vec<Value>),
}

/// A session in progress for one node: the latest (and, for `zip`, new) value of each input.
pub struct Session<'x, 'p> {
    exec: &'x Executor<'p>,
    node: NodeId,
    ir: &'p NodeIr,
    combine: Combine,
    /// Per parameter: the value, when it was observed, and whether it is new since the last
    /// run (`zip`).
    held: Vec<Option<(Value, i64, bool)>>,
    fresh: BTreeMap<String, u64>,
    last_at: Option<i64>,
}

impl<'x, 'p> Session<'x, 'p> {
    /// A session of `node`, which must take several inputs combined `latest` or `zip` (checked
    /// here, with the externs a run could reach: see [`Executor::missing`]).
    pub fn new(
        exec: &'x Executor<'p>,
        node: NodeId,
        externs: &dyn super::ExternHost,
    ) -> Result<Session<'x, 'p>, Unrunnable> {
        let program = exec.program();
        let Some(ir) = program.node(node) else {
            return Err(Unrunnable {
                node: format!("#{}", node.0),
                missing: vec!["a node of that number in the program".to_owned()],
            });
        };
        let combine = match &ir.inputs {
            Some(inputs) if inputs.combine != Combine::Together => inputs.combine,
            _ => {
                return Err(Unrunnable {
                    node: ir.name.clone(),
                    missing: vec![
                        "`inputs { combine: latest }` or `zip` to take a session (a node with one input, or `together`, takes one document)".to_owned(),
                    ],
                })
            }
        };
        exec.runnable(node, externs)?;
        let fresh = ir
            .inputs
            .iter()
            .flat_map(|i| i.fresh.iter().cloned())
            .collect();
        Ok(Session {
            exec,
            node,
            ir,
            combine,
            held: vec![None; ir.params.len()],
            fresh,
            last_at: None,
        })
    }

    /// Takes one observation; runs the node when the inputs combine.
    pub fn observe(&mut self, observation: &Observation, env: &mut Env<'_>) -> Arrival {
        match self.combine(observation, None) {
            Combined::Waiting => Arrival::Waiting,
            Combined::Refused { errors, why, .. } => Arrival::Refused { errors, why },
            Combined::Stale(why) => Arrival::Ran(Box::new(self.stale_run(env, &why))),
            Combined::Ready(inputs) => match self.exec.run_inputs(self.node, inputs, env) {
                Ok(run) => Arrival::Ran(Box::new(run)),
                Err(unrunnable) => Arrival::Refused {
                    errors: Vec::new(),
                    why: unrunnable.to_string(),
                },
            },
        }
    }

    /// Takes one observation and says what it combines into, without running anything: for a
    /// host that runs the node its own way (a gateway reserving money for each run). `now_ms`:
    /// the host's clock, when it is later than the observation's `at` (a live session's
    /// freshness is measured at the time the node would run); `None` replays in the
    /// session's own time.
    pub fn combine(&mut self, observation: &Observation, now_ms: Option<i64>) -> Combined {
        let refused = |field: &'static str, why: String| Combined::Refused {
            errors: Vec::new(),
            why,
            field,
        };
        let Some(index) = self
            .ir
            .params
            .iter()
            .position(|p| p.name == observation.input)
        else {
            let names: Vec<&str> = self.ir.params.iter().map(|p| p.name.as_str()).collect();
            return refused(
                "input",
                format!(
                    "line {}: `{}` is not an input of `{}` (its inputs: {})",
                    observation.line,
                    observation.input,
                    self.ir.name,
                    names.join(", ")
                ),
            );
        };
        if self.last_at.is_some_and(|last| observation.at_ms < last) {
            return refused("at", format!(
                "line {}: observations must arrive in time order, and this one is older than the one before",
                observation.line
            ));
        }
        self.last_at = Some(observation.at_ms);
        let program = self.exec.program();
        let param = &self.ir.params[index];
        let max = usize::try_from(program.limits.max_input_bytes).unwrap_or(usize::MAX);
        let value = match Decoder::new(&program.types)
            .with_max_input_bytes(max)
            .decode_str(observation.value.get(), &param.ty, &param.name)
        {
            Ok(v) => v,
            Err(errors) => {
                return Combined::Refused {
                    why: format!(
                        "line {}: the value of `{}` does not decode",
                        observation.line, param.name
                    ),
                    errors,
                    field: "value",
                }
            }
        };
        self.held[index] = Some((value, observation.at_ms, true));
        let ready = match self.combine {
            Combine::Latest => self.held.iter().all(Option::is_some),
            Combine::Zip => self.held.iter().all(|h| h.as_ref().is_some_and(|h| h.2)),
            Combine::Together => false,
        };
        if !ready {
            return Combined::Waiting;
        }
        let now = now_ms.map_or(observation.at_ms, |n| n.max(observation.at_ms));
        let stale: Vec<(usize, i64, u64)> = self
            .held
            .iter()
            .enumerate()
            .filter_map(|(i, h)| {
                let (_, at, _) = h.as_ref()?;
                let bound = *self.fresh.get(&self.ir.params[i].name)?;
                let age = now.saturating_sub(*at);
                (age > i64::try_from(bound).unwrap_or(i64::MAX)).then_some((i, age, bound))
            })
            .collect();
        if !stale.is_empty() {
            let named: Vec<String> = stale
                .iter()
                .map(|(i, age, bound)| {
                    format!(
                        "`{}` is {age} ms old, its bound is {bound} ms",
                        self.ir.params[*i].name
                    )
                })
                .collect();
            for (i, _, _) in &stale {
                // A stale value is never combined: the node waits for a fresh one.
                self.held[*i] = None;
            }
            return Combined::Stale(named.join("; "));
        }
        Combined::Ready(
            self.held
                .iter_mut()
                .filter_map(|h| {
                    let held = h.as_mut()?;
                    held.2 = false;
                    Some(held.0.clone())
                })
                .collect(),
        )
    }

    /// The node this session feeds.
    pub fn node(&self) -> &'p NodeIr {
        self.ir
    }

    /// The receipt of a run refused as stale: nothing ran, nothing billed.
    fn stale_run(&self, env: &mut Env<'_>, why: &str) -> Run {
        self.exec
            .refused_run(self.ir, STALE_INPUT, format!("stale input: {why}"), env)
    }
}
