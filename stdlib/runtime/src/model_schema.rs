//! Model-facing output schemas (spec §9.3): the node's output schema rewritten into the subset
//! each provider's structured-output mode accepts, and what each rewrite could not express.
//!
//! One implementation for both sides: the compiler writes them (`model/<node>.<provider>.json`)
//! and reports their limitations through this module (its `codegen::model_schema`), and
//! generated Rust glue, which embeds only each node's output schema, derives them here when
//! its executor is made (issue 42: the variants were most of the embedded schemas). So the
//! texts are [`crate::ordered::Json`]: a user's crate builds `serde_json` without
//! `preserve_order`, and the key order is part of what a provider receives.
//!
//! The pipeline still enforces every bound of the output type whatever the provider promised, so
//! a bound that a subset cannot express is not lost: it moves into the `description` of the
//! schema it belonged to, in words (`At most 16 characters.`), where the model reads it.
//!
//! Shared by all three ([`entries`]): a `Map` is written as a bounded list of `{key, value}`
//! objects (no provider's strict subset takes `additionalProperties` as a schema), and the
//! runtime turns such a list back into the map before the pipeline decodes the answer
//! ([`crate::provider::entries`]); `W0803` says so.
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

use crate::ordered::{Json, Map};
use crate::provider::answer::{wraps_root, WRAPPED};
use crate::provider::{OutputSchema, ProviderKind};

pub use gemini::{GEMINI_KEYWORDS, GEMINI_STRING_FORMATS, GEMINI_UNROLL};
pub use openai::{OpenAiLimits, OPENAI_FORMATS, OPENAI_KEYWORDS, OPENAI_LIMITS};

/// Something a model-facing variant could not express as the output type says: the compiler
/// reports it as a warning ([`Limitation::code`]) on the node, in words written in
/// `aelc`'s `codegen/error.rs`.
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

/// The model-facing variant of an output `document` for `provider` (the file `aelc build`
/// writes); `name` is the node's name.
pub fn model_schema(provider: ProviderKind, name: &str, document: &Json) -> Json {
    variant_with_limitations(provider, name, document).0
}

/// The model-facing variant and what it could not express.
pub fn variant_with_limitations(
    provider: ProviderKind,
    name: &str,
    document: &Json,
) -> (Json, Vec<Limitation>) {
    let mut limits = Vec::new();
    let (rewritten, maps) = entries::maps_as_entries(document);
    if !maps.is_empty() {
        limits.push(map_note(&maps));
    }
    let wrap = wraps_root(&document.to_value());
    let value = variant(provider, name, &rewritten, wrap, &mut limits);
    (value, limits)
}

/// One provider's variant of a document whose maps are already lists of entries.
fn variant(
    provider: ProviderKind,
    name: &str,
    rewritten: &Json,
    wrap: bool,
    limits: &mut Vec<Limitation>,
) -> Json {
    match provider {
        ProviderKind::OpenAi => openai::variant(name, rewritten, wrap, limits),
        ProviderKind::Gemini => gemini::variant(rewritten, limits),
        ProviderKind::Anthropic => anthropic::variant(rewritten, wrap),
    }
}

/// Every limitation of the three variants of one output `document`, each code once per
/// message (the map note is shared by all three): what [`variant_with_limitations`] reports
/// for each provider, found with less work, since `aelc check` asks this of every output type
/// (it was a fifth of the check's time). The map rewrite is made once rather than per variant,
/// and the Anthropic variant is not built: it expresses everything (its builder takes no
/// list of limitations, so that stays true by construction).
pub fn limitations(name: &str, document: &Json) -> Vec<Limitation> {
    let mut found = Vec::new();
    let (rewritten, maps) = entries::maps_as_entries(document);
    if !maps.is_empty() {
        found.push(map_note(&maps));
    }
    let wrap = wraps_root(&document.to_value());
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

/// The model-facing variants the providers send (spec §9.3) of one node's output `document`,
/// by the binding's `provider` word, as the executor takes them: what the compiler gives
/// `aelc run` and what generated glue derives from its embedded schema, built the one way the
/// runtime reads the emitted files ([`crate::exec::output_schema`]).
/// The maps rewrite and the wrap are made once for the three (each node's variants are made
/// when a glue's executor first runs it).
pub fn variants(name: &str, document: &Json) -> BTreeMap<String, OutputSchema> {
    let plain = document.to_value();
    let (rewritten, _) = entries::maps_as_entries(document);
    let wrap = wraps_root(&plain);
    ProviderKind::ALL
        .into_iter()
        .map(|provider| {
            let file = variant(provider, name, &rewritten, wrap, &mut Vec::new());
            (
                provider.as_str().to_owned(),
                crate::exec::output_schema(name, provider.provider(), file, &plain),
            )
        })
        .collect()
}

/// W0803: the maps a model-facing schema writes as lists of `{key, value}` objects.
fn map_note(maps: &[String]) -> Limitation {
    Limitation::MapsAsEntries {
        maps: maps.to_vec(),
    }
}

// ---------------------------------------------------------------- shared helpers

fn defs_of(document: &Json) -> Map {
    document
        .get("$defs")
        .and_then(Json::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Looks a `#/$defs/KEY` reference up.
fn resolve_ref<'a>(defs: &'a Map, reference: &str) -> Option<&'a Json> {
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
pub fn wrap_root(document: &Json) -> Json {
    let mut inner = Map::new();
    let mut outer = Map::new();
    if let Json::Object(doc) = document {
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
    properties.insert(WRAPPED.into(), Json::Object(inner));
    outer.insert("type".into(), "object".into());
    outer.insert("properties".into(), Json::Object(properties));
    outer.insert("required".into(), Json::Array(vec![WRAPPED.into()]));
    outer.insert("additionalProperties".into(), false.into());
    // `$defs` last, as in the other documents.
    if let Some(defs) = outer.remove("$defs") {
        outer.insert("$defs".into(), defs);
    }
    Json::Object(outer)
}

/// Appends a sentence to a schema's description.
/// Applies a provider's rewrite `walk` to each subschema of `m` it descends into: every
/// property's, `items`, and each arm of the `combinators` that provider keeps.
fn walk_subschemas(m: &mut Map, combinators: &[&str], walk: fn(&mut Map)) {
    if let Some(Json::Object(props)) = m.get_mut("properties") {
        for (_, p) in props.iter_mut() {
            if let Json::Object(p) = p {
                walk(p);
            }
        }
    }
    if let Some(Json::Object(sub)) = m.get_mut("items") {
        walk(sub);
    }
    for key in combinators {
        if let Some(Json::Array(arms)) = m.get_mut(key) {
            for arm in arms {
                if let Json::Object(arm) = arm {
                    walk(arm);
                }
            }
        }
    }
}

/// `required` after `properties`, then `additionalProperties` and `$defs` last: the order
/// every rewritten schema is written in.
fn closing_keys_last(m: &mut Map) {
    for key in ["required", "additionalProperties", "$defs"] {
        if let Some(v) = m.remove(key) {
            m.insert(key.into(), v);
        }
    }
}

/// Every keyword of `m` outside the provider's `known` subset, moved into the description as
/// words (`key: value.`) rather than sent.
fn describe_unknown(m: &mut Map, known: &[&str]) {
    let unknown: Vec<String> = m
        .keys()
        .filter(|k| !known.contains(&k.as_str()))
        .cloned()
        .collect();
    for key in unknown {
        if let Some(v) = m.remove(&key) {
            describe(m, format!("{key}: {v}."));
        }
    }
}

fn describe(m: &mut Map, sentence: String) {
    let text = match m.get("description").and_then(Json::as_str) {
        Some(d) if !d.is_empty() => {
            let sep = if d.ends_with('.') { " " } else { ". " };
            format!("{d}{sep}{sentence}")
        }
        _ => sentence,
    };
    m.insert("description".into(), Json::String(text));
}

/// Removes `key` and describes it in words: the bounds a subset cannot express.
fn move_to_description(m: &mut Map, key: &str) {
    let Some(v) = m.remove(key) else {
        return;
    };
    let text = match key {
        "minLength" => format!("At least {v} characters."),
        "maxLength" => format!("At most {v} characters."),
        "uniqueItems" if v == Json::Bool(true) => "Items are distinct.".to_owned(),
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

fn describe_key_schema(v: &Json) -> String {
    if let Some(values) = v.get("enum").and_then(Json::as_array) {
        let names: Vec<String> = values
            .iter()
            .filter_map(Json::as_str)
            .map(str::to_owned)
            .collect();
        return format!("one of {}", names.join(", "));
    }
    if let Some(r) = v.get("$ref").and_then(Json::as_str) {
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
fn literal_type(values: &[Json]) -> Option<&'static str> {
    let mut kinds = values.iter().map(|v| match v {
        Json::String(_) => Some("string"),
        Json::Bool(_) => Some("boolean"),
        Json::Number(n) if n.is_i64() || n.is_u64() => Some("integer"),
        Json::Number(_) => Some("number"),
        _ => None,
    });
    let first = kinds.next()??;
    kinds.all(|k| k == Some(first)).then_some(first)
}

/// An integer as JSON: `i64` or `u64` when it fits, else its digits as a string (as the
/// compiler's schemas write bounds).
pub fn int_json(v: i128) -> Json {
    if let Ok(i) = i64::try_from(v) {
        i.into()
    } else if let Ok(u) = u64::try_from(v) {
        u.into()
    } else {
        v.to_string().into()
    }
}
