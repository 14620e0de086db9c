//! A node's pipeline (spec §6.1) running on real providers through [`ProviderModel`]: repair
//! carries the rejection reasons to the endpoint, fallback moves to another binding, and step 1
//! turns too-large and truncated answers into rejections.

use crate::provider_server::{json_reply, sse, Reply, Server};
use aelc_runtime::model::Model;
use aelc_runtime::pipeline::{NoStage, Pipeline, Policy, Status, SystemClock};
use aelc_runtime::provider::{
    connect, NodeCall, OutputSchema, Part, ProviderConfig, ProviderKind, ProviderModel,
};
use aelc_runtime::testing::{named, review_json, review_types, REVIEW};
use serde_json::{json, Value};
use std::time::Duration;

fn completion(content: &str) -> Value {
    json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    })
}

fn openai(server: &Server, stream: bool) -> Box<dyn aelc_runtime::provider::Provider> {
    let mut config = ProviderConfig::new(ProviderKind::OpenAi, "local-model");
    config.base_url = Some(server.url("/v1"));
    config.stream = stream;
    connect(config).expect("binding")
}

fn node() -> NodeCall {
    let mut node = NodeCall::new(Duration::from_secs(5));
    node.set_schema(
        "openai",
        OutputSchema {
            name: "review".into(),
            schema: json!({"type": "object"}).into(),
            strict: true,
            wrapped: false,
            maps: None,
        },
    );
    node
}

fn run(
    model: &mut dyn Model,
    policies: Vec<Policy>,
    max_answer: u64,
) -> aelc_runtime::pipeline::Outcome {
    let table = review_types();
    let output = named(REVIEW);
    let mut pipeline = Pipeline::new(&table, &output, "primary", max_answer);
    pipeline.policies = policies;
    pipeline.run(
        "Review: hi",
        model,
        &mut NoStage,
        &mut SystemClock::default(),
    )
}

/// The user message's text parts, joined.
fn user_text(body: &Value) -> String {
    let content = &body["messages"][0]["content"];
    match content {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[test]
fn repair_sends_the_reasons_and_succeeds_on_the_second_call() {
    let bad = r#"{"summary": 3, "score": 0.5, "findings": [], "verdict": {"kind": "approve"}}"#;
    let server = Server::start(vec![
        json_reply(200, &completion(bad)),
        json_reply(200, &completion(&review_json(1))),
    ]);
    let mut model = ProviderModel::new(node()).with_binding("primary", openai(&server, false));
    let outcome = run(&mut model, vec![Policy::Repair { times: 1 }], 64 * 1024);
    assert_eq!(outcome.status, Status::Succeeded, "{outcome:?}");
    assert_eq!(outcome.attempts.len(), 2);
    assert_eq!(
        outcome.attempts[0]
            .rejected
            .as_ref()
            .map(|r| r.code.as_str()),
        Some("wrong_type")
    );

    let (requests, _) = server.finish();
    let first = user_text(&requests[0].body);
    assert_eq!(first, "Review: hi", "the first call carries no reasons");
    let second = user_text(&requests[1].body);
    assert!(
        second.starts_with("Review: hi\n\nYour previous answer was rejected."),
        "{second}"
    );
    assert!(
        second.contains(bad),
        "the previous answer is quoted: {second}"
    );
    assert!(
        second.contains("\n- output.summary: expected a string, found a number (wrong_type)\n"),
        "one line per reason, path and code once: {second}"
    );
    assert_eq!(
        requests[1].body["response_format"]["json_schema"]["name"],
        json!("review")
    );
}

#[test]
fn fallback_moves_to_another_binding_after_a_server_error() {
    let primary = Server::start(vec![json_reply(
        503,
        &json!({"error": {"message": "down"}}),
    )]);
    let backup = Server::start(vec![json_reply(
        200,
        &json!({
            "type": "message", "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "review", "input": serde_json::from_str::<Value>(&review_json(2)).expect("json")}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 12, "output_tokens": 30},
        }),
    )]);
    let mut anthropic = ProviderConfig::new(ProviderKind::Anthropic, "claude");
    anthropic.base_url = Some(backup.url(""));
    anthropic.stream = false;
    let mut node = node();
    node.parts = Some(vec![
        Part::System("Be brief.".into()),
        Part::Text("Review: hi".into()),
    ]);
    node.set_schema(
        "anthropic",
        OutputSchema {
            name: "review".into(),
            schema: json!({"type": "object"}).into(),
            strict: true,
            wrapped: false,
            maps: None,
        },
    );
    let mut model = ProviderModel::new(node)
        .with_binding("primary", openai(&primary, false))
        .with_binding("backup", connect(anthropic).expect("binding"));
    let outcome = run(
        &mut model,
        vec![Policy::Fallback {
            binding: "backup".into(),
        }],
        64 * 1024,
    );
    assert_eq!(outcome.status, Status::Succeeded, "{outcome:?}");
    let bindings: Vec<&str> = outcome
        .attempts
        .iter()
        .map(|a| a.binding.as_str())
        .collect();
    assert_eq!(bindings, ["primary", "backup"]);
    let first = outcome.attempts[0].rejected.as_ref().expect("rejected");
    assert_eq!(first.code, "model_unavailable");
    assert!(first.message.contains("HTTP 503: down"), "{first:?}");
    assert_eq!(outcome.attempts[1].usage.output_tokens, 30);
    let (sent, _) = backup.finish();
    assert_eq!(sent[0].body["system"], json!("Be brief."));
    assert_eq!(
        sent[0].body["tool_choice"],
        json!({"type": "tool", "name": "review"})
    );
}

#[test]
fn too_large_and_truncated_streams_are_step_one_rejections() {
    let chunk = |text: &str| {
        sse(&json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]}))
    };
    let mut head =
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n".to_vec();
    head.extend_from_slice(chunk("{\"summary\": \"").as_bytes());
    let server = Server::start(vec![
        Reply::Endless {
            head,
            piece: chunk(&"x".repeat(512)).into_bytes(),
            limit: 64 << 20,
        },
        // A whole, valid answer, but the stream never says [DONE].
        Reply::Stream {
            events: vec![chunk(&review_json(0))],
            chunked: false,
            complete: true,
        },
    ]);
    let mut model = ProviderModel::new(node()).with_binding("primary", openai(&server, true));
    let outcome = run(&mut model, vec![Policy::Retry { times: 1 }], 2048);
    assert_eq!(outcome.status, Status::InvalidOutput, "{outcome:?}");
    let codes: Vec<(u8, &str)> = outcome
        .attempts
        .iter()
        .map(|a| {
            a.rejected
                .as_ref()
                .map(|r| (r.step, r.code.as_str()))
                .unwrap_or((0, ""))
        })
        .collect();
    assert_eq!(codes, [(1, "too_large"), (1, "truncated_output")]);
    assert!(outcome.attempts[0].bytes > 2048 && outcome.attempts[0].bytes <= 2048 + 512);
    let (_, ends) = server.finish();
    assert!(ends[0].client_hung_up, "{ends:?}");
}

#[test]
fn a_timeout_is_the_runs_error_code() {
    let server = Server::start(vec![Reply::Stall {
        hold: Duration::from_secs(3),
    }]);
    let mut node = node();
    node.timeout = Duration::from_millis(150);
    let mut model = ProviderModel::new(node).with_binding("primary", openai(&server, false));
    let outcome = run(&mut model, vec![], 4096);
    assert_eq!(outcome.status, Status::Error);
    assert_eq!(outcome.code.as_deref(), Some("timeout"));
}

fn run_with(
    model: &mut dyn Model,
    policies: Vec<Policy>,
    budget: aelc_runtime::pipeline::Budget,
    clock: &mut dyn aelc_runtime::pipeline::Clock,
) -> aelc_runtime::pipeline::Outcome {
    let table = review_types();
    let output = named(REVIEW);
    let mut pipeline = Pipeline::new(&table, &output, "primary", 64 * 1024);
    pipeline.policies = policies;
    pipeline.budget = budget;
    pipeline.prices.insert(
        "primary".into(),
        aelc_runtime::money::Price {
            input_per_mtok: "2".into(),
            output_per_mtok: "10".into(),
            currency: "EUR".into(),
        },
    );
    pipeline.run("Review: hi", model, &mut NoStage, clock)
}

fn completion_with_usage(content: &str, input: u64, output: u64) -> Value {
    json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": input, "completion_tokens": output},
    })
}

#[test]
fn max_cost_reserves_the_worst_case_and_bills_the_reported_usage() {
    let bad = r#"{"summary": 3}"#;
    // Each call reports 1000 input and 500 output tokens: 0.002 + 0.005 = 0.007 EUR. Its worst
    // case, reserved first, is (10 prompt bytes + 256) × 2/M + the output-token limit of a
    // 64 KiB answer, 22,102 tokens, × 10/M = 0.221552 EUR.
    let server = Server::start(vec![
        json_reply(200, &completion_with_usage(bad, 1000, 500)),
        json_reply(200, &completion_with_usage(bad, 1000, 500)),
        json_reply(200, &completion_with_usage(&review_json(1), 1000, 500)),
    ]);
    let mut model = ProviderModel::new(node()).with_binding("primary", openai(&server, false));
    let budget = aelc_runtime::pipeline::Budget {
        max_cost: Some("0.23".into()),
        ..Default::default()
    };
    let outcome = run_with(
        &mut model,
        vec![Policy::Retry { times: 5 }],
        budget,
        &mut SystemClock::default(),
    );
    // 0.007 + 0.221552 fits in 0.23; 0.014 + 0.221552 does not: the third is never made.
    assert_eq!(outcome.status, Status::Error);
    assert_eq!(outcome.code.as_deref(), Some("budget_exceeded"));
    assert_eq!(outcome.attempts.len(), 2);
    assert_eq!(outcome.attempts[0].cost, "0.007");
    assert_eq!(outcome.cost.to_string(), "0.014");
    assert_eq!(outcome.attempts[0].reserved, "0.221552");
    // The third reply is never asked for (so the server is not waited for).
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn max_calls_stops_the_policy_before_the_endpoint_is_asked_again() {
    let bad = r#"{"summary": 3}"#;
    let server = Server::start(vec![
        json_reply(200, &completion(bad)),
        json_reply(200, &completion(bad)),
        json_reply(200, &completion(&review_json(1))),
    ]);
    let mut model = ProviderModel::new(node()).with_binding("primary", openai(&server, false));
    let budget = aelc_runtime::pipeline::Budget {
        max_calls: Some(2),
        ..Default::default()
    };
    let outcome = run_with(
        &mut model,
        vec![Policy::Repair { times: 5 }],
        budget,
        &mut SystemClock::default(),
    );
    assert_eq!(outcome.status, Status::Error);
    assert_eq!(outcome.code.as_deref(), Some("budget_exceeded"));
    assert_eq!(outcome.attempts.len(), 2);
    assert_eq!(
        server.requests().len(),
        2,
        "the third reply is never asked for"
    );
}

#[test]
fn max_time_refuses_an_answer_that_arrives_late() {
    let server = Server::start(vec![json_reply(200, &completion(&review_json(1)))]);
    let mut model = ProviderModel::new(node()).with_binding("primary", openai(&server, false));
    let budget = aelc_runtime::pipeline::Budget {
        max_time_ms: Some(1_000),
        ..Default::default()
    };
    // The injected clock says each reading is 0.6 s after the previous one: the call starts
    // in time (0.6 s), the answer arrives at 1.2 s, past max_time.
    let mut clock = aelc_runtime::pipeline::TickClock { now: 0, tick: 600 };
    let outcome = run_with(&mut model, vec![], budget, &mut clock);
    assert_eq!(outcome.status, Status::Error);
    assert_eq!(outcome.code.as_deref(), Some("budget_exceeded"));
    assert_eq!(
        outcome
            .attempts
            .first()
            .and_then(|a| a.rejected.as_ref())
            .map(|r| r.code.as_str()),
        Some("budget_exceeded")
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_rate_limit_waits_for_retry_after_before_the_policy_asks_again() {
    let server = Server::start(vec![
        Reply::Full {
            status: 429,
            headers: vec![("retry-after".into(), "1".into())],
            body: br#"{"error": {"message": "slow down"}}"#.to_vec(),
        },
        json_reply(200, &completion(&review_json(1))),
    ]);
    let mut model = ProviderModel::new(node()).with_binding("primary", openai(&server, false));
    let outcome = run(&mut model, vec![Policy::Retry { times: 1 }], 64 * 1024);
    assert_eq!(outcome.status, Status::Succeeded, "{outcome:?}");
    let first = outcome.attempts[0]
        .rejected
        .as_ref()
        .map(|r| r.message.clone());
    assert!(
        first
            .as_deref()
            .is_some_and(|m| m.contains("HTTP 429") && m.contains("retry after 1000 ms")),
        "{first:?}"
    );
    assert!(
        model.waited > Duration::ZERO,
        "the second call waited for retry-after"
    );
    // Without a retry policy, the 429 ends the run as model_unavailable.
    let server = Server::start(vec![Reply::Full {
        status: 429,
        headers: vec![("retry-after".into(), "1".into())],
        body: br#"{"error": {"message": "slow down"}}"#.to_vec(),
    }]);
    let mut model = ProviderModel::new(node()).with_binding("primary", openai(&server, false));
    let outcome = run(&mut model, vec![], 64 * 1024);
    assert_eq!(outcome.status, Status::Error);
    assert_eq!(outcome.code.as_deref(), Some("model_unavailable"));
    assert_eq!(
        model.waited,
        Duration::ZERO,
        "nothing waits when no call follows"
    );
}

#[test]
fn a_rate_limit_told_to_one_run_is_honoured_by_the_next() {
    // Run 1 is told "429, retry after 1 s" and has no retry policy: it ends model_unavailable.
    // Run 2 is another model over the same providers (a server makes one per run): its first
    // call waits out what run 1 was told instead of meeting the limit again at once.
    let server = Server::start(vec![
        Reply::Full {
            status: 429,
            headers: vec![("retry-after".into(), "1".into())],
            body: br#"{"error": {"message": "slow down"}}"#.to_vec(),
        },
        json_reply(200, &completion(&review_json(1))),
    ]);
    let limits = aelc_runtime::provider::backoff::RateLimits::default();
    let mut first = ProviderModel::new(node())
        .with_binding("primary", openai(&server, false))
        .with_rate_limits(limits.clone());
    let outcome = run(&mut first, vec![], 64 * 1024);
    assert_eq!(outcome.code.as_deref(), Some("model_unavailable"));
    assert_eq!(first.waited, Duration::ZERO);
    let mut second = ProviderModel::new(node())
        .with_binding("primary", openai(&server, false))
        .with_rate_limits(limits.clone());
    let outcome = run(&mut second, vec![], 64 * 1024);
    assert_eq!(outcome.status, Status::Succeeded, "{outcome:?}");
    assert!(
        second.waited > Duration::from_millis(500),
        "the next run waited for the retry-after run 1 was told: {:?}",
        second.waited
    );
    // A model with limits of its own (another server's) does not wait.
    let server = Server::start(vec![json_reply(200, &completion(&review_json(1)))]);
    let mut unrelated = ProviderModel::new(node()).with_binding("primary", openai(&server, false));
    let outcome = run(&mut unrelated, vec![], 64 * 1024);
    assert_eq!(outcome.status, Status::Succeeded);
    assert_eq!(unrelated.waited, Duration::ZERO);
}

#[test]
fn finish_reason_length_is_truncated_output_even_when_the_prefix_parses() {
    let cut = json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": review_json(1)}, "finish_reason": "length"}],
    });
    let server = Server::start(vec![json_reply(200, &cut)]);
    let mut model = ProviderModel::new(node()).with_binding("primary", openai(&server, false));
    let outcome = run(&mut model, vec![], 64 * 1024);
    assert_eq!(outcome.status, Status::InvalidOutput);
    assert_eq!(
        outcome.attempts[0]
            .rejected
            .as_ref()
            .map(|r| (r.step, r.code.as_str())),
        Some((1, "truncated_output"))
    );
}

fn anthropic(server: &Server) -> Box<dyn aelc_runtime::provider::Provider> {
    let mut config = ProviderConfig::new(ProviderKind::Anthropic, "claude-test");
    config.base_url = Some(server.url(""));
    config.stream = false;
    config.api_key_env = Some(KEY_VAR.into());
    connect(config).expect("binding")
}

const KEY_VAR: &str = "AELC_PIPELINE_TEST_KEY";
const KEY: &str = "sk-ant-pipeline-0a1b2c3d4e5f";

#[test]
fn a_malformed_response_and_a_key_echoing_error_leave_no_key_in_the_receipt() {
    std::env::set_var(KEY_VAR, KEY);
    let server = Server::start(vec![
        // Not the Messages API's shape.
        json_reply(200, &json!({"completion": "hello"})),
        // A proxy that echoes the request's key in its error.
        json_reply(
            401,
            &json!({"type": "error", "error": {"type": "authentication_error", "message": format!("invalid x-api-key {KEY}")}}),
        ),
    ]);
    let mut model = ProviderModel::new(node()).with_binding("primary", anthropic(&server));
    let outcome = run(&mut model, vec![Policy::Retry { times: 1 }], 64 * 1024);
    assert_eq!(outcome.status, Status::Error);
    assert_eq!(outcome.code.as_deref(), Some("model_unavailable"));
    let first = outcome.attempts[0]
        .rejected
        .as_ref()
        .map(|r| r.message.clone());
    assert!(
        first.as_deref().is_some_and(|m| m.contains("not the shape")
            || m.contains("malformed")
            || m.contains("missing")),
        "the reason says what is wrong: {first:?}"
    );
    let receipt = aelc_runtime::receipt::Receipt::new(
        aelc_runtime::receipt::IdSource::receipt_id(&mut aelc_runtime::receipt::UuidIds),
        "acme/review",
        "0.1.0",
        "review",
        b"{}",
        &outcome,
        Vec::new(),
    );
    let json = receipt.to_json_string();
    assert!(
        json.contains("authentication_error") || json.contains("401"),
        "{json}"
    );
    assert!(
        !json.contains(KEY),
        "the key leaked into the receipt: {json}"
    );
    let (requests, _) = server.finish();
    assert_eq!(requests[1].header("x-api-key"), Some(KEY));
}
