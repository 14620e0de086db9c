//! `aelc build [DIR] [--out D] [--check]`: emits schemas, model-facing variants, MCP tools,
//! manifests and `ir.json` (spec §9) under `target/ael/` of the project, or `--out`.
//!
//! `--check` writes nothing and exits 1 naming every file that is out of date, missing or no
//! longer produced. Publishing rules are checked before anything is written.

use std::path::{Path, PathBuf};

use super::args::BuildArgs;
use super::{Output, Status};
use crate::codegen::emit::emit;
use crate::codegen::publish::Example;
use crate::codegen::write;
use crate::diagnostics::Diagnostic;
use crate::driver::{self, DiskWorld, World};
use crate::ir::{NodeKind, Program};
use crate::source::SourceMap;

pub fn run(out: &Output, args: &BuildArgs) -> Status {
    let start = args.path.clone().unwrap_or_else(|| PathBuf::from("."));
    let project = match load_project(&DiskWorld, &start) {
        Ok(p) => p,
        Err(message) => return out.fatal(&message),
    };
    let Some(program) = project.program.as_ref() else {
        out.diagnostics(&project.sources, &project.diagnostics);
        return Status::Failed;
    };
    let examples = match load_examples(&DiskWorld, &project.root, program) {
        Ok(e) => e,
        Err(message) => return out.fatal(&message),
    };
    let emission = emit(program, &examples);
    let mut diagnostics = project.diagnostics.clone();
    diagnostics.extend(emission.diagnostics.iter().cloned());
    out.diagnostics(&project.sources, &diagnostics);
    if emission.has_errors() {
        return Status::Failed;
    }
    let out_dir = args
        .out
        .clone()
        .unwrap_or_else(|| project.root.join("target").join("ael"));
    if args.check {
        return match write::check(&out_dir, &emission.files) {
            Ok(stale) if stale.is_empty() => Status::Ok,
            Ok(stale) => {
                for s in &stale {
                    super::eprint_line(&format!(
                        "stale: {} ({})",
                        out_dir.join(s.path()).display(),
                        s.reason()
                    ));
                }
                super::eprint_line(&format!(
                    "{} emitted file(s) out of date; run `aelc build` to update them",
                    stale.len()
                ));
                Status::Failed
            }
            Err(err) => out.fatal(&format!("cannot check {}: {err}", out_dir.display())),
        };
    }
    match write::write_all(&out_dir, &emission.files) {
        Ok(report) => {
            super::eprint_line(&format!(
                "built {} file(s) in {}: {} written, {} unchanged, {} removed",
                emission.files.len(),
                out_dir.display(),
                report.written.len(),
                report.unchanged,
                report.removed.len()
            ));
            Status::Ok
        }
        Err(err) => out.fatal(&format!("cannot write {}: {err}", out_dir.display())),
    }
}

/// A checked project: its root, sources, diagnostics, and its program when it checked clean.
pub struct Project {
    pub root: PathBuf,
    pub sources: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
    pub program: Option<Program>,
}

/// Finds the project whose `ael.toml` is at or above `start` and checks it.
///
/// The one place that asks the driver for a [`Program`] (`check_path` on a folder with
/// `ael.toml` runs the project-mode checker).
pub fn load_project(world: &dyn World, start: &Path) -> Result<Project, String> {
    let root = driver::find_project_root(world, start)
        .ok_or_else(|| format!("no ael.toml at or above {}", start.display()))?;
    let compilation = driver::check_path(world, &root)
        .map_err(|err| format!("cannot read {}: {err}", root.display()))?;
    let program = lower(&compilation);
    if program.is_none() && !compilation.has_errors() {
        return Err(
            "this aelc cannot lower a project to its typed IR yet (the checker is not wired in)"
                .to_owned(),
        );
    }
    let mut sources = compilation.sources;
    super::shown::name_from_current_dir(&mut sources, &root);
    Ok(Project {
        root,
        sources,
        diagnostics: compilation.diagnostics,
        program,
    })
}

/// The typed program of a compilation without errors (sema produces it in project mode).
fn lower(compilation: &driver::Compilation) -> Option<Program> {
    if compilation.has_errors() {
        return None;
    }
    compilation.program.clone()
}

/// Reads every agent's examples: the files matching its `publish { examples: "…" }` glob, or
/// `examples/<agent>/*.json` without one. The glob is a folder and a file name with `*`.
pub fn load_examples(
    world: &dyn World,
    root: &Path,
    program: &Program,
) -> Result<Vec<Example>, String> {
    let mut out = Vec::new();
    for agent in program.nodes.iter().filter(|n| n.kind == NodeKind::Agent) {
        let glob = agent
            .publish
            .as_ref()
            .and_then(|p| p.examples.clone())
            .unwrap_or_else(|| format!("examples/{}/*.json", agent.name));
        let (folder, pattern) = glob.rsplit_once('/').unwrap_or(("", glob.as_str()));
        let dir = root.join(folder);
        if !world.is_dir(&dir) {
            continue;
        }
        let matcher = file_name_matcher(pattern)
            .map_err(|err| format!("`examples: \"{glob}\"` of `{}`: {err}", agent.name))?;
        let entries = world
            .read_dir(&dir)
            .map_err(|err| format!("cannot read {}: {err}", dir.display()))?;
        for path in entries {
            let Some(file) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if !world.is_file(&path) || !matcher.is_match(file) {
                continue;
            }
            let bytes = world
                .read(&path)
                .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
            let name = file.strip_suffix(".json").unwrap_or(file).to_owned();
            out.push(Example {
                agent: agent.name.clone(),
                path: if folder.is_empty() {
                    file.to_owned()
                } else {
                    format!("{folder}/{file}")
                },
                text: String::from_utf8_lossy(&bytes).into_owned(),
                name,
            });
        }
    }
    Ok(out)
}

/// The matcher of a file-name pattern: `*` matches any run of characters, and every other
/// character matches itself (`?`, `[`, `{` and `\` too, which globset would read as syntax).
/// globset compiles it to a regex, so a match takes time linear in the name.
fn file_name_matcher(pattern: &str) -> Result<globset::GlobMatcher, globset::Error> {
    let literal: Vec<String> = pattern.split('*').map(globset::escape).collect();
    let mut glob = literal.join("*");
    // `**` is one `*` here; to globset it is a recursive wildcard, allowed only between `/`.
    while glob.contains("**") {
        glob = glob.replace("**", "*");
    }
    Ok(globset::GlobBuilder::new(&glob)
        .literal_separator(true)
        .backslash_escape(false)
        .build()?
        .compile_matcher())
}

#[cfg(test)]
mod tests {
    use super::file_name_matcher;

    fn glob_match(pattern: &str, name: &str) -> bool {
        file_name_matcher(pattern).is_ok_and(|m| m.is_match(name))
    }

    #[test]
    fn globs() {
        assert!(glob_match("*.json", "clean.json"));
        assert!(!glob_match("*.json", "clean.yaml"));
        assert!(glob_match("a*b*c", "aXbYc"));
        assert!(!glob_match("a*b", "ab c"));
        assert!(glob_match("a**b", "aXb"));
        assert!(glob_match("*", ""));
        assert!(glob_match("", ""));
        assert!(!glob_match("", "x"));
        assert!(glob_match("é*.json", "été.json"));
    }

    /// Only `*` is special: what globset reads as syntax matches itself, as it always did.
    #[test]
    fn other_characters_match_themselves() {
        for literal in ["a?.json", "[ab].json", "{a,b}.json", "a\\b.json", "!x.json"] {
            assert!(glob_match(literal, literal), "{literal}");
        }
        assert!(!glob_match("a?.json", "ab.json"));
        assert!(!glob_match("[ab].json", "a.json"));
        assert!(!glob_match("{a,b}.json", "a.json"));
        assert!(glob_match("[*].json", "[x].json"));
    }

    /// Issue 25, finding D: the backtracking matcher took over 40 s on this pattern and a
    /// 60-letter name; a regex answers at once (no timing here: the test would not end).
    #[test]
    fn many_stars_do_not_backtrack() {
        let pattern = "*a*a*a*a*a*a*a*a*a*a*a*a*a*ab*.json";
        let name = format!("{}.json", "a".repeat(60));
        assert!(!glob_match(pattern, &name));
        assert!(glob_match(pattern, &format!("{}b.json", "a".repeat(60))));
    }
}
