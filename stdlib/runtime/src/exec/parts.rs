//! A program's IR in the forms the evaluator and the output stage take, derived once per
//! executor: pure `fn`s by id ([`ProgramFns`]), checks by id ([`ProgramChecks`]), and how the
//! parameters of a node's checks and transform are wired to the node's own ([`wire`]).

use crate::bounds::Patterns;
use crate::eval::FnTable;
use crate::expr::{Check, FnDef, FnId};
use crate::program::{self, CheckId, NodeIr, Program};
use crate::stage::Arg;

/// The pure fns of a program, by the program's fn ids (extern fns have no body), with the
/// program's compiled patterns (its type table's: `matches` and `@pattern` share one cache).
pub struct ProgramFns(Vec<Option<FnDef>>, Patterns);

impl ProgramFns {
    pub fn new(program: &Program) -> ProgramFns {
        ProgramFns(
            program
                .fns
                .iter()
                .map(|f| {
                    let body = f.body.clone().filter(|_| !f.is_extern)?;
                    Some(FnDef {
                        name: f.name.clone(),
                        params: f.params.iter().map(program::Param::to_expr).collect(),
                        locals: f.locals,
                        ret: f.ret.clone(),
                        body,
                    })
                })
                .collect(),
            program.types.patterns().clone(),
        )
    }
}

impl FnTable for ProgramFns {
    fn pure_fn(&self, id: FnId) -> Option<&FnDef> {
        self.0.get(id.0 as usize)?.as_ref()
    }

    fn patterns(&self) -> Option<&Patterns> {
        Some(&self.1)
    }
}

/// The checks of a program in runtime form, by check id (`None`: an `extern check`).
pub struct ProgramChecks(Vec<Option<Check>>);

impl ProgramChecks {
    pub fn new(program: &Program) -> ProgramChecks {
        ProgramChecks(
            program
                .checks
                .iter()
                .map(|c| {
                    (!c.is_extern).then(|| Check {
                        name: c.name.clone(),
                        params: c.params.iter().map(program::Param::to_expr).collect(),
                        locals: c.locals,
                        requires: c.requires.clone(),
                    })
                })
                .collect(),
        )
    }

    pub fn get(&self, id: CheckId) -> Option<&Check> {
        self.0.get(id.0 as usize)?.as_ref()
    }
}

/// Where each parameter of a check or fn wired to `node` comes from: the output first when
/// `output_first`, then for each other parameter the node's parameter of the same name and
/// type, else the first of the same type (the compiler's rule, E0506, guarantees one).
pub fn wire(node: &NodeIr, params: &[program::Param], output_first: bool) -> Vec<Arg> {
    let mut args = Vec::new();
    let rest = if output_first {
        args.push(Arg::Output);
        params.get(1..).unwrap_or(&[])
    } else {
        params
    };
    for p in rest {
        let by_name = node
            .params
            .iter()
            .position(|n| n.name == p.name && n.ty == p.ty);
        let by_type = || node.params.iter().position(|n| n.ty == p.ty);
        args.push(Arg::Input(by_name.or_else(by_type).unwrap_or(0)));
    }
    args
}

#[cfg(test)]
mod tests {
    use super::ProgramFns;
    use crate::eval::FnTable;
    use crate::program::Program;

    /// `matches` (the evaluator, through the fn table) and `@pattern` (decoders and
    /// validators, through the type table) compile into the program's one cache.
    #[test]
    fn the_fns_share_the_programs_patterns() {
        let program = Program::default();
        let fns = ProgramFns::new(&program);
        let shared = fns
            .patterns()
            .map(|p| p.same_cache(program.types.patterns()));
        assert_eq!(shared, Some(true));
        assert_eq!(
            fns.patterns().and_then(|p| p.is_match("^a+$", "aa")),
            Some(true)
        );
        assert_eq!(program.types.patterns().len(), 1);
    }
}
