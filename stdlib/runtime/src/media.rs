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

/// The most characters each text field of a reference may have: what the decoder enforces
/// ([`check_media`]) and the emitted schema says (`maxLength`), so the two agree (spec §4).
pub mod bounds {
    /// `ref`: `holon://files/…`.
    pub const REF_MAX_LEN: u32 = 512;
    /// `content_type`: RFC 6838 allows 127 characters each for type and subtype.
    pub const CONTENT_TYPE_MAX_LEN: u32 = 255;
    /// `sha256`: exactly 64 lowercase hex digits.
    pub const SHA256_LEN: u32 = 64;
    /// `expires_at`: an RFC 3339 date-time.
    pub const EXPIRES_AT_MAX_LEN: u32 = 64;
    /// `source`: who supplied the file (`upload:caller-42`).
    pub const SOURCE_MAX_LEN: u32 = 256;
}

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

/// Checks a decoded reference against its declaration (before anything is fetched): the `ref`
/// prefix, the SHA-256 spelling, the content type, size, pixels, duration and sample rate.
/// Returns `(field name, issue)` pairs in field order. Expiry needs a clock and is checked
/// where the reference is used.
pub fn check_media(
    m: &crate::value::MediaRef,
    ty: &crate::ty::MediaTy,
) -> Vec<(&'static str, crate::bounds::Issue)> {
    use crate::error::Code;
    let mut issues = Vec::new();
    let texts = [
        ("ref", Some(m.reference.as_str()), bounds::REF_MAX_LEN),
        (
            "content_type",
            Some(m.content_type.as_str()),
            bounds::CONTENT_TYPE_MAX_LEN,
        ),
        (
            "expires_at",
            m.expires_at.as_deref(),
            bounds::EXPIRES_AT_MAX_LEN,
        ),
        ("source", m.source.as_deref(), bounds::SOURCE_MAX_LEN),
    ];
    for (name, text, max) in texts {
        // Characters, as JSON Schema's maxLength counts them; bytes bound them first.
        let Some(text) = text.filter(|t| t.len() > max as usize) else {
            continue;
        };
        let chars = text.chars().count();
        if chars > max as usize {
            issues.push((
                name,
                (
                    Code::TooLong,
                    format!("{name} has {chars} characters, at most {max} are allowed"),
                ),
            ));
        }
    }
    if !m.reference.starts_with(REF_PREFIX) || m.reference.len() == REF_PREFIX.len() {
        issues.push((
            "ref",
            (
                Code::InvalidFormat,
                format!("a media reference must start with {REF_PREFIX}"),
            ),
        ));
    }
    if ty.content_types.is_empty() {
        if let Some(prefix) = content_type_prefix(ty.kind) {
            if !m.content_type.starts_with(prefix) {
                issues.push((
                    "content_type",
                    (
                        Code::UnknownVariant,
                        format!(
                            "content type {} is not accepted; expected {prefix}…",
                            m.content_type
                        ),
                    ),
                ));
            }
        }
    } else if !ty.content_types.contains(&m.content_type) {
        issues.push((
            "content_type",
            (
                Code::UnknownVariant,
                format!(
                    "content type {} is not accepted; expected one of {}",
                    m.content_type,
                    ty.content_types.join(", ")
                ),
            ),
        ));
    }
    if m.size > ty.max_bytes {
        issues.push((
            "size",
            (
                Code::TooLarge,
                format!(
                    "the file has {} bytes, at most {} are allowed",
                    m.size, ty.max_bytes
                ),
            ),
        ));
    }
    let is_hex = m.sha256.len() == 64
        && m.sha256
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if !is_hex {
        issues.push((
            "sha256",
            (
                Code::InvalidFormat,
                "sha256 must be 64 lowercase hex digits".to_owned(),
            ),
        ));
    }
    if let Some(at) = &m.expires_at {
        if !crate::format::is_valid(crate::ty::Format::DateTime, at) {
            issues.push((
                "expires_at",
                (
                    Code::InvalidFormat,
                    format!(
                        "text is not {}",
                        crate::format::describe(crate::ty::Format::DateTime)
                    ),
                ),
            ));
        }
    }
    if let Some((max_w, max_h)) = ty.max_pixels {
        for (name, got, max) in [("width", m.width, max_w), ("height", m.height, max_h)] {
            if let Some(got) = got.filter(|g| *g > u64::from(max)) {
                issues.push((
                    name,
                    (
                        Code::OutOfRange,
                        format!("{name} is {got} pixels, at most {max} are allowed"),
                    ),
                ));
            }
        }
    }
    if let (Some(max), Some(got)) = (ty.max_duration_ms, m.duration_ms) {
        if got > max {
            issues.push((
                "duration_ms",
                (
                    Code::OutOfRange,
                    format!("the duration is {got} ms, at most {max} ms are allowed"),
                ),
            ));
        }
    }
    if let (Some(want), Some(got)) = (ty.sample_rate, m.sample_rate) {
        if got != u64::from(want) {
            issues.push((
                "sample_rate",
                (
                    Code::OutOfRange,
                    format!("the sample rate is {got} Hz, {want} Hz is required"),
                ),
            ));
        }
    }
    issues
}
