//! The decoder: JSON text (bytes) straight to a typed [`Value`], driven by a [`Ty`] (spec §4).
//!
//! One pass, no intermediate tree: [`crate::prescan`] first holds the document to the platform
//! bounds (so the recursion here is at most 64 deep), then the [`crate::json::Reader`] hands
//! out tokens while the type says what each must be. Every error is collected (up to
//! [`MAX_ERRORS`], in document order) with its JSON Pointer, path, code and sentence; parsing
//! goes on after a type error so later errors — and any syntax error, which ends decoding with
//! `invalid_json` — are still found. A document with any error yields no value.
//!
//! Rules beyond the schema (spec §4): duplicate keys are `duplicate_key`; invalid UTF-8 and
//! lone surrogates are `invalid_text`; integers are compared exactly from their digits, so
//! `3.0`, `3e0` and `1.0e2` are integers and `18446744073709551615` is a `u64`. Absent fields
//! take their default; absent or `null` `Option`s are `none`. A data enum's tag may stand
//! anywhere in its object. Set uniqueness compares typed values (so after defaults are filled
//! in; JSON Schema's `uniqueItems` compares the raw JSON).
//!
//! The same session reads straight into Rust types ([`Decode`], `into.rs`: generated glue's
//! structs and enums): the scalar, field, list and map steps here are shared by both targets,
//! so both give the same verdicts and errors.

use crate::bounds::{self, Issue, Patterns};
use crate::error::{quoted, Code, DecodeError, Trail, MAX_ERRORS};
use crate::json::{IntIssue, Kind, Reader, Syntax, TextIssue};
use crate::media::{check_media, MediaFieldKind, MEDIA_FIELDS};
use crate::prescan::prescan;
use crate::ty::{
    DefKind, FieldTy, FloatTy, IntTy, ListTy, MapTy, MediaTy, StrTy, Ty, TypeTable, VariantTy,
};
use crate::value::{MediaRef, Text, Value};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

mod into;
pub use into::{Decode, DecodeFields};

/// The largest unescaping buffer a decoder keeps between documents (64 KiB: longer strings
/// are rare, and pay for their own buffer).
const MAX_KEPT_SCRATCH: usize = 1 << 16;

/// The default `max_input_bytes` when a project sets none (1 MiB, as `ael.toml`'s example).
pub const DEFAULT_MAX_INPUT_BYTES: usize = 1 << 20;

/// A reusable decoder for the types of one [`TypeTable`]: it keeps decoded defaults between
/// documents, and compiles patterns into the table's cache ([`TypeTable::patterns`]), which
/// every decoder of the table shares.
pub struct Decoder<'t> {
    table: &'t TypeTable,
    /// Defaults decoded once, keyed by the address of their field in `table`.
    defaults: HashMap<usize, Value>,
    max_input_bytes: usize,
    /// Scratch stack of list items, kept between documents (see [`Session::list`]); its
    /// capacity is the most items ever open at once, at most the platform's 200,000 values.
    items: Vec<Value>,
    /// The reader's buffer for unescaping strings, lent to each document's reader and taken
    /// back, so a document pays for no buffer growth (most of a small one's escapes' cost).
    scratch: Vec<u8>,
}

impl<'t> Decoder<'t> {
    pub fn new(table: &'t TypeTable) -> Decoder<'t> {
        Decoder {
            table,
            defaults: HashMap::new(),
            items: Vec::new(),
            scratch: Vec::new(),
            max_input_bytes: DEFAULT_MAX_INPUT_BYTES,
        }
    }

    /// Sets `max_input_bytes` (`[limits]` of `ael.toml`).
    pub fn with_max_input_bytes(mut self, max: usize) -> Decoder<'t> {
        self.max_input_bytes = max;
        self
    }

    /// Unescapes strings into `scratch` (a buffer kept from an earlier decoder of the same
    /// thread, [`Decoder::into_scratch`]): a decoder made per document, as the generated
    /// glue's `decode` makes one, then pays for no buffer growth either.
    pub fn with_scratch(mut self, scratch: Vec<u8>) -> Decoder<'t> {
        self.scratch = scratch;
        self
    }

    /// The unescaping buffer, for the next decoder ([`Decoder::with_scratch`]).
    pub fn into_scratch(self) -> Vec<u8> {
        self.scratch
    }

    /// Decodes a document holding one value of `ty`; `root` names it in paths (`request`).
    pub fn decode(&mut self, bytes: &[u8], ty: &Ty, root: &str) -> Result<Value, Vec<DecodeError>> {
        self.decode_with(Reader::new(bytes), root, |s, trail| s.value(ty, trail))
    }

    /// [`Decoder::decode`] of a document the caller holds as text (a model's answer, a raw
    /// JSON value): the same value and errors, without checking the UTF-8 of a `str` again.
    pub fn decode_str(
        &mut self,
        text: &str,
        ty: &Ty,
        root: &str,
    ) -> Result<Value, Vec<DecodeError>> {
        self.decode_with(Reader::from_text(text), root, |s, trail| s.value(ty, trail))
    }

    /// [`Decoder::decode`] straight into a Rust type (generated glue's structs and enums): the
    /// same rules and the same errors, with no [`Value`] in between. `ty` is the type's
    /// description in the decoder's table.
    pub fn decode_into<T: Decode>(
        &mut self,
        bytes: &[u8],
        ty: &Ty,
        root: &str,
    ) -> Result<T, Vec<DecodeError>> {
        self.decode_with(Reader::new(bytes), root, |s, trail| T::decode(s, ty, trail))
    }

    /// [`Decoder::decode_into`] of a document the caller holds as text (no UTF-8 check).
    pub fn decode_str_into<T: Decode>(
        &mut self,
        text: &str,
        ty: &Ty,
        root: &str,
    ) -> Result<T, Vec<DecodeError>> {
        self.decode_with(Reader::from_text(text), root, |s, trail| {
            T::decode(s, ty, trail)
        })
    }

    /// [`Decoder::decode_params`] straight into a Rust type with one field per parameter
    /// (a generated node's `Input`).
    pub fn decode_params_into<T: DecodeFields>(
        &mut self,
        bytes: &[u8],
        params: &[(&str, &Ty)],
    ) -> Result<T, Vec<DecodeError>> {
        let fields = param_fields(params);
        self.decode_with(Reader::new(bytes), "", |s, trail| {
            s.params(trail, |s, trail| T::decode_fields(s, &fields, None, trail))
        })
    }

    fn decode_with<T>(
        &mut self,
        reader: Reader<'_>,
        root: &str,
        read: impl FnOnce(&mut Session<'_>, &Trail<'_>) -> Decoded<T>,
    ) -> Result<T, Vec<DecodeError>> {
        // The pre-scan names the root of several parameters `""` (their document's root).
        prescan(reader.bytes, self.max_input_bytes, root).map_err(|e| vec![e])?;
        let mut session = self.session(reader);
        let trail = Trail::Root(root);
        let result = read(&mut session, &trail);
        session.finish(result, &trail)
    }

    /// Decodes the input document of a node with parameters `params` (spec §4): the value of
    /// its one parameter, or an object with one field per parameter ([`Decoder::decode_params`]).
    /// Paths start at the parameter's name.
    pub fn decode_input(
        &mut self,
        bytes: &[u8],
        params: &[(&str, &Ty)],
    ) -> Result<Vec<Value>, Vec<DecodeError>> {
        match params {
            [(name, ty)] => self.decode(bytes, ty, name).map(|v| vec![v]),
            params => self.decode_params(bytes, params),
        }
    }

    /// Decodes the input document of a node with several parameters: an object with one field
    /// per parameter (spec §4). Paths start at the parameter's name (`camera.width`).
    pub fn decode_params(
        &mut self,
        bytes: &[u8],
        params: &[(&str, &Ty)],
    ) -> Result<Vec<Value>, Vec<DecodeError>> {
        let fields = param_fields(params);
        self.decode_with(Reader::new(bytes), "", |s, trail| {
            s.params(trail, |s, trail| s.fields(&fields, None, trail))
        })
    }

    fn session<'s>(&'s mut self, r: Reader<'s>) -> Session<'s> {
        Session {
            table: self.table,
            patterns: self.table.patterns(),
            defaults: &mut self.defaults,
            items: &mut self.items,
            r: r.with_scratch(std::mem::take(&mut self.scratch)),
            scratch: Some(&mut self.scratch),
            errors: Vec::new(),
            issues: Vec::new(),
        }
    }
}

/// Decodes one document holding a value of `ty` (a one-off [`Decoder`]).
pub fn decode(
    bytes: &[u8],
    ty: &Ty,
    table: &TypeTable,
    root: &str,
    max_input_bytes: usize,
) -> Result<Value, Vec<DecodeError>> {
    Decoder::new(table)
        .with_max_input_bytes(max_input_bytes)
        .decode(bytes, ty, root)
}

/// The fields of a node's parameters, as those of a struct.
fn param_fields(params: &[(&str, &Ty)]) -> Vec<FieldTy> {
    params
        .iter()
        .map(|(name, ty)| FieldTy {
            name: (*name).to_owned(),
            docs: None,
            ty: (*ty).clone(),
            default: None,
        })
        .collect()
}

/// One document being decoded: what a [`Decode`] implementation reads from.
pub struct Session<'s> {
    table: &'s TypeTable,
    patterns: &'s Patterns,
    defaults: &'s mut HashMap<usize, Value>,
    /// The items of the lists being read, innermost last: a list pushes its items here and
    /// moves them out in one exact-size allocation at its end, so no list grows by doubling.
    items: &'s mut Vec<Value>,
    r: Reader<'s>,
    /// Where the reader's scratch buffer goes back to when the document is done.
    scratch: Option<&'s mut Vec<u8>>,
    errors: Vec<DecodeError>,
    /// Scratch for bound checks, reused to avoid allocating per string.
    issues: Vec<Issue>,
}

/// What decoding one value gives: a syntax error stops everything; `None` means the value had
/// errors (already reported).
pub type Decoded<T> = Result<Option<T>, Syntax>;

/// How [`Session::fields_into`] fills one field in.
pub enum Fill<'a> {
    /// Its value is next in the document; errors are reported at the trail.
    Read(&'a Ty, &'a Trail<'a>),
    /// It is an absent `Option`: `none`.
    None,
    /// It is absent and takes this default.
    Default(&'a FieldTy, &'a serde_json::Value),
}

impl<'s> Session<'s> {
    fn finish<T>(mut self, result: Decoded<T>, trail: &Trail<'_>) -> Result<T, Vec<DecodeError>> {
        if let Some(home) = self.scratch.take() {
            let scratch = self.r.take_scratch();
            // A buffer grown by one huge string is not kept for every later document.
            if scratch.capacity() <= MAX_KEPT_SCRATCH {
                *home = scratch;
            }
        }
        let value = match result {
            Ok(v) => {
                self.r.skip_ws();
                if self.r.pos < self.r.bytes.len() {
                    let e = Syntax::new(self.r.pos, "unexpected text after the JSON value");
                    self.syntax_error(e, trail);
                    None
                } else {
                    v
                }
            }
            Err(e) => {
                self.syntax_error(e, trail);
                None
            }
        };
        match value {
            Some(v) if self.errors.is_empty() => Ok(v),
            _ => Err(self.errors),
        }
    }

    fn syntax_error(&mut self, e: Syntax, trail: &Trail<'_>) {
        let before = self.r.bytes.get(..e.offset).unwrap_or_default();
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let column = before.len()
            - before
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |p| p + 1)
            + 1;
        let what = format!(
            "invalid JSON at line {line}, column {column}: {}",
            e.message
        );
        if self.errors.len() >= MAX_ERRORS {
            self.errors.pop();
        }
        self.errors
            .push(DecodeError::new(Code::InvalidJson, &trail.to_path(), what));
    }

    fn report(&mut self, trail: &Trail<'_>, code: Code, what: impl std::fmt::Display) {
        if self.errors.len() < MAX_ERRORS {
            self.errors
                .push(DecodeError::new(code, &trail.to_path(), what));
        }
    }

    /// Reports `wrong_type` and skips the value.
    fn wrong<T>(&mut self, trail: &Trail<'_>, expected: &str, found: Kind) -> Decoded<T> {
        self.report(
            trail,
            Code::WrongType,
            format!("expected {expected}, found {}", found.described()),
        );
        self.r.skip_value()?;
        Ok(None)
    }

    /// Reports `wrong_type` where an object of the named type was expected, and skips the
    /// value (out of line: the sentence's `format!` would otherwise enlarge every caller's
    /// frame).
    #[cold]
    #[inline(never)]
    fn wrong_object<T>(&mut self, trail: &Trail<'_>, name: &str, found: Kind) -> Decoded<T> {
        self.wrong(trail, &format!("an object ({name})"), found)
    }

    /// The object of a node's several parameters, its fields read by `read`.
    fn params<T>(
        &mut self,
        trail: &Trail<'_>,
        read: impl FnOnce(&mut Self, &Trail<'_>) -> Decoded<T>,
    ) -> Decoded<T> {
        match self.r.kind()? {
            Kind::Object => read(self, trail),
            k => self.wrong(trail, "an object with one field per parameter", k),
        }
    }

    fn value(&mut self, ty: &Ty, trail: &Trail<'_>) -> Decoded<Value> {
        let table = self.table;
        let kind = self.r.kind()?;
        let Some(ty) = table.resolve(ty) else {
            return self.wrong(
                trail,
                "a value of a known type (the type table is broken)",
                kind,
            );
        };
        match ty {
            Ty::Bool => Ok(self.boolean(kind, trail)?.map(Value::Bool)),
            Ty::Int(it) => Ok(self.int(it, kind, trail)?.map(Value::Int)),
            Ty::Float(ft) => Ok(self.float(ft, kind, trail)?.map(Value::Float)),
            Ty::Str(st) => Ok(self.text(st, kind, trail)?.map(|s| Value::Str(text_of(s)))),
            Ty::List(lt) => match kind {
                Kind::Array => self.list(lt, trail),
                k => self.wrong(trail, "an array", k),
            },
            Ty::Map(mt) => match kind {
                Kind::Object => self.map(mt, trail),
                k => self.wrong(trail, "an object (a map)", k),
            },
            Ty::Option { some } => {
                if kind == Kind::Null {
                    self.r.null()?;
                    return Ok(Some(Value::None));
                }
                // A `some` is its value (see `Value::None`).
                self.value(some, trail)
            }
            Ty::Ref { def } => {
                let Some(def) = table.get(*def) else {
                    return self.wrong(
                        trail,
                        "a value of a known type (the type table is broken)",
                        kind,
                    );
                };
                match &def.kind {
                    DefKind::Struct { fields } => {
                        if kind != Kind::Object {
                            return self.wrong_object(trail, &def.name, kind);
                        }
                        Ok(self.fields(fields, None, trail)?.map(Value::Struct))
                    }
                    DefKind::Enum { tag, variants } => {
                        if variants.iter().all(|v| v.fields.is_none()) {
                            Ok(self.unit_enum(variants, kind, trail)?.map(|i| Value::Enum {
                                variant: i as u32,
                                fields: Vec::new(),
                            }))
                        } else if kind == Kind::Object {
                            self.data_enum(tag, variants, trail)
                        } else {
                            self.wrong_object(trail, &def.name, kind)
                        }
                    }
                    // `resolve` follows aliases, so none is left here.
                    DefKind::Alias { ty } => self.value(ty, trail),
                }
            }
            Ty::Media(mt) => match kind {
                Kind::Object => self.media(mt, trail),
                k => self.wrong(trail, "an object (a media reference)", k),
            },
        }
    }

    /// A boolean (`kind` is the next value's).
    #[inline]
    fn boolean(&mut self, kind: Kind, trail: &Trail<'_>) -> Decoded<bool> {
        match kind {
            Kind::Bool => Ok(Some(self.r.bool()?)),
            k => self.wrong(trail, "a boolean", k),
        }
    }

    /// An integer of `it`, compared exactly from its digits (`3.0` is 3, `3.5` is not an
    /// integer).
    #[inline]
    fn int(&mut self, it: &IntTy, kind: Kind, trail: &Trail<'_>) -> Decoded<i128> {
        // The usual integer, plain digits inside the bounds, without the error paths' frame.
        if kind == Kind::Number {
            if let Some(v) = self.r.plain_int() {
                let v = i128::from(v);
                if it.contains(v) {
                    return Ok(Some(v));
                }
                return self.int_out_of_range(v, it, trail);
            }
        }
        self.int_slow(it, kind, trail)
    }

    #[cold]
    #[inline(never)]
    fn int_out_of_range(&mut self, v: i128, it: &IntTy, trail: &Trail<'_>) -> Decoded<i128> {
        if let Some((code, what)) = bounds::check_int(v, it) {
            self.report(trail, code, what);
        }
        Ok(None)
    }

    /// The rest of [`Session::int`]: not a number, or a number that is not plain digits
    /// (`3.0`, `3e0`, more than 18 digits).
    #[inline(never)]
    fn int_slow(&mut self, it: &IntTy, kind: Kind, trail: &Trail<'_>) -> Decoded<i128> {
        if kind != Kind::Number {
            let expected = format!("an integer ({})", bounds::describe_int(it));
            return self.wrong(trail, &expected, kind);
        }
        let n = self.r.number()?;
        match n.to_integer() {
            Ok(v) => match bounds::check_int(v, it) {
                None => Ok(Some(v)),
                Some((code, what)) => {
                    self.report(trail, code, what);
                    Ok(None)
                }
            },
            Err(IntIssue::NotIntegral) => {
                self.report(
                    trail,
                    Code::NotInteger,
                    format!("{} is not an integer", quoted(n.text)),
                );
                Ok(None)
            }
            Err(IntIssue::TooBig) => {
                let what = format!(
                    "{} is out of range for {}",
                    quoted(n.text),
                    bounds::describe_int(it)
                );
                self.report(trail, Code::OutOfRange, what);
                Ok(None)
            }
        }
    }

    /// A finite float inside the bounds of `ft` (an `f32` stored widened).
    #[inline]
    fn float(&mut self, ft: &FloatTy, kind: Kind, trail: &Trail<'_>) -> Decoded<f64> {
        if kind != Kind::Number {
            return self.wrong(trail, "a number", kind);
        }
        let n = self.r.number()?;
        let v: f64 = n.text.parse().unwrap_or(f64::INFINITY);
        match bounds::check_float(v, || n.text, ft) {
            None => Ok(Some(v)),
            Some((code, what)) => {
                self.report(trail, code, what);
                Ok(None)
            }
        }
    }

    /// A text inside the bounds, pattern and format of `st`, borrowed from the document when
    /// it has no escapes. Always inlined, as [`Session::field_key`]: the glue's text decoders
    /// are instantiated in the user's crate.
    #[inline(always)]
    fn text(&mut self, st: &StrTy, kind: Kind, trail: &Trail<'_>) -> Decoded<Cow<'s, str>> {
        if kind != Kind::String {
            return self.wrong(trail, "a string", kind);
        }
        let (s, issue) = self.r.string()?;
        // The usual text: valid, no pattern or format, a length inside the bounds.
        if issue.is_none() && bounds::str_surely_fits(&s, st) {
            return Ok(Some(s));
        }
        self.text_checked(s, issue, st, trail)
    }

    /// The rest of [`Session::text`]: invalid text, or bounds that need a closer look.
    #[inline(never)]
    fn text_checked(
        &mut self,
        s: Cow<'s, str>,
        issue: Option<TextIssue>,
        st: &StrTy,
        trail: &Trail<'_>,
    ) -> Decoded<Cow<'s, str>> {
        if let Some(issue) = issue {
            self.text_issue(trail, issue);
            return Ok(None);
        }
        let mut issues = std::mem::take(&mut self.issues);
        bounds::check_str(&s, st, self.patterns, &mut issues);
        let ok = issues.is_empty();
        for (code, what) in issues.drain(..) {
            self.report(trail, code, what);
        }
        self.issues = issues;
        Ok(ok.then_some(s))
    }

    fn text_issue(&mut self, trail: &Trail<'_>, issue: TextIssue) {
        let what = match issue {
            TextIssue::InvalidUtf8 => "text is not valid UTF-8",
            TextIssue::LoneSurrogate => {
                "text holds a lone surrogate (\\ud800–\\udfff without its pair)"
            }
        };
        self.report(trail, Code::InvalidText, what);
    }

    /// The fields of a struct or data variant as values, in declaration order; `tag` is the
    /// data enum's tag key (already read).
    fn fields(
        &mut self,
        fields: &[FieldTy],
        tag: Option<&str>,
        trail: &Trail<'_>,
    ) -> Decoded<Vec<Value>> {
        // One allocation per object: the field values, `none` until read or defaulted.
        let mut slots: Vec<Value> = Vec::with_capacity(fields.len());
        slots.resize_with(fields.len(), || Value::None);
        let ok = self.fields_into(fields, tag, trail, |s, i, fill| {
            let v = match fill {
                Fill::Read(ty, trail) => s.value(ty, trail)?,
                // An absent `Option` is already `none` in its slot.
                Fill::None => return Ok(true),
                Fill::Default(field, default) => s.default_value(field, default),
            };
            match (v, slots.get_mut(i)) {
                (Some(v), Some(slot)) => {
                    *slot = v;
                    Ok(true)
                }
                _ => Ok(false),
            }
        })?;
        Ok(ok.then_some(slots))
    }

    /// Reads the fields of a struct or data variant, each through `fill` with its index
    /// (which answers whether the field is valid): the value of a field present once, then
    /// `none` or the default of an absent one. Unknown and duplicate keys, invalid key text
    /// and missing fields are reported here, the same for every target. Whether every field
    /// was valid.
    fn fields_into(
        &mut self,
        fields: &[FieldTy],
        tag: Option<&str>,
        trail: &Trail<'_>,
        mut fill: impl FnMut(&mut Self, usize, Fill<'_>) -> Result<bool, Syntax>,
    ) -> Result<bool, Syntax> {
        // Only the calls of `fill` and a known key's lookup are here: this is compiled once
        // per closure, which is once per generated struct in a user's crate, so everything
        // else (other keys, reports) is in the non-generic `field_key_other` and
        // `missing_field`.
        let mut state = FieldsState {
            seen: Seen::new(fields.len()),
            tag_seen: false,
            ok: true,
            next: 0,
        };
        if !self.r.begin_object()? {
            loop {
                let (key, issue) = self.r.key()?;
                if let Some(i) = self.field_key(fields, tag, trail, &key, issue, &mut state)? {
                    let child = trail.key(&key);
                    match fields.get(i) {
                        Some(field) => state.ok &= fill(self, i, Fill::Read(&field.ty, &child))?,
                        None => self.r.skip_value()?,
                    }
                }
                if !self.r.comma_or(b'}')? {
                    break;
                }
            }
        }
        for (i, field) in fields.iter().enumerate() {
            if state.seen.get(i) {
                continue;
            }
            let filled = if let Some(default) = &field.default {
                fill(self, i, Fill::Default(field, default))?
            } else if matches!(field.ty, Ty::Option { .. }) {
                fill(self, i, Fill::None)?
            } else {
                false
            };
            if !filled {
                self.missing_field(trail, field);
                state.ok = false;
            }
        }
        Ok(state.ok)
    }

    /// The field `key` names, marked seen, for [`Session::fields_into`] to fill; `None`
    /// once anything else (invalid key text, a duplicate, the tag, an unknown key) is
    /// reported and its value skipped. Always inlined: in a user's crate `fields_into` is
    /// instantiated per generated struct, and a call per key there cost as much as the lookup.
    #[inline(always)]
    fn field_key(
        &mut self,
        fields: &[FieldTy],
        tag: Option<&str>,
        trail: &Trail<'_>,
        key: &str,
        issue: Option<TextIssue>,
        state: &mut FieldsState,
    ) -> Result<Option<usize>, Syntax> {
        // The usual key: valid text naming a field not seen yet, with no call and no frame
        // for the reports of the others (`field_key_other`, which decides them all again).
        if issue.is_none() {
            if let Some(i) = field_index(fields, key, state.next) {
                if !state.seen.get(i) {
                    state.next = i + 1;
                    state.seen.set(i);
                    return Ok(Some(i));
                }
            }
        }
        self.field_key_other(fields, tag, trail, key, issue, state)
    }

    /// [`Session::field_key`] of every key but a field's first: invalid text, a duplicate,
    /// the tag, an unknown key.
    #[inline(never)]
    fn field_key_other(
        &mut self,
        fields: &[FieldTy],
        tag: Option<&str>,
        trail: &Trail<'_>,
        key: &str,
        issue: Option<TextIssue>,
        state: &mut FieldsState,
    ) -> Result<Option<usize>, Syntax> {
        if let Some(issue) = issue {
            self.text_issue(&trail.key(key), issue);
            self.r.skip_value()?;
            state.ok = false;
        } else if let Some(i) = field_index(fields, key, state.next) {
            state.next = i + 1;
            if !state.seen.get(i) {
                state.seen.set(i);
                return Ok(Some(i));
            }
            self.report(
                &trail.key(key),
                Code::DuplicateKey,
                format!("key \"{}\" appears more than once", quoted(key)),
            );
            self.r.skip_value()?;
            state.ok = false;
        } else if tag == Some(key) {
            if state.tag_seen {
                self.report(
                    &trail.key(key),
                    Code::DuplicateKey,
                    format!("key \"{}\" appears more than once", quoted(key)),
                );
                state.ok = false;
            }
            state.tag_seen = true;
            self.r.skip_value()?;
        } else {
            let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
            let expected = if names.is_empty() {
                "this object takes no fields".to_owned()
            } else {
                format!("the fields are {}", names.join(", "))
            };
            self.report(
                &trail.key(key),
                Code::UnknownField,
                format!("unknown field \"{}\"; {expected}", quoted(key)),
            );
            self.r.skip_value()?;
            state.ok = false;
        }
        Ok(None)
    }

    /// Reports a required field the object does not have.
    fn missing_field(&mut self, trail: &Trail<'_>, field: &FieldTy) {
        self.report(
            &trail.key(&field.name),
            Code::MissingField,
            "required field is missing",
        );
    }

    /// A field's default as a value, decoded once per decoder (`None` if it does not fit its
    /// type, which the compiler rules out).
    fn default_value(&mut self, field: &FieldTy, default: &serde_json::Value) -> Option<Value> {
        let key = field as *const FieldTy as usize;
        if let Some(v) = self.defaults.get(&key) {
            return Some(v.clone());
        }
        let text = serde_json::to_vec(default).ok()?;
        let mut nested = Session {
            table: self.table,
            patterns: self.patterns,
            defaults: &mut *self.defaults,
            items: &mut *self.items,
            r: Reader::new(&text),
            scratch: None,
            errors: Vec::new(),
            issues: Vec::new(),
        };
        let trail = Trail::Root("default");
        let result = nested.value(&field.ty, &trail);
        let v = nested.finish(result, &trail).ok()?;
        self.defaults.insert(key, v.clone());
        Some(v)
    }

    /// The index of a unit enum's variant, named by a string.
    fn unit_enum(
        &mut self,
        variants: &[VariantTy],
        kind: Kind,
        trail: &Trail<'_>,
    ) -> Decoded<usize> {
        let names = || {
            variants
                .iter()
                .map(|v| v.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if kind != Kind::String {
            let expected = format!("a string (one of {})", names());
            return self.wrong(trail, &expected, kind);
        }
        let (s, issue) = self.r.string()?;
        if let Some(issue) = issue {
            self.text_issue(trail, issue);
            return Ok(None);
        }
        match variants.iter().position(|v| same_text(&v.name, &s)) {
            Some(i) => Ok(Some(i)),
            None => {
                self.report(
                    trail,
                    Code::UnknownVariant,
                    format!("\"{}\" is not one of {}", quoted(&s), names()),
                );
                Ok(None)
            }
        }
    }

    /// The index of a data enum's variant, named by its tag anywhere in the object; the
    /// reader is left at the object's start, for its fields.
    fn variant_head(
        &mut self,
        tag: &str,
        variants: &[VariantTy],
        trail: &Trail<'_>,
    ) -> Decoded<usize> {
        let names = || {
            variants
                .iter()
                .map(|v| v.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let start = self.r.pos;
        let found = self.find_tag(tag)?;
        self.r.pos = start;
        let tag_trail = trail.key(tag);
        let name = match found {
            TagFound::Text(name) => name,
            TagFound::Missing => {
                self.report(
                    &tag_trail,
                    Code::MissingField,
                    format!(
                        "the tag \"{tag}\" is missing; it names the variant, one of {}",
                        names()
                    ),
                );
                self.r.skip_value()?;
                return Ok(None);
            }
            TagFound::Other(kind) => {
                let expected = format!("a string (one of {})", names());
                self.report(
                    &tag_trail,
                    Code::WrongType,
                    format!("expected {expected}, found {}", kind.described()),
                );
                self.r.skip_value()?;
                return Ok(None);
            }
        };
        let Some(index) = variants.iter().position(|v| same_text(&v.name, &name)) else {
            self.report(
                &tag_trail,
                Code::UnknownVariant,
                format!("\"{}\" is not one of {}", quoted(&name), names()),
            );
            self.r.skip_value()?;
            return Ok(None);
        };
        Ok(Some(index))
    }

    fn data_enum(
        &mut self,
        tag: &str,
        variants: &[VariantTy],
        trail: &Trail<'_>,
    ) -> Decoded<Value> {
        let Some(index) = self.variant_head(tag, variants, trail)? else {
            return Ok(None);
        };
        let fields = variants
            .get(index)
            .and_then(|v| v.fields.as_deref())
            .unwrap_or_default();
        Ok(self
            .fields(fields, Some(tag), trail)?
            .map(|fields| Value::Enum {
                variant: index as u32,
                fields,
            }))
    }

    /// Looks ahead through an object for its tag (the reader is put back by the caller).
    fn find_tag(&mut self, tag: &str) -> Result<TagFound<'s>, Syntax> {
        if self.r.begin_object()? {
            return Ok(TagFound::Missing);
        }
        loop {
            let (key, _) = self.r.key()?;
            if same_text(&key, tag) {
                return match self.r.kind()? {
                    Kind::String => Ok(TagFound::Text(self.r.string()?.0)),
                    k => Ok(TagFound::Other(k)),
                };
            }
            self.r.skip_value()?;
            if !self.r.comma_or(b'}')? {
                return Ok(TagFound::Missing);
            }
        }
    }

    #[inline(never)]
    fn list(&mut self, lt: &ListTy, trail: &Trail<'_>) -> Decoded<Value> {
        let base = self.items.len();
        let read = self.list_items(lt, trail);
        // On every way out (a syntax error included) the stack is cut back to where it was;
        // the items move out in one copy.
        let items: Vec<Value> = self.items.split_off(base);
        let (ok, count) = read?;
        let ok = self.list_end_by(ok, &items, count, lt, trail, |a, b| a == b);
        Ok(ok.then_some(Value::List(items)))
    }

    /// A list's checks once its items are read: their number, and for a set that no item
    /// is the `same` as an earlier one (typed values, so after defaults are filled in). Whether the
    /// list is valid (`ok`: its items were).
    fn list_end_by<T>(
        &mut self,
        mut ok: bool,
        items: &[T],
        count: usize,
        lt: &ListTy,
        trail: &Trail<'_>,
        same: impl Fn(&T, &T) -> bool,
    ) -> bool {
        if count > lt.max as usize {
            let (code, what) = bounds::too_many("items", count, lt.max);
            self.report(trail, code, format!("the list {what}"));
            ok = false;
        } else if count < lt.min as usize {
            let (code, what) = bounds::too_few("items", count, lt.min);
            self.report(trail, code, format!("the list {what}"));
            ok = false;
        }
        if ok && lt.unique {
            for (j, item) in items.iter().enumerate() {
                if let Some(i) = items
                    .get(..j)
                    .and_then(|before| before.iter().position(|b| same(b, item)))
                {
                    self.report(
                        &trail.index(j),
                        Code::DuplicateItem,
                        format!("item {j} equals item {i}; a set holds distinct items"),
                    );
                    ok = false;
                }
            }
        }
        ok
    }

    /// Reads an array's items onto the item stack; whether all were valid, and how many.
    fn list_items(&mut self, lt: &ListTy, trail: &Trail<'_>) -> Result<(bool, usize), Syntax> {
        let mut ok = true;
        let mut count = 0usize;
        if !self.r.begin_array()? {
            loop {
                match self.value(&lt.item, &trail.index(count))? {
                    Some(v) if ok => self.items.push(v),
                    Some(_) => {}
                    None => ok = false,
                }
                count += 1;
                if !self.r.comma_or(b']')? {
                    break;
                }
            }
        }
        Ok((ok, count))
    }

    #[inline(never)]
    fn map(&mut self, mt: &MapTy, trail: &Trail<'_>) -> Decoded<Value> {
        Ok(self
            .map_entries(mt, trail, |s, ty, trail| s.value(ty, trail))?
            .map(Value::Map))
    }

    /// A map's entries sorted by key, each value read by `read`: keys checked against the
    /// key type, duplicate keys refused, the number of entries held to the bounds.
    fn map_entries<V>(
        &mut self,
        mt: &MapTy,
        trail: &Trail<'_>,
        mut read: impl FnMut(&mut Self, &Ty, &Trail<'_>) -> Decoded<V>,
    ) -> Decoded<Vec<(String, V)>> {
        let table = self.table;
        let mut entries: BTreeMap<String, Option<V>> = BTreeMap::new();
        let mut ok = true;
        if !self.r.begin_object()? {
            loop {
                let (key, issue) = self.r.key()?;
                let child = trail.key(&key);
                if let Some(issue) = issue {
                    self.text_issue(&child, issue);
                    ok = false;
                } else if !self.key_fits(&key, &mt.key, table, &child) {
                    ok = false;
                }
                if entries.contains_key(&*key) {
                    self.report(
                        &child,
                        Code::DuplicateKey,
                        format!("key \"{}\" appears more than once", quoted(&key)),
                    );
                    self.r.skip_value()?;
                    ok = false;
                } else {
                    let v = read(self, &mt.value, &child)?;
                    ok &= v.is_some();
                    entries.insert(key.into_owned(), v);
                }
                if !self.r.comma_or(b'}')? {
                    break;
                }
            }
        }
        let count = entries.len();
        if count > mt.max as usize {
            let (code, what) = bounds::too_many("entries", count, mt.max);
            self.report(trail, code, format!("the map {what}"));
            ok = false;
        } else if count < mt.min as usize {
            let (code, what) = bounds::too_few("entries", count, mt.min);
            self.report(trail, code, format!("the map {what}"));
            ok = false;
        }
        if !ok {
            return Ok(None);
        }
        Ok(entries
            .into_iter()
            .map(|(k, v)| v.map(|v| (k, v)))
            .collect())
    }

    /// Checks a map key against the key type (`propertyNames`): a `Str` or a unit enum.
    fn key_fits(&mut self, key: &str, key_ty: &Ty, table: &TypeTable, trail: &Trail<'_>) -> bool {
        match table.resolve(key_ty) {
            Some(Ty::Str(st)) => {
                let mut issues = Vec::new();
                bounds::check_str(key, st, self.patterns, &mut issues);
                let ok = issues.is_empty();
                for (code, what) in issues {
                    self.report(trail, code, format!("the key {what}"));
                }
                ok
            }
            Some(Ty::Ref { def }) => match table.get(*def).map(|d| &d.kind) {
                Some(DefKind::Enum { variants, .. }) => {
                    if variants.iter().any(|v| v.name == key) {
                        true
                    } else {
                        let names: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
                        self.report(
                            trail,
                            Code::UnknownVariant,
                            format!(
                                "the key \"{}\" is not one of {}",
                                quoted(key),
                                names.join(", ")
                            ),
                        );
                        false
                    }
                }
                _ => true,
            },
            _ => true,
        }
    }

    #[inline(never)]
    fn media(&mut self, mt: &MediaTy, trail: &Trail<'_>) -> Decoded<Value> {
        let mut texts: [Option<String>; MEDIA_FIELDS.len()] = Default::default();
        let mut counts: [Option<u64>; MEDIA_FIELDS.len()] = [None; MEDIA_FIELDS.len()];
        let mut seen = [false; MEDIA_FIELDS.len()];
        let mut ok = true;
        if !self.r.begin_object()? {
            loop {
                let (key, _) = self.r.key()?;
                let child = trail.key(&key);
                match MEDIA_FIELDS.iter().position(|f| f.name == key) {
                    None => {
                        let names: Vec<&str> = MEDIA_FIELDS.iter().map(|f| f.name).collect();
                        self.report(
                            &child,
                            Code::UnknownField,
                            format!(
                                "unknown field \"{}\"; the fields are {}",
                                quoted(&key),
                                names.join(", ")
                            ),
                        );
                        self.r.skip_value()?;
                        ok = false;
                    }
                    Some(i) if seen.get(i).copied().unwrap_or(true) => {
                        self.report(
                            &child,
                            Code::DuplicateKey,
                            format!("key \"{}\" appears more than once", quoted(&key)),
                        );
                        self.r.skip_value()?;
                        ok = false;
                    }
                    Some(i) => {
                        if let Some(s) = seen.get_mut(i) {
                            *s = true;
                        }
                        let field_kind = MEDIA_FIELDS.get(i).map(|f| f.kind);
                        let ty = match field_kind {
                            Some(MediaFieldKind::Count) => {
                                Ty::Int(crate::ty::IntTy::base(crate::ty::IntKind::U64))
                            }
                            _ => Ty::Str(crate::ty::StrTy {
                                min: 0,
                                max: crate::ty::limits::MAX_STR_LEN,
                                pattern: None,
                                format: None,
                            }),
                        };
                        match self.value(&ty, &child)? {
                            Some(Value::Str(s)) => {
                                if let Some(t) = texts.get_mut(i) {
                                    *t = Some(s.into_string());
                                }
                            }
                            Some(Value::Int(n)) => {
                                if let Some(c) = counts.get_mut(i) {
                                    *c = u64::try_from(n).ok();
                                }
                            }
                            _ => ok = false,
                        }
                    }
                }
                if !self.r.comma_or(b'}')? {
                    break;
                }
            }
        }
        for (i, f) in MEDIA_FIELDS.iter().enumerate() {
            if f.required && !seen.get(i).copied().unwrap_or(false) {
                self.report(
                    &trail.key(f.name),
                    Code::MissingField,
                    "required field is missing",
                );
                ok = false;
            }
        }
        if !ok {
            return Ok(None);
        }
        let mut take_text = |i: usize| texts.get_mut(i).and_then(Option::take);
        let count = |i: usize| counts.get(i).copied().flatten();
        let m = MediaRef {
            reference: take_text(0).unwrap_or_default(),
            content_type: take_text(1).unwrap_or_default(),
            size: count(2).unwrap_or_default(),
            sha256: take_text(3).unwrap_or_default(),
            expires_at: take_text(4),
            source: take_text(5),
            width: count(6),
            height: count(7),
            duration_ms: count(8),
            sample_rate: count(9),
            pages: count(10),
        };
        let issues = check_media(&m, mt);
        if !issues.is_empty() {
            for (field, (code, what)) in issues {
                self.report(&trail.key(field), code, what);
            }
            return Ok(None);
        }
        Ok(Some(Value::Media(Box::new(m))))
    }
}

/// A decoded text as a [`Text`]: a borrowed one through `CompactString::new`, which is
/// inlined here and builds the short (inline) text in place, where the generic `From<Cow>`
/// is a call whose 24-byte result is copied through the stack and read back before its
/// stores have landed (a store-to-load stall per string); an owned one keeps its buffer.
#[inline]
fn text_of(s: Cow<'_, str>) -> Text {
    match s {
        Cow::Borrowed(s) => Text::new(s),
        Cow::Owned(s) => Text::from(s),
    }
}

/// The index of the field named `key`, trying `guess` (the field after the last one read)
/// before the others.
#[inline]
fn field_index(fields: &[FieldTy], key: &str, guess: usize) -> Option<usize> {
    if fields.get(guess).is_some_and(|f| same_text(&f.name, key)) {
        return Some(guess);
    }
    fields.iter().position(|f| same_text(&f.name, key))
}

/// Whether two short texts (field names, variant names: a few bytes each) are equal, compared
/// in at most two word loads each rather than through a call to `memcmp`, which costs more
/// than the comparison at these lengths. Longer texts compare as usual.
#[inline]
fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let n = a.len();
    // Two loads that cover all `n` bytes, overlapping when `n` is under twice their width.
    let word = |s: &[u8], at: usize| -> u64 {
        let mut w = [0u8; 8];
        if let Some(part) = s.get(at..at + 8) {
            w.copy_from_slice(part);
        }
        u64::from_le_bytes(w)
    };
    let half = |s: &[u8], at: usize| -> u32 {
        let mut w = [0u8; 4];
        if let Some(part) = s.get(at..at + 4) {
            w.copy_from_slice(part);
        }
        u32::from_le_bytes(w)
    };
    match n {
        0 => true,
        1..=3 => a.first() == b.first() && a.get(n / 2) == b.get(n / 2) && a.last() == b.last(),
        4..=8 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        9..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
    }
}

/// Which fields of an object were read: a bit set, inline up to 64 fields (no allocation).
/// Where [`Session::fields_into`] is in an object: the fields seen, whether the tag was,
/// whether every field so far was valid, and where the next key is looked for first (fields
/// mostly come in declaration order).
struct FieldsState {
    seen: Seen,
    tag_seen: bool,
    ok: bool,
    next: usize,
}

enum Seen {
    Small(u64),
    Large(Vec<bool>),
}

impl Seen {
    fn new(fields: usize) -> Seen {
        if fields <= 64 {
            Seen::Small(0)
        } else {
            Seen::Large(vec![false; fields])
        }
    }

    fn get(&self, i: usize) -> bool {
        match self {
            Seen::Small(bits) => i < 64 && bits & (1 << i) != 0,
            Seen::Large(v) => v.get(i).copied().unwrap_or(false),
        }
    }

    fn set(&mut self, i: usize) {
        match self {
            Seen::Small(bits) => {
                if i < 64 {
                    *bits |= 1 << i;
                }
            }
            Seen::Large(v) => {
                if let Some(b) = v.get_mut(i) {
                    *b = true;
                }
            }
        }
    }
}

/// What the look-ahead for a data enum's tag found (the text borrowed from the document when
/// it has no escapes).
enum TagFound<'a> {
    Text(std::borrow::Cow<'a, str>),
    Missing,
    Other(Kind),
}

#[cfg(test)]
mod tests {
    use super::{same_text, Decoder};
    use crate::error::MAX_MESSAGE;
    use crate::ty::{FloatKind, FloatTy, IntKind, IntTy, Ty, TypeTable};

    /// Issue 25 (K): a 3 MB number used to come back whole in its error. Every error quotes
    /// at most a bounded excerpt of it, with its length.
    #[test]
    fn a_huge_number_is_quoted_cut() {
        let digits = format!("1{}", "0".repeat(3_000_000));
        let table = TypeTable::default();
        let int = Ty::Int(IntTy {
            kind: IntKind::U8,
            min: 0,
            max: 255,
            max_exclusive: false,
        });
        let float = Ty::Float(FloatTy {
            kind: FloatKind::F32,
            min: None,
            max: None,
        });
        for (ty, document) in [
            (&int, digits.clone()),
            (&int, format!("{digits}.5")),
            (&float, digits.clone()),
        ] {
            let errors = Decoder::new(&table)
                .with_max_input_bytes(4 << 20)
                .decode(document.as_bytes(), ty, "request")
                .expect_err("refused");
            let shown: usize = errors
                .iter()
                .map(|e| e.message.len() + e.pointer.len())
                .sum();
            assert!(shown < 2 * MAX_MESSAGE, "{shown} bytes: {errors:?}");
            assert!(
                errors.iter().all(|e| e.message.contains("bytes)")),
                "{errors:?}"
            );
        }
    }

    proptest::proptest! {
        /// The word-load comparison says what `==` says, at every length, on texts that
        /// differ in one byte anywhere or not at all.
        #[test]
        fn same_text_is_equality(
            text in "[a-c_]{0,40}",
            other in "[a-c_]{0,40}",
            flip in proptest::prelude::any::<proptest::sample::Index>(),
        ) {
            proptest::prop_assert_eq!(same_text(&text, &other), text == other);
            proptest::prop_assert!(same_text(&text, &text.clone()));
            if !text.is_empty() {
                let at = flip.index(text.len());
                let mut bytes = text.clone().into_bytes();
                if let Some(b) = bytes.get_mut(at) {
                    *b = b'z';
                }
                let changed = String::from_utf8(bytes).unwrap_or_default();
                proptest::prop_assert_eq!(same_text(&text, &changed), text == changed);
            }
        }
    }
}
