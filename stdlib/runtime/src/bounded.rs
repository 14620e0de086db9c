//! Bounded values for generated Rust glue (spec §9.4): Rust types that cannot hold a value
//! outside the bounds of their AEL type.
//!
//! Each type is built only through a checked constructor (`new`, or `Deserialize`, which calls
//! it), and the checks are [`crate::bounds`]' — the very functions the decoder and the validator
//! run — so a rejected value gets the same code and the same sentence everywhere:
//!
//! | AEL | Rust |
//! |---|---|
//! | `Str<N>`, `Str<M..=N>` | [`BoundedStr<N, M>`] |
//! | `Str<…> @pattern(…) @format(…)` | [`RuledStr<R>`], `R` a generated [`TextRules`] marker |
//! | `u16<1..=50>` (a refined integer) | [`BoundedInt<u16, 1, 50>`] (`EXCL` for `a..b`) |
//! | `f64`, `f64<0.0..=1.0>` | [`BoundedFloat<R>`], `R` a [`FloatRules`] marker ([`AnyF64`], [`AnyF32`]) |
//! | `List<T, N>`, `Set<T, N>`, `Map<K, V, N>` | [`BoundedVec`], [`BoundedSet`], [`BoundedMap`] |
//!
//! Unrefined integers and `bool` are the plain Rust types: they cannot be out of range.
//! Const generic parameters cannot be text or floats on stable Rust, hence the marker traits.

use crate::bounds::{self, Patterns};
use crate::error::Code;
use crate::ty::{FloatBound, FloatKind, FloatTy, Format, IntKind, IntTy, StrTy};
use serde::de::{Deserialize, Deserializer, Error as _};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::fmt;
use std::marker::PhantomData;
use std::sync::LazyLock;

/// A value refused by a checked constructor: the code and the sentence the decoder would give.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundError {
    pub code: Code,
    /// The middle of the decoder's sentence (`text has 17 characters, at most 16 are allowed`).
    pub message: String,
}

impl BoundError {
    fn new((code, message): (Code, String)) -> BoundError {
        BoundError { code, message }
    }
}

impl fmt::Display for BoundError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for BoundError {}

/// Compiled `@pattern`s, once per process (a generated type has no place of its own to keep
/// one, and a regex is not `const`); every thread shares them.
static PATTERNS: LazyLock<Patterns> = LazyLock::new(Patterns::default);

fn check_text(s: &str, ty: &StrTy) -> Result<(), BoundError> {
    let mut issues = Vec::new();
    bounds::check_str(s, ty, &PATTERNS, &mut issues);
    match issues.into_iter().next() {
        Some(issue) => Err(BoundError::new(issue)),
        None => Ok(()),
    }
}

/// `Str<MIN..=MAX>`: text of at most `MAX` (at least `MIN`) Unicode scalar values.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BoundedStr<const MAX: u32, const MIN: u32 = 0>(String);

impl<const MAX: u32, const MIN: u32> BoundedStr<MAX, MIN> {
    /// The type description the checks run against.
    pub fn ty() -> StrTy {
        StrTy {
            min: MIN,
            max: MAX,
            pattern: None,
            format: None,
        }
    }

    /// Checks `s` against the bounds.
    pub fn new(s: impl Into<String>) -> Result<Self, BoundError> {
        let s = s.into();
        check_text(&s, &Self::ty())?;
        Ok(BoundedStr(s))
    }

    /// A text the decoder checked against this type's description ([`Self::ty`]).
    pub(crate) fn checked(s: String) -> Self {
        BoundedStr(s)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

/// The refinements of a `Str` with `@pattern` or `@format` (a generated marker type).
pub trait TextRules {
    const MIN: u32 = 0;
    const MAX: u32;
    const PATTERN: Option<&'static str> = None;
    const FORMAT: Option<Format> = None;
}

/// A `Str` with a `@pattern` or `@format`, its rules given by `R`.
pub struct RuledStr<R: TextRules>(String, PhantomData<R>);

impl<R: TextRules> RuledStr<R> {
    pub fn ty() -> StrTy {
        StrTy {
            min: R::MIN,
            max: R::MAX,
            pattern: R::PATTERN.map(str::to_owned),
            format: R::FORMAT,
        }
    }

    /// Checks `s` against the bounds, the pattern and the format.
    pub fn new(s: impl Into<String>) -> Result<Self, BoundError> {
        let s = s.into();
        check_text(&s, &Self::ty())?;
        Ok(RuledStr(s, PhantomData))
    }

    /// A text the decoder checked against this type's description ([`Self::ty`]).
    pub(crate) fn checked(s: String) -> Self {
        RuledStr(s, PhantomData)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

// Derives would put bounds on `R`, a marker that implements nothing.
impl<R: TextRules> Clone for RuledStr<R> {
    fn clone(&self) -> Self {
        RuledStr(self.0.clone(), PhantomData)
    }
}
impl<R: TextRules> fmt::Debug for RuledStr<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}
impl<R: TextRules> PartialEq for RuledStr<R> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl<R: TextRules> Eq for RuledStr<R> {}
impl<R: TextRules> PartialOrd for RuledStr<R> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<R: TextRules> Ord for RuledStr<R> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.cmp(&other.0)
    }
}
impl<R: TextRules> std::hash::Hash for RuledStr<R> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state)
    }
}

impl<const MAX: u32, const MIN: u32> std::ops::Deref for BoundedStr<MAX, MIN> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}
impl<R: TextRules> std::ops::Deref for RuledStr<R> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}
impl<const MAX: u32, const MIN: u32> fmt::Display for BoundedStr<MAX, MIN> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl<R: TextRules> fmt::Display for RuledStr<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl<const MAX: u32, const MIN: u32> Serialize for BoundedStr<MAX, MIN> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}
impl<R: TextRules> Serialize for RuledStr<R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}
impl<'de, const MAX: u32, const MIN: u32> Deserialize<'de> for BoundedStr<MAX, MIN> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        BoundedStr::new(s).map_err(D::Error::custom)
    }
}
impl<'de, R: TextRules> Deserialize<'de> for RuledStr<R> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        RuledStr::new(s).map_err(D::Error::custom)
    }
}

/// A Rust integer type that an AEL integer type is stored in.
pub trait IntPrim: Copy + fmt::Debug + Serialize + for<'de> Deserialize<'de> {
    const KIND: IntKind;
    fn to_i128(self) -> i128;
    fn from_i128(v: i128) -> Option<Self>;
}

macro_rules! int_prim {
    ($($t:ty => $k:ident),*) => {$(
        impl IntPrim for $t {
            const KIND: IntKind = IntKind::$k;
            fn to_i128(self) -> i128 {
                i128::from(self)
            }
            fn from_i128(v: i128) -> Option<Self> {
                <$t>::try_from(v).ok()
            }
        }
    )*};
}
int_prim!(u8 => U8, u16 => U16, u32 => U32, u64 => U64, i8 => I8, i16 => I16, i32 => I32, i64 => I64);

/// A refined integer `T<MIN..=MAX>` (`T<MIN..MAX>` when `EXCL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BoundedInt<T, const MIN: i128, const MAX: i128, const EXCL: bool = false>(T);

impl<T: IntPrim, const MIN: i128, const MAX: i128, const EXCL: bool> BoundedInt<T, MIN, MAX, EXCL> {
    pub fn ty() -> IntTy {
        IntTy {
            kind: T::KIND,
            min: MIN,
            max: MAX,
            max_exclusive: EXCL,
        }
    }

    /// Checks `v` against the range.
    pub fn new(v: T) -> Result<Self, BoundError> {
        match bounds::check_int(v.to_i128(), &Self::ty()) {
            Some(issue) => Err(BoundError::new(issue)),
            None => Ok(BoundedInt(v)),
        }
    }

    /// Checks an integer of any width (what a [`crate::value::Value::Int`] holds).
    pub fn from_wide(v: i128) -> Result<Self, BoundError> {
        match (bounds::check_int(v, &Self::ty()), T::from_i128(v)) {
            (None, Some(v)) => Ok(BoundedInt(v)),
            (Some(issue), _) => Err(BoundError::new(issue)),
            (None, None) => Err(BoundError {
                code: Code::OutOfRange,
                message: format!("{v} does not fit in {}", T::KIND.name()),
            }),
        }
    }

    pub fn get(self) -> T {
        self.0
    }
}

impl<T: IntPrim, const MIN: i128, const MAX: i128, const EXCL: bool> Serialize
    for BoundedInt<T, MIN, MAX, EXCL>
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}
impl<'de, T: IntPrim, const MIN: i128, const MAX: i128, const EXCL: bool> Deserialize<'de>
    for BoundedInt<T, MIN, MAX, EXCL>
{
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        BoundedInt::new(T::deserialize(d)?).map_err(D::Error::custom)
    }
}

/// The refinements of a float type (a marker type; [`AnyF64`] and [`AnyF32`] are unrefined).
pub trait FloatRules {
    const KIND: FloatKind;
    /// `(bound, exclusive)`.
    const MIN: Option<(f64, bool)> = None;
    const MAX: Option<(f64, bool)> = None;
}

/// `f64`: any finite value.
pub enum AnyF64 {}
impl FloatRules for AnyF64 {
    const KIND: FloatKind = FloatKind::F64;
}

/// `f32`: any finite value an `f32` can hold.
pub enum AnyF32 {}
impl FloatRules for AnyF32 {
    const KIND: FloatKind = FloatKind::F32;
}

/// A finite float inside the bounds of `R` (`f32` values are stored widened, as in a
/// [`crate::value::Value`]).
pub struct BoundedFloat<R: FloatRules>(f64, PhantomData<R>);

impl<R: FloatRules> BoundedFloat<R> {
    pub fn ty() -> FloatTy {
        let bound =
            |b: Option<(f64, bool)>| b.map(|(value, exclusive)| FloatBound { value, exclusive });
        FloatTy {
            kind: R::KIND,
            min: bound(R::MIN),
            max: bound(R::MAX),
        }
    }

    /// Checks `v`: finite, representable, inside the bounds.
    pub fn new(v: f64) -> Result<Self, BoundError> {
        match bounds::check_float(v, || v.to_string(), &Self::ty()) {
            Some(issue) => Err(BoundError::new(issue)),
            None => Ok(BoundedFloat(v, PhantomData)),
        }
    }

    /// A value the decoder checked against this type's description ([`Self::ty`]).
    pub(crate) fn checked(v: f64) -> Self {
        BoundedFloat(v, PhantomData)
    }

    pub fn get(&self) -> f64 {
        self.0
    }
}

impl<R: FloatRules> Clone for BoundedFloat<R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R: FloatRules> Copy for BoundedFloat<R> {}
impl<R: FloatRules> fmt::Debug for BoundedFloat<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}
impl<R: FloatRules> PartialEq for BoundedFloat<R> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl<R: FloatRules> PartialOrd for BoundedFloat<R> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        self.0.partial_cmp(&other.0)
    }
}
impl<R: FloatRules> Serialize for BoundedFloat<R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}
impl<'de, R: FloatRules> Deserialize<'de> for BoundedFloat<R> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        BoundedFloat::new(f64::deserialize(d)?).map_err(D::Error::custom)
    }
}

fn check_count(noun: &str, n: usize, min: u32, max: u32) -> Result<(), BoundError> {
    if n > max as usize {
        Err(BoundError::new(bounds::too_many(noun, n, max)))
    } else if n < min as usize {
        Err(BoundError::new(bounds::too_few(noun, n, min)))
    } else {
        Ok(())
    }
}

/// `List<T, MIN..=MAX>`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BoundedVec<T, const MAX: u32, const MIN: u32 = 0>(Vec<T>);

impl<T, const MAX: u32, const MIN: u32> BoundedVec<T, MAX, MIN> {
    /// Checks the number of items (each item is already a checked value).
    pub fn new(items: Vec<T>) -> Result<Self, BoundError> {
        check_count("items", items.len(), MIN, MAX)?;
        Ok(BoundedVec(items))
    }

    /// Items the decoder counted against this type's bounds.
    pub(crate) fn checked(items: Vec<T>) -> Self {
        BoundedVec(items)
    }

    pub fn as_slice(&self) -> &[T] {
        &self.0
    }

    pub fn into_vec(self) -> Vec<T> {
        self.0
    }
}

/// `Set<T, MIN..=MAX>`: distinct items, in the order given.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct BoundedSet<T, const MAX: u32, const MIN: u32 = 0>(Vec<T>);

impl<T: PartialEq, const MAX: u32, const MIN: u32> BoundedSet<T, MAX, MIN> {
    /// Checks the number of items and that no item repeats an earlier one.
    pub fn new(items: Vec<T>) -> Result<Self, BoundError> {
        check_count("items", items.len(), MIN, MAX)?;
        // A set holds at most 1000 items (spec §8), so the quadratic scan is bounded.
        for (i, item) in items.iter().enumerate() {
            if let Some(j) = items[..i].iter().position(|x| x == item) {
                return Err(BoundError {
                    code: Code::DuplicateItem,
                    message: format!("item {i} repeats item {j}"),
                });
            }
        }
        Ok(BoundedSet(items))
    }

    /// Items the decoder counted and found distinct.
    pub(crate) fn checked(items: Vec<T>) -> Self {
        BoundedSet(items)
    }

    pub fn as_slice(&self) -> &[T] {
        &self.0
    }

    pub fn into_vec(self) -> Vec<T> {
        self.0
    }
}

/// A type that can key a `Map`: a bounded text or a unit enum, as its JSON key.
pub trait MapKey: Sized {
    fn key_str(&self) -> &str;
    /// Checks a key read from JSON.
    fn from_key(key: String) -> Result<Self, BoundError>;
}

impl<const MAX: u32, const MIN: u32> MapKey for BoundedStr<MAX, MIN> {
    fn key_str(&self) -> &str {
        &self.0
    }
    fn from_key(key: String) -> Result<Self, BoundError> {
        BoundedStr::new(key)
    }
}
impl<R: TextRules> MapKey for RuledStr<R> {
    fn key_str(&self) -> &str {
        &self.0
    }
    fn from_key(key: String) -> Result<Self, BoundError> {
        RuledStr::new(key)
    }
}

/// `Map<K, V, MIN..=MAX>`: entries sorted by key text, keys distinct (as a decoded
/// [`crate::value::Value::Map`]).
#[derive(Clone, Debug, PartialEq)]
pub struct BoundedMap<K, V, const MAX: u32, const MIN: u32 = 0>(Vec<(K, V)>);

impl<K: MapKey, V, const MAX: u32, const MIN: u32> BoundedMap<K, V, MAX, MIN> {
    /// Sorts the entries by key; checks their number and that no key repeats.
    pub fn new(mut entries: Vec<(K, V)>) -> Result<Self, BoundError> {
        check_count("entries", entries.len(), MIN, MAX)?;
        entries.sort_by(|a, b| a.0.key_str().cmp(b.0.key_str()));
        if let Some(w) = entries
            .windows(2)
            .find(|w| w[0].0.key_str() == w[1].0.key_str())
        {
            return Err(BoundError {
                code: Code::DuplicateKey,
                message: format!("the key {:?} appears twice", w[0].0.key_str()),
            });
        }
        Ok(BoundedMap(entries))
    }

    /// Entries the decoder counted, with distinct keys, sorted by key text.
    pub(crate) fn checked(entries: Vec<(K, V)>) -> Self {
        BoundedMap(entries)
    }

    pub fn entries(&self) -> &[(K, V)] {
        &self.0
    }

    pub fn get(&self, key: &str) -> Option<&V> {
        self.0
            .binary_search_by(|(k, _)| k.key_str().cmp(key))
            .ok()
            .map(|i| &self.0[i].1)
    }

    pub fn into_entries(self) -> Vec<(K, V)> {
        self.0
    }
}

impl<K, V, const MAX: u32, const MIN: u32> Default for BoundedMap<K, V, MAX, MIN> {
    fn default() -> Self {
        BoundedMap(Vec::new())
    }
}

macro_rules! list_serde {
    ($name:ident, $($bound:tt)*) => {
        impl<T: Serialize, const MAX: u32, const MIN: u32> Serialize for $name<T, MAX, MIN> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.0.serialize(s)
            }
        }
        impl<'de, T: Deserialize<'de> $($bound)*, const MAX: u32, const MIN: u32> Deserialize<'de>
            for $name<T, MAX, MIN>
        {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $name::new(Vec::<T>::deserialize(d)?).map_err(D::Error::custom)
            }
        }
    };
}
list_serde!(BoundedVec,);
list_serde!(BoundedSet, + PartialEq);

impl<K: MapKey, V: Serialize, const MAX: u32, const MIN: u32> Serialize
    for BoundedMap<K, V, MAX, MIN>
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k.key_str(), v)?;
        }
        map.end()
    }
}

impl<'de, K, V, const MAX: u32, const MIN: u32> Deserialize<'de> for BoundedMap<K, V, MAX, MIN>
where
    K: MapKey + Deserialize<'de>,
    V: Deserialize<'de>,
{
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries<K, V>(PhantomData<(K, V)>);
        impl<'de, K: Deserialize<'de>, V: Deserialize<'de>> serde::de::Visitor<'de> for Entries<K, V> {
            type Value = Vec<(K, V)>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = a.next_entry()? {
                    out.push(entry);
                }
                Ok(out)
            }
        }
        let entries = d.deserialize_map(Entries(PhantomData))?;
        BoundedMap::new(entries).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::BoundedStr;

    /// Bounds count characters, not bytes: the byte-length shortcut only lets through what
    /// surely fits, and everything else is counted.
    #[test]
    fn text_bounds_count_characters() {
        type Short = BoundedStr<5, 2>;
        assert!(Short::new("ab").is_ok());
        assert!(Short::new("abcde").is_ok());
        assert!(Short::new("a").is_err());
        assert!(Short::new("abcdef").is_err());
        // Five characters in ten bytes fit; six in twelve do not; one in two is too short.
        assert!(Short::new("ééééé").is_ok());
        assert!(Short::new("éééééé").is_err());
        assert!(Short::new("é").is_err());
    }
}
