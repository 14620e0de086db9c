//! The protobuf wire format, as much of it as OTLP's trace messages use, written straight into
//! one growing buffer (a span's attributes as they are set, `record`; the rest of a span and
//! its batch in `aelc-telemetry`'s encoder): varints, fixed 32- and 64-bit fields,
//! length-delimited strings, bytes and nested messages. Canonical: proto3 fields at their
//! default are left out (as prost does), and every length is the shortest varint. Read back
//! by [`Reader`] (a span's attributes for `http/json`).
//!
//! A nested message's length is known only after its body is written, so [`Writer::begin`]
//! leaves room for a length of a guessed size and [`Writer::end`] writes it there, moving the
//! body by the difference when the guess was wrong (rarely: the callers guess by the message's
//! kind). Each length is computed once, unlike prost's encoder, which asks every nested message
//! for its length again at each level above it.

/// Wire types (the low three bits of a field's key).
pub const VARINT: u32 = 0;
pub const FIXED64: u32 = 1;
pub const LEN: u32 = 2;
pub const FIXED32: u32 = 5;

/// An open nested message: where its length goes, and the room left for it.
#[must_use = "a nested message is closed with Writer::end"]
pub struct Open {
    at: usize,
    room: usize,
}

/// The buffer a message is written into; kept between exports so its memory is reused.
#[derive(Clone, Debug, Default)]
pub struct Writer {
    pub buf: Vec<u8>,
}

impl Writer {
    pub fn clear(&mut self) {
        self.buf.clear();
    }

    /// Bytes already encoded (a field cached whole, such as the resource).
    pub fn raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    pub fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    fn key(&mut self, field: u32, wire_type: u32) {
        self.varint(u64::from(field << 3 | wire_type));
    }

    /// A `uint32` (or an enum's number), left out when 0.
    pub fn uint32(&mut self, field: u32, v: u32) {
        if v != 0 {
            self.key(field, VARINT);
            self.varint(u64::from(v));
        }
    }

    /// An `int64` member of a `oneof`: written even when 0 (the member is what is set).
    pub fn int64_member(&mut self, field: u32, v: i64) {
        self.key(field, VARINT);
        // Two's complement: a negative number is ten bytes, as protobuf says.
        self.varint(v as u64);
    }

    /// A `bool` member of a `oneof` (written even when false).
    pub fn bool_member(&mut self, field: u32, v: bool) {
        self.key(field, VARINT);
        self.buf.push(u8::from(v));
    }

    /// A `double` member of a `oneof` (written even when 0).
    pub fn double_member(&mut self, field: u32, v: f64) {
        self.key(field, FIXED64);
        self.buf.extend_from_slice(&v.to_bits().to_le_bytes());
    }

    /// A `fixed64`, left out when 0.
    pub fn fixed64(&mut self, field: u32, v: u64) {
        if v != 0 {
            self.key(field, FIXED64);
            self.buf.extend_from_slice(&v.to_le_bytes());
        }
    }

    /// A `fixed32`, left out when 0.
    pub fn fixed32(&mut self, field: u32, v: u32) {
        if v != 0 {
            self.key(field, FIXED32);
            self.buf.extend_from_slice(&v.to_le_bytes());
        }
    }

    /// A `string` or `bytes` field, left out when empty.
    pub fn bytes(&mut self, field: u32, v: &[u8]) {
        if !v.is_empty() {
            self.bytes_member(field, v);
        }
    }

    /// A `string` member of a `oneof` (written even when empty).
    pub fn bytes_member(&mut self, field: u32, v: &[u8]) {
        self.key(field, LEN);
        self.varint(v.len() as u64);
        self.buf.extend_from_slice(v);
    }

    /// The key and length of the nested message `field` whose body, `len` bytes, the caller
    /// writes next: for a message whose length is cheap to know beforehand (a key-value of a
    /// scalar or a string), no room to guess and nothing to move.
    pub fn message_of(&mut self, field: u32, len: usize) {
        self.key(field, LEN);
        self.varint(len as u64);
    }

    /// Opens the nested message `field`, leaving `room` bytes for its length: 1 up to 127
    /// bytes of body, 2 up to 16 KiB, 3 up to 2 MiB. Always written, even when empty (a
    /// message field that is set).
    pub fn begin(&mut self, field: u32, room: usize) -> Open {
        self.key(field, LEN);
        let at = self.buf.len();
        self.buf.resize(at + room, 0);
        Open { at, room }
    }

    /// Closes `open`: its length, as the shortest varint, before its body.
    pub fn end(&mut self, open: Open) {
        let Open { at, room } = open;
        let body = at + room;
        let len = self.buf.len() - body;
        let need = varint_len(len as u64);
        if need > room {
            let more = need - room;
            let old_end = self.buf.len();
            self.buf.resize(old_end + more, 0);
            self.buf.copy_within(body..old_end, body + more);
        } else if need < room {
            let end = self.buf.len();
            self.buf.copy_within(body..end, at + need);
            self.buf.truncate(end - (room - need));
        }
        let mut v = len as u64;
        for byte in &mut self.buf[at..at + need] {
            *byte = (v as u8 & 0x7f) | 0x80;
            v >>= 7;
        }
        self.buf[at + need - 1] &= 0x7f;
    }
}

/// How many bytes `v` takes as a varint.
pub fn varint_len(v: u64) -> usize {
    // 1 for 0..=127, one more per further 7 bits.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// One field read back by a [`Reader`]: its number and its value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Field<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    Len(&'a [u8]),
}

/// The fields of one message, read back in order (what a [`Writer`] wrote: a host that turns
/// a span's encoded attributes into another form). Stops at the end, or at bytes that are not
/// a field (it never panics).
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes }
    }

    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self.bytes.split_first()?;
            self.bytes = rest;
            v |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Some(v);
            }
        }
        None
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.bytes.len() {
            return None;
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Some(head)
    }
}

impl<'a> Iterator for Reader<'a> {
    type Item = (u32, Field<'a>);

    fn next(&mut self) -> Option<(u32, Field<'a>)> {
        let key = self.varint()?;
        let field = u32::try_from(key >> 3).ok()?;
        let value = match (key & 7) as u32 {
            VARINT => Field::Varint(self.varint()?),
            FIXED64 => Field::Fixed64(u64::from_le_bytes(self.take(8)?.try_into().ok()?)),
            FIXED32 => Field::Fixed32(u32::from_le_bytes(self.take(4)?.try_into().ok()?)),
            LEN => {
                let n = usize::try_from(self.varint()?).ok()?;
                Field::Len(self.take(n)?)
            }
            _ => None?,
        };
        Some((field, value))
    }
}
