//! Benchmark `decode`: our typed decoder against the two usual ways of reading model output,
//! side by side on the same review payloads of two kinds (issue 42 holds both to 1.1x of serde
//! derive): written as a model writes them (small 328 B, medium 19.7 KB, large 1.04 MB; strings
//! with escapes hold over half the string bytes: `aelc_runtime::testing::model_output_json`),
//! and the escape-free review documents (about 0.3 KB, 20 KB and 1 MB:
//! `aelc_runtime::testing::review_json`).
//!
//! - `ours`: `aelc_runtime::decode::Decoder::decode` — bytes to a typed value with every bound
//!   checked, duplicate keys rejected, integral floats accepted;
//! - `str`: the same from a `&str` (`Decoder::decode_str`: no UTF-8 check up front), as a
//!   model's answer arrives;
//! - `serde`: `serde_json::from_slice` into `#[derive(Deserialize)]` structs, no validation at
//!   all (the limit); `serde-str` the same from a `&str` (`serde_json::from_str`), the yardstick
//!   of `str`;
//! - `schema`: `serde_json::Value` + the `jsonschema` crate on an equivalent hand-written schema
//!   (patterns on the `regex` engine);
//! - `pipeline`: steps 3–7 (`Pipeline::process`: decode, one output check, no transform, accept);
//! - `pydantic`: pydantic v2's `Review.model_validate_json` on the same bytes, with models of the
//!   same bounds (`benches/pydantic_review.py`), when `PYDANTIC_PYTHON` names a Python that has
//!   pydantic (`PYDANTIC_PYTHON=/tmp/bench-venv/bin/python`). It runs in its own process, which
//!   times each sample itself, in turn with the others in every round.
//!
//! Each round times every contender once per payload (a sample of about 40 ms, so a busy
//! machine's scheduling hits few of them), in an order that rotates per round, so drift of the
//! machine hits all of them alike; the table reports the median of the per-round ratios. Run:
//! `cargo bench -p aelc-runtime --bench decode` (about a minute; 21 rounds, a table per kind of
//! payload). `DECODE_ROUNDS=5` shortens it, `DECODE_PAYLOADS=model` or `plain` runs one kind;
//! `DECODE_PROFILE=ours` (or `str`, `serde`, `serde-str`, `schema`, `pipeline`) only runs that
//! contender, for a profiler. The rounds are `aelc_runtime::testing::rounds`, shared with the
//! `glue` bench.
//!
//! Then the hostile payloads of spec §8 — a 1 MB `[[[[…` (1,048,576 deep) and 10,010,001 tiny
//! values in 20 MB — each refused by the pre-scan: the time to the verdict next to the time
//! `serde_json` takes to parse the same bytes into a `Value`, and the growth of the process's
//! peak resident memory while ours refused it (Linux `VmHWM`; measured before serde runs).

use aelc_runtime::decode::Decoder;
use aelc_runtime::eval::NoHost;
use aelc_runtime::expr::{BinaryOp, Check, Expr, FnDef, Method, Param, Require};
use aelc_runtime::model::FinishReason;
use aelc_runtime::pipeline::Pipeline;
use aelc_runtime::stage::{Arg, IrStage, StageCheck};
use aelc_runtime::testing::payloads::{kinds, payload, sizes, Profile};
use aelc_runtime::testing::rounds::{interleaved_timed, median, median_ratio, micros, seconds};
use aelc_runtime::testing::{named, review_types, REVIEW};
use aelc_runtime::validate::Validator;
use aelc_runtime::value::Value;
use serde::Deserialize;
use std::hint::black_box;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

#[allow(dead_code)] // fields are read by nobody: the point is building them
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

fn review_schema() -> serde_json::Value {
    serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": "#/$defs/Review",
        "$defs": {
            "Severity": {"enum": ["low", "medium", "high"]},
            "Finding": {
                "type": "object",
                "additionalProperties": false,
                "required": ["line", "severity", "message", "tags"],
                "properties": {
                    "line": {"type": "integer", "minimum": 1, "maximum": 4294967295u64},
                    "severity": {"$ref": "#/$defs/Severity"},
                    "message": {"type": "string", "maxLength": 500},
                    "suggestion": {"anyOf": [{"type": "string", "maxLength": 500}, {"type": "null"}]},
                    "tags": {"type": "array", "items": {"type": "string", "maxLength": 32}, "maxItems": 8, "uniqueItems": true}
                }
            },
            "Verdict": {
                "oneOf": [
                    {"type": "object", "additionalProperties": false, "required": ["kind"],
                     "properties": {"kind": {"const": "approve"}}},
                    {"type": "object", "additionalProperties": false, "required": ["kind", "reasons"],
                     "properties": {"kind": {"const": "request_changes"},
                                    "reasons": {"type": "array", "items": {"type": "string", "maxLength": 200}, "minItems": 1, "maxItems": 20}}},
                    {"type": "object", "additionalProperties": false, "required": ["kind", "text"],
                     "properties": {"kind": {"const": "comment"}, "text": {"type": "string", "maxLength": 1000}}}
                ]
            },
            "Review": {
                "type": "object",
                "additionalProperties": false,
                "required": ["summary", "score", "findings", "verdict"],
                "properties": {
                    "summary": {"type": "string", "maxLength": 2000},
                    "score": {"type": "number", "minimum": 0.0, "maximum": 1.0},
                    "findings": {"type": "array", "items": {"$ref": "#/$defs/Finding"}, "maxItems": 10000},
                    "verdict": {"$ref": "#/$defs/Verdict"}
                }
            }
        }
    })
}

/// `check within_limit(output: Review) { require output.findings.len() <= 10000 else too_many; }`
fn within_limit() -> Check {
    Check {
        name: "within_limit".into(),
        params: vec![Param {
            name: "output".into(),
            ty: named(REVIEW),
        }],
        locals: 1,
        requires: vec![Require {
            cond: Expr::binary(
                BinaryOp::Le,
                Expr::method(Expr::field(Expr::local(0), 2), Method::Len),
                Expr::constant(Value::Int(10_000)),
            ),
            code: "too_many".into(),
            message: None,
        }],
    }
}

/// The contenders, by the index `main`'s `run` takes.
const CONTENDERS: [&str; 6] = ["ours", "str", "serde", "serde-str", "schema", "pipeline"];

pub(crate) fn main() {
    let table = review_types();
    let ty = named(REVIEW);
    let schema = review_schema();
    let validator = match jsonschema::options()
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .build(&schema)
    {
        Ok(v) => v,
        Err(e) => {
            eprintln!("the benchmark schema does not compile: {e}");
            std::process::exit(2);
        }
    };
    let mut decoder = Decoder::new(&table).with_max_input_bytes(8 << 20);
    let mut value_validator = Validator::new(&table);
    let pipeline = Pipeline::new(&table, &ty, "primary_model", 8 << 20);
    let check = within_limit();
    let fns: Vec<FnDef> = Vec::new();
    let mut host = NoHost;
    let checks = vec![StageCheck::Ir {
        check: &check,
        args: vec![Arg::Output],
    }];
    let mut stage = IrStage::new(&fns, &mut host, &[], checks);
    // One call of each contender, the same for the check that all accept a payload, the timed
    // rounds and the profile mode.
    let mut run = |which: usize, doc: &str| -> bool {
        let bytes = doc.as_bytes();
        match which {
            0 => decoder.decode(bytes, &ty, "output").is_ok(),
            1 => decoder.decode_str(doc, &ty, "output").is_ok(),
            2 => serde_json::from_slice::<Review>(bytes).is_ok(),
            3 => serde_json::from_str::<Review>(doc).is_ok(),
            4 => serde_json::from_slice::<serde_json::Value>(bytes)
                .map(|v| validator.is_valid(&v))
                .unwrap_or(false),
            _ => pipeline
                .process(
                    &mut decoder,
                    &mut value_validator,
                    doc,
                    FinishReason::Stop,
                    &mut stage,
                )
                .is_ok(),
        }
    };
    if let Ok(request) = std::env::var("DECODE_PROFILE") {
        profile(&request, &mut run);
        return;
    }
    let rounds: usize = std::env::var("DECODE_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(21);

    // Both kinds of payload (issue 42): model output (escapes in over half the string bytes,
    // as issue 23 measured) and the escape-free review documents; `DECODE_PAYLOADS=model` or
    // `plain` runs one kind.
    for kind in kinds("DECODE_PAYLOADS") {
        table_of(kind, rounds, &mut run);
    }
    hostile(rounds);
}

/// One table: every contender on the three payloads of `kind`.
fn table_of(kind: &str, rounds: usize, run: &mut dyn FnMut(usize, &str) -> bool) {
    let iterations = [20_000u32, 1000, 10];
    let payloads: [(&str, String, u32); 3] = std::array::from_fn(|i| {
        let (name, findings) = sizes(kind)[i];
        (name, payload(kind, findings), iterations[i])
    });
    let mut pydantic = match std::env::var("PYDANTIC_PYTHON") {
        Ok(python) => match Pydantic::start(&python, &payloads) {
            Ok(p) => Some(p),
            Err(e) => {
                eprintln!("the pydantic contender does not start: {e}");
                std::process::exit(2);
            }
        },
        Err(_) => None,
    };
    println!(
        "decode benchmark, {kind} payloads: {rounds} rounds, median of per-round ratios (lower ours/serde is better)"
    );
    println!(
        "{:<7} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>11} {:>11} {:>14} {:>11} {:>11} {:>13} {:>14}",
        "payload",
        "bytes",
        "ours",
        "str",
        "serde",
        "serde-str",
        "schema",
        "pipe3-7",
        "pydantic",
        "ours/serde",
        "str/serde-str",
        "schema/ours",
        "schema/str",
        "pipeline/str",
        "pydantic/ours"
    );
    for (name, doc, iters) in &payloads {
        // Every contender must accept the payload, or the comparison means nothing.
        let accepted: [bool; 6] = std::array::from_fn(|k| run(k, doc));
        if accepted.contains(&false) {
            eprintln!("{name}: a contender rejects the payload: {CONTENDERS:?} {accepted:?}");
            std::process::exit(1);
        }
        let [ours, text, serde, serde_text, schema, pipe, py] =
            interleaved_timed::<7>(rounds, *iters, |k, iters| match (k, &mut pydantic) {
                // pydantic is about 5x slower: a quarter of the calls keeps its sample as long.
                (6, Some(p)) => p.sample(name, (iters / 4).max(1)),
                (6, None) => f64::NAN,
                _ => seconds(iters, || {
                    black_box(run(k, black_box(doc)));
                }),
            });
        let (py_time, py_ratio) = if pydantic.is_some() {
            (micros(&py), format!("{:.2}x", median_ratio(&py, &ours)))
        } else {
            ("-".to_owned(), "-".to_owned())
        };
        println!(
            "{:<7} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>11} {:>10.3}x {:>13.3}x {:>10.2}x {:>10.2}x {:>12.3}x {:>14}",
            name,
            doc.len(),
            micros(&ours),
            micros(&text),
            micros(&serde),
            micros(&serde_text),
            micros(&schema),
            micros(&pipe),
            py_time,
            median_ratio(&ours, &serde),
            median_ratio(&text, &serde_text),
            median_ratio(&schema, &ours),
            median_ratio(&schema, &text),
            median_ratio(&pipe, &text),
            py_ratio,
        );
    }
    drop(pydantic);
    println!();
}

/// `DECODE_PROFILE=ours|str|serde|serde-str|schema|pipeline[:copies[:runs]]`: no timing, `runs`
/// (default ten) calls of one contender on the large payload (or on one of `copies` findings)
/// of the kind `DECODE_PAYLOADS` names (model output unless `plain`), for a profiler
/// (`valgrind --tool=callgrind`, `perf record -e cpu-clock`).
fn profile(request: &str, run: &mut dyn FnMut(usize, &str) -> bool) {
    let profile = Profile::parse(request, &CONTENDERS, "DECODE_PAYLOADS").unwrap_or_else(|e| {
        eprintln!("DECODE_PROFILE {e}");
        std::process::exit(2);
    });
    for _ in 0..profile.runs {
        black_box(run(profile.which, black_box(&profile.payload)));
    }
}

/// The pydantic contender: `benches/pydantic_review.py` in a child process, reading the
/// payloads from files it is given and timing one sample per request.
struct Pydantic {
    child: Child,
    requests: ChildStdin,
    answers: BufReader<ChildStdout>,
    folder: PathBuf,
}

impl Pydantic {
    fn start(python: &str, payloads: &[(&str, String, u32)]) -> Result<Pydantic, String> {
        let folder = std::env::temp_dir().join(format!("aelc-decode-bench-{}", std::process::id()));
        std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
        for (name, doc, _) in payloads {
            let path = folder.join(format!("{name}.json"));
            std::fs::write(&path, doc).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/pydantic_review.py");
        let mut child = Command::new(python)
            .arg(script)
            .arg(&folder)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{python}: {e}"))?;
        let (Some(requests), Some(answers)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("no pipes to the child".to_owned());
        };
        let mut contender = Pydantic {
            child,
            requests,
            answers: BufReader::new(answers),
            folder,
        };
        // The script validates every payload before it says it is ready.
        match contender.answer() {
            Some(line) if line.starts_with("ready") => Ok(contender),
            _ => Err(format!(
                "{script} did not get ready (is pydantic v2 installed for {python}?)"
            )),
        }
    }

    fn answer(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.answers.read_line(&mut line) {
            Ok(n) if n > 0 => Some(line.trim().to_owned()),
            _ => None,
        }
    }

    /// Mean seconds per `model_validate_json` call over `iters` calls (NaN if the child failed).
    fn sample(&mut self, payload: &str, iters: u32) -> f64 {
        if writeln!(self.requests, "{payload} {iters}").is_err() || self.requests.flush().is_err() {
            return f64::NAN;
        }
        self.answer()
            .and_then(|a| a.parse().ok())
            .unwrap_or(f64::NAN)
    }
}

impl Drop for Pydantic {
    fn drop(&mut self) {
        // The script waits for requests until its stdin closes: ended here instead.
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

/// The peak resident set of this process in KiB (Linux), if known.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn hostile(rounds: usize) {
    let table = aelc_runtime::ty::TypeTable::default();
    let list = |item: aelc_runtime::ty::Ty| {
        aelc_runtime::ty::Ty::List(aelc_runtime::ty::ListTy {
            item: Box::new(item),
            min: 0,
            max: 10_000,
            unique: false,
        })
    };
    let ty = list(list(aelc_runtime::ty::Ty::Int(
        aelc_runtime::ty::IntTy::base(aelc_runtime::ty::IntKind::U8),
    )));
    let deep = "[".repeat(1 << 20);
    let inner = format!("[{}]", vec!["0"; 1_000].join(","));
    let many = format!("[{}]", vec![inner.as_str(); 10_000].join(","));
    println!();
    println!("hostile payloads (refused by the pre-scan): median of {rounds} rounds");
    println!(
        "{:<12} {:>11} {:>14} {:>16} {:>16}",
        "payload", "bytes", "ours: refused", "peak RSS growth", "serde Value"
    );
    for (name, doc) in [("deep 1 MB", &deep), ("10M values", &many)] {
        let bytes = doc.as_bytes();
        let mut decoder = Decoder::new(&table).with_max_input_bytes(32 << 20);
        let before = peak_rss_kib();
        let mut ours = Vec::new();
        for _ in 0..rounds {
            ours.push(seconds(1, || {
                black_box(decoder.decode(black_box(bytes), &ty, "request").is_err());
            }));
        }
        let growth = match (before, peak_rss_kib()) {
            (Some(b), Some(a)) => format!("{} KiB", a.saturating_sub(b)),
            _ => "n/a".to_owned(),
        };
        let mut serde = Vec::new();
        for _ in 0..rounds.min(3) {
            serde.push(seconds(1, || {
                black_box(serde_json::from_slice::<serde_json::Value>(black_box(bytes)).is_ok());
            }));
        }
        println!(
            "{:<12} {:>11} {:>11.1} µs {:>16} {:>13.1} µs",
            name,
            bytes.len(),
            median(&ours) * 1e6,
            growth,
            median(&serde) * 1e6
        );
    }
}
