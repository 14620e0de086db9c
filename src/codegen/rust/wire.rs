//! The run-time part of a [`Program`] that generated glue embeds: a
//! [`GlueProgram`] (types, pure fns, checks, each node's configuration and wiring).
//!
//! Wiring follows sema's rule (`sema::node::wire_check`): an output check takes the output
//! first; every other parameter is the node parameter of the same name and type, else the
//! first of the same type.

use aelc_runtime::expr::{Check, FnDef, Param};
use aelc_runtime::glue::{Arg, GlueCheck, GlueNode, GlueProgram, WiredCheck};
use aelc_runtime::ty::Ty;

use crate::ir::{self, CheckId, NodeIr, Program};

/// The embedded program of `program`.
pub fn glue_program(program: &Program) -> GlueProgram {
    let params = |ps: &[ir::Param]| -> Vec<Param> {
        ps.iter()
            .map(|p| Param {
                name: p.name.clone(),
                ty: p.ty.clone(),
            })
            .collect()
    };
    GlueProgram {
        types: program.types.clone(),
        fns: program
            .fns
            .iter()
            .map(|f| match (&f.body, f.is_extern) {
                (Some(body), false) => Some(FnDef {
                    name: f.name.clone(),
                    params: params(&f.params),
                    locals: f.locals,
                    ret: f.ret.clone(),
                    body: body.clone(),
                }),
                _ => None,
            })
            .collect(),
        checks: program
            .checks
            .iter()
            .map(|c| GlueCheck {
                name: c.name.clone(),
                ir: (!c.is_extern).then(|| Check {
                    name: c.name.clone(),
                    params: params(&c.params),
                    locals: c.locals,
                    requires: c.requires.clone(),
                }),
            })
            .collect(),
        nodes: program
            .nodes
            .iter()
            .map(|n| glue_node(program, n))
            .collect(),
        prices: program
            .bindings
            .iter()
            .filter_map(|b| Some((b.name.clone(), b.price.clone()?)))
            .collect(),
    }
}

fn glue_node(program: &Program, node: &NodeIr) -> GlueNode {
    let wire = |ids: &[CheckId], output: bool| -> Vec<WiredCheck> {
        ids.iter()
            .map(|id| WiredCheck {
                check: id.0,
                args: program
                    .checks
                    .get(id.0 as usize)
                    .map(|c| wire_args(node, &c.params, output))
                    .unwrap_or_default(),
            })
            .collect()
    };
    GlueNode {
        name: node.name.clone(),
        params: node
            .params
            .iter()
            .map(|p| (p.name.clone(), p.ty.clone()))
            .collect(),
        output: node.output.clone(),
        binding: node.config.model.clone().unwrap_or_default(),
        max_answer: node.config.max_answer,
        max_input_bytes: program.limits.max_input_bytes,
        policies: node.output_stage.on_failure.clone(),
        budget: node.budget.to_pipeline(),
        input_checks: wire(&node.input.checks, false),
        output_checks: wire(&node.output_stage.checks, true),
        transform: node.output_stage.transform.map(|f| f.0),
        body: node.body_fn(),
    }
}

/// Where each of a check's parameters comes from when wired to `node`.
pub fn wire_args(node: &NodeIr, params: &[ir::Param], output: bool) -> Vec<Arg> {
    params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if output && i == 0 {
                return Arg::Output;
            }
            let by_name = node
                .params
                .iter()
                .position(|n| n.name == p.name && n.ty == p.ty);
            let by_type = || node.params.iter().position(|n| n.ty == p.ty);
            Arg::Input(by_name.or_else(by_type).unwrap_or(0))
        })
        .collect()
}

/// Whether `ty` is `Option<…>` (absent is `none`).
pub fn is_option(ty: &Ty) -> bool {
    matches!(ty, Ty::Option { .. })
}
