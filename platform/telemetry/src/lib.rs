//! `aelc-telemetry`: exports the runtime's and the gateway's spans with the OpenTelemetry SDK
//! over OTLP/HTTP, set up only by the standard `OTEL_*` variables (see the book's traces
//! chapter), and started by `aelc serve`, `run`, `test` and `mcp`.
//!
//! - Nothing is exported unless an endpoint is configured (`OTEL_EXPORTER_OTLP_ENDPOINT` or
//!   `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) and `OTEL_SDK_DISABLED` is not `true`: then no
//!   tracer is installed and the runtime's span calls stay one atomic load each.
//! - `OTEL_EXPORTER_OTLP_PROTOCOL` chooses the exporter. `http/protobuf` (the default) is this
//!   crate's own from end to end: aelc's spans (`tracer`, behind the OpenTelemetry API),
//!   encoded as each ends ([`TraceEncoder`]), batched (`batch`) and posted (`exporter`); it
//!   costs a fraction of the SDK's pipeline (the book's traces chapter, "Cost"). `http/json` is
//!   the SDK's tracer and batch processor with `opentelemetry-otlp`'s exporter. Both read the
//!   endpoint, `OTEL_EXPORTER_OTLP_HEADERS` and the timeout (`config`), the SDK's resource
//!   (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`) and sampler (`OTEL_TRACES_SAMPLER`/`_ARG`),
//!   and the batch settings (`OTEL_BSP_*`).
//! - A run never waits for the collector: finished spans go to a batch sent from a thread of
//!   its own, and one that would overflow its queue is dropped and counted, as is every span of
//!   a batch the collector did not take ([`dropped`], the gateway's
//!   `aelc_trace_spans_dropped`).
//! - [`Telemetry::shutdown`] flushes what is queued; a CLI calls it before it exits.

mod batch;
mod client;
mod config;
mod encode;
mod exporter;
mod retry;
mod tracer;
mod wire;

pub use encode::TraceEncoder;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use std::borrow::Cow;

use opentelemetry::trace::{SpanBuilder, SpanKind, TraceContextExt, TracerProvider};
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, Config, SdkTracer, SdkTracerProvider, Span, SpanData,
    SpanExporter, SpanProcessor,
};
use opentelemetry_sdk::Resource;

/// Spans dropped because the batch queue was full (the exporter fell behind).
pub(crate) static QUEUE_FULL: AtomicU64 = AtomicU64::new(0);
/// Spans of batches the collector did not take (unreachable, refused, timed out).
pub(crate) static EXPORT_FAILED: AtomicU64 = AtomicU64::new(0);

/// Spans dropped so far in this process, by why.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dropped {
    /// The batch queue was full: the span was never queued.
    pub queue_full: u64,
    /// The collector did not take the batch the span was in.
    pub export_failed: u64,
}

/// Spans dropped so far ([`Dropped`]).
pub fn dropped() -> Dropped {
    Dropped {
        queue_full: QUEUE_FULL.load(Ordering::Relaxed),
        export_failed: EXPORT_FAILED.load(Ordering::Relaxed),
    }
}

/// The service name when neither `OTEL_SERVICE_NAME` nor `OTEL_RESOURCE_ATTRIBUTES` gives one.
pub const DEFAULT_SERVICE_NAME: &str = "aelc";

/// The process's exporter, if one was configured; [`Telemetry::shutdown`] flushes it.
#[must_use = "call shutdown before the process exits, or queued spans are lost"]
pub struct Telemetry {
    pipeline: Option<Pipeline>,
}

/// What sends the spans: aelc's own batch (`http/protobuf`) or the SDK's (`http/json`).
enum Pipeline {
    Own(Arc<batch::Batch>),
    Sdk(SdkTracerProvider),
}

impl Telemetry {
    /// No exporter: nothing is traced.
    pub fn off() -> Telemetry {
        Telemetry { pipeline: None }
    }

    /// Whether spans are exported.
    pub fn is_on(&self) -> bool {
        self.pipeline.is_some()
    }

    /// Exports what is queued (waiting at most the exporter's timeout per batch) and stops.
    /// Blocks: call it outside an async task.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(pipeline) = self.pipeline.take() {
            aelc_runtime::trace::uninstall();
            match pipeline {
                Pipeline::Own(batch) => batch.shutdown(),
                Pipeline::Sdk(provider) => {
                    let _ = provider.force_flush();
                    let _ = provider.shutdown();
                }
            }
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Why the configuration was not used (printed once by the caller; nothing is traced).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "traces are off: {}", self.0)
    }
}

/// Sets up export from the `OTEL_*` variables of this process (see the module doc). `Ok` with
/// [`Telemetry::off`] when none asks for it; `Err` when they ask for something this build
/// cannot do (gRPC, an invalid endpoint): then nothing is traced either.
pub fn init() -> Result<Telemetry, ConfigError> {
    init_with(|name| std::env::var(name).ok())
}

fn init_with(var: impl Fn(&str) -> Option<String>) -> Result<Telemetry, ConfigError> {
    let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    if set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
        return Ok(Telemetry::off());
    }
    if set("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim().eq_ignore_ascii_case("none")) {
        return Ok(Telemetry::off());
    }
    let endpoint = match config::endpoint(&set) {
        None => return Ok(Telemetry::off()),
        Some(endpoint) => endpoint?,
    };
    let timeout = config::timeout(&set);
    match config::protocol(&set)? {
        config::Protocol::Protobuf => {
            let exporter = exporter::Protobuf::new(endpoint, config::headers(&var), timeout);
            Ok(own(exporter, &var))
        }
        // JSON stays `opentelemetry-otlp`'s (it reads the same variables itself): it is not
        // the default, and its cost is serde's, not one this crate's encoder would cut.
        config::Protocol::Json => {
            let exporter = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_http_client(client::Ureq::new(timeout))
                .with_timeout(timeout)
                .with_protocol(opentelemetry_otlp::Protocol::HttpJson)
                .build()
                .map_err(|e| ConfigError(e.to_string()))?;
            Ok(started(exporter, &var))
        }
    }
}

/// The resource (the SDK's, from `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`), with
/// aelc's service name when they give none.
fn resource(var: &impl Fn(&str) -> Option<String>) -> Resource {
    let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    let mut resource = Resource::builder();
    let named = set("OTEL_SERVICE_NAME").is_some()
        || set("OTEL_RESOURCE_ATTRIBUTES").is_some_and(|a| a.contains("service.name="));
    if !named {
        resource = resource.with_service_name(DEFAULT_SERVICE_NAME);
    }
    resource.build()
}

/// Whether the operator opted in to prompts and answers in spans.
fn capture(var: &impl Fn(&str) -> Option<String>) -> bool {
    var(aelc_runtime::trace::CAPTURE_CONTENT_VAR)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// aelc's own spans and batch around `exporter` (`http/protobuf`), and the runtime's spans
/// turned on.
fn own(exporter: exporter::Protobuf, var: &impl Fn(&str) -> Option<String>) -> Telemetry {
    let mut encoder = TraceEncoder::new();
    encoder.set_resource(&resource(var));
    let settings = batch::Settings::from_env(var);
    let batch = batch::Batch::start(settings, exporter, encoder);
    // The SDK's sampler, as its `Config` reads it from `OTEL_TRACES_SAMPLER` and `_ARG`.
    let sampler = Config::default().sampler;
    let tracer = tracer::Tracer::new(sampler, Arc::clone(&batch));
    aelc_runtime::trace::install(capture(var), Box::new(tracer));
    Telemetry {
        pipeline: Some(Pipeline::Own(batch)),
    }
}

/// The SDK set up around `exporter` (the batch processor, the resource, the sampler) and the
/// runtime's spans turned on: `http/json`.
fn started(
    exporter: impl SpanExporter + 'static,
    var: &impl Fn(&str) -> Option<String>,
) -> Telemetry {
    let pending = Arc::new(AtomicUsize::new(0));
    let exporter = Counted {
        inner: exporter,
        pending: Arc::clone(&pending),
    };
    let processor = Bounded {
        pending,
        capacity: batch::Settings::from_env(var).capacity,
        inner: BatchSpanProcessor::builder(exporter)
            .with_batch_config(BatchConfigBuilder::default().build())
            .build(),
    };
    let provider = SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_resource(resource(var))
        .build();
    let tracer = provider.tracer("aelc");
    aelc_runtime::trace::install(capture(var), Box::new(Starter(tracer)));
    Telemetry {
        pipeline: Some(Pipeline::Sdk(provider)),
    }
}

/// The runtime's spans started with the SDK's tracer itself, not through the API's global
/// (boxed) one: one allocation and one dynamic call less per span and per call on it.
struct Starter(SdkTracer);

impl aelc_runtime::trace::Starter for Starter {
    fn start(
        &self,
        name: Cow<'static, str>,
        kind: SpanKind,
        attributes: Vec<KeyValue>,
        parent: &Context,
    ) -> Context {
        let builder = SpanBuilder::from_name(name)
            .with_kind(kind)
            .with_attributes(attributes);
        parent.with_span(builder.start_with_context(&self.0, parent))
    }
}

/// The SDK's batch processor behind a count of the spans it holds: one more than its queue
/// takes is dropped here and counted (the SDK drops it too, but keeps its count to itself).
#[derive(Debug)]
struct Bounded {
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
