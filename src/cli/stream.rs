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
//! Output as for a session: each run's output (when there is one) and receipt, one JSON line
//! each, on stdout; refusals on stderr; a summary of what the buffer did on stderr. Exit 0 when
//! the stream was complete and every run succeeded.

use std::io::Write;
use std::path::Path;

use aelc_runtime::exec::{Env, Executor, Run};
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
    let mut lines = match read::lines(path, line_bytes) {
        Ok(lines) => lines,
        Err(message) => return out.fatal(&message),
    };
    let shown = path.display();
    let mut all_ok = true;
    let mut number = 0usize;
    let runner = |chunks: Vec<Value>, env: &mut Env<'_>| -> bool {
        match exec.run_inputs(node, vec![Value::List(chunks)], env) {
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
                    "error: {shown}: line {number}: `value`: the line is longer than a chunk of `{}` can be ({line_bytes} bytes with its envelope; see its `chunk` limit)",
                    reader.limits().name
                ));
                all_ok = false;
                break;
            }
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
                    all_ok &= runner(reader.take().chunks, env);
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
        StreamEnd::Complete => all_ok &= runner(taken.chunks, env),
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
