//! The open buffers, and the [`World`] that reads them over the disk.
//!
//! The compiler reads every file through a [`World`]; the server gives it an [`OverlayWorld`],
//! so an unsaved buffer is what gets checked, and a file the editor has open but that does not
//! exist on disk yet is part of the project. Everything else is read from disk.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use crate::driver::{DiskWorld, World};
use crate::source::LineIndex;

/// One open document: the editor's text, not the disk's.
#[derive(Clone, Debug)]
pub struct Document {
    pub text: String,
    pub version: i32,
    pub lines: LineIndex,
}

impl Document {
    pub fn new(text: String, version: i32) -> Document {
        let lines = LineIndex::new(&text);
        Document {
            text,
            version,
            lines,
        }
    }

    /// Replaces the byte range `range` (clamped to char boundaries) with `new_text`.
    pub fn edit(&mut self, range: std::ops::Range<usize>, new_text: &str) {
        let end = floor_boundary(&self.text, range.end.min(self.text.len()));
        let start = floor_boundary(&self.text, range.start.min(end));
        self.text.replace_range(start..end, new_text);
        self.lines = LineIndex::new(&self.text);
    }

    pub fn replace(&mut self, text: String) {
        self.lines = LineIndex::new(&text);
        self.text = text;
    }
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Open documents by path.
#[derive(Clone, Debug, Default)]
pub struct Overlay {
    pub documents: BTreeMap<PathBuf, Document>,
}

impl Overlay {
    pub fn get(&self, path: &Path) -> Option<&Document> {
        self.documents.get(path)
    }
}

/// The disk, with open documents read from the editor instead.
pub struct OverlayWorld<'a> {
    pub overlay: &'a Overlay,
    pub disk: DiskWorld,
}

impl<'a> OverlayWorld<'a> {
    pub fn new(overlay: &'a Overlay) -> OverlayWorld<'a> {
        OverlayWorld {
            overlay,
            disk: DiskWorld,
        }
    }
}

impl World for OverlayWorld<'_> {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        match self.overlay.get(path) {
            Some(doc) => Ok(doc.text.as_bytes().to_vec()),
            None => self.disk.read(path),
        }
    }

    fn read_at_most(&self, path: &Path, limit: usize) -> io::Result<Vec<u8>> {
        match self.overlay.get(path) {
            // Only what the compiler will look at is copied: a buffer over the size bound is
            // refused (E0011) after `limit` bytes, not copied whole first.
            Some(doc) => Ok(doc.text.as_bytes()[..doc.text.len().min(limit)].to_vec()),
            None => self.disk.read_at_most(path, limit),
        }
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        let mut entries = match self.disk.read_dir(path) {
            Ok(entries) => entries,
            Err(err) if !self.is_dir(path) => return Err(err),
            Err(_) => Vec::new(),
        };
        // Unsaved new files (and the folders that hold them) appear where they would be.
        for open in self.overlay.documents.keys() {
            if let Ok(rest) = open.strip_prefix(path) {
                if let Some(first) = rest.components().next() {
                    entries.push(path.join(first));
                }
            }
        }
        entries.sort();
        entries.dedup();
        Ok(entries)
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.disk.is_dir(path)
            || self
                .overlay
                .documents
                .keys()
                .any(|open| open != path && open.starts_with(path))
    }

    fn is_file(&self, path: &Path) -> bool {
        self.overlay.get(path).is_some() || self.disk.is_file(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_buffers_shadow_the_disk() {
        let dir = std::env::temp_dir().join(format!("aelc-overlay-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.ael"), "on disk").unwrap();
        let mut overlay = Overlay::default();
        overlay
            .documents
            .insert(dir.join("a.ael"), Document::new("edited".into(), 1));
        overlay
            .documents
            .insert(dir.join("new/b.ael"), Document::new("unsaved".into(), 1));
        let world = OverlayWorld::new(&overlay);
        assert_eq!(world.read(&dir.join("a.ael")).unwrap(), b"edited");
        assert!(world.is_file(&dir.join("new/b.ael")));
        assert!(world.is_dir(&dir.join("new")));
        let entries = world.read_dir(&dir).unwrap();
        assert_eq!(entries, vec![dir.join("a.ael"), dir.join("new")]);
        assert_eq!(
            world.read_dir(&dir.join("new")).unwrap(),
            vec![dir.join("new/b.ael")]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn edits_clamp_to_char_boundaries() {
        let mut doc = Document::new("ça".into(), 1);
        doc.edit(1..99, "X");
        assert_eq!(doc.text, "X");
    }
}
