//! Where the tags of a prompt template (spec §6) open and close: `{{ … }}` and `{% … %}`.
//!
//! One scanner for the checker (`sema::template`) and the language server's index, so both see
//! the same tags. Outside tags a template is plain text. Inside one, AEL string literals are
//! skipped whole, so `{{ "{{" }}` and `{{ "}}" }}` are tags holding a string (the way to write
//! the braces themselves into a prompt); a `{{` or `{%` met outside a string before the tag
//! closes means the tag was never closed, and scanning goes on from that next tag.

/// What a tag opens with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagKind {
    /// `{{ expression }}`.
    Value,
    /// `{% if … %}`, `{% for … %}`, `{% else %}`, `{% end %}`.
    Block,
}

impl TagKind {
    pub fn open(self) -> &'static str {
        match self {
            TagKind::Value => "{{",
            TagKind::Block => "{%",
        }
    }

    pub fn close(self) -> &'static str {
        match self {
            TagKind::Value => "}}",
            TagKind::Block => "%}",
        }
    }
}

/// A closed tag, by byte offsets into the template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawTag<'t> {
    pub kind: TagKind,
    /// Where its opening delimiter starts.
    pub start: usize,
    /// The text between its delimiters, which starts at `inner_at`.
    pub inner: &'t str,
    pub inner_at: usize,
    /// Just past its closing delimiter.
    pub end: usize,
}

/// One tag as found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scanned<'t> {
    Tag(RawTag<'t>),
    /// A tag opened at `start` and not closed before the next tag (at `resume`) or the end of
    /// the text (`resume` is the text's length).
    Unclosed {
        kind: TagKind,
        start: usize,
        resume: usize,
    },
}

impl Scanned<'_> {
    /// Where the tag opens: the plain text before it ends here.
    pub fn start(&self) -> usize {
        match self {
            Scanned::Tag(tag) => tag.start,
            Scanned::Unclosed { start, .. } => *start,
        }
    }

    /// Where the text after the tag, or the next tag, begins.
    fn resume(&self) -> usize {
        match self {
            Scanned::Tag(tag) => tag.end,
            Scanned::Unclosed { resume, .. } => *resume,
        }
    }
}

/// The tags of `text`, in order, with the plain text between them left out.
pub fn scan(text: &str) -> impl Iterator<Item = Scanned<'_>> + '_ {
    let mut rest = 0usize;
    std::iter::from_fn(move || {
        let (start, kind) = find_open(text, rest)?;
        let inner_at = start + 2;
        let scanned = match find_close(text, inner_at, kind) {
            Close::At(close) => Scanned::Tag(RawTag {
                kind,
                start,
                inner: text.get(inner_at..close).unwrap_or(""),
                inner_at,
                end: close + 2,
            }),
            Close::NextTag(next) => Scanned::Unclosed {
                kind,
                start,
                resume: next,
            },
            Close::Never => Scanned::Unclosed {
                kind,
                start,
                resume: text.len(),
            },
        };
        rest = scanned.resume();
        Some(scanned)
    })
}

/// The first `{{` or `{%` at or after `from`.
fn find_open(text: &str, from: usize) -> Option<(usize, TagKind)> {
    let bytes = text.as_bytes();
    let mut i = from;
    while let Some(found) = bytes.get(i..)?.iter().position(|&b| b == b'{') {
        let at = i + found;
        match bytes.get(at + 1) {
            Some(b'{') => return Some((at, TagKind::Value)),
            Some(b'%') => return Some((at, TagKind::Block)),
            _ => i = at + 1,
        }
    }
    None
}

enum Close {
    /// The closing delimiter starts here.
    At(usize),
    /// Another tag opens here first.
    NextTag(usize),
    Never,
}

/// Where the tag whose inside starts at `from` closes, skipping string literals.
fn find_close(text: &str, from: usize, kind: TagKind) -> Close {
    let bytes = text.as_bytes();
    let close = kind.close().as_bytes();
    let mut i = from;
    while let Some(&b) = bytes.get(i) {
        if bytes.get(i..i + 2) == Some(close) {
            return Close::At(i);
        }
        match b {
            b'{' if matches!(bytes.get(i + 1), Some(b'{' | b'%')) => return Close::NextTag(i),
            b'"' => match string_end(bytes, i + 1) {
                Some(end) => i = end,
                // An unclosed string: the expression parser reports it, so the tag is read
                // as if the quote were text.
                None => i += 1,
            },
            b'r' if starts_raw_string(bytes, i) => match raw_string_end(bytes, i + 1) {
                Some(end) => i = end,
                None => i += 1,
            },
            _ => i += 1,
        }
    }
    Close::Never
}

/// Just past the closing quote of a string whose content starts at `i`; escapes are stepped
/// over. `None` if the line or the text ends first (a string cannot span a tag's lines
/// unclosed without the parser saying so).
fn string_end(bytes: &[u8], mut i: usize) -> Option<usize> {
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            b'\n' => return None,
            _ => i += 1,
        }
    }
    None
}

/// `r"`, `r#"`, … at `i`, and not the end of a longer name (`for"`).
fn starts_raw_string(bytes: &[u8], i: usize) -> bool {
    let part_of_name = i
        .checked_sub(1)
        .and_then(|p| bytes.get(p))
        .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
    if part_of_name {
        return false;
    }
    let hashes = bytes
        .get(i + 1..)
        .unwrap_or_default()
        .iter()
        .take_while(|&&b| b == b'#')
        .count();
    bytes.get(i + 1 + hashes) == Some(&b'"')
}

/// Just past the end of a raw string whose `#`s start at `i` (after the `r`).
fn raw_string_end(bytes: &[u8], i: usize) -> Option<usize> {
    let rest = bytes.get(i..)?;
    let hashes = rest.iter().take_while(|&&b| b == b'#').count();
    let body = i + hashes + 1;
    let mut j = body;
    while let Some(&b) = bytes.get(j) {
        if b == b'"'
            && bytes
                .get(j + 1..j + 1 + hashes)
                .is_some_and(|h| h.iter().all(|&c| c == b'#'))
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> Vec<String> {
        scan(text)
            .map(|s| match s {
                Scanned::Tag(RawTag {
                    kind,
                    inner,
                    inner_at,
                    start,
                    end,
                }) => {
                    assert_eq!(text.get(start..inner_at), Some(kind.open()));
                    assert_eq!(text.get(end - 2..end), Some(kind.close()));
                    format!("{}{inner}{}", kind.open(), kind.close())
                }
                Scanned::Unclosed {
                    kind,
                    start,
                    resume,
                } => format!("unclosed {} at {start}, resume {resume}", kind.open()),
            })
            .collect()
    }

    #[test]
    fn tags_and_the_text_between() {
        assert_eq!(
            shown("a {{ x }} b {% if y %}c{% end %} {d} %} }}"),
            ["{{ x }}", "{% if y %}", "{% end %}"]
        );
    }

    #[test]
    fn strings_inside_tags_may_hold_delimiters() {
        assert_eq!(
            shown(r#"{{ "{{" }} {{ "}}" }} {{ "{%" }} {% if x == "%}" %}{% end %}"#),
            [
                r#"{{ "{{" }}"#,
                r#"{{ "}}" }}"#,
                r#"{{ "{%" }}"#,
                r#"{% if x == "%}" %}"#,
                "{% end %}"
            ]
        );
        assert_eq!(
            shown(r##"{{ r#"say "}}""# }} {{ "a\"}}" }} {{ for"}}"##),
            [
                r##"{{ r#"say "}}""# }}"##,
                r#"{{ "a\"}}" }}"#,
                r#"{{ for"}}"#
            ]
        );
    }

    proptest::proptest! {
        /// On any text (multi-byte characters, stray quotes and braces included), scanning
        /// never panics, tags come in order without overlapping, and every offset is a char
        /// boundary whose text is what the tag says.
        #[test]
        fn scanning_any_text_is_consistent(text in "[{}%\"r#\\ a\né]{0,60}") {
            let mut last_end = 0usize;
            for scanned in scan(&text) {
                match scanned {
                    Scanned::Tag(RawTag { kind, start, inner, inner_at, end }) => {
                        proptest::prop_assert!(start >= last_end);
                        proptest::prop_assert_eq!(text.get(start..inner_at), Some(kind.open()));
                        proptest::prop_assert_eq!(text.get(inner_at..end - 2), Some(inner));
                        proptest::prop_assert_eq!(text.get(end - 2..end), Some(kind.close()));
                        last_end = end;
                    }
                    Scanned::Unclosed { kind, start, resume } => {
                        proptest::prop_assert!(start >= last_end && resume > start);
                        proptest::prop_assert_eq!(text.get(start..start + 2), Some(kind.open()));
                        proptest::prop_assert!(text.is_char_boundary(resume));
                        last_end = resume;
                    }
                }
            }
        }
    }

    #[test]
    fn an_unclosed_tag_resumes_at_the_next() {
        assert_eq!(
            shown("{{ x {{ y }} {% if"),
            [
                "unclosed {{ at 0, resume 5",
                "{{ y }}",
                "unclosed {% at 13, resume 18"
            ]
        );
        // A quote left open inside a tag is read as text.
        assert_eq!(shown(r#"{{ "x }}"#), [r#"{{ "x }}"#]);
    }
}
