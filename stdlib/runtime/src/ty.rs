//! Bounded type descriptions: what every AEL type means once names and refinements are resolved.
//!
//! The compiler lowers `Str<4000>`, `u16<1..=50>`, `List<Finding, 50>`, structs and enums into a
//! [`TypeTable`] of [`TypeDef`]s and [`Ty`]s. The JSON Schema emitter, the decoder, the pipeline
//! and generated Rust code all read these descriptions, so they agree by construction.
//!
//! Invariants (established by the compiler, relied on here):
//! - every bound is already inside its base range (`u8` never has `hi > 255`);
//! - `Str` has `1 <= max <= 16_777_216` and `min <= max`; `List` has `max <= 10_000`; a
//!   `List` with `unique` (a `Set`) has `max <= 1_000`;
//! - every [`DefId`] indexes `TypeTable::defs`;
//! - a cycle between definitions passes through `Option`, `List` or `Map`.

use crate::patterns::Patterns;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The index of a named type in [`TypeTable::defs`].
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
pub struct DefId(pub u32);

/// All named types of a program (structs, enums, aliases).
#[derive(Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TypeTable {
    pub defs: Vec<TypeDef>,
    /// The `@pattern`s (and the program's `matches`) compiled so far, shared by every decoder,
    /// validator and evaluator over this table on every thread: what a table's patterns
    /// compile to depends on the program alone, so it is done once per program, not per
    /// decoder (that is, per request in a gateway). Never serialized; a clone shares it.
    #[serde(skip)]
    #[schemars(skip)]
    patterns: Patterns,
}

/// The definitions only: what has been compiled so far is not part of a table's meaning.
impl std::fmt::Debug for TypeTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypeTable")
            .field("defs", &self.defs)
            .finish()
    }
}

impl TypeTable {
    /// A table of `defs`, with nothing compiled yet.
    pub fn new(defs: Vec<TypeDef>) -> TypeTable {
        TypeTable {
            defs,
            patterns: Patterns::default(),
        }
    }

    /// The table's compiled patterns (see [`TypeTable::patterns`]'s field).
    pub fn patterns(&self) -> &Patterns {
        &self.patterns
    }

    pub fn get(&self, id: DefId) -> Option<&TypeDef> {
        self.defs.get(id.0 as usize)
    }

    /// Whether a value of `ty` can hold a media reference anywhere inside it (so checking it
    /// may read the file store). A dangling id counts as yes: the answer errs on the side of
    /// caution.
    pub fn can_hold_media(&self, ty: &Ty) -> bool {
        let mut seen = vec![false; self.defs.len()];
        let mut stack = vec![ty];
        while let Some(ty) = stack.pop() {
            match ty {
                Ty::Media(_) => return true,
                Ty::Bool | Ty::Int(_) | Ty::Float(_) | Ty::Str(_) => {}
                Ty::List(list) => stack.push(&list.item),
                Ty::Map(map) => stack.extend([&*map.key, &*map.value]),
                Ty::Option { some } => stack.push(some),
                Ty::Ref { def } => {
                    let Some(def_ty) = self.get(*def) else {
                        return true;
                    };
                    if std::mem::replace(&mut seen[def.0 as usize], true) {
                        continue;
                    }
                    match &def_ty.kind {
                        DefKind::Struct { fields } => stack.extend(fields.iter().map(|f| &f.ty)),
                        DefKind::Enum { variants, .. } => stack.extend(
                            variants
                                .iter()
                                .flat_map(|v| v.fields.iter().flatten())
                                .map(|f| &f.ty),
                        ),
                        DefKind::Alias { ty } => stack.push(ty),
                    }
                }
            }
        }
        false
    }

    /// Follows aliases until a non-alias type; `None` if an id is dangling or aliases loop.
    pub fn resolve<'a>(&'a self, mut ty: &'a Ty) -> Option<&'a Ty> {
        for _ in 0..=self.defs.len() {
            match ty {
                Ty::Ref { def } => match &self.get(*def)?.kind {
                    DefKind::Alias { ty: inner } => ty = inner,
                    _ => return Some(ty),
                },
                _ => return Some(ty),
            }
        }
        None
    }
}

/// A named type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TypeDef {
    /// The name as written (`ReviewRequest`).
    pub name: String,
    /// The module path it is declared in (`nodes::review`), for unique `$defs` keys.
    pub module: String,
    /// The doc comment, which becomes the schema `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docs: Option<String>,
    pub kind: DefKind,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DefKind {
    Struct {
        fields: Vec<FieldTy>,
    },
    /// A unit enum when every variant has `fields: None`; a data enum (tagged objects) otherwise.
    Enum {
        /// The tag field of a data enum: `"type"` unless written `@tag("…")`.
        tag: String,
        variants: Vec<VariantTy>,
    },
    Alias {
        ty: Ty,
    },
}

/// A struct field or a data-variant field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FieldTy {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docs: Option<String>,
    pub ty: Ty,
    /// The default as JSON, already checked against `ty`. A field with a default, or of type
    /// `Option`, may be absent; every other field is required. Boxed: most fields have none,
    /// and a `Value` inline made every field of the program 64 bytes larger (issue 23: the
    /// checker's peak memory holds every field of the project).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Box<serde_json::Value>>,
}

impl FieldTy {
    pub fn is_required(&self) -> bool {
        self.default.is_none() && !matches!(self.ty, Ty::Option { .. })
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VariantTy {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docs: Option<String>,
    /// `None` for a unit variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<Vec<FieldTy>>,
}

/// A bounded type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Ty {
    Bool,
    Int(IntTy),
    Float(FloatTy),
    Str(StrTy),
    /// `List<T, N>`, and `Set<T, N>` with `unique`.
    List(ListTy),
    Map(MapTy),
    Option {
        some: Box<Ty>,
    },
    Ref {
        def: DefId,
    },
    /// Boxed: media types are rare, and inline (72 bytes, with its content types) the
    /// variant made every `Ty` 80 bytes rather than 48.
    Media(Box<MediaTy>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IntKind {
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
}

impl IntKind {
    /// The base range, inclusive.
    pub fn range(self) -> (i128, i128) {
        match self {
            IntKind::U8 => (0, u8::MAX as i128),
            IntKind::U16 => (0, u16::MAX as i128),
            IntKind::U32 => (0, u32::MAX as i128),
            IntKind::U64 => (0, u64::MAX as i128),
            IntKind::I8 => (i8::MIN as i128, i8::MAX as i128),
            IntKind::I16 => (i16::MIN as i128, i16::MAX as i128),
            IntKind::I32 => (i32::MIN as i128, i32::MAX as i128),
            IntKind::I64 => (i64::MIN as i128, i64::MAX as i128),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            IntKind::U8 => "u8",
            IntKind::U16 => "u16",
            IntKind::U32 => "u32",
            IntKind::U64 => "u64",
            IntKind::I8 => "i8",
            IntKind::I16 => "i16",
            IntKind::I32 => "i32",
            IntKind::I64 => "i64",
        }
    }
}

/// An integer in `min..=max`, or `min..max` when `max_exclusive` (kept so that the schema can
/// say `exclusiveMaximum` as written).
///
/// Packed to 8-byte alignment: an `i128` is 16-aligned, which made every [`Ty`] 16-aligned and
/// 16 bytes larger, and with it every field, parameter and boxed item type of a program
/// (issue 23: the checker's peak holds them all). The bounds are read by value (`{ ty.min }`
/// where a reference would be taken); the compiler refuses a reference to them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[repr(Rust, packed(8))]
pub struct IntTy {
    pub kind: IntKind,
    #[serde(with = "int_bound")]
    #[schemars(with = "i128")]
    pub min: i128,
    #[serde(with = "int_bound")]
    #[schemars(with = "i128")]
    pub max: i128,
    #[serde(default)]
    pub max_exclusive: bool,
}

/// Integer bounds as plain JSON numbers. Every bound lies in `i64::MIN..=u64::MAX`, so it is
/// written as an `i64` or a `u64`: serde's internally tagged enums (`Ty`) buffer their content in
/// a form that has no 128-bit integers, so an `i128` field could be written but not read back.
mod int_bound {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &i128, s: S) -> Result<S::Ok, S::Error> {
        if let Ok(v) = i64::try_from(*v) {
            s.serialize_i64(v)
        } else if let Ok(v) = u64::try_from(*v) {
            s.serialize_u64(v)
        } else {
            Err(serde::ser::Error::custom("integer bound outside i64..=u64"))
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i128, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Bound {
            Signed(i64),
            Unsigned(u64),
        }
        match Bound::deserialize(d) {
            Ok(Bound::Signed(v)) => Ok(i128::from(v)),
            Ok(Bound::Unsigned(v)) => Ok(i128::from(v)),
            Err(_) => Err(D::Error::custom("expected an integer in i64..=u64")),
        }
    }
}

impl IntTy {
    /// The unrefined type `u8`, `i64`, ….
    pub fn base(kind: IntKind) -> IntTy {
        let (min, max) = kind.range();
        IntTy {
            kind,
            min,
            max,
            max_exclusive: false,
        }
    }

    pub fn contains(&self, v: i128) -> bool {
        v >= self.min
            && if self.max_exclusive {
                v < self.max
            } else {
                v <= self.max
            }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FloatKind {
    F32,
    F64,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FloatBound {
    pub value: f64,
    #[serde(default)]
    pub exclusive: bool,
}

/// A finite float, optionally bounded.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FloatTy {
    pub kind: FloatKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<FloatBound>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<FloatBound>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    Email,
    Uri,
    Date,
    DateTime,
    Uuid,
}

impl Format {
    /// Every format, in the spec's order: what `@format` accepts, suggests and lists (E0306).
    pub const ALL: [Format; 5] = [
        Format::Email,
        Format::Uri,
        Format::Date,
        Format::DateTime,
        Format::Uuid,
    ];

    /// The JSON Schema `format` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Email => "email",
            Format::Uri => "uri",
            Format::Date => "date",
            Format::DateTime => "date-time",
            Format::Uuid => "uuid",
        }
    }

    pub fn parse(s: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.as_str() == s)
    }
}

/// Text of `min..=max` Unicode scalar values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StrTy {
    #[serde(default)]
    pub min: u32,
    pub max: u32,
    /// A pattern in the syntax common to RE2, ECMA-262 and Rust `regex`, matched unanchored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<Format>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ListTy {
    pub item: Box<Ty>,
    #[serde(default)]
    pub min: u32,
    pub max: u32,
    /// `Set<T, N>`: items are distinct (JSON Schema `uniqueItems`).
    #[serde(default)]
    pub unique: bool,
}

/// `Map<K, V, N>`: an object with at most `max` entries. `key` is a `Str` or a unit enum.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MapTy {
    pub key: Box<Ty>,
    pub value: Box<Ty>,
    #[serde(default)]
    pub min: u32,
    pub max: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MediaKind {
    Image,
    Audio,
    Video,
    File,
}

/// A media reference (spec §7): travels as JSON, never the bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MediaTy {
    pub kind: MediaKind,
    /// The largest `size` accepted, in bytes.
    pub max_bytes: u64,
    /// Accepted content types (`@types(…)`); empty means any of the kind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content_types: Vec<String>,
    /// `@max_pixels(w, h)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pixels: Option<(u32, u32)>,
    /// `@max_duration(30s)`, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_duration_ms: Option<u64>,
    /// `@sample_rate(16000)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_rate: Option<u32>,
}

/// The platform bounds of spec §8.
pub mod limits {
    /// Deepest nesting of arrays and objects in one payload.
    pub const MAX_DEPTH: usize = 64;
    /// Most values (every scalar, array and object counts one) in one payload.
    pub const MAX_VALUES: usize = 200_000;
    /// Most items in one array.
    pub const MAX_ITEMS: u32 = 10_000;
    /// Largest `maxItems` that `uniqueItems` may go with.
    pub const MAX_UNIQUE_ITEMS: u32 = 1_000;
    /// Largest `Str<N>`.
    pub const MAX_STR_LEN: u32 = 16_777_216;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(name: &str, kind: DefKind) -> TypeDef {
        TypeDef {
            name: name.to_owned(),
            module: "m".to_owned(),
            docs: None,
            kind,
        }
    }

    fn field(name: &str, ty: Ty) -> FieldTy {
        FieldTy {
            name: name.to_owned(),
            docs: None,
            ty,
            default: None,
        }
    }

    #[test]
    fn media_is_found_behind_recursion_and_recursion_without_it_ends() {
        let text = Ty::Str(StrTy {
            min: 0,
            max: 10,
            pattern: None,
            format: None,
        });
        let image = Ty::Media(Box::new(MediaTy {
            kind: MediaKind::Image,
            max_bytes: 1,
            content_types: Vec::new(),
            max_pixels: None,
            max_duration_ms: None,
            sample_rate: None,
        }));
        let children = |def: u32| {
            Ty::List(ListTy {
                item: Box::new(Ty::Ref { def: DefId(def) }),
                min: 0,
                max: 4,
                unique: false,
            })
        };
        let table = TypeTable::new(vec![
            // 0: struct Tree { name: Str, kids: List<Tree> } — no media, recursive.
            def(
                "Tree",
                DefKind::Struct {
                    fields: vec![field("name", text.clone()), field("kids", children(0))],
                },
            ),
            // 1: enum Node { leaf { photo: Option<Image> }, branch { kids: List<Node> } }.
            def(
                "Node",
                DefKind::Enum {
                    tag: "type".to_owned(),
                    variants: vec![
                        VariantTy {
                            name: "branch".to_owned(),
                            docs: None,
                            fields: Some(vec![field("kids", children(1))]),
                        },
                        VariantTy {
                            name: "leaf".to_owned(),
                            docs: None,
                            fields: Some(vec![field(
                                "photo",
                                Ty::Option {
                                    some: Box::new(image),
                                },
                            )]),
                        },
                    ],
                },
            ),
        ]);
        assert!(!table.can_hold_media(&Ty::Ref { def: DefId(0) }));
        assert!(!table.can_hold_media(&text));
        assert!(table.can_hold_media(&Ty::Ref { def: DefId(1) }));
        assert!(table.can_hold_media(&children(1)));
        // A dangling id may hide anything.
        assert!(table.can_hold_media(&Ty::Ref { def: DefId(9) }));
    }
}
