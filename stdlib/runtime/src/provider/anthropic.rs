//! The `anthropic` provider: the Messages API (`POST {base_url}/v1/messages` with `x-api-key`
//! and `anthropic-version: 2023-06-01`).
//!
//! - System parts go to the top-level `system` text; the other parts form one `user` message.
//! - Structured output is a single tool whose `input_schema` is the model-facing schema, forced
//!   with `tool_choice: {type: "tool", name}`; the answer is the tool call's input. Tool
//!   inputs must be objects: an output whose root is not one comes as codegen's `{"value": …}`
//!   variant ([`OutputSchema::wrapped`](super::request::OutputSchema)), and the answer is
//!   unwrapped, as the OpenAI provider does.
//! - With `constrain = "output_format"` the schema goes as structured outputs instead,
//!   `output_config: {format: {type: "json_schema", schema}}`, and the answer is the message
//!   text. The variant is already what the SDK's `transform_schema` sends
//!   ([`crate::model_schema`]), so the API strips nothing; the pipeline enforces every bound.
//! - Maps the variant writes as key/value lists are restored ([`super::entries`]).
//! - `stop_reason: max_tokens` is [`FinishReason::Length`] (`refusal` stays as spelled).
//! - The answer text is the tool input exactly as the model wrote it (a raw JSON slice, never
//!   re-serialized), so step 2 still sees duplicate keys and number spellings.
//! - Streaming reads `message_start`, `content_block_*`, `message_delta` and `message_stop`
//!   events; a stream that ends without `message_stop` is truncated.

use super::answer::{within_limit, Answer, AnswerBuffer, FinishReason, Usage};
use super::binding::{Constrain, ProviderConfig};
use super::error::{malformed, ProviderError};
use super::http::{quote, Call, Reading, Transport};
use super::openai::stream_error;
use super::request::{max_output_tokens, wire_name, MediaSource, ModelRequest, Part};
use super::restore::restore;
use super::secret::{redact, ApiKey};
use super::sse::SseReader;
use super::{stream_limits, Provider};
use crate::ordered::{Json, Map};
use serde_json::value::RawValue;
use serde_json::Value;

/// The API version this provider speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// An Anthropic Messages endpoint.
#[derive(Debug)]
pub struct Anthropic {
    config: ProviderConfig,
    transport: Transport,
}

impl Anthropic {
    pub fn new(config: ProviderConfig) -> Anthropic {
        Anthropic {
            config,
            transport: Transport::new(),
        }
    }

    fn url(&self) -> String {
        let base = self.config.base_url();
        // Forgive a base URL written with the version segment.
        let base = base.strip_suffix("/v1").unwrap_or(base);
        format!("{base}/v1/messages")
    }

    /// How the schema goes with `request`, if it does: the Messages API takes no grammar.
    fn schema_way(&self) -> Option<Constrain> {
        match self.config.constrain {
            _ if !self.config.structured_output => None,
            way @ (Constrain::Schema | Constrain::OutputFormat) => Some(way),
            Constrain::Grammar | Constrain::None => None,
        }
    }

    fn tool(&self, request: &ModelRequest) -> Option<(String, Json)> {
        if self.schema_way() != Some(Constrain::Schema) {
            return None;
        }
        let schema = request.output_schema.as_ref()?;
        Some((wire_name(&schema.name), schema.schema.clone()))
    }

    /// Structured outputs: `output_config.format`, when the binding says `output_format`.
    fn output_format(&self, request: &ModelRequest) -> Option<Json> {
        if self.schema_way() != Some(Constrain::OutputFormat) {
            return None;
        }
        let schema = request.output_schema.as_ref()?;
        let format = Json::object([
            ("type", "json_schema".into()),
            ("schema", schema.schema.clone()),
        ]);
        Some(Json::object([("format", format)]))
    }

    /// The JSON body for `request`, its members in the order written here and the schema's in
    /// its own.
    pub fn request_body(&self, request: &ModelRequest) -> Result<Json, ProviderError> {
        self.config.check_accepts(&request.parts)?;
        let mut system = Vec::new();
        let mut content = Vec::new();
        for part in &request.parts {
            match part {
                Part::System(text) => system.push(text.as_str()),
                Part::Text(text) => content.push(text_block(text)),
                Part::Image(source) => content.push(media_block("image", source)),
                Part::File(source) => content.push(media_block("document", source)),
                Part::Audio(_) | Part::Video(_) => {
                    return Err(ProviderError::UnsupportedPart {
                        kind: part.kind(),
                        provider: "anthropic",
                        reason: format!("the Messages API takes no {}", part.kind()),
                    })
                }
            }
        }
        if let Some(repair) = &request.repair {
            content.push(text_block(repair.message()));
        }
        if content.is_empty() {
            return Err(ProviderError::InvalidConfig {
                reason: "the Messages API needs a user part (text, image or file) besides the \
                         system text"
                    .to_string(),
            });
        }
        let mut body = Map::new();
        body.insert("model".into(), (&self.config.model).into());
        let tokens = max_output_tokens(request.max_answer_bytes, self.config.output_token_cap());
        body.insert("max_tokens".into(), tokens.into());
        if !system.is_empty() {
            body.insert("system".into(), system.join("\n\n").into());
        }
        let message = Json::object([("role", "user".into()), ("content", content.into())]);
        body.insert("messages".into(), vec![message].into());
        if let Some(temperature) = request.temperature {
            body.insert("temperature".into(), temperature.into());
        }
        if let Some(output_config) = self.output_format(request) {
            body.insert("output_config".into(), output_config);
        }
        if let Some((name, input_schema)) = self.tool(request) {
            let tool = Json::object([
                ("name", name.as_str().into()),
                (
                    "description",
                    "Return the answer. The input is the answer itself, exactly as the schema \
                     describes it."
                        .into(),
                ),
                ("input_schema", input_schema),
            ]);
            body.insert("tools".into(), vec![tool].into());
            body.insert(
                "tool_choice".into(),
                Json::object([("type", "tool".into()), ("name", name.into())]),
            );
        }
        if self.config.stream {
            body.insert("stream".into(), true.into());
        }
        Ok(Json::Object(body))
    }
}

impl Provider for Anthropic {
    fn name(&self) -> &'static str {
        "anthropic"
    }

    fn complete(&self, request: &ModelRequest) -> Result<Answer, ProviderError> {
        let body = self.request_body(request)?;
        super::trace_call(&self.config, request);
        let key = self.config.api_key()?;
        let mut headers = vec![("anthropic-version", ANTHROPIC_VERSION.to_string())];
        if let Some(key) = &key {
            headers.push(("x-api-key", key.expose().to_string()));
        }
        let asked = self.tool(request).is_some() || self.output_format(request).is_some();
        let call = Call {
            url: &self.url(),
            headers,
            body: &body,
            key: key.as_ref(),
            stream: self.config.stream,
        };
        let reading = Reading {
            stream: read_stream,
            document: parse_message,
        };
        let answer = self.transport.call(call, request, reading)?;
        match request.output_schema.as_ref().filter(|_| asked) {
            Some(schema) => restore(answer, schema, request.max_answer_bytes),
            None => Ok(answer),
        }
    }
}

/// A text block of the user message.
fn text_block(text: impl Into<Json>) -> Json {
    Json::object([("type", "text".into()), ("text", text.into())])
}

/// An image or document block: inline base64 for a `data:` URL, else a URL source.
fn media_block(block: &str, source: &MediaSource) -> Json {
    let from = match source.inline_base64() {
        Some((media_type, data)) => Json::object([
            ("type", "base64".into()),
            ("media_type", media_type.into()),
            ("data", data.into()),
        ]),
        None => Json::object([("type", "url".into()), ("url", (&source.url).into())]),
    };
    Json::object([("type", block.into()), ("source", from)])
}

fn stop_reason(raw: Option<&str>) -> FinishReason {
    match raw {
        Some("end_turn" | "tool_use" | "stop_sequence") => FinishReason::Stop,
        Some("max_tokens") => FinishReason::Length,
        Some(other) => FinishReason::Other(other.to_string()),
        None => FinishReason::Other("unknown".to_string()),
    }
}

/// An `{"type": "error", "error": {"type", "message"}}` body or event.
fn reported_error(json: &Value, key: Option<&ApiKey>) -> Option<ProviderError> {
    if json.get("type").and_then(Value::as_str) != Some("error") {
        return None;
    }
    let error = json.get("error");
    let kind = error
        .and_then(|e| e.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("error");
    let message = error
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("no message");
    Some(ProviderError::ModelUnavailable {
        status: None,
        reason: format!(
            "the endpoint reported {kind}: {}",
            quote(&redact(key, message))
        ),
    })
}

fn read_usage(value: Option<&Value>, into: &mut Usage) {
    let Some(value) = value else { return };
    if let Some(count) = value.get("input_tokens").and_then(Value::as_u64) {
        into.input_tokens = count;
    }
    if let Some(count) = value.get("output_tokens").and_then(Value::as_u64) {
        into.output_tokens = count;
    }
}

/// A non-streamed `message` body: the tool call's input when there is one, else the text.
pub(crate) fn parse_message(
    bytes: &[u8],
    limit: u64,
    key: Option<&ApiKey>,
) -> Result<Answer, ProviderError> {
    let json: Value = serde_json::from_slice(bytes)
        .map_err(|error| malformed(format!("the body is not JSON ({error})")))?;
    if let Some(error) = reported_error(&json, key) {
        return Err(error);
    }
    super::trace_response(&json, "id", "model");
    let blocks = json
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("the body has no `content` array"))?;
    let has_tool = blocks
        .iter()
        .any(|block| block.get("type").and_then(Value::as_str) == Some("tool_use"));
    let text = match has_tool {
        true => raw_tool_input(bytes)?,
        false => blocks
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect(),
    };
    let mut tokens = Usage::default();
    read_usage(json.get("usage"), &mut tokens);
    Ok(Answer {
        text: within_limit(text, limit)?,
        finish_reason: stop_reason(json.get("stop_reason").and_then(Value::as_str)),
        usage: tokens,
    })
}

/// What a stream carried so far: the tool input when a tool call started, else the text.
fn received(text: &AnswerBuffer, tool: &AnswerBuffer, saw_tool: bool) -> String {
    if saw_tool {
        tool.as_str().to_string()
    } else {
        text.as_str().to_string()
    }
}

/// The first tool call's `input` exactly as the model wrote it.
fn raw_tool_input(bytes: &[u8]) -> Result<String, ProviderError> {
    #[derive(serde::Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        content: Vec<Block<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Block<'a> {
        #[serde(rename = "type")]
        kind: String,
        #[serde(borrow, default)]
        input: Option<&'a RawValue>,
    }
    let message: Message<'_> = serde_json::from_slice(bytes)
        .map_err(|error| malformed(format!("the body is not a message ({error})")))?;
    message
        .content
        .into_iter()
        .find(|block| block.kind == "tool_use")
        .and_then(|block| block.input)
        .map(|raw| raw.get().to_string())
        .ok_or_else(|| malformed("the tool call has no `input`"))
}

/// A streamed message, until `message_stop`.
fn read_stream(
    body: impl std::io::Read,
    request: &ModelRequest,
    key: Option<&ApiKey>,
) -> Result<Answer, ProviderError> {
    let (line_limit, stream_limit) = stream_limits(request.max_answer_bytes);
    let mut events = SseReader::new(body, line_limit, stream_limit);
    // Text and tool input share the cap: together they are what was received.
    let mut text = AnswerBuffer::new(request.max_answer_bytes);
    let mut tool = AnswerBuffer::new(request.max_answer_bytes);
    let mut saw_tool = false;
    let mut reason = None;
    let mut tokens = Usage::default();
    loop {
        let event = match events.next_event() {
            Ok(Some(event)) => event,
            Ok(None) => {
                let partial = received(&text, &tool, saw_tool);
                return Err(ProviderError::Truncated {
                    received: partial.len() as u64,
                    reason: "the stream ended before `message_stop`".to_string(),
                    partial,
                });
            }
            Err(error) => {
                let partial = received(&text, &tool, saw_tool);
                return Err(stream_error(
                    error,
                    request,
                    key,
                    &partial,
                    events.bytes_read(),
                ));
            }
        };
        let data: Value = serde_json::from_str(&event.data)
            .map_err(|error| malformed(format!("a stream event is not JSON ({error})")))?;
        if let Some(error) = reported_error(&data, key) {
            return Err(error);
        }
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or("");
        match kind {
            "message_start" => {
                if let Some(message) = data.get("message") {
                    super::trace_response(message, "id", "model");
                }
                read_usage(
                    data.get("message").and_then(|m| m.get("usage")),
                    &mut tokens,
                )
            }
            "content_block_start" => {
                let block = data.get("content_block");
                if block.and_then(|b| b.get("type")).and_then(Value::as_str) == Some("tool_use") {
                    saw_tool = true;
                }
            }
            "content_block_delta" => {
                let delta = data.get("delta");
                let piece = |field: &str| delta.and_then(|d| d.get(field)).and_then(Value::as_str);
                match delta.and_then(|d| d.get("type")).and_then(Value::as_str) {
                    Some("text_delta") => text.push(piece("text").unwrap_or(""))?,
                    Some("input_json_delta") => {
                        saw_tool = true;
                        tool.push(piece("partial_json").unwrap_or(""))?;
                    }
                    _ => {}
                }
                let total = text.len().saturating_add(tool.len());
                if total > request.max_answer_bytes {
                    return Err(ProviderError::TooLarge {
                        limit: request.max_answer_bytes,
                        received: total,
                        partial: format!("{}{}", text.as_str(), tool.as_str()),
                    });
                }
            }
            "message_delta" => {
                if let Some(raw) = data
                    .get("delta")
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(Value::as_str)
                {
                    reason = Some(stop_reason(Some(raw)));
                }
                read_usage(data.get("usage"), &mut tokens);
            }
            "message_stop" => {
                events.finish();
                break;
            }
            _ => {} // ping, content_block_stop, and event types added later
        }
    }
    let answer = if saw_tool {
        let input = tool.into_text();
        if input.trim().is_empty() {
            "{}".to_string()
        } else {
            input
        }
    } else {
        text.into_text()
    };
    Ok(Answer {
        text: answer,
        finish_reason: reason.unwrap_or(stop_reason(None)),
        usage: tokens,
    })
}
