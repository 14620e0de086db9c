//! `schemas/defs.json`: the schema of every named type a node schema refers to, written once,
//! instead of each node schema carrying its own copy of everything it reaches (spec §9). (A
//! node's own input or output type is written in its document, as before.)
//!
//! A self-contained node document (what [`super::json_schema`] builds, and what the model-facing
//! variants, MCP tools, manifests and `aelc schema` keep) carries in `$defs` the transitive
//! closure of the types it names, so a project whose types refer to one another wrote the same
//! definitions hundreds of times (issue 23: 86 MB for 1,000 nodes). The file form moves `$defs`
//! out: `#/$defs/K` becomes `defs.json#/$defs/K`, a reference relative to the file that a
//! JSON Schema 2020-12 validator loading `schemas/` by path resolves (for an in-memory
//! validator, register `defs.json` beside the document's base URI). Inside `defs.json`,
//! definitions refer to each other locally (`#/$defs/K`).
//!
//! The runtime's [`aelc_runtime::exec::shared_defs::inline_shared`] is the way back, used by
//! whoever needs one document (the runtime's prompt `{{ output_schema }}`, the gateway's API
//! and OpenAPI document); a test keeps the round trip exact.

use std::collections::BTreeMap;

use aelc_runtime::exec::shared_defs::{rewrite_refs, SHARED_REF_PREFIX};
use serde_json::{json, Map, Value};

use super::json_schema::DRAFT_2020_12;

/// The path of the shared definitions in the build's output folder.
pub const DEFS_PATH: &str = "schemas/defs.json";

/// The file form of a self-contained node `document`: its `$defs` move into `defs` (a key
/// already there holds the same schema: a definition does not depend on the node), and its
/// local references point into `defs.json`.
pub fn share(document: &Value, defs: &mut BTreeMap<String, Value>) -> Value {
    let mut shared = document.clone();
    if let Value::Object(m) = &mut shared {
        if let Some(Value::Object(own)) = m.remove("$defs") {
            for (key, def) in own {
                defs.entry(key).or_insert(def);
            }
        }
    }
    rewrite_refs(&mut shared, &|r| {
        r.strip_prefix("#/$defs/")
            .map(|key| format!("{SHARED_REF_PREFIX}{key}"))
    });
    shared
}

/// `schemas/defs.json`: `$schema`, a title, and every definition in `defs`, sorted by key.
pub fn defs_document(defs: BTreeMap<String, Value>) -> Value {
    let mut m = Map::new();
    m.insert("$schema".into(), json!(DRAFT_2020_12));
    m.insert("title".into(), json!("shared definitions"));
    m.insert(
        "description".into(),
        json!(
            "The named types the node schemas beside this file refer to, each once, as \
             defs.json#/$defs/<name>."
        ),
    );
    m.insert("$defs".into(), Value::Object(defs.into_iter().collect()));
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use aelc_runtime::exec::shared_defs::inline_shared;

    #[test]
    fn sharing_then_inlining_gives_the_document_back() {
        let doc = json!({
            "$schema": DRAFT_2020_12,
            "title": "n output",
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}, "n": {"type": "integer"}},
            "$defs": {
                "A": {"type": "array", "items": {"$ref": "#/$defs/B"}},
                "B": {"type": "string"}
            }
        });
        let mut defs = BTreeMap::new();
        let shared = share(&doc, &mut defs);
        assert!(shared.get("$defs").is_none());
        assert_eq!(shared["properties"]["a"]["$ref"], "defs.json#/$defs/A");
        // Inside the shared document, definitions refer to each other locally.
        assert_eq!(defs["A"]["items"]["$ref"], "#/$defs/B");
        let mut back = shared.clone();
        inline_shared(&mut back, &defs_document(defs)).unwrap();
        assert_eq!(
            serde_json::to_string(&back).unwrap(),
            serde_json::to_string(&doc).unwrap()
        );
    }
}
