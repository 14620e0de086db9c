//! A project with hundreds of errors reports them all: the driver keeps every diagnostic, the
//! terminal shows the first `render::MAX_SHOWN` and one line counting the rest, the summary
//! counts everything, and JSON output lists everything.

use std::path::{Path, PathBuf};
use std::process::Command;

use aelc::diagnostics::render::MAX_SHOWN;
use aelc::driver::{self, MemoryWorld};

/// 700 errors in two modules: 400 unknown types and 300 unknown names.
const UNKNOWN_TYPES: usize = 400;
const UNKNOWN_NAMES: usize = 300;
const TOTAL: usize = UNKNOWN_TYPES + UNKNOWN_NAMES;

fn files() -> Vec<(&'static str, String)> {
    let manifest = "[package]\nname = \"test/many\"\nversion = \"0.1.0\"\n".to_owned();
    let mut types = String::new();
    for i in 0..UNKNOWN_TYPES {
        types.push_str(&format!("struct S{i} {{ field: Missing{i} }}\n"));
    }
    let mut fns = String::new();
    for i in 0..UNKNOWN_NAMES {
        fns.push_str(&format!("fn f{i}(x: u8) -> u8 {{ x + nowhere{i} }}\n"));
    }
    vec![
        ("ael.toml", manifest),
        ("types.ael", types),
        ("fns.ael", fns),
    ]
}

#[test]
fn the_driver_keeps_every_diagnostic() {
    let root = Path::new("/many");
    let mut world = MemoryWorld::new();
    for (path, text) in files() {
        world = world.with(root.join(path), text);
    }
    let compilation = driver::check_project(&world, root).expect("in memory");
    let errors: Vec<_> = compilation
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .collect();
    assert_eq!(errors.len(), TOTAL, "one error per broken item, none lost");
    assert!(compilation.program.is_none());
}

/// A fresh folder under the target directory holding the project.
fn write_project() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("many_errors");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the project folder");
    for (path, text) in files() {
        std::fs::write(dir.join(path), text).expect("write the project");
    }
    dir
}

#[test]
fn the_terminal_shows_a_capped_list_and_counts_the_rest() {
    let dir = write_project();
    let output = Command::new(env!("CARGO_BIN_EXE_aelc"))
        .args(["check", "--color", "never"])
        .arg(&dir)
        .output()
        .expect("run aelc");
    assert_eq!(output.status.code(), Some(1), "errors exit with 1");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let headers = stderr.lines().filter(|l| l.starts_with("error[E")).count();
    assert_eq!(headers, MAX_SHOWN, "{stderr}");
    let hidden = TOTAL - MAX_SHOWN;
    assert!(
        stderr.contains(&format!(
            "... and {hidden} more diagnostics not shown ({hidden} errors, 0 warnings)"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("error: {TOTAL} errors emitted")),
        "{stderr}"
    );
}

#[test]
fn json_output_lists_every_diagnostic() {
    let dir = write_project();
    let output = Command::new(env!("CARGO_BIN_EXE_aelc"))
        .args(["check", "--message-format", "json"])
        .arg(&dir)
        .output()
        .expect("run aelc");
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let errors = stdout
        .lines()
        .filter(|l| l.contains("\"severity\":\"error\""))
        .count();
    assert_eq!(errors, TOTAL);
}
