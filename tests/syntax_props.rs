//! Property tests of the front end: on any input, lexing and parsing finish without a panic,
//! and every span in the diagnostics and the tree is valid (inside the file, `start <= end`,
//! on `char` boundaries). Inputs: random bytes (decoded like the driver does) and random soups
//! of AEL tokens, which reach much deeper into the grammar than random bytes do.

use aelc::driver::decode_source;
use aelc::span::{FileId, Span};
use aelc::syntax::{self, ast};
use proptest::prelude::*;

/// Fragments that are tokens (or near-tokens) of AEL, glued with random spacing.
const FRAGMENTS: &[&str] = &[
    "use",
    "type",
    "struct",
    "enum",
    "errors",
    "fn",
    "extern",
    "check",
    "node",
    "agent",
    "stream",
    "builder",
    "require",
    "example",
    "let",
    "return",
    "if",
    "else",
    "match",
    "true",
    "false",
    "none",
    "some",
    "fails",
    "of",
    "as",
    "config",
    "x",
    "Name",
    "_",
    "a::b",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "<",
    ">",
    "<=",
    ">=",
    "==",
    "!=",
    "=",
    ",",
    ";",
    ":",
    "::",
    ".",
    "..",
    "..=",
    "&&",
    "||",
    "!",
    "+",
    "-",
    "*",
    "/",
    "%",
    "|",
    "=>",
    "->",
    "@",
    "@tag",
    "42",
    "1_000",
    "0.5",
    "1e-3",
    "250ms",
    "5MiB",
    "50/s",
    "5min",
    "0.05 EUR",
    "\"s\"",
    "\"\\q\"",
    "r#\"x\"#",
    "r\"",
    "\"",
    "/*",
    "*/",
    "//",
    "///",
    "//!",
    "é",
    "$",
    "\n",
    "18446744073709551616",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(
        (
            0..FRAGMENTS.len(),
            prop::sample::select(vec!["", " ", "\n"]),
        ),
        0..120,
    )
    .prop_map(|parts| {
        parts
            .into_iter()
            .map(|(i, sep)| format!("{}{sep}", FRAGMENTS[i]))
            .collect()
    })
}

fn check_span(text: &str, span: Span, what: &str) {
    assert!(span.start <= span.end, "{what}: {span:?} is reversed");
    assert!(
        span.end as usize <= text.len(),
        "{what}: {span:?} past the end ({})",
        text.len()
    );
    assert!(
        text.is_char_boundary(span.start as usize) && text.is_char_boundary(span.end as usize),
        "{what}: {span:?} not on char boundaries"
    );
}

fn check_all(text: &str) {
    let parse = syntax::parse(FileId(0), text);
    for diagnostic in &parse.diagnostics {
        for label in &diagnostic.labels {
            check_span(text, label.span, &diagnostic.message);
        }
    }
    for comment in &parse.comments {
        check_span(text, comment.span, "comment");
    }
    check_span(text, parse.module.span, "module");
    for item in &parse.module.items {
        check_item(text, item);
    }
}

fn check_item(text: &str, item: &ast::Item) {
    check_span(text, item.span, "item");
    if let Some(doc) = &item.docs {
        check_span(text, doc.span, "doc");
    }
    // The Debug dump shows every span as `@start..end`; check them all at once.
    let dump = format!("{item:?}");
    for found in dump.split('@').skip(1) {
        let Some((start, rest)) = found.split_once("..") else {
            continue;
        };
        let end: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if let (Ok(start), Ok(end)) = (start.parse::<u32>(), end.parse::<u32>()) {
            check_span(
                text,
                Span {
                    file: FileId(0),
                    start,
                    end,
                },
                "node",
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let (text, _) = decode_source(FileId(0), &bytes);
        check_all(&text);
    }

    #[test]
    fn token_soups_never_panic(text in soup()) {
        check_all(&text);
    }

    #[test]
    fn expressions_never_panic(text in soup(), offset in 0u32..1000) {
        let (expr, diagnostics) = syntax::parse_expr(FileId(0), &text, offset);
        let shifted = format!("{}{text}", " ".repeat(offset as usize));
        check_span(&shifted, expr.span, "expr");
        for diagnostic in &diagnostics {
            for label in &diagnostic.labels {
                check_span(&shifted, label.span, &diagnostic.message);
            }
        }
    }
}

#[test]
fn deep_nesting_is_refused_not_overflowed() {
    for text in [
        format!(
            "fn f() -> u8 {{ {}1{} }}",
            "(".repeat(5000),
            ")".repeat(5000)
        ),
        format!("fn f() -> u8 {{ {}1 }}", "!".repeat(5000)),
        format!("fn f() -> u8 {{ {} }}", "[".repeat(5000)),
        format!("type T = {}u8{};", "List<".repeat(300), ">".repeat(300)),
    ] {
        check_all(&text);
    }
}
