//! Model endpoints: the [`Provider`] trait and the HTTP providers behind `ael.toml` bindings
//! (spec §1, §6, §6.1 step 1, §10).
//!
//! A provider turns a [`ModelRequest`] (ordered parts, sampling settings, `max_answer`, timeout,
//! the model-facing output schema) into one HTTP call and returns an [`Answer`] (text, finish
//! reason, token usage) or a typed [`ProviderError`]. It enforces step 1 of the output pipeline
//! as bytes arrive (`too_large`, `truncated_output`); steps 2–7 belong to the pipeline, which
//! also owns retries, repairs, fallbacks and budgets: this layer never retries on its own.
//!
//! - [`openai`]: Chat Completions (OpenAI, vLLM, llama.cpp server, Ollama).
//! - [`anthropic`]: the Messages API.
//! - [`gemini`]: the Gemini API's `generateContent` / `streamGenerateContent`.
//! - [`entries`]: maps back from the key/value lists the model-facing schemas write them as.
//! - [`binding`]: the binding settings; [`connect`] makes a binding's provider.
//! - [`secret`]: API keys, read from the environment and never printed.
//! - [`adapter`]: the pipeline's [`crate::model::Model`] over providers, one per binding.
//! - [`router`]: the model of a run: live bindings and recorded answers.
//!
//! Invariants: a part kind the binding does not `accept` fails before anything is sent; no
//! answer longer than `max_answer_bytes` is ever returned; no error text contains the key.
//!
//! The HTTP providers are behind the `http` cargo feature (on by default), so code that only
//! replays answers can build the runtime without an HTTP client.
//!
//! ```no_run
//! # #[cfg(feature = "http")]
//! # fn main() -> Result<(), aelc_runtime::provider::ProviderError> {
//! use aelc_runtime::provider::{connect, ModelRequest, Part, ProviderConfig, ProviderKind};
//! use std::time::Duration;
//!
//! let mut config = ProviderConfig::new(ProviderKind::OpenAi, "local");
//! config.base_url = Some("http://127.0.0.1:8080/v1".into());
//! let provider = connect(config)?;
//! let request = ModelRequest::new(vec![Part::Text("Say hi as JSON.".into())], 4096, Duration::from_secs(30));
//! let answer = provider.complete(&request)?;
//! println!("{} ({:?})", answer.text, answer.finish_reason);
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "http"))]
//! # fn main() {}
//! ```

// Without `http`, the wire helpers (SSE reader, answer buffer, key redaction) have no user.
#![cfg_attr(not(feature = "http"), allow(dead_code, unused_imports))]

pub mod adapter;
pub mod answer;
pub mod backoff;
pub mod binding;
pub mod entries;
pub mod error;
pub mod request;
pub mod restore;
pub mod secret;
mod sse;

#[cfg(feature = "http")]
pub mod anthropic;
#[cfg(feature = "http")]
pub mod gemini;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
pub mod openai;
#[cfg(all(test, feature = "http"))]
mod props;
#[cfg(feature = "http")]
mod resolve;
#[cfg(feature = "http")]
pub mod router;

pub use adapter::{NodeCall, ProviderModel, Providers, Reporter};
pub use answer::{Answer, FinishReason, Usage};
pub use binding::{Constrain, ProviderConfig, ProviderKind, TokenLimitField};
pub use error::ProviderError;
pub use request::{
    max_output_tokens, MediaSource, ModelRequest, OutputSchema, Part, PartKind, Repair,
};
pub use secret::ApiKey;

/// The provider for a binding.
#[cfg(feature = "http")]
pub fn connect(config: ProviderConfig) -> Result<Box<dyn Provider>, ProviderError> {
    let base = config.base_url();
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(ProviderError::InvalidConfig {
            reason: format!("base_url `{base}` must start with http:// or https://"),
        });
    }
    if config.model.trim().is_empty() {
        return Err(ProviderError::InvalidConfig {
            reason: "the binding names no model".to_string(),
        });
    }
    Ok(match config.kind {
        ProviderKind::OpenAi => Box::new(openai::OpenAi::new(config)),
        ProviderKind::Anthropic => Box::new(anthropic::Anthropic::new(config)),
        ProviderKind::Gemini => Box::new(gemini::Gemini::new(config)),
    })
}

/// One model endpoint. Implementations are blocking and hold no per-call state, so one
/// provider serves many calls (and threads).
pub trait Provider: Send + Sync + std::fmt::Debug {
    /// The `provider` word of the binding (`openai`, `anthropic`, `gemini`).
    fn name(&self) -> &'static str;

    /// One call: the whole answer, or why there is none.
    fn complete(&self, request: &ModelRequest) -> Result<Answer, ProviderError>;
}

/// Describes the call about to be made on the current attempt's span ([`crate::trace`]): the
/// provider by the GenAI conventions' names, the model, the token limit, the server.
#[cfg(feature = "http")]
pub(crate) fn trace_call(config: &ProviderConfig, request: &ModelRequest) {
    if !crate::trace::enabled() {
        return;
    }
    // The conventions' names are the `provider` words, but for Gemini's API (`gcp.gemini`).
    let provider = match config.kind {
        ProviderKind::Gemini => "gcp.gemini",
        other => other.as_str(),
    };
    let tokens = max_output_tokens(request.max_answer_bytes, config.output_token_cap());
    crate::trace::describe_call(provider, &config.model, tokens, config.base_url());
}

/// The response's `id` and `model` members (named `id_key` and `model_key` by the provider)
/// on the current attempt's span.
#[cfg(feature = "http")]
pub(crate) fn trace_response(json: &serde_json::Value, id_key: &str, model_key: &str) {
    trace_ids(
        json.get(id_key).and_then(serde_json::Value::as_str),
        json.get(model_key).and_then(serde_json::Value::as_str),
    );
}

/// [`trace_response`] with the answer's id and model already read.
pub(crate) fn trace_ids(id: Option<&str>, model: Option<&str>) {
    if crate::trace::enabled() {
        crate::trace::describe_response(id, model);
    }
}

/// The most bytes of a non-streamed response body read for an answer of at most `max_answer`
/// bytes: JSON escaping can make each answer byte six (`\u0000`), plus 64 KiB of envelope.
pub(crate) fn envelope_limit(max_answer: u64) -> u64 {
    max_answer.saturating_mul(6).saturating_add(64 * 1024)
}

/// The limits of a streamed response for an answer of at most `max_answer` bytes: one line
/// (one event's data) and the whole stream. Each event wraps a token or so in a few hundred
/// bytes of JSON, so the stream may be far larger than the answer; the answer cap itself is
/// applied to the text the events carry.
pub(crate) fn stream_limits(max_answer: u64) -> (u64, u64) {
    let line = envelope_limit(max_answer);
    let events = max_answer.saturating_add(1024);
    (line, events.saturating_mul(2048).saturating_add(line))
}
