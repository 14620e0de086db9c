//! Model-facing output schemas (spec §9.3): the node's output schema rewritten into the subset
//! each provider's structured-output mode accepts.
//!
//! The pipeline still enforces every bound of the output type whatever the provider promised, so
//! a bound that a subset cannot express is not lost: it moves into the `description` of the
//! schema it belonged to, in words (`at most 16 characters`), where the model reads it.
//!
//! - [`Provider::OpenAi`]: the `json_schema` object of OpenAI's `response_format` (`name`,
//!   `strict`, `schema`). Strict mode: every property in `required` (`Option` fields are already
//!   `anyOf` with `null`; fields with a default become required, since a model that always
//!   writes them is still valid), `additionalProperties: false`, no `default`, `oneOf` written as
//!   `anyOf` (the arms are disjoint by their tag, so the meaning is the same), `const` as a
//!   one-value `enum`, and only the keywords OpenAI lists. A `Map` cannot be expressed in strict
//!   mode (its `additionalProperties` is a schema): such a document is emitted with
//!   `strict: false` and keeps the map as in the JSON Schema.
//! - [`Provider::Gemini`]: Gemini's `responseSchema`, an OpenAPI 3.0 subset: no `$ref` (named
//!   types are written inline; a recursive reference past the first expansion becomes a
//!   described `OBJECT`/`ARRAY` without further structure), upper-case `type`, `nullable`
//!   instead of `anyOf` with `null`, `anyOf` for data enums, `propertyOrdering` so that the model
//!   writes fields in declaration order.
//! - [`Provider::Anthropic`]: a tool `input_schema`, which is JSON Schema with an object at the
//!   root; the draft 2020-12 document without `$schema`.
//!
//! OpenAI and Anthropic require an object at the root. An output type that is not an object (a
//! list, a unit enum, a number) is wrapped as `{"value": …}` with `value` required; the pipeline
//! unwraps an answer to such a schema (see [`wraps_root`]).

use std::collections::BTreeMap;

use aelc_runtime::exec::{NodeSchemas, Schemas};
use aelc_runtime::provider::OutputSchema;
use serde_json::{json, Map, Value};

use super::json_schema::{DefKeys, SchemaBuilder};
use crate::ir::{Program, Provider as IrProvider};

/// A provider with a structured-output mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Provider {
    OpenAi,
    Gemini,
    Anthropic,
}

impl Provider {
    pub const ALL: [Provider; 3] = [Provider::OpenAi, Provider::Gemini, Provider::Anthropic];

    /// The name in file names and on the command line (`--variant openai`).
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Gemini => "gemini",
            Provider::Anthropic => "anthropic",
        }
    }

    pub fn parse(s: &str) -> Option<Provider> {
        Provider::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

/// The key an answer is wrapped in when the output type is not an object: the one the
/// providers unwrap.
pub const WRAP_KEY: &str = aelc_runtime::provider::answer::WRAPPED;

/// Whether the model-facing variant wraps the answer as `{"value": …}`: the runtime's rule,
/// which the providers and the executor also read.
pub use aelc_runtime::provider::answer::wraps_root;

/// The model-facing variant of an output `document` for `provider`; `name` is the node's name.
pub fn model_schema(provider: Provider, name: &str, document: &Value) -> Value {
    match provider {
        Provider::OpenAi => openai(name, document),
        Provider::Gemini => gemini(document),
        Provider::Anthropic => anthropic(document),
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
    let key = reference.strip_prefix("#/$defs/")?;
    let key = key.replace("~1", "/").replace("~0", "~");
    defs.get(&key)
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

// ---------------------------------------------------------------- OpenAI

/// The keywords OpenAI strict mode accepts (see the module docs and `tests/codegen_model.rs`).
pub const OPENAI_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "anyOf",
    "$ref",
    "$defs",
    "title",
    "description",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
];

/// The string formats OpenAI strict mode accepts.
pub const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

fn openai(name: &str, document: &Value) -> Value {
    let mut schema = if wraps_root(document) {
        wrap_root(document)
    } else {
        document.clone()
    };
    let mut strict = true;
    if let Value::Object(m) = &mut schema {
        m.shift_remove("$schema");
        openai_walk(m, &mut strict);
    }
    let mut out = Map::new();
    out.insert("name".into(), json!(openai_name(name)));
    out.insert("strict".into(), json!(strict));
    out.insert("schema".into(), schema);
    Value::Object(out)
}

/// OpenAI's `name`: `a-z A-Z 0-9 _ -`, at most 64 characters.
fn openai_name(name: &str) -> String {
    let cleaned: String = format!("{name}_output")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    cleaned.chars().take(64).collect()
}

fn openai_walk(m: &mut Map<String, Value>, strict: &mut bool) {
    if let Some(Value::Object(defs)) = m.get_mut("$defs") {
        for (_, d) in defs.iter_mut() {
            if let Value::Object(d) = d {
                openai_walk(d, strict);
            }
        }
    }
    if let Some(arms) = m.shift_remove("oneOf") {
        m.insert("anyOf".into(), arms);
    }
    if let Some(c) = m.shift_remove("const") {
        m.insert("enum".into(), json!([c]));
    }
    // A map: additionalProperties is a schema, which strict mode refuses.
    let is_map = matches!(m.get("additionalProperties"), Some(Value::Object(_)));
    if is_map {
        *strict = false;
    }
    if m.get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| !OPENAI_FORMATS.contains(&f))
    {
        move_to_description(m, "format");
    }
    for key in [
        "minLength",
        "maxLength",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "propertyNames",
        "default",
    ] {
        move_to_description(m, key);
    }
    // Every property required.
    if let Some(Value::Object(props)) = m.get("properties") {
        let all: Vec<Value> = props.keys().map(|k| json!(k)).collect();
        m.insert("required".into(), Value::Array(all));
        if !is_map {
            m.insert("additionalProperties".into(), json!(false));
        }
    }
    for key in ["properties"] {
        if let Some(Value::Object(props)) = m.get_mut(key) {
            for (_, p) in props.iter_mut() {
                if let Value::Object(p) = p {
                    openai_walk(p, strict);
                }
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(Value::Object(sub)) = m.get_mut(key) {
            openai_walk(sub, strict);
        }
    }
    if let Some(Value::Array(arms)) = m.get_mut("anyOf") {
        for arm in arms {
            if let Value::Object(arm) = arm {
                openai_walk(arm, strict);
            }
        }
    }
    // Keep `required` after `properties` and `additionalProperties` last, as elsewhere.
    reorder_object_keys(m);
    // Whatever is left outside the subset is dropped from a strict schema (none should be).
    if *strict {
        m.retain(|k, _| OPENAI_KEYWORDS.contains(&k.as_str()));
    }
}

/// Puts `required` and `additionalProperties` after `properties`, `$defs` last.
fn reorder_object_keys(m: &mut Map<String, Value>) {
    for key in ["required", "additionalProperties", "$defs"] {
        if let Some(v) = m.shift_remove(key) {
            m.insert(key.into(), v);
        }
    }
}

// ---------------------------------------------------------------- Anthropic

fn anthropic(document: &Value) -> Value {
    let mut schema = if wraps_root(document) {
        wrap_root(document)
    } else {
        document.clone()
    };
    if let Value::Object(m) = &mut schema {
        m.shift_remove("$schema");
    }
    schema
}

// ---------------------------------------------------------------- Gemini

/// The fields of Gemini's `Schema` object (see `tests/codegen_model.rs` for the source).
pub const GEMINI_KEYWORDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "anyOf",
    "propertyOrdering",
    "items",
    "minimum",
    "maximum",
];

/// The `format`s Gemini accepts on a `STRING`.
pub const GEMINI_STRING_FORMATS: &[&str] = &["enum", "date-time"];

fn gemini(document: &Value) -> Value {
    let defs = defs_of(document);
    let mut root = document.clone();
    if let Value::Object(m) = &mut root {
        m.shift_remove("$schema");
        m.shift_remove("$defs");
    }
    let mut expanding = Vec::new();
    gemini_schema(&root, &defs, &mut expanding)
}

/// Rewrites one schema; `expanding` holds the `$defs` keys being inlined above this point.
fn gemini_schema(schema: &Value, defs: &Map<String, Value>, expanding: &mut Vec<String>) -> Value {
    let Value::Object(src) = schema else {
        return json!({});
    };
    // A reference: inline it, unless it is already being inlined (recursion).
    if let Some(r) = src.get("$ref").and_then(Value::as_str) {
        let key = r.trim_start_matches("#/$defs/").to_owned();
        let target = resolve_ref(defs, r).cloned().unwrap_or_else(|| json!({}));
        let mut out = if expanding.contains(&key) {
            recursion_stub(&target, &key)
        } else {
            expanding.push(key);
            let out = gemini_schema(&target, defs, expanding);
            expanding.pop();
            out
        };
        if let (Value::Object(o), Some(d)) = (&mut out, src.get("description")) {
            o.insert("description".into(), d.clone());
        }
        if let (Value::Object(o), Some(d)) = (&mut out, src.get("default")) {
            describe(o, format!("Default: {d}."));
        }
        return out;
    }
    // `anyOf: [T, {"type":"null"}]` (an Option) becomes T with `nullable`.
    if let Some(Value::Array(arms)) = src.get("anyOf") {
        let non_null: Vec<&Value> = arms
            .iter()
            .filter(|a| a.get("type").and_then(Value::as_str) != Some("null"))
            .collect();
        if non_null.len() == 1 && arms.len() == 2 {
            let mut out = gemini_schema(non_null[0], defs, expanding);
            if let Value::Object(o) = &mut out {
                o.insert("nullable".into(), json!(true));
                for key in ["description", "default"] {
                    if let Some(d) = src.get(key) {
                        if key == "default" {
                            describe(o, format!("Default: {d}."));
                        } else {
                            o.insert(key.into(), d.clone());
                        }
                    }
                }
            }
            return out;
        }
    }
    let mut m = Map::new();
    for (k, v) in src {
        match k.as_str() {
            "type" => {
                let t = v.as_str().unwrap_or("object").to_ascii_uppercase();
                m.insert("type".into(), json!(t));
            }
            "properties" => {
                let mut props = Map::new();
                let mut order = Vec::new();
                if let Value::Object(ps) = v {
                    for (name, p) in ps {
                        props.insert(name.clone(), gemini_schema(p, defs, expanding));
                        order.push(json!(name));
                    }
                }
                m.insert("properties".into(), Value::Object(props));
                m.insert("propertyOrdering".into(), Value::Array(order));
            }
            "items" => {
                m.insert("items".into(), gemini_schema(v, defs, expanding));
            }
            "anyOf" | "oneOf" => {
                let arms: Vec<Value> = v
                    .as_array()
                    .map(|arms| {
                        arms.iter()
                            .map(|a| gemini_schema(a, defs, expanding))
                            .collect()
                    })
                    .unwrap_or_default();
                m.insert("anyOf".into(), Value::Array(arms));
            }
            "const" => {
                m.insert("type".into(), json!("STRING"));
                m.insert("enum".into(), json!([v]));
            }
            "additionalProperties" => {
                if let Value::Object(_) = v {
                    describe(&mut m, "An object whose keys are the entries' keys.".into());
                }
            }
            _ => {
                m.insert(k.clone(), v.clone());
            }
        }
    }
    // Integers: `exclusiveMaximum` n is `maximum` n - 1; on numbers it moves into words.
    let is_integer = m.get("type").and_then(Value::as_str) == Some("INTEGER");
    for (exclusive, inclusive, step) in [
        ("exclusiveMaximum", "maximum", -1i128),
        ("exclusiveMinimum", "minimum", 1),
    ] {
        if let Some(v) = m.get(exclusive).cloned() {
            let as_int = v
                .as_i64()
                .map(i128::from)
                .or_else(|| v.as_u64().map(i128::from));
            match as_int {
                Some(n) if is_integer => {
                    m.shift_remove(exclusive);
                    m.insert(inclusive.into(), super::json_schema::int_json(n + step));
                }
                _ => move_to_description(&mut m, exclusive),
            }
        }
    }
    if m.get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| !GEMINI_STRING_FORMATS.contains(&f))
    {
        move_to_description(&mut m, "format");
    }
    for key in ["uniqueItems", "propertyNames", "default"] {
        move_to_description(&mut m, key);
    }
    if m.contains_key("enum") && !m.contains_key("type") {
        m.insert("type".into(), json!("STRING"));
    }
    m.retain(|k, _| GEMINI_KEYWORDS.contains(&k.as_str()));
    // `type` first, for readers.
    if let Some(t) = m.shift_remove("type") {
        m.shift_insert(0, "type".into(), t);
    }
    Value::Object(m)
}

/// What a recursive reference becomes once its type is already being expanded.
fn recursion_stub(target: &Value, key: &str) -> Value {
    let t = target
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("object")
        .to_ascii_uppercase();
    let mut m = Map::new();
    m.insert("type".into(), json!(t));
    m.insert(
        "description".into(),
        json!(format!(
            "A nested {key}, with the same fields as its parent."
        )),
    );
    Value::Object(m)
}

/// The output schemas of every node as the executor takes them (`aelc_runtime::exec::Schemas`):
/// each node's output document and its OpenAI and Anthropic variants, as `aelc build` emits
/// them. `aelc run`/`aelc test` run with them; the Rust glue embeds them.
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
                    document,
                    variants,
                    grammar,
                }
            })
            .collect(),
    )
}

/// The model-facing variants the providers send (spec §9.3): an output that is not an object
/// is wrapped as `{"value": …}` there, and the provider unwraps the answer.
fn variants(name: &str, document: &Value) -> BTreeMap<String, OutputSchema> {
    let wrapped = wraps_root(document);
    let mut out = BTreeMap::new();
    let openai = model_schema(Provider::OpenAi, name, document);
    if let Some(schema) = openai.get("schema") {
        out.insert(
            IrProvider::OpenAi.as_str().to_owned(),
            OutputSchema {
                name: name.to_owned(),
                schema: schema.clone(),
                strict: openai
                    .get("strict")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                wrapped,
            },
        );
    }
    out.insert(
        IrProvider::Anthropic.as_str().to_owned(),
        OutputSchema {
            name: name.to_owned(),
            schema: model_schema(Provider::Anthropic, name, document),
            strict: true,
            wrapped,
        },
    );
    out
}
