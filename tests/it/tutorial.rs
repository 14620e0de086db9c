//! The tutorial (`book/src/tutorial.md`) is executed with the real `aelc` binary, and `aelc new`
//! keeps its promises: a project that checks and builds at once, and a refusal that touches
//! nothing.
//!
//! The tutorial is read, not copied: its ```` ```sh ```` blocks are run line by line (`cd DIR`
//! moves, `aelc …` runs the binary; ```` ```sh,norun ```` blocks need a toolchain or a real
//! model and are skipped), every block with `file=PATH` is written at that path in the current
//! folder, a block with `fails=CODE` makes the next `aelc check` expect exit 1 and that code, and
//! a ```` ```text,built=DIR ```` block lists files that must exist under `DIR` at the end.
//! `aelc test` must end with `N passed, 0 failed`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn aelc(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_aelc"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

/// A fresh, empty temporary folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("aelc-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// One fenced block of a page: its language, attributes and text.
struct Block {
    line: usize,
    lang: String,
    attrs: BTreeMap<String, String>,
    body: String,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((number, line)) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        let mut parts = info.trim().split(',');
        let lang = parts.next().unwrap_or("").to_owned();
        let attrs = parts
            .map(|a| match a.split_once('=') {
                Some((k, v)) => (k.to_owned(), v.to_owned()),
                None => (a.to_owned(), String::new()),
            })
            .collect();
        let mut body = String::new();
        for (_, line) in lines.by_ref() {
            if line.trim_start().starts_with("```") {
                break;
            }
            body.push_str(line);
            body.push('\n');
        }
        out.push(Block {
            line: number + 1,
            lang,
            attrs,
            body,
        });
    }
    out
}

fn codes_of(stdout: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v.get("code")?.as_str().map(str::to_owned))
        .collect()
}

#[test]
fn the_tutorial_runs_as_written() {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/tutorial.md");
    let text = fs::read_to_string(&page).unwrap();
    let base = scratch("tutorial");
    let mut cwd = base.clone();
    let mut expect_failure: Option<(usize, String)> = None;
    let mut built: Vec<(String, String)> = Vec::new();
    let mut ran = Vec::new();
    for block in blocks(&text) {
        let at = format!("tutorial.md:{}", block.line);
        if block.lang == "ael" {
            assert!(
                block.attrs.contains_key("file"),
                "{at}: every AEL block of the tutorial is a file of the project (`file=PATH`)"
            );
        }
        if let Some(path) = block.attrs.get("file") {
            let file = cwd.join(path);
            fs::create_dir_all(file.parent().unwrap()).unwrap();
            fs::write(&file, &block.body).unwrap();
            if let Some(code) = block.attrs.get("fails") {
                expect_failure = Some((block.line, code.clone()));
            }
            continue;
        }
        if let Some(dir) = block.attrs.get("built") {
            for line in block.body.lines().filter(|l| !l.trim().is_empty()) {
                built.push((dir.clone(), line.trim().to_owned()));
            }
            continue;
        }
        if block.lang != "sh" || block.attrs.contains_key("norun") {
            continue;
        }
        for line in block.body.lines() {
            let line = line.split(" #").next().unwrap().trim();
            if let Some(dir) = line.strip_prefix("cd ") {
                cwd = cwd.join(dir.trim());
                assert!(cwd.is_dir(), "{at}: `{line}`: no such folder");
                continue;
            }
            let Some(rest) = line.strip_prefix("aelc ") else {
                assert!(
                    line.is_empty(),
                    "{at}: the runner knows `cd` and `aelc`: `{line}`"
                );
                continue;
            };
            let args: Vec<&str> = rest.split_whitespace().collect();
            let mut full = vec!["--message-format", "json"];
            full.extend(&args);
            let output = aelc(&cwd, &full);
            let shown = format!(
                "{at}: `{line}`\nstdout: {}\nstderr: {}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            match expect_failure.take_if(|_| args[0] == "check") {
                Some((from, code)) => {
                    assert_eq!(output.status.code(), Some(1), "{shown}");
                    assert!(
                        codes_of(&output.stdout).contains(&code),
                        "{shown}\nexpected {code} (the block at line {from})"
                    );
                }
                None => assert!(output.status.success(), "{shown}"),
            }
            if args[0] == "test" {
                // JSON Lines (the runner asks for them): the last is `{"passed": N, "failed": 0}`.
                let summary = String::from_utf8_lossy(&output.stdout);
                let last: Option<serde_json::Value> = summary
                    .lines()
                    .last()
                    .and_then(|l| serde_json::from_str(l).ok());
                assert!(
                    last.is_some_and(|l| l["failed"] == 0 && l["passed"].as_u64() > Some(0)),
                    "{shown}\n`aelc test` ends with `{{\"passed\": N, \"failed\": 0}}`"
                );
            }
            ran.push(args[0].to_owned());
        }
    }
    assert!(
        expect_failure.is_none(),
        "a `fails=` block with no `aelc check` after it"
    );
    for needed in ["new", "check", "build", "test", "run"] {
        assert!(
            ran.iter().any(|c| c == needed),
            "the tutorial runs `aelc {needed}`"
        );
    }
    assert!(
        built.len() >= 5,
        "the tutorial lists what `aelc build` writes"
    );
    for (dir, file) in &built {
        let path = cwd.join(dir).join(file);
        assert!(path.is_file(), "{} was not built", path.display());
    }
    let _ = fs::remove_dir_all(&base);
}

/// Every file below `dir` with its bytes, to prove a folder was not touched.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.insert(path.clone(), b"<dir>".to_vec());
                stack.push(path);
            } else {
                out.insert(path.clone(), fs::read(&path).unwrap());
            }
        }
    }
    out
}

#[test]
fn a_new_project_checks_builds_and_tests_at_once() {
    let base = scratch("new-green");
    let output = aelc(&base, &["new", "demo"]);
    assert!(output.status.success(), "{output:?}");
    let root = base.join("demo");
    let toml = fs::read_to_string(root.join("ael.toml")).unwrap();
    assert!(toml.contains("name = \"local/demo\""), "{toml}");
    assert!(toml.contains("provider = \"replay\""), "{toml}");
    for args in [&["check"][..], &["build"], &["build", "--check"]] {
        let mut full = vec!["--message-format", "json"];
        full.extend(args);
        let output = aelc(&root, &full);
        assert!(output.status.success(), "aelc {args:?}: {output:?}");
        assert!(codes_of(&output.stdout).is_empty(), "{output:?}");
    }
    for file in [
        "schemas/summarize.input.json",
        "schemas/summarize.output.json",
        "agents/summarize/holon.yaml",
        "mcp/tools.json",
    ] {
        assert!(root.join("target/ael").join(file).is_file(), "{file}");
    }
    // The example is in the format `aelc test` replays (spec §6).
    let example: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(root.join("examples/summarize/short.json")).unwrap(),
    )
    .unwrap();
    let mut keys: Vec<&str> = example
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["answers", "input", "output"]);
    assert!(example["answers"].as_array().is_some_and(|a| a.len() == 1));
    // ... and `aelc test` replays it green at once.
    let output = aelc(&root, &["test"]);
    assert!(output.status.success(), "aelc test: {output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.lines().any(|l| l == "1 passed, 0 failed"),
        "{stdout}"
    );
    // The emitted-formats page shows these very files.
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/formats.md");
    let shown: Vec<Block> = blocks(&fs::read_to_string(page).unwrap())
        .into_iter()
        .filter(|b| b.attrs.contains_key("emitted"))
        .collect();
    assert!(shown.len() >= 4, "formats.md shows emitted files");
    for block in shown {
        let file = root.join("target/ael").join(&block.attrs["emitted"]);
        let built = fs::read_to_string(&file).unwrap();
        assert_eq!(
            block.body.trim_end(),
            built.trim_end(),
            "formats.md:{} differs from {}",
            block.line,
            file.display()
        );
    }
    let _ = fs::remove_dir_all(&base);
}

#[test]
fn new_refuses_a_non_empty_folder_untouched() {
    let base = scratch("new-refuse");
    let target = base.join("taken");
    fs::create_dir_all(target.join("sub")).unwrap();
    fs::write(target.join("notes.txt"), "mine\n").unwrap();
    fs::write(target.join("sub/ael.toml"), "[package]\n").unwrap();
    let before = snapshot(&base);
    let output = aelc(&base, &["new", "taken"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("already exists and is not empty"),
        "{stderr}"
    );
    assert_eq!(
        snapshot(&base),
        before,
        "the folder and its parent are unchanged"
    );
    let _ = fs::remove_dir_all(&base);
}

#[test]
fn new_writes_into_an_empty_folder() {
    let base = scratch("new-empty");
    fs::create_dir_all(base.join("empty")).unwrap();
    let output = aelc(&base, &["new", "empty"]);
    assert!(output.status.success(), "{output:?}");
    assert!(base.join("empty/ael.toml").is_file());
    // Nothing is left beside it (the project is staged in a temporary folder, then renamed).
    let names: Vec<_> = fs::read_dir(&base)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names, ["empty"]);
    let _ = fs::remove_dir_all(&base);
}

#[test]
fn new_refuses_a_bad_name_clearly() {
    let base = scratch("new-name");
    for name in ["MyAgent", "9lives", "has space", "dots.in.name"] {
        let output = aelc(&base, &["new", name]);
        assert_eq!(output.status.code(), Some(2), "{name}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("is not a usable project name"), "{stderr}");
        assert!(stderr.contains("lowercase"), "{stderr}");
    }
    assert!(snapshot(&base).is_empty(), "nothing was written");
    let _ = fs::remove_dir_all(&base);
}
