//! Every module of the embedded standard library parses without a diagnostic, and its
//! `@pattern`s are in the common regex syntax.

use aelc::source::SourceMap;
use aelc::{sema, stdlib, syntax};

#[test]
fn every_std_module_parses_cleanly() {
    assert!(!stdlib::modules().is_empty());
    for (path, text) in stdlib::modules() {
        let mut sources = SourceMap::new();
        let file = sources.add(stdlib::file_name(path), *text);
        let parsed = syntax::parse(file, text);
        assert!(
            parsed.diagnostics.is_empty(),
            "{path}:\n{}",
            aelc::diagnostics::render::human(
                &sources,
                &parsed.diagnostics,
                aelc::diagnostics::render::Color::Never
            )
        );
        assert!(text.starts_with("//!"), "{path} has no module doc");
    }
}

#[test]
fn std_patterns_are_in_the_common_syntax() {
    for (path, text) in stdlib::modules() {
        for (at, _) in text.match_indices("@pattern(r\"") {
            let rest = &text[at + "@pattern(r\"".len()..];
            let pattern = &rest[..rest.find('"').unwrap()];
            assert_eq!(
                sema::pattern::check_pattern(pattern),
                Ok(()),
                "{path}: {pattern}"
            );
        }
    }
}

/// One top-level item of a std module: its doc (the `///` lines before it), its name, and its
/// source text.
struct Item {
    doc: String,
    name: String,
    source: String,
}

const ITEM_WORDS: &[&str] = &[
    "type ", "struct ", "enum ", "fn ", "extern ", "check ", "errors ", "builder ", "stream ",
];

/// The module doc (`//!` lines) and the items of one std module, read from its text.
fn items(text: &str) -> (String, Vec<Item>) {
    let mut module_doc = String::new();
    let mut items = Vec::new();
    let mut doc = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(d) = line.strip_prefix("//!") {
            module_doc.push_str(d.strip_prefix(' ').unwrap_or(d));
            module_doc.push('\n');
        } else if let Some(d) = line.strip_prefix("///") {
            doc.push_str(d.strip_prefix(' ').unwrap_or(d));
            doc.push('\n');
        } else if ITEM_WORDS.iter().any(|w| line.starts_with(w)) {
            let mut source = format!("{line}\n");
            let mut depth = line.matches('{').count() as i64 - line.matches('}').count() as i64;
            while depth > 0 {
                let Some(next) = lines.next() else { break };
                depth += next.matches('{').count() as i64 - next.matches('}').count() as i64;
                source.push_str(next);
                source.push('\n');
            }
            let name = line
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .filter(|w| !w.is_empty())
                .find(|w| {
                    ![
                        "type", "struct", "enum", "fn", "extern", "check", "errors", "builder",
                        "stream",
                    ]
                    .contains(w)
                })
                .unwrap_or_default()
                .to_owned();
            items.push(Item {
                doc: std::mem::take(&mut doc),
                name,
                source,
            });
        } else if !line.trim().is_empty() {
            doc.clear();
        }
    }
    (module_doc, items)
}

/// The book's page on the standard library, generated from the embedded sources.
fn stdlib_page() -> String {
    let mut page = String::from(
        "# The standard library\n\n\
         `std` ships with the compiler, embedded in the binary: a project needs nothing on disk to \
         write `use std::text::non_blank;`. Its modules are written in AEL (`stdlib/ael/std/`) \
         and are checked like any module. This page is generated from their doc comments by \
         `tests/it/stdlib.rs`, which fails when the two differ (`AEL_BLESS=1` rewrites it).\n\n\
         For example, a check over a request:\n\n\
         ```ael\n\
         use std::text::{non_blank, Locale};\n\n\
         /// A question, and the language of the answer.\n\
         struct Question {\n    text: Str<500>,\n    locale: Option<Locale>,\n}\n\n\
         errors QuestionError {\n    /// The question has no text.\n    blank,\n}\n\n\
         check has_text(q: Question) fails QuestionError {\n    \
         require non_blank(q.text) else blank \"the question is blank\";\n}\n\
         ```\n",
    );
    for (path, text) in stdlib::modules() {
        let (module_doc, items) = items(text);
        page.push_str(&format!("\n## `{path}`\n\n{}", module_doc.trim_end()));
        page.push('\n');
        for item in items {
            page.push_str(&format!(
                "\n### `{path}::{}`\n\n{}\n\n```ael,fragment\n{}```\n",
                item.name,
                item.doc.trim_end(),
                item.source
            ));
        }
    }
    page
}

#[test]
fn every_std_item_is_documented() {
    for (path, text) in stdlib::modules() {
        let (module_doc, items) = items(text);
        assert!(!module_doc.trim().is_empty(), "{path} has no `//!` doc");
        assert!(!items.is_empty(), "{path} declares nothing");
        for item in items {
            assert!(
                !item.doc.trim().is_empty(),
                "{path}::{} has no `///` doc",
                item.name
            );
        }
    }
}

#[test]
fn the_book_page_matches_the_stdlib() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/reference/stdlib.md");
    let expected = stdlib_page();
    if std::fs::read_to_string(&path).ok().as_deref() != Some(expected.as_str()) {
        if std::env::var_os("AEL_BLESS").is_some() {
            std::fs::write(&path, expected).unwrap();
        } else {
            panic!("book/src/reference/stdlib.md is out of date (run with AEL_BLESS=1)");
        }
    }
}

/// Every std module checks clean as a module of a project (not only parses): its names
/// resolve and its fn bodies type-check.
#[test]
fn every_std_module_checks_clean() {
    use aelc::driver::{self, MemoryWorld};
    let mut uses = String::new();
    for (path, text) in stdlib::modules() {
        let (_, items) = items(text);
        for item in items {
            uses.push_str(&format!("use {path}::{};\n", item.name));
        }
    }
    let file = std::path::PathBuf::from("/std-user/main.ael");
    let world = MemoryWorld::new().with(file.clone(), uses.clone());
    let compilation = driver::check_path(&world, &file).unwrap();
    let errors: Vec<String> = compilation
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("{} {}", d.code, d.message))
        .collect();
    assert!(errors.is_empty(), "{uses}\n{errors:?}");
}
