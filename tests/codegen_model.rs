//! The model-facing variants (spec §9.3) against each provider's published rules.
//!
//! OpenAI — "Structured Outputs", section "Supported schemas"
//! (<https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>):
//! - supported types: string, number, boolean, integer, object, array, enum, anyOf;
//! - the root must be an object, not `anyOf`;
//! - every object has `additionalProperties: false`, and every property is listed in
//!   `required` (optional fields are expressed as a union with `null`);
//! - supported string keywords: `pattern`, `format` (date-time, time, date, duration, email,
//!   hostname, ipv4, ipv6, uuid); number keywords: `minimum`, `maximum`, `exclusiveMinimum`,
//!   `exclusiveMaximum`, `multipleOf`; array keywords: `minItems`, `maxItems`;
//! - not supported: `minLength`/`maxLength`, `patternProperties`, `unevaluatedProperties`,
//!   `propertyNames`, `minProperties`/`maxProperties`, `unevaluatedItems`, `contains`,
//!   `uniqueItems`, `allOf`, `not`, `oneOf`, `if`/`then`/`else`, `default`;
//! - `$defs` and `$ref` (including recursion) are supported; at most 10 levels of nesting and
//!   5000 object properties in total.
//!
//! Gemini — `Schema` object of the API reference (<https://ai.google.dev/api/caching#Schema>)
//! and "Structured output" (<https://ai.google.dev/gemini-api/docs/structured-output>): a
//! select subset of the OpenAPI 3.0 Schema object with the fields `type` (`STRING NUMBER
//! INTEGER BOOLEAN ARRAY OBJECT`), `format`, `title`, `description`, `nullable`, `enum`,
//! `maxItems`, `minItems`, `properties`, `required`, `minProperties`, `maxProperties`,
//! `minLength`, `maxLength`, `pattern`, `example`, `anyOf`, `propertyOrdering`, `default`,
//! `items`, `minimum`, `maximum`; string formats `enum` and `date-time`. No `$ref`/`$defs`,
//! `additionalProperties`, `oneOf`, `const` or `exclusiveMinimum`/`exclusiveMaximum`.
//!
//! Anthropic — "Tool use", `input_schema` (<https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use>):
//! a JSON Schema object describing the tool's parameters, whose root is `"type": "object"`.
//!
//! MCP — "Tools", tool definition (<https://modelcontextprotocol.io/specification/2025-06-18/server/tools>):
//! `name`, `title?`, `description?`, `inputSchema` (a JSON Schema with `"type": "object"`),
//! `outputSchema?` (likewise, for `structuredContent`).

mod codegen_fixtures;

use std::path::Path;

use aelc::codegen::emit::emit;
use aelc::codegen::model_schema::{GEMINI_KEYWORDS, OPENAI_FORMATS, OPENAI_KEYWORDS};
use codegen_fixtures::*;
use serde_json::Value;

fn files() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for program in [review_program(), kitchen_program()] {
        let emission = emit(&program, &[]);
        assert!(!emission.has_errors(), "{:?}", emission.diagnostics);
        for (path, bytes) in emission.files {
            let p = path.to_string_lossy().into_owned();
            if p.starts_with("model/") || p == "mcp/tools.json" {
                out.push((
                    format!("{}:{p}", program.package.name),
                    serde_json::from_slice(&bytes).unwrap(),
                ));
            }
        }
    }
    out
}

fn with_suffix(suffix: &str) -> Vec<(String, Value)> {
    files()
        .into_iter()
        .filter(|(p, _)| p.ends_with(suffix))
        .collect()
}

/// Calls `f` on every subschema, with the key path leading to it.
fn each_schema(
    schema: &Value,
    path: &str,
    f: &mut dyn FnMut(&str, &serde_json::Map<String, Value>),
) {
    let Value::Object(m) = schema else { return };
    f(path, m);
    for key in ["properties", "$defs"] {
        if let Some(Value::Object(children)) = m.get(key) {
            for (name, child) in children {
                each_schema(child, &format!("{path}/{key}/{name}"), f);
            }
        }
    }
    for key in ["items", "additionalProperties", "propertyNames"] {
        if let Some(child @ Value::Object(_)) = m.get(key) {
            each_schema(child, &format!("{path}/{key}"), f);
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(arms)) = m.get(key) {
            for (i, arm) in arms.iter().enumerate() {
                each_schema(arm, &format!("{path}/{key}/{i}"), f);
            }
        }
    }
}

#[test]
fn openai_variant_follows_strict_mode_rules() {
    let variants = with_suffix(".openai.json");
    assert!(variants.len() >= 3);
    let mut strict_seen = 0;
    for (file, v) in variants {
        assert!(v["name"]
            .as_str()
            .unwrap()
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
        let schema = &v["schema"];
        assert_eq!(schema["type"], "object", "{file}: root must be an object");
        assert!(
            schema.get("anyOf").is_none(),
            "{file}: root must not be anyOf"
        );
        if v["strict"] != Value::Bool(true) {
            // Only a map (additionalProperties: schema) may turn strict mode off.
            let mut has_map = false;
            each_schema(schema, "", &mut |_, m| {
                has_map |= matches!(m.get("additionalProperties"), Some(Value::Object(_)));
            });
            assert!(has_map, "{file}: strict is off without a map");
            continue;
        }
        strict_seen += 1;
        let mut depth_ok = true;
        each_schema(schema, "", &mut |path, m| {
            for key in m.keys() {
                assert!(
                    OPENAI_KEYWORDS.contains(&key.as_str()),
                    "{file}{path}: `{key}` is not supported"
                );
            }
            if let Some(f) = m.get("format").and_then(Value::as_str) {
                assert!(OPENAI_FORMATS.contains(&f), "{file}{path}: format {f}");
            }
            if let Some(Value::Object(props)) = m.get("properties") {
                assert_eq!(
                    m.get("additionalProperties"),
                    Some(&Value::Bool(false)),
                    "{file}{path}"
                );
                let required: Vec<&str> = m["required"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                for name in props.keys() {
                    assert!(
                        required.contains(&name.as_str()),
                        "{file}{path}: `{name}` not required"
                    );
                }
            }
            depth_ok &= path.matches("/properties/").count() <= 10;
        });
        assert!(depth_ok, "{file}: nests deeper than 10 levels");
    }
    assert!(strict_seen >= 2);
}

#[test]
fn openai_moves_unsupported_bounds_into_descriptions() {
    let (_, v) = with_suffix("review.openai.json").remove(0);
    let summary = &v["schema"]["properties"]["summary"];
    assert!(summary.get("maxLength").is_none());
    assert!(summary["description"]
        .as_str()
        .unwrap()
        .contains("At most 1000 characters."));
}

#[test]
fn gemini_variant_uses_only_schema_fields() {
    let variants = with_suffix(".gemini.json");
    assert!(variants.len() >= 3);
    for (file, v) in variants {
        let text = v.to_string();
        assert!(
            !text.contains("$ref") && !text.contains("$defs"),
            "{file}: no references"
        );
        each_schema(&v, "", &mut |path, m| {
            for key in m.keys() {
                assert!(
                    GEMINI_KEYWORDS.contains(&key.as_str()),
                    "{file}{path}: `{key}`"
                );
            }
            if let Some(t) = m.get("type").and_then(Value::as_str) {
                assert!(
                    ["STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"].contains(&t),
                    "{file}{path}: type {t}"
                );
                if let Some(f) = m.get("format").and_then(Value::as_str) {
                    assert!(
                        t == "STRING" && ["enum", "date-time"].contains(&f),
                        "{file}{path}: format {f}"
                    );
                }
            }
            if let Some(Value::Object(props)) = m.get("properties") {
                let order: Vec<&str> = m["propertyOrdering"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                let names: Vec<&str> = props.keys().map(String::as_str).collect();
                assert_eq!(order, names, "{file}{path}");
            }
        });
    }
}

#[test]
fn anthropic_variant_is_json_schema_with_an_object_root() {
    let variants = with_suffix(".anthropic.json");
    assert!(variants.len() >= 3);
    for (file, v) in variants {
        assert_eq!(v["type"], "object", "{file}");
        assert!(v.get("$schema").is_none());
        jsonschema::draft202012::meta::validate(&v).unwrap_or_else(|e| panic!("{file}: {e}"));
    }
}

#[test]
fn mcp_tools_follow_the_tool_definition() {
    for (file, v) in with_suffix("mcp/tools.json") {
        for tool in v["tools"].as_array().unwrap() {
            let name = tool["name"].as_str().unwrap();
            assert!(!name.is_empty() && name.len() <= 128);
            assert!(name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)));
            for key in ["inputSchema", "outputSchema"] {
                assert_eq!(tool[key]["type"], "object", "{file} {name} {key}");
                jsonschema::draft202012::meta::validate(&tool[key]).unwrap();
            }
            for key in tool.as_object().unwrap().keys() {
                assert!([
                    "name",
                    "title",
                    "description",
                    "inputSchema",
                    "outputSchema"
                ]
                .contains(&key.as_str()));
            }
        }
    }
}

#[test]
fn model_variant_snapshots() {
    let emission = emit(&kitchen_program(), &[]);
    for provider in ["openai", "gemini", "anthropic"] {
        let path = format!("model/draw.{provider}.json");
        let text = String::from_utf8(emission.files[Path::new(&path)].clone()).unwrap();
        insta::assert_snapshot!(format!("kitchen_draw_{provider}"), text);
    }
}
