//! `write_review` and the review node through the generated glue, against replay answers:
//! the runtime renders the node's prompt (the Rust side passes none), the example files of
//! `examples/review` replay through `glue::review::run_json` with the results they declare,
//! and the generated types refuse out-of-bounds values with the decoder's own sentences.

use aelc_runtime::glue::{self as rt, Glue};
use aelc_runtime::model::{FinishReason, ModelAnswer, ReplayModel, Usage};
use aelc_runtime::pipeline::{Status, TickClock};
use review_rs::glue;
use review_rs::Reviewer;

fn answer(text: &str) -> ModelAnswer {
    ModelAnswer {
        text: text.to_owned(),
        finish_reason: FinishReason::Stop,
        usage: Usage::default(),
    }
}

/// Runs `f` with a context over a replay of `answers`.
fn with_ctx<T>(answers: &[&str], f: impl FnOnce(&mut rt::Context<'_>) -> T) -> (T, ReplayModel) {
    let mut model = ReplayModel::new(answers.iter().map(|a| answer(a)));
    let mut clock = TickClock { now: 0, tick: 1 };
    let mut media = rt::NoMedia;
    let mut ctx = rt::Context::new(&mut model, &mut clock, &mut media);
    // Recorded answers answer whatever they are asked.
    ctx.check_accepts = false;
    let out = f(&mut ctx);
    (out, model)
}

#[test]
fn write_review_runs_the_node_on_the_replay_binding() {
    let request =
        glue::review::decode(br#"{"document": "Teh cat.\nOn teh mat.", "max_findings": 3}"#)
            .expect("a valid request");
    let answer = r#"{"summary": "Typos.", "findings": [
        {"line": 1, "severity": "low", "message": "Short."},
        {"line": 2, "severity": "high", "message": "Typo: teh."}]}"#;
    let mut reviewer = Reviewer::default();
    let (review, model) = with_ctx(&[answer], |ctx| {
        glue::externs::NodesReview::write_review(&mut reviewer, ctx, request)
    });
    let review = review.expect("accepted");
    // The transform `by_severity` ran: high first.
    let severities: Vec<glue::Severity> = review
        .findings
        .as_slice()
        .iter()
        .map(|f| f.severity)
        .collect();
    assert_eq!(severities, [glue::Severity::High, glue::Severity::Low]);
    assert_eq!(review.summary.as_str(), "Typos.");
    // The runtime rendered `prompts/review.md` for the request, output schema included.
    assert_eq!(model.requests.len(), 1);
    let prompt = &model.requests[0].prompt;
    assert!(prompt.contains("Return at most 3 findings"), "{prompt}");
    assert!(prompt.contains("Report only problems a reader would notice."));
    assert!(prompt.contains("On teh mat."));
    assert!(
        prompt.contains("\"findings\""),
        "the output schema is inserted"
    );
    assert_eq!(reviewer.receipts.len(), 1);
    assert_eq!(reviewer.receipts[0].node, "review");
}

#[test]
fn the_node_runs_from_rust_without_a_prompt_and_returns_its_receipt() {
    let request = glue::review::decode(br#"{"document": "Fine.", "strict": true}"#).unwrap();
    let answer = r#"{"summary": "Fine.", "findings": []}"#;
    let (run, model) = with_ctx(&[answer], |ctx| {
        glue::review::run(&mut Reviewer::default(), ctx, &request).expect("the review runs")
    });
    assert_eq!(run.outcome().status, Status::Succeeded);
    assert_eq!(
        run.output.as_ref().expect("typed").summary.as_str(),
        "Fine."
    );
    assert!(run.receipt().receipt.starts_with("rcpt_"));
    assert_eq!(run.receipt().attempts.len(), 1);
    assert!(model.requests[0].prompt.contains("Be strict"));
}

#[test]
fn write_review_fails_with_the_declared_code_when_the_policy_gives_up() {
    let request = glue::review::decode(br#"{"document": "x", "max_findings": 1}"#).unwrap();
    let two = r#"{"summary": "s", "findings": [
        {"line": 1, "severity": "low", "message": "a"},
        {"line": 1, "severity": "low", "message": "b"}]}"#;
    let mut reviewer = Reviewer::default();
    let (result, model) = with_ctx(&[two, two, two, two], |ctx| {
        glue::externs::NodesReview::write_review(&mut reviewer, ctx, request)
    });
    let err = result.expect_err("too many findings every time");
    assert!(err.message.contains("too_many_findings"), "{err:?}");
    assert_eq!(model.remaining(), 0, "repair(2) and a fallback: four calls");
}

/// Every example of `examples/review` replays through the glue with its declared result.
#[test]
fn examples_replay_through_the_glue() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../review/examples/review");
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    assert!(names.len() >= 4);
    for path in names {
        let example: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let input = serde_json::to_vec(&example["input"]).unwrap();
        let answers: Vec<&str> = example["answers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let mut reviewer = Reviewer::default();
        let (run, _) = with_ctx(&answers, |ctx| {
            glue::review::run_json(&mut reviewer, ctx, &input).expect("the review runs")
        });
        let name = path.display();
        match example.get("output") {
            Some(expected) => {
                let output = run
                    .output
                    .as_ref()
                    .unwrap_or_else(|| panic!("{name}: {:?}", run.run));
                let json = serde_json::to_value(output).unwrap();
                assert_eq!(&json, expected, "{name}");
                assert_eq!(run.outcome().status, Status::Succeeded, "{name}");
            }
            None => {
                let outcome = run.outcome();
                let status = format!("{:?}", outcome.status);
                let want_status = example["status"].as_str().unwrap().replace('_', "");
                assert_eq!(status.to_lowercase(), want_status, "{name}");
                assert_eq!(outcome.code.as_deref(), example["code"].as_str(), "{name}");
            }
        }
    }
}

#[test]
fn bounded_types_refuse_what_the_decoder_refuses_in_the_same_words() {
    let long = "x".repeat(4001);
    let err = rt::BoundedStr::<4000>::new(long.clone()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "text has 4001 characters, at most 4000 are allowed (too_long)"
    );
    let doc = format!(r#"{{"document": "{long}"}}"#);
    let errors = glue::review::decode(doc.as_bytes()).unwrap_err();
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].message,
        format!("request.document: {err}"),
        "the decoder's sentence is the checked constructor's, with the path"
    );
    // u16<1..=50>
    type MaxFindings = rt::BoundedInt<u16, 1, 50>;
    assert_eq!(
        MaxFindings::new(51).unwrap_err().to_string(),
        "51 is out of range for u16 in 1..=50 (out_of_range)"
    );
    assert!(MaxFindings::new(50).is_ok());
    // The locale's pattern is enforced by the type.
    let locale: Result<glue::ReviewRequest, _> =
        serde_json::from_str(r#"{"document": "d", "locale": "english"}"#);
    let message = locale.unwrap_err().to_string();
    assert!(message.contains("(pattern_mismatch)"), "{message}");
}

#[test]
fn generated_types_round_trip_through_runtime_values() {
    let request = glue::review::decode(br#"{"document": "d", "locale": "en-GB"}"#).unwrap();
    // Defaults were filled in by the runtime decoder.
    assert!(!request.strict);
    assert_eq!(request.max_findings.get(), 10);
    let value = request.to_value();
    let back = glue::ReviewRequest::from_value(value).unwrap();
    assert_eq!(back, request);
    // serde agrees with the runtime's canonical JSON.
    let canonical = rt::Glue::to_value(&request).to_json_string(
        &glue::program().nodes[glue::review::INDEX].params[0].ty,
        &glue::program().types,
    );
    assert_eq!(serde_json::to_string(&request).unwrap(), canonical);
}
