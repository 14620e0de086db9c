//! Benchmark `glue` (issue 6): the decoder aelc generates against the runtime decoder and
//! against `serde_json` derives, on the review payloads of `aelc_runtime::testing` (small ≈
//! 370 B, medium ≈ 20 KB, large ≈ 1 MB). The types are those payloads' types written in AEL
//! (`bench/`), compiled by this crate's build script into `$OUT_DIR/review_bench.rs`.
//!
//! - `glue`: the generated `reread::decode` — the runtime decoder driven by the embedded
//!   program, then the conversion into the generated types (typed, every bound held);
//! - `runtime`: `aelc_runtime::decode::Decoder` alone, bytes to a checked `Value`;
//! - `serde`: `serde_json::from_slice` into plain `#[derive(Deserialize)]` structs, no bounds,
//!   duplicate keys not refused (the floor);
//! - `serde-glue`: `serde_json::from_slice` into the generated types (their serde derives:
//!   bounds checked by the checked constructors, but not the decoder's rules on duplicate
//!   keys, integral floats or error paths).
//!
//! Each round times every contender once per payload in an order that rotates per round, so
//! drift of the machine hits all alike; the table reports medians of the per-round ratios.
//! Run: `cargo bench -p review-rs --bench glue`; `GLUE_ROUNDS=5` shortens it.

use std::hint::black_box;
use std::time::{Duration, Instant};

use aelc_runtime::decode::Decoder;
use aelc_runtime::testing::review_json;
use aelc_runtime::ty::{DefId, Ty};
use serde::Deserialize;

#[allow(clippy::all, dead_code)]
mod bench_glue {
    include!(concat!(env!("OUT_DIR"), "/review_bench.rs"));
}

#[allow(dead_code)] // read by nobody: the point is building them
#[derive(Deserialize)]
struct Review {
    summary: String,
    score: f64,
    findings: Vec<Finding>,
    verdict: Verdict,
}

#[allow(dead_code)]
#[derive(Deserialize)]
struct Finding {
    line: u32,
    severity: Severity,
    message: String,
    suggestion: Option<String>,
    tags: Vec<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Severity {
    Low,
    Medium,
    High,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Verdict {
    Approve,
    RequestChanges { reasons: Vec<String> },
    Comment { text: String },
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs.get(xs.len() / 2).copied().unwrap_or(f64::NAN)
}

fn time(iters: u32, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        f();
    }
    start.elapsed() / iters
}

const NAMES: [&str; 4] = ["glue", "runtime", "serde", "serde-glue"];

fn main() {
    let program = bench_glue::program();
    let review = program
        .types
        .defs
        .iter()
        .position(|d| d.name == "Review")
        .map(|i| Ty::Ref {
            def: DefId(i as u32),
        });
    let Some(ty) = review else {
        eprintln!("the generated program has no Review type");
        std::process::exit(2);
    };
    let mut decoder = Decoder::new(&program.types).with_max_input_bytes(8 << 20);
    let rounds: usize = std::env::var("GLUE_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(15);
    let payloads = [
        ("small", review_json(1), 4000u32),
        ("medium", review_json(100), 60),
        ("large", review_json(5000), 2),
    ];
    println!("glue benchmark: {rounds} rounds, medians; ratios are medians of per-round ratios");
    println!(
        "{:<7} {:>9} {:>11} {:>11} {:>11} {:>11} {:>13} {:>12} {:>16}",
        "payload",
        "bytes",
        NAMES[0],
        NAMES[1],
        NAMES[2],
        NAMES[3],
        "glue/runtime",
        "glue/serde",
        "serde-glue/serde"
    );
    for (name, doc, iters) in &payloads {
        let bytes = doc.as_bytes();
        // Every contender must accept the payload, or the comparison means nothing.
        let ok = [
            bench_glue::reread::decode(bytes).is_ok(),
            decoder.decode(bytes, &ty, "review").is_ok(),
            serde_json::from_slice::<Review>(bytes).is_ok(),
            serde_json::from_slice::<bench_glue::Review>(bytes).is_ok(),
        ];
        if ok.contains(&false) {
            eprintln!("{name}: a contender rejects the payload: {NAMES:?} {ok:?}");
            std::process::exit(1);
        }
        let mut samples: [Vec<f64>; 4] = Default::default();
        for round in 0..rounds {
            for k in 0..4 {
                let which = (k + round) % 4;
                let t = match which {
                    0 => time(*iters, || {
                        black_box(bench_glue::reread::decode(black_box(bytes)).is_ok());
                    }),
                    1 => time(*iters, || {
                        black_box(decoder.decode(black_box(bytes), &ty, "review").is_ok());
                    }),
                    2 => time(*iters, || {
                        black_box(serde_json::from_slice::<Review>(black_box(bytes)).is_ok());
                    }),
                    _ => time(*iters, || {
                        black_box(
                            serde_json::from_slice::<bench_glue::Review>(black_box(bytes)).is_ok(),
                        );
                    }),
                };
                if let Some(s) = samples.get_mut(which) {
                    s.push(t.as_secs_f64());
                }
            }
        }
        let [glue, runtime, serde, serde_glue] = samples;
        let ratio = |a: &[f64], b: &[f64]| median(a.iter().zip(b).map(|(x, y)| x / y).collect());
        let us = |xs: &[f64]| format!("{:.1} µs", median(xs.to_vec()) * 1e6);
        println!(
            "{:<7} {:>9} {:>11} {:>11} {:>11} {:>11} {:>12.2}x {:>11.2}x {:>15.2}x",
            name,
            bytes.len(),
            us(&glue),
            us(&runtime),
            us(&serde),
            us(&serde_glue),
            ratio(&glue, &runtime),
            ratio(&glue, &serde),
            ratio(&serde_glue, &serde),
        );
    }
}
