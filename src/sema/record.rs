//! The recording points of the resolution ([`super::resolution`]): small helpers the phases call
//! where they resolve a name, and the declarations written down once checking is over.
//!
//! Every helper starts by testing [`Cx::resolution`], so a check that does not record pays one
//! branch per resolved name and builds nothing (no string, no type description).

use aelc_runtime::ty::{DefId, DefKind};

use super::methods::Receiver;
use super::resolution::{Definition, Resolution, Symbol, SymbolKind, TypeInfo};
use super::sty::STy;
use super::{Cx, ItemRef, TypeDecl};
use crate::span::{FileId, Span};
use crate::syntax::ast;

impl Cx<'_, '_> {
    /// Records that the name at `span` denotes `symbol`.
    pub(crate) fn refer(&mut self, span: Span, symbol: impl FnOnce() -> Symbol) {
        if let Some(resolution) = self.resolution.as_mut() {
            resolution.refer(span, symbol());
        }
    }

    /// Records the type sema gave the expression at `span`.
    pub(crate) fn typed(&mut self, span: Span, ty: &STy) {
        if self.resolution.is_none() || matches!(ty, STy::Error | STy::Unknown) {
            return;
        }
        let info = self.type_info(ty);
        if let Some(resolution) = self.resolution.as_mut() {
            resolution.types.push((span, info));
        }
    }

    /// Records a local declared by `name`; returns the span that keys it, when recording.
    pub(crate) fn define_local(
        &mut self,
        name: &ast::Ident,
        full: Span,
        kind: SymbolKind,
        declared: Option<&ast::TypeExpr>,
        ty: &STy,
    ) -> Option<Span> {
        self.resolution.as_ref()?;
        let info = (!matches!(ty, STy::Error | STy::Unknown)).then(|| self.type_info(ty));
        let resolution = self.resolution.as_mut()?;
        let symbol = Symbol::Local(name.span);
        resolution.define(Definition {
            declared: declared.cloned(),
            ty: info,
            ..named(symbol, kind, &name.name, name.span, full)
        });
        Some(name.span)
    }

    /// Records that the prompt `file` sees the locals declared at `params` from its start.
    pub(crate) fn prompt_scope(&mut self, file: FileId, params: &[Span]) {
        let Some(resolution) = self.resolution.as_mut() else {
            return;
        };
        let found = params
            .iter()
            .filter_map(|span| resolution.index_of(&Symbol::Local(*span)))
            .collect();
        resolution.prompt_scopes.push((file, found));
    }

    fn type_info(&self, ty: &STy) -> TypeInfo {
        TypeInfo {
            text: ty.describe(&self.table),
            def: reached_def(ty),
            receiver: match ty {
                STy::Str => Some(Receiver::Text),
                STy::List { .. } => Some(Receiver::List),
                STy::Map { .. } => Some(Receiver::Map),
                STy::Option(_) => Some(Receiver::Option),
                _ => None,
            },
        }
    }
}

/// The struct or enum a `.` after a value of `ty` reaches.
fn reached_def(ty: &STy) -> Option<u32> {
    match ty {
        STy::Def(def) => Some(def.0),
        STy::Option(inner) => reached_def(inner),
        STy::List { item, .. } => reached_def(item),
        _ => None,
    }
}

/// The resolution of the finished check, with every declaration of the project written down.
pub(super) fn finish(cx: &mut Cx<'_, '_>) -> Option<Resolution> {
    let mut resolution = cx.resolution.take()?;
    declarations(cx, &mut resolution);
    bindings(cx, &mut resolution);
    resolution.finish();
    Some(resolution)
}

/// The declaration of `symbol` by the name at `span` (in the declaration `full`), with nothing
/// else known yet.
fn named(symbol: Symbol, kind: SymbolKind, name: &str, span: Span, full: Span) -> Definition {
    Definition {
        symbol,
        kind,
        name: name.to_owned(),
        span,
        full,
        docs: None,
        owner: None,
        declared: None,
        ty: None,
    }
}

fn item(kind: SymbolKind, symbol: ItemRef, item: &ast::Item) -> Option<Definition> {
    let name = item.kind.name()?;
    Some(Definition {
        docs: super::docs(&item.docs),
        ..named(Symbol::Item(symbol), kind, &name.name, name.span, item.span)
    })
}

fn declarations(cx: &Cx<'_, '_>, out: &mut Resolution) {
    for (i, decl) in cx.types.iter().enumerate() {
        let index = i as u32;
        let kind = match decl.def {
            TypeDecl::Struct(_) => SymbolKind::Struct,
            TypeDecl::Enum(_) => SymbolKind::Enum,
            TypeDecl::Alias(_) => SymbolKind::Alias,
        };
        if let Some(def) = item(kind, ItemRef::Type(index), decl.item) {
            out.define(def);
        }
        match decl.def {
            TypeDecl::Struct(s) => fields(cx, out, index, &s.name.name, None, &s.fields),
            TypeDecl::Enum(e) => {
                for (v, variant) in e.variants.iter().enumerate() {
                    let symbol = Symbol::Variant {
                        owner: index,
                        name: Box::from(&*variant.name.name),
                    };
                    let (name, span) = (&variant.name.name, variant.name.span);
                    out.define(Definition {
                        docs: super::docs(&variant.docs),
                        owner: Some(e.name.name.to_string()),
                        ..named(symbol, SymbolKind::Variant, name, span, variant.span)
                    });
                    if let Some(list) = &variant.fields {
                        fields(cx, out, index, &e.name.name, Some(v), list);
                    }
                }
            }
            TypeDecl::Alias(_) => {}
        }
    }
    for (i, decl) in cx.errors.iter().enumerate() {
        let index = i as u32;
        if let Some(def) = item(SymbolKind::Errors, ItemRef::Errors(index), decl.item) {
            out.define(def);
        }
        for code in &decl.def.codes {
            let symbol = Symbol::ErrorCode {
                set: index,
                name: Box::from(&*code.name.name),
            };
            let (name, span) = (&code.name.name, code.name.span);
            out.define(Definition {
                docs: super::docs(&code.docs),
                owner: Some(decl.def.name.name.to_string()),
                ..named(symbol, SymbolKind::ErrorCode, name, span, code.span)
            });
        }
    }
    let mut add = |kind, symbol, it| {
        if let Some(def) = item(kind, symbol, it) {
            out.define(def);
        }
    };
    for (i, decl) in cx.fns.iter().enumerate() {
        add(SymbolKind::Fn, ItemRef::Fn(i as u32), decl.item);
    }
    for (i, decl) in cx.checks.iter().enumerate() {
        add(SymbolKind::Check, ItemRef::Check(i as u32), decl.item);
    }
    for (i, decl) in cx.builders.iter().enumerate() {
        add(SymbolKind::Builder, ItemRef::Builder(i as u32), decl.item);
    }
    for (i, decl) in cx.streams.iter().enumerate() {
        add(SymbolKind::Stream, ItemRef::Stream(i as u32), decl.item);
    }
    for (i, decl) in cx.nodes.iter().enumerate() {
        let kind = if decl.def.kind == ast::NodeKind::Agent {
            SymbolKind::Agent
        } else {
            SymbolKind::Node
        };
        add(kind, ItemRef::Node(i as u32), decl.item);
    }
}

/// The fields of struct `owner` (or of its variant number `variant`), with the types sema
/// lowered them to.
fn fields(
    cx: &Cx<'_, '_>,
    out: &mut Resolution,
    owner: u32,
    owner_name: &str,
    variant: Option<usize>,
    list: &[ast::Field],
) {
    let lowered = match (cx.table.get(DefId(owner)).map(|d| &d.kind), variant) {
        (Some(DefKind::Struct { fields }), None) => Some(fields),
        (Some(DefKind::Enum { variants, .. }), Some(v)) => {
            variants.get(v).and_then(|v| v.fields.as_ref())
        }
        _ => None,
    };
    for field in list {
        let ty = lowered
            .and_then(|fields| fields.iter().find(|f| *f.name == *field.name.name))
            .map(|f| cx.type_info(&STy::of(&f.ty, &cx.table)));
        let symbol = Symbol::Field {
            owner,
            name: Box::from(&*field.name.name),
        };
        let (name, span) = (&field.name.name, field.name.span);
        out.define(Definition {
            docs: super::docs(&field.docs),
            owner: Some(owner_name.to_owned()),
            declared: Some(field.ty.clone()),
            ty,
            ..named(symbol, SymbolKind::Field, name, span, field.span())
        });
    }
}

/// `[bindings.NAME]` of `ael.toml`, where the loader found them.
fn bindings(cx: &Cx<'_, '_>, out: &mut Resolution) {
    let Some(project) = cx.input.project else {
        return;
    };
    for (name, span) in &project.binding_spans {
        let symbol = Symbol::Binding(name.as_str().into());
        out.define(named(symbol, SymbolKind::Binding, name, *span, *span));
    }
}
