//! Paths as the author sees them: what the command line prints for a file is a path that
//! opens from the folder `aelc` was run in (spec §11: "path as given").

use std::path::{Component, Path, PathBuf};

use crate::driver::project::{self, Project};
use crate::driver::DiskWorld;
use crate::source::SourceMap;

/// The project at or above `start`, checked ([`project::load_project`]), its files named from
/// the current folder.
pub fn load_project(start: &Path) -> Result<Project, String> {
    let mut project = project::load_project(&DiskWorld, start)?;
    name_from_current_dir(&mut project.sources, &project.root);
    Ok(project)
}

/// Names the files of a project (named relative to `root` by the driver) as paths from the
/// current folder: `demo/nodes/x.node.ael` for `aelc check demo`, `x.node.ael` when run in
/// `demo/nodes`, `../ael.toml` from there.
pub fn name_from_current_dir(sources: &mut SourceMap, root: &Path) {
    let cwd = std::env::current_dir().ok();
    sources.rename_files(|name| display(&root.join(name), cwd.as_deref()));
}

/// How the command line prints `path`: a relative path as given (without a leading `./`); an
/// absolute one (under a project root found by searching upwards) relative to `cwd`, the
/// current folder, when the two share a root.
pub fn display(path: &Path, cwd: Option<&Path>) -> String {
    let relative = match cwd {
        Some(cwd) if path.is_absolute() => relative_to(path, cwd),
        _ => None,
    };
    let text = relative
        .as_deref()
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/");
    text.strip_prefix("./").map(str::to_owned).unwrap_or(text)
}

/// `path` relative to `base` (both absolute), with `..` where it lies outside; `None` when
/// they share no root. `Path::new("")` when they are the same folder.
pub fn relative_to(path: &Path, base: &Path) -> Option<PathBuf> {
    let path: Vec<Component<'_>> = path.components().collect();
    let base: Vec<Component<'_>> = base.components().collect();
    let common = path.iter().zip(&base).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return None;
    }
    let mut out = PathBuf::new();
    for _ in common..base.len() {
        out.push("..");
    }
    for component in path.iter().skip(common) {
        out.push(component);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_climb_and_descend() {
        let rel = |p: &str, b: &str| relative_to(Path::new(p), Path::new(b));
        assert_eq!(rel("/a/b/c", "/a/b"), Some(PathBuf::from("c")));
        assert_eq!(rel("/a/b", "/a/b/c/d"), Some(PathBuf::from("../..")));
        assert_eq!(rel("/a/x/y", "/a/b"), Some(PathBuf::from("../x/y")));
        assert_eq!(rel("/a/b", "/a/b"), Some(PathBuf::new()));
        let cwd = Some(Path::new("/p/demo/nodes"));
        assert_eq!(
            display(Path::new("/p/demo/types/t.ael"), cwd),
            "../types/t.ael"
        );
        assert_eq!(display(Path::new("./demo/x.ael"), cwd), "demo/x.ael");
        assert_eq!(display(Path::new("../x.ael"), cwd), "../x.ael");
    }

    #[test]
    fn dots_resolve_by_name() {
        let cwd = std::env::current_dir().unwrap_or_default();
        let resolved = crate::driver::lexically_absolute(Path::new("x/../y/./z"));
        assert_eq!(resolved, Some(cwd.join("y/z")));
        let resolved = crate::driver::lexically_absolute(Path::new("/a/b/../../c"));
        assert_eq!(resolved, Some(PathBuf::from("/c")));
    }
}
