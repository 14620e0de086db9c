//! The `http/protobuf` span exporter: each batch encoded by [`TraceEncoder`] into one reused
//! buffer and POSTed with ureq (`application/x-protobuf`) to the configured endpoint with the
//! configured headers, tried again as [`retry`] says. A batch is delivered when the collector
//! answers 2xx; anything else fails it (and `Counted` counts its spans).
//!
//! It replaces `opentelemetry-otlp`'s protobuf path, whose building of each body (the SDK's
//! spans copied into `opentelemetry-proto`'s owned messages, then prost, which recomputes every
//! nested length at each level) was most of what exporting cost per request (the book's traces
//! chapter, "Cost").

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use opentelemetry_sdk::Resource;
use ureq::http::{HeaderName, HeaderValue, Uri};

use crate::client::Ureq;
use crate::encode::TraceEncoder;
use crate::retry::{self, Attempt};

/// The largest body sent, as `opentelemetry-otlp` bounds it: a bigger batch is dropped.
const MAX_BODY: usize = 64 * 1024 * 1024;

#[derive(Debug)]
pub(crate) struct Protobuf {
    endpoint: Uri,
    headers: Vec<(HeaderName, HeaderValue)>,
    timeout: Duration,
    client: Ureq,
    /// Locked by the one export at a time the SDK makes (never contended).
    encoder: Mutex<TraceEncoder>,
    shut: AtomicBool,
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
            encoder: Mutex::new(TraceEncoder::new()),
            shut: AtomicBool::new(false),
        }
    }

    fn send(&self, body: &[u8]) -> Result<(), String> {
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

impl SpanExporter for Protobuf {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        if self.shut.load(Ordering::Acquire) {
            return Err(OTelSdkError::AlreadyShutdown);
        }
        let mut encoder = self.encoder.lock().unwrap_or_else(|e| e.into_inner());
        let body = encoder.encode(&batch);
        self.send(body).map_err(OTelSdkError::InternalFailure)
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        if self.shut.swap(true, Ordering::AcqRel) {
            return Err(OTelSdkError::AlreadyShutdown);
        }
        Ok(())
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.encoder
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .set_resource(resource);
    }
}
