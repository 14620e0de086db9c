//! The one executor (spec §12): runs any checked node of a [`Program`] from its IR, for
//! `aelc run`, `aelc test`, the generated Rust glue, the gateway and the MCP server alike.
//!
//! A program plus the host's externs ([`ExternHost`], e.g. [`Externs`]) plus a model ([`Model`], usually a router
//! over the program's bindings) plus a clock and an id source in; an [`Outcome`] and a
//! [`Receipt`] tree out. Nothing here reads the environment, and files only through the
//! host's [`MediaStore`] (a run's media references, [`Env::media`]).
//!
//! A run of a node, in order:
//! 1. **Before anything**: every extern the run could reach must be registered (or be the
//!    node's own model call, [`NodeIr::model_call`]), every delegated node must exist, and a
//!    node that answers with its model must have a binding; otherwise [`Unrunnable`] names what
//!    is missing and nothing runs ([`Executor::missing`]).
//! 2. **Gate**: the input document is decoded against the node's parameters (spec §4); errors
//!    end the run as `rejected_input`, nothing billed.
//! 3. **Input checks** in declared order; the first failure ends the run as `failed` with its
//!    code, nothing sent.
//! 4. **The answer**: without a body, the node's model call; with one, the body evaluated,
//!    where a call of the node's model-call extern is the model call, a call of another node is
//!    a **delegated call** (a run of its own, from step 3 on, whose receipt becomes a child of
//!    this one), and a registered extern runs the host's Rust. A body that made no model call
//!    has its answer go through steps 3–6 of §6.1 with the node's output stage.
//! 5. **The model call**: the prompt rendered by the runtime (the input builder's parts, or the
//!    template, or the input document), measured against `max_prompt`, its part kinds checked
//!    against the binding's `accepts`, then the seven steps with the node's policies. Every
//!    call's worst case is reserved first in the budget of the node and of each caller
//!    ([`crate::meter`]): `max_cost` is never exceeded.
//! 6. **Receipt**: a new id per run, `reserved` and `spent` for the node and everything below
//!    it, `delegated` for the children.
//!
//! A delegated call that does not succeed ends the caller's body: an `error` (budget, model,
//! internal) stays an `error` with its code; any other end becomes the caller's declared
//! failure when the caller declares the child's code, else the caller's `fail(code)` policy
//! when it has one, else `invalid_output`. Delegations nest at most
//! [`MAX_DELEGATION_DEPTH`] deep, so a cycle of nodes calling each other ends with an error
//! naming the chain.

mod externs;
mod parts;
mod schemas;
mod session;
pub mod shared_defs;

pub use externs::{CallContext, CheckVerdict, ExternCheck, ExternFn, ExternHost, Externs};
pub use parts::{wire, ProgramChecks, ProgramFns};
pub use schemas::{constrains_with_grammar, output_schema, NodeSchemas, Schemas};
pub use session::{
    parse_observation, parse_session, session_line_bound, Arrival, Combined, Observation, Session,
    SessionError, SESSION_LINE_ENVELOPE, STALE_INPUT,
};

use crate::reserved::ReservedCode;
use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::decode::Decoder;
use crate::error::DecodeError;
use crate::eval::{CheckOutcome, EvalError, EvalErrorKind, Evaluator, FnTable, Host};
use crate::expr::{Callee, FnId};
use crate::files::MediaStore;
use crate::meter::Meter;
use crate::model::Model;
use crate::pipeline::{self, Clock, Outcome, Pipeline, Refusal, Status, OUTPUT_ROOT};
use crate::program::{NodeId, NodeIr, Program};
use crate::prompt::{self, PromptEnv, PromptPart};
use crate::provider::NodeCall;
use crate::receipt::{IdSource, Receipt};
use crate::stage::{IrStage, StageCheck};
use crate::trace;
use crate::validate::Validator;
use crate::value::Value;

/// How deep delegated calls may nest (a node calling a node calling …).
pub const MAX_DELEGATION_DEPTH: usize = 16;

/// The timeout of a model call when the node sets none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// What one run needs besides the program: where answers, time and ids come from, and the
/// host's Rust.
pub struct Env<'e> {
    pub model: &'e mut dyn Model,
    pub clock: &'e mut dyn Clock,
    pub ids: &'e mut dyn IdSource,
    pub externs: &'e mut dyn ExternHost,
    /// Check each call's part kinds against its binding's `accepts` before the call. Off for
    /// recorded answers, which answer whatever they are asked.
    pub check_accepts: bool,
    /// The file store and the tenant of the run: every media reference among a run's inputs
    /// is checked against it (access, expiry, what it says), and a live call's media parts are
    /// resolved through it into inline data. `None`: references are taken as they are (a
    /// replay), and a live call with media parts is refused.
    pub media: Option<MediaAccess<'e>>,
}

/// Where a run's media references are checked and read, and for whom (spec §12.1).
#[derive(Clone, Copy)]
pub struct MediaAccess<'e> {
    pub store: &'e dyn MediaStore,
    pub tenant: &'e str,
}

/// Why a node cannot run at all: nothing was decoded, called or billed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unrunnable {
    pub node: String,
    /// One phrase per missing piece (`extern fn \`parse\` (the raw parser of \`x\`)`).
    pub missing: Vec<String>,
}

impl std::fmt::Display for Unrunnable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "node `{}` cannot run here: it needs {}, which {} no implementation here",
            self.node,
            self.missing.join(", "),
            if self.missing.len() == 1 {
                "has"
            } else {
                "have"
            }
        )
    }
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct Run {
    pub outcome: Outcome,
    pub receipt: Receipt,
    /// The decoder's errors when the input was refused (spec §4 sentences), else empty.
    pub input_errors: Vec<DecodeError>,
    /// The input check that refused the input, when one did.
    pub input_check: Option<pipeline::CheckFailure>,
    /// Why the run ended without an answer when no attempt says it (an input check,
    /// `max_prompt`, a part kind, a body's error, a delegated call's failure).
    pub refusal: Option<String>,
    /// The parts the node's model received on its last call (empty when none was made).
    pub parts: Vec<PromptPart>,
}

/// What [`Executor::admit`] decided.
#[derive(Debug)]
pub enum Admission {
    /// The call passed the gate; run it with [`Executor::run_admitted`].
    Admitted(Admitted),
    /// Refused at the gate (`rejected_input`, or `failed` by an input check): the finished
    /// run; nothing was called or billed.
    Refused(Box<Run>),
}

/// A call that passed the gate: its decoded inputs. Only [`Executor::admit`] makes one.
#[derive(Debug)]
pub struct Admitted {
    node: NodeId,
    inputs: Vec<Value>,
}

/// A program ready to run (see the module doc).
pub struct Executor<'p> {
    program: &'p Program,
    fns: ProgramFns,
    checks: ProgramChecks,
    /// Per node, what every model call of it shares, made once: all by [`Executor::new`], each
    /// on the node's first model call by [`Executor::lazy`].
    calls: Vec<OnceLock<Prepared>>,
    /// For [`Executor::lazy`]: a node's schemas, by node index.
    source: Option<SchemaSource<'p>>,
    /// What each node and fn calls, found once: [`Executor::missing`] asks it on every run.
    callees: Callees,
}

/// Where a lazy executor gets a node's schemas (by node index; `None`: it has none).
pub type SchemaSource<'p> = Box<dyn Fn(usize) -> Option<NodeSchemas> + Send + Sync + 'p>;

/// What every model call of one node shares: its provider settings and schemas, and the text
/// `{{ output_schema }}` inserts for its binding's provider.
struct Prepared {
    call: Arc<NodeCall>,
    schema_text: String,
}

impl Prepared {
    fn new(program: &Program, node: &NodeIr, schemas: Option<&NodeSchemas>) -> Prepared {
        let mut call = NodeCall::new(
            node.config
                .timeout_ms
                .map_or(DEFAULT_TIMEOUT, Duration::from_millis),
        );
        call.temperature = node.config.temperature;
        let provider = node
            .config
            .model
            .as_deref()
            .and_then(|b| program.binding(b))
            .map(|b| b.provider);
        let schema_text = match schemas {
            Some(s) => {
                for (name, variant) in &s.variants {
                    call.set_schema(name, variant.clone());
                }
                call.grammar = s.grammar.clone();
                s.prompt_text(provider)
            }
            None => "null".to_owned(),
        };
        Prepared {
            call: Arc::new(call),
            schema_text,
        }
    }
}

impl<'p> Executor<'p> {
    /// `schemas`: the nodes' output schemas by node index ([`Schemas`]); a node without them
    /// has no structured output and `{{ output_schema }}` inserts `null`.
    pub fn new(program: &'p Program, schemas: Schemas) -> Executor<'p> {
        let calls = program
            .nodes
            .iter()
            .enumerate()
            .map(|(i, node)| OnceLock::from(Prepared::new(program, node, schemas.get(i))))
            .collect();
        Executor::with_calls(program, calls, None)
    }

    /// [`Executor::new`] with each node's schemas asked of `source` on the node's first model
    /// call: generated glue derives a node's model-facing variants only when it runs the node
    /// (issue 42: making all 2,400 of an 800-node project took seconds in a debug build).
    pub fn lazy(program: &'p Program, source: SchemaSource<'p>) -> Executor<'p> {
        let calls = program.nodes.iter().map(|_| OnceLock::new()).collect();
        Executor::with_calls(program, calls, Some(source))
    }

    fn with_calls(
        program: &'p Program,
        calls: Vec<OnceLock<Prepared>>,
        source: Option<SchemaSource<'p>>,
    ) -> Executor<'p> {
        Executor {
            program,
            fns: ProgramFns::new(program),
            checks: ProgramChecks::new(program),
            calls,
            source,
            callees: Callees::new(program),
        }
    }

    /// What node `i`'s model calls share, made on first use by a lazy executor.
    fn prepared(&self, i: usize) -> Option<&Prepared> {
        let node = self.program.nodes.get(i)?;
        Some(self.calls.get(i)?.get_or_init(|| {
            let schemas = self.source.as_ref().and_then(|source| source(i));
            Prepared::new(self.program, node, schemas.as_ref())
        }))
    }

    pub fn program(&self) -> &'p Program {
        self.program
    }

    /// The program's pure fns, for callers that evaluate expressions of their own.
    pub fn fns(&self) -> &ProgramFns {
        &self.fns
    }

    /// Decodes `node`'s input document (spec §4) under `max_input_bytes`: one parameter's
    /// value, or an object with one field per parameter. Paths start at the parameter's name.
    pub fn decode_input(
        &self,
        node: &NodeIr,
        bytes: &[u8],
    ) -> Result<Vec<Value>, Vec<DecodeError>> {
        let max = usize::try_from(self.program.limits.max_input_bytes).unwrap_or(usize::MAX);
        let params: Vec<(&str, &crate::ty::Ty)> = node
            .params
            .iter()
            .map(|p| (p.name.as_str(), &p.ty))
            .collect();
        Decoder::new(&self.program.types)
            .with_max_input_bytes(max)
            .decode_input(bytes, &params)
    }

    /// Decodes a document as `node`'s output (paths start at `output`), under the same
    /// `max_answer` bound as step 1.
    pub fn decode_output(&self, node: &NodeIr, bytes: &[u8]) -> Result<Value, Vec<DecodeError>> {
        let max = usize::try_from(node.config.max_answer).unwrap_or(usize::MAX);
        Decoder::new(&self.program.types)
            .with_max_input_bytes(max)
            .decode(bytes, &node.output, OUTPUT_ROOT)
    }

    /// What a run of `node` could reach and `externs` does not provide (see the module doc),
    /// each as a phrase naming it and where it is used; empty when the node can run.
    pub fn missing(&self, node: NodeId, externs: &dyn ExternHost) -> Vec<String> {
        let mut reach = Reach {
            program: self.program,
            callees: &self.callees,
            externs,
            nodes: BTreeSet::new(),
            fns: BTreeSet::new(),
            missing: Vec::new(),
        };
        reach.node(node.0);
        reach.missing
    }

    /// The IR of `node` when a run of it can start with `externs`: the node exists and
    /// nothing it could reach is missing ([`Executor::missing`]).
    pub fn runnable(
        &self,
        node: NodeId,
        externs: &dyn ExternHost,
    ) -> Result<&'p NodeIr, Unrunnable> {
        let ir = self.node_ir(node)?;
        let missing = self.missing(node, externs);
        if !missing.is_empty() {
            return Err(Unrunnable {
                node: ir.name.clone(),
                missing,
            });
        }
        Ok(ir)
    }

    /// The IR of `node`, or why it cannot run: the program has no such node.
    fn node_ir(&self, node: NodeId) -> Result<&'p NodeIr, Unrunnable> {
        self.program.node(node).ok_or_else(|| Unrunnable {
            node: format!("#{}", node.0),
            missing: vec!["a node of that number in the program".to_owned()],
        })
    }

    /// Runs `node` on `input` (the document's bytes).
    /// The gate ([`Executor::admit`]), then the run ([`Executor::run_admitted`]).
    pub fn run(&self, node: NodeId, input: &[u8], env: &mut Env<'_>) -> Result<Run, Unrunnable> {
        match self.admit(node, input, env)? {
            Admission::Refused(run) => Ok(*run),
            Admission::Admitted(admitted) => self.run_admitted(admitted, input, env),
        }
    }

    /// The gate alone (steps 2–3 of the module doc: decode, media expiry, input checks), for a
    /// host that must act between the gate and the run, such as a gateway reserving the
    /// caller's money only for calls that pass. A refused call comes back as a finished
    /// [`Run`] with its receipt; an admitted one runs with [`Executor::run_admitted`].
    pub fn admit(
        &self,
        node: NodeId,
        input: &[u8],
        env: &mut Env<'_>,
    ) -> Result<Admission, Unrunnable> {
        let ir = self.runnable(node, &*env.externs)?;
        let span = trace::gate_span(&ir.name);
        let admission = self.gate(node, ir, input, env);
        match &admission {
            Admission::Refused(run) => trace::finish_gate(
                span,
                Some(trace::GateRefusal {
                    run: run.receipt.ended(),
                    errors: run.input_errors.len(),
                    check: run.input_check.as_ref().map(|c| c.check.as_str()),
                }),
            ),
            Admission::Admitted(_) => trace::finish_gate(span, None),
        }
        Ok(admission)
    }

    /// [`Executor::admit`] once `node` is known to be runnable.
    fn gate(&self, node: NodeId, ir: &NodeIr, input: &[u8], env: &mut Env<'_>) -> Admission {
        let inputs = match self.decode_input(ir, input) {
            Ok(v) => v,
            Err(errors) => {
                return Admission::Refused(Box::new(self.rejected(ir, input, errors, env)))
            }
        };
        let refused = match media_refusal(&inputs, env) {
            Some(why) => Some(Answered::ended(Outcome::rejected_input(), why)),
            None => self.gate_checks(ir, &inputs, env),
        };
        match refused {
            None => Admission::Admitted(Admitted { node, inputs }),
            Some(done) => {
                let mut meter = Meter::new();
                meter.enter(ir.budget.to_pipeline().limits(), env.clock.now_ms());
                Admission::Refused(Box::new(
                    self.finish(ir, input, env, &mut meter, done, true),
                ))
            }
        }
    }

    /// Runs a call [`Executor::admit`] let through, from step 4 on (its input checks are not
    /// run again, nor is what the run could reach: `admit` checked it against the same host's
    /// externs); `input` is the same document, for the receipt's hash.
    pub fn run_admitted(
        &self,
        admitted: Admitted,
        input: &[u8],
        env: &mut Env<'_>,
    ) -> Result<Run, Unrunnable> {
        let Admitted { node, inputs } = admitted;
        let ir = self.node_ir(node)?;
        let mut meter = Meter::new();
        let trail = vec![ir.name.clone()];
        Ok(self.run_decoded(ir, inputs, input, env, &mut meter, 0, &trail, true))
    }

    /// The run of a document the decoder refused: `rejected_input`, nothing ran.
    fn rejected(
        &self,
        ir: &NodeIr,
        input: &[u8],
        errors: Vec<DecodeError>,
        env: &mut Env<'_>,
    ) -> Run {
        let outcome = Outcome::rejected_input();
        let receipt = self.receipt(env, ir, input, &outcome, Vec::new(), true);
        Run {
            outcome,
            receipt,
            input_errors: errors,
            input_check: None,
            refusal: None,
            parts: Vec::new(),
        }
    }

    /// Runs `node` on inputs already decoded (a session's combined observations): as
    /// [`Executor::run`] after the gate. The receipt hashes the inputs' canonical JSON.
    pub fn run_inputs(
        &self,
        node: NodeId,
        inputs: Vec<Value>,
        env: &mut Env<'_>,
    ) -> Result<Run, Unrunnable> {
        let ir = self.runnable(node, &*env.externs)?;
        let input = self.input_json(ir, &inputs);
        let mut meter = Meter::new();
        let trail = vec![ir.name.clone()];
        Ok(self.run_decoded(
            ir,
            inputs,
            input.as_bytes(),
            env,
            &mut meter,
            0,
            &trail,
            false,
        ))
    }

    /// The run of `node` refused before anything ran (a stale observation, a stream that did not
    /// end complete): status `rejected_input` with `code`, nothing called or billed, `why` on
    /// the receipt.
    pub fn refused_run(&self, node: &NodeIr, code: &str, why: String, env: &mut Env<'_>) -> Run {
        let span = self.run_span(node);
        let outcome = Outcome::no_call(Status::RejectedInput, code);
        let mut receipt = self.receipt(env, node, b"", &outcome, Vec::new(), true);
        receipt.refusal = Some(why.clone());
        let run = Run {
            outcome,
            receipt,
            input_errors: Vec::new(),
            input_check: None,
            refusal: Some(why),
            parts: Vec::new(),
        };
        trace::finish_run(span, &run.receipt.ended());
        run
    }

    /// The span of a run of `node` ([`trace::run_span`]).
    fn run_span(&self, node: &NodeIr) -> trace::Scope {
        trace::run_span(
            &self.program.package.name,
            &self.program.package.version,
            &node.name,
        )
    }

    /// Steps 3–6 of the module doc for decoded inputs; `input` is what the receipt hashes.
    /// `admitted`: the gate passed already ([`Executor::admit`]), so input checks are skipped.
    #[allow(clippy::too_many_arguments)]
    fn run_decoded(
        &self,
        node: &NodeIr,
        inputs: Vec<Value>,
        input: &[u8],
        env: &mut Env<'_>,
        meter: &mut Meter,
        expr_depth: usize,
        trail: &[String],
        admitted: bool,
    ) -> Run {
        let span = self.run_span(node);
        meter.enter(node.budget.to_pipeline().limits(), env.clock.now_ms());
        let done = match media_refusal(&inputs, env) {
            Some(why) => Answered::ended(Outcome::rejected_input(), why),
            None => {
                let refused = if admitted {
                    None
                } else {
                    self.gate_checks(node, &inputs, env)
                };
                match refused {
                    Some(done) => done,
                    None => self.answer(node, &inputs, env, meter, expr_depth, trail),
                }
            }
        };
        let run = self.finish(node, input, env, meter, done, trail.len() <= 1);
        trace::finish_run(span, &run.receipt.ended());
        run
    }

    /// Closes a run begun with `meter.enter`: costs, currency, the receipt.
    fn finish(
        &self,
        node: &NodeIr,
        input: &[u8],
        env: &mut Env<'_>,
        meter: &mut Meter,
        mut done: Answered,
        top: bool,
    ) -> Run {
        let used = meter.leave();
        done.outcome.cost = used.spent;
        done.outcome.reserved = used.reserved;
        if done.outcome.currency.is_none() {
            done.outcome.currency = self.currency();
        }
        let mut receipt = self.receipt(env, node, input, &done.outcome, done.children, top);
        receipt.refusal = done.refusal.clone();
        Run {
            outcome: done.outcome,
            receipt,
            input_errors: Vec::new(),
            input_check: done.input_check,
            refusal: done.refusal,
            parts: done.parts,
        }
    }

    /// Step 3: the node's input checks; the ended run when one fails.
    fn gate_checks(&self, node: &NodeIr, inputs: &[Value], env: &mut Env<'_>) -> Option<Answered> {
        let mut host = StageHost::new(self.program, &mut *env.externs, env.clock.now_ms());
        match self.input_checks(node, &mut host, inputs) {
            Ok(None) => None,
            Ok(Some(failure)) => {
                let why = match &failure.message {
                    Some(m) => format!(
                        "input check {} failed: {m} ({})",
                        failure.check, failure.code
                    ),
                    None => format!("input check {} failed ({})", failure.check, failure.code),
                };
                let mut ended =
                    Answered::ended(Outcome::no_call(Status::Failed, &failure.code), why);
                ended.input_check = Some(failure);
                Some(ended)
            }
            Err(e) => Some(Answered::ended(
                Outcome::no_call(Status::Error, ReservedCode::InternalError.as_str()),
                format!("an input check could not be evaluated: {e}"),
            )),
        }
    }

    /// The body or the model call (the gate has passed).
    fn answer(
        &self,
        node: &NodeIr,
        inputs: &[Value],
        env: &mut Env<'_>,
        meter: &mut Meter,
        expr_depth: usize,
        trail: &[String],
    ) -> Answered {
        match &node.body {
            Some(_) => self.body(node, inputs, env, meter, expr_depth, trail),
            None => {
                let called = self.model_call(node, inputs, env, meter);
                Answered {
                    outcome: called.outcome,
                    refusal: called.refusal,
                    parts: called.parts,
                    children: Vec::new(),
                    input_check: None,
                }
            }
        }
    }

    /// Runs the node's input checks in declared order: the first failure, if any.
    fn input_checks(
        &self,
        node: &NodeIr,
        host: &mut StageHost<'_>,
        inputs: &[Value],
    ) -> Result<Option<pipeline::CheckFailure>, EvalError> {
        for id in &node.input.checks {
            let Some(decl) = self.program.checks.get(id.0 as usize) else {
                continue;
            };
            let values: Vec<&Value> = wire(node, &decl.params, false)
                .iter()
                .filter_map(|a| match a {
                    crate::stage::Arg::Input(i) => inputs.get(*i),
                    crate::stage::Arg::Output => None,
                })
                .collect();
            let failed = match self.checks.get(*id) {
                Some(check) => match Evaluator::new(&self.fns, host).run_check(check, &values)? {
                    CheckOutcome::Passed => None,
                    CheckOutcome::Failed { code, message } => Some((code, message)),
                },
                None => host.call_check(id.0, &values)?,
            };
            if let Some((code, message)) = failed {
                return Ok(Some(pipeline::CheckFailure {
                    check: decl.name.clone(),
                    code,
                    message,
                }));
            }
        }
        Ok(None)
    }

    /// A node body, evaluated with delegated calls and the model call answered here.
    fn body(
        &self,
        node: &NodeIr,
        inputs: &[Value],
        env: &mut Env<'_>,
        meter: &mut Meter,
        expr_depth: usize,
        trail: &[String],
    ) -> Answered {
        let Some(def) = node.body_fn() else {
            return Answered::ended(
                Outcome::no_call(Status::Error, ReservedCode::InternalError.as_str()),
                format!("the body of `{}` is missing from the program", node.name),
            );
        };
        let mut host = BodyHost {
            exec: self,
            node,
            env,
            meter,
            trail,
            children: Vec::new(),
            model: None,
            failure: None,
        };
        let refs: Vec<&Value> = inputs.iter().collect();
        let result = Evaluator::new(&self.fns, &mut host)
            .with_depth(expr_depth)
            .run_fn(&def, &refs);
        let BodyHost {
            children,
            model,
            failure,
            env,
            ..
        } = host;
        let (attempts, parts) = match &model {
            Some(m) => (m.outcome.attempts.clone(), m.parts.clone()),
            None => (Vec::new(), Vec::new()),
        };
        let mut answered = match result {
            Ok(value) => self.body_answer(node, inputs, value, model.is_some(), env),
            Err(e) => match failure {
                Some((status, code, why)) => Answered::ended(Outcome::no_call(status, &code), why),
                None => Answered::ended(
                    Outcome::no_call(Status::Error, ReservedCode::InternalError.as_str()),
                    format!("the body of `{}` could not be evaluated: {e}", node.name),
                ),
            },
        };
        answered.outcome.attempts = attempts;
        answered.parts = parts;
        answered.children = children;
        answered
    }

    /// What a body returned, as the node's answer: checked structurally, and when no model
    /// call made it, through the output stage (steps 3–6).
    fn body_answer(
        &self,
        node: &NodeIr,
        inputs: &[Value],
        value: Value,
        from_model: bool,
        env: &mut Env<'_>,
    ) -> Answered {
        let table = &self.program.types;
        let mut validator = Validator::new(table);
        let errors = validator.validate(&value, &node.output, OUTPUT_ROOT);
        let checked = if !errors.is_empty() {
            Err(errors
                .iter()
                .map(|e| e.message.clone())
                .collect::<Vec<_>>()
                .join("; "))
        } else if from_model {
            Ok(value)
        } else {
            let mut host = StageHost::new(self.program, &mut *env.externs, env.clock.now_ms());
            let mut stage = self.output_stage(node, &mut host, inputs);
            match self
                .pipeline(node)
                .accept(&mut validator, value, &mut stage)
            {
                Ok(v) => Ok(v),
                Err(Refusal::Rejected(reasons)) => Err(reasons
                    .iter()
                    .map(|r| r.message.clone())
                    .collect::<Vec<_>>()
                    .join("; ")),
                Err(Refusal::Internal(r)) => {
                    return Answered::ended(
                        Outcome::no_call(Status::Error, ReservedCode::InternalError.as_str()),
                        r.message,
                    )
                }
            }
        };
        match checked {
            Ok(value) => {
                let json = value.to_json_string(&node.output, table);
                Answered {
                    outcome: Outcome {
                        status: Status::Succeeded,
                        code: None,
                        output: Some(value),
                        output_json: Some(json),
                        ..Outcome::no_call(Status::Succeeded, "")
                    },
                    refusal: None,
                    parts: Vec::new(),
                    children: Vec::new(),
                    input_check: None,
                }
            }
            Err(why) => {
                let (status, code) = match fail_code(node) {
                    Some(code) => (Status::Failed, code),
                    None => (Status::InvalidOutput, ReservedCode::InvalidOutput.to_code()),
                };
                Answered::ended(
                    Outcome::no_call(status, &code),
                    format!("the body's answer was rejected: {why}"),
                )
            }
        }
    }

    /// The node's model call on `inputs`: prompt, part kinds, then the seven steps.
    fn model_call(
        &self,
        node: &NodeIr,
        inputs: &[Value],
        env: &mut Env<'_>,
        meter: &mut Meter,
    ) -> ModelCalled {
        let ended = |status: Status, code: &str, why: String| ModelCalled {
            outcome: Outcome::no_call(status, code),
            refusal: Some(why),
            parts: Vec::new(),
        };
        let Some(binding_name) = node.config.model.as_deref() else {
            return ended(
                Status::Error,
                ReservedCode::ModelUnavailable.as_str(),
                format!(
                    "node `{}` has no `model: binding(\"…\")` to call",
                    node.name
                ),
            );
        };
        let binding = self.program.binding(binding_name);
        let Some(prepared) = self.node_index(node).and_then(|i| self.prepared(i)) else {
            return ended(
                Status::Error,
                ReservedCode::InternalError.as_str(),
                format!("`{}` is not a node of this program", node.name),
            );
        };
        let schema_text = prepared.schema_text.as_str();
        let mut host = StageHost::new(self.program, &mut *env.externs, env.clock.now_ms());
        let parts = match self.prompt(node, inputs, schema_text, &mut host) {
            Ok(p) => p,
            Err(e @ prompt::PromptError::TooLarge { .. }) => {
                return ModelCalled {
                    outcome: Outcome::rejected_input(),
                    refusal: Some(e.to_string()),
                    parts: Vec::new(),
                }
            }
            Err(e) => {
                return ended(
                    Status::Error,
                    ReservedCode::InternalError.as_str(),
                    e.to_string(),
                )
            }
        };
        let mut resolved: Vec<Option<String>> = vec![None; parts.len()];
        if env.check_accepts {
            if let Some(b) = binding {
                if let Some(part) = parts.iter().find(|p| !b.accepts.contains(&p.kind())) {
                    return ended(
                        Status::Error,
                        ReservedCode::ModelUnavailable.as_str(),
                        format!(
                            "binding `{}` does not accept `{}` parts, which the input builder produced; nothing was sent",
                            b.name,
                            part.kind()
                        ),
                    );
                }
            }
            // A provider never receives a `holon://` reference (spec §12.1): each media part
            // the binding accepts becomes inline data, read and verified through the store.
            for (i, part) in parts.iter().enumerate() {
                let Some(m) = part.media() else {
                    continue;
                };
                let Some(access) = env.media else {
                    return ended(
                        Status::Error,
                        ReservedCode::ModelUnavailable.as_str(),
                        format!(
                            "the prompt holds the media reference {}, which no file store here resolves into data a provider can read; nothing was sent",
                            m.reference
                        ),
                    );
                };
                let now_ms = env.clock.unix_ms();
                match crate::files::fetch(access.store, m, access.tenant, now_ms) {
                    Ok(bytes) => {
                        resolved[i] = Some(crate::files::data_url(&m.content_type, &bytes))
                    }
                    Err(refusal) => {
                        return ModelCalled {
                            outcome: Outcome::rejected_input(),
                            refusal: Some(format!("{refusal}; nothing was sent")),
                            parts: Vec::new(),
                        }
                    }
                }
            }
        }
        let call = if matches!(parts.as_slice(), [PromptPart::Text(_)]) {
            Arc::clone(&prepared.call)
        } else {
            let mut call = NodeCall::clone(&prepared.call);
            call.parts = Some(
                parts
                    .iter()
                    .zip(resolved)
                    .map(|(p, data)| p.to_provider_part_with(data))
                    .collect(),
            );
            Arc::new(call)
        };
        let mut pipeline = self.pipeline(node);
        pipeline.call = Some(call);
        let prompt_text = prompt_text(&parts);
        let mut stage = self.output_stage(node, &mut host, inputs);
        let outcome = pipeline.run_metered(&prompt_text, env.model, &mut stage, env.clock, meter);
        ModelCalled {
            outcome,
            refusal: None,
            parts,
        }
    }

    /// The parts `node`'s model would receive for `inputs` (decoded), with `output_schema` as
    /// the text of `{{ output_schema }}`: what a run sends, for tools and tests.
    pub fn render_prompt(
        &self,
        node: &NodeIr,
        inputs: &[Value],
        output_schema: &str,
        externs: &mut dyn ExternHost,
    ) -> Result<Vec<PromptPart>, prompt::PromptError> {
        let mut host = StageHost::new(self.program, externs, 0);
        self.prompt(node, inputs, output_schema, &mut host)
    }

    /// The parts the model receives for `inputs`, within `max_prompt`.
    fn prompt(
        &self,
        node: &NodeIr,
        inputs: &[Value],
        output_schema: &str,
        host: &mut StageHost<'_>,
    ) -> Result<Vec<PromptPart>, prompt::PromptError> {
        let limit = node.config.max_prompt.unwrap_or(prompt::MAX_PROMPT_BYTES);
        let mut env = PromptEnv {
            table: &self.program.types,
            fns: &self.fns,
            host,
            output_schema,
            limit,
        };
        let refs: Vec<&Value> = inputs.iter().collect();
        let builder = node
            .input
            .builder
            .and_then(|b| self.program.builders.get(b.0 as usize));
        let parts = match (builder, &node.template) {
            (Some(b), template) => prompt::build(&b.parts, template.as_ref(), &refs, &mut env)?,
            (None, Some(template)) => {
                vec![PromptPart::Text(prompt::render(template, &refs, &mut env)?)]
            }
            // No prompt and no builder: the model receives the input document itself.
            (None, None) => vec![PromptPart::Text(self.input_json(node, inputs))],
        };
        if prompt::measure(&parts) > limit {
            return Err(prompt::PromptError::TooLarge { limit });
        }
        Ok(parts)
    }

    /// The inputs as one JSON document, as a caller sends them: one parameter's value, or an
    /// object with one field per parameter.
    pub fn input_json(&self, node: &NodeIr, inputs: &[Value]) -> String {
        let table = &self.program.types;
        match node.params.as_slice() {
            [one] => inputs
                .first()
                .map(|v| v.to_json_string(&one.ty, table))
                .unwrap_or_default(),
            params => {
                let fields: Vec<String> = params
                    .iter()
                    .zip(inputs)
                    .map(|(p, v)| {
                        format!(
                            "{}:{}",
                            serde_json::Value::String(p.name.clone()),
                            v.to_json_string(&p.ty, table)
                        )
                    })
                    .collect();
                format!("{{{}}}", fields.join(","))
            }
        }
    }

    /// The node's output pipeline: its binding, `max_answer`, policies, budget and the
    /// bindings' prices.
    pub fn pipeline(&self, node: &'p NodeIr) -> Pipeline<'p> {
        let program = self.program;
        let binding = node.config.model.as_deref().unwrap_or("(no binding)");
        let mut p = Pipeline::new(
            &program.types,
            &node.output,
            binding,
            node.config.max_answer,
        );
        p.policies = node.output_stage.on_failure.clone();
        p.budget = node.budget.to_pipeline();
        p.prices = program
            .bindings
            .iter()
            .filter_map(|b| Some((b.name.clone(), b.price.clone()?)))
            .collect();
        p.node = node.name.clone();
        p
    }

    /// The node's output stage over `inputs` (steps 4 and 5, and raw mode's parser): checks in
    /// order, wired to the output and the inputs, and the transform; externs go to `host`.
    pub fn output_stage<'s>(
        &'s self,
        node: &'s NodeIr,
        host: &'s mut dyn Host,
        inputs: &'s [Value],
    ) -> IrStage<'s> {
        let program = self.program;
        let checks = node
            .output_stage
            .checks
            .iter()
            .filter_map(|id| {
                let decl = program.checks.get(id.0 as usize)?;
                let args = wire(node, &decl.params, true);
                Some(match self.checks.get(*id) {
                    Some(check) => StageCheck::Ir { check, args },
                    None => StageCheck::Host {
                        id: id.0,
                        name: decl.name.clone(),
                        args,
                    },
                })
            })
            .collect();
        let mut stage = IrStage::new(&self.fns, host, inputs, checks);
        if let Some(f) = node.output_stage.transform {
            let id = f;
            if let Some(decl) = program.fns.get(f.0 as usize) {
                let args = wire(node, &decl.params, true);
                match self.fns.pure_fn(id) {
                    Some(def) => stage.transform = Some((def, args)),
                    None => stage.extern_transform = Some((id, args)),
                }
            }
        }
        stage.raw_parse = node.output_stage.raw_parse;
        stage
    }

    fn node_index(&self, node: &NodeIr) -> Option<usize> {
        self.program.node_id(node).map(|id| id.0 as usize)
    }

    /// The currency of the program's prices (the first priced binding's).
    fn currency(&self) -> Option<String> {
        self.program
            .bindings
            .iter()
            .find_map(|b| b.price.as_ref())
            .map(|p| p.currency.clone())
    }

    fn receipt(
        &self,
        env: &mut Env<'_>,
        node: &NodeIr,
        input: &[u8],
        outcome: &Outcome,
        children: Vec<Receipt>,
        top: bool,
    ) -> Receipt {
        // The run a host asked for may have its id chosen by the host (a gateway's run id).
        let id = if top {
            env.ids.run_receipt_id()
        } else {
            env.ids.receipt_id()
        };
        Receipt::new(
            id,
            &self.program.package.name,
            &self.program.package.version,
            &node.name,
            input,
            outcome,
            children,
        )
    }
}

/// The prompt as one text (what a text-only model and a replay see): the text and system
/// parts in order, separated by blank lines.
pub fn prompt_text(parts: &[PromptPart]) -> String {
    parts
        .iter()
        .filter_map(|p| match p {
            PromptPart::System(t) | PromptPart::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Why a run may not use its inputs: a media reference among them that has expired, or, with a
/// file store, that the run's tenant may not use (see [`crate::files::check_use`]). Nothing is
/// read.
fn media_refusal(inputs: &[Value], env: &mut Env<'_>) -> Option<String> {
    let refs = media_refs(inputs);
    if refs.is_empty() {
        return None;
    }
    let now_ms = env.clock.unix_ms();
    for m in refs {
        let refused = match env.media {
            Some(access) => crate::files::check_use(access.store, m, access.tenant, now_ms).err(),
            None => m
                .expires_at
                .as_deref()
                .filter(|at| crate::files::has_expired(at, now_ms))
                .map(|at| crate::files::MediaRefusal {
                    reference: m.reference.clone(),
                    field: "expires_at",
                    message: format!("expired at {at}"),
                }),
        };
        if let Some(refusal) = refused {
            return Some(format!("{refusal}; nothing was read or called"));
        }
    }
    None
}

/// Every media reference among `inputs`, walked without recursion.
fn media_refs(inputs: &[Value]) -> Vec<&crate::value::MediaRef> {
    let mut out = Vec::new();
    let mut stack: Vec<&Value> = inputs.iter().collect();
    while let Some(v) = stack.pop() {
        match v {
            Value::Media(m) => out.push(&**m),
            Value::List(items) | Value::Struct(items) => stack.extend(items),
            Value::Enum { fields, .. } => stack.extend(fields),
            Value::Map(entries) => stack.extend(entries.iter().map(|(_, v)| v)),
            _ => {}
        }
    }
    out
}

/// The node's final `fail(code)` policy, if any.
fn fail_code(node: &NodeIr) -> Option<String> {
    node.output_stage.on_failure.iter().find_map(|p| match p {
        pipeline::Policy::Fail { code } => Some(code.clone()),
        _ => None,
    })
}

/// A node's answer before its receipt.
struct Answered {
    outcome: Outcome,
    refusal: Option<String>,
    parts: Vec<PromptPart>,
    children: Vec<Receipt>,
    input_check: Option<pipeline::CheckFailure>,
}

impl Answered {
    fn ended(outcome: Outcome, why: String) -> Answered {
        Answered {
            outcome,
            refusal: Some(why),
            parts: Vec::new(),
            children: Vec::new(),
            input_check: None,
        }
    }
}

/// What a model call gave.
struct ModelCalled {
    outcome: Outcome,
    refusal: Option<String>,
    parts: Vec<PromptPart>,
}

/// Answers the externs of checks, transforms, parsers and prompts from the host. They run
/// inside a model call (or before one), so they get a model that refuses and a clock stopped
/// at the time the stage began.
struct StageHost<'a> {
    program: &'a Program,
    externs: &'a mut dyn ExternHost,
    now_ms: u64,
}

impl<'a> StageHost<'a> {
    fn new(program: &'a Program, externs: &'a mut dyn ExternHost, now_ms: u64) -> StageHost<'a> {
        StageHost {
            program,
            externs,
            now_ms,
        }
    }
}

/// The model a check, transform or parser sees: it cannot call one.
struct NoModel;

impl Model for NoModel {
    fn call(
        &mut self,
        _request: &crate::model::ModelRequest,
    ) -> Result<crate::model::ModelAnswer, crate::model::ModelError> {
        Err(crate::model::ModelError::Unavailable(
            "checks, transforms, parsers and prompts cannot call the model".to_owned(),
        ))
    }
}

/// A clock that stays at one time.
struct Stopped(u64);

impl Clock for Stopped {
    fn now_ms(&mut self) -> u64 {
        self.0
    }
}

impl Host for StageHost<'_> {
    fn call_extern(&mut self, func: FnId, args: Vec<Value>) -> Result<Value, EvalError> {
        let cx = CallContext {
            model: &mut NoModel,
            clock: &mut Stopped(self.now_ms),
        };
        self.externs.call_fn(cx, self.program, func, &args)
    }

    fn call_check(&mut self, check: u32, args: &[&Value]) -> Result<CheckVerdict, EvalError> {
        let cx = CallContext {
            model: &mut NoModel,
            clock: &mut Stopped(self.now_ms),
        };
        self.externs.call_check(cx, self.program, check, args)
    }
}

pub(crate) fn unknown(what: String) -> EvalError {
    EvalError::new(
        EvalErrorKind::Extern,
        format!("{what} has no implementation here"),
    )
}

/// Answers a node body's calls: registered externs, the node's model call, delegated calls.
struct BodyHost<'x, 'e, 'p> {
    exec: &'x Executor<'p>,
    node: &'x NodeIr,
    env: &'x mut Env<'e>,
    meter: &'x mut Meter,
    trail: &'x [String],
    children: Vec<Receipt>,
    /// The node's model call, when the body made one (the last, if several).
    model: Option<ModelCalled>,
    /// How the body ended when a call it made did not succeed: status, code, why.
    failure: Option<(Status, String, String)>,
}

impl Host for BodyHost<'_, '_, '_> {
    fn call_extern(&mut self, func: FnId, args: Vec<Value>) -> Result<Value, EvalError> {
        let program = self.exec.program;
        let registered = self.env.externs.has_fn(program, func);
        let is_model = self.node.model_call.map(|m| m.0) == Some(func.0);
        if registered || !is_model {
            let env = &mut *self.env;
            let cx = CallContext {
                model: &mut *env.model,
                clock: &mut *env.clock,
            };
            return env.externs.call_fn(cx, program, func, &args);
        }
        let mut called = self.exec.model_call(self.node, &args, self.env, self.meter);
        let outcome = &mut called.outcome;
        let result = match (outcome.status, outcome.output.take()) {
            (Status::Succeeded, Some(value)) => Ok(value),
            (status, _) => {
                let code = outcome.code.clone().unwrap_or_default();
                let why = called.refusal.clone().unwrap_or_else(|| {
                    format!("the model call of `{}` ended {code}", self.node.name)
                });
                self.failure = Some((status, code, why.clone()));
                Err(EvalError::new(EvalErrorKind::Delegated, why))
            }
        };
        if let (Some(previous), true) = (&self.model, result.is_ok()) {
            // Several model calls in one body: every attempt is the node's.
            let mut attempts = previous.outcome.attempts.clone();
            attempts.append(&mut called.outcome.attempts);
            called.outcome.attempts = attempts;
        }
        self.model = Some(called);
        result
    }

    fn call_check(&mut self, check: u32, args: &[&Value]) -> Result<CheckVerdict, EvalError> {
        let env = &mut *self.env;
        let cx = CallContext {
            model: &mut *env.model,
            clock: &mut *env.clock,
        };
        env.externs.call_check(cx, self.exec.program, check, args)
    }

    fn call_node(&mut self, node: u32, args: Vec<Value>, depth: usize) -> Result<Value, EvalError> {
        let exec = self.exec;
        let Some(callee) = exec.program.node(NodeId(node)) else {
            return Err(unknown(format!("node #{node}")));
        };
        let mut trail = self.trail.to_vec();
        trail.push(callee.name.clone());
        if trail.len() > MAX_DELEGATION_DEPTH {
            let why = format!(
                "delegated calls nest deeper than {MAX_DELEGATION_DEPTH}: {}",
                trail.join(" → ")
            );
            self.failure = Some((
                Status::Error,
                ReservedCode::InternalError.to_code(),
                why.clone(),
            ));
            return Err(EvalError::new(EvalErrorKind::TooDeep, why));
        }
        let input = exec.input_json(callee, &args);
        let run = exec.run_decoded(
            callee,
            args,
            input.as_bytes(),
            self.env,
            self.meter,
            depth,
            &trail,
            false,
        );
        let Run {
            mut outcome,
            receipt,
            refusal,
            ..
        } = run;
        self.children.push(receipt);
        if let (Status::Succeeded, Some(value)) = (outcome.status, outcome.output.take()) {
            return Ok(value);
        }
        let child_code = outcome.code.clone().unwrap_or_default();
        let why = format!(
            "the delegated call of `{}` ended {} ({child_code}){}",
            callee.name,
            outcome.status.as_str(),
            refusal.map(|r| format!(": {r}")).unwrap_or_default()
        );
        let (status, code) = match outcome.status {
            Status::Error => (Status::Error, child_code),
            _ if declares(exec.program, self.node, &child_code) => (Status::Failed, child_code),
            _ => match fail_code(self.node) {
                Some(code) => (Status::Failed, code),
                None => (Status::InvalidOutput, ReservedCode::InvalidOutput.to_code()),
            },
        };
        self.failure = Some((status, code, why.clone()));
        Err(EvalError::new(EvalErrorKind::Delegated, why))
    }
}

/// Whether `node` declares the failure code `code` (`fails E` with `code` in `E`).
fn declares(program: &Program, node: &NodeIr, code: &str) -> bool {
    node.fails
        .and_then(|e| program.errors.get(e.0 as usize))
        .is_some_and(|set| set.codes.iter().any(|c| c.name == code))
}

/// The walk of [`Executor::missing`]: every node, fn and check a run could reach.
struct Reach<'a> {
    program: &'a Program,
    callees: &'a Callees,
    externs: &'a dyn ExternHost,
    nodes: BTreeSet<u32>,
    fns: BTreeSet<u32>,
    missing: Vec<String>,
}

impl Reach<'_> {
    fn node(&mut self, id: u32) {
        if !self.nodes.insert(id) {
            return;
        }
        let program = self.program;
        let Some(node) = program.nodes.get(id as usize) else {
            self.missing
                .push(format!("node #{id}, which the program lacks"));
            return;
        };
        let model_call = node.model_call.map(|f| f.0);
        let answers_with_model = node.body.is_none() || model_call.is_some();
        if answers_with_model && node.config.model.is_none() {
            self.missing
                .push(format!("a `model: binding(…)` for `{}`", node.name));
        }
        for check in node.input.checks.iter().chain(&node.output_stage.checks) {
            let Some(decl) = program.checks.get(check.0 as usize) else {
                continue;
            };
            if decl.is_extern && !self.externs.has_check(program, check.0) {
                self.missing.push(format!(
                    "extern check `{}` (a check of `{}`)",
                    decl.name, node.name
                ));
            }
        }
        if let Some(f) = node.output_stage.raw_parse {
            self.extern_fn(f.0, Place::Parser(&node.name));
        }
        let callees = self.callees;
        let calls = callees
            .nodes
            .get(id as usize)
            .map_or(&[][..], Vec::as_slice);
        for call in calls {
            match *call {
                Callee::Node(n) => self.node(n),
                Callee::Extern(f) if Some(f.0) == model_call => {}
                Callee::Extern(f) | Callee::Fn(f) => self.fn_(f.0, Place::Node(&node.name)),
            }
        }
    }

    fn fn_(&mut self, id: u32, place: Place<'_>) {
        let Some(decl) = self.program.fns.get(id as usize) else {
            self.missing
                .push(format!("fn #{id}, which the program lacks"));
            return;
        };
        if decl.is_extern {
            self.extern_fn(id, place);
            return;
        }
        if !self.fns.insert(id) {
            return;
        }
        let callees = self.callees;
        let calls = callees.fns.get(id as usize).map_or(&[][..], Vec::as_slice);
        for call in calls {
            match *call {
                Callee::Node(n) => self.node(n),
                Callee::Extern(f) | Callee::Fn(f) => self.fn_(f.0, Place::Fn(&decl.name)),
            }
        }
    }

    fn extern_fn(&mut self, id: u32, place: Place<'_>) {
        let Some(decl) = self.program.fns.get(id as usize) else {
            self.missing
                .push(format!("fn #{id}, which the program lacks"));
            return;
        };
        if self.externs.has_fn(self.program, FnId(id)) {
            return;
        }
        let place = match place {
            Place::Node(name) => format!("called by `{name}`"),
            Place::Fn(name) => format!("called by fn `{name}`"),
            Place::Parser(name) => format!("the raw parser of `{name}`"),
        };
        let phrase = format!("extern fn `{}` ({place})", decl.name);
        if !self.missing.contains(&phrase) {
            self.missing.push(phrase);
        }
    }
}

/// Where an extern is reached from, for the phrase that names a missing one.
#[derive(Clone, Copy)]
enum Place<'a> {
    Node(&'a str),
    Fn(&'a str),
    Parser(&'a str),
}

/// What each node and fn of a program calls, in the order [`Reach`] walks them: a node's body,
/// the `requires` of its checks that are not extern, its transform, its template and its input
/// builder; a fn's body. It depends only on the program, so the executor finds it once rather
/// than on every run (it was a walk of every expression a request could reach).
struct Callees {
    nodes: Vec<Vec<Callee>>,
    fns: Vec<Vec<Callee>>,
}

impl Callees {
    fn new(program: &Program) -> Callees {
        let nodes = program
            .nodes
            .iter()
            .map(|node| {
                let mut calls = Vec::new();
                if let Some(body) = &node.body {
                    body.expr.callees(&mut calls);
                }
                for check in node.input.checks.iter().chain(&node.output_stage.checks) {
                    match program.checks.get(check.0 as usize) {
                        Some(decl) if !decl.is_extern => {
                            for r in &decl.requires {
                                r.cond.callees(&mut calls);
                            }
                        }
                        _ => {}
                    }
                }
                if let Some(f) = node.output_stage.transform {
                    calls.push(Callee::Fn(f));
                }
                if let Some(template) = &node.template {
                    template_callees(&template.body, &mut calls);
                }
                if let Some(b) = node
                    .input
                    .builder
                    .and_then(|b| program.builders.get(b.0 as usize))
                {
                    for part in &b.parts {
                        match &part.source {
                            prompt::PartSource::Expr { expr } => expr.callees(&mut calls),
                            prompt::PartSource::Render { args } => {
                                args.iter().for_each(|a| a.callees(&mut calls))
                            }
                        }
                    }
                }
                calls
            })
            .collect();
        let fns = program
            .fns
            .iter()
            .map(|f| {
                let mut calls = Vec::new();
                if let Some(body) = &f.body {
                    body.callees(&mut calls);
                }
                calls
            })
            .collect();
        Callees { nodes, fns }
    }
}

/// The calls in a template's expressions, without recursion.
fn template_callees(body: &[prompt::Segment], calls: &mut Vec<Callee>) {
    let mut stack: Vec<&prompt::Segment> = body.iter().collect();
    while let Some(segment) = stack.pop() {
        match segment {
            prompt::Segment::Text { .. } => {}
            prompt::Segment::Value { expr, .. } => expr.callees(calls),
            prompt::Segment::If {
                cond,
                then,
                otherwise,
            } => {
                cond.callees(calls);
                stack.extend(then.iter().chain(otherwise));
            }
            prompt::Segment::For { list, body, .. } => {
                list.callees(calls);
                stack.extend(body);
            }
        }
    }
}
