//! `aelc new NAME`: a new project that checks, builds and tests green at once.
//!
//! The project is written into a temporary folder beside the target and renamed into place, so
//! a failure leaves nothing half-written; an existing non-empty folder is refused untouched.

use std::fs;
use std::path::{Path, PathBuf};

use super::args::NewArgs;
use super::Status;

/// The files of a new project: path relative to the project root, and contents (`{{name}}` is
/// replaced by the project's name).
const FILES: &[(&str, &str)] = &[
    ("ael.toml", include_str!("new_project/ael.toml")),
    (
        "nodes/summarize.node.ael",
        include_str!("new_project/summarize.node.ael"),
    ),
    (
        "prompts/summarize.md",
        include_str!("new_project/summarize.md"),
    ),
    (
        "examples/summarize/short.json",
        include_str!("new_project/example.json"),
    ),
    // `.ael/` holds the local file store (`aelc files put`): uploads, not source.
    (".gitignore", "/target\n/.ael\n"),
];

pub fn run(args: &NewArgs) -> Status {
    let target = &args.path;
    let Some(name) = project_name(target) else {
        super::eprint_line(&format!(
            "error: `{}` is not a usable project name: the folder's name becomes the package name `local/NAME`, so it must be 1 to 64 lowercase ASCII letters, digits, `-` and `_`, starting with a letter\n  = help: for example `aelc new my-agent`",
            target.display()
        ));
        return Status::Usage;
    };
    if target.exists() {
        let empty = fs::read_dir(target).map(|mut d| d.next().is_none());
        match empty {
            Ok(true) => {}
            Ok(false) => {
                super::eprint_line(&format!(
                    "error: `{}` already exists and is not empty; nothing was written\n  = help: choose a new folder name, or empty this one first",
                    target.display()
                ));
                return Status::Usage;
            }
            Err(err) => {
                super::eprint_line(&format!(
                    "error: `{}` exists and cannot be read: {err}",
                    target.display()
                ));
                return Status::Usage;
            }
        }
    }
    match write_project(target, &name) {
        Ok(()) => {
            super::print_line(&format!(
                "created `{}`: try `cd {} && aelc check && aelc build && aelc test`",
                target.display(),
                target.display()
            ));
            Status::Ok
        }
        Err(err) => {
            super::eprint_line(&format!(
                "error: cannot create `{}`: {err}",
                target.display()
            ));
            Status::Usage
        }
    }
}

/// The last path component, if it is usable as the name part of a package name (`local/NAME`,
/// spec §1; the `ael.toml` loader refuses capitals, hence lowercase only).
fn project_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    let rest_ok =
        chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    (first_ok && rest_ok && name.len() <= 64).then(|| name.to_owned())
}

fn write_project(target: &Path, name: &str) -> std::io::Result<()> {
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent)?;
    let staging = parent.join(format!(".{name}.aelc-new-{}", std::process::id()));
    let result = (|| {
        for (path, contents) in FILES {
            let file = staging.join(path);
            if let Some(dir) = file.parent() {
                fs::create_dir_all(dir)?;
            }
            fs::write(&file, contents.replace("{{name}}", name))?;
        }
        if target.exists() {
            // Only an empty folder reaches here; rename needs it gone.
            fs::remove_dir(target)?;
        }
        fs::rename(&staging, target)
    })();
    if result.is_err() {
        let _ = fs::remove_dir_all(&staging);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_must_be_simple() {
        assert_eq!(
            project_name(Path::new("a/my-agent")),
            Some("my-agent".into())
        );
        assert_eq!(project_name(Path::new("9lives")), None);
        assert_eq!(project_name(Path::new("has space")), None);
        assert_eq!(project_name(Path::new("MyAgent")), None);
        assert_eq!(project_name(Path::new("..")), None);
        assert_eq!(project_name(Path::new(&"a".repeat(65))), None);
    }
}
