//! Structural errors (spec §4): what the pre-scan, the decoder and [`crate::validate`] report.
//!
//! Every error names the value it concerns twice: as a JSON Pointer into the document
//! (`/findings/3/line`) and as a path from the parameter (`request.findings[3].line`), with a
//! stable [`Code`] and a sentence that repeats both the path and the code:
//! `request.locale: text has 17 characters, at most 16 are allowed (too_long)`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;

/// The most errors one document reports; the decoder stops looking after that many.
pub const MAX_ERRORS: usize = 100;

/// The most bytes of a value (a number, a key, a string) that a message quotes: enough to
/// recognise it, while a 3 MB number in an input costs a line of output, not 3 MB.
pub const MAX_QUOTED: usize = 64;

/// The most bytes of a whole message, path or pointer: the bound behind every value cut to
/// [`MAX_QUOTED`], for what a message holds besides them (a long list of expected names).
pub const MAX_MESSAGE: usize = 1024;

/// `text` as an error quotes it: whole when it has at most `max` bytes, otherwise its first
/// `max` bytes (to a character boundary) with an ellipsis and its length, `12345… (3000000
/// bytes)`. The one cut for every place that repeats user text back, in the compiler too.
pub fn excerpt(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}… ({} bytes)", &text[..end], text.len()))
}

/// A value as a message quotes it: [`excerpt`] to [`MAX_QUOTED`] bytes.
pub fn quoted(text: &str) -> Cow<'_, str> {
    excerpt(text, MAX_QUOTED)
}

/// The stable error codes of spec §4, plus `invalid_json` for text that is not JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    InvalidJson,
    WrongType,
    UnknownField,
    MissingField,
    TooLong,
    TooShort,
    OutOfRange,
    NotInteger,
    NotFinite,
    UnknownVariant,
    TooManyItems,
    TooFewItems,
    DuplicateItem,
    DuplicateKey,
    PatternMismatch,
    InvalidFormat,
    InvalidText,
    TooDeep,
    TooManyValues,
    TooLarge,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidJson => "invalid_json",
            Code::WrongType => "wrong_type",
            Code::UnknownField => "unknown_field",
            Code::MissingField => "missing_field",
            Code::TooLong => "too_long",
            Code::TooShort => "too_short",
            Code::OutOfRange => "out_of_range",
            Code::NotInteger => "not_integer",
            Code::NotFinite => "not_finite",
            Code::UnknownVariant => "unknown_variant",
            Code::TooManyItems => "too_many_items",
            Code::TooFewItems => "too_few_items",
            Code::DuplicateItem => "duplicate_item",
            Code::DuplicateKey => "duplicate_key",
            Code::PatternMismatch => "pattern_mismatch",
            Code::InvalidFormat => "invalid_format",
            Code::InvalidText => "invalid_text",
            Code::TooDeep => "too_deep",
            Code::TooManyValues => "too_many_values",
            Code::TooLarge => "too_large",
        }
    }

    /// Every code, for tests and documentation.
    pub const ALL: [Code; 20] = [
        Code::InvalidJson,
        Code::WrongType,
        Code::UnknownField,
        Code::MissingField,
        Code::TooLong,
        Code::TooShort,
        Code::OutOfRange,
        Code::NotInteger,
        Code::NotFinite,
        Code::UnknownVariant,
        Code::TooManyItems,
        Code::TooFewItems,
        Code::DuplicateItem,
        Code::DuplicateKey,
        Code::PatternMismatch,
        Code::InvalidFormat,
        Code::InvalidText,
        Code::TooDeep,
        Code::TooManyValues,
        Code::TooLarge,
    ];
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One structural error.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DecodeError {
    /// JSON Pointer into the document (`""` is the whole document).
    pub pointer: String,
    /// The path from the parameter (`request.locale`).
    pub path: String,
    pub code: Code,
    /// `path: what is wrong (code)`.
    pub message: String,
}

impl DecodeError {
    /// An error at `path`; `what` is the middle of the sentence.
    /// Each part is cut to [`MAX_MESSAGE`] bytes, so an error stays short whatever it quotes.
    pub fn new(code: Code, path: &PathBuf, what: impl fmt::Display) -> DecodeError {
        let display = excerpt(&path.display(), MAX_MESSAGE).into_owned();
        let what = what.to_string();
        let what = excerpt(&what, MAX_MESSAGE);
        let message = if display.is_empty() {
            format!("{what} ({code})")
        } else {
            format!("{display}: {what} ({code})")
        };
        DecodeError {
            pointer: excerpt(&path.pointer(), MAX_MESSAGE).into_owned(),
            path: display,
            code,
            message,
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// A path being walked: a root name and the keys and indexes below it. Cheap to push and pop;
/// rendered only when an error is made.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathBuf {
    root: String,
    segs: Vec<Seg>,
}

impl PathBuf {
    /// A path at the root named `root` (`request`; `""` when the document holds several
    /// parameters and the first key names one).
    pub fn new(root: &str) -> PathBuf {
        PathBuf {
            root: root.to_owned(),
            segs: Vec::new(),
        }
    }

    pub fn push_key(&mut self, key: &str) {
        self.segs.push(Seg::Key(key.to_owned()));
    }

    pub fn push_index(&mut self, i: usize) {
        self.segs.push(Seg::Index(i));
    }

    pub fn pop(&mut self) {
        self.segs.pop();
    }

    /// The JSON Pointer (RFC 6901): `/findings/3/line`, `~` and `/` escaped.
    pub fn pointer(&self) -> String {
        let mut out = String::new();
        for seg in &self.segs {
            out.push('/');
            match seg {
                Seg::Key(k) => {
                    for c in k.chars() {
                        match c {
                            '~' => out.push_str("~0"),
                            '/' => out.push_str("~1"),
                            c => out.push(c),
                        }
                    }
                }
                Seg::Index(i) => out.push_str(&i.to_string()),
            }
        }
        out
    }

    /// The path from the parameter: `request.findings[3].line`; a key that is not an
    /// identifier is written `["key"]`.
    pub fn display(&self) -> String {
        let mut out = self.root.clone();
        for seg in &self.segs {
            match seg {
                Seg::Key(k) if is_identifier(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Seg::Key(k) => {
                    out.push('[');
                    crate::value::write_json_str(k, &mut out);
                    out.push(']');
                }
                Seg::Index(i) => {
                    out.push('[');
                    out.push_str(&i.to_string());
                    out.push(']');
                }
            }
        }
        out
    }
}

/// One step below a [`Trail`] node.
#[derive(Clone, Copy, Debug)]
pub enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// A path kept on the stack while decoding: each level borrows its parent, so walking costs
/// nothing; it becomes a [`PathBuf`] only when an error is made.
#[derive(Clone, Copy, Debug)]
pub enum Trail<'a> {
    Root(&'a str),
    Child(&'a Trail<'a>, Step<'a>),
}

impl<'a> Trail<'a> {
    pub fn key(&'a self, key: &'a str) -> Trail<'a> {
        Trail::Child(self, Step::Key(key))
    }

    pub fn index(&'a self, i: usize) -> Trail<'a> {
        Trail::Child(self, Step::Index(i))
    }

    pub fn to_path(&self) -> PathBuf {
        let mut steps = Vec::new();
        let mut at = self;
        let root = loop {
            match at {
                Trail::Root(root) => break *root,
                Trail::Child(parent, step) => {
                    steps.push(*step);
                    at = parent;
                }
            }
        };
        let mut path = PathBuf::new(root);
        for step in steps.iter().rev() {
            match step {
                Step::Key(k) => path.push_key(k),
                Step::Index(i) => path.push_index(*i),
            }
        }
        path
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_render_as_pointer_and_dotted_path() {
        let mut p = PathBuf::new("request");
        p.push_key("findings");
        p.push_index(3);
        p.push_key("a/b~c");
        assert_eq!(p.pointer(), "/findings/3/a~1b~0c");
        assert_eq!(p.display(), r#"request.findings[3]["a/b~c"]"#);
        let e = DecodeError::new(Code::TooLong, &p, "text is long");
        assert_eq!(
            e.message,
            r#"request.findings[3]["a/b~c"]: text is long (too_long)"#
        );
    }

    #[test]
    fn long_values_are_quoted_cut_with_their_length() {
        assert_eq!(excerpt("12345", 5), "12345");
        assert_eq!(excerpt("123456", 5), "12345… (6 bytes)");
        // Cut at a character boundary: `é` is two bytes.
        assert_eq!(excerpt("aéé", 2), "a… (5 bytes)");
        let key = "k".repeat(1_000_000);
        let mut p = PathBuf::new("request");
        p.push_key(&key);
        let e = DecodeError::new(Code::UnknownField, &p, format!("unknown field \"{key}\""));
        assert!(e.message.len() < 3 * MAX_MESSAGE, "{}", e.message.len());
        assert!(e.pointer.len() < 2 * MAX_MESSAGE && e.path.len() < 2 * MAX_MESSAGE);
    }
}
