//! The OTLP exporter's HTTP client on ureq (the client the runtime's providers use), so no
//! second HTTP stack is built. Blocking is fine here: the SDK's batch processor exports on
//! its own thread, never on a run's.

use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use std::time::Duration;

/// The most bytes of a collector's answer read (an `ExportTraceServiceResponse` is tiny).
const RESPONSE_LIMIT: u64 = 1024 * 1024;

#[derive(Debug)]
pub(crate) struct Ureq {
    agent: ureq::Agent,
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
