//! The SERVER span of every HTTP request (the OpenTelemetry HTTP semantic conventions), which
//! continues a caller's W3C trace context (`traceparent`, `tracestate`) and is the parent of
//! the gate and run spans the executor makes ([`aelc_runtime::trace`]). With traces off
//! (`aelc-telemetry` installed nothing) a request pays one atomic load here.
//!
//! The span is carried into the tasks and threads a request hands work to: [`in_context`]
//! for a spawned task, [`attached`] on the blocking pool.

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use opentelemetry::context::FutureExt;
use opentelemetry::propagation::Extractor;
use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{global, Context, KeyValue};

/// The request's headers as the propagator reads them.
struct Headers<'a>(&'a axum::http::HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

/// Middleware: one SERVER span per request, named `{method} {route}` (the route template,
/// never the raw path), ERROR on a 5xx.
pub async fn server_span(request: Request, next: Next) -> Response {
    let Some(tracer) = aelc_runtime::trace::tracer() else {
        return next.run(request).await;
    };
    let parent = caller(request.headers());
    let method = request.method().as_str().to_owned();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned());
    let name = match &route {
        Some(route) => format!("{method} {route}"),
        None => method.clone(),
    };
    let mut attributes = vec![
        KeyValue::new("http.request.method", method),
        KeyValue::new("url.path", request.uri().path().to_owned()),
        KeyValue::new("url.scheme", "http"),
    ];
    if let Some(route) = route {
        attributes.push(KeyValue::new("http.route", route));
    }
    let span = tracer
        .span_builder(name)
        .with_kind(SpanKind::Server)
        .with_attributes(attributes)
        .start_with_context(tracer, &parent);
    let cx = parent.with_span(span);
    let response = next.run(request).with_context(cx.clone()).await;
    let span = cx.span();
    let status = response.status().as_u16();
    span.set_attribute(KeyValue::new(
        "http.response.status_code",
        i64::from(status),
    ));
    if status >= 500 {
        span.set_attribute(KeyValue::new("error.type", status.to_string()));
        span.set_status(Status::error(format!("HTTP {status}")));
    }
    span.end();
    response
}

/// The trace context a request's `traceparent` and `tracestate` carry (W3C trace context),
/// to continue the caller's trace; the empty context when they carry none.
pub fn caller(headers: &axum::http::HeaderMap) -> Context {
    global::get_text_map_propagator(|p| p.extract(&Headers(headers)))
}

/// What the caller is billed (the gateway's receipt's `cost`), on the current span (the
/// request's).
pub fn billed(amount: &str, currency: &str) {
    aelc_runtime::trace::annotate(|| {
        vec![
            KeyValue::new(aelc_runtime::trace::attr::BILLED, amount.to_owned()),
            KeyValue::new(aelc_runtime::trace::attr::CURRENCY, currency.to_owned()),
        ]
    });
}

/// `future` with the current trace context (a task spawned by a request continues its trace).
pub fn in_context<F: std::future::Future>(future: F) -> opentelemetry::context::WithContext<F> {
    future.with_context(Context::current())
}

/// The current trace context, to [`attached`] on another thread.
pub fn current() -> Option<Context> {
    aelc_runtime::trace::enabled().then(Context::current)
}

/// Runs `f` with `cx` (from [`current`]) as this thread's trace context.
pub fn attached<T>(cx: Option<Context>, f: impl FnOnce() -> T) -> T {
    let _guard = cx.map(Context::attach);
    f()
}
