//! The SERVER span of every HTTP request (the OpenTelemetry HTTP semantic conventions), which
//! continues a caller's W3C trace context (`traceparent`, `tracestate`) and is the parent of
//! the gate and run spans the executor makes ([`aelc_runtime::trace`]). With traces off
//! (`aelc-telemetry` installed nothing) a request pays one atomic load here, and nothing is
//! wrapped or allocated for it.
//!
//! The span is carried into the tasks and threads a request hands work to: [`in_context`]
//! for a spawned task, [`attached`] on the blocking pool.

use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderMap, Method};
use axum::middleware::Next;
use axum::response::Response;
use opentelemetry::context::FutureExt;
use opentelemetry::trace::{SpanKind, Status, TraceContextExt};
use opentelemetry::{Context, KeyValue};

/// Middleware: one SERVER span per request, named `{method} {route}` (the route template,
/// never the raw path), ERROR on a 5xx.
pub async fn server_span(request: Request, next: Next) -> Response {
    if !aelc_runtime::trace::enabled() {
        return next.run(request).await;
    }
    let parent = caller(request.headers());
    let method = method_name(request.method());
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(MatchedPath::as_str);
    let mut name = String::with_capacity(method.len() + 1 + route.map_or(0, str::len));
    name.push_str(method);
    if let Some(route) = route {
        name.push(' ');
        name.push_str(route);
    }
    // The method and scheme are static; what must be copied is copied only for a span that
    // records. Room for every attribute the span gets (the path, the route, the status, an
    // error's type): the list never grows again.
    let mut attributes = Vec::with_capacity(6);
    attributes.extend([
        KeyValue::new("http.request.method", method),
        KeyValue::new("url.scheme", "http"),
    ]);
    let Some(cx) = aelc_runtime::trace::start_span(name, SpanKind::Server, attributes, &parent)
    else {
        return next.run(request).await;
    };
    let span = cx.span();
    if span.is_recording() {
        span.set_attribute(KeyValue::new("url.path", request.uri().path().to_owned()));
        if let Some(route) = route {
            span.set_attribute(KeyValue::new("http.route", route.to_owned()));
        }
    }
    let response = next.run(request).with_context(cx.clone()).await;
    let span = cx.span();
    let status = response.status().as_u16();
    if span.is_recording() {
        span.set_attribute(KeyValue::new(
            "http.response.status_code",
            i64::from(status),
        ));
        if status >= 500 {
            span.set_attribute(KeyValue::new("error.type", status.to_string()));
            span.set_status(Status::error(format!("HTTP {status}")));
        }
    }
    span.end();
    response
}

/// The conventions' name of a request method: one of the known ones, else `_OTHER`.
fn method_name(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::CONNECT => "CONNECT",
        Method::TRACE => "TRACE",
        _ => "_OTHER",
    }
}

/// The trace context a request's `traceparent` and `tracestate` carry (W3C trace context),
/// to continue the caller's trace; the empty context when they carry none.
pub fn caller(headers: &HeaderMap) -> Context {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    // Without a `traceparent` a `tracestate` means nothing: it is not looked up.
    match header("traceparent") {
        Some(traceparent) => aelc_runtime::trace::caller(Some(traceparent), header("tracestate")),
        None => Context::new(),
    }
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

/// `future` with the current trace context (a task spawned by a request continues its
/// trace); as it is when traces are off.
pub fn in_context<F: std::future::Future>(
    future: F,
) -> tokio_util::either::Either<opentelemetry::context::WithContext<F>, F> {
    if aelc_runtime::trace::enabled() {
        tokio_util::either::Either::Left(future.with_context(Context::current()))
    } else {
        tokio_util::either::Either::Right(future)
    }
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
