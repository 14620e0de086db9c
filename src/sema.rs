//! Semantic analysis: names, modules, types, bounds and checks; turns parsed modules into the
//! typed [`ir::Program`].
//!
//! The layer is pure: it sees the parsed modules, the project's configuration and a read-only
//! view of the project's files ([`ProjectFiles`]), never the disk. It never fails and never
//! stops at the first error: every rule of spec §1, §3, §5, §6 and §8 that can be checked before
//! running is checked, and a [`ir::Program`] is produced only when no error was found.
//!
//! Phases, in order (each in its own file):
//! 1. [`scope`]: collect the items of every module, resolve `use`, report duplicates;
//! 2. [`types`]: lower every type into the [`TypeTable`] with its bounds; [`depth`]: recursion
//!    only through containers, nesting depth;
//! 3. [`items`]: `errors`, `fn`s, `check`s, builders and streams; [`expr`] types and lowers
//!    expressions; the `fn` call graph must be acyclic;
//! 4. [`node`]: nodes and agents, their blocks, and [`template`]: their prompt templates.
//!
//! Asked to ([`CheckInput::record`], the language server does), the phases also write down what
//! each name they resolve denotes: the [`resolution::Resolution`] beside the program, produced
//! with errors too ([`record`] holds the recording helpers).

pub mod blocks;
mod bodies;
pub mod builtin_types;
mod consts;
mod depth;
mod error;
mod expr;
mod items;
pub mod methods;
mod node;
pub mod pattern;
mod pattern_check;
mod record;
pub mod resolution;
mod scope;
mod sty;
mod template;
mod types;

use std::collections::{HashMap, HashSet};

use aelc_runtime::ty::TypeTable;

use crate::diagnostics::{self, Diagnostic};
use crate::ir;
use crate::source::SourceMap;
use crate::span::FileId;
use crate::syntax::ast;

/// The checker's hash maps and sets: foldhash rather than std's SipHash, several times faster
/// on the short names and numbers sema looks up on every use (SipHash was 5% of `aelc check`'s
/// time). A fixed seed, as nothing is emitted in hash order (std's seed was random anyway) and
/// a compiler's input does not attack its own tables.
pub(crate) type Map<K, V> = HashMap<K, V, foldhash::fast::FixedState>;
pub(crate) type Set<K> = HashSet<K, foldhash::fast::FixedState>;

/// One parsed module of the project.
#[derive(Clone, Copy, Debug)]
pub struct SourceModule<'a> {
    /// `nodes::review`, `std::text`.
    pub path: &'a str,
    pub file: FileId,
    pub ast: &'a ast::Module,
}

/// What `ael.toml` says, once loaded. `None` in [`CheckInput::project`] means standalone
/// files: no bindings exist.
#[derive(Clone, Debug, Default)]
pub struct ProjectInfo {
    pub package: ir::Package,
    pub bindings: Vec<ir::Binding>,
    pub limits: ir::Limits,
    /// Where each binding's name is written in `ael.toml`, for the resolution.
    pub binding_spans: Vec<(String, crate::span::Span)>,
}

/// Read-only access to the files of the project, by path relative to its root.
pub trait ProjectFiles {
    fn exists(&self, relative: &str) -> bool;
    /// The file's bytes: sema decodes them, so that text that is not UTF-8 is reported
    /// (`E0001`) where it is, not dropped.
    fn read(&self, relative: &str) -> Option<Vec<u8>>;
}

/// A project with no files besides its modules.
pub struct NoFiles;

impl ProjectFiles for NoFiles {
    fn exists(&self, _: &str) -> bool {
        false
    }
    fn read(&self, _: &str) -> Option<Vec<u8>> {
        None
    }
}

pub struct CheckInput<'a> {
    pub modules: Vec<SourceModule<'a>>,
    pub project: Option<&'a ProjectInfo>,
    pub files: &'a dyn ProjectFiles,
    /// Checked for its diagnostics alone (`aelc check`): every rule runs as ever, but the
    /// program keeps no fn (`fns` is empty), no node's body, no check's requirements, no
    /// prompt template and no doc text (a doc is an empty text), which only emission and
    /// execution read (the publishing rules read types, error sets, node signatures and
    /// whether a field is documented). Bodies, requirements and templates were a fifth of
    /// `aelc check`'s peak memory; fns and doc texts another 6%.
    pub lean: bool,
    /// Records what every name denotes ([`resolution::Resolution`]) for the language server;
    /// off for `aelc check` and `aelc build`, which need only the verdict.
    pub record: bool,
}

/// What checking produced: the program when there was no error, and every diagnostic.
#[derive(Debug, Default)]
pub struct Checked {
    pub program: Option<ir::Program>,
    pub diagnostics: Vec<Diagnostic>,
    /// What each name denotes, when [`CheckInput::record`] asked for it (even with errors).
    pub resolution: Option<resolution::Resolution>,
    /// Modules whose deferred bodies ([`crate::syntax::ast::Body::Deferred`]) did not parse
    /// cleanly. When there are any, the rest of this result is not to be trusted: those
    /// modules must be parsed whole ([`crate::syntax::parse`]) and the project checked again.
    pub reparse: Vec<FileId>,
}

/// Checks a whole project. Prompt templates it reads are added to `sources`, so that their
/// diagnostics point into them.
pub fn check(input: &CheckInput<'_>, sources: &mut SourceMap) -> Checked {
    let mut cx = Cx::new(input, sources);
    scope::collect(&mut cx);
    types::lower_all(&mut cx);
    depth::check_all(&mut cx);
    items::check_all(&mut cx);
    node::check_all(&mut cx);
    scope::report_unused_imports(&mut cx);
    let resolution = record::finish(&mut cx);
    let reparse = std::mem::take(&mut cx.reparse);
    let mut diagnostics = std::mem::take(&mut cx.diags);
    let has_errors = diagnostics.iter().any(Diagnostic::is_error);
    let program = (!has_errors).then(|| cx.into_program());
    // Every diagnostic is kept: the terminal renderer caps what it shows and counts the rest
    // (`render::MAX_SHOWN`), the LSP and JSON output need them all.
    diagnostics::sort(&mut diagnostics);
    Checked {
        program,
        diagnostics,
        resolution,
        reparse,
    }
}

/// A parameter list: names and types in order.
pub(crate) type Params = Vec<(String, aelc_runtime::ty::Ty)>;

/// What a name in scope refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ItemRef {
    Type(u32),
    Errors(u32),
    Fn(u32),
    Check(u32),
    Builder(u32),
    Stream(u32),
    Node(u32),
}

impl ItemRef {
    pub(crate) fn noun(self) -> &'static str {
        match self {
            ItemRef::Type(_) => "a type",
            ItemRef::Errors(_) => "an `errors` set",
            ItemRef::Fn(_) => "a fn",
            ItemRef::Check(_) => "a check",
            ItemRef::Builder(_) => "a builder",
            ItemRef::Stream(_) => "a stream",
            ItemRef::Node(_) => "a node",
        }
    }
}

/// One declaration of some kind, with the module it lives in.
pub(crate) struct Decl<'a, T> {
    pub module: usize,
    pub item: &'a ast::Item,
    pub def: T,
}

#[derive(Clone, Copy)]
pub(crate) enum TypeDecl<'a> {
    Struct(&'a ast::StructDef),
    Enum(&'a ast::EnumDef),
    Alias(&'a ast::TypeAlias),
}

/// One `use` name.
pub(crate) struct Import<'a> {
    pub span: crate::span::Span,
    /// Borrowed from the syntax tree, as [`ModuleScope::names`].
    pub name: &'a str,
    pub used: bool,
}

pub(crate) struct ModuleScope<'a> {
    pub path: String,
    /// Own items and imports, by the name they are known under here (borrowed from the
    /// syntax trees, which outlive the check: a copy of every name was 2% of its peak), with
    /// the index of the import that brought the name in (`None`: an own item). Own items come
    /// first and an import never takes a name already known, so the entries without an import
    /// are the module's own items ([`ModuleScope::own`]): a second map of them was 1% of the
    /// check's peak.
    pub names: Map<&'a str, (ItemRef, Option<u32>)>,
    pub imports: Vec<Import<'a>>,
    /// Names a failing `use` meant to bring in: reported there once, so a use of the name is
    /// not reported again as unknown.
    pub unresolved: Set<String>,
}

impl<'a> ModuleScope<'a> {
    /// An own item of the module (not an import), for `module::name` paths and `use`.
    pub fn own(&self, name: &str) -> Option<ItemRef> {
        match self.names.get(name) {
            Some(&(reference, None)) => Some(reference),
            _ => None,
        }
    }

    /// The names of the module's own items, in no order.
    pub fn own_names(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.names
            .iter()
            .filter(|(_, (_, import))| import.is_none())
            .map(|(name, _)| *name)
    }
}

/// A prompt checked against one parameter list, and what it lowered to.
pub(crate) type CheckedPrompt = (Params, Option<aelc_runtime::prompt::Template>);

/// The checking context shared by the phases.
pub(crate) struct Cx<'a, 's> {
    pub input: &'a CheckInput<'a>,
    pub sources: &'s mut SourceMap,
    pub modules: Vec<ModuleScope<'a>>,
    pub module_index: Map<String, usize>,
    pub types: Vec<Decl<'a, TypeDecl<'a>>>,
    pub errors: Vec<Decl<'a, &'a ast::ErrorsDef>>,
    pub fns: Vec<Decl<'a, &'a ast::FnDef>>,
    pub checks: Vec<Decl<'a, &'a ast::CheckDef>>,
    pub builders: Vec<Decl<'a, &'a ast::BuilderDef>>,
    pub streams: Vec<Decl<'a, &'a ast::StreamDef>>,
    pub nodes: Vec<Decl<'a, &'a ast::NodeDef>>,
    pub table: TypeTable,
    /// Lowered alias targets by [`DefId`] index, filled lazily (an alias may be refined where it
    /// is used, so its target is needed before all types are lowered).
    pub alias_targets: Map<u32, Option<aelc_runtime::ty::Ty>>,
    pub alias_busy: Set<u32>,
    /// Streams whose item type is being lowered: `stream R of R` (a stream named as a type
    /// is a list of its items) would otherwise recurse until the stack overflows.
    pub stream_busy: Set<u32>,
    /// Shared (`Rc`): a call looks its callee's signature up and holds it while it checks the
    /// arguments, which borrow the context mutably; a copy per call cloned every parameter's
    /// name and type.
    pub fn_sigs: Vec<Option<std::rc::Rc<items::Sig>>>,
    pub node_sigs: Vec<Option<std::rc::Rc<items::Sig>>>,
    /// Verdicts on `@pattern` and `matches` texts, parsed once each.
    pub patterns: pattern_check::Verdicts,
    /// Prompt files already checked, by (module, path): each parameter list it was checked
    /// with and the lowered template, so a prompt shared by many nodes is checked once.
    pub checked_prompts: Map<(usize, String), Vec<CheckedPrompt>>,
    pub diags: Vec<Diagnostic>,
    /// Modules whose deferred bodies did not parse ([`Checked::reparse`]).
    pub reparse: Vec<FileId>,
    pub out: ir::Program,
    /// What names denote, when the input asks to record it ([`record`]).
    pub resolution: Option<resolution::Resolution>,
}

impl<'a, 's> Cx<'a, 's> {
    fn new(input: &'a CheckInput<'a>, sources: &'s mut SourceMap) -> Cx<'a, 's> {
        Cx {
            input,
            sources,
            modules: Vec::new(),
            module_index: Map::default(),
            types: Vec::new(),
            errors: Vec::new(),
            fns: Vec::new(),
            checks: Vec::new(),
            builders: Vec::new(),
            streams: Vec::new(),
            nodes: Vec::new(),
            table: TypeTable::default(),
            alias_targets: Map::default(),
            alias_busy: Set::default(),
            stream_busy: Set::default(),
            fn_sigs: Vec::new(),
            node_sigs: Vec::new(),
            patterns: pattern_check::Verdicts::default(),
            checked_prompts: Map::default(),
            diags: Vec::new(),
            reparse: Vec::new(),
            out: ir::Program::default(),
            resolution: input.record.then(resolution::Resolution::default),
        }
    }

    /// Reports a finding: one of [`error::SemaError`], made a diagnostic there.
    pub(crate) fn report(&mut self, error: impl Into<error::SemaError>) {
        self.diags.push(error.into().to_diagnostic());
    }

    pub(crate) fn module_path(&self, module: usize) -> String {
        self.modules
            .get(module)
            .map_or_else(String::new, |m| m.path.clone())
    }

    fn into_program(mut self) -> ir::Program {
        let mut program = std::mem::take(&mut self.out);
        program.types = std::mem::take(&mut self.table);
        if let Some(project) = self.input.project {
            program.package = project.package.clone();
            let mut bindings = project.bindings.clone();
            bindings.sort_by(|a, b| a.name.cmp(&b.name));
            program.bindings = bindings;
            program.limits = project.limits.clone();
        }
        program
    }
}

/// The doc text of an optional doc comment.
pub(crate) fn docs(doc: &Option<ast::Doc>) -> Option<String> {
    doc.as_ref().map(|d| d.text.to_string())
}

impl Cx<'_, '_> {
    /// The doc text of an optional doc comment, for the program: in a lean one
    /// ([`CheckInput::lean`]) only whether there is one (an empty text), which is all the
    /// publishing rules read.
    pub(crate) fn docs(&self, doc: &Option<ast::Doc>) -> Option<String> {
        match self.input.lean {
            true => doc.as_ref().map(|_| String::new()),
            false => docs(doc),
        }
    }
}
