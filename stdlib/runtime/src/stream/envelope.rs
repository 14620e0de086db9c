//! The wire form of a stream (spec §7.1): JSON Lines of chunk envelopes
//! `{"seq": 17, "at": "2026-12-02T14:00:00.120Z", "value": {…}}` closed by exactly one end
//! record, `{"end": "complete"}`, `{"end": "error", "message": "…"}` or `{"end": "cancelled"}`.
//!
//! Reading a line checks its shape only (keys, types, the `at` date-time); the value is decoded
//! against the chunk type by the buffer, which also owns every limit.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::StreamError;

/// One line of a stream.
#[derive(Clone, Debug)]
pub enum Envelope {
    Chunk(ChunkEnvelope),
    End(End),
}

/// A chunk as sent: its sequence number, when it was observed, and its value's JSON text.
#[derive(Clone, Debug)]
pub struct ChunkEnvelope {
    pub seq: u64,
    /// Milliseconds since the Unix epoch.
    pub at_ms: i64,
    pub value: Box<RawValue>,
}

/// How a stream ended, as its end record says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    Complete,
    Error(String),
    Cancelled,
}

/// Every key a line may have; which ones it has says what it is. Values the types here cannot
/// hold (a text `seq`) are read as JSON and refused by name below.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    #[serde(default)]
    seq: Option<serde_json::Value>,
    #[serde(default)]
    at: Option<serde_json::Value>,
    /// Present even when `null` (a chunk of an optional type), hence the wrapper.
    #[serde(default, deserialize_with = "present")]
    value: Option<Box<RawValue>>,
    #[serde(default)]
    end: Option<serde_json::Value>,
    #[serde(default)]
    message: Option<serde_json::Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Box<RawValue>>, D::Error> {
    Box::<RawValue>::deserialize(d).map(Some)
}

/// The shape of a line, for the error that names what is wrong.
const CHUNK_FORM: &str =
    r#"{"seq": 17, "at": "2026-12-02T14:00:00.120Z", "value": …} or {"end": "complete"}"#;

/// Reads line `line` of a stream (`None` for a blank line). `max_bytes` bounds the line before
/// it is parsed (a chunk's `chunk` bytes plus room for the envelope).
pub fn parse_envelope(
    line: usize,
    text: &str,
    max_bytes: u64,
) -> Result<Option<Envelope>, StreamError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    if text.len() as u64 > max_bytes {
        return Err(StreamError::new(
            line,
            "chunk",
            format!(
                "the line has {} bytes, more than a chunk of this stream can take ({max_bytes} bytes with its envelope); see the stream's `chunk` limit",
                text.len()
            ),
        ));
    }
    // serde would read a struct from an array too (`[1, "…", 2]`): a line is an object.
    if !text.trim_start().starts_with('{') {
        return Err(StreamError::new(
            line,
            "line",
            format!("a stream line is a JSON object: {CHUNK_FORM}"),
        ));
    }
    let parsed: Line = serde_json::from_str(text)
        .map_err(|e| StreamError::new(line, "line", format!("{e}; each line is {CHUNK_FORM}")))?;
    if let Some(end) = parsed.end {
        if let Some(key) = [
            ("seq", parsed.seq.is_some()),
            ("at", parsed.at.is_some()),
            ("value", parsed.value.is_some()),
        ]
        .iter()
        .find_map(|(k, has)| has.then_some(*k))
        {
            return Err(StreamError::new(
                line,
                key,
                format!("an end record has no `{key}`: write {{\"end\": \"complete\"}} on a line of its own"),
            ));
        }
        let message = match parsed.message {
            None => None,
            Some(serde_json::Value::String(m)) => Some(m),
            Some(_) => return Err(StreamError::new(line, "message", "`message` is text")),
        };
        let end = match (end.as_str(), message) {
            (Some("complete"), None) => End::Complete,
            (Some("cancelled"), None) => End::Cancelled,
            (Some("error"), message) => End::Error(message.unwrap_or_default()),
            (Some(word @ ("complete" | "cancelled")), Some(_)) => {
                return Err(StreamError::new(
                    line,
                    "message",
                    format!("only an `error` end has a `message`, not `{word}`"),
                ))
            }
            (other, _) => {
                return Err(StreamError::new(
                    line,
                    "end",
                    format!(
                        "{} is not an end: write \"complete\", \"error\" or \"cancelled\"",
                        other.map_or_else(|| end.to_string(), |w| format!("`{w}`"))
                    ),
                ))
            }
        };
        return Ok(Some(Envelope::End(end)));
    }
    if parsed.message.is_some() {
        return Err(StreamError::new(
            line,
            "message",
            "only an end record `{\"end\": \"error\", \"message\": …}` has a `message`",
        ));
    }
    let missing = [
        ("seq", parsed.seq.is_none()),
        ("at", parsed.at.is_none()),
        ("value", parsed.value.is_none()),
    ]
    .into_iter()
    .find_map(|(key, missing)| missing.then_some(key));
    let (Some(seq), Some(at), Some(value), None) = (parsed.seq, parsed.at, parsed.value, missing)
    else {
        let missing = missing.unwrap_or("line");
        return Err(StreamError::new(
            line,
            missing,
            format!("the chunk has no `{missing}`; each line is {CHUNK_FORM}"),
        ));
    };
    let Some(seq) = seq.as_u64() else {
        return Err(StreamError::new(
            line,
            "seq",
            format!("`seq` is a sequence number, a whole number from 0, not {seq}"),
        ));
    };
    let at: jiff::Timestamp = at.as_str().unwrap_or_default().parse().map_err(|e| {
        StreamError::new(
            line,
            "at",
            format!("`at` is not an RFC 3339 date-time ({e})"),
        )
    })?;
    Ok(Some(Envelope::Chunk(ChunkEnvelope {
        seq,
        at_ms: at.as_millisecond(),
        value,
    })))
}
