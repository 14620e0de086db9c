//! OTLP's `ExportTraceServiceRequest` in protobuf, encoded from the runtime's span records
//! straight into reused buffers: the bytes `opentelemetry-otlp` sends for the same spans (its
//! `transform` into `opentelemetry-proto`'s messages, then prost), without the copy of every
//! string into owned messages and without prost's recomputing of nested lengths at each
//! level. The test that proves the bytes equal is `tests/it/platform/otlp_encoding.rs`.
//!
//! The shape, as the otlp crate makes it: one `ResourceSpans` (the exporter's resource, encoded
//! once per [`TraceEncoder::set_resource`]), one `ScopeSpans` (aelc's scope), each span with
//! its attributes (already protobuf in the record, copied as they are), status and `flags`
//! (the trace flags, and whether the parent is remote, always said).

use std::time::{SystemTime, UNIX_EPOCH};

use aelc_runtime::trace::wire::{varint_len, Writer, FIXED32, FIXED64, LEN, VARINT};
use aelc_runtime::trace::Record;
use opentelemetry::trace::{SpanId, SpanKind, Status};
use opentelemetry::{Array, InstrumentationScope, Value};
use opentelemetry_sdk::Resource;

/// Field numbers of the messages written here (opentelemetry-proto's `.proto` files).
mod field {
    /// `ExportTraceServiceRequest.resource_spans`.
    pub const RESOURCE_SPANS: u32 = 1;
    /// `ResourceSpans`: `resource`, `scope_spans`, `schema_url`.
    pub const RESOURCE: u32 = 1;
    pub const SCOPE_SPANS: u32 = 2;
    pub const RESOURCE_SCHEMA_URL: u32 = 3;
    /// `Resource.attributes`.
    pub const RESOURCE_ATTRIBUTES: u32 = 1;
    /// `ScopeSpans`: `scope`, `spans`, `schema_url`.
    pub const SCOPE: u32 = 1;
    pub const SPANS: u32 = 2;
    pub const SCOPE_SCHEMA_URL: u32 = 3;
    /// `InstrumentationScope`: `name`, `version`, `attributes`.
    pub const SCOPE_NAME: u32 = 1;
    pub const SCOPE_VERSION: u32 = 2;
    pub const SCOPE_ATTRIBUTES: u32 = 3;
    /// `Span`.
    pub const TRACE_ID: u32 = 1;
    pub const SPAN_ID: u32 = 2;
    pub const TRACE_STATE: u32 = 3;
    pub const PARENT_SPAN_ID: u32 = 4;
    pub const NAME: u32 = 5;
    pub const KIND: u32 = 6;
    pub const START: u32 = 7;
    pub const END: u32 = 8;
    // `Span.attributes` (9) are written by the record (`aelc_runtime::trace::Record`).
    pub const DROPPED_ATTRIBUTES: u32 = 10;
    // `Span.events` (11) and `links` (13): aelc's spans have none, and drop none.
    pub const STATUS: u32 = 15;
    pub const FLAGS: u32 = 16;
    /// `Status`: `message`, `code`.
    pub const STATUS_MESSAGE: u32 = 2;
    pub const STATUS_CODE: u32 = 3;
    /// `KeyValue`: `key`, `value`.
    pub const KEY: u32 = 1;
    pub const VALUE: u32 = 2;
    /// `AnyValue`'s `oneof value`.
    pub const STRING_VALUE: u32 = 1;
    pub const BOOL_VALUE: u32 = 2;
    pub const INT_VALUE: u32 = 3;
    pub const DOUBLE_VALUE: u32 = 4;
    pub const ARRAY_VALUE: u32 = 5;
    /// `ArrayValue.values`.
    pub const ARRAY_VALUES: u32 = 1;
}

/// `SpanFlags`: the low byte is the W3C trace flags; these say whether the parent is remote.
const CONTEXT_HAS_IS_REMOTE: u32 = 0x100;
const CONTEXT_IS_REMOTE: u32 = 0x200;

/// Room left for a length by the kind of message (see [`Writer::begin`]): a key-value or a
/// status is short, a span or a resource a few hundred bytes.
const SHORT: usize = 1;
const SPAN: usize = 2;

/// Encodes spans and frames them into `ExportTraceServiceRequest`s, reusing its buffers.
#[derive(Debug)]
pub struct TraceEncoder {
    out: Writer,
    /// `ResourceSpans.resource`, key and length included: the same for every batch.
    resource: Vec<u8>,
    /// `ResourceSpans.schema_url`, key and length included (empty when it has none).
    resource_schema: Vec<u8>,
}

impl Default for TraceEncoder {
    fn default() -> Self {
        TraceEncoder::new()
    }
}

impl TraceEncoder {
    /// An encoder whose resource is empty until [`TraceEncoder::set_resource`] (as the otlp
    /// exporter's is).
    pub fn new() -> TraceEncoder {
        let mut resource = Writer::default();
        let open = resource.begin(field::RESOURCE, SHORT);
        resource.end(open);
        TraceEncoder {
            out: Writer::default(),
            resource: resource.buf,
            resource_schema: Vec::new(),
        }
    }

    /// The resource every batch is sent with, encoded now once for all of them.
    pub fn set_resource(&mut self, resource: &Resource) {
        let mut w = Writer::default();
        let open = w.begin(field::RESOURCE, SPAN);
        for (key, value) in resource.iter() {
            key_value(&mut w, field::RESOURCE_ATTRIBUTES, key.as_str(), value);
        }
        w.end(open);
        self.resource = w.buf;
        let mut w = Writer::default();
        w.bytes(
            field::RESOURCE_SCHEMA_URL,
            resource.schema_url().unwrap_or("").as_bytes(),
        );
        self.resource_schema = w.buf;
    }

    /// One span as the `ScopeSpans.spans` field the batch will hold, appended to `out`: what a
    /// span costs to encode is paid when it ends, on its own thread, and its strings are
    /// freed there; [`TraceEncoder::frame`] then puts many such spans in one request.
    pub fn encode_span(span: &Record, out: &mut Vec<u8>) {
        self::span(out, span);
    }

    /// The bytes to leave free before the first span of a batch of `scope`'s spans for
    /// [`TraceEncoder::frame`] to write the request's head there.
    pub fn frame_room(&self, scope: &InstrumentationScope) -> usize {
        // A key and a length of at most five bytes each for `ResourceSpans` and `ScopeSpans`.
        2 * (1 + 5) + self.resource.len() + scope_head(scope).len()
    }

    /// Makes `buf` an `ExportTraceServiceRequest` of spans of one `scope`, in place: `buf` is
    /// [`TraceEncoder::frame_room`] bytes (any) and then the spans' fields as
    /// [`TraceEncoder::encode_span`] wrote them. The request is `buf[start..]` for the `start`
    /// returned: the bytes `opentelemetry-otlp` would send for those spans (all in `scope`),
    /// with no copy of the spans (a batch is hundreds of kilobytes).
    pub fn frame(&mut self, scope: &InstrumentationScope, buf: &mut Vec<u8>) -> usize {
        let room = self.frame_room(scope);
        let spans = buf.len() - room;
        let head = scope_head(scope);
        let mut tail = Writer::default();
        tail.bytes(
            field::SCOPE_SCHEMA_URL,
            scope.schema_url().unwrap_or("").as_bytes(),
        );
        let scope_spans = head.len() + spans + tail.buf.len();
        let request = self.resource.len() + field_len(scope_spans) + self.resource_schema.len();
        let w = &mut self.out;
        w.clear();
        w.message_of(field::RESOURCE_SPANS, request);
        w.raw(&self.resource);
        w.message_of(field::SCOPE_SPANS, scope_spans);
        w.raw(&head);
        let start = room - w.buf.len();
        buf[start..room].copy_from_slice(&w.buf);
        buf.extend_from_slice(&tail.buf);
        buf.extend_from_slice(&self.resource_schema);
        start
    }
}

/// `ScopeSpans.scope`, key and length included.
fn scope_head(scope: &InstrumentationScope) -> Vec<u8> {
    let mut w = Writer::default();
    instrumentation_scope(&mut w, scope);
    w.buf
}

fn instrumentation_scope(w: &mut Writer, scope: &InstrumentationScope) {
    let open = w.begin(field::SCOPE, SHORT);
    w.bytes(field::SCOPE_NAME, scope.name().as_bytes());
    w.bytes(
        field::SCOPE_VERSION,
        scope.version().unwrap_or("").as_bytes(),
    );
    for kv in scope.attributes() {
        key_value(w, field::SCOPE_ATTRIBUTES, kv.key.as_str(), &kv.value);
    }
    w.end(open);
}

/// A field's tag as one byte: every `Span` field below 16 is one.
const fn tag(field: u32, wire_type: u32) -> u8 {
    (field << 3 | wire_type) as u8
}

/// `Span.flags`' tag (field 16, `fixed32`): two bytes as a varint.
const FLAGS_TAG: [u8; 2] = [
    tag(field::FLAGS & 0xf, FIXED32) | 0x80,
    (field::FLAGS >> 4) as u8,
];

/// One span as a `ScopeSpans.spans` field, appended to `out`: its length computed first, so it
/// is written before its body (no room guessed, nothing moved), the room reserved once, and the
/// fixed-size fields (ids, kind, times, flags) each written as one array of known size, which
/// compiles to a few moves rather than a varint loop and a `memcpy` call per field: a span's
/// encoding was a quarter of a gate refusal's export (the book's traces chapter, "Cost").
fn span(out: &mut Vec<u8>, span: &Record) {
    let context = &span.context;
    // Almost always empty: then `header` allocates nothing.
    let state = context.trace_state().header();
    let name = span.name.as_bytes();
    let parent = (span.parent_span_id != SpanId::INVALID).then_some(span.parent_span_id);
    let start = nanos(span.start);
    let end = nanos(span.end);
    let dropped = span.dropped_attributes();
    let (message, code): (&str, u8) = match &span.status {
        Status::Unset => ("", 0),
        Status::Ok => ("", 1),
        Status::Error { description } => (description.as_ref(), 2),
    };
    let status = optional_len(message.len()) + if code == 0 { 0 } else { 2 };
    let body = 2 * 2
        + 16
        + 8
        + optional_len(state.len())
        + parent.map_or(0, |_| 10)
        + optional_len(name.len())
        + 2
        + if start == 0 { 0 } else { 9 }
        + if end == 0 { 0 } else { 9 }
        + span.attributes().len()
        + if dropped == 0 {
            0
        } else {
            1 + varint_len(u64::from(dropped))
        }
        + field_len(status)
        + FLAGS_TAG.len()
        + 4;
    out.reserve(field_len(body));
    out.push(tag(field::SPANS, LEN));
    varint(out, body as u64);
    let mut ids = [0; 28];
    ids[0] = tag(field::TRACE_ID, LEN);
    ids[1] = 16;
    ids[2..18].copy_from_slice(&context.trace_id().to_bytes());
    ids[18] = tag(field::SPAN_ID, LEN);
    ids[19] = 8;
    ids[20..].copy_from_slice(&context.span_id().to_bytes());
    out.extend_from_slice(&ids);
    optional_bytes(out, field::TRACE_STATE, state.as_bytes());
    if let Some(parent) = parent {
        let mut id = [0; 10];
        id[0] = tag(field::PARENT_SPAN_ID, LEN);
        id[1] = 8;
        id[2..].copy_from_slice(&parent.to_bytes());
        out.extend_from_slice(&id);
    }
    optional_bytes(out, field::NAME, name);
    // Never 0 (unspecified): always written.
    out.extend_from_slice(&[tag(field::KIND, VARINT), kind(&span.kind)]);
    fixed64(out, field::START, start);
    fixed64(out, field::END, end);
    out.extend_from_slice(span.attributes());
    if dropped != 0 {
        out.push(tag(field::DROPPED_ATTRIBUTES, VARINT));
        varint(out, u64::from(dropped));
    }
    // The `Status` message: written even when unset (the otlp crate always sets it).
    out.push(tag(field::STATUS, LEN));
    varint(out, status as u64);
    optional_bytes(out, field::STATUS_MESSAGE, message.as_bytes());
    if code != 0 {
        out.extend_from_slice(&[tag(field::STATUS_CODE, VARINT), code]);
    }
    // Never 0 (the remote-parent bits are always said): always written.
    let flags = flags(context.trace_flags().to_u8(), span.parent_is_remote).to_le_bytes();
    out.extend_from_slice(&[
        FLAGS_TAG[0],
        FLAGS_TAG[1],
        flags[0],
        flags[1],
        flags[2],
        flags[3],
    ]);
}

/// The bytes of a `string` or `bytes` field of `len` bytes, 0 when empty (left out).
fn optional_len(len: usize) -> usize {
    if len == 0 {
        0
    } else {
        field_len(len)
    }
}

/// A `string` or `bytes` field numbered below 16, left out when empty.
fn optional_bytes(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    if !bytes.is_empty() {
        out.push(tag(field, LEN));
        varint(out, bytes.len() as u64);
        out.extend_from_slice(bytes);
    }
}

/// A `fixed64` numbered below 16, left out when 0.
fn fixed64(out: &mut Vec<u8>, field: u32, v: u64) {
    if v != 0 {
        let v = v.to_le_bytes();
        out.extend_from_slice(&[
            tag(field, FIXED64),
            v[0],
            v[1],
            v[2],
            v[3],
            v[4],
            v[5],
            v[6],
            v[7],
        ]);
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// `Span.flags`: the trace flags, and the remote-parent bits (always known here).
fn flags(trace_flags: u8, remote: bool) -> u32 {
    let mut flags = u32::from(trace_flags) | CONTEXT_HAS_IS_REMOTE;
    if remote {
        flags |= CONTEXT_IS_REMOTE;
    }
    flags
}

/// `SpanKind`'s numbers in OTLP (0 is "unspecified", never sent).
fn kind(kind: &SpanKind) -> u8 {
    match kind {
        SpanKind::Internal => 1,
        SpanKind::Server => 2,
        SpanKind::Client => 3,
        SpanKind::Producer => 4,
        SpanKind::Consumer => 5,
    }
}

/// Nanoseconds since the Unix epoch; 0 for a time before it (as the otlp crate does).
fn nanos(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// A resource's or a scope's attribute (written once per batch, not per span: a span's
/// attributes are already protobuf in its record).
fn key_value(w: &mut Writer, field: u32, key: &str, value: &Value) {
    // Most values are scalars or strings: their lengths, computed here, are written before
    // their bodies, as prost would, without room to guess.
    if let Some(value_len) = scalar_len(value) {
        let key_len = if key.is_empty() {
            0
        } else {
            field_len(key.len())
        };
        w.message_of(field, key_len + field_len(value_len));
        w.bytes(field::KEY, key.as_bytes());
        w.message_of(field::VALUE, value_len);
        any_value(w, value);
        return;
    }
    let open = w.begin(field, SHORT);
    w.bytes(field::KEY, key.as_bytes());
    let inner = w.begin(field::VALUE, SHORT);
    any_value(w, value);
    w.end(inner);
    w.end(open);
}

/// The bytes of a length-delimited field of `len` bytes (key, length, body), for fields
/// numbered below 16 (a one-byte key).
fn field_len(len: usize) -> usize {
    1 + varint_len(len as u64) + len
}

/// The length of an `AnyValue` holding a scalar or a string; `None` for an array.
fn scalar_len(value: &Value) -> Option<usize> {
    Some(match value {
        Value::Bool(_) => 2,
        Value::I64(i) => 1 + varint_len(*i as u64),
        Value::F64(_) => 9,
        Value::String(s) => field_len(s.as_str().len()),
        _ => return None,
    })
}

/// The members of an `AnyValue` (its `oneof`): always one, even at its default.
fn any_value(w: &mut Writer, value: &Value) {
    match value {
        Value::Bool(b) => w.bool_member(field::BOOL_VALUE, *b),
        Value::I64(i) => w.int64_member(field::INT_VALUE, *i),
        Value::F64(f) => w.double_member(field::DOUBLE_VALUE, *f),
        Value::String(s) => w.bytes_member(field::STRING_VALUE, s.as_str().as_bytes()),
        Value::Array(array) => {
            let open = w.begin(field::ARRAY_VALUE, SHORT);
            array_values(w, array);
            w.end(open);
        }
        // A kind of value newer than this encoder: an empty `AnyValue` (the otlp crate would
        // panic).
        _ => {}
    }
}

fn array_values(w: &mut Writer, array: &Array) {
    fn each<T>(w: &mut Writer, values: &[T], one: impl Fn(&mut Writer, &T)) {
        for v in values {
            let open = w.begin(field::ARRAY_VALUES, SHORT);
            one(w, v);
            w.end(open);
        }
    }
    match array {
        Array::Bool(v) => each(w, v, |w, b| w.bool_member(field::BOOL_VALUE, *b)),
        Array::I64(v) => each(w, v, |w, i| w.int64_member(field::INT_VALUE, *i)),
        Array::F64(v) => each(w, v, |w, f| w.double_member(field::DOUBLE_VALUE, *f)),
        Array::String(v) => each(w, v, |w, s| {
            w.bytes_member(field::STRING_VALUE, s.as_str().as_bytes())
        }),
        // A kind of array newer than this encoder: an empty `ArrayValue`.
        _ => {}
    }
}
