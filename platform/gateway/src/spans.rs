//! The SERVER span of every HTTP request (the OpenTelemetry HTTP semantic conventions), which
//! continues a caller's W3C trace context (`traceparent`, `tracestate`) and is the parent of
//! the gate and run spans the executor makes ([`aelc_runtime::trace`]). With traces off
//! (`aelc-telemetry` installed nothing) a request pays one atomic load here, and nothing is
//! wrapped or allocated for it.
//!
//! The span is carried into the tasks and threads a request hands work to: [`in_context`]
//! for a spawned task, [`attached`] on the blocking pool.

use aelc_runtime::trace::{Context, InContext, Key, SpanKind, Status};
use axum::extract::{MatchedPath, Request};
use axum::http::header::HeaderName;
use axum::http::{HeaderMap, Method};
use axum::middleware::Next;
use axum::response::Response;

/// The conventions' attributes of an HTTP server span.
const METHOD: Key = Key::new("http.request.method");
const SCHEME: Key = Key::new("url.scheme");
const PATH: Key = Key::new("url.path");
const ROUTE: Key = Key::new("http.route");
const STATUS_CODE: Key = Key::new("http.response.status_code");

/// The W3C trace context headers (named once: a header looked up by a `&str` is parsed first).
static TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");
static TRACESTATE: HeaderName = HeaderName::from_static("tracestate");

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
    let path = request.uri().path();
    let attributes = |record: &mut aelc_runtime::trace::Record| {
        record.str(METHOD, method);
        record.str(SCHEME, "http");
        record.str(PATH, path);
        if let Some(route) = route {
            record.str(ROUTE, route);
        }
    };
    let Some(cx) = aelc_runtime::trace::start_span(name, SpanKind::Server, attributes, &parent)
    else {
        return next.run(request).await;
    };
    let response = cx.clone().wrap(next.run(request)).await;
    let status = response.status().as_u16();
    cx.record(|record| {
        record.int(STATUS_CODE, i64::from(status));
        if status >= 500 {
            record.str(aelc_runtime::trace::attr::ERROR_TYPE, &status.to_string());
            record.set_status(Status::error(format!("HTTP {status}")));
        }
    });
    cx.end();
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
    let header = |name: &HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    // Without a `traceparent` a `tracestate` means nothing: it is not looked up.
    match header(&TRACEPARENT) {
        Some(traceparent) => aelc_runtime::trace::caller(Some(traceparent), header(&TRACESTATE)),
        None => Context::none(),
    }
}

/// What the caller is billed (the gateway's receipt's `cost`), on the current span (the
/// request's).
pub fn billed(amount: &str, currency: &str) {
    aelc_runtime::trace::annotate(|record| {
        record.str(aelc_runtime::trace::attr::BILLED, amount);
        record.str(aelc_runtime::trace::attr::CURRENCY, currency);
    });
}

/// `future` with the current trace context (a task spawned by a request continues its
/// trace); as it is when traces are off.
pub fn in_context<F: std::future::Future>(
    future: F,
) -> tokio_util::either::Either<InContext<F>, F> {
    if aelc_runtime::trace::enabled() {
        tokio_util::either::Either::Left(Context::current().wrap(future))
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
