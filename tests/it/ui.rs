//! The one data-driven harness for `tests/ui/**/*.ael` (layout: `tests/ui/README.md`).
//!
//! Each file is checked with the real driver, so every phase's diagnostics appear. The snapshot
//! shows the source and the rendered diagnostics (and, under `tests/ui/parse/`, the syntax
//! tree). A file named `*.ok.ael` must produce no error; a file named `*.err.ael` must produce
//! at least one (under `parse/`, counting syntax errors only).
//!
//! Cases that need a project (an `ael.toml`, a prompt template, several modules) are folders
//! `tests/ui/projects/<name>.ok/` or `<name>.err/`, checked as a project; their snapshot shows
//! every file of the folder, txtar-style (`-- PATH --`), then the diagnostics.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use aelc::diagnostics::render::{self, Color};
use aelc::driver::{self, DiskWorld};

#[test]
fn ui() {
    let failures = RefCell::new(Vec::new());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    insta::glob!("../ui", "**/*.ael", |path| {
        // The modules of project cases are checked with their project, below.
        if path.starts_with(root.join("tests/ui/projects")) {
            return;
        }
        if let Some(snapshot) = check_file(path, &mut failures.borrow_mut()) {
            assert_ui_snapshot(path, snapshot);
        }
    });
    let failures = failures.into_inner();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// One stable snapshot name per case, whatever the glob's common base is:
/// `tests/ui/parse/a.ok.ael` → `tests/ui/snapshots/ui@parse__a.ok.ael.snap`, and the folder
/// `tests/ui/projects/b.err` → `ui@projects__b.err.snap`.
fn assert_ui_snapshot(path: &Path, snapshot: String) {
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

#[test]
fn ui_projects() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("tests/ui/projects");
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    folders.sort();
    assert!(!folders.is_empty(), "no project cases in {}", dir.display());
    let mut failures = Vec::new();
    for folder in folders {
        if let Some(snapshot) = check_project(&folder, &mut failures) {
            assert_ui_snapshot(&folder, snapshot);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Checks one project folder; records broken `.ok`/`.err` expectations in `failures` and
/// returns the snapshot text.
fn check_project(folder: &Path, failures: &mut Vec<String>) -> Option<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Relative, so that rendered file names do not depend on the machine.
    let shown = folder.strip_prefix(root).unwrap_or(folder);
    let shown_text = shown.to_string_lossy().replace('\\', "/");
    if !folder.join("ael.toml").is_file() {
        failures.push(format!("{shown_text}: a project case needs an ael.toml"));
        return None;
    }
    let compilation = match driver::check_path(&DiskWorld, shown) {
        Ok(compilation) => compilation,
        Err(err) => {
            failures.push(format!("{shown_text}: {err}"));
            return None;
        }
    };
    let mut files = Vec::new();
    project_files(folder, &mut files);
    files.sort();
    let mut snapshot = String::from("----- FILES\n");
    for file in &files {
        let name = file.strip_prefix(folder).unwrap_or(file);
        let bytes = std::fs::read(file).unwrap_or_default();
        snapshot.push_str(&format!(
            "-- {} --\n{}",
            name.to_string_lossy().replace('\\', "/"),
            String::from_utf8_lossy(&bytes)
        ));
    }
    let diagnostics = render::human(&compilation.sources, &compilation.diagnostics, Color::Never);
    snapshot.push_str(&format!("\n----- DIAGNOSTICS\n{diagnostics}"));
    let errors = compilation
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .count();
    expect(&shown_text, errors, &diagnostics, failures);
    // A project without errors is lowered to a program; one with errors is not.
    if compilation.program.is_some() != (errors == 0) {
        failures.push(format!(
            "{shown_text}: {} errors, yet a program was {}made",
            errors,
            if compilation.program.is_some() {
                ""
            } else {
                "not "
            }
        ));
    }
    Some(snapshot)
}

fn project_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            project_files(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// A case named `*.ok[.ael]` must have no error, one named `*.err[.ael]` at least one.
fn expect(shown: &str, errors: usize, diagnostics: &str, failures: &mut Vec<String>) {
    let name = shown.strip_suffix(".ael").unwrap_or(shown);
    if name.ends_with(".ok") && errors > 0 {
        failures.push(format!("{shown} must have no errors:\n{diagnostics}"));
    }
    if name.ends_with(".err") && errors == 0 {
        failures.push(format!("{shown} must have at least one error"));
    }
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

    // Under `parse/`, `.ok`/`.err` speak of syntax only (codes E00xx and E01xx): those files
    // are fragments that may name types defined elsewhere.
    let syntax_only = shown_text.contains("tests/ui/parse/");
    let errors = compilation
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .filter(|d| !syntax_only || d.code < "E0200")
        .count();
    expect(&shown_text, errors, &diagnostics, failures);
    Some(snapshot)
}

/// `aelc check` runs sema lean and the publishing rules one node at a time
/// (`driver::check_project_lean`, `driver::check_publishing_rules`); `aelc build` and the
/// language server run the full check and keep every schema. Both must report the very same
/// diagnostics on every project the repository holds: the UI cases, the examples and the
/// fixtures (agents with and without examples, shared output types, raw-mode nodes).
#[test]
fn a_lean_check_reports_what_a_full_check_reports() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut projects = Vec::new();
    for parent in [
        "tests/ui/projects",
        "examples",
        "tests/cli_fixtures",
        "tests/codegen_fixtures",
    ] {
        for entry in std::fs::read_dir(root.join(parent))
            .into_iter()
            .flatten()
            .flatten()
        {
            if entry.path().join("ael.toml").is_file() {
                projects.push(entry.path());
            }
        }
    }
    projects.sort();
    assert!(
        projects.len() > 10,
        "only {} projects found",
        projects.len()
    );
    let mut compared = 0;
    for project in projects {
        let world = DiskWorld;
        let rendered = |lean: bool| {
            let checked = if lean {
                driver::check_project_lean(&world, &project)
            } else {
                driver::check_project(&world, &project)
            };
            let mut compilation = checked.unwrap_or_else(|e| panic!("{}: {e}", project.display()));
            let published = if lean {
                driver::check_publishing_rules(&world, &project, &mut compilation)
            } else {
                driver::check_publishing(&world, &project, &mut compilation).map(|_| ())
            };
            let text = render::human(&compilation.sources, &compilation.diagnostics, Color::Never);
            (published, text, compilation.program)
        };
        let (full, lean) = (rendered(false), rendered(true));
        assert_eq!(
            (&full.0, &full.1, full.2.clone().map(leaned)),
            (&lean.0, &lean.1, lean.2),
            "{}: the lean check differs",
            project.display()
        );
        compared += usize::from(full.2.is_some());
    }
    assert!(compared > 5, "only {compared} projects made a program");
}

/// A full program as a lean check makes it (`sema::CheckInput::lean`): without fns, node
/// bodies, check requirements and prompt templates, and with every doc an empty text.
fn leaned(mut program: aelc::ir::Program) -> aelc::ir::Program {
    use aelc_runtime::ty::{DefKind, FieldTy};
    fn blank(docs: &mut Option<String>) {
        if let Some(text) = docs {
            text.clear();
        }
    }
    fn blank_fields<'a>(fields: impl IntoIterator<Item = &'a mut FieldTy>) {
        fields.into_iter().for_each(|f| blank(&mut f.docs));
    }
    program.fns.clear();
    for def in &mut program.types.defs {
        blank(&mut def.docs);
        match &mut def.kind {
            DefKind::Struct { fields } => blank_fields(fields),
            DefKind::Enum { variants, .. } => {
                for variant in variants {
                    blank(&mut variant.docs);
                    blank_fields(variant.fields.iter_mut().flatten());
                }
            }
            DefKind::Alias { .. } => {}
        }
    }
    for set in &mut program.errors {
        blank(&mut set.docs);
        set.codes.iter_mut().for_each(|c| blank(&mut c.docs));
    }
    for check in &mut program.checks {
        blank(&mut check.docs);
        check.requires.clear();
    }
    for node in &mut program.nodes {
        blank(&mut node.docs);
        node.body = None;
        node.template = None;
    }
    program
}

/// `aelc check` of a file or a folder without `ael.toml` defers the bodies of fns and checks
/// and parses them a module at a time (`driver::check_path_lean`); it must report exactly what
/// the full check reports on every UI case, including those whose bodies hold the error, which
/// send their module back to a whole parse. A written case adds a body that only fails when
/// parsed and a dangling doc comment, which must be reported once.
#[test]
fn a_lean_check_of_a_file_reports_what_a_full_check_reports() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    let mut dirs = vec![root.join("tests/ui")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() && !path.ends_with("projects") {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "ael") {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(files.len() > 60, "only {} UI cases found", files.len());
    let rendered = |world: &dyn driver::World, path: &Path, lean: bool| {
        let checked = match lean {
            true => driver::check_path_lean(world, path),
            false => driver::check_path(world, path),
        };
        let compilation = checked.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        render::human(&compilation.sources, &compilation.diagnostics, Color::Never)
    };
    for file in &files {
        let shown = file.strip_prefix(root).unwrap_or(file);
        assert_eq!(
            rendered(&DiskWorld, shown, false),
            rendered(&DiskWorld, shown, true),
            "{}: the lean check differs",
            shown.display()
        );
    }
    let broken = "/// The sum.\nfn sum(x: u32) -> u32 { x + }\n\n\
                  check positive(x: u32) { require x > 0 else bad; }\n/// Nothing follows.\n";
    let world = driver::MemoryWorld::new().with("/m/broken.ael", broken);
    let (full, lean) = (
        rendered(&world, Path::new("/m"), false),
        rendered(&world, Path::new("/m"), true),
    );
    assert_eq!(full, lean);
    assert_eq!(lean.matches("error[E").count(), 2, "{lean}");
    assert_eq!(lean.matches("warning[W0001]").count(), 1, "{lean}");
}

/// Over a megabyte of source, `aelc check` parses the deferred bodies of modules on the other
/// cores ahead of sema checking them (`sema::items::lower_bodies`, `parallel::map_ahead`): the
/// diagnostics are still those of the full check, in the same order, with a body that breaks
/// only when parsed and bodies that break only when checked, in the middle of the project.
#[test]
fn a_large_lean_check_reports_what_a_full_check_reports() {
    let mut world = driver::MemoryWorld::new();
    let mut bytes = 0;
    let mut k = 0;
    while bytes < 1 << 20 {
        let mut text = String::new();
        for i in 0..40 {
            text.push_str(&format!(
                "/// Twice {i}.\nfn twice{k}x{i}(x: u32) -> u32 {{\n    let y = x * 2;\n    if y > 10 {{ y }} else {{ {i} }}\n}}\n\n\
                 /// Positive {i}.\ncheck positive{k}x{i}(x: u32) {{\n    require x > {i} else bad;\n}}\n\n"
            ));
        }
        if k == 7 {
            text.push_str("fn broken(x: u32) -> u32 { x * }\n");
        }
        if k % 9 == 4 {
            text.push_str(&format!("fn mistyped{k}(x: u32) -> bool {{ x + 1 }}\n"));
        }
        bytes += text.len();
        world = world.with(format!("/big/m{k}.ael"), text);
        k += 1;
    }
    let rendered = |lean: bool| {
        let checked = match lean {
            true => driver::check_path_lean(&world, Path::new("/big")),
            false => driver::check_path(&world, Path::new("/big")),
        };
        let compilation = checked.expect("a project in memory");
        render::human(&compilation.sources, &compilation.diagnostics, Color::Never)
    };
    let (full, lean) = (rendered(false), rendered(true));
    assert_eq!(full, lean, "the lean check differs");
    assert!(lean.contains("m7.ael"), "{}", &lean[..lean.len().min(2000)]);
    assert_eq!(lean.matches("error[E01").count(), 1);
    let mistyped = lean.matches("mistyped").count();
    assert!(
        mistyped >= k / 9,
        "{mistyped} of the mistyped bodies reported"
    );
}
