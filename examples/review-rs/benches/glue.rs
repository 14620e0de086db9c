//! Benchmark `glue` (issue 6): the decoder aelc generates against the runtime decoder and
//! against `serde_json` derives, on the review payloads of `aelc_runtime::testing`, both kinds
//! (issue 42): the escape-free review documents (`review_json`: small ≈ 370 B, medium ≈ 20 KB,
//! large ≈ 1 MB) and the same reviews as a model writes them, escaped every few bytes
//! (`model_output_json`: 328 B, 19.7 KB, 1.04 MB; the runtime `decode` bench's payloads). The
//! types are those payloads' types written in AEL (`bench/`), compiled by this crate's build
//! script into `$OUT_DIR/review_bench.rs`.
//!
//! - `glue`: the generated `reread::decode` — the runtime decoder driven by the embedded
//!   program, straight into the generated types (`rt::Decode`, issue 23: no `Value` between;
//!   typed, every bound held, the runtime's errors);
//! - `runtime`: `aelc_runtime::decode::Decoder` alone, bytes to a checked `Value`;
//! - `via-value`: the glue's decode before issue 23, the baseline: the runtime decoder's
//!   `Value`s (`rt::decode_input`), then the conversion (`from_values`);
//! - `serde`: `serde_json::from_slice` into plain `#[derive(Deserialize)]` structs, no bounds,
//!   duplicate keys not refused (the floor);
//! - `serde-glue`: `serde_json::from_slice` into the generated types (their serde derives:
//!   bounds checked by the checked constructors, but not the decoder's rules on duplicate
//!   keys, integral floats or error paths).
//!
//! Each round times every contender once per payload in an order that rotates per round, so
//! drift of the machine hits all alike; the table reports medians of the per-round ratios
//! (`aelc_runtime::testing::rounds`, shared with the runtime's `decode` bench).
//! Every contender runs on mimalloc, the allocator the `aelc` binaries ship with.
//! Run: `cargo bench -p review-rs --bench glue`; `GLUE_ROUNDS=5` shortens it, `GLUE_PAYLOADS=plain`
//! or `model` runs one kind. The targets: `glue/serde-glue` within 1.1x (issue 23) and
//! `glue/serde` within 1.1x on both kinds (issue 42). `GLUE_PROFILE=glue` (or `runtime`,
//! `serde`, `serde-glue`, `via-value`; `GLUE_PROFILE=glue:4500:10` for copies and runs) only
//! runs that contender on the large payload of the kind `GLUE_PAYLOADS` names (model output
//! unless `plain`), untimed, for a profiler (`valgrind --tool=callgrind`).

use std::hint::black_box;

use aelc_runtime::decode::Decoder;
use aelc_runtime::testing::payloads::{kinds, payload, sizes, Profile};
use aelc_runtime::testing::rounds::{interleaved, median_ratio, micros};
use aelc_runtime::ty::{DefId, Ty};
use serde::Deserialize;

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

const NAMES: [&str; 5] = ["glue", "runtime", "serde", "serde-glue", "via-value"];

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
    // One call of each contender, the same for the check that all accept a payload and for
    // the timed rounds.
    let mut run = |which: usize, bytes: &[u8]| -> bool {
        match which {
            0 => bench_glue::reread::decode(bytes).is_ok(),
            1 => decoder.decode(bytes, &ty, "review").is_ok(),
            2 => serde_json::from_slice::<Review>(bytes).is_ok(),
            3 => serde_json::from_slice::<bench_glue::Review>(bytes).is_ok(),
            _ => {
                let exec = bench_glue::executor();
                aelc_runtime::glue::decode_input(exec, bench_glue::reread::INDEX, bytes)
                    .is_ok_and(|values| bench_glue::reread::from_values(values).is_ok())
            }
        }
    };
    if let Ok(request) = std::env::var("GLUE_PROFILE") {
        profile(&request, &mut run);
        return;
    }
    let iterations = [4000u32, 60, 2];
    for kind in kinds("GLUE_PAYLOADS") {
        let payloads: [(&str, String, u32); 3] = std::array::from_fn(|i| {
            let (name, findings) = sizes(kind)[i];
            (name, payload(kind, findings), iterations[i])
        });
        table(kind, rounds, &payloads, &mut run);
    }
}

/// `GLUE_PROFILE=contender[:copies[:runs]]`: `runs` (default ten) calls of one contender on a
/// payload of `copies` findings (default: the large one), no timing.
fn profile(request: &str, run: &mut dyn FnMut(usize, &[u8]) -> bool) {
    let profile = Profile::parse(request, &NAMES, "GLUE_PAYLOADS").unwrap_or_else(|e| {
        eprintln!("GLUE_PROFILE {e}");
        std::process::exit(2);
    });
    for _ in 0..profile.runs {
        black_box(run(profile.which, black_box(profile.payload.as_bytes())));
    }
}

/// One table: every contender on the three payloads of `kind`.
fn table(
    kind: &str,
    rounds: usize,
    payloads: &[(&str, String, u32)],
    run: &mut dyn FnMut(usize, &[u8]) -> bool,
) {
    println!(
        "glue benchmark, {kind} payloads: {rounds} rounds, medians; ratios are medians of per-round ratios"
    );
    println!(
        "{:<7} {:>9} {:>11} {:>11} {:>11} {:>11} {:>11} {:>13} {:>12} {:>17} {:>16} {:>17}",
        "payload",
        "bytes",
        NAMES[0],
        NAMES[1],
        NAMES[2],
        NAMES[3],
        NAMES[4],
        "glue/runtime",
        "glue/serde",
        "glue/serde-glue",
        "serde-glue/serde",
        "via-value/serde"
    );
    for (name, doc, iters) in payloads {
        let bytes = doc.as_bytes();
        // Every contender must accept the payload, or the comparison means nothing.
        let ok: [bool; 5] = std::array::from_fn(|k| run(k, bytes));
        if ok.contains(&false) {
            eprintln!("{name}: a contender rejects the payload: {NAMES:?} {ok:?}");
            std::process::exit(1);
        }
        let [glue, runtime, serde, serde_glue, via_value] = interleaved::<5>(rounds, *iters, |k| {
            black_box(run(k, black_box(bytes)));
        });
        println!(
            "{:<7} {:>9} {:>11} {:>11} {:>11} {:>11} {:>11} {:>12.2}x {:>11.2}x {:>16.2}x {:>15.2}x {:>16.2}x",
            name,
            bytes.len(),
            micros(&glue),
            micros(&runtime),
            micros(&serde),
            micros(&serde_glue),
            micros(&via_value),
            median_ratio(&glue, &runtime),
            median_ratio(&glue, &serde),
            median_ratio(&glue, &serde_glue),
            median_ratio(&serde_glue, &serde),
            median_ratio(&via_value, &serde),
        );
    }
    println!();
}
