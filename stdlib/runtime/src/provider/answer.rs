//! What a provider returns: the answer text, why the model stopped, and the tokens it used.
//! [`AnswerBuffer`] collects streamed text under the `max_answer` cap (spec §6.1 step 1).

use super::error::ProviderError;

/// Why the model stopped, reduced to what step 1 needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FinishReason {
    /// The model finished its answer (OpenAI `stop`, Anthropic `end_turn` / `tool_use` /
    /// `stop_sequence`).
    Stop,
    /// The output-token limit cut the answer (OpenAI `length`, Anthropic `max_tokens`): the
    /// pipeline reports `truncated_output`, whatever the prefix looks like.
    Length,
    /// Anything else, as the provider spelled it (`content_filter`, `refusal`, missing, …).
    Other(String),
}

impl FinishReason {
    pub fn as_str(&self) -> &str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::Other(raw) => raw,
        }
    }
}

/// Token counts as the provider reported them (zero when it reported none); the pipeline
/// prices them with the binding's `price`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// A complete answer. `text` is at most the request's `max_answer_bytes` long.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub text: String,
    pub finish_reason: FinishReason,
    pub usage: Usage,
}

/// Answer text collected under a byte limit: the first push past the limit is an error, so the
/// caller stops reading and drops the connection.
#[derive(Debug)]
pub(crate) struct AnswerBuffer {
    text: String,
    limit: u64,
}

impl AnswerBuffer {
    pub(crate) fn new(limit: u64) -> AnswerBuffer {
        AnswerBuffer {
            text: String::new(),
            limit,
        }
    }

    pub(crate) fn push(&mut self, piece: &str) -> Result<(), ProviderError> {
        let total = (self.text.len() as u64).saturating_add(piece.len() as u64);
        if total > self.limit {
            let mut partial = std::mem::take(&mut self.text);
            partial.push_str(piece);
            return Err(ProviderError::TooLarge {
                limit: self.limit,
                received: total,
                partial,
            });
        }
        self.text.push_str(piece);
        Ok(())
    }

    pub(crate) fn len(&self) -> u64 {
        self.text.len() as u64
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    pub(crate) fn into_text(self) -> String {
        self.text
    }
}

/// Checks a whole (non-streamed) answer against the limit.
pub(crate) fn within_limit(text: String, limit: u64) -> Result<String, ProviderError> {
    let mut buffer = AnswerBuffer::new(limit);
    buffer.push(&text)?;
    Ok(buffer.into_text())
}

/// The key an answer is wrapped under when the output's root is not an object (Anthropic's
/// tool inputs and OpenAI's strict schemas must be objects): `{"value": …}`.
pub const WRAPPED: &str = "value";

/// Whether an output whose schema is `document` (draft 2020-12, `$defs` at its root) is
/// wrapped as `{"value": …}` in its model-facing variants: when its root, through one `$ref`,
/// is not an object with `properties` (a list, a number, a `Map`, an enum).
pub fn wraps_root(document: &serde_json::Value) -> bool {
    let target = match document.get("$ref").and_then(serde_json::Value::as_str) {
        Some(r) => r
            .strip_prefix("#/$defs/")
            .and_then(|key| document.get("$defs")?.get(key))
            .unwrap_or(document),
        None => document,
    };
    let object = target.get("type").and_then(serde_json::Value::as_str) == Some("object")
        && target.get("properties").is_some();
    !object
}

/// The answer inside a `{"value": …}` wrapper. A length-cut answer stays as it is (it is
/// truncated whatever it holds), and so does anything that is not exactly such an object (not
/// an object, other keys, `value` twice): the decoder says what is wrong with it.
pub fn unwrap_value(answer: Answer, limit: u64) -> Result<Answer, ProviderError> {
    if answer.finish_reason == FinishReason::Length {
        return Ok(answer);
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Wrapped<'a> {
        #[serde(borrow)]
        value: &'a serde_json::value::RawValue,
    }
    let Ok(wrapped) = serde_json::from_str::<Wrapped<'_>>(&answer.text) else {
        return Ok(answer);
    };
    let text = within_limit(wrapped.value.get().to_string(), limit)?;
    Ok(Answer { text, ..answer })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buffer_refuses_the_first_byte_past_the_limit() {
        let mut buffer = AnswerBuffer::new(5);
        assert!(buffer.push("abc").is_ok());
        assert!(buffer.push("de").is_ok());
        assert_eq!(buffer.as_str(), "abcde");
        assert_eq!(
            buffer.push("f"),
            Err(ProviderError::TooLarge {
                limit: 5,
                received: 6,
                partial: "abcdef".into()
            })
        );
    }
}
