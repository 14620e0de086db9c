//! The `http/protobuf` sender: each batch's body (framed by [`crate::TraceEncoder`] on the
//! batch thread, `batch`) POSTed with ureq (`application/x-protobuf`) to the configured
//! endpoint with the configured headers, tried again as [`retry`] says. A batch is delivered
//! when the collector answers 2xx; anything else fails it (and the batch thread counts its
//! spans).
//!
//! It replaces `opentelemetry-otlp`'s protobuf path, whose building of each body (the SDK's
//! spans copied into `opentelemetry-proto`'s owned messages, then prost, which recomputes every
//! nested length at each level) was most of what exporting cost per request (the book's traces
//! chapter, "Cost").

use std::time::Duration;

use ureq::http::{HeaderName, HeaderValue, Uri};

use crate::client::Ureq;
use crate::retry::{self, Attempt};

/// The largest body sent, as `opentelemetry-otlp` bounds it: a bigger batch is dropped.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// Where and how batches are sent.
#[derive(Debug)]
pub(crate) struct Protobuf {
    endpoint: Uri,
    headers: Vec<(HeaderName, HeaderValue)>,
    timeout: Duration,
    client: Ureq,
}

impl Protobuf {
    pub(crate) fn new(
        endpoint: Uri,
        headers: Vec<(HeaderName, HeaderValue)>,
        timeout: Duration,
    ) -> Protobuf {
        Protobuf {
            endpoint,
            headers,
            timeout,
            client: Ureq::new(timeout),
        }
    }

    /// Delivers `body`, an `ExportTraceServiceRequest`, or says why not.
    pub(crate) fn send(&self, body: &[u8]) -> Result<(), String> {
        if body.len() > MAX_BODY {
            return Err(format!(
                "an export of {} bytes is over the limit of {MAX_BODY}",
                body.len()
            ));
        }
        retry::until_delivered(self.timeout, || {
            match self.client.post(
                &self.endpoint,
                &self.headers,
                "application/x-protobuf",
                body,
            ) {
                Err(e) => Attempt::Retryable(format!("export failed: {e}"), None),
                Ok(answer) if (200..300).contains(&answer.status) => Attempt::Delivered,
                Ok(answer) => {
                    let why = format!("the collector answered {}", answer.status);
                    if !retry::retryable(answer.status) {
                        return Attempt::Failed(why);
                    }
                    let asked = matches!(answer.status, 429 | 503)
                        .then(|| answer.retry_after.as_deref().and_then(retry::retry_after))
                        .flatten();
                    Attempt::Retryable(why, asked)
                }
            }
        })
    }
}
