//! Phase 1: every module's items, `use` resolution, duplicates and name lookup.
//!
//! Every top-level item can be imported (there is no `pub`); import cycles between modules are
//! allowed because imports only name items, they never run anything.

use super::Map;

use super::error::NameError;
use super::resolution::Symbol;
use super::{Cx, Decl, ItemRef, ModuleScope, TypeDecl};
use crate::diagnostics::suggest::did_you_mean;
use crate::diagnostics::Diagnostic;
use crate::span::Span;
use crate::syntax::ast;

pub(crate) fn collect<'a>(cx: &mut Cx<'a, '_>) {
    let input = cx.input;
    for (index, module) in input.modules.iter().enumerate() {
        cx.module_index.insert(module.path.to_owned(), index);
        cx.modules.push(ModuleScope {
            path: module.path.to_owned(),
            names: Map::default(),
            imports: Vec::new(),
            unresolved: Default::default(),
        });
    }
    reserve_decls(cx);
    for (index, module) in input.modules.iter().enumerate() {
        let mut first_span: Map<&str, Span> = Map::default();
        for item in &module.ast.items {
            let Some(name) = item.kind.name() else {
                continue;
            };
            let reference = match &item.kind {
                ast::ItemKind::Struct(d) => push(&mut cx.types, index, item, TypeDecl::Struct(d)),
                ast::ItemKind::Enum(d) => push(&mut cx.types, index, item, TypeDecl::Enum(d)),
                ast::ItemKind::TypeAlias(d) => push(&mut cx.types, index, item, TypeDecl::Alias(d)),
                ast::ItemKind::Errors(d) => {
                    ItemRef::Errors(push_ref(&mut cx.errors, index, item, d))
                }
                ast::ItemKind::Fn(d) => ItemRef::Fn(push_ref(&mut cx.fns, index, item, d)),
                ast::ItemKind::Check(d) => ItemRef::Check(push_ref(&mut cx.checks, index, item, d)),
                ast::ItemKind::Builder(d) => {
                    ItemRef::Builder(push_ref(&mut cx.builders, index, item, d))
                }
                ast::ItemKind::Stream(d) => {
                    ItemRef::Stream(push_ref(&mut cx.streams, index, item, d))
                }
                ast::ItemKind::Node(d) => ItemRef::Node(push_ref(&mut cx.nodes, index, item, d)),
                ast::ItemKind::Use(_) | ast::ItemKind::Error => continue,
            };
            if let Some(first) = first_span.get(name.name.as_str()) {
                cx.diags
                    .push(duplicate(&name.name, name.span, *first, "defined"));
                continue;
            }
            first_span.insert(&name.name, name.span);
            if let Some(scope) = cx.modules.get_mut(index) {
                scope.names.insert(&name.name, (reference, None));
            }
        }
    }
    for (index, module) in input.modules.iter().enumerate() {
        for item in &module.ast.items {
            if let ast::ItemKind::Use(use_item) = &item.kind {
                resolve_use(cx, index, use_item);
            }
        }
    }
}

/// Sizes the declaration lists once, from a count of the items of each kind: grown by
/// doubling, a list of a large project held up to twice its length (issue 23: the check's
/// peak holds every one of them).
fn reserve_decls(cx: &mut Cx<'_, '_>) {
    let mut counts = [0usize; 7];
    for module in &cx.input.modules {
        for item in &module.ast.items {
            let slot = match &item.kind {
                ast::ItemKind::Struct(_) | ast::ItemKind::Enum(_) | ast::ItemKind::TypeAlias(_) => {
                    0
                }
                ast::ItemKind::Errors(_) => 1,
                ast::ItemKind::Fn(_) => 2,
                ast::ItemKind::Check(_) => 3,
                ast::ItemKind::Builder(_) => 4,
                ast::ItemKind::Stream(_) => 5,
                ast::ItemKind::Node(_) => 6,
                ast::ItemKind::Use(_) | ast::ItemKind::Error => continue,
            };
            counts[slot] += 1;
        }
    }
    let [types, errors, fns, checks, builders, streams, nodes] = counts;
    cx.types.reserve_exact(types);
    cx.errors.reserve_exact(errors);
    cx.fns.reserve_exact(fns);
    cx.checks.reserve_exact(checks);
    cx.builders.reserve_exact(builders);
    cx.streams.reserve_exact(streams);
    cx.nodes.reserve_exact(nodes);
}

fn push<'a>(
    list: &mut Vec<Decl<'a, TypeDecl<'a>>>,
    module: usize,
    item: &'a ast::Item,
    def: TypeDecl<'a>,
) -> ItemRef {
    list.push(Decl { module, item, def });
    ItemRef::Type(list.len() as u32 - 1)
}

fn push_ref<'a, T>(
    list: &mut Vec<Decl<'a, &'a T>>,
    module: usize,
    item: &'a ast::Item,
    def: &'a T,
) -> u32 {
    list.push(Decl { module, item, def });
    list.len() as u32 - 1
}

fn duplicate(name: &str, span: Span, first: Span, verb: &'static str) -> Diagnostic {
    NameError::Duplicate {
        span,
        first,
        name: name.to_owned(),
        verb,
    }
    .into()
}

fn resolve_use<'a>(cx: &mut Cx<'a, '_>, here: usize, use_item: &'a ast::UseItem) {
    let module_path = use_item.module.to_text();
    let Some(&target) = cx.module_index.get(&module_path) else {
        let known: Vec<&str> = cx.modules.iter().map(|m| m.path.as_str()).collect();
        let suggestion = did_you_mean(&module_path, known.iter().copied()).map(str::to_owned);
        cx.report(NameError::UnknownModule {
            span: use_item.module.span(),
            module: module_path.clone(),
            suggestion,
        });
        if let Some(scope) = cx.modules.get_mut(here) {
            for name in &use_item.names {
                let local = name.alias.as_ref().unwrap_or(&name.name);
                scope.unresolved.insert(local.name.to_string());
            }
        }
        return;
    };
    for name in &use_item.names {
        let found = cx
            .modules
            .get(target)
            .and_then(|m| m.own(name.name.name.as_str()));
        let Some(reference) = found else {
            let mut suggestion = None;
            if let Some(m) = cx.modules.get(target) {
                let mut known: Vec<&str> = m.own_names().collect();
                known.sort_unstable();
                suggestion =
                    did_you_mean(&name.name.name, known.iter().copied()).map(str::to_owned);
            }
            cx.report(NameError::NotInModule {
                span: name.name.span,
                module: module_path.clone(),
                name: name.name.name.to_string(),
                suggestion,
            });
            let local = name.alias.as_ref().unwrap_or(&name.name);
            if let Some(scope) = cx.modules.get_mut(here) {
                scope.unresolved.insert(local.name.to_string());
            }
            continue;
        };
        let local = name.alias.as_ref().unwrap_or(&name.name);
        cx.refer(name.name.span, || Symbol::Item(reference));
        cx.refer(local.span, || Symbol::Item(reference));
        let Some(scope) = cx.modules.get_mut(here) else {
            continue;
        };
        if let Some((existing, _)) = scope.names.get(local.name.as_str()) {
            if *existing != reference {
                cx.diags.push(
                    NameError::NameTaken {
                        span: local.span,
                        local: local.name.to_string(),
                        name: name.name.name.to_string(),
                    }
                    .into(),
                );
            } else {
                // The same item twice: harmless, but the second import is unused.
                scope.imports.push(super::Import {
                    span: name.span,
                    name: &local.name,
                    used: false,
                });
            }
            continue;
        }
        scope.imports.push(super::Import {
            span: name.span,
            name: &local.name,
            used: false,
        });
        let import = scope.imports.len() as u32 - 1;
        scope.names.insert(&local.name, (reference, Some(import)));
    }
}

/// Unused imports are warnings (spec §1).
pub(crate) fn report_unused_imports(cx: &mut Cx<'_, '_>) {
    let mut found = Vec::new();
    for module in &cx.modules {
        for import in &module.imports {
            if !import.used {
                found.push(Diagnostic::from(NameError::UnusedImport {
                    span: import.span,
                    name: import.name.to_owned(),
                }));
            }
        }
    }
    cx.diags.extend(found);
}

impl Cx<'_, '_> {
    /// Looks `path` up from `module`: a bare name in the module's scope, or `a::b::name` among
    /// the own items of module `a::b`. Marks the import used, and records what the name
    /// denotes.
    pub(crate) fn lookup(&mut self, module: usize, path: &ast::Path) -> Option<ItemRef> {
        let found = self.find(module, path)?;
        if let Some(last) = path.segments.last() {
            self.refer(last.span, || Symbol::Item(found));
        }
        Some(found)
    }

    fn find(&mut self, module: usize, path: &ast::Path) -> Option<ItemRef> {
        let (last, prefix) = path.segments.split_last()?;
        if prefix.is_empty() {
            let scope = self.modules.get_mut(module)?;
            let (reference, import) = *scope.names.get(last.name.as_str())?;
            if let Some(import) = import.and_then(|i| scope.imports.get_mut(i as usize)) {
                import.used = true;
            }
            return Some(reference);
        }
        let names: Vec<&str> = prefix.iter().map(|s| s.name.as_str()).collect();
        let target = *self.module_index.get(&names.join("::"))?;
        self.modules.get(target)?.own(last.name.as_str())
    }

    /// Names in scope of `module` that `accept` keeps, sorted, for "did you mean".
    pub(crate) fn names_in_scope(
        &self,
        module: usize,
        accept: impl Fn(ItemRef) -> bool,
    ) -> Vec<String> {
        let mut names: Vec<String> = self
            .modules
            .get(module)
            .map(|m| {
                m.names
                    .iter()
                    .filter(|(_, (r, _))| accept(*r))
                    .map(|(n, _)| (*n).to_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort_unstable();
        names
    }

    /// Reports that `path` names nothing of the wanted kind, with a suggestion.
    pub(crate) fn unknown(
        &mut self,
        code: &'static str,
        module: usize,
        path: &ast::Path,
        what: &str,
        accept: impl Fn(ItemRef) -> bool,
        extra: &[&str],
    ) {
        let text = path.to_text();
        // A name whose `use` failed was reported at the `use`.
        if path.segments.len() == 1
            && self
                .modules
                .get(module)
                .is_some_and(|m| m.unresolved.contains(&text))
        {
            return;
        }
        let mut candidates = self.names_in_scope(module, accept);
        candidates.extend(extra.iter().map(|s| (*s).to_owned()));
        let name = path.last().map_or(text.as_str(), |l| l.name.as_str());
        let suggestion = did_you_mean(name, candidates.iter().map(String::as_str));
        self.report(NameError::Unknown {
            code,
            span: path.span(),
            last: path.last().map_or(path.span(), |l| l.span),
            text: text.clone(),
            name: name.to_owned(),
            what: what.to_owned(),
            single: path.segments.len() == 1,
            suggestion: suggestion.map(str::to_owned),
        });
    }
}
