//! One project's analysis: the batch compiler's result for the project a document belongs to.
//!
//! A document belongs to the project whose `ael.toml` is found from its folder upwards (the rule
//! of spec §11 for the command line). A document outside any project is checked alone. The
//! analysis keeps what the compiler produced (sources, trees, diagnostics, the publishing rules'
//! findings in example files included, and sema's resolution of every name, which the
//! navigation requests query) plus the path of each file id, so that every span can be turned
//! into a location in the editor.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::driver::{self, Compilation, World};
use crate::ir::Program;
use crate::sema::resolution::Resolution;
use crate::span::FileId;

/// What the server knows about one project after the last change.
pub struct Analysis {
    /// The project folder, or the lone file checked outside any project.
    pub root: PathBuf,
    /// The folder relative paths (`file("…")`, `ael.toml`) are resolved against.
    pub dir: PathBuf,
    pub compilation: Compilation,
    /// The absolute path of every file id of `compilation.sources`.
    pub paths: Vec<PathBuf>,
    /// What every name denotes, as sema resolved it (taken out of `compilation`).
    pub resolution: Resolution,
    /// The typed program (taken out of `compilation`), for JSON Schemas in hovers. When this
    /// check found errors it is the last error-free check's program, if any
    /// ([`Analysis::carry_program`]), and `program_is_current` is false.
    pub program: Option<Arc<Program>>,
    pub program_is_current: bool,
}

/// The key an analysis is cached under: the project folder, or the file itself.
pub fn root_of(world: &dyn World, file: &Path) -> PathBuf {
    // The one root finder of the command line, so the editor and `aelc check` agree on
    // which project a file belongs to.
    driver::find_project_root(world, file).unwrap_or_else(|| file.to_path_buf())
}

impl Analysis {
    /// Runs the compiler on `root` through `world`. An unreadable project gives an empty analysis
    /// (the server must keep going; the next change retries).
    pub fn compute(world: &dyn World, root: &Path) -> Analysis {
        // A folder is analysed only as a project: a URI naming `/` or a home folder must not
        // make the server read every `.ael` file below it.
        let is_project = world.is_dir(root) && world.is_file(&root.join("ael.toml"));
        let mut compilation = if world.is_dir(root) && !is_project {
            Compilation::default()
        } else {
            driver::analyze_path(world, root).unwrap_or_default()
        };
        if is_project {
            // The editor shows what `aelc build` refuses. An example that cannot be read is
            // left to `aelc build` to name; the rest of the analysis stands.
            let _ = driver::check_publishing(world, root, &mut compilation);
        }
        let dir = if world.is_dir(root) {
            root.to_path_buf()
        } else {
            root.parent().unwrap_or(root).to_path_buf()
        };
        let paths = compilation
            .sources
            .files()
            .map(|(id, file)| {
                // A std module opens as its read-only copy in the cache folder.
                if file.embedded {
                    if let Some(path) = super::std_files::path_of(&file.name) {
                        return path;
                    }
                }
                compilation
                    .files
                    .iter()
                    .find(|parsed| parsed.file == id)
                    .map(|parsed| parsed.path.clone())
                    .unwrap_or_else(|| absolute(&dir, &file.name))
            })
            .collect();
        let program = compilation.program.take().map(Arc::new);
        let resolution = compilation.resolution.take().unwrap_or_default();
        Analysis {
            root: root.to_path_buf(),
            dir,
            compilation,
            paths,
            resolution,
            program_is_current: program.is_some(),
            program,
        }
    }

    /// Keeps the previous analysis's program when this check produced none (the project has errors now),
    /// so hovers still show schemas while the author types.
    pub fn carry_program(&mut self, previous: Option<Arc<Program>>) {
        if self.program.is_none() {
            self.program = previous;
            self.program_is_current = false;
        }
    }

    /// The module path (`types::common`) of a file of this project.
    pub fn module_of(&self, file: FileId) -> Option<String> {
        let source = self.compilation.sources.get(file)?;
        if source.embedded {
            return Some(driver::module_path(Path::new(""), Path::new(&source.name)));
        }
        Some(driver::module_path(&self.dir, self.path(file)?))
    }

    pub fn path(&self, file: FileId) -> Option<&Path> {
        self.paths.get(file.0 as usize).map(PathBuf::as_path)
    }

    pub fn file_id(&self, path: &Path) -> Option<FileId> {
        self.paths
            .iter()
            .position(|p| p == path)
            .map(|i| FileId(i as u32))
    }

    /// The parsed module of a file id, for `.ael` files.
    pub fn parsed(&self, file: FileId) -> Option<&driver::ParsedFile> {
        self.compilation.files.iter().find(|p| p.file == file)
    }
}

/// `dir/name`, unless `name` is already absolute (a lone file is shown as given).
fn absolute(dir: &Path, name: &str) -> PathBuf {
    let name = Path::new(name);
    if name.is_absolute() {
        name.to_path_buf()
    } else {
        dir.join(name)
    }
}
