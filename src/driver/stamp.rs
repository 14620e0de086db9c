//! The build stamp (`.aelc-stamp` in the output folder): what the last clean `aelc build` read
//! and wrote, so that a build with nothing changed skips checking, emitting and writing and
//! only hashes (issue 23: 0.98 s for an unchanged 1,000-node project before).
//!
//! **What it records.** The build reads its project through a [`Recorder`], a [`World`] that
//! notes every question asked of the disk and its answer: each file read (`ael.toml`, every
//! module, every prompt, every example, as the SHA-256 of the bytes read), each folder listed
//! (the names in it, so a new module or a new example file is a change), and each "is this a
//! file / a folder" (so a prompt that did not exist and now does is a change). That is every
//! input by construction: all the compiler's IO goes through the [`World`]. Then the
//! compiler (its version, and the size and modification time of the running executable, so a
//! rebuilt `aelc` of the same version counts as another compiler), the project root, and each
//! file written (with the output folder's [`crate::codegen::write::MANIFEST`]): its size and
//! modification time.
//!
//! **When a build is skipped.** When the stamp parses, names this compiler and root, every
//! question asked again of the disk gets the same answer, and every output file is there with
//! the recorded size and modification time (so a deleted or hand-edited output rebuilds). Any
//! difference, or any doubt (an unreadable stamp, a path that is not UTF-8), is a full build.
//!
//! **What a skipped build prints.** What the recorded build printed: its diagnostics (warnings
//! only, since a build with an error writes nothing) are kept in the stamp as they were
//! rendered ([`Replay`]), and a skipped build prints them again, byte for byte, before its
//! summary, as cargo replays a fresh crate's warnings. So warnings never hide and never cost a
//! build (a project with 114 warnings rebuilt every time, 3.8–4.2 s for nothing). The
//! rendering depends on how it is asked for (human or JSON, colour, the folder `aelc` runs in,
//! which names the files), so the replay carries that as its key, and a build asked for
//! another way builds.
//!
//! **When one is written.** After every build that wrote its files (so with warnings at most).
//! A build that cannot record reliably (a file that changed while it was read) deletes the
//! stamp instead.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use aelc_runtime::receipt::sha256_hex;
use serde::{Deserialize, Serialize};

use super::{DiskWorld, World};

/// The stamp's file name in the output folder.
pub const STAMP: &str = ".aelc-stamp";

/// The stamp's format; another one is a full build.
const FORMAT: u32 = 2;

/// One question asked of the disk.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
enum Question {
    Read(String),
    ReadAtMost(String, usize),
    ReadDir(String),
    IsDir(String),
    IsFile(String),
}

/// A [`World`] over another that records every question and its answer.
pub struct Recorder<'w> {
    world: &'w dyn World,
    /// The output folder, absolute: not an input (see [`dir_answer`]).
    out: PathBuf,
    answers: RefCell<BTreeMap<Question, String>>,
    /// A question got two answers, or a path was not UTF-8: no stamp can be trusted.
    unreliable: Cell<bool>,
}

impl<'w> Recorder<'w> {
    /// A recorder of the build of a project into `out`.
    pub fn new(world: &'w dyn World, out: &Path) -> Recorder<'w> {
        Recorder {
            world,
            out: absolute(out),
            answers: RefCell::new(BTreeMap::new()),
            unreliable: Cell::new(false),
        }
    }

    /// Every file read and every folder listed so far (not the ones that were missing):
    /// the build's inputs, for `cargo:rerun-if-changed` (`aelc::build::compile`).
    pub fn inputs(&self) -> Vec<PathBuf> {
        let answers = self.answers.borrow();
        let mut inputs: Vec<PathBuf> = answers
            .iter()
            .filter(|(_, answer)| !answer.starts_with("error "))
            .filter_map(|(question, _)| match question {
                Question::Read(p) | Question::ReadAtMost(p, _) | Question::ReadDir(p) => {
                    Some(PathBuf::from(p))
                }
                Question::IsDir(_) | Question::IsFile(_) => None,
            })
            .collect();
        inputs.sort();
        inputs.dedup();
        inputs
    }

    fn note(&self, question: Option<Question>, answer: String) {
        let Some(question) = question else {
            self.unreliable.set(true);
            return;
        };
        let mut answers = self.answers.borrow_mut();
        match answers.get(&question) {
            Some(old) if *old != answer => self.unreliable.set(true),
            Some(_) => {}
            None => {
                answers.insert(question, answer);
            }
        }
    }
}

/// The path as stamp text; `None` when it is not UTF-8 (it could not be told apart).
fn text(path: &Path) -> Option<String> {
    path.to_str().map(str::to_owned)
}

fn read_answer(result: &io::Result<Vec<u8>>) -> String {
    match result {
        Ok(bytes) => sha256_hex(bytes),
        Err(e) => format!("error {:?}", e.kind()),
    }
}

/// `path` made absolute, to be compared with the paths the driver asks about.
fn absolute(path: &Path) -> PathBuf {
    super::lexically_absolute(path).unwrap_or_else(|| path.to_path_buf())
}

/// The names in a folder, less the output folder or the folder holding it (`target` of
/// `target/ael`): the build itself creates it, which is no change of the project (else the
/// build after the first would always build again).
fn dir_answer(result: &io::Result<Vec<PathBuf>>, out: &Path) -> String {
    match result {
        Ok(entries) => {
            let mut names = String::new();
            for entry in entries.iter().filter(|e| !out.starts_with(e)) {
                names.push_str(&entry.to_string_lossy());
                names.push('\n');
            }
            sha256_hex(names.as_bytes())
        }
        Err(e) => format!("error {:?}", e.kind()),
    }
}

impl World for Recorder<'_> {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let result = self.world.read(path);
        self.note(text(path).map(Question::Read), read_answer(&result));
        result
    }

    fn read_at_most(&self, path: &Path, limit: usize) -> io::Result<Vec<u8>> {
        let result = self.world.read_at_most(path, limit);
        self.note(
            text(path).map(|p| Question::ReadAtMost(p, limit)),
            read_answer(&result),
        );
        result
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        let result = self.world.read_dir(path);
        self.note(
            text(path).map(Question::ReadDir),
            dir_answer(&result, &self.out),
        );
        result
    }

    fn is_dir(&self, path: &Path) -> bool {
        let answer = self.world.is_dir(path);
        self.note(text(path).map(Question::IsDir), answer.to_string());
        answer
    }

    fn is_file(&self, path: &Path) -> bool {
        let answer = self.world.is_file(path);
        self.note(text(path).map(Question::IsFile), answer.to_string());
        answer
    }
}

/// An output file as the stamp knows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Written {
    /// Relative to the output folder.
    path: String,
    len: u64,
    /// Nanoseconds since the Unix epoch.
    modified: u128,
}

/// What a build printed of its diagnostics, kept to be printed again by the builds it lets
/// skip (see the module doc). Empty texts for a build without diagnostics.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replay {
    /// How the texts were rendered (format, colour, current folder): a build asked to render
    /// another way does not skip.
    pub key: String,
    pub stdout: String,
    pub stderr: String,
}

/// What [`up_to_date`] found: the build can be skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpToDate {
    /// How many files the last build wrote.
    pub files: usize,
    /// What it printed of its diagnostics, to print again.
    pub replay: Replay,
}

/// The stamp file's content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    format: u32,
    compiler: String,
    root: String,
    inputs: Vec<(Question, String)>,
    outputs: Vec<Written>,
    replay: Replay,
}

/// This compiler: its version, and the running executable's size and modification time.
fn compiler() -> String {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| fs::metadata(p).ok());
    let (len, modified) = exe.map_or((0, 0), |m| (m.len(), modified_ns(&m)));
    format!("aelc {} {len} {modified}", env!("CARGO_PKG_VERSION"))
}

fn modified_ns(meta: &fs::Metadata) -> u128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

/// What the output file `rel` under `out` is now; `None` when it is missing or is a link.
fn written(out: &Path, rel: &str) -> Option<Written> {
    let meta = fs::symlink_metadata(out.join(rel)).ok()?;
    meta.is_file().then(|| Written {
        path: rel.to_owned(),
        len: meta.len(),
        modified: modified_ns(&meta),
    })
}

/// The last build's file count and printed diagnostics when the stamp in `out` says that
/// building `root` now, rendering diagnostics as `render_key` says, would change nothing;
/// `None` when it must build.
pub fn up_to_date(root: &Path, out: &Path, render_key: &str) -> Option<UpToDate> {
    // Never through a link (see `codegen::write`): a stamp that is one is no stamp.
    written(out, STAMP)?;
    let bytes = fs::read(out.join(STAMP)).ok()?;
    let stamp: Stamp = serde_json::from_slice(&bytes).ok()?;
    if stamp.format != FORMAT
        || stamp.compiler != compiler()
        || Some(stamp.root) != text(root)
        || stamp.replay.key != render_key
    {
        return None;
    }
    for w in &stamp.outputs {
        if written(out, &w.path).as_ref() != Some(w) {
            return None;
        }
    }
    let disk = DiskWorld;
    let out_abs = absolute(out);
    for (question, answer) in &stamp.inputs {
        let now = match question {
            Question::Read(p) => read_answer(&disk.read(Path::new(p))),
            Question::ReadAtMost(p, limit) => read_answer(&disk.read_at_most(Path::new(p), *limit)),
            Question::ReadDir(p) => dir_answer(&disk.read_dir(Path::new(p)), &out_abs),
            Question::IsDir(p) => disk.is_dir(Path::new(p)).to_string(),
            Question::IsFile(p) => disk.is_file(Path::new(p)).to_string(),
        };
        if now != *answer {
            return None;
        }
    }
    Some(UpToDate {
        // The manifest is among the outputs; it is not an emitted file.
        files: stamp.outputs.len().saturating_sub(1),
        replay: stamp.replay,
    })
}

/// Records, in `out`, that building `root` read what `recorder` saw, wrote `files` (paths
/// relative to `out`, the manifest added) and printed `replay`. Deletes the stamp instead when
/// the record cannot be trusted; a stamp that cannot be written only costs the next build its
/// shortcut.
pub fn record<'p>(
    root: &Path,
    out: &Path,
    recorder: &Recorder<'_>,
    files: impl IntoIterator<Item = &'p PathBuf>,
    replay: &Replay,
) {
    let path = out.join(STAMP);
    let stamp = (|| {
        if recorder.unreliable.get() {
            return None;
        }
        let mut outputs = Vec::new();
        let manifest = Path::new(crate::codegen::write::MANIFEST);
        for rel in files.into_iter().map(PathBuf::as_path).chain([manifest]) {
            let parts: Vec<&str> = rel
                .components()
                .map(|c| c.as_os_str().to_str())
                .collect::<Option<_>>()?;
            outputs.push(written(out, &parts.join("/"))?);
        }
        let inputs = recorder
            .answers
            .borrow()
            .iter()
            .map(|(q, a)| (q.clone(), a.clone()))
            .collect();
        Some(Stamp {
            format: FORMAT,
            compiler: compiler(),
            root: text(root)?,
            inputs,
            outputs,
            replay: replay.clone(),
        })
    })();
    // Never through a link: the output folder's files are real files (see `codegen::write`).
    let is_link = fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
    match stamp.and_then(|s| serde_json::to_vec(&s).ok()) {
        Some(bytes) if !is_link => {
            if crate::codegen::write::write_atomic(&path, &bytes).is_err() {
                let _ = fs::remove_file(&path);
            }
        }
        _ if is_link => {}
        _ => forget(out),
    }
}

/// Deletes the stamp in `out`, so that the next build builds.
pub fn forget(out: &Path) {
    let path = out.join(STAMP);
    if fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
        let _ = fs::remove_file(path);
    }
}
