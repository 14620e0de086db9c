//! `aelc build [DIR] [--out D] [--check]`: emits schemas, model-facing variants, MCP tools,
//! manifests and `ir.json` (spec §9) under `target/ael/` of the project, or `--out`.
//!
//! `--check` writes nothing and exits 1 naming every file that is out of date, missing or no
//! longer produced. Publishing rules are checked before anything is written.
//!
//! A build whose inputs, compiler and outputs are those of the last clean build (the stamp,
//! [`driver::stamp`]) does nothing else; `--check` always checks.

use std::path::{Path, PathBuf};

use super::args::BuildArgs;
use super::{Output, Status};
use crate::codegen::emit::emit_checked;
use crate::codegen::write;
use crate::diagnostics::Diagnostic;
use crate::driver::{self, stamp, DiskWorld, World};
use crate::ir::Program;
use crate::source::SourceMap;

pub fn run(out: &Output, args: &BuildArgs) -> Status {
    let start = args.path.clone().unwrap_or_else(|| PathBuf::from("."));
    let world = DiskWorld;
    let Some(root) = driver::find_project_root(&world, &start) else {
        return out.fatal(&format!("no ael.toml at or above {}", start.display()));
    };
    let out_dir = args
        .out
        .clone()
        .unwrap_or_else(|| root.join("target").join("ael"));
    if !args.check {
        if let Some(files) = stamp::up_to_date(&root, &out_dir) {
            super::eprint_line(&format!(
                "up to date: {files} file(s) in {}, nothing changed since the last build",
                out_dir.display()
            ));
            return Status::Ok;
        }
    }
    // Every question asked of the disk is recorded for the stamp of a clean build.
    let recorder = stamp::Recorder::new(&world, &out_dir);
    let mut compilation = match driver::check_project(&recorder, &root) {
        Ok(c) => c,
        Err(err) => return out.fatal(&format!("cannot read {}: {err}", root.display())),
    };
    // The same rules, and the same places, as `aelc check` and the language server.
    let publishing = match driver::check_publishing(&recorder, &root, &mut compilation) {
        Ok(p) => p,
        Err(message) => return out.fatal(&message),
    };
    let failed = compilation.has_errors();
    let program = compilation.program.take();
    let mut sources = compilation.sources;
    super::shown::name_from_current_dir(&mut sources, &root);
    let Some(program) = program.filter(|_| !failed) else {
        if !failed {
            return out.fatal(NOT_LOWERED);
        }
        out.diagnostics(&sources, &compilation.diagnostics);
        return Status::Failed;
    };
    let emission = emit_checked(&program, &publishing.schemas, &publishing.examples);
    let mut diagnostics = compilation.diagnostics;
    diagnostics.extend(driver::placed_emission_diagnostics(
        &compilation.files,
        &root,
        &emission,
    ));
    out.diagnostics(&sources, &diagnostics);
    if emission.has_errors() {
        return Status::Failed;
    }
    if args.check {
        return match write::check(&out_dir, &emission.files) {
            Ok(stale) if stale.is_empty() => Status::Ok,
            Ok(stale) => {
                for s in &stale {
                    super::eprint_line(&format!(
                        "stale: {} ({})",
                        out_dir.join(s.path()).display(),
                        s.reason()
                    ));
                }
                super::eprint_line(&format!(
                    "{} emitted file(s) out of date; run `aelc build` to update them",
                    stale.len()
                ));
                Status::Failed
            }
            Err(err) => out.fatal(&format!("cannot check {}: {err}", out_dir.display())),
        };
    }
    match write::write_all(&out_dir, &emission.files) {
        Ok(written) => {
            if diagnostics.is_empty() {
                stamp::record(&root, &out_dir, &recorder, emission.files.keys());
            } else {
                // Warnings are shown by every build: no shortcut that would hide them.
                stamp::forget(&out_dir);
            }
            super::eprint_line(&format!(
                "built {} file(s) in {}: {} written, {} unchanged, {} removed",
                emission.files.len(),
                out_dir.display(),
                written.written.len(),
                written.unchanged,
                written.removed.len()
            ));
            Status::Ok
        }
        Err(err) => out.fatal(&format!("cannot write {}: {err}", out_dir.display())),
    }
}

/// A project that checked clean but has no typed program.
const NOT_LOWERED: &str =
    "this aelc cannot lower a project to its typed IR yet (the checker is not wired in)";

/// A checked project: its root, sources, diagnostics, and its program when it checked clean.
pub struct Project {
    pub root: PathBuf,
    pub sources: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
    pub program: Option<Program>,
}

/// Finds the project whose `ael.toml` is at or above `start` and checks it, for the commands
/// that run or describe nodes (`aelc build` also runs the publishing rules, so it checks the
/// project itself).
pub fn load_project(world: &dyn World, start: &Path) -> Result<Project, String> {
    let root = driver::find_project_root(world, start)
        .ok_or_else(|| format!("no ael.toml at or above {}", start.display()))?;
    let compilation = driver::check_path(world, &root)
        .map_err(|err| format!("cannot read {}: {err}", root.display()))?;
    let program = lower(&compilation);
    if program.is_none() && !compilation.has_errors() {
        return Err(NOT_LOWERED.to_owned());
    }
    let mut sources = compilation.sources;
    super::shown::name_from_current_dir(&mut sources, &root);
    Ok(Project {
        root,
        sources,
        diagnostics: compilation.diagnostics,
        program,
    })
}

/// The typed program of a compilation without errors (sema produces it in project mode).
fn lower(compilation: &driver::Compilation) -> Option<Program> {
    if compilation.has_errors() {
        return None;
    }
    compilation.program.clone()
}

/// Where `aelc test` reads examples from; the driver owns it.
pub use crate::driver::publish::load_examples;
