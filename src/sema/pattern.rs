//! The `@pattern` validator (spec §3): a pattern must mean the same under RE2 (the gateway),
//! ECMA-262 (other JSON Schema validators, `u` mode) and the Rust `regex` crate, so only the
//! syntax the three share is accepted, and everything else is refused with a fix.
//!
//! How: `regex-syntax` (the parser of the `regex` crate) parses the pattern into an AST with
//! byte spans, which rejects everything Rust cannot run; the walk below then refuses the nodes
//! that Rust accepts but RE2 or ECMA-262 read differently or not at all. Offsets are bytes inside
//! the pattern text, so for a raw string `r"…"` they map straight onto the source.
//!
//! Decisions (documented in the book's reference page for `@pattern`):
//! - all `\p{…}` / `\pL` / `\P` classes are refused: the property names differ across engines;
//! - all flags (`(?i)`, `(?i:…)`) are refused: ECMA-262 has no inline flags in most engines;
//! - named groups, both `(?P<n>…)` and `(?<n>…)`, are refused: ECMA has no `?P`, older RE2 no
//!   `?<`, and a pattern only matches, so a name is never read; a plain `(…)` or `(?:…)` works;
//! - `\d \w \s \D \W \S \b \B` are refused with the ASCII class that means the same everywhere;
//! - escapes are limited to `\xHH`, `\t \n \r \f \v` and the syntax characters
//!   `^ $ \ . * + ? ( ) [ ] { } | /` (and `-` inside a class): ECMA `u` mode refuses the rest.
//!
//! Two codes, one per rule ([`PatternErrorKind`]): `E0350` for what is outside the common
//! syntax (some engine refuses it, or it is no regex), `E0307` for what every engine accepts
//! but reads differently (`\d \w \s \b` and their negations, a `]` first or a bare `[` in a
//! class). The second is the subtler bug: the pattern works in a test and fails elsewhere.

pub use super::error::PatternProblem;
use regex_syntax::ast::{
    self, AssertionKind, Ast, ClassPerlKind, ClassSet, ClassSetItem, ErrorKind, GroupKind,
    HexLiteralKind, LiteralKind, RepetitionKind, RepetitionRange, SpecialLiteralKind,
};

/// The largest repetition count accepted (`{1000}`), as the spec says.
pub const MAX_REPETITION: u32 = 1000;

/// Which of the two portability rules a refused construct breaks; each has its own code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatternErrorKind {
    /// Outside the common syntax: some engine refuses or cannot run it (a backreference, an
    /// inline flag, `\A`), or it is no regex at all (`(abc`). Reported as `E0350`.
    Unsupported,
    /// Inside every engine's syntax but read differently: it matches other texts in Rust than
    /// in RE2 or ECMA-262 (`\d` is Unicode in Rust, ASCII elsewhere; `[]a]`). Reported as
    /// `E0307`.
    ReadDifferently,
}

/// Why a pattern is refused, at a byte range inside the pattern text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatternError {
    /// Byte offset of the offending construct inside the pattern.
    pub offset: usize,
    /// Its length in bytes (at least 1 unless the pattern is empty there).
    pub len: usize,
    /// What the construct is; its message and help are written in `sema/error/patterns.rs`.
    pub problem: PatternProblem,
    /// What to write instead of the construct (its `len` bytes at `offset`), when the help
    /// names one replacement that can be applied as it is (`[0-9]` for `\d`): the language
    /// server offers it as a quick fix.
    pub replacement: Option<String>,
}

impl PatternError {
    /// Which rule it breaks.
    pub fn kind(&self) -> PatternErrorKind {
        self.problem.kind()
    }

    /// What is wrong, e.g. "`\\d` means different characters in different engines".
    pub fn message(&self) -> String {
        self.problem.message()
    }

    /// How to write it instead.
    pub fn help(&self) -> String {
        self.problem.help()
    }
}

/// Checks that `pattern` uses only the regex syntax common to RE2, ECMA-262 and Rust `regex`.
/// Never panics; returns every problem found (a syntax error stops at the first).
pub fn check_pattern(pattern: &str) -> Result<(), Vec<PatternError>> {
    if let Some(error) = possessive_repetition(pattern) {
        return Err(vec![error]);
    }
    let ast = match ast::parse::ParserBuilder::new()
        .nest_limit(100)
        .build()
        .parse(pattern)
    {
        Ok(ast) => ast,
        Err(error) => return Err(vec![from_syntax_error(&error)]),
    };
    let mut walk = Walk {
        pattern,
        errors: Vec::new(),
    };
    walk.ast(&ast);
    if walk.errors.is_empty() {
        Ok(())
    } else {
        Err(walk.errors)
    }
}

/// `a*+`, `a++`, `a?+`, `a{2}+`: possessive in Java/PCRE, a nested repetition in Rust `regex`,
/// an error in ECMA-262. regex-syntax accepts it, so it is found here, outside classes.
fn possessive_repetition(pattern: &str) -> Option<PatternError> {
    let mut escaped = false;
    let mut in_class = false;
    let mut previous_was_quantifier = false;
    for (offset, c) in pattern.char_indices() {
        if escaped {
            escaped = false;
            previous_was_quantifier = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '+' if !in_class && previous_was_quantifier => {
                return Some(PatternError {
                    offset,
                    len: 1,
                    problem: PatternProblem::Possessive,
                    replacement: Some(String::new()),
                });
            }
            _ => {}
        }
        previous_was_quantifier = !in_class && !escaped && matches!(c, '*' | '+' | '?' | '}');
    }
    None
}

fn from_syntax_error(error: &ast::Error) -> PatternError {
    let span = error.span();
    let kind = error.kind().to_string();
    let problem = match error.kind() {
        ErrorKind::UnsupportedBackreference => PatternProblem::Backreference,
        ErrorKind::UnsupportedLookAround => PatternProblem::LookAround,
        ErrorKind::FlagUnrecognized | ErrorKind::FlagUnexpectedEof => {
            PatternProblem::GroupSyntax { kind }
        }
        ErrorKind::RepetitionMissing => PatternProblem::RepetitionMissing { kind },
        ErrorKind::RepetitionCountInvalid
        | ErrorKind::RepetitionCountDecimalEmpty
        | ErrorKind::RepetitionCountUnclosed => PatternProblem::RepetitionCount { kind },
        _ => PatternProblem::Syntax { kind },
    };
    PatternError {
        offset: span.start.offset,
        len: span.end.offset.saturating_sub(span.start.offset),
        problem,
        replacement: None,
    }
}

struct Walk<'p> {
    pattern: &'p str,
    errors: Vec<PatternError>,
}

impl Walk<'_> {
    /// Refuses the construct at `span`.
    fn refuse(&mut self, span: &ast::Span, problem: PatternProblem) {
        self.errors.push(PatternError {
            offset: span.start.offset,
            len: span.end.offset.saturating_sub(span.start.offset),
            problem,
            replacement: None,
        });
    }

    /// Sets what replaces the construct of the last error pushed (see
    /// [`PatternError::replacement`]).
    fn replace_last(&mut self, with: impl Into<String>) {
        if let Some(last) = self.errors.last_mut() {
            last.replacement = Some(with.into());
        }
    }

    fn text(&self, span: &ast::Span) -> &str {
        self.pattern
            .get(span.start.offset..span.end.offset)
            .unwrap_or("")
    }

    fn ast(&mut self, ast: &Ast) {
        match ast {
            Ast::Empty(_) | Ast::Dot(_) => {}
            Ast::Flags(flags) => self.refuse(&flags.span, PatternProblem::Flags),
            Ast::Literal(literal) => self.literal(literal, false),
            Ast::Assertion(assertion) => self.assertion(assertion),
            Ast::ClassUnicode(class) => self.unicode_class(&class.span),
            Ast::ClassPerl(class) => {
                self.perl_class(&class.span, &class.kind, class.negated, false)
            }
            Ast::ClassBracketed(class) => self.bracketed(class, true),
            Ast::Repetition(repetition) => self.repetition(repetition),
            Ast::Group(group) => {
                match &group.kind {
                    GroupKind::CaptureIndex(_) => {}
                    GroupKind::CaptureName { name, .. } => {
                        self.refuse(&name.span, PatternProblem::NamedGroup)
                    }
                    GroupKind::NonCapturing(flags) => {
                        if !flags.items.is_empty() {
                            self.refuse(&flags.span, PatternProblem::GroupFlags);
                        }
                    }
                }
                self.ast(&group.ast);
            }
            Ast::Alternation(alternation) => alternation.asts.iter().for_each(|a| self.ast(a)),
            Ast::Concat(concat) => concat.asts.iter().for_each(|a| self.ast(a)),
        }
    }

    fn literal(&mut self, literal: &ast::Literal, in_class: bool) {
        match &literal.kind {
            LiteralKind::Verbatim => {
                let c = literal.c;
                if !in_class && matches!(c, '{' | '}' | ']') {
                    self.refuse(&literal.span, PatternProblem::Bare { c });
                    self.replace_last(format!("\\{c}"));
                }
                if in_class && c == '[' {
                    self.refuse(&literal.span, PatternProblem::BareOpenInClass);
                    self.replace_last("\\[");
                }
            }
            LiteralKind::Meta => {
                let c = literal.c;
                let common = "^$\\.*+?()[]{}|/".contains(c) || (in_class && c == '-');
                if !common {
                    self.refuse(&literal.span, PatternProblem::UncommonEscape { c });
                    self.replace_last(c);
                }
            }
            // `\/` is an identity escape in every engine (ECMA-262 lists `/` as syntax).
            LiteralKind::Superfluous if literal.c == '/' => {}
            LiteralKind::Superfluous => {
                let text = self.text(&literal.span).to_owned();
                let c = literal.c;
                self.refuse(&literal.span, PatternProblem::Superfluous { text, c });
                self.replace_last(literal.c);
            }
            LiteralKind::Octal => self.refuse(&literal.span, PatternProblem::Octal),
            LiteralKind::HexFixed(HexLiteralKind::X) => {}
            LiteralKind::HexFixed(_) | LiteralKind::HexBrace(_) => {
                let text = self.text(&literal.span).to_owned();
                self.refuse(&literal.span, PatternProblem::HexEscape { text })
            }
            LiteralKind::Special(kind) => match kind {
                SpecialLiteralKind::Tab
                | SpecialLiteralKind::LineFeed
                | SpecialLiteralKind::CarriageReturn
                | SpecialLiteralKind::FormFeed
                | SpecialLiteralKind::VerticalTab => {}
                SpecialLiteralKind::Bell => {
                    self.refuse(&literal.span, PatternProblem::Bell);
                    self.replace_last("\\x07");
                }
                SpecialLiteralKind::Space => {
                    self.refuse(&literal.span, PatternProblem::EscapedSpace);
                    self.replace_last(" ");
                }
            },
        }
    }

    fn assertion(&mut self, assertion: &ast::Assertion) {
        let (problem, replacement) = match assertion.kind {
            AssertionKind::StartLine | AssertionKind::EndLine => return,
            AssertionKind::StartText => (PatternProblem::StartText, Some("^")),
            AssertionKind::EndText => (PatternProblem::EndText, Some("$")),
            AssertionKind::WordBoundary | AssertionKind::NotWordBoundary => {
                (PatternProblem::WordBoundary, None)
            }
            _ => (PatternProblem::RustBoundary, None),
        };
        self.refuse(&assertion.span, problem);
        if let Some(replacement) = replacement {
            self.replace_last(replacement);
        }
    }

    fn unicode_class(&mut self, span: &ast::Span) {
        self.refuse(span, PatternProblem::UnicodeClass);
    }

    /// `\d`, `\w`, `\s` and their negations; `in_class`: inside `[…]`.
    fn perl_class(
        &mut self,
        span: &ast::Span,
        kind: &ClassPerlKind,
        negated: bool,
        in_class: bool,
    ) {
        let (name, class) = match kind {
            ClassPerlKind::Digit => ("d", "0-9"),
            ClassPerlKind::Word => ("w", "A-Za-z0-9_"),
            ClassPerlKind::Space => ("s", " \\t\\n\\r\\f\\v"),
        };
        let (name, fix) = if negated {
            (name.to_ascii_uppercase(), format!("[^{class}]"))
        } else {
            (name.to_owned(), format!("[{class}]"))
        };
        self.refuse(
            span,
            PatternProblem::PerlClass {
                name,
                fix: fix.clone(),
            },
        );
        // Inside a class the ranges stand for `\d`; `\D` there has no such spelling.
        match (in_class, negated) {
            (false, _) => self.replace_last(fix),
            (true, false) => self.replace_last(class),
            (true, true) => {}
        }
    }

    fn bracketed(&mut self, class: &ast::ClassBracketed, outermost: bool) {
        if !outermost {
            self.refuse(&class.span, PatternProblem::NestedClass);
        }
        // `[]a]` is `]` or `a` in Rust but an empty class then `a]` in ECMA-262.
        let opening = if class.negated { "[^]" } else { "[]" };
        if self.text(&class.span).starts_with(opening) {
            let start = class.span.start.offset + opening.len() - 1;
            self.errors.push(PatternError {
                offset: start,
                len: 1,
                problem: PatternProblem::CloseFirstInClass,
                replacement: Some("\\]".to_owned()),
            });
        }
        self.class_set(&class.kind);
    }

    fn class_set(&mut self, set: &ClassSet) {
        match set {
            ClassSet::Item(item) => self.class_item(item),
            ClassSet::BinaryOp(op) => {
                self.refuse(&op.span, PatternProblem::ClassSetOperation);
            }
        }
    }

    fn class_item(&mut self, item: &ClassSetItem) {
        match item {
            ClassSetItem::Empty(_) => {}
            ClassSetItem::Literal(literal) => self.literal(literal, true),
            ClassSetItem::Range(range) => {
                self.literal(&range.start, true);
                self.literal(&range.end, true);
            }
            ClassSetItem::Ascii(ascii) => self.refuse(&ascii.span, PatternProblem::PosixClass),
            ClassSetItem::Unicode(class) => self.unicode_class(&class.span),
            ClassSetItem::Perl(class) => {
                self.perl_class(&class.span, &class.kind, class.negated, true)
            }
            ClassSetItem::Bracketed(inner) => self.bracketed(inner, false),
            ClassSetItem::Union(union) => union.items.iter().for_each(|i| self.class_item(i)),
        }
    }

    fn repetition(&mut self, repetition: &ast::Repetition) {
        let op_text = self.text(&repetition.op.span);
        if let RepetitionKind::Range(range) = &repetition.op.kind {
            if op_text.starts_with("{,") {
                let fixed = op_text.replacen("{,", "{0,", 1);
                self.refuse(&repetition.op.span, PatternProblem::NoLowerCount);
                self.replace_last(fixed);
            } else if op_text.chars().any(char::is_whitespace) {
                let fixed: String = op_text.chars().filter(|c| !c.is_whitespace()).collect();
                self.refuse(&repetition.op.span, PatternProblem::SpacedCount);
                self.replace_last(fixed);
            }
            let largest = match *range {
                RepetitionRange::Exactly(n) | RepetitionRange::AtLeast(n) => n,
                RepetitionRange::Bounded(m, n) => m.max(n),
            };
            if largest > MAX_REPETITION {
                self.refuse(&repetition.op.span, PatternProblem::CountOver { largest });
            }
        }
        if matches!(*repetition.ast, Ast::Assertion(_) | Ast::Empty(_)) {
            self.refuse(&repetition.op.span, PatternProblem::RepeatedAnchor);
        }
        self.ast(&repetition.ast);
    }
}

#[cfg(test)]
mod tests {
    use super::check_pattern;

    /// `(pattern, None)` is accepted; `(pattern, Some((offset, words in the message)))` is
    /// refused with its first error at `offset` and a message containing the words.
    const TABLE: &[(&str, Option<(usize, &str)>)] = &[
        (r"^[a-z]{2}(-[A-Z]{2})?$", None),
        (r"^[0-9]+$", None),
        (r"abc", None),
        (r"^a|b$", None),
        (r"(?:ab)+", None),
        (r"(ab)*c", None),
        (r"a{3}", None),
        (r"a{2,}", None),
        (r"a{2,5}", None),
        (r"a{1000}", None),
        (r"a*?b+?c??", None),
        (r"\.\*\+\?\(\)\[\]\{\}\|\^\$\\\/", None),
        (r"[a\-z]", None),
        (r"\x41\t\n\r\f\v", None),
        (r"[^0-9A-Fa-f]", None),
        (r"héllo", None),
        (r".+@.+", None),
        ("", None),
        (r"\d", Some((0, "`\\d`"))),
        (r"a\w", Some((1, "`\\w`"))),
        (r"\s+", Some((0, "`\\s`"))),
        (r"\D", Some((0, "`\\D`"))),
        (r"[\d]", Some((1, "`\\d`"))),
        (r"\bword\b", Some((0, "word boundaries"))),
        (r"\B", Some((0, "word boundaries"))),
        (r"\Aabc", Some((0, "`\\A`"))),
        (r"abc\z", Some((3, "`\\z`"))),
        (r"(a)\1", Some((3, "backreferences"))),
        (r"a(?=b)", Some((1, "lookaround"))),
        (r"a(?!b)", Some((1, "lookaround"))),
        (r"(?<=a)b", Some((0, "lookaround"))),
        (r"(?>ab)", Some((2, "group syntax"))),
        (r"a*+", Some((2, "repetition"))),
        (r"\pL", Some((0, "Unicode property"))),
        (r"\p{Greek}", Some((0, "Unicode property"))),
        (r"\PL", Some((0, "Unicode property"))),
        (r"[a-z&&[^aeiou]]", Some((1, "set operations"))),
        (r"[a-z--b]", Some((1, "set operations"))),
        (r"a{1001}", Some((1, "over 1000"))),
        (r"a{2,5000}", Some((1, "over 1000"))),
        (r"(?i)abc", Some((0, "inline flags"))),
        (r"(?i:abc)", Some((2, "inline flags"))),
        (r"(?P<year>[0-9]{4})", Some((4, "named groups"))),
        (r"(?<year>[0-9]{4})", Some((3, "named groups"))),
        (r"[[:alpha:]]", Some((1, "POSIX"))),
        (r"[a[bc]]", Some((2, "nested classes"))),
        (r"[]a]", Some((1, "`]` first"))),
        (r"a{,5}", Some((2, "repetition quantifier"))),
        (r"a}", Some((1, "bare `}`"))),
        (r"\#", Some((0, "`\\#`"))),
        (r"\u{41}", Some((0, "not common syntax"))),
        (r"\x{41}", Some((0, "not common syntax"))),
        (r"^*", Some((1, "can be repeated"))),
        (r"(abc", Some((0, "unclosed"))),
        (r"abc)", Some((3, "unopened"))),
        (r"[abc", Some((0, "unclosed"))),
        (r"a{5,2}", Some((1, "invalid"))),
    ];

    #[test]
    fn the_table_of_accepted_and_refused_patterns() {
        let mut failures = Vec::new();
        for (pattern, expected) in TABLE {
            let got = check_pattern(pattern);
            match (expected, &got) {
                (None, Ok(())) => {}
                (Some((offset, words)), Err(errors)) => {
                    let first = &errors[0];
                    if first.offset != *offset || !first.message().contains(words) {
                        failures.push(format!(
                            "{pattern:?}: expected @{offset} {words:?}, got {first:?}"
                        ));
                    }
                    if first.help().is_empty() {
                        failures.push(format!("{pattern:?}: no help"));
                    }
                }
                _ => failures.push(format!("{pattern:?}: expected {expected:?}, got {got:?}")),
            }
        }
        assert!(failures.is_empty(), "\n{}", failures.join("\n"));
        assert!(TABLE.len() >= 40);
    }

    /// Each refusal carries the rule it breaks, and so its code: `E0307` for constructs every
    /// engine reads differently, `E0350` for the rest.
    #[test]
    fn refusals_are_sorted_by_rule() {
        use super::PatternErrorKind::{ReadDifferently, Unsupported};
        let cases = [
            (r"\d", ReadDifferently),
            (r"[^\W]", ReadDifferently),
            (r"\bx", ReadDifferently),
            (r"[]a]", ReadDifferently),
            (r"(a)\1", Unsupported),
            (r"a(?=b)", Unsupported),
            (r"(?i)a", Unsupported),
            (r"\pL", Unsupported),
            (r"\Aa", Unsupported),
            (r"a{1001}", Unsupported),
            (r"(abc", Unsupported),
        ];
        for (pattern, kind) in cases {
            let errors = check_pattern(pattern).err().unwrap_or_default();
            assert_eq!(
                errors.first().map(|e| e.kind()),
                Some(kind),
                "{pattern:?}: {errors:?}"
            );
        }
    }

    #[test]
    fn every_error_is_reported_not_just_the_first() {
        let errors = check_pattern(r"\d-\w").err().unwrap_or_default();
        assert_eq!(errors.iter().map(|e| e.offset).collect::<Vec<_>>(), [0, 3]);
    }

    #[test]
    fn help_names_the_ascii_class() {
        let errors = check_pattern(r"\d").err().unwrap_or_default();
        assert!(errors[0].help().contains("[0-9]"), "{errors:?}");
        let errors = check_pattern(r"\W").err().unwrap_or_default();
        assert!(errors[0].help().contains("[^A-Za-z0-9_]"), "{errors:?}");
    }

    /// A replacement applies what the help says, and leaves a portable pattern: the
    /// quick fix the language server offers fixes the construct (and breaks nothing).
    #[test]
    fn replacements_fix_what_they_replace() {
        let cases = [
            (r"^\d+$", "[0-9]", "^[0-9]+$"),
            (r"[\d-]", "0-9", "[0-9-]"),
            (r"\W", "[^A-Za-z0-9_]", "[^A-Za-z0-9_]"),
            (r"\Aab", "^", "^ab"),
            (r"ab\z", "$", "ab$"),
            ("a}", "\\}", "a\\}"),
            ("[]a]", "\\]", "[\\]a]"),
            (r"\#", "#", "#"),
            (r"a\ b", " ", "a b"),
            (r"\a", "\\x07", "\\x07"),
            ("a{1, 3}", "{1,3}", "a{1,3}"),
            ("a*+", "", "a*"),
        ];
        for (pattern, replacement, fixed) in cases {
            let errors = check_pattern(pattern).err().unwrap_or_default();
            let [error] = errors.as_slice() else {
                panic!("{pattern:?}: {errors:?}");
            };
            assert_eq!(
                error.replacement.as_deref(),
                Some(replacement),
                "{pattern:?}"
            );
            let applied = format!(
                "{}{replacement}{}",
                &pattern[..error.offset],
                &pattern[error.offset + error.len..]
            );
            assert_eq!(applied, fixed);
            assert_eq!(
                check_pattern(&applied),
                Ok(()),
                "{pattern:?} fixed as {applied:?}"
            );
        }
        // No single spelling: no replacement.
        for pattern in [r"[\D]", r"\bx", r"(?i)a", r"\pL"] {
            let errors = check_pattern(pattern).err().unwrap_or_default();
            assert!(
                errors.iter().all(|e| e.replacement.is_none()),
                "{pattern:?}"
            );
        }
    }

    /// Every accepted pattern compiles with the `regex` crate itself (the runtime's engine).
    #[test]
    fn accepted_patterns_compile_in_rust() {
        for (pattern, expected) in TABLE {
            if expected.is_none() {
                assert!(regex::Regex::new(pattern).is_ok(), "{pattern:?}");
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn never_panics(pattern in "\\PC{0,40}") {
            let _ = check_pattern(&pattern);
        }

        #[test]
        fn never_panics_on_regex_soup(pattern in "[\\\\()\\[\\]{}?*+|^$.a-z0-9:<>=!&~,-]{0,30}") {
            if let Err(errors) = check_pattern(&pattern) {
                for e in errors {
                    proptest::prop_assert!(e.offset + e.len <= pattern.len());
                    proptest::prop_assert!(pattern.is_char_boundary(e.offset));
                }
            }
        }
    }
}
