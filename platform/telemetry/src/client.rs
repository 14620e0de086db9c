//! The exporters' HTTP client on ureq (the client the runtime's providers use), so no second
//! HTTP stack is built: [`Ureq::post`] for this crate's protobuf exporter, and
//! `opentelemetry-http`'s client trait for `opentelemetry-otlp`'s JSON one. Blocking is fine
//! here: the SDK's batch processor exports on its own thread, never on a run's.

use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use std::time::Duration;
use ureq::http::{header, HeaderName, HeaderValue, Uri};

/// The most bytes of a collector's answer read (an `ExportTraceServiceResponse` is tiny).
const RESPONSE_LIMIT: u64 = 1024 * 1024;

#[derive(Debug)]
pub(crate) struct Ureq {
    agent: ureq::Agent,
}

/// A collector's answer to an export: its status, and the delay it asked for, if any.
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) retry_after: Option<String>,
}

impl Ureq {
    /// A client whose every export ends within `timeout` (connect, send, answer).
    pub(crate) fn new(timeout: Duration) -> Ureq {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_global(Some(timeout))
            .user_agent(concat!("aelc-telemetry/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        Ureq { agent }
    }

    /// POSTs `body` (of `content_type`) to `url` with `headers`; the answer's body is read
    /// (and dropped) so that the connection is kept for the next export.
    pub(crate) fn post(
        &self,
        url: &Uri,
        headers: &[(HeaderName, HeaderValue)],
        content_type: &'static str,
        body: &[u8],
    ) -> Result<Answer, ureq::Error> {
        let mut request = self
            .agent
            .post(url)
            .header(header::CONTENT_TYPE, content_type);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let response = request.send(body)?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let _ = response
            .into_body()
            .with_config()
            .limit(RESPONSE_LIMIT)
            .read_to_vec();
        Ok(Answer {
            status,
            retry_after,
        })
    }
}

#[async_trait::async_trait]
impl HttpClient for Ureq {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let response = self.agent.run(Request::from_parts(parts, body.to_vec()))?;
        let (parts, mut body) = response.into_parts();
        let bytes = body.with_config().limit(RESPONSE_LIMIT).read_to_vec()?;
        Ok(Response::from_parts(parts, Bytes::from(bytes)))
    }
}
