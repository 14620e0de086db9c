//! Structural check of a computed value (pipeline step 6, after a transform): the same bounds the
//! decoder applies to bytes, applied to a [`Value`] against its [`Ty`], with the same codes,
//! paths and sentences (both use [`crate::bounds`]). Pointers are those the value would have in
//! its canonical JSON (`/findings/3/line`).
//!
//! It also rejects values whose shape does not fit the type at all (an evaluator bug or a
//! hand-written transform returning the wrong thing) as `wrong_type`, and the platform bounds
//! of §8 as `too_deep` / `too_many_values` / `too_many_items`.

use crate::bounds::{self, Patterns};
use crate::error::{quoted, Code, DecodeError, PathBuf, MAX_ERRORS};
use crate::media::check_media;
use crate::ty::limits::{MAX_DEPTH, MAX_ITEMS, MAX_VALUES};
use crate::ty::{DefKind, FieldTy, Ty, TypeTable};
use crate::value::Value;

/// Checks `value` against `ty`; empty when it fits. `root` names it in paths (`output`).
pub fn validate_value(value: &Value, ty: &Ty, table: &TypeTable, root: &str) -> Vec<DecodeError> {
    Validator::new(table).validate(value, ty, root)
}

/// A reusable validator (patterns compile into the table's shared cache).
pub struct Validator<'t> {
    table: &'t TypeTable,
}

struct Walk<'a, 't> {
    table: &'t TypeTable,
    patterns: &'a Patterns,
    path: PathBuf,
    errors: Vec<DecodeError>,
    values: usize,
}

impl<'t> Validator<'t> {
    pub fn new(table: &'t TypeTable) -> Validator<'t> {
        Validator { table }
    }

    pub fn validate(&mut self, value: &Value, ty: &Ty, root: &str) -> Vec<DecodeError> {
        let mut walk = Walk {
            table: self.table,
            patterns: self.table.patterns(),
            path: PathBuf::new(root),
            errors: Vec::new(),
            values: 0,
        };
        walk.value(value, ty, 0);
        walk.errors
    }
}

impl Walk<'_, '_> {
    fn report(&mut self, code: Code, what: impl std::fmt::Display) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(DecodeError::new(code, &self.path, what));
        }
    }

    fn wrong(&mut self, expected: &str, found: &Value) {
        self.report(
            Code::WrongType,
            format!("expected {expected}, found {}", found.kind_name()),
        );
    }

    fn value(&mut self, value: &Value, ty: &Ty, depth: usize) {
        self.values += 1;
        if self.values == MAX_VALUES + 1 {
            self.report(
                Code::TooManyValues,
                format!("the value holds more than {MAX_VALUES} values, the platform limit"),
            );
        }
        let table = self.table;
        let Some(ty) = table.resolve(ty) else {
            self.wrong("a value of a known type (the type table is broken)", value);
            return;
        };
        match (ty, value) {
            (Ty::Bool, Value::Bool(_)) => {}
            (Ty::Int(it), Value::Int(v)) => {
                if let Some((code, what)) = bounds::check_int(*v, it) {
                    self.report(code, what);
                }
            }
            (Ty::Float(ft), Value::Float(v)) => {
                if let Some((code, what)) = bounds::check_float(*v, || v.to_string(), ft) {
                    self.report(code, what);
                }
            }
            (Ty::Str(st), Value::Str(s)) => {
                let mut issues = Vec::new();
                bounds::check_str(s, st, self.patterns, &mut issues);
                for (code, what) in issues {
                    self.report(code, what);
                }
            }
            (Ty::List(lt), Value::List(items)) => {
                if depth >= MAX_DEPTH {
                    return self.too_deep();
                }
                for (i, item) in items.iter().enumerate() {
                    self.path.push_index(i);
                    self.value(item, &lt.item, depth + 1);
                    self.path.pop();
                }
                let max = lt.max.min(MAX_ITEMS);
                if items.len() > max as usize {
                    let (code, what) = bounds::too_many("items", items.len(), max);
                    self.report(code, format!("the list {what}"));
                } else if items.len() < lt.min as usize {
                    let (code, what) = bounds::too_few("items", items.len(), lt.min);
                    self.report(code, format!("the list {what}"));
                }
                if lt.unique && items.len() <= crate::ty::limits::MAX_UNIQUE_ITEMS as usize {
                    for (j, item) in items.iter().enumerate() {
                        let earlier = items
                            .get(..j)
                            .and_then(|b| b.iter().position(|x| x == item));
                        if let Some(i) = earlier {
                            self.path.push_index(j);
                            self.report(
                                Code::DuplicateItem,
                                format!("item {j} equals item {i}; a set holds distinct items"),
                            );
                            self.path.pop();
                        }
                    }
                }
            }
            (Ty::Map(mt), Value::Map(entries)) => {
                if depth >= MAX_DEPTH {
                    return self.too_deep();
                }
                for (i, (key, item)) in entries.iter().enumerate() {
                    self.path.push_key(key);
                    if entries
                        .get(..i)
                        .is_some_and(|b| b.iter().any(|(k, _)| k == key))
                    {
                        self.report(
                            Code::DuplicateKey,
                            format!("key \"{}\" appears more than once", quoted(key)),
                        );
                    }
                    self.key(key, &mt.key);
                    self.value(item, &mt.value, depth + 1);
                    self.path.pop();
                }
                if entries.len() > mt.max as usize {
                    let (code, what) = bounds::too_many("entries", entries.len(), mt.max);
                    self.report(code, format!("the map {what}"));
                } else if entries.len() < mt.min as usize {
                    let (code, what) = bounds::too_few("entries", entries.len(), mt.min);
                    self.report(code, format!("the map {what}"));
                }
            }
            (Ty::Option { .. }, Value::None) => {}
            // A `some` is its value (see `Value::None`).
            (Ty::Option { some }, value) => self.value(value, some, depth),
            (Ty::Ref { def }, value) => self.named(*def, value, depth),
            (Ty::Media(mt), Value::Media(m)) => {
                for (field, (code, what)) in check_media(m, mt) {
                    self.path.push_key(field);
                    self.report(code, what);
                    self.path.pop();
                }
            }
            (ty, value) => self.wrong(expected(ty), value),
        }
    }

    fn too_deep(&mut self) {
        self.report(
            Code::TooDeep,
            format!("the value nests deeper than {MAX_DEPTH} levels"),
        );
    }

    fn key(&mut self, key: &str, key_ty: &Ty) {
        let table = self.table;
        match table.resolve(key_ty) {
            Some(Ty::Str(st)) => {
                let mut issues = Vec::new();
                bounds::check_str(key, st, self.patterns, &mut issues);
                for (code, what) in issues {
                    self.report(code, format!("the key {what}"));
                }
            }
            Some(Ty::Ref { def }) => {
                if let Some(DefKind::Enum { variants, .. }) = table.get(*def).map(|d| &d.kind) {
                    if !variants.iter().any(|v| v.name == key) {
                        let names: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
                        self.report(
                            Code::UnknownVariant,
                            format!(
                                "the key \"{}\" is not one of {}",
                                quoted(key),
                                names.join(", ")
                            ),
                        );
                    }
                }
            }
            _ => {}
        }
    }

    fn named(&mut self, def: crate::ty::DefId, value: &Value, depth: usize) {
        let table = self.table;
        let Some(d) = table.get(def) else {
            return self.wrong("a value of a known type (the type table is broken)", value);
        };
        match (&d.kind, value) {
            (DefKind::Struct { fields }, Value::Struct(values)) => {
                if depth >= MAX_DEPTH {
                    return self.too_deep();
                }
                self.fields(fields, values, depth);
            }
            (DefKind::Enum { variants, .. }, Value::Enum { variant, fields }) => {
                let Some(v) = variants.get(*variant as usize) else {
                    return self.report(
                        Code::UnknownVariant,
                        format!("variant {variant} does not exist in {}", d.name),
                    );
                };
                let decl = v.fields.as_deref().unwrap_or_default();
                if !decl.is_empty() || !fields.is_empty() {
                    if depth >= MAX_DEPTH {
                        return self.too_deep();
                    }
                    self.fields(decl, fields, depth);
                }
            }
            (DefKind::Alias { ty }, value) => self.value(value, ty, depth),
            (DefKind::Struct { .. }, value) => {
                self.wrong(&format!("an object ({})", d.name), value)
            }
            (DefKind::Enum { .. }, value) => self.wrong(&format!("a variant of {}", d.name), value),
        }
    }

    fn fields(&mut self, decl: &[FieldTy], values: &[Value], depth: usize) {
        if decl.len() != values.len() {
            self.report(
                Code::WrongType,
                format!(
                    "expected {} fields, found {} (the value was built for another type)",
                    decl.len(),
                    values.len()
                ),
            );
            return;
        }
        for (field, value) in decl.iter().zip(values) {
            self.path.push_key(&field.name);
            self.value(value, &field.ty, depth + 1);
            self.path.pop();
        }
    }
}

fn expected(ty: &Ty) -> &'static str {
    match ty {
        Ty::Bool => "a boolean",
        Ty::Int(_) => "an integer",
        Ty::Float(_) => "a number",
        Ty::Str(_) => "text",
        Ty::List(_) => "a list",
        Ty::Map(_) => "a map",
        Ty::Option { .. } => "an option",
        Ty::Ref { .. } => "a named type",
        Ty::Media(_) => "a media reference",
    }
}
