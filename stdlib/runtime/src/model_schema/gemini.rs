//! Gemini: the JSON Schema of `generationConfig.responseJsonSchema`.
//!
//! The subset is the intersection of what the API documents for `responseJsonSchema` and what
//! the `google-genai` SDK's `types.JSONSchema` / `types.Schema.from_json_schema` take (checked
//! with the SDK in `tests/it/codegen_model.rs`): lower-case `type`, `format` (`date-time`, `date`,
//! `time`), `title`, `description`, `enum`, `items`, `minItems`, `maxItems`, `minimum`,
//! `maximum`, `anyOf`, `properties`, `required`. The rest moves into words: string lengths and
//! patterns, exclusive bounds on numbers (on integers `exclusiveMaximum: n` is `maximum: n-1`),
//! `uniqueItems`, defaults. Property order is the schema's key order (what the JSON Schema mode
//! follows; `propertyOrdering` belongs to the older `responseSchema`).
//!
//! Named types are written inline (the API unrolls cyclic `$ref`s only under optional
//! properties, and the SDK's converter drops a cycle to an empty schema). A recursive type is
//! unrolled [`GEMINI_UNROLL`] times along any path and then cut *soundly*: at the cut, every
//! part that would recurse further is left out (an `Option` becomes `null`, a list or map
//! empty, a data-enum arm dropped, a struct holding one required is impossible), so the model
//! is never offered a value the pipeline would refuse, only fewer of the valid ones. A
//! `W0804` limitation says so.

use crate::ordered::{Json as Value, Map};

use super::{describe, describe_unknown, literal_type, move_to_description, Limitation};

/// The fields the variant uses (see the module docs).
pub const GEMINI_KEYWORDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "enum",
    "items",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "anyOf",
    "properties",
    "required",
];

/// The `format`s the variant keeps on a string.
pub const GEMINI_STRING_FORMATS: &[&str] = &["date-time", "date", "time"];

/// How many times one named type may be expanded along a path before recursion is cut.
pub const GEMINI_UNROLL: usize = 3;

/// The most schemas inlined for one variant: a cut against types that refer to each other
/// so much that inlining them would not fit a request.
const MAX_INLINED: usize = 20_000;

struct Inliner {
    defs: Map,
    /// `$defs` keys being inlined above the current schema, outermost first.
    expanding: Vec<String>,
    /// The types whose recursion was cut.
    cut: Vec<String>,
    inlined: usize,
}

pub(super) fn variant(document: &Value, limits: &mut Vec<Limitation>) -> Value {
    let mut root = document.clone();
    if let Value::Object(m) = &mut root {
        m.remove("$schema");
        m.remove("$defs");
    }
    let mut inliner = Inliner {
        defs: super::defs_of(document),
        expanding: Vec::new(),
        cut: Vec::new(),
        inlined: 0,
    };
    // A checked type always has a finite value (E0313), so the root is never impossible; the
    // fallback only keeps a broken IR from producing no schema at all.
    let out = inliner.schema(&root).unwrap_or_else(|| {
        Value::object([
            ("type", "object".into()),
            ("properties", Value::Object(Map::new())),
        ])
    });
    if !inliner.cut.is_empty() {
        limits.push(Limitation::RecursionCut {
            types: inliner.cut.clone(),
            levels: GEMINI_UNROLL,
        });
    }
    out
}

impl Inliner {
    /// The rewritten schema, or `None` when no value of it fits under the recursion cut.
    fn schema(&mut self, schema: &Value) -> Option<Value> {
        let Value::Object(src) = schema else {
            return Some(Value::Object(Map::new()));
        };
        self.inlined += 1;
        if let Some(r) = src.get("$ref").and_then(Value::as_str) {
            return self.reference(r, src);
        }
        let mut m = Map::new();
        for (k, v) in src {
            match k.as_str() {
                "properties" => {
                    let required: Vec<&str> = src
                        .get("required")
                        .and_then(Value::as_array)
                        .map(|r| r.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    let mut props = Map::new();
                    if let Value::Object(ps) = v {
                        for (name, p) in ps {
                            match self.schema(p) {
                                Some(p) => {
                                    props.insert(name.clone(), p);
                                }
                                // A required field with no value left: no object either.
                                None if required.contains(&name.as_str()) => return None,
                                // An optional one: the model leaves it out.
                                None => {}
                            }
                        }
                    }
                    m.insert("properties".into(), Value::Object(props));
                }
                "required" => {}
                "items" => match self.schema(v) {
                    Some(items) => {
                        m.insert("items".into(), items);
                    }
                    None => {
                        if src.get("minItems").and_then(Value::as_u64).unwrap_or(0) > 0 {
                            return None;
                        }
                        // No item fits: the empty list is the one value left.
                        m.insert("items".into(), Value::object([("type", "string".into())]));
                        m.insert("maxItems".into(), 0u64.into());
                    }
                },
                "anyOf" | "oneOf" => {
                    let mut arms = Vec::new();
                    for arm in v.as_array().into_iter().flatten() {
                        if let Some(arm) = self.schema(arm) {
                            arms.push(arm);
                        }
                    }
                    match arms.len() {
                        0 => return None,
                        1 => {
                            // Only one arm left (an `Option` cut to `null`, one data-enum arm):
                            // it is the schema.
                            if let Some(Value::Object(arm)) = arms.pop() {
                                for (ak, av) in arm {
                                    if ak != "description" || !m.contains_key("description") {
                                        m.insert(ak, av);
                                    }
                                }
                            }
                        }
                        _ => {
                            m.insert("anyOf".into(), Value::Array(arms));
                        }
                    }
                }
                "const" => {
                    m.insert("enum".into(), Value::Array(vec![v.clone()]));
                }
                "maxItems" if m.get("maxItems") == Some(&Value::from(0u64)) => {}
                _ => {
                    m.insert(k.clone(), v.clone());
                }
            }
        }
        if let Some(Value::Object(props)) = m.get("properties") {
            let names: Vec<Value> = props
                .keys()
                .filter(|name| {
                    src.get("required")
                        .and_then(Value::as_array)
                        .is_some_and(|r| r.iter().any(|x| x.as_str() == Some(name.as_str())))
                })
                .map(Value::from)
                .collect();
            if !names.is_empty() {
                m.insert("required".into(), Value::Array(names));
            }
        }
        Some(finish(m))
    }

    fn reference(&mut self, r: &str, src: &Map) -> Option<Value> {
        let key = super::ref_key(r);
        let depth = self.expanding.iter().filter(|k| **k == key).count();
        if depth >= GEMINI_UNROLL || self.inlined > MAX_INLINED {
            if !self.cut.contains(&key) {
                self.cut.push(key);
            }
            return None;
        }
        let target = super::resolve_ref(&self.defs, r)
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        self.expanding.push(key);
        let out = self.schema(&target);
        self.expanding.pop();
        let mut out = out?;
        if let Value::Object(o) = &mut out {
            if let Some(d) = src.get("description") {
                o.insert("description".into(), d.clone());
            }
            if let Some(d) = src.get("default") {
                describe(o, format!("Default: {d}."));
            }
        }
        Some(out)
    }
}

/// The keyword-level rewrites of one schema whose children are done.
fn finish(mut m: Map) -> Value {
    if !m.contains_key("type") && !m.contains_key("anyOf") {
        if let Some(t) = m
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|values| literal_type(values))
        {
            m.insert("type".into(), t.into());
        }
    }
    // Integers: `exclusiveMaximum` n is `maximum` n - 1; on numbers it moves into words.
    let is_integer = m.get("type").and_then(Value::as_str) == Some("integer");
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
                    m.remove(exclusive);
                    m.insert(inclusive.into(), super::int_json(n + step));
                }
                _ => move_to_description(&mut m, exclusive),
            }
        }
    }
    let is_string = m.get("type").and_then(Value::as_str) == Some("string");
    if !is_string
        || m.get("format")
            .and_then(Value::as_str)
            .is_some_and(|f| !GEMINI_STRING_FORMATS.contains(&f))
    {
        move_to_description(&mut m, "format");
    }
    // An enum of integers or numbers: the SDK's `Schema` takes enum values as strings only.
    if !is_string && m.contains_key("enum") {
        if let Some(values) = m.remove("enum") {
            describe(&mut m, format!("One of {values}."));
        }
    }
    for key in [
        "minLength",
        "maxLength",
        "pattern",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "propertyNames",
        "default",
        "additionalProperties",
    ] {
        if key == "additionalProperties" {
            m.remove(key);
        } else {
            move_to_description(&mut m, key);
        }
    }
    describe_unknown(&mut m, GEMINI_KEYWORDS);
    // `type` first, `required` after `properties`, for readers.
    if let Some(t) = m.remove("type") {
        m.insert_at(0, "type".into(), t);
    }
    if let Some(r) = m.remove("required") {
        m.insert("required".into(), r);
    }
    Value::Object(m)
}
