//! Running one node of a checked [`Program`] for `aelc validate` and `aelc test`, on a prompt
//! the caller rendered (a replay does not depend on it). The node's IR becomes the runtime's
//! pieces (fns, checks and their wiring, decoder, [`Pipeline`]) in [`super::node`], which
//! `aelc run` ([`super::run`]) shares; what is left here is the order of the steps:
//!
//! 1. decode the input document ([`NodeRunner::decode_input`]; spec §4, `max_input_bytes`);
//!    errors end the run as `rejected_input` (code `invalid_input`), nothing billed;
//! 2. run the input checks in declared order; the first failure ends the run as `failed` with
//!    the check's declared code (book: reference/nodes.md), nothing sent, nothing billed;
//! 3. hand the prompt to the model through the seven steps of §6.1 with the node's output
//!    checks, transform, `on_failure` policies, budget and the bindings' prices;
//! 4. write the receipt (§10).
//!
//! The prompt is rendered by the caller (a replay does not depend on it). `extern fn`s and
//! `extern check`s are Rust code this crate does not have: [`NodeRunner::needs_rust`] lists
//! what a node would need, and calling one at run time is an `internal_error`. A node body is
//! described by [`BodyPlan`] (see [`body_plan`]).

use std::path::Path;

use aelc_runtime::decode::Decoder;
use aelc_runtime::error::DecodeError;
use aelc_runtime::eval::{EvalError, Host};
use aelc_runtime::expr::FnId;
use aelc_runtime::model::Model;
use aelc_runtime::money::Amount;
use aelc_runtime::pipeline::{self, Clock, Outcome, Status};
use aelc_runtime::receipt::Receipt;
use aelc_runtime::value::Value;

use super::node::{self, NodeParts};
use super::World;
use crate::ir::{self, NodeIr, Program};
use crate::syntax::{self, ast};

/// Answers `extern fn` calls with an error: their Rust implementation is not linked here.
struct NoRustHost<'p> {
    program: &'p Program,
}

impl Host for NoRustHost<'_> {
    fn call_extern(&mut self, func: FnId, _args: Vec<Value>) -> Result<Value, EvalError> {
        let name = self
            .program
            .fns
            .get(func.0 as usize)
            .map_or("?", |f| f.name.as_str());
        Err(node::no_rust(&format!("extern fn `{name}`")))
    }
}

/// A node ready to run: everything derived from the IR once.
pub struct NodeRunner<'p> {
    /// The node and its runtime pieces (shared with `aelc run`).
    pub parts: NodeParts<'p>,
    needs_rust: Vec<String>,
}

/// What running a node gave.
#[derive(Clone, Debug)]
pub struct NodeRun {
    /// The §4 errors of the input document (the run is then `rejected_input`).
    pub input_errors: Vec<DecodeError>,
    /// The failed input check and its message, when one failed.
    pub input_check: Option<pipeline::CheckFailure>,
    pub outcome: Outcome,
    pub receipt: Receipt,
}

impl<'p> NodeRunner<'p> {
    pub fn new(program: &'p Program, node: &'p NodeIr) -> NodeRunner<'p> {
        let checks = node.input.checks.iter().chain(&node.output_stage.checks);
        let mut needs_rust: Vec<String> = checks
            .filter_map(|id| program.checks.get(id.0 as usize))
            .filter(|c| c.is_extern)
            .map(|c| format!("extern check `{}`", c.name))
            .collect();
        if let Some(f) = node
            .output_stage
            .transform
            .and_then(|id| program.fns.get(id.0 as usize))
            .filter(|f| f.is_extern)
        {
            needs_rust.push(format!("extern fn `{}` (the transform)", f.name));
        }
        if let Some(f) = node
            .output_stage
            .raw_parse
            .and_then(|id| program.fns.get(id.0 as usize))
        {
            needs_rust.push(format!("extern fn `{}` (the raw parser)", f.name));
        }
        NodeRunner {
            parts: NodeParts::new(program, node),
            needs_rust,
        }
    }

    /// The Rust-written pieces (`extern check`s, an extern transform, a raw parser) the node
    /// needs; empty when the whole acceptance sequence is AEL.
    pub fn needs_rust(&self) -> &[String] {
        &self.needs_rust
    }

    /// Decodes the node's input document (spec §4): one parameter's value, or an object with
    /// one field per parameter. Paths start at the parameter's name.
    pub fn decode_input(&self, bytes: &[u8]) -> Result<Vec<Value>, Vec<DecodeError>> {
        self.parts.decode_input(bytes)
    }

    /// Decodes a document as the node's output (paths start at `output`), under the same
    /// `max_answer` bound as step 1.
    pub fn decode_output(&self, bytes: &[u8]) -> Result<Value, Vec<DecodeError>> {
        let max = usize::try_from(self.parts.node.config.max_answer).unwrap_or(usize::MAX);
        Decoder::new(&self.parts.program.types)
            .with_max_input_bytes(max)
            .decode(bytes, &self.parts.node.output, pipeline::OUTPUT_ROOT)
    }

    /// Runs the node on `input` (the document's bytes): decode, input checks, then the model
    /// through the seven steps. Nothing is called or billed when the input is refused.
    pub fn run(
        &self,
        input: &[u8],
        prompt: &str,
        model: &mut dyn Model,
        clock: &mut dyn Clock,
    ) -> NodeRun {
        let mut host = NoRustHost {
            program: self.parts.program,
        };
        let ended = |outcome: Outcome| self.receipt(input, &outcome);
        let inputs = match self.decode_input(input) {
            Ok(v) => v,
            Err(errors) => {
                let outcome = Outcome::rejected_input();
                return NodeRun {
                    input_errors: errors,
                    input_check: None,
                    receipt: ended(outcome.clone()),
                    outcome,
                };
            }
        };
        let input_check = self.parts.input_checks(&mut host, &inputs);
        match input_check {
            Ok(None) => {}
            Ok(Some(failure)) => {
                let outcome = self.refused(Status::Failed, &failure.code);
                return NodeRun {
                    input_errors: Vec::new(),
                    input_check: Some(failure),
                    receipt: ended(outcome.clone()),
                    outcome,
                };
            }
            Err(_) => {
                let outcome = self.refused(Status::Error, "internal_error");
                return NodeRun {
                    input_errors: Vec::new(),
                    input_check: None,
                    receipt: ended(outcome.clone()),
                    outcome,
                };
            }
        }
        let mut stage = self.parts.output_stage(&mut host, &inputs);
        let outcome = self.parts.pipeline().run(prompt, model, &mut stage, clock);
        NodeRun {
            input_errors: Vec::new(),
            input_check: None,
            receipt: ended(outcome.clone()),
            outcome,
        }
    }

    /// An outcome that ran no model: nothing attempted, nothing spent.
    fn refused(&self, status: Status, code: &str) -> Outcome {
        Outcome {
            status,
            code: Some(code.to_owned()),
            output: None,
            output_json: None,
            attempts: Vec::new(),
            cost: Amount::ZERO,
            currency: None,
        }
    }

    fn receipt(&self, input: &[u8], outcome: &Outcome) -> Receipt {
        Receipt::new(
            &self.parts.program.package.name,
            &self.parts.program.package.version,
            &self.parts.node.name,
            input,
            outcome,
            Vec::new(),
        )
    }
}

/// What a node's body means for a run that has no Rust code (spec §5, §6; book:
/// reference/testing.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BodyPlan {
    /// No body: the answer is the model's answer to the node's prompt.
    None,
    /// `return f(a, b);` where `f` is an `extern fn` returning the node's output type and every
    /// argument is a node parameter: `f` is the Rust function that calls the node's model with
    /// the node's prompt, so the run replays that call through the seven steps.
    ModelCall { extern_fn: String },
    /// Anything else: the body computes with Rust code a run cannot replay; the sentence says
    /// what it does.
    Unsupported(String),
}

/// Reads the body of `node` from its module's source under `root` and decides what it means
/// for a replay. The IR records only that a body exists, so this looks at the syntax tree.
pub fn body_plan(world: &dyn World, root: &Path, program: &Program, node: &NodeIr) -> BodyPlan {
    if !node.has_body {
        return BodyPlan::None;
    }
    let relative = node.module.replace("::", "/");
    let source = [".node.ael", ".ael"]
        .iter()
        .map(|ext| root.join(format!("{relative}{ext}")))
        .find_map(|path| world.read(&path).ok());
    let Some(bytes) = source else {
        return BodyPlan::Unsupported(format!(
            "the source of module `{}` could not be read to see the body of `{}`",
            node.module, node.name
        ));
    };
    let text = String::from_utf8_lossy(&bytes);
    let parsed = syntax::parse(crate::span::FileId(0), &text);
    let def = parsed
        .module
        .items
        .iter()
        .find_map(|item| match &item.kind {
            ast::ItemKind::Node(def) if def.name.name == node.name => Some(def),
            _ => None,
        });
    let Some(def) = def else {
        return BodyPlan::Unsupported(format!("`{}` was not found in its module", node.name));
    };
    classify_body(program, node, &def.body)
}

fn classify_body(program: &Program, node: &NodeIr, body: &[ast::Stmt]) -> BodyPlan {
    let unsupported = |why: &str| {
        BodyPlan::Unsupported(format!(
            "the body of `{}` {why}; only a body `return f(…);` that hands the node's parameters to one `extern fn` returning its output can be replayed (the extern fn stands for the call of the node's model)",
            node.name
        ))
    };
    let [ast::Stmt::Return { value, .. }] = body else {
        return unsupported("has statements besides one `return`");
    };
    let ast::ExprKind::Call { callee, args } = &value.kind else {
        return unsupported("returns something other than a call");
    };
    let names: Vec<&str> = callee.segments.iter().map(|s| s.name.as_str()).collect();
    let Some((name, prefix)) = names.split_last() else {
        return unsupported("calls nothing");
    };
    let module = prefix.join("::");
    let candidates: Vec<&ir::FnIr> = program
        .fns
        .iter()
        .filter(|f| f.name == *name && (prefix.is_empty() || f.module == module))
        .collect();
    let f = candidates
        .iter()
        .find(|f| f.module == node.module)
        .or_else(|| candidates.first());
    let Some(f) = f else {
        return unsupported(&format!("calls `{}`, which is not a fn", names.join("::")));
    };
    if !f.is_extern {
        return unsupported(&format!("calls the pure fn `{}`", f.name));
    }
    if f.ret.as_ref() != Some(&node.output) {
        return unsupported(&format!(
            "calls `{}`, which does not return the node's output type",
            f.name
        ));
    }
    let all_params = args.iter().all(|a| match &a.kind {
        ast::ExprKind::Path(p) => {
            p.segments.len() == 1
                && p.segments
                    .first()
                    .is_some_and(|s| node.params.iter().any(|q| q.name == s.name))
        }
        _ => false,
    });
    if !all_params {
        return unsupported("passes computed arguments to the extern fn");
    }
    BodyPlan::ModelCall {
        extern_fn: f.name.clone(),
    }
}
