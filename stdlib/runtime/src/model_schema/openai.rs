//! OpenAI's structured outputs (`response_format.json_schema`): strict mode's subset.
//!
//! Strict mode ("Supported schemas" of the Structured Outputs guide): every property in
//! `required` (`Option` fields are already `anyOf` with `null`; a field with a default becomes
//! required, since a model that always writes it is still valid), `additionalProperties:
//! false`, no `default`, `oneOf` written as `anyOf` (the arms are disjoint by their tag, so the
//! meaning is the same), `const` as a one-value `enum` *with its `type`* (a schema without
//! `type` is refused: "schema must have a 'type' key"), and only the keywords OpenAI lists.
//!
//! The documented limits ([`OPENAI_LIMITS`]) are checked on the finished schema; past one the
//! variant is `strict: false` and a `W0802` limitation names the limit, never silently.

use crate::ordered::{Json as Value, Map};

use super::{
    closing_keys_last, describe_unknown, literal_type, move_to_description, walk_subschemas,
    wrap_root, Limitation,
};

/// The keywords OpenAI strict mode accepts (see `tests/it/codegen_model.rs`).
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

/// Strict mode's documented size limits.
#[derive(Clone, Copy, Debug)]
pub struct OpenAiLimits {
    /// Object properties in the whole schema.
    pub properties: usize,
    /// Levels of object nesting.
    pub nesting: usize,
    /// Enum values in the whole schema.
    pub enum_values: usize,
    /// One enum of more than `large_enum` string values may total at most
    /// `large_enum_chars` characters.
    pub large_enum: usize,
    pub large_enum_chars: usize,
    /// Characters of every property name, definition name, enum value and const value.
    pub total_chars: usize,
}

pub const OPENAI_LIMITS: OpenAiLimits = OpenAiLimits {
    properties: 5000,
    nesting: 10,
    enum_values: 1000,
    large_enum: 250,
    large_enum_chars: 15_000,
    total_chars: 120_000,
};

pub(super) fn variant(
    name: &str,
    document: &Value,
    wrap: bool,
    limits: &mut Vec<Limitation>,
) -> Value {
    let mut schema = if wrap {
        wrap_root(document)
    } else {
        document.clone()
    };
    if let Value::Object(m) = &mut schema {
        m.remove("$schema");
        walk(m);
    }
    let broken = over_limits(&schema);
    let strict = broken.is_empty();
    if !strict {
        limits.push(Limitation::NotStrict { broken });
    }
    let mut out = Map::new();
    out.insert("name".into(), wire_name(name).into());
    out.insert("strict".into(), strict.into());
    out.insert("schema".into(), schema);
    Value::Object(out)
}

/// OpenAI's `name`: `a-z A-Z 0-9 _ -`, at most 64 characters.
fn wire_name(name: &str) -> String {
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

fn walk(m: &mut Map) {
    if let Some(Value::Object(defs)) = m.get_mut("$defs") {
        for (_, d) in defs.iter_mut() {
            if let Value::Object(d) = d {
                walk(d);
            }
        }
    }
    if let Some(arms) = m.remove("oneOf") {
        m.insert("anyOf".into(), arms);
    }
    if let Some(c) = m.remove("const") {
        m.insert("enum".into(), Value::Array(vec![c]));
    }
    // Every schema names its type; an enum's is that of its values.
    if !m.contains_key("type") {
        if let Some(t) = m
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|values| literal_type(values))
        {
            m.insert("type".into(), t.into());
        }
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
    if let Some(Value::Object(props)) = m.get("properties") {
        let all: Vec<Value> = props.keys().map(Value::from).collect();
        m.insert("required".into(), Value::Array(all));
        m.insert("additionalProperties".into(), false.into());
    }
    walk_subschemas(m, &["anyOf"], walk);
    closing_keys_last(m);
    // Anything left outside the subset (none should be) is said in words, not sent.
    describe_unknown(m, OPENAI_KEYWORDS);
    alone_ref(m);
}

/// A `$ref` with sibling keywords (a field's description) as `anyOf` of the lone reference:
/// the SDK would inline the target there (endlessly, for a recursive type), and the API wants
/// a reference alone.
pub(super) fn alone_ref(m: &mut Map) {
    if m.len() < 2 || !m.contains_key("$ref") || m.contains_key("$defs") {
        return;
    }
    if let Some(r) = m.remove("$ref") {
        let lone = Value::object([("$ref", r)]);
        m.insert_at(0, "anyOf".into(), Value::Array(vec![lone]));
    }
}

/// The limits the finished `schema` breaks, in words.
fn over_limits(schema: &Value) -> Vec<String> {
    let l = OPENAI_LIMITS;
    let defs = super::defs_of(schema);
    let mut tally = Tally::default();
    for (name, d) in &defs {
        tally.chars += name.chars().count();
        count(d, &mut tally);
    }
    count(schema, &mut tally);
    let mut out = Vec::new();
    if tally.enum_values > l.enum_values {
        out.push(format!(
            "{} enum values, over {}",
            tally.enum_values, l.enum_values
        ));
    }
    if let Some(chars) = tally.large_enum_chars.filter(|c| *c > l.large_enum_chars) {
        out.push(format!(
            "an enum of more than {} values totalling {chars} characters, over {}",
            l.large_enum, l.large_enum_chars
        ));
    }
    if tally.properties > l.properties {
        out.push(format!(
            "{} object properties, over {}",
            tally.properties, l.properties
        ));
    }
    if tally.chars > l.total_chars {
        out.push(format!(
            "{} characters of names and values, over {}",
            tally.chars, l.total_chars
        ));
    }
    let depth = nesting(schema, &defs, &mut Vec::new());
    if depth > l.nesting {
        out.push(format!(
            "{depth} levels of object nesting, over {}",
            l.nesting
        ));
    }
    out
}

#[derive(Default)]
struct Tally {
    enum_values: usize,
    properties: usize,
    chars: usize,
    /// The characters of the longest enum of more than `large_enum` values.
    large_enum_chars: Option<usize>,
}

/// Counts every subschema of `schema` once (`$defs` are counted by the caller, references
/// are not followed).
fn count(schema: &Value, t: &mut Tally) {
    let Value::Object(m) = schema else { return };
    if let Some(Value::Array(values)) = m.get("enum") {
        t.enum_values += values.len();
        let chars: usize = values
            .iter()
            .filter_map(Value::as_str)
            .map(|s| s.chars().count())
            .sum();
        t.chars += chars;
        if values.len() > OPENAI_LIMITS.large_enum {
            t.large_enum_chars = Some(t.large_enum_chars.unwrap_or(0).max(chars));
        }
    }
    if let Some(Value::Object(props)) = m.get("properties") {
        t.properties += props.len();
        for (name, p) in props {
            t.chars += name.chars().count();
            count(p, t);
        }
    }
    if let Some(items) = m.get("items") {
        count(items, t);
    }
    if let Some(Value::Array(arms)) = m.get("anyOf") {
        for arm in arms {
            count(arm, t);
        }
    }
}

/// The most object schemas on one path from `schema` down, through references; a reference
/// already being followed (recursion) adds no level.
fn nesting(schema: &Value, defs: &Map, following: &mut Vec<String>) -> usize {
    let Value::Object(m) = schema else { return 0 };
    if let Some(r) = m.get("$ref").and_then(Value::as_str) {
        let key = super::ref_key(r);
        if following.contains(&key) {
            return 0;
        }
        let Some(target) = super::resolve_ref(defs, r) else {
            return 0;
        };
        following.push(key);
        let depth = nesting(target, defs, following);
        following.pop();
        return depth;
    }
    let mut deepest = 0;
    if let Some(Value::Object(props)) = m.get("properties") {
        for p in props.values() {
            deepest = deepest.max(nesting(p, defs, following));
        }
    }
    if let Some(items) = m.get("items") {
        deepest = deepest.max(nesting(items, defs, following));
    }
    if let Some(Value::Array(arms)) = m.get("anyOf") {
        for arm in arms {
            deepest = deepest.max(nesting(arm, defs, following));
        }
    }
    let own = usize::from(m.get("type").and_then(Value::as_str) == Some("object"));
    own + deepest
}
