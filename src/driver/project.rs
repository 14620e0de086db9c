//! A checked project for the commands that run or describe its nodes (`aelc run`, `test`,
//! `validate`, `schema`): the project found from a folder upwards, checked, and its typed
//! program; and a node found by the name a command line gives (spec §11: `NODE`).

use std::path::{Path, PathBuf};

use super::World;
use crate::diagnostics::Diagnostic;
use crate::ir::{NodeIr, Program};
use crate::source::SourceMap;

/// A checked project: its root, sources, diagnostics, and its program when it checked clean.
pub struct Project {
    pub root: PathBuf,
    pub sources: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
    pub program: Option<Program>,
}

/// A project that checked clean but has no typed program.
pub const NOT_LOWERED: &str =
    "this aelc cannot lower a project to its typed IR yet (the checker is not wired in)";

/// Finds the project whose `ael.toml` is at or above `start` and checks it (`aelc build` also
/// runs the publishing rules: [`super::build`]). The sources are named as they were found;
/// a command names them from the current folder when it prints them.
pub fn load_project(world: &dyn World, start: &Path) -> Result<Project, String> {
    let root = super::find_project_root(world, start)
        .ok_or_else(|| format!("no ael.toml at or above {}", start.display()))?;
    let compilation = super::check_path(world, &root)
        .map_err(|err| format!("cannot read {}: {err}", root.display()))?;
    let failed = compilation.has_errors();
    let program = compilation.program.filter(|_| !failed);
    if program.is_none() && !failed {
        return Err(NOT_LOWERED.to_owned());
    }
    Ok(Project {
        root,
        sources: compilation.sources,
        diagnostics: compilation.diagnostics,
        program,
    })
}

/// Finds a node by `name` or `module::name` (spec §11: `NODE`); the error names the nearest
/// node, or every module that declares one of that name.
pub fn find_node<'p>(program: &'p Program, name: &str) -> Result<&'p NodeIr, String> {
    let matches: Vec<&NodeIr> = program
        .nodes
        .iter()
        .filter(|n| n.name == name || format!("{}::{}", n.module, n.name) == name)
        .collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => {
            let names: Vec<&str> = program.nodes.iter().map(|n| n.name.as_str()).collect();
            let hint = crate::diagnostics::suggest::did_you_mean(name, names.iter().copied())
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            Err(format!("no node or agent is named `{name}`{hint}"))
        }
        many => Err(format!(
            "`{name}` names several nodes; write one of {}",
            many.iter()
                .map(|n| format!("`{}::{}`", n.module, n.name))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}
