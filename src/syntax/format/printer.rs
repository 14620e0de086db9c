//! The printer's core: the comment cursor and the two ways a sequence of elements (items,
//! fields, arguments, …) is laid out, with its comments.

use crate::syntax::ast::{
    Arg, Block, Doc as DocComment, Entry, ErrorCode, Expr, Field, FieldInit, Item, MatchArm, Param,
    Require, Stmt, UseName, Variant,
};

use super::comments::Comments;
use super::doc::{concat, Doc};

/// Where an element of a sequence lies in the source, doc comments included.
#[derive(Clone, Copy, Debug)]
pub struct Place {
    pub start: u32,
    pub end: u32,
}

/// Something that can stand in a sequence and carry comments around it.
pub trait Located {
    fn place(&self) -> Place;
}

fn with_docs(docs: Option<&DocComment>, span: crate::span::Span) -> Place {
    let start = docs.map_or(span.start, |d| d.span.start.min(span.start));
    Place {
        start,
        end: span.end,
    }
}

macro_rules! located_by_span {
    ($($ty:ty),*) => {$(
        impl Located for $ty {
            fn place(&self) -> Place {
                Place { start: self.span.start, end: self.span.end }
            }
        }
    )*};
}
located_by_span!(Arg, Block, Entry, Expr, FieldInit, MatchArm, Require, UseName);

impl Located for Param {
    fn place(&self) -> Place {
        let span = self.span();
        Place {
            start: span.start,
            end: span.end,
        }
    }
}

macro_rules! located_with_docs {
    ($($ty:ty),*) => {$(
        impl Located for $ty {
            fn place(&self) -> Place {
                with_docs(self.docs.as_ref(), self.span)
            }
        }
    )*};
}
located_with_docs!(Item, Variant, ErrorCode);

impl Located for Field {
    fn place(&self) -> Place {
        with_docs(self.docs.as_ref(), self.span())
    }
}

impl Located for Stmt {
    fn place(&self) -> Place {
        let span = match self {
            Stmt::Let { span, .. } | Stmt::Return { span, .. } => *span,
        };
        Place {
            start: span.start,
            end: span.end,
        }
    }
}

/// A laid-out sequence.
pub struct Seq {
    pub doc: Doc,
    /// No element and no comment: the container prints as `{}`.
    pub empty: bool,
}

pub struct Printer<'a> {
    pub comments: Comments<'a>,
}

impl<'a> Printer<'a> {
    pub fn new(comments: Comments<'a>) -> Printer<'a> {
        Printer { comments }
    }

    /// One element per line: every element starts with a newline and ends with `sep`. `blank`
    /// decides whether an empty line goes before an element, given the previous element and
    /// whether the author left one. Comments before `limit` that no element took are printed
    /// at the end, one per line.
    pub fn vertical<T: Located>(
        &mut self,
        items: &[T],
        limit: u32,
        sep: &str,
        blank: impl Fn(Option<&T>, &T, bool) -> bool,
        mut print: impl FnMut(&mut Self, &T) -> Doc,
    ) -> Seq {
        let mut docs = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let place = item.place();
            let leading = self.comments.take_before(place.start);
            let first_start = leading.first().map_or(place.start, |c| c.span.start);
            let author_blank = self.comments.blank_line_before(first_start);
            docs.push(Doc::HardLine);
            let previous = i.checked_sub(1).and_then(|p| items.get(p));
            if blank(previous, item, author_blank) {
                docs.push(Doc::HardLine);
            }
            docs.push(self.comments.leading(&leading, place.start, true));
            docs.push(print(self, item));
            docs.push(sep.into());
            let next_start = items.get(i + 1).map_or(limit, |n| n.place().start);
            let trailing = self.comments.take_trailing(place.end, next_start);
            docs.push(Comments::trailing(&trailing));
        }
        let dangling = self.comments.take_before(limit);
        let empty = items.is_empty() && dangling.is_empty();
        docs.push(self.comments.dangling(&dangling, true, items.is_empty()));
        Seq {
            doc: Doc::Concat(docs),
            empty,
        }
    }

    /// Elements separated by `sep` and a line break that is a space (or nothing) when the
    /// enclosing group fits on one line; the last `sep` is printed only when it does not.
    pub fn inline<T: Located>(
        &mut self,
        items: &[T],
        limit: u32,
        sep: &str,
        mut print: impl FnMut(&mut Self, &T) -> Doc,
    ) -> Seq {
        let mut docs = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let place = item.place();
            let leading = self.comments.take_before(place.start);
            docs.push(self.comments.leading(&leading, place.start, false));
            docs.push(print(self, item));
            let next = items.get(i + 1);
            if next.is_some() {
                docs.push(sep.into());
            } else {
                docs.push(Doc::if_break(sep.into()));
            }
            let next_start = next.map_or(limit, |n| n.place().start);
            let trailing = self.comments.take_trailing(place.end, next_start);
            docs.push(Comments::trailing(&trailing));
            if next.is_some() {
                docs.push(Doc::Line);
            }
        }
        let dangling = self.comments.take_before(limit);
        let empty = items.is_empty() && dangling.is_empty();
        for (i, comment) in dangling.iter().enumerate() {
            if i > 0 || !items.is_empty() {
                docs.push(Doc::HardLine);
            }
            docs.push(Doc::text(comment.text.trim_end().to_owned()));
            docs.push(Doc::BreakParent);
        }
        Seq {
            doc: Doc::Concat(docs),
            empty,
        }
    }

    /// `open items close` as a group: on one line when it fits (with `padded`, a space inside
    /// the delimiters), otherwise one element per line.
    pub fn delimited<T: Located>(
        &mut self,
        open: &str,
        close: &str,
        padded: bool,
        items: &[T],
        limit: u32,
        print: impl FnMut(&mut Self, &T) -> Doc,
    ) -> Doc {
        let seq = self.inline(items, limit, ",", print);
        if seq.empty {
            return concat![open, close];
        }
        let line = if padded { Doc::Line } else { Doc::SoftLine };
        Doc::group(concat![
            open,
            Doc::nest(concat![line.clone(), seq.doc]),
            line,
            close
        ])
    }

    /// `{` + one element per line + `}`, or `{}` when there is nothing inside.
    pub fn braced(seq: Seq) -> Doc {
        if seq.empty {
            return "{}".into();
        }
        concat!["{", Doc::nest(seq.doc), Doc::HardLine, "}"]
    }

    /// Prints the comments that start before `pos` on their own lines (used between a doc
    /// comment and the item it documents).
    pub fn comments_before(&mut self, pos: u32) -> Doc {
        let taken = self.comments.take_before(pos);
        self.comments.leading(&taken, pos, true)
    }
}

/// `/// line` for each line of a doc comment, each followed by a newline.
pub fn doc_comment(docs: Option<&DocComment>, marker: &str) -> Doc {
    let Some(docs) = docs else {
        return Doc::Concat(Vec::new());
    };
    let mut out = Vec::new();
    for line in docs.text.split('\n') {
        let line = line.trim_end();
        if line.is_empty() {
            out.push(Doc::text(marker));
        } else {
            out.push(Doc::text(format!("{marker} {line}")));
        }
        out.push(Doc::HardLine);
    }
    Doc::Concat(out)
}

/// Author's blank lines are kept (at most one), none before the first element.
pub fn author_blank<T>(previous: Option<&T>, _next: &T, author: bool) -> bool {
    previous.is_some() && author
}
