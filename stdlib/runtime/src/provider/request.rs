//! What a node asks of a model: ordered parts, sampling settings, limits and the model-facing
//! output schema. Provider-neutral; each provider turns it into its own wire format.

use crate::ordered::Json;
use std::fmt;
use std::time::Duration;

/// The kind of one part, as written in a binding's `accepts` list (`"text"`, `"image"`, …).
/// The compiler's `ael.toml` loader uses this same type.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PartKind {
    Text,
    Image,
    Audio,
    Video,
    File,
}

impl PartKind {
    pub const ALL: [PartKind; 5] = [
        PartKind::Text,
        PartKind::Image,
        PartKind::Audio,
        PartKind::Video,
        PartKind::File,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PartKind::Text => "text",
            PartKind::Image => "image",
            PartKind::Audio => "audio",
            PartKind::Video => "video",
            PartKind::File => "file",
        }
    }

    /// Reads an `accepts` entry; `None` for a word that is no part kind.
    pub fn parse(word: &str) -> Option<PartKind> {
        PartKind::ALL.into_iter().find(|kind| kind.as_str() == word)
    }
}

impl fmt::Display for PartKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a media part's bytes are: a URL the provider fetches (`https://…`), an inline
/// `data:` URL, or a provider-side reference (an uploaded file's id). Never the bytes themselves
/// outside a `data:` URL: resolving `holon://` references is the caller's job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MediaSource {
    pub url: String,
    pub content_type: Option<String>,
}

impl MediaSource {
    /// The base64 payload and media type of a `data:<type>;base64,<payload>` URL.
    pub(crate) fn inline_base64(&self) -> Option<(&str, &str)> {
        let rest = self.url.strip_prefix("data:")?;
        let (header, payload) = rest.split_once(',')?;
        let media_type = header.strip_suffix(";base64")?;
        Some((media_type, payload))
    }
}

/// One part of what the model receives, in the order the input builder produced it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// Instructions; providers that have a system slot put every system part there, in order.
    System(String),
    Text(String),
    Image(MediaSource),
    Audio(MediaSource),
    Video(MediaSource),
    File(MediaSource),
}

impl Part {
    /// The `accepts` word this part needs; system text counts as text.
    pub fn kind(&self) -> PartKind {
        match self {
            Part::System(_) | Part::Text(_) => PartKind::Text,
            Part::Image(_) => PartKind::Image,
            Part::Audio(_) => PartKind::Audio,
            Part::Video(_) => PartKind::Video,
            Part::File(_) => PartKind::File,
        }
    }

    /// The bytes this part adds to a request: its text, or its media reference's URL.
    pub fn bytes(&self) -> u64 {
        match self {
            Part::System(t) | Part::Text(t) => t.len() as u64,
            Part::Image(m) | Part::Audio(m) | Part::Video(m) | Part::File(m) => m.url.len() as u64,
        }
    }
}

/// The model-facing output schema (spec §9.3) for the provider's structured-output mode.
/// Serde: generated Rust glue embeds the variants as JSON.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OutputSchema {
    /// Names the schema (OpenAI) or the answer tool (Anthropic); sanitized to
    /// `[A-Za-z0-9_-]{1,64}` when sent.
    pub name: String,
    /// In its key order: the model generates the properties in the order it lists them.
    pub schema: Json,
    /// OpenAI's `strict`: `false` when the schema holds what strict mode refuses (a `Map`, whose
    /// `additionalProperties` is a schema); codegen decides (spec §9.3).
    pub strict: bool,
    /// The schema describes the answer wrapped as `{"value": …}` (codegen's model-facing
    /// variant of an output whose root is not an object, for OpenAI and Anthropic alike, which
    /// both want an object there): the provider unwraps what the model returns. Providers send
    /// `schema` as it is; wrapping is codegen's one job.
    pub wrapped: bool,
    /// The output's JSON Schema when it holds a `Map`, which the model-facing variants write
    /// as a list of `{key, value}` objects: the provider turns such lists in the answer back
    /// into objects ([`super::entries::restore`]) after unwrapping it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maps: Option<serde_json::Value>,
}

/// A repair attempt: the previous answer and why it was rejected (spec §6 `repair(n)`). The
/// reasons of the last attempt replace the earlier ones, so repeated repairs do not grow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repair {
    pub previous_answer: String,
    pub reasons: Vec<String>,
}

/// The most bytes of the previous answer quoted back in a repair message.
const REPAIR_QUOTE_BYTES: usize = 8 * 1024;

impl Repair {
    /// The user text appended to the request: the (shortened) previous answer, then one line
    /// per reason.
    pub fn message(&self) -> String {
        let quoted = truncate_on_char(&self.previous_answer, REPAIR_QUOTE_BYTES);
        let mut text = String::from("Your previous answer was rejected.\n\nPrevious answer:\n");
        text.push_str(quoted);
        if quoted.len() < self.previous_answer.len() {
            text.push_str("\n[… cut]");
        }
        text.push_str("\n\nReasons:\n");
        for reason in &self.reasons {
            text.push_str("- ");
            text.push_str(reason);
            text.push('\n');
        }
        text.push_str("\nAnswer again with one JSON value that fixes every reason above.");
        text
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a char boundary.
pub(crate) fn truncate_on_char(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or("")
}

/// One call to a model.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelRequest {
    pub parts: Vec<Part>,
    pub temperature: Option<f64>,
    /// Step 1's limit on the answer, in bytes of answer text (spec §6.1).
    pub max_answer_bytes: u64,
    pub timeout: Duration,
    /// Sent in the provider's structured-output mode when the binding enables it.
    pub output_schema: Option<OutputSchema>,
    /// The answer's GBNF grammar (codegen's `grammar/<node>.gbnf`), sent instead of the schema
    /// by a binding with `constrain = "grammar"`.
    pub grammar: Option<String>,
    pub repair: Option<Repair>,
}

impl ModelRequest {
    /// A text-only request with the given limits and no schema.
    pub fn new(parts: Vec<Part>, max_answer_bytes: u64, timeout: Duration) -> ModelRequest {
        ModelRequest {
            parts,
            temperature: None,
            max_answer_bytes,
            timeout,
            output_schema: None,
            grammar: None,
            repair: None,
        }
    }
}

/// Tokens asked for on top of `ceil(bytes / 3)`: room for a code fence, whitespace and the
/// tokenizer's worst moments on short answers.
pub const TOKEN_MARGIN: u64 = 256;

/// The output-token limit asked of the provider for an answer of at most `max_answer_bytes`:
/// `min(ceil(bytes / 3) + 256, cap)`, at least 1.
///
/// Why 3: JSON answers average 3–4 bytes per token in the tokenizers of the major providers, so
/// dividing by 3 leaves the model room to finish a maximal answer; the byte cap of step 1 is the
/// authority either way (a model that writes more is stopped at `max_answer` bytes as
/// `too_large`, one that hits this token limit is `truncated_output`). The cap is the model's own
/// output limit (a provider default, or the binding's `max_output_tokens`).
pub fn max_output_tokens(max_answer_bytes: u64, cap: u32) -> u32 {
    let wanted = max_answer_bytes.div_ceil(3).saturating_add(TOKEN_MARGIN);
    let capped = wanted.min(u64::from(cap)).max(1);
    u32::try_from(capped).unwrap_or(cap)
}

/// `name` reduced to what OpenAI and Anthropic accept for schema and tool names.
pub(crate) fn wire_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if cleaned.is_empty() {
        "answer".to_string()
    } else {
        cleaned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_follow_the_documented_formula() {
        assert_eq!(max_output_tokens(0, 16_384), 256);
        assert_eq!(max_output_tokens(1, 16_384), 257);
        assert_eq!(max_output_tokens(3, 16_384), 257);
        assert_eq!(max_output_tokens(4, 16_384), 258);
        assert_eq!(max_output_tokens(32 * 1024, 16_384), 10_923 + 256);
        assert_eq!(max_output_tokens(1 << 20, 16_384), 16_384);
        assert_eq!(max_output_tokens(u64::MAX, 8_192), 8_192);
        assert_eq!(max_output_tokens(10, 0), 1);
    }

    #[test]
    fn wire_names_are_sanitized() {
        assert_eq!(wire_name("nodes::review"), "nodes__review");
        assert_eq!(wire_name(""), "answer");
        assert_eq!(wire_name(&"x".repeat(100)).len(), 64);
    }

    #[test]
    fn repair_message_lists_reasons_and_cuts_long_answers() {
        let repair = Repair {
            previous_answer: "é".repeat(10_000),
            reasons: vec!["/findings: too many items (too_many_items)".into()],
        };
        let message = repair.message();
        assert!(message.contains("- /findings: too many items (too_many_items)\n"));
        assert!(message.contains("[… cut]"));
        assert!(message.len() < 9 * 1024);
    }

    #[test]
    fn data_urls_split_into_type_and_payload() {
        let source = MediaSource {
            url: "data:audio/wav;base64,AAAA".into(),
            content_type: None,
        };
        assert_eq!(source.inline_base64(), Some(("audio/wav", "AAAA")));
        let remote = MediaSource {
            url: "https://example.com/a.wav".into(),
            content_type: None,
        };
        assert_eq!(remote.inline_base64(), None);
    }
}
