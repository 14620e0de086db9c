//! Source positions: a file id and a byte range.
//!
//! Spans are byte offsets everywhere inside the compiler. Lines, columns and UTF-16 offsets
//! exist only at the edges (see [`crate::source::LineIndex`] and the LSP layer).

use std::ops::Range;

/// Identifies one source file inside a [`crate::source::SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileId(pub u32);

/// A byte range `start..end` in one file. Invariant: `start <= end <= file length`, and both
/// ends fall on `char` boundaries.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, range: Range<usize>) -> Span {
        Span {
            file,
            start: range.start as u32,
            end: range.end as u32,
        }
    }

    /// The smallest span covering both `self` and `other` (same file assumed).
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    pub fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }

    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// An empty span at the start of `self`.
    pub fn shrink_to_start(self) -> Span {
        Span {
            end: self.start,
            ..self
        }
    }

    /// An empty span at the end of `self`.
    pub fn shrink_to_end(self) -> Span {
        Span {
            start: self.end,
            ..self
        }
    }
}

/// Compact on purpose: `@12..40` (with `#file` when not file 0), so `{:#?}` dumps of the syntax
/// tree stay readable in snapshots, and span-insensitive comparisons can strip `@\d+..\d+`.
impl std::fmt::Debug for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.file.0 != 0 {
            write!(f, "#{}", self.file.0)?;
        }
        write!(f, "@{}..{}", self.start, self.end)
    }
}

/// `debug` (a `{:?}` of syntax) with every span's `@12..40` removed, so two trees compare by
/// shape alone (the formatter's round trip, its fuzz target): the inverse of `Span`'s `Debug`.
/// Compare the compact form: `{:#?}` indents each line by its depth, n² bytes for a chain of n.
pub fn without_spans(debug: &str) -> String {
    let mut out = String::with_capacity(debug.len());
    let mut chars = debug.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '@' && chars.peek().is_some_and(char::is_ascii_digit) {
            while chars
                .peek()
                .is_some_and(|c| c.is_ascii_digit() || *c == '.')
            {
                chars.next();
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// A value with the span it was written at.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Spanned<T> {
    pub node: T,
    pub span: Span,
}

impl<T> Spanned<T> {
    pub fn new(node: T, span: Span) -> Spanned<T> {
        Spanned { node, span }
    }
}
