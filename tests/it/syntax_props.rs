//! Property tests of the front end: on any input, lexing and parsing finish without a panic,
//! and every span in the diagnostics and the tree is valid (inside the file, `start <= end`,
//! on `char` boundaries). Inputs: random bytes (decoded like the driver does), random soups
//! of AEL tokens, which reach much deeper into the grammar than random bytes do, and valid
//! files cut or spliced at random places, which reach deepest. Deeply nested input (100 000
//! levels of every kind of nesting) is refused with `E0104` instead of overflowing the stack.

use aelc::source::decode_source;
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

/// Valid files of the UI corpus (`tests/ui/**/*.ok.ael`), for the cut-and-splice properties.
fn valid_files() -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui");
    let mut out = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.to_string_lossy().ends_with(".ok.ael") {
                out.push(std::fs::read_to_string(&path).unwrap_or_default());
            }
        }
    }
    out.sort();
    out
}

/// The largest char boundary of `text` at or below `at`.
fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn syntax_errors(text: &str) -> usize {
    syntax::parse(FileId(0), text)
        .diagnostics
        .iter()
        .filter(|d| d.is_error() && d.code.starts_with("E01"))
        .count()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// A valid file cut anywhere: what is left is parsed without a panic.
    #[test]
    fn truncated_files_never_panic(file in any::<prop::sample::Index>(), cut in any::<prop::sample::Index>()) {
        let files = valid_files();
        let text = file.get(&files);
        let cut = floor_boundary(text, cut.index(text.len() + 1));
        check_all(&text[..cut]);
    }

    /// A piece of one valid file pasted into another at a random place.
    #[test]
    fn spliced_files_never_panic(
        into in any::<prop::sample::Index>(),
        from in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        start in any::<prop::sample::Index>(),
        len in 0usize..200,
    ) {
        let files = valid_files();
        let (into, from) = (into.get(&files), from.get(&files));
        let at = floor_boundary(into, at.index(into.len() + 1));
        let start = floor_boundary(from, start.index(from.len() + 1));
        let end = floor_boundary(from, start + len);
        let text = format!("{}{}{}", &into[..at], &from[start..end], &into[at..]);
        check_all(&text);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let (text, _) = decode_source(FileId(0), bytes);
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

/// The generators above do reach the parser: a corpus file cut in the middle of an item, and
/// a typical token soup, give parse errors (E01xx), not only lex errors.
#[test]
fn the_inputs_reach_the_parser() {
    let files = valid_files();
    assert!(files.len() > 30, "the UI corpus was not found");
    let cut_inside_items = files
        .iter()
        .filter(|text| {
            let Some(open) = text.find('{') else {
                return false;
            };
            syntax_errors(&text[..open + 1]) > 0
        })
        .count();
    assert!(
        cut_inside_items > 20,
        "only {cut_inside_items} cut files reached the parser"
    );
    assert!(syntax_errors("struct { ( ] fn x :: 42 } node") > 0);
}

/// Invalid UTF-8 is reported with its byte offset, at that offset.
#[test]
fn invalid_utf8_is_reported_at_its_byte_offset() {
    let mut bytes = b"struct A { x: u8 }\ntype B = Str<8> @pattern(\"".to_vec();
    let offset = bytes.len();
    bytes.extend_from_slice(&[0xff, 0xfe]);
    bytes.extend_from_slice(b"\");\nstruct C { y: u8 }\n");
    let (text, diagnostic) = decode_source(FileId(0), bytes.clone());
    let diagnostic = diagnostic.expect("invalid UTF-8 must be reported");
    assert_eq!(diagnostic.code, "E0001");
    assert!(
        diagnostic
            .message
            .contains(&format!("byte offset {offset}")),
        "{}",
        diagnostic.message
    );
    let label = diagnostic.labels.first().expect("a label");
    assert_eq!(label.span.start as usize, offset);
    // The rest of the file is still parsed.
    let parse = syntax::parse(FileId(0), &text);
    assert_eq!(parse.module.items.len(), 3);
    // Bad bytes at the very start and the very end.
    let (_, first) = decode_source(FileId(0), vec![0x80, b'x']);
    assert_eq!(first.map(|d| d.labels[0].span.start), Some(0));
    let (_, last) = decode_source(FileId(0), b"type T = u8;\xc3".to_vec());
    assert_eq!(last.map(|d| d.labels[0].span.start), Some(12));
}

/// 100 000 levels of each kind of nesting: refused with E0104, never a stack overflow (in
/// the parser, or when the tree is printed or dropped).
#[test]
fn very_deep_nesting_is_refused() {
    const N: usize = 100_000;
    let cases = [
        format!("fn f() -> u8 {{ {}1{} }}", "(".repeat(N), ")".repeat(N)),
        format!("fn f() -> u8 {{ {}1{} }}", "[".repeat(N), "]".repeat(N)),
        format!("fn f() -> u8 {{ {}1{} }}", "{".repeat(N), "}".repeat(N)),
        format!("fn f() -> u8 {{ {}1 }}", "[".repeat(N)),
        format!("fn f() -> u8 {{ {}1 }}", "!".repeat(N)),
        format!("fn f() -> u8 {{ {}1 }}", "- ".repeat(N)),
        format!("fn f() -> u8 {{ {}1 }}", "some(".repeat(N)),
        format!("fn f() -> u8 {{ 1{} }}", " + 1".repeat(N)),
        format!("fn f() -> u8 {{ 1{} }}", " * 2 - 1".repeat(N)),
        format!("fn f() -> u8 {{ x{} }}", ".a".repeat(N)),
        format!("fn f() -> u8 {{ x{} }}", ".a()".repeat(N)),
        format!("fn f() -> u8 {{ {}1 }}", "|x| ".repeat(N)),
        format!("fn f() -> u8 {{ {}{{ 1 }} }}", "if a { 1 } else ".repeat(N)),
        format!("fn f() -> u8 {{ {}1 }}", "A { x: ".repeat(N)),
        format!("type T = {}u8{};", "List<".repeat(N), ">".repeat(N)),
        format!("type T = {}u8;", "List<".repeat(N)),
        format!(
            "fn f() -> u8 {{ match x {{ {} }} }}",
            "_ => match x { ".repeat(N)
        ),
        format!(
            "fn f(x: u8) -> u8 {{ match x {{ {} => 1 }} }}",
            "some(".repeat(N)
        ),
    ];
    for text in &cases {
        check_all(text);
        let parse = syntax::parse(FileId(0), text);
        assert!(
            parse.diagnostics.iter().any(|d| d.code == "E0104"),
            "not refused: {}…",
            &text[..60]
        );
    }
}

/// Long but flat input is not refused: many items, fields, arguments and statements.
#[test]
fn long_flat_input_is_accepted() {
    let fields: String = (0..5000).map(|i| format!("f{i}: u8,\n")).collect();
    let args = vec!["1"; 5000].join(", ");
    let lets: String = (0..5000).map(|i| format!("let a{i} = x + 1;\n")).collect();
    let items: String = (0..2000)
        .map(|i| format!("fn g{i}(x: List<Map<Str<8>, u8>>) -> List<u8> {{ x.a.b + 1 }}\n"))
        .collect();
    for text in [
        format!("struct S {{\n{fields}}}\n"),
        format!("fn f() -> u8 {{ g({args}) + [{args}].len() }}\n"),
        format!("fn f(x: u8) -> u8 {{\n{lets}x }}\n"),
        items,
    ] {
        let parse = syntax::parse(FileId(0), &text);
        let errors: Vec<_> = parse.diagnostics.iter().filter(|d| d.is_error()).collect();
        assert!(errors.is_empty(), "{errors:?}");
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
