//! The one data-driven harness for `tests/ui/**/*.ael` (layout: `tests/ui/README.md`).
//!
//! Each file is checked with the real driver, so every phase's diagnostics appear. The snapshot
//! shows the source and the rendered diagnostics (and, under `tests/ui/parse/`, the syntax
//! tree). A file named `*.ok.ael` must produce no error; a file named `*.err.ael` must produce
//! at least one (under `parse/`, counting syntax errors only).

use std::cell::RefCell;
use std::path::Path;

use aelc::diagnostics::render::{self, Color};
use aelc::driver::{self, DiskWorld};

#[test]
fn ui() {
    let failures = RefCell::new(Vec::new());
    insta::glob!("ui/**/*.ael", |path| {
        if let Some(snapshot) = check_file(path, &mut failures.borrow_mut()) {
            // One stable name per file, whatever the glob's common base is:
            // `tests/ui/parse/a.ok.ael` → `tests/ui/snapshots/ui@parse__a.ok.ael.snap`.
            let root = Path::new(env!("CARGO_MANIFEST_DIR"));
            let relative = path.strip_prefix(root.join("tests/ui")).unwrap_or(path);
            let suffix = relative.to_string_lossy().replace(['/', '\\'], "__");
            insta::with_settings!({
                snapshot_path => root.join("tests/ui/snapshots"),
                prepend_module_to_snapshot => false,
                omit_expression => true,
                snapshot_suffix => suffix,
            }, {
                insta::assert_snapshot!("ui", snapshot);
            });
        }
    });
    let failures = failures.into_inner();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Checks one file; records broken `.ok`/`.err` expectations in `failures` and returns the
/// snapshot text.
fn check_file(path: &Path, failures: &mut Vec<String>) -> Option<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Relative, so that rendered file names do not depend on the machine.
    let shown = path.strip_prefix(root).unwrap_or(path);
    let compilation = match driver::check_path(&DiskWorld, shown) {
        Ok(compilation) => compilation,
        Err(err) => {
            failures.push(format!("{}: {err}", shown.display()));
            return None;
        }
    };
    let bytes = std::fs::read(path).unwrap_or_default();
    let source = String::from_utf8_lossy(&bytes);
    let diagnostics = render::human(&compilation.sources, &compilation.diagnostics, Color::Never);
    let mut snapshot = format!("----- SOURCE\n{source}\n----- DIAGNOSTICS\n{diagnostics}");
    let shown_text = shown.to_string_lossy().replace('\\', "/");
    if shown_text.contains("tests/ui/parse/") {
        for file in &compilation.files {
            snapshot.push_str(&format!("\n----- TREE\n{:#?}\n", file.module));
        }
    }

    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    // Under `parse/`, `.ok`/`.err` speak of syntax only (codes E00xx and E01xx): those files
    // are fragments that may name types defined elsewhere.
    let syntax_only = shown_text.contains("tests/ui/parse/");
    let errors = compilation
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .filter(|d| !syntax_only || d.code < "E0200")
        .count();
    if name.ends_with(".ok.ael") && errors > 0 {
        failures.push(format!("{shown_text} must have no errors:\n{diagnostics}"));
    }
    if name.ends_with(".err.ael") && errors == 0 {
        failures.push(format!("{shown_text} must have at least one error"));
    }
    Some(snapshot)
}
