//! `aelc run NODE --session F.jsonl` for a node whose parameter is a stream (spec §7.1, §12.1):
//! the file's chunk envelopes go through the runtime's bounded stream buffer
//! (`aelc_runtime::stream`), every limit enforced, and the node runs on the chunks buffered.
//!
//! A recorded stream replays in its own time: the stream's clock is the `at` of the newest
//! chunk, so `fresh`, `rate` and `duration` judge the recording the same way on every run.
//! When `on_full: pause` stops the producer (this file), the node runs on the chunks buffered
//! so far, which frees the buffer, and reading goes on; a `rate` pause moves the recording's
//! clock on by the wait. At `{"end": "complete"}` the node runs on what is buffered. A stream
//! that ends otherwise (cut before its end, an error or cancel record, a refused line) is never
//! complete: its last run is refused (a receipt with `rejected_input` and the end's code).
//!
//! **A stream beside other inputs** (`node watch(readings: Readings, limit: Limit)`, spec
//! §6 "several inputs"): every line names its input, the stream's chunk envelopes as
//! `{"input": "readings", "seq": …, "at": …, "value": …}` (and its end record as
//! `{"input": "readings", "end": "complete"}`), the other inputs' observations as in a
//! session, `{"input": "limit", "at": …, "value": …}`. The node runs when the stream's chunks
//! are taken (as above), with the latest value of each other input; an input with no value
//! yet, or one older than its `fresh` bound then, refuses that run (`missing_input`,
//! `stale_input`), never combined. One stream per node.
//!
//! Output as for a session: each run's output (when there is one) and receipt, one JSON line
//! each, on stdout; refusals on stderr; a summary of what the buffer did on stderr. Exit 0 when
//! the stream was complete and every run succeeded.

use std::io::Write;
use std::path::Path;

use aelc_runtime::decode::Decoder;
use aelc_runtime::exec::{parse_observation, session_line_bound, Env, Executor, Run, STALE_INPUT};
use aelc_runtime::pipeline::{ManualClock, Status as RunStatus};
use aelc_runtime::stream::{self, Envelope, Offered, StreamEnd};
use aelc_runtime::value::Value;

use super::{read, Output, Status};
use crate::ir::{NodeId, NodeIr};

pub fn run_stream(
    out: &Output,
    exec: &Executor<'_>,
    node: NodeId,
    ir: &NodeIr,
    stream_index: u32,
    path: &Path,
    env: &mut Env<'_>,
) -> Status {
    let clock = ManualClock::at(0);
    let (mut writer, reader) =
        match stream::channel(exec.program(), stream_index, Box::new(clock.clone())) {
            Ok(ends) => ends,
            Err(message) => return out.fatal(&message),
        };
    let line_bytes = writer.line_bytes();
    // With other inputs, a line names its input: room for the name, and for an observation.
    let others = Others::new(exec, ir, stream_index);
    let bound = if others.named {
        line_bytes.max(session_line_bound(exec.program().limits.max_input_bytes))
    } else {
        line_bytes
    };
    let mut lines = match read::lines(path, bound) {
        Ok(lines) => lines,
        Err(message) => return out.fatal(&message),
    };
    let shown = path.display();
    let mut all_ok = true;
    let mut number = 0usize;
    let mut others = others;
    let runner = |chunks: Vec<Value>, others: &Others, env: &mut Env<'_>| -> bool {
        let inputs = match others.inputs(chunks, clock.get()) {
            Ok(inputs) => inputs,
            Err((code, why)) => return print_run(&exec.refused_run(ir, code, why, env)),
        };
        match exec.run_inputs(node, inputs, env) {
            Ok(run) => print_run(&run),
            Err(e) => {
                super::eprint_line(&format!("error: {e}"));
                false
            }
        }
    };
    loop {
        number += 1;
        let text = match lines.next_line() {
            Ok(Some(text)) => text,
            Ok(None) => break,
            Err(_) => {
                super::eprint_line(&format!(
                    "error: {shown}: line {number}: `chunk`: the line is longer than a chunk of `{}` can be ({line_bytes} bytes with its envelope; see its `chunk` limit)",
                    reader.limits().name
                ));
                all_ok = false;
                break;
            }
        };
        let text = if others.named {
            match others.take_line(number, &text) {
                Ok(Some(chunk_line)) => chunk_line,
                Ok(None) => {
                    // An observation of another input: its time moves the clock on.
                    clock.advance_to(others.last_at);
                    continue;
                }
                Err(message) => {
                    super::eprint_line(&format!("error: {shown}: line {number}: {message}"));
                    all_ok = false;
                    break;
                }
            }
        } else {
            text
        };
        if let Ok(Some(Envelope::Chunk(c))) = stream::parse_envelope(number, &text, line_bytes) {
            // The recording's time: the newest chunk's `at`.
            clock.advance_to(c.at_ms);
        }
        let (envelope, mut offered) = match writer.try_send(&text) {
            Ok(Some(sent)) => sent,
            Ok(None) => continue,
            Err(e) => {
                super::eprint_line(&format!("error: {shown}: {e}"));
                all_ok = false;
                break;
            }
        };
        loop {
            match offered {
                Offered::Full => {
                    // The producer is paused: the node takes what is buffered, making room.
                    all_ok &= runner(reader.take().chunks, &others, env);
                }
                Offered::Wait(ms) => clock.advance(i64::try_from(ms).unwrap_or(i64::MAX)),
                _ => break,
            }
            offered = match writer.try_send_envelope(&envelope) {
                Ok(o) => o,
                Err(e) => {
                    super::eprint_line(&format!("error: {shown}: {e}"));
                    all_ok = false;
                    break;
                }
            };
        }
        if reader.end().is_some() {
            break;
        }
    }
    // Whatever follows the end record is not read; a file that stops before it cuts the stream.
    drop(writer);
    let taken = reader.take();
    let stats = reader.stats();
    let limits = reader.limits();
    super::eprint_line(&format!(
        "note: stream `{}`: {} chunks accepted, {} duplicate, {} stale, {} over rate, {} dropped oldest, {} dropped newest, {} aged out, {} pauses; at most {} of {} buffer bytes held",
        limits.name,
        stats.accepted,
        stats.duplicates,
        stats.stale,
        stats.over_rate,
        stats.dropped_oldest,
        stats.dropped_newest,
        stats.expired,
        stats.paused,
        stats.peak_bytes,
        limits.buffer_bytes
    ));
    match taken.end.unwrap_or(StreamEnd::Cut) {
        StreamEnd::Complete => all_ok &= runner(taken.chunks, &others, env),
        end => {
            let run = exec.refused_run(ir, end.code(), end.describe(), env);
            print_run(&run);
            all_ok = false;
        }
    }
    if all_ok {
        Status::Ok
    } else {
        Status::Failed
    }
}

/// Prints a run as `aelc run` does; whether it succeeded.
fn print_run(run: &Run) -> bool {
    if let Some(why) = &run.refusal {
        super::eprint_line(&format!("error: {why}"));
    }
    let mut stdout = std::io::stdout();
    if let Some(json) = &run.outcome.output_json {
        let _ = writeln!(stdout, "{json}");
    }
    let _ = writeln!(stdout, "{}", run.receipt.to_json_string());
    run.outcome.status == RunStatus::Succeeded
}

/// The inputs of a stream node other than its stream: their latest values, from lines that
/// name them (see the module doc).
struct Others<'p> {
    /// Whether lines name their input (the node has more than its stream).
    named: bool,
    ir: &'p NodeIr,
    program: &'p aelc_runtime::program::Program,
    /// The stream parameter's index.
    stream_param: usize,
    /// Per parameter: the latest value and when it was observed.
    held: Vec<Option<(Value, i64)>>,
    /// The time of the last observation taken.
    last_at: i64,
}

impl<'p> Others<'p> {
    fn new(exec: &Executor<'p>, ir: &'p NodeIr, stream_index: u32) -> Others<'p> {
        Others {
            named: ir.params.len() > 1,
            ir,
            program: exec.program(),
            stream_param: ir
                .params
                .iter()
                .position(|p| p.stream == Some(stream_index))
                .unwrap_or(0),
            held: vec![None; ir.params.len()],
            last_at: i64::MIN,
        }
    }

    /// Reads a line naming its input: the stream's envelope without its `input` (to go into
    /// the buffer), or `None` for an observation of another input, taken here.
    fn take_line(&mut self, number: usize, text: &str) -> Result<Option<String>, String> {
        if text.trim().is_empty() {
            return Ok(Some(String::new()));
        }
        let mut object: serde_json::Map<String, serde_json::Value> = serde_json::from_str(text)
            .map_err(|e| {
                format!("`line`: {e}; each line is a chunk or an observation naming its `input`")
            })?;
        let names: Vec<&str> = self.ir.params.iter().map(|p| p.name.as_str()).collect();
        let input = match object.remove("input") {
            Some(serde_json::Value::String(name)) => name,
            _ => {
                return Err(format!(
                    "`input`: each line names the input it is for (one of {})",
                    names.join(", ")
                ))
            }
        };
        let Some(index) = self.ir.params.iter().position(|p| p.name == input) else {
            return Err(format!(
                "`input`: `{input}` is not an input of `{}` (its inputs: {})",
                self.ir.name,
                names.join(", ")
            ));
        };
        if index == self.stream_param {
            return Ok(Some(serde_json::Value::Object(object).to_string()));
        }
        let observation = parse_observation(number, text)
            .map_err(|e| format!("`{}`: {}", e.field, e.message))?
            .ok_or_else(|| "`line`: an empty observation".to_owned())?;
        let param = &self.ir.params[index];
        let max = usize::try_from(self.program.limits.max_input_bytes).unwrap_or(usize::MAX);
        let value = Decoder::new(&self.program.types)
            .with_max_input_bytes(max)
            .decode_str(observation.value.get(), &param.ty, &param.name)
            .map_err(|errors| {
                let why: Vec<String> = errors.iter().map(|e| e.message.clone()).collect();
                format!("`value`: {}", why.join("; "))
            })?;
        if observation.at_ms < self.last_at {
            return Err("`at`: observations must arrive in time order".to_owned());
        }
        self.last_at = observation.at_ms;
        self.held[index] = Some((value, observation.at_ms));
        Ok(None)
    }

    /// The node's inputs for a run on `chunks` at `now`: the chunks for the stream, the latest
    /// value of each other input; or the refusal's code and why.
    fn inputs(&self, chunks: Vec<Value>, now: i64) -> Result<Vec<Value>, (&'static str, String)> {
        let mut chunks = Some(chunks);
        let fresh = self
            .ir
            .inputs
            .as_ref()
            .map(|i| i.fresh.as_slice())
            .unwrap_or(&[]);
        let mut out = Vec::with_capacity(self.ir.params.len());
        for (i, param) in self.ir.params.iter().enumerate() {
            if i == self.stream_param {
                out.push(Value::List(chunks.take().unwrap_or_default()));
                continue;
            }
            let Some((value, at)) = &self.held[i] else {
                return Err((
                    "missing_input",
                    format!("`{}` has no value yet, so the node cannot run", param.name),
                ));
            };
            let bound = fresh
                .iter()
                .find(|(n, _)| *n == param.name)
                .map(|(_, b)| *b);
            let age = now.saturating_sub(*at);
            if let Some(bound) = bound.filter(|b| age > i64::try_from(*b).unwrap_or(i64::MAX)) {
                return Err((
                    STALE_INPUT,
                    format!(
                        "stale input: `{}` is {age} ms old, its bound is {bound} ms",
                        param.name
                    ),
                ));
            }
            out.push(value.clone());
        }
        Ok(out)
    }
}
