//! Maps back from key/value lists. The model-facing schemas write a `Map` as a list of
//! `{"key": K, "value": V}` objects (no provider's strict subset takes a map); this turns such a
//! list in an answer back into the JSON object the output type describes, before the pipeline
//! decodes it (spec §6.1 step 2).
//!
//! The rewrite is textual and sound: everything else in the answer is copied as the model wrote
//! it (number spellings, repeated keys), a key is copied as its JSON string literal, and two
//! entries with the same key become two members with that key, which the decoder refuses like
//! any repeated key in a map. A list that is not exactly such entries is left alone, and the
//! decoder says what is wrong with it; an answer that already holds an object there (a
//! recorded answer) is left alone too.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

use super::answer::{within_limit, Answer, FinishReason};
use super::error::ProviderError;

/// The members of an entry object.
pub const KEY: &str = "key";
pub const VALUE: &str = "value";

/// The most `$ref`s followed in a row, and the deepest answer rewritten: far past the
/// platform's nesting bound, so only a broken schema reaches them.
const MAX_DEPTH: usize = 128;

/// Whether an output schema `document` holds a map, so that answers to its model-facing
/// variants need [`restore`].
pub fn has_maps(document: &Value) -> bool {
    match document {
        Value::Object(m) => {
            matches!(m.get("additionalProperties"), Some(Value::Object(_)))
                || m.values().any(has_maps)
        }
        Value::Array(items) => items.iter().any(has_maps),
        _ => false,
    }
}

/// The answer with every key/value list at a map's place turned back into an object; `document`
/// is the output schema (draft 2020-12, `$defs` at its root). A length-cut answer stays as it
/// is, like [`super::answer::unwrap_value`] leaves it.
pub fn restore(answer: Answer, document: &Value, limit: u64) -> Result<Answer, ProviderError> {
    if answer.finish_reason == FinishReason::Length {
        return Ok(answer);
    }
    let Ok(raw) = serde_json::from_str::<&RawValue>(&answer.text) else {
        return Ok(answer);
    };
    let defs = document.get("$defs");
    match rewrite(raw, document, defs, 0) {
        Some(text) => Ok(Answer {
            text: within_limit(text, limit)?,
            ..answer
        }),
        None => Ok(answer),
    }
}

/// One JSON value, one level deep: members and items stay raw.
enum Node<'a> {
    Object(Vec<(String, &'a RawValue)>),
    Array(Vec<&'a RawValue>),
    Scalar,
}

impl<'de> Deserialize<'de> for Node<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Node<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    members.push((key, map.next_value::<&'de RawValue>()?));
                }
                Ok(Node::Object(members))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<&'de RawValue>()? {
                    items.push(item);
                }
                Ok(Node::Array(items))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Node<'de>, E> {
                Ok(Node::Scalar)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Node<'de>, E> {
                Ok(Node::Scalar)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Node<'de>, E> {
                Ok(Node::Scalar)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Node<'de>, E> {
                Ok(Node::Scalar)
            }
            fn visit_str<E>(self, _: &str) -> Result<Node<'de>, E> {
                Ok(Node::Scalar)
            }
            fn visit_unit<E>(self) -> Result<Node<'de>, E> {
                Ok(Node::Scalar)
            }
        }
        d.deserialize_any(V)
    }
}

fn node(raw: &RawValue) -> Option<Node<'_>> {
    serde_json::from_str(raw.get()).ok()
}

/// `schema` with `$ref`s followed.
fn resolve<'s>(mut schema: &'s Value, defs: Option<&'s Value>) -> Option<&'s Value> {
    for _ in 0..MAX_DEPTH {
        let Some(r) = schema.get("$ref").and_then(Value::as_str) else {
            return Some(schema);
        };
        let key = r
            .strip_prefix("#/$defs/")?
            .replace("~1", "/")
            .replace("~0", "~");
        schema = defs?.get(&key)?;
    }
    None
}

/// The rewritten text of `raw` under `schema`, or `None` when nothing changes.
fn rewrite(raw: &RawValue, schema: &Value, defs: Option<&Value>, depth: usize) -> Option<String> {
    if depth > MAX_DEPTH {
        return None;
    }
    let schema = resolve(schema, defs)?;
    let node = node(raw)?;
    if let Some(arms) = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
    {
        let arm = arms
            .iter()
            .filter_map(|a| resolve(a, defs))
            .find(|a| fits(&node, a))?;
        return rewrite(raw, arm, defs, depth + 1);
    }
    match (&node, schema.get("additionalProperties")) {
        (Node::Array(items), Some(value @ Value::Object(_))) => {
            let mut members = Vec::with_capacity(items.len());
            for item in items {
                let (key, value_raw) = entry(item)?;
                let text = rewrite(value_raw, value, defs, depth + 1)
                    .unwrap_or_else(|| value_raw.get().to_owned());
                members.push(format!("{key}:{text}"));
            }
            return Some(format!("{{{}}}", members.join(",")));
        }
        (Node::Object(members), Some(value @ Value::Object(_))) => {
            return object(members, |_| Some(value), defs, depth);
        }
        _ => {}
    }
    match &node {
        Node::Object(members) => {
            let props = schema.get("properties");
            object(members, |k| props?.get(k), defs, depth)
        }
        Node::Array(items) => {
            let item_schema = schema.get("items")?;
            let mut changed = false;
            let texts: Vec<String> = items
                .iter()
                .map(|item| match rewrite(item, item_schema, defs, depth + 1) {
                    Some(text) => {
                        changed = true;
                        text
                    }
                    None => item.get().to_owned(),
                })
                .collect();
            changed.then(|| format!("[{}]", texts.join(",")))
        }
        Node::Scalar => None,
    }
}

/// An object's members rewritten under the schemas `schema_of` gives by name.
fn object<'s>(
    members: &[(String, &RawValue)],
    schema_of: impl Fn(&str) -> Option<&'s Value>,
    defs: Option<&Value>,
    depth: usize,
) -> Option<String> {
    let mut changed = false;
    let texts: Vec<String> = members
        .iter()
        .map(|(k, v)| {
            let text = schema_of(k)
                .and_then(|s| rewrite(v, s, defs, depth + 1))
                .inspect(|_| changed = true)
                .unwrap_or_else(|| v.get().to_owned());
            // The key is re-escaped: its spelling is not part of the value.
            format!("{}:{text}", Value::String(k.clone()))
        })
        .collect();
    changed.then(|| format!("{{{}}}", texts.join(",")))
}

/// A `{"key": "…", "value": …}` object: the key's string literal as written, and the value.
fn entry(item: &RawValue) -> Option<(&str, &RawValue)> {
    let Node::Object(members) = node(item)? else {
        return None;
    };
    let [(k1, v1), (k2, v2)] = members.as_slice() else {
        return None;
    };
    let (key, value) = match (k1.as_str(), k2.as_str()) {
        (KEY, VALUE) => (*v1, *v2),
        (VALUE, KEY) => (*v2, *v1),
        _ => return None,
    };
    let key = key.get();
    key.starts_with('"').then_some((key, value))
}

/// Whether `node` may be a value of the (resolved) arm: its JSON kind, and for an object its
/// pinned tags (`const` members).
fn fits(node: &Node<'_>, arm: &Value) -> bool {
    let kind = arm.get("type").and_then(Value::as_str);
    match node {
        Node::Array(_) => {
            kind == Some("array")
                || matches!(arm.get("additionalProperties"), Some(Value::Object(_)))
        }
        Node::Scalar => !matches!(kind, Some("object" | "array")) && arm.get("anyOf").is_none(),
        Node::Object(members) => {
            if kind.is_some_and(|k| k != "object") {
                return false;
            }
            let Some(Value::Object(props)) = arm.get("properties") else {
                return kind == Some("object");
            };
            props.iter().all(|(name, p)| match p.get("const") {
                Some(pinned) => members.iter().any(|(k, v)| {
                    k == name
                        && serde_json::from_str::<Value>(v.get()).ok().as_ref() == Some(pinned)
                }),
                None => true,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::Usage;
    use serde_json::json;

    fn answer(text: &str) -> Answer {
        Answer {
            text: text.into(),
            finish_reason: FinishReason::Stop,
            usage: Usage::default(),
        }
    }

    fn doc() -> Value {
        json!({
            "type": "object",
            "properties": {
                "scores": {"type": "object", "propertyNames": {"type": "string"},
                           "additionalProperties": {"$ref": "#/$defs/Score"}, "maxProperties": 4},
                "shape": {"oneOf": [
                    {"type": "object", "properties": {"kind": {"const": "tags"},
                        "tags": {"type": "object", "additionalProperties": {"type": "integer"}}}},
                    {"type": "object", "properties": {"kind": {"const": "none"}}}
                ]},
                "nested": {"type": "array", "items": {"anyOf": [
                    {"type": "object", "additionalProperties": {"type": "number"}},
                    {"type": "null"}
                ]}}
            },
            "$defs": {"Score": {"type": "number"}}
        })
    }

    fn restored(text: &str) -> String {
        restore(answer(text), &doc(), 1 << 20).unwrap().text
    }

    #[test]
    fn lists_of_entries_become_objects_everywhere_a_map_is() {
        assert!(has_maps(&doc()));
        assert_eq!(
            restored(
                r#"{"scores": [{"key": "a", "value": 1.50}, {"value": 2e0, "key": "b\u0041"}]}"#
            ),
            r#"{"scores":{"a":1.50,"b\u0041":2e0}}"#
        );
        assert_eq!(
            restored(r#"{"shape": {"kind": "tags", "tags": [{"key": "x", "value": 3}]}}"#),
            r#"{"shape":{"kind":"tags","tags":{"x":3}}}"#
        );
        assert_eq!(
            restored(r#"{"nested": [null, [{"key": "k", "value": 0.5}]]}"#),
            r#"{"nested":[null,{"k":0.5}]}"#
        );
    }

    #[test]
    fn a_repeated_key_stays_repeated_for_the_decoder_to_refuse() {
        assert_eq!(
            restored(r#"{"scores": [{"key": "a", "value": 1}, {"key": "a", "value": 2}]}"#),
            r#"{"scores":{"a":1,"a":2}}"#
        );
    }

    #[test]
    fn anything_else_is_left_as_written() {
        for text in [
            r#"{"scores": {"a": 1}}"#,
            r#"{"scores": [{"key": 1, "value": 1}]}"#,
            r#"{"scores": [{"key": "a", "value": 1, "extra": 0}]}"#,
            r#"{"shape": {"kind": "none"}}"#,
            r#"not json"#,
            r#"[1, 2]"#,
        ] {
            assert_eq!(restored(text), text);
        }
        let cut = Answer {
            finish_reason: FinishReason::Length,
            ..answer(r#"{"scores": [{"key": "a", "value": 1}]}"#)
        };
        assert_eq!(restore(cut.clone(), &doc(), 1 << 20), Ok(cut));
    }
}
