//! A node's IR turned into the runtime's pieces, once for both runners: the program's pure
//! `fn`s as an [`FnTable`], checks in their runtime form and how their parameters are wired to
//! the node's, the input decoder, the input checks, the output stage (checks and transform)
//! and the output [`Pipeline`] (policies, budget, prices).
//!
//! [`NodeParts`] holds them for one node. `aelc run` ([`super::run::NodeRun`]) and
//! `aelc validate`/`aelc test` ([`super::runner::NodeRunner`]) both drive a `NodeParts`, so a
//! node's checks, decoder and pipeline are the same in both; what differs is around the model
//! call (`run` renders the prompt and reaches real bindings).

use aelc_runtime::decode::Decoder;
use aelc_runtime::error::DecodeError;
use aelc_runtime::eval::{CheckOutcome, EvalError, EvalErrorKind, Evaluator, FnTable, Host};
use aelc_runtime::expr::{self as rt, FnDef};
use aelc_runtime::pipeline::{self, Budget, CheckFailure, Pipeline};
use aelc_runtime::stage::{Arg, IrStage, StageCheck};
use aelc_runtime::ty::Ty;
use aelc_runtime::value::Value;

use crate::ir::{self, CheckIr, NodeIr, Program};

/// The binding name used when a node names none (a node without `model:` cannot call one).
const NO_BINDING: &str = "(no binding)";

/// The pure fns of a program, by the program's fn ids (extern fns have no body).
pub struct ProgramFns(Vec<Option<FnDef>>);

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
                        params: f.params.iter().map(rt_param).collect(),
                        locals: f.locals,
                        ret: f.ret.clone(),
                        body,
                    })
                })
                .collect(),
        )
    }
}

impl FnTable for ProgramFns {
    fn pure_fn(&self, id: rt::FnId) -> Option<&FnDef> {
        self.0.get(id.0 as usize)?.as_ref()
    }
}

fn rt_param(p: &ir::Param) -> rt::Param {
    rt::Param {
        name: p.name.clone(),
        ty: p.ty.clone(),
    }
}

/// The runtime form of a check, or `None` for an `extern check` (Rust code, not IR).
pub fn rt_check(c: &CheckIr) -> Option<rt::Check> {
    (!c.is_extern).then(|| rt::Check {
        name: c.name.clone(),
        params: c.params.iter().map(rt_param).collect(),
        locals: c.locals,
        requires: c.requires.clone(),
    })
}

/// Where each parameter of a check or fn wired to `node` comes from: the output first when
/// `output_first`, then for each other parameter the node's parameter of the same name and
/// type, else the first of the same type (sema's rule, E0506, which guarantees one).
pub fn wire(node: &NodeIr, params: &[ir::Param], output_first: bool) -> Vec<Arg> {
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

/// A node of a program with the runtime pieces both runners need, derived from the IR once.
pub struct NodeParts<'p> {
    pub program: &'p Program,
    pub node: &'p NodeIr,
    pub fns: ProgramFns,
    pub checks: ProgramChecks,
}

impl<'p> NodeParts<'p> {
    pub fn new(program: &'p Program, node: &'p NodeIr) -> NodeParts<'p> {
        NodeParts {
            program,
            node,
            fns: ProgramFns::new(program),
            checks: ProgramChecks::new(program),
        }
    }

    /// Decodes the node's input document (spec §4) under `max_input_bytes`: one parameter's
    /// value, or an object with one field per parameter. Paths start at the parameter's name.
    pub fn decode_input(&self, bytes: &[u8]) -> Result<Vec<Value>, Vec<DecodeError>> {
        let max = usize::try_from(self.program.limits.max_input_bytes).unwrap_or(usize::MAX);
        let params: Vec<(&str, &Ty)> = self
            .node
            .params
            .iter()
            .map(|p| (p.name.as_str(), &p.ty))
            .collect();
        Decoder::new(&self.program.types)
            .with_max_input_bytes(max)
            .decode_input(bytes, &params)
    }

    /// The output pipeline of the node: its binding, `max_answer`, `on_failure` policies,
    /// budget, and the prices of the program's bindings.
    pub fn pipeline(&self) -> Pipeline<'p> {
        let (program, node) = (self.program, self.node);
        let binding = node.config.model.as_deref().unwrap_or(NO_BINDING);
        let mut p = Pipeline::new(
            &program.types,
            &node.output,
            binding,
            node.config.max_answer,
        );
        p.policies = node
            .output_stage
            .on_failure
            .iter()
            .map(|policy| match policy {
                ir::Policy::Retry { times } => pipeline::Policy::Retry { times: *times },
                ir::Policy::Repair { times } => pipeline::Policy::Repair { times: *times },
                ir::Policy::Fallback { binding } => pipeline::Policy::Fallback {
                    binding: binding.clone(),
                },
                ir::Policy::Fail { code } => pipeline::Policy::Fail { code: code.clone() },
            })
            .collect();
        p.budget = Budget {
            max_calls: node.budget.max_calls,
            max_time_ms: node.budget.max_time_ms,
            max_cost: node.budget.max_cost.as_ref().map(|m| m.amount.clone()),
        };
        p.prices = program
            .bindings
            .iter()
            .filter_map(|b| Some((b.name.clone(), b.price.clone()?)))
            .collect();
        p
    }

    /// Runs the node's input checks in declared order (before any call): the first failure,
    /// if any. An `extern check` is an error when reached.
    pub fn input_checks(
        &self,
        host: &mut dyn Host,
        inputs: &[Value],
    ) -> Result<Option<CheckFailure>, EvalError> {
        for id in &self.node.input.checks {
            let Some(decl) = self.program.checks.get(id.0 as usize) else {
                continue;
            };
            let Some(check) = self.checks.get(*id) else {
                return Err(no_rust(&format!("extern check `{}`", decl.name)));
            };
            let values: Vec<&Value> = wire(self.node, &decl.params, false)
                .iter()
                .filter_map(|a| match a {
                    Arg::Input(i) => inputs.get(*i),
                    Arg::Output => None,
                })
                .collect();
            let mut eval = Evaluator::new(&self.fns, &mut *host);
            if let CheckOutcome::Failed { code, message } = eval.run_check(check, &values)? {
                return Ok(Some(CheckFailure {
                    check: check.name.clone(),
                    code,
                    message,
                }));
            }
        }
        Ok(None)
    }

    /// The node's output stage over `inputs` (steps 4 and 5 of spec §6.1): its output checks
    /// in order, wired to the output and the inputs, and its transform. An `extern check` is
    /// an error when reached.
    pub fn output_stage<'s>(&'s self, host: &'s mut dyn Host, inputs: &'s [Value]) -> IrStage<'s> {
        let (program, node) = (self.program, self.node);
        let stage_checks = node
            .output_stage
            .checks
            .iter()
            .filter_map(|id| {
                let decl = program.checks.get(id.0 as usize)?;
                let args = wire(node, &decl.params, true);
                Some(match self.checks.get(*id) {
                    Some(check) => StageCheck::Ir { check, args },
                    None => {
                        let what = format!("extern check `{}`", decl.name);
                        StageCheck::Extern {
                            name: decl.name.clone(),
                            args,
                            run: Box::new(move |_| Err(no_rust(&what))),
                        }
                    }
                })
            })
            .collect();
        let transform = node.output_stage.transform.and_then(|f| {
            let def = self.fns.pure_fn(rt::FnId(f.0))?;
            let params = &program.fns.get(f.0 as usize)?.params;
            Some((def, wire(node, params, true)))
        });
        IrStage {
            transform,
            ..IrStage::new(&self.fns, host, inputs, stage_checks)
        }
    }
}

/// The checks of a program in runtime form, by check id (`None`: an `extern check`).
pub struct ProgramChecks(Vec<Option<rt::Check>>);

impl ProgramChecks {
    pub fn new(program: &Program) -> ProgramChecks {
        ProgramChecks(program.checks.iter().map(rt_check).collect())
    }

    pub fn get(&self, id: ir::CheckId) -> Option<&rt::Check> {
        self.0.get(id.0 as usize)?.as_ref()
    }
}

/// The error of reaching Rust code that `aelc` does not link (`what`: "extern check `x`").
pub fn no_rust(what: &str) -> EvalError {
    EvalError::new(
        EvalErrorKind::Extern,
        format!("{what} is Rust code, which this run does not have"),
    )
}
