//! Model-facing output schemas (spec §9.3): the node's output schema rewritten into the subset
//! each provider's structured-output mode accepts, and what each rewrite could not express.
//!
//! The rewrite itself lives in the runtime ([`aelc_runtime::model_schema`], where each
//! provider's subset is described): generated Rust glue embeds only each node's output schema
//! and derives the variants there when its executor is made (issue 42), so the compiler uses
//! that one implementation rather than a copy, and what it writes into `model/` and checks
//! is what a glue's executor sends. This module adapts it to the compiler's
//! `serde_json::Value` documents (built with `preserve_order`, so the key order survives the
//! conversions) and gives `aelc run` and the glue every node's schemas ([`exec_schemas`]).

use aelc_runtime::exec::{NodeSchemas, Schemas};
use aelc_runtime::model_schema as rewrite;
use aelc_runtime::ordered::Json;
use serde_json::Value;

use super::json_schema::{DefKeys, SchemaBuilder};
use crate::ir::Program;

pub use rewrite::{
    Limitation, OpenAiLimits, GEMINI_KEYWORDS, GEMINI_STRING_FORMATS, GEMINI_UNROLL,
    OPENAI_FORMATS, OPENAI_KEYWORDS, OPENAI_LIMITS,
};

/// The providers a model-facing variant is made for: the runtime's HTTP protocols, the one
/// list of them (its `as_str` is the binding's `provider` word).
pub use aelc_runtime::provider::ProviderKind;

/// The key an answer is wrapped in when the output type is not an object: the one the
/// providers unwrap.
pub const WRAP_KEY: &str = aelc_runtime::provider::answer::WRAPPED;

/// Whether the model-facing variant wraps the answer as `{"value": …}`: the runtime's rule,
/// which the providers and the executor also read.
pub use aelc_runtime::provider::answer::wraps_root;

/// The model-facing variant of an output `document` for `provider`; `name` is the node's name.
pub fn model_schema(provider: ProviderKind, name: &str, document: &Value) -> Value {
    rewrite::model_schema(provider, name, &Json::from(document.clone())).to_value()
}

/// The model-facing variant and what it could not express.
pub fn variant_with_limitations(
    provider: ProviderKind,
    name: &str,
    document: &Value,
) -> (Value, Vec<Limitation>) {
    let (variant, limits) =
        rewrite::variant_with_limitations(provider, name, &Json::from(document.clone()));
    (variant.to_value(), limits)
}

/// Every limitation of the three variants of one output `document`, each code once per
/// message ([`rewrite::limitations`]).
pub fn limitations(name: &str, document: &Value) -> Vec<Limitation> {
    rewrite::limitations(name, &Json::from(document.clone()))
}

/// `{"type":"object","properties":{"value":S},"required":["value"],…}` around the root.
pub(crate) fn wrap_root(document: &Value) -> Value {
    rewrite::wrap_root(&Json::from(document.clone())).to_value()
}

/// The output schemas of every node as the executor takes them (`aelc_runtime::exec::Schemas`):
/// each node's output document and its model-facing variants, as `aelc build` emits them.
/// `aelc run`/`aelc test` run with them; the Rust glue embeds the documents and grammars
/// ([`output_documents`]) and derives the variants with the same [`rewrite::variants`].
pub fn exec_schemas(program: &Program) -> Schemas {
    let nodes = program.nodes.iter().zip(output_documents(program));
    Schemas(
        nodes
            .map(|(node, (document, grammar))| {
                // In the builder's key order (the root crate's `serde_json` keeps it).
                let document = Json::from(document);
                NodeSchemas {
                    variants: rewrite::variants(&node.name, &document),
                    document,
                    grammar,
                }
            })
            .collect(),
    )
}

/// Each node's self-contained output document, with its GBNF grammar when a binding it may
/// call is constrained by one: what the executor's schemas hold besides the variants.
pub(crate) fn output_documents(program: &Program) -> Vec<(Value, Option<String>)> {
    let keys = DefKeys::new(&program.types);
    program
        .nodes
        .iter()
        .map(|node| {
            let document = SchemaBuilder::new(&program.types, &keys).output_document(node);
            let grammar = aelc_runtime::exec::constrains_with_grammar(program, node)
                .then(|| super::grammar::node_grammars(program, node).map(|g| g.gbnf))
                .flatten();
            (document, grammar)
        })
        .collect()
}
