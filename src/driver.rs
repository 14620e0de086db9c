//! The driver: reads sources through a [`World`], runs the phases, collects diagnostics.
//!
//! The CLI and the LSP share it: the CLI with [`DiskWorld`], the LSP with the disk plus its open
//! buffers, tests with [`MemoryWorld`].

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::{Path, PathBuf};

use crate::diagnostics::{self, Diagnostic};
use crate::sema;
use crate::source::{decode_source, SourceMap};
use crate::span::FileId;
use crate::syntax::{self, ast};

pub mod build;
mod parse;
pub mod project;
pub mod publish;
pub mod replay;
pub mod run;
pub mod stamp;

pub use publish::{
    check_publishing, check_publishing_rules, placed_emission_diagnostics, Publishing,
};

/// The largest `.ael` module the compiler reads, in bytes (2 MiB): a module over it is refused
/// with `E0011` before anything is parsed, by `aelc check` and the language server alike.
/// `aelc check` needs about 20 bytes of memory per source byte (a generated 1M-line project:
/// 586 MiB for 31 MB of source) and the language server, which keeps every schema, at most
/// 120, so this bounds one module at a few hundred megabytes; hand-written modules are a
/// thousand times smaller.
pub const MAX_SOURCE_BYTES: usize = 2 << 20;

/// All IO the compiler does goes through this trait.
pub trait World {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// The first `limit` bytes of the file, or all of it when it is shorter: a module is read
    /// this way, one byte past [`MAX_SOURCE_BYTES`], so a huge file costs no more than that.
    fn read_at_most(&self, path: &Path, limit: usize) -> io::Result<Vec<u8>> {
        let mut bytes = self.read(path)?;
        bytes.truncate(limit);
        Ok(bytes)
    }
    /// The entries of a directory, sorted, as full paths.
    fn read_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>>;
    fn is_dir(&self, path: &Path) -> bool;
    fn is_file(&self, path: &Path) -> bool;
}

/// The real file system.
#[derive(Clone, Copy, Debug, Default)]
pub struct DiskWorld;

impl World for DiskWorld {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }

    fn read_at_most(&self, path: &Path, limit: usize) -> io::Result<Vec<u8>> {
        use std::io::Read as _;
        let file = std::fs::File::open(path)?;
        // Sized from the file's length, so the buffer is the text's own (it becomes the source
        // text without a copy: `decode_source`), not a doubled one.
        let expected = file.metadata().map_or(0, |m| m.len()).min(limit as u64);
        let mut bytes = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
        file.take(limit as u64).read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        let mut entries = std::fs::read_dir(path)?
            .map(|e| e.map(|e| e.path()))
            .collect::<io::Result<Vec<_>>>()?;
        entries.sort();
        Ok(entries)
    }

    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }

    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }
}

/// Files held in memory, for tests and for unsaved buffers.
#[derive(Clone, Debug, Default)]
pub struct MemoryWorld {
    pub files: BTreeMap<PathBuf, Vec<u8>>,
}

impl MemoryWorld {
    pub fn new() -> MemoryWorld {
        MemoryWorld::default()
    }

    pub fn with(mut self, path: impl Into<PathBuf>, text: impl Into<Vec<u8>>) -> MemoryWorld {
        self.files.insert(path.into(), text.into());
        self
    }
}

impl MemoryWorld {
    /// The files below `path` (not `path` itself). Paths order by components, so they are one
    /// contiguous range of the map starting at `path`: a folder costs its own entries, not a
    /// scan of every file (which made collecting a project of hundreds of files quadratic).
    fn below<'a>(&'a self, path: &'a Path) -> impl Iterator<Item = &'a PathBuf> + 'a {
        self.files
            .range::<Path, _>((std::ops::Bound::Included(path), std::ops::Bound::Unbounded))
            .map(|(p, _)| p)
            .take_while(move |p| p.starts_with(path))
            .filter(move |p| p.as_path() != path)
    }
}

impl World for MemoryWorld {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.files
            .get(path)
            .cloned()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such file"))
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        let mut entries: Vec<PathBuf> = self
            .below(path)
            .filter_map(|p| {
                let rest = p.strip_prefix(path).ok()?;
                let first = rest.components().next()?;
                Some(path.join(first))
            })
            .collect();
        entries.dedup();
        if entries.is_empty() && !self.is_dir(path) {
            return Err(io::Error::new(io::ErrorKind::NotFound, "no such directory"));
        }
        Ok(entries)
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.below(path).next().is_some()
    }

    fn is_file(&self, path: &Path) -> bool {
        self.files.contains_key(path)
    }
}

/// One parsed source file.
#[derive(Clone, Debug)]
pub struct ParsedFile {
    pub file: FileId,
    pub path: PathBuf,
    pub module: ast::Module,
    pub comments: Vec<ast::Comment>,
}

/// What checking a set of files produced.
#[derive(Clone, Debug, Default)]
pub struct Compilation {
    pub sources: SourceMap,
    pub files: Vec<ParsedFile>,
    pub diagnostics: Vec<Diagnostic>,
    /// The typed program, when checking found no error.
    pub program: Option<crate::ir::Program>,
    /// What each name denotes, when the check recorded it ([`analyze_path`]).
    pub resolution: Option<sema::resolution::Resolution>,
}

impl Compilation {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Collects the `.ael` files at `path`: the file itself, or every `.ael` file below the folder
/// (skipping `target/` and hidden folders), sorted.
pub fn collect_sources(world: &dyn World, path: &Path) -> io::Result<Vec<PathBuf>> {
    if world.is_file(path) {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in world.read_dir(&dir)? {
            let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if world.is_dir(&entry) {
                if !name.starts_with('.') && name != "target" {
                    stack.push(entry);
                }
            } else if name.ends_with(".ael") {
                out.push(entry);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The folder at or above `start` holding `ael.toml` (spec §11: commands work on the project
/// found from the current folder upwards), as an absolute path.
pub fn find_project_root(world: &dyn World, start: &Path) -> Option<PathBuf> {
    let start = if world.is_file(start) {
        // `x.ael` has the parent "", which `absolute` refuses: it is the current folder.
        match start.parent()? {
            parent if parent.as_os_str().is_empty() => PathBuf::from("."),
            parent => parent.to_path_buf(),
        }
    } else {
        start.to_path_buf()
    };
    let absolute = lexically_absolute(&start).unwrap_or(start);
    let mut dir = Some(absolute.as_path());
    while let Some(d) = dir {
        if has_manifest(world, d) {
            return Some(d.to_path_buf());
        }
        dir = d.parent();
    }
    None
}

/// Whether `dir` holds an `ael.toml`. A folder of that name counts too: whoever made it meant
/// a project there, and reading it then says that it must be a file ([`parse_project`])
/// rather than checking the modules as loose files, where every `binding("…")` would be an
/// error about a missing project.
pub fn has_manifest(world: &dyn World, dir: &Path) -> bool {
    let manifest = dir.join("ael.toml");
    world.is_file(&manifest) || world.is_dir(&manifest)
}

/// `path` made absolute (against the current folder) with its `.` and `..` components
/// resolved by name: `../demo/nodes` from `/tmp/x` is `/tmp/demo/nodes`. Symbolic links are
/// not followed, so this is a path as the author wrote it, which is what names files in
/// diagnostics. `None` when the current folder cannot be read.
pub fn lexically_absolute(path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let absolute = std::path::absolute(path).ok()?;
    Some(
        absolute
            .components()
            .fold(PathBuf::new(), |mut out, component| {
                match component {
                    Component::ParentDir => {
                        out.pop();
                    }
                    Component::CurDir => {}
                    other => out.push(other),
                }
                out
            }),
    )
}

/// Checks every `.ael` file at `path`. A folder holding `ael.toml` is a project
/// ([`check_project`]); a single file, or a folder without `ael.toml`, is checked as standalone
/// modules with no bindings. Only IO errors are `Err`.
pub fn check_path(world: &dyn World, path: &Path) -> io::Result<Compilation> {
    check_path_with(world, path, CheckMode::FULL)
}

/// [`check_path`] for its diagnostics alone (`aelc check`): the bodies of fns and checks
/// deferred, the program lean ([`ParsedProject::check_lean`]).
pub fn check_path_lean(world: &dyn World, path: &Path) -> io::Result<Compilation> {
    check_path_with(world, path, CheckMode::LEAN)
}

/// [`check_path`] recording what every name denotes ([`Compilation::resolution`]), for the
/// language server.
pub fn analyze_path(world: &dyn World, path: &Path) -> io::Result<Compilation> {
    check_path_with(
        world,
        path,
        CheckMode {
            record: true,
            ..CheckMode::FULL
        },
    )
}

/// What a check keeps and how it parses.
#[derive(Clone, Copy)]
struct CheckMode {
    /// The program without fn bodies, requirements or templates ([`sema::CheckInput::lean`]).
    lean: bool,
    /// What every name denotes ([`sema::CheckInput::record`]).
    record: bool,
    /// Trees for checking alone ([`syntax::parse_lean`]): fn and check bodies parsed by sema,
    /// a module at a time, and doc comments without their text.
    lean_parse: bool,
}

impl CheckMode {
    const FULL: CheckMode = CheckMode {
        lean: false,
        record: false,
        lean_parse: false,
    };
    const LEAN: CheckMode = CheckMode {
        lean: true,
        record: false,
        lean_parse: true,
    };
}

fn check_path_with(world: &dyn World, path: &Path, check: CheckMode) -> io::Result<Compilation> {
    if world.is_dir(path) && has_manifest(world, path) {
        let parsed = parse_project_with(world, path, check.lean_parse)?;
        return Ok(parsed.check_with(world, check));
    }
    let root = if world.is_file(path) {
        path.parent().map_or_else(PathBuf::new, Path::to_path_buf)
    } else {
        path.to_path_buf()
    };
    let mut compilation = Compilation::default();
    parse_sources(world, path, &root, check.lean_parse, &mut compilation)?;
    run_sema(world, &root, None, check, &mut compilation);
    Ok(compilation)
}

/// Checks the project whose `ael.toml` is at `root`: every `.ael` file below it is a module.
pub fn check_project(world: &dyn World, root: &Path) -> io::Result<Compilation> {
    Ok(parse_project(world, root)?.check(world))
}

/// [`check_project`] for its diagnostics alone (`aelc check`): see
/// [`ParsedProject::check_lean`].
pub fn check_project_lean(world: &dyn World, root: &Path) -> io::Result<Compilation> {
    Ok(parse_project_lean(world, root)?.check_lean(world))
}

/// Parses the project at `root` (its `ael.toml` and every module) without checking it: the
/// first half of [`check_project`], for callers that time or cache the phases apart.
pub fn parse_project(world: &dyn World, root: &Path) -> io::Result<ParsedProject> {
    parse_project_with(world, root, false)
}

/// [`parse_project`] as `aelc check` parses ([`syntax::parse_lean`]): the fn and check bodies
/// of every module without an error deferred, for sema to parse a module at a time, and doc
/// comments without their text. Its trees are for checking ([`ParsedProject::check_lean`]),
/// not for the formatter or the language server.
pub fn parse_project_lean(world: &dyn World, root: &Path) -> io::Result<ParsedProject> {
    parse_project_with(world, root, true)
}

fn parse_project_with(
    world: &dyn World,
    root: &Path,
    lean_parse: bool,
) -> io::Result<ParsedProject> {
    let mut compilation = Compilation::default();
    let manifest = root.join("ael.toml");
    if world.is_dir(&manifest) {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            format!(
                "{} is a folder; a project's ael.toml must be a file (its [package], \
                 [bindings] and [limits])",
                manifest.display()
            ),
        ));
    }
    let bytes = world.read(&manifest)?;
    let id = FileId(compilation.sources.len() as u32);
    let (text, bad_utf8) = decode_source(id, bytes);
    compilation.diagnostics.extend(bad_utf8);
    let project = load_manifest(id, &text, &mut compilation.diagnostics);
    compilation.sources.add("ael.toml", text);
    parse_sources(world, root, root, lean_parse, &mut compilation)?;
    Ok(ParsedProject {
        root: root.to_path_buf(),
        project,
        compilation,
    })
}

/// A project parsed by [`parse_project`], not yet checked.
#[derive(Clone, Debug)]
pub struct ParsedProject {
    pub root: PathBuf,
    pub project: sema::ProjectInfo,
    pub compilation: Compilation,
}

impl ParsedProject {
    /// The second half of [`check_project`]: semantic analysis of the parsed modules.
    pub fn check(self, world: &dyn World) -> Compilation {
        self.check_with(world, CheckMode::FULL)
    }

    /// [`ParsedProject::check`] for the diagnostics alone: the same diagnostics, and a program
    /// (when there is no error) without fn bodies, requirements or prompt templates
    /// ([`sema::CheckInput::lean`]), enough for the publishing rules
    /// ([`check_publishing_rules`]) and nothing else.
    pub fn check_lean(self, world: &dyn World) -> Compilation {
        self.check_with(world, CheckMode::LEAN)
    }

    fn check_with(self, world: &dyn World, check: CheckMode) -> Compilation {
        let mut compilation = self.compilation;
        run_sema(
            world,
            &self.root,
            Some(&self.project),
            check,
            &mut compilation,
        );
        compilation
    }
}

/// Reads `ael.toml` with [`crate::project`]'s loader, the one reader of the file, whose
/// diagnostics are reported. Sema gets what the file says as far as it can be read
/// ([`crate::project::Loaded::known`]: the configuration itself when it has no error), so
/// that a typo in `ael.toml` does not turn every `binding("…")` of the project into a second
/// error.
fn load_manifest(id: FileId, text: &str, diagnostics: &mut Vec<Diagnostic>) -> sema::ProjectInfo {
    let loaded = crate::project::parse(id, text);
    diagnostics.extend(loaded.diagnostics);
    sema::ProjectInfo {
        package: loaded.known.to_ir_package(),
        bindings: loaded.known.to_ir_bindings(),
        limits: loaded.known.to_ir_limits(),
        binding_spans: loaded
            .known
            .bindings
            .iter()
            .map(|(name, binding)| (name.clone(), binding.span))
            .collect(),
    }
}

fn parse_sources(
    world: &dyn World,
    path: &Path,
    root: &Path,
    lean_parse: bool,
    compilation: &mut Compilation,
) -> io::Result<()> {
    // Read in order (a file's id is its place in the source map), then parse side by side.
    let mut read: Vec<(FileId, PathBuf, ReadSource)> = Vec::new();
    for file_path in collect_sources(world, path)? {
        let bytes = world.read_at_most(&file_path, MAX_SOURCE_BYTES + 1)?;
        let display = display_name(path, &file_path);
        let id = FileId(compilation.sources.len() as u32);
        if bytes.len() > MAX_SOURCE_BYTES {
            drop(bytes);
            compilation.sources.add(display, String::new());
            read.push((id, file_path, ReadSource::TooLarge));
            continue;
        }
        let (text, bad_utf8) = decode_source(id, bytes);
        compilation.sources.add(display, text);
        read.push((id, file_path, ReadSource::Text { bad_utf8 }));
    }
    let texts: Vec<(FileId, &str)> = read
        .iter()
        .filter(|(_, _, read)| matches!(read, ReadSource::Text { .. }))
        .map(|(id, _, _)| (*id, compilation.sources.get(*id).map_or("", |f| &*f.text)))
        .collect();
    let mut parses = parse::parse_all(&texts, lean_parse).into_iter();
    drop(texts);
    for (id, file_path, read) in read {
        let (module, comments) = match read {
            ReadSource::TooLarge => {
                compilation.diagnostics.push(too_large(id));
                let empty = ast::Module {
                    docs: None,
                    items: Vec::new(),
                    span: crate::span::Span::new(id, 0..0),
                };
                (empty, Vec::new())
            }
            ReadSource::Text { bad_utf8 } => {
                let Some(parse) = parses.next() else {
                    break; // one parse per text: not reached
                };
                compilation.diagnostics.extend(bad_utf8);
                compilation.diagnostics.extend(parse.diagnostics);
                (parse.module, parse.comments)
            }
        };
        compilation.files.push(ParsedFile {
            file: id,
            path: file_path,
            module,
            comments,
        });
    }
    add_std_modules(root, compilation);
    Ok(())
}

/// A module as [`parse_sources`] read it, before its parse.
enum ReadSource {
    /// Over [`MAX_SOURCE_BYTES`]: its text is not kept, and it is not parsed.
    TooLarge,
    /// Its text is in the source map; not UTF-8 where `bad_utf8` says.
    Text { bad_utf8: Option<Diagnostic> },
}

/// `E0011`: the module is over [`MAX_SOURCE_BYTES`]; nothing of it is kept.
fn too_large(id: FileId) -> Diagnostic {
    crate::source::error::SourceError::TooLarge {
        file: id,
        limit_mib: MAX_SOURCE_BYTES >> 20,
    }
    .into()
}

/// Adds the embedded `std` modules (spec §1) that the parsed modules `use`, and those they use
/// in turn. Only imported ones are added, so a project that uses no `std` gets no `std` items
/// in its program. Each is shown as `std/<name>.ael` and placed at `<root>/std/<name>.ael`, so
/// that its module path is `std::<name>`.
fn add_std_modules(root: &Path, compilation: &mut Compilation) {
    let mut added: Vec<String> = Vec::new();
    let mut next = 0;
    while next < compilation.files.len() {
        let wanted: Vec<String> = compilation.files[next]
            .module
            .items
            .iter()
            .filter_map(|item| match &item.kind {
                ast::ItemKind::Use(u) => Some(u.module.to_text()),
                _ => None,
            })
            .filter(|path| path.starts_with("std::"))
            .collect();
        next += 1;
        for path in wanted {
            if added.contains(&path) {
                continue;
            }
            let Some(text) = crate::stdlib::source(&path) else {
                continue; // sema reports the unknown module at the `use`
            };
            added.push(path.clone());
            let name = crate::stdlib::file_name(&path);
            let id = FileId(compilation.sources.len() as u32);
            let parse = syntax::parse(id, text);
            compilation
                .sources
                .add_embedded(name.clone(), text.to_owned());
            compilation.diagnostics.extend(parse.diagnostics);
            compilation.files.push(ParsedFile {
                file: id,
                path: root.join(name),
                module: parse.module,
                comments: parse.comments,
            });
        }
    }
}

/// The module path of a file: its path from the root without `.node.ael`/`.ael`, `/` as `::`.
pub fn module_path(root: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(root).unwrap_or(file);
    let text = relative.to_string_lossy().replace('\\', "/");
    let stem = text
        .strip_suffix(".node.ael")
        .or_else(|| text.strip_suffix(".ael"))
        .unwrap_or(&text);
    stem.replace('/', "::")
}

/// Project files as sema sees them: relative to the root, read through the world, each looked
/// up and read once per check. Nodes share prompt files (a project's agents often use one), and
/// each of them asked the disk again: a `stat` per node and a read per parameter list were 3%
/// of checking the generated 1M-line project.
struct WorldFiles<'w> {
    world: &'w dyn World,
    root: &'w Path,
    /// Whether each path asked about is a file.
    exists: RefCell<HashMap<String, bool>>,
    /// What reading each path gave (`None`: it could not be read).
    read: RefCell<HashMap<String, Option<Vec<u8>>>>,
}

impl<'w> WorldFiles<'w> {
    fn new(world: &'w dyn World, root: &'w Path) -> WorldFiles<'w> {
        WorldFiles {
            world,
            root,
            exists: RefCell::default(),
            read: RefCell::default(),
        }
    }
}

impl sema::ProjectFiles for WorldFiles<'_> {
    fn exists(&self, relative: &str) -> bool {
        if let Some(&known) = self.exists.borrow().get(relative) {
            return known;
        }
        let exists = !relative.split('/').any(|part| part == "..")
            && self.world.is_file(&self.root.join(relative));
        self.exists.borrow_mut().insert(relative.to_owned(), exists);
        exists
    }

    fn read(&self, relative: &str) -> Option<Vec<u8>> {
        if !self.exists(relative) {
            return None;
        }
        if let Some(known) = self.read.borrow().get(relative) {
            return known.clone();
        }
        let bytes = self.world.read(&self.root.join(relative)).ok();
        self.read
            .borrow_mut()
            .insert(relative.to_owned(), bytes.clone());
        bytes
    }
}

fn run_sema(
    world: &dyn World,
    root: &Path,
    project: Option<&sema::ProjectInfo>,
    check: CheckMode,
    compilation: &mut Compilation,
) {
    let sources_before = compilation.sources.len();
    let mut checked = run_sema_once(world, root, project, check, compilation);
    if !checked.reparse.is_empty() {
        // A deferred body did not parse: its module is parsed whole, which reports what is
        // wrong as any parse does, and the project is checked again (prompt templates that
        // the first check added are added again).
        compilation.sources.truncate(sources_before);
        reparse_whole(&checked.reparse, compilation);
        checked = run_sema_once(world, root, project, check, compilation);
    }
    compilation.diagnostics.extend(checked.diagnostics);
    compilation.resolution = checked.resolution;
    let syntax_errors = compilation.has_errors();
    compilation.program = checked.program.filter(|_| !syntax_errors);
    diagnostics::sort(&mut compilation.diagnostics);
}

fn run_sema_once(
    world: &dyn World,
    root: &Path,
    project: Option<&sema::ProjectInfo>,
    check: CheckMode,
    compilation: &mut Compilation,
) -> sema::Checked {
    let paths: Vec<String> = compilation
        .files
        .iter()
        .map(|f| module_path(root, &f.path))
        .collect();
    let modules = compilation
        .files
        .iter()
        .zip(&paths)
        .map(|(f, path)| sema::SourceModule {
            path,
            file: f.file,
            ast: &f.module,
        })
        .collect();
    let files = WorldFiles::new(world, root);
    let input = sema::CheckInput {
        modules,
        project,
        files: &files,
        lean: check.lean,
        record: check.record,
    };
    sema::check(&input, &mut compilation.sources)
}

/// Parses the modules `files` whole, in place of their parse with bodies deferred. The
/// deferring parse of a module reports only what the whole one reports too (a module with an
/// error defers nothing), so only what is new is added.
fn reparse_whole(files: &[FileId], compilation: &mut Compilation) {
    for parsed in compilation
        .files
        .iter_mut()
        .filter(|f| files.contains(&f.file))
    {
        let text = compilation
            .sources
            .get(parsed.file)
            .map_or("", |f| &*f.text);
        let parse = syntax::parse(parsed.file, text);
        parsed.module = parse.module;
        parsed.comments = parse.comments;
        for diagnostic in parse.diagnostics {
            if !compilation.diagnostics.contains(&diagnostic) {
                compilation.diagnostics.push(diagnostic);
            }
        }
    }
}

/// The name a file is shown under: relative to the folder that was checked, or as given.
fn display_name(root: &Path, file: &Path) -> String {
    let shown = if root == file {
        file
    } else {
        file.strip_prefix(root).unwrap_or(file)
    };
    shown.to_string_lossy().replace('\\', "/")
}
