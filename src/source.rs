//! Source files and the line index that turns byte offsets into lines and columns.

pub mod error;

use crate::diagnostics::Diagnostic;
use crate::span::{FileId, Span};
use error::SourceError;

/// One file the compiler has read. `name` is the path as given (relative to the project root
/// when the file belongs to a project), used verbatim in diagnostics.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    /// Made when first asked for ([`SourceFile::lines`]): only a file with something to show
    /// needs its lines, and the index of every file of a large project cost 5 bytes per
    /// source line of `aelc check`'s peak (issue 23).
    line_index: std::sync::OnceLock<LineIndex>,
    /// A `std` module built into `aelc`: its name (`std/text.ael`) is no path on disk, so
    /// [`SourceMap::rename_files`] leaves it alone.
    pub embedded: bool,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        SourceFile {
            name: name.into(),
            text: text.into(),
            line_index: std::sync::OnceLock::new(),
            embedded: false,
        }
    }

    /// Where the file's lines start, indexed on first use.
    pub fn lines(&self) -> &LineIndex {
        self.line_index.get_or_init(|| LineIndex::new(&self.text))
    }

    /// The text a span covers; empty when the span does not fit (never panics).
    pub fn slice(&self, span: Span) -> &str {
        self.text.get(span.range()).unwrap_or("")
    }
}

/// All files of one compilation, addressed by [`FileId`].
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let id = FileId(self.files.len() as u32);
        self.files.push(SourceFile::new(name, text));
        id
    }

    /// Adds a file built into `aelc` (a `std` module), which has no place on disk.
    pub fn add_embedded(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let id = self.add(name, text);
        if let Some(file) = self.files.last_mut() {
            file.embedded = true;
        }
        id
    }

    /// Renames every file read from disk (embedded ones keep their names). The driver names a
    /// project's files relative to its root, which the LSP, `ir.json` and the tests want; the
    /// command line renames them as seen from where it runs (`cli::shown`).
    pub fn rename_files(&mut self, rename: impl Fn(&str) -> String) {
        for file in self.files.iter_mut().filter(|f| !f.embedded) {
            file.name = rename(&file.name);
        }
    }

    /// Lends file `id`'s text out of the map, leaving it empty until [`SourceMap::give_back`]:
    /// a pass that reads some texts on other threads while it changes the map and everything
    /// beside it (sema parsing bodies ahead of checking them) so holds them apart, without a
    /// copy.
    pub fn lend(&mut self, id: FileId) -> String {
        self.files
            .get_mut(id.0 as usize)
            .map(|f| std::mem::take(&mut f.text))
            .unwrap_or_default()
    }

    /// Puts back a text [`SourceMap::lend`] lent.
    pub fn give_back(&mut self, id: FileId, text: String) {
        if let Some(file) = self.files.get_mut(id.0 as usize) {
            file.text = text;
        }
    }

    pub fn get(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize)
    }

    pub fn files(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| (FileId(i as u32), f))
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Forgets the files added after the first `len`: a check run again adds its prompt
    /// templates again.
    pub fn truncate(&mut self, len: usize) {
        self.files.truncate(len);
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// Decodes source bytes. Invalid UTF-8 becomes `E0001` at the first bad byte; the text is then
/// decoded lossily so that the rest of the file is still checked.
pub fn decode_source(file: FileId, bytes: Vec<u8>) -> (String, Option<Diagnostic>) {
    // Valid UTF-8 becomes the text without a copy (a project's whole source, once).
    let bytes = match String::from_utf8(bytes) {
        Ok(mut text) => {
            text.shrink_to_fit(); // kept for the whole check: no spare capacity
            return (text, None);
        }
        Err(err) => err,
    };
    let offset = bytes.utf8_error().valid_up_to();
    let text = String::from_utf8_lossy(bytes.as_bytes()).into_owned();
    // The lossy text has the same prefix, so the offset is still a char boundary there.
    let width = text[offset..].chars().next().map_or(0, char::len_utf8);
    let error = SourceError::NotUtf8 {
        span: Span::new(file, offset..offset + width),
        offset,
    };
    (text, Some(error.into()))
}

/// Byte offsets of line starts, for offset → (line, column) conversion.
#[derive(Clone, Debug, Default)]
pub struct LineIndex {
    line_starts: Vec<u32>,
    len: u32,
    /// For a text that is not all ASCII: how many characters start before each multiple of
    /// [`CHAR_MARK_STRIDE`] bytes, so that a column is counted from the mark before it rather
    /// than from the start of its line (20,000 diagnostics on one 500 KB line counted
    /// 10 billion bytes). Empty for ASCII text, where a column is a byte count.
    char_marks: Vec<u32>,
}

/// Bytes between two [`LineIndex`] character marks: a column costs at most this many bytes to
/// count, and the marks 4 bytes per this many bytes of text.
const CHAR_MARK_STRIDE: usize = 1024;

/// A 1-based line and a 1-based column counted in Unicode scalar values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineCol {
    pub line: u32,
    pub column: u32,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut line_starts = vec![0];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        let mut char_marks = Vec::new();
        if !text.is_ascii() {
            let mut chars = 0u32;
            for chunk in text.as_bytes().chunks(CHAR_MARK_STRIDE) {
                char_marks.push(chars);
                chars += chunk.iter().filter(|&&b| !is_continuation(b)).count() as u32;
            }
        }
        LineIndex {
            line_starts,
            len: text.len() as u32,
            char_marks,
        }
    }

    /// How many characters of `text` start before byte `offset`.
    fn chars_before(&self, text: &str, offset: usize) -> usize {
        if self.char_marks.is_empty() {
            return offset;
        }
        let mark = offset / CHAR_MARK_STRIDE;
        let base = self.char_marks.get(mark).copied().unwrap_or(0) as usize;
        let from = (mark * CHAR_MARK_STRIDE).min(offset);
        let rest = text.as_bytes().get(from..offset).unwrap_or_default();
        base + rest.iter().filter(|&&b| !is_continuation(b)).count()
    }

    /// The 0-based line holding `offset` (offsets past the end clamp to the last line).
    pub fn line_of(&self, offset: u32) -> usize {
        let offset = offset.min(self.len);
        match self.line_starts.binary_search(&offset) {
            Ok(line) => line,
            Err(next) => next - 1,
        }
    }

    /// The byte offset where 0-based `line` starts, if the line exists.
    pub fn line_start(&self, line: usize) -> Option<u32> {
        self.line_starts.get(line).copied()
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// 1-based line and column (in chars) of `offset` in `text`.
    pub fn line_col(&self, text: &str, offset: u32) -> LineCol {
        let line = self.line_of(offset);
        let start = self.line_starts[line] as usize;
        let mut end = (offset.min(self.len)) as usize;
        while end > start && !text.is_char_boundary(end) {
            end -= 1;
        }
        let column = (self.chars_before(text, end) - self.chars_before(text, start)) as u32 + 1;
        LineCol {
            line: line as u32 + 1,
            column,
        }
    }
}

/// A byte that continues a UTF-8 sequence (`10xxxxxx`) rather than starting a character.
fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_of_offsets() {
        let text = "ab\nçd\n\nx";
        let index = LineIndex::new(text);
        assert_eq!(index.line_col(text, 0), LineCol { line: 1, column: 1 });
        assert_eq!(index.line_col(text, 3), LineCol { line: 2, column: 1 });
        // `d` sits after the two-byte `ç`: byte 5, column 2.
        assert_eq!(index.line_col(text, 5), LineCol { line: 2, column: 2 });
        assert_eq!(index.line_col(text, 7), LineCol { line: 3, column: 1 });
        assert_eq!(index.line_col(text, 99), LineCol { line: 4, column: 2 });
    }

    proptest::proptest! {
        /// Columns counted from the character marks are the characters from the line start,
        /// across marks and on lines longer than a stride.
        #[test]
        fn columns_count_characters(
            text in "([aé€\n]{0,40}){0,80}",
            at in proptest::prelude::any::<proptest::sample::Index>(),
        ) {
            let index = LineIndex::new(&text);
            let mut offset = at.index(text.len() + 1);
            while !text.is_char_boundary(offset) {
                offset -= 1;
            }
            let line_start = text[..offset].rfind('\n').map_or(0, |n| n + 1);
            let column = text[line_start..offset].chars().count() as u32 + 1;
            proptest::prop_assert_eq!(index.line_col(&text, offset as u32).column, column);
        }
    }

    /// Issue 25 (F): on one line of 20,000 multi-byte tags, each column is counted from the
    /// mark before it; counting from the line start made 20,000 look-ups quadratic.
    #[test]
    fn a_column_on_a_long_line_costs_a_stride() {
        let text = "é{% if x %}".repeat(20_000);
        let index = LineIndex::new(&text);
        let last = (text.len() - 1) as u32;
        assert_eq!(index.line_col(&text, last).column, 20_000 * 11);
        assert!(index.char_marks.len() <= text.len() / CHAR_MARK_STRIDE + 1);
    }
}
