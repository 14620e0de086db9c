//! The `anthropic` provider against a scripted HTTP server on 127.0.0.1: recorded Messages API
//! responses, streamed and not, structured output through one forced tool or through
//! `output_config.format`.

use crate::provider_server::{json_reply, named_sse, Reply, Server};
use aelc_runtime::provider::{
    connect, FinishReason, ModelRequest, OutputSchema, Part, Provider, ProviderConfig,
    ProviderError, ProviderKind, Usage,
};
use serde_json::{json, Value};
use std::time::Duration;

const KEY_VAR: &str = "AEL_TEST_ANTHROPIC_KEY";
const KEY: &str = "sk-ant-test-secret-42";

fn provider(server: &Server, stream: bool) -> Box<dyn Provider> {
    std::env::set_var(KEY_VAR, KEY);
    let mut config = ProviderConfig::new(ProviderKind::Anthropic, "claude-3-5-haiku-latest");
    config.base_url = Some(server.url(""));
    config.api_key_env = Some(KEY_VAR.to_string());
    config.stream = stream;
    connect(config).expect("a valid binding")
}

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {"summary": {"type": "string"}},
        "required": ["summary"],
    })
}

fn request(max_answer: u64) -> ModelRequest {
    let mut request = ModelRequest::new(
        vec![
            Part::System("You review documents.".into()),
            Part::Text("Review: hi".into()),
        ],
        max_answer,
        Duration::from_secs(5),
    );
    request.output_schema = Some(OutputSchema {
        name: "nodes::review".into(),
        schema: schema().into(),
        strict: true,
        wrapped: false,
        maps: None,
    });
    request
}

fn message(content: Value, stop_reason: &str) -> Value {
    json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-3-5-haiku-latest",
        "content": content, "stop_reason": stop_reason, "stop_sequence": null,
        "usage": {"input_tokens": 40, "output_tokens": 9},
    })
}

/// A recorded stream: a tool call whose input arrives in `pieces`.
fn tool_stream(pieces: &[&str], stop_reason: &str, with_stop: bool) -> Vec<String> {
    let mut events = vec![
        named_sse(
            "message_start",
            &json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 40, "output_tokens": 1}}}),
        ),
        named_sse(
            "content_block_start",
            &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "nodes__review", "input": {}}}),
        ),
        named_sse("ping", &json!({"type": "ping"})),
    ];
    for piece in pieces {
        events.push(named_sse(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": piece}}),
        ));
    }
    events.push(named_sse(
        "content_block_stop",
        &json!({"type": "content_block_stop", "index": 0}),
    ));
    events.push(named_sse(
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": 9}}),
    ));
    if with_stop {
        events.push(named_sse("message_stop", &json!({"type": "message_stop"})));
    }
    events
}

#[test]
fn a_tool_answer_and_the_request_shape() {
    let server = Server::start(vec![json_reply(
        200,
        &message(
            json!([{"type": "tool_use", "id": "toolu_1", "name": "nodes__review", "input": {"summary": "ok"}}]),
            "tool_use",
        ),
    )]);
    let answer = provider(&server, false)
        .complete(&request(3000))
        .expect("an answer");
    assert_eq!(answer.text, r#"{"summary":"ok"}"#);
    assert_eq!(answer.finish_reason, FinishReason::Stop);
    assert_eq!(
        answer.usage,
        Usage {
            input_tokens: 40,
            output_tokens: 9
        }
    );

    let (requests, _) = server.finish();
    let sent = &requests[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.body,
        json!({
            "model": "claude-3-5-haiku-latest",
            "max_tokens": 1256,
            "system": "You review documents.",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Review: hi"}]}],
            "tools": [{
                "name": "nodes__review",
                "description": "Return the answer. The input is the answer itself, exactly as the schema describes it.",
                "input_schema": schema(),
            }],
            "tool_choice": {"type": "tool", "name": "nodes__review"},
        })
    );
}

#[test]
fn a_streamed_tool_answer_is_the_joined_partial_json() {
    let server = Server::start(vec![Reply::Stream {
        events: tool_stream(&["{\"summ", "ary\": \"o", "k\"}"], "tool_use", true),
        chunked: true,
        complete: true,
    }]);
    let answer = provider(&server, true)
        .complete(&request(3000))
        .expect("an answer");
    assert_eq!(answer.text, "{\"summary\": \"ok\"}");
    assert_eq!(answer.finish_reason, FinishReason::Stop);
    assert_eq!(
        answer.usage,
        Usage {
            input_tokens: 40,
            output_tokens: 9
        }
    );
    assert_eq!(server.finish().0[0].body["stream"], json!(true));
}

#[test]
fn a_text_answer_without_structured_output() {
    let server = Server::start(vec![json_reply(
        200,
        &message(
            json!([{"type": "text", "text": "```json\n{\"summary\":\"ok\"}\n```"}]),
            "end_turn",
        ),
    )]);
    let answer = provider(&server, false)
        .complete(&request(3000))
        .expect("an answer");
    assert_eq!(answer.text, "```json\n{\"summary\":\"ok\"}\n```");
}

#[test]
fn max_tokens_is_length() {
    let server = Server::start(vec![
        json_reply(
            200,
            &message(json!([{"type": "text", "text": "{\"summ"}]), "max_tokens"),
        ),
        Reply::Stream {
            events: tool_stream(&["{\"summ"], "max_tokens", true),
            chunked: false,
            complete: true,
        },
    ]);
    let plain = provider(&server, false)
        .complete(&request(3000))
        .expect("an answer");
    assert_eq!(plain.finish_reason, FinishReason::Length);
    let streamed = provider(&server, true)
        .complete(&request(3000))
        .expect("an answer");
    assert_eq!(streamed.finish_reason, FinishReason::Length);
}

#[test]
fn a_stream_without_message_stop_is_truncated() {
    let server = Server::start(vec![Reply::Stream {
        events: tool_stream(&["{\"summary\":\"ok\"}"], "tool_use", false),
        chunked: false,
        complete: true,
    }]);
    let error = provider(&server, true)
        .complete(&request(3000))
        .expect_err("truncated");
    assert!(
        matches!(&error, ProviderError::Truncated { received: 16, reason, .. } if reason.contains("message_stop")),
        "{error:?}"
    );
}

#[test]
fn an_oversized_stream_is_cut_off_as_it_arrives() {
    let mut head =
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n".to_vec();
    for event in tool_stream(&[], "tool_use", false).iter().take(2) {
        head.extend_from_slice(event.as_bytes());
    }
    let piece = named_sse(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "z".repeat(500)}}),
    );
    let server = Server::start(vec![Reply::Endless {
        head,
        piece: piece.into_bytes(),
        limit: 64 << 20,
    }]);
    let error = provider(&server, true)
        .complete(&request(2048))
        .expect_err("too large");
    assert!(
        matches!(error, ProviderError::TooLarge { limit: 2048, .. }),
        "{error:?}"
    );
    let (_, outcomes) = server.finish();
    assert!(outcomes[0].client_hung_up, "{outcomes:?}");
}

#[test]
fn overload_errors_are_model_unavailable_and_never_show_the_key() {
    let server = Server::start(vec![
        json_reply(
            529,
            &json!({"type": "error", "error": {"type": "overloaded_error", "message": format!("Overloaded (key {KEY})")}}),
        ),
        Reply::Stream {
            events: vec![named_sse(
                "error",
                &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            )],
            chunked: false,
            complete: true,
        },
    ]);
    let http = provider(&server, false)
        .complete(&request(3000))
        .expect_err("529");
    assert_eq!(
        http,
        ProviderError::ModelUnavailable {
            status: Some(529),
            reason: "Overloaded (key ***)".into()
        }
    );
    assert!(!http.to_string().contains(KEY));
    let event = provider(&server, true)
        .complete(&request(3000))
        .expect_err("error event");
    assert_eq!(
        event,
        ProviderError::ModelUnavailable {
            status: None,
            reason: "the endpoint reported overloaded_error: Overloaded".into()
        }
    );
}

/// A list output comes as codegen's wrapped variant: the tool input schema is sent as it is,
/// and the tool input is unwrapped back to the list.
#[test]
fn a_wrapped_schema_is_sent_as_it_is_and_the_answer_unwrapped() {
    let server = Server::start(vec![json_reply(
        200,
        &message(
            json!([{"type": "tool_use", "id": "t", "name": "tags", "input": {"value": ["a", "b"]}}]),
            "tool_use",
        ),
    )]);
    let mut asked = request(3000);
    let wrapped = json!({
        "type": "object",
        "properties": {"value": {"type": "array", "items": {"type": "string"}}},
        "required": ["value"],
        "additionalProperties": false,
    });
    asked.output_schema = Some(OutputSchema {
        name: "tags".into(),
        schema: wrapped.clone().into(),
        strict: true,
        wrapped: true,
        maps: None,
    });
    let answer = provider(&server, false)
        .complete(&asked)
        .expect("an answer");
    assert_eq!(answer.text, r#"["a","b"]"#);
    let (requests, _) = server.finish();
    assert_eq!(requests[0].body["tools"][0]["input_schema"], wrapped);
}

#[test]
fn audio_is_refused_before_the_call() {
    let server = Server::start(vec![]);
    std::env::set_var(KEY_VAR, KEY);
    let mut config = ProviderConfig::new(ProviderKind::Anthropic, "claude");
    config.base_url = Some(server.url(""));
    config.accepts = aelc_runtime::provider::PartKind::ALL.to_vec();
    let mut asked = request(100);
    asked
        .parts
        .push(Part::Audio(aelc_runtime::provider::MediaSource {
            url: "data:audio/wav;base64,AA".into(),
            content_type: None,
        }));
    let error = connect(config)
        .expect("binding")
        .complete(&asked)
        .expect_err("no audio");
    assert!(
        matches!(error, ProviderError::UnsupportedPart { .. }),
        "{error:?}"
    );
    assert!(server.finish().0.is_empty());
}

#[test]
fn the_tool_input_is_passed_on_exactly_as_written() {
    // Duplicate keys and number spellings must reach the decoder, which rejects duplicates.
    let body = r#"{"type":"message","role":"assistant","content":[{"type":"tool_use","id":"t","name":"nodes__review","input":{"summary": "a", "summary": "b", "n": 3e0}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":2}}"#;
    let server = Server::start(vec![Reply::Full {
        status: 200,
        headers: vec![],
        body: body.as_bytes().to_vec(),
    }]);
    let answer = provider(&server, false)
        .complete(&request(3000))
        .expect("an answer");
    assert_eq!(answer.text, r#"{"summary": "a", "summary": "b", "n": 3e0}"#);
}

#[test]
fn structured_outputs_send_output_config_and_read_the_text() {
    let server = Server::start(vec![json_reply(
        200,
        &message(
            json!([{"type": "text", "text": "{\"value\": [{\"key\": \"a\", \"value\": 1}]}"}]),
            "end_turn",
        ),
    )]);
    std::env::set_var(KEY_VAR, KEY);
    let mut config = ProviderConfig::new(ProviderKind::Anthropic, "claude-sonnet-4-5");
    config.base_url = Some(server.url(""));
    config.api_key_env = Some(KEY_VAR.to_string());
    config.stream = false;
    config.constrain = aelc_runtime::provider::Constrain::OutputFormat;
    let provider = connect(config).unwrap();
    let mut asked = request(3000);
    let document =
        json!({"type": "object", "additionalProperties": {"type": "integer"}, "maxProperties": 3});
    let wrapped = json!({
        "type": "object",
        "properties": {"value": {"type": "array", "items": {"type": "object",
            "properties": {"key": {"type": "string"}, "value": {"type": "integer"}},
            "required": ["key", "value"], "additionalProperties": false}}},
        "required": ["value"],
        "additionalProperties": false,
    });
    asked.output_schema = Some(OutputSchema {
        name: "scores".into(),
        schema: wrapped.clone().into(),
        strict: true,
        wrapped: true,
        maps: Some(document),
    });
    let answer = provider.complete(&asked).unwrap();
    assert_eq!(answer.text, r#"{"a":1}"#);
    let (requests, _) = server.finish();
    let body = &requests[0].body;
    assert_eq!(
        body["output_config"],
        json!({"format": {"type": "json_schema", "schema": wrapped}})
    );
    assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
}
