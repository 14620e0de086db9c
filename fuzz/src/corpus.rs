//! The seed corpus, read from the repository at start-up: the tests' and examples' `.ael`
//! files, the book's `ael` blocks, prompts, `ael.toml` files, the examples' JSON documents,
//! the hand-written edge cases of `fuzz/corpus/json/`, and every reproducer of
//! `fuzz/regressions/`.

use std::fs;
use std::path::{Path, PathBuf};

/// The repository root (the fuzz crate's parent).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// Every file below `dir` (sorted, skipping `target/` and dot folders) whose name ends in
/// `suffix`.
pub fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    walk(dir, suffix, &mut out);
    out.sort();
    out
}

fn walk(dir: &Path, suffix: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                walk(&path, suffix, out);
            }
        } else if name.ends_with(suffix) {
            out.push(path);
        }
    }
}

fn read_all(paths: &[PathBuf]) -> Vec<Vec<u8>> {
    paths.iter().filter_map(|p| fs::read(p).ok()).collect()
}

/// AEL sources: `tests/`, `examples/`, `stdlib/`, `src/` (the `aelc new` template) and the
/// book's `ael` code blocks.
pub fn ael_sources() -> Vec<Vec<u8>> {
    let root = root();
    let mut seeds = Vec::new();
    for dir in ["tests", "examples", "stdlib", "src"] {
        seeds.extend(read_all(&files(&root.join(dir), ".ael")));
    }
    for page in files(&root.join("book/src"), ".md") {
        let Ok(text) = fs::read_to_string(&page) else {
            continue;
        };
        seeds.extend(fenced_blocks(&text, "ael").map(String::into_bytes));
    }
    seeds
}

/// The bodies of the ```` ```lang ```` blocks of a Markdown text.
fn fenced_blocks<'a>(text: &'a str, lang: &'a str) -> impl Iterator<Item = String> + 'a {
    let mut lines = text.lines();
    std::iter::from_fn(move || {
        for line in lines.by_ref() {
            let info = line.trim_start().strip_prefix("```").map(str::trim);
            if info.is_some_and(|info| info.split([',', ' ']).next() == Some(lang)) {
                let mut body = String::new();
                for line in lines.by_ref() {
                    if line.trim_start().starts_with("```") {
                        break;
                    }
                    body.push_str(line);
                    body.push('\n');
                }
                return Some(body);
            }
        }
        None
    })
}

/// Prompt templates: the examples' and the UI tests' `.md` files below a `prompts/` folder.
pub fn prompts() -> Vec<Vec<u8>> {
    let root = root();
    let mut paths = files(&root.join("examples"), ".md");
    paths.extend(files(&root.join("tests"), ".md"));
    paths.retain(|p| p.components().any(|c| c.as_os_str() == "prompts"));
    read_all(&paths)
}

/// `ael.toml` files of the examples and the tests.
pub fn manifests() -> Vec<Vec<u8>> {
    let root = root();
    let mut paths = files(&root.join("examples"), "ael.toml");
    paths.extend(files(&root.join("tests"), "ael.toml"));
    paths.extend(files(&root.join("tests"), ".toml"));
    paths.sort();
    paths.dedup();
    read_all(&paths)
}

/// The hand-written JSON edge cases and the generated ones.
pub fn json_edge_cases() -> Vec<Vec<u8>> {
    let mut seeds = read_all(&files(&root().join("fuzz/corpus/json"), ".json"));
    // Deep nesting, past every depth limit; built here rather than committed.
    for depth in [200usize, 5_000] {
        seeds.push(format!("{}{}", "[".repeat(depth), "]".repeat(depth)).into_bytes());
        seeds.push(format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth)).into_bytes());
    }
    seeds.push(format!("\"{}\"", "\\u00e9".repeat(2_000)).into_bytes());
    seeds.push(format!("1{}", "0".repeat(400)).into_bytes());
    seeds
}

/// The reproducers committed for `target` (`fuzz/regressions/TARGET-*`).
pub fn regressions(target: &str) -> Vec<Vec<u8>> {
    let prefix = format!("{target}-");
    let mut paths: Vec<PathBuf> = files(&root().join("fuzz/regressions"), "")
        .into_iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
        })
        .collect();
    paths.sort();
    read_all(&paths)
}
