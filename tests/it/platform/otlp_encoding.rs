//! `aelc-telemetry`'s protobuf encoder ([`TraceEncoder`]) against the reference: for random
//! batches of the runtime's span records (every field, every kind of attribute a record
//! writes, long values, trace state, times before the epoch, attributes past the limit) and
//! random resources, the spans encoded one by one as they end and framed later (the
//! `http/protobuf` batch's way) are the bytes of `opentelemetry-proto`'s messages made by its
//! `transform` (what `opentelemetry-otlp` sends) from the same spans as the SDK's `SpanData`
//! (`aelc_telemetry::span_data`, what `http/json` is given) and encoded by prost, byte for
//! byte. So the records' attributes, written as protobuf when they are set, are proved both
//! well formed and read back whole. Also: one encoder reused for several batches, the resource
//! before `set_resource`, and messages whose lengths need three and four bytes (a span over
//! 16 KiB, a batch over 2 MiB).

use std::borrow::Cow;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aelc_runtime::trace::{Key, Record};
use aelc_telemetry::{span_data, TraceEncoder};
use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{Array, InstrumentationScope, KeyValue, StringValue, Value};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
use opentelemetry_sdk::Resource;
use proptest::collection::vec;
use proptest::prelude::*;
use prost::Message;

/// What `opentelemetry-otlp` sends for `batch` under `resource`.
fn reference(batch: &[Record], resource: &ResourceAttributesWithSchema) -> Vec<u8> {
    let spans = batch.iter().map(span_data).collect();
    ExportTraceServiceRequest {
        resource_spans: group_spans_by_resource_and_scope(spans, resource),
    }
    .encode_to_vec()
}

/// `batch` as the `http/protobuf` batch sends it: room for the head, each span encoded as it
/// ends, then framed in place.
fn framed(encoder: &mut TraceEncoder, batch: &[Record]) -> Vec<u8> {
    let scope = InstrumentationScope::builder("aelc").build();
    let mut queued = vec![0xff; encoder.frame_room(&scope)];
    for span in batch {
        TraceEncoder::encode_span(span, &mut queued);
    }
    let start = encoder.frame(&scope, &mut queued);
    queued[start..].to_vec()
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-z._]{1,12}",
        ".{0,40}",
        // Long enough for a key-value over 127 bytes (a two-byte length).
        "[a-zA-Z0-9 ]{120,300}",
    ]
}

/// A key, as a record takes them (static, 1 to 127 bytes): leaked, in a test.
fn key() -> impl Strategy<Value = Key> {
    prop_oneof!["[a-z._]{1,12}", "[a-z]{100,127}"]
        .prop_map(|k| Key::new(Box::leak(k.into_boxed_str())))
}

/// An attribute a record writes.
#[derive(Clone, Debug)]
enum Attribute {
    Str(String),
    Int(i64),
    Strings(Vec<String>),
}

fn attribute() -> impl Strategy<Value = (Key, Attribute)> {
    (
        key(),
        prop_oneof![
            text().prop_map(Attribute::Str),
            any::<i64>().prop_map(Attribute::Int),
            vec(text(), 0..4).prop_map(Attribute::Strings),
        ],
    )
}

fn set(record: &mut Record, key: Key, value: &Attribute) {
    match value {
        Attribute::Str(s) => record.str(key, s),
        Attribute::Int(i) => record.int(key, *i),
        Attribute::Strings(v) => {
            let v: Vec<&str> = v.iter().map(String::as_str).collect();
            record.strings(key, &v);
        }
    }
}

/// A time, sometimes 0, sometimes before the epoch (sent as 0).
fn time() -> impl Strategy<Value = SystemTime> {
    prop_oneof![
        Just(UNIX_EPOCH),
        any::<u64>().prop_map(|n| UNIX_EPOCH + Duration::from_nanos(n)),
        (1u64..1_000_000).prop_map(|n| UNIX_EPOCH - Duration::from_nanos(n)),
    ]
}

fn trace_state() -> impl Strategy<Value = TraceState> {
    vec(("[a-z][a-z0-9_]{0,6}", "[a-zA-Z0-9]{1,8}"), 0..3)
        .prop_map(|entries| TraceState::from_key_value(entries).unwrap_or(TraceState::NONE))
}

fn context() -> impl Strategy<Value = SpanContext> {
    (
        any::<u128>(),
        any::<u64>(),
        any::<u8>(),
        any::<bool>(),
        trace_state(),
    )
        .prop_map(|(trace, span, flags, remote, state)| {
            SpanContext::new(
                TraceId::from(trace),
                SpanId::from(span),
                TraceFlags::new(flags),
                remote,
                state,
            )
        })
}

fn kind() -> impl Strategy<Value = SpanKind> {
    prop_oneof![
        Just(SpanKind::Internal),
        Just(SpanKind::Server),
        Just(SpanKind::Client),
        Just(SpanKind::Producer),
        Just(SpanKind::Consumer),
    ]
}

fn status() -> impl Strategy<Value = Status> {
    prop_oneof![
        Just(Status::Unset),
        Just(Status::Ok),
        text().prop_map(|d| Status::Error {
            description: d.into()
        }),
    ]
}

fn span() -> impl Strategy<Value = Record> {
    (
        (
            context(),
            prop_oneof![Just(None), context().prop_map(Some)],
            kind(),
            text(),
            time(),
            time(),
        ),
        (
            vec(attribute(), 0..6),
            // Now and then past the limit: the rest are counted as dropped.
            prop_oneof![Just(0usize), Just(130usize)],
            status(),
        ),
    )
        .prop_map(
            |((context, parent, kind, name, start, end), (attributes, more, status))| {
                let mut record = Record::new(context, parent.as_ref(), kind, Cow::Owned(name));
                record.start = start;
                record.end = end;
                record.status = status;
                for (key, value) in &attributes {
                    set(&mut record, *key, value);
                }
                for i in 0..more {
                    record.int(Key::new("aelc.more"), i as i64);
                }
                record
            },
        )
}

/// A resource attribute's value: any kind (the encoder's general key-value path).
fn value() -> impl Strategy<Value = Value> {
    let strings = || vec(text().prop_map(StringValue::from), 0..4);
    prop_oneof![
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::I64),
        any::<f64>().prop_map(Value::F64),
        text().prop_map(Value::from),
        vec(any::<bool>(), 0..4).prop_map(|v| Value::Array(Array::Bool(v))),
        vec(any::<i64>(), 0..4).prop_map(|v| Value::Array(Array::I64(v))),
        vec(any::<f64>(), 0..4).prop_map(|v| Value::Array(Array::F64(v))),
        strings().prop_map(|v| Value::Array(Array::String(v))),
    ]
}

fn resource() -> impl Strategy<Value = Resource> {
    let attributes = vec(
        (text(), value()).prop_map(|(k, v)| KeyValue::new(k, v)),
        0..6,
    );
    (attributes, prop_oneof![Just(None), text().prop_map(Some)]).prop_map(|(attrs, schema)| {
        match schema {
            Some(url) => Resource::builder_empty()
                .with_schema_url(attrs, url)
                .build(),
            None => Resource::builder_empty().with_attributes(attrs).build(),
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// The same bytes as the reference, for two batches through one encoder (its buffers
    /// reused), and for a batch before any resource is set.
    #[test]
    fn spans_encoded_as_they_end_frame_the_reference_bytes(
        resource in resource(),
        first in vec(span(), 1..6),
        second in vec(span(), 1..4),
    ) {
        let mut encoder = TraceEncoder::new();
        let unset = ResourceAttributesWithSchema::default();
        prop_assert_eq!(framed(&mut encoder, &first), reference(&first, &unset));
        encoder.set_resource(&resource);
        let set: ResourceAttributesWithSchema = (&resource).into();
        prop_assert_eq!(framed(&mut encoder, &first), reference(&first, &set));
        prop_assert_eq!(framed(&mut encoder, &second), reference(&second, &set));
    }
}

/// A span as the gateway makes them, with `size` bytes of one attribute's value.
fn sized_span(id: u64, size: usize) -> Record {
    let parent = SpanContext::new(
        TraceId::from(0x0af7_6519_16cd_43dd_8448_eb21_1c80_319c),
        SpanId::from(0xb7ad_6b71_6920_3331),
        TraceFlags::SAMPLED,
        true,
        TraceState::NONE,
    );
    let context = SpanContext::new(
        parent.trace_id(),
        SpanId::from(id),
        TraceFlags::SAMPLED,
        false,
        TraceState::NONE,
    );
    let mut record = Record::new(
        context,
        Some(&parent),
        SpanKind::Internal,
        "gate echo".into(),
    );
    record.start = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    record.end = UNIX_EPOCH + Duration::from_secs(1_800_000_001);
    record.str(Key::new("aelc.node"), "echo");
    record.str(Key::new("aelc.gate.outcome"), "refused");
    record.int(Key::new("aelc.gate.errors"), 1);
    record.str(Key::new("aelc.note"), &"n".repeat(size));
    record
}

#[test]
fn long_lengths_are_written_in_full() {
    let resource = Resource::builder()
        .with_service_name("aelc-under-test")
        .build();
    let set: ResourceAttributesWithSchema = (&resource).into();
    let mut encoder = TraceEncoder::new();
    encoder.set_resource(&resource);
    // A span over 16 KiB: its length takes three bytes (two were left for it).
    let batch = vec![sized_span(1, 20_000), sized_span(2, 10)];
    assert_eq!(framed(&mut encoder, &batch), reference(&batch, &set));
    // A batch over 2 MiB: the request's and the scope's lengths take four bytes.
    let batch: Vec<Record> = (0..120).map(|i| sized_span(i + 1, 20_000)).collect();
    let mine = framed(&mut encoder, &batch);
    assert!(mine.len() > 2 << 20, "{}", mine.len());
    assert_eq!(mine, reference(&batch, &set));
}
