//! An incremental reader of server-sent events (`text/event-stream`), the streaming format of
//! both OpenAI and Anthropic.
//!
//! It reads the body in small chunks and hands out one event at a time, so the caller can apply
//! the `max_answer` cap as bytes arrive and stop (dropping the connection) the moment it is
//! exceeded. Two limits bound memory whatever the server sends: the bytes of one line, and the
//! bytes of the whole stream.

use std::io::{self, Read};

/// One dispatched event: its `event:` name (if any) and its `data:` lines joined by `\n`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

/// Why the stream could not be read further.
#[derive(Debug)]
pub(crate) enum SseError {
    /// The transport failed (a timeout or a cut connection, as the transport reports it).
    Io(io::Error),
    /// One line, or the whole stream, grew past its limit.
    TooLong,
    /// A line is not UTF-8.
    NotUtf8,
}

const CHUNK: usize = 8 * 1024;

/// Events out of a byte stream.
pub(crate) struct SseReader<R> {
    source: R,
    pending: Vec<u8>,
    /// Bytes of `pending` already consumed as whole lines.
    start: usize,
    at_eof: bool,
    read_total: u64,
    stream_limit: u64,
    line_limit: u64,
}

impl<R: Read> SseReader<R> {
    pub(crate) fn new(source: R, line_limit: u64, stream_limit: u64) -> SseReader<R> {
        SseReader {
            source,
            pending: Vec::new(),
            start: 0,
            at_eof: false,
            read_total: 0,
            stream_limit,
            line_limit,
        }
    }

    /// Bytes read from the transport so far.
    pub(crate) fn bytes_read(&self) -> u64 {
        self.read_total
    }

    /// The next event, or `None` when the stream ended (an event left incomplete at the end is
    /// dropped, as the SSE standard says).
    pub(crate) fn next_event(&mut self) -> Result<Option<SseEvent>, SseError> {
        let mut event: Option<String> = None;
        let mut data: Option<String> = None;
        loop {
            let Some(line) = self.next_line()? else {
                return Ok(None);
            };
            if line.is_empty() {
                if let Some(data) = data.take() {
                    return Ok(Some(SseEvent {
                        event: event.take(),
                        data,
                    }));
                }
                event = None;
                continue;
            }
            if line.starts_with(':') {
                continue; // a comment (keep-alive)
            }
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line.as_str(), ""),
            };
            match field {
                "event" => event = Some(value.to_string()),
                "data" => match &mut data {
                    Some(joined) => {
                        joined.push('\n');
                        joined.push_str(value);
                    }
                    None => data = Some(value.to_string()),
                },
                _ => {} // `id`, `retry` and unknown fields mean nothing here
            }
        }
    }

    /// Reads what is left of the stream after its last event (the closing chunk of a chunked
    /// body, say) and drops it, so the transport sees the body's end and keeps the connection
    /// for the next call: a body not read to its end is closed, and a loaded gateway's next call
    /// opened a new connection (to a provider, with a new TLS handshake). The official OpenAI
    /// SDKs consume the rest of a stream after `[DONE]` likewise. Bounded by the stream's
    /// limit; a failure here changes nothing of the answer already read.
    pub(crate) fn finish(&mut self) {
        while !self.at_eof {
            self.start = self.pending.len();
            if self.fill().is_err() {
                return;
            }
        }
    }

    /// The next line without its `\n` / `\r\n`; `None` at the end of the stream. A last line
    /// without a newline is returned too.
    fn next_line(&mut self) -> Result<Option<String>, SseError> {
        loop {
            let unread = self.pending.get(self.start..).unwrap_or(&[]);
            if let Some(offset) = unread.iter().position(|&b| b == b'\n') {
                if offset as u64 > self.line_limit {
                    return Err(SseError::TooLong);
                }
                let raw = unread.get(..offset).unwrap_or(&[]);
                let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
                let line = std::str::from_utf8(raw)
                    .map_err(|_| SseError::NotUtf8)?
                    .to_string();
                self.start += offset + 1;
                return Ok(Some(line));
            }
            if unread.len() as u64 > self.line_limit {
                return Err(SseError::TooLong);
            }
            if self.at_eof {
                if unread.is_empty() {
                    return Ok(None);
                }
                let line = std::str::from_utf8(unread)
                    .map_err(|_| SseError::NotUtf8)?
                    .to_string();
                self.start = self.pending.len();
                return Ok(Some(line));
            }
            self.fill()?;
        }
    }

    fn fill(&mut self) -> Result<(), SseError> {
        // Drop consumed lines first, so `pending` holds at most one partial line plus a chunk.
        self.pending.drain(..self.start);
        self.start = 0;
        let mut chunk = [0u8; CHUNK];
        let count = loop {
            match self.source.read(&mut chunk) {
                Ok(count) => break count,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(SseError::Io(error)),
            }
        };
        if count == 0 {
            self.at_eof = true;
            return Ok(());
        }
        self.read_total = self.read_total.saturating_add(count as u64);
        if self.read_total > self.stream_limit {
            return Err(SseError::TooLong);
        }
        self.pending
            .extend_from_slice(chunk.get(..count).unwrap_or(&[]));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str) -> Vec<SseEvent> {
        let mut reader = SseReader::new(text.as_bytes(), 1024, 1 << 20);
        let mut out = Vec::new();
        while let Ok(Some(event)) = reader.next_event() {
            out.push(event);
        }
        out
    }

    #[test]
    fn events_are_split_on_blank_lines() {
        let got = events(
            ": ping\n\nevent: message_start\ndata: {\"a\":1}\n\ndata: one\r\ndata:two\r\n\r\ndata: [DONE]\n\n",
        );
        assert_eq!(
            got,
            vec![
                SseEvent {
                    event: Some("message_start".into()),
                    data: "{\"a\":1}".into()
                },
                SseEvent {
                    event: None,
                    data: "one\ntwo".into()
                },
                SseEvent {
                    event: None,
                    data: "[DONE]".into()
                },
            ]
        );
    }

    #[test]
    fn an_event_left_open_at_the_end_is_dropped() {
        assert_eq!(
            events("data: whole\n\ndata: half"),
            events("data: whole\n\n")
        );
    }

    #[test]
    fn long_lines_and_long_streams_are_refused() {
        let long_line = format!("data: {}\n\n", "x".repeat(5000));
        let mut reader = SseReader::new(long_line.as_bytes(), 1024, 1 << 20);
        assert!(matches!(reader.next_event(), Err(SseError::TooLong)));
        let many = "data: x\n\n".repeat(10_000);
        let mut reader = SseReader::new(many.as_bytes(), 1024, 4096);
        let mut outcome = Ok(None);
        for _ in 0..20_000 {
            outcome = reader.next_event();
            if !matches!(outcome, Ok(Some(_))) {
                break;
            }
        }
        assert!(matches!(outcome, Err(SseError::TooLong)));
    }
}
