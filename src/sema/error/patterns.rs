//! [`PatternProblem`]: why a `@pattern` or `matches` regex is not portable, and how to write
//! it instead: the text of `E0350` and `E0307`, which [`super::TypeError::Pattern`] reports.

use crate::sema::pattern::{PatternErrorKind, MAX_REPETITION};

/// One construct of a regex that RE2, ECMA-262 and Rust `regex` do not share.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatternProblem {
    /// `a*+`: possessive in Java and PCRE.
    Possessive,
    /// `\1`.
    Backreference,
    /// `(?=…)`, `(?<=…)`.
    LookAround,
    /// `(?>…)` and other group syntax; `kind` is the regex parser's description.
    GroupSyntax { kind: String },
    /// A quantifier with nothing to repeat; `kind` is the regex parser's description.
    RepetitionMissing { kind: String },
    /// A malformed count `{…}`; `kind` is the regex parser's description.
    RepetitionCount { kind: String },
    /// Any other syntax error; `kind` is the regex parser's description.
    Syntax { kind: String },
    /// `(?i)`.
    Flags,
    /// `(?i:…)`.
    GroupFlags,
    /// `(?P<n>…)`, `(?<n>…)`.
    NamedGroup,
    /// A bare `{`, `}` or `]` (`c`) outside a class.
    Bare { c: char },
    /// A bare `[` inside a class.
    BareOpenInClass,
    /// The escape `\c` of a character that is no syntax character.
    UncommonEscape { c: char },
    /// An escape (`text`, as written) of the character `c` that needs none.
    Superfluous { text: String, c: char },
    /// `\0`, `\141`.
    Octal,
    /// `\u{…}`, `\x{…}`, `\uHHHH` (`text`, as written).
    HexEscape { text: String },
    /// `\a`.
    Bell,
    /// `\ `.
    EscapedSpace,
    /// `\A`.
    StartText,
    /// `\z`.
    EndText,
    /// `\b`, `\B`.
    WordBoundary,
    /// `\b{start}` and the other Rust-only boundaries.
    RustBoundary,
    /// `\p{…}`, `\pL`, `\P…`.
    UnicodeClass,
    /// `\d`, `\w`, `\s` or a negation (`name`: "d", "W"); `fix` is the ASCII class.
    PerlClass { name: String, fix: String },
    /// `[a[b]]`.
    NestedClass,
    /// `[]a]`.
    CloseFirstInClass,
    /// `[a&&b]`, `[a--b]`, `[a~~b]`.
    ClassSetOperation,
    /// `[[:alpha:]]`.
    PosixClass,
    /// `{,n}`.
    NoLowerCount,
    /// `{1, 5}`.
    SpacedCount,
    /// A count of `largest`, over [`MAX_REPETITION`].
    CountOver { largest: u32 },
    /// A quantifier after an anchor or nothing.
    RepeatedAnchor,
}

impl PatternProblem {
    /// Which rule the construct breaks: read differently (`E0307`) or outside the common
    /// syntax (`E0350`).
    pub fn kind(&self) -> PatternErrorKind {
        match self {
            PatternProblem::BareOpenInClass
            | PatternProblem::WordBoundary
            | PatternProblem::PerlClass { .. }
            | PatternProblem::CloseFirstInClass => PatternErrorKind::ReadDifferently,
            _ => PatternErrorKind::Unsupported,
        }
    }

    /// What is wrong, e.g. "`\d` means different characters in different engines".
    pub fn message(&self) -> String {
        match self {
            PatternProblem::Possessive => "possessive repetition is not supported".to_owned(),
            PatternProblem::Backreference => "backreferences are not supported".to_owned(),
            PatternProblem::LookAround => "lookaround is not supported".to_owned(),
            PatternProblem::GroupSyntax { kind } => {
                format!("this group syntax is not supported ({kind})")
            }
            PatternProblem::RepetitionMissing { kind }
            | PatternProblem::RepetitionCount { kind }
            | PatternProblem::Syntax { kind } => kind.clone(),
            PatternProblem::Flags | PatternProblem::GroupFlags => {
                "inline flags are not supported".to_owned()
            }
            PatternProblem::NamedGroup => "named groups are not supported".to_owned(),
            PatternProblem::Bare { c } => format!("a bare `{c}` is an error in ECMA-262 `u` mode"),
            PatternProblem::BareOpenInClass => {
                "a bare `[` inside a class is read differently across engines".to_owned()
            }
            PatternProblem::UncommonEscape { c } => {
                format!("the escape `\\{c}` is an error in ECMA-262 `u` mode")
            }
            PatternProblem::Superfluous { text, .. } | PatternProblem::HexEscape { text } => {
                format!("the escape `{text}` is not common syntax")
            }
            PatternProblem::Octal => "octal escapes are not supported".to_owned(),
            PatternProblem::Bell => "`\\a` is not supported by ECMA-262".to_owned(),
            PatternProblem::EscapedSpace => "`\\ ` is not common syntax".to_owned(),
            PatternProblem::StartText => "`\\A` is not supported by ECMA-262".to_owned(),
            PatternProblem::EndText => "`\\z` is not supported by ECMA-262".to_owned(),
            PatternProblem::WordBoundary => {
                "word boundaries differ across engines (Unicode in Rust, ASCII elsewhere)"
                    .to_owned()
            }
            PatternProblem::RustBoundary => "this word-boundary assertion is Rust-only".to_owned(),
            PatternProblem::UnicodeClass => "Unicode property classes are not supported".to_owned(),
            PatternProblem::PerlClass { name, .. } => {
                format!("`\\{name}` means different characters in different engines")
            }
            PatternProblem::NestedClass => "nested classes are not common syntax".to_owned(),
            PatternProblem::CloseFirstInClass => {
                "a `]` first in a class is read differently across engines".to_owned()
            }
            PatternProblem::ClassSetOperation => {
                "class set operations (`&&`, `--`, `~~`) are not common syntax".to_owned()
            }
            PatternProblem::PosixClass => {
                "POSIX classes such as `[:alpha:]` are not supported by ECMA-262".to_owned()
            }
            PatternProblem::NoLowerCount => "`{,n}` is literal text in ECMA-262".to_owned(),
            PatternProblem::SpacedCount => {
                "spaces inside a repetition count are not common syntax".to_owned()
            }
            PatternProblem::CountOver { largest } => {
                format!("the repetition count {largest} is over {MAX_REPETITION}")
            }
            PatternProblem::RepeatedAnchor => {
                "only a character, class or group can be repeated".to_owned()
            }
        }
    }

    /// How to write it instead.
    pub fn help(&self) -> String {
        match self {
            PatternProblem::Possessive => {
                "RE2, ECMA-262 and Rust `regex` read `*+` differently: drop the second `+`"
                    .to_owned()
            }
            PatternProblem::Backreference => {
                "RE2 and Rust `regex` have no backreferences: match the text itself".to_owned()
            }
            PatternProblem::LookAround => {
                "RE2 and Rust `regex` have no lookahead or lookbehind: match the text itself"
                    .to_owned()
            }
            PatternProblem::GroupSyntax { .. } => {
                "atomic groups `(?>…)` and inline flags are not common syntax: use `(…)` or `(?:…)`"
                    .to_owned()
            }
            PatternProblem::RepetitionMissing { .. } => {
                "possessive quantifiers (`a*+`) are not common syntax; to match `*`, `+`, `?` or `{` \
                 literally, escape it"
                    .to_owned()
            }
            PatternProblem::RepetitionCount { .. } => {
                "write counts as `{n}`, `{m,}` or `{m,n}` with m <= n; to match `{` escape it `\\{`"
                    .to_owned()
            }
            PatternProblem::Syntax { .. } => {
                "only the regex syntax common to RE2, ECMA-262 and Rust `regex` is accepted"
                    .to_owned()
            }
            PatternProblem::Flags => {
                "flags such as `(?i)` differ across engines: spell the cases out, e.g. `[Aa]`"
                    .to_owned()
            }
            PatternProblem::GroupFlags => {
                "flags such as `(?i:…)` differ across engines: use `(?:…)` and \
                 spell the cases out, e.g. `[Aa]`"
                    .to_owned()
            }
            PatternProblem::NamedGroup => {
                "engines spell names differently (`(?P<n>…)`, `(?<n>…)`) and a pattern \
                 only matches: use a plain group `(…)` or `(?:…)`"
                    .to_owned()
            }
            PatternProblem::Bare { c } => format!("escape it: `\\{c}`"),
            PatternProblem::BareOpenInClass => "escape it: `\\[`".to_owned(),
            PatternProblem::UncommonEscape { c } | PatternProblem::Superfluous { c, .. } => {
                format!("write the character itself: `{c}`")
            }
            PatternProblem::Octal => "write the character as `\\xHH`".to_owned(),
            PatternProblem::HexEscape { .. } => {
                "write the character itself, or `\\xHH` for a character below U+0100".to_owned()
            }
            PatternProblem::Bell => "write `\\x07`".to_owned(),
            PatternProblem::EscapedSpace => "write a plain space".to_owned(),
            PatternProblem::StartText => "write `^`".to_owned(),
            PatternProblem::EndText => "write `$`".to_owned(),
            PatternProblem::WordBoundary | PatternProblem::RustBoundary => {
                "anchor with `^` and `$`, or match the separator, e.g. `[^A-Za-z0-9_]`".to_owned()
            }
            PatternProblem::UnicodeClass => {
                "property names and versions differ across engines: list the characters or ranges, \
                 e.g. `[A-Za-z]`"
                    .to_owned()
            }
            PatternProblem::PerlClass { fix, .. } => {
                format!("write `{fix}` (inside a class, write just the ranges)")
            }
            PatternProblem::NestedClass => {
                "write one class listing all the members, e.g. `[a-z0-9]`".to_owned()
            }
            PatternProblem::CloseFirstInClass => "escape it: `\\]`".to_owned(),
            PatternProblem::ClassSetOperation => {
                "list the members of the resulting class, e.g. `[a-df-z]`".to_owned()
            }
            PatternProblem::PosixClass => "write the ranges, e.g. `A-Za-z`".to_owned(),
            PatternProblem::NoLowerCount => "write `{0,n}`".to_owned(),
            PatternProblem::SpacedCount => {
                "write the count without spaces, e.g. `{1,5}`".to_owned()
            }
            PatternProblem::CountOver { .. } => {
                "RE2 refuses counts over 1000: use a smaller count or `+`/`*` with a length \
                 bound on the type (`Str<N>`)"
                    .to_owned()
            }
            PatternProblem::RepeatedAnchor => {
                "ECMA-262 refuses a quantifier after an anchor: remove it".to_owned()
            }
        }
    }
}
