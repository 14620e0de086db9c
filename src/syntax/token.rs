//! The tokens of AEL (spec §2), recognised by a logos DFA.
//!
//! Tokens are `Copy` and borrow from the source, so the parser can clone them freely. Literal
//! tokens are classified here (a number with a unit, a rate, a string), and whatever cannot be a
//! token becomes a [`LexError`] that the lexer turns into a diagnostic and an [`Token::Error`].
//! Comments are tokens too; the lexer moves them out of the stream before parsing.

use std::fmt;

use logos::{Lexer, Logos};

use crate::syntax::ast::{DurationUnit, SizeUnit};

/// Why a piece of the source is not a token. Offsets are relative to the start of the token.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum LexError {
    /// A character that starts no token.
    #[default]
    UnexpectedChar,
    /// An integer larger than `u64::MAX`.
    IntOverflow,
    /// A number with a suffix that is no unit: `5min`.
    UnknownUnit { unit: String, at: usize },
    /// A float with a duration or size unit: `1.5s`.
    FractionalUnit { unit: String },
    /// `10/x` written without spaces: neither a rate nor clearly a division.
    UnknownRateUnit { unit: String, at: usize },
    /// A bad escape inside a string: `"\q"`.
    InvalidEscape { at: usize, len: usize },
    /// A `"` without its closing `"`.
    UnterminatedString,
    /// `r#"` without its closing `"#`.
    UnterminatedRawString { hashes: usize },
    /// More than 255 `#` in a raw string.
    TooManyHashes,
    /// `/*` without its closing `*/`.
    UnterminatedComment,
}

/// What kind of `//` comment a line comment is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommentKind {
    /// `// …` and `/* … */`.
    Plain,
    /// `/// …`: documents the next item, field, variant or error code.
    Doc,
    /// `//! …`: documents the module.
    ModuleDoc,
}

/// A token. `Error` stands where the lexer found something it could not read (already reported);
/// the parser accepts it as an expression or a type so that one bad literal causes one error.
#[derive(Logos, Clone, Copy, Debug, PartialEq)]
#[logos(error = LexError)]
#[logos(skip r"[ \t\r\n\f]+")]
pub enum Token<'src> {
    Error,

    #[regex(r"//[^\n]*", line_comment, allow_greedy = true)]
    #[token("/*", block_comment)]
    Comment(CommentKind),

    #[token("use")]
    Use,
    #[token("type")]
    Type,
    #[token("struct")]
    Struct,
    #[token("enum")]
    Enum,
    #[token("errors")]
    Errors,
    #[token("fn")]
    Fn,
    #[token("extern")]
    Extern,
    #[token("check")]
    Check,
    #[token("node")]
    Node,
    #[token("agent")]
    Agent,
    #[token("stream")]
    Stream,
    #[token("builder")]
    Builder,
    #[token("require")]
    Require,
    #[token("example")]
    Example,
    #[token("let")]
    Let,
    #[token("return")]
    Return,
    #[token("if")]
    If,
    #[token("else")]
    Else,
    #[token("match")]
    Match,
    #[token("true")]
    True,
    #[token("false")]
    False,
    #[token("none")]
    None,
    #[token("some")]
    Some,
    #[token("fails")]
    Fails,

    #[regex(r"[A-Za-z_][A-Za-z0-9_]*")]
    Ident(&'src str),

    /// `42`, `1_000`.
    #[regex(r"[0-9][0-9_]*", int_literal)]
    Int(u64),
    /// `0.5`, `1e-3`, `1.5e3`: the text as written (underscores included).
    #[regex(r"[0-9][0-9_]*\.[0-9][0-9_]*([eE][+-]?[0-9][0-9_]*)?", |lex| lex.slice())]
    #[regex(r"[0-9][0-9_]*[eE][+-]?[0-9][0-9_]*", |lex| lex.slice(), priority = 10)]
    Float(&'src str),
    /// A number immediately followed by letters: a duration or a size.
    #[regex(r"[0-9][0-9_]*(\.[0-9][0-9_]*)?[A-Za-z][A-Za-z0-9_]*", suffixed_number)]
    Unit(UnitValue),
    /// `50/s`, `600/m`, `10/h`.
    #[regex(r"[0-9][0-9_]*/[A-Za-z][A-Za-z0-9_]*", rate_literal)]
    Rate(Rate),

    /// `"…"`: the text between the quotes, escapes not yet resolved (they were checked).
    #[regex(r#""([^"\\]|\\(.|\n))*""#, string_literal)]
    // An unclosed string stops at the end of its line, so the next lines still parse.
    #[regex(r#""([^"\\\n]|\\.)*\\?"#, unterminated_string)]
    Str(&'src str),
    /// `r"…"`, `r#"…"#`: the number of hashes and the text between the quotes.
    #[regex(r##"r#*""##, raw_string)]
    RawStr(RawStr<'src>),

    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("<")]
    Lt,
    #[token(">")]
    Gt,
    #[token("<=")]
    Le,
    #[token(">=")]
    Ge,
    #[token("==")]
    EqEq,
    #[token("!=")]
    Ne,
    #[token("=")]
    Eq,
    #[token(",")]
    Comma,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token("::")]
    ColonColon,
    #[token(".")]
    Dot,
    #[token("..")]
    DotDot,
    #[token("..=")]
    DotDotEq,
    #[token("&&")]
    AndAnd,
    #[token("||")]
    OrOr,
    #[token("!")]
    Bang,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("|")]
    Pipe,
    #[token("=>")]
    FatArrow,
    #[token("->")]
    Arrow,
    #[token("@")]
    At,
}

/// `50/s`: a count per duration unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    pub count: u64,
    pub per: DurationUnit,
}

/// A raw string literal as written, `r#"…"#`: its body and its number of `#` are read off
/// that text on demand. One `&str` keeps [`Token`] at 24 bytes (a separate count made every
/// token 32, and a large file's token buffer a third larger).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawStr<'src> {
    text: &'src str,
}

impl<'src> RawStr<'src> {
    /// How many `#` stand between `r` and the opening quote (at most 255, by the lexer).
    pub fn hashes(self) -> u8 {
        let count = self.text.bytes().skip(1).take_while(|&b| b == b'#').count();
        u8::try_from(count).unwrap_or(u8::MAX)
    }

    /// The text between the quotes.
    pub fn body(self) -> &'src str {
        let hashes = usize::from(self.hashes());
        // `r` + hashes + `"` before, `"` + hashes after.
        self.text
            .get(hashes + 2..self.text.len().saturating_sub(hashes + 1))
            .unwrap_or("")
    }
}

/// A number with a unit: `250ms` or `16KiB`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitValue {
    Duration(u64, DurationUnit),
    Size(u64, SizeUnit),
}

/// The units a number may carry, for the "unknown unit" message.
pub const UNITS_HELP: &str = "durations take ms, s, m, h; sizes take B, KiB, MiB, GiB, kB, MB, GB";

fn line_comment<'src>(lex: &mut Lexer<'src, Token<'src>>) -> CommentKind {
    let text = lex.slice();
    if text.starts_with("///") && !text.starts_with("////") {
        CommentKind::Doc
    } else if text.starts_with("//!") {
        CommentKind::ModuleDoc
    } else {
        CommentKind::Plain
    }
}

/// Skips a nested `/* … */` comment; an unclosed one runs to the end of the file.
fn block_comment<'src>(lex: &mut Lexer<'src, Token<'src>>) -> Result<CommentKind, LexError> {
    let rest = lex.remainder().as_bytes();
    let mut depth = 1usize;
    let mut i = 0;
    while i < rest.len() {
        match (rest[i], rest.get(i + 1)) {
            (b'/', Some(b'*')) => {
                depth += 1;
                i += 2;
            }
            (b'*', Some(b'/')) => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    lex.bump(i);
                    return Ok(CommentKind::Plain);
                }
            }
            _ => i += 1,
        }
    }
    // Only ASCII bytes were matched as markers, so the end of the remainder is a boundary.
    lex.bump(rest.len());
    Err(LexError::UnterminatedComment)
}

/// Parses decimal digits with `_` separators; `None` on overflow.
pub fn parse_digits(text: &str) -> Option<u64> {
    let mut value: u64 = 0;
    for byte in text.bytes().filter(|b| *b != b'_') {
        let digit = u64::from(byte.checked_sub(b'0')?);
        if digit > 9 {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(digit)?;
    }
    Some(value)
}

fn int_literal<'src>(lex: &mut Lexer<'src, Token<'src>>) -> Result<u64, LexError> {
    parse_digits(lex.slice()).ok_or(LexError::IntOverflow)
}

/// Classifies `250ms`, `16KiB`; anything else with letters after the digits is an error.
fn suffixed_number<'src>(lex: &mut Lexer<'src, Token<'src>>) -> Result<UnitValue, LexError> {
    let text = lex.slice();
    let split = text
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let duration = match unit {
        "ms" => Some(DurationUnit::Millis),
        "s" => Some(DurationUnit::Seconds),
        "m" => Some(DurationUnit::Minutes),
        "h" => Some(DurationUnit::Hours),
        _ => None,
    };
    let size = match unit {
        "B" => Some(SizeUnit::B),
        "KiB" => Some(SizeUnit::KiB),
        "MiB" => Some(SizeUnit::MiB),
        "GiB" => Some(SizeUnit::GiB),
        "kB" => Some(SizeUnit::KB),
        "MB" => Some(SizeUnit::MB),
        "GB" => Some(SizeUnit::GB),
        _ => None,
    };
    if duration.is_none() && size.is_none() {
        return Err(LexError::UnknownUnit {
            unit: unit.to_owned(),
            at: split,
        });
    }
    if number.contains('.') {
        return Err(LexError::FractionalUnit {
            unit: unit.to_owned(),
        });
    }
    let value = parse_digits(number).ok_or(LexError::IntOverflow)?;
    Ok(match (duration, size) {
        (Some(unit), _) => UnitValue::Duration(value, unit),
        (None, Some(unit)) => UnitValue::Size(value, unit),
        (None, None) => return Err(LexError::UnexpectedChar),
    })
}

fn rate_literal<'src>(lex: &mut Lexer<'src, Token<'src>>) -> Result<Rate, LexError> {
    let text = lex.slice();
    let slash = text.find('/').unwrap_or(text.len());
    let (number, unit) = (&text[..slash], text.get(slash + 1..).unwrap_or(""));
    let per = match unit {
        "s" => DurationUnit::Seconds,
        "m" => DurationUnit::Minutes,
        "h" => DurationUnit::Hours,
        _ => {
            return Err(LexError::UnknownRateUnit {
                unit: unit.to_owned(),
                at: slash + 1,
            })
        }
    };
    let count = parse_digits(number).ok_or(LexError::IntOverflow)?;
    Ok(Rate { count, per })
}

fn string_literal<'src>(lex: &mut Lexer<'src, Token<'src>>) -> Result<&'src str, LexError> {
    let text = lex.slice();
    let body = &text[1..text.len() - 1];
    match unescape(body) {
        Ok(_) => Ok(body),
        // +1: offsets in the error are relative to the token, which starts with `"`.
        Err((at, len)) => Err(LexError::InvalidEscape { at: at + 1, len }),
    }
}

fn unterminated_string<'src>(_lex: &mut Lexer<'src, Token<'src>>) -> Result<&'src str, LexError> {
    Err(LexError::UnterminatedString)
}

/// Reads `r#…#"…"#…#` after the opening `r`, hashes and quote were matched.
fn raw_string<'src>(lex: &mut Lexer<'src, Token<'src>>) -> Result<RawStr<'src>, LexError> {
    let hashes = lex.slice().len() - 2;
    u8::try_from(hashes).map_err(|_| LexError::TooManyHashes)?;
    let rest = lex.remainder();
    let mut closing = String::with_capacity(hashes + 1);
    closing.push('"');
    closing.extend(std::iter::repeat_n('#', hashes));
    match rest.find(&closing) {
        Some(end) => {
            lex.bump(end + closing.len());
            Ok(RawStr { text: lex.slice() })
        }
        None => {
            lex.bump(rest.len());
            Err(LexError::UnterminatedRawString { hashes })
        }
    }
}

/// Resolves the escapes of a string body. `Err((offset, len))` locates the first bad escape
/// (byte offsets inside `body`, on char boundaries).
pub fn unescape(body: &str) -> Result<String, (usize, usize)> {
    if !body.contains('\\') {
        return Ok(body.to_owned());
    }
    let mut out = String::with_capacity(body.len());
    let mut chars = body.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some((_, escaped)) = chars.next() else {
            return Err((at, 1));
        };
        let resolved = match escaped {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            '\\' => '\\',
            '"' => '"',
            '0' => '\0',
            'u' => {
                let rest = &body[at + 2..];
                let close = rest.find('}');
                let bad = (at, 2 + close.map_or(0, |c| c + 1).min(rest.len()));
                if !rest.starts_with('{') {
                    return Err((at, 2));
                }
                let close = close.ok_or(bad)?;
                let hex = &rest[1..close];
                let value = (!hex.is_empty() && hex.len() <= 6)
                    .then(|| u32::from_str_radix(hex, 16).ok())
                    .flatten()
                    .and_then(char::from_u32)
                    .ok_or(bad)?;
                // Skip `{…}`: every char in it is ASCII.
                for _ in 0..=close {
                    chars.next();
                }
                value
            }
            other => return Err((at, 1 + other.len_utf8())),
        };
        out.push(resolved);
    }
    Ok(out)
}

impl fmt::Display for Token<'_> {
    /// How a token is named in "expected …, found …" messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            Token::Error => "an invalid token",
            Token::Comment(_) => "a comment",
            Token::Ident(name) => return write!(f, "`{name}`"),
            Token::Int(_) | Token::Float(_) => "a number",
            Token::Unit(UnitValue::Duration(..)) => "a duration",
            Token::Unit(UnitValue::Size(..)) => "a size",
            Token::Rate(_) => "a rate",
            Token::Str(_) | Token::RawStr(_) => "a string",
            other => return write!(f, "`{}`", other.symbol()),
        };
        f.write_str(text)
    }
}

impl Token<'_> {
    /// The fixed spelling of keywords and punctuation (empty for literals and names).
    pub fn symbol(&self) -> &'static str {
        match self {
            Token::Use => "use",
            Token::Type => "type",
            Token::Struct => "struct",
            Token::Enum => "enum",
            Token::Errors => "errors",
            Token::Fn => "fn",
            Token::Extern => "extern",
            Token::Check => "check",
            Token::Node => "node",
            Token::Agent => "agent",
            Token::Stream => "stream",
            Token::Builder => "builder",
            Token::Require => "require",
            Token::Example => "example",
            Token::Let => "let",
            Token::Return => "return",
            Token::If => "if",
            Token::Else => "else",
            Token::Match => "match",
            Token::True => "true",
            Token::False => "false",
            Token::None => "none",
            Token::Some => "some",
            Token::Fails => "fails",
            Token::LBrace => "{",
            Token::RBrace => "}",
            Token::LParen => "(",
            Token::RParen => ")",
            Token::LBracket => "[",
            Token::RBracket => "]",
            Token::Lt => "<",
            Token::Gt => ">",
            Token::Le => "<=",
            Token::Ge => ">=",
            Token::EqEq => "==",
            Token::Ne => "!=",
            Token::Eq => "=",
            Token::Comma => ",",
            Token::Semi => ";",
            Token::Colon => ":",
            Token::ColonColon => "::",
            Token::Dot => ".",
            Token::DotDot => "..",
            Token::DotDotEq => "..=",
            Token::AndAnd => "&&",
            Token::OrOr => "||",
            Token::Bang => "!",
            Token::Plus => "+",
            Token::Minus => "-",
            Token::Star => "*",
            Token::Slash => "/",
            Token::Percent => "%",
            Token::Pipe => "|",
            Token::FatArrow => "=>",
            Token::Arrow => "->",
            Token::At => "@",
            Token::Error
            | Token::Comment(_)
            | Token::Ident(_)
            | Token::Int(_)
            | Token::Float(_)
            | Token::Unit(_)
            | Token::Rate(..)
            | Token::Str(_)
            | Token::RawStr(_) => "",
        }
    }

    /// Every keyword (spec §2), the one list: the lexer's `#[token]` attributes spell them for
    /// logos (a test checks each lexes back to its token), and the language server completes
    /// them from here.
    pub const KEYWORDS: [Token<'static>; 24] = [
        Token::Use,
        Token::Type,
        Token::Struct,
        Token::Enum,
        Token::Errors,
        Token::Fn,
        Token::Extern,
        Token::Check,
        Token::Node,
        Token::Agent,
        Token::Stream,
        Token::Builder,
        Token::Require,
        Token::Example,
        Token::Let,
        Token::Return,
        Token::If,
        Token::Else,
        Token::Match,
        Token::True,
        Token::False,
        Token::None,
        Token::Some,
        Token::Fails,
    ];

    /// Keywords may stand where a block entry's key or a field name is expected.
    pub fn keyword_text(&self) -> Option<&'static str> {
        Token::KEYWORDS.contains(self).then(|| self.symbol())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The token buffer of a large file is most of the lexer's memory traffic: a payload that
    /// grows a token past 24 bytes grows every token.
    #[test]
    fn a_token_is_24_bytes() {
        assert_eq!(std::mem::size_of::<Token<'static>>(), 24);
    }

    /// Each keyword of [`Token::KEYWORDS`] is what the lexer makes of its text, and no other
    /// word the lexer reserves is missing from the list.
    #[test]
    fn the_keyword_list_is_the_lexers() {
        for keyword in Token::KEYWORDS {
            let mut lexer = Token::lexer(keyword.symbol());
            assert_eq!(lexer.next(), Some(Ok(keyword)), "{}", keyword.symbol());
        }
        let words = include_str!("token.rs")
            .lines()
            .filter_map(|l| l.trim().strip_prefix("#[token(\""))
            .filter_map(|l| l.split('"').next())
            .filter(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '_') && !w.is_empty());
        for word in words {
            assert!(
                Token::KEYWORDS.iter().any(|k| k.symbol() == word),
                "`{word}` is lexed as a keyword but not listed"
            );
        }
    }

    #[test]
    fn raw_strings_give_body_and_hashes() {
        let cases = [
            (r#"r"a\b""#, 0, r"a\b"),
            (r##"r#"say "hi""#"##, 1, r#"say "hi""#),
            (r###"r##""#"##"###, 2, r##""#"##),
            (r#"r"""#, 0, ""),
        ];
        for (text, hashes, body) in cases {
            let mut lexer = Token::lexer(text);
            match lexer.next() {
                Some(Ok(Token::RawStr(raw))) => {
                    assert_eq!((raw.hashes(), raw.body()), (hashes, body), "{text}");
                }
                other => panic!("{text}: lexed as {other:?}"),
            }
            assert!(lexer.next().is_none(), "{text}: more than one token");
        }
    }
}
