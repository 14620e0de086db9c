//! A syntax-level index of definitions and references, for hover, navigation and rename.
//!
//! **This is a fallback** until sema exposes a resolution index with spans: it resolves by name
//! over the project's syntax trees, the way an author reads the code. Items (types, fns, checks,
//! builders, nodes, error sets, streams) are one namespace per project; fields belong to the
//! struct or enum that declares them; error codes and variants are found by name; parameters,
//! `let`s and closure parameters are local to their item. A field access `a.b.c` is resolved
//! precisely when the type of `a` is known from a parameter or a `let` with a type, and by
//! field name alone otherwise. `binding("x")` points into `ael.toml`, `file("p")` to the file,
//! and the expressions of that prompt template are walked in the naming node's scope.
//!
//! The index is rebuilt with each analysis (it is cheap next to parsing).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use crate::source::SourceMap;
use crate::span::{FileId, Span};
use crate::syntax::ast::{
    Block, Entry, Expr, ExprKind, Field, Item, ItemKind, LitKind, Module, NodeKind, Param, Pattern,
    PatternKind, Stmt, TypeArg, TypeExpr, TypeKind,
};

use super::analysis::Analysis;
use super::template;
use crate::sema::builtin_types;
use crate::syntax;

/// What a name denotes; two occurrences with matching keys are the same symbol.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// A top-level item by name.
    Item(String),
    /// A field; `owner` is the declaring struct or enum when known.
    Field {
        owner: Option<String>,
        name: String,
    },
    Variant(String),
    ErrorCode(String),
    /// A parameter, `let` or closure parameter: local to the item starting at `scope`.
    Local {
        file: FileId,
        scope: u32,
        name: String,
    },
    /// `[bindings.NAME]` of `ael.toml`.
    Binding(String),
    /// A file named by `file("…")`.
    File(PathBuf),
}

impl Key {
    /// Whether an occurrence keyed `self` refers to the symbol keyed `other`. A field of unknown
    /// owner matches every field of that name.
    pub fn matches(&self, other: &Key) -> bool {
        match (self, other) {
            (Key::Field { owner: a, name: x }, Key::Field { owner: b, name: y }) => {
                x == y && (a.is_none() || b.is_none() || a == b)
            }
            _ => self == other,
        }
    }

    /// The name as written in the source (what a rename replaces).
    pub fn name(&self) -> Option<&str> {
        match self {
            Key::Item(n) | Key::Variant(n) | Key::ErrorCode(n) | Key::Binding(n) => Some(n),
            Key::Field { name, .. } | Key::Local { name, .. } => Some(name),
            Key::File(_) => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    Struct,
    Enum,
    Alias,
    Stream,
    Errors,
    Fn,
    Check,
    Builder,
    Node,
    Agent,
    Field,
    Variant,
    ErrorCode,
    Param,
    Local,
    Binding,
}

impl SymbolKind {
    pub fn is_type(self) -> bool {
        matches!(
            self,
            SymbolKind::Struct
                | SymbolKind::Enum
                | SymbolKind::Alias
                | SymbolKind::Stream
                | SymbolKind::Errors
        )
    }
}

/// A declared symbol.
#[derive(Clone, Debug)]
pub struct Definition {
    pub key: Key,
    pub kind: SymbolKind,
    pub name: String,
    /// The name where it is declared.
    pub span: Span,
    /// The whole declaration.
    pub full: Span,
    pub docs: Option<String>,
    /// The declaration as source text (a signature, a field with its type, a struct).
    pub signature: String,
    /// The declared type, for fields, parameters and typed `let`s.
    pub ty: Option<TypeExpr>,
}

/// A name in the source and what it denotes.
#[derive(Clone, Debug)]
pub struct Occurrence {
    pub span: Span,
    pub key: Key,
    pub is_definition: bool,
}

/// Names in scope with their type names when known, innermost last.
type Scope = Vec<(String, Option<String>)>;

#[derive(Default)]
pub struct Index {
    pub definitions: Vec<Definition>,
    /// Every occurrence (definitions included), sorted by file and position.
    pub occurrences: Vec<Occurrence>,
    /// Field name → type name, per struct or enum.
    fields: HashMap<String, Vec<(String, Option<String>)>>,
    variants: HashSet<String>,
    error_codes: HashSet<String>,
    items: HashSet<String>,
    /// Per prompt file, the template's variables (name, type name) in scope from a byte offset
    /// on, in offset order: the node's parameters, then `{% for %}` variables as they open.
    prompt_scopes: HashMap<FileId, Vec<(u32, Scope)>>,
}

impl Index {
    pub fn build(analysis: &Analysis) -> Index {
        let mut index = Index::default();
        let sources = &analysis.compilation.sources;
        for parsed in &analysis.compilation.files {
            let text = sources.get(parsed.file).map_or("", |f| f.text.as_str());
            index.collect_definitions(parsed.file, text, &parsed.module);
        }
        index.collect_bindings(sources);
        let mut prompts = Vec::new();
        for parsed in &analysis.compilation.files {
            let mut walker = Walker {
                index: &mut index,
                analysis,
                file: parsed.file,
                scope: 0,
                env: Vec::new(),
                out: Vec::new(),
                prompts: Vec::new(),
            };
            walker.module(&parsed.module);
            let found = std::mem::take(&mut walker.out);
            prompts.append(&mut walker.prompts);
            index.occurrences.extend(found);
        }
        // A prompt shared by several nodes is walked once, in the first node's scope.
        let mut walked = HashSet::new();
        for prompt in prompts {
            if walked.insert(prompt.path.clone()) {
                index.walk_prompt(analysis, prompt);
            }
        }
        let definitions: Vec<Occurrence> = index
            .definitions
            .iter()
            .filter(|d| !matches!(d.kind, SymbolKind::Binding))
            .map(|d| Occurrence {
                span: d.span,
                key: d.key.clone(),
                is_definition: true,
            })
            .collect();
        index.occurrences.extend(definitions);
        let bindings: Vec<Occurrence> = index
            .definitions
            .iter()
            .filter(|d| matches!(d.kind, SymbolKind::Binding))
            .map(|d| Occurrence {
                span: d.span,
                key: d.key.clone(),
                is_definition: true,
            })
            .collect();
        index.occurrences.extend(bindings);
        index
            .occurrences
            .sort_by_key(|o| (o.span.file, o.span.start, o.span.end));
        index
    }

    /// The innermost occurrence at byte `offset` of `file` (touching its end counts, so a cursor
    /// just after a name finds it).
    pub fn at(&self, file: FileId, offset: u32) -> Option<&Occurrence> {
        self.occurrences
            .iter()
            .filter(|o| o.span.file == file && o.span.start <= offset && offset <= o.span.end)
            .min_by_key(|o| o.span.len())
    }

    pub fn definitions_of<'a>(&'a self, key: &'a Key) -> impl Iterator<Item = &'a Definition> {
        self.definitions.iter().filter(move |d| key.matches(&d.key))
    }

    pub fn references_of<'a>(&'a self, key: &'a Key) -> impl Iterator<Item = &'a Occurrence> {
        self.occurrences.iter().filter(move |o| key.matches(&o.key))
    }

    /// The fields of a struct or enum with their type names.
    /// The type name of the template variable `name` at byte `offset` of the prompt `file`:
    /// `Some(None)` for a variable of unknown type, `None` when `file` is no known prompt or
    /// the name is not in scope there.
    pub fn prompt_variable(&self, file: FileId, offset: u32, name: &str) -> Option<Option<String>> {
        let scopes = self.prompt_scopes.get(&file)?;
        let (_, env) = scopes.iter().rev().find(|(at, _)| *at <= offset)?;
        env.iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, ty)| ty.clone())
    }

    pub fn fields_of(&self, owner: &str) -> &[(String, Option<String>)] {
        self.fields.get(owner).map_or(&[], Vec::as_slice)
    }

    pub fn definition(&self, key: &Key) -> Option<&Definition> {
        self.definitions.iter().find(|d| key.matches(&d.key))
    }

    /// References inside a prompt template, resolved in the scope of the node that names it:
    /// its parameters are the template's variables.
    fn walk_prompt(&mut self, analysis: &Analysis, prompt: PromptUse) {
        let Some(file) = analysis.file_id(&prompt.path) else {
            return;
        };
        if analysis.parsed(file).is_some() {
            return;
        }
        let Some(text) = analysis
            .compilation
            .sources
            .get(file)
            .map(|f| f.text.clone())
        else {
            return;
        };
        let mut walker = Walker {
            index: self,
            analysis,
            file: prompt.file,
            scope: prompt.scope,
            env: prompt.env,
            out: Vec::new(),
            prompts: Vec::new(),
        };
        let mut loops: Vec<usize> = Vec::new();
        let mut scopes = vec![(0, walker.env.clone())];
        for tag in template::tags(&text) {
            let tag_at = match tag {
                template::Tag::Expr(_, at)
                | template::Tag::For(_, _, at)
                | template::Tag::End(at) => at,
            };
            match tag {
                template::Tag::Expr(expr, at) => {
                    let (expr, errors) = syntax::parse_expr(file, expr, at);
                    if errors.is_empty() {
                        walker.expr(&expr);
                    }
                }
                template::Tag::For(name, list, at) => {
                    let (expr, errors) = syntax::parse_expr(file, list, at);
                    let element = if errors.is_empty() {
                        walker.expr(&expr);
                        walker.type_of(&expr)
                    } else {
                        None
                    };
                    loops.push(walker.env.len());
                    walker.env.push((name.to_owned(), element));
                }
                template::Tag::End(_) => {
                    if let Some(depth) = loops.pop() {
                        walker.env.truncate(depth);
                    }
                }
            }
            scopes.push((tag_at, walker.env.clone()));
        }
        let found = std::mem::take(&mut walker.out);
        self.occurrences.extend(found);
        self.prompt_scopes.insert(file, scopes);
    }

    fn define(&mut self, def: Definition) {
        self.definitions.push(def);
    }

    fn collect_definitions(&mut self, file: FileId, text: &str, module: &Module) {
        for item in &module.items {
            let Some(name) = item.kind.name() else {
                continue;
            };
            let kind = match &item.kind {
                ItemKind::TypeAlias(_) => SymbolKind::Alias,
                ItemKind::Struct(_) => SymbolKind::Struct,
                ItemKind::Enum(_) => SymbolKind::Enum,
                ItemKind::Errors(_) => SymbolKind::Errors,
                ItemKind::Fn(_) => SymbolKind::Fn,
                ItemKind::Check(_) => SymbolKind::Check,
                ItemKind::Builder(_) => SymbolKind::Builder,
                ItemKind::Stream(_) => SymbolKind::Stream,
                ItemKind::Node(n) if n.kind == NodeKind::Agent => SymbolKind::Agent,
                ItemKind::Node(_) => SymbolKind::Node,
                ItemKind::Use(_) | ItemKind::Error => continue,
            };
            self.items.insert(name.name.to_string());
            self.define(Definition {
                key: Key::Item(name.name.to_string()),
                kind,
                name: name.name.to_string(),
                span: name.span,
                full: item.span,
                docs: item.docs.as_ref().map(|d| d.text.clone()),
                signature: signature(text, item),
                ty: None,
            });
            match &item.kind {
                ItemKind::Struct(s) => self.define_fields(text, &s.name.name, &s.fields),
                ItemKind::Enum(e) => {
                    for variant in &e.variants {
                        self.variants.insert(variant.name.name.to_string());
                        self.define(Definition {
                            key: Key::Variant(variant.name.name.to_string()),
                            kind: SymbolKind::Variant,
                            name: variant.name.name.to_string(),
                            span: variant.name.span,
                            full: variant.span,
                            docs: variant.docs.as_ref().map(|d| d.text.clone()),
                            signature: format!("{}::{}", e.name.name, variant.name.name),
                            ty: None,
                        });
                        if let Some(fields) = &variant.fields {
                            self.define_fields(text, &e.name.name, fields);
                        }
                    }
                }
                ItemKind::Errors(e) => {
                    for code in &e.codes {
                        self.error_codes.insert(code.name.name.to_string());
                        self.define(Definition {
                            key: Key::ErrorCode(code.name.name.to_string()),
                            kind: SymbolKind::ErrorCode,
                            name: code.name.name.to_string(),
                            span: code.name.span,
                            full: code.span,
                            docs: code.docs.as_ref().map(|d| d.text.clone()),
                            signature: format!("errors {} {{ {} }}", e.name.name, code.name.name),
                            ty: None,
                        });
                    }
                }
                _ => {}
            }
        }
        let _ = file;
    }

    fn define_fields(&mut self, text: &str, owner: &str, fields: &[Field]) {
        for field in fields {
            self.fields
                .entry(owner.to_owned())
                .or_default()
                .push((field.name.name.to_string(), type_name(&field.ty)));
            self.define(Definition {
                key: Key::Field {
                    owner: Some(owner.to_owned()),
                    name: field.name.name.to_string(),
                },
                kind: SymbolKind::Field,
                name: field.name.name.to_string(),
                span: field.name.span,
                full: field.span,
                docs: field.docs.as_ref().map(|d| d.text.clone()),
                signature: format!("{owner}.{}", slice(text, field.span)),
                ty: Some(field.ty.clone()),
            });
        }
    }

    /// `[bindings.NAME]` tables (and `NAME = …` keys inside `[bindings]`) of `ael.toml`.
    fn collect_bindings(&mut self, sources: &SourceMap) {
        let Some((file, manifest)) = sources.files().find(|(_, f)| f.name == "ael.toml") else {
            return;
        };
        let text = manifest.text.as_str();
        let mut in_bindings_table = false;
        let mut offset = 0usize;
        let mut current: Option<usize> = None;
        for line in text.split_inclusive('\n') {
            let trimmed = line.trim();
            let lead = line.len() - line.trim_start().len();
            if trimmed.starts_with('[') {
                in_bindings_table = trimmed == "[bindings]";
                current = None;
                if let Some(rest) = trimmed.strip_prefix("[bindings.") {
                    let name = rest.trim_end_matches(']').trim().trim_matches('"');
                    let at = offset + lead + "[bindings.".len();
                    let span = Span::new(file, at..at + name.len());
                    current = Some(self.definitions.len());
                    self.define(binding_definition(name, span, trimmed));
                }
            } else if in_bindings_table {
                if let Some((name, _)) = trimmed.split_once('=') {
                    let name = name.trim();
                    let at = offset + lead;
                    let span = Span::new(file, at..at + name.len());
                    self.define(binding_definition(name, span, trimmed));
                }
            } else if let Some(def) = current.and_then(|i| self.definitions.get_mut(i)) {
                if !trimmed.is_empty() && !trimmed.starts_with('#') {
                    def.signature.push('\n');
                    def.signature.push_str(trimmed);
                }
            }
            offset += line.len();
        }
    }
}

fn binding_definition(name: &str, span: Span, line: &str) -> Definition {
    Definition {
        key: Key::Binding(name.to_owned()),
        kind: SymbolKind::Binding,
        name: name.to_owned(),
        span,
        full: span,
        docs: None,
        signature: line.to_owned(),
        ty: None,
    }
}

fn slice(text: &str, span: Span) -> &str {
    text.get(span.range()).unwrap_or("")
}

/// The declaration of an item as written: up to its body for fns, checks and nodes, the whole
/// item (at most 40 lines) for types.
fn signature(text: &str, item: &Item) -> String {
    let full = slice(text, item.span);
    let head = match &item.kind {
        ItemKind::Fn(_) | ItemKind::Check(_) | ItemKind::Node(_) | ItemKind::Builder(_) => full
            .split_once('{')
            .map_or(full, |(head, _)| head)
            .trim_end(),
        _ => full,
    };
    let mut lines: Vec<&str> = head.lines().take(41).collect();
    if lines.len() > 40 {
        lines.truncate(40);
        lines.push("    …");
    }
    lines.join("\n")
}

/// The name of the type a value of `ty` has for field access: the item it names, seen through
/// `Option`, `List` and `Set` (so `output.findings.first()` and closures over lists resolve).
pub fn type_name(ty: &TypeExpr) -> Option<String> {
    let TypeKind::Named { path, args } = &ty.kind else {
        return None;
    };
    let last = path.last()?;
    match last.name.as_str() {
        "Option" | "List" | "Set" => args.iter().find_map(|a| match a {
            TypeArg::Type(t) => type_name(t),
            _ => None,
        }),
        name if builtin_types::is_builtin(name) => None,
        name => Some(name.to_owned()),
    }
}

/// Walks one module's tree and records references.
struct Walker<'a> {
    index: &'a mut Index,
    analysis: &'a Analysis,
    file: FileId,
    /// Start of the enclosing item: locals are keyed by it.
    scope: u32,
    /// Locals in scope, innermost last, with their type names when known.
    env: Vec<(String, Option<String>)>,
    out: Vec<Occurrence>,
    /// Prompt files named by `file("…")`, with the scope that names them.
    prompts: Vec<PromptUse>,
}

/// A prompt file and the scope of the node naming it (its parameters are the template's).
struct PromptUse {
    path: PathBuf,
    file: FileId,
    scope: u32,
    env: Vec<(String, Option<String>)>,
}

impl Walker<'_> {
    fn push(&mut self, span: Span, key: Key, is_definition: bool) {
        self.out.push(Occurrence {
            span,
            key,
            is_definition,
        });
    }

    fn local_key(&self, name: &str) -> Key {
        Key::Local {
            file: self.file,
            scope: self.scope,
            name: name.to_owned(),
        }
    }

    fn define_local(
        &mut self,
        name: &crate::syntax::ast::Ident,
        ty: Option<&TypeExpr>,
        kind: SymbolKind,
        full: Span,
    ) {
        let key = self.local_key(&name.name);
        let text = self
            .analysis
            .compilation
            .sources
            .get(self.file)
            .map_or("", |f| f.text.as_str());
        self.index.definitions.push(Definition {
            key: key.clone(),
            kind,
            name: name.name.to_string(),
            span: name.span,
            full,
            docs: None,
            signature: slice(text, full).to_owned(),
            ty: ty.cloned(),
        });
        self.push(name.span, key, true);
        self.env
            .push((name.name.to_string(), ty.and_then(type_name)));
    }

    fn module(&mut self, module: &Module) {
        for item in &module.items {
            self.scope = item.span.start;
            self.env.clear();
            self.item(item);
        }
    }

    fn params(&mut self, params: &[Param]) {
        for param in params {
            self.ty(&param.ty);
            self.define_local(&param.name, Some(&param.ty), SymbolKind::Param, param.span);
        }
    }

    fn item(&mut self, item: &Item) {
        for attr in &item.attrs {
            for arg in &attr.args {
                self.expr(arg);
            }
        }
        match &item.kind {
            ItemKind::Use(u) => {
                for name in &u.names {
                    self.push(name.name.span, Key::Item(name.name.name.to_string()), false);
                }
            }
            ItemKind::TypeAlias(a) => self.ty(&a.ty),
            ItemKind::Struct(s) => self.fields(&s.fields),
            ItemKind::Enum(e) => {
                for variant in &e.variants {
                    if let Some(fields) = &variant.fields {
                        self.fields(fields);
                    }
                }
            }
            ItemKind::Errors(_) | ItemKind::Error => {}
            ItemKind::Fn(f) => {
                self.params(&f.params);
                self.ty(&f.ret);
                if let Some(body) = &f.body {
                    self.expr(body);
                }
            }
            ItemKind::Check(c) => {
                self.params(&c.params);
                if let Some(fails) = c.fails.as_ref().and_then(|p| p.last()) {
                    self.push(fails.span, Key::Item(fails.name.to_string()), false);
                }
                for require in c.body.iter().flatten() {
                    self.expr(&require.cond);
                    self.push(
                        require.code.span,
                        Key::ErrorCode(require.code.name.to_string()),
                        false,
                    );
                }
            }
            ItemKind::Builder(b) => {
                self.params(&b.params);
                self.ty(&b.ret);
                for part in &b.parts {
                    self.expr(part);
                }
            }
            ItemKind::Stream(s) => {
                self.ty(&s.of);
                for entry in &s.entries {
                    self.entry(entry);
                }
            }
            ItemKind::Node(n) => {
                self.params(&n.params);
                self.ty(&n.ret);
                if let Some(fails) = n.fails.as_ref().and_then(|p| p.last()) {
                    self.push(fails.span, Key::Item(fails.name.to_string()), false);
                }
                for block in &n.blocks {
                    self.block(block);
                }
                for stmt in &n.body {
                    self.stmt(stmt);
                }
            }
        }
    }

    fn fields(&mut self, fields: &[Field]) {
        for field in fields {
            self.ty(&field.ty);
            if let Some(default) = &field.default {
                self.expr(default);
            }
        }
    }

    fn block(&mut self, block: &Block) {
        for entry in &block.entries {
            self.entry(entry);
        }
    }

    fn entry(&mut self, entry: &Entry) {
        for arg in &entry.args {
            self.expr(&arg.value);
        }
    }

    fn ty(&mut self, ty: &TypeExpr) {
        if let TypeKind::Named { path, args } = &ty.kind {
            if let Some(last) = path.last() {
                if !builtin_types::is_builtin(&last.name) {
                    self.push(last.span, Key::Item(last.name.to_string()), false);
                }
            }
            for arg in args {
                if let TypeArg::Type(inner) = arg {
                    self.ty(inner);
                }
            }
        }
        for attr in &ty.attrs {
            for arg in &attr.args {
                self.expr(arg);
            }
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Let {
                name,
                ty,
                value,
                span,
            } => {
                if let Some(ty) = ty {
                    self.ty(ty);
                }
                self.expr(value);
                let inferred = ty.clone();
                self.define_local(name, inferred.as_ref(), SymbolKind::Local, *span);
                if ty.is_none() {
                    // An untyped `let` takes the type of its value when that is known.
                    let known = self.type_of(value);
                    if let Some(last) = self.env.last_mut() {
                        last.1 = known;
                    }
                }
            }
            Stmt::Return { value, .. } => self.expr(value),
        }
    }

    /// The item name of an expression's type, when the walker can tell.
    fn type_of(&self, expr: &Expr) -> Option<String> {
        match &expr.kind {
            ExprKind::Path(path) if path.segments.len() == 1 => {
                let name = &path.segments.first()?.name;
                self.env
                    .iter()
                    .rev()
                    .find(|(n, _)| n == name)
                    .and_then(|(_, ty)| ty.clone())
            }
            ExprKind::Field { base, name } => {
                let owner = self.type_of(base)?;
                self.index
                    .fields_of(&owner)
                    .iter()
                    .find(|(field, _)| *field == name.name)
                    .and_then(|(_, ty)| ty.clone())
            }
            ExprKind::MethodCall {
                receiver, method, ..
            } if matches!(
                method.name.as_str(),
                "first" | "last" | "filter" | "sort_by" | "unwrap_or"
            ) =>
            {
                self.type_of(receiver)
            }
            ExprKind::StructLit { path, .. } => path.last().map(|l| l.name.to_string()),
            ExprKind::Paren(inner) => self.type_of(inner),
            ExprKind::Some(inner) => self.type_of(inner),
            _ => None,
        }
    }

    fn path_expr(&mut self, path: &crate::syntax::ast::Path) {
        let Some(last) = path.last() else {
            return;
        };
        let name = last.name.as_str();
        let is_local = path.segments.len() == 1 && self.env.iter().any(|(n, _)| n == name);
        let key = if is_local {
            self.local_key(name)
        } else if self.index.items.contains(name) {
            Key::Item(name.to_owned())
        } else if self.index.variants.contains(name) {
            Key::Variant(name.to_owned())
        } else if self.index.error_codes.contains(name) {
            Key::ErrorCode(name.to_owned())
        } else {
            return;
        };
        self.push(last.span, key, false);
    }

    fn expr(&mut self, expr: &Expr) {
        match &expr.kind {
            ExprKind::Lit(_) | ExprKind::None | ExprKind::Error => {}
            ExprKind::Some(inner) | ExprKind::Paren(inner) => self.expr(inner),
            ExprKind::Path(path) => self.path_expr(path),
            ExprKind::Field { base, name } => {
                self.expr(base);
                let owner = self.type_of(base);
                self.push(
                    name.span,
                    Key::Field {
                        owner,
                        name: name.name.to_string(),
                    },
                    false,
                );
            }
            ExprKind::MethodCall { receiver, args, .. } => {
                self.expr(receiver);
                let element = self.type_of(receiver);
                for arg in args {
                    if let ExprKind::Closure { params, body } = &arg.kind {
                        let depth = self.env.len();
                        for param in params {
                            let key = self.local_key(&param.name);
                            self.index.definitions.push(Definition {
                                key: key.clone(),
                                kind: SymbolKind::Local,
                                name: param.name.to_string(),
                                span: param.span,
                                full: param.span,
                                docs: None,
                                signature: match &element {
                                    Some(ty) => format!("{}: {ty}", param.name),
                                    None => param.name.to_string(),
                                },
                                ty: None,
                            });
                            self.push(param.span, key, true);
                            self.env.push((param.name.to_string(), element.clone()));
                        }
                        self.expr(body);
                        self.env.truncate(depth);
                    } else {
                        self.expr(arg);
                    }
                }
            }
            ExprKind::Call { callee, args } => self.call(callee, args),
            ExprKind::StructLit { path, fields, base } => {
                let owner = path.last().map(|l| l.name.to_string());
                if let Some(last) = path.last() {
                    self.push(last.span, Key::Item(last.name.to_string()), false);
                }
                for field in fields {
                    self.push(
                        field.name.span,
                        Key::Field {
                            owner: owner.clone(),
                            name: field.name.name.to_string(),
                        },
                        false,
                    );
                    if let Some(value) = &field.value {
                        self.expr(value);
                    }
                }
                if let Some(base) = base {
                    self.expr(base);
                }
            }
            ExprKind::List(items) => {
                for item in items {
                    self.expr(item);
                }
            }
            ExprKind::Block { stmts, value } => {
                let depth = self.env.len();
                for stmt in stmts {
                    self.stmt(stmt);
                }
                self.expr(value);
                self.env.truncate(depth);
            }
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                self.expr(cond);
                self.expr(then_branch);
                self.expr(else_branch);
            }
            ExprKind::Match { scrutinee, arms } => {
                self.expr(scrutinee);
                for arm in arms {
                    let depth = self.env.len();
                    self.pattern(&arm.pattern);
                    self.expr(&arm.body);
                    self.env.truncate(depth);
                }
            }
            ExprKind::Unary { operand, .. } => self.expr(operand),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            ExprKind::Closure { params, body } => {
                let depth = self.env.len();
                for param in params {
                    self.env.push((param.name.to_string(), None));
                }
                self.expr(body);
                self.env.truncate(depth);
            }
        }
    }

    fn call(&mut self, callee: &crate::syntax::ast::Path, args: &[Expr]) {
        let name = callee.last().map_or("", |l| l.name.as_str());
        let string_arg = || match args.first().map(|a| &a.kind) {
            Some(ExprKind::Lit(lit)) => match &lit.kind {
                LitKind::Str { value, .. } => Some((value.clone(), lit.span)),
                _ => None,
            },
            _ => None,
        };
        match name {
            "binding" => {
                if let Some((value, span)) = string_arg() {
                    self.push(span, Key::Binding(value), false);
                }
                return;
            }
            "file" => {
                if let Some((value, span)) = string_arg() {
                    let path = self.analysis.dir.join(value);
                    self.prompts.push(PromptUse {
                        path: path.clone(),
                        file: self.file,
                        scope: self.scope,
                        env: self.env.clone(),
                    });
                    self.push(span, Key::File(path), false);
                }
                return;
            }
            "fail" => {
                for arg in args {
                    if let ExprKind::Path(path) = &arg.kind {
                        if let Some(last) = path.last() {
                            self.push(last.span, Key::ErrorCode(last.name.to_string()), false);
                        }
                    }
                }
                return;
            }
            _ => {}
        }
        self.path_expr(callee);
        for arg in args {
            self.expr(arg);
        }
    }

    fn pattern(&mut self, pattern: &Pattern) {
        match &pattern.kind {
            PatternKind::Wildcard | PatternKind::None | PatternKind::Lit(_) => {}
            PatternKind::Some(inner) => self.pattern(inner),
            PatternKind::Name(name) => {
                if self.index.variants.contains(name.name.as_str()) {
                    self.push(name.span, Key::Variant(name.name.to_string()), false);
                } else {
                    let key = self.local_key(&name.name);
                    self.push(name.span, key, true);
                    self.env.push((name.name.to_string(), None));
                }
            }
            PatternKind::Variant { name, fields, .. } => {
                self.push(name.span, Key::Variant(name.name.to_string()), false);
                for field in fields {
                    self.push(
                        field.name.span,
                        Key::Field {
                            owner: None,
                            name: field.name.name.to_string(),
                        },
                        false,
                    );
                    match &field.pattern {
                        Some(p) => self.pattern(p),
                        None => self.env.push((field.name.name.to_string(), None)),
                    }
                }
            }
            PatternKind::Or(alternatives) => {
                for alternative in alternatives {
                    self.pattern(alternative);
                }
            }
        }
    }
}
