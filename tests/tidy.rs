//! Tidy checks: the layer arrows of `src/lib.rs` hold, and the run-time side (runtime, store,
//! gateway, MCP server) never needs the compiler.
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
                "{}: module `{layer}` has no rank in tests/tidy.rs",
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
