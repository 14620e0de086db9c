//! The book is executed: every diagnostic code has its page, generated from the registry, whose
//! example really triggers the code and whose fix really checks clean; and every AEL snippet of
//! the other pages does what its fence says.
//!
//! Fences of the hand-written pages (`LANG[,ATTR]*`):
//! - ```` ```ael ```` must check without errors (and, in a project, `aelc build` must accept it);
//!   ```` ```ael,fails=E0301 ```` must report that code; ```` ```ael,fragment ```` must parse
//!   without errors (it may name things defined elsewhere).
//! - A block of any language with `file=PATH` (```` ```toml,file=ael.toml ````, ```` ```markdown,file=prompts/review.md ````,
//!   ```` ```ael,file=types/common.ael ````) is a file of a small project. The next checked block
//!   (an `ael` block without `file=`, or any block with `fails=CODE` or `check`) is checked
//!   together with the files gathered since the previous checked block; with an `ael.toml` among
//!   them it is a project, and a block without `file=` is its module `main.ael`.
//! - ```` ```json,input=NODE ```` is a document that the runtime's decoder must accept as the
//!   input of `NODE` in the page's last checked project; ```` ```json,input=NODE,rejects=CODE ````
//!   one it must reject with that error code (spec §4).
//!
//! Diagnostic pages are generated from the registry (`src/diagnostics/codes/`), whose examples
//! are small archives (see [`archive`]); `AEL_BLESS=1` rewrites the pages.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use aelc::codegen::emit::emit_checked;
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

// ---------------------------------------------------------------------------------------------
// Checking a small project held in memory

/// Files of a snippet or an example, by path relative to the project root.
type Files = BTreeMap<String, String>;

/// What checking some files reported: every code, whether any was an error, and the typed
/// program when there was none.
struct Report {
    codes: Vec<&'static str>,
    errors: usize,
    program: Option<aelc::ir::Program>,
}

/// Checks `files` the way `aelc check` and then `aelc build` would: one bare `main.ael` is a
/// standalone module; otherwise the folder is checked, as a project when it holds `ael.toml`,
/// and a project that checks clean goes through the publishing rules with its examples.
fn check_files(files: &Files) -> Report {
    let root = PathBuf::from("/book/project");
    let mut world = MemoryWorld::new();
    for (path, text) in files {
        // `-- main.ael (latin-1) --`: a file saved in another encoding than UTF-8.
        world = if let Some(path) = path.strip_suffix(" (latin-1)") {
            world.with(root.join(path), latin1(text))
        } else if let Some(path) = path.strip_suffix(REPEATED) {
            world.with(root.join(path), repeated_past_limit(text))
        } else {
            world.with(root.join(path), text.clone())
        };
    }
    let single = files.len() == 1 && files.keys().all(|p| p.starts_with("main.ael"));
    let target = if single {
        root.join("main.ael")
    } else {
        root.clone()
    };
    let mut compilation = driver::check_path(&world, &target).unwrap();
    let mut diagnostics = Vec::new();
    if files.contains_key("ael.toml") {
        let publishing = driver::check_publishing(&world, &root, &mut compilation).unwrap();
        if let (Some(program), false) = (&compilation.program, compilation.has_errors()) {
            let emission = emit_checked(program, &publishing.schemas, &publishing.examples);
            diagnostics = emission.diagnostics;
        }
    }
    diagnostics.splice(0..0, compilation.diagnostics.iter().cloned());
    Report {
        codes: diagnostics.iter().map(|d| d.code).collect(),
        errors: diagnostics.iter().filter(|d| d.is_error()).count(),
        program: compilation.program,
    }
}

/// `-- main.ael (repeated past 2 MiB) --`: a module whose text is repeated until it is over
/// the compiler's size bound (E0011), too large to write out in the book.
const REPEATED: &str = " (repeated past 2 MiB)";

fn repeated_past_limit(text: &str) -> Vec<u8> {
    assert_eq!(
        driver::MAX_SOURCE_BYTES,
        2 << 20,
        "REPEATED names the bound"
    );
    text.repeat(driver::MAX_SOURCE_BYTES / text.len().max(1) + 1)
        .into_bytes()
}

fn latin1(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| u8::try_from(u32::from(c)).expect("a Latin-1 file holds only U+0000..=U+00FF"))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Diagnostic pages

/// A registry example, split into the files that trigger the code and the files of its fix.
///
/// The format, inspired by Go's txtar: text before the first header line is the module
/// `main.ael`; a line `-- PATH --` starts the file PATH; a line `-- fix --` ends the example
/// and starts the fix, written the same way, whose files replace (or join) the example's.
struct Archive {
    example: Files,
    fix: Files,
}

fn header(line: &str) -> Option<&str> {
    line.strip_prefix("-- ")?.strip_suffix(" --")
}

fn files_of(text: &str) -> Files {
    let mut files = Files::new();
    let mut current = "main.ael".to_owned();
    let mut body = String::new();
    for line in text.lines() {
        if let Some(path) = header(line) {
            if !body.trim().is_empty() || current != "main.ael" {
                files.insert(current, std::mem::take(&mut body));
            }
            body.clear();
            current = path.to_owned();
        } else {
            body.push_str(line);
            body.push('\n');
        }
    }
    if !body.trim().is_empty() || current != "main.ael" {
        files.insert(current, body);
    }
    files
}

fn archive(text: &str) -> Archive {
    let (example, fix) = match text.split_once("\n-- fix --\n") {
        Some((example, fix)) => (example, fix),
        None => (text, ""),
    };
    Archive {
        example: files_of(example),
        fix: files_of(fix),
    }
}

/// Codes that report a bug of aelc itself: no source can trigger them, so their page says so
/// instead of showing an example. Each needs a reason.
const INTERNAL: &[&str] = &[
    // The manifest is a fixed serde type; YAML serialization of it cannot fail on any input.
    "E0809",
    // The IR re-check of rules the checker enforces first (E0408, E0303, E0313): a checked
    // program always keeps them (tests/it/codegen_schema.rs builds IR by hand to trigger it).
    "E0810",
];

/// Codes whose example is today reported under another code first: `(code, reported, why)`.
/// The test asserts the example reports `reported` and *not* `code`, so an entry fails as soon
/// as the compiler starts emitting the code, and must then be removed. Never add an entry to
/// hide an example that is simply wrong.
const REPORTED_FIRST: &[(&str, &str, &str)] = &[];

/// Examples that rightly report more than their own code: `(code, the others, why)`. Every
/// other example reports its code and nothing else, so a new cascade of errors fails the test.
const ALSO_REPORTED: &[(&str, &[&str], &str)] = &[
    (
        "E0010",
        &["E0002", "E0007"],
        "the lexer stops the raw string at its 256th `#` and reads the rest as more tokens",
    ),
    (
        "E0202",
        &["E0204"],
        "the example uses the name it meant to import, which the failed `use` did not bring in",
    ),
    (
        "E0601",
        &["E0603"],
        "the misspelt key leaves the required key missing",
    ),
    (
        "W0801",
        &["W0803"],
        "the bare field is a `Map`, which every model-facing schema writes as a key/value list",
    ),
];

fn reported_first(code: &str) -> Option<(&'static str, &'static str)> {
    REPORTED_FIRST
        .iter()
        .find(|(c, _, _)| *c == code)
        .map(|(_, other, why)| (*other, *why))
}

fn language(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("ael") => "ael",
        Some("toml") => "toml",
        Some("json") => "json",
        Some("md") => "markdown",
        _ => "text",
    }
}

fn render_files(files: &Files, page: &mut String) {
    let bare = files.len() == 1 && files.contains_key("main.ael");
    for (path, text) in files {
        if let Some(path) = path.strip_suffix(REPEATED) {
            page.push_str(&format!(
                "`{path}`, this text repeated until the file is over 2 MiB:\n\n"
            ));
            page.push_str(&format!(
                "```{}\n{}\n```\n\n",
                language(path),
                text.trim_end()
            ));
            continue;
        }
        let shown = match path.strip_suffix(" (latin-1)") {
            Some(path) => {
                page.push_str(&format!(
                    "`{path}`, saved as Latin-1 rather than UTF-8 (one byte per character, so \
                     `é` is the lone byte `0xE9`):\n\n"
                ));
                path
            }
            None => {
                if !bare {
                    page.push_str(&format!("`{path}`:\n\n"));
                }
                path
            }
        };
        page.push_str(&format!(
            "```{}\n{}\n```\n\n",
            language(shown),
            text.trim_end()
        ));
    }
}

/// The page of one code, as generated from the registry.
fn code_page(info: &codes::CodeInfo) -> String {
    let mut page = format!(
        "# {}: {}\n\n{}\n",
        info.code,
        info.title,
        info.explanation.trim()
    );
    if INTERNAL.contains(&info.code) {
        page.push_str(
            "\nThis code reports a bug in aelc, not in your project: no source is known to \
             trigger it. Please report the project that did.\n",
        );
        return page;
    }
    let archive = archive(info.example);
    page.push_str("\n## Example\n\n");
    render_files(&archive.example, &mut page);
    match reported_first(info.code) {
        Some((other, why)) => page.push_str(&format!(
            "Today this reports [{other}]({other}.md) instead: {why}.\n"
        )),
        None => page.push_str(&format!("This reports `{}`.\n", info.code)),
    }
    if !archive.fix.is_empty() {
        page.push_str("\n## Fix\n\n");
        render_files(&archive.fix, &mut page);
        page.push_str("This checks clean.\n");
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
    // Codes are never reused: a retired code keeps a line that says what replaced it.
    page.push_str(
        "\n## Retired codes\n\nThese codes are no longer emitted; the rule is reported under \
         another code, or (—) what they reported is no longer a problem (see [how codes are \
         kept](../diagnostics.md)).\n\n\
         | code | reported instead | why |\n|---|---|---|\n",
    );
    for (code, instead, why) in codes::RETIRED {
        let instead = if instead.is_empty() {
            "—".to_owned()
        } else {
            format!("[{instead}]({instead}.md)")
        };
        page.push_str(&format!("| {code} | {instead} | {why} |\n"));
    }
    page
}

/// The `# Diagnostics` part of `SUMMARY.md`: the overview, the index and every code's page, so
/// that mdBook renders them all.
fn summary_part() -> String {
    let mut part = String::from(
        "# Diagnostics\n\n- [Every diagnostic code](diagnostics.md)\n    - [Index](diagnostics/index.md)\n",
    );
    for info in codes::all() {
        part.push_str(&format!(
            "    - [{code}: {title}](diagnostics/{code}.md)\n",
            code = info.code,
            title = info.title.replace(['[', ']'], "")
        ));
    }
    part.push('\n');
    part
}

/// `SUMMARY.md` with its diagnostics part (from `# Diagnostics` to the next `# ` heading)
/// regenerated.
fn summary_page(current: &str) -> String {
    let start = current.find("# Diagnostics\n").unwrap_or(current.len());
    let end = current[start..]
        .match_indices("\n# ")
        .next()
        .map_or(current.len(), |(i, _)| start + i + 1);
    format!("{}{}{}", &current[..start], summary_part(), &current[end..])
}

#[test]
fn summary_lists_every_code() {
    let path = book_src().join("SUMMARY.md");
    let current = fs::read_to_string(&path).unwrap();
    assert!(
        current.contains("# Diagnostics\n"),
        "SUMMARY.md has a diagnostics part"
    );
    let expected = summary_page(&current);
    if current != expected {
        if std::env::var_os("AEL_BLESS").is_some() {
            fs::write(&path, expected).unwrap();
        } else {
            panic!("SUMMARY.md does not list every diagnostic page (run with AEL_BLESS=1)");
        }
    }
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

/// Every code's example triggers it (and nothing else, but for [`ALSO_REPORTED`]), and its fix
/// checks (and builds) with no diagnostic at all.
#[test]
fn every_code_example_triggers_it_and_its_fix_is_clean() {
    let mut wrong = Vec::new();
    for info in codes::all() {
        if INTERNAL.contains(&info.code) {
            continue;
        }
        let archive = archive(info.example);
        if archive.example.is_empty() {
            wrong.push(format!("{}: no example", info.code));
            continue;
        }
        let report = check_files(&archive.example);
        if let Some((other, _)) = reported_first(info.code) {
            if report.codes.contains(&info.code) || !report.codes.contains(&other) {
                wrong.push(format!(
                    "{}: listed in REPORTED_FIRST under {other}, but the example reports {:?}",
                    info.code, report.codes
                ));
            }
        } else if !report.codes.contains(&info.code) {
            wrong.push(format!(
                "{}: the example reports {:?}, not the code",
                info.code, report.codes
            ));
        } else {
            let mut others: Vec<&str> = report
                .codes
                .iter()
                .copied()
                .filter(|c| *c != info.code)
                .collect();
            others.sort_unstable();
            others.dedup();
            let listed = ALSO_REPORTED
                .iter()
                .find(|(c, _, _)| *c == info.code)
                .map_or(&[][..], |(_, others, _)| *others);
            if others != listed {
                wrong.push(format!(
                    "{}: the example also reports {others:?} (ALSO_REPORTED lists {listed:?})",
                    info.code
                ));
            }
        }
        if archive.fix.is_empty() {
            wrong.push(format!("{}: no `-- fix --` section", info.code));
            continue;
        }
        let mut fixed = archive.example.clone();
        // A fixed file replaces the example's file of that path, whatever its encoding.
        fixed.retain(|path, _| {
            let path = path.strip_suffix(" (latin-1)").unwrap_or(path);
            let path = path.strip_suffix(REPEATED).unwrap_or(path);
            !archive.fix.contains_key(path)
        });
        fixed.extend(archive.fix.clone());
        let report = check_files(&fixed);
        if !report.codes.is_empty() || report.errors > 0 {
            wrong.push(format!(
                "{}: the fix still reports {:?}",
                info.code, report.codes
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} registry example(s) wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn archives_split_into_files() {
    let a = archive("struct A {}\n-- fix --\nstruct B {}\n");
    assert_eq!(a.example["main.ael"], "struct A {}\n");
    assert_eq!(a.fix["main.ael"], "struct B {}\n");
    let a = archive("-- ael.toml --\n[package]\n-- nodes/a.ael --\nfn f() -> u8 { 1 }\n");
    assert_eq!(
        a.example.keys().collect::<Vec<_>>(),
        ["ael.toml", "nodes/a.ael"]
    );
    assert!(a.fix.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Snippets of the hand-written pages

#[derive(Debug)]
enum Expect {
    Compiles,
    Parses,
    Fails(String),
    /// A JSON document, decoded against a node's input type with the runtime's decoder:
    /// accepted, or rejected with the stated error code.
    Decodes {
        node: String,
        rejects: Option<String>,
        document: String,
    },
}

/// One checked snippet: where it closes, what it expects, and the files it is checked with.
struct Snippet {
    file: PathBuf,
    line: usize,
    expect: Expect,
    files: Files,
}

/// Every checked snippet of the hand-written pages (the generated diagnostic pages are checked
/// from the registry by the tests above).
fn snippets() -> Vec<Snippet> {
    let mut pages = Vec::new();
    markdown_files(&book_src(), &mut pages);
    // Diagnostic pages are checked from the registry above; the tutorial is executed by
    // `tests/it/tutorial.rs` with the real binary.
    pages.retain(|p| !p.starts_with(book_src().join("diagnostics")) && !p.ends_with("tutorial.md"));
    pages.sort();
    let mut out = Vec::new();
    for page in pages {
        let text = fs::read_to_string(&page).unwrap();
        out.extend(page_snippets(&page, &text));
    }
    out
}

/// The snippets of one page, following the fence rules of the module doc.
fn page_snippets(page: &Path, text: &str) -> Vec<Snippet> {
    let mut out = Vec::new();
    let mut pending = Files::new();
    // The project of the last checked block: what `json,input=NODE` blocks decode against.
    let mut last = Files::new();
    let mut lines = text.lines().enumerate();
    while let Some((number, line)) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        let mut parts = info.trim().split(',');
        let lang = parts.next().unwrap_or("").trim();
        let mut file = None;
        let mut fails = None;
        let mut fragment = false;
        let mut check = false;
        let mut input = None;
        let mut rejects = None;
        for attr in parts {
            let attr = attr.trim();
            if let Some(node) = attr.strip_prefix("input=") {
                input = Some(node.to_owned());
            } else if let Some(code) = attr.strip_prefix("rejects=") {
                rejects = Some(code.to_owned());
            } else if let Some(path) = attr.strip_prefix("file=") {
                file = Some(path.to_owned());
            } else if let Some(code) = attr.strip_prefix("fails=") {
                fails = Some(code.to_owned());
            } else if attr == "fragment" {
                fragment = true;
            } else if attr == "check" {
                check = true;
            } else if lang == "ael" {
                panic!("{}:{}: unknown fence `{line}`", page.display(), number + 1);
            }
        }
        let mut body = String::new();
        for (_, line) in lines.by_ref() {
            if line.trim_start().starts_with("```") {
                break;
            }
            body.push_str(line);
            body.push('\n');
        }
        let location = (page.to_path_buf(), number + 1);
        if let Some(node) = input {
            assert!(
                !last.is_empty(),
                "{location:?}: no project before this document"
            );
            out.push(Snippet {
                file: location.0,
                line: location.1,
                expect: Expect::Decodes {
                    node,
                    rejects,
                    document: body,
                },
                files: last.clone(),
            });
            continue;
        }
        if fragment {
            assert!(lang == "ael", "{location:?}: `fragment` is for ael blocks");
            let mut files = Files::new();
            files.insert("main.ael".into(), body);
            out.push(Snippet {
                file: location.0,
                line: location.1,
                expect: Expect::Parses,
                files,
            });
            continue;
        }
        let closes = (lang == "ael" && file.is_none()) || fails.is_some() || check;
        if file.is_none() && !closes {
            continue;
        }
        pending.insert(file.unwrap_or_else(|| "main.ael".to_owned()), body);
        if closes {
            last = std::mem::take(&mut pending);
            out.push(Snippet {
                file: location.0,
                line: location.1,
                expect: fails.map_or(Expect::Compiles, Expect::Fails),
                files: last.clone(),
            });
        }
    }
    assert!(
        pending.is_empty(),
        "{}: files {:?} are never checked (end the project with a checked block)",
        page.display(),
        pending.keys().collect::<Vec<_>>()
    );
    out
}

/// The decoder's error codes for `document` as the input of `node` in the project `files`.
fn decode_codes(files: &Files, node: &str, document: &str) -> Result<Vec<String>, String> {
    let report = check_files(files);
    let program = report
        .program
        .ok_or_else(|| format!("the project does not check: {:?}", report.codes))?;
    let node = program
        .nodes
        .iter()
        .find(|n| n.name == node)
        .ok_or_else(|| format!("no node `{node}`"))?;
    let [param] = node.params.as_slice() else {
        return Err("only nodes with one parameter are decoded here".to_owned());
    };
    let result = aelc_runtime::decode::decode(
        document.as_bytes(),
        &param.ty,
        &program.types,
        &param.name,
        program.limits.max_input_bytes as usize,
    );
    Ok(match result {
        Ok(_) => Vec::new(),
        Err(errors) => errors.iter().map(|e| e.code.as_str().to_owned()).collect(),
    })
}

#[test]
fn every_snippet_does_what_its_fence_says() {
    let snippets = snippets();
    assert!(snippets.len() >= 40, "the book has AEL snippets");
    let mut wrong = Vec::new();
    for snippet in snippets {
        let ok = match &snippet.expect {
            Expect::Parses => {
                let code = &snippet.files["main.ael"];
                !aelc::syntax::parse(aelc::span::FileId(0), code)
                    .diagnostics
                    .iter()
                    .any(|d| d.is_error())
            }
            Expect::Compiles => check_files(&snippet.files).errors == 0,
            Expect::Fails(code) => check_files(&snippet.files).codes.contains(&code.as_str()),
            Expect::Decodes {
                node,
                rejects,
                document,
            } => {
                let codes = decode_codes(&snippet.files, node, document);
                match (rejects, &codes) {
                    (None, Ok(errors)) => errors.is_empty(),
                    (Some(code), Ok(errors)) => errors.contains(code),
                    (_, Err(why)) => {
                        wrong.push(format!(
                            "{}:{}: {why}",
                            snippet.file.display(),
                            snippet.line
                        ));
                        continue;
                    }
                }
            }
        };
        if !ok {
            let report = check_files(&snippet.files);
            wrong.push(format!(
                "{}:{}: expected {:?}, got {:?}",
                snippet.file.display(),
                snippet.line,
                snippet.expect,
                report.codes
            ));
        }
    }
    assert!(wrong.is_empty(), "book snippets:\n{}", wrong.join("\n"));
}
