//! Every bundled example project checks without errors and lowers to a program, and
//! `aelc build` on it succeeds twice with byte-identical output, and `aelc test` replays every
//! example green.

use std::path::Path;
use std::process::Command;

use aelc::driver::{self, DiskWorld};

use crate::support::examples::example_roots;

#[test]
fn examples_check_clean() {
    let roots = example_roots();
    assert!(
        roots.len() >= 4,
        "review, text-stats, invoice, table-extract"
    );
    for root in roots {
        let compilation = driver::check_path(&DiskWorld, &root).unwrap();
        let codes: Vec<&str> = compilation.diagnostics.iter().map(|d| d.code).collect();
        assert!(codes.is_empty(), "{}: {codes:?}", root.display());
        assert!(compilation.program.is_some(), "{} lowers", root.display());
    }
}

#[test]
fn examples_build_deterministically() {
    for root in example_roots() {
        let out = std::env::temp_dir().join(format!(
            "aelc-example-{}-{}",
            root.file_name().unwrap().to_string_lossy(),
            std::process::id()
        ));
        let mut runs = Vec::new();
        for _ in 0..2 {
            let _ = std::fs::remove_dir_all(&out);
            let status = Command::new(env!("CARGO_BIN_EXE_aelc"))
                .args(["build", "--out"])
                .arg(&out)
                .arg(&root)
                .status()
                .unwrap();
            assert!(status.success(), "aelc build {}", root.display());
            let mut files = Vec::new();
            collect(&out, &out, &mut files);
            files.sort();
            runs.push(files);
        }
        assert!(!runs[0].is_empty());
        assert_eq!(
            runs[0],
            runs[1],
            "{} builds deterministically",
            root.display()
        );
        let _ = std::fs::remove_dir_all(&out);
    }
}

fn collect(base: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(base, &path, out);
        } else if entry.file_name() != ".aelc-stamp" {
            // The build stamp records this build's file times: bookkeeping, not output.
            let name = path
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            out.push((name, std::fs::read(&path).unwrap()));
        }
    }
}

#[test]
fn examples_pass_aelc_test() {
    for root in example_roots() {
        let out = Command::new(env!("CARGO_BIN_EXE_aelc"))
            .arg("test")
            .arg(&root)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let last = stdout.lines().last().unwrap_or_default();
        assert!(
            out.status.success(),
            "aelc test {}:\n{stdout}{}",
            root.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            last.ends_with(" passed, 0 failed") && !last.starts_with("0 "),
            "{}: {last}",
            root.display()
        );
    }
}
