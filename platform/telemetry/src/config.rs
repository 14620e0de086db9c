//! The exporter's settings from the `OTEL_EXPORTER_OTLP_*` variables, read as the
//! specification (and `opentelemetry-otlp`, which read them before this crate's own protobuf
//! exporter) reads them: the traces variable first, then the general one.

use std::time::Duration;

use ureq::http::{HeaderName, HeaderValue, Uri};

use crate::ConfigError;

/// The wire format of the exports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// `http/protobuf`, the specification's default: this crate's encoder.
    Protobuf,
    /// `http/json`: `opentelemetry-otlp`'s JSON.
    Json,
}

/// `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`, else protobuf;
/// `grpc` (not built in) or a value of neither kind is an error, and nothing is traced.
pub(crate) fn protocol(set: &impl Fn(&str) -> Option<String>) -> Result<Protocol, ConfigError> {
    let Some((name, value)) = [
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
    ]
    .into_iter()
    .find_map(|name| Some((name, set(name)?))) else {
        return Ok(Protocol::Protobuf);
    };
    match value.trim().to_ascii_lowercase().as_str() {
        "http/protobuf" => Ok(Protocol::Protobuf),
        "http/json" => Ok(Protocol::Json),
        "grpc" => Err(ConfigError(format!(
            "{name}=grpc is not built in (use http/protobuf or http/json)"
        ))),
        _ => Err(ConfigError(format!(
            "{name}={value} is not a protocol (http/protobuf or http/json)"
        ))),
    }
}

/// Where traces go: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else
/// `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces` after it. `None` when neither is set.
pub(crate) fn endpoint(set: &impl Fn(&str) -> Option<String>) -> Option<Result<Uri, ConfigError>> {
    let (name, url) = if let Some(url) = set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", url)
    } else {
        let base = set("OTEL_EXPORTER_OTLP_ENDPOINT")?;
        let path = if base.ends_with('/') {
            "v1/traces"
        } else {
            "/v1/traces"
        };
        ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("{base}{path}"))
    };
    Some(
        url.parse::<Uri>()
            .map_err(|e| ConfigError(format!("{name}: invalid endpoint '{url}': {e}"))),
    )
}

/// `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, else `OTEL_EXPORTER_OTLP_TIMEOUT`, in milliseconds
/// (10 s when neither is a number): how long one export may take.
pub(crate) fn timeout(set: &impl Fn(&str) -> Option<String>) -> Duration {
    [
        "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
        "OTEL_EXPORTER_OTLP_TIMEOUT",
    ]
    .iter()
    .find_map(|name| set(name)?.trim().parse::<u64>().ok())
    .map_or(Duration::from_secs(10), Duration::from_millis)
}

/// The headers every export carries: `OTEL_EXPORTER_OTLP_TRACES_HEADERS` if it is there (even
/// empty), else `OTEL_EXPORTER_OTLP_HEADERS`; `key=value` pairs split at `,`, each value
/// URL-decoded (kept as written when it does not decode); a pair without a key or a value, or
/// that is not a valid header, is left out.
pub(crate) fn headers(var: &impl Fn(&str) -> Option<String>) -> Vec<(HeaderName, HeaderValue)> {
    let Some(list) =
        var("OTEL_EXPORTER_OTLP_TRACES_HEADERS").or_else(|| var("OTEL_EXPORTER_OTLP_HEADERS"))
    else {
        return Vec::new();
    };
    list.split_terminator(',')
        .filter_map(|pair| {
            let (key, value) = pair.trim().split_once('=')?;
            let (key, value) = (key.trim(), value.trim());
            let value = url_decoded(value).unwrap_or_else(|| value.to_owned());
            if key.is_empty() || value.is_empty() {
                return None;
            }
            Some((
                HeaderName::try_from(key).ok()?,
                HeaderValue::try_from(value).ok()?,
            ))
        })
        .collect()
}

/// `%XX` escapes decoded (UTF-8); `None` when an escape is cut short, not hex, or the bytes
/// are not UTF-8.
fn url_decoded(text: &str) -> Option<String> {
    let mut out = Vec::with_capacity(text.len());
    let mut bytes = text.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let hex = [bytes.next()?, bytes.next()?];
            out.push(u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16).ok()?);
        } else {
            out.push(b);
        }
    }
    String::from_utf8(out).ok()
}
