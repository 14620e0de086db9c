//! The `http/json` pipeline: the SDK's batch processor and `opentelemetry-otlp`'s exporter,
//! fed the runtime's spans as the SDK's `SpanData` (`convert`) when they end, and counting what
//! they drop as the protobuf batch does ([`crate::dropped`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use opentelemetry::Context;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, Span, SpanData, SpanExporter, SpanProcessor,
};
use opentelemetry_sdk::Resource;

use crate::{EXPORT_FAILED, QUEUE_FULL};

/// The processor around `exporter`, its batch bounded by `capacity` spans, sending under
/// `resource`.
pub(crate) fn processor(
    exporter: impl SpanExporter + 'static,
    capacity: usize,
    resource: &Resource,
) -> Bounded {
    let pending = Arc::new(AtomicUsize::new(0));
    let exporter = Counted {
        inner: exporter,
        pending: Arc::clone(&pending),
    };
    let mut processor = Bounded {
        pending,
        capacity,
        inner: BatchSpanProcessor::builder(exporter)
            .with_batch_config(BatchConfigBuilder::default().build())
            .build(),
    };
    processor.set_resource(resource);
    processor
}

/// The SDK's batch processor behind a count of the spans it holds: one more than its queue
/// takes is dropped here and counted (the SDK drops it too, but keeps its count to itself).
#[derive(Debug)]
pub(crate) struct Bounded {
    /// Spans handed on and not yet given to the exporter (decremented by [`Counted`]).
    pending: Arc<AtomicUsize>,
    capacity: usize,
    inner: BatchSpanProcessor,
}

impl SpanProcessor for Bounded {
    fn on_start(&self, span: &mut Span, cx: &Context) {
        self.inner.on_start(span, cx);
    }

    fn on_end(&self, span: SpanData) {
        if self.pending.fetch_add(1, Ordering::AcqRel) >= self.capacity {
            self.pending.fetch_sub(1, Ordering::AcqRel);
            QUEUE_FULL.fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.inner.on_end(span);
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// The OTLP exporter, counting the spans of each batch it is given (they leave the queue) and
/// those of the batches the collector did not take.
#[derive(Debug)]
struct Counted<E> {
    inner: E,
    pending: Arc<AtomicUsize>,
}

impl<E: SpanExporter> SpanExporter for Counted<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let n = batch.len();
        // Saturating: a span the SDK itself dropped never reaches here.
        let _ = self
            .pending
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |p| {
                Some(p.saturating_sub(n))
            });
        let result = self.inner.export(batch).await;
        if result.is_err() {
            EXPORT_FAILED.fetch_add(n as u64, Ordering::Relaxed);
        }
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}
