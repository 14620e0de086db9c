//! The seven steps of spec §6.1, the failure policies and the budget, replayed: each test fails
//! if its step or policy behaves otherwise.

use aelc_runtime::eval::NoHost;
use aelc_runtime::expr::{BinaryOp, Check, Closure, Expr, FnDef, Method, Param, Require, Slot};
use aelc_runtime::model::{FinishReason, ModelAnswer, ReplayModel, Usage};
use aelc_runtime::money::Price;
use aelc_runtime::pipeline::{Budget, NoStage, Outcome, Pipeline, Policy, Status, TickClock};
use aelc_runtime::receipt::{receipt_schema, IdSource, Receipt, UuidIds};
use aelc_runtime::stage::{Arg, IrStage, StageCheck};
use aelc_runtime::testing::{named, review_json, review_types, REVIEW, REVIEW_REQUEST};
use aelc_runtime::ty::{Ty, TypeTable};
use aelc_runtime::value::Value;

/// The prompt every run of these tests sends.
const PROMPT: &str = "Review this.";

fn stop(text: &str) -> ModelAnswer {
    ModelAnswer {
        text: text.to_owned(),
        finish_reason: FinishReason::Stop,
        usage: Usage {
            input_tokens: 1000,
            output_tokens: 500,
        },
    }
}

fn cut(text: &str) -> ModelAnswer {
    ModelAnswer {
        finish_reason: FinishReason::Length,
        ..stop(text)
    }
}

/// `check within_limit(output: Review, request: ReviewRequest) fails ReviewError {
///     require output.findings.len() <= request.max_findings else too_many_findings; }`
fn within_limit() -> Check {
    Check {
        name: "within_limit".into(),
        params: vec![
            Param {
                name: "output".into(),
                ty: named(REVIEW),
            },
            Param {
                name: "request".into(),
                ty: named(REVIEW_REQUEST),
            },
        ],
        locals: 2,
        requires: vec![Require {
            cond: Expr::binary(
                BinaryOp::Le,
                Expr::method(Expr::field(Expr::local(0), 2), Method::Len),
                Expr::field(Expr::local(1), 2),
            ),
            code: "too_many_findings".into(),
            message: Some("too many findings".into()),
        }],
    }
}

/// `fn by_severity(output: Review) -> Review {
///     Review { findings: output.findings.sort_by(|f| f.severity), ..output } }`
fn by_severity() -> FnDef {
    let out = || Expr::local(0);
    FnDef {
        name: "by_severity".into(),
        params: vec![Param {
            name: "output".into(),
            ty: named(REVIEW),
        }],
        locals: 2,
        ret: Some(named(REVIEW)),
        body: Expr::Struct {
            def: REVIEW,
            fields: vec![
                Expr::field(out(), 0),
                Expr::field(out(), 1),
                Expr::method(
                    Expr::field(out(), 2),
                    Method::SortBy {
                        closure: Closure {
                            param: Slot(1),
                            body: Box::new(Expr::field(Expr::local(1), 1)),
                        },
                    },
                ),
                Expr::field(out(), 3),
            ],
        },
    }
}

/// The request `{"document": "d", "max_findings": 2}`.
fn request(max_findings: i128) -> Value {
    Value::Struct(vec![
        Value::Str("d".into()),
        Value::Bool(false),
        Value::Int(max_findings),
        Value::None,
    ])
}

struct Run {
    outcome: Outcome,
    model: ReplayModel,
}

fn run_with(
    table: &TypeTable,
    ty: &Ty,
    answers: Vec<ModelAnswer>,
    configure: impl FnOnce(&mut Pipeline<'_>),
    checks: bool,
    transform: Option<&FnDef>,
) -> Run {
    let mut pipeline = Pipeline::new(table, ty, "primary_model", 1 << 20);
    configure(&mut pipeline);
    let mut model = ReplayModel::new(answers);
    let check = within_limit();
    let inputs = [request(2)];
    let fns: Vec<FnDef> = Vec::new();
    let mut host = NoHost;
    let mut stage = IrStage {
        fns: &fns,
        host: &mut host,
        inputs: &inputs,
        checks: if checks {
            vec![StageCheck::Ir {
                check: &check,
                args: vec![Arg::Output, Arg::Input(0)],
            }]
        } else {
            Vec::new()
        },
        transform: transform.map(|f| (f, vec![Arg::Output])),
        extern_transform: None,
        raw_parse: None,
        patterns: Default::default(),
    };
    let mut clock = TickClock { now: 0, tick: 10 };
    let outcome = pipeline.run(PROMPT, &mut model, &mut stage, &mut clock);
    Run { outcome, model }
}

fn run(answers: Vec<ModelAnswer>, configure: impl FnOnce(&mut Pipeline<'_>)) -> Run {
    let table = review_types();
    run_with(&table, &named(REVIEW), answers, configure, true, None)
}

fn first_rejection(outcome: &Outcome, attempt: usize) -> (u8, String) {
    let r = outcome
        .attempts
        .get(attempt)
        .and_then(|a| a.rejected.clone())
        .map(|r| (r.step, r.code))
        .unwrap_or_default();
    r
}

#[test]
fn a_good_answer_is_accepted() {
    let r = run(vec![stop(&review_json(2))], |_| {});
    assert_eq!(r.outcome.status, Status::Succeeded);
    assert_eq!(r.outcome.attempts.len(), 1);
    assert!(r
        .outcome
        .output_json
        .as_deref()
        .is_some_and(|j| j.starts_with(r#"{"summary":"#)));
}

#[test]
fn step1_too_large_and_truncated() {
    let r = run(vec![stop(&review_json(2))], |p| p.max_answer = 100);
    assert_eq!(first_rejection(&r.outcome, 0), (1, "too_large".into()));
    // A cut-off answer is never complete, even when its text parses.
    let r = run(vec![cut(&review_json(2))], |_| {});
    assert_eq!(
        first_rejection(&r.outcome, 0),
        (1, "truncated_output".into())
    );
    assert_eq!(r.outcome.status, Status::InvalidOutput);
    let incomplete = ModelAnswer {
        finish_reason: FinishReason::Incomplete,
        ..stop(&review_json(1))
    };
    let r = run(vec![incomplete], |_| {});
    assert_eq!(
        first_rejection(&r.outcome, 0),
        (1, "truncated_output".into())
    );
}

#[test]
fn step2_fences_prose_and_two_values() {
    let fenced = format!("```json\n{}\n```\n", review_json(1));
    assert_eq!(
        run(vec![stop(&fenced)], |_| {}).outcome.status,
        Status::Succeeded
    );
    let plain_fence = format!("```\n{}\n```", review_json(1));
    assert_eq!(
        run(vec![stop(&plain_fence)], |_| {}).outcome.status,
        Status::Succeeded
    );
    for bad in [
        format!("{} I hope this helps!", review_json(1)),
        format!("Here you go: {}", review_json(1)),
        format!("{} {}", review_json(1), review_json(1)),
        format!("```python\n{}\n```", review_json(1)),
        format!(
            "```json\n{}\n```\n```json\n{}\n```",
            review_json(1),
            review_json(1)
        ),
        "not json at all".to_owned(),
    ] {
        let r = run(vec![stop(&bad)], |_| {});
        assert_eq!(
            first_rejection(&r.outcome, 0),
            (2, "undecodable_output".into()),
            "{bad}"
        );
    }
}

#[test]
fn step3_structural_errors_with_paths() {
    let extra = review_json(1).replacen("\"score\"", "\"mood\": \"good\", \"score\"", 1);
    let r = run(vec![stop(&extra)], |_| {});
    let rejected = r.outcome.attempts.first().and_then(|a| a.rejected.clone());
    let rejected = rejected.unwrap_or_else(|| panic!("no rejection"));
    assert_eq!(
        (rejected.step, rejected.code.as_str()),
        (3, "unknown_field")
    );
    assert_eq!(rejected.path.as_deref(), Some("output.mood"));
    assert_eq!(rejected.pointer.as_deref(), Some("/mood"));
}

#[test]
fn step4_failing_check_names_the_check() {
    let r = run(vec![stop(&review_json(3))], |_| {});
    let rejected = r.outcome.attempts.first().and_then(|a| a.rejected.clone());
    let rejected = rejected.unwrap_or_else(|| panic!("no rejection"));
    assert_eq!(rejected.step, 4);
    assert_eq!(rejected.check.as_deref(), Some("within_limit"));
    assert_eq!(rejected.code, "too_many_findings");
    assert_eq!(r.outcome.status, Status::InvalidOutput);
    assert_eq!(r.outcome.code.as_deref(), Some("invalid_output"));
}

#[test]
fn step5_transform_applies() {
    let table = review_types();
    let transform = by_severity();
    // Severities in the fixture go low, medium: make them high, low.
    let doc =
        review_json(2)
            .replacen("\"low\"", "\"high\"", 1)
            .replacen("\"medium\"", "\"low\"", 1);
    let r = run_with(
        &table,
        &named(REVIEW),
        vec![stop(&doc)],
        |_| {},
        true,
        Some(&transform),
    );
    assert_eq!(r.outcome.status, Status::Succeeded);
    let json = r.outcome.output_json.unwrap_or_default();
    let low = json.find("\"low\"").unwrap_or(usize::MAX);
    let high = json.find("\"high\"").unwrap_or(0);
    assert!(low < high, "sorted by severity: {json}");
}

#[test]
fn step6_transform_that_breaks_bounds_is_rejected() {
    let table = review_types();
    // A transform that doubles the findings: 2 → 4, still within List<Finding, 10000>, but
    // joins the summary with itself 30 times past Str<2000>.
    let mut summary = Expr::field(Expr::local(0), 0);
    for _ in 0..5 {
        summary = Expr::binary(BinaryOp::Add, summary.clone(), summary);
    }
    let transform = FnDef {
        name: "longer".into(),
        params: vec![Param {
            name: "output".into(),
            ty: named(REVIEW),
        }],
        locals: 1,
        ret: None,
        body: Expr::Struct {
            def: REVIEW,
            fields: vec![
                summary,
                Expr::field(Expr::local(0), 1),
                Expr::field(Expr::local(0), 2),
                Expr::field(Expr::local(0), 3),
            ],
        },
    };
    let r = run_with(
        &table,
        &named(REVIEW),
        vec![stop(&review_json(1))],
        |_| {},
        true,
        Some(&transform),
    );
    let rejected = r.outcome.attempts.first().and_then(|a| a.rejected.clone());
    let rejected = rejected.unwrap_or_else(|| panic!("no rejection"));
    assert_eq!((rejected.step, rejected.code.as_str()), (6, "too_long"));
    assert_eq!(rejected.path.as_deref(), Some("output.summary"));
}

#[test]
fn step7_retry_then_success() {
    let r = run(vec![stop("oops"), stop(&review_json(1))], |p| {
        p.policies = vec![Policy::Retry { times: 1 }];
    });
    assert_eq!(r.outcome.status, Status::Succeeded);
    assert_eq!(r.outcome.attempts.len(), 2);
    assert!(r.model.requests.iter().all(|q| q.repair.is_empty()));
}

#[test]
fn repair_carries_the_last_reasons_only() {
    let extra = review_json(1).replacen("\"score\"", "\"mood\": 1, \"score\"", 1);
    let r = run(
        vec![stop(&review_json(3)), stop(&extra), stop(&review_json(1))],
        |p| {
            p.policies = vec![Policy::Repair { times: 2 }];
        },
    );
    assert_eq!(r.outcome.status, Status::Succeeded);
    assert_eq!(r.outcome.attempts.len(), 3);
    let reasons: Vec<Vec<String>> = r
        .model
        .requests
        .iter()
        .map(|q| q.repair.iter().map(|x| x.code.clone()).collect())
        .collect();
    assert_eq!(
        reasons,
        vec![
            vec![],
            vec!["too_many_findings".to_owned()],
            vec!["unknown_field".to_owned()]
        ]
    );
    let second = r
        .model
        .requests
        .get(1)
        .map(|q| q.full_prompt())
        .unwrap_or_default();
    assert!(second.contains("check within_limit failed"), "{second}");
    assert!(second.starts_with("Review this."));
}

#[test]
fn fallback_then_fail_code() {
    let r = run(vec![stop("no"), stop("still no")], |p| {
        p.policies = vec![
            Policy::Fallback {
                binding: "backup_model".into(),
            },
            Policy::Fail {
                code: "too_many_findings".into(),
            },
        ];
    });
    let bindings: Vec<&str> = r
        .outcome
        .attempts
        .iter()
        .map(|a| a.binding.as_str())
        .collect();
    assert_eq!(bindings, vec!["primary_model", "backup_model"]);
    assert_eq!(r.outcome.status, Status::Failed);
    assert_eq!(r.outcome.code.as_deref(), Some("too_many_findings"));
}

#[test]
fn budget_max_calls() {
    let r = run(
        vec![stop("a"), stop("b"), stop("c"), stop(&review_json(1))],
        |p| {
            p.policies = vec![Policy::Retry { times: 5 }];
            p.budget = Budget {
                max_calls: Some(2),
                ..Budget::default()
            };
        },
    );
    assert_eq!(r.outcome.attempts.len(), 2);
    assert_eq!(r.outcome.status, Status::Error);
    assert_eq!(r.outcome.code.as_deref(), Some("budget_exceeded"));
}

#[test]
fn budget_max_time_on_the_injected_clock() {
    // The tick clock advances 10 ms per reading; two readings per call.
    let r = run(
        vec![stop("a"), stop("b"), stop("c"), stop(&review_json(1))],
        |p| {
            p.policies = vec![Policy::Retry { times: 5 }];
            p.budget = Budget {
                max_time_ms: Some(35),
                ..Budget::default()
            };
        },
    );
    assert_eq!(r.outcome.code.as_deref(), Some("budget_exceeded"));
    assert!(r.outcome.attempts.len() < 4);
}

/// Money is reserved before it is spent (spec §12): a call is made only when its worst case
/// fits in what is left of `max_cost`, so a run never ends above it, even where the old rule
/// (stop once the total reaches the budget) would have made one more call and overshot.
#[test]
fn budget_max_cost_is_never_exceeded() {
    let price = Price {
        input_per_mtok: "1".into(),
        output_per_mtok: "2".into(),
        currency: "EUR".into(),
    };
    let max_answer = 3_000;
    // The worst case of one call: one input token per byte sent plus the margin, and the
    // output-token limit for 3,000 bytes (1,256 tokens): (12 + 256) × 1/M + 1,256 × 2/M.
    let worst = aelc_runtime::meter::worst_case(&price, PROMPT.len() as u64, max_answer);
    assert_eq!(worst.to_string(), "0.00278");
    // Each call really costs 1000 in × 1/M + 500 out × 2/M = 0.002. Within 0.0065, two calls
    // fit their worst case (0.002 + 0.00278 <= 0.0065) and a third does not
    // (0.004 + 0.00278 > 0.0065), though the old rule (0.004 < 0.0065) let it start, and a
    // fourth, ending at 0.008.
    let r = run(
        vec![stop("a"), stop("b"), stop("c"), stop(&review_json(1))],
        |p| {
            p.max_answer = max_answer;
            p.policies = vec![Policy::Retry { times: 5 }];
            p.prices.insert("primary_model".into(), price.clone());
            p.budget = Budget {
                max_cost: Some("0.0065".into()),
                ..Budget::default()
            };
        },
    );
    assert_eq!(r.outcome.attempts.len(), 2);
    assert_eq!(r.outcome.cost.to_string(), "0.004");
    assert_eq!(r.outcome.reserved.to_string(), "0.00556");
    assert_eq!(r.outcome.code.as_deref(), Some("budget_exceeded"));
    for attempt in &r.outcome.attempts {
        assert_eq!(attempt.reserved, "0.00278");
    }
    // A budget below one call's worst case makes no call at all.
    let none = run(vec![stop(&review_json(1))], |p| {
        p.max_answer = max_answer;
        p.prices.insert("primary_model".into(), price.clone());
        p.budget = Budget {
            max_cost: Some("0.0027".into()),
            ..Budget::default()
        };
    });
    assert!(none.outcome.attempts.is_empty());
    assert_eq!(none.outcome.cost.to_string(), "0");
    assert_eq!(none.outcome.code.as_deref(), Some("budget_exceeded"));
}

#[test]
fn an_exhausted_replay_is_model_unavailable() {
    let r = run(vec![stop("a")], |p| {
        p.policies = vec![Policy::Retry { times: 1 }]
    });
    assert_eq!(r.outcome.status, Status::Error);
    assert_eq!(r.outcome.code.as_deref(), Some("model_unavailable"));
}

#[test]
fn a_check_that_cannot_evaluate_is_internal_error() {
    let table = review_types();
    let boom = Check {
        name: "boom".into(),
        params: vec![],
        locals: 0,
        requires: vec![Require {
            cond: Expr::binary(
                BinaryOp::Eq,
                Expr::binary(
                    BinaryOp::Div,
                    Expr::constant(Value::Int(1)),
                    Expr::constant(Value::Int(0)),
                ),
                Expr::constant(Value::Int(1)),
            ),
            code: "x".into(),
            message: None,
        }],
    };
    let ty = named(REVIEW);
    let mut pipeline = Pipeline::new(&table, &ty, "primary_model", 1 << 20);
    pipeline.policies = vec![Policy::Retry { times: 3 }];
    let mut model = ReplayModel::new(vec![stop(&review_json(1)); 4]);
    let fns: Vec<FnDef> = Vec::new();
    let mut host = NoHost;
    let checks = vec![StageCheck::Ir {
        check: &boom,
        args: vec![],
    }];
    let mut stage = IrStage::new(&fns, &mut host, &[], checks);
    let outcome = pipeline.run("p", &mut model, &mut stage, &mut TickClock::default());
    assert_eq!(outcome.status, Status::Error);
    assert_eq!(outcome.code.as_deref(), Some("internal_error"));
    assert_eq!(
        outcome.attempts.len(),
        1,
        "no retry after an internal error"
    );
}

#[test]
fn replay_file_drives_a_run() {
    let table = review_types();
    let ty = named(REVIEW);
    let line = serde_json::json!({"text": review_json(1), "finish_reason": "stop"}).to_string();
    let text = format!("{{\"text\": \"{{\", \"finish_reason\": \"length\"}}\n{line}\n");
    let mut model = ReplayModel::from_jsonl(&text).unwrap_or_default();
    let mut pipeline = Pipeline::new(&table, &ty, "primary_model", 1 << 20);
    pipeline.policies = vec![Policy::Retry { times: 1 }];
    let outcome = pipeline.run("p", &mut model, &mut NoStage, &mut TickClock::default());
    assert_eq!(outcome.status, Status::Succeeded);
    assert_eq!(first_rejection(&outcome, 0), (1, "truncated_output".into()));
}

#[test]
fn receipts_validate_against_their_schema_and_each_run_has_its_own_id() {
    let schema = receipt_schema();
    let validator = jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{e}"));
    let r = run(vec![stop(&review_json(3)), stop(&review_json(1))], |p| {
        p.policies = vec![Policy::Repair { times: 1 }];
        p.prices.insert(
            "primary_model".into(),
            Price {
                input_per_mtok: "0.15".into(),
                output_per_mtok: "0.60".into(),
                currency: "EUR".into(),
            },
        );
    });
    let input = br#"{"document": "d", "max_findings": 2}"#;
    let receipt = Receipt::new(
        UuidIds.receipt_id(),
        "acme/review",
        "0.1.0",
        "review",
        input,
        &r.outcome,
        Vec::new(),
    );
    let json = serde_json::to_value(&receipt).unwrap_or_default();
    let errors: Vec<String> = validator
        .iter_errors(&json)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}\n{json}");
    assert!(receipt.receipt.starts_with("rcpt_") && receipt.receipt.len() == 37);
    assert_eq!(receipt.cost.amount, "0.0009"); // 2 × (1000 × 0.15 + 500 × 0.60) / 1e6
                                               // Each call reserved its worst case first: at least what it cost.
    let reserved = aelc_runtime::money::Amount::parse(&receipt.reserved.amount).unwrap();
    assert!(reserved >= aelc_runtime::money::Amount::parse("0.0009").unwrap());
    assert_eq!(receipt.cost.currency.as_deref(), Some("EUR"));
    assert_eq!(
        receipt
            .attempts
            .first()
            .and_then(|a| a.rejected.as_ref())
            .map(|x| x.step),
        Some(4)
    );
    // The same run again: the same content under a new id (never a hash of the content).
    let again = Receipt::new(
        UuidIds.receipt_id(),
        "acme/review",
        "0.1.0",
        "review",
        input,
        &r.outcome,
        Vec::new(),
    );
    assert_ne!(again.receipt, receipt.receipt);
    assert_eq!(
        Receipt {
            receipt: String::new(),
            ..again
        },
        Receipt {
            receipt: String::new(),
            ..receipt.clone()
        }
    );

    let refused = Receipt::rejected_input(
        UuidIds.receipt_id(),
        "acme/review",
        "0.1.0",
        "review",
        b"{}",
    );
    assert_eq!(
        refused.status,
        aelc_runtime::pipeline::Status::RejectedInput
    );
    assert_eq!(refused.code.as_deref(), Some("invalid_input"));
    assert_eq!(refused.cost.amount, "0");
    assert!(refused.attempts.is_empty());
    let refused_json = serde_json::to_value(&refused).unwrap_or_default();
    assert!(validator.is_valid(&refused_json));
    assert_ne!(refused.receipt, receipt.receipt);

    // An invalid output is free for the caller, whatever the calls cost.
    let failed = run(vec![stop("x")], |p| {
        p.prices.insert(
            "primary_model".into(),
            Price {
                input_per_mtok: "1".into(),
                output_per_mtok: "1".into(),
                currency: "EUR".into(),
            },
        );
    });
    let failed = Receipt::new(
        UuidIds.receipt_id(),
        "acme/review",
        "0.1.0",
        "review",
        input,
        &failed.outcome,
        Vec::new(),
    );
    assert_eq!(
        (failed.cost.amount.as_str(), failed.spent.amount.as_str()),
        ("0", "0.0015")
    );
}

/// The receipt schema is published as `stdlib/runtime/schemas/receipt.schema.json` (linked
/// from the book); this fails when the file and the `Receipt` type drift apart. `AEL_BLESS=1`
/// rewrites it.
#[test]
fn the_published_receipt_schema_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/receipt.schema.json");
    let mut expected = serde_json::to_string_pretty(&receipt_schema()).unwrap_or_default();
    expected.push('\n');
    if std::env::var_os("AEL_BLESS").is_some() {
        let _ = std::fs::create_dir_all(path.parent().unwrap_or(&path));
        std::fs::write(&path, &expected).unwrap_or_else(|e| panic!("{e}"));
    }
    let published = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        published == expected,
        "{} is out of date; run with AEL_BLESS=1",
        path.display()
    );
    let schema: serde_json::Value = serde_json::from_str(&published).unwrap_or_default();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    for status in [
        "succeeded",
        "rejected_input",
        "invalid_output",
        "failed",
        "error",
    ] {
        assert!(published.contains(&format!("\"{status}\"")), "{status}");
    }
}
