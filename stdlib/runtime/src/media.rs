//! The JSON shape of a media reference (spec §7), shared by the decoder, `validate_value`, the
//! evaluator's field reads and the schema emitter.
//!
//! A reference is an object with exactly these keys (unknown keys are errors); the order here
//! is the field index that [`crate::expr::Expr::Field`] uses on a media value.

/// What a media field holds in JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MediaFieldKind {
    /// A JSON string.
    Text,
    /// A non-negative integer (`u64`).
    Count,
}

/// One key of a media reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MediaField {
    pub name: &'static str,
    pub kind: MediaFieldKind,
    pub required: bool,
}

const fn field(name: &'static str, kind: MediaFieldKind, required: bool) -> MediaField {
    MediaField {
        name,
        kind,
        required,
    }
}

/// Every key of a media reference, in field-index order.
pub const MEDIA_FIELDS: [MediaField; 11] = [
    field("ref", MediaFieldKind::Text, true),
    field("content_type", MediaFieldKind::Text, true),
    field("size", MediaFieldKind::Count, true),
    field("sha256", MediaFieldKind::Text, true),
    field("expires_at", MediaFieldKind::Text, false),
    field("source", MediaFieldKind::Text, false),
    field("width", MediaFieldKind::Count, false),
    field("height", MediaFieldKind::Count, false),
    field("duration_ms", MediaFieldKind::Count, false),
    field("sample_rate", MediaFieldKind::Count, false),
    field("pages", MediaFieldKind::Count, false),
];

/// Every reference starts with this (`holon://files/9f3c…`).
pub const REF_PREFIX: &str = "holon://files/";

/// The content-type prefix of each kind (`image/png` is an image); `File` takes any.
pub fn content_type_prefix(kind: crate::ty::MediaKind) -> Option<&'static str> {
    match kind {
        crate::ty::MediaKind::Image => Some("image/"),
        crate::ty::MediaKind::Audio => Some("audio/"),
        crate::ty::MediaKind::Video => Some("video/"),
        crate::ty::MediaKind::File => None,
    }
}
