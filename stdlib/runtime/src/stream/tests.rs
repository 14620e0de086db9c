//! The rules of spec §7.1 on the buffer, timed by a manual clock: nothing here sleeps (a `rate`
//! pause runs on tokio's paused test timer).

use std::sync::Arc;

use super::*;
use crate::pipeline::ManualClock;
use crate::ty::{IntKind, IntTy, Ty, TypeTable};

/// 2026-12-02T14:00:00Z.
const T0: i64 = 1_796_220_000_000;

fn limits(on_full: OnFull) -> Limits {
    Limits {
        name: "Readings".to_owned(),
        item: Ty::Int(IntTy {
            kind: IntKind::U32,
            min: 0,
            max: u32::MAX.into(),
            max_exclusive: false,
        }),
        chunk_bytes: 16,
        // Ten chunks of `1000000` (7 bytes) fit, not eleven.
        buffer_bytes: 70,
        rate_per_second: 1000.0,
        duration_ms: 60_000,
        fresh_ms: 500,
        on_full,
        duplicates: Rule::Discard,
        stale: Rule::Discard,
        max_items: 10_000,
    }
}

fn open(limits: Limits) -> (StreamWriter, StreamReader, ManualClock) {
    let clock = ManualClock::at(T0);
    let (w, r) = channel_with(
        limits,
        Arc::new(TypeTable::default()),
        Box::new(clock.clone()),
    );
    (w, r, clock)
}

fn at(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(T0 + ms)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// Chunk `seq` observed `ms` after T0, value `1000000 + seq` (7 bytes).
fn chunk(seq: u64, ms: i64) -> String {
    format!(
        r#"{{"seq": {seq}, "at": "{}", "value": {}}}"#,
        at(ms),
        1_000_000 + seq
    )
}

fn ints(values: &[Value]) -> Vec<i128> {
    values
        .iter()
        .map(|v| match v {
            Value::Int(i) => *i - 1_000_000,
            _ => -1,
        })
        .collect()
}

fn send(w: &mut StreamWriter, line: &str) -> Result<Offered, StreamError> {
    w.try_send(line)
        .map(|o| o.map_or(Offered::Ended, |(_, o)| o))
}

#[test]
fn a_burst_under_drop_oldest_keeps_the_newest_chunks_within_the_buffer() {
    let (mut w, r, _clock) = open(limits(OnFull::DropOldest));
    for seq in 1..=1000 {
        assert_eq!(send(&mut w, &chunk(seq, 0)), Ok(Offered::Accepted));
        assert!(r.buffered_bytes() <= 70, "memory stays within `buffer`");
    }
    let stats = r.stats();
    assert_eq!(stats.peak_bytes, 70);
    assert_eq!(stats.dropped_oldest, 990);
    let taken = r.take();
    assert_eq!(ints(&taken.chunks), (991..=1000).collect::<Vec<_>>());
    assert_eq!(taken.end, None);
}

#[test]
fn drop_newest_keeps_the_first_chunks() {
    let (mut w, r, _clock) = open(limits(OnFull::DropNewest));
    for seq in 1..=15 {
        send(&mut w, &chunk(seq, 0)).unwrap();
    }
    assert_eq!(ints(&r.take().chunks), (1..=10).collect::<Vec<_>>());
    assert_eq!(r.stats().dropped_newest, 5);
}

#[test]
fn reject_on_full_ends_the_stream_naming_the_buffer() {
    let (mut w, r, _clock) = open(limits(OnFull::Reject));
    for seq in 1..=10 {
        send(&mut w, &chunk(seq, 0)).unwrap();
    }
    let e = send(&mut w, &chunk(11, 0)).unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (11, "buffer"));
    assert!(matches!(r.end(), Some(StreamEnd::Refused(_))));
    // Nothing more is taken after a refusal.
    assert_eq!(send(&mut w, &chunk(12, 0)).unwrap_err().field, "end");
}

#[test]
fn duplicates_are_discarded_or_rejected_by_sequence_number() {
    let (mut w, r, _clock) = open(limits(OnFull::DropOldest));
    send(&mut w, &chunk(1, 0)).unwrap();
    assert_eq!(
        send(&mut w, &chunk(1, 0)),
        Ok(Offered::Discarded(Dropped::Duplicate))
    );
    send(&mut w, &chunk(2, 0)).unwrap();
    assert_eq!(ints(&r.take().chunks), vec![1, 2]);
    assert_eq!(r.stats().duplicates, 1);

    let mut strict = limits(OnFull::DropOldest);
    strict.duplicates = Rule::Reject;
    let (mut w, r, _clock) = open(strict);
    send(&mut w, &chunk(1, 0)).unwrap();
    let e = send(&mut w, &chunk(1, 0)).unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (2, "seq"));
    assert!(e.message.contains("sent already"), "{e}");
    assert!(!r.end().is_some_and(|e| e.is_complete()));
}

#[test]
fn stale_chunks_by_sequence_and_by_time() {
    let (mut w, r, clock) = open(limits(OnFull::DropOldest));
    send(&mut w, &chunk(5, 0)).unwrap();
    // Lower than the highest: out of order, stale.
    assert_eq!(
        send(&mut w, &chunk(4, 0)),
        Ok(Offered::Discarded(Dropped::Stale))
    );
    clock.set(T0 + 2_000);
    // Observed 1.9 s ago, the bound is 500 ms.
    assert_eq!(
        send(&mut w, &chunk(6, 100)),
        Ok(Offered::Discarded(Dropped::Stale))
    );
    send(&mut w, &chunk(7, 1_900)).unwrap();
    // Chunk 5 aged past `fresh` in the buffer: the node never sees it.
    assert_eq!(ints(&r.take().chunks), vec![7]);
    let stats = r.stats();
    assert_eq!((stats.stale, stats.expired), (2, 1));

    let mut strict = limits(OnFull::DropOldest);
    strict.stale = Rule::Reject;
    let (mut w, _r, clock) = open(strict);
    clock.set(T0 + 1_000);
    let e = send(&mut w, &chunk(1, 0)).unwrap_err();
    assert_eq!(e.field, "at");
}

#[test]
fn a_stream_cut_before_its_end_is_never_complete() {
    let (mut w, r, _clock) = open(limits(OnFull::DropOldest));
    send(&mut w, &chunk(1, 0)).unwrap();
    send(&mut w, &chunk(2, 0)).unwrap();
    drop(w);
    let taken = r.take();
    assert_eq!(taken.chunks.len(), 2);
    let end = taken.end.unwrap();
    assert_eq!(end, StreamEnd::Cut);
    assert!(!end.is_complete());
    assert_eq!(end.code(), "incomplete_stream");
}

#[test]
fn exactly_one_end_record() {
    let (mut w, r, _clock) = open(limits(OnFull::DropOldest));
    send(&mut w, &chunk(1, 0)).unwrap();
    assert_eq!(send(&mut w, r#"{"end": "complete"}"#), Ok(Offered::Ended));
    let e = send(&mut w, r#"{"end": "complete"}"#).unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (3, "end"));
    let e = send(&mut w, &chunk(2, 0)).unwrap_err();
    assert_eq!(e.field, "end");
    drop(w);
    // The end record stands: dropping the writer afterwards does not cut it.
    assert_eq!(r.end(), Some(StreamEnd::Complete));

    for (line, end) in [
        (r#"{"end": "cancelled"}"#, StreamEnd::Cancelled),
        (
            r#"{"end": "error", "message": "sensor lost"}"#,
            StreamEnd::Error("sensor lost".into()),
        ),
    ] {
        let (mut w, r, _clock) = open(limits(OnFull::DropOldest));
        send(&mut w, line).unwrap();
        assert_eq!(r.end(), Some(end.clone()));
        assert!(!end.is_complete());
    }
}

#[test]
fn bad_lines_are_refused_naming_the_field() {
    let cases = [
        ("not json", "line"),
        ("[1, 2]", "line"),
        (r#"{"seq": 1, "at": "2026-12-02T14:00:00Z"}"#, "value"),
        (r#"{"at": "2026-12-02T14:00:00Z", "value": 1}"#, "seq"),
        (
            r#"{"seq": -1, "at": "2026-12-02T14:00:00Z", "value": 1}"#,
            "seq",
        ),
        (r#"{"seq": 1, "at": "yesterday", "value": 1}"#, "at"),
        (
            r#"{"seq": 1, "at": "2026-12-02T14:00:00Z", "value": 1, "extra": 2}"#,
            "line",
        ),
        (r#"{"end": "finished"}"#, "end"),
        (r#"{"end": "complete", "seq": 3}"#, "seq"),
        (r#"{"end": "complete", "message": "x"}"#, "message"),
        // Over the chunk limit of 16 bytes.
        (
            r#"{"seq": 1, "at": "2026-12-02T14:00:00Z", "value": 100000000000000000}"#,
            "chunk",
        ),
        // Not a chunk of the type (a u32).
        (
            r#"{"seq": 1, "at": "2026-12-02T14:00:00Z", "value": "hot"}"#,
            "value",
        ),
    ];
    for (line, field) in cases {
        let (mut w, r, _clock) = open(limits(OnFull::DropOldest));
        let e = send(&mut w, line).unwrap_err();
        assert_eq!(e.field, field, "{line}: {e}");
        assert_eq!(e.line, 1);
        // Nothing half-accepted: the stream is refused and holds nothing.
        assert_eq!(r.buffered(), 0);
        assert!(matches!(r.end(), Some(StreamEnd::Refused(_))), "{line}");
    }
    // A line far over the chunk limit is refused before it is parsed.
    let (mut w, _r, _clock) = open(limits(OnFull::DropOldest));
    let long = format!(
        r#"{{"seq": 1, "at": "x", "value": "{}"}}"#,
        "a".repeat(1000)
    );
    assert_eq!(send(&mut w, &long).unwrap_err().field, "chunk");
}

#[test]
fn rate_and_duration() {
    let mut slow = limits(OnFull::DropNewest);
    slow.rate_per_second = 2.0;
    let (mut w, _r, clock) = open(slow.clone());
    send(&mut w, &chunk(1, 0)).unwrap();
    send(&mut w, &chunk(2, 0)).unwrap();
    assert_eq!(
        send(&mut w, &chunk(3, 0)),
        Ok(Offered::Discarded(Dropped::OverRate))
    );
    clock.set(T0 + 1_000);
    assert_eq!(send(&mut w, &chunk(4, 1_000)), Ok(Offered::Accepted));

    slow.on_full = OnFull::Pause;
    let (mut w, _r, clock) = open(slow.clone());
    send(&mut w, &chunk(1, 0)).unwrap();
    clock.set(T0 + 400);
    send(&mut w, &chunk(2, 400)).unwrap();
    // The window frees when chunk 1 leaves it, 600 ms from now.
    assert_eq!(send(&mut w, &chunk(3, 400)), Ok(Offered::Wait(600)));

    slow.on_full = OnFull::Reject;
    let (mut w, _r, _clock) = open(slow);
    send(&mut w, &chunk(1, 0)).unwrap();
    send(&mut w, &chunk(2, 0)).unwrap();
    assert_eq!(send(&mut w, &chunk(3, 0)).unwrap_err().field, "rate");

    let (mut w, _r, clock) = open(limits(OnFull::DropOldest));
    send(&mut w, &chunk(1, 0)).unwrap();
    clock.set(T0 + 60_001);
    assert_eq!(
        send(&mut w, &chunk(2, 60_001)).unwrap_err().field,
        "duration"
    );
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime")
}

#[test]
fn pause_slows_the_producer_to_the_consumer() {
    runtime().block_on(async {
        let (mut w, r, _clock) = open(limits(OnFull::Pause));
        let sent = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counter = Arc::clone(&sent);
        let producer = tokio::spawn(async move {
            for seq in 1..=35 {
                w.send(&chunk(seq, 0)).await.unwrap();
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            w.send(r#"{"end": "complete"}"#).await.unwrap();
        });
        let mut batches = Vec::new();
        loop {
            // Let the producer run as far as it can.
            for _ in 0..50 {
                tokio::task::yield_now().await;
            }
            let before = sent.load(std::sync::atomic::Ordering::SeqCst);
            let taken = r.next().await;
            batches.push((before, ints(&taken.chunks)));
            if taken.end.is_some() && r.buffered() == 0 {
                break;
            }
        }
        producer.await.unwrap();
        // The producer stopped each time the buffer held ten chunks, and went on only when
        // the consumer took them: nothing was dropped, nothing went over `buffer`.
        let sizes: Vec<usize> = batches.iter().map(|(_, b)| b.len()).collect();
        assert_eq!(sizes, vec![10, 10, 10, 5]);
        let counts: Vec<u64> = batches.iter().map(|(n, _)| *n).collect();
        assert_eq!(counts, vec![10, 20, 30, 35]);
        let all: Vec<i128> = batches.into_iter().flat_map(|(_, b)| b).collect();
        assert_eq!(all, (1..=35).collect::<Vec<_>>());
        let stats = r.stats();
        assert_eq!((stats.peak_bytes, stats.dropped_oldest), (70, 0));
        assert!(stats.paused >= 3);
        assert_eq!(r.end(), Some(StreamEnd::Complete));
    });
}

#[test]
fn a_reader_waits_for_chunks_and_sees_a_cut() {
    runtime().block_on(async {
        let (mut w, r, _clock) = open(limits(OnFull::DropOldest));
        let reader = tokio::spawn(async move {
            let first = r.next().await;
            let second = r.next().await;
            (ints(&first.chunks), second.end)
        });
        tokio::task::yield_now().await;
        w.send(&chunk(1, 0)).await.unwrap();
        tokio::task::yield_now().await;
        drop(w);
        let (first, end) = reader.await.unwrap();
        assert_eq!(first, vec![1]);
        assert_eq!(end, Some(StreamEnd::Cut));
    });
}

#[test]
fn a_rate_pause_waits_on_the_timer() {
    runtime().block_on(async {
        let mut slow = limits(OnFull::Pause);
        slow.rate_per_second = 2.0;
        // A paused chunk ages while it waits: give it time.
        slow.fresh_ms = 10_000;
        // A clock that reads tokio's (paused, auto-advancing) timer.
        struct TokioClock(tokio::time::Instant);
        impl crate::pipeline::Clock for TokioClock {
            fn now_ms(&mut self) -> u64 {
                self.0.elapsed().as_millis() as u64
            }
            fn unix_ms(&mut self) -> i64 {
                T0 + self.0.elapsed().as_millis() as i64
            }
        }
        let (mut w, r) = channel_with(
            slow,
            Arc::new(TypeTable::default()),
            Box::new(TokioClock(tokio::time::Instant::now())),
        );
        let start = tokio::time::Instant::now();
        for seq in 1..=5 {
            let line = chunk(seq, start.elapsed().as_millis() as i64);
            assert_eq!(w.send(&line).await, Ok(Some(Offered::Accepted)));
        }
        // Two a second: the fifth chunk could go only two seconds in.
        assert!(start.elapsed() >= std::time::Duration::from_secs(2));
        assert_eq!(r.stats().accepted, 5);
    });
}

#[test]
fn an_http_body_feeds_the_stream_in_frames_of_any_size() {
    runtime().block_on(async {
        let (mut w, r, _clock) = open(limits(OnFull::Pause));
        let mut body = String::new();
        for seq in 1..=25 {
            body.push_str(&chunk(seq, 0));
            body.push_str("\r\n");
        }
        body.push_str(r#"{"end": "complete"}"#);
        let producer = tokio::spawn(async move {
            // Frames that cut lines anywhere, as a body arrives.
            for frame in body.as_bytes().chunks(7) {
                w.send_bytes(frame).await.unwrap();
            }
            w.finish_bytes().await.unwrap();
        });
        let mut all = Vec::new();
        loop {
            let taken = r.next().await;
            assert!(taken.chunks.len() <= 10, "never more than the buffer holds");
            all.extend(ints(&taken.chunks));
            if taken.end.is_some() && r.buffered() == 0 {
                break;
            }
        }
        producer.await.unwrap();
        assert_eq!(all, (1..=25).collect::<Vec<_>>());
        assert_eq!(r.end(), Some(StreamEnd::Complete));

        // A line that never ends is refused once it is longer than a line can be.
        let (mut w, r, _clock) = open(limits(OnFull::Pause));
        let mut refused = None;
        for _ in 0..100 {
            if let Err(e) = w.send_bytes(b"{\"seq\": 1, \"at\": \"").await {
                refused = Some(e);
                break;
            }
        }
        assert_eq!(refused.map(|e| e.field), Some("chunk".to_owned()));
        assert!(matches!(r.end(), Some(StreamEnd::Refused(_))));
    });
}

#[test]
fn the_rate_window_stays_small_whatever_the_rate() {
    let mut fast = limits(OnFull::DropOldest);
    fast.rate_per_second = 1e9;
    fast.fresh_ms = 60_000;
    let (mut w, r, clock) = open(fast);
    for seq in 1..=5_000 {
        let ms = seq as i64;
        clock.set(T0 + ms);
        assert_eq!(send(&mut w, &chunk(seq, ms)), Ok(Offered::Accepted));
        assert!(r.rate_groups() <= 1_025, "{} groups", r.rate_groups());
    }
    // A clock that stands still: one group.
    let (mut w, r, _clock) = open(limits(OnFull::DropOldest));
    for seq in 1..=900 {
        send(&mut w, &chunk(seq, 0)).unwrap();
    }
    assert_eq!(r.rate_groups(), 1);
}
