//! The state of one stream, with no waiting in it: every rule of spec §7.1 decided for one
//! envelope at a time against the stream's clock. [`super`] wraps it for async producers and
//! consumers; a synchronous host (`aelc run --session`) uses it through the same wrapper's
//! non-waiting calls.
//!
//! The order of the rules for a chunk, each refusing before anything changes:
//! 1. after the end record, nothing is taken (`end`);
//! 2. the value's encoded size within `chunk` (`chunk`);
//! 3. the stream's age within `duration`, from its first chunk (`duration`);
//! 4. the sequence number: equal to the highest seen is a duplicate (`duplicates` rule), lower is
//!    stale (`stale` rule);
//! 5. the chunk's `at` within `fresh` of now (`stale` rule);
//! 6. the value decodes as the chunk type (`value`);
//! 7. `rate`: at most n chunks in a sliding window (`on_full` policy, `pause` waits the window);
//! 8. room in `buffer` (bytes, and the list bound of the node's parameter): `on_full`.
//!
//! A `reject` rule ends the stream as refused (the producer is told why, nothing more is
//! taken); a `discard` rule drops the chunk and goes on.
//!
//! Memory: chunks held are at most `buffer` bytes of encoded JSON (and at most the list bound in
//! number); the rate window holds at most 1,025 groups of arrivals, whatever the rate.

use std::collections::VecDeque;

use crate::decode::Decoder;
use crate::pipeline::Clock;
use crate::ty::TypeTable;
use crate::value::Value;

use super::{ChunkEnvelope, End, Limits, OnFull, Rule, StreamEnd, StreamError, StreamStats};

/// What became of one offered envelope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offered {
    /// Buffered.
    Accepted,
    /// Dropped by a `discard` rule or a drop policy; the stream goes on.
    Discarded(Dropped),
    /// `on_full: pause` and the buffer is full: nothing changed; offer it again once the
    /// consumer has taken chunks.
    Full,
    /// `on_full: pause` and the chunk would exceed `rate`: offer it again after this many ms.
    Wait(u64),
    /// The end record was taken.
    Ended,
}

/// Why a chunk was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dropped {
    Duplicate,
    Stale,
    OverRate,
    /// `drop_newest` with a full buffer.
    Newest,
}

/// How finely the rate window is kept: arrivals less than `window / RATE_GROUPS` ms after the
/// first of a group join it, so the window holds at most `RATE_GROUPS + 1` groups whatever the
/// declared rate. A group leaves the window with its last arrival, so the count errs on the
/// strict side by less than one group's span.
const RATE_GROUPS: i64 = 1024;

/// Chunks that arrived close together.
struct Arrivals {
    first: i64,
    last: i64,
    count: u64,
}

/// One buffered chunk.
struct Held {
    at_ms: i64,
    bytes: u64,
    value: Value,
}

pub(super) struct State {
    pub limits: Limits,
    pub table: std::sync::Arc<TypeTable>,
    pub clock: Box<dyn Clock + Send>,
    held: VecDeque<Held>,
    bytes: u64,
    highest_seq: Option<u64>,
    started_ms: Option<i64>,
    /// Arrivals within the rate window, oldest first, grouped by [`RATE_GROUPS`] (see there).
    window: VecDeque<Arrivals>,
    /// Chunks counted in `window`.
    in_window: u64,
    pub end: Option<StreamEnd>,
    pub stats: StreamStats,
}

impl State {
    pub fn new(
        limits: Limits,
        table: std::sync::Arc<TypeTable>,
        clock: Box<dyn Clock + Send>,
    ) -> State {
        State {
            limits,
            table,
            clock,
            held: VecDeque::new(),
            bytes: 0,
            highest_seq: None,
            started_ms: None,
            window: VecDeque::new(),
            in_window: 0,
            end: None,
            stats: StreamStats::default(),
        }
    }

    /// Chunks buffered now.
    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// Ends the stream (once: the first end stands).
    pub fn finish(&mut self, end: StreamEnd) {
        if self.end.is_none() {
            self.end = Some(end);
        }
    }

    /// A refusal that ends the stream.
    fn refuse(&mut self, error: StreamError) -> Result<Offered, StreamError> {
        self.finish(StreamEnd::Refused(error.clone()));
        Err(error)
    }

    pub fn offer_end(&mut self, line: usize, end: End) -> Result<Offered, StreamError> {
        if self.end.is_some() {
            return Err(self.after_end(line));
        }
        self.finish(match end {
            End::Complete => StreamEnd::Complete,
            End::Error(message) => StreamEnd::Error(message),
            End::Cancelled => StreamEnd::Cancelled,
        });
        Ok(Offered::Ended)
    }

    fn after_end(&self, line: usize) -> StreamError {
        StreamError::new(
            line,
            "end",
            match &self.end {
                Some(StreamEnd::Refused(e)) => format!("the stream was refused already ({e})"),
                _ => {
                    "a line after the stream's end record: a stream has exactly one end".to_owned()
                }
            },
        )
    }

    pub fn offer_chunk(
        &mut self,
        line: usize,
        chunk: &ChunkEnvelope,
    ) -> Result<Offered, StreamError> {
        if self.end.is_some() {
            return Err(self.after_end(line));
        }
        let limits = &self.limits;
        let bytes = chunk.value.get().len() as u64;
        if bytes > limits.chunk_bytes {
            let e = StreamError::new(
                line,
                "chunk",
                format!(
                    "chunk {} has {bytes} bytes, more than the stream's `chunk` limit of {} bytes",
                    chunk.seq, limits.chunk_bytes
                ),
            );
            return self.refuse(e);
        }
        let now = self.clock.unix_ms();
        let started = *self.started_ms.get_or_insert(now);
        let age = now.saturating_sub(started);
        if age > as_ms(limits.duration_ms) {
            let e = StreamError::new(
                line,
                "duration",
                format!(
                    "the stream has run {age} ms, longer than its `duration` of {} ms",
                    limits.duration_ms
                ),
            );
            return self.refuse(e);
        }
        if let Some(highest) = self.highest_seq {
            if chunk.seq == highest {
                return match limits.duplicates {
                    Rule::Discard => Ok(self.dropped(Dropped::Duplicate)),
                    Rule::Reject => self.refuse(StreamError::new(
                        line,
                        "seq",
                        format!(
                            "chunk {} was sent already (`duplicates: reject`)",
                            chunk.seq
                        ),
                    )),
                };
            }
            if chunk.seq < highest {
                let why = format!(
                    "chunk {} comes after chunk {highest}: sequence numbers only grow",
                    chunk.seq
                );
                return self.stale(line, "seq", why);
            }
        }
        let chunk_age = now.saturating_sub(chunk.at_ms);
        if chunk_age > as_ms(limits.fresh_ms) {
            let why = format!(
                "chunk {} is {chunk_age} ms old, older than the stream's `fresh` bound of {} ms",
                chunk.seq, limits.fresh_ms
            );
            return self.stale(line, "at", why);
        }
        let value = match Decoder::new(&self.table)
            .with_max_input_bytes(usize::try_from(limits.chunk_bytes).unwrap_or(usize::MAX))
            .decode(chunk.value.get().as_bytes(), &limits.item, "value")
        {
            Ok(v) => v,
            Err(errors) => {
                let why: Vec<String> = errors.iter().map(|e| e.message.clone()).collect();
                let e = StreamError::new(
                    line,
                    "value",
                    format!(
                        "chunk {} is not a chunk of `{}`: {}",
                        chunk.seq,
                        limits.name,
                        why.join("; ")
                    ),
                );
                return self.refuse(e);
            }
        };
        // The rate window: groups whose last arrival is a window old have left it.
        let window_ms = limits.rate_window_ms();
        while let Some(group) = self
            .window
            .front()
            .filter(|g| now.saturating_sub(g.last) >= window_ms)
        {
            self.in_window = self.in_window.saturating_sub(group.count);
            self.window.pop_front();
        }
        if self.in_window >= limits.rate_count() {
            match limits.on_full {
                OnFull::Reject => {
                    let e = StreamError::new(
                        line,
                        "rate",
                        format!(
                            "chunk {} arrives faster than the stream's `rate` of {} a second",
                            chunk.seq, limits.rate_per_second
                        ),
                    );
                    return self.refuse(e);
                }
                OnFull::DropOldest | OnFull::DropNewest => {
                    self.highest_seq = Some(chunk.seq);
                    return Ok(self.dropped(Dropped::OverRate));
                }
                OnFull::Pause => {
                    let oldest = self.window.front().map_or(now, |g| g.last);
                    let wait = window_ms.saturating_sub(now.saturating_sub(oldest)).max(1);
                    self.stats.paused += 1;
                    return Ok(Offered::Wait(u64::try_from(wait).unwrap_or(1)));
                }
            }
        }
        let full = |s: &State| {
            s.bytes.saturating_add(bytes) > s.limits.buffer_bytes
                || s.held.len() >= s.limits.max_items
        };
        if full(self) {
            match self.limits.on_full {
                OnFull::Reject => {
                    let e = StreamError::new(
                        line,
                        "buffer",
                        format!(
                            "chunk {} does not fit: {} of the stream's `buffer` of {} bytes are taken (`on_full: reject`)",
                            chunk.seq, self.bytes, self.limits.buffer_bytes
                        ),
                    );
                    return self.refuse(e);
                }
                OnFull::DropNewest => {
                    self.highest_seq = Some(chunk.seq);
                    return Ok(self.dropped(Dropped::Newest));
                }
                OnFull::Pause => {
                    self.stats.paused += 1;
                    return Ok(Offered::Full);
                }
                OnFull::DropOldest => {
                    while full(self) {
                        let Some(old) = self.held.pop_front() else {
                            break;
                        };
                        self.bytes = self.bytes.saturating_sub(old.bytes);
                        self.stats.dropped_oldest += 1;
                    }
                    if full(self) {
                        // Only a chunk larger than the whole buffer gets here.
                        let e = StreamError::new(
                            line,
                            "buffer",
                            format!(
                                "chunk {} alone is larger than the stream's `buffer` of {} bytes",
                                chunk.seq, self.limits.buffer_bytes
                            ),
                        );
                        return self.refuse(e);
                    }
                }
            }
        }
        self.highest_seq = Some(chunk.seq);
        let span = (window_ms / RATE_GROUPS).max(1);
        match self.window.back_mut() {
            Some(group) if now.saturating_sub(group.first) < span => {
                group.last = group.last.max(now);
                group.count += 1;
            }
            _ => self.window.push_back(Arrivals {
                first: now,
                last: now,
                count: 1,
            }),
        }
        self.in_window += 1;
        self.bytes += bytes;
        self.stats.peak_bytes = self.stats.peak_bytes.max(self.bytes);
        self.stats.accepted += 1;
        self.held.push_back(Held {
            at_ms: chunk.at_ms,
            bytes,
            value,
        });
        Ok(Offered::Accepted)
    }

    fn stale(&mut self, line: usize, field: &str, why: String) -> Result<Offered, StreamError> {
        match self.limits.stale {
            Rule::Discard => Ok(self.dropped(Dropped::Stale)),
            Rule::Reject => self.refuse(StreamError::new(
                line,
                field,
                format!("{why} (`stale: reject`)"),
            )),
        }
    }

    fn dropped(&mut self, why: Dropped) -> Offered {
        match why {
            Dropped::Duplicate => self.stats.duplicates += 1,
            Dropped::Stale => self.stats.stale += 1,
            Dropped::OverRate => self.stats.over_rate += 1,
            Dropped::Newest => self.stats.dropped_newest += 1,
        }
        Offered::Discarded(why)
    }

    /// Every chunk buffered now, oldest first, leaving the buffer empty. Chunks that aged past
    /// `fresh` while they waited are dropped, never given to the node.
    pub fn take(&mut self) -> Vec<Value> {
        let now = self.clock.unix_ms();
        let fresh = as_ms(self.limits.fresh_ms);
        let mut out = Vec::with_capacity(self.held.len());
        for held in self.held.drain(..) {
            if now.saturating_sub(held.at_ms) > fresh {
                self.stats.expired += 1;
            } else {
                out.push(held.value);
            }
        }
        self.bytes = 0;
        out
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Groups of arrivals the rate window holds (bounded whatever the rate).
    #[cfg(test)]
    pub fn rate_groups(&self) -> usize {
        self.window.len()
    }
}

fn as_ms(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}
