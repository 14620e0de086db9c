//! Runs one node of a checked [`Program`] on one input document: the run-time half of the
//! compiler, shared by `aelc run` (and meant for `aelc test` and generated hosts).
//!
//! In order (spec §4, §6, §6.1, §10):
//! 1. **Decode** the input document against the node's parameters (one parameter: the document
//!    is its value; several: an object with one field per parameter). Errors end the run as
//!    `rejected_input` (code `invalid_input`): nothing ran, nothing billed.
//! 2. **Input checks** in declared order; the first failure ends the run as `failed` with the
//!    check's declared code (as the examples of spec §6 expect), nothing billed.
//! 3. **Prompt**: the input builder's parts, or the rendered template as one text part, measured
//!    against `max_prompt` before any call (over it: `rejected_input`). A part kind the node's
//!    binding does not `accept` is an `error` (`model_unavailable`) before any call.
//! 4. **Calls and the seven steps** through [`aelc_runtime::pipeline::Pipeline`], with the
//!    node's policies, budget and the bindings' prices, on whatever [`Model`] the caller gives
//!    ([`ModelRouter`] serves real bindings and replay files).
//! 5. **Receipt** (spec §10).
//!
//! Nodes whose answer needs Rust code (`extern fn`s in a body, a raw parser) cannot run here;
//! [`RunError::NeedsHost`] says so before anything runs.

use std::collections::BTreeMap;
use std::time::Duration;

use aelc_runtime::error::DecodeError;
use aelc_runtime::eval::{EvalError, NoHost};
use aelc_runtime::model::{Model, ModelAnswer, ModelError, ModelRequest, ReplayModel};
use aelc_runtime::pipeline::{CheckFailure, Clock, Outcome, Status};
use aelc_runtime::prompt::{self, PromptEnv, PromptPart};
use aelc_runtime::provider::{NodeCall, OutputSchema, Part, PartKind, ProviderModel};
use aelc_runtime::receipt::Receipt;
use aelc_runtime::value::Value;
use serde_json::Value as Json;

use super::node::NodeParts;
use crate::codegen::json_schema::{DefKeys, SchemaBuilder};
use crate::codegen::model_schema::{model_schema, wraps_root, Provider};
use crate::ir::{Binding, NodeIr, Program};

/// The timeout of a call when the node sets none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a node cannot run here at all (a usage error, exit 2): nothing was decoded or called.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// The node's answer is computed by Rust code `aelc run` does not have.
    NeedsHost { node: String, why: String },
    /// The node names no `model: binding(…)`.
    NoBinding { node: String },
    /// A binding cannot be served (unknown provider, replay binding without a replay file, …).
    Binding { binding: String, why: String },
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::NeedsHost { node, why } => write!(
                f,
                "node `{node}` {why}; it runs from Rust (aelc::build glue), not from `aelc run`"
            ),
            RunError::NoBinding { node } => {
                write!(f, "node `{node}` has no `model: binding(\"…\")` to call")
            }
            RunError::Binding { binding, why } => write!(f, "binding `{binding}`: {why}"),
        }
    }
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct RunReport {
    pub outcome: Outcome,
    pub receipt: Receipt,
    /// The decoder's errors when the input was refused (spec §4 sentences), else empty.
    pub input_errors: Vec<DecodeError>,
    /// Why the run ended before any call, when it did (input check, `max_prompt`, a part kind).
    pub refusal: Option<String>,
    /// The parts the model received (empty when no call was made).
    pub parts: Vec<PromptPart>,
}

/// Whether `aelc run` can run `node` (see [`RunError::NeedsHost`]).
pub fn runnable(program: &Program, node: &NodeIr) -> Result<(), RunError> {
    let needs = |why: &str| {
        Err(RunError::NeedsHost {
            node: node.name.clone(),
            why: why.to_owned(),
        })
    };
    if node.has_body {
        return needs("computes its answer in a body");
    }
    if node.output_stage.raw_parse.is_some() {
        return needs("parses its raw answer with an extern fn");
    }
    if let Some(f) = node.output_stage.transform {
        if program.fns.get(f.0 as usize).is_some_and(|f| f.is_extern) {
            return needs("transforms its output with an extern fn");
        }
    }
    if node.config.model.is_none() {
        return Err(RunError::NoBinding {
            node: node.name.clone(),
        });
    }
    Ok(())
}

/// The node's output schema (draft 2020-12) and its model-facing variant for `provider`
/// (`openai`, `anthropic`), as codegen emits them.
pub fn output_schemas(program: &Program, node: &NodeIr) -> (Json, BTreeMap<String, OutputSchema>) {
    let keys = DefKeys::new(&program.types);
    let document = SchemaBuilder::new(&program.types, &keys).output_document(node);
    let mut schemas = BTreeMap::new();
    // The model-facing variants, as codegen emits them: an output that is not an object is
    // wrapped there as `{"value": …}` (both providers want an object), and the provider
    // unwraps the answer.
    let wrapped = wraps_root(&document);
    let openai = model_schema(Provider::OpenAi, &node.name, &document);
    if let Some(schema) = openai.get("schema") {
        schemas.insert(
            "openai".to_owned(),
            OutputSchema {
                name: node.name.clone(),
                schema: schema.clone(),
                strict: openai
                    .get("strict")
                    .and_then(Json::as_bool)
                    .unwrap_or(false),
                wrapped,
            },
        );
    }
    schemas.insert(
        "anthropic".to_owned(),
        OutputSchema {
            name: node.name.clone(),
            schema: model_schema(Provider::Anthropic, &node.name, &document),
            strict: true,
            wrapped,
        },
    );
    (document, schemas)
}

/// The text `{{ output_schema }}` inserts: the model-facing schema of the node's binding's
/// provider, or the JSON Schema for replay bindings, pretty-printed.
pub fn output_schema_text(
    program: &Program,
    node: &NodeIr,
    document: &Json,
    schemas: &BTreeMap<String, OutputSchema>,
) -> String {
    let provider = node
        .config
        .model
        .as_deref()
        .and_then(|b| program.bindings.iter().find(|x| x.name == b))
        .map(|b| b.provider.as_str());
    let chosen = provider
        .and_then(|p| schemas.get(p))
        .map(|s| &s.schema)
        .unwrap_or(document);
    serde_json::to_string_pretty(chosen).unwrap_or_default()
}

/// A run in progress: the program, the node and what the steps share.
pub struct NodeRun<'p> {
    /// The node and its runtime pieces (shared with `aelc validate`/`aelc test`).
    pub parts: NodeParts<'p>,
}

/// The decoded inputs and the prompt, ready for the calls.
pub struct Prepared {
    pub inputs: Vec<Value>,
    pub parts: Vec<PromptPart>,
}

impl<'p> NodeRun<'p> {
    pub fn new(program: &'p Program, node: &'p NodeIr) -> NodeRun<'p> {
        NodeRun {
            parts: NodeParts::new(program, node),
        }
    }

    /// Step 1 of the run: the input document decoded against the node's parameters.
    pub fn decode_input(&self, input: &[u8]) -> Result<Vec<Value>, Vec<DecodeError>> {
        self.parts.decode_input(input)
    }

    /// Step 2: the input checks in order; the first failure.
    pub fn input_checks(&self, inputs: &[Value]) -> Result<Option<CheckFailure>, EvalError> {
        let mut host = NoHost;
        self.parts.input_checks(&mut host, inputs)
    }

    /// Step 3: the parts the model receives, within `max_prompt`.
    pub fn prompt(
        &self,
        inputs: &[Value],
        output_schema: &str,
    ) -> Result<Vec<PromptPart>, prompt::PromptError> {
        let limit = self
            .parts
            .node
            .config
            .max_prompt
            .unwrap_or(prompt::MAX_PROMPT_BYTES);
        let mut host = NoHost;
        let mut env = PromptEnv {
            table: &self.parts.program.types,
            fns: &self.parts.fns,
            host: &mut host,
            output_schema,
            limit,
        };
        let refs: Vec<&Value> = inputs.iter().collect();
        let builder = self
            .parts
            .node
            .input
            .builder
            .and_then(|b| self.parts.program.builders.get(b.0 as usize));
        let parts = match (builder, &self.parts.node.template) {
            (Some(b), template) => prompt::build(&b.parts, template.as_ref(), &refs, &mut env)?,
            (None, Some(template)) => {
                vec![PromptPart::Text(prompt::render(template, &refs, &mut env)?)]
            }
            // No prompt and no builder: the model receives the input document itself.
            (None, None) => {
                let text = match self.parts.node.params.as_slice() {
                    [one] => inputs
                        .first()
                        .map(|v| v.to_json_string(&one.ty, &self.parts.program.types))
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                vec![PromptPart::Text(text)]
            }
        };
        if prompt::measure(&parts) > limit {
            return Err(prompt::PromptError::TooLarge { limit });
        }
        Ok(parts)
    }

    /// Step 4: the calls and the seven steps, with the output checks and transform.
    pub fn execute(
        &self,
        inputs: &[Value],
        parts: &[PromptPart],
        model: &mut dyn Model,
        clock: &mut dyn Clock,
    ) -> Outcome {
        let pipeline = self.parts.pipeline();
        let mut host = NoHost;
        let mut stage = self.parts.output_stage(&mut host, inputs);
        let prompt_text = prompt_text(parts);
        pipeline.run(&prompt_text, model, &mut stage, clock)
    }

    /// The receipt of `outcome` for `input`.
    pub fn receipt(&self, input: &[u8], outcome: &Outcome) -> Receipt {
        Receipt::new(
            &self.parts.program.package.name,
            &self.parts.program.package.version,
            &self.parts.node.name,
            input,
            outcome,
            Vec::new(),
        )
    }

    /// Steps 1–5 on `input`. `accepts`: the part kinds the node's binding takes (`None`: do
    /// not check, as for replayed answers).
    pub fn run(
        &self,
        input: &[u8],
        accepts: Option<&[PartKind]>,
        output_schema: &str,
        model: &mut dyn NodeModel,
        clock: &mut dyn Clock,
    ) -> RunReport {
        let end = |outcome: Outcome, refusal: Option<String>, errors: Vec<DecodeError>| {
            let receipt = self.receipt(input, &outcome);
            RunReport {
                outcome,
                receipt,
                input_errors: errors,
                refusal,
                parts: Vec::new(),
            }
        };
        let inputs = match self.decode_input(input) {
            Ok(v) => v,
            Err(errors) => return end(Outcome::rejected_input(), None, errors),
        };
        match self.input_checks(&inputs) {
            Ok(None) => {}
            Ok(Some(failure)) => {
                let (check, code) = (&failure.check, &failure.code);
                let why = match &failure.message {
                    Some(m) => format!("input check {check} failed: {m} ({code})"),
                    None => format!("input check {check} failed ({code})"),
                };
                return end(no_call(Status::Failed, code), Some(why), Vec::new());
            }
            Err(e) => {
                let why = format!("an input check could not be evaluated: {e}");
                return end(
                    no_call(Status::Error, "internal_error"),
                    Some(why),
                    Vec::new(),
                );
            }
        }
        let parts = match self.prompt(&inputs, output_schema) {
            Ok(p) => p,
            Err(e @ prompt::PromptError::TooLarge { .. }) => {
                return end(Outcome::rejected_input(), Some(e.to_string()), Vec::new())
            }
            Err(e) => {
                return end(
                    no_call(Status::Error, "internal_error"),
                    Some(e.to_string()),
                    Vec::new(),
                )
            }
        };
        if let Some(accepts) = accepts {
            if let Some(part) = parts.iter().find(|p| !accepts.contains(&p.kind())) {
                let binding = self.parts.node.config.model.as_deref().unwrap_or("?");
                let why = format!(
                    "binding `{binding}` does not accept `{}` parts, which the input builder produced; nothing was sent",
                    part.kind()
                );
                return end(
                    no_call(Status::Error, "model_unavailable"),
                    Some(why),
                    Vec::new(),
                );
            }
        }
        model.prepare(&parts);
        let outcome = self.execute(&inputs, &parts, model.as_model(), clock);
        let mut report = end(outcome, None, Vec::new());
        report.parts = parts;
        report
    }
}

/// An outcome that made no call (nothing billed).
fn no_call(status: Status, code: &str) -> Outcome {
    Outcome {
        status,
        code: Some(code.to_owned()),
        ..Outcome::rejected_input()
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

/// A [`Model`] that is told the prompt's parts before the first call (a builder's system and
/// media parts travel beside the pipeline's text prompt).
pub trait NodeModel {
    fn prepare(&mut self, parts: &[PromptPart]);
    fn as_model(&mut self) -> &mut dyn Model;
}

/// A replay answers from its file; the parts only matter to live providers.
impl NodeModel for ReplayModel {
    fn prepare(&mut self, _parts: &[PromptPart]) {}
    fn as_model(&mut self) -> &mut dyn Model {
        self
    }
}

impl NodeModel for ModelRouter {
    fn prepare(&mut self, parts: &[PromptPart]) {
        self.set_parts(parts);
    }
    fn as_model(&mut self) -> &mut dyn Model {
        self
    }
}

/// Serves each call from the binding it names: HTTP providers, or a replay file for bindings
/// with `provider = "replay"` (and for every binding when a replay file is given on the
/// command line).
pub struct ModelRouter {
    live: ProviderModel,
    replay: Option<ReplayModel>,
    replay_all: bool,
    /// Bindings served by a replay file.
    replayed: Vec<String>,
}

impl ModelRouter {
    /// `replay`: the `--replay` answers, which then serve every call.
    pub fn new(node: NodeCall, replay: Option<ReplayModel>) -> ModelRouter {
        ModelRouter {
            live: ProviderModel::new(node),
            replay_all: replay.is_some(),
            replay,
            replayed: Vec::new(),
        }
    }

    /// Serves the bindings the node may call (its own and its fallbacks'), each by its
    /// provider. A replay binding without a replay file answers every call with an error
    /// that says so.
    pub fn with_bindings(mut self, bindings: &[Binding]) -> Result<ModelRouter, RunError> {
        if self.replay_all {
            return Ok(self);
        }
        for b in bindings {
            if b.provider == "replay" {
                self.replayed.push(b.name.clone());
                continue;
            }
            let mut config = aelc_runtime::provider::ProviderConfig::from_binding(
                &b.provider,
                &b.model,
                b.base_url.as_deref(),
                b.api_key_env.as_deref(),
                &b.accepts,
            )
            .map_err(|e| RunError::Binding {
                binding: b.name.clone(),
                why: e.to_string(),
            })?;
            // Structured output is what the node's schema asks for; streaming lets `max_answer`
            // stop a runaway answer as it arrives.
            config.structured_output = true;
            config.stream = true;
            // `constrain` in ael.toml (the loader accepted only the known words).
            if let Some(c) = b
                .constrain
                .as_deref()
                .and_then(aelc_runtime::provider::Constrain::parse)
            {
                config.constrain = c;
            }
            let provider =
                aelc_runtime::provider::connect(config).map_err(|e| RunError::Binding {
                    binding: b.name.clone(),
                    why: e.to_string(),
                })?;
            self.live = self.live.with_binding(b.name.clone(), provider);
        }
        Ok(self)
    }

    /// The parts the builder produced, sent with every live call.
    pub fn set_parts(&mut self, parts: &[PromptPart]) {
        let text_only = matches!(parts, [PromptPart::Text(_)]);
        let node = self.live.node_mut();
        node.parts = (!text_only).then(|| parts.iter().map(PromptPart::to_provider_part).collect());
    }

    /// The replay answers' requests, for tests.
    pub fn replay(&self) -> Option<&ReplayModel> {
        self.replay.as_ref()
    }
}

impl Model for ModelRouter {
    fn call(&mut self, request: &ModelRequest) -> Result<ModelAnswer, ModelError> {
        if self.replay_all || self.replayed.contains(&request.binding) {
            return match &mut self.replay {
                Some(replay) => replay.call(request),
                None => Err(ModelError::Unavailable(format!(
                    "binding `{}` replays recorded answers; pass them with --replay FILE",
                    request.binding
                ))),
            };
        }
        self.live.call(request)
    }
}

/// The parts as the provider layer takes them.
pub fn provider_parts(parts: &[PromptPart]) -> Vec<Part> {
    parts.iter().map(PromptPart::to_provider_part).collect()
}
