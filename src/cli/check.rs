//! `aelc check [DIR|FILE]`: diagnostics only, a project's publishing rules included (the ones
//! `aelc build` refuses to emit with, [`driver::check_publishing_rules`]).

use std::path::{Path, PathBuf};

use super::args::CheckArgs;
use super::{shown, Output, Status};
use crate::driver::{self, DiskWorld, World};

pub fn run(out: &Output, args: &CheckArgs) -> Status {
    let path = args.path.clone().unwrap_or_else(|| PathBuf::from("."));
    let world = DiskWorld;
    // A folder is checked as the project it belongs to (its own `ael.toml`, or the first one
    // above it: checking a project's subfolder alone would report its imports and prompt
    // files as missing), or as loose modules when no project holds it. A file of a project is
    // checked in that project, for its own diagnostics; a file outside any is checked alone,
    // under the name it was given by. Project files are named as paths from here.
    let is_file = world.is_file(&path);
    if !is_file && !world.is_dir(&path) {
        return out.fatal(&format!(
            "cannot read {}: there is no such file or folder",
            path.display()
        ));
    }
    let mut only_file = None;
    // The project checked, if any, and the folder files are named from.
    let (project, shown_from) = if is_file {
        match project_of_file(&world, &path) {
            Some((root, relative)) => {
                only_file = Some(relative);
                (Some(root.clone()), Some(root))
            }
            None => (None, None),
        }
    } else if driver::has_manifest(&world, &path) {
        (Some(path.clone()), Some(path.clone()))
    } else if let Some(root) = driver::find_project_root(&world, &path) {
        (Some(root.clone()), Some(root))
    } else {
        (None, Some(path.clone()))
    };
    let checked = match &project {
        Some(root) => driver::check_project_lean(&world, root),
        None => driver::check_path_lean(&world, &path),
    };
    let mut compilation = match checked {
        Ok(c) => c,
        Err(err) => return out.fatal(&format!("cannot read {}: {err}", path.display())),
    };
    if let Some(root) = &project {
        // What `aelc build` refuses, `aelc check` reports: the same rules, at the same places.
        if let Err(message) = driver::check_publishing_rules(&world, root, &mut compilation) {
            return out.fatal(&message);
        }
    }
    // A folder without a single `.ael` file: say so rather than pass in silence. In a project
    // that is its `ael.toml` alone (checked, as a new project may be); elsewhere nothing was
    // checked at all, which is an error, since a folder was named to be checked.
    if !is_file {
        let modules = driver::collect_sources(&world, shown_from.as_deref().unwrap_or(&path));
        if modules.is_ok_and(|m| m.is_empty()) {
            match &shown_from {
                Some(root) if driver::has_manifest(&world, root) => super::eprint_line(&format!(
                    "note: the project at {} has no .ael files; only its ael.toml was checked",
                    shown::display(root, std::env::current_dir().ok().as_deref())
                )),
                _ => {
                    super::eprint_line(&format!(
                        "error: no .ael files in {}, and no ael.toml at or above it: nothing \
                         to check",
                        path.display()
                    ));
                    return Status::Failed;
                }
            }
        }
    }
    if let Some(relative) = &only_file {
        // A file of a project is checked in its project (its imports and prompt files
        // resolve), and what is reported is what concerns that file.
        let sources = &compilation.sources;
        compilation.diagnostics.retain(|d| {
            d.primary_span()
                .and_then(|span| sources.get(span.file))
                .is_some_and(|file| Path::new(&file.name) == relative.as_path())
        });
    }
    if let Some(root) = shown_from {
        shown::name_from_current_dir(&mut compilation.sources, &root);
    }
    out.diagnostics(&compilation.sources, &compilation.diagnostics);
    let status = if compilation.diagnostics.iter().any(|d| d.is_error()) {
        Status::Failed
    } else {
        Status::Ok
    };
    // The process ends with this command: its memory goes back to the system at once, so the
    // syntax trees and the program are not freed node by node first (clang's driver does the
    // same, `-disable-free`). Nothing else is held: the output is written and flushed.
    std::mem::forget(compilation);
    status
}

/// The project holding the file at `path` (an `.ael` file with an `ael.toml` at or above its
/// folder), and the file's path relative to the project's root, as the driver names it.
fn project_of_file(world: &dyn World, path: &Path) -> Option<(PathBuf, PathBuf)> {
    let root = driver::find_project_root(world, path)?;
    let absolute = driver::lexically_absolute(path)?;
    let relative = shown::relative_to(&absolute, &root)?;
    // A file outside the root (`..`) is no module of the project.
    if relative
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return None;
    }
    Some((root, relative))
}
