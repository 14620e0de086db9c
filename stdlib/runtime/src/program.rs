//! The typed IR: a checked program as plain data, what every backend and the executor consume.
//!
//! The compiler's sema produces a [`Program`] only from source that checked without errors
//! (the compiler re-exports this module as its `ir`). Every type in it is a bounded [`Ty`];
//! names are resolved to ids. Codegen reads this and never re-parses. The program is written as `ir.json` (its JSON
//! Schema comes from schemars), so the shapes here are a published format: add fields, do not
//! rename them. It lives in the runtime so that the executor ([`crate::exec`]) loads a program
//! from a build's `ir.json` ([`Program::from_json`]) with no compiler at hand: a deployed gateway
//! needs `target/ael/`, not `aelc`'s front end.
//!
//! Ids index the vectors of [`Program`] (`NodeId(3)` is `program.nodes[3]`).

pub use crate::provider::PartKind;
use crate::ty::{Ty, TypeTable};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A whole checked project.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Program {
    pub package: Package,
    /// Every named type (structs, enums, aliases) of every module, std included.
    pub types: TypeTable,
    pub errors: Vec<ErrorSet>,
    pub fns: Vec<FnIr>,
    pub checks: Vec<CheckIr>,
    pub builders: Vec<BuilderIr>,
    pub streams: Vec<StreamIr>,
    pub nodes: Vec<NodeIr>,
    /// `[bindings.*]` of `ael.toml`, sorted by name.
    pub bindings: Vec<Binding>,
    pub limits: Limits,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
pub struct ErrorSetId(pub u32);
/// A fn's index in [`Program::fns`]: the expression IR's own id, one type for both.
pub use crate::expr::FnId;
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
pub struct CheckId(pub u32);
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
pub struct BuilderId(pub u32);
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
pub struct NodeId(pub u32);

/// `[package]` of `ael.toml`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Package {
    /// `owner/name`.
    pub name: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// `[limits]` of `ael.toml`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Limits {
    pub max_input_bytes: u64,
    /// The most a gateway account's uploaded files may take, when `ael.toml` sets it (the
    /// gateway's default otherwise: 1 GiB). Written only when set, so the IR of every project
    /// that does not is unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_stored_bytes_per_account: Option<u64>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_input_bytes: 1_048_576,
            max_stored_bytes_per_account: None,
        }
    }
}

/// An exact decimal amount of money, e.g. `0.05 EUR`: the amount as written (no float).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Money {
    pub amount: String,
    pub currency: String,
}

/// Which protocol a binding speaks (`provider = "…"` in `ael.toml`): the one list of provider
/// names, read by the `ael.toml` loader, written in `ir.json`, routed on by the executor.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
pub enum Provider {
    /// Chat Completions: OpenAI and every compatible server (vLLM, llama.cpp, Ollama).
    #[serde(rename = "openai")]
    OpenAi,
    /// The Anthropic Messages API.
    #[serde(rename = "anthropic")]
    Anthropic,
    /// The Gemini API's `generateContent`.
    #[serde(rename = "gemini")]
    Gemini,
    /// Recorded answers (`--replay FILE`, an example's `answers`), no network.
    #[serde(rename = "replay")]
    Replay,
}

impl Provider {
    /// The one table of `provider` words: `ael.toml` is checked against it (E0607).
    pub const ALL: [Provider; 4] = [
        Provider::OpenAi,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::Replay,
    ];

    /// As written in `ael.toml` and the IR.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
            Provider::Replay => "replay",
        }
    }

    pub fn parse(word: &str) -> Option<Provider> {
        Provider::ALL.into_iter().find(|p| p.as_str() == word)
    }

    /// The HTTP protocol behind it; `None` for replay bindings.
    pub fn http(self) -> Option<crate::provider::ProviderKind> {
        match self {
            Provider::OpenAi => Some(crate::provider::ProviderKind::OpenAi),
            Provider::Anthropic => Some(crate::provider::ProviderKind::Anthropic),
            Provider::Gemini => Some(crate::provider::ProviderKind::Gemini),
            Provider::Replay => None,
        }
    }
}

/// `[bindings.NAME]` of `ael.toml`: a model endpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Binding {
    pub name: String,
    pub provider: Provider,
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The name of the environment variable holding the key; the key itself is never stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Part kinds the endpoint takes: `text`, `image`, `audio`, `video`, `file`.
    pub accepts: Vec<PartKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Price>,
    /// `constrain`: `grammar`, `schema` or `none` (`None`: `schema`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constrain: Option<String>,
}

/// Price per million tokens, as exact decimals: the runtime's own type, so the pipeline and
/// generated glue take a binding's price as it is.
pub use crate::money::Price;

/// `errors Name { code, … }`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorSet {
    pub name: String,
    pub module: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docs: Option<String>,
    pub codes: Vec<ErrorCode>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorCode {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docs: Option<String>,
}

/// A parameter of a fn, check, builder or node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Param {
    pub name: String,
    /// The parameter's type; for a `Raw` parameter, the text type the raw answer is read as.
    pub ty: Ty,
    /// `Raw`: the model's answer as text, before any decoding (only the one parameter of a
    /// raw parser, `extern fn parse(raw: Raw) -> T`). No field can hold it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub raw: bool,
    /// For a node parameter of a `stream` type: the stream's index in [`Program::streams`]. Its
    /// `ty` is then the list of chunks buffered now (spec §7.1), what the node sees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<u32>,
}

impl Param {
    /// The parameter as the expression IR has it.
    pub fn to_expr(&self) -> crate::expr::Param {
        crate::expr::Param {
            name: self.name.clone(),
            ty: self.ty.clone(),
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// `fn` or `extern fn`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FnIr {
    pub name: String,
    pub module: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docs: Option<String>,
    pub params: Vec<Param>,
    /// The return type; `None` when it is not a data type (`Raw` input of a raw parser, `Parts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ret: Option<Ty>,
    pub is_extern: bool,
    /// The lowered body of a pure fn (slots `0..params.len()` are the parameters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<crate::expr::Expr>,
    /// One past the highest local slot the body uses.
    #[serde(default)]
    pub locals: u32,
}

/// `check` or `extern check`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckIr {
    pub name: String,
    pub module: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docs: Option<String>,
    pub params: Vec<Param>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fails: Option<ErrorSetId>,
    pub is_extern: bool,
    /// The lowered requirements, in order (empty for `extern check`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<crate::expr::Require>,
    /// One past the highest local slot the requirements use.
    #[serde(default)]
    pub locals: u32,
}

/// `builder name(…) -> Parts { … }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BuilderIr {
    pub name: String,
    pub module: String,
    pub params: Vec<Param>,
    /// The part kinds it can produce, in order of appearance: `system`, `text`, `image`, ….
    pub part_kinds: Vec<String>,
    /// The lowered parts, in order (slots `0..params.len()` are the parameters).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<crate::prompt::BuilderPart>,
    /// One past the highest local slot the parts use.
    #[serde(default)]
    pub locals: u32,
}

/// `stream Name of T { … }`: every limit is required (spec §7.1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StreamIr {
    pub name: String,
    pub module: String,
    pub chunk: Ty,
    pub chunk_bytes: u64,
    pub buffer_bytes: u64,
    /// Most chunks per second.
    pub rate_per_second: f64,
    pub duration_ms: u64,
    pub fresh_ms: u64,
    /// `reject | drop_oldest | drop_newest | pause`
    pub on_full: String,
    /// `reject | discard`
    pub duplicates: String,
    /// `reject | discard`
    pub stale: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Node,
    Agent,
}

/// A `node` or an `agent`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NodeIr {
    pub name: String,
    pub module: String,
    pub kind: NodeKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docs: Option<String>,
    pub params: Vec<Param>,
    pub output: Ty,
    /// The declared failure codes (`fails E`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fails: Option<ErrorSetId>,
    pub config: NodeConfig,
    pub input: InputStage,
    pub output_stage: OutputStage,
    /// `inputs { … }`; required with two or more parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Inputs>,
    #[serde(default)]
    pub budget: Budget,
    /// `publish { … }`, agents only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publish: Option<Publish>,
    /// Nodes and agents the body calls (delegated calls).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delegates: Vec<NodeId>,
    /// Whether the node has a body (`return …;`) rather than answering with the model's answer.
    pub has_body: bool,
    /// The body lowered for the evaluator: delegated calls are [`crate::expr::Expr::CallNode`].
    /// Present whenever `has_body` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<NodeBody>,
    /// The `extern fn` that stands for the node's own model call in its body (the seed's form,
    /// `return write_review(request);`): an `extern fn` whose parameter types are the node's,
    /// in order, returning its output type, in a node with `model: binding(…)`. A call of it
    /// renders the node's prompt for its arguments and runs the seven steps; a host that
    /// registers a Rust implementation of it answers in its place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_call: Option<FnId>,
    /// The checked prompt template of `config.prompt`, lowered (`None` without a prompt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<crate::prompt::Template>,
}

impl Program {
    /// Reads a program from the text of a build's `ir.json`.
    pub fn from_json(text: &str) -> Result<Program, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Whether an input of `node` can hold a media reference, whose checks read the file
    /// store (a host runs the gate of a node that cannot off its I/O threads).
    pub fn node_takes_media(&self, node: &NodeIr) -> bool {
        node.params.iter().any(|p| self.types.can_hold_media(&p.ty))
    }

    pub fn node(&self, id: NodeId) -> Option<&NodeIr> {
        self.nodes.get(id.0 as usize)
    }

    /// The id of `node`, a node of this program (found by address, not by name).
    pub fn node_id(&self, node: &NodeIr) -> Option<NodeId> {
        self.nodes
            .iter()
            .position(|n| std::ptr::eq(n, node))
            .map(|i| NodeId(i as u32))
    }

    pub fn binding(&self, name: &str) -> Option<&Binding> {
        self.bindings.iter().find(|b| b.name == name)
    }

    /// The published name of `agent` (its manifest's `name`, the gateway's route): the package
    /// name (`acme/review`) when the package publishes one agent, `owner/agent` when several.
    pub fn agent_name(&self, agent: &NodeIr) -> String {
        let agents = self
            .nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Agent)
            .count();
        if agents <= 1 && !self.package.name.is_empty() {
            return self.package.name.clone();
        }
        let owner = self
            .package
            .name
            .split_once('/')
            .map_or(self.package.name.as_str(), |(owner, _)| owner);
        if owner.is_empty() {
            agent.name.clone()
        } else {
            format!("{owner}/{}", agent.name)
        }
    }

    /// The file stem of each node in a build's output (`schemas/<stem>.output.json`): its
    /// name, qualified by its module when the name is shared.
    pub fn node_file_names(&self) -> Vec<String> {
        let mut count: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for n in &self.nodes {
            *count.entry(n.name.as_str()).or_default() += 1;
        }
        self.nodes
            .iter()
            .map(|n| {
                if count.get(n.name.as_str()).copied().unwrap_or(0) > 1 && !n.module.is_empty() {
                    format!("{}.{}", n.module.replace("::", "."), n.name)
                } else {
                    n.name.clone()
                }
            })
            .collect()
    }
}

impl NodeIr {
    /// The body as a function the evaluator runs: the node's parameters in, its output out
    /// (`None` when the node has no body, i.e. the model answers).
    pub fn body_fn(&self) -> Option<crate::expr::FnDef> {
        let body = self.body.as_ref()?;
        Some(crate::expr::FnDef {
            name: self.name.clone(),
            params: self.params.iter().map(Param::to_expr).collect(),
            locals: body.locals,
            ret: Some(self.output.clone()),
            body: body.expr.clone(),
        })
    }
}

/// A node body lowered for the evaluator: the parameters are slots `0..params.len()`, each
/// `let` an `Expr::Let` around the rest, the `return` value innermost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NodeBody {
    /// One past the highest local slot the body uses.
    pub locals: u32,
    pub expr: crate::expr::Expr,
}

/// `config { … }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NodeConfig {
    /// `prompt: file("…")`, relative to the project root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// `model: binding("…")`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Step 1's limit in bytes: as written, or the output type's largest encoding plus room for
    /// one code fence.
    pub max_answer: u64,
    /// Whether `max_answer` was written rather than derived.
    pub max_answer_explicit: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_prompt: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
}

/// `input { check …; builder …; }`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct InputStage {
    pub checks: Vec<CheckId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builder: Option<BuilderId>,
}

/// `output { … }`: steps 4, 5 and 7 of the acceptance sequence.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OutputStage {
    pub checks: Vec<CheckId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transform: Option<FnId>,
    /// `raw;` with `parse: f;`: the answer reaches `f` as `Raw` text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_parse: Option<FnId>,
    pub on_failure: Vec<Policy>,
}

/// One step of `on_failure:`: the pipeline's own type.
pub use crate::pipeline::Policy;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Combine {
    Together,
    Latest,
    Zip,
}

/// `inputs { combine: …; fresh: a 200ms, …; }`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Inputs {
    pub combine: Combine,
    /// `(parameter name, freshness bound in ms)`.
    pub fresh: Vec<(String, u64)>,
}

/// `budget { … }`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Budget {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_calls: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost: Option<Money>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_time_ms: Option<u64>,
}

impl Budget {
    /// The budget as the pipeline takes it (the amount of `max_cost`; prices and budget share
    /// one currency, which the compiler checks).
    pub fn to_pipeline(&self) -> crate::pipeline::Budget {
        crate::pipeline::Budget {
            max_calls: self.max_calls,
            max_time_ms: self.max_time_ms,
            max_cost: self.max_cost.as_ref().map(|m| m.amount.clone()),
        }
    }
}

/// `publish { … }`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Publish {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Money>,
    /// The examples glob, relative to the project root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples: Option<String>,
}
