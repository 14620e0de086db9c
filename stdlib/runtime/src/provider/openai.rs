//! The `openai` provider: Chat Completions (`POST {base_url}/chat/completions`), which OpenAI,
//! vLLM, llama.cpp's server and Ollama all speak.
//!
//! - System parts become one leading `system` message (in order, joined by blank lines); the
//!   other parts become one `user` message, as a plain string when every part is text (the
//!   widest-supported form) and as a content array otherwise.
//! - Structured output: `response_format: {type: "json_schema", json_schema: {name, strict:
//!   true, schema}}` with the model-facing schema, when the binding enables it. Strict schemas
//!   are objects: an output whose root is not one comes as codegen's `{"value": …}` variant
//!   ([`OutputSchema::wrapped`](super::request::OutputSchema)), and the answer is unwrapped.
//! - Grammar: with `constrain = "grammar"` the node's GBNF goes as `grammar` (llama.cpp's
//!   server) and `guided_grammar` (vLLM) instead of `response_format`, and the answer is taken
//!   as it is (the grammar describes the answer, never wrapped).
//! - The token limit is sent as `max_completion_tokens` to OpenAI itself and as `max_tokens`
//!   elsewhere (see [`TokenLimitField`]).
//! - Streaming sends `stream: true` with `stream_options.include_usage` and reads `data:` events
//!   until `data: [DONE]`; a stream that ends without it is truncated.

use super::answer::{within_limit, Answer, AnswerBuffer, FinishReason, Usage};
use super::binding::{Constrain, ProviderConfig, TokenLimitField};
use super::error::{malformed, ProviderError};
use super::http::{quote, read_error, Call, Reading, Transport};
use super::request::{max_output_tokens, wire_name, MediaSource, ModelRequest, Part, PartKind};
use super::restore::restore;
use super::secret::{redact, ApiKey};
use super::sse::{SseError, SseReader};
use super::{stream_limits, Provider};
use crate::ordered::{Json, Map};
use serde_json::Value;

mod chunk;

/// An OpenAI-compatible endpoint.
#[derive(Debug)]
pub struct OpenAi {
    config: ProviderConfig,
    transport: Transport,
}

impl OpenAi {
    pub fn new(config: ProviderConfig) -> OpenAi {
        OpenAi {
            config,
            transport: Transport::new(),
        }
    }

    fn token_field(&self) -> TokenLimitField {
        self.config.token_limit_field.unwrap_or_else(|| {
            if self.config.base_url() == super::binding::ProviderKind::OpenAi.default_base_url() {
                TokenLimitField::MaxCompletionTokens
            } else {
                TokenLimitField::MaxTokens
            }
        })
    }

    /// Whether the answer's grammar goes with `request` (then no schema does, and the answer
    /// comes unwrapped: the grammar describes the answer itself).
    fn sends_grammar(&self, request: &ModelRequest) -> bool {
        self.config.constrain == Constrain::Grammar && request.grammar.is_some()
    }

    fn sends_schema(&self) -> bool {
        self.config.structured_output && self.config.constrain == Constrain::Schema
    }

    /// The JSON body for `request` (public so tests and `aelc run --dry-run` can show it), its
    /// members in the order written here and the schema's in its own.
    pub fn request_body(&self, request: &ModelRequest) -> Result<Json, ProviderError> {
        self.config.check_accepts(&request.parts)?;
        let mut system = Vec::new();
        let mut user = Vec::new();
        for part in &request.parts {
            match part {
                Part::System(text) => system.push(text.as_str()),
                other => user.push(content_part(other)?),
            }
        }
        if let Some(repair) = &request.repair {
            user.push(text_part(repair.message()));
        }
        let mut messages = Vec::new();
        if !system.is_empty() {
            messages.push(Json::object([
                ("role", "system".into()),
                ("content", system.join("\n\n").into()),
            ]));
        }
        if !user.is_empty() {
            messages.push(Json::object([
                ("role", "user".into()),
                ("content", user_content(user)),
            ]));
        }
        let mut body = Map::new();
        body.insert("model".into(), (&self.config.model).into());
        body.insert("messages".into(), Json::Array(messages));
        if let Some(temperature) = request.temperature {
            body.insert("temperature".into(), temperature.into());
        }
        let tokens = max_output_tokens(request.max_answer_bytes, self.config.output_token_cap());
        body.insert(self.token_field().as_str().into(), tokens.into());
        if self.sends_grammar(request) {
            // llama.cpp's server reads `grammar`, vLLM `guided_grammar`; each ignores the other.
            let grammar = request.grammar.clone().unwrap_or_default();
            body.insert("grammar".into(), grammar.as_str().into());
            body.insert("guided_grammar".into(), grammar.into());
        } else if self.sends_schema() {
            if let Some(schema) = &request.output_schema {
                let json_schema = Json::object([
                    ("name", wire_name(&schema.name).into()),
                    ("strict", schema.strict.into()),
                    ("schema", schema.schema.clone()),
                ]);
                body.insert(
                    "response_format".into(),
                    Json::object([("type", "json_schema".into()), ("json_schema", json_schema)]),
                );
            }
        }
        body.insert("stream".into(), self.config.stream.into());
        if self.config.stream {
            body.insert(
                "stream_options".into(),
                Json::object([("include_usage", true.into())]),
            );
        }
        Ok(Json::Object(body))
    }
}

impl Provider for OpenAi {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn complete(&self, request: &ModelRequest) -> Result<Answer, ProviderError> {
        let body = self.request_body(request)?;
        super::trace_call(&self.config, request);
        let key = self.config.api_key()?;
        let mut headers = Vec::new();
        if let Some(key) = &key {
            headers.push(("authorization", format!("Bearer {}", key.expose())));
        }
        let call = Call {
            url: &format!("{}/chat/completions", self.config.base_url()),
            headers,
            body: &body,
            key: key.as_ref(),
            stream: self.config.stream,
        };
        let reading = Reading {
            stream: read_stream,
            document: parse_completion,
        };
        let answer = self.transport.call(call, request, reading)?;
        let schema = request
            .output_schema
            .as_ref()
            .filter(|_| !self.sends_grammar(request) && self.sends_schema());
        match schema {
            Some(schema) => restore(answer, schema, request.max_answer_bytes),
            None => Ok(answer),
        }
    }
}

/// A text part of a user message.
fn text_part(text: impl Into<Json>) -> Json {
    Json::object([("type", "text".into()), ("text", text.into())])
}

fn content_part(part: &Part) -> Result<Json, ProviderError> {
    Ok(match part {
        Part::System(text) | Part::Text(text) => text_part(text),
        Part::Image(source) => Json::object([
            ("type", "image_url".into()),
            ("image_url", Json::object([("url", (&source.url).into())])),
        ]),
        Part::Audio(source) => {
            let Some((media_type, data)) = source.inline_base64() else {
                return Err(unsupported(
                    PartKind::Audio,
                    "Chat Completions takes audio only inline: pass a data:audio/…;base64 URL",
                ));
            };
            let format = media_type
                .strip_prefix("audio/")
                .map(|sub| if sub == "mpeg" { "mp3" } else { sub })
                .unwrap_or("wav");
            Json::object([
                ("type", "input_audio".into()),
                (
                    "input_audio",
                    Json::object([("data", data.into()), ("format", format.into())]),
                ),
            ])
        }
        Part::File(source) => file_part(source)?,
        Part::Video(_) => {
            return Err(unsupported(
                PartKind::Video,
                "Chat Completions takes no video: send frames as images",
            ))
        }
    })
}

fn file_part(source: &MediaSource) -> Result<Json, ProviderError> {
    let file = |file: Json| Json::object([("type", "file".into()), ("file", file)]);
    if source.inline_base64().is_some() {
        return Ok(file(Json::object([
            ("filename", "file".into()),
            ("file_data", (&source.url).into()),
        ])));
    }
    if source.url.starts_with("file-") {
        return Ok(file(Json::object([("file_id", (&source.url).into())])));
    }
    Err(unsupported(
        PartKind::File,
        "Chat Completions takes files as an uploaded file id (`file-…`) or a data: URL",
    ))
}

fn unsupported(kind: PartKind, reason: &str) -> ProviderError {
    ProviderError::UnsupportedPart {
        kind,
        provider: "openai",
        reason: reason.to_string(),
    }
}

/// A plain string when every part is text, else the content array.
fn user_content(parts: Vec<Json>) -> Json {
    let texts: Option<Vec<&str>> = parts
        .iter()
        .map(|part| match part.get("type").and_then(Json::as_str) {
            Some("text") => part.get("text").and_then(Json::as_str),
            _ => None,
        })
        .collect();
    match texts {
        Some(texts) => Json::String(texts.join("\n\n")),
        None => Json::Array(parts),
    }
}

fn finish_reason(raw: Option<&str>) -> FinishReason {
    match raw {
        Some("stop") => FinishReason::Stop,
        Some("length") => FinishReason::Length,
        Some(other) => FinishReason::Other(other.to_string()),
        None => FinishReason::Other("unknown".to_string()),
    }
}

fn usage(value: Option<&Value>) -> Option<Usage> {
    let value = value?;
    let count = |name: &str| value.get(name).and_then(Value::as_u64).unwrap_or(0);
    Some(Usage {
        input_tokens: count("prompt_tokens"),
        output_tokens: count("completion_tokens"),
    })
}

/// A server-reported error inside a 200 body or a stream event.
fn embedded_error(json: &Value, key: Option<&ApiKey>) -> Option<ProviderError> {
    let error = json.get("error")?;
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| error.to_string());
    Some(ProviderError::ModelUnavailable {
        status: None,
        reason: format!(
            "the endpoint reported an error: {}",
            quote(&redact(key, &message))
        ),
    })
}

/// The text of a message's `content`: a string, or an array of `{type: "text", text}` parts.
fn content_text(content: Option<&Value>) -> Option<String> {
    match content? {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect(),
        ),
        _ => None,
    }
}

/// A non-streamed `chat.completion` body.
pub(crate) fn parse_completion(
    bytes: &[u8],
    limit: u64,
    key: Option<&ApiKey>,
) -> Result<Answer, ProviderError> {
    let json: Value = serde_json::from_slice(bytes)
        .map_err(|error| malformed(format!("the body is not JSON ({error})")))?;
    if let Some(error) = embedded_error(&json, key) {
        return Err(error);
    }
    super::trace_response(&json, "id", "model");
    let choice = json
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|choices| choices.first())
        .ok_or_else(|| malformed("the body has no `choices[0]`"))?;
    let message = choice
        .get("message")
        .ok_or_else(|| malformed("`choices[0]` has no `message`"))?;
    let mut reason = finish_reason(choice.get("finish_reason").and_then(Value::as_str));
    let text = match (
        content_text(message.get("content")),
        message.get("refusal").and_then(Value::as_str),
    ) {
        (_, Some(refusal)) => {
            reason = FinishReason::Other("refusal".to_string());
            refusal.to_string()
        }
        (Some(text), None) => text,
        (None, None) => return Err(malformed("`choices[0].message` has no text `content`")),
    };
    Ok(Answer {
        text: within_limit(text, limit)?,
        finish_reason: reason,
        usage: usage(json.get("usage")).unwrap_or_default(),
    })
}

/// A streamed answer: `chat.completion.chunk` events until `[DONE]`.
fn read_stream(
    body: impl std::io::Read,
    request: &ModelRequest,
    key: Option<&ApiKey>,
) -> Result<Answer, ProviderError> {
    let (line_limit, stream_limit) = stream_limits(request.max_answer_bytes);
    let mut events = SseReader::new(body, line_limit, stream_limit);
    let mut text = AnswerBuffer::new(request.max_answer_bytes);
    let mut refusal = AnswerBuffer::new(request.max_answer_bytes);
    let mut reason = None;
    let mut tokens = Usage::default();
    let mut described = false;
    loop {
        let event = match events.next_event() {
            Ok(Some(event)) => event,
            Ok(None) => {
                return Err(ProviderError::Truncated {
                    received: text.len(),
                    reason: "the stream ended before `data: [DONE]`".to_string(),
                    partial: text.into_text(),
                })
            }
            Err(error) => {
                return Err(stream_error(
                    error,
                    request,
                    key,
                    text.as_str(),
                    events.bytes_read(),
                ))
            }
        };
        if event.data.trim() == "[DONE]" {
            events.finish();
            break;
        }
        let event = chunk::read(&event.data)
            .map_err(|error| malformed(format!("a stream event is not JSON ({error})")))?;
        let parts = match event {
            chunk::Event::Parts(parts) => parts,
            chunk::Event::Tree(tree) => {
                if let Some(error) = embedded_error(&tree, key) {
                    return Err(error);
                }
                chunk::Parts::of_tree(&tree)
            }
        };
        if !described {
            super::trace_ids(parts.id.as_deref(), parts.model.as_deref());
            described = true;
        }
        if let Some(reported) = parts.usage {
            tokens = reported;
        }
        if !parts.choice {
            continue; // the usage-only chunk
        }
        if let Some(piece) = &parts.content {
            text.push(piece)?;
        }
        if let Some(piece) = &parts.refusal {
            refusal.push(piece)?;
        }
        if let Some(raw) = parts.finish_reason.as_deref() {
            reason = Some(finish_reason(Some(raw)));
        }
    }
    let (text, reason) = if refusal.is_empty() {
        (text.into_text(), reason.unwrap_or(finish_reason(None)))
    } else {
        (
            refusal.into_text(),
            FinishReason::Other("refusal".to_string()),
        )
    };
    Ok(Answer {
        text,
        finish_reason: reason,
        usage: tokens,
    })
}

pub(crate) fn stream_error(
    error: SseError,
    request: &ModelRequest,
    key: Option<&ApiKey>,
    partial: &str,
    raw_read: u64,
) -> ProviderError {
    match error {
        SseError::Io(io) => read_error(io, request.timeout, key, partial, true),
        SseError::TooLong => ProviderError::TooLarge {
            limit: request.max_answer_bytes,
            received: raw_read.max(partial.len() as u64),
            partial: partial.to_string(),
        },
        SseError::NotUtf8 => malformed("a stream line is not UTF-8"),
    }
}
