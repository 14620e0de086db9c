//! `aelc-telemetry`'s protobuf encoder ([`TraceEncoder`]) against the reference: for random
//! batches of the SDK's spans (every field, every kind of attribute value, arrays, events,
//! links, trace state, several instrumentation scopes, times before the epoch) and random
//! resources, its bytes equal those of `opentelemetry-proto`'s messages made by its
//! `transform` (what `opentelemetry-otlp` sends) and encoded by prost, byte for byte. Also: one
//! encoder reused for several batches, the resource before `set_resource`, spans encoded one by
//! one and framed later (the `http/protobuf` batch's way), and messages whose lengths need
//! three and four bytes (a span over 16 KiB, a batch over 2 MiB).

use std::borrow::Cow;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aelc_telemetry::TraceEncoder;
use opentelemetry::trace::{
    Event, Link, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{Array, InstrumentationScope, KeyValue, StringValue, Value};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};
use opentelemetry_sdk::Resource;
use proptest::collection::vec;
use proptest::prelude::*;
use prost::Message;

/// What `opentelemetry-otlp` sends for `batch` under `resource`.
fn reference(batch: Vec<SpanData>, resource: &ResourceAttributesWithSchema) -> Vec<u8> {
    ExportTraceServiceRequest {
        resource_spans: group_spans_by_resource_and_scope(batch, resource),
    }
    .encode_to_vec()
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

fn attributes() -> impl Strategy<Value = Vec<KeyValue>> {
    vec(
        (text(), value()).prop_map(|(k, v)| KeyValue::new(k, v)),
        0..6,
    )
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

/// One of a few scopes, so that a batch mixes them (the same scope recurring, two scopes
/// equal but for their attributes' order, which are one group).
fn scope() -> impl Strategy<Value = InstrumentationScope> {
    (0..5u8).prop_map(|which| match which {
        0 => InstrumentationScope::builder("aelc").build(),
        1 => InstrumentationScope::builder("other")
            .with_version("1.2.3")
            .with_schema_url("https://opentelemetry.io/schemas/1.30.0")
            .build(),
        2 => InstrumentationScope::builder("attrs")
            .with_attributes([KeyValue::new("a", 1), KeyValue::new("b", "two")])
            .build(),
        3 => InstrumentationScope::builder("attrs")
            .with_attributes([KeyValue::new("b", "two"), KeyValue::new("a", 1)])
            .build(),
        _ => InstrumentationScope::builder("").build(),
    })
}

fn events() -> impl Strategy<Value = SpanEvents> {
    (
        vec(
            (text(), time(), attributes(), any::<u32>())
                .prop_map(|(name, at, attrs, dropped)| Event::new(name, at, attrs, dropped)),
            0..3,
        ),
        prop_oneof![Just(0u32), any::<u32>()],
    )
        .prop_map(|(events, dropped)| {
            let mut out = SpanEvents::default();
            out.events = events;
            out.dropped_count = dropped;
            out
        })
}

fn links() -> impl Strategy<Value = SpanLinks> {
    (
        vec(
            (context(), attributes(), any::<u32>())
                .prop_map(|(cx, attrs, dropped)| Link::new(cx, attrs, dropped)),
            0..3,
        ),
        prop_oneof![Just(0u32), any::<u32>()],
    )
        .prop_map(|(links, dropped)| {
            let mut out = SpanLinks::default();
            out.links = links;
            out.dropped_count = dropped;
            out
        })
}

fn span() -> impl Strategy<Value = SpanData> {
    (
        (
            context(),
            prop_oneof![Just(0u64), any::<u64>()],
            any::<bool>(),
            kind(),
            text(),
            time(),
            time(),
        ),
        (
            attributes(),
            prop_oneof![Just(0u32), any::<u32>()],
            events(),
            links(),
            status(),
            scope(),
        ),
    )
        .prop_map(
            |(
                (span_context, parent, parent_remote, span_kind, name, start, end),
                (attributes, dropped, events, links, status, instrumentation_scope),
            )| SpanData {
                span_context,
                parent_span_id: SpanId::from(parent),
                parent_span_is_remote: parent_remote,
                span_kind,
                name: Cow::Owned(name),
                start_time: start,
                end_time: end,
                attributes,
                dropped_attributes_count: dropped,
                events,
                links,
                status,
                instrumentation_scope,
            },
        )
}

fn resource() -> impl Strategy<Value = Resource> {
    (attributes(), prop_oneof![Just(None), text().prop_map(Some)]).prop_map(|(attrs, schema)| {
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
    fn the_encoder_writes_the_reference_bytes(
        resource in resource(),
        first in vec(span(), 0..6),
        second in vec(span(), 1..4),
    ) {
        let mut encoder = TraceEncoder::new();
        let unset = ResourceAttributesWithSchema::default();
        prop_assert_eq!(encoder.encode(&first).to_vec(), reference(first.clone(), &unset));
        encoder.set_resource(&resource);
        let set: ResourceAttributesWithSchema = (&resource).into();
        prop_assert_eq!(encoder.encode(&first).to_vec(), reference(first, &set));
        prop_assert_eq!(encoder.encode(&second).to_vec(), reference(second, &set));
    }

    /// Spans encoded one by one as they end (`encode_span`) after room for the request's head,
    /// and framed in place later (`frame`), as the `http/protobuf` batch sends them: the
    /// reference's bytes for the same spans, all in the one scope.
    #[test]
    fn spans_encoded_as_they_end_frame_the_reference_bytes(
        resource in resource(),
        scope in scope(),
        spans in vec(span(), 1..6),
    ) {
        let spans: Vec<SpanData> = spans
            .into_iter()
            .map(|s| SpanData { instrumentation_scope: scope.clone(), ..s })
            .collect();
        let mut encoder = TraceEncoder::new();
        encoder.set_resource(&resource);
        let mut queued = vec![0xff; encoder.frame_room(&scope)];
        for span in &spans {
            TraceEncoder::encode_span(span, &mut queued);
        }
        let start = encoder.frame(&scope, &mut queued);
        let set: ResourceAttributesWithSchema = (&resource).into();
        prop_assert_eq!(queued[start..].to_vec(), reference(spans, &set));
    }
}

/// A span as the gateway makes them, with `size` bytes of one attribute's value.
fn sized_span(id: u64, size: usize) -> SpanData {
    SpanData {
        span_context: SpanContext::new(
            TraceId::from(0x0af7_6519_16cd_43dd_8448_eb21_1c80_319c),
            SpanId::from(id),
            TraceFlags::SAMPLED,
            false,
            TraceState::NONE,
        ),
        parent_span_id: SpanId::from(0xb7ad_6b71_6920_3331),
        parent_span_is_remote: true,
        span_kind: SpanKind::Internal,
        name: "gate echo".into(),
        start_time: UNIX_EPOCH + Duration::from_secs(1_800_000_000),
        end_time: UNIX_EPOCH + Duration::from_secs(1_800_000_001),
        attributes: vec![
            KeyValue::new("aelc.node", "echo"),
            KeyValue::new("aelc.gate.outcome", "refused"),
            KeyValue::new("aelc.gate.errors", 1),
            KeyValue::new("aelc.note", "n".repeat(size)),
        ],
        dropped_attributes_count: 0,
        events: SpanEvents::default(),
        links: SpanLinks::default(),
        status: Status::Unset,
        instrumentation_scope: InstrumentationScope::builder("aelc").build(),
    }
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
    assert_eq!(
        encoder.encode(&batch).to_vec(),
        reference(batch.clone(), &set)
    );
    // A batch over 2 MiB: the request's and the scope's lengths take four bytes.
    let batch: Vec<SpanData> = (0..120).map(|i| sized_span(i + 1, 20_000)).collect();
    let mine = encoder.encode(&batch).to_vec();
    assert!(mine.len() > 2 << 20, "{}", mine.len());
    let scope = InstrumentationScope::builder("aelc").build();
    let mut queued = vec![0; encoder.frame_room(&scope)];
    for span in &batch {
        TraceEncoder::encode_span(span, &mut queued);
    }
    let start = encoder.frame(&scope, &mut queued);
    assert_eq!(queued[start..], mine[..]);
    assert_eq!(mine, reference(batch, &set));
}
