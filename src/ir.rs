//! The typed IR: a checked program as plain data, what every backend consumes.
//!
//! Sema produces a [`Program`] only from source that checked without errors. Every type in it is
//! a bounded [`Ty`] from `aelc-runtime`; names are resolved to ids. Codegen reads this and never
//! re-parses. The program is written as `ir.json` (its JSON Schema comes from schemars), so the
//! shapes here are a published format: add fields, do not rename them.
//!
//! Ids index the vectors of [`Program`] (`NodeId(3)` is `program.nodes[3]`).

use aelc_runtime::ty::{Ty, TypeTable};
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
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
pub struct FnId(pub u32);
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
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_input_bytes: 1_048_576,
        }
    }
}

/// An exact decimal amount of money, e.g. `0.05 EUR`: the amount as written (no float).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Money {
    pub amount: String,
    pub currency: String,
}

/// `[bindings.NAME]` of `ael.toml`: a model endpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Binding {
    pub name: String,
    /// `openai`, `anthropic` or `replay`.
    pub provider: String,
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The name of the environment variable holding the key; the key itself is never stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Part kinds the endpoint takes: `text`, `image`, `audio`, `video`, `file`.
    pub accepts: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Price>,
    /// `constrain`: `grammar`, `schema` or `none` (`None`: `schema`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constrain: Option<String>,
}

/// Price per million tokens, as exact decimals: the runtime's own type, so the pipeline and
/// generated glue take a binding's price as it is.
pub use aelc_runtime::money::Price;

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
    pub ty: Ty,
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
    pub body: Option<aelc_runtime::expr::Expr>,
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
    pub requires: Vec<aelc_runtime::expr::Require>,
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
    pub parts: Vec<aelc_runtime::prompt::BuilderPart>,
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
    /// The body lowered for the evaluator (what the Rust glue's `body` runs), when it calls
    /// no node: a delegated call is not an expression the evaluator can run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<NodeBody>,
    /// The checked prompt template of `config.prompt`, lowered (`None` without a prompt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<aelc_runtime::prompt::Template>,
}

impl NodeIr {
    /// The body as a function the evaluator runs: the node's parameters in, its output out
    /// (`None` when the node has no body, i.e. the model answers).
    pub fn body_fn(&self) -> Option<aelc_runtime::expr::FnDef> {
        let body = self.body.as_ref()?;
        Some(aelc_runtime::expr::FnDef {
            name: self.name.clone(),
            params: self
                .params
                .iter()
                .map(|p| aelc_runtime::expr::Param {
                    name: p.name.clone(),
                    ty: p.ty.clone(),
                })
                .collect(),
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
    pub expr: aelc_runtime::expr::Expr,
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

/// One step of `on_failure:`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "policy", rename_all = "snake_case")]
pub enum Policy {
    Retry { times: u32 },
    Repair { times: u32 },
    Fallback { binding: String },
    Fail { code: String },
}

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

pub mod size;
