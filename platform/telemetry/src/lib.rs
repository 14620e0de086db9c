//! `aelc-telemetry`: exports the runtime's and the gateway's spans with the OpenTelemetry SDK
//! over OTLP/HTTP, set up only by the standard `OTEL_*` variables (see the book's traces
//! chapter), and started by `aelc serve`, `run`, `test` and `mcp`.
//!
//! - Nothing is exported unless an endpoint is configured (`OTEL_EXPORTER_OTLP_ENDPOINT` or
//!   `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) and `OTEL_SDK_DISABLED` is not `true`: then no
//!   tracer is installed and the runtime's span calls stay one atomic load each.
//! - The spans are the runtime's own records (`aelc_runtime::trace`); this crate is their host
//!   (`tracer`): their ids, their sampling (`sampler`, `OTEL_TRACES_SAMPLER`/`_ARG` read as the
//!   SDK reads them), and where each goes when it ends.
//! - `OTEL_EXPORTER_OTLP_PROTOCOL` chooses the exporter. `http/protobuf` (the default) is this
//!   crate's own from end to end: each span encoded as it ends ([`TraceEncoder`]), batched
//!   (`batch`) and posted (`exporter`); it costs a fraction of the SDK's pipeline (the book's
//!   traces chapter, "Cost"). `http/json` is the SDK's batch processor with
//!   `opentelemetry-otlp`'s exporter, given each span as the SDK's `SpanData` (`convert`,
//!   `json`). Both read the endpoint, `OTEL_EXPORTER_OTLP_HEADERS` and the timeout (`config`),
//!   the SDK's resource (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`), and the batch
//!   settings (`OTEL_BSP_*`).
//! - A run never waits for the collector: finished spans go to a batch sent from a thread of
//!   its own, and one that would overflow its queue is dropped and counted, as is every span of
//!   a batch the collector did not take ([`dropped`], the gateway's
//!   `aelc_trace_spans_dropped`).
//! - [`Telemetry::shutdown`] flushes what is queued; a CLI calls it before it exits.

mod batch;
mod client;
mod config;
mod convert;
mod encode;
mod exporter;
mod json;
mod retry;
mod sampler;
mod tracer;

pub use convert::span_data;
pub use encode::TraceEncoder;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::SpanProcessor;
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
    Sdk(Arc<json::Bounded>),
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
                Pipeline::Sdk(processor) => {
                    let _ = processor.force_flush();
                    let _ = processor.shutdown();
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
            Ok(sdk(exporter, &var))
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
    let sink = tracer::Sink::Own(Arc::clone(&batch));
    start(sink, Pipeline::Own(batch), var)
}

/// The SDK's batch processor around `exporter` (`http/json`), fed aelc's spans, and the
/// runtime's spans turned on.
fn sdk(
    exporter: impl opentelemetry_sdk::trace::SpanExporter + 'static,
    var: &impl Fn(&str) -> Option<String>,
) -> Telemetry {
    let capacity = batch::Settings::from_env(var).capacity;
    let processor = Arc::new(json::processor(exporter, capacity, &resource(var)));
    let sink = tracer::Sink::Sdk(Arc::clone(&processor));
    start(sink, Pipeline::Sdk(processor), var)
}

/// The runtime's spans turned on, sampled as the environment says and ended into `sink`, the
/// way in of `pipeline`.
fn start(
    sink: tracer::Sink,
    pipeline: Pipeline,
    var: &impl Fn(&str) -> Option<String>,
) -> Telemetry {
    let tracer = tracer::Tracer::new(sampler::Sampler::from_env(var), sink);
    aelc_runtime::trace::install(capture(var), Box::new(tracer));
    Telemetry {
        pipeline: Some(pipeline),
    }
}
