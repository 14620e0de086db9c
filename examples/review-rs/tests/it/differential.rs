//! Differential test: the generated glue of `examples/review` (its decoder, and its `run_json`
//! through the one executor over the embedded program) against an interpreter assembled here
//! from the published `ir.json` — the runtime decoder on its types, and the runtime pipeline
//! with `stage::IrStage` over its checks and transform — on the same inputs and answers.
//! Verdicts, errors (pointer, path, code, sentence), attempts, rejections and outputs must be
//! identical. The generated decoder of `bench/` (a data enum, a set, bounded floats) is held to
//! the runtime decoder on mutated review payloads: it reads straight into its structs (issue
//! 23), so the same verdict and errors are not true by construction.

use aelc_runtime::decode::Decoder;
use aelc_runtime::eval::EvalError;
use aelc_runtime::eval::{CheckOutcome, Evaluator, FnTable, NoHost};
use aelc_runtime::expr::{Check, FnDef, FnId, Require};
use aelc_runtime::glue::{self as rt, Glue};
use aelc_runtime::model::{FinishReason, ModelAnswer, ReplayModel, Usage};
use aelc_runtime::money::Price;
use aelc_runtime::pipeline::{Budget, Outcome, Pipeline, Policy, TickClock};
use aelc_runtime::stage::{Arg, IrStage, StageCheck};
use aelc_runtime::ty::{Ty, TypeTable};
use aelc_runtime::value::Value;
use proptest::prelude::*;
use review_rs::{glue, Reviewer};

#[allow(clippy::all, dead_code)]
mod bench_glue {
    include!(concat!(env!("OUT_DIR"), "/review_bench.rs"));
}
use serde::Deserialize;

/// How a run ended, as both sides can say it.
#[derive(Debug, PartialEq)]
#[allow(dead_code)] // the fields are read through `Debug` and `PartialEq`
enum NodeRun {
    /// The input document did not decode (`rejected_input`).
    Undecodable(Vec<rt::DecodeError>),
    /// An input check failed.
    InputCheck(rt::Failure),
    /// An input check could not be evaluated.
    Internal(EvalError),
    /// The pipeline ran.
    Ran(Outcome),
}

impl NodeRun {
    /// The glue's run in these terms.
    fn of(run: &rt::ExecRun) -> NodeRun {
        if !run.input_errors.is_empty() {
            NodeRun::Undecodable(run.input_errors.clone())
        } else if let Some(failure) = &run.input_check {
            NodeRun::InputCheck(failure.clone())
        } else {
            NodeRun::Ran(run.outcome.clone())
        }
        .unreserved()
    }

    /// Without what was reserved before each call: the executor's worst case counts the whole
    /// request (prompt, output schema, parts), which this interpreter does not assemble; that
    /// the reservation holds `max_cost` is the runtime's own test (`exec`, `meter`).
    fn unreserved(mut self) -> NodeRun {
        if let NodeRun::Ran(outcome) = &mut self {
            outcome.reserved = Default::default();
            for attempt in &mut outcome.attempts {
                attempt.reserved.clear();
            }
        }
        self
    }
}

/// The parts of `ir.json` the interpreter reads (its own reading of the published format).
#[derive(Deserialize)]
struct Ir {
    types: TypeTable,
    fns: Vec<IrFn>,
    checks: Vec<IrCheck>,
    nodes: Vec<IrNode>,
    bindings: Vec<IrBinding>,
    limits: IrLimits,
}
#[derive(Deserialize)]
struct IrParam {
    name: String,
    ty: Ty,
}
#[derive(Deserialize)]
struct IrFn {
    name: String,
    params: Vec<IrParam>,
    ret: Option<Ty>,
    body: Option<aelc_runtime::expr::Expr>,
    #[serde(default)]
    locals: u32,
}
#[derive(Deserialize)]
struct IrCheck {
    name: String,
    params: Vec<IrParam>,
    #[serde(default)]
    requires: Vec<Require>,
    #[serde(default)]
    locals: u32,
}
#[derive(Deserialize)]
struct IrNode {
    params: Vec<IrParam>,
    output: Ty,
    config: IrConfig,
    input: IrInput,
    output_stage: IrOutputStage,
    #[serde(default)]
    budget: IrBudget,
}
#[derive(Deserialize)]
struct IrConfig {
    model: Option<String>,
    max_answer: u64,
}
#[derive(Deserialize)]
struct IrInput {
    checks: Vec<u32>,
}
#[derive(Deserialize)]
struct IrOutputStage {
    checks: Vec<u32>,
    transform: Option<u32>,
    on_failure: Vec<Policy>,
}
#[derive(Deserialize, Default)]
struct IrBudget {
    max_calls: Option<u32>,
    max_time_ms: Option<u64>,
    max_cost: Option<IrMoney>,
}
#[derive(Deserialize)]
struct IrMoney {
    amount: String,
}
#[derive(Deserialize)]
struct IrBinding {
    name: String,
    price: Option<Price>,
}
#[derive(Deserialize)]
struct IrLimits {
    max_input_bytes: u64,
}

struct Interpreter {
    ir: Ir,
    fns: Vec<Option<FnDef>>,
    checks: Vec<Check>,
}

struct Fns<'a>(&'a [Option<FnDef>]);
impl FnTable for Fns<'_> {
    fn pure_fn(&self, id: FnId) -> Option<&FnDef> {
        self.0.get(id.0 as usize).and_then(Option::as_ref)
    }
}

impl Interpreter {
    fn load() -> Interpreter {
        let text = include_str!(concat!(env!("OUT_DIR"), "/review.ir.json"));
        let ir: Ir = serde_json::from_str(text).expect("ir.json reads");
        let param = |p: &IrParam| aelc_runtime::expr::Param {
            name: p.name.clone(),
            ty: p.ty.clone(),
        };
        let fns = ir
            .fns
            .iter()
            .map(|f| {
                f.body.as_ref().map(|body| FnDef {
                    name: f.name.clone(),
                    params: f.params.iter().map(param).collect(),
                    locals: f.locals,
                    ret: f.ret.clone(),
                    body: body.clone(),
                })
            })
            .collect();
        let checks = ir
            .checks
            .iter()
            .map(|c| Check {
                name: c.name.clone(),
                params: c.params.iter().map(param).collect(),
                locals: c.locals,
                requires: c.requires.clone(),
            })
            .collect();
        Interpreter { ir, fns, checks }
    }

    /// A check parameter's source: the output first for output checks, else the node
    /// parameter of that name.
    fn args(&self, node: &IrNode, check: usize, output: bool) -> Vec<Arg> {
        self.ir.checks[check]
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                if output && i == 0 {
                    Arg::Output
                } else {
                    Arg::Input(
                        node.params
                            .iter()
                            .position(|n| n.name == p.name)
                            .unwrap_or(0),
                    )
                }
            })
            .collect()
    }

    /// Runs the node on `prompt` (the glue renders it; this compares what follows).
    fn run(&self, input: &[u8], answers: &[String], prompt: &str) -> NodeRun {
        let node = &self.ir.nodes[0];
        let mut decoder = Decoder::new(&self.ir.types)
            .with_max_input_bytes(self.ir.limits.max_input_bytes as usize);
        let value = match decoder.decode(input, &node.params[0].ty, &node.params[0].name) {
            Ok(v) => v,
            Err(e) => return NodeRun::Undecodable(e),
        };
        let inputs = vec![value];
        let fns = Fns(&self.fns);
        for &c in &node.input.checks {
            let mut host = NoHost;
            let refs: Vec<&Value> = inputs.iter().collect();
            match Evaluator::new(&fns, &mut host).run_check(&self.checks[c as usize], &refs) {
                Ok(CheckOutcome::Passed) => {}
                Ok(CheckOutcome::Failed { code, message }) => {
                    return NodeRun::InputCheck(rt::Failure {
                        check: self.checks[c as usize].name.clone(),
                        code,
                        message,
                    })
                }
                Err(e) => return NodeRun::Internal(e),
            }
        }
        let binding = node.config.model.clone().unwrap_or_default();
        let mut pipeline = Pipeline::new(
            &self.ir.types,
            &node.output,
            &binding,
            node.config.max_answer,
        );
        pipeline.policies = node.output_stage.on_failure.clone();
        pipeline.budget = Budget {
            max_calls: node.budget.max_calls,
            max_time_ms: node.budget.max_time_ms,
            max_cost: node.budget.max_cost.as_ref().map(|m| m.amount.clone()),
        };
        for b in &self.ir.bindings {
            if let Some(p) = &b.price {
                pipeline.prices.insert(b.name.clone(), p.clone());
            }
        }
        let mut host = NoHost;
        let mut stage = IrStage {
            fns: &fns,
            host: &mut host,
            inputs: &inputs,
            checks: node
                .output_stage
                .checks
                .iter()
                .map(|&c| StageCheck::Ir {
                    check: &self.checks[c as usize],
                    args: self.args(node, c as usize, true),
                })
                .collect(),
            transform: node.output_stage.transform.and_then(|f| {
                self.fns[f as usize]
                    .as_ref()
                    .map(|d| (d, vec![Arg::Output]))
            }),
            extern_transform: None,
            raw_parse: None,
            patterns: Default::default(),
        };
        let mut model = replay(answers);
        let mut clock = TickClock { now: 0, tick: 1 };
        NodeRun::Ran(pipeline.run(prompt, &mut model, &mut stage, &mut clock))
    }
}

fn replay(answers: &[String]) -> ReplayModel {
    ReplayModel::new(answers.iter().map(|a| ModelAnswer {
        text: a.clone(),
        finish_reason: FinishReason::Stop,
        usage: Usage {
            input_tokens: 100,
            output_tokens: 50,
        },
    }))
}

/// The glue's run, and the prompt the runtime rendered for it (when a call was made): what
/// the interpreter then runs on, since a call reserves its worst case from the prompt's size.
fn glue_run(input: &[u8], answers: &[String]) -> (rt::Run<glue::review::Output>, Option<String>) {
    let mut model = replay(answers);
    let mut clock = TickClock { now: 0, tick: 1 };
    let mut media = rt::NoMedia;
    let mut ctx = rt::Context::new(&mut model, &mut clock, &mut media);
    ctx.check_accepts = false;
    let run =
        glue::review::run_json(&mut Reviewer::default(), &mut ctx, input).expect("the review runs");
    (run, model.requests.first().map(|r| r.prompt.clone()))
}

/// Compares one input and answer list; returns a description on disagreement.
fn compare(interp: &Interpreter, input: &[u8], answers: &[String]) {
    let (got, prompt) = glue_run(input, answers);
    let expected = interp
        .run(input, answers, prompt.as_deref().unwrap_or(""))
        .unreserved();
    assert_eq!(
        NodeRun::of(&got.run),
        expected,
        "input {}",
        String::from_utf8_lossy(input)
    );
    // The typed output is the interpreter's value.
    if let NodeRun::Ran(Outcome {
        output: Some(v), ..
    }) = &expected
    {
        assert_eq!(got.output.as_ref().map(Glue::to_value).as_ref(), Some(v));
    }
    // The typed decoder agrees too.
    match (glue::review::decode(input), &expected) {
        (Err(e), NodeRun::Undecodable(want)) => assert_eq!(&e, want),
        (Ok(typed), run) => {
            assert!(!matches!(run, NodeRun::Undecodable(_)));
            let mut decoder = Decoder::new(&interp.ir.types);
            let v = decoder
                .decode(input, &interp.ir.nodes[0].params[0].ty, "request")
                .unwrap();
            assert_eq!(typed.to_value(), v);
        }
        (Err(e), run) => panic!("glue refused what the interpreter took: {e:?} vs {run:?}"),
    }
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("   ".to_owned()),
        "[a-z \\n]{0,12}",
        "[a-zA-Z\\-]{0,20}",
        Just("é".repeat(17)),
    ]
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::json;
    prop_oneof![
        text().prop_map(serde_json::Value::from),
        (-3i64..70).prop_map(serde_json::Value::from),
        Just(json!(2.5)),
        Just(json!(3.0)),
        Just(json!(null)),
        Just(json!(true)),
        Just(json!([])),
        Just(json!({})),
    ]
}

/// A request object: each field absent, well-typed, or anything.
fn request() -> impl Strategy<Value = String> {
    (
        prop::option::of(prop_oneof![
            text().prop_map(serde_json::Value::from),
            json_value()
        ]),
        prop::option::of(json_value()),
        prop::option::of(prop_oneof![
            (0u64..60).prop_map(serde_json::Value::from),
            json_value()
        ]),
        prop::option::of(prop_oneof![
            Just(serde_json::Value::from("en")),
            Just(serde_json::Value::from("en-GB")),
            json_value()
        ]),
        prop::option::of(json_value()),
    )
        .prop_map(|(document, strict, max, locale, extra)| {
            let mut m = serde_json::Map::new();
            for (k, v) in [
                ("document", document),
                ("strict", strict),
                ("max_findings", max),
                ("locale", locale),
                ("extra", extra),
            ] {
                if let Some(v) = v {
                    m.insert(k.to_owned(), v);
                }
            }
            serde_json::Value::Object(m).to_string()
        })
}

/// A model answer: a review with 0–4 findings, sometimes broken.
fn answer() -> impl Strategy<Value = String> {
    let finding = (
        0i64..3,
        prop::sample::select(vec!["low", "medium", "high", "urgent"]),
        text(),
    )
        .prop_map(
            |(line, sev, msg)| serde_json::json!({"line": line, "severity": sev, "message": msg}),
        );
    prop_oneof![
        (text(), prop::collection::vec(finding, 0..5))
            .prop_map(|(s, f)| { serde_json::json!({"summary": s, "findings": f}).to_string() }),
        (text(), prop::collection::vec(finding_fenced(), 0..3)).prop_map(|(s, f)| {
            format!(
                "```json\n{}\n```",
                serde_json::json!({"summary": s, "findings": f})
            )
        }),
        Just("not json".to_owned()),
        Just("{\"summary\": 1}".to_owned()),
    ]
}

fn finding_fenced() -> impl Strategy<Value = serde_json::Value> {
    (1i64..3, prop::sample::select(vec!["low", "high"]))
        .prop_map(|(line, sev)| serde_json::json!({"line": line, "severity": sev, "message": "m"}))
}

#[test]
fn example_files_agree() {
    let interp = Interpreter::load();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../review/examples/review");
    for entry in std::fs::read_dir(dir).unwrap() {
        let example: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap()).unwrap();
        let input = serde_json::to_vec(&example["input"]).unwrap();
        let answers: Vec<String> = example["answers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_owned())
            .collect();
        compare(&interp, &input, &answers);
    }
}

/// Every JSON Pointer of `v`'s values, the root included.
fn pointers(v: &serde_json::Value, at: String, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => m
            .iter()
            .for_each(|(k, x)| pointers(x, format!("{at}/{k}"), out)),
        serde_json::Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| pointers(x, format!("{at}/{i}"), out)),
        _ => {}
    }
    out.push(at);
}

/// A review payload of the bench types (`review_json`) broken in one place, or several: a
/// value replaced, a field removed or added, a key doubled, the text cut.
fn mutated_review() -> impl Strategy<Value = String> {
    let edit = (any::<prop::sample::Index>(), json_value(), 0u8..6);
    (0usize..4, prop::collection::vec(edit, 0..3)).prop_map(|(n, edits)| {
        let mut doc: serde_json::Value =
            serde_json::from_str(&aelc_runtime::testing::review_json(n)).unwrap();
        let mut cut = None;
        for (at, v, how) in edits {
            let mut all = Vec::new();
            pointers(&doc, String::new(), &mut all);
            let p = at.get(&all).clone();
            let (parent, key) = p.rsplit_once('/').unwrap_or(("", ""));
            match how {
                0 => {
                    if let Some(x) = doc.pointer_mut(&p) {
                        *x = v;
                    }
                }
                1 => {
                    if let Some(serde_json::Value::Object(m)) = doc.pointer_mut(parent) {
                        m.remove(key);
                    }
                }
                2 => {
                    if let Some(serde_json::Value::Object(m)) = doc.pointer_mut(&p) {
                        m.insert("extra".to_owned(), v);
                    }
                }
                3 => {
                    if let Some(x) = doc.pointer_mut(&p) {
                        *x = serde_json::json!({"kind": "comment", "text": v});
                    }
                }
                4 => cut = Some(at.index(64)),
                _ => {}
            }
        }
        let mut text = doc.to_string();
        // A doubled key: the first `"line":` (or `"summary":`) written twice.
        if let Some(i) = cut {
            text.truncate(i.min(text.len()));
        } else if n % 2 == 1 {
            text = text.replacen("\"line\":", "\"line\":1,\"line\":", 1);
        }
        text
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The bench glue's `decode` (straight into its structs) and the runtime decoder (a
    /// `Value`) accept the same documents, with equal values, and refuse the others with the
    /// same errors: pointer, path, code and sentence, in order.
    #[test]
    fn struct_decoder_and_value_decoder_agree(input in mutated_review()) {
        let program = bench_glue::program();
        let param = &program.nodes[bench_glue::reread::INDEX].params[0];
        let max = program.limits.max_input_bytes as usize;
        let want = Decoder::new(&program.types)
            .with_max_input_bytes(max)
            .decode(input.as_bytes(), &param.ty, &param.name);
        match (bench_glue::reread::decode(input.as_bytes()), want) {
            (Ok(typed), Ok(v)) => prop_assert_eq!(typed.to_value(), v),
            (Err(got), Err(want)) => prop_assert_eq!(got, want),
            (got, want) => prop_assert!(false, "{input}: glue {got:?}, runtime {want:?}"),
        }
    }

    #[test]
    fn glue_and_interpreter_agree(input in request(), answers in prop::collection::vec(answer(), 0..5)) {
        let interp = Interpreter::load();
        compare(&interp, input.as_bytes(), &answers);
    }

    #[test]
    fn glue_and_interpreter_agree_on_raw_bytes(input in "[\\[\\]{}\":,a-z0-9 ]{0,40}") {
        let interp = Interpreter::load();
        compare(&interp, input.as_bytes(), &[]);
    }
}
