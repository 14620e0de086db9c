//! The Rust glue as text (spec §9.4): a snapshot of a small project that uses every kind of
//! type, rustfmt-cleanness and determinism for it and every example, and the names Rust cannot
//! spell reported as E0850. Compiling and running generated glue is `examples/review-rs`'s job.

use std::path::Path;
use std::process::{Command, Stdio};

use aelc::codegen::rust;
use aelc::driver::{self, MemoryWorld};
use aelc::ir::Program;

const TOML: &str = r#"[package]
name = "acme/small"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
accepts = ["text"]
"#;

/// Every kind of type: refined text, an alias, unit and tagged data enums, a keyword field, a
/// negative exclusive range, a set, a map keyed by an enum, options, a recursive option, an
/// extern fn, an extern check, a pure check and a transform.
const SMALL: &str = include_str!("glue/small.ael");

fn program(files: &[(&str, &str)]) -> Program {
    let mut world = MemoryWorld::new().with("p/ael.toml", TOML);
    for (name, text) in files {
        world = world.with(format!("p/{name}"), *text);
    }
    let compilation = driver::check_path(&world, Path::new("p")).expect("in memory");
    let codes: Vec<&str> = compilation.diagnostics.iter().map(|d| d.code).collect();
    assert!(!compilation.has_errors(), "{codes:?}");
    compilation.program.expect("a program")
}

fn rustfmt(text: &str) -> String {
    let mut child = Command::new(std::env::var("RUSTFMT").unwrap_or_else(|_| "rustfmt".into()))
        .args(["--edition", "2021", "--emit", "stdout"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("rustfmt must be installed (rustup component add rustfmt)");
    use std::io::Write;
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "rustfmt failed on the glue");
    String::from_utf8(out.stdout).unwrap()
}

fn assert_formatted(name: &str, text: &str) {
    let formatted = rustfmt(text);
    if formatted != text {
        let diff: Vec<String> = text
            .lines()
            .zip(formatted.lines())
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .take(5)
            .map(|(i, (a, b))| format!("line {}:\n  emitted: {a}\n  rustfmt: {b}", i + 1))
            .collect();
        panic!("{name}: the glue is not rustfmt-formatted\n{}", diff.join("\n"));
    }
}

#[test]
fn small_project_snapshot() {
    let program = program(&[("shapes.ael", SMALL)]);
    let text = rust::glue(&program).expect("glue");
    insta::assert_snapshot!("small_glue", text);
    assert_eq!(rust::glue(&program).expect("glue"), text, "deterministic");
    assert_eq!(rust::glue_path(&program), "rust/small.rs");
}

#[test]
fn glue_is_rustfmt_formatted() {
    let program = program(&[("shapes.ael", SMALL)]);
    assert_formatted("small", &rust::glue(&program).expect("glue"));
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut checked = 0;
    for entry in std::fs::read_dir(&examples).unwrap() {
        let root = entry.unwrap().path();
        if !root.join("ael.toml").is_file() {
            continue;
        }
        let compilation = driver::check_path(&driver::DiskWorld, &root).unwrap();
        let program = compilation.program.expect("examples check");
        let text = rust::glue(&program).expect("glue");
        assert_formatted(&root.display().to_string(), &text);
        checked += 1;
    }
    assert!(checked >= 4);
}

#[test]
fn names_that_meet_in_rust_are_e0850() {
    let clash = "struct Page {\n    max_items: u8,\n    maxItems: u8,\n}\n\nnode rules(p: Page) -> Page {\n    config {\n        model: binding(\"main\");\n    }\n}\n";
    let errors = rust::glue(&program(&[("m.ael", clash)])).expect_err("clashes");
    let messages: Vec<String> = errors.iter().map(|d| format!("{}: {}", d.code, d.message)).collect();
    assert!(errors.iter().all(|d| d.code == "E0850"), "{messages:?}");
    assert!(
        messages.iter().any(|m| m.contains("field `max_items`") && m.contains("field `maxItems`")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("node `rules`") && m.contains("generated `rules`")),
        "{messages:?}"
    );
}

#[test]
fn keywords_become_raw_identifiers_and_keep_their_wire_name() {
    let text = rust::glue(&program(&[("shapes.ael", SMALL)])).unwrap();
    assert!(text.contains("pub r#loop: rt::BoundedStr<10>,"));
    assert!(text.contains("r#loop: rt::field(&mut fields, \"loop\")?,"));
    // serde strips `r#`, so no rename is needed for the wire name.
    assert!(!text.contains("rename = \"loop\""));
}
