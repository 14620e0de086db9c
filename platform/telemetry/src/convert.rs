//! A runtime span record ([`Record`]) as the SDK's `SpanData`: what the `http/json` exporter
//! (`opentelemetry-otlp`'s) takes, and the reference the protobuf encoder is tested against
//! (`tests/it/platform/otlp_encoding.rs`). Its attributes, kept as OTLP protobuf, are read back
//! into `KeyValue`s; nothing the record writes is lost (strings, integers, arrays of strings).

use aelc_runtime::trace::wire::{Field, Reader};
use aelc_runtime::trace::Record;
use opentelemetry::{Array, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};

/// `record` as the SDK's `SpanData`, in aelc's scope.
pub fn span_data(record: &Record) -> SpanData {
    SpanData {
        span_context: record.context.clone(),
        parent_span_id: record.parent_span_id,
        parent_span_is_remote: record.parent_is_remote,
        span_kind: record.kind.clone(),
        name: record.name.clone(),
        start_time: record.start,
        end_time: record.end,
        attributes: attributes(record.attributes()),
        dropped_attributes_count: record.dropped_attributes(),
        events: SpanEvents::default(),
        links: SpanLinks::default(),
        status: record.status.clone(),
        instrumentation_scope: crate::tracer::scope(),
    }
}

/// `Span.attributes` fields (field 9) as key-values.
fn attributes(bytes: &[u8]) -> Vec<KeyValue> {
    Reader::new(bytes)
        .filter_map(|(_, field)| match field {
            Field::Len(kv) => key_value(kv),
            _ => None,
        })
        .collect()
}

/// A `KeyValue` message: its key (1) and its `AnyValue` (2).
fn key_value(bytes: &[u8]) -> Option<KeyValue> {
    let mut key = None;
    let mut value = None;
    for (number, field) in Reader::new(bytes) {
        match (number, field) {
            (1, Field::Len(k)) => key = Some(String::from_utf8_lossy(k).into_owned()),
            (2, Field::Len(v)) => value = any_value(v),
            _ => {}
        }
    }
    Some(KeyValue::new(key?, value?))
}

/// An `AnyValue`: a string (1), a bool (2), an integer (3), a double (4) or an array (5).
fn any_value(bytes: &[u8]) -> Option<Value> {
    let (number, field) = Reader::new(bytes).next()?;
    Some(match (number, field) {
        (1, Field::Len(s)) => Value::from(String::from_utf8_lossy(s).into_owned()),
        (2, Field::Varint(b)) => Value::Bool(b != 0),
        (3, Field::Varint(i)) => Value::I64(i as i64),
        (4, Field::Fixed64(f)) => Value::F64(f64::from_bits(f)),
        (5, Field::Len(array)) => Value::Array(array_value(array)),
        _ => return None,
    })
}

/// An `ArrayValue` of strings (the only arrays a record writes).
fn array_value(bytes: &[u8]) -> Array {
    Array::String(
        Reader::new(bytes)
            .filter_map(|(_, field)| match field {
                Field::Len(v) => match any_value(v)? {
                    Value::String(s) => Some(s),
                    _ => None,
                },
                _ => None,
            })
            .collect::<Vec<StringValue>>(),
    )
}
