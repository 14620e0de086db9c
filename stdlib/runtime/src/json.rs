//! A small strict JSON (RFC 8259) reader over bytes: the tokens the typed decoder pulls one at a
//! time. No trees are built here.
//!
//! Strictness: no comments, no trailing commas, no leading `+`, no leading zeros, no `NaN`, raw
//! control characters inside strings are syntax errors. Invalid UTF-8 and lone surrogates
//! (`"\ud800"`) are *not* syntax errors (the text is still well delimited): the string is
//! returned with U+FFFD in their place and a [`TextIssue`], which the decoder reports as
//! `invalid_text`.

use std::borrow::Cow;

/// A syntax error at a byte offset. Boxed: every read of the decoder returns a `Result` with
/// this error, and a box keeps that `Result` the size of the value it carries (32 bytes, not
/// 48), which the hot path moves around on every value; an error is rare. Its fields are read
/// through `Deref` (`e.offset`, `e.message`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Syntax(Box<SyntaxAt>);

/// Where a syntax error is and what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxAt {
    pub offset: usize,
    pub message: String,
}

impl Syntax {
    pub fn new(offset: usize, message: impl Into<String>) -> Syntax {
        Syntax(Box::new(SyntaxAt {
            offset,
            message: message.into(),
        }))
    }
}

impl std::ops::Deref for Syntax {
    type Target = SyntaxAt;

    fn deref(&self) -> &SyntaxAt {
        &self.0
    }
}

/// Why a well-delimited string is still not text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextIssue {
    InvalidUtf8,
    LoneSurrogate,
}

/// A number token, split into its parts (all ASCII digits).
#[derive(Clone, Copy, Debug)]
pub struct Number<'a> {
    /// The token as written.
    pub text: &'a str,
    pub negative: bool,
    pub int_digits: &'a [u8],
    pub frac_digits: &'a [u8],
    /// The exponent, saturated to ±10^15 (far beyond any integer or float range).
    pub exponent: i64,
}

/// The kind of the next value, from its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Object,
    Array,
    String,
    Number,
    Bool,
    Null,
}

impl Kind {
    /// "an object", "a string", … for `wrong_type` sentences.
    pub fn described(self) -> &'static str {
        match self {
            Kind::Object => "an object",
            Kind::Array => "an array",
            Kind::String => "a string",
            Kind::Number => "a number",
            Kind::Bool => "a boolean",
            Kind::Null => "null",
        }
    }
}

/// The reader: a position in the bytes.
pub struct Reader<'a> {
    pub bytes: &'a [u8],
    pub pos: usize,
    /// The same bytes as text when the whole document is valid UTF-8 (checked once, up front):
    /// a string without escapes is then a slice of it, with no per-string validation.
    text: Option<&'a str>,
    /// Where a string with escapes is unescaped, reused from string to string.
    scratch: Vec<u8>,
}

/// The byte each one-letter escape stands for, by its letter (0: not one; `\u` is not).
const SIMPLE_ESCAPES: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t[b'/' as usize] = b'/';
    t[b'b' as usize] = 0x08;
    t[b'f' as usize] = 0x0c;
    t[b'n' as usize] = b'\n';
    t[b'r' as usize] = b'\r';
    t[b't' as usize] = b'\t';
    t
};

/// Deepest nesting `skip_value` follows; the pre-scan already holds documents to 64.
const SKIP_DEPTH: usize = 128;

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader {
            bytes,
            pos: 0,
            text: std::str::from_utf8(bytes).ok(),
            scratch: Vec::new(),
        }
    }

    /// Unescapes into `scratch` (its capacity kept from earlier documents).
    pub fn with_scratch(mut self, scratch: Vec<u8>) -> Reader<'a> {
        self.scratch = scratch;
        self
    }

    /// The unescaping buffer, to lend to the next document's reader.
    pub fn take_scratch(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.scratch)
    }

    /// A reader of text the caller already holds as a `str`: no UTF-8 check up front (it is
    /// valid by its type; the check of [`Reader::new`] is about 6% of decoding).
    pub fn from_text(text: &'a str) -> Reader<'a> {
        Reader {
            bytes: text.as_bytes(),
            pos: 0,
            text: Some(text),
            scratch: Vec::new(),
        }
    }

    #[cold]
    pub fn error<T>(&self, message: impl Into<String>) -> Result<T, Syntax> {
        Err(Syntax::new(self.pos, message))
    }

    #[inline]
    pub fn skip_ws(&mut self) {
        // On a local index, stored once: the loop otherwise stores `pos` on every byte.
        let bytes = self.bytes;
        let mut i = self.pos;
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(i) {
            i += 1;
        }
        self.pos = i;
    }

    /// Skips whitespace and returns the next byte without consuming it.
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.bytes.get(self.pos).copied()
    }

    /// Skips whitespace and consumes `b`, or fails with a sentence naming `what`.
    #[inline]
    pub fn expect(&mut self, b: u8, what: &str) -> Result<(), Syntax> {
        if self.peek() == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            self.unexpected(what)
        }
    }

    pub fn unexpected<T>(&self, what: &str) -> Result<T, Syntax> {
        match self.bytes.get(self.pos) {
            None => self.error(format!("expected {what}, found the end of the document")),
            Some(&b) if b.is_ascii_graphic() => {
                self.error(format!("expected {what}, found `{}`", b as char))
            }
            Some(&b) => self.error(format!("expected {what}, found byte 0x{b:02x}")),
        }
    }

    /// The kind of the next value (after whitespace), or a syntax error.
    #[inline]
    pub fn kind(&mut self) -> Result<Kind, Syntax> {
        match self.peek() {
            Some(b'{') => Ok(Kind::Object),
            Some(b'[') => Ok(Kind::Array),
            Some(b'"') => Ok(Kind::String),
            Some(b'-' | b'0'..=b'9') => Ok(Kind::Number),
            Some(b't' | b'f') => Ok(Kind::Bool),
            Some(b'n') => Ok(Kind::Null),
            _ => self.unexpected("a JSON value"),
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), Syntax> {
        if self.bytes.get(self.pos..self.pos + word.len()) == Some(word) {
            self.pos += word.len();
            Ok(())
        } else {
            self.error("invalid literal (expected true, false or null)")
        }
    }

    pub fn bool(&mut self) -> Result<bool, Syntax> {
        match self.peek() {
            Some(b't') => self.literal(b"true").map(|_| true),
            _ => self.literal(b"false").map(|_| false),
        }
    }

    pub fn null(&mut self) -> Result<(), Syntax> {
        self.skip_ws();
        self.literal(b"null")
    }

    /// After a value inside an array or object: `true` if a `,` follows (and is consumed),
    /// `false` if `close` follows (consumed).
    #[inline]
    pub fn comma_or(&mut self, close: u8) -> Result<bool, Syntax> {
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(c) if c == close => {
                self.pos += 1;
                Ok(false)
            }
            _ => self.unexpected(if close == b']' {
                "`,` or `]`"
            } else {
                "`,` or `}`"
            }),
        }
    }

    /// Consumes `[`; `true` if the array is empty (and `]` was consumed too).
    pub fn begin_array(&mut self) -> Result<bool, Syntax> {
        self.expect(b'[', "`[`")?;
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(true);
        }
        Ok(false)
    }

    /// Consumes `{`; `true` if the object is empty (and `}` was consumed too).
    pub fn begin_object(&mut self) -> Result<bool, Syntax> {
        self.expect(b'{', "`{`")?;
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(true);
        }
        Ok(false)
    }

    /// Reads `"key"` and the `:` after it. The usual key is read where it is called (a call
    /// and its frame cost as much as reading a short key); the others by `Reader::key_slow`.
    #[inline(always)]
    pub fn key(&mut self) -> Result<(Cow<'a, str>, Option<TextIssue>), Syntax> {
        if self.peek() != Some(b'"') {
            return self.key_slow();
        }
        // Fast path: a plain key in valid text, the `:` right after it or after one space.
        let start = self.pos + 1;
        let end = scan_plain(self.bytes, start);
        if self.bytes.get(end) == Some(&b'"') {
            if let Some(key) = self.text.and_then(|t| t.get(start..end)) {
                let colon = match self.bytes.get(end + 1) {
                    Some(b':') => Some(end + 2),
                    Some(b' ') if self.bytes.get(end + 2) == Some(&b':') => Some(end + 3),
                    _ => None,
                };
                if let Some(after) = colon {
                    self.pos = after;
                    return Ok((Cow::Borrowed(key), None));
                }
            }
        }
        self.key_slow()
    }

    /// The rest of [`Reader::key`]: a key with escapes, invalid text, a `:` further away, or
    /// no key at all.
    #[inline(never)]
    fn key_slow(&mut self) -> Result<(Cow<'a, str>, Option<TextIssue>), Syntax> {
        if self.peek() != Some(b'"') {
            return self.unexpected("a key in quotes");
        }
        let key = self.string()?;
        self.expect(b':', "`:`")?;
        Ok(key)
    }

    /// Reads a string (after whitespace). Borrowed when it has no escapes and is valid UTF-8.
    /// Read where it is called, as [`Reader::key`]; the rest is `Reader::string_slow`.
    #[inline(always)]
    pub fn string(&mut self) -> Result<(Cow<'a, str>, Option<TextIssue>), Syntax> {
        self.expect(b'"', "a string")?;
        let start = self.pos;
        // Fast path: a plain string in valid text is a slice of it (both ends are ASCII
        // quotes, so char boundaries); anything else goes the slow way.
        let i = scan_plain(self.bytes, start);
        if self.bytes.get(i) == Some(&b'"') {
            if let Some(s) = self.text.and_then(|t| t.get(start..i)) {
                self.pos = i + 1;
                return Ok((Cow::Borrowed(s), None));
            }
        }
        self.string_slow(start, i)
    }

    /// The rest of [`Reader::string`]: invalid UTF-8, escapes, errors. `start` is the first
    /// byte of the content, `i` where the plain run ends.
    #[cold]
    #[inline(never)]
    fn string_slow(
        &mut self,
        start: usize,
        i: usize,
    ) -> Result<(Cow<'a, str>, Option<TextIssue>), Syntax> {
        let bytes = self.bytes;
        match bytes.get(i) {
            None => {
                self.pos = i;
                return self.error("unterminated string");
            }
            Some(b'"') => {
                self.pos = i + 1;
                let raw = bytes.get(start..i).unwrap_or_default();
                return Ok(match std::str::from_utf8(raw) {
                    Ok(s) => (Cow::Borrowed(s), None),
                    Err(_) => (
                        Cow::Owned(String::from_utf8_lossy(raw).into_owned()),
                        Some(TextIssue::InvalidUtf8),
                    ),
                });
            }
            Some(b'\\') => {}
            Some(_) => {
                self.pos = i;
                return self.error("a control character must be escaped inside a string");
            }
        }
        // Whole runs between escapes are copied into the scratch buffer (which keeps its
        // capacity from string to string), a one-letter escape is one byte, and the result is
        // checked as UTF-8 once at the end, then copied out at its exact size (as serde_json
        // does). Checking slices of the document's text instead costs two char-boundary tests
        // per run, which model output, escaping every few bytes, pays more for.
        let mut issue = None;
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        let read = self.unescape(start, i, &mut out, &mut issue);
        let text = match read {
            Ok(()) => Ok(match std::str::from_utf8(&out) {
                Ok(s) => (Cow::Owned(s.to_owned()), issue),
                Err(_) => (
                    Cow::Owned(String::from_utf8_lossy(&out).into_owned()),
                    Some(TextIssue::InvalidUtf8),
                ),
            }),
            Err(e) => Err(e),
        };
        self.scratch = out;
        text
    }

    /// Unescapes a string's content into `out`, from `run` (the start of a plain run) with `i`
    /// the byte that ends that run, up to and past the closing quote: each later plain run is
    /// copied eight bytes at a time by [`copy_plain`], a one-letter escape is one byte from
    /// [`SIMPLE_ESCAPES`], and only `\u` goes through [`Reader::escape`].
    #[inline]
    fn unescape(
        &mut self,
        run: usize,
        mut i: usize,
        out: &mut Vec<u8>,
        issue: &mut Option<TextIssue>,
    ) -> Result<(), Syntax> {
        let bytes = self.bytes;
        out.extend_from_slice(bytes.get(run..i).unwrap_or_default());
        loop {
            match bytes.get(i) {
                Some(b'\\') => {
                    let letter = bytes.get(i + 1).copied().unwrap_or(0);
                    match SIMPLE_ESCAPES
                        .get(usize::from(letter))
                        .copied()
                        .unwrap_or(0)
                    {
                        0 => {
                            self.pos = i + 1;
                            let c = self.escape(issue)?;
                            out.extend_from_slice(c.encode_utf8(&mut [0u8; 4]).as_bytes());
                            i = self.pos;
                        }
                        c => {
                            out.push(c);
                            i += 2;
                        }
                    }
                    i = copy_plain(bytes, i, out);
                }
                Some(b'"') => {
                    self.pos = i + 1;
                    return Ok(());
                }
                None => {
                    self.pos = i;
                    return self.error("unterminated string");
                }
                Some(_) => {
                    self.pos = i;
                    return self.error("a control character must be escaped inside a string");
                }
            }
        }
    }

    /// Decodes the escape after a backslash (at `self.pos`), leaving `self.pos` after it. A
    /// lone surrogate becomes U+FFFD and sets `issue`.
    fn escape(&mut self, issue: &mut Option<TextIssue>) -> Result<char, Syntax> {
        let bytes = self.bytes;
        let Some(&esc) = bytes.get(self.pos) else {
            return self.error("unterminated string");
        };
        self.pos += 1;
        Ok(match esc {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = self.hex4()?;
                match hi {
                    0xD800..=0xDBFF => {
                        let low = if bytes.get(self.pos..self.pos + 2) == Some(b"\\u") {
                            let save = self.pos;
                            self.pos += 2;
                            let lo = self.hex4()?;
                            if (0xDC00..=0xDFFF).contains(&lo) {
                                Some(lo)
                            } else {
                                self.pos = save;
                                None
                            }
                        } else {
                            None
                        };
                        match low {
                            Some(lo) => {
                                let code = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                                char::from_u32(code).unwrap_or('\u{FFFD}')
                            }
                            None => {
                                *issue = Some(TextIssue::LoneSurrogate);
                                '\u{FFFD}'
                            }
                        }
                    }
                    0xDC00..=0xDFFF => {
                        *issue = Some(TextIssue::LoneSurrogate);
                        '\u{FFFD}'
                    }
                    _ => char::from_u32(hi).unwrap_or('\u{FFFD}'),
                }
            }
            _ => {
                self.pos -= 1;
                return self.error("invalid escape in a string");
            }
        })
    }

    fn hex4(&mut self) -> Result<u32, Syntax> {
        let mut v = 0u32;
        for _ in 0..4 {
            let Some(d) = self
                .bytes
                .get(self.pos)
                .and_then(|b| (*b as char).to_digit(16))
            else {
                return self.error("`\\u` must be followed by four hex digits");
            };
            v = v * 16 + d;
            self.pos += 1;
        }
        Ok(v)
    }

    /// Reads an integer written as plain digits (`0`, `-17`, at most 18 digits) when that is
    /// what comes next, else `None` with only whitespace consumed (then [`Reader::number`]
    /// decides).
    /// The common case of integer fields, without splitting a general number token.
    #[inline]
    pub fn plain_int(&mut self) -> Option<i64> {
        self.skip_ws();
        let bytes = self.bytes;
        let mut i = self.pos;
        let negative = bytes.get(i) == Some(&b'-');
        if negative {
            i += 1;
        }
        let first = i;
        let mut v: i64 = 0;
        while let Some(&d) = bytes.get(i).filter(|b| b.is_ascii_digit()) {
            // 18 digits always fit an i64; longer ones go the exact way.
            if i - first >= 18 {
                return None;
            }
            v = v * 10 + i64::from(d - b'0');
            i += 1;
        }
        let digits = i - first;
        let leading_zero = digits > 1 && bytes.get(first) == Some(&b'0');
        if digits == 0 || leading_zero || matches!(bytes.get(i), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        self.pos = i;
        Some(if negative { -v } else { v })
    }

    /// Reads a number token (after whitespace), strictly per RFC 8259.
    pub fn number(&mut self) -> Result<Number<'a>, Syntax> {
        self.skip_ws();
        let bytes = self.bytes;
        let start = self.pos;
        let negative = bytes.get(self.pos) == Some(&b'-');
        if negative {
            self.pos += 1;
        }
        let int_start = self.pos;
        match bytes.get(self.pos) {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                while bytes.get(self.pos).is_some_and(u8::is_ascii_digit) {
                    self.pos += 1;
                }
            }
            _ => return self.error("a number needs digits"),
        }
        let int_digits = bytes.get(int_start..self.pos).unwrap_or_default();
        if bytes.get(self.pos).is_some_and(u8::is_ascii_digit) {
            return self.error("a number may not have leading zeros");
        }
        let mut frac_digits: &[u8] = &[];
        if bytes.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            let frac_start = self.pos;
            while bytes.get(self.pos).is_some_and(u8::is_ascii_digit) {
                self.pos += 1;
            }
            if self.pos == frac_start {
                return self.error("a number needs digits after `.`");
            }
            frac_digits = bytes.get(frac_start..self.pos).unwrap_or_default();
        }
        let mut exponent: i64 = 0;
        if let Some(b'e' | b'E') = bytes.get(self.pos) {
            self.pos += 1;
            let exp_negative = match bytes.get(self.pos) {
                Some(b'-') => {
                    self.pos += 1;
                    true
                }
                Some(b'+') => {
                    self.pos += 1;
                    false
                }
                _ => false,
            };
            let exp_start = self.pos;
            while let Some(d) = bytes.get(self.pos).filter(|b| b.is_ascii_digit()) {
                exponent = (exponent * 10 + i64::from(d - b'0')).min(1_000_000_000_000_000);
                self.pos += 1;
            }
            if self.pos == exp_start {
                return self.error("a number needs digits in its exponent");
            }
            if exp_negative {
                exponent = -exponent;
            }
        }
        // The token is ASCII, so a slice of valid text when the document is.
        let text = match self.text.and_then(|t| t.get(start..self.pos)) {
            Some(t) => t,
            None => std::str::from_utf8(bytes.get(start..self.pos).unwrap_or_default())
                .unwrap_or_default(),
        };
        Ok(Number {
            text,
            negative,
            int_digits,
            frac_digits,
            exponent,
        })
    }

    /// Skips one value of any kind, checking its syntax (strings included).
    pub fn skip_value(&mut self) -> Result<(), Syntax> {
        self.skip_nested(0)
    }

    fn skip_nested(&mut self, depth: usize) -> Result<(), Syntax> {
        if depth > SKIP_DEPTH {
            return self.error("the document nests too deeply");
        }
        match self.kind()? {
            Kind::Object => {
                if self.begin_object()? {
                    return Ok(());
                }
                loop {
                    self.key()?;
                    self.skip_nested(depth + 1)?;
                    if !self.comma_or(b'}')? {
                        return Ok(());
                    }
                }
            }
            Kind::Array => {
                if self.begin_array()? {
                    return Ok(());
                }
                loop {
                    self.skip_nested(depth + 1)?;
                    if !self.comma_or(b']')? {
                        return Ok(());
                    }
                }
            }
            Kind::String => self.string().map(|_| ()),
            Kind::Number => self.number().map(|_| ()),
            Kind::Bool => self.bool().map(|_| ()),
            Kind::Null => self.null(),
        }
    }
}

/// The index of the first byte at or after `i` that ends the plain run of a string's content:
/// `"`, `\\` or a control character (below 0x20); `bytes.len()` if there is none.
///
/// Eight bytes at a time ([`stops`]). (Strings in model output are mostly short: a SIMD search
/// such as `memchr2` measured slower here, its per-call setup outweighing its speed.)
#[inline]
pub fn scan_plain(bytes: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let found = stops(u64::from_le_bytes(word));
        if found != 0 {
            return i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = bytes.get(i) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            return i;
        }
        i += 1;
    }
    bytes.len()
}

/// [`scan_plain`] that also appends the run it steps over to `out`. Each word is appended
/// whole (a fixed eight-byte copy, where a copy of the run's length would be a call to
/// `memcpy` per run: model output escapes every few bytes) and the bytes from its first stop
/// on are cut off again.
#[inline]
fn copy_plain(bytes: &[u8], mut i: usize, out: &mut Vec<u8>) -> usize {
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        out.extend_from_slice(&word);
        let found = stops(u64::from_le_bytes(word));
        if found != 0 {
            let k = (found.trailing_zeros() / 8) as usize;
            out.truncate(out.len() - (8 - k));
            return i + k;
        }
        i += 8;
    }
    while let Some(&b) = bytes.get(i) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            return i;
        }
        out.push(b);
        i += 1;
    }
    bytes.len()
}

/// The high bit of each byte of `w` (little-endian) that is `"`, `\\` or a control character
/// (SWAR): for a word `x`, `(x - 0x01…01) & !x & 0x80…80` is non-zero exactly when a byte of
/// `x` is zero, and its lowest set bit marks the first such byte (a borrow only ever runs
/// towards higher bytes), so `trailing_zeros` finds it exactly. The same trick with `0x20…20`
/// marks bytes below 0x20. Bytes of 0x80 and above never match, so UTF-8 text passes through
/// untouched.
#[inline(always)]
fn stops(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let quote = w ^ (ONES * u64::from(b'"'));
    let backslash = w ^ (ONES * u64::from(b'\\'));
    let found = (quote.wrapping_sub(ONES) & !quote)
        | (backslash.wrapping_sub(ONES) & !backslash)
        | (w.wrapping_sub(ONES * 0x20) & !w);
    found & HIGH
}

/// The index just past the closing quote of a string whose content starts at `i`, stepping over
/// escapes without decoding them (or `bytes.len()` if it never closes). A control character
/// stops [`scan_plain`] but is stepped over: the pre-scan leaves it to the decoder.
#[inline]
pub fn skip_string(bytes: &[u8], mut i: usize) -> usize {
    loop {
        i = scan_plain(bytes, i);
        match bytes.get(i) {
            None => return bytes.len(),
            Some(b'"') => return i + 1,
            Some(b'\\') => i += 2,
            Some(_) => i += 1,
        }
    }
}

impl Number<'_> {
    /// The exact integer value, `Err(NotIntegral)` if it has a fractional part, or
    /// `Err(TooBig)` beyond i128 (compared digit by digit, never through a float).
    pub fn to_integer(&self) -> Result<i128, IntIssue> {
        // Fast path: plain digits that surely fit.
        if self.frac_digits.is_empty() && self.exponent == 0 && self.int_digits.len() <= 38 {
            let mut v: i128 = 0;
            for d in self.int_digits {
                v = v * 10 + i128::from(d - b'0');
            }
            return Ok(if self.negative { -v } else { v });
        }
        // digits × 10^scale, with trailing zeros moved into the scale.
        let all: Vec<u8> = self
            .int_digits
            .iter()
            .chain(self.frac_digits)
            .copied()
            .collect();
        let first = all.iter().position(|d| *d != b'0');
        let Some(first) = first else {
            return Ok(0);
        };
        let last = all.iter().rposition(|d| *d != b'0').unwrap_or(first);
        let significant = all.get(first..=last).unwrap_or_default();
        let trailing_zeros = (all.len() - 1 - last) as i64;
        let scale = self.exponent - self.frac_digits.len() as i64 + trailing_zeros;
        if scale < 0 {
            return Err(IntIssue::NotIntegral);
        }
        if significant.len() as i64 + scale > 39 {
            return Err(IntIssue::TooBig);
        }
        let mut v: i128 = 0;
        for d in significant {
            v = v
                .checked_mul(10)
                .and_then(|v| v.checked_add(i128::from(d - b'0')))
                .ok_or(IntIssue::TooBig)?;
        }
        for _ in 0..scale {
            v = v.checked_mul(10).ok_or(IntIssue::TooBig)?;
        }
        Ok(if self.negative { -v } else { v })
    }
}

/// Why a number is not an exact integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntIssue {
    NotIntegral,
    TooBig,
}

#[cfg(test)]
mod tests;
