//! Ordinary comments, handed out to the printer in source order.
//!
//! The tree does not hold ordinary comments, so the printer asks this cursor for them as it walks
//! the tree in source order: the comments before an element (leading), the ones on the same line
//! after it (trailing), and the ones left over before a closing brace (dangling). Every comment
//! is handed out exactly once and in source order, so none is lost and their order never changes;
//! a comment inside a construct that has no place for comments (`a + /* x */ b`) moves to the end
//! of the enclosing element's line.

use crate::syntax::ast::Comment;

use super::doc::Doc;

pub struct Comments<'a> {
    source: &'a str,
    /// Sorted by start offset.
    list: Vec<Comment>,
    next: usize,
}

impl<'a> Comments<'a> {
    pub fn new(comments: &[Comment], source: &'a str) -> Comments<'a> {
        let mut list = comments.to_vec();
        list.sort_by_key(|c| (c.span.start, c.span.end));
        Comments {
            source,
            list,
            next: 0,
        }
    }

    /// The text the spans point into.
    pub fn source(&self) -> &'a str {
        self.source
    }

    /// Whether a comment not yet handed out starts before `pos`.
    pub fn any_before(&self, pos: u32) -> bool {
        self.list.get(self.next).is_some_and(|c| c.span.start < pos)
    }

    /// Takes the comments that start before `pos`.
    pub fn take_before(&mut self, pos: u32) -> Vec<Comment> {
        let mut taken = Vec::new();
        while let Some(comment) = self.list.get(self.next) {
            if comment.span.start >= pos {
                break;
            }
            taken.push(comment.clone());
            self.next += 1;
        }
        taken
    }

    /// Takes the comments that belong after an element ending at `end`: those still inside it,
    /// then those on the same source line after it that start before `limit` (the next
    /// element, or the end of the enclosing construct). A comment that follows a trailing block
    /// comment on the line where that one ends trails too: the formatter prints them on one
    /// line, and the next run must read them so (`let x = p + /* a\n b */ q; // c` moved its
    /// `// c` to a line of its own on the second run; found by `aelc-fuzz fmt`).
    pub fn take_trailing(&mut self, end: u32, limit: u32) -> Vec<Comment> {
        let mut taken = self.take_before(end);
        let mut line_end = end;
        while let Some(comment) = self.list.get(self.next) {
            if comment.span.start >= limit || !self.same_line(line_end, comment.span.start) {
                break;
            }
            line_end = comment.span.end;
            taken.push(comment.clone());
            self.next += 1;
        }
        taken
    }

    /// The offset of the `)` closing a parameter list, searched from `from` (inside the list,
    /// after its last parameter) over whitespace, commas, comments and at most one `(`.
    pub fn closing_paren(&self, from: u32) -> Option<u32> {
        let text = self.source.get(from as usize..)?;
        let bytes = text.as_bytes();
        let mut i = 0;
        let mut opened = false;
        while let Some(&byte) = bytes.get(i) {
            match byte {
                b')' => return u32::try_from(from as usize + i).ok(),
                b'(' if !opened => {
                    opened = true;
                    i += 1;
                }
                b',' | b' ' | b'\t' | b'\r' | b'\n' => i += 1,
                b'/' if bytes.get(i + 1) == Some(&b'/') => {
                    i += text[i..].find('\n')?;
                }
                b'/' if bytes.get(i + 1) == Some(&b'*') => {
                    i += block_comment_len(&text[i..])?;
                }
                _ => return None,
            }
        }
        None
    }

    /// Takes every comment not handed out yet.
    pub fn take_rest(&mut self) -> Vec<Comment> {
        self.take_before(u32::MAX)
    }

    /// Whether no newline separates the offsets `from` and `to`.
    fn same_line(&self, from: u32, to: u32) -> bool {
        let (from, to) = (from.min(to) as usize, from.max(to) as usize);
        self.source
            .get(from..to)
            .is_some_and(|between| !between.contains('\n'))
    }

    /// Whether the author left an empty line right before `pos` (only whitespace between `pos`
    /// and the previous token, holding at least two newlines).
    pub fn blank_line_before(&self, pos: u32) -> bool {
        let Some(before) = self.source.get(..pos as usize) else {
            return false;
        };
        let gap = before.len() - before.trim_end().len();
        before[before.len() - gap..].matches('\n').count() >= 2
    }

    /// Whether the source continues on the next line after `comment` (nothing but whitespace
    /// follows it on its line).
    fn ends_its_line(&self, comment: &Comment) -> bool {
        if is_line_comment(comment) {
            return true;
        }
        let Some(after) = self.source.get(comment.span.end as usize..) else {
            return true;
        };
        let rest_of_line = after.split('\n').next().unwrap_or("");
        rest_of_line.trim().is_empty()
    }

    /// Prints comments that stand before an element: each on its own line, except a block
    /// comment that the author wrote on the element's line, which stays in front of it. With
    /// `blank_lines`, an empty line the author put between two comments, or between the last
    /// comment and `element_start`, is kept (the one before the first comment is the caller's
    /// business).
    pub fn leading(&self, comments: &[Comment], element_start: u32, blank_lines: bool) -> Doc {
        let mut docs = Vec::new();
        for (i, comment) in comments.iter().enumerate() {
            if blank_lines && i > 0 && self.blank_line_before(comment.span.start) {
                docs.push(Doc::HardLine);
            }
            docs.push(Doc::text(comment_text(comment)));
            if self.ends_its_line(comment) {
                docs.push(Doc::HardLine);
            } else {
                docs.push(" ".into());
            }
        }
        if blank_lines && !comments.is_empty() && self.blank_line_before(element_start) {
            docs.push(Doc::HardLine);
        }
        Doc::Concat(docs)
    }

    /// Prints comments that follow an element on its line, after its separator. A `//` comment
    /// breaks the enclosing groups, so a newline follows it; every comment after a `//` comment
    /// goes on a line of its own, as the next run reads them (the comments before the next
    /// element or the closing brace). Two after a `//` shared a line, `/* c1 */ // c0`, which
    /// the next run split in two (found by `fmt::comments_anywhere_are_kept`).
    pub fn trailing(comments: &[Comment]) -> Doc {
        let mut docs = Vec::new();
        let mut after_line_comment = false;
        for comment in comments {
            docs.push(if after_line_comment {
                Doc::HardLine
            } else {
                " ".into()
            });
            docs.push(Doc::text(comment_text(comment)));
            if is_line_comment(comment) {
                after_line_comment = true;
                docs.push(Doc::BreakParent);
            }
        }
        Doc::Concat(docs)
    }

    /// Prints comments left before a closing brace, one per line, each after a newline.
    pub fn dangling(&self, comments: &[Comment], blank_lines: bool, first: bool) -> Doc {
        let mut docs = Vec::new();
        for (i, comment) in comments.iter().enumerate() {
            docs.push(Doc::HardLine);
            if blank_lines && !(first && i == 0) && self.blank_line_before(comment.span.start) {
                docs.push(Doc::HardLine);
            }
            docs.push(Doc::text(comment_text(comment)));
        }
        Doc::Concat(docs)
    }
}

/// The length of the nested block comment at the start of `text`.
fn block_comment_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match (bytes.get(i), bytes.get(i + 1)) {
            (Some(b'/'), Some(b'*')) => {
                depth += 1;
                i += 2;
            }
            (Some(b'*'), Some(b'/')) => {
                depth = depth.saturating_sub(1);
                i += 2;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => i += 1,
        }
    }
    None
}

pub fn is_line_comment(comment: &Comment) -> bool {
    comment.text.starts_with("//")
}

/// A comment as printed: line comments lose trailing whitespace, block comments are verbatim.
fn comment_text(comment: &Comment) -> String {
    if is_line_comment(comment) {
        comment.text.trim_end().to_owned()
    } else {
        comment.text.clone()
    }
}
