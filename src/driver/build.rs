//! The build's flow, for `aelc build` and for `build.rs` (`aelc::build::compile`) alike:
//! check the project, run the publishing rules, emit every file (spec §9) in memory; then the
//! caller writes them ([`write`]: atomically, with the stamp of a clean build) or compares them
//! with the disk. Nothing here prints: the command line renders what comes back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::project::NOT_LOWERED;
use super::stamp::{self, Recorder};
use super::World;
use crate::codegen::emit::emit_checked;
use crate::codegen::write::{self, WriteError, WriteReport};
use crate::diagnostics::Diagnostic;
use crate::source::SourceMap;

/// A project checked and emitted.
pub struct Emitted {
    pub sources: SourceMap,
    /// Every diagnostic: the project's, the publishing rules' and emission's (each placed in
    /// its file).
    pub diagnostics: Vec<Diagnostic>,
    /// Every output file (paths relative to the output folder), when no diagnostic is an error.
    pub files: Option<BTreeMap<PathBuf, Vec<u8>>>,
}

/// Checks the project at `root` (read through `world`), runs the publishing rules over it and
/// emits its files. `Err` when a file cannot be read.
pub fn emit_project(world: &dyn World, root: &Path) -> Result<Emitted, String> {
    let mut compilation = super::check_project(world, root)
        .map_err(|err| format!("cannot read {}: {err}", root.display()))?;
    // The same rules, and the same places, as `aelc check` and the language server.
    let publishing = super::check_publishing(world, root, &mut compilation)?;
    let failed = compilation.has_errors();
    let Some(program) = compilation.program.take().filter(|_| !failed) else {
        if !failed {
            return Err(NOT_LOWERED.to_owned());
        }
        return Ok(Emitted {
            sources: compilation.sources,
            diagnostics: compilation.diagnostics,
            files: None,
        });
    };
    let emission = emit_checked(&program, &publishing.schemas, &publishing.examples);
    let mut diagnostics = compilation.diagnostics;
    diagnostics.extend(super::placed_emission_diagnostics(
        &compilation.files,
        root,
        &emission,
    ));
    let files = (!emission.has_errors()).then_some(emission.files);
    Ok(Emitted {
        sources: compilation.sources,
        diagnostics,
        files,
    })
}

/// Writes `files` into `out` ([`write::write_all`]) and records the stamp of the build of
/// `root` that `recorder` watched, with what it printed of its diagnostics (`replay`), which a
/// skipped build prints again: warnings are shown by every build, skipped or not.
pub fn write(
    root: &Path,
    out: &Path,
    recorder: &Recorder<'_>,
    files: &BTreeMap<PathBuf, Vec<u8>>,
    replay: &stamp::Replay,
) -> Result<WriteReport, WriteError> {
    let written = write::write_all(out, files)?;
    stamp::record(root, out, recorder, files.keys(), replay);
    Ok(written)
}
