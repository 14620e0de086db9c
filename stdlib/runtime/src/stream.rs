//! Streams at run time (spec §7.1, §12.1): a bounded buffer between a producer (an HTTP body,
//! a file of JSON Lines) and the node that reads it, enforcing every limit of the `stream`
//! declaration: `chunk`, `buffer`, `rate`, `duration`, `fresh`, `on_full`, `duplicates`, `stale`.
//!
//! [`channel`] makes the two ends of one stream:
//! - a [`StreamWriter`] takes envelopes ([`parse_envelope`]); [`StreamWriter::send`] awaits while
//!   the buffer is full under `on_full: pause` (real backpressure: a gateway that awaits it stops
//!   reading the request body), [`StreamWriter::try_send`] never waits and says `Full` instead,
//!   for synchronous hosts; a writer dropped before the end record cuts the stream;
//! - a [`StreamReader`] takes the chunks buffered now ([`StreamReader::take`], what the node's
//!   stream parameter is: a list of chunks, oldest first) or awaits them
//!   ([`StreamReader::next`]); taking frees room, which wakes a paused producer.
//!
//! A stream ends with exactly one end record; only `{"end": "complete"}` makes it complete. A
//! stream cut before its end ([`StreamEnd::Cut`]), ended by an error or a cancel, or refused by
//! a rule is never complete ([`StreamEnd::is_complete`]).
//!
//! Why not a tokio `mpsc` channel: its bound counts messages, not bytes, and its receiver
//! alone can drop a message, so neither `buffer` bytes nor `drop_oldest` fit it. The buffer is
//! a `VecDeque` under a mutex held for one decision at a time (never across an await), with
//! tokio's [`Notify`] to wake the paused side. Time is the injected [`Clock`]'s `unix_ms`, so
//! every rule is tested without sleeping; only a producer paused by `rate` sleeps (tokio's timer).

mod buffer;
mod envelope;

use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

pub use buffer::{Dropped, Offered};
pub use envelope::{parse_envelope, ChunkEnvelope, End, Envelope};

use crate::pipeline::Clock;
use crate::program::{Program, StreamIr};
use crate::ty::{Ty, TypeTable};
use crate::value::Value;

/// Room for the envelope around a chunk's value on one line: `seq`, `at` and the keys.
pub const ENVELOPE_BYTES: u64 = 256;

/// `on_full`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnFull {
    Reject,
    DropOldest,
    DropNewest,
    Pause,
}

/// `duplicates` and `stale`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    Reject,
    Discard,
}

/// A stream declaration's limits, ready to enforce.
#[derive(Clone, Debug)]
pub struct Limits {
    pub name: String,
    /// The chunk type.
    pub item: Ty,
    pub chunk_bytes: u64,
    pub buffer_bytes: u64,
    pub rate_per_second: f64,
    pub duration_ms: u64,
    pub fresh_ms: u64,
    pub on_full: OnFull,
    pub duplicates: Rule,
    pub stale: Rule,
    /// The most chunks the node's parameter can hold (its list bound, spec §8).
    pub max_items: usize,
}

impl Limits {
    /// The limits of `stream`, as the compiler checked them.
    pub fn from_ir(stream: &StreamIr) -> Result<Limits, String> {
        let rule = |key: &str, word: &str| match word {
            "reject" => Ok(Rule::Reject),
            "discard" => Ok(Rule::Discard),
            _ => Err(format!(
                "stream `{}`: `{key}: {word}` is not reject or discard",
                stream.name
            )),
        };
        let on_full = match stream.on_full.as_str() {
            "reject" => OnFull::Reject,
            "drop_oldest" => OnFull::DropOldest,
            "drop_newest" => OnFull::DropNewest,
            "pause" => OnFull::Pause,
            other => {
                return Err(format!(
                "stream `{}`: `on_full: {other}` is not reject, drop_oldest, drop_newest or pause",
                stream.name
            ))
            }
        };
        let rate = stream.rate_per_second;
        if !(rate.is_finite() && rate > 0.0) {
            return Err(format!(
                "stream `{}`: its `rate` must be above zero",
                stream.name
            ));
        }
        Ok(Limits {
            name: stream.name.clone(),
            item: stream.chunk.clone(),
            chunk_bytes: stream.chunk_bytes,
            buffer_bytes: stream.buffer_bytes,
            rate_per_second: rate,
            duration_ms: stream.duration_ms,
            fresh_ms: stream.fresh_ms,
            on_full,
            duplicates: rule("duplicates", &stream.duplicates)?,
            stale: rule("stale", &stream.stale)?,
            max_items: crate::ty::limits::MAX_ITEMS as usize,
        })
    }

    /// The sliding window `rate` is counted over: a second, or longer for rates below one a
    /// second (`1/m` is one chunk in any 60 s).
    pub fn rate_window_ms(&self) -> i64 {
        if self.rate_per_second >= 1.0 {
            1000
        } else {
            (1000.0 / self.rate_per_second).ceil().min(i64::MAX as f64) as i64
        }
    }

    /// Chunks allowed in one window.
    pub fn rate_count(&self) -> u64 {
        let per_window = self.rate_per_second * self.rate_window_ms() as f64 / 1000.0;
        (per_window.floor() as u64).max(1)
    }

    /// The longest line a chunk of this stream can arrive on.
    pub fn line_bytes(&self) -> u64 {
        self.chunk_bytes.saturating_add(ENVELOPE_BYTES)
    }
}

/// A stream line that was refused, naming its line and the field (`value`, `seq`, `at`,
/// `end`, or the limit: `chunk`, `buffer`, `rate`, `duration`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamError {
    pub line: usize,
    pub field: String,
    pub message: String,
}

impl StreamError {
    pub fn new(line: usize, field: &str, message: impl Into<String>) -> StreamError {
        StreamError {
            line,
            field: field.to_owned(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for StreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: `{}`: {}", self.line, self.field, self.message)
    }
}

/// How a stream ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamEnd {
    /// `{"end": "complete"}`: the only complete end.
    Complete,
    /// `{"end": "error", "message": …}`.
    Error(String),
    /// `{"end": "cancelled"}`.
    Cancelled,
    /// The producer stopped without an end record.
    Cut,
    /// A rule refused a line.
    Refused(StreamError),
}

impl StreamEnd {
    pub fn is_complete(&self) -> bool {
        matches!(self, StreamEnd::Complete)
    }

    /// The receipt code of an end that is not complete.
    pub fn code(&self) -> &'static str {
        match self {
            StreamEnd::Complete => "complete",
            StreamEnd::Error(_) => "stream_error",
            StreamEnd::Cancelled => "stream_cancelled",
            StreamEnd::Cut => "incomplete_stream",
            StreamEnd::Refused(_) => "rejected_stream",
        }
    }

    /// A sentence for the author.
    pub fn describe(&self) -> String {
        match self {
            StreamEnd::Complete => "the stream is complete".to_owned(),
            StreamEnd::Error(m) if m.is_empty() => "the stream ended with an error".to_owned(),
            StreamEnd::Error(m) => format!("the stream ended with an error: {m}"),
            StreamEnd::Cancelled => "the stream was cancelled".to_owned(),
            StreamEnd::Cut => {
                "the stream stopped without its end record, so it is never complete".to_owned()
            }
            StreamEnd::Refused(e) => format!("the stream was refused: {e}"),
        }
    }
}

/// What a stream did, for receipts, logs and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamStats {
    pub accepted: u64,
    pub duplicates: u64,
    pub stale: u64,
    pub over_rate: u64,
    pub dropped_oldest: u64,
    pub dropped_newest: u64,
    /// Chunks that aged past `fresh` in the buffer before the node took them.
    pub expired: u64,
    /// Times the producer was told to wait (`pause`).
    pub paused: u64,
    /// The most bytes buffered at once.
    pub peak_bytes: u64,
}

struct Shared {
    state: Mutex<buffer::State>,
    /// Woken when the consumer takes chunks (a paused producer tries again).
    space: Notify,
    /// Woken when a chunk or the end arrives (a waiting consumer takes them).
    data: Notify,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, buffer::State> {
        // A panic elsewhere while the lock was held cannot leave the state half-changed in a
        // way that matters more than stopping: carry on with it.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The two ends of a stream of `program`'s stream number `stream` (the index in
/// [`Program::streams`], a parameter's [`crate::program::Param::stream`]), timed by `clock`.
pub fn channel(
    program: &Program,
    stream: u32,
    clock: Box<dyn Clock + Send>,
) -> Result<(StreamWriter, StreamReader), String> {
    let Some(ir) = program.streams.get(stream as usize) else {
        return Err(format!("the program has no stream #{stream}"));
    };
    let limits = Limits::from_ir(ir)?;
    Ok(channel_with(limits, Arc::new(program.types.clone()), clock))
}

/// [`channel`] from limits already made.
pub fn channel_with(
    limits: Limits,
    table: Arc<TypeTable>,
    clock: Box<dyn Clock + Send>,
) -> (StreamWriter, StreamReader) {
    let shared = Arc::new(Shared {
        state: Mutex::new(buffer::State::new(limits, table, clock)),
        space: Notify::new(),
        data: Notify::new(),
    });
    (
        StreamWriter {
            shared: Arc::clone(&shared),
            line: 0,
            pending: Vec::new(),
        },
        StreamReader { shared },
    )
}

/// The producer's end.
pub struct StreamWriter {
    shared: Arc<Shared>,
    line: usize,
    /// The start of a line whose newline has not arrived yet ([`StreamWriter::send_bytes`]),
    /// never longer than a line may be.
    pending: Vec<u8>,
}

impl StreamWriter {
    /// The stream's limits.
    pub fn line_bytes(&self) -> u64 {
        self.shared.lock().limits.line_bytes()
    }

    /// Reads and offers the next line of the wire form, without waiting: under `pause` a full
    /// buffer answers [`Offered::Full`] and too fast a chunk [`Offered::Wait`], and the same
    /// line must be offered again ([`StreamWriter::try_send_envelope`]) once there is room.
    pub fn try_send(&mut self, text: &str) -> Result<Option<(Envelope, Offered)>, StreamError> {
        self.line += 1;
        let max = self.line_bytes();
        let envelope = match parse_envelope(self.line, text, max) {
            Ok(Some(e)) => e,
            Ok(None) => return Ok(None),
            Err(e) => {
                self.refused(e.clone());
                return Err(e);
            }
        };
        let offered = self.offer(&envelope)?;
        Ok(Some((envelope, offered)))
    }

    /// Offers a parsed envelope again (after `Full` or `Wait`), as the current line.
    pub fn try_send_envelope(&mut self, envelope: &Envelope) -> Result<Offered, StreamError> {
        self.offer(envelope)
    }

    /// Reads and offers the next line, awaiting room under `pause`: the producer is slowed to
    /// the pace of the consumer and of `rate`.
    pub async fn send(&mut self, text: &str) -> Result<Option<Offered>, StreamError> {
        let Some((envelope, first)) = self.try_send(text)? else {
            return Ok(None);
        };
        let mut offered = first;
        loop {
            match offered {
                Offered::Full => {
                    let shared = Arc::clone(&self.shared);
                    let notified = shared.space.notified();
                    tokio::pin!(notified);
                    notified.as_mut().enable();
                    // Room may have been made between the offer and `enable`.
                    offered = self.offer(&envelope)?;
                    if offered == Offered::Full {
                        notified.await;
                        offered = self.offer(&envelope)?;
                    }
                }
                Offered::Wait(ms) => {
                    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                    offered = self.offer(&envelope)?;
                }
                done => return Ok(Some(done)),
            }
        }
    }

    /// Feeds bytes of the wire form as they arrive (the frames of an HTTP request body): each
    /// line is sent as its newline arrives, awaiting room under `pause`, so a gateway that
    /// awaits this stops reading the body while the buffer is full. Memory beyond the buffer is
    /// one partial line, refused once it is longer than a chunk's line can be.
    pub async fn send_bytes(&mut self, bytes: &[u8]) -> Result<(), StreamError> {
        let mut rest = bytes;
        while let Some(i) = rest.iter().position(|b| *b == b'\n') {
            let (head, tail) = rest.split_at(i);
            rest = tail.get(1..).unwrap_or_default();
            self.pending.extend_from_slice(head);
            self.check_pending()?;
            let line = std::mem::take(&mut self.pending);
            self.send_raw_line(&line).await?;
        }
        self.pending.extend_from_slice(rest);
        self.check_pending()
    }

    /// The body has ended: a last line without its newline is sent, then the writer closes
    /// (a stream without its end record is cut, never complete).
    pub async fn finish_bytes(mut self) -> Result<(), StreamError> {
        if !self.pending.is_empty() {
            let line = std::mem::take(&mut self.pending);
            self.send_raw_line(&line).await?;
        }
        Ok(())
    }

    async fn send_raw_line(&mut self, line: &[u8]) -> Result<(), StreamError> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Ok(text) = std::str::from_utf8(line) else {
            let e = StreamError::new(self.line + 1, "line", "the line is not UTF-8");
            self.refused(e.clone());
            return Err(e);
        };
        self.send(text).await.map(|_| ())
    }

    fn check_pending(&mut self) -> Result<(), StreamError> {
        let max = self.line_bytes();
        if self.pending.len() as u64 <= max {
            return Ok(());
        }
        self.pending = Vec::new();
        let e = StreamError::new(
            self.line + 1,
            "chunk",
            format!("the line is longer than a chunk of this stream can be ({max} bytes with its envelope; see the stream's `chunk` limit)"),
        );
        self.refused(e.clone());
        Err(e)
    }

    fn offer(&mut self, envelope: &Envelope) -> Result<Offered, StreamError> {
        let result = {
            let mut state = self.shared.lock();
            match envelope {
                Envelope::Chunk(c) => state.offer_chunk(self.line, c),
                Envelope::End(end) => state.offer_end(self.line, end.clone()),
            }
        };
        if matches!(result, Ok(Offered::Accepted | Offered::Ended) | Err(_)) {
            self.shared.data.notify_waiters();
        }
        result
    }

    fn refused(&mut self, e: StreamError) {
        self.shared.lock().finish(StreamEnd::Refused(e));
        self.shared.data.notify_waiters();
    }

    /// The producer stopped: without an end record the stream is cut, never complete.
    pub fn close(self) {
        // Drop does it.
    }
}

impl Drop for StreamWriter {
    fn drop(&mut self) {
        self.shared.lock().finish(StreamEnd::Cut);
        self.shared.data.notify_waiters();
    }
}

/// What the consumer took.
#[derive(Clone, Debug)]
pub struct Taken {
    /// The chunks buffered, oldest first: the node's stream parameter.
    pub chunks: Vec<Value>,
    /// The end, once the stream has ended.
    pub end: Option<StreamEnd>,
}

/// The consumer's end.
pub struct StreamReader {
    shared: Arc<Shared>,
}

impl StreamReader {
    /// Every chunk buffered now (the buffer is left empty, waking a paused producer) and the
    /// end if the stream has ended.
    pub fn take(&self) -> Taken {
        let taken = {
            let mut state = self.shared.lock();
            let chunks = state.take();
            Taken {
                chunks,
                end: state.end.clone(),
            }
        };
        self.shared.space.notify_waiters();
        taken
    }

    /// Waits until a chunk is buffered or the stream has ended, then takes.
    pub async fn next(&self) -> Taken {
        loop {
            let notified = self.shared.data.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let state = self.shared.lock();
                if state.len() > 0 || state.end.is_some() {
                    break;
                }
            }
            notified.await;
        }
        self.take()
    }

    /// Chunks buffered now, without taking them.
    pub fn buffered(&self) -> usize {
        self.shared.lock().len()
    }

    /// Bytes buffered now.
    pub fn buffered_bytes(&self) -> u64 {
        self.shared.lock().bytes()
    }

    pub fn end(&self) -> Option<StreamEnd> {
        self.shared.lock().end.clone()
    }

    pub fn stats(&self) -> StreamStats {
        self.shared.lock().stats
    }

    #[cfg(test)]
    fn rate_groups(&self) -> usize {
        self.shared.lock().rate_groups()
    }

    pub fn limits(&self) -> Limits {
        self.shared.lock().limits.clone()
    }
}

/// The stream a node reads, when its one parameter is a stream: the stream's index.
pub fn node_stream(node: &crate::program::NodeIr) -> Option<u32> {
    match node.params.as_slice() {
        [one] => one.stream,
        _ => None,
    }
}

#[cfg(test)]
mod tests;
