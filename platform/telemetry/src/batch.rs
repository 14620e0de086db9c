//! The `http/protobuf` batch: finished spans, already encoded, wait here until the batch
//! thread frames them into one `ExportTraceServiceRequest` and posts it (`exporter`).
//!
//! - A span is encoded when it ends, on its own thread, straight into the pending batch, under
//!   its lock ([`Batch::push`]): the encoding is a few hundred instructions, about what copying
//!   its bytes from a scratch buffer cost, so the lock is held no longer and the copy is gone.
//!   The batch thread does no per-span work but count, and no string of a span crosses threads.
//! - Bounded as the SDK's batch processor is (`OTEL_BSP_MAX_QUEUE_SIZE`, 2048 spans): a span
//!   past it is dropped and counted (`queue_full`), so a slow collector never holds a run up or
//!   grows memory; the spans of a batch the collector did not take are counted
//!   (`export_failed`).
//! - The thread sends when `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` spans (512) are waiting, when
//!   `OTEL_BSP_SCHEDULE_DELAY` (5 s) has passed, and at [`Batch::shutdown`]; a batch is
//!   everything waiting then, so under a slow collector it may hold up to the queue's size.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use aelc_runtime::trace::Record;
use opentelemetry::InstrumentationScope;

use crate::encode::TraceEncoder;
use crate::exporter::Protobuf;
use crate::{EXPORT_FAILED, QUEUE_FULL};

/// The batch settings, as the SDK reads them from `OTEL_BSP_*`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings {
    pub(crate) capacity: usize,
    pub(crate) batch_size: usize,
    pub(crate) delay: Duration,
}

impl Settings {
    pub(crate) fn from_env(var: &impl Fn(&str) -> Option<String>) -> Settings {
        let number = |name: &str, default: usize| {
            var(name)
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|n| *n > 0)
                .unwrap_or(default)
        };
        let capacity = number("OTEL_BSP_MAX_QUEUE_SIZE", 2048);
        Settings {
            capacity,
            // Never more than the queue holds (the SDK clamps it the same way).
            batch_size: number("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512).min(capacity),
            delay: Duration::from_millis(number("OTEL_BSP_SCHEDULE_DELAY", 5000) as u64),
        }
    }
}

/// The spans waiting to be sent, and the batch thread's orders.
#[derive(Default)]
struct Pending {
    /// Room for the request's head, then `ScopeSpans.spans` fields, one per span, as
    /// [`TraceEncoder::encode_span`] wrote them.
    bytes: Vec<u8>,
    spans: usize,
    /// The process is exiting: send what is here, then stop.
    stop: bool,
}

/// The pending batch, shared by the spans' threads and the batch thread.
pub(crate) struct Batch {
    pending: Mutex<Pending>,
    /// Wakes the batch thread (a full batch, the stop).
    wake: Condvar,
    settings: Settings,
    /// Whether the queue is full, read before a span is encoded: while a collector is down
    /// (its exports retried for up to the timeout) most spans are dropped, and a dropped span
    /// should cost a load, not an encoding. Set and cleared under the lock.
    full: AtomicBool,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Batch {
    /// The batch and its thread, sending with `exporter` under `resource`'s encoding.
    pub(crate) fn start(
        settings: Settings,
        exporter: Protobuf,
        encoder: TraceEncoder,
    ) -> Arc<Batch> {
        let scope = crate::tracer::scope();
        // Every batch begins with room for its request's head (see `TraceEncoder::frame`).
        let room = encoder.frame_room(&scope);
        let batch = Arc::new(Batch {
            pending: Mutex::new(Pending {
                bytes: vec![0; room],
                ..Pending::default()
            }),
            wake: Condvar::new(),
            settings,
            full: AtomicBool::new(false),
            thread: Mutex::new(None),
        });
        let shared = Arc::clone(&batch);
        let thread = std::thread::Builder::new()
            .name("aelc-traces".to_owned())
            .spawn(move || shared.run(exporter, encoder, scope))
            .ok();
        *lock(&batch.thread) = thread;
        batch
    }

    /// Encodes `span` and queues it, or drops and counts it when the queue is full.
    pub(crate) fn push(&self, span: &Record) {
        if self.full.load(Ordering::Relaxed) {
            QUEUE_FULL.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let mut pending = lock(&self.pending);
        if pending.stop {
            // After the flush at exit: nothing would send it.
            return;
        }
        if pending.spans >= self.settings.capacity {
            drop(pending);
            QUEUE_FULL.fetch_add(1, Ordering::Relaxed);
            return;
        }
        TraceEncoder::encode_span(span, &mut pending.bytes);
        pending.spans += 1;
        if pending.spans == self.settings.capacity {
            self.full.store(true, Ordering::Relaxed);
        }
        // Only the span that fills a batch wakes the thread: no other span pays a syscall.
        if pending.spans == self.settings.batch_size {
            self.wake.notify_one();
        }
    }

    /// Sends what is queued and stops the thread (spans ended later are dropped): the flush at
    /// exit, which waits at most the export's timeout (its retries included).
    pub(crate) fn shutdown(&self) {
        lock(&self.pending).stop = true;
        self.wake.notify_one();
        if let Some(thread) = lock(&self.thread).take() {
            let _ = thread.join();
        }
    }

    /// The batch thread: waits for a batch, takes it whole, frames and sends it.
    fn run(&self, exporter: Protobuf, mut encoder: TraceEncoder, scope: InstrumentationScope) {
        let room = encoder.frame_room(&scope);
        // The bytes being sent; swapped with the pending buffer, so both keep their memory.
        let mut sending = Vec::new();
        loop {
            // Room for the request's head before the spans (framed in place, not copied).
            sending.clear();
            sending.resize(room, 0);
            let (spans, stop) = {
                let mut pending = lock(&self.pending);
                let until = Instant::now() + self.settings.delay;
                loop {
                    let now = Instant::now();
                    if pending.stop || pending.spans >= self.settings.batch_size || now >= until {
                        break;
                    }
                    pending = self
                        .wake
                        .wait_timeout(pending, until - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
                std::mem::swap(&mut pending.bytes, &mut sending);
                let spans = std::mem::take(&mut pending.spans);
                self.full.store(false, Ordering::Relaxed);
                (spans, pending.stop)
            };
            if spans > 0 {
                let start = encoder.frame(&scope, &mut sending);
                if exporter.send(&sending[start..]).is_err() {
                    EXPORT_FAILED.fetch_add(spans as u64, Ordering::Relaxed);
                }
            }
            if stop {
                return;
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
