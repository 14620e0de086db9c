//! The HTTP transport shared by the providers: one blocking POST of a JSON body with a
//! deadline, status codes mapped to typed errors, and bodies read under byte limits.
//!
//! Decisions:
//! - **No retries here.** A 5xx is `ModelUnavailable`, a 429 is `RateLimited` with the delay the
//!   server asked for (`retry-after-ms`, else `retry-after` in seconds). Whether and when to ask
//!   again is the node's failure policy and budget, which count every attempt (spec §6); a
//!   transport that retried on its own would spend attempts nobody sees in the receipt.
//! - **One deadline per call.** The request's `timeout` covers connecting, sending and reading
//!   the whole body; a slow server past it is `Timeout`.
//! - **No redirects** (a POST body is not re-sent to another host with the key in it).
//! - Every text quoted from the transport or the server is redacted with the key.

use super::error::ProviderError;
use super::secret::{redact, ApiKey};
use std::io::{self, Read};
use std::time::Duration;

/// The most bytes of an error response that are read (for its message).
const ERROR_BODY_LIMIT: u64 = 16 * 1024;
/// The most characters of a server's error message quoted in an error.
const QUOTE_CHARS: usize = 300;

/// Connections kept open for the next call (see [`Transport::new`]).
const IDLE_CONNECTIONS: usize = 64;

/// A reusable client (connection settings; no state between calls).
#[derive(Clone)]
pub(crate) struct Transport {
    agent: ureq::Agent,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Transport")
    }
}

/// The body of a successful (2xx) response, to be read incrementally.
pub(crate) struct OkResponse {
    pub body: ureq::BodyReader<'static>,
}

impl Transport {
    pub(crate) fn new() -> Transport {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            // One provider serves every run of a gateway at once (up to `max_runs`), nearly
            // all to one host: with ureq's defaults (3 idle connections a host, 10 in all)
            // most calls of a loaded gateway opened a new connection (and, to a provider,
            // a new TLS session).
            .max_idle_connections(IDLE_CONNECTIONS)
            .max_idle_connections_per_host(IDLE_CONNECTIONS)
            .user_agent(concat!("aelc-runtime/", env!("CARGO_PKG_VERSION")))
            .build();
        let agent = ureq::Agent::with_parts(
            config,
            ureq::unversioned::transport::DefaultConnector::new(),
            super::resolve::KeepingResolver::default(),
        );
        Transport { agent }
    }

    /// POSTs `body` as JSON with `headers`; a non-2xx status becomes its typed error.
    pub(crate) fn post_json(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: Vec<u8>,
        timeout: Duration,
        key: Option<&ApiKey>,
    ) -> Result<OkResponse, ProviderError> {
        let mut request = self
            .agent
            .post(url)
            .header("content-type", "application/json");
        for (name, value) in headers {
            request = request.header(*name, value.as_str());
        }
        // W3C trace context: a model server that traces sees the attempt's span as the parent.
        for (name, value) in crate::trace::inject() {
            request = request.header(name, value);
        }
        let response = request
            .config()
            .timeout_global(Some(timeout))
            .build()
            .send(body)
            .map_err(|error| call_error(error, url, timeout, key))?;
        let status = response.status().as_u16();
        let retry_after = retry_after(response.headers());
        let body = response.into_body().into_reader();
        if (200..300).contains(&status) {
            return Ok(OkResponse { body });
        }
        let reason = error_reason(body, key);
        Err(match status {
            429 => ProviderError::RateLimited {
                retry_after,
                reason,
            },
            500..=599 => ProviderError::ModelUnavailable {
                status: Some(status),
                reason,
            },
            _ => ProviderError::Refused { status, reason },
        })
    }
}

/// One model call as every provider makes it: the request document, where it goes, and how
/// the answer comes back.
pub(crate) struct Call<'a> {
    pub url: &'a str,
    /// The provider's own headers (its key's header among them); `accept: text/event-stream`
    /// is added for a stream.
    pub headers: Vec<(&'static str, String)>,
    pub body: &'a crate::ordered::Json,
    pub key: Option<&'a ApiKey>,
    pub stream: bool,
}

/// What reading a model's answer gives.
type AnswerResult = Result<super::answer::Answer, ProviderError>;

/// How a provider reads its answer: the events of a stream, or a whole response document
/// (read here under [`super::envelope_limit`] of the answer's bound) with the answer's bound.
pub(crate) struct Reading {
    pub stream: fn(
        ureq::BodyReader<'static>,
        &super::request::ModelRequest,
        Option<&ApiKey>,
    ) -> AnswerResult,
    pub document: fn(&[u8], u64, Option<&ApiKey>) -> AnswerResult,
}

impl Transport {
    /// Sends `call` (encoded as JSON) and reads its answer with `reading`: the part of a
    /// provider's `complete` that is the same for all of them.
    pub(crate) fn call(
        &self,
        mut call: Call<'_>,
        request: &super::request::ModelRequest,
        reading: Reading,
    ) -> AnswerResult {
        if call.stream {
            call.headers
                .push(("accept", "text/event-stream".to_string()));
        }
        let headers: Vec<(&str, String)> = call.headers;
        let bytes =
            serde_json::to_vec(call.body).map_err(|error| ProviderError::InvalidConfig {
                reason: format!("the request could not be encoded: {error}"),
            })?;
        let response = self.post_json(call.url, &headers, bytes, request.timeout, call.key)?;
        if call.stream {
            return (reading.stream)(response.body, request, call.key);
        }
        let bytes = read_body(
            response.body,
            super::envelope_limit(request.max_answer_bytes),
            request.max_answer_bytes,
            request.timeout,
            call.key,
        )?;
        (reading.document)(&bytes, request.max_answer_bytes, call.key)
    }
}

/// Maps an error of the call itself (before a status line arrived). An endpoint that cannot be
/// reached is named with what to do about it: the commonest cause is a `base_url` pointing at a
/// server that is not running, which the transport's own words ("Connection refused") do not say.
fn call_error(
    error: ureq::Error,
    url: &str,
    timeout: Duration,
    key: Option<&ApiKey>,
) -> ProviderError {
    match error {
        ureq::Error::Timeout(_) => ProviderError::Timeout { after: timeout },
        ureq::Error::Io(io) if is_timeout(&io) => ProviderError::Timeout { after: timeout },
        ureq::Error::BadUri(_) | ureq::Error::Http(_) | ureq::Error::RequireHttpsOnly(_) => {
            ProviderError::InvalidConfig {
                reason: redact(key, &error.to_string()),
            }
        }
        other => ProviderError::ModelUnavailable {
            status: None,
            reason: format!(
                "cannot reach {} ({}); is the server running? Check the binding's `base_url` \
                 in ael.toml, or point it elsewhere for one run with \
                 `--binding NAME=base_url=URL`",
                redact(key, url),
                redact(key, &other.to_string())
            ),
        },
    }
}

fn is_timeout(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}

/// What a failed read of a 2xx body means. `streaming`: a cut stream is `Truncated` (it never
/// reached its end event); a cut plain body is `ModelUnavailable`.
pub(crate) fn read_error(
    error: io::Error,
    timeout: Duration,
    key: Option<&ApiKey>,
    partial: &str,
    streaming: bool,
) -> ProviderError {
    let error = ureq::Error::from(error);
    let timed_out = match &error {
        ureq::Error::Timeout(_) => true,
        ureq::Error::Io(io) => is_timeout(io),
        _ => false,
    };
    if timed_out {
        return ProviderError::Timeout { after: timeout };
    }
    let reason = format!(
        "the connection failed while reading the answer ({})",
        redact(key, &error.to_string())
    );
    if streaming {
        ProviderError::Truncated {
            received: partial.len() as u64,
            reason,
            partial: partial.to_string(),
        }
    } else {
        ProviderError::ModelUnavailable {
            status: None,
            reason,
        }
    }
}

/// Reads a whole body of at most `limit` bytes; past it, reading stops (and the connection is
/// dropped with the reader) and the answer is `TooLarge` against `answer_limit`.
pub(crate) fn read_body(
    mut body: impl Read,
    limit: u64,
    answer_limit: u64,
    timeout: Duration,
    key: Option<&ApiKey>,
) -> Result<Vec<u8>, ProviderError> {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 8 * 1024];
    loop {
        let count = match body.read(&mut chunk) {
            Ok(0) => return Ok(bytes),
            Ok(count) => count,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(read_error(error, timeout, key, "", false)),
        };
        bytes.extend_from_slice(chunk.get(..count).unwrap_or(&[]));
        if bytes.len() as u64 > limit {
            return Err(ProviderError::TooLarge {
                limit: answer_limit,
                received: bytes.len() as u64,
                partial: String::from_utf8_lossy(&bytes).into_owned(),
            });
        }
    }
}

/// The delay a 429 asks for: `retry-after-ms` (OpenAI) or `retry-after` in seconds. An
/// HTTP-date `retry-after` is not parsed (no clock arithmetic here): the delay is then unknown.
fn retry_after(headers: &ureq::http::HeaderMap) -> Option<Duration> {
    let number = |name: &str| -> Option<f64> {
        let text = headers.get(name)?.to_str().ok()?;
        text.trim().parse::<f64>().ok()
    };
    let seconds = number("retry-after-ms")
        .map(|ms| ms / 1000.0)
        .or_else(|| number("retry-after"))?;
    Duration::try_from_secs_f64(seconds).ok()
}

/// A short, redacted sentence from an error body: the JSON `error.message` that OpenAI,
/// Anthropic, vLLM, llama.cpp and Ollama all use, or the start of the body.
fn error_reason(body: impl Read, key: Option<&ApiKey>) -> String {
    let mut bytes = Vec::new();
    if body.take(ERROR_BODY_LIMIT).read_to_end(&mut bytes).is_err() && bytes.is_empty() {
        return "no error message (the body could not be read)".to_string();
    }
    let message = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .and_then(|json| {
            let error = json.get("error")?;
            error
                .get("message")
                .and_then(|m| m.as_str())
                .or_else(|| error.as_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| String::from_utf8_lossy(&bytes).trim().to_string());
    let message = if message.is_empty() {
        "no error message".to_string()
    } else {
        message
    };
    quote(&redact(key, &message))
}

/// At most [`QUOTE_CHARS`] characters of `text`, marked when cut.
pub(crate) fn quote(text: &str) -> String {
    let mut quoted: String = text.chars().take(QUOTE_CHARS).collect();
    if quoted.len() < text.len() {
        quoted.push('…');
    }
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_prefers_milliseconds() {
        let mut headers = ureq::http::HeaderMap::new();
        headers.insert("retry-after", "3".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(3)));
        headers.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
        let mut dated = ureq::http::HeaderMap::new();
        dated.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&dated), None);
        dated.insert("retry-after", "-5".parse().unwrap());
        assert_eq!(retry_after(&dated), None);
    }

    #[test]
    fn error_reasons_are_redacted_and_short() {
        let key = ApiKey::new("sk-secret");
        let body = br#"{"error":{"message":"Incorrect API key provided: sk-secret"}}"#;
        assert_eq!(
            error_reason(&body[..], Some(&key)),
            "Incorrect API key provided: ***"
        );
        let long = "x".repeat(1000);
        assert_eq!(error_reason(long.as_bytes(), None).chars().count(), 301);
    }
}
