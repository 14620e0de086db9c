//! The book is executed: every diagnostic code has its page (generated from the registry and
//! kept in sync), and every AEL snippet does what its fence says.
//!
//! Fences: ```` ```ael ```` must check without errors; ```` ```ael,fails=E0301 ```` must report
//! that code; ```` ```ael,fragment ```` must parse without errors (it may name things defined
//! elsewhere). Set `AEL_BLESS=1` to rewrite the generated diagnostic pages.

use std::fs;
use std::path::{Path, PathBuf};

use aelc::diagnostics::codes;
use aelc::driver::{self, MemoryWorld};

fn book_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src")
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            markdown_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

/// Whether a code's example is one self-contained module that must trigger the code. Codes of
/// the later phases (nodes, projects, templates, publishing: `x05xx` and up) need a whole project
/// around them; their examples are shown as text.
fn standalone(code: &str) -> bool {
    code[1..].parse::<u32>().is_ok_and(|n| n < 500) && !NEEDS_CONTEXT.contains(&code)
}

/// Codes whose registry example does not (yet) trigger the code as one standalone module: it
/// needs raw bytes (E0001), several modules (imports), or the example is still to be rewritten.
/// Their pages show the example as text. Shrink this list; never grow it without a reason.
const NEEDS_CONTEXT: &[&str] = &[
    "E0001", "E0010", "E0104", "E0202", "E0206", "E0207", "E0209", "E0210", "E0211", "E0212",
    "E0313", "E0350", "E0403", "E0405", "E0406", "E0407", "E0410", "E0850", "W0201",
];

/// The page of one code, as generated from the registry.
fn code_page(info: &codes::CodeInfo) -> String {
    let mut page = format!(
        "# {}: {}\n\n{}\n",
        info.code,
        info.title,
        info.explanation.trim()
    );
    if !info.example.trim().is_empty() {
        let fence = if standalone(info.code) {
            format!("ael,fails={}", info.code)
        } else {
            "text".to_owned()
        };
        page.push_str(&format!(
            "\n## Example\n\n```{fence}\n{}\n```\n",
            info.example.trim_end()
        ));
    }
    page
}

fn index_page() -> String {
    let mut page = String::from("# Diagnostic codes\n\n| code | title |\n|---|---|\n");
    for info in codes::all() {
        page.push_str(&format!(
            "| [{code}]({code}.md) | {title} |\n",
            code = info.code,
            title = info.title
        ));
    }
    page
}

#[test]
fn every_code_has_its_page() {
    let dir = book_src().join("diagnostics");
    let bless = std::env::var_os("AEL_BLESS").is_some();
    let mut expected = vec![(dir.join("index.md"), index_page())];
    for info in codes::all() {
        expected.push((dir.join(format!("{}.md", info.code)), code_page(info)));
    }
    let mut stale = Vec::new();
    for (path, text) in &expected {
        if fs::read_to_string(path).ok().as_deref() != Some(text.as_str()) {
            if bless {
                fs::create_dir_all(&dir).unwrap();
                fs::write(path, text).unwrap();
            } else {
                stale.push(path.display().to_string());
            }
        }
    }
    // A page for a code that no longer exists is stale too.
    if let Ok(entries) = fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if !expected.iter().any(|(p, _)| *p == path) {
                if bless {
                    fs::remove_file(&path).unwrap();
                } else {
                    stale.push(format!("{} (no such code)", path.display()));
                }
            }
        }
    }
    assert!(
        stale.is_empty(),
        "diagnostic pages out of date (run with AEL_BLESS=1):\n{}",
        stale.join("\n")
    );
}

#[derive(Debug)]
enum Expect {
    Compiles,
    Parses,
    Fails(String),
}

/// `(file, line, expectation, code)` for every ```ael fence.
fn snippets() -> Vec<(PathBuf, usize, Expect, String)> {
    let mut files = Vec::new();
    markdown_files(&book_src(), &mut files);
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let text = fs::read_to_string(&file).unwrap();
        let mut lines = text.lines().enumerate();
        while let Some((number, line)) = lines.next() {
            let Some(info) = line.trim_start().strip_prefix("```ael") else {
                continue;
            };
            let expect = match info.trim() {
                "" => Expect::Compiles,
                ",fragment" => Expect::Parses,
                other => match other.strip_prefix(",fails=") {
                    Some(code) => Expect::Fails(code.to_owned()),
                    None => panic!("{}:{}: unknown fence `{line}`", file.display(), number + 1),
                },
            };
            let mut code = String::new();
            for (_, line) in lines.by_ref() {
                if line.trim_start().starts_with("```") {
                    break;
                }
                code.push_str(line);
                code.push('\n');
            }
            out.push((file.clone(), number + 1, expect, code));
        }
    }
    out
}

#[test]
fn every_snippet_does_what_its_fence_says() {
    let snippets = snippets();
    assert!(snippets.len() >= 10, "the book has AEL snippets");
    let mut wrong = Vec::new();
    for (file, line, expect, code) in snippets {
        let path = PathBuf::from("/book/snippet.ael");
        let world = MemoryWorld::new().with(path.clone(), code.clone());
        let compilation = driver::check_path(&world, &path).unwrap();
        let errors: Vec<&str> = compilation
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| d.code)
            .collect();
        let all: Vec<&str> = compilation.diagnostics.iter().map(|d| d.code).collect();
        let parse_errors = aelc::syntax::parse(aelc::span::FileId(0), &code)
            .diagnostics
            .iter()
            .any(|d| d.is_error());
        let ok = match &expect {
            Expect::Compiles => errors.is_empty(),
            Expect::Parses => !parse_errors,
            Expect::Fails(code) => all.contains(&code.as_str()),
        };
        if !ok {
            wrong.push(format!(
                "{}:{line}: expected {expect:?}, got {all:?}",
                file.display()
            ));
        }
    }
    assert!(wrong.is_empty(), "book snippets:\n{}", wrong.join("\n"));
}
