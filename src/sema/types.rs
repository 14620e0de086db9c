//! Phase 2: types as written → bounded [`Ty`]s in the [`TypeTable`] (spec §3).
//!
//! Every refinement is checked against its base type and the platform limits of §8 here, so
//! that the invariants written at the top of `aelc_runtime::ty` hold for every lowered type.
//! `DefId(i)` is the `i`-th type declaration collected by the scope phase.

use aelc_runtime::ty::{
    limits, DefId, DefKind, FieldTy, FloatBound, FloatKind, FloatTy, Format, IntKind, IntTy,
    ListTy, MapTy, MediaKind, MediaTy, StrTy, Ty, TypeDef, VariantTy,
};

use super::error::{NameError, TypeError};
use super::{Cx, ItemRef, TypeDecl};
use crate::diagnostics::suggest::did_you_mean;
use crate::span::Span;
use crate::syntax::ast::{self, LitKind, TypeArg, TypeKind};

/// The refinements (`@name(…)`), each with the types it refines: what sema accepts and
/// suggests, and E0213's list.
pub(crate) const ATTRIBUTES: &[(&str, &str)] = &[
    ("pattern", "Str"),
    ("format", "Str"),
    ("types", "media"),
    ("max_pixels", "media"),
    ("max_duration", "media"),
    ("sample_rate", "media"),
];

/// The non-data types of spec §6, allowed only in some positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Special {
    Raw,
    Parts,
}

/// `Raw` or `Parts`, when that is what `ty` names.
pub(crate) fn special(ty: &ast::TypeExpr) -> Option<Special> {
    match &ty.kind {
        TypeKind::Named { path, args } if path.segments.len() == 1 && args.is_empty() => {
            match path.last()?.name.as_str() {
                "Raw" => Some(Special::Raw),
                "Parts" => Some(Special::Parts),
                _ => None,
            }
        }
        _ => None,
    }
}

pub(crate) fn lower_all(cx: &mut Cx<'_, '_>) {
    // Sized once: grown by doubling, the program's tables held up to twice their length, and
    // a copy of both halves while they moved (issue 23: the check's peak).
    cx.table.defs.reserve_exact(cx.types.len());
    for decl in &cx.types {
        let name = match decl.def {
            TypeDecl::Struct(d) => &d.name,
            TypeDecl::Enum(d) => &d.name,
            TypeDecl::Alias(d) => &d.name,
        };
        cx.table.defs.push(TypeDef {
            name: name.name.to_string(),
            module: cx
                .modules
                .get(decl.module)
                .map_or_else(String::new, |m| m.path.clone()),
            docs: cx.docs(&decl.item.docs),
            kind: DefKind::Struct { fields: Vec::new() },
        });
    }
    for index in 0..cx.types.len() {
        let Some(decl) = cx.types.get(index) else {
            continue;
        };
        let (module, item, def) = (decl.module, decl.item, decl.def);
        let kind = match def {
            TypeDecl::Struct(s) => {
                reject_item_attrs(cx, item, &[]);
                DefKind::Struct {
                    fields: lower_fields(cx, module, &s.fields),
                }
            }
            TypeDecl::Enum(e) => lower_enum(cx, module, item, e),
            TypeDecl::Alias(_) => {
                reject_item_attrs(cx, item, &[]);
                let ty = alias_target(cx, index as u32).unwrap_or(Ty::Bool);
                DefKind::Alias { ty }
            }
        };
        if let Some(slot) = cx.table.defs.get_mut(index) {
            slot.kind = kind;
        }
    }
    super::consts::check_defaults(cx);
}

fn reject_item_attrs(cx: &mut Cx<'_, '_>, item: &ast::Item, allowed: &[&str]) {
    for attr in &item.attrs {
        if !allowed.contains(&attr.name.name.as_str()) {
            cx.report(TypeError::AttrNotHere {
                span: attr.span,
                name: attr.name.name.to_string(),
            });
        }
    }
}

fn lower_enum(cx: &mut Cx<'_, '_>, module: usize, item: &ast::Item, e: &ast::EnumDef) -> DefKind {
    let is_data = e.variants.iter().any(|v| v.fields.is_some());
    let mut tag = "type".to_owned();
    for attr in &item.attrs {
        if attr.name.name != "tag" {
            reject_item_attrs(cx, item, &["tag"]);
            break;
        }
        if !is_data {
            cx.report(TypeError::TagOnUnitEnum { span: attr.span });
            continue;
        }
        match string_arg(attr) {
            Some(text) if !text.is_empty() => tag = text,
            _ => cx.report(TypeError::TagArg { span: attr.span }),
        }
    }
    let mut seen: super::Map<&str, Span> = super::Map::default();
    let mut variants = Vec::new();
    for variant in &e.variants {
        if let Some(first) = seen.get(variant.name.name.as_str()) {
            cx.report(NameError::DeclaredTwice {
                span: variant.name.span,
                first: *first,
                what: "variant",
                name: variant.name.name.to_string(),
            });
            continue;
        }
        seen.insert(&variant.name.name, variant.name.span);
        let fields = variant.fields.as_ref().map(|f| {
            for field in f {
                if field.name.name == tag {
                    cx.report(NameError::TagClash {
                        span: field.name.span,
                        tag: tag.clone(),
                    });
                }
            }
            lower_fields(cx, module, f)
        });
        variants.push(VariantTy {
            name: variant.name.name.to_string(),
            docs: cx.docs(&variant.docs),
            fields,
        });
    }
    if variants.is_empty() {
        cx.report(TypeError::NoVariants {
            span: e.name.span,
            name: e.name.name.to_string(),
        });
    }
    DefKind::Enum { tag, variants }
}

fn string_arg(attr: &ast::Attribute) -> Option<String> {
    match attr.args.as_slice() {
        [ast::Expr {
            kind:
                ast::ExprKind::Lit(ast::Literal {
                    kind: LitKind::Str { value, .. },
                    ..
                }),
            ..
        }] => Some(value.to_string()),
        _ => None,
    }
}

fn lower_fields(cx: &mut Cx<'_, '_>, module: usize, fields: &[ast::Field]) -> Vec<FieldTy> {
    let mut seen: super::Map<&str, Span> = super::Map::default();
    // Sized once: the fields live in the program, and a list grown by doubling kept room for
    // up to twice as many.
    let mut out = Vec::with_capacity(fields.len());
    for field in fields {
        if let Some(first) = seen.get(field.name.name.as_str()) {
            cx.report(NameError::DeclaredTwice {
                span: field.name.span,
                first: *first,
                what: "field",
                name: field.name.name.to_string(),
            });
            continue;
        }
        seen.insert(&field.name.name, field.name.span);
        let ty = cx.lower_ty(module, &field.ty).unwrap_or(Ty::Bool);
        out.push(FieldTy {
            name: field.name.name.to_string(),
            docs: cx.docs(&field.docs),
            ty,
            default: None,
        });
    }
    out
}

/// The lowered target of alias `def`, computed once.
fn alias_target(cx: &mut Cx<'_, '_>, def: u32) -> Option<Ty> {
    if let Some(done) = cx.alias_targets.get(&def) {
        return done.clone();
    }
    let decl = cx.types.get(def as usize)?;
    let (module, TypeDecl::Alias(alias)) = (decl.module, decl.def) else {
        return None;
    };
    if !cx.alias_busy.insert(def) {
        // A cycle of aliases: reported by the recursion check.
        return None;
    }
    let ty = cx.lower_ty(module, &alias.ty);
    cx.alias_busy.remove(&def);
    cx.alias_targets.insert(def, ty.clone());
    ty
}

/// A signed integer bound of a type argument.
fn int_bound(b: &ast::Bound) -> Option<i128> {
    match &b.lit.kind {
        LitKind::Int(v) => Some(if b.negative {
            -(*v as i128)
        } else {
            *v as i128
        }),
        _ => None,
    }
}

fn float_bound(b: &ast::Bound) -> Option<f64> {
    let v = match &b.lit.kind {
        LitKind::Int(v) => *v as f64,
        LitKind::Float { text } => ast::float_value(text),
        _ => return None,
    };
    Some(if b.negative { -v } else { v })
}

/// `N` (as `..=N`) or `M..=N` for a length or count.
struct CountRange {
    min: i128,
    max: Option<i128>,
    span: Span,
}

impl Cx<'_, '_> {
    /// Lowers a type as written, with its refinements. `None` after an error was reported.
    pub(crate) fn lower_ty(&mut self, module: usize, texpr: &ast::TypeExpr) -> Option<Ty> {
        let base = self.lower_base(module, texpr)?;
        self.apply_attrs(module, base, &texpr.attrs)
    }

    fn lower_base(&mut self, module: usize, texpr: &ast::TypeExpr) -> Option<Ty> {
        let TypeKind::Named { path, args } = &texpr.kind else {
            return None;
        };
        let span = texpr.span();
        if path.segments.len() == 1 {
            let name = path.last()?.name.as_str();
            if let Some(ty) = self.lower_builtin(module, name, args, span) {
                return ty;
            }
        }
        match self.lookup(module, path) {
            Some(ItemRef::Type(def)) => {
                if !args.is_empty() {
                    self.report(TypeError::NoTypeArgs {
                        span,
                        path: path.to_text(),
                    });
                }
                Some(Ty::Ref { def: DefId(def) })
            }
            Some(ItemRef::Stream(stream)) => {
                let decl = self.streams.get(stream as usize)?;
                let (m, of) = (decl.module, &decl.def.of);
                if !self.stream_busy.insert(stream) {
                    // Found by `aelc-fuzz check`: `stream R of R` recursed until the stack
                    // overflowed (the process aborted).
                    self.report(TypeError::StreamOfItself {
                        span,
                        path: path.to_text(),
                    });
                    return None;
                }
                let item = self.lower_ty(m, of);
                self.stream_busy.remove(&stream);
                let item = item?;
                Some(Ty::List(ListTy {
                    item: Box::new(item),
                    min: 0,
                    max: limits::MAX_ITEMS,
                    unique: false,
                }))
            }
            Some(other) => {
                self.report(NameError::NotAType {
                    span: path.span(),
                    path: path.to_text(),
                    noun: other.noun(),
                });
                None
            }
            None => {
                let name = path.to_text();
                if name == "Raw" || name == "Parts" {
                    self.report(TypeError::NotData { span, name });
                    return None;
                }
                self.unknown(
                    "E0204",
                    module,
                    path,
                    "type",
                    |r| matches!(r, ItemRef::Type(_)),
                    super::builtin_types::DATA_TYPES,
                );
                None
            }
        }
    }

    /// `Some(result)` when `name` is a built-in type.
    fn lower_builtin(
        &mut self,
        module: usize,
        name: &str,
        args: &[TypeArg],
        span: Span,
    ) -> Option<Option<Ty>> {
        let int = |k| Some(k);
        let int_kind = match name {
            "u8" => int(IntKind::U8),
            "u16" => int(IntKind::U16),
            "u32" => int(IntKind::U32),
            "u64" => int(IntKind::U64),
            "i8" => int(IntKind::I8),
            "i16" => int(IntKind::I16),
            "i32" => int(IntKind::I32),
            "i64" => int(IntKind::I64),
            _ => None,
        };
        if let Some(kind) = int_kind {
            return Some(self.lower_int(kind, args, span));
        }
        Some(match name {
            "bool" => {
                self.no_args("bool", args, span);
                Some(Ty::Bool)
            }
            "f32" => self.lower_float(FloatKind::F32, args, span),
            "f64" => self.lower_float(FloatKind::F64, args, span),
            "Str" => self.lower_str(args, span),
            "List" | "Set" => self.lower_list(module, name == "Set", args, span),
            "Map" => self.lower_map(module, args, span),
            "Option" => match args {
                [TypeArg::Type(inner)] => {
                    let inner = self.lower_ty(module, inner)?;
                    if self.is_option(&inner) {
                        self.report(TypeError::OptionOfOption { span });
                    }
                    Some(Ty::Option {
                        some: Box::new(inner),
                    })
                }
                _ => {
                    self.wrong_args("Option", "`Option<T>`", span);
                    None
                }
            },
            "Image" => self.lower_media(MediaKind::Image, args, span),
            "Audio" => self.lower_media(MediaKind::Audio, args, span),
            "Video" => self.lower_media(MediaKind::Video, args, span),
            "File" => self.lower_media(MediaKind::File, args, span),
            _ => return None,
        })
    }

    fn no_args(&mut self, name: &str, args: &[TypeArg], span: Span) {
        if !args.is_empty() {
            self.wrong_args(name, &format!("`{name}`"), span);
        }
    }

    fn wrong_args(&mut self, name: &str, form: &str, span: Span) {
        self.report(TypeError::WrongTypeArgs {
            span,
            name: name.to_owned(),
            form: form.to_owned(),
        });
    }

    fn lower_int(&mut self, kind: IntKind, args: &[TypeArg], span: Span) -> Option<Ty> {
        let mut ty = IntTy::base(kind);
        let (lo, hi) = kind.range();
        match args {
            [] => return Some(Ty::Int(ty)),
            [TypeArg::Range(r)] => {
                let start = r.start.as_ref().map(|b| (int_bound(b), b.span()));
                let end = r.end.as_ref().map(|b| (int_bound(b), b.span()));
                for (value, bspan) in start.iter().chain(end.iter()) {
                    match value {
                        None => {
                            self.report(TypeError::IntBound {
                                span: *bspan,
                                kind: kind.name(),
                            });
                            return None;
                        }
                        Some(v) if *v < lo || *v > hi => {
                            self.report(TypeError::OutOfRange {
                                span: *bspan,
                                value: *v,
                                kind: kind.name(),
                                lo,
                                hi,
                                wider: wider(kind),
                            });
                            return None;
                        }
                        Some(_) => {}
                    }
                }
                if let Some((Some(v), _)) = start {
                    ty.min = v;
                }
                if let Some((Some(v), _)) = end {
                    ty.max = v;
                    ty.max_exclusive = !r.inclusive;
                }
                let empty = if ty.max_exclusive {
                    ty.min >= ty.max
                } else {
                    ty.min > ty.max
                };
                if empty {
                    self.report(TypeError::EmptyRange { span: r.span });
                    return None;
                }
            }
            _ => {
                self.wrong_args(
                    kind.name(),
                    &format!("`{}` or `{}<lo..=hi>`", kind.name(), kind.name()),
                    span,
                );
                return None;
            }
        }
        Some(Ty::Int(ty))
    }

    fn lower_float(&mut self, kind: FloatKind, args: &[TypeArg], span: Span) -> Option<Ty> {
        let name = if kind == FloatKind::F32 { "f32" } else { "f64" };
        let mut ty = FloatTy {
            kind,
            min: None,
            max: None,
        };
        match args {
            [] => {}
            [TypeArg::Range(r)] => {
                for b in r.start.iter().chain(r.end.iter()) {
                    let ok = float_bound(b).is_some_and(|v| {
                        v.is_finite() && (kind == FloatKind::F64 || (v as f32).is_finite())
                    });
                    if !ok {
                        self.report(TypeError::FloatBound {
                            span: b.span(),
                            kind: name,
                        });
                        return None;
                    }
                }
                ty.min = r
                    .start
                    .as_ref()
                    .and_then(float_bound)
                    .map(|value| FloatBound {
                        value,
                        exclusive: false,
                    });
                ty.max = r
                    .end
                    .as_ref()
                    .and_then(float_bound)
                    .map(|value| FloatBound {
                        value,
                        exclusive: !r.inclusive,
                    });
                if let (Some(lo), Some(hi)) = (ty.min, ty.max) {
                    if lo.value > hi.value || (hi.exclusive && lo.value >= hi.value) {
                        self.report(TypeError::EmptyRange { span: r.span });
                        return None;
                    }
                }
            }
            _ => {
                self.wrong_args(name, &format!("`{name}` or `{name}<lo..=hi>`"), span);
                return None;
            }
        }
        Some(Ty::Float(ty))
    }

    /// `N` or `M..=N` (also `M..N`, `..=N`).
    fn count_range(&mut self, arg: &TypeArg, what: &str) -> Option<CountRange> {
        let as_count = |b: &ast::Bound| match (&b.lit.kind, b.negative) {
            (LitKind::Int(v), false) => Some(*v as i128),
            _ => None,
        };
        match arg {
            TypeArg::Bound(b) => match as_count(b) {
                Some(v) => Some(CountRange {
                    min: 0,
                    max: Some(v),
                    span: b.span(),
                }),
                None => {
                    self.report(TypeError::NotACount {
                        span: b.span(),
                        what: what.to_owned(),
                    });
                    None
                }
            },
            TypeArg::Range(r) => {
                let min = match &r.start {
                    Some(b) => match as_count(b) {
                        Some(v) => v,
                        None => {
                            self.report(TypeError::NotCounts {
                                span: b.span(),
                                what: what.to_owned(),
                            });
                            return None;
                        }
                    },
                    None => 0,
                };
                let max = match &r.end {
                    Some(b) => match as_count(b) {
                        Some(v) => Some(if r.inclusive { v } else { v - 1 }),
                        None => {
                            self.report(TypeError::NotCounts {
                                span: b.span(),
                                what: what.to_owned(),
                            });
                            return None;
                        }
                    },
                    None => None,
                };
                Some(CountRange {
                    min,
                    max,
                    span: r.span,
                })
            }
            TypeArg::Type(t) => {
                self.report(TypeError::CountIsAType {
                    span: t.span(),
                    what: what.to_owned(),
                });
                None
            }
        }
    }

    /// Checks `range` against `1..=limit` for the maximum and `min <= max`.
    fn bounded(
        &mut self,
        range: CountRange,
        limit: u32,
        form: &str,
        why: &str,
    ) -> Option<(u32, u32)> {
        let Some(max) = range.max else {
            self.report(TypeError::NoUpperBound {
                span: range.span,
                form: form.to_owned(),
                limit,
            });
            return None;
        };
        if max > limit as i128 {
            self.report(TypeError::OverLimit {
                span: range.span,
                form: form.to_owned(),
                limit,
                max,
                why: why.to_owned(),
            });
            return None;
        }
        if range.min > max {
            self.report(TypeError::EmptyCounts {
                span: range.span,
                min: range.min,
                max,
            });
            return None;
        }
        Some((range.min as u32, max as u32))
    }

    fn lower_str(&mut self, args: &[TypeArg], span: Span) -> Option<Ty> {
        let [arg] = args else {
            self.report(TypeError::StrUnbounded { span });
            return None;
        };
        let range = self.count_range(arg, "the length of `Str`")?;
        if range.max == Some(0) {
            self.report(TypeError::StrZero { span: range.span });
            return None;
        }
        let (min, max) = self.bounded(
            range,
            limits::MAX_STR_LEN,
            "Str<N>",
            "the longest text is 16777216 characters (16 Mi), so that every value has a known largest size",
        )?;
        Some(Ty::Str(StrTy {
            min,
            max,
            pattern: None,
            format: None,
        }))
    }

    fn lower_list(
        &mut self,
        module: usize,
        unique: bool,
        args: &[TypeArg],
        span: Span,
    ) -> Option<Ty> {
        let name = if unique { "Set" } else { "List" };
        let [TypeArg::Type(item), count] = args else {
            self.wrong_args(name, &format!("`{name}<T, N>` or `{name}<T, M..=N>`"), span);
            return None;
        };
        let item = self.lower_ty(module, item);
        let range = self.count_range(count, &format!("the size of `{name}`"))?;
        let (limit, why) = if unique {
            (limits::MAX_UNIQUE_ITEMS, "`uniqueItems` is only allowed with at most 1000 items (spec §8): checking distinctness is quadratic in validators")
        } else {
            (
                limits::MAX_ITEMS,
                "one array holds at most 10000 items (spec §8)",
            )
        };
        let (min, max) = self.bounded(range, limit, &format!("{name}<T, N>"), why)?;
        Some(Ty::List(ListTy {
            item: Box::new(item?),
            min,
            max,
            unique,
        }))
    }

    fn lower_map(&mut self, module: usize, args: &[TypeArg], span: Span) -> Option<Ty> {
        let [TypeArg::Type(key_expr), TypeArg::Type(value), count] = args else {
            self.wrong_args("Map", "`Map<K, V, N>`", span);
            return None;
        };
        let key = self.lower_ty(module, key_expr);
        let value = self.lower_ty(module, value);
        let range = self.count_range(count, "the size of `Map`")?;
        let (min, max) = self.bounded(
            range,
            limits::MAX_ITEMS,
            "Map<K, V, N>",
            "one object holds at most 10000 entries (spec §8)",
        )?;
        let key = key?;
        if !self.is_key_type(&key) {
            self.report(TypeError::MapKey {
                span: key_expr.span(),
            });
            return None;
        }
        Some(Ty::Map(MapTy {
            key: Box::new(key),
            value: Box::new(value?),
            min,
            max,
        }))
    }

    /// Whether `ty` is an `Option`, through aliases (`type Maybe = Option<u8>`).
    fn is_option(&mut self, ty: &Ty) -> bool {
        match ty {
            Ty::Option { .. } => true,
            Ty::Ref { def } => match self.types.get(def.0 as usize).map(|d| d.def) {
                Some(TypeDecl::Alias(_)) => match alias_target(self, def.0) {
                    Some(inner) => self.is_option(&inner),
                    None => false,
                },
                _ => false,
            },
            _ => false,
        }
    }

    fn is_key_type(&mut self, ty: &Ty) -> bool {
        match ty {
            Ty::Str(_) => true,
            Ty::Ref { def } => match self.types.get(def.0 as usize).map(|d| d.def) {
                Some(TypeDecl::Enum(e)) => e.variants.iter().all(|v| v.fields.is_none()),
                Some(TypeDecl::Alias(_)) => match alias_target(self, def.0) {
                    Some(inner) => self.is_key_type(&inner),
                    None => true,
                },
                _ => false,
            },
            _ => false,
        }
    }

    fn lower_media(&mut self, kind: MediaKind, args: &[TypeArg], span: Span) -> Option<Ty> {
        let bytes = match args {
            [TypeArg::Bound(b)] if !b.negative => match &b.lit.kind {
                LitKind::Size { value, unit } => value.checked_mul(unit.bytes()),
                LitKind::Int(v) => Some(*v),
                _ => None,
            },
            _ => None,
        };
        match bytes {
            Some(max_bytes) if max_bytes > 0 => Some(Ty::Media(Box::new(MediaTy {
                kind,
                max_bytes,
                content_types: Vec::new(),
                max_pixels: None,
                max_duration_ms: None,
                sample_rate: None,
            }))),
            _ => {
                self.report(TypeError::MediaUnbounded { span });
                None
            }
        }
    }

    fn apply_attrs(&mut self, module: usize, mut ty: Ty, attrs: &[ast::Attribute]) -> Option<Ty> {
        for attr in attrs {
            let name = attr.name.name.as_str();
            if !ATTRIBUTES.iter().any(|(known, _)| *known == name) {
                let known = ATTRIBUTES.iter().map(|(known, _)| *known);
                self.report(NameError::UnknownAttribute {
                    span: attr.name.span,
                    name: name.to_owned(),
                    suggestion: did_you_mean(name, known).map(str::to_owned),
                });
                continue;
            }
            ty = self.apply_attr(module, ty, attr)?;
        }
        Some(ty)
    }

    #[allow(clippy::only_used_in_recursion)]
    fn apply_attr(&mut self, module: usize, ty: Ty, attr: &ast::Attribute) -> Option<Ty> {
        match ty {
            // A refinement after `Option<T>` refines T (spec §3).
            Ty::Option { some } => {
                let inner = self.apply_attr(module, *some, attr)?;
                Some(Ty::Option {
                    some: Box::new(inner),
                })
            }
            Ty::Ref { def }
                if matches!(
                    self.types.get(def.0 as usize).map(|d| d.def),
                    Some(TypeDecl::Alias(_))
                ) =>
            {
                let target = alias_target(self, def.0)?;
                self.apply_attr(module, target, attr)
            }
            Ty::Str(mut s) if matches!(attr.name.name.as_str(), "pattern" | "format") => {
                let Some(text) = string_arg(attr) else {
                    // A string the lexer could not read (`"\d"`) was reported there.
                    if attr
                        .args
                        .iter()
                        .any(|a| matches!(a.kind, ast::ExprKind::Error))
                    {
                        return Some(Ty::Str(s));
                    }
                    self.report(TypeError::AttrString {
                        span: attr.span,
                        name: attr.name.name.to_string(),
                    });
                    return Some(Ty::Str(s));
                };
                if attr.name.name == "format" {
                    match Format::parse(&text) {
                        Some(f) => s.format = Some(f),
                        None => {
                            let known = Format::ALL.map(Format::as_str);
                            let suggestion = did_you_mean(&text, known).map(str::to_owned);
                            let span = attr.args.first().map_or(attr.span, |a| a.span);
                            self.report(TypeError::UnknownFormat {
                                span,
                                text: text.clone(),
                                suggestion,
                                plain: span.end as usize - span.start as usize == text.len() + 2,
                            });
                        }
                    }
                } else {
                    let raw = match attr.args.first().map(|a| &a.kind) {
                        Some(ast::ExprKind::Lit(ast::Literal {
                            kind: LitKind::Str { raw, .. },
                            ..
                        })) => *raw,
                        _ => None,
                    };
                    let span = attr.args.first().map_or(attr.span, |a| a.span);
                    for d in super::pattern_check::check(&mut self.patterns, &text, span, raw) {
                        self.report(d);
                    }
                    s.pattern = Some(text);
                }
                Some(Ty::Str(s))
            }
            Ty::Media(mut m)
                if matches!(
                    attr.name.name.as_str(),
                    "types" | "max_pixels" | "max_duration" | "sample_rate"
                ) =>
            {
                self.apply_media_attr(&mut m, attr);
                Some(Ty::Media(m))
            }
            other => {
                let target = match attr.name.name.as_str() {
                    "pattern" | "format" => "`Str`",
                    "types" => "media types",
                    "max_pixels" => "`Image` and `Video`",
                    "max_duration" => "`Audio` and `Video`",
                    _ => "`Audio`",
                };
                self.report(TypeError::AttrNotForType {
                    span: attr.span,
                    name: attr.name.name.to_string(),
                    target,
                });
                Some(other)
            }
        }
    }

    fn apply_media_attr(&mut self, m: &mut MediaTy, attr: &ast::Attribute) {
        let ints: Vec<Option<u64>> = attr
            .args
            .iter()
            .map(|a| match &a.kind {
                ast::ExprKind::Lit(ast::Literal {
                    kind: LitKind::Int(v),
                    ..
                }) => Some(*v),
                _ => None,
            })
            .collect();
        let bad = |cx: &mut Self, what: &'static str| {
            cx.report(TypeError::MediaAttrArgs {
                span: attr.span,
                name: attr.name.name.to_string(),
                what,
            });
        };
        let kind_ok = match attr.name.name.as_str() {
            "max_pixels" => matches!(m.kind, MediaKind::Image | MediaKind::Video),
            "max_duration" => matches!(m.kind, MediaKind::Audio | MediaKind::Video),
            "sample_rate" => m.kind == MediaKind::Audio,
            _ => true,
        };
        if !kind_ok {
            self.report(TypeError::AttrNotForMedia {
                span: attr.span,
                name: attr.name.name.to_string(),
            });
            return;
        }
        match attr.name.name.as_str() {
            "types" => {
                let prefix = aelc_runtime::media::content_type_prefix(m.kind);
                for arg in &attr.args {
                    match &arg.kind {
                        ast::ExprKind::Lit(ast::Literal {
                            kind: LitKind::Str { value, .. },
                            ..
                        }) if value.contains('/') => {
                            if let Some(p) = prefix {
                                if !value.starts_with(p) {
                                    self.report(TypeError::ContentTypeKind {
                                        span: arg.span,
                                        value: value.to_string(),
                                        prefix: p,
                                    });
                                    continue;
                                }
                            }
                            m.content_types.push(value.to_string());
                        }
                        _ => self.report(TypeError::ContentTypeArg { span: arg.span }),
                    }
                }
            }
            "max_pixels" => match ints.as_slice() {
                [Some(w), Some(h)]
                    if *w > 0 && *h > 0 && *w <= u32::MAX as u64 && *h <= u32::MAX as u64 =>
                {
                    m.max_pixels = Some((*w as u32, *h as u32));
                }
                _ => bad(self, "a width and a height: `@max_pixels(4096, 4096)`"),
            },
            "sample_rate" => match ints.as_slice() {
                [Some(r)] if *r > 0 && *r <= u32::MAX as u64 => m.sample_rate = Some(*r as u32),
                _ => bad(self, "one rate in Hz: `@sample_rate(16000)`"),
            },
            _ => match attr.args.as_slice() {
                [ast::Expr {
                    kind:
                        ast::ExprKind::Lit(ast::Literal {
                            kind: LitKind::Duration { value, unit },
                            ..
                        }),
                    ..
                }] => {
                    m.max_duration_ms = Some(value.saturating_mul(unit.millis()));
                }
                _ => bad(self, "one duration: `@max_duration(30s)`"),
            },
        }
    }
}

fn wider(kind: IntKind) -> &'static str {
    match kind {
        IntKind::U8 => "u16",
        IntKind::U16 => "u32",
        IntKind::U32 | IntKind::U64 => "u64",
        IntKind::I8 => "i16",
        IntKind::I16 => "i32",
        IntKind::I32 | IntKind::I64 => "i64",
    }
}
