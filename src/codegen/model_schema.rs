//! Model-facing output schemas (spec §9.3): the node's output schema rewritten into the subset
//! each provider's structured-output mode accepts, and what each rewrite could not express.
//!
//! The pipeline still enforces every bound of the output type whatever the provider promised, so
//! a bound that a subset cannot express is not lost: it moves into the `description` of the
//! schema it belonged to, in words (`At most 16 characters.`), where the model reads it.
//!
//! Shared by all three ([`entries`]): a `Map` is written as a bounded list of `{key, value}`
//! objects (no provider's strict subset takes `additionalProperties` as a schema), and the
//! runtime turns such a list back into the map before the pipeline decodes the answer
//! (`aelc_runtime::provider::entries`); `W0803` says so.
//!
//! - [`ProviderKind::OpenAi`] ([`openai`]): the `json_schema` object of `response_format` (`name`,
//!   `strict`, `schema`), strict whenever the documented limits allow; past one (more than
//!   1,000 enum values, more than 10 levels of nesting, more than 5,000 properties, …) it is
//!   `strict: false` and `W0802` names the limit.
//! - [`ProviderKind::Gemini`] ([`gemini`]): the JSON Schema of `generationConfig.responseJsonSchema`,
//!   with named types inlined and recursion unrolled a fixed number of levels and then cut
//!   soundly (deeper values are not offered, never loosened); `W0804` says so.
//! - [`ProviderKind::Anthropic`] ([`anthropic`]): a tool `input_schema` that is also a structured
//!   output `output_config.format.schema`: exactly what the SDK's `transform_schema` would send
//!   (a fixed point of it), so nothing is stripped behind the author's back.
//!
//! OpenAI and Anthropic require an object at the root. An output type that is not an object (a
//! list, a unit enum, a number, a map) is wrapped as `{"value": …}` with `value` required; the
//! providers unwrap an answer to such a schema (see [`wraps_root`]). Gemini takes any root.

mod anthropic;
mod entries;
mod gemini;
mod openai;

use std::collections::BTreeMap;

use aelc_runtime::exec::{NodeSchemas, Schemas};
use aelc_runtime::provider::OutputSchema;
use serde_json::{json, Map, Value};

use super::json_schema::{DefKeys, SchemaBuilder};
use crate::ir::Program;

pub use gemini::{GEMINI_KEYWORDS, GEMINI_STRING_FORMATS, GEMINI_UNROLL};
pub use openai::{OpenAiLimits, OPENAI_FORMATS, OPENAI_KEYWORDS, OPENAI_LIMITS};

/// The providers a model-facing variant is made for: the runtime's HTTP protocols, the one
/// list of them (its `as_str` is the binding's `provider` word).
pub use aelc_runtime::provider::ProviderKind;

/// Something a model-facing variant could not express as the output type says: the compiler
/// reports it as a warning ([`Limitation::code`]) on the node, in words written in
/// `codegen/error.rs`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Limitation {
    /// `W0802`: the schema is past OpenAI's strict-mode limits (`broken`: which ones) and is
    /// sent with `strict: false`.
    NotStrict { broken: Vec<String> },
    /// `W0803`: the maps at `maps` (paths in the output) are written as lists of
    /// `{key, value}` objects.
    MapsAsEntries { maps: Vec<String> },
    /// `W0804`: the recursive types `types` are unrolled `levels` deep for Gemini.
    RecursionCut { types: Vec<String>, levels: usize },
}

impl Limitation {
    /// `W0802`, `W0803` or `W0804`.
    pub fn code(&self) -> &'static str {
        match self {
            Limitation::NotStrict { .. } => "W0802",
            Limitation::MapsAsEntries { .. } => "W0803",
            Limitation::RecursionCut { .. } => "W0804",
        }
    }
}

/// The key an answer is wrapped in when the output type is not an object: the one the
/// providers unwrap.
pub const WRAP_KEY: &str = aelc_runtime::provider::answer::WRAPPED;

/// Whether the model-facing variant wraps the answer as `{"value": …}`: the runtime's rule,
/// which the providers and the executor also read.
pub use aelc_runtime::provider::answer::wraps_root;

/// The model-facing variant of an output `document` for `provider`; `name` is the node's name.
pub fn model_schema(provider: ProviderKind, name: &str, document: &Value) -> Value {
    variant_with_limitations(provider, name, document).0
}

/// The model-facing variant and what it could not express.
pub fn variant_with_limitations(
    provider: ProviderKind,
    name: &str,
    document: &Value,
) -> (Value, Vec<Limitation>) {
    let mut limits = Vec::new();
    let (rewritten, maps) = entries::maps_as_entries(document);
    if !maps.is_empty() {
        limits.push(map_note(&maps));
    }
    let wrap = wraps_root(document);
    let value = match provider {
        ProviderKind::OpenAi => openai::variant(name, &rewritten, wrap, &mut limits),
        ProviderKind::Gemini => gemini::variant(&rewritten, &mut limits),
        ProviderKind::Anthropic => anthropic::variant(&rewritten, wrap),
    };
    (value, limits)
}

/// Every limitation of the three variants of one output `document`, each code once per
/// message (the map note is shared by all three): what [`variant_with_limitations`] reports
/// for each provider, found with less work, since `aelc check` asks this of every output type
/// (it was a fifth of the check's time). The map rewrite is made once rather than per variant,
/// and the Anthropic variant is not built: it expresses everything (its builder takes no
/// list of limitations, so that stays true by construction).
pub fn limitations(name: &str, document: &Value) -> Vec<Limitation> {
    let mut found = Vec::new();
    let (rewritten, maps) = entries::maps_as_entries(document);
    if !maps.is_empty() {
        found.push(map_note(&maps));
    }
    let wrap = wraps_root(document);
    openai::variant(name, &rewritten, wrap, &mut found);
    gemini::variant(&rewritten, &mut found);
    let mut out: Vec<Limitation> = Vec::new();
    for l in found {
        if !out.contains(&l) {
            out.push(l);
        }
    }
    out
}

/// W0803: the maps a model-facing schema writes as lists of `{key, value}` objects.
fn map_note(maps: &[String]) -> Limitation {
    Limitation::MapsAsEntries {
        maps: maps.to_vec(),
    }
}

// ---------------------------------------------------------------- shared helpers

fn defs_of(document: &Value) -> Map<String, Value> {
    document
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Looks a `#/$defs/KEY` reference up.
fn resolve_ref<'a>(defs: &'a Map<String, Value>, reference: &str) -> Option<&'a Value> {
    defs.get(&ref_key(reference))
}

/// The `$defs` key of a `#/$defs/KEY` reference, unescaped.
fn ref_key(reference: &str) -> String {
    reference
        .trim_start_matches("#/$defs/")
        .replace("~1", "/")
        .replace("~0", "~")
}

/// `{"type":"object","properties":{"value":S},"required":["value"],…}` around the root.
pub(crate) fn wrap_root(document: &Value) -> Value {
    let mut inner = Map::new();
    let mut outer = Map::new();
    if let Value::Object(doc) = document {
        for (k, v) in doc {
            match k.as_str() {
                "$schema" | "$defs" | "title" => {
                    outer.insert(k.clone(), v.clone());
                }
                _ => {
                    inner.insert(k.clone(), v.clone());
                }
            }
        }
    }
    let mut properties = Map::new();
    properties.insert(WRAP_KEY.into(), Value::Object(inner));
    outer.insert("type".into(), json!("object"));
    outer.insert("properties".into(), Value::Object(properties));
    outer.insert("required".into(), json!([WRAP_KEY]));
    outer.insert("additionalProperties".into(), json!(false));
    // `$defs` last, as in the other documents.
    if let Some(defs) = outer.shift_remove("$defs") {
        outer.insert("$defs".into(), defs);
    }
    Value::Object(outer)
}

/// Appends a sentence to a schema's description.
fn describe(m: &mut Map<String, Value>, sentence: String) {
    let text = match m.get("description").and_then(Value::as_str) {
        Some(d) if !d.is_empty() => {
            let sep = if d.ends_with('.') { " " } else { ". " };
            format!("{d}{sep}{sentence}")
        }
        _ => sentence,
    };
    m.insert("description".into(), Value::String(text));
}

/// Removes `key` and describes it in words: the bounds a subset cannot express.
fn move_to_description(m: &mut Map<String, Value>, key: &str) {
    let Some(v) = m.shift_remove(key) else {
        return;
    };
    let text = match key {
        "minLength" => format!("At least {v} characters."),
        "maxLength" => format!("At most {v} characters."),
        "uniqueItems" if v == json!(true) => "Items are distinct.".to_owned(),
        "uniqueItems" => return,
        "minProperties" => format!("At least {v} entries."),
        "maxProperties" => format!("At most {v} entries."),
        "minItems" => format!("At least {v} items."),
        "maxItems" => format!("At most {v} items."),
        "pattern" => format!("Matches the pattern {v}."),
        "format" => format!("Format: {}.", v.as_str().unwrap_or_default()),
        "default" => format!("Default: {v}."),
        "minimum" => format!("At least {v}."),
        "maximum" => format!("At most {v}."),
        "exclusiveMinimum" => format!("Greater than {v}."),
        "exclusiveMaximum" => format!("Less than {v}."),
        "propertyNames" => format!("Keys: {}.", describe_key_schema(&v)),
        _ => format!("{key}: {v}."),
    };
    describe(m, text);
}

fn describe_key_schema(v: &Value) -> String {
    if let Some(values) = v.get("enum").and_then(Value::as_array) {
        let names: Vec<String> = values
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        return format!("one of {}", names.join(", "));
    }
    if let Some(r) = v.get("$ref").and_then(Value::as_str) {
        return format!("a {}", r.trim_start_matches("#/$defs/"));
    }
    let mut parts = vec!["text".to_owned()];
    if let Some(n) = v.get("maxLength") {
        parts.push(format!("of at most {n} characters"));
    }
    if let Some(p) = v.get("pattern") {
        parts.push(format!("matching {p}"));
    }
    parts.join(" ")
}

/// The JSON type of a `const`/`enum` value, for the subsets that want a `type` beside them.
fn literal_type(values: &[Value]) -> Option<&'static str> {
    let mut kinds = values.iter().map(|v| match v {
        Value::String(_) => Some("string"),
        Value::Bool(_) => Some("boolean"),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some("integer"),
        Value::Number(_) => Some("number"),
        _ => None,
    });
    let first = kinds.next()??;
    kinds.all(|k| k == Some(first)).then_some(first)
}

/// The output schemas of every node as the executor takes them (`aelc_runtime::exec::Schemas`):
/// each node's output document and its model-facing variants, as `aelc build` emits them.
/// `aelc run`/`aelc test` run with them; the Rust glue embeds them.
pub fn exec_schemas(program: &Program) -> Schemas {
    let keys = DefKeys::new(&program.types);
    Schemas(
        program
            .nodes
            .iter()
            .map(|node| {
                let document = SchemaBuilder::new(&program.types, &keys).output_document(node);
                let variants = variants(&node.name, &document);
                let grammar = aelc_runtime::exec::constrains_with_grammar(program, node)
                    .then(|| super::grammar::node_grammars(program, node).map(|g| g.gbnf))
                    .flatten();
                NodeSchemas {
                    // In the builder's key order (the root crate's `serde_json` keeps it).
                    document: document.into(),
                    variants,
                    grammar,
                }
            })
            .collect(),
    )
}

/// The model-facing variants the providers send (spec §9.3), by the binding's `provider`
/// word, built the one way the runtime reads the emitted files
/// ([`aelc_runtime::exec::output_schema`]).
fn variants(name: &str, document: &Value) -> BTreeMap<String, OutputSchema> {
    ProviderKind::ALL
        .into_iter()
        .map(|provider| {
            let file = model_schema(provider, name, document);
            (
                provider.as_str().to_owned(),
                aelc_runtime::exec::output_schema(name, provider.provider(), file, document),
            )
        })
        .collect()
}
