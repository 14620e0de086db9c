//! Byte offsets ↔ LSP positions.
//!
//! The compiler counts in bytes; LSP counts lines and, within a line, code units of the
//! negotiated encoding: UTF-16 by default (what every client supports), UTF-8 when the client
//! offers it (then a column is a byte count, and no conversion is needed). Everything that turns
//! a [`Span`] into a [`Range`] or back goes through this module, so non-ASCII text (`ç` is one
//! UTF-16 unit and two bytes, `😀` is two UTF-16 units and four bytes) is handled in one place.
//!
//! Invariant: conversions never panic. A position past the end of its line clamps to the line's
//! end, a line past the end of the file clamps to the end of the file, and a position inside a
//! character (between the two halves of a surrogate pair) moves to the character's start.

use lsp_types::{Position, Range};

use crate::source::LineIndex;
use crate::span::Span;

/// How columns are counted: the `positionEncoding` agreed at `initialize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

/// One document's text with its line index: enough to convert in both directions.
#[derive(Clone, Copy)]
pub struct Lines<'a> {
    pub text: &'a str,
    pub index: &'a LineIndex,
    pub encoding: Encoding,
}

impl<'a> Lines<'a> {
    pub fn new(text: &'a str, index: &'a LineIndex, encoding: Encoding) -> Lines<'a> {
        Lines {
            text,
            index,
            encoding,
        }
    }

    /// The text of 0-based `line` without its line break, and the offset where it starts.
    fn line(&self, line: usize) -> Option<(u32, &'a str)> {
        let start = self.index.line_start(line)?;
        let end = self
            .index
            .line_start(line + 1)
            .map_or(self.text.len(), |next| next as usize);
        let text = self.text.get(start as usize..end)?;
        let text = text.strip_suffix('\n').unwrap_or(text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        Some((start, text))
    }

    /// The LSP position of byte `offset` (clamped to the text, moved back to a char boundary).
    pub fn position(&self, offset: u32) -> Position {
        let mut offset = (offset as usize).min(self.text.len());
        while offset > 0 && !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.index.line_of(offset as u32);
        let start = self.index.line_start(line).unwrap_or(0) as usize;
        let before = self.text.get(start..offset).unwrap_or("");
        // ASCII is one unit a byte in both encodings; `is_ascii` is the fast check (symbols and
        // semantic tokens convert thousands of offsets on one long line).
        let character = match self.encoding {
            Encoding::Utf8 => before.len(),
            Encoding::Utf16 if before.is_ascii() => before.len(),
            Encoding::Utf16 => before.chars().map(char::len_utf16).sum(),
        };
        Position::new(line as u32, character as u32)
    }

    /// The byte offset of an LSP position (clamped, never inside a character).
    pub fn offset(&self, position: Position) -> u32 {
        let Some((start, line)) = self.line(position.line as usize) else {
            return self.text.len() as u32;
        };
        let wanted = position.character as usize;
        if let Some(head) = line.get(..wanted.min(line.len())) {
            if head.is_ascii() {
                return start + head.len() as u32;
            }
        }
        let mut units = 0usize;
        for (at, ch) in line.char_indices() {
            let width = match self.encoding {
                Encoding::Utf8 => ch.len_utf8(),
                Encoding::Utf16 => ch.len_utf16(),
            };
            if units + width > wanted {
                return start + at as u32;
            }
            units += width;
        }
        start + line.len() as u32
    }

    pub fn range(&self, span: Span) -> Range {
        Range::new(self.position(span.start), self.position(span.end))
    }

    /// The byte range of an LSP range; a reversed range is put in order.
    pub fn span_range(&self, range: Range) -> std::ops::Range<usize> {
        let a = self.offset(range.start) as usize;
        let b = self.offset(range.end) as usize;
        a.min(b)..a.max(b)
    }
}

/// Converts increasing offsets to positions without rescanning each line from its start:
/// semantic tokens convert every token of a file, and a file may be one long line.
pub struct Cursor<'a> {
    lines: Lines<'a>,
    offset: usize,
    position: Position,
}

impl<'a> Cursor<'a> {
    pub fn new(lines: Lines<'a>) -> Cursor<'a> {
        Cursor {
            lines,
            offset: 0,
            position: Position::new(0, 0),
        }
    }

    /// The position of `offset`, as [`Lines::position`]; fast when offsets do not decrease.
    pub fn position(&mut self, offset: u32) -> Position {
        let text = self.lines.text;
        let mut at = (offset as usize).min(text.len());
        while at > 0 && !text.is_char_boundary(at) {
            at -= 1;
        }
        let line = self.lines.index.line_of(at as u32) as u32;
        if line == self.position.line && at >= self.offset {
            let step = text.get(self.offset..at).unwrap_or("");
            let units = match self.lines.encoding {
                Encoding::Utf8 => step.len(),
                Encoding::Utf16 => step.chars().map(char::len_utf16).sum(),
            };
            self.position.character += units as u32;
        } else {
            self.position = self.lines.position(at as u32);
        }
        self.offset = at;
        self.position
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str, encoding: Encoding, f: impl FnOnce(Lines<'_>)) {
        let index = LineIndex::new(text);
        f(Lines::new(text, &index, encoding));
    }

    #[test]
    fn ascii_round_trips() {
        lines("ab\ncd\n", Encoding::Utf16, |l| {
            assert_eq!(l.position(0), Position::new(0, 0));
            assert_eq!(l.position(4), Position::new(1, 1));
            assert_eq!(l.offset(Position::new(1, 1)), 4);
            assert_eq!(l.position(6), Position::new(2, 0));
        });
    }

    #[test]
    fn cedilla_is_one_utf16_unit_and_two_bytes() {
        let text = "x: \"ça\" y";
        let y = text.find('y').unwrap() as u32;
        lines(text, Encoding::Utf16, |l| {
            assert_eq!(l.position(y), Position::new(0, 8));
            assert_eq!(l.offset(Position::new(0, 8)), y);
        });
        lines(text, Encoding::Utf8, |l| {
            assert_eq!(l.position(y), Position::new(0, 9));
            assert_eq!(l.offset(Position::new(0, 9)), y);
        });
    }

    #[test]
    fn emoji_is_two_utf16_units_and_four_bytes() {
        let text = "a\n😀b";
        let b = text.find('b').unwrap() as u32;
        lines(text, Encoding::Utf16, |l| {
            assert_eq!(l.position(b), Position::new(1, 2));
            assert_eq!(l.offset(Position::new(1, 2)), b);
            // Between the two halves of the surrogate pair: the character's start.
            assert_eq!(l.offset(Position::new(1, 1)), 2);
        });
        lines(text, Encoding::Utf8, |l| {
            assert_eq!(l.position(b), Position::new(1, 4));
            // Inside the emoji's bytes: the character's start.
            assert_eq!(l.offset(Position::new(1, 3)), 2);
        });
    }

    #[test]
    fn out_of_range_positions_clamp() {
        lines("ab\r\ncd", Encoding::Utf16, |l| {
            // Past the end of line 0: its end, before `\r\n`.
            assert_eq!(l.offset(Position::new(0, 99)), 2);
            assert_eq!(l.offset(Position::new(9, 0)), 6);
            assert_eq!(l.position(99), Position::new(1, 2));
        });
        lines("", Encoding::Utf16, |l| {
            assert_eq!(l.offset(Position::new(3, 3)), 0);
            assert_eq!(l.position(0), Position::new(0, 0));
        });
    }

    #[test]
    fn offsets_inside_a_character_move_to_its_start() {
        lines("é", Encoding::Utf16, |l| {
            assert_eq!(l.position(1), Position::new(0, 0));
        });
    }

    #[test]
    fn the_cursor_agrees_with_direct_conversion() {
        let text = "a😀b\nçd😀e\n\nxyz";
        for encoding in [Encoding::Utf8, Encoding::Utf16] {
            lines(text, encoding, |l| {
                let mut cursor = Cursor::new(l);
                let offsets: Vec<u32> = (0..=text.len() as u32).chain([3, 0, 9]).collect();
                for offset in offsets {
                    assert_eq!(cursor.position(offset), l.position(offset), "{offset}");
                }
            });
        }
    }
}
