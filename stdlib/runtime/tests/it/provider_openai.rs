//! The `openai` provider against a scripted HTTP server on 127.0.0.1: recorded Chat Completions
//! responses, streamed and not, and every failure step 1 and the transport must report.

use crate::provider_server::{json_reply, sse, Reply, Server};
use aelc_runtime::provider::{
    connect, Constrain, FinishReason, MediaSource, ModelRequest, OutputSchema, Part, Provider,
    ProviderConfig, ProviderError, ProviderKind, Repair, TokenLimitField, Usage,
};
use serde_json::{json, Value};
use std::time::Duration;

const KEY_VAR: &str = "AEL_TEST_OPENAI_KEY";
const KEY: &str = "sk-test-0123456789-secret";

fn set_key() {
    std::env::set_var(KEY_VAR, KEY);
}

fn config(server: &Server, stream: bool) -> ProviderConfig {
    set_key();
    let mut config = ProviderConfig::new(ProviderKind::OpenAi, "gpt-4o-mini");
    config.base_url = Some(server.url("/v1"));
    config.api_key_env = Some(KEY_VAR.to_string());
    config.stream = stream;
    config
}

fn provider(server: &Server, stream: bool) -> Box<dyn Provider> {
    connect(config(server, stream)).expect("a valid binding")
}

fn schema() -> OutputSchema {
    OutputSchema {
        name: "review".into(),
        // Read from text, so that its key order is the one written here in every build.
        schema: serde_json::from_str(SCHEMA).expect("a schema"),
        strict: true,
        wrapped: false,
        maps: None,
    }
}

/// The output schema of `schema()`, its keys deliberately not sorted.
const SCHEMA: &str = r#"{"type":"object","properties":{"summary":{"type":"string"},"score":{"type":"number"}},"required":["summary","score"],"additionalProperties":false}"#;

fn request(max_answer: u64) -> ModelRequest {
    let mut request = ModelRequest::new(
        vec![
            Part::System("You review documents.".into()),
            Part::Text("Review this: hello".into()),
        ],
        max_answer,
        Duration::from_secs(5),
    );
    request.temperature = Some(0.2);
    request.output_schema = Some(schema());
    request
}

fn completion(content: &str, finish: &str) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": null}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 31, "completion_tokens": 7, "total_tokens": 38},
    })
}

fn chunk(content: Option<&str>, finish: Option<&str>) -> String {
    sse(&json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}],
    }))
}

fn usage_chunk() -> String {
    sse(
        &json!({"id": "chatcmpl-1", "choices": [], "usage": {"prompt_tokens": 31, "completion_tokens": 7}}),
    )
}

fn streamed(pieces: &[&str], finish: &str, done: bool) -> Vec<String> {
    let mut events: Vec<String> = pieces.iter().map(|p| chunk(Some(p), None)).collect();
    events.push(chunk(None, Some(finish)));
    events.push(usage_chunk());
    if done {
        events.push("data: [DONE]\n\n".to_string());
    }
    events
}

/// No error text may ever contain the key.
fn assert_no_key(error: &ProviderError) {
    assert!(!error.to_string().contains(KEY), "key leaked: {error}");
    assert!(!format!("{error:?}").contains(KEY), "key leaked: {error:?}");
}

#[test]
fn a_plain_answer_and_the_request_shape() {
    let server = Server::start(vec![json_reply(
        200,
        &completion(r#"{"summary":"ok"}"#, "stop"),
    )]);
    let answer = provider(&server, false)
        .complete(&request(1000))
        .expect("an answer");
    assert_eq!(answer.text, r#"{"summary":"ok"}"#);
    assert_eq!(answer.finish_reason, FinishReason::Stop);
    assert_eq!(
        answer.usage,
        Usage {
            input_tokens: 31,
            output_tokens: 7
        }
    );

    let (requests, _) = server.finish();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(
        sent.body,
        json!({
            "model": "gpt-4o-mini",
            "messages": [
                {"role": "system", "content": "You review documents."},
                {"role": "user", "content": "Review this: hello"},
            ],
            "temperature": 0.2,
            // ceil(1000 / 3) + 256; a non-OpenAI base URL gets `max_tokens`.
            "max_tokens": 590,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "review", "strict": true, "schema": schema().schema},
            },
            "stream": false,
        })
    );
    // The members in the order the provider writes them, and the schema's in its own: a
    // model generates the properties in the order its schema lists them (issue 23: the
    // runtime keeps this order without `serde_json`'s `preserve_order`).
    assert_eq!(
        sent.text,
        format!(
            "{}{SCHEMA}{}",
            r#"{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You review documents."},{"role":"user","content":"Review this: hello"}],"temperature":0.2,"max_tokens":590,"response_format":{"type":"json_schema","json_schema":{"name":"review","strict":true,"schema":"#,
            r#"}},"stream":false}"#
        )
    );
}

#[test]
fn a_streamed_answer_is_joined_and_counted() {
    let server = Server::start(vec![Reply::Stream {
        events: streamed(&["{\"summ", "ary\":", "\"ok\"}"], "stop", true),
        chunked: true,
        complete: true,
    }]);
    let answer = provider(&server, true)
        .complete(&request(1000))
        .expect("an answer");
    assert_eq!(answer.text, r#"{"summary":"ok"}"#);
    assert_eq!(answer.finish_reason, FinishReason::Stop);
    assert_eq!(
        answer.usage,
        Usage {
            input_tokens: 31,
            output_tokens: 7
        }
    );
    let (requests, _) = server.finish();
    assert_eq!(requests[0].body["stream"], json!(true));
    assert_eq!(
        requests[0].body["stream_options"],
        json!({"include_usage": true})
    );
    assert_eq!(requests[0].header("accept"), Some("text/event-stream"));
}

#[test]
fn a_stream_read_to_its_end_leaves_its_connection_for_the_next_call() {
    // One connection for both calls: a second one would never be accepted, and its call
    // would time out.
    let events = || streamed(&["{\"summary\":\"ok\"}"], "stop", true);
    let server = Server::start(vec![Reply::KeptAlive {
        streams: vec![events(), events()],
    }]);
    let provider = provider(&server, true);
    for _ in 0..2 {
        let answer = provider.complete(&request(1000)).expect("an answer");
        assert_eq!(answer.text, r#"{"summary":"ok"}"#);
    }
    let (requests, _) = server.finish();
    assert_eq!(requests.len(), 2);
}

#[test]
fn a_fenced_answer_reaches_the_decoder_unchanged() {
    let fenced = "```json\n{\"summary\":\"ok\"}\n```";
    let server = Server::start(vec![json_reply(200, &completion(fenced, "stop"))]);
    let answer = provider(&server, false)
        .complete(&request(1000))
        .expect("an answer");
    assert_eq!(answer.text, fenced);
}

#[test]
fn finish_reason_length_is_reported_streamed_or_not() {
    let server = Server::start(vec![
        json_reply(200, &completion("{\"summary\":\"o", "length")),
        Reply::Stream {
            events: streamed(&["{\"summary\":\"o"], "length", true),
            chunked: false,
            complete: true,
        },
    ]);
    let plain = provider(&server, false)
        .complete(&request(1000))
        .expect("an answer");
    assert_eq!(plain.finish_reason, FinishReason::Length);
    let streamed = provider(&server, true)
        .complete(&request(1000))
        .expect("an answer");
    assert_eq!(streamed.finish_reason, FinishReason::Length);
    assert_eq!(streamed.text, "{\"summary\":\"o");
}

#[test]
fn an_oversized_stream_is_cut_off_as_it_arrives() {
    let mut head =
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n".to_vec();
    head.extend_from_slice(chunk(Some("{\"summary\":\""), None).as_bytes());
    let server = Server::start(vec![Reply::Endless {
        head,
        piece: chunk(Some(&"x".repeat(1000)), None).into_bytes(),
        limit: 64 << 20,
    }]);
    let error = provider(&server, true)
        .complete(&request(4096))
        .expect_err("too large");
    assert!(
        matches!(error, ProviderError::TooLarge { limit: 4096, received, .. } if received > 4096 && received <= 4096 + 1000),
        "{error:?}"
    );
    assert_eq!(error.code(), "too_large");
    let (_, outcomes) = server.finish();
    assert!(
        outcomes[0].client_hung_up,
        "the client read everything: {outcomes:?}"
    );
    assert!(outcomes[0].bytes_written < 64 << 20);
}

#[test]
fn an_oversized_plain_body_stops_being_read() {
    let mut head =
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 999999999\r\n\r\n"
            .to_vec();
    head.extend_from_slice(br#"{"choices":[{"message":{"content":""#);
    let server = Server::start(vec![Reply::Endless {
        head,
        piece: vec![b'x'; 16 * 1024],
        limit: 64 << 20,
    }]);
    let error = provider(&server, false)
        .complete(&request(1024))
        .expect_err("too large");
    assert!(
        matches!(error, ProviderError::TooLarge { limit: 1024, .. }),
        "{error:?}"
    );
    let (_, outcomes) = server.finish();
    assert!(outcomes[0].client_hung_up, "{outcomes:?}");
}

#[test]
fn an_answer_over_max_answer_in_a_small_body_is_too_large() {
    let server = Server::start(vec![json_reply(200, &completion(&"y".repeat(200), "stop"))]);
    let error = provider(&server, false)
        .complete(&request(100))
        .expect_err("too large");
    assert!(
        matches!(&error, ProviderError::TooLarge { limit: 100, received: 200, partial } if partial.len() == 200),
        "{error:?}"
    );
}

#[test]
fn a_server_error_then_success_when_the_caller_asks_again() {
    let server = Server::start(vec![
        json_reply(
            500,
            &json!({"error": {"message": "upstream exploded", "type": "server_error"}}),
        ),
        json_reply(200, &completion(r#"{"summary":"ok"}"#, "stop")),
    ]);
    let provider = provider(&server, false);
    let first = provider.complete(&request(1000)).expect_err("a 500");
    assert_eq!(
        first,
        ProviderError::ModelUnavailable {
            status: Some(500),
            reason: "upstream exploded".into()
        }
    );
    assert_eq!(first.code(), "model_unavailable");
    let second = provider.complete(&request(1000)).expect("an answer");
    assert_eq!(second.text, r#"{"summary":"ok"}"#);
    assert_eq!(
        server.finish().0.len(),
        2,
        "one request per call: no hidden retries"
    );
}

#[test]
fn a_rate_limit_reports_the_delay_and_is_not_retried() {
    let server = Server::start(vec![Reply::Full {
        status: 429,
        headers: vec![("retry-after".into(), "7".into())],
        body: br#"{"error":{"message":"Rate limit reached"}}"#.to_vec(),
    }]);
    let error = provider(&server, false)
        .complete(&request(1000))
        .expect_err("a 429");
    assert_eq!(
        error,
        ProviderError::RateLimited {
            retry_after: Some(Duration::from_secs(7)),
            reason: "Rate limit reached".into()
        }
    );
    assert_eq!(server.finish().0.len(), 1);
}

#[test]
fn a_slow_server_is_a_timeout() {
    let server = Server::start(vec![Reply::Stall {
        hold: Duration::from_secs(3),
    }]);
    let mut slow = request(1000);
    slow.timeout = Duration::from_millis(200);
    let error = provider(&server, false)
        .complete(&slow)
        .expect_err("a timeout");
    assert_eq!(
        error,
        ProviderError::Timeout {
            after: Duration::from_millis(200)
        }
    );
    assert_eq!(error.code(), "timeout");
}

#[test]
fn a_malformed_body_says_why() {
    let server = Server::start(vec![
        Reply::Full {
            status: 200,
            headers: vec![],
            body: b"{\"choices\": [".to_vec(),
        },
        json_reply(200, &json!({"object": "chat.completion"})),
    ]);
    let provider = provider(&server, false);
    let not_json = provider.complete(&request(1000)).expect_err("malformed");
    assert!(
        matches!(&not_json, ProviderError::Malformed { reason } if reason.starts_with("the body is not JSON")),
        "{not_json:?}"
    );
    let no_choices = provider.complete(&request(1000)).expect_err("malformed");
    assert_eq!(
        no_choices,
        ProviderError::Malformed {
            reason: "the body has no `choices[0]`".into()
        }
    );
}

#[test]
fn a_stream_without_done_is_truncated_even_if_it_parses() {
    let server = Server::start(vec![
        // Closed cleanly, but before `[DONE]`.
        Reply::Stream {
            events: streamed(&[r#"{"summary":"ok"}"#], "stop", false),
            chunked: false,
            complete: true,
        },
        // Cut mid-chunk: the chunked framing never finishes.
        Reply::Stream {
            events: vec![chunk(Some(r#"{"summary":"#), None)],
            chunked: true,
            complete: false,
        },
    ]);
    let provider = provider(&server, true);
    let clean = provider.complete(&request(1000)).expect_err("truncated");
    assert!(
        matches!(&clean, ProviderError::Truncated { received: 16, reason, .. } if reason.contains("[DONE]")),
        "{clean:?}"
    );
    assert_eq!(clean.code(), "truncated_output");
    let cut = provider.complete(&request(1000)).expect_err("truncated");
    assert!(
        matches!(cut, ProviderError::Truncated { received: 11, .. }),
        "{cut:?}"
    );
}

#[test]
fn the_key_is_sent_but_never_echoed() {
    // A server that quotes the key back in its error message.
    let server = Server::start(vec![json_reply(
        401,
        &json!({"error": {"message": format!("Incorrect API key provided: {KEY}")}}),
    )]);
    let config = config(&server, false);
    assert!(!format!("{config:?}").contains(KEY));
    let provider = connect(config).expect("a valid binding");
    assert!(!format!("{provider:?}").contains(KEY));
    let error = provider.complete(&request(1000)).expect_err("a 401");
    assert_eq!(
        error,
        ProviderError::Refused {
            status: 401,
            reason: "Incorrect API key provided: ***".into()
        }
    );
    assert_no_key(&error);
    let (requests, _) = server.finish();
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

#[test]
fn a_missing_key_variable_is_named_before_the_call() {
    let server = Server::start(vec![]);
    let mut config = config(&server, false);
    config.api_key_env = Some("AEL_TEST_OPENAI_KEY_NEVER_SET".into());
    let error = connect(config)
        .expect("a valid binding")
        .complete(&request(1000))
        .expect_err("no key");
    assert_eq!(
        error,
        ProviderError::MissingApiKey {
            var: "AEL_TEST_OPENAI_KEY_NEVER_SET".into()
        }
    );
    assert!(error
        .to_string()
        .contains("`AEL_TEST_OPENAI_KEY_NEVER_SET`"));
    assert!(error.before_the_call());
    assert!(server.finish().0.is_empty());
}

#[test]
fn a_part_the_binding_does_not_accept_fails_before_the_call() {
    let server = Server::start(vec![]);
    let mut with_image = request(1000);
    with_image.parts.push(Part::Image(MediaSource {
        url: "https://example.com/cat.png".into(),
        content_type: Some("image/png".into()),
    }));
    let error = provider(&server, false)
        .complete(&with_image)
        .expect_err("not accepted");
    assert!(
        matches!(error, ProviderError::UnsupportedPart { .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "the openai binding cannot take a image part: the binding accepts [text]; add \"image\" \
         to its `accepts` if the model takes it"
    );
    assert!(server.finish().0.is_empty());
}

#[test]
fn media_parts_repairs_and_the_openai_token_field() {
    let server = Server::start(vec![json_reply(200, &completion("{}", "stop"))]);
    let mut config = config(&server, false);
    config.accepts = vec![
        aelc_runtime::provider::PartKind::Text,
        aelc_runtime::provider::PartKind::Image,
    ];
    config.token_limit_field = Some(TokenLimitField::MaxCompletionTokens);
    config.structured_output = false;
    let mut asked = request(30);
    asked.parts.push(Part::Image(MediaSource {
        url: "https://example.com/cat.png".into(),
        content_type: None,
    }));
    asked.repair = Some(Repair {
        previous_answer: "{\"summary\": 3}".into(),
        reasons: vec!["/summary: expected text, found a number (wrong_type)".into()],
    });
    connect(config)
        .expect("binding")
        .complete(&asked)
        .expect("an answer");
    let (requests, _) = server.finish();
    let body = &requests[0].body;
    assert_eq!(body["max_completion_tokens"], json!(266));
    assert!(body.get("max_tokens").is_none());
    assert!(
        body.get("response_format").is_none(),
        "structured output is off"
    );
    let content = &body["messages"][1]["content"];
    assert_eq!(
        content[0],
        json!({"type": "text", "text": "Review this: hello"})
    );
    assert_eq!(
        content[1],
        json!({"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}})
    );
    let repair = content[2]["text"].as_str().expect("the repair text");
    assert!(repair.contains("{\"summary\": 3}"));
    assert!(repair.contains("- /summary: expected text, found a number (wrong_type)"));
}

#[test]
fn an_unreachable_endpoint_is_model_unavailable() {
    // Bind then drop a listener: nothing listens on that port now.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    set_key();
    let mut config = ProviderConfig::new(ProviderKind::OpenAi, "m");
    config.base_url = Some(format!("http://127.0.0.1:{port}/v1"));
    let error = connect(config)
        .expect("binding")
        .complete(&request(100))
        .expect_err("refused");
    assert!(
        matches!(error, ProviderError::ModelUnavailable { status: None, .. }),
        "{error:?}"
    );
    // The message names the URL it tried and what to change.
    let message = error.to_string();
    assert!(
        message.contains(&format!(
            "cannot reach http://127.0.0.1:{port}/v1/chat/completions"
        )),
        "{message}"
    );
    assert!(message.contains("base_url"), "{message}");
}

#[test]
fn a_stream_that_stalls_midway_is_a_timeout() {
    let mut head =
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n".to_vec();
    head.extend_from_slice(chunk(Some("{\"summary\":"), None).as_bytes());
    let server = Server::start(vec![Reply::StallAfter {
        head,
        hold: Duration::from_secs(3),
    }]);
    let mut slow = request(1000);
    slow.timeout = Duration::from_millis(200);
    let error = provider(&server, true)
        .complete(&slow)
        .expect_err("a timeout");
    assert_eq!(
        error,
        ProviderError::Timeout {
            after: Duration::from_millis(200)
        }
    );
}

/// An output whose root is not an object goes out as codegen's `{"value": …}` variant (strict
/// schemas are objects); the answer comes back unwrapped, streamed or not. With structured
/// output off nothing is unwrapped, and an answer that is not such an object is left for the
/// decoder to judge.
#[test]
fn a_wrapped_schema_is_unwrapped_from_the_answer() {
    let wrapped = OutputSchema {
        name: "tags".into(),
        schema: json!({
            "type": "object",
            "properties": {"value": {"type": "array", "items": {"type": "string"}}},
            "required": ["value"],
            "additionalProperties": false,
        })
        .into(),
        strict: true,
        wrapped: true,
        maps: None,
    };
    let mut asked = request(1000);
    asked.output_schema = Some(wrapped.clone());

    let server = Server::start(vec![
        json_reply(200, &completion(r#"{"value": ["a", "b"]}"#, "stop")),
        json_reply(200, &completion(r#"["not", "wrapped"]"#, "stop")),
        json_reply(200, &completion(r#"{"value": [1], "more": 2}"#, "stop")),
    ]);
    let openai = provider(&server, false);
    let answer = openai.complete(&asked).expect("an answer");
    assert_eq!(answer.text, r#"["a", "b"]"#);
    let unwrapped = |a: &aelc_runtime::provider::Answer| a.text.clone();
    assert_eq!(
        unwrapped(&openai.complete(&asked).expect("an answer")),
        r#"["not", "wrapped"]"#
    );
    assert_eq!(
        unwrapped(&openai.complete(&asked).expect("an answer")),
        r#"{"value": [1], "more": 2}"#
    );
    let (requests, _) = server.finish();
    assert_eq!(
        requests[0].body["response_format"]["json_schema"]["schema"],
        wrapped.schema.to_value()
    );

    let streamed_server = Server::start(vec![Reply::Stream {
        events: streamed(&["{\"val", "ue\": [\"x\"]}"], "stop", true),
        chunked: true,
        complete: true,
    }]);
    let answer = provider(&streamed_server, true)
        .complete(&asked)
        .expect("an answer");
    assert_eq!(answer.text, r#"["x"]"#);
    streamed_server.finish();

    let plain_server = Server::start(vec![json_reply(
        200,
        &completion(r#"{"value": ["a"]}"#, "stop"),
    )]);
    let mut config = config(&plain_server, false);
    config.structured_output = false;
    let answer = connect(config)
        .expect("binding")
        .complete(&asked)
        .expect("an answer");
    assert_eq!(
        answer.text, r#"{"value": ["a"]}"#,
        "structured output is off"
    );
    plain_server.finish();
}

/// `constrain = "grammar"`: the node's GBNF goes as llama.cpp's `grammar` and vLLM's
/// `guided_grammar`, no `response_format` goes with it, and the answer is not unwrapped even
/// when the schema is a wrapped one (the grammar describes the answer itself). `none` sends
/// neither; `schema` (the default) sends no grammar.
#[test]
fn a_grammar_binding_sends_the_grammar_instead_of_the_schema() {
    let gbnf = "root ::= \"[\" \"]\"\n".to_owned();
    let mut asked = request(1000);
    asked.grammar = Some(gbnf.clone());
    if let Some(schema) = asked.output_schema.as_mut() {
        schema.wrapped = true;
    }
    let server = Server::start(vec![
        json_reply(200, &completion(r#"{"value": []}"#, "stop")),
        json_reply(200, &completion("[]", "stop")),
        json_reply(200, &completion("[]", "stop")),
    ]);
    let mut grammar = config(&server, false);
    grammar.constrain = Constrain::Grammar;
    let answer = connect(grammar)
        .unwrap()
        .complete(&asked)
        .expect("an answer");
    assert_eq!(answer.text, r#"{"value": []}"#, "not unwrapped");
    let mut none = config(&server, false);
    none.constrain = Constrain::None;
    connect(none).unwrap().complete(&asked).expect("an answer");
    provider(&server, false)
        .complete(&asked)
        .expect("an answer");
    let (requests, _) = server.finish();
    assert_eq!(requests[0].body["grammar"], json!(gbnf));
    assert_eq!(requests[0].body["guided_grammar"], json!(gbnf));
    assert!(requests[0].body.get("response_format").is_none());
    for plain in &requests[1..2] {
        assert!(plain.body.get("grammar").is_none());
        assert!(plain.body.get("response_format").is_none());
    }
    assert!(requests[2].body.get("grammar").is_none());
    assert!(requests[2].body.get("response_format").is_some());
}
