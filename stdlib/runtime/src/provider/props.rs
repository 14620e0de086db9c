//! Property tests: whatever bytes a server sends, the response parsers and the event reader
//! return a value or an error, never panic, and never return more than the answer limit.

use super::anthropic::parse_message;
use super::openai::parse_completion;
use super::sse::SseReader;
use proptest::prelude::*;

/// Bytes that look like the responses often enough to reach deep branches.
fn response_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..400),
        "[{}\\[\\]\":,a-z0-9 \\\\\n]{0,300}".prop_map(String::into_bytes),
        (0usize..4, "[a-z\"{}]{0,40}").prop_map(|(shape, text)| {
            let body = match shape {
                0 => format!(r#"{{"choices":[{{"message":{{"content":"{text}"}},"finish_reason":"stop"}}]}}"#),
                1 => format!(r#"{{"content":[{{"type":"tool_use","input":{text}}}],"stop_reason":"tool_use"}}"#),
                2 => format!(r#"{{"error":{{"message":"{text}"}}}}"#),
                _ => format!("data: {text}\n\ndata: [DONE]\n\n"),
            };
            body.into_bytes()
        }),
    ]
}

proptest! {
    #[test]
    fn parsers_never_panic_and_respect_the_limit(bytes in response_bytes(), limit in 0u64..64) {
        if let Ok(answer) = parse_completion(&bytes, limit, None) {
            prop_assert!(answer.text.len() as u64 <= limit);
        }
        if let Ok(answer) = parse_message(&bytes, limit, None) {
            prop_assert!(answer.text.len() as u64 <= limit);
        }
    }

    #[test]
    fn the_event_reader_never_panics_and_stops(bytes in response_bytes()) {
        let mut reader = SseReader::new(&bytes[..], 128, 1024);
        // Every event consumes at least one line, so this many calls always reach the end.
        for _ in 0..=bytes.len() + 1 {
            match reader.next_event() {
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
        prop_assert!(reader.bytes_read() <= bytes.len() as u64);
    }
}
