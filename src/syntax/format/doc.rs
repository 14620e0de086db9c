//! A small pretty-printing document algebra (Wadler's "prettier printer", as in Prettier) and
//! its renderer.
//!
//! The printer turns the syntax tree into a [`Doc`]; the renderer lays it out in
//! [`MAX_WIDTH`] columns. A [`Doc::Group`] is printed on one line when it fits, and otherwise
//! all of *its own* line breaks become newlines while nested groups decide again for
//! themselves. So the outermost structure breaks first, which is the layout rule of the
//! formatter. A group that contains a hard line (a line comment, a statement list) is broken
//! from the start.

/// The line width the formatter aims for.
pub const MAX_WIDTH: usize = 100;

/// One indentation step.
const INDENT: usize = 4;

#[derive(Clone, Debug)]
pub enum Doc {
    /// Text without newlines (block comments are the only text that may hold them).
    Text(String),
    /// A space when the enclosing group is flat, a newline when it is broken.
    Line,
    /// Nothing when the enclosing group is flat, a newline when it is broken.
    SoftLine,
    /// Always a newline; breaks every enclosing group.
    HardLine,
    /// Prints nothing but breaks every enclosing group (after a `//` comment).
    BreakParent,
    /// Printed only when the enclosing group is broken (trailing commas).
    IfBreak(Box<Doc>),
    Concat(Vec<Doc>),
    /// Its contents are indented one step further after each newline.
    Nest(Box<Doc>),
    Group {
        doc: Box<Doc>,
        /// Whether the group must break (it holds a hard line); computed once at construction.
        broken: bool,
    },
    /// A group (`Doc::Group`), then `flat` when that group is printed on one line or `broken`
    /// when it breaks: `require COND else …` puts `else` on a line of its own after a condition
    /// that fits on one line, and after the last line of one that breaks.
    GroupThen {
        group: Box<Doc>,
        flat: Box<Doc>,
        broken: Box<Doc>,
    },
}

impl Doc {
    pub fn text(text: impl Into<String>) -> Doc {
        Doc::Text(text.into())
    }

    pub fn nest(doc: Doc) -> Doc {
        Doc::Nest(Box::new(doc))
    }

    pub fn group(doc: Doc) -> Doc {
        let broken = doc.forces_break();
        Doc::Group {
            doc: Box::new(doc),
            broken,
        }
    }

    /// See [`Doc::GroupThen`]; `doc` is grouped here.
    pub fn group_then(doc: Doc, flat: Doc, broken: Doc) -> Doc {
        Doc::GroupThen {
            group: Box::new(Doc::group(doc)),
            flat: Box::new(flat),
            broken: Box::new(broken),
        }
    }

    pub fn if_break(doc: Doc) -> Doc {
        Doc::IfBreak(Box::new(doc))
    }

    /// Whether this document cannot be printed flat.
    fn forces_break(&self) -> bool {
        match self {
            Doc::HardLine | Doc::BreakParent => true,
            Doc::Text(text) => text.contains('\n'),
            Doc::Line | Doc::SoftLine | Doc::IfBreak(_) => false,
            Doc::Concat(docs) => docs.iter().any(Doc::forces_break),
            Doc::Nest(doc) => doc.forces_break(),
            Doc::Group { broken, .. } => *broken,
            Doc::GroupThen {
                group,
                flat,
                broken,
            } => group.forces_break() || (flat.forces_break() && broken.forces_break()),
        }
    }
}

/// Builds a [`Doc::Concat`] from a list of parts.
macro_rules! concat {
    ($($part:expr),* $(,)?) => {
        $crate::syntax::format::doc::Doc::Concat(vec![$($part.into()),*])
    };
}
pub(crate) use concat;

impl From<&str> for Doc {
    fn from(text: &str) -> Doc {
        Doc::Text(text.to_owned())
    }
}

impl From<String> for Doc {
    fn from(text: String) -> Doc {
        Doc::Text(text)
    }
}

impl From<Vec<Doc>> for Doc {
    fn from(docs: Vec<Doc>) -> Doc {
        Doc::Concat(docs)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Flat,
    Break,
}

/// Lays a document out; the result has no trailing spaces on any line.
pub fn render(doc: &Doc) -> String {
    let mut out = String::new();
    let mut column = 0usize;
    let mut stack: Vec<(usize, Mode, &Doc)> = vec![(0, Mode::Break, doc)];
    while let Some((indent, mode, doc)) = stack.pop() {
        match doc {
            Doc::Text(text) => {
                out.push_str(text);
                column = match text.rfind('\n') {
                    Some(at) => text[at + 1..].chars().count(),
                    None => column + text.chars().count(),
                };
            }
            Doc::Line | Doc::SoftLine if mode == Mode::Flat => {
                if matches!(doc, Doc::Line) {
                    out.push(' ');
                    column += 1;
                }
            }
            Doc::Line | Doc::SoftLine | Doc::HardLine => {
                newline(&mut out, indent);
                column = indent;
            }
            Doc::BreakParent => {}
            Doc::IfBreak(inner) => {
                if mode == Mode::Break {
                    stack.push((indent, mode, inner));
                }
            }
            Doc::Concat(docs) => {
                for inner in docs.iter().rev() {
                    stack.push((indent, mode, inner));
                }
            }
            Doc::Nest(inner) => stack.push((indent + INDENT, mode, inner)),
            Doc::Group { doc: inner, broken } => {
                let flat = !broken
                    && (mode == Mode::Flat
                        || fits(inner, MAX_WIDTH.saturating_sub(column), &stack));
                let mode = if flat { Mode::Flat } else { Mode::Break };
                stack.push((indent, mode, inner));
            }
            Doc::GroupThen {
                group,
                flat: when_flat,
                broken: when_broken,
            } => {
                // Whether the group fits is judged with what follows it flat.
                stack.push((indent, mode, when_flat));
                let flat = !group.forces_break()
                    && (mode == Mode::Flat
                        || fits(group, MAX_WIDTH.saturating_sub(column), &stack));
                if !flat {
                    stack.pop();
                    stack.push((indent, mode, when_broken));
                }
                let group_mode = if flat { Mode::Flat } else { Mode::Break };
                match &**group {
                    Doc::Group { doc: inner, .. } => stack.push((indent, group_mode, inner)),
                    other => stack.push((indent, group_mode, other)),
                }
            }
        }
    }
    trim_trailing_spaces(&mut out);
    out
}

fn newline(out: &mut String, indent: usize) {
    trim_trailing_spaces(out);
    out.push('\n');
    out.extend(std::iter::repeat_n(' ', indent));
}

fn trim_trailing_spaces(out: &mut String) {
    let kept = out.trim_end_matches(' ').len();
    out.truncate(kept);
}

/// Whether `doc`, printed flat, and what follows it up to the next newline fit in `width`.
fn fits(doc: &Doc, width: usize, rest: &[(usize, Mode, &Doc)]) -> bool {
    let mut remaining = width as isize;
    let mut todo: Vec<(Mode, &Doc)> = vec![(Mode::Flat, doc)];
    let mut rest = rest.iter().rev();
    loop {
        let Some((mode, doc)) = todo.pop().or_else(|| rest.next().map(|(_, m, d)| (*m, *d))) else {
            return true;
        };
        match doc {
            Doc::Text(text) => {
                let first_line = text.split('\n').next().unwrap_or("");
                remaining -= first_line.chars().count() as isize;
                if remaining < 0 {
                    return false;
                }
                if text.contains('\n') {
                    return true;
                }
            }
            Doc::Line if mode == Mode::Flat => {
                remaining -= 1;
                if remaining < 0 {
                    return false;
                }
            }
            Doc::SoftLine if mode == Mode::Flat => {}
            Doc::Line | Doc::SoftLine | Doc::HardLine => return true,
            Doc::BreakParent => {}
            Doc::IfBreak(inner) => {
                if mode == Mode::Break {
                    todo.push((mode, inner));
                }
            }
            Doc::Concat(docs) => {
                for inner in docs.iter().rev() {
                    todo.push((mode, inner));
                }
            }
            Doc::Nest(inner) => todo.push((mode, inner)),
            Doc::Group { doc: inner, broken } => {
                let mode = if *broken { Mode::Break } else { mode };
                todo.push((mode, inner));
            }
            Doc::GroupThen { group, flat, .. } => {
                todo.push((mode, flat));
                todo.push((mode, group));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[&str]) -> Doc {
        let mut inner = vec![Doc::SoftLine];
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                inner.push(",".into());
                inner.push(Doc::Line);
            }
            inner.push((*item).into());
        }
        inner.push(Doc::if_break(",".into()));
        Doc::group(concat!["[", Doc::nest(inner.into()), Doc::SoftLine, "]"])
    }

    #[test]
    fn a_short_group_stays_flat() {
        assert_eq!(render(&list(&["a", "b"])), "[a, b]");
    }

    #[test]
    fn a_long_group_breaks_with_trailing_comma() {
        let long = "x".repeat(60);
        let text = render(&list(&[&long, &long]));
        assert_eq!(text, format!("[\n    {long},\n    {long},\n]"));
    }

    #[test]
    fn a_hard_line_breaks_the_group() {
        let doc = Doc::group(concat![
            "{",
            Doc::nest(concat![Doc::Line, "a"]),
            Doc::HardLine,
            "}"
        ]);
        assert_eq!(render(&doc), "{\n    a\n}");
    }

    #[test]
    fn blank_lines_have_no_indentation() {
        let doc = concat![
            "{",
            Doc::nest(concat![
                Doc::HardLine,
                "a",
                Doc::HardLine,
                Doc::HardLine,
                "b"
            ]),
            Doc::HardLine,
            "}"
        ];
        assert_eq!(render(&doc), "{\n    a\n\n    b\n}");
    }
}
