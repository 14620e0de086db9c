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
//! [`compile`] checks the project, emits its Rust glue into `OUT_DIR` (atomically, and only
//! when the bytes changed, so cargo does not rebuild for nothing), and prints
//! `cargo:rerun-if-changed` for `ael.toml`, every source file, every prompt and every example,
//! so cargo re-runs the build script exactly when one of them changes. Errors come back as
//! rendered diagnostics; nothing is written then.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::codegen::{rust, write};
use crate::diagnostics::render;
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

/// Compiles the project of `ael_toml` and writes its glue into `out` (no cargo output).
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
    let compilation = driver::check_path(&world, &root).map_err(|e| BuildError {
        message: format!("cannot read {}: {e}", root.display()),
    })?;
    let mut inputs = vec![ael_toml.to_path_buf()];
    inputs.extend(driver::collect_sources(&world, &root).unwrap_or_default());
    let program = match (&compilation.program, compilation.has_errors()) {
        (Some(p), false) => p,
        _ => {
            return Err(BuildError {
                message: render::human(
                    &compilation.sources,
                    &compilation.diagnostics,
                    render::Color::Never,
                ),
            })
        }
    };
    for node in &program.nodes {
        if let Some(prompt) = &node.config.prompt {
            inputs.push(root.join(prompt));
        }
    }
    inputs.sort();
    inputs.dedup();
    let text = rust::glue(program).map_err(|d| BuildError {
        message: render::human(&compilation.sources, &d, render::Color::Never),
    })?;
    let name = format!("{}.rs", rust::file_stem(&program.package.name));
    let mut files = BTreeMap::new();
    files.insert(PathBuf::from(&name), text.into_bytes());
    write::write_files(out, &files).map_err(|e| BuildError {
        message: format!("cannot write {}: {e}", out.join(&name).display()),
    })?;
    Ok(Compiled {
        glue: out.join(name),
        inputs,
    })
}
