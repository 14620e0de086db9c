//! Property tests of the schema emitter and the size bound, on random bounded types.
//!
//! - decoder ≡ schema (spec §4): for random types and random JSON values near their bounds, the
//!   `jsonschema` crate's verdict on the emitted schema equals the runtime decoder's verdict, and
//!   both equal a reference verdict computed here from the `Ty` alone (`reference_valid`), so a
//!   bug shared by the emitter and the decoder is caught too. The generator stays clear of the
//!   points where the spec lets the decoder be stricter (duplicate keys, platform bounds,
//!   invalid text) and of `uniqueItems` over objects (JSON Schema compares raw JSON, the decoder
//!   typed values after defaults are filled in, see `decode.rs`), and of `format`, which the
//!   schema only annotates under draft 2020-12;
//! - `max_json_len`: every valid value's compact encoding is at most the bound; for random types,
//!   a worst-case encoding of a value at every bound (every character escaped, surrogate pairs
//!   for those beyond U+FFFF, the longest number spellings, every optional field present, every
//!   list full, pretty-printed with four spaces) is accepted by the decoder and fits the bound,
//!   in a code fence within the default `max_answer`; for simple types such a value attains it.

use aelc::codegen::json_schema::{DefKeys, SchemaBuilder};
use aelc::ir::size::{default_max_answer, max_json_len, CODE_FENCE_LEN};
use aelc_runtime::ty::*;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

// ---------------------------------------------------------------- random types

/// A type shape; lowered into a `Ty` and a `TypeTable` by [`lower`].
#[derive(Clone, Debug)]
enum Shape {
    Bool,
    Int(IntKind, i128, i128, bool),
    Float(bool, Option<(f64, bool)>, Option<(f64, bool)>),
    Str(u32, u32, Option<&'static str>),
    /// A text with a `@format`, within `min..=max` characters (grammar tests only: the schema
    /// only annotates formats).
    Formatted(Format, u32, u32),
    List(Box<Shape>, u32, u32, bool),
    Map(MapKey, Box<Shape>, u32, u32),
    Option(Box<Shape>),
    Struct(Vec<(Shape, bool)>),
    UnitEnum(usize),
    DataEnum(Vec<Vec<Shape>>),
    Alias(Box<Shape>),
}

#[derive(Clone, Debug)]
enum MapKey {
    Str(u32),
    Enum(usize),
}

const PATTERNS: &[&str] = &["^[a-z]+$", "^a", "b$", "^[0-9]{2}$", "x"];
const INT_KINDS: &[IntKind] = &[
    IntKind::U8,
    IntKind::U16,
    IntKind::U32,
    IntKind::U64,
    IntKind::I8,
    IntKind::I16,
    IntKind::I32,
    IntKind::I64,
];

fn int_shape() -> impl Strategy<Value = Shape> {
    (
        0..INT_KINDS.len(),
        any::<u64>(),
        any::<u64>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(k, a, b, refine, excl)| {
            let kind = INT_KINDS[k];
            let (lo, hi) = kind.range();
            if !refine {
                return Shape::Int(kind, lo, hi, false);
            }
            let span = (hi - lo) as u128;
            let small = |x: u64| lo + (x as u128 % (span.min(1000) + 1)) as i128;
            let (mut a, mut b) = (small(a), small(b));
            if a > b {
                std::mem::swap(&mut a, &mut b);
            }
            // `a..b` needs b > a.
            if excl && b > a {
                Shape::Int(kind, a, b, true)
            } else {
                Shape::Int(kind, a, b, false)
            }
        })
}

/// Divisors of the generated float range ends (the last two put them past 2^53).
const FLOAT_SCALES: &[f64] = &[1.0, 2.0, 10.0, 1000.0, 1e-16, 1e-290];

/// Formatted texts and their length bounds: the std types (`Str<254>` email, `Str<2048>` uri,
/// `Str<64>` date-time), bounds that cut through the fraction of a date-time, and ones that
/// leave no room for a date or UUID.
const FORMATTED: &[(Format, u32, u32)] = &[
    (Format::Email, 0, 254),
    (Format::Uri, 0, 2048),
    (Format::DateTime, 0, 64),
    (Format::DateTime, 21, 24),
    (Format::DateTime, 0, 20),
    (Format::Date, 0, 10),
    (Format::Date, 0, 9),
    (Format::Uuid, 0, 36),
];

fn leaf() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::Bool),
        int_shape(),
        (
            any::<bool>(),
            proptest::option::of((-10i32..10, any::<bool>())),
            proptest::option::of((10i32..20, any::<bool>())),
            0..FLOAT_SCALES.len(),
        )
            .prop_map(|(f32, lo, hi, scale)| {
                // Whole ends, halves, and ends no binary fraction spells (`0.1`, `-0.003`).
                let d = FLOAT_SCALES[scale];
                Shape::Float(
                    f32,
                    lo.map(|(v, e)| (v as f64 / d, e)),
                    hi.map(|(v, e)| (v as f64 / d, e)),
                )
            }),
        (0u32..3, 1u32..6, proptest::option::of(0..PATTERNS.len()))
            .prop_map(|(min, max, p)| { Shape::Str(min.min(max), max, p.map(|i| PATTERNS[i])) }),
        (1usize..4).prop_map(Shape::UnitEnum),
    ]
}

fn shape() -> impl Strategy<Value = Shape> {
    shape_from(leaf().boxed())
}

/// Shapes for the grammar tests: with formatted texts among the leaves.
fn grammar_shape() -> impl Strategy<Value = Shape> {
    let formatted = (0..FORMATTED.len()).prop_map(|i| {
        let (f, min, max) = FORMATTED[i];
        Shape::Formatted(f, min, max)
    });
    shape_from(prop_oneof![5 => leaf(), 1 => formatted].boxed())
}

fn shape_from(leaf: BoxedStrategy<Shape>) -> impl Strategy<Value = Shape> {
    leaf.clone().prop_recursive(3, 24, 4, move |inner| {
        prop_oneof![
            (inner.clone(), 0u32..2, 0u32..4).prop_map(|(s, min, extra)| Shape::List(
                Box::new(s),
                min,
                min + extra,
                false
            )),
            // Sets only of scalars: see the module doc.
            (leaf.clone(), 0u32..4).prop_map(|(s, max)| Shape::List(Box::new(s), 0, max, true)),
            (
                prop_oneof![
                    (1u32..4).prop_map(MapKey::Str),
                    (1usize..4).prop_map(MapKey::Enum)
                ],
                inner.clone(),
                0u32..2,
                0u32..3
            )
                .prop_map(|(k, v, min, extra)| Shape::Map(
                    k,
                    Box::new(v),
                    min,
                    min + extra
                )),
            inner.clone().prop_map(|s| Shape::Option(Box::new(s))),
            proptest::collection::vec((inner.clone(), any::<bool>()), 0..4).prop_map(Shape::Struct),
            proptest::collection::vec(proptest::collection::vec(inner.clone(), 0..3), 1..4)
                .prop_map(Shape::DataEnum),
            inner.prop_map(|s| Shape::Alias(Box::new(s))),
        ]
    })
}

/// Lowers a shape, adding definitions to `table`.
fn lower(shape: &Shape, table: &mut TypeTable) -> Ty {
    match shape {
        Shape::Bool => Ty::Bool,
        Shape::Int(kind, min, max, excl) => Ty::Int(IntTy {
            kind: *kind,
            min: *min,
            max: *max,
            max_exclusive: *excl,
        }),
        Shape::Float(f32, lo, hi) => Ty::Float(FloatTy {
            kind: if *f32 { FloatKind::F32 } else { FloatKind::F64 },
            min: lo.map(|(value, exclusive)| FloatBound { value, exclusive }),
            max: hi.map(|(value, exclusive)| FloatBound { value, exclusive }),
        }),
        Shape::Str(min, max, p) => Ty::Str(StrTy {
            min: *min,
            max: *max,
            pattern: p.map(str::to_owned),
            format: None,
        }),
        Shape::Formatted(format, min, max) => Ty::Str(StrTy {
            min: *min,
            max: *max,
            pattern: None,
            format: Some(*format),
        }),
        Shape::List(item, min, max, unique) => Ty::List(ListTy {
            item: Box::new(lower(item, table)),
            min: *min,
            max: *max,
            unique: *unique,
        }),
        Shape::Map(key, value, min, max) => {
            let key = match key {
                MapKey::Str(n) => Ty::Str(StrTy {
                    min: 0,
                    max: *n,
                    pattern: None,
                    format: None,
                }),
                MapKey::Enum(n) => unit_enum(*n, table),
            };
            Ty::Map(MapTy {
                key: Box::new(key),
                value: Box::new(lower(value, table)),
                min: *min,
                max: *max,
            })
        }
        Shape::Option(s) => {
            let inner = lower(s, table);
            // `Option<Option<T>>` is not an AEL type.
            match inner {
                Ty::Option { .. } => inner,
                t => Ty::Option { some: Box::new(t) },
            }
        }
        Shape::Struct(fields) => {
            let fields = fields
                .iter()
                .enumerate()
                .map(|(i, (s, with_default))| {
                    let ty = lower(s, table);
                    let default = if *with_default && !matches!(ty, Ty::Option { .. }) {
                        widest_or_some_valid(&ty, table)
                    } else {
                        None
                    };
                    FieldTy {
                        name: format!("f{i}"),
                        docs: None,
                        ty,
                        default: default.map(Box::new),
                    }
                })
                .collect();
            push_def(table, DefKind::Struct { fields })
        }
        Shape::UnitEnum(n) => unit_enum(*n, table),
        Shape::DataEnum(arms) => {
            let variants = arms
                .iter()
                .enumerate()
                .map(|(i, fields)| VariantTy {
                    name: format!("v{i}"),
                    docs: None,
                    fields: if fields.is_empty() && i % 2 == 0 {
                        None
                    } else {
                        Some(
                            fields
                                .iter()
                                .enumerate()
                                .map(|(j, s)| FieldTy {
                                    name: format!("g{j}"),
                                    docs: None,
                                    ty: lower(s, table),
                                    default: None,
                                })
                                .collect(),
                        )
                    },
                })
                .collect::<Vec<_>>();
            // A data enum needs at least one variant with fields.
            let mut variants = variants;
            if variants.iter().all(|v| v.fields.is_none()) {
                variants[0].fields = Some(vec![]);
            }
            push_def(
                table,
                DefKind::Enum {
                    tag: "type".into(),
                    variants,
                },
            )
        }
        Shape::Alias(s) => {
            let ty = lower(s, table);
            push_def(table, DefKind::Alias { ty })
        }
    }
}

fn unit_enum(n: usize, table: &mut TypeTable) -> Ty {
    let variants = (0..n)
        .map(|i| VariantTy {
            name: ["low", "mid", "high_value"][i % 3].to_owned(),
            docs: None,
            fields: None,
        })
        .collect();
    push_def(
        table,
        DefKind::Enum {
            tag: "type".into(),
            variants,
        },
    )
}

fn push_def(table: &mut TypeTable, kind: DefKind) -> Ty {
    let id = table.defs.len() as u32;
    table.defs.push(TypeDef {
        name: format!("T{id}"),
        module: "m".into(),
        docs: None,
        kind,
    });
    Ty::Ref { def: DefId(id) }
}

/// A valid value, for defaults (the first valid candidate of the value generator). Valid for
/// the decoder too: the reference ignores `@format` (the schema only annotates it), and the
/// checker refuses a default its type does not accept.
fn widest_or_some_valid(ty: &Ty, table: &TypeTable) -> Option<Value> {
    let mut rng = Rng(7);
    (0..200)
        .map(|_| gen_value(ty, table, &mut rng, 0))
        .find(|v| reference_valid(ty, table, v) && decoder_valid(ty, table, v))
}

// ---------------------------------------------------------------- random values

/// A small deterministic generator (xorshift), seeded by proptest.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0 | 1;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
}

/// The next `f64` up from `v` (`f64::next_up`, stable only since Rust 1.86; the MSRV is 1.85).
fn next_up(v: f64) -> f64 {
    if v.is_nan() || v == f64::INFINITY {
        return v;
    }
    if v == 0.0 {
        return f64::from_bits(1);
    }
    let bits = v.to_bits();
    f64::from_bits(if v > 0.0 { bits + 1 } else { bits - 1 })
}

/// The next `f64` down from `v` (`f64::next_down`).
fn next_down(v: f64) -> f64 {
    -next_up(-v)
}

/// A value near the bounds of `ty`: usually valid, sometimes one step outside.
fn gen_value(ty: &Ty, table: &TypeTable, rng: &mut Rng, depth: u32) -> Value {
    if rng.chance(25) {
        // A wrong type.
        return [
            json!(null),
            json!("s"),
            json!(1),
            json!([]),
            json!({}),
            json!(true),
        ][rng.below(6) as usize]
            .clone();
    }
    match ty {
        Ty::Bool => json!(rng.chance(2)),
        Ty::Int(int) => {
            let hi = if int.max_exclusive {
                int.max
            } else {
                int.max + 1
            };
            let v = match rng.below(5) {
                0 => int.min - 1,
                1 => int.min,
                2 => hi - 1,
                3 => hi,
                _ => int.min + (rng.below(((hi - int.min).max(1)) as u64) as i128),
            };
            let as_json = if let Ok(i) = i64::try_from(v) {
                if rng.chance(6) {
                    json!(i as f64) // `3.0` is an integer too
                } else {
                    json!(i)
                }
            } else if let Ok(u) = u64::try_from(v) {
                json!(u)
            } else {
                json!(0.5)
            };
            if rng.chance(12) {
                json!(v as f64 + 0.5)
            } else {
                as_json
            }
        }
        Ty::Float(f) => {
            // An open end sometimes reaches far: past 10^16, up to the largest finite values
            // (and beyond them for an `f32`).
            let far = [1e3, 1e3, 1e3, 1.5e17, 1e300, f64::MAX];
            let lo = f.min.map_or(-far[rng.below(6) as usize], |b| b.value);
            let hi = f.max.map_or(far[rng.below(6) as usize], |b| b.value);
            let v = match rng.below(9) {
                0 => lo,
                1 => hi,
                2 => lo - 0.25,
                3 => hi + 0.25,
                // The next float each way of an end.
                6 => [next_down(lo), next_up(lo)][rng.below(2) as usize],
                7 => [next_down(hi), next_up(hi)][rng.below(2) as usize],
                8 => return json!(-0.0),
                4 if f.kind == FloatKind::F32 => 1e39,
                // Small numbers: `serde_json` writes 4 zeros after the point, then 17 digits.
                4 => 1.234_567_890_123_456_7e-5 * (rng.below(3) as f64 - 1.0),
                _ => {
                    // Weighted so that `hi - lo` cannot overflow.
                    let t = rng.below(100) as f64 / 100.0;
                    lo * (1.0 - t) + hi * t
                }
            };
            if v == 0.0 {
                json!(0.0f64.abs())
            } else {
                json!(v)
            }
        }
        Ty::Str(StrTy {
            format: Some(f), ..
        }) => json!(format_text(*f, rng)),
        Ty::Str(s) => {
            let len = match rng.below(4) {
                0 => s.min.saturating_sub(1),
                1 => s.min,
                2 => s.max + 1,
                _ => s.max,
            };
            let alphabet: &[char] = &['a', 'b', 'x', '0', '9', 'é', '\u{1}', '"', '\n', '😀'];
            let text: String = (0..len)
                .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize])
                .collect();
            json!(text)
        }
        Ty::List(list) => {
            let n = near_count(rng, list.min, list.max);
            let mut items: Vec<Value> = (0..n)
                .map(|_| gen_value(&list.item, table, rng, depth + 1))
                .collect();
            if list.unique && items.len() > 1 && rng.chance(3) {
                let first = items[0].clone();
                items.push(first);
            }
            Value::Array(items)
        }
        Ty::Map(map) => {
            let n = near_count(rng, map.min, map.max);
            let mut m = Map::new();
            for _ in 0..n {
                let key = gen_value(&map.key, table, rng, depth + 1);
                let key = key
                    .as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| "zz".into());
                m.insert(key, gen_value(&map.value, table, rng, depth + 1));
            }
            Value::Object(m)
        }
        Ty::Option { some } => {
            if rng.chance(3) {
                json!(null)
            } else {
                gen_value(some, table, rng, depth)
            }
        }
        Ty::Media(_) => json!(null),
        Ty::Ref { def } => match table.get(*def).map(|d| &d.kind) {
            Some(DefKind::Alias { ty }) => gen_value(ty, table, rng, depth),
            Some(DefKind::Struct { fields }) => gen_object(None, fields, table, rng, depth),
            Some(DefKind::Enum { tag, variants }) => {
                let i = rng.below(variants.len() as u64) as usize;
                let v = &variants[i];
                let name = if rng.chance(15) {
                    "nope".to_owned()
                } else {
                    v.name.clone()
                };
                match &v.fields {
                    None if variants.iter().all(|v| v.fields.is_none()) => json!(name),
                    fields => gen_object(
                        Some((tag, &name)),
                        fields.as_deref().unwrap_or_default(),
                        table,
                        rng,
                        depth,
                    ),
                }
            }
            None => json!(null),
        },
    }
}

/// A text for `format`, valid or broken near its edges: field values at and past their
/// limits, fractions of every length, labels and schemes at their edges, escapes cut short.
/// Every valid one is in the subsets the grammar covers for the std `Email` and `Uri`.
fn format_text(format: Format, rng: &mut Rng) -> String {
    let pick =
        |rng: &mut Rng, items: &[&str]| items[rng.below(items.len() as u64) as usize].to_owned();
    match format {
        Format::Date => {
            let y = ["2024", "2023", "1900", "2000", "0000", "9999", "202"][rng.below(7) as usize];
            let m = rng.below(14);
            let d = rng.below(33);
            format!("{y}-{m:02}-{d:02}")
        }
        Format::Uuid => pick(
            rng,
            &[
                "123e4567-e89b-12d3-A456-426614174000",
                "123e4567e89b12d3a456426614174000",
                "123e4567-e89b-12d3-a456-42661417400g",
                "123e4567-e89b-12d3-a456-4266141740000",
            ],
        ),
        Format::DateTime => {
            let date = pick(rng, &["2024-02-29", "2023-02-29", "2026-12-02"]);
            let t = pick(rng, &["T", "t", " "]);
            let h = rng.below(26);
            let m = [0, 59, 60][rng.below(3) as usize];
            let s = [0, 59, 60, 61][rng.below(4) as usize];
            let frac = match rng.below(4) {
                0 => String::new(),
                1 => ".".to_owned(),
                _ => format!(".{}", "7".repeat(rng.below(45) as usize + 1)),
            };
            let end = pick(
                rng,
                &[
                    "Z", "z", "+23:59", "-00:00", "+24:00", "-05:60", "", "+0530",
                ],
            );
            format!("{date}{t}{h:02}:{m:02}:{s:02}{frac}{end}")
        }
        Format::Email => pick(
            rng,
            &[
                "a.b+c@example.com",
                "a@b",
                "first.last@mail.sub.example.co",
                "xn--bcher-kva@xn--bcher-kva.example",
                "{|}~!#$%&'*/=?^_`-@x-y.z",
                "abcdefghijklmnopqrstuvwxyz.abcdef@example.com",
                "a..b@example.com",
                ".a@example.com",
                "a.@example.com",
                "@example.com",
                "a@-x.com",
                "a@x-.com",
                "a@b..c",
                "a@b.",
                "a@b@c.d",
                "a b@example.com",
                "abc",
            ],
        ),
        Format::Uri => pick(
            rng,
            &[
                "https://example.com/a?b=c#d",
                "urn:isbn:0451450523",
                "a:",
                "h+t.t-p:x",
                "mailto:a@b.example",
                "http://a%2F%2f",
                "abcdefghijklmnopqrstuvwxyzabcdef:x",
                "/relative/path",
                "http://a b",
                "http://a%zz",
                "http://a%2",
                "1http://a",
                "http://é",
            ],
        ),
    }
}

fn near_count(rng: &mut Rng, min: u32, max: u32) -> u32 {
    match rng.below(5) {
        0 => min.saturating_sub(1),
        1 => min,
        2 => max + 1,
        _ => min + rng.below(u64::from(max - min) + 1) as u32,
    }
}

fn gen_object(
    tag: Option<(&String, &String)>,
    fields: &[FieldTy],
    table: &TypeTable,
    rng: &mut Rng,
    depth: u32,
) -> Value {
    let mut m = Map::new();
    if let Some((tag, name)) = tag {
        if !rng.chance(20) {
            m.insert(tag.clone(), json!(name));
        }
    }
    for f in fields {
        let skip = if f.is_required() {
            rng.chance(15)
        } else {
            rng.chance(3)
        };
        if !skip {
            m.insert(f.name.clone(), gen_value(&f.ty, table, rng, depth + 1));
        }
    }
    if rng.chance(20) {
        m.insert("extra".into(), json!(1));
    }
    Value::Object(m)
}

// ---------------------------------------------------------------- the reference verdict

/// Whether `v` is a valid `ty` under the rules of spec §3–4, computed from the type alone.
fn reference_valid(ty: &Ty, table: &TypeTable, v: &Value) -> bool {
    match ty {
        Ty::Bool => v.is_boolean(),
        Ty::Int(int) => integral(v).is_some_and(|n| int.contains(n)),
        Ty::Float(f) => v.as_f64().is_some_and(|x| {
            let lo_ok = f.min.is_none_or(|b| {
                if b.exclusive {
                    x > b.value
                } else {
                    x >= b.value
                }
            });
            let hi_ok = f.max.is_none_or(|b| {
                if b.exclusive {
                    x < b.value
                } else {
                    x <= b.value
                }
            });
            let f32_ok = f.kind == FloatKind::F64 || x.abs() <= f32::MAX as f64;
            v.is_number() && lo_ok && hi_ok && f32_ok
        }),
        Ty::Str(s) => v.as_str().is_some_and(|t| {
            let n = t.chars().count() as u32;
            n >= s.min
                && n <= s.max
                && s.pattern
                    .as_deref()
                    .is_none_or(|p| regex::Regex::new(p).unwrap().is_match(t))
        }),
        Ty::List(list) => v.as_array().is_some_and(|items| {
            let n = items.len() as u32;
            n >= list.min
                && n <= list.max
                && items.iter().all(|i| reference_valid(&list.item, table, i))
                && (!list.unique || distinct(items))
        }),
        Ty::Map(map) => v.as_object().is_some_and(|m| {
            let n = m.len() as u32;
            n >= map.min
                && n <= map.max
                && m.iter().all(|(k, val)| {
                    reference_valid(&map.key, table, &json!(k))
                        && reference_valid(&map.value, table, val)
                })
        }),
        Ty::Option { some } => v.is_null() || reference_valid(some, table, v),
        Ty::Media(_) => false,
        Ty::Ref { def } => match table.get(*def).map(|d| &d.kind) {
            Some(DefKind::Alias { ty }) => reference_valid(ty, table, v),
            Some(DefKind::Struct { fields }) => object_valid(None, fields, table, v),
            Some(DefKind::Enum { tag, variants }) => {
                if variants.iter().all(|x| x.fields.is_none()) {
                    return v
                        .as_str()
                        .is_some_and(|s| variants.iter().any(|x| x.name == s));
                }
                let Some(name) = v.get(tag).and_then(Value::as_str) else {
                    return false;
                };
                variants.iter().any(|x| {
                    x.name == name
                        && object_valid(
                            Some(tag),
                            x.fields.as_deref().unwrap_or_default(),
                            table,
                            v,
                        )
                })
            }
            None => false,
        },
    }
}

fn object_valid(tag: Option<&str>, fields: &[FieldTy], table: &TypeTable, v: &Value) -> bool {
    let Some(m) = v.as_object() else {
        return false;
    };
    let known = |k: &str| Some(k) == tag || fields.iter().any(|f| f.name == k);
    m.keys().all(|k| known(k))
        && fields.iter().all(|f| match m.get(&f.name) {
            None => !f.is_required(),
            Some(val) => reference_valid(&f.ty, table, val),
        })
}

/// An integral JSON number, exactly.
fn integral(v: &Value) -> Option<i128> {
    if let Some(i) = v.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = v.as_u64() {
        return Some(i128::from(u));
    }
    let f = v.as_f64()?;
    (f.fract() == 0.0 && f.abs() < 1e18).then_some(f as i128)
}

/// JSON Schema equality: numbers by value.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (integral(a), integral(b)) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, a)| y.get(k).is_some_and(|b| json_eq(a, b)))
        }
        _ => a == b,
    }
}

fn distinct(items: &[Value]) -> bool {
    items
        .iter()
        .enumerate()
        .all(|(i, a)| items[i + 1..].iter().all(|b| !json_eq(a, b)))
}

// ---------------------------------------------------------------- the properties

fn schema_for(ty: &Ty, table: &TypeTable) -> Value {
    let keys = DefKeys::new(table);
    SchemaBuilder::new(table, &keys).document("t", None, ty)
}

fn decoder_valid(ty: &Ty, table: &TypeTable, v: &Value) -> bool {
    let bytes = serde_json::to_vec(v).unwrap();
    aelc_runtime::decode::decode(&bytes, ty, table, "value", 1 << 24).is_ok()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn schema_verdict_equals_decoder_and_reference(shape in shape(), seed in any::<u64>()) {
        let mut table = TypeTable::default();
        let ty = lower(&shape, &mut table);
        let schema = schema_for(&ty, &table);
        prop_assert!(jsonschema::draft202012::meta::is_valid(&schema), "{schema:#}");
        let validator = jsonschema::draft202012::options()
            .with_pattern_options(jsonschema::PatternOptions::regex())
            .build(&schema)
            .unwrap();
        let mut rng = Rng(seed);
        for _ in 0..24 {
            let value = gen_value(&ty, &table, &mut rng, 0);
            // Past 2^53 a float-written number is compared through f64 by the validator, but
            // exactly by our decoder (spec §4): `-9.223372036854776e18` is below i64::MIN.
            if has_huge_float(&value) {
                continue;
            }
            let by_schema = validator.is_valid(&value);
            let by_reference = reference_valid(&ty, &table, &value);
            let by_decoder = decoder_valid(&ty, &table, &value);
            prop_assert_eq!(by_schema, by_reference, "schema vs reference on {} for {:#}", value, schema);
            prop_assert_eq!(by_schema, by_decoder, "schema vs decoder on {} for {:#}", value, schema);
            // `255.0`, a valid u8 written as a double writer does, is within the bound too.
            if by_reference {
                let len = serde_json::to_string(&value).unwrap().len() as u64;
                let max = max_json_len(&ty, &table);
                prop_assert!(len <= max, "{} is {} bytes, bound {}", value, len, max);
            }
        }
    }
}

/// Whether a float-written number beyond 2^53 in magnitude occurs in `v`.
fn has_huge_float(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Number(n) => {
            n.is_f64()
                && n.as_f64()
                    .is_some_and(|f| f.abs() > 9.007_199_254_740_992e15)
        }
        serde_json::Value::Array(items) => items.iter().any(has_huge_float),
        serde_json::Value::Object(map) => map.values().any(has_huge_float),
        _ => false,
    }
}

/// Whether a number written with a fraction or exponent but an integral value occurs in `v`.
fn has_integral_float(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Number(n) => n.is_f64() && n.as_f64().is_some_and(|f| f.fract() == 0.0),
        serde_json::Value::Array(items) => items.iter().any(has_integral_float),
        serde_json::Value::Object(map) => map.values().any(has_integral_float),
        _ => false,
    }
}

// ---------------------------------------------------------------- worst-case encodings

/// A valid value of `ty` at every bound, for a worst-case encoding by [`worst_text`]: strings
/// full of characters beyond U+FFFF (or, under a pattern, a match of it), numbers at their
/// widest valid end, every optional field present, every list and map full. `variant` makes
/// scalars differ, for the distinct items of a set or the keys of a map. `None` when `ty` has
/// no such value (a set over too small a domain to reach its minimum).
fn worst_value(ty: &Ty, table: &TypeTable, variant: usize) -> Option<Value> {
    let value = match table.resolve(ty)? {
        Ty::Bool => json!(variant % 2 == 1),
        Ty::Int(int) => {
            let hi = if int.max_exclusive {
                int.max - 1
            } else {
                int.max
            };
            let min = int.min;
            let widest_low = min.to_string().len() + 1 >= hi.to_string().len();
            let v = if widest_low {
                int.min + variant as i128
            } else {
                hi - variant as i128
            };
            if v < int.min || v > hi {
                return None;
            }
            match i64::try_from(v) {
                Ok(v) => json!(v),
                Err(_) => json!(u64::try_from(v).ok()?),
            }
        }
        Ty::Float(_) => {
            let widest = -1.234_567_890_123_456_7e-6 * (1.0 + variant as f64 / 1024.0);
            let candidates = [widest, -widest, 0.5 + variant as f64, -0.5 - variant as f64];
            let found = candidates
                .iter()
                .map(|f| json!(f))
                .find(|v| reference_valid(ty, table, v));
            return found;
        }
        Ty::Str(st) => {
            let wide = |n: u32| -> String {
                (0..n)
                    .map(|i| {
                        char::from_u32(0x1F600 + ((variant + i as usize) % 64) as u32).unwrap()
                    })
                    .collect()
            };
            let max = st.max;
            let text = match st.pattern.as_deref() {
                None => wide(max),
                Some("^[a-z]+$") => (0..max)
                    .map(|i| (b'a' + ((variant + i as usize) % 26) as u8) as char)
                    .collect(),
                Some("^a") => format!("a{}", wide(max.saturating_sub(1))),
                Some("b$") => format!("{}b", wide(max.saturating_sub(1))),
                Some("^[0-9]{2}$") => format!("{:02}", variant % 100),
                Some("x") => format!("x{}", wide(max.saturating_sub(1))),
                Some(other) => panic!("no worst case for the pattern {other}"),
            };
            let v = json!(text);
            return reference_valid(ty, table, &v).then_some(v);
        }
        Ty::List(list) => {
            let mut items: Vec<Value> = Vec::new();
            for i in 0..list.max as usize {
                let item = if list.unique {
                    worst_value(&list.item, table, variant * 97 + i)
                } else {
                    worst_value(&list.item, table, variant)
                };
                match item {
                    Some(item) if !list.unique || !items.iter().any(|x| json_eq(x, &item)) => {
                        items.push(item)
                    }
                    _ => {}
                }
            }
            if items.len() < list.min as usize {
                return None;
            }
            Value::Array(items)
        }
        Ty::Map(map) => {
            let value = worst_value(&map.value, table, variant)?;
            let mut members = Map::new();
            for i in 0..(map.max as usize * 4) {
                if members.len() == map.max as usize {
                    break;
                }
                if let Some(Value::String(key)) = worst_value(&map.key, table, variant * 97 + i) {
                    members.insert(key, value.clone());
                }
            }
            if members.len() < map.min as usize {
                return None;
            }
            Value::Object(members)
        }
        Ty::Option { some } => worst_value(some, table, variant).unwrap_or(Value::Null),
        Ty::Media(_) => return None,
        Ty::Ref { def } => match &table.get(*def)?.kind {
            DefKind::Struct { fields } => {
                Value::Object(worst_fields(None, fields, table, variant)?)
            }
            DefKind::Enum { tag, variants } => {
                if variants.iter().all(|v| v.fields.is_none()) {
                    let mut names: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
                    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
                    names.dedup();
                    json!(names.get(variant)?)
                } else {
                    // The arm whose worst case is the longest.
                    variants
                        .iter()
                        .filter_map(|v| {
                            let fields = v.fields.as_deref().unwrap_or_default();
                            let lead = (tag.as_str(), v.name.as_str());
                            worst_fields(Some(lead), fields, table, variant).map(Value::Object)
                        })
                        .max_by_key(|v| worst_text(v).len())?
                }
            }
            DefKind::Alias { ty } => worst_value(ty, table, variant)?,
        },
    };
    Some(value)
}

fn worst_fields(
    tag: Option<(&str, &str)>,
    fields: &[FieldTy],
    table: &TypeTable,
    variant: usize,
) -> Option<Map<String, Value>> {
    let mut members = Map::new();
    if let Some((tag, name)) = tag {
        members.insert(tag.to_owned(), json!(name));
    }
    for field in fields {
        match worst_value(&field.ty, table, variant) {
            Some(v) => {
                members.insert(field.name.clone(), v);
            }
            None if field.is_required() => return None,
            None => {}
        }
    }
    Some(members)
}

/// `v` written as widely as a JSON writer may (see `src/ir/size.rs`): pretty-printed with four
/// spaces per level, every character of every string and key escaped (a surrogate pair beyond
/// U+FFFF), integers with `.0`, floats in fixed notation from 10^-6 to 10^21 (JavaScript's
/// rule) and in `serde_json`'s spelling elsewhere.
fn worst_text(v: &Value) -> String {
    let mut out = String::new();
    write_worst(v, 1, &mut out);
    out
}

fn write_worst(v: &Value, level: usize, out: &mut String) {
    let indent = |level: usize| format!("\n{}", " ".repeat(4 * level));
    match v {
        Value::String(s) => write_escaped(s, out),
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or_default();
            if (1e-6..1e21).contains(&f.abs()) {
                out.push_str(&format!("{f}"));
            } else {
                out.push_str(&n.to_string());
            }
        }
        Value::Number(n) => out.push_str(&format!("{n}.0")),
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&indent(level));
                write_worst(item, level + 1, out);
            }
            out.push_str(&indent(level - 1));
            out.push(']');
        }
        Value::Object(members) if !members.is_empty() => {
            out.push('{');
            for (i, (key, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&indent(level));
                write_escaped(key, out);
                out.push_str(": ");
                write_worst(item, level + 1, out);
            }
            out.push_str(&indent(level - 1));
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// A JSON string with every character escaped: `\uXXXX`, two of them beyond U+FFFF.
fn write_escaped(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        let mut units = [0u16; 2];
        for unit in c.encode_utf16(&mut units) {
            out.push_str(&format!("\\u{unit:04x}"));
        }
    }
    out.push('"');
}

fn decodes_as(text: &str, ty: &Ty, table: &TypeTable) -> Result<(), String> {
    aelc_runtime::decode::decode(text.as_bytes(), ty, table, "value", 1 << 24)
        .map(|_| ())
        .map_err(|errors| format!("{errors:?}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// The default `max_answer` holds every valid answer however a writer escapes, spells
    /// numbers and pretty-prints it, in a code fence.
    #[test]
    fn worst_case_encodings_decode_and_fit_the_bound(shape in shape()) {
        let mut table = TypeTable::default();
        let ty = lower(&shape, &mut table);
        let Some(value) = worst_value(&ty, &table, 0) else {
            return Ok(());
        };
        prop_assert!(reference_valid(&ty, &table, &value), "{value}");
        let max = max_json_len(&ty, &table);
        for text in [worst_text(&value), serde_json::to_string(&value).unwrap()] {
            if let Err(errors) = decodes_as(&text, &ty, &table) {
                return Err(TestCaseError::fail(format!("{text} does not decode: {errors}")));
            }
            let len = text.len() as u64;
            prop_assert!(len <= max, "{} is {} bytes, bound {}", text, len, max);
            let fenced = format!("```json\n{text}\n```");
            prop_assert!(fenced.len() as u64 <= default_max_answer(&ty, &table));
        }
    }
}

/// The case of issue 16: four characters beyond U+FFFF, each written as a surrogate pair, are
/// 12 bytes each and fit a `Str<4>`'s `max_answer`.
#[test]
fn surrogate_pairs_fit_the_max_answer_of_a_str() {
    let table = TypeTable::default();
    let ty = s(0, 4);
    let answer = format!("\"{}\"", "\\ud83d\\ude00".repeat(4));
    assert_eq!(answer.len(), 50);
    assert!(decodes_as(&answer, &ty, &table).is_ok());
    assert_eq!(max_json_len(&ty, &table), 50);
    assert_eq!(default_max_answer(&ty, &table), 50 + CODE_FENCE_LEN);
    assert!(decodes_as(&format!("\"{}\"", "\\ud83d\\ude00".repeat(5)), &ty, &table).is_err());
}

/// Past 10^16 a double writer prints an integer with an exponent, wider than its decimal.
#[test]
fn integers_past_ten_to_the_sixteen_may_be_written_with_an_exponent() {
    let table = TypeTable::default();
    let i64_ty = Ty::Int(IntTy::base(IntKind::I64));
    let text = "-1.0000000000000001e+18";
    assert!(decodes_as(text, &i64_ty, &table).is_ok());
    assert!("-9223372036854775808.0".len() < text.len());
    assert_eq!(max_json_len(&i64_ty, &table), text.len() as u64);
    let u64_ty = Ty::Int(IntTy::base(IntKind::U64));
    assert!(decodes_as("18446744073709551615.0", &u64_ty, &table).is_ok());
    assert!(decodes_as("1.0000000000000001e+19", &u64_ty, &table).is_ok());
    assert_eq!(max_json_len(&u64_ty, &table), 22);
}

/// A media reference written at its widest (every key present, every text at its bound and
/// escaped, pretty-printed) decodes and fits.
#[test]
fn a_worst_case_media_reference_fits() {
    use aelc::ir::size::media_bounds::*;
    let table = TypeTable::default();
    let media = MediaTy {
        kind: MediaKind::Image,
        content_types: vec!["image/png".into(), "image/jpeg".into()],
        max_bytes: 5 << 20,
        max_pixels: Some((4096, 4096)),
        max_duration_ms: None,
        sample_rate: None,
    };
    let ty = Ty::Media(Box::new(media));
    let reference = format!(
        "holon://files/{}",
        "\u{1F600}".repeat(REF_MAX_LEN as usize - "holon://files/".len())
    );
    let value = json!({
        "ref": reference,
        "content_type": "image/jpeg",
        "size": 5 << 20,
        "sha256": "a".repeat(SHA256_LEN as usize),
        "expires_at": "2026-01-01T00:00:00Z",
        "source": "\u{1F600}".repeat(SOURCE_MAX_LEN as usize),
        "width": 4096,
        "height": 4096,
        "duration_ms": u64::MAX,
        "sample_rate": u64::MAX,
        "pages": u64::MAX,
    });
    let text = worst_text(&value);
    assert_eq!(decodes_as(&text, &ty, &table), Ok(()));
    let len = text.len() as u64;
    assert!(
        len <= max_json_len(&ty, &table),
        "{len} > {}",
        max_json_len(&ty, &table)
    );
}

/// Issue 25, finding I: the decoder accepts exactly what the emitted schema accepts for a media
/// reference's text fields at and past their bounds (characters, as `maxLength` counts them),
/// and for a `ref` that is the prefix alone.
#[test]
fn media_reference_bounds_agree_with_the_schema() {
    use aelc::ir::size::media_bounds::*;
    let table = TypeTable::default();
    let ty = Ty::Media(Box::new(MediaTy {
        kind: MediaKind::File,
        content_types: vec![],
        max_bytes: 1 << 20,
        max_pixels: None,
        max_duration_ms: None,
        sample_rate: None,
    }));
    let schema = schema_for(&ty, &table);
    let validator = jsonschema::validator_for(&schema).unwrap();
    let prefix = "holon://files/";
    let chars = |n: usize| "\u{e9}".repeat(n);
    let base = |field: &str, text: String| {
        let mut v = json!({
            "ref": format!("{prefix}f"),
            "content_type": "text/plain",
            "size": 1,
            "sha256": "a".repeat(SHA256_LEN as usize),
        });
        v[field] = json!(text);
        v
    };
    let cases = [
        base(
            "ref",
            format!("{prefix}{}", chars(REF_MAX_LEN as usize - prefix.len())),
        ),
        base(
            "ref",
            format!("{prefix}{}", chars(REF_MAX_LEN as usize - prefix.len() + 1)),
        ),
        base("ref", prefix.to_owned()),
        base("source", chars(SOURCE_MAX_LEN as usize)),
        base("source", chars(SOURCE_MAX_LEN as usize + 1)),
        base(
            "content_type",
            format!("text/{}", chars(CONTENT_TYPE_MAX_LEN as usize - 5)),
        ),
        base(
            "content_type",
            format!("text/{}", chars(CONTENT_TYPE_MAX_LEN as usize - 4)),
        ),
    ];
    let verdicts: Vec<(bool, bool)> = cases
        .iter()
        .map(|v| (validator.is_valid(v), decoder_valid(&ty, &table, v)))
        .collect();
    for (case, (schema_ok, decoder_ok)) in cases.iter().zip(&verdicts) {
        assert_eq!(
            schema_ok, decoder_ok,
            "schema and decoder disagree on {case}"
        );
    }
    let accepted: Vec<bool> = verdicts.iter().map(|v| v.0).collect();
    assert_eq!(accepted, [true, false, false, true, false, true, false]);
}

// ---------------------------------------------------------------- exact sizes

fn s(min: u32, max: u32) -> Ty {
    Ty::Str(StrTy {
        min,
        max,
        pattern: None,
        format: None,
    })
}

/// The length of `v` written as widely as a writer may ([`worst_text`]).
fn len_of(v: &Value) -> u64 {
    worst_text(v).len() as u64
}

#[test]
fn max_is_attained_for_simple_types() {
    let table = TypeTable::default();
    let widest_str = |n: usize| json!("\u{1F600}".repeat(n));
    assert_eq!(max_json_len(&s(0, 16), &table), len_of(&widest_str(16)));
    assert_eq!(max_json_len(&Ty::Bool, &table), len_of(&json!(false)));
    for kind in INT_KINDS {
        let int = IntTy::base(*kind);
        let (lo, hi) = kind.range();
        let widest = if lo < 0 {
            json!(lo as i64)
        } else {
            json!(hi as u64)
        };
        // An i64 reaches 10^18, where a double writer's `-1.0000000000000001e+18` is wider
        // than `-9223372036854775808.0` (see integers_past_ten_to_the_sixteen_…).
        let expected = if *kind == IntKind::I64 {
            23
        } else {
            len_of(&widest)
        };
        assert_eq!(max_json_len(&Ty::Int(int), &table), expected, "{kind:?}");
    }
    let refined = Ty::Int(IntTy {
        kind: IntKind::I16,
        min: -5,
        max: 100,
        max_exclusive: true,
    });
    assert_eq!(max_json_len(&refined, &table), 4); // "99.0" and "-5.0"
    let float = Ty::Float(FloatTy {
        kind: FloatKind::F64,
        min: None,
        max: None,
    });
    assert_eq!(
        max_json_len(&float, &table),
        len_of(&json!(-1.234_567_890_123_456_7e-6))
    );
    assert_eq!(len_of(&json!(-1.234_567_890_123_456_7e-6)), 25);
    let l = Ty::List(ListTy {
        item: Box::new(s(0, 3)),
        min: 0,
        max: 4,
        unique: false,
    });
    let widest = json!([widest_str(3), widest_str(3), widest_str(3), widest_str(3)]);
    assert_eq!(max_json_len(&l, &table), len_of(&widest));
    let opt = Ty::Option {
        some: Box::new(Ty::Bool),
    };
    assert_eq!(max_json_len(&opt, &table), 5);
    let opt = Ty::Option {
        some: Box::new(Ty::Int(IntTy::base(IntKind::U8))),
    };
    assert_eq!(max_json_len(&opt, &table), 5); // 255.0
    let opt = Ty::Option {
        some: Box::new(Ty::Int(IntTy {
            kind: IntKind::U8,
            min: 0,
            max: 9,
            max_exclusive: false,
        })),
    };
    assert_eq!(max_json_len(&opt, &table), 4); // null
}

#[test]
fn max_is_attained_for_structs_enums_and_maps() {
    let mut table = TypeTable::default();
    let sev = unit_enum(3, &mut table); // low, mid, high_value
    let st = push_def(
        &mut table,
        DefKind::Struct {
            fields: vec![
                FieldTy {
                    name: "a".into(),
                    docs: None,
                    ty: s(0, 2),
                    default: None,
                },
                FieldTy {
                    name: "sev".into(),
                    docs: None,
                    ty: Ty::Option {
                        some: Box::new(sev.clone()),
                    },
                    default: None,
                },
            ],
        },
    );
    let widest = json!({"a": "\u{1F600}\u{1F600}", "sev": "high_value"});
    assert_eq!(max_json_len(&st, &table), len_of(&widest));
    // A map keyed by the enum holds each key once.
    let map = Ty::Map(MapTy {
        key: Box::new(sev.clone()),
        value: Box::new(Ty::Bool),
        min: 0,
        max: 10,
    });
    let widest = json!({"high_value": false, "low": false, "mid": false});
    assert_eq!(max_json_len(&map, &table), len_of(&widest));
    // A set of bools holds at most two.
    let set = Ty::List(ListTy {
        item: Box::new(Ty::Bool),
        min: 0,
        max: 10,
        unique: true,
    });
    assert_eq!(max_json_len(&set, &table), len_of(&json!([false, true])));
    // Data enum: the widest arm, tag included.
    let shape = push_def(
        &mut table,
        DefKind::Enum {
            tag: "kind".into(),
            variants: vec![
                VariantTy {
                    name: "point".into(),
                    docs: None,
                    fields: None,
                },
                VariantTy {
                    name: "c".into(),
                    docs: None,
                    fields: Some(vec![FieldTy {
                        name: "r".into(),
                        docs: None,
                        ty: Ty::Int(IntTy::base(IntKind::I8)),
                        default: None,
                    }]),
                },
            ],
        },
    );
    // Escaped, the unit arm's name outweighs the other arm's field: 68 bytes against 66.
    let widest = json!({"kind": "point"});
    assert!(len_of(&json!({"kind": "c", "r": -128})) < len_of(&widest));
    assert_eq!(max_json_len(&shape, &table), len_of(&widest));
    assert_eq!(
        default_max_answer(&shape, &table),
        len_of(&widest) + CODE_FENCE_LEN
    );
    assert_eq!(CODE_FENCE_LEN, "```json\n\n```".len() as u64);
}

#[test]
fn recursive_types_are_bounded_by_the_depth_limit() {
    let mut table = TypeTable::default();
    // struct Tree { children: List<Tree, 2> }: each layer opens two levels (the object and its
    // array), so 32 layers fit in depth 64: 2^32 innermost trees, each escaped and indented up
    // to 256 spaces, some 3.9e12 bytes. Finite, far above any real answer, and not saturated.
    table.defs.push(TypeDef {
        name: "Tree".into(),
        module: "m".into(),
        docs: None,
        kind: DefKind::Struct {
            fields: vec![FieldTy {
                name: "children".into(),
                docs: None,
                ty: Ty::List(ListTy {
                    item: Box::new(Ty::Ref { def: DefId(0) }),
                    min: 0,
                    max: 2,
                    unique: false,
                }),
                default: None,
            }],
        },
    });
    let tree = Ty::Ref { def: DefId(0) };
    let tree_len = max_json_len(&tree, &table);
    assert!(tree_len > 1 << 41 && tree_len < 1 << 43, "{tree_len}");
    // struct Chain { next: Option<Chain> }: 32 objects deep at most (each opens one level...
    // every Chain is one object, so 64 nested objects).
    table.defs.push(TypeDef {
        name: "Chain".into(),
        module: "m".into(),
        docs: None,
        kind: DefKind::Struct {
            fields: vec![FieldTy {
                name: "next".into(),
                docs: None,
                ty: Ty::Option {
                    some: Box::new(Ty::Ref { def: DefId(1) }),
                },
                default: None,
            }],
        },
    });
    let chain = Ty::Ref { def: DefId(1) };
    // 64 nested objects, the innermost `null`, each pretty-printed at its level with its key
    // escaped: `{` `\n` + 4 × level spaces, `"\u006e\u0065\u0078\u0074"`, `: `, the inner
    // value, `\n` + 4 × (level - 1) spaces, `}`.
    let key = r#""\u006e\u0065\u0078\u0074""#.len() as u64;
    let mut expected = 4; // null
    for level in (1..=64u64).rev() {
        expected = 1 + (1 + 4 * level) + key + 2 + expected + (1 + 4 * (level - 1)) + 1;
    }
    assert_eq!(max_json_len(&chain, &table), expected);
    let mut value = json!(null);
    for _ in 0..64 {
        value = json!({ "next": value });
    }
    assert_eq!(len_of(&value), expected);
    // An alias loop (`type A = Option<A>`) terminates: only `null`.
    table.defs.push(TypeDef {
        name: "A".into(),
        module: "m".into(),
        docs: None,
        kind: DefKind::Alias {
            ty: Ty::Option {
                some: Box::new(Ty::Ref { def: DefId(2) }),
            },
        },
    });
    assert_eq!(max_json_len(&Ty::Ref { def: DefId(2) }, &table), 4);
}

// ---------------------------------------------------------------- grammars (issue 26)
//
// The emitted grammars against the decoder, on the same random types and values:
// - grammar-accepts ⇒ decoder-accepts, on the type loosened by what the header lists as not
//   expressed (patterns, float ranges, Set uniqueness), and on the type itself when the header
//   lists nothing beyond the platform bounds and map-key distinctness (a `serde_json` map never
//   repeats a key);
// - decoder-accepts ⇒ grammar-accepts for the spellings the grammar claims (compact
//   `serde_json` text: fields in declared order, canonical numbers), with and without a fence.
// GBNF is checked by the recognizer below; Lark by llguidance itself (Python, in one process).

/// A recognizer of the GBNF aelc writes: rules of literals, classes, groups, alternatives and
/// `? * + {m} {m,} {m,n}` repetitions, matched by backtracking over every end position, with
/// each rule's ends memoized per start.
mod gbnf {
    use std::collections::{BTreeSet, HashMap};

    #[derive(Debug, Clone)]
    pub enum E {
        Lit(Vec<char>),
        Class(bool, Vec<(char, char)>),
        Rule(String),
        Seq(Vec<E>),
        Alt(Vec<E>),
        Rep(Box<E>, u32, Option<u32>),
    }

    pub struct Grammar {
        rules: HashMap<String, E>,
    }

    struct P<'a> {
        s: &'a [char],
        i: usize,
    }

    impl P<'_> {
        fn peek(&self) -> Option<char> {
            self.s.get(self.i).copied()
        }
        fn skip_ws(&mut self) {
            while matches!(self.peek(), Some(' ' | '\t')) {
                self.i += 1;
            }
        }
        fn hex(&mut self, n: usize) -> char {
            let text: String = self.s[self.i..self.i + n].iter().collect();
            self.i += n;
            char::from_u32(u32::from_str_radix(&text, 16).unwrap()).unwrap()
        }
        fn escaped(&mut self) -> char {
            let c = self.s[self.i];
            self.i += 1;
            if c != '\\' {
                return c;
            }
            let e = self.s[self.i];
            self.i += 1;
            match e {
                'x' => self.hex(2),
                'u' => self.hex(4),
                'U' => self.hex(8),
                'n' => '\n',
                'r' => '\r',
                't' => '\t',
                other => other,
            }
        }
        fn number(&mut self) -> u32 {
            let start = self.i;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.i += 1;
            }
            self.s[start..self.i]
                .iter()
                .collect::<String>()
                .parse()
                .unwrap()
        }
        fn alt(&mut self) -> E {
            let mut alts = vec![self.seq()];
            while self.peek() == Some('|') {
                self.i += 1;
                alts.push(self.seq());
            }
            if alts.len() == 1 {
                alts.pop().unwrap()
            } else {
                E::Alt(alts)
            }
        }
        fn seq(&mut self) -> E {
            let mut parts = Vec::new();
            loop {
                self.skip_ws();
                let atom = match self.peek() {
                    None | Some('|' | ')') => break,
                    Some('"') => {
                        self.i += 1;
                        let mut lit = Vec::new();
                        while self.peek() != Some('"') {
                            lit.push(self.escaped());
                        }
                        self.i += 1;
                        E::Lit(lit)
                    }
                    Some('[') => {
                        self.i += 1;
                        let negated = self.peek() == Some('^');
                        if negated {
                            self.i += 1;
                        }
                        let mut ranges = Vec::new();
                        while self.peek() != Some(']') {
                            let a = self.escaped();
                            let b = if self.peek() == Some('-') && self.s[self.i + 1] != ']' {
                                self.i += 1;
                                self.escaped()
                            } else {
                                a
                            };
                            ranges.push((a, b));
                        }
                        self.i += 1;
                        E::Class(negated, ranges)
                    }
                    Some('(') => {
                        self.i += 1;
                        let inner = self.alt();
                        assert_eq!(self.peek(), Some(')'));
                        self.i += 1;
                        inner
                    }
                    Some(_) => {
                        let start = self.i;
                        while self
                            .peek()
                            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
                        {
                            self.i += 1;
                        }
                        assert!(self.i > start, "unexpected {:?}", self.peek());
                        E::Rule(self.s[start..self.i].iter().collect())
                    }
                };
                let atom = match self.peek() {
                    Some('?') => {
                        self.i += 1;
                        E::Rep(Box::new(atom), 0, Some(1))
                    }
                    Some('*') => {
                        self.i += 1;
                        E::Rep(Box::new(atom), 0, None)
                    }
                    Some('+') => {
                        self.i += 1;
                        E::Rep(Box::new(atom), 1, None)
                    }
                    Some('{') => {
                        self.i += 1;
                        let m = self.number();
                        let n = if self.peek() == Some(',') {
                            self.i += 1;
                            (self.peek() != Some('}')).then(|| self.number())
                        } else {
                            Some(m)
                        };
                        self.i += 1;
                        E::Rep(Box::new(atom), m, n)
                    }
                    _ => atom,
                };
                parts.push(atom);
            }
            E::Seq(parts)
        }
    }

    impl Grammar {
        pub fn parse(text: &str) -> Grammar {
            let mut rules = HashMap::new();
            for line in text.lines() {
                if line.starts_with('#') || line.trim().is_empty() {
                    continue;
                }
                let (name, body) = line.split_once(" ::= ").expect("a rule");
                let chars: Vec<char> = body.chars().collect();
                let mut p = P { s: &chars, i: 0 };
                let e = p.alt();
                assert_eq!(p.i, chars.len(), "rule {name} not read to its end");
                rules.insert(name.to_owned(), e);
            }
            let g = Grammar { rules };
            for e in g.rules.values() {
                g.check_refs(e);
            }
            g
        }

        fn check_refs(&self, e: &E) {
            match e {
                E::Rule(r) => assert!(self.rules.contains_key(r), "undefined rule {r}"),
                E::Seq(v) | E::Alt(v) => v.iter().for_each(|e| self.check_refs(e)),
                E::Rep(e, ..) => self.check_refs(e),
                _ => {}
            }
        }

        pub fn accepts(&self, text: &str) -> bool {
            let chars: Vec<char> = text.chars().collect();
            let mut memo = HashMap::new();
            let root = E::Rule("root".into());
            ends(self, &root, &chars, 0, &mut memo).contains(&chars.len())
        }
    }

    fn ends(
        g: &Grammar,
        e: &E,
        s: &[char],
        at: usize,
        memo: &mut HashMap<(String, usize), BTreeSet<usize>>,
    ) -> BTreeSet<usize> {
        match e {
            E::Lit(l) => {
                if s.get(at..at + l.len()) == Some(l.as_slice()) {
                    BTreeSet::from([at + l.len()])
                } else {
                    BTreeSet::new()
                }
            }
            E::Class(neg, ranges) => match s.get(at) {
                Some(c) if ranges.iter().any(|(a, b)| a <= c && c <= b) != *neg => {
                    BTreeSet::from([at + 1])
                }
                _ => BTreeSet::new(),
            },
            E::Rule(name) => {
                let key = (name.clone(), at);
                if let Some(r) = memo.get(&key) {
                    return r.clone();
                }
                memo.insert(key.clone(), BTreeSet::new());
                let r = ends(g, &g.rules[name], s, at, memo);
                memo.insert(key, r.clone());
                r
            }
            E::Seq(parts) => {
                let mut now = BTreeSet::from([at]);
                for p in parts {
                    now = now.iter().flat_map(|i| ends(g, p, s, *i, memo)).collect();
                    if now.is_empty() {
                        break;
                    }
                }
                now
            }
            E::Alt(alts) => alts.iter().flat_map(|a| ends(g, a, s, at, memo)).collect(),
            E::Rep(inner, min, max) => {
                let mut out = BTreeSet::new();
                let mut now = BTreeSet::from([at]);
                let mut seen = BTreeSet::new();
                let mut count = 0u32;
                loop {
                    if count >= *min {
                        out.extend(now.iter().copied());
                    }
                    if max.is_some_and(|m| count >= m) || now.is_empty() {
                        break;
                    }
                    // Past the minimum, a position already reached needs no second visit.
                    let next: BTreeSet<usize> = now
                        .iter()
                        .flat_map(|i| ends(g, inner, s, *i, memo))
                        .collect();
                    now = if count >= *min {
                        next.into_iter().filter(|i| seen.insert(*i)).collect()
                    } else {
                        next
                    };
                    count += 1;
                }
                out
            }
        }
    }
}

/// `ty` without the bounds a grammar header may list as not expressed.
fn loosened(ty: &Ty) -> Ty {
    match ty {
        Ty::Str(st) => Ty::Str(StrTy {
            pattern: None,
            format: None,
            ..st.clone()
        }),
        // A range with an end is expressed (exactly, in the spellings the header names).
        Ty::Float(ft) if !expressed_range(ft) => Ty::Float(FloatTy {
            min: None,
            max: None,
            ..*ft
        }),
        Ty::List(lt) => Ty::List(ListTy {
            item: Box::new(loosened(&lt.item)),
            unique: false,
            ..lt.clone()
        }),
        Ty::Map(mt) => Ty::Map(MapTy {
            key: Box::new(loosened(&mt.key)),
            value: Box::new(loosened(&mt.value)),
            ..mt.clone()
        }),
        Ty::Option { some } => Ty::Option {
            some: Box::new(loosened(some)),
        },
        other => other.clone(),
    }
}

/// Whether the grammar expresses a float range: it has an end, and every end it has is
/// finite.
fn expressed_range(ft: &FloatTy) -> bool {
    let ends = [ft.min, ft.max];
    ends.iter().any(Option::is_some) && ends.iter().flatten().all(|b| b.value.is_finite())
}

fn loosened_table(table: &TypeTable) -> TypeTable {
    let field = |f: &FieldTy| FieldTy {
        ty: loosened(&f.ty),
        ..f.clone()
    };
    TypeTable::new(
        table
            .defs
            .iter()
            .map(|d| TypeDef {
                kind: match &d.kind {
                    DefKind::Struct { fields } => DefKind::Struct {
                        fields: fields.iter().map(field).collect(),
                    },
                    DefKind::Enum { tag, variants } => DefKind::Enum {
                        tag: tag.clone(),
                        variants: variants
                            .iter()
                            .map(|v| VariantTy {
                                fields: v.fields.as_ref().map(|fs| fs.iter().map(field).collect()),
                                ..v.clone()
                            })
                            .collect(),
                    },
                    DefKind::Alias { ty } => DefKind::Alias { ty: loosened(ty) },
                },
                ..d.clone()
            })
            .collect(),
    )
}

/// Whether the grammar's header lists nothing the generated texts could break (the platform
/// bounds are far away at depth 3, and a `serde_json` map never repeats a key).
fn grammar_claims_everything(text: &str, comment: &str) -> bool {
    let header: Vec<&str> = text
        .lines()
        .take_while(|l| l.starts_with(comment))
        .collect();
    let start = header
        .iter()
        .position(|l| l.contains("Not expressed"))
        .map_or(header.len(), |p| p + 1);
    header[start..]
        .iter()
        .take_while(|l| l.starts_with(&format!("{comment} - ")))
        .all(|l| l.contains("platform bounds") || l.contains("map keys are distinct"))
}

fn decodes(ty: &Ty, table: &TypeTable, text: &str) -> bool {
    aelc_runtime::decode::decode(text.as_bytes(), ty, table, "value", 1 << 24).is_ok()
}

/// The texts checked against a type's grammar: compact and spaced encodings of random values
/// near the bounds, fenced and not.
fn grammar_texts(ty: &Ty, table: &TypeTable, seed: u64, n: usize) -> Vec<(String, bool)> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    for _ in 0..n {
        let value = gen_value(ty, table, &mut rng, 0);
        // `3.0` for an integer decodes but is not the canonical spelling the grammar claims.
        let canonical = !has_integral_float(&value);
        let compact = serde_json::to_string(&value).unwrap();
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        out.push((compact.clone(), canonical));
        out.push((format!("```json\n{compact}\n```\n"), canonical));
        out.push((format!(" {pretty}"), canonical && !deep_indent(&pretty)));
        // Near-valid texts: a truncation and a trailing comma inside.
        let half = compact.chars().count() / 2;
        out.push((compact.chars().take(half).collect(), false));
        if let Some(i) = compact.rfind(['}', ']']) {
            out.push((format!("{},{}", &compact[..i], &compact[i..]), false));
        }
    }
    out
}

/// Whether pretty-printing indented a line past the grammar's whitespace bound.
fn deep_indent(pretty: &str) -> bool {
    pretty.lines().any(|l| {
        l.len() - l.trim_start().len() + 1 > aelc::codegen::grammar::MAX_WHITESPACE as usize
    })
}

/// `PROPTEST_CASES` when set (to run a property many more times by hand), else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(300), ..ProptestConfig::default() })]

    #[test]
    fn gbnf_accepts_only_what_the_decoder_accepts(shape in grammar_shape(), seed in any::<u64>()) {
        let mut table = TypeTable::default();
        let ty = lower(&shape, &mut table);
        let text = aelc::codegen::grammar::gbnf_for(&table, &ty);
        let grammar = gbnf::Grammar::parse(&text);
        let exact = grammar_claims_everything(&text, "#");
        let loose_table = loosened_table(&table);
        let loose_ty = loosened(&ty);
        for (answer, canonical) in grammar_texts(&ty, &table, seed, 8) {
            let by_grammar = grammar.accepts(&answer);
            let json = aelc_runtime::pipeline::strip_fence(&answer).unwrap_or("");
            let by_decoder = decodes(&ty, &table, json);
            if by_grammar {
                prop_assert!(decodes(&loose_ty, &loose_table, json), "grammar accepts {answer:?}, the decoder does not\n{text}");
                prop_assert!(!exact || by_decoder, "grammar accepts {answer:?}, the decoder does not\n{text}");
            }
            if by_decoder && canonical {
                prop_assert!(by_grammar, "the decoder accepts {answer:?}, the grammar does not\n{text}");
            }
        }
    }
}

#[test]
fn gbnf_is_exact_on_string_lengths_escapes_and_integer_edges() {
    let table = TypeTable::default();
    let s3 = aelc::codegen::grammar::gbnf_for(&table, &s(2, 3));
    let g = gbnf::Grammar::parse(&s3);
    for (text, ok) in [
        (r#""abc""#, true),
        (r#""ab""#, true),
        (r#""a""#, false),
        (r#""abcd""#, false),
        (r#""\u00e9\u00e9\u00e9""#, true),
        ("\"\u{e9}\u{e9}\u{e9}\"", true),
        (r#""\ud83d\ude00a""#, true),
        (r#""\ud83d\ude00ab\n""#, false),
        (r#""\ud83dab""#, false),
        (r#""a\"\\""#, true),
        (r#""a\q""#, false),
    ] {
        assert_eq!(g.accepts(text), ok, "{text}");
        assert_eq!(decodes(&s(2, 3), &table, text), ok, "{text}");
    }
    let u64_ty = Ty::Int(IntTy::base(IntKind::U64));
    let g = gbnf::Grammar::parse(&aelc::codegen::grammar::gbnf_for(&table, &u64_ty));
    assert!(g.accepts("18446744073709551615"));
    assert!(!g.accepts("18446744073709551616"));
    assert!(g.accepts("```json\n0\n```"));
    assert!(!g.accepts("-1"));
    assert!(!g.accepts(&format!("{}1", " ".repeat(30))));
}

/// Floats as shortest-round-trip printers write them (the flaky seed of
/// `gbnf_accepts_only_what_the_decoder_accepts` was `-0.039999999999999813`: 18 digits after the
/// point, 17 of them significant), and nothing that decodes as infinite.
#[test]
fn gbnf_takes_every_shortest_float_spelling_and_nothing_infinite() {
    let table = TypeTable::default();
    let float = |kind| {
        Ty::Float(FloatTy {
            kind,
            min: None,
            max: None,
        })
    };
    for (kind, texts) in [
        (
            FloatKind::F64,
            &[
                "-0.039999999999999813",
                "0.000012345678901234567",
                "0.0000012345678901234567",
                "100000000000000000000",
                "1e100",
                "1e+100",
                "1e-05",
                "5e-324",
                "1.7976931348623157e308",
                "1.7976931348623158e308",
                "1.7976931348623159e308",
                "1.8e308",
                "1e309",
            ][..],
        ),
        (
            FloatKind::F32,
            &[
                "3.4028235e38",
                "3.4028235677973364e38",
                "3.4028235677973365e38",
                "1e39",
                "1e-45",
                "0.1",
            ][..],
        ),
    ] {
        let ty = float(kind);
        let g = gbnf::Grammar::parse(&aelc::codegen::grammar::gbnf_for(&table, &ty));
        for text in texts {
            assert_eq!(
                g.accepts(text),
                decodes(&ty, &table, text),
                "{kind:?} {text}"
            );
        }
    }
}

/// Float ranges with fractional, exclusive and negative ends (`f64` and `f32`), and the
/// formats, with texts at and around their edges: each end, the next float each way, `-0.0`,
/// exponents, fractions of every length. The GBNF recognizer and llguidance must both agree
/// with the decoder on every one (they are all in the spellings the grammar covers).
fn edge_cases() -> Vec<(Ty, Vec<String>)> {
    let open = |kind, lo: Option<(f64, bool)>, hi: Option<(f64, bool)>| {
        let bound = |(value, exclusive)| FloatBound { value, exclusive };
        Ty::Float(FloatTy {
            kind,
            min: lo.map(bound),
            max: hi.map(bound),
        })
    };
    let range = |kind, lo: f64, lo_excl, hi: f64, hi_excl| {
        open(kind, Some((lo, lo_excl)), Some((hi, hi_excl)))
    };
    // Past 10^16 on an open side: fixed notation up to 21 digits, exponents up to the edge.
    let far = |sign: &str| {
        [
            "9999999999999999.5",
            "10000000000000000",
            "123456789012345678901.5",
            "1e16",
            "1.5e+17",
            "1E300",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.7976931348623159e308",
            "1e309",
            "3.4028235677973364e38",
            "3.4028235677973365e38",
            "1e39",
        ]
        .map(|t| format!("{sign}{t}"))
    };
    let near = |ends: &[f64]| {
        let mut texts: Vec<String> = ["0", "0.0", "-0.0", "-0", "1e-7", "-1e-7", "5e-324"]
            .map(str::to_owned)
            .to_vec();
        for &v in ends {
            for w in [v, next_up(v), next_down(v), v + 0.25, v - 0.25] {
                texts.push(serde_json::to_string(&w).unwrap());
                // Scientific notation is covered with a negative exponent or from 10^16 on,
                // fixed notation up to 21 digits before the point.
                let sci = format!("{w:e}");
                if sci.contains("e-") || w.abs() >= 1e16 {
                    texts.push(sci);
                }
                if w.abs() < 1e21 {
                    texts.push(format!("{w:.17}"));
                }
            }
        }
        texts
    };
    let text = |format, max| {
        Ty::Str(StrTy {
            min: 0,
            max,
            pattern: None,
            format: Some(format),
        })
    };
    let quoted = |items: &[&str]| items.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>();
    vec![
        (
            range(FloatKind::F64, 0.5, false, 2.75, false),
            near(&[0.5, 2.75]),
        ),
        (range(FloatKind::F64, 0.0, false, 1.0, true), {
            let mut t = near(&[0.0, 1.0]);
            t.extend(["0.99999999999999995", "9.9999999999999989e-1"].map(str::to_owned));
            t
        }),
        (range(FloatKind::F64, 0.0, true, 0.001, false), {
            let mut t = near(&[0.0, 0.001]);
            t.extend(
                [
                    "2e-324",
                    "3e-324",
                    "1e-400",
                    "1e-05",
                    "1E-3",
                    "1.0000000000000001e-3",
                ]
                .map(str::to_owned),
            );
            t
        }),
        (
            range(FloatKind::F64, -2.5, true, -0.1, false),
            near(&[-2.5, -0.1]),
        ),
        (
            range(FloatKind::F32, -0.3, false, 0.7, true),
            near(&[-0.3, 0.7]),
        ),
        (
            range(FloatKind::F64, -1e9, false, 1e9, false),
            near(&[-1e9, 1e9]),
        ),
        (open(FloatKind::F64, Some((0.5, false)), None), {
            let mut t = near(&[0.5]);
            t.extend(far(""));
            t.extend(far("-"));
            t
        }),
        (open(FloatKind::F64, None, Some((-1.0, true))), {
            let mut t = near(&[-1.0]);
            t.extend(far(""));
            t.extend(far("-"));
            t
        }),
        (range(FloatKind::F64, 0.0, false, 1e300, false), {
            let mut t = near(&[0.0, 1e300]);
            t.extend(far(""));
            t.extend(
                ["1.0000000000000001e300", "1.000000000000001e300", "1e+301"].map(str::to_owned),
            );
            t
        }),
        (open(FloatKind::F64, Some((1e20, true)), None), {
            let mut t = near(&[1e20]);
            t.extend(far(""));
            t.extend(
                [
                    "100000000000000000000",
                    "100000000000000008191.5",
                    "100000000000000008193",
                    "100000000000000008192",
                    "100000000000000008192.0000000000000000000001",
                    "1.0000000000000002e20",
                ]
                .map(str::to_owned),
            );
            t
        }),
        (range(FloatKind::F32, -1e30, true, 2e20, false), {
            let mut t = near(&[-1e30, 2e20]);
            t.extend(far(""));
            t.extend(far("-"));
            t
        }),
        (open(FloatKind::F32, Some((0.0, false)), None), {
            let mut t = near(&[0.0]);
            t.extend(far(""));
            t.extend(far("-"));
            t
        }),
        (
            text(Format::DateTime, 64),
            quoted(&[
                "2026-12-02T15:00:00Z",
                "2026-12-02t15:00:00.123+01:00",
                "2024-02-29T23:59:60.5z",
                "2023-02-29T00:00:00Z",
                "2026-12-02T24:00:00Z",
                "2026-12-02T15:00:00",
                "2026-12-02T15:00:00.Z",
                "2026-12-02T15:00:00+24:00",
                "2026-12-02T15:00:00.1234567890123456789012345678901234567890123Z",
                "2026-12-02T15:00:00.12345678901234567890123456789012345678901234Z",
            ]),
        ),
        (
            text(Format::Email, 254),
            quoted(&[
                "a.b+c@example.com",
                "a..b@example.com",
                "@example.com",
                "a@-x.com",
                "xn--bcher-kva@xn--bcher-kva.example",
                "a@b",
            ]),
        ),
        (
            text(Format::Uri, 2048),
            quoted(&[
                "https://example.com/a?b=c#d",
                "urn:isbn:0451450523",
                "/relative/path",
                "http://a b",
                "http://a%zz",
                "http://a%2F",
            ]),
        ),
    ]
}

#[test]
fn gbnf_is_exact_on_float_ranges_and_formats() {
    let table = TypeTable::default();
    for (ty, texts) in edge_cases() {
        let text = aelc::codegen::grammar::gbnf_for(&table, &ty);
        let g = gbnf::Grammar::parse(&text);
        assert!(grammar_claims_everything(&text, "#"), "{text}");
        for t in texts {
            assert_eq!(g.accepts(&t), decodes(&ty, &table, &t), "{ty:?} {t}");
        }
    }
}

/// Grammar sizes grow linearly: a project of 1,000 declarations, each struct using the one
/// before it, gives a grammar at most a constant times the size of one declaration's.
#[test]
fn grammar_size_is_linear_in_the_type() {
    fn chain(n: usize) -> (TypeTable, Ty) {
        let mut table = TypeTable::default();
        let mut prev = s(0, 10);
        for i in 0..n {
            let fields = vec![
                FieldTy {
                    name: "a".into(),
                    docs: None,
                    ty: Ty::Option {
                        some: Box::new(prev.clone()),
                    },
                    default: None,
                },
                FieldTy {
                    name: "b".into(),
                    docs: None,
                    ty: Ty::List(ListTy {
                        item: Box::new(prev.clone()),
                        min: 0,
                        max: 5,
                        unique: false,
                    }),
                    default: None,
                },
                FieldTy {
                    name: "c".into(),
                    docs: None,
                    ty: Ty::Int(IntTy::base(IntKind::I64)),
                    default: Some(Box::new(json!(0))),
                },
                FieldTy {
                    name: "d".into(),
                    docs: None,
                    ty: Ty::Map(MapTy {
                        key: Box::new(s(1, 8)),
                        value: Box::new(prev.clone()),
                        min: 0,
                        max: 3,
                    }),
                    default: None,
                },
            ];
            table.defs.push(TypeDef {
                name: format!("T{i}"),
                module: "m".into(),
                docs: None,
                kind: DefKind::Struct { fields },
            });
            prev = Ty::Ref {
                def: DefId(i as u32),
            };
        }
        (table, prev)
    }
    let size = |n: usize| {
        let (table, ty) = chain(n);
        let gbnf = aelc::codegen::grammar::gbnf_for(&table, &ty).len();
        let lark = aelc::codegen::grammar::lark_for(&table, &ty).len();
        (gbnf, lark)
    };
    let (g10, l10) = size(10);
    let (g1000, l1000) = size(1000);
    assert!(
        g1000 < g10 * 100 * 2,
        "GBNF: {g10} bytes for 10 declarations, {g1000} for 1,000"
    );
    assert!(
        l1000 < l10 * 100 * 2,
        "Lark: {l10} bytes for 10 declarations, {l1000} for 1,000"
    );
}

/// Reads `{"grammars": [lark…], "cases": [[grammar, text]…]}` on stdin and writes
/// `{"errors": [error or null per grammar], "verdicts": [accepted per case]}`: llguidance
/// compiles each grammar and runs each text through it byte by byte.
const LLGUIDANCE_DRIVER: &str = r#"
import json, sys
import llguidance as llg

class Bytes:
    # One token per byte, and an end-of-sequence token.
    def __init__(self):
        self.tokens = [bytes([i]) for i in range(256)] + [b"<eos>"]
        self.eos_token_id = 256
        self.bos_token_id = None
        self.special_token_ids = [256]
    def __call__(self, s):
        return list(s if isinstance(s, bytes) else s.encode())

tok = llg.LLTokenizer(llg.TokenizerWrapper(Bytes()))
job = json.load(sys.stdin)
compiled, errors = [], []
for lark in job["grammars"]:
    try:
        g = llg.grammar_from("lark", lark)
        err, _ = llg.LLMatcher.validate_grammar_with_warnings(g)
        errors.append(None if not err else "invalid")
        compiled.append(None if err else g)
    except Exception as e:
        errors.append(str(e))
        compiled.append(None)
verdicts = []
for index, text in job["cases"]:
    g = compiled[index]
    if g is None:
        verdicts.append(False)
        continue
    m = llg.LLMatcher(tok, g, log_level=0)
    ok = m.consume_tokens(list(text.encode())) and m.is_accepting() and not m.is_error()
    verdicts.append(bool(ok))
json.dump({"errors": errors, "verdicts": verdicts}, sys.stdout)
"#;

/// The Python with llguidance installed (`AELC_LLGUIDANCE_PYTHON`, set by `.ci/run`); without
/// it the test is skipped locally and fails under CI.
fn llguidance_python() -> Option<String> {
    match std::env::var("AELC_LLGUIDANCE_PYTHON") {
        Ok(p) if !p.is_empty() => Some(p),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set but AELC_LLGUIDANCE_PYTHON is not: .ci/run installs llguidance"
            );
            eprintln!("skipped: set AELC_LLGUIDANCE_PYTHON to a Python with llguidance 1.9.1");
            None
        }
    }
}

fn llguidance_run(
    python: &str,
    grammars: &[String],
    cases: &[(usize, String)],
) -> (Vec<Option<String>>, Vec<bool>) {
    use std::io::Write;
    let mut child = std::process::Command::new(python)
        .args(["-c", LLGUIDANCE_DRIVER])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the llguidance Python");
    let job = json!({"grammars": grammars, "cases": cases});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(job.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "llguidance driver: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors = result["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().map(str::to_owned))
        .collect();
    let verdicts = result["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_bool().unwrap())
        .collect();
    (errors, verdicts)
}

/// Every Lark grammar of the bundled examples and of 150 random types loads in llguidance, and
/// on the random types' texts llguidance, the GBNF recognizer and the decoder agree as
/// `gbnf_accepts_only_what_the_decoder_accepts` requires.
#[test]
fn lark_grammars_load_in_llguidance_and_agree_with_the_decoder() {
    use proptest::strategy::ValueTree;
    let Some(python) = llguidance_python() else {
        return;
    };
    let mut grammars = Vec::new();
    let mut names = Vec::new();
    // The bundled examples, built by the binary.
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut roots: Vec<_> = std::fs::read_dir(&examples)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("ael.toml").is_file())
        .collect();
    roots.sort();
    for root in &roots {
        let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "grammar-{}",
            root.file_name().unwrap().to_string_lossy()
        ));
        let _ = std::fs::remove_dir_all(&out);
        let status = std::process::Command::new(env!("CARGO_BIN_EXE_aelc"))
            .args(["build", "--color", "never", "--out"])
            .arg(&out)
            .arg(root)
            .output()
            .unwrap();
        assert!(status.status.success(), "aelc build {}", root.display());
        let mut found: Vec<_> = std::fs::read_dir(out.join("grammar"))
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "lark"))
            .collect();
        found.sort();
        for path in found {
            names.push(path.display().to_string());
            grammars.push(std::fs::read_to_string(&path).unwrap());
        }
        let _ = std::fs::remove_dir_all(&out);
    }
    assert!(
        grammars.len() >= 4,
        "only {} example grammars",
        grammars.len()
    );
    // Random types, with their texts and the verdicts to compare.
    struct Case {
        grammar: usize,
        text: String,
        canonical: bool,
        by_decoder: bool,
        by_loose_decoder: bool,
        by_gbnf: bool,
        exact: bool,
    }
    let mut cases = Vec::new();
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for seed in 0..150u64 {
        let shape = grammar_shape().new_tree(&mut runner).unwrap().current();
        let mut table = TypeTable::default();
        let ty = lower(&shape, &mut table);
        let lark = aelc::codegen::grammar::lark_for(&table, &ty);
        let gbnf_text = aelc::codegen::grammar::gbnf_for(&table, &ty);
        let gbnf = gbnf::Grammar::parse(&gbnf_text);
        let exact = grammar_claims_everything(&lark, "//");
        let (loose_ty, loose_table) = (loosened(&ty), loosened_table(&table));
        names.push(format!("random type {seed}: {shape:?}"));
        grammars.push(lark);
        for (text, canonical) in grammar_texts(&ty, &table, seed, 4) {
            let json = aelc_runtime::pipeline::strip_fence(&text).unwrap_or("");
            cases.push(Case {
                grammar: grammars.len() - 1,
                by_decoder: decodes(&ty, &table, json),
                by_loose_decoder: decodes(&loose_ty, &loose_table, json),
                by_gbnf: gbnf.accepts(&text),
                text,
                canonical,
                exact,
            });
        }
    }
    // Float ranges and formats at their edges, all in the spellings the grammar covers.
    for (ty, texts) in edge_cases() {
        let table = TypeTable::default();
        let gbnf = gbnf::Grammar::parse(&aelc::codegen::grammar::gbnf_for(&table, &ty));
        names.push(format!("edge case {ty:?}"));
        grammars.push(aelc::codegen::grammar::lark_for(&table, &ty));
        for text in texts {
            cases.push(Case {
                grammar: grammars.len() - 1,
                by_decoder: decodes(&ty, &table, &text),
                by_loose_decoder: decodes(&loosened(&ty), &table, &text),
                by_gbnf: gbnf.accepts(&text),
                text,
                canonical: true,
                exact: true,
            });
        }
    }
    let pairs: Vec<(usize, String)> = cases.iter().map(|c| (c.grammar, c.text.clone())).collect();
    let (errors, verdicts) = llguidance_run(&python, &grammars, &pairs);
    for (name, error) in names.iter().zip(&errors) {
        assert!(
            error.is_none(),
            "llguidance rejects the grammar of {name}: {error:?}"
        );
    }
    let mut accepted = 0;
    for (c, by_lark) in cases.iter().zip(verdicts) {
        let grammar = &grammars[c.grammar];
        accepted += usize::from(by_lark);
        assert_eq!(
            by_lark, c.by_gbnf,
            "Lark and GBNF disagree on {:?}\n{grammar}",
            c.text
        );
        if by_lark {
            assert!(
                c.by_loose_decoder,
                "llguidance accepts {:?}, the decoder does not\n{grammar}",
                c.text
            );
            assert!(
                !c.exact || c.by_decoder,
                "llguidance accepts {:?}, the decoder does not\n{grammar}",
                c.text
            );
        }
        if c.by_decoder && c.canonical {
            assert!(
                by_lark,
                "the decoder accepts {:?}, llguidance does not\n{grammar}",
                c.text
            );
        }
    }
    assert!(
        accepted > cases.len() / 10,
        "llguidance accepted only {accepted} of {} texts",
        cases.len()
    );
}
