//! The `build.rs` API (spec §9.4), in the manner of `prost-build`:
//!
//! ```no_run
//! // the `fn main` of build.rs, in a crate that implements a project's externs
//! if let Err(e) = aelc::build::compile("../review/ael.toml") {
//!     panic!("{e}");
//! }
//! ```
//! and in the crate: `mod glue { include!(concat!(env!("OUT_DIR"), "/review.rs")); }`.
//!
//! [`compile`] runs the build of `aelc build` (the same checks and publishing rules), writes
//! its Rust glue into `OUT_DIR` (atomically, and only when the bytes changed, so cargo does not
//! rebuild for nothing), and prints `cargo:rerun-if-changed` for every file the build read
//! (`ael.toml`, every module, prompt and example) and every folder it listed (so a new module
//! or example re-runs it too), so cargo re-runs the build script exactly when an input
//! changes. Errors come back as rendered diagnostics; nothing is written then.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::codegen::write;
use crate::diagnostics::render;
use crate::driver::stamp::Recorder;
use crate::driver::{self, DiskWorld, World};

/// Why [`compile`] failed: the project has errors, or a file could not be read or written.
#[derive(Debug)]
pub struct BuildError {
    pub message: String,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BuildError {}

/// What [`compile_to`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiled {
    /// The glue file written (`<out>/<package>.rs`).
    pub glue: PathBuf,
    /// Every file the glue depends on, for `cargo:rerun-if-changed`.
    pub inputs: Vec<PathBuf>,
}

/// Compiles the project of `ael_toml` into `$OUT_DIR/<package>.rs` and tells cargo what to
/// watch. For use from `build.rs`.
pub fn compile(ael_toml: impl AsRef<Path>) -> Result<Compiled, BuildError> {
    let out = std::env::var_os("OUT_DIR").ok_or_else(|| BuildError {
        message: "OUT_DIR is not set: call aelc::build::compile from a build script".to_owned(),
    })?;
    let compiled = compile_to(ael_toml.as_ref(), Path::new(&out))?;
    for input in &compiled.inputs {
        println!("cargo:rerun-if-changed={}", input.display());
    }
    Ok(compiled)
}

/// Compiles the project of `ael_toml` and writes its glue into `out` (no cargo output): the
/// build of `aelc build` ([`driver::build::emit_project`]: the same checks and publishing
/// rules), of which only the glue is written.
pub fn compile_to(ael_toml: &Path, out: &Path) -> Result<Compiled, BuildError> {
    let root = ael_toml
        .parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let world = DiskWorld;
    if !world.is_file(ael_toml) {
        return Err(BuildError {
            message: format!("{} is not a file", ael_toml.display()),
        });
    }
    // Every file and folder the build reads is an input cargo watches.
    let recorder = Recorder::new(&world, out);
    let emitted =
        driver::build::emit_project(&recorder, &root).map_err(|message| BuildError { message })?;
    let Some(files) = &emitted.files else {
        return Err(BuildError {
            message: render::human(&emitted.sources, &emitted.diagnostics, render::Color::Never),
        });
    };
    let Some((path, bytes)) = files.iter().find(|(path, _)| path.starts_with("rust")) else {
        return Err(BuildError {
            message: "the build emitted no Rust glue".to_owned(),
        });
    };
    let name = PathBuf::from(path.file_name().unwrap_or(path.as_os_str()));
    let mut files = BTreeMap::new();
    files.insert(name.clone(), bytes.clone());
    write::write_files(out, &files).map_err(|e| BuildError {
        message: format!("cannot write {}: {e}", out.join(&name).display()),
    })?;
    Ok(Compiled {
        glue: out.join(name),
        // Not the project folder itself: cargo scans a folder with everything under it,
        // `target/` included. Its files and subfolders are inputs one by one, so a module
        // added in a subfolder re-runs the script; one added at the top level waits for
        // another change (`ael.toml` or a module).
        inputs: recorder
            .inputs()
            .into_iter()
            .filter(|input| {
                driver::lexically_absolute(input).as_deref()
                    != driver::lexically_absolute(&root).as_deref()
            })
            .collect(),
    })
}
