//! The embedded standard library ([`crate::stdlib`]) as real, read-only files, so that go to
//! definition into `std::…` opens a document the editor can show.
//!
//! The sources live only inside the binary, and a project has no `std/` folder. They are written
//! once per server process under `$XDG_CACHE_HOME/aelc/std/<aelc version>/std/<module>.ael`
//! (`~/.cache/…` without `XDG_CACHE_HOME`), each file atomically (a temporary file renamed into
//! place, so a second server never reads half a file) and without write permission (an edit
//! there would change nothing the compiler reads). The version in the path keeps two installed
//! versions apart; a file whose text differs (a development build) is replaced.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::stdlib;

/// The folder holding `std/<module>.ael` for this binary's std, written on first use; `None`
/// when no cache folder can be found or written (definitions into std then have no target).
pub fn root() -> Option<&'static Path> {
    static ROOT: OnceLock<Option<PathBuf>> = OnceLock::new();
    ROOT.get_or_init(|| {
        let root = cache_home()?
            .join("aelc")
            .join("std")
            .join(env!("CARGO_PKG_VERSION"));
        materialize(&root).ok()?;
        Some(root)
    })
    .as_deref()
}

/// The read-only file of the std module shown as `name` (`std/text.ael`), if it was written.
pub fn path_of(name: &str) -> Option<PathBuf> {
    let known = stdlib::modules()
        .iter()
        .any(|(path, _)| stdlib::file_name(path) == name);
    known.then(|| root().map(|root| root.join(name))).flatten()
}

fn cache_home() -> Option<PathBuf> {
    let from_env = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    from_env("XDG_CACHE_HOME").or_else(|| from_env("HOME").map(|home| home.join(".cache")))
}

/// Writes every std module below `root`, leaving files that already hold the right text.
fn materialize(root: &Path) -> std::io::Result<()> {
    for (module, text) in stdlib::modules() {
        let path = root.join(stdlib::file_name(module));
        if std::fs::read_to_string(&path).is_ok_and(|old| old == *text) {
            continue;
        }
        // Written as the build writes its outputs (a temporary file renamed into place), then
        // made read-only; a rename replaces a read-only file too (it needs the folder's write
        // access only), so a stale file is replaced the same way.
        crate::codegen::write::write_atomic(&path, text.as_bytes())?;
        let mut permissions = std::fs::metadata(&path)?.permissions();
        permissions.set_readonly(true);
        std::fs::set_permissions(&path, permissions)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_are_written_read_only_and_rewritten_when_stale() {
        let root = std::env::temp_dir().join(format!("aelc-std-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        materialize(&root).unwrap();
        for (module, text) in stdlib::modules() {
            let path = root.join(stdlib::file_name(module));
            assert_eq!(std::fs::read_to_string(&path).unwrap(), *text);
            assert!(std::fs::metadata(&path).unwrap().permissions().readonly());
        }
        // A stale file (another build of the same version) is replaced, read-only or not.
        let (module, text) = stdlib::modules()[0];
        let path = root.join(stdlib::file_name(module));
        let mut permissions = std::fs::metadata(&path).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        permissions.set_readonly(false);
        std::fs::set_permissions(&path, permissions).unwrap();
        std::fs::write(&path, "old").unwrap();
        materialize(&root).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        let leftovers = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".tmp")
            })
            .count();
        assert_eq!(leftovers, 0);
        let _ = std::fs::remove_dir_all(&root);
    }
}
