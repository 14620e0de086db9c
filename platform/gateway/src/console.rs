//! The console: the gateway seen and steered in a browser, at `/console` on the same process,
//! port and store (issue 44). An account signs in with its API key and sees its own agents'
//! figures, its runs and their receipt trees, its money, its mandates with the approvals that
//! wait for it (approved or rejected here as `aelc approve ID --no-run` / `aelc reject ID` do),
//! and its files.
//!
//! Pages are rendered on the server ([`maud`] escapes every value it interpolates) and carry no
//! script at all: forms post, links navigate, plots are SVG drawn here. So the
//! `Content-Security-Policy` can forbid every script and inline style, and nothing an agent
//! wrote, an input held or a file was named can become markup. The one stylesheet is embedded
//! in the binary and served under a name holding its hash, cacheable for a year; nothing is
//! fetched from anywhere else.
//!
//! - [`session`]: signing in and out, the session cookie, the CSRF token of every form;
//! - [`pages`]: one handler a page, thin over the store's queries;
//! - [`view`]: the layout and the pieces pages share (tables, the receipt tree, plots).

pub mod pages;
pub mod session;
pub mod view;

use std::sync::{Arc, LazyLock};

use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;

use crate::AppState;

/// Where the console lives.
pub const PREFIX: &str = "/console";

/// Every page's policy: no script from anywhere, styles only from the gateway's own
/// stylesheet, forms only to the gateway, no framing, no `<base>` rewriting.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'self'; img-src 'self'; \
     form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The stylesheet, embedded.
const STYLESHEET: &str = include_str!("console/console.css");

/// The stylesheet's path: its name holds the first 12 hex digits of its SHA-256, so a new
/// build's stylesheet is a new URL and the old one may be cached for good.
pub static STYLESHEET_PATH: LazyLock<String> = LazyLock::new(|| {
    let hash = aelc_runtime::receipt::sha256_hex(STYLESHEET.as_bytes());
    format!("{PREFIX}/assets/console-{}.css", &hash[..12])
});

/// The console's routes (merged into the gateway's router).
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(PREFIX, get(pages::home))
        .route(
            "/console/sign-in",
            get(session::sign_in_page).post(session::sign_in),
        )
        .route("/console/sign-out", post(session::sign_out))
        .route("/console/agents", get(pages::agents))
        .route("/console/agents/{owner}/{name}", get(pages::agent))
        .route("/console/runs", get(pages::runs))
        .route("/console/runs/{id}", get(pages::run))
        .route("/console/money", get(pages::money))
        .route("/console/mandates", get(pages::mandates))
        .route("/console/approvals/{id}/{decision}", post(pages::decide))
        .route("/console/files", get(pages::files))
        .route("/console/assets/{name}", get(stylesheet))
        // Not a fallback: merged into the gateway's router, a fallback would answer every
        // unknown API path with a page.
        .route("/console/{*rest}", get(pages::not_found))
        .layer(axum::middleware::from_fn(security_headers))
}

/// The placeholder of `aelc serve --trace-url` that a run's trace id replaces.
pub const TRACE_ID_PLACEHOLDER: &str = "{trace_id}";

/// Whether `template` can link a run's trace: an `http(s)` URL with [`TRACE_ID_PLACEHOLDER`].
pub fn check_trace_link(template: &str) -> Result<(), &'static str> {
    if !(template.starts_with("http://") || template.starts_with("https://")) {
        return Err("the trace link must be an http:// or https:// URL");
    }
    if !template.contains(TRACE_ID_PLACEHOLDER) {
        return Err("the trace link must hold {trace_id}, where the run's trace id goes");
    }
    Ok(())
}

/// The link to trace `trace_id` by `template`, when the id is one (32 hex digits, not all 0).
pub fn trace_link(template: &str, trace_id: &str) -> Option<String> {
    let valid = trace_id.len() == 32
        && trace_id.bytes().all(|b| b.is_ascii_hexdigit())
        && trace_id.bytes().any(|b| b != b'0');
    valid.then(|| template.replace(TRACE_ID_PLACEHOLDER, trace_id))
}

/// The embedded stylesheet, under its hashed name only.
async fn stylesheet(axum::extract::Path(name): axum::extract::Path<String>) -> Response {
    if format!("{PREFIX}/assets/{name}") != *STYLESHEET_PATH {
        return pages::not_found().await.into_response();
    }
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
        ],
        STYLESHEET,
    )
        .into_response()
}

/// The headers of every console response: the policy above, no framing, no sniffing, no
/// referrer to other sites, and pages (which show an account's data) never cached.
async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    response
}

/// A page answering with `status` (the body is the page).
pub(crate) fn page(status: StatusCode, body: maud::Markup) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body.into_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_link_needs_a_web_url_and_the_placeholder() {
        assert!(check_trace_link("http://jaeger:16686/trace/{trace_id}").is_ok());
        assert!(check_trace_link("https://tempo.example/explore?trace={trace_id}").is_ok());
        assert!(check_trace_link("javascript:alert({trace_id})").is_err());
        assert!(check_trace_link("http://jaeger:16686/trace/").is_err());
    }

    #[test]
    fn only_a_trace_id_fills_the_link() {
        let template = "http://jaeger:16686/trace/{trace_id}";
        assert_eq!(
            trace_link(template, "4bf92f3577b34da6a3ce929d0e0e4736").as_deref(),
            Some("http://jaeger:16686/trace/4bf92f3577b34da6a3ce929d0e0e4736")
        );
        assert_eq!(trace_link(template, &"0".repeat(32)), None);
        assert_eq!(trace_link(template, "4bf92f35\"><b>x</b>"), None);
        assert_eq!(trace_link(template, "4bf92f3577b34da6"), None);
    }
}
