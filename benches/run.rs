//! Benchmark `run`: what the one executor costs around the seven steps, on the review example.
//!
//! Two contenders on the same input and the same recorded answer, interleaved round by round so
//! a ratio holds when the machine's speed drifts:
//!
//! - **pipeline**: the seven steps alone (`Pipeline::run` with the node's output checks and
//!   transform over inputs decoded once, on a prompt rendered once): the floor;
//! - **executor**: `Executor::run` as `aelc run` and `aelc test` call it: the input gate, the
//!   input checks, the prompt rendered from the template, the externs looked up, every call's
//!   worst case reserved, the seven steps, and a receipt (UUIDv7 id, SHA-256 of input and
//!   output).
//!
//! It prints each contender's median time per run and the median of the per-round ratios.
//! Run: `cargo bench --bench run` (`RUN_ROUNDS=N`, `RUN_ITERS=N` change the defaults of 15
//! rounds of 2,000 runs).
//!
//! Then streams ([`stream`]): chunks a second through the `monitor` node of `examples/sensors`
//! with every stream rule checked, next to a plain tokio `mpsc` pipeline doing no checks, and
//! the memory a burst takes. `RUN_STREAM=0` skips it.

#[path = "run/stream.rs"]
mod stream;

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use aelc::driver::{self, DiskWorld};
use aelc_runtime::exec::{Env, Executor, Externs};
use aelc_runtime::model::{FinishReason, ModelAnswer, ReplayModel, Usage};
use aelc_runtime::pipeline::TickClock;
use aelc_runtime::receipt::UuidIds;

const INPUT: &[u8] = br#"{"document": "Teh cat sat on teh mat.", "max_findings": 3}"#;
const ANSWER: &str = r#"{"summary": "Two typos.", "findings": [{"line": 1, "severity": "low", "message": "teh: the"}, {"line": 1, "severity": "medium", "message": "Teh: The"}]}"#;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn answer() -> ModelAnswer {
    ModelAnswer {
        text: ANSWER.to_owned(),
        finish_reason: FinishReason::Stop,
        usage: Usage {
            input_tokens: 400,
            output_tokens: 60,
        },
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let rounds = env_usize("RUN_ROUNDS", 15);
    let iters = env_usize("RUN_ITERS", 2_000);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/review");
    let compilation = driver::check_path(&DiskWorld, &root).expect("the review example reads");
    let program = compilation.program.expect("the review example checks");
    let exec = Executor::new(&program, aelc::driver::run::schemas(&program));
    let node_ir = aelc::driver::project::find_node(&program, "review").expect("review");
    let node = aelc::driver::run::node_id(&program, node_ir);
    let inputs = exec
        .decode_input(node_ir, INPUT)
        .expect("the input decodes");
    let mut externs = Externs::new();
    let parts = exec
        .render_prompt(node_ir, &inputs, "{}", &mut externs)
        .expect("the prompt renders");
    let prompt = aelc_runtime::exec::prompt_text(&parts);

    let pipeline_once = |externs: &mut Externs| {
        let mut model = ReplayModel::new([answer()]);
        let mut host = StageHost(externs);
        let mut stage = exec.output_stage(node_ir, &mut host, &inputs);
        let outcome =
            exec.pipeline(node_ir)
                .run(&prompt, &mut model, &mut stage, &mut TickClock::default());
        black_box(outcome);
    };
    let executor_once = |externs: &mut Externs| {
        let mut model = ReplayModel::new([answer()]);
        let mut env = Env {
            model: &mut model,
            clock: &mut TickClock::default(),
            ids: &mut UuidIds,
            externs,
            check_accepts: false,
            media: None,
        };
        let run = exec.run(node, black_box(INPUT), &mut env).expect("runs");
        assert!(run.outcome.output.is_some(), "{:?}", run.outcome);
        black_box(run);
    };

    let (mut a, mut b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let start = Instant::now();
        for _ in 0..iters {
            pipeline_once(&mut externs);
        }
        let pipeline = start.elapsed().as_secs_f64() / iters as f64;
        let start = Instant::now();
        for _ in 0..iters {
            executor_once(&mut externs);
        }
        let executor = start.elapsed().as_secs_f64() / iters as f64;
        a.push(pipeline);
        b.push(executor);
        ratios.push(executor / pipeline);
    }
    println!(
        "run (review example, {rounds} rounds of {iters}): pipeline {:.2} µs, executor {:.2} µs, executor/pipeline {:.2}",
        median(&mut a) * 1e6,
        median(&mut b) * 1e6,
        median(&mut ratios)
    );
    if std::env::var("RUN_STREAM").as_deref() != Ok("0") {
        stream::main();
    }
}

/// The output stage's host: the review example has no externs.
struct StageHost<'a>(&'a mut Externs);

impl aelc_runtime::eval::Host for StageHost<'_> {
    fn call_extern(
        &mut self,
        func: aelc_runtime::expr::FnId,
        _args: Vec<aelc_runtime::value::Value>,
    ) -> Result<aelc_runtime::value::Value, aelc_runtime::eval::EvalError> {
        let _ = &self.0;
        Err(aelc_runtime::eval::EvalError::new(
            aelc_runtime::eval::EvalErrorKind::Extern,
            format!("no extern #{}", func.0),
        ))
    }
}
