//! Decoding straight into Rust types: generated glue's structs and enums, the bounded types
//! of [`crate::bounded`], options, boxes and media references, with no [`Value`] in between
//! (issue 23: a `Value` then a conversion cost 2.4–2.7x serde's derive).
//!
//! The reader and the rules are the [`Session`]'s own, so a document gets the same verdict
//! and the same errors (pointer, path, code and sentence) as [`Decoder::decode`] gives: the
//! type that drives each step is still the program's [`Ty`], and a Rust type only says what
//! the checked text or number becomes. Where the program's type is the Rust type's own
//! description (always, for glue generated from that program), a checked value is taken as
//! it is; otherwise (a hand-edited program) the value is decoded as a [`Value`] and converted
//! with the Rust type's own checks ([`Glue::from_value`]), so a mismatch is an error at its
//! place, never a value outside its type.
//!
//! [`Decoder::decode`]: super::Decoder::decode

use super::{Decoded, Fill, Session};
use crate::bounded::{
    BoundedFloat, BoundedInt, BoundedMap, BoundedSet, BoundedStr, BoundedVec, FloatRules, IntPrim,
    MapKey, RuledStr, TextRules,
};
use crate::error::{Code, Trail};
use crate::glue::Glue;
use crate::json::{Kind, Syntax};
use crate::ty::{DefKind, FieldTy, ListTy, StrTy, Ty};
use crate::value::{MediaRef, Value};

/// A Rust type read straight from JSON by the decoder (spec §4), driven by its type in the
/// program. Generated glue implements it for every struct and enum.
pub trait Decode: Glue {
    /// Reads a value of `ty` (this type's description in the session's table); `None` when
    /// it had errors, all of them reported.
    fn decode(s: &mut Session<'_>, ty: &Ty, trail: &Trail<'_>) -> Decoded<Self>;

    /// The value of an absent field that takes `none`: only an `Option` has one.
    fn none() -> Option<Self> {
        None
    }
}

/// A Rust struct read from a JSON object's fields (a generated struct; a node's `Input` of
/// several parameters).
pub trait DecodeFields: Sized {
    /// Reads the object of `fields` (the program's, in declaration order) with
    /// [`Session::read_fields`]; `tag` is a data enum's tag key, skipped there.
    fn decode_fields(
        s: &mut Session<'_>,
        fields: &[FieldTy],
        tag: Option<&str>,
        trail: &Trail<'_>,
    ) -> Decoded<Self>;
}

impl<'s> Session<'s> {
    /// A generated struct: `ty` must name a struct of the table, and the value an object.
    pub fn record<T: DecodeFields>(&mut self, ty: &Ty, trail: &Trail<'_>) -> Decoded<T> {
        let table = self.table;
        let kind = self.r.kind()?;
        let def = match table.resolve(ty) {
            Some(Ty::Ref { def }) => table.get(*def),
            _ => None,
        };
        match def.map(|d| (&d.kind, d.name.as_str())) {
            Some((DefKind::Struct { fields }, _)) if kind == Kind::Object => {
                T::decode_fields(self, fields, None, trail)
            }
            Some((DefKind::Struct { .. }, name)) => self.wrong_object(trail, name, kind),
            _ => self.mismatch(trail, kind),
        }
    }

    /// The variant of a generated enum: its index, its fields and the tag key (a data enum's;
    /// the reader is then at its object, for [`Session::read_fields`]), or `None` after the
    /// errors are reported. A unit enum's variant is read whole.
    #[allow(clippy::type_complexity)]
    pub fn variant(
        &mut self,
        ty: &Ty,
        trail: &Trail<'_>,
    ) -> Decoded<(usize, &'s [FieldTy], Option<&'s str>)> {
        let table = self.table;
        let kind = self.r.kind()?;
        let def = match table.resolve(ty) {
            Some(Ty::Ref { def }) => table.get(*def),
            _ => None,
        };
        let Some((DefKind::Enum { tag, variants }, name)) = def.map(|d| (&d.kind, d.name.as_str()))
        else {
            return self.mismatch(trail, kind);
        };
        if variants.iter().all(|v| v.fields.is_none()) {
            return Ok(self
                .unit_enum(variants, kind, trail)?
                .map(|i| (i, &[][..], None)));
        }
        if kind != Kind::Object {
            return self.wrong_object(trail, name, kind);
        }
        Ok(self.variant_head(tag, variants, trail)?.map(|i| {
            let fields = variants
                .get(i)
                .and_then(|v| v.fields.as_deref())
                .unwrap_or_default();
            (i, fields, Some(tag.as_str()))
        }))
    }

    /// Reads the fields of an object (the reader at its `{`), each through `fill` with its
    /// index; the same checks as every object of the decoder (unknown, duplicate and missing
    /// fields, defaults). Whether every field was valid.
    pub fn read_fields(
        &mut self,
        fields: &[FieldTy],
        tag: Option<&str>,
        trail: &Trail<'_>,
        fill: impl FnMut(&mut Self, usize, Fill<'_>) -> Result<bool, Syntax>,
    ) -> Result<bool, Syntax> {
        self.fields_into(fields, tag, trail, fill)
    }

    /// Fills one field's slot as [`Session::read_fields`] asks; whether it is valid.
    pub fn fill<T: Decode>(
        &mut self,
        slot: &mut Option<T>,
        fill: Fill<'_>,
    ) -> Result<bool, Syntax> {
        *slot = match fill {
            Fill::Read(ty, trail) => T::decode(self, ty, trail)?,
            Fill::None => T::none(),
            // Decoded once per decoder as a value (the compiler checked it fits the type).
            Fill::Default(field, default) => self
                .default_value(field, default)
                .and_then(|v| T::from_value(v).ok()),
        };
        Ok(slot.is_some())
    }

    /// A field the Rust type has no slot for (only a type that does not match the program):
    /// its value is skipped, and it is not valid.
    pub fn skip(&mut self, fill: Fill<'_>) -> Result<bool, Syntax> {
        if let Fill::Read(..) = fill {
            self.r.skip_value()?;
        }
        Ok(false)
    }

    /// A variant index the generated enum does not have (only a program that does not
    /// describe it): an error, and a data enum's object is skipped.
    #[cold]
    pub fn unknown_variant<T>(
        &mut self,
        index: usize,
        tag: Option<&str>,
        trail: &Trail<'_>,
    ) -> Decoded<T> {
        if tag.is_some() {
            self.r.skip_value()?;
        }
        self.report(
            trail,
            Code::WrongType,
            format!("variant #{index} is not one of the generated type's"),
        );
        Ok(None)
    }

    /// Reports that the program's type is not the Rust type's and skips the value.
    #[cold]
    fn mismatch<T>(&mut self, trail: &Trail<'_>, kind: Kind) -> Decoded<T> {
        self.wrong(
            trail,
            "a value of the generated type (the embedded program does not describe it)",
            kind,
        )
    }

    /// The fallback when the program's type is not the Rust type's own description: the
    /// value as the program says, then the Rust type's own checks.
    #[cold]
    fn via_value<T: Glue>(&mut self, ty: &Ty, trail: &Trail<'_>) -> Decoded<T> {
        let Some(v) = self.value(ty, trail)? else {
            return Ok(None);
        };
        match T::from_value(v) {
            Ok(t) => Ok(Some(t)),
            Err(e) => {
                self.report(
                    trail,
                    Code::WrongType,
                    format!(
                        "the decoded value does not fit the generated type: {}",
                        e.message
                    ),
                );
                Ok(None)
            }
        }
    }

    /// The items of a list of `T`, with the list's checks ([`Session::list_end`]).
    fn list_of<T: Decode>(
        &mut self,
        lt: &ListTy,
        trail: &Trail<'_>,
        same: impl Fn(&T, &T) -> bool,
    ) -> Decoded<Vec<T>> {
        let mut items: Vec<T> = Vec::new();
        let mut ok = true;
        let mut count = 0usize;
        if !self.r.begin_array()? {
            loop {
                match T::decode(self, &lt.item, &trail.index(count))? {
                    Some(v) if ok => items.push(v),
                    Some(_) => {}
                    None => ok = false,
                }
                count += 1;
                if !self.r.comma_or(b']')? {
                    break;
                }
            }
        }
        let ok = self.list_end_by(ok, &items, count, lt, trail, same);
        Ok(ok.then_some(items))
    }
}

impl Decode for bool {
    fn decode(s: &mut Session<'_>, ty: &Ty, trail: &Trail<'_>) -> Decoded<Self> {
        let kind = s.r.kind()?;
        match s.table.resolve(ty) {
            Some(Ty::Bool) => s.boolean(kind, trail),
            _ => s.via_value(ty, trail),
        }
    }
}

macro_rules! decode_int {
    ($($t:ty),*) => {$(
        impl Decode for $t {
            fn decode(s: &mut Session<'_>, ty: &Ty, trail: &Trail<'_>) -> Decoded<Self> {
                let kind = s.r.kind()?;
                match s.table.resolve(ty) {
                    Some(Ty::Int(it)) if it.kind == <$t as IntPrim>::KIND => {
                        // The bounds were checked against the program's type, whose kind is
                        // this Rust type: the value fits.
                        Ok(s.int(it, kind, trail)?.and_then(|v| <$t>::try_from(v).ok()))
                    }
                    _ => s.via_value(ty, trail),
                }
            }
        }
    )*};
}
decode_int!(u8, u16, u32, u64, i8, i16, i32, i64);

impl<T: IntPrim, const MIN: i128, const MAX: i128, const EXCL: bool> Decode
    for BoundedInt<T, MIN, MAX, EXCL>
{
    fn decode(s: &mut Session<'_>, ty: &Ty, trail: &Trail<'_>) -> Decoded<Self> {
        let kind = s.r.kind()?;
        match s.table.resolve(ty) {
            Some(Ty::Int(it)) if *it == Self::ty() => Ok(s
                .int(it, kind, trail)?
                .and_then(|v| Self::from_wide(v).ok())),
            _ => s.via_value(ty, trail),
        }
    }
}

impl<R: FloatRules> Decode for BoundedFloat<R> {
    fn decode(s: &mut Session<'_>, ty: &Ty, trail: &Trail<'_>) -> Decoded<Self> {
        let kind = s.r.kind()?;
        match s.table.resolve(ty) {
            Some(Ty::Float(ft)) if *ft == Self::ty() => {
                Ok(s.float(ft, kind, trail)?.map(Self::checked))
            }
            _ => s.via_value(ty, trail),
        }
    }
}

impl<const MAX: u32, const MIN: u32> Decode for BoundedStr<MAX, MIN> {
    fn decode(s: &mut Session<'_>, ty: &Ty, trail: &Trail<'_>) -> Decoded<Self> {
        s.own_text(ty, trail, Self::checked, |st| {
            st.max == MAX && st.min == MIN && st.pattern.is_none() && st.format.is_none()
        })
    }
}

impl<R: TextRules> Decode for RuledStr<R> {
    fn decode(s: &mut Session<'_>, ty: &Ty, trail: &Trail<'_>) -> Decoded<Self> {
        s.own_text(ty, trail, Self::checked, |st| {
            st.max == R::MAX
                && st.min == R::MIN
                && st.pattern.as_deref() == R::PATTERN
                && st.format == R::FORMAT
        })
    }
}

impl Session<'_> {
    /// A text of `ty`, made into `T` by `make` when `own` says `ty` is `T`'s own description.
    fn own_text<T: Glue>(
        &mut self,
        ty: &Ty,
        trail: &Trail<'_>,
        make: impl FnOnce(String) -> T,
        own: impl Fn(&StrTy) -> bool,
    ) -> Decoded<T> {
        let kind = self.r.kind()?;
        match self.table.resolve(ty) {
            Some(Ty::Str(st)) if own(st) => {
                Ok(self.text(st, kind, trail)?.map(|t| make(t.into_owned())))
            }
            _ => self.via_value(ty, trail),
        }
    }
}

impl<T: Decode> Decode for Option<T> {
    fn decode(s: &mut Session<'_>, ty: &Ty, trail: &Trail<'_>) -> Decoded<Self> {
        let kind = s.r.kind()?;
        match s.table.resolve(ty) {
            Some(Ty::Option { .. }) if kind == Kind::Null => {
                s.r.null()?;
                Ok(Some(None))
            }
            // A `some` is its value (see `Value::None`).
            Some(Ty::Option { some }) => Ok(T::decode(s, some, trail)?.map(Some)),
            _ => s.via_value(ty, trail),
        }
    }

    fn none() -> Option<Self> {
        Some(None)
    }
}

// Recursive types reach themselves through a box (`Option<Box<Tree>>`).
impl<T: Decode> Decode for Box<T> {
    fn decode(s: &mut Session<'_>, ty: &Ty, trail: &Trail<'_>) -> Decoded<Self> {
        Ok(T::decode(s, ty, trail)?.map(Box::new))
    }
}

impl<T: Decode, const MAX: u32, const MIN: u32> Decode for BoundedVec<T, MAX, MIN> {
    fn decode(s: &mut Session<'_>, ty: &Ty, trail: &Trail<'_>) -> Decoded<Self> {
        let kind = s.r.kind()?;
        match s.table.resolve(ty) {
            Some(Ty::List(lt)) if !lt.unique && lt.max == MAX && lt.min == MIN => match kind {
                Kind::Array => Ok(s
                    .list_of(lt, trail, |_: &T, _: &T| false)?
                    .map(Self::checked)),
                k => s.wrong(trail, "an array", k),
            },
            _ => s.via_value(ty, trail),
        }
    }
}

impl<T: Decode + PartialEq, const MAX: u32, const MIN: u32> Decode for BoundedSet<T, MAX, MIN> {
    fn decode(s: &mut Session<'_>, ty: &Ty, trail: &Trail<'_>) -> Decoded<Self> {
        let kind = s.r.kind()?;
        match s.table.resolve(ty) {
            Some(Ty::List(lt)) if lt.unique && lt.max == MAX && lt.min == MIN => match kind {
                Kind::Array => Ok(s
                    .list_of(lt, trail, |a: &T, b: &T| a == b)?
                    .map(Self::checked)),
                k => s.wrong(trail, "an array", k),
            },
            _ => s.via_value(ty, trail),
        }
    }
}

impl<K: Glue + MapKey, V: Decode, const MAX: u32, const MIN: u32> Decode
    for BoundedMap<K, V, MAX, MIN>
{
    fn decode(s: &mut Session<'_>, ty: &Ty, trail: &Trail<'_>) -> Decoded<Self> {
        let kind = s.r.kind()?;
        match s.table.resolve(ty) {
            Some(Ty::Map(mt)) if mt.max == MAX && mt.min == MIN => match kind {
                Kind::Object => {
                    let Some(entries) = s.map_entries(mt, trail, |s, ty, t| V::decode(s, ty, t))?
                    else {
                        return Ok(None);
                    };
                    // The keys were checked against the program's key type (the Rust key
                    // type's description); `from_key` checks them again, cheaply.
                    let entries: Option<Vec<(K, V)>> = entries
                        .into_iter()
                        .map(|(k, v)| K::from_key(k).ok().map(|k| (k, v)))
                        .collect();
                    match entries {
                        Some(entries) => Ok(Some(Self::checked(entries))),
                        None => s.key_mismatch(trail),
                    }
                }
                k => s.wrong(trail, "an object (a map)", k),
            },
            _ => s.via_value(ty, trail),
        }
    }
}

impl Session<'_> {
    /// A map key the program accepted and the Rust key type refuses (a program that does not
    /// describe the Rust type).
    #[cold]
    fn key_mismatch<T>(&mut self, trail: &Trail<'_>) -> Decoded<T> {
        self.report(
            trail,
            Code::WrongType,
            "the decoded map has a key that does not fit the generated key type",
        );
        Ok(None)
    }
}

impl Decode for MediaRef {
    fn decode(s: &mut Session<'_>, ty: &Ty, trail: &Trail<'_>) -> Decoded<Self> {
        match s.value(ty, trail)? {
            Some(Value::Media(m)) => Ok(Some(*m)),
            Some(other) => {
                let found = other.kind_name();
                s.report(
                    trail,
                    Code::WrongType,
                    format!("the decoded value does not fit the generated type: expected a media reference, found {found}"),
                );
                Ok(None)
            }
            None => Ok(None),
        }
    }
}
