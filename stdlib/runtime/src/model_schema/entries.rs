//! `Map`s as bounded lists of `{key, value}` objects: the one form of a map that every
//! provider's structured-output subset accepts (OpenAI strict mode and Anthropic's structured
//! outputs refuse `additionalProperties` as a schema, Gemini drops it).
//!
//! `Map<K, V, N>` (`{"type": "object", "propertyNames": K, "additionalProperties": V,
//! "maxProperties": N}`) becomes
//! `{"type": "array", "items": {"type": "object", "properties": {"key": K, "value": V},
//! "required": ["key", "value"], "additionalProperties": false}, "maxItems": N}` with "keys
//! distinct" in its description. The runtime turns such a list back into an object before the
//! pipeline decodes the answer ([`crate::provider::entries`]); a repeated key is kept
//! twice there, so the decoder refuses it as it refuses a repeated key in a map.

use crate::ordered::{Json as Value, Map};

use super::describe;

/// The keys of an entry object.
pub const ENTRY_KEY: &str = crate::provider::entries::KEY;
pub const ENTRY_VALUE: &str = crate::provider::entries::VALUE;

/// `document` with every map written as a list of entries, and where the maps were (JSON
/// Pointers into the output schema, `$defs` included).
pub fn maps_as_entries(document: &Value) -> (Value, Vec<String>) {
    let mut out = document.clone();
    let mut found = Vec::new();
    walk(&mut out, String::new(), &mut found);
    (out, found)
}

fn is_map(m: &Map) -> bool {
    matches!(m.get("additionalProperties"), Some(Value::Object(_)))
}

fn walk(schema: &mut Value, path: String, found: &mut Vec<String>) {
    let Value::Object(m) = schema else { return };
    if is_map(m) {
        found.push(if path.is_empty() {
            "/".into()
        } else {
            path.clone()
        });
        let rewritten = entries_list(m);
        *m = rewritten;
    }
    for key in ["$defs", "properties"] {
        if let Some(Value::Object(children)) = m.get_mut(key) {
            for (name, child) in children.iter_mut() {
                walk(child, format!("{path}/{key}/{name}"), found);
            }
        }
    }
    if let Some(items) = m.get_mut("items") {
        walk(items, format!("{path}/items"), found);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(arms)) = m.get_mut(key) {
            for (i, arm) in arms.iter_mut().enumerate() {
                walk(arm, format!("{path}/{key}/{i}"), found);
            }
        }
    }
}

/// The list form of one map schema.
fn entries_list(map: &Map) -> Map {
    let key = map
        .get("propertyNames")
        .cloned()
        .unwrap_or_else(|| Value::object([("type", "string".into())]));
    let value = map
        .get("additionalProperties")
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    let mut properties = Map::new();
    properties.insert(ENTRY_KEY.into(), key);
    properties.insert(ENTRY_VALUE.into(), value);
    let mut out = Map::new();
    for k in ["title", "description"] {
        if let Some(v) = map.get(k) {
            out.insert(k.into(), v.clone());
        }
    }
    describe(
        &mut out,
        "A map, written as a list of {key, value} entries whose keys are distinct.".into(),
    );
    out.insert("type".into(), "array".into());
    out.insert(
        "items".into(),
        Value::object([
            ("type", "object".into()),
            ("properties", Value::Object(properties)),
            (
                "required",
                Value::Array(vec![ENTRY_KEY.into(), ENTRY_VALUE.into()]),
            ),
            ("additionalProperties", false.into()),
        ]),
    );
    if let Some(min) = map.get("minProperties") {
        out.insert("minItems".into(), min.clone());
    }
    if let Some(max) = map.get("maxProperties") {
        out.insert("maxItems".into(), max.clone());
    }
    if let Some(default) = map.get("default") {
        out.insert("default".into(), default.clone());
    }
    out
}
