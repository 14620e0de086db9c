//! The `gemini` provider: the Gemini API (`POST {base_url}/models/{model}:generateContent`, or
//! `:streamGenerateContent?alt=sse` when streaming) with the key in `x-goog-api-key`.
//!
//! - System parts go to `systemInstruction`; the other parts form one `user` turn of
//!   `contents` (text, `inlineData` for a `data:` URL, `fileData` for an uploaded file's URI).
//! - Structured output: `generationConfig.responseMimeType: application/json` with the
//!   model-facing schema as `responseJsonSchema` (codegen's Gemini variant, which takes any
//!   root, so nothing is wrapped); maps written as key/value lists are restored
//!   ([`super::entries`]).
//! - The token limit is `generationConfig.maxOutputTokens`.
//! - Finish reasons: `STOP` is [`FinishReason::Stop`], `MAX_TOKENS` [`FinishReason::Length`],
//!   anything else (`SAFETY`, `RECITATION`, …) stays as spelled; a prompt blocked before any
//!   candidate (`promptFeedback.blockReason`) is [`FinishReason::Other`] with that reason.
//! - Usage: `usageMetadata.promptTokenCount` and `candidatesTokenCount` (plus
//!   `thoughtsTokenCount`, billed as output).
//! - Thought parts (`"thought": true`) are not the answer and are skipped.
//! - Streaming reads `data:` events, each a partial response; the stream has no end marker, so
//!   one that ends before a candidate carried a `finishReason` is truncated.

use super::answer::{within_limit, Answer, AnswerBuffer, FinishReason, Usage};
use super::binding::{Constrain, ProviderConfig};
use super::error::{malformed, ProviderError};
use super::http::{quote, Call, Reading, Transport};
use super::openai::stream_error;
use super::request::{max_output_tokens, MediaSource, ModelRequest, Part, PartKind};
use super::restore::restore;
use super::secret::{redact, ApiKey};
use super::sse::SseReader;
use super::{stream_limits, Provider};
use crate::ordered::{Json, Map};
use serde_json::Value;

/// A Gemini API endpoint.
#[derive(Debug)]
pub struct Gemini {
    config: ProviderConfig,
    transport: Transport,
}

impl Gemini {
    pub fn new(config: ProviderConfig) -> Gemini {
        Gemini {
            config,
            transport: Transport::new(),
        }
    }

    /// The method's URL: the model path segment is taken as written (`gemini-2.5-flash` or
    /// `models/gemini-2.5-flash`).
    fn url(&self) -> String {
        let model = self.config.model.trim_start_matches("models/");
        let method = if self.config.stream {
            "streamGenerateContent?alt=sse"
        } else {
            "generateContent"
        };
        format!("{}/models/{model}:{method}", self.config.base_url())
    }

    fn sends_schema(&self) -> bool {
        self.config.structured_output && self.config.constrain == Constrain::Schema
    }

    /// The JSON body for `request`, its members in the order written here and the schema's in
    /// its own.
    pub fn request_body(&self, request: &ModelRequest) -> Result<Json, ProviderError> {
        self.config.check_accepts(&request.parts)?;
        let mut system = Vec::new();
        let mut parts = Vec::new();
        for part in &request.parts {
            match part {
                Part::System(text) => system.push(text_part(text)),
                Part::Text(text) => parts.push(text_part(text)),
                Part::Image(source) | Part::Audio(source) | Part::Video(source) => {
                    parts.push(media_part(part.kind(), source)?)
                }
                Part::File(source) => parts.push(media_part(PartKind::File, source)?),
            }
        }
        if let Some(repair) = &request.repair {
            parts.push(text_part(repair.message()));
        }
        if parts.is_empty() {
            return Err(ProviderError::InvalidConfig {
                reason: "generateContent needs a user part (text or media) besides the system \
                         text"
                    .to_string(),
            });
        }
        let mut body = Map::new();
        let content = Json::object([("role", "user".into()), ("parts", parts.into())]);
        body.insert("contents".into(), vec![content].into());
        if !system.is_empty() {
            body.insert(
                "systemInstruction".into(),
                Json::object([("parts", system.into())]),
            );
        }
        let mut generation = Map::new();
        let tokens = max_output_tokens(request.max_answer_bytes, self.config.output_token_cap());
        generation.insert("maxOutputTokens".into(), tokens.into());
        if let Some(temperature) = request.temperature {
            generation.insert("temperature".into(), temperature.into());
        }
        if let (true, Some(schema)) = (self.sends_schema(), &request.output_schema) {
            generation.insert("responseMimeType".into(), "application/json".into());
            generation.insert("responseJsonSchema".into(), schema.schema.clone());
        }
        body.insert("generationConfig".into(), Json::Object(generation));
        Ok(Json::Object(body))
    }
}

impl Provider for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn complete(&self, request: &ModelRequest) -> Result<Answer, ProviderError> {
        let body = self.request_body(request)?;
        super::trace_call(&self.config, request);
        let key = self.config.api_key()?;
        let mut headers = Vec::new();
        if let Some(key) = &key {
            headers.push(("x-goog-api-key", key.expose().to_string()));
        }
        let call = Call {
            url: &self.url(),
            headers,
            body: &body,
            key: key.as_ref(),
            stream: self.config.stream,
        };
        let reading = Reading {
            stream: read_stream,
            document: parse_response,
        };
        let answer = self.transport.call(call, request, reading)?;
        // The Gemini variant is never wrapped (`wrapped` is false), so this restores maps.
        match request
            .output_schema
            .as_ref()
            .filter(|_| self.sends_schema())
        {
            Some(schema) => restore(answer, schema, request.max_answer_bytes),
            None => Ok(answer),
        }
    }
}

/// A media part: `inlineData` for a `data:` URL, else `fileData` (an uploaded file's URI, whose
/// media type the API needs).
fn media_part(kind: PartKind, source: &MediaSource) -> Result<Json, ProviderError> {
    if let Some((media_type, data)) = source.inline_base64() {
        let inline = Json::object([("mimeType", media_type.into()), ("data", data.into())]);
        return Ok(Json::object([("inlineData", inline)]));
    }
    let Some(media_type) = source.content_type.as_deref() else {
        return Err(ProviderError::UnsupportedPart {
            kind,
            provider: "gemini",
            reason: format!(
                "a {kind} sent by URL needs its media type (fileData.mimeType): pass a data: \
                 URL or give the media its content type"
            ),
        });
    };
    let file = Json::object([
        ("mimeType", media_type.into()),
        ("fileUri", (&source.url).into()),
    ]);
    Ok(Json::object([("fileData", file)]))
}

/// A text part (of the user's content or the system instruction).
fn text_part(text: impl Into<Json>) -> Json {
    Json::object([("text", text.into())])
}

fn finish_reason(raw: Option<&str>) -> FinishReason {
    match raw {
        Some("STOP") => FinishReason::Stop,
        Some("MAX_TOKENS") => FinishReason::Length,
        Some(other) => FinishReason::Other(other.to_string()),
        None => FinishReason::Other("unknown".to_string()),
    }
}

/// `{"error": {"code", "message", "status"}}` inside a 200 body or a stream event.
fn reported_error(json: &Value, key: Option<&ApiKey>) -> Option<ProviderError> {
    let error = json.get("error")?;
    let status = error
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or("error");
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("no message");
    Some(ProviderError::ModelUnavailable {
        status: None,
        reason: format!(
            "the endpoint reported {status}: {}",
            quote(&redact(key, message))
        ),
    })
}

fn read_usage(json: &Value, into: &mut Usage) {
    let Some(meta) = json.get("usageMetadata") else {
        return;
    };
    let count = |name: &str| meta.get(name).and_then(Value::as_u64);
    if let Some(n) = count("promptTokenCount") {
        into.input_tokens = n;
    }
    let output =
        count("candidatesTokenCount").unwrap_or(0) + count("thoughtsTokenCount").unwrap_or(0);
    if output > 0 {
        into.output_tokens = output;
    }
}

/// The answer text of one response's first candidate (thought parts skipped), its finish
/// reason if it has one, and a blocked prompt's reason.
fn candidate(json: &Value) -> (String, Option<FinishReason>) {
    let Some(first) = json
        .get("candidates")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
    else {
        let blocked = json
            .get("promptFeedback")
            .and_then(|f| f.get("blockReason"))
            .and_then(Value::as_str)
            .map(|r| FinishReason::Other(r.to_string()));
        return (String::new(), blocked);
    };
    let text = first
        .get("content")
        .and_then(|c| c.get("parts"))
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter(|p| p.get("thought").and_then(Value::as_bool) != Some(true))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let reason = first
        .get("finishReason")
        .and_then(Value::as_str)
        .map(|r| finish_reason(Some(r)));
    (text, reason)
}

/// A non-streamed `GenerateContentResponse`.
pub(crate) fn parse_response(
    bytes: &[u8],
    limit: u64,
    key: Option<&ApiKey>,
) -> Result<Answer, ProviderError> {
    let json: Value = serde_json::from_slice(bytes)
        .map_err(|error| malformed(format!("the body is not JSON ({error})")))?;
    if let Some(error) = reported_error(&json, key) {
        return Err(error);
    }
    if json.get("candidates").is_none() && json.get("promptFeedback").is_none() {
        return Err(malformed("the body has no `candidates`"));
    }
    super::trace_response(&json, "responseId", "modelVersion");
    let (text, reason) = candidate(&json);
    let mut tokens = Usage::default();
    read_usage(&json, &mut tokens);
    Ok(Answer {
        text: within_limit(text, limit)?,
        finish_reason: reason.unwrap_or(finish_reason(None)),
        usage: tokens,
    })
}

/// True the first time only (the first event describes the response on the trace).
fn finished_first(described: &mut bool) -> bool {
    !std::mem::replace(described, true)
}

/// A streamed answer: partial responses until one carries a `finishReason`.
fn read_stream(
    body: impl std::io::Read,
    request: &ModelRequest,
    key: Option<&ApiKey>,
) -> Result<Answer, ProviderError> {
    let (line_limit, stream_limit) = stream_limits(request.max_answer_bytes);
    let mut events = SseReader::new(body, line_limit, stream_limit);
    let mut text = AnswerBuffer::new(request.max_answer_bytes);
    let mut reason = None;
    let mut tokens = Usage::default();
    let mut described = false;
    loop {
        let event = match events.next_event() {
            Ok(Some(event)) => event,
            Ok(None) => break,
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
        if event.data.trim().is_empty() {
            continue;
        }
        let chunk: Value = serde_json::from_str(&event.data)
            .map_err(|error| malformed(format!("a stream event is not JSON ({error})")))?;
        if let Some(error) = reported_error(&chunk, key) {
            return Err(error);
        }
        if finished_first(&mut described) {
            super::trace_response(&chunk, "responseId", "modelVersion");
        }
        read_usage(&chunk, &mut tokens);
        let (piece, finished) = candidate(&chunk);
        text.push(&piece)?;
        if finished.is_some() {
            reason = finished;
        }
    }
    let Some(reason) = reason else {
        return Err(ProviderError::Truncated {
            received: text.len(),
            reason: "the stream ended before a candidate carried a `finishReason`".to_string(),
            partial: text.into_text(),
        });
    };
    Ok(Answer {
        text: text.into_text(),
        finish_reason: reason,
        usage: tokens,
    })
}
