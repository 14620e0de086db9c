//! The bundled example projects (`examples/*/ael.toml`), in name order: the one list the
//! tests that walk every example read.

use std::path::{Path, PathBuf};

/// Every folder of `examples/` that holds an `ael.toml`, sorted.
pub fn example_roots() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut roots: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples/")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("ael.toml").is_file())
        .collect();
    roots.sort();
    roots
}
