//! Multi-file projects (folders with an `ael.toml` under `tests/projects/`), checked in
//! project mode; the snapshot shows the rendered diagnostics and whether a program was made.
//! A folder named `*_ok` must check without errors, one named `*_err` with at least one.

use std::path::Path;

use aelc::diagnostics::render::{self, Color};
use aelc::driver::{self, DiskWorld};

#[test]
fn projects() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("tests/projects");
    let mut folders: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir() && !p.ends_with("snapshots"))
                .collect()
        })
        .unwrap_or_default();
    folders.sort();
    assert!(!folders.is_empty(), "no projects under {}", dir.display());
    for folder in folders {
        let name = folder
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_owned();
        let shown = folder.strip_prefix(root).unwrap_or(&folder);
        let compilation = match driver::check_path(&DiskWorld, shown) {
            Ok(c) => c,
            Err(err) => panic!("{name}: {err}"),
        };
        let diagnostics =
            render::human(&compilation.sources, &compilation.diagnostics, Color::Never);
        let errors = compilation
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .count();
        if name.ends_with("_ok") {
            assert_eq!(errors, 0, "{name} must check clean:\n{diagnostics}");
            assert!(
                compilation.program.is_some(),
                "{name} must produce a program"
            );
        } else {
            assert!(errors > 0, "{name} must have errors");
            assert!(
                compilation.program.is_none(),
                "{name} must not produce a program"
            );
        }
        let snapshot = format!(
            "program: {}\n----- DIAGNOSTICS\n{diagnostics}",
            if compilation.program.is_some() {
                "yes"
            } else {
                "no"
            }
        );
        insta::with_settings!({
            snapshot_path => root.join("tests/projects/snapshots"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(name, snapshot);
        });
    }
}
