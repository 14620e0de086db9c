//! Anthropic: one schema for both ways aelc asks for structured output, a forced tool's
//! `input_schema` and `output_config.format` (structured outputs).
//!
//! Structured outputs take a subset of JSON Schema, and the SDK's `transform_schema`
//! (`anthropic.lib._parse._transform`) rewrites any schema into it: it keeps `type`, `enum`,
//! `const`, `anyOf` (`oneOf` becomes `anyOf`), `allOf`, `$ref`/`$defs`, `title`,
//! `description`, `properties`, `required`, the string formats it lists and `minItems` of 0 or
//! 1; it forces `additionalProperties: false` on every object (so a map's value schema is
//! dropped) and drops `type` beside an `enum`/`const`; every other keyword (`minimum`,
//! `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `minLength`, `maxLength`, `pattern`,
//! `maxItems`, `minItems` over 1, `uniqueItems`, `default`, other formats) is appended to the
//! description as `{key: value}`.
//!
//! This variant is already what that transform returns (a fixed point, checked with the SDK in
//! `tests/it/codegen_model.rs`): maps come as key/value lists (see [`super::entries`]), and each
//! bound the subset drops is said in words in the description. The pipeline enforces every
//! bound of the output type on the answer (spec §6.1), so nothing the transform strips is lost.

use crate::ordered::{Json as Value, Map};

use super::{closing_keys_last, move_to_description, walk_subschemas, wrap_root};

/// The string formats structured outputs accept (the SDK's `SupportedStringFormats`).
pub const ANTHROPIC_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

pub(super) fn variant(document: &Value, wrap: bool) -> Value {
    let mut schema = if wrap {
        wrap_root(document)
    } else {
        document.clone()
    };
    if let Value::Object(m) = &mut schema {
        m.remove("$schema");
        walk(m);
    }
    schema
}

fn walk(m: &mut Map) {
    if let Some(Value::Object(defs)) = m.get_mut("$defs") {
        for (_, d) in defs.iter_mut() {
            if let Value::Object(d) = d {
                walk(d);
            }
        }
    }
    if m.contains_key("$ref") {
        // The transform keeps a reference and nothing beside it but `$defs`.
        super::openai::alone_ref(m);
    }
    if let Some(arms) = m.remove("oneOf") {
        m.insert("anyOf".into(), arms);
    }
    if m.contains_key("enum") || m.contains_key("const") {
        m.remove("type");
    }
    let is_string = m.get("type").and_then(Value::as_str) == Some("string");
    if !is_string
        || m.get("format")
            .and_then(Value::as_str)
            .is_some_and(|f| !ANTHROPIC_FORMATS.contains(&f))
    {
        move_to_description(m, "format");
    }
    if m.get("minItems")
        .and_then(Value::as_u64)
        .is_some_and(|n| n > 1)
        || m.get("type").and_then(Value::as_str) != Some("array")
    {
        move_to_description(m, "minItems");
    }
    for key in [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "pattern",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "propertyNames",
        "default",
    ] {
        move_to_description(m, key);
    }
    if m.get("type").and_then(Value::as_str) == Some("object") {
        if !m.contains_key("properties") {
            m.insert("properties".into(), Value::Object(Map::new()));
        }
        m.insert("additionalProperties".into(), false.into());
    }
    walk_subschemas(m, &["anyOf", "allOf"], walk);
    closing_keys_last(m);
}
