//! The Rust glue is emitted rustfmt-formatted (issue 6, book: rust.md): `rustfmt --check
//! --edition 2021` over the glue of every bundled example, of `examples/review-rs/bench`, and
//! of the seeded random projects of `glue_gen` finds nothing to change.

use crate::glue_gen;

use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn emitted_glue_is_rustfmt_formatted() {
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("glue-fmt");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).expect("mkdir");

    let mut roots: Vec<(String, PathBuf)> = std::fs::read_dir(workspace.join("examples"))
        .expect("examples/")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("ael.toml").is_file())
        .map(|p| {
            (
                p.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
                p,
            )
        })
        .collect();
    roots.push((
        "review-bench".to_owned(),
        workspace.join("examples/review-rs/bench"),
    ));
    let seed = std::env::var("GLUE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x00AE_1C06);
    for p in glue_gen::projects(seed, 12) {
        let root = out.join("projects").join(&p.id);
        glue_gen::write_files(&root, &p.files);
        roots.push((format!("random-{}", p.id), root));
    }
    roots.sort();
    assert!(roots.len() >= 16, "the examples and the random projects");

    let mut files = Vec::new();
    for (name, root) in &roots {
        let path = out.join(format!("{name}.rs"));
        std::fs::write(&path, glue_gen::glue_of(root).1).expect("write");
        files.push(path);
    }
    let rustfmt = std::env::var("RUSTFMT").unwrap_or_else(|_| "rustfmt".to_owned());
    let run = Command::new(&rustfmt)
        .args(["--check", "--edition", "2021"])
        .args(&files)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {rustfmt} (rustup component add rustfmt): {e}"));
    assert!(
        run.status.success(),
        "rustfmt would change the emitted glue (files in {}):\n{}{}",
        out.display(),
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
}
