//! The stream part of the `run` bench: what the rules of spec §7.1 and the node cost per chunk,
//! against the limit of moving the same lines through a bounded tokio `mpsc` channel.
//!
//! Contenders, on the same N chunk lines (about 90 bytes each), producer and consumer as two
//! tasks on one current-thread runtime:
//! - **mpsc**: `tokio::sync::mpsc::channel` bounded to as many lines as the stream's `buffer`
//!   holds; the consumer counts bytes. No parsing, no checks: the floor.
//! - **stream**: `aelc_runtime::stream` under `on_full: pause`: each line parsed, its `chunk`
//!   size, sequence number, freshness, rate, duration and type checked, buffered within
//!   `buffer` bytes; the consumer takes what is buffered.
//! - **stream+node**: the same, and each batch taken runs `monitor` through the executor
//!   (its body over the list of chunks, a receipt per run).
//!
//! Then a burst: N chunks offered with no consumer under `drop_oldest`: the buffer's peak bytes
//! (its own count) and the growth of the process's peak resident memory (Linux `VmHWM`).
//! `RUN_STREAM_CHUNKS=N` (default 200,000), `RUN_STREAM_ROUNDS=N` (default 5).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use aelc::driver::{self, DiskWorld};
use aelc_runtime::exec::{Env, Executor, Externs};
use aelc_runtime::model::ReplayModel;
use aelc_runtime::pipeline::{ManualClock, TickClock};
use aelc_runtime::receipt::UuidIds;
use aelc_runtime::stream::{self, Limits, OnFull, Rule};
use aelc_runtime::value::Value;

/// 2026-12-02T14:00:00Z: every chunk's `at`, and the stream's clock.
const T0: i64 = 1_796_220_000_000;

fn lines(n: usize) -> Vec<String> {
    (1..=n)
        .map(|seq| {
            format!(
                r#"{{"seq": {seq}, "at": "2026-12-02T14:00:00Z", "value": {{"sensor": "hall-1", "tenths": {}}}}}"#,
                seq % 1000
            )
        })
        .collect()
}

/// The Readings limits of the example, opened up so that every chunk passes every rule (a
/// rate and a duration no bench reaches): the checks run, nothing is dropped.
fn limits(program: &aelc::ir::Program, on_full: OnFull) -> Limits {
    let mut limits = Limits::from_ir(&program.streams[0]).expect("the example's stream");
    limits.rate_per_second = 1e12;
    limits.duration_ms = u64::MAX / 2;
    limits.on_full = on_full;
    limits.duplicates = Rule::Discard;
    limits.stale = Rule::Discard;
    limits
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

pub fn main() {
    let n = super::env_usize("RUN_STREAM_CHUNKS", 200_000);
    let rounds = super::env_usize("RUN_STREAM_ROUNDS", 5);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sensors");
    let compilation = driver::check_path(&DiskWorld, &root).expect("the sensors example reads");
    let program = compilation.program.expect("the sensors example checks");
    let exec = Executor::new(&program, aelc::driver::run::schemas(&program));
    let node_ir = aelc::driver::project::find_node(&program, "monitor").expect("monitor");
    let node = aelc::driver::run::node_id(&program, node_ir);
    let table = Arc::new(program.types.clone());
    let lines = lines(n);
    let line_bytes = lines[0].len();
    let pause = limits(&program, OnFull::Pause);
    let capacity = (pause.buffer_bytes as usize / line_bytes).max(1);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");

    let mpsc_once = || {
        rt.block_on(async {
            let (tx, mut rx) = tokio::sync::mpsc::channel::<String>(capacity);
            let producer = {
                let lines = lines.clone();
                tokio::spawn(async move {
                    for line in lines {
                        if tx.send(line).await.is_err() {
                            break;
                        }
                    }
                })
            };
            let start = Instant::now();
            let mut bytes = 0usize;
            while let Some(line) = rx.recv().await {
                bytes += line.len();
            }
            let elapsed = start.elapsed();
            let _ = producer.await;
            assert_eq!(bytes, lines.iter().map(String::len).sum::<usize>());
            elapsed
        })
    };
    let stream_once = |with_node: bool| {
        rt.block_on(async {
            let (mut w, r) = stream::channel_with(
                pause.clone(),
                Arc::clone(&table),
                Box::new(ManualClock::at(T0)),
            );
            let producer = {
                let lines = lines.clone();
                tokio::spawn(async move {
                    for line in &lines {
                        w.send(line).await.expect("every chunk passes");
                    }
                    w.send(r#"{"end": "complete"}"#).await.expect("one end");
                })
            };
            let start = Instant::now();
            let mut externs = Externs::new();
            let mut model = ReplayModel::new([]);
            let (mut chunks, mut runs) = (0usize, 0usize);
            loop {
                let taken = r.next().await;
                chunks += taken.chunks.len();
                if with_node && !taken.chunks.is_empty() {
                    let mut env = Env {
                        model: &mut model,
                        clock: &mut TickClock::default(),
                        ids: &mut UuidIds,
                        externs: &mut externs,
                        check_accepts: false,
                        media: None,
                    };
                    let run = exec
                        .run_inputs(node, vec![Value::List(taken.chunks)], &mut env)
                        .expect("monitor runs");
                    assert!(run.outcome.output.is_some(), "{:?}", run.refusal);
                    runs += 1;
                }
                if taken.end.is_some() && r.buffered() == 0 {
                    break;
                }
            }
            let elapsed = start.elapsed();
            let _ = producer.await;
            assert_eq!(chunks, n);
            assert!(r.stats().peak_bytes <= pause.buffer_bytes);
            (elapsed, runs)
        })
    };

    let (mut a, mut b, mut c, mut runs) = (Vec::new(), Vec::new(), Vec::new(), 0);
    for _ in 0..rounds {
        a.push(n as f64 / mpsc_once().as_secs_f64());
        b.push(n as f64 / stream_once(false).0.as_secs_f64());
        let (elapsed, r) = stream_once(true);
        c.push(n as f64 / elapsed.as_secs_f64());
        runs = r;
    }
    let (a, b, c) = (median(&mut a), median(&mut b), median(&mut c));
    println!(
        "stream ({n} chunks of {line_bytes} B, buffer {} B ≈ {capacity} chunks, {rounds} rounds, median): mpsc {:.0} chunks/s, stream {:.0} chunks/s ({:.1}× slower), stream+node {:.0} chunks/s ({:.1}× slower; {runs} runs of monitor)",
        pause.buffer_bytes,
        a,
        b,
        a / b,
        c,
        a / c
    );

    // A burst with no consumer: the buffer keeps the newest within `buffer`.
    let before = peak_rss_kib();
    let (mut w, r) = stream::channel_with(
        limits(&program, OnFull::DropOldest),
        Arc::clone(&table),
        Box::new(ManualClock::at(T0)),
    );
    for line in &lines {
        w.try_send(line).expect("every chunk passes");
    }
    let stats = r.stats();
    let after = peak_rss_kib();
    println!(
        "stream burst ({n} chunks, drop_oldest, no consumer): {} chunks kept, peak {} of {} buffer bytes, {} dropped oldest; process peak RSS grew {} KiB; a bounded mpsc of {capacity} lines holds at most {} B",
        r.buffered(),
        stats.peak_bytes,
        pause.buffer_bytes,
        stats.dropped_oldest,
        match (before, after) {
            (Some(b), Some(a)) => a.saturating_sub(b).to_string(),
            _ => "?".to_owned(),
        },
        capacity * line_bytes
    );
}
