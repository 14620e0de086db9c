//! `aelc fmt [--check] [FILES]`: canonical formatting.
//!
//! Every `.ael` file at the given paths (files, or folders searched the way `aelc check` does)
//! is formatted; without paths, every file of the project the current folder belongs to.
//! Without `--check` a changed file is rewritten atomically: the new text goes to a
//! temporary file in the same folder, which then replaces the original, so an interrupted run
//! never leaves half a file. With `--check` nothing is written; the files that would change are
//! listed (with `--message-format json`, a line `{"file": …, "formatted": false}` each) and
//! the exit status is 1. A file with syntax errors is reported and left untouched
//! (exit 1). Unreadable paths are exit 2.
//!
//! A file that is a symbolic link is formatted through it: the file it points to is rewritten
//! (atomically, beside itself) and the link is kept. The temporary file is
//! `.NAME.aelc-fmt-PID.tmp`; one left behind by an interrupted run is deleted by the next run
//! that formats a file of that folder.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::args::{FmtArgs, MessageFormat};
use super::{shown, Output, Status};
use crate::driver::{self, DiskWorld};
use crate::source::SourceMap;
use crate::span::FileId;
use crate::syntax::{self, format};

pub fn run(out: &Output, args: &FmtArgs) -> Status {
    // Without paths: the whole project the current folder belongs to (its `ael.toml` here or
    // above, as for every command), named from here; outside a project, this folder.
    let roots = if args.files.is_empty() {
        let here = PathBuf::from(".");
        vec![driver::find_project_root(&DiskWorld, &here).unwrap_or(here)]
    } else {
        args.files.clone()
    };
    let cwd = std::env::current_dir().ok();
    let mut status = Status::Ok;
    let mut changed = 0usize;
    let mut unchanged = 0usize;
    for root in &roots {
        let files = match driver::collect_sources(&DiskWorld, root) {
            Ok(files) => files,
            Err(err) => {
                status = worst(
                    status,
                    out.fatal(&format!(
                        "cannot read {}: {err}",
                        shown::display(root, cwd.as_deref())
                    )),
                );
                continue;
            }
        };
        if !args.check {
            remove_leftover_temps(&files);
        }
        for file in files {
            // The name the file is shown under, in diagnostics and messages alike.
            let name = shown::display(&file, cwd.as_deref());
            match format_file(out, &file, &name, args.check) {
                Ok(FileOutcome::Unchanged) => unchanged += 1,
                Ok(FileOutcome::Changed) => {
                    changed += 1;
                    if args.check {
                        super::print_line(&match out.format {
                            MessageFormat::Human => format!("would reformat {name}"),
                            MessageFormat::Json => {
                                serde_json::json!({ "file": name, "formatted": false }).to_string()
                            }
                        });
                        status = worst(status, Status::Failed);
                    }
                }
                Ok(FileOutcome::SyntaxErrors) => status = worst(status, Status::Failed),
                Err(err) => {
                    status = worst(status, out.fatal(&format!("{name}: {err}")));
                }
            }
        }
    }
    let verb = if args.check {
        "would be reformatted"
    } else {
        "reformatted"
    };
    super::eprint_line(&format!(
        "{changed} file(s) {verb}, {unchanged} file(s) already formatted"
    ));
    status
}

enum FileOutcome {
    Unchanged,
    Changed,
    SyntaxErrors,
}

/// The more serious of two outcomes.
fn worst(a: Status, b: Status) -> Status {
    let rank = |s: Status| match s {
        Status::Ok => 0,
        Status::Failed => 1,
        Status::Usage => 2,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

fn format_file(out: &Output, path: &Path, name: &str, check: bool) -> io::Result<FileOutcome> {
    let bytes = fs::read(path)?;
    let (text, bad_utf8) = crate::source::decode_source(FileId(0), bytes);
    let mut sources = SourceMap::new();
    let file = sources.add(name, text.clone());
    if let Some(diagnostic) = bad_utf8 {
        out.diagnostics(&sources, &[diagnostic]);
        return Ok(FileOutcome::SyntaxErrors);
    }
    let parse = syntax::parse(file, &text);
    let formatted = match format::format(&parse, &text) {
        Ok(formatted) => formatted,
        Err(errors) => {
            out.diagnostics(&sources, &errors);
            return Ok(FileOutcome::SyntaxErrors);
        }
    };
    if formatted == text {
        return Ok(FileOutcome::Unchanged);
    }
    if !check {
        write_atomically(path, formatted.as_bytes())?;
    }
    Ok(FileOutcome::Changed)
}

/// Writes `contents` to a temporary file beside the file `path` names, then renames it over
/// that file. A symbolic link is written through: the file it points to gets the new text (its
/// temporary file beside it), and the link stays a link.
fn write_atomically(path: &Path, contents: &[u8]) -> io::Result<()> {
    let path = &written_file(path)?;
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = folder.join(format!(".{name}{TEMP_MARK}{}.tmp", std::process::id()));
    let result = (|| {
        fs::write(&temp, contents)?;
        if let Ok(metadata) = fs::metadata(path) {
            fs::set_permissions(&temp, metadata.permissions())?;
        }
        fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// What a temporary file's name holds between the file's name and the process id:
/// `.NAME.aelc-fmt-PID.tmp`.
const TEMP_MARK: &str = ".aelc-fmt-";

/// The file that writing to `path` changes: `path`, or the file a symbolic link at `path`
/// points to (through every link).
fn written_file(path: &Path) -> io::Result<PathBuf> {
    if fs::symlink_metadata(path)?.file_type().is_symlink() {
        fs::canonicalize(path)
    } else {
        Ok(path.to_path_buf())
    }
}

/// Deletes the temporary files an interrupted `aelc fmt` left in the folders of `files` and of
/// the files their links point to (`.NAME.aelc-fmt-PID.tmp`, NAME an `.ael` file). Best
/// effort: a folder that cannot be listed keeps them, and formatting goes on.
fn remove_leftover_temps(files: &[PathBuf]) {
    let mut folders: Vec<PathBuf> = files
        .iter()
        .flat_map(|file| [Some(file.clone()), written_file(file).ok()])
        .flatten()
        .map(|file| match file.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        })
        .collect();
    folders.sort();
    folders.dedup();
    for folder in folders {
        for entry in fs::read_dir(&folder).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if is_leftover_temp(&name) && entry.file_type().is_ok_and(|t| t.is_file()) {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}

/// Whether `name` is `.NAME.aelc-fmt-PID.tmp` with NAME an `.ael` file.
fn is_leftover_temp(name: &str) -> bool {
    let Some(inner) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".tmp")) else {
        return false;
    };
    inner.rsplit_once(TEMP_MARK).is_some_and(|(of, pid)| {
        of.ends_with(".ael") && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests {
    use super::is_leftover_temp;

    #[test]
    fn leftover_temporary_names() {
        assert!(is_leftover_temp(".review.node.ael.aelc-fmt-4242.tmp"));
        assert!(!is_leftover_temp(".review.node.ael.aelc-fmt-.tmp"));
        assert!(!is_leftover_temp(".notes.txt.aelc-fmt-42.tmp"));
        assert!(!is_leftover_temp("review.node.ael.aelc-fmt-42.tmp"));
        assert!(!is_leftover_temp(".review.node.ael.4242.tmp"));
    }
}
