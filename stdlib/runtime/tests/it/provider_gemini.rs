//! The `gemini` provider against a scripted HTTP server on 127.0.0.1: recorded
//! `generateContent` responses, streamed (`streamGenerateContent?alt=sse`) and not, with the
//! schema as `responseJsonSchema`.

use crate::provider_server::{json_reply, sse, Reply, Server};
use aelc_runtime::provider::{
    connect, FinishReason, ModelRequest, OutputSchema, Part, Provider, ProviderConfig,
    ProviderError, ProviderKind, Usage,
};
use serde_json::{json, Value};
use std::time::Duration;

const KEY_VAR: &str = "AEL_TEST_GEMINI_KEY";
const KEY: &str = "gm-test-secret-77";

fn provider(server: &Server, stream: bool) -> Box<dyn Provider> {
    std::env::set_var(KEY_VAR, KEY);
    let mut config = ProviderConfig::new(ProviderKind::Gemini, "gemini-2.5-flash");
    config.base_url = Some(server.url("/v1beta"));
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
    request.temperature = Some(0.2);
    request.output_schema = Some(OutputSchema {
        name: "review".into(),
        schema: schema().into(),
        strict: true,
        wrapped: false,
        maps: None,
    });
    request
}

fn response(parts: Value, finish: Option<&str>) -> Value {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    if let Some(f) = finish {
        candidate["finishReason"] = json!(f);
    }
    json!({
        "candidates": [candidate],
        "usageMetadata": {"promptTokenCount": 31, "candidatesTokenCount": 7, "thoughtsTokenCount": 5, "totalTokenCount": 43},
        "modelVersion": "gemini-2.5-flash",
    })
}

#[test]
fn gemini_answer_and_the_request_shape() {
    let server = Server::start(vec![json_reply(
        200,
        &response(
            json!([{"text": "thinking…", "thought": true}, {"text": "{\"summary\": "}, {"text": "\"ok\"}"}]),
            Some("STOP"),
        ),
    )]);
    let answer = provider(&server, false)
        .complete(&request(3000))
        .expect("an answer");
    assert_eq!(answer.text, r#"{"summary": "ok"}"#);
    assert_eq!(answer.finish_reason, FinishReason::Stop);
    assert_eq!(
        answer.usage,
        Usage {
            input_tokens: 31,
            output_tokens: 12
        }
    );
    let (requests, _) = server.finish();
    let sent = &requests[0];
    assert_eq!(sent.path, "/v1beta/models/gemini-2.5-flash:generateContent");
    assert_eq!(sent.header("x-goog-api-key"), Some(KEY));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.body,
        json!({
            "contents": [{"role": "user", "parts": [{"text": "Review: hi"}]}],
            "systemInstruction": {"parts": [{"text": "You review documents."}]},
            "generationConfig": {
                "maxOutputTokens": 1256,
                "temperature": 0.2,
                "responseMimeType": "application/json",
                "responseJsonSchema": schema(),
            },
        })
    );
}

#[test]
fn gemini_streams_until_a_finish_reason() {
    let chunks = [
        response(json!([{"text": "{\"summ"}]), None),
        response(json!([{"text": "ary\": \"ok\"}"}]), Some("STOP")),
    ];
    let events: Vec<String> = chunks.iter().map(sse).collect();
    let server = Server::start(vec![Reply::Stream {
        events,
        chunked: true,
        complete: true,
    }]);
    let answer = provider(&server, true)
        .complete(&request(3000))
        .expect("an answer");
    assert_eq!(answer.text, r#"{"summary": "ok"}"#);
    assert_eq!(answer.finish_reason, FinishReason::Stop);
    assert_eq!(answer.usage.input_tokens, 31);
    let (requests, _) = server.finish();
    assert_eq!(
        requests[0].path,
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
}

#[test]
fn gemini_finish_reasons_map_like_the_others() {
    for (raw, expected) in [
        ("STOP", FinishReason::Stop),
        ("MAX_TOKENS", FinishReason::Length),
        ("SAFETY", FinishReason::Other("SAFETY".into())),
        ("RECITATION", FinishReason::Other("RECITATION".into())),
    ] {
        let server = Server::start(vec![json_reply(
            200,
            &response(json!([{"text": "{\"summary\": \"x\"}"}]), Some(raw)),
        )]);
        let answer = provider(&server, false).complete(&request(3000)).unwrap();
        assert_eq!(answer.finish_reason, expected, "{raw}");
    }
    // A prompt blocked before any candidate.
    let server = Server::start(vec![json_reply(
        200,
        &json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": {"promptTokenCount": 9}}),
    )]);
    let answer = provider(&server, false).complete(&request(3000)).unwrap();
    assert_eq!(
        answer.finish_reason,
        FinishReason::Other("PROHIBITED_CONTENT".into())
    );
    assert_eq!(answer.text, "");
}

#[test]
fn gemini_cut_streams_errors_and_caps() {
    // No event carried a finishReason: truncated, with what arrived.
    let server = Server::start(vec![Reply::Stream {
        events: vec![sse(&response(json!([{"text": "{\"summary\": \"o"}]), None))],
        chunked: false,
        complete: false,
    }]);
    let error = provider(&server, true)
        .complete(&request(3000))
        .unwrap_err();
    assert!(
        matches!(&error, ProviderError::Truncated { partial, .. } if partial == "{\"summary\": \"o"),
        "{error:?}"
    );
    // An error status names what the server said, never the key.
    let server = Server::start(vec![json_reply(
        400,
        &json!({"error": {"code": 400, "message": format!("bad schema near {KEY}"), "status": "INVALID_ARGUMENT"}}),
    )]);
    let error = provider(&server, false)
        .complete(&request(3000))
        .unwrap_err();
    let text = error.to_string();
    assert!(text.contains("bad schema"), "{text}");
    assert!(!text.contains(KEY), "{text}");
    // An answer past max_answer stops the stream.
    let big = "x".repeat(200);
    let server = Server::start(vec![Reply::Stream {
        events: vec![sse(&response(json!([{ "text": big }]), Some("STOP")))],
        chunked: true,
        complete: true,
    }]);
    let error = provider(&server, true).complete(&request(100)).unwrap_err();
    assert!(matches!(error, ProviderError::TooLarge { .. }), "{error:?}");
}

#[test]
fn gemini_restores_maps_written_as_entries() {
    let document = json!({
        "type": "object",
        "properties": {"scores": {"type": "object", "propertyNames": {"type": "string"},
                                  "additionalProperties": {"type": "number"}, "maxProperties": 5}},
        "required": ["scores"],
    });
    let mut asked = request(3000);
    if let Some(schema) = &mut asked.output_schema {
        schema.maps = Some(document);
    }
    let server = Server::start(vec![json_reply(
        200,
        &response(
            json!([{"text": "{\"scores\": [{\"key\": \"a\", \"value\": 0.5}]}"}]),
            Some("STOP"),
        ),
    )]);
    let answer = provider(&server, false).complete(&asked).unwrap();
    assert_eq!(answer.text, r#"{"scores":{"a":0.5}}"#);
}
