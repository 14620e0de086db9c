//! One event of an OpenAI-compatible stream, read as the parts an answer needs (the first
//! choice's `delta` text and refusal, its finish reason, the usage, the ids), borrowed from the
//! event's text rather than built into a `serde_json::Value` tree.
//!
//! Why: a call reads from three events to a few hundred, and each became a tree of maps and
//! strings only to have a handful of fields read off it (callgrind, a full run against the bench's
//! fake model: 27 k instructions of 622 k for three events, parse, lookups and drop). An event
//! of any other shape (a field of another type, a key twice, an `error`) is read as before,
//! through a tree and its lenient getters, so what a stream means does not change.

use super::super::answer::Usage;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::borrow::Cow;

/// What [`read`] found: the parts, or the tree of an event the typed read does not take.
pub(super) enum Event<'a> {
    Parts(Parts<'a>),
    Tree(Value),
}

/// The parts of one event that an answer is made of.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Parts<'a> {
    pub id: Option<Cow<'a, str>>,
    pub model: Option<Cow<'a, str>>,
    pub usage: Option<Usage>,
    /// Whether the event has a first choice (the usage-only last event has none).
    pub choice: bool,
    pub content: Option<Cow<'a, str>>,
    pub refusal: Option<Cow<'a, str>>,
    pub finish_reason: Option<Cow<'a, str>>,
}

/// Reads an event's `data`: an error only when it is not JSON at all.
pub(super) fn read(data: &str) -> Result<Event<'_>, serde_json::Error> {
    match serde_json::from_str::<Chunk<'_>>(data) {
        Ok(chunk) if !chunk.error => Ok(Event::Parts(chunk.into_parts())),
        _ => serde_json::from_str(data).map(Event::Tree),
    }
}

impl Parts<'static> {
    /// The parts of an event read as a tree, by the getters the stream was always read with
    /// (a field of another type counts as absent).
    pub(super) fn of_tree(tree: &Value) -> Parts<'static> {
        let text = |value: Option<&Value>| {
            value
                .and_then(Value::as_str)
                .map(|s| Cow::Owned(s.to_owned()))
        };
        let choice = tree
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|choices| choices.first());
        let delta = choice.and_then(|c| c.get("delta"));
        Parts {
            id: text(tree.get("id")),
            model: text(tree.get("model")),
            usage: super::usage(tree.get("usage").filter(|u| !u.is_null())),
            choice: choice.is_some(),
            content: text(delta.and_then(|d| d.get("content"))),
            refusal: text(delta.and_then(|d| d.get("refusal"))),
            finish_reason: text(choice.and_then(|c| c.get("finish_reason"))),
        }
    }
}

/// A chunk as OpenAI documents it; unknown keys are skipped, a known one of another type
/// fails the read (and the tree takes the event).
#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<ChunkUsage>,
    #[serde(borrow, default)]
    choices: Vec<Choice<'a>>,
    /// Whether the key `error` is there at all (even `null`): the tree reads it.
    #[serde(default, deserialize_with = "present")]
    error: bool,
}

#[derive(Deserialize)]
struct ChunkUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow, default)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    refusal: Option<Cow<'a, str>>,
}

fn present<'de, D: Deserializer<'de>>(value: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(value).map(|_| true)
}

impl<'a> Chunk<'a> {
    fn into_parts(self) -> Parts<'a> {
        let choice = self.choices.into_iter().next();
        let had_choice = choice.is_some();
        let (delta, finish_reason) = choice.map_or((None, None), |c| (c.delta, c.finish_reason));
        let (content, refusal) = delta.map_or((None, None), |d| (d.content, d.refusal));
        Parts {
            id: self.id,
            model: self.model,
            usage: self.usage.map(|u| Usage {
                input_tokens: u.prompt_tokens,
                output_tokens: u.completion_tokens,
            }),
            choice: had_choice,
            content,
            refusal,
            finish_reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(data: &str) -> Parts<'_> {
        match read(data).unwrap() {
            Event::Parts(parts) => parts,
            Event::Tree(_) => panic!("{data} was read as a tree"),
        }
    }

    fn tree(data: &str) -> Value {
        match read(data).unwrap() {
            Event::Tree(tree) => tree,
            Event::Parts(_) => panic!("{data} was read as parts"),
        }
    }

    /// Every event the typed read takes gives the parts the tree's getters give.
    #[test]
    fn the_typed_read_agrees_with_the_tree() {
        let events = [
            r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-x","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}"#,
            r#"{"id":"chatcmpl-1","model":"gpt-x","choices":[{"index":0,"delta":{"content":"{\"summary\": \"caf\u00e9\n\"}"},"finish_reason":null}]}"#,
            r#"{"id":"chatcmpl-1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            r#"{"id":"chatcmpl-1","choices":[{"delta":{"refusal":"I can't"}}]}"#,
            r#"{"id":"chatcmpl-1","model":"gpt-x","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":34,"total_tokens":46}}"#,
            r#"{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}"#,
            r#"{"usage":{}}"#,
            "{}",
        ];
        for data in events {
            let tree: Value = serde_json::from_str(data).unwrap();
            assert_eq!(parts(data), Parts::of_tree(&tree), "{data}");
        }
        assert_eq!(
            parts(events[1]).content.as_deref(),
            Some("{\"summary\": \"café\n\"}")
        );
        assert_eq!(
            parts(events[4]).usage,
            Some(Usage {
                input_tokens: 12,
                output_tokens: 34
            })
        );
    }

    /// An event of another shape, or with an `error`, is read as a tree, as it always was.
    #[test]
    fn other_shapes_are_read_as_trees() {
        for data in [
            r#"{"error":{"message":"overloaded"}}"#,
            r#"{"error":null,"choices":[]}"#,
            r#"{"id":7,"choices":[]}"#,
            r#"{"choices":[{"delta":"text"}]}"#,
            r#"{"choices":null}"#,
            r#"{"usage":{"prompt_tokens":1.5}}"#,
            r#"{"id":"a","id":"b"}"#,
        ] {
            let tree = tree(data);
            assert_eq!(tree, serde_json::from_str::<Value>(data).unwrap());
        }
        assert!(read("not json").is_err());
    }
}
