//! Writing emitted files, and `aelc build --check` (the only IO of the codegen layer).
//!
//! A file is rewritten only when its bytes changed, through a temporary file in the same folder
//! and a rename, so a reader never sees half a file and an interrupted build leaves the old file
//! whole.
//!
//! The output folder is shared with whatever else a user keeps there, so a build deletes only
//! what it wrote: [`MANIFEST`] (`.aelc-manifest` in the output folder) lists, one relative path
//! a line, the files the last build wrote, and a file it lists that this build does not write (a
//! removed node) is deleted. A file it does not list is never touched. The list is first
//! extended with what this build will write and only then are files written, so a build that
//! is interrupted still knows, the next time, every file it may have left.
//!
//! A build never follows a symbolic link below its output folder: if a folder or file it would
//! write, read or delete there is a link (a `rust/` linked to a folder elsewhere), it refuses
//! before writing anything ([`WriteError::Symlink`]). The output folder itself may be a link.
//!
//! A temporary file is `.NAME.PID.tmp` beside the file NAME it becomes. One left by an
//! interrupted build is deleted by the next build that lists NAME.
//!
//! [`write_files`] is the same without the manifest and without deleting anything, for the
//! `build.rs` API's `OUT_DIR`, which several compiled projects share.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

/// The list of the files a build wrote, in the output folder.
pub const MANIFEST: &str = ".aelc-manifest";

/// The first line of [`MANIFEST`], for whoever opens it.
const MANIFEST_HEADER: &str =
    "# The files aelc build wrote in this folder, the only ones it deletes. Do not edit.";

/// What writing did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriteReport {
    pub written: Vec<PathBuf>,
    pub unchanged: usize,
    pub removed: Vec<PathBuf>,
}

/// Why an output file is out of date.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stale {
    /// The file exists with other bytes.
    Changed(PathBuf),
    /// The build would write it; it does not exist.
    Missing(PathBuf),
    /// The last build wrote it; this one would not (and would delete it).
    Extra(PathBuf),
}

impl Stale {
    pub fn path(&self) -> &Path {
        match self {
            Stale::Changed(p) | Stale::Missing(p) | Stale::Extra(p) => p,
        }
    }

    pub fn reason(&self) -> &'static str {
        match self {
            Stale::Changed(_) => "out of date",
            Stale::Missing(_) => "missing",
            Stale::Extra(_) => "no longer produced",
        }
    }
}

/// Why writing (or checking) stopped.
#[derive(Debug)]
pub enum WriteError {
    /// A folder or file the build would go through is a symbolic link.
    Symlink { path: PathBuf },
    /// A line of [`MANIFEST`] that is no relative path inside the output folder.
    BadManifest {
        manifest: PathBuf,
        line: usize,
        entry: String,
    },
    /// Reading or writing `path` failed.
    Io { path: PathBuf, error: io::Error },
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Symlink { path } => write!(
                f,
                "{} is a symbolic link; aelc build writes and deletes only real files and \
                 folders below its output folder, never through a link (remove the link, or \
                 build into another folder with --out)",
                path.display()
            ),
            WriteError::BadManifest {
                manifest,
                line,
                entry,
            } => write!(
                f,
                "{}, line {line}: `{entry}` is not a path inside the output folder; this file \
                 lists what aelc build wrote there (delete it, and the next build deletes \
                 nothing it did not write itself)",
                manifest.display()
            ),
            WriteError::Io { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for WriteError {}

/// Writes `files` (relative paths) under `out`, and deletes the files the last build there
/// wrote that are not among them: `aelc build`, which has an output folder to itself.
pub fn write_all(
    out: &Path,
    files: &BTreeMap<PathBuf, Vec<u8>>,
) -> Result<WriteReport, WriteError> {
    let listed = read_manifest(out)?;
    let wanted: BTreeSet<PathBuf> = files.keys().cloned().collect();
    let all: BTreeSet<PathBuf> = listed.union(&wanted).cloned().collect();
    for rel in all.iter().chain([&PathBuf::from(MANIFEST)]) {
        refuse_links(out, rel)?;
    }
    remove_leftover_temps(out, &all)?;
    // Listed before written: an interrupted build leaves no file the next one does not know.
    if all != listed {
        write_manifest(out, &all)?;
    }
    let mut report = write_changed(out, files)?;
    for rel in listed.difference(&wanted) {
        let path = out.join(rel);
        match fs::remove_file(&path) {
            Ok(()) => report.removed.push(rel.clone()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(WriteError::Io { path, error }),
        }
    }
    if wanted != all {
        write_manifest(out, &wanted)?;
    }
    Ok(report)
}

/// Writes `files` (relative paths) under `out` and deletes nothing, keeping no manifest: the
/// `build.rs` API, whose `OUT_DIR` is shared by every project a build script compiles (each
/// call would otherwise delete the glue of the one before).
pub fn write_files(
    out: &Path,
    files: &BTreeMap<PathBuf, Vec<u8>>,
) -> Result<WriteReport, WriteError> {
    let wanted: BTreeSet<PathBuf> = files.keys().cloned().collect();
    for rel in &wanted {
        refuse_links(out, rel)?;
    }
    remove_leftover_temps(out, &wanted)?;
    write_changed(out, files)
}

/// Writes each of `files` whose bytes differ from the file's under `out` (links refused).
fn write_changed(
    out: &Path,
    files: &BTreeMap<PathBuf, Vec<u8>>,
) -> Result<WriteReport, WriteError> {
    let mut report = WriteReport::default();
    for (rel, bytes) in files {
        let path = out.join(rel);
        // A file of another size differs: no need to read it to know.
        let same_len = fs::metadata(&path).is_ok_and(|m| m.len() == bytes.len() as u64);
        if same_len && fs::read(&path).is_ok_and(|old| &old == bytes) {
            report.unchanged += 1;
            continue;
        }
        write_atomic(&path, bytes).map_err(|error| WriteError::Io { path, error })?;
        report.written.push(rel.clone());
    }
    Ok(report)
}

/// What `--check` reports: every file that differs from what the build would write, sorted.
/// It refuses what the build would refuse.
pub fn check(out: &Path, files: &BTreeMap<PathBuf, Vec<u8>>) -> Result<Vec<Stale>, WriteError> {
    let listed = read_manifest(out)?;
    for rel in listed.iter().chain(files.keys()) {
        refuse_links(out, rel)?;
    }
    let mut stale = Vec::new();
    for (rel, bytes) in files {
        let path = out.join(rel);
        match fs::read(&path) {
            Ok(old) if &old == bytes => {}
            Ok(_) => stale.push(Stale::Changed(rel.clone())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                stale.push(Stale::Missing(rel.clone()))
            }
            Err(error) => return Err(WriteError::Io { path, error }),
        }
    }
    for rel in listed {
        if !files.contains_key(&rel) && out.join(&rel).exists() {
            stale.push(Stale::Extra(rel));
        }
    }
    stale.sort();
    Ok(stale)
}

/// Refuses `rel` when a folder on the way to it below `out`, or the file itself, is a symbolic
/// link. What does not exist yet is created by the build as a real folder or file.
fn refuse_links(out: &Path, rel: &Path) -> Result<(), WriteError> {
    let mut path = out.to_path_buf();
    for component in rel.components() {
        path.push(component);
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(WriteError::Symlink { path });
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(WriteError::Io { path, error }),
        }
    }
    Ok(())
}

/// The files [`MANIFEST`] lists (none when there is no manifest yet).
fn read_manifest(out: &Path) -> Result<BTreeSet<PathBuf>, WriteError> {
    let manifest = out.join(MANIFEST);
    refuse_links(out, Path::new(MANIFEST))?;
    let text = match fs::read(&manifest) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(BTreeSet::new()),
        Err(error) => {
            return Err(WriteError::Io {
                path: manifest,
                error,
            })
        }
    };
    let mut listed = BTreeSet::new();
    for (index, line) in text.lines().enumerate() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let rel = PathBuf::from(line);
        let inside = rel.components().all(|c| matches!(c, Component::Normal(_)));
        if !inside || line == MANIFEST {
            return Err(WriteError::BadManifest {
                manifest,
                line: index + 1,
                entry: line.to_owned(),
            });
        }
        listed.insert(rel);
    }
    Ok(listed)
}

/// Writes [`MANIFEST`] (through [`write_atomic`]): its header, then `files` one a line with `/` between folders, sorted.
fn write_manifest(out: &Path, files: &BTreeSet<PathBuf>) -> Result<(), WriteError> {
    let mut text = format!("{MANIFEST_HEADER}\n");
    for rel in files {
        let parts: Vec<_> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect();
        text.push_str(&parts.join("/"));
        text.push('\n');
    }
    let path = out.join(MANIFEST);
    write_atomic(&path, text.as_bytes()).map_err(|error| WriteError::Io { path, error })
}

/// Deletes the temporary files an interrupted build left beside the files of `files`.
fn remove_leftover_temps(out: &Path, files: &BTreeSet<PathBuf>) -> Result<(), WriteError> {
    let mut by_folder: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
    for rel in files.iter().chain([&PathBuf::from(MANIFEST)]) {
        let folder = out.join(rel.parent().unwrap_or(Path::new("")));
        if let Some(name) = rel.file_name() {
            by_folder
                .entry(folder)
                .or_default()
                .insert(name.to_string_lossy().into_owned());
        }
    }
    for (folder, names) in by_folder {
        let entries = match fs::read_dir(&folder) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(error) => {
                return Err(WriteError::Io {
                    path: folder,
                    error,
                })
            }
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let is_file = entry.file_type().is_ok_and(|t| t.is_file());
            if is_file && temp_of(&name).is_some_and(|of| names.contains(of)) {
                let path = entry.path();
                fs::remove_file(&path).map_err(|error| WriteError::Io { path, error })?;
            }
        }
    }
    Ok(())
}

/// The file a temporary file named `.NAME.PID.tmp` was to become: `NAME`.
fn temp_of(name: &str) -> Option<&str> {
    let (of, pid) = name
        .strip_prefix('.')?
        .strip_suffix(".tmp")?
        .rsplit_once('.')?;
    (!pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())).then_some(of)
}

/// Writes through `.<name>.<pid>.tmp` in the same folder, then renames over the target.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        // No `sync_all`: the rename already keeps a reader or an interrupted build from seeing
        // half a file, and forcing every file to disk cost 90% of a large build (benches/build.rs:
        // 22.7 s of 25.3 s for 4,245 files). Like cargo and rustc, durability across a power
        // loss is left to the file system.
        drop(file);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::{temp_of, write_files, MANIFEST};
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    /// The `build.rs` API compiles several projects into one `OUT_DIR`: the second never
    /// deletes the first's glue (examples/review-rs writes `review.rs`, then `review_bench.rs`).
    #[test]
    fn writing_files_deletes_nothing() {
        let dir = std::env::temp_dir().join(format!("aelc-write-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let one = |name: &str| BTreeMap::from([(PathBuf::from(name), b"x".to_vec())]);
        assert!(write_files(&dir, &one("review.rs")).is_ok());
        assert!(write_files(&dir, &one("review_bench.rs")).is_ok());
        assert!(dir.join("review.rs").is_file() && dir.join("review_bench.rs").is_file());
        assert!(!dir.join(MANIFEST).exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn temporary_names() {
        assert_eq!(temp_of(".ir.json.4242.tmp"), Some("ir.json"));
        assert_eq!(temp_of(".a.b.1.tmp"), Some("a.b"));
        assert_eq!(temp_of(".ir.json.tmp"), None);
        assert_eq!(temp_of("ir.json.42.tmp"), None);
        assert_eq!(temp_of(".ir.json.x42.tmp"), None);
    }
}
