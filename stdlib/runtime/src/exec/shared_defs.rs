//! The shared definitions of a build (`schemas/defs.json`, spec §9), and turning a node schema
//! that refers to them back into a self-contained document.
//!
//! `aelc build` writes the schema of every named type a node schema reaches once, into
//! `schemas/defs.json` under `$defs`, and the node schemas beside it refer to them as
//! `defs.json#/$defs/<key>` (a reference
//! relative to the file, which a validator loading files by path resolves). A consumer that wants
//! one document per node (a prompt's `{{ output_schema }}`, an API listing, an OpenAPI document)
//! calls [`inline_shared`]: the definitions the document needs, and those they need, are copied
//! into its own `$defs` (sorted by key, last, as the compiler writes a self-contained document)
//! and its references become local (`#/$defs/<key>`). The result is the very document
//! `aelc schema` prints.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value as Json};

/// The file of the shared definitions, in `schemas/` beside the node schemas.
pub const DEFS_FILE: &str = "defs.json";

/// What a reference into the shared definitions starts with (then the escaped key).
pub const SHARED_REF_PREFIX: &str = "defs.json#/$defs/";

/// What a local reference starts with.
const LOCAL_REF_PREFIX: &str = "#/$defs/";

/// Keywords whose value is data, not a schema: a `$ref` key inside a `default` is a value.
const DATA_KEYWORDS: [&str; 4] = ["default", "const", "enum", "examples"];

/// Keywords whose value maps names (a property's, a definition's) to schemas: a property
/// named `default` is a schema like any other.
const NAME_MAPS: [&str; 4] = [
    "properties",
    "$defs",
    "patternProperties",
    "dependentSchemas",
];

/// The walks over a schema and the inlining, for one JSON tree type (`Json` and `Map` in scope
/// where it is expanded): the same code for `serde_json::Value` (the compiler, the gateway) and
/// for [`crate::ordered::Json`] (the runtime's schemas, whose key order is their meaning).
macro_rules! schema_walks {
    () => {
        /// Whether `document` refers to the shared definitions anywhere.
        pub fn refers_to_shared(document: &Json) -> bool {
            let mut found = false;
            visit_refs(document, &mut |r| found |= r.starts_with(SHARED_REF_PREFIX));
            found
        }

        /// Makes `document` self-contained from `defs` (the `defs.json` document): every definition it
        /// reaches through `defs.json#/$defs/…` goes into its `$defs`, and every such reference becomes
        /// local. `Err` names a key `defs` does not define (a `defs.json` from another build).
        pub fn inline_shared(document: &mut Json, defs: &Json) -> Result<(), String> {
            let shared = defs.get("$defs").and_then(Json::as_object);
            let mut wanted: BTreeSet<String> = BTreeSet::new();
            visit_refs(document, &mut |r| {
                if let Some(key) = r.strip_prefix(SHARED_REF_PREFIX) {
                    wanted.insert(unescape(key));
                }
            });
            if wanted.is_empty() {
                return Ok(());
            }
            let mut copied: BTreeMap<String, Json> = BTreeMap::new();
            let mut pending: Vec<String> = wanted.into_iter().collect();
            while let Some(key) = pending.pop() {
                if copied.contains_key(&key) {
                    continue;
                }
                let def = shared.and_then(|s| s.get(&key)).ok_or_else(|| {
                    format!("{DEFS_FILE} has no definition `{key}` (it is from another build: rebuild)")
                })?;
                visit_refs(def, &mut |r| {
                    if let Some(k) = r.strip_prefix(LOCAL_REF_PREFIX) {
                        pending.push(unescape(k));
                    }
                });
                copied.insert(key, def.clone());
            }
            rewrite_refs(document, &|r| {
                r.strip_prefix(SHARED_REF_PREFIX)
                    .map(|key| format!("{LOCAL_REF_PREFIX}{key}"))
            });
            if let Json::Object(m) = document {
                let mut all = match m.remove("$defs") {
                    Some(Json::Object(own)) => own,
                    _ => Map::new(),
                };
                all.extend(copied);
                let sorted: BTreeMap<String, Json> = all.into_iter().collect();
                m.insert("$defs".into(), Json::Object(sorted.into_iter().collect()));
            }
            Ok(())
        }


        /// Calls `f` with every `$ref` of the schema `value` (not those inside data keywords).
        pub fn visit_refs(value: &Json, f: &mut dyn FnMut(&str)) {
            // (value, whether its keys are names rather than keywords)
            let mut stack = vec![(value, false)];
            while let Some((v, names)) = stack.pop() {
                match v {
                    Json::Object(m) => {
                        for (k, child) in m {
                            if names {
                                stack.push((child, false));
                            } else if k == "$ref" {
                                if let Json::String(r) = child {
                                    f(r);
                                }
                            } else if !DATA_KEYWORDS.contains(&k.as_str()) {
                                stack.push((child, NAME_MAPS.contains(&k.as_str())));
                            }
                        }
                    }
                    Json::Array(items) => stack.extend(items.iter().map(|i| (i, false))),
                    _ => {}
                }
            }
        }

        /// Replaces every `$ref` of the schema `value` for which `f` gives a new one (not those inside
        /// data keywords).
        pub fn rewrite_refs(value: &mut Json, f: &dyn Fn(&str) -> Option<String>) {
            let mut stack = vec![(value, false)];
            while let Some((v, names)) = stack.pop() {
                match v {
                    Json::Object(m) => {
                        for (k, child) in m.iter_mut() {
                            if names {
                                stack.push((child, false));
                            } else if k == "$ref" {
                                if let Json::String(r) = child {
                                    if let Some(new) = f(r) {
                                        *r = new;
                                    }
                                }
                            } else if !DATA_KEYWORDS.contains(&k.as_str()) {
                                let is_names = NAME_MAPS.contains(&k.as_str());
                                stack.push((child, is_names));
                            }
                        }
                    }
                    Json::Array(items) => stack.extend(items.iter_mut().map(|i| (i, false))),
                    _ => {}
                }
            }
        }
    };
}

schema_walks!();

/// The same functions over [`crate::ordered::Json`], which keeps the document's key order
/// whatever `serde_json`'s features ([`super::Schemas::load`]).
pub mod ordered {
    use super::{
        unescape, DATA_KEYWORDS, DEFS_FILE, LOCAL_REF_PREFIX, NAME_MAPS, SHARED_REF_PREFIX,
    };
    use crate::ordered::{Json, Map};
    use std::collections::{BTreeMap, BTreeSet};

    schema_walks!();
}

/// A `$defs` key from its JSON Pointer token (RFC 6901: `~1` → `/`, `~0` → `~`).
fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn defs() -> Json {
        json!({"$defs": {
            "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
            "B": {"type": "string", "default": {"$ref": "not a reference"}},
            "C": {"type": "integer"},
            "x/y": {"type": "boolean"}
        }})
    }

    #[test]
    fn reachable_definitions_are_copied_and_references_made_local() {
        let mut doc = json!({"type": "object", "properties": {
            "a": {"$ref": "defs.json#/$defs/A"},
            "default": {"$ref": "defs.json#/$defs/C"},
            "s": {"$ref": "defs.json#/$defs/x~1y"}
        }});
        assert!(refers_to_shared(&doc));
        inline_shared(&mut doc, &defs()).unwrap();
        assert!(!refers_to_shared(&doc));
        assert_eq!(doc["properties"]["a"]["$ref"], "#/$defs/A");
        assert_eq!(doc["properties"]["s"]["$ref"], "#/$defs/x~1y");
        let keys: Vec<&String> = doc["$defs"].as_object().unwrap().keys().collect();
        // A property named `default` is a schema, not a value.
        assert_eq!(doc["properties"]["default"]["$ref"], "#/$defs/C");
        assert_eq!(keys, ["A", "B", "C", "x/y"]);
        // A value that looks like a reference is data, left alone.
        assert_eq!(doc["$defs"]["B"]["default"]["$ref"], "not a reference");
    }

    #[test]
    fn a_document_without_shared_references_is_unchanged() {
        let mut doc = json!({"type": "string", "default": {"$ref": "defs.json#/$defs/A"}});
        let before = doc.clone();
        inline_shared(&mut doc, &defs()).unwrap();
        assert_eq!(doc, before);
    }

    /// The walks over `ordered::Json` (`Schemas::load`) give the same document as over
    /// `serde_json::Value`, with the document's own key order kept in every build.
    #[test]
    fn the_ordered_walks_keep_the_key_order() {
        let text = r#"{"type":"object","properties":{"zeta":{"$ref":"defs.json#/$defs/C"},"alpha":{"$ref":"defs.json#/$defs/A"}},"required":["zeta","alpha"]}"#;
        let mut doc: crate::ordered::Json = serde_json::from_str(text).unwrap_or_default();
        let shared = crate::ordered::Json::from(defs());
        assert!(ordered::refers_to_shared(&doc));
        ordered::inline_shared(&mut doc, &shared).unwrap();
        assert!(!ordered::refers_to_shared(&doc));
        let written = doc.to_string();
        assert!(
            written.starts_with(
                r##"{"type":"object","properties":{"zeta":{"$ref":"#/$defs/C"},"alpha":"##
            ),
            "{written}"
        );
        let mut plain: Json = serde_json::from_str(text).unwrap_or_default();
        inline_shared(&mut plain, &defs()).unwrap();
        assert_eq!(doc.to_value(), plain);
    }

    #[test]
    fn a_missing_definition_is_named() {
        let mut doc = json!({"$ref": "defs.json#/$defs/Gone"});
        let err = inline_shared(&mut doc, &defs()).unwrap_err();
        assert!(err.contains("`Gone`"), "{err}");
    }
}
