//! Typed values: what a JSON document becomes once it passed the decoder of its [`Ty`].
//!
//! A [`Value`] does not carry its type: a struct is the vector of its field values in
//! declaration order, an enum value is a variant index and that variant's fields, so reading a
//! field is an index, never a name lookup. The type is needed again to print a value as JSON
//! ([`Value::to_json_string`], [`Value::to_json`]), which is canonical and deterministic:
//!
//! - no whitespace; struct fields in declaration order; a struct field whose value is `none` is
//!   omitted (absent is `none`); `none` anywhere else is `null`;
//! - a data-enum value is an object whose first key is the tag (`{"type":"circle","radius":1.5}`),
//!   a unit-enum value is the variant's name as a string;
//! - map entries are kept sorted by key (the decoder sorts them), so equal maps print equally;
//! - floats print as the shortest text that reads back as the same `f64` (`1e300`, `0.1`);
//!   integers print exactly (`18446744073709551615`).
//!
//! Intermediate values computed by expressions are not bounded (spec §5); only the decoder and
//! [`crate::validate::validate_value`] relate a value to the bounds of its type.

use crate::ty::{DefKind, Ty, TypeTable};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The text of a [`Value::Str`]: a string that keeps up to 24 bytes inline, so short texts
/// (tags, names, codes: most of what a model writes in a bounded type) cost no allocation.
/// It dereferences to `str`; `Text::from(String)` keeps a long string's buffer.
pub type Text = compact_str::CompactString;

/// A typed value. Serialized (into `ir.json`, for constants) externally tagged:
/// `{"int": 3}`, `{"str": "x"}`, `{"struct": [{"bool": true}]}`, `"none"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Value {
    Bool(bool),
    /// Every integer type; wide enough that `u64` and `i64` arithmetic cannot silently wrap.
    /// Serialized as a JSON integer, or as a decimal string outside `i64`/`u64`.
    Int(
        #[serde(with = "wide_int")]
        #[schemars(with = "wide_int::WideInt")]
        i128,
    ),
    /// A finite float (`f32` values are stored widened).
    Float(f64),
    Str(Text),
    /// `List<T, N>` and `Set<T, N>`, items in document order.
    List(Vec<Value>),
    /// `Map<K, V, N>`: entries sorted by key, keys distinct. A unit-enum key is its variant name.
    Map(Vec<(String, Value)>),
    /// `none`, the empty `Option<T>`. A `some(v)` is `v` itself, with no wrapper: the compiler
    /// refuses `Option<Option<T>>` (E0304), so a value of an `Option` type is `none` or a `T`,
    /// never both, and an optional field costs no allocation of its own.
    None,
    /// Field values in declaration order.
    Struct(Vec<Value>),
    /// A variant of an enum; `fields` is empty for a unit variant.
    Enum {
        variant: u32,
        fields: Vec<Value>,
    },
    Media(Box<MediaRef>),
}

/// A media reference (spec §7). The fields are the JSON object's keys; `ref` is `reference`.
/// [`crate::media::MEDIA_FIELDS`] lists them with which are required.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MediaRef {
    /// `holon://files/…`.
    #[serde(rename = "ref")]
    pub reference: String,
    pub content_type: String,
    pub size: u64,
    /// 64 lowercase hex digits.
    pub sha256: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_rate: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<u64>,
}

impl Value {
    /// `some(v)`: `v` itself (see [`Value::None`]).
    pub fn some(v: Value) -> Value {
        v
    }

    /// The canonical JSON text of this value read as a `ty` (see the module doc). A value that
    /// does not fit `ty` (which validation rules out) prints what it can rather than failing.
    pub fn to_json_string(&self, ty: &Ty, table: &TypeTable) -> String {
        let mut out = String::new();
        write_json(self, Some(ty), table, &mut out);
        out
    }

    /// The canonical JSON of this value as a `serde_json::Value` (same rules as
    /// [`Value::to_json_string`]; integers outside `i64`/`u64` become floats there).
    pub fn to_json(&self, ty: &Ty, table: &TypeTable) -> serde_json::Value {
        let text = self.to_json_string(ty, table);
        serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
    }

    /// A short name of the kind of value, for evaluation errors.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Bool(_) => "bool",
            Value::Int(_) => "integer",
            Value::Float(_) => "float",
            Value::Str(_) => "text",
            Value::List(_) => "list",
            Value::Map(_) => "map",
            Value::None => "none",
            Value::Struct(_) => "struct",
            Value::Enum { .. } => "enum",
            Value::Media(_) => "media reference",
        }
    }
}

/// Appends `s` as a JSON string literal.
pub fn write_json_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write_float(f: f64, out: &mut String) {
    if f.is_finite() {
        // serde_json prints the shortest round-trip text (ryu), e.g. `1e300`, `0.1`.
        match serde_json::to_string(&f) {
            Ok(s) => out.push_str(&s),
            Err(_) => out.push_str("null"),
        }
    } else {
        out.push_str("null");
    }
}

/// Writes `v` read as `ty` (`None`: untyped, best effort) into `out`.
fn write_json(v: &Value, ty: Option<&Ty>, table: &TypeTable, out: &mut String) {
    // A `some` is its value, written as the `Option`'s inner type.
    let ty = match ty.and_then(|t| table.resolve(t)) {
        Some(Ty::Option { some }) => table.resolve(some),
        other => other,
    };
    match v {
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) => write_float(*f, out),
        Value::Str(s) => write_json_str(s, out),
        Value::List(items) => {
            let item_ty = match ty {
                Some(Ty::List(l)) => Some(&*l.item),
                _ => None,
            };
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, item_ty, table, out);
            }
            out.push(']');
        }
        Value::Map(entries) => {
            let value_ty = match ty {
                Some(Ty::Map(m)) => Some(&*m.value),
                _ => None,
            };
            out.push('{');
            for (i, (k, item)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_str(k, out);
                out.push(':');
                write_json(item, value_ty, table, out);
            }
            out.push('}');
        }
        Value::None => out.push_str("null"),
        Value::Struct(fields) => {
            let decl = match ty {
                Some(Ty::Ref { def }) => match table.get(*def).map(|d| &d.kind) {
                    Some(DefKind::Struct { fields }) => Some(fields.as_slice()),
                    _ => None,
                },
                _ => None,
            };
            out.push('{');
            write_fields(fields, decl, table, out, false);
            out.push('}');
        }
        Value::Enum { variant, fields } => {
            let def = match ty {
                Some(Ty::Ref { def }) => table.get(*def).map(|d| &d.kind),
                _ => None,
            };
            let Some(DefKind::Enum { tag, variants }) = def else {
                out.push_str(&variant.to_string());
                return;
            };
            let Some(var) = variants.get(*variant as usize) else {
                out.push_str("null");
                return;
            };
            let is_unit_enum = variants.iter().all(|v| v.fields.is_none());
            if is_unit_enum {
                write_json_str(&var.name, out);
                return;
            }
            out.push('{');
            write_json_str(tag, out);
            out.push(':');
            write_json_str(&var.name, out);
            write_fields(fields, var.fields.as_deref(), table, out, true);
            out.push('}');
        }
        Value::Media(m) => match serde_json::to_string(m) {
            Ok(s) => out.push_str(&s),
            Err(_) => out.push_str("null"),
        },
    }
}

fn write_fields(
    fields: &[Value],
    decl: Option<&[crate::ty::FieldTy]>,
    table: &TypeTable,
    out: &mut String,
    mut need_comma: bool,
) {
    for (i, field) in fields.iter().enumerate() {
        if matches!(field, Value::None) {
            continue;
        }
        if need_comma {
            out.push(',');
        }
        need_comma = true;
        let fdecl = decl.and_then(|d| d.get(i));
        match fdecl {
            Some(f) => write_json_str(&f.name, out),
            None => write_json_str(&i.to_string(), out),
        }
        out.push(':');
        write_json(field, fdecl.map(|f| &f.ty), table, out);
    }
}

/// Serde for `i128` that survives serde's buffering (internally tagged enums hold no `i128`):
/// a JSON integer when it fits `i64`/`u64`, a decimal string otherwise.
mod wide_int {
    use serde::{de, Deserializer, Serializer};

    /// The schema of a wide integer: an integer, or its decimal digits as a string.
    #[derive(schemars::JsonSchema)]
    #[serde(untagged)]
    #[allow(dead_code)] // only its schema is used
    pub enum WideInt {
        Int(i64),
        Digits(String),
    }

    pub fn serialize<S: Serializer>(v: &i128, s: S) -> Result<S::Ok, S::Error> {
        if let Ok(small) = i64::try_from(*v) {
            s.serialize_i64(small)
        } else if let Ok(big) = u64::try_from(*v) {
            s.serialize_u64(big)
        } else {
            s.serialize_str(&v.to_string())
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i128, D::Error> {
        struct Visit;
        impl de::Visitor<'_> for Visit {
            type Value = i128;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an integer or its decimal digits")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<i128, E> {
                Ok(v.into())
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<i128, E> {
                Ok(v.into())
            }
            fn visit_i128<E: de::Error>(self, v: i128) -> Result<i128, E> {
                Ok(v)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<i128, E> {
                v.parse().map_err(|_| E::custom("not an integer"))
            }
        }
        d.deserialize_any(Visit)
    }
}
