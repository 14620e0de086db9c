//! A span's record: what one span exports, filled in while it is open and handed to the host
//! when it ends ([`super::Host::export`]). Its attributes are kept already encoded, as the
//! `Span.attributes` fields of OTLP's protobuf, in the order they were set: a value is copied
//! once, into the span's one buffer, and never becomes an owned string, a `KeyValue` or a list
//! of them; exporting a span copies its attributes' bytes as they are.
//!
//! Why (the book's traces chapter, "Cost"): with the OpenTelemetry API's attributes, a gate
//! refusal's spans made a dozen owned strings and two lists, each built, moved into the span,
//! encoded field by field and freed; here its keys are static and their heads known at compile
//! time ([`Key`]), and its values are written where they are read.

use std::borrow::Cow;
use std::time::SystemTime;

use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status};

use super::wire::{varint_len, Writer};

/// The most attributes a span keeps (the SDK's default limit); more are counted as dropped.
pub const MAX_ATTRIBUTES: u32 = 128;

/// Field numbers of what a record writes (opentelemetry-proto's `.proto` files).
mod field {
    /// `Span.attributes`.
    pub const ATTRIBUTES: u32 = 9;
    /// `KeyValue`: `key`, `value`.
    pub const KEY: u32 = 1;
    pub const VALUE: u32 = 2;
    /// `AnyValue`'s `oneof value`: `string_value`, `int_value`, `array_value`.
    pub const STRING_VALUE: u32 = 1;
    pub const INT_VALUE: u32 = 3;
    pub const ARRAY_VALUE: u32 = 5;
    /// `ArrayValue.values`.
    pub const ARRAY_VALUES: u32 = 1;
}

/// The tags (field number and wire type 2, length-delimited) of the fields a short key-value
/// is written with in one go.
const ATTRIBUTE_TAG: u8 = (field::ATTRIBUTES << 3 | 2) as u8;
const KEY_TAG: u8 = (field::KEY << 3 | 2) as u8;
const VALUE_TAG: u8 = (field::VALUE << 3 | 2) as u8;
const STRING_TAG: u8 = (field::STRING_VALUE << 3 | 2) as u8;

/// An attribute's name: static, not empty, and under 128 bytes (checked when the constant is
/// made), so its key field's head (tag and one-byte length) is known before it is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key(&'static str);

impl Key {
    /// The key `name`; a name that is empty or 128 bytes or more does not compile as a constant.
    pub const fn new(name: &'static str) -> Key {
        assert!(
            !name.is_empty() && name.len() < 128,
            "an attribute key of 1 to 127 bytes"
        );
        Key(name)
    }

    pub const fn as_str(self) -> &'static str {
        self.0
    }

    /// `KeyValue.key`, tag and length included.
    fn write(self, w: &mut Writer) {
        w.buf.extend_from_slice(&[KEY_TAG, self.0.len() as u8]);
        w.buf.extend_from_slice(self.0.as_bytes());
    }

    /// The bytes [`Key::write`] writes.
    fn len(self) -> usize {
        2 + self.0.len()
    }
}

/// One span, as it will be exported: its ids, name, kind, times, attributes and status.
#[derive(Clone, Debug)]
pub struct Record {
    /// Its trace and span ids, trace flags and trace state.
    pub context: SpanContext,
    /// The parent's span id (`SpanId::INVALID` for a root) and whether the parent is remote.
    pub parent_span_id: SpanId,
    pub parent_is_remote: bool,
    pub kind: SpanKind,
    pub name: Cow<'static, str>,
    pub start: SystemTime,
    /// Its start until it ends.
    pub end: SystemTime,
    pub status: Status,
    /// `Span.attributes` fields, each a `KeyValue` with its tag and length.
    attributes: Writer,
    count: u32,
    dropped: u32,
}

impl Record {
    /// A span starting now as `context`, a child of `parent` (a root when `None`).
    pub fn new(
        context: SpanContext,
        parent: Option<&SpanContext>,
        kind: SpanKind,
        name: Cow<'static, str>,
    ) -> Record {
        let now = SystemTime::now();
        Record {
            context,
            parent_span_id: parent.map_or(SpanId::INVALID, SpanContext::span_id),
            parent_is_remote: parent.is_some_and(SpanContext::is_remote),
            kind,
            name,
            start: now,
            end: now,
            status: Status::Unset,
            // Room for a gate's or a request's attributes: no regrowth on the hot path.
            attributes: Writer {
                buf: Vec::with_capacity(256),
            },
            count: 0,
            dropped: 0,
        }
    }

    /// The attributes: `Span.attributes` fields as protobuf, in the order they were set.
    pub fn attributes(&self) -> &[u8] {
        &self.attributes.buf
    }

    /// How many attributes were set and kept.
    pub fn attribute_count(&self) -> u32 {
        self.count
    }

    /// How many attributes were set past [`MAX_ATTRIBUTES`] and not kept.
    pub fn dropped_attributes(&self) -> u32 {
        self.dropped
    }

    /// Whether one more attribute is kept (else it is counted as dropped).
    fn room(&mut self) -> bool {
        if self.count < MAX_ATTRIBUTES {
            self.count += 1;
            true
        } else {
            self.dropped += 1;
            false
        }
    }

    /// The head of a `KeyValue` whose `AnyValue` is `any` bytes: its tag, length and key, and
    /// the value's tag and length; room reserved for the whole key-value.
    fn head(&mut self, key: Key, any: usize) {
        let kv = key.len() + field_len(any);
        let w = &mut self.attributes;
        w.buf.reserve(field_len(kv));
        w.message_of(field::ATTRIBUTES, kv);
        key.write(w);
        w.message_of(field::VALUE, any);
    }

    /// [`Record::head`] of a key-value of `kv` bytes under 128 (every length one byte), the
    /// value's head given whole: the attribute's tag and length, the key's, the key, then
    /// `value_head`, with room reserved for the whole key-value. Returns the buffer, for the
    /// value's bytes.
    #[inline(always)]
    fn short_head(&mut self, key: Key, kv: usize, value_head: &[u8]) -> &mut Vec<u8> {
        let buf = &mut self.attributes.buf;
        buf.reserve(2 + kv);
        buf.extend_from_slice(&[ATTRIBUTE_TAG, kv as u8, KEY_TAG, key.0.len() as u8]);
        buf.extend_from_slice(key.0.as_bytes());
        buf.extend_from_slice(value_head);
        buf
    }

    /// A string attribute.
    pub fn str(&mut self, key: Key, value: &str) {
        if !self.room() {
            return;
        }
        let any = field_len(value.len());
        let kv = key.len() + field_len(any);
        if kv < 128 {
            // Every length one byte (a gateway's attributes): the key-value in four copies, the
            // two heads of known size (a few moves each), and no length computed twice.
            let value_head = [VALUE_TAG, any as u8, STRING_TAG, value.len() as u8];
            let buf = self.short_head(key, kv, &value_head);
            buf.extend_from_slice(value.as_bytes());
            return;
        }
        self.head(key, any);
        self.attributes
            .bytes_member(field::STRING_VALUE, value.as_bytes());
    }

    /// An integer attribute.
    pub fn int(&mut self, key: Key, value: i64) {
        if !self.room() {
            return;
        }
        let any = 1 + varint_len(value as u64);
        let kv = key.len() + field_len(any);
        if kv < 128 {
            // As a short string's (above): the value's varint is all that is written piecewise.
            self.short_head(key, kv, &[VALUE_TAG, any as u8]);
        } else {
            self.head(key, any);
        }
        self.attributes.int64_member(field::INT_VALUE, value);
    }

    /// An attribute whose value is an array of strings.
    pub fn strings(&mut self, key: Key, values: &[&str]) {
        if self.room() {
            let array: usize = values.iter().map(|v| field_len(field_len(v.len()))).sum();
            self.head(key, field_len(array));
            let w = &mut self.attributes;
            w.message_of(field::ARRAY_VALUE, array);
            for v in values {
                w.message_of(field::ARRAY_VALUES, field_len(v.len()));
                w.bytes_member(field::STRING_VALUE, v.as_bytes());
            }
        }
    }

    /// The status, kept when it ranks above the current one (Ok > Error > Unset, as the
    /// specification orders them).
    pub fn set_status(&mut self, status: Status) {
        if status > self.status {
            self.status = status;
        }
    }
}

/// The bytes of a length-delimited field of `len` bytes (tag, length, body), for fields
/// numbered below 16 (a one-byte tag): every field a record writes.
fn field_len(len: usize) -> usize {
    1 + varint_len(len as u64) + len
}
