//! The largest JSON encoding of a bounded type, in bytes (spec §6: the default `max_answer`).
//!
//! Every AEL type is bounded, so every valid value has a largest encoding. "Largest" is over the
//! ways a JSON writer (a model included) may spell the same value, not only over values:
//!
//! - **Escapes**, exactly: any character of any string (text, keys, enum variants and tags,
//!   media fields) may be written as an escape. A character of the Basic Multilingual Plane
//!   takes at most 6 bytes (`\u00e9`), one beyond it 12 (a surrogate pair, `\ud83d\ude00`, as
//!   Python's `json.dumps` writes it by default). So a `Str<4>` is at most 4 × 12 + 2 bytes.
//! - **Numbers** as the common writers print them: an integer in decimal, or followed by `.0`
//!   (writers that hold every number as a double, Python's for one), or, past 10^16, in the
//!   exponent form of such a writer (`-1.2345678901234567e+18`); a float in the longest
//!   shortest-round-trip spelling, [`FLOAT_MAX_LEN`] = 25 bytes
//!   (`-0.0000012345678901234567`: JavaScript and Go print numbers from 10^-6 to 10^21 without
//!   an exponent).
//! - **Layout** as the common writers lay it out: compact, or pretty-printed with at most
//!   [`INDENT`] = 4 spaces per level (`json.dumps(v, indent=4)`; `JSON.stringify(v, null, 2)`
//!   and `serde_json`'s pretty printer are narrower), `": "` after keys and a line break before
//!   every member and closing bracket of a non-empty container. A pretty-printed value is never
//!   shorter than its compact form, nor than Python's default `", "`/`": "` separators, so the
//!   bound is the pretty-printed size.
//!
//! The decoder accepts more than that, and no finite bound could: any amount of whitespace
//! between tokens (wider indents, blank lines, `\r\n`), and numbers padded with zeros
//! (`1.000`, `1e007`). An answer laid out like that may be refused as `too_large`; a model that
//! writes so sets `max_answer` explicitly. Within the rules above the number is exact (attained
//! by some valid value written some allowed way) for booleans, integers, unconstrained strings,
//! lists, structs, enums, options and media references; it is a safe upper bound where an exact
//! answer would need a solver:
//!
//! - floats get [`FLOAT_MAX_LEN`] whatever their range or width (`f32` values are printed
//!   widened to `f64` by most writers);
//! - strings with a `pattern` or `format` are bounded as if unconstrained;
//! - distinct items (`Set`, map keys) are counted as if every item could be the widest, except
//!   that a set or map over `bool` or a unit enum holds at most that many distinct values.
//!
//! Recursive types are bounded by the platform's nesting limit (spec §8,
//! [`limits::MAX_DEPTH`]): a value may open at most 64 arrays or objects inside each other. The
//! computation is memoized per (definition, remaining depth) (the depth also fixes the
//! indentation), so it is linear in the size of the type table times 64, never exponential and
//! never unbounded; all arithmetic saturates at `u64::MAX`.

use std::collections::{HashMap, HashSet};

use foldhash::fast::FixedState;

use aelc_runtime::media::MEDIA_FIELDS;
use aelc_runtime::ty::{limits, DefId, DefKind, FieldTy, IntTy, MediaTy, Ty, TypeTable};

/// The widest shortest-round-trip text of a finite `f64` as the common writers print it:
/// `-0.0000012345678901234567` (JavaScript, Go; `serde_json`'s ryu stops at 24 bytes).
pub const FLOAT_MAX_LEN: u64 = 25;
/// The widest escape of one Unicode scalar value inside a JSON string: a surrogate pair of two
/// `\uXXXX` escapes for a character beyond U+FFFF (`\ud83d\ude00`).
pub const MAX_BYTES_PER_CHAR: u64 = 12;
/// The widest escape of a character of the Basic Multilingual Plane (`\u00e9`).
pub const MAX_BYTES_PER_BMP_CHAR: u64 = 6;
/// The widest indentation per nesting level of a pretty-printed answer, in spaces.
pub const INDENT: u64 = 4;
/// Room for one markdown code fence around an answer: "```json\n" before and "\n```" after.
pub const CODE_FENCE_LEN: u64 = ("```json\n".len() + "\n```".len()) as u64;

/// The length bounds of a media reference's text fields: the runtime's, which the decoder
/// enforces and the schema emitter writes.
pub use aelc_runtime::media::bounds as media_bounds;

/// The largest JSON encoding, in bytes, of any valid value of `ty` written in any of the ways
/// the module documentation lists. A type with no valid value within the platform bounds
/// (which the compiler rejects) gives 0.
pub fn max_json_len(ty: &Ty, types: &TypeTable) -> u64 {
    Sizer::new(types).widest(ty).unwrap_or(0)
}

/// The default `max_answer` of a node with output type `ty`: its largest encoding plus room
/// for one code fence (spec §6, step 2 accepts one fence).
pub fn default_max_answer(ty: &Ty, types: &TypeTable) -> u64 {
    max_json_len(ty, types).saturating_add(CODE_FENCE_LEN)
}

/// Whether `ty` has any valid value that nests at most 64 arrays and objects deep.
pub fn fits_depth_limit(ty: &Ty, types: &TypeTable) -> bool {
    Sizer::new(types).widest(ty).is_some()
}

struct Sizer<'a> {
    types: &'a TypeTable,
    /// `(definition, containers still allowed)` → widest encoding, `None` if no value fits.
    /// (foldhash: std's SipHash was most of the sizer's time, which every node pays twice.)
    memo: HashMap<(DefId, u32), Option<u64>, FixedState>,
    /// Definitions being computed at a depth; meeting one again means a cycle that opens no
    /// container (`type A = Option<A>`), which adds no wider value.
    in_progress: HashSet<(DefId, u32), FixedState>,
}

impl<'a> Sizer<'a> {
    fn new(types: &'a TypeTable) -> Sizer<'a> {
        Sizer {
            types,
            memo: HashMap::default(),
            in_progress: HashSet::default(),
        }
    }

    /// The widest encoding of a `ty` value within the platform's nesting limit; `None` when
    /// no value fits it.
    fn widest(&mut self, ty: &Ty) -> Option<u64> {
        self.len(ty, limits::MAX_DEPTH as u32)
    }

    /// The widest encoding of a `ty` value that opens at most `depth` nested containers.
    fn len(&mut self, ty: &Ty, depth: u32) -> Option<u64> {
        match ty {
            Ty::Bool => Some(5),
            Ty::Int(int) => Some(int_max_len(int)),
            Ty::Float(_) => Some(FLOAT_MAX_LEN),
            Ty::Str(s) => Some(str_max_len(s.max)),
            Ty::Option { some } => Some(self.len(some, depth).map_or(4, |n| n.max(4))),
            Ty::List(list) => {
                let inner = depth.checked_sub(1)?;
                let distinct = if list.unique {
                    self.cardinality(&list.item)
                } else {
                    None
                };
                let widths = self.item_widths(&list.item, inner, list.max, distinct);
                container(widths, list.min, level(inner), false)
            }
            Ty::Map(map) => {
                let inner = depth.checked_sub(1)?;
                let value = self.len(&map.value, inner);
                let keys = self.item_widths(&map.key, inner, map.max, self.cardinality(&map.key));
                let widths = value.map(|v| {
                    keys.iter()
                        // `"key":value`
                        .map(|k| k.saturating_add(1).saturating_add(v))
                        .collect::<Vec<u64>>()
                });
                container(widths.unwrap_or_default(), map.min, level(inner), true)
            }
            Ty::Media(media) => {
                let inner = depth.checked_sub(1)?;
                Some(media_len(media, level(inner)))
            }
            Ty::Ref { def } => self.def_len(*def, depth),
        }
    }

    fn def_len(&mut self, def: DefId, depth: u32) -> Option<u64> {
        if let Some(known) = self.memo.get(&(def, depth)) {
            return *known;
        }
        if !self.in_progress.insert((def, depth)) {
            return None;
        }
        let types = self.types;
        let result = match types.get(def).map(|d| &d.kind) {
            None => None,
            Some(DefKind::Alias { ty }) => self.len(ty, depth),
            Some(DefKind::Struct { fields }) => match depth.checked_sub(1) {
                None => None,
                Some(inner) => self.object_len(fields, inner, None),
            },
            Some(DefKind::Enum { tag, variants }) => {
                if variants.iter().all(|v| v.fields.is_none()) {
                    variants.iter().map(|v| json_str_len(&v.name)).max()
                } else {
                    match depth.checked_sub(1) {
                        None => None,
                        Some(inner) => {
                            let mut widest = None;
                            for variant in variants {
                                // `"tag":"variant"` leads every arm.
                                let tag_len = json_str_len(tag)
                                    .saturating_add(1)
                                    .saturating_add(json_str_len(&variant.name));
                                let fields = variant.fields.as_deref().unwrap_or_default();
                                let arm = self.object_len(fields, inner, Some(tag_len));
                                widest = widest.max(arm);
                            }
                            widest
                        }
                    }
                }
            }
        };
        self.in_progress.remove(&(def, depth));
        self.memo.insert((def, depth), result);
        result
    }

    /// An object holding a member of `lead` bytes first (a tag), then `fields`. A field that
    /// may be absent and has no value fitting the depth is left out.
    fn object_len(&mut self, fields: &[FieldTy], inner: u32, lead: Option<u64>) -> Option<u64> {
        let mut members: Vec<u64> = Vec::with_capacity(fields.len() + 1);
        members.extend(lead);
        for field in fields {
            match self.len(&field.ty, inner) {
                Some(value) => members.push(
                    json_str_len(&field.name)
                        .saturating_add(1)
                        .saturating_add(value),
                ),
                None if field.is_required() => return None,
                None => {}
            }
        }
        Some(joined(&members, level(inner), true))
    }

    /// The widths of the `max` widest items an array (or the keys a map) can hold: one entry
    /// per item, widest first. `distinct` caps the count for sets of a small domain.
    fn item_widths(&mut self, item: &Ty, depth: u32, max: u32, distinct: Option<u64>) -> Vec<u64> {
        let count = u64::from(max).min(distinct.unwrap_or(u64::MAX));
        // Distinct unit-enum values: the widest `count` variant names. Without distinctness
        // every item may be the widest name.
        if let Some(names) = self.unit_variant_widths(item) {
            let mut widths = names;
            widths.sort_unstable_by(|a, b| b.cmp(a));
            if distinct.is_none() {
                let widest = widths.first().copied().unwrap_or(0);
                return vec![widest; count as usize];
            }
            widths.truncate(count as usize);
            return widths;
        }
        match self.len(item, depth) {
            Some(width) if distinct.is_some() && matches!(self.resolve(item), Some(Ty::Bool)) => {
                // `[true,false]` or `[false]`.
                let mut widths = vec![width, 4];
                widths.truncate(count as usize);
                widths
            }
            Some(width) => vec![width; count as usize],
            None => Vec::new(),
        }
    }

    fn resolve<'t>(&'t self, ty: &'t Ty) -> Option<&'t Ty> {
        self.types.resolve(ty)
    }

    /// The quoted names of a unit enum's variants, if `ty` is one.
    fn unit_variant_widths(&self, ty: &Ty) -> Option<Vec<u64>> {
        let Some(Ty::Ref { def }) = self.resolve(ty) else {
            return None;
        };
        match &self.types.get(*def)?.kind {
            DefKind::Enum { variants, .. } if variants.iter().all(|v| v.fields.is_none()) => {
                Some(variants.iter().map(|v| json_str_len(&v.name)).collect())
            }
            _ => None,
        }
    }

    /// How many distinct values `ty` has, when that is small enough to matter.
    fn cardinality(&self, ty: &Ty) -> Option<u64> {
        match self.resolve(ty)? {
            Ty::Bool => Some(2),
            Ty::Int(int) => {
                let hi = if int.max_exclusive {
                    int.max - 1
                } else {
                    int.max
                };
                u64::try_from(hi.saturating_sub(int.min).saturating_add(1)).ok()
            }
            _ => self.unit_variant_widths(ty).map(|v| v.len() as u64),
        }
    }
}

/// The indentation level of the members of a container whose members may still open `inner`
/// containers: 1 for the members of the outermost one.
fn level(inner: u32) -> u64 {
    u64::from((limits::MAX_DEPTH as u32).saturating_sub(inner))
}

/// Brackets around members joined by commas; `None` if fewer than `min` members exist.
fn container(widths: Vec<u64>, min: u32, level: u64, object: bool) -> Option<u64> {
    if (widths.len() as u64) < u64::from(min) {
        return None;
    }
    Some(joined(&widths, level, object))
}

/// `{a,b,c}` or `[a,b,c]` pretty-printed: two brackets, the members (each `"key":value` for an
/// object) and a comma between each two, and for a non-empty container a line break and
/// [`INDENT`] spaces per `level` before each member, a line break and one level less before
/// the closing bracket, and a space after each key's colon.
fn joined(members: &[u64], level: u64, object: bool) -> u64 {
    let count = members.len() as u64;
    let commas = count.saturating_sub(1);
    let compact = members
        .iter()
        .fold(2u64.saturating_add(commas), |acc, m| acc.saturating_add(*m));
    if count == 0 {
        return compact;
    }
    let before_member = INDENT.saturating_mul(level).saturating_add(1);
    let before_close = INDENT
        .saturating_mul(level.saturating_sub(1))
        .saturating_add(1);
    let after_colons = if object { count } else { 0 };
    compact
        .saturating_add(count.saturating_mul(before_member))
        .saturating_add(before_close)
        .saturating_add(after_colons)
}

/// The widest spelling of an integer in the range: the wider of its two ends in decimal with
/// `.0`, or a double writer's exponent form when the range reaches 10^16.
fn int_max_len(int: &IntTy) -> u64 {
    let hi = if int.max_exclusive {
        int.max.saturating_sub(1)
    } else {
        int.max
    };
    int_spelling_len(int.min).max(int_spelling_len(hi))
}

/// The widest spelling of the integers between 0 and `v` (inclusive) of the same sign as `v`.
fn int_spelling_len(v: i128) -> u64 {
    // `-9223372036854775808.0`
    let decimal = decimal_len(v).saturating_add(2);
    // 17 significant digits and an exponent: `-1.2345678901234567e+18`, for a magnitude of
    // 10^16 and more, where a double holds no more digits and a writer switches to the
    // exponent form (Python from 10^16, JavaScript from 10^21).
    let magnitude = v.unsigned_abs();
    if magnitude < 10u128.pow(16) {
        return decimal;
    }
    let exponent = u128::from(digits(magnitude) - 1);
    let exponent_form = u64::from(v < 0) + "1.2345678901234567e+".len() as u64 + digits(exponent);
    decimal.max(exponent_form)
}

fn decimal_len(v: i128) -> u64 {
    u64::from(v < 0) + digits(v.unsigned_abs())
}

/// The number of decimal digits of `magnitude`.
fn digits(mut magnitude: u128) -> u64 {
    let mut digits = 1;
    while magnitude >= 10 {
        magnitude /= 10;
        digits += 1;
    }
    digits
}

/// Two quotes and at most [`MAX_BYTES_PER_CHAR`] per character.
fn str_max_len(max_chars: u32) -> u64 {
    u64::from(max_chars)
        .saturating_mul(MAX_BYTES_PER_CHAR)
        .saturating_add(2)
}

/// The widest spelling of the fixed text `s` (a key, a variant name, a tag) as a JSON string:
/// every character escaped.
fn json_str_len(s: &str) -> u64 {
    let inner: u64 = s
        .chars()
        .map(|c| {
            if u32::from(c) > 0xFFFF {
                MAX_BYTES_PER_CHAR
            } else {
                MAX_BYTES_PER_BMP_CHAR
            }
        })
        .sum();
    inner + 2
}

/// A media reference with every key present at its widest (spec §7), as the root of an answer.
pub fn media_max_len(media: &MediaTy) -> u64 {
    media_len(media, 1)
}

/// A media reference whose keys are at indentation `level`.
fn media_len(media: &MediaTy, level: u64) -> u64 {
    let members: Vec<u64> = MEDIA_FIELDS
        .iter()
        .map(|field| {
            let value = media_field_max_len(media, field.name);
            json_str_len(field.name)
                .saturating_add(1)
                .saturating_add(value)
        })
        .collect();
    joined(&members, level, true)
}

/// The widest value of one key of a media reference, as the emitted schema bounds it.
pub fn media_field_max_len(media: &MediaTy, key: &str) -> u64 {
    use media_bounds::*;
    // `18446744073709551615.0`
    let count = |max: u64| int_spelling_len(i128::from(max));
    let u64_len = count(u64::MAX);
    match key {
        "ref" => str_max_len(REF_MAX_LEN),
        "content_type" => {
            if media.content_types.is_empty() {
                str_max_len(CONTENT_TYPE_MAX_LEN)
            } else {
                media
                    .content_types
                    .iter()
                    .map(|t| json_str_len(t))
                    .max()
                    .unwrap_or(2)
            }
        }
        "sha256" => str_max_len(SHA256_LEN),
        "expires_at" => str_max_len(EXPIRES_AT_MAX_LEN),
        "source" => str_max_len(SOURCE_MAX_LEN),
        "size" => count(media.max_bytes),
        "width" => media
            .max_pixels
            .map_or(u64_len, |(w, _)| count(u64::from(w))),
        "height" => media
            .max_pixels
            .map_or(u64_len, |(_, h)| count(u64::from(h))),
        "duration_ms" => media.max_duration_ms.map_or(u64_len, count),
        "sample_rate" => media.sample_rate.map_or(u64_len, |r| count(u64::from(r))),
        _ => u64_len,
    }
}
