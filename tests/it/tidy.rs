//! Tidy checks: the layer arrows of `src/lib.rs` hold, the run-time side (runtime, store,
//! gateway, MCP server) never needs the compiler, the runtime turns on no `preserve_order`, and
//! no crate's modules use each other in a circle.
//!
//! Each top-level module of `src/` has a rank; a file may use `crate::m` only for a module of a
//! lower or equal rank. Codegen additionally never touches the syntax layer or sema (it never
//! re-parses), and only `cli` may name clap.

use std::fs;
use std::path::{Path, PathBuf};

/// The layer map. Same rank: may use each other.
const RANKS: &[(&str, u8)] = &[
    ("span", 0),
    ("source", 0),
    ("diagnostics", 0),
    ("stdlib", 0),
    ("allocator", 0),
    ("parallel", 0),
    ("syntax", 1),
    ("ir", 2),
    ("project", 2),
    ("sema", 3),
    ("codegen", 4),
    ("driver", 5),
    ("cli", 6),
    ("lsp", 6),
    // The `build.rs` API: a thin shell like `cli`.
    ("build", 6),
    // `src/bin/*.rs`: binaries, thin shells like `cli`.
    ("bin", 7),
];

fn rank(module: &str) -> Option<u8> {
    RANKS.iter().find(|(m, _)| *m == module).map(|(_, r)| *r)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src/sema/types.rs` → `sema`; `src/lib.rs`/`src/main.rs` → None.
fn layer_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib" && name != "main").then(|| name.to_owned())
}

/// Every `crate::name` mentioned in the text.
fn crate_uses(text: &str) -> Vec<String> {
    let mut uses = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let preceded_by_ident = rest[..at]
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        if !name.is_empty() && !preceded_by_ident {
            uses.push(name);
        }
        rest = after;
    }
    uses
}

#[test]
fn layers_point_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut wrong = Vec::new();
    for file in &files {
        let Some(layer) = layer_of(&src, file) else {
            continue;
        };
        let Some(own) = rank(&layer) else {
            wrong.push(format!(
                "{}: module `{layer}` has no rank in tests/it/tidy.rs",
                file.display()
            ));
            continue;
        };
        let text = fs::read_to_string(file).unwrap_or_default();
        for used in crate_uses(&text) {
            let Some(theirs) = rank(&used) else { continue };
            let forbidden_for_codegen = layer == "codegen" && (used == "syntax" || used == "sema");
            if theirs > own || forbidden_for_codegen {
                wrong.push(format!(
                    "{}: `{layer}` must not use `crate::{used}`",
                    file.display()
                ));
            }
        }
        if layer != "cli" && text.contains("clap::") {
            wrong.push(format!("{}: only `cli` may use clap", file.display()));
        }
    }
    assert!(wrong.is_empty(), "layer violations:\n{}", wrong.join("\n"));
}

/// Issue 23: the runtime turns on no `preserve_order` (serde_json's, or schemars' or any
/// other crate's that turns serde_json's on): a feature a library turns on is on for every
/// binary linking it, and this one slowed an unrelated `serde_json::Value` path by 15–30%.
/// The runtime's ordered documents are its own `ordered::Json`. (`cargo tree -p aelc-runtime
/// -e features | grep preserve_order` says the same of the resolved build.)
#[test]
fn the_runtime_turns_on_no_preserve_order() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("stdlib/runtime/Cargo.toml");
    let text = fs::read_to_string(&manifest).unwrap_or_default();
    assert!(
        text.contains("[dependencies]"),
        "{} is read",
        manifest.display()
    );
    let turned_on: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') && l.contains("preserve_order"))
        .collect();
    assert!(
        turned_on.is_empty(),
        "{} turns on preserve_order: {turned_on:?}",
        manifest.display()
    );
}

/// The run-time side (the runtime, the store, the gateway, the MCP server) loads programs from
/// a build's output and never needs the compiler: a deployed gateway ships without it.
#[test]
fn the_run_time_side_never_depends_on_the_compiler() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for dir in [
        "stdlib/runtime",
        "platform/store",
        "platform/gateway",
        "platform/mcp",
    ] {
        let krate = root.join(dir);
        let manifest = fs::read_to_string(krate.join("Cargo.toml")).unwrap_or_default();
        assert!(
            !manifest
                .lines()
                .any(|l| l.trim_start().starts_with("aelc ") || l.trim_start().starts_with("aelc=")),
            "{dir} must not depend on aelc"
        );
        let mut files = Vec::new();
        rust_files(&krate.join("src"), &mut files);
        assert!(!files.is_empty(), "{dir} has sources");
        for file in files {
            let text = fs::read_to_string(&file).unwrap_or_default();
            assert!(
                !text.contains("aelc::"),
                "{} names the compiler crate",
                file.display()
            );
        }
    }
}

#[test]
fn crate_uses_are_found() {
    assert_eq!(
        crate_uses("use crate::syntax::ast;\nlet x = crate::ir::Program; mycrate::no"),
        vec!["syntax", "ir"]
    );
}

/// `unsafe` is denied crate-wide (`Cargo.toml`); only the allocator's option calls may allow it.
#[test]
fn unsafe_code_is_allowed_only_in_the_allocator() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let allowing: Vec<String> = files
        .iter()
        .filter(|file| {
            fs::read_to_string(file)
                .unwrap_or_default()
                .contains("allow(unsafe_code)")
        })
        .map(|file| {
            file.strip_prefix(&src)
                .unwrap_or(file)
                .display()
                .to_string()
        })
        .collect();
    assert_eq!(allowing, ["allocator.rs"], "files that allow unsafe code");
}

// ---------------------------------------------------------------- import circles

/// Module paths of the Rust files under `src`: `a/b.rs` and `a/b/mod.rs` → `a::b`;
/// `lib.rs`, `main.rs` → the crate root (empty).
fn modules_of(src: &Path) -> Vec<(String, PathBuf)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut modules = Vec::new();
    for file in files {
        let Ok(rel) = file.strip_prefix(src) else {
            continue;
        };
        let mut parts: Vec<String> = rel
            .components()
            .filter_map(|c| c.as_os_str().to_str().map(str::to_owned))
            .collect();
        let Some(last) = parts.pop() else { continue };
        let stem = last.strip_suffix(".rs").unwrap_or(&last).to_owned();
        if parts.first().is_some_and(|p| p == "bin") {
            continue;
        }
        if !matches!(stem.as_str(), "mod" | "lib" | "main") || !parts.is_empty() && stem != "mod" {
            parts.push(stem);
        }
        modules.push((parts.join("::"), file));
    }
    modules
}

/// The paths a file names from its crate: `crate::a::b`, `super::c`, `self::d` and the
/// members of a braced group after them (`crate::{a, b::c}`), resolved against `module`.
fn named_paths(text: &str, module: &str) -> Vec<Vec<String>> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(found) = text[from..].find(start) {
            let at = from + found;
            from = at + start.len();
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
                continue;
            }
            // `super::super::x`: climb once per `super::`.
            let mut base: Vec<String> = match start {
                "crate::" => Vec::new(),
                _ => module
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect(),
            };
            let mut rest = &text[at..];
            if start == "super::" {
                while let Some(after) = rest.strip_prefix("super::") {
                    base.pop();
                    rest = after;
                }
            } else {
                rest = &rest[start.len()..];
            }
            let mut groups = vec![rest];
            if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                groups = group[..end].split(',').map(str::trim).collect();
            }
            for member in groups {
                let mut path = base.clone();
                let mut rest = member;
                loop {
                    let name = ident(rest);
                    if name.is_empty() {
                        break;
                    }
                    rest = &rest[name.len()..];
                    path.push(name);
                    match rest.strip_prefix("::") {
                        Some(after) => rest = after,
                        None => break,
                    }
                }
                out.push(path);
            }
        }
    }
    out
}

/// The text without its comments (doc links name modules without using them) and without
/// its tests (`#[cfg(test)]` to the end of the file: a test may use what it likes).
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or(text);
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The import circles among the modules of the crate rooted at `src`: each strongly connected
/// group of two or more modules, where a module uses another that is neither its ancestor
/// nor its descendant.
fn import_circles(src: &Path) -> Vec<Vec<String>> {
    use std::collections::{BTreeMap, BTreeSet};
    let modules = modules_of(src);
    let known: BTreeSet<&str> = modules.iter().map(|(m, _)| m.as_str()).collect();
    let related = |a: &str, b: &str| {
        a.is_empty()
            || b.is_empty()
            || a == b
            || a.starts_with(&format!("{b}::"))
            || b.starts_with(&format!("{a}::"))
    };
    let mut edges: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (module, file) in &modules {
        let text = code_of(&fs::read_to_string(file).unwrap_or_default());
        for path in named_paths(&text, module) {
            // The longest prefix that is a module of the crate.
            let target = (1..=path.len())
                .rev()
                .map(|n| path[..n].join("::"))
                .find_map(|p| known.get(p.as_str()).copied());
            if let Some(target) = target {
                if !related(module, target) {
                    edges.entry(module.as_str()).or_default().insert(target);
                }
            }
        }
    }
    // Tarjan's strongly connected components.
    struct Walk<'a> {
        edges: &'a BTreeMap<&'a str, BTreeSet<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        groups: Vec<Vec<String>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a str) {
        let n = w.index.len();
        w.index.insert(v, n);
        w.low.insert(v, n);
        w.stack.push(v);
        w.on_stack.insert(v);
        for &next in w.edges.get(v).into_iter().flatten() {
            if !w.index.contains_key(next) {
                visit(w, next);
                let low = w.low[v].min(w.low[next]);
                w.low.insert(v, low);
            } else if w.on_stack.contains(next) {
                let low = w.low[v].min(w.index[next]);
                w.low.insert(v, low);
            }
        }
        if w.low[v] == w.index[v] {
            let mut group = Vec::new();
            while let Some(top) = w.stack.pop() {
                w.on_stack.remove(top);
                group.push(top.to_owned());
                if top == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                w.groups.push(group);
            }
        }
    }
    let mut walk = Walk {
        edges: &edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        groups: Vec::new(),
    };
    for (module, _) in &modules {
        if !walk.index.contains_key(module.as_str()) {
            visit(&mut walk, module);
        }
    }
    walk.groups.sort();
    walk.groups
}

/// Circles known and still to break (issue 20: none left); the list may only shrink: a circle not in it
/// fails the test, and so does one in it that is gone (then delete its line).
const KNOWN_CIRCLES: &[&str] = &[];

/// No two modules of a crate use each other, directly or around a circle (a parent and its
/// own submodules aside): a circle means neither can be understood, tested or moved alone.
#[test]
fn no_import_circles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for src in [
        "src",
        "stdlib/runtime/src",
        "platform/store/src",
        "platform/gateway/src",
        "platform/mcp/src",
    ] {
        for group in import_circles(&root.join(src)) {
            found.push(format!("{src}: {}", group.join(" ↔ ")));
        }
    }
    let new: Vec<&String> = found
        .iter()
        .filter(|c| !KNOWN_CIRCLES.contains(&c.as_str()))
        .collect();
    let gone: Vec<&&str> = KNOWN_CIRCLES
        .iter()
        .filter(|k| !found.iter().any(|c| c == *k))
        .collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "import circles (each module uses the next, the last the first):\n{}\n\
         broken since, delete from KNOWN_CIRCLES:\n{}",
        new.iter()
            .map(|c| format!("  {c}"))
            .collect::<Vec<_>>()
            .join("\n"),
        gone.iter()
            .map(|c| format!("  {c}"))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

#[test]
fn import_circles_are_found() {
    let dir = std::env::temp_dir().join(format!("aelc-tidy-circles-{}", std::process::id()));
    let write = |path: &str, text: &str| {
        let file = dir.join(path);
        fs::create_dir_all(file.parent().expect("a folder")).expect("mkdir");
        fs::write(file, text).expect("write");
    };
    write("lib.rs", "mod a; mod b; mod c; mod d;");
    write(
        "a.rs",
        "use crate::b::X;\n/// [`crate::d`] in a comment is no use.",
    );
    write("b.rs", "pub struct X; use super::{c::Y, d};");
    write("c.rs", "pub struct Y; fn f() { crate::a::g() }");
    write("d.rs", "mod inner; use self::inner::Z;");
    write("d/inner.rs", "pub struct Z; use super::super::d::W;");
    let circles = import_circles(&dir);
    let _ = fs::remove_dir_all(&dir);
    assert_eq!(circles, vec![vec!["a", "b", "c"]]);
}

/// The Rust files of every crate in the workspace that ships (the compiler, the runtime and
/// the platform), relative to the repository.
fn shipped_rust_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "stdlib/runtime/src", "platform"] {
        rust_files(&root.join(dir), &mut files);
    }
    files.retain(|f| !f.components().any(|c| c.as_os_str() == "tests"));
    files.sort();
    files
}

/// Every match of `pattern` in the shipped code (comments and tests aside), as
/// `path: first group` (the whole match when the pattern has no group), in file order.
fn found_in_shipped_code(pattern: &str) -> Vec<String> {
    let pattern = regex::Regex::new(pattern).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for file in shipped_rust_files() {
        let text = code_of(&fs::read_to_string(&file).unwrap_or_default());
        let rel = file.strip_prefix(root).unwrap().display().to_string();
        for m in pattern.captures_iter(&text) {
            let named = m.get(1).or_else(|| m.get(0)).map_or("", |g| g.as_str());
            found.push(format!("{rel}: {named}"));
        }
    }
    found
}

/// The provider vocabulary lives once (issue 20): the `provider` words of `ael.toml` in
/// `aelc_runtime::program::Provider` (the one table, with `replay`), and the HTTP protocols in
/// `aelc_runtime::provider::ProviderKind`, which takes its words from that table. Codegen's
/// model-facing variants and the executor use those two; a third enum of providers, or the
/// words written out a second time, fails here.
#[test]
fn the_provider_vocabulary_lives_once() {
    assert_eq!(
        found_in_shipped_code(r"enum\s+(\w+)\s*\{[^}]*\bOpenAi\b"),
        [
            "stdlib/runtime/src/program.rs: Provider",
            "stdlib/runtime/src/provider/binding.rs: ProviderKind",
        ]
    );
    assert_eq!(
        found_in_shipped_code(r#"=>\s*"(openai|anthropic|gemini|replay)""#),
        ["openai", "anthropic", "gemini", "replay"]
            .map(|w| format!("stdlib/runtime/src/program.rs: {w}"))
    );
}

/// The built-in methods live once (issue 20): `aelc::sema::methods::METHODS`, which sema types
/// calls with and the language server completes from. A list of method names kept anywhere
/// else (a `…_METHODS` constant, as the checker and the completion handler each had) fails.
#[test]
fn the_method_table_lives_once() {
    assert_eq!(
        found_in_shipped_code(r"const\s+\w*METHODS\w*\s*:"),
        ["src/sema/methods.rs: const METHODS:"]
    );
}

/// The built-in type names live once (issue 20): `aelc::sema::builtin_types`, which sema
/// suggests from and the language server colours and completes with (its own list had `Raw`
/// and `Parts` that sema's lacked). Another list of them (a constant holding `"u16"`) fails.
#[test]
fn the_builtin_types_live_once() {
    assert_eq!(
        found_in_shipped_code(r#"const\s+(\w+)\s*:\s*&\[&str\]\s*=\s*&\[[^\]]*"u16""#),
        ["src/sema/builtin_types.rs: DATA_TYPES"]
    );
}

/// The keywords live once (issue 20): `Token::KEYWORDS` in the lexer's token type, which the
/// language server completes and refuses as new names from. A list of keyword words kept
/// elsewhere (a constant holding `"agent"`, as the completion handler had) fails.
#[test]
fn the_keywords_live_once() {
    let found = found_in_shipped_code(r#"const\s+(\w+)\s*:\s*&\[&str\]\s*=\s*&\[[^\]]*"agent""#);
    assert!(
        found.is_empty(),
        "keyword lists outside Token::KEYWORDS: {found:?}"
    );
}

/// The blocks of a node and their keys live once (issue 20): `aelc::sema::blocks`, which sema
/// checks with and the language server completes from. Another list of keys (a constant
/// holding `"max_answer"` or `"on_full"`, as the checker and the completion handler each had)
/// fails.
#[test]
fn the_block_keys_live_once() {
    assert_eq!(
        found_in_shipped_code(r#"const\s+(\w+)\s*:[^=]*=\s*&\[[^;]*"(?:max_answer|on_full)""#),
        [
            "src/sema/blocks.rs: NODE_BLOCKS",
            "src/sema/blocks.rs: STREAM_LIMITS"
        ]
    );
}

/// The reserved codes live once (issue 20): `aelc_runtime::reserved::ReservedCode`, whose
/// `RESERVED_CODES` the checker (E0408) and the publishing rules read. Another list of them
/// (a constant holding `"truncated_output"`, as sema and codegen each had) fails.
#[test]
fn the_reserved_codes_live_once() {
    // The list's only spelling is `ReservedCode::as_str`; a second list would spell one of
    // them again.
    assert_eq!(
        found_in_shipped_code(r#""truncated_output""#)
            .into_iter()
            .filter(|hit| !hit.starts_with("src/diagnostics/codes/"))
            .collect::<Vec<_>>(),
        ["stdlib/runtime/src/reserved.rs: \"truncated_output\""]
    );
}

/// The run-time side writes the reserved codes through `ReservedCode` (issue 20), never as
/// string literals. Checked for the codes whose words mean nothing else: `invalid_output` and
/// `rejected_input` are statuses too, `timeout` a `config` key, `cancelled` a stream's end.
/// The explanations of `aelc explain` (`diagnostics/codes`) quote them for people.
#[test]
fn the_reserved_codes_are_written_through_their_type() {
    let words = "invalid_input|truncated_output|undecodable_output|stale_input|budget_exceeded|\
                 model_unavailable|internal_error";
    let found: Vec<String> = found_in_shipped_code(&format!(r#""({words})""#))
        .into_iter()
        .filter(|hit| {
            !hit.starts_with("stdlib/runtime/src/reserved.rs:")
                && !hit.starts_with("src/diagnostics/codes/")
        })
        .collect();
    assert!(found.is_empty(), "reserved codes spelt out: {found:#?}");
}

/// Diagnostics are data until one place per phase (issue 20): `Diagnostic::new` is called only
/// in a phase's `error.rs` (and the files of its `error/` folder), where the text for people is
/// written once, and in `diagnostics/` itself. Everywhere else reports a typed error
/// (`SyntaxError`, `ProjectError`, `SemaError`, `CodegenError`, `SourceError`); a message
/// written at a call site fails here.
#[test]
fn diagnostics_are_made_in_error_files() {
    let made_elsewhere: Vec<String> = found_in_shipped_code(r"Diagnostic::new\(")
        .into_iter()
        .filter(|found| {
            let path = found.split(": ").next().unwrap_or_default();
            !(path.ends_with("/error.rs")
                || path.contains("/error/")
                || path.starts_with("src/diagnostics"))
        })
        .collect();
    assert!(
        made_elsewhere.is_empty(),
        "diagnostics made outside an error file: {made_elsewhere:?}"
    );
    // The check sees the error files themselves (it is not vacuous).
    assert!(found_in_shipped_code(r"Diagnostic::new\(")
        .iter()
        .any(|f| f.starts_with("src/sema/error/")));
}
