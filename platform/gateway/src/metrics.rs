//! `/metrics` in the Prometheus text format (the Prometheus project's `prometheus-client`):
//! requests by route and status, gate refusals by code, runs by status, and latency
//! histograms of requests and of runs; and the trace spans this process dropped (its
//! exporter fell behind or its collector was unreachable), read from `aelc-telemetry`.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteOnly {
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CodeLabels {
    code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RunLabels {
    agent: String,
    status: String,
}

type Latency = Family<RouteOnly, Histogram, fn() -> Histogram>;

/// The gateway's metrics (cheap to clone: every field is shared).
pub struct Metrics {
    registry: Registry,
    requests: Family<RouteLabels, Counter>,
    latency: Latency,
    gate_refusals: Family<CodeLabels, Counter>,
    runs: Family<RunLabels, Counter>,
    run_seconds: Histogram,
    in_flight_runs: Gauge,
    /// Spans dropped, brought up to `aelc_telemetry::dropped()` at each rendering (under the
    /// lock, so two scrapes never add the same drops twice).
    spans_dropped: std::sync::Mutex<Family<ReasonLabels, Counter>>,
}

fn latency_buckets() -> Histogram {
    // 0.1 ms … ~3.3 s.
    Histogram::new(exponential_buckets(0.0001, 2.0, 16))
}

impl Default for Metrics {
    fn default() -> Metrics {
        let mut registry = Registry::default();
        let requests = Family::<RouteLabels, Counter>::default();
        registry.register(
            "aelc_http_requests",
            "HTTP requests by route and status",
            requests.clone(),
        );
        let latency: Latency = Family::new_with_constructor(latency_buckets);
        registry.register(
            "aelc_http_request_duration_seconds",
            "Time from request to response, by route",
            latency.clone(),
        );
        let gate_refusals = Family::<CodeLabels, Counter>::default();
        registry.register(
            "aelc_gate_refusals",
            "Calls refused at the gate (not billed), by code",
            gate_refusals.clone(),
        );
        let runs = Family::<RunLabels, Counter>::default();
        registry.register("aelc_runs", "Runs by agent and status", runs.clone());
        let run_seconds = Histogram::new(exponential_buckets(0.001, 2.0, 16));
        registry.register(
            "aelc_run_duration_seconds",
            "Time an admitted run took, model calls included",
            run_seconds.clone(),
        );
        let in_flight_runs = Gauge::default();
        registry.register(
            "aelc_runs_in_flight",
            "Runs executing now",
            in_flight_runs.clone(),
        );
        let spans_dropped = Family::<ReasonLabels, Counter>::default();
        registry.register(
            "aelc_trace_spans_dropped",
            "Trace spans not exported: the batch queue was full, or the collector did not take them",
            spans_dropped.clone(),
        );
        Metrics {
            spans_dropped: std::sync::Mutex::new(spans_dropped),
            registry,
            requests,
            latency,
            gate_refusals,
            runs,
            run_seconds,
            in_flight_runs,
        }
    }
}

impl Metrics {
    pub fn gate_refusal(&self, code: &str) {
        self.gate_refusals
            .get_or_create(&CodeLabels {
                code: code.to_owned(),
            })
            .inc();
    }

    pub fn run(&self, agent: &str, status: &str, started: Instant) {
        self.runs
            .get_or_create(&RunLabels {
                agent: agent.to_owned(),
                status: status.to_owned(),
            })
            .inc();
        self.run_seconds.observe(started.elapsed().as_secs_f64());
    }

    /// Counts a run as in flight until the guard drops.
    pub fn run_started(self: &Arc<Self>) -> InFlight {
        self.in_flight_runs.inc();
        InFlight(Arc::clone(self))
    }

    /// The text exposition.
    pub fn render(&self) -> String {
        if let Ok(family) = self.spans_dropped.lock() {
            let dropped = aelc_telemetry::dropped();
            for (reason, total) in [
                ("queue_full", dropped.queue_full),
                ("export_failed", dropped.export_failed),
            ] {
                let counter = family.get_or_create(&ReasonLabels { reason });
                counter.inc_by(total.saturating_sub(counter.get()));
            }
        }
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// A run in flight (see [`Metrics::run_started`]).
pub struct InFlight(Arc<Metrics>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight_runs.dec();
    }
}

/// Middleware: counts and times every request by its route template (`/v1/agents/{owner}/…`,
/// never the raw path, so label sets stay bounded).
pub async fn track(State(metrics): State<Arc<Metrics>>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let started = Instant::now();
    let response = next.run(request).await;
    metrics
        .requests
        .get_or_create(&RouteLabels {
            route: route.clone(),
            status: response.status().as_u16(),
        })
        .inc();
    metrics
        .latency
        .get_or_create(&RouteOnly { route })
        .observe(started.elapsed().as_secs_f64());
    response
}
