//! Writing emitted files, and `aelc build --check` (the only IO of the codegen layer).
//!
//! A file is rewritten only when its bytes changed, through a temporary file in the same folder
//! and a rename, so a reader never sees half a file and an interrupted build leaves the old file
//! whole. Files that a previous build wrote and this one does not (a removed node) are deleted,
//! but only inside the folders the build owns ([`OWNED`]), so nothing else under the output
//! folder is touched.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The folders and files under the output folder that `aelc build` owns.
pub const OWNED: &[&str] = &[
    "schemas",
    "model",
    "mcp",
    "agents",
    "ir.json",
    "ir.schema.json",
    "rust",
];

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
    /// It exists in an owned folder; the build would not write it.
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

/// Writes `files` (relative paths) under `out`.
pub fn write_all(out: &Path, files: &BTreeMap<PathBuf, Vec<u8>>) -> io::Result<WriteReport> {
    let mut report = WriteReport::default();
    for (rel, bytes) in files {
        let path = out.join(rel);
        if fs::read(&path).is_ok_and(|old| &old == bytes) {
            report.unchanged += 1;
            continue;
        }
        write_atomic(&path, bytes)?;
        report.written.push(rel.clone());
    }
    for rel in existing_owned(out)? {
        if !files.contains_key(&rel) {
            fs::remove_file(out.join(&rel))?;
            report.removed.push(rel);
        }
    }
    Ok(report)
}

/// What `--check` reports: every file that differs from what the build would write, sorted.
pub fn check(out: &Path, files: &BTreeMap<PathBuf, Vec<u8>>) -> io::Result<Vec<Stale>> {
    let mut stale = Vec::new();
    for (rel, bytes) in files {
        match fs::read(out.join(rel)) {
            Ok(old) if &old == bytes => {}
            Ok(_) => stale.push(Stale::Changed(rel.clone())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                stale.push(Stale::Missing(rel.clone()))
            }
            Err(e) => return Err(e),
        }
    }
    for rel in existing_owned(out)? {
        if !files.contains_key(&rel) {
            stale.push(Stale::Extra(rel));
        }
    }
    stale.sort();
    Ok(stale)
}

/// Writes through `.<name>.tmp` in the same folder, then renames over the target.
fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
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

/// Every file currently in the owned folders (relative paths), skipping temporary files.
fn existing_owned(out: &Path) -> io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for owned in OWNED {
        let root = out.join(owned);
        if root.is_file() {
            found.push(PathBuf::from(owned));
            continue;
        }
        if !root.is_dir() {
            continue;
        }
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            for entry in fs::read_dir(&dir)? {
                let path = entry?.path();
                if path.is_dir() {
                    stack.push(path);
                } else if !path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                {
                    if let Ok(rel) = path.strip_prefix(out) {
                        found.push(rel.to_path_buf());
                    }
                }
            }
        }
    }
    found.sort();
    Ok(found)
}
