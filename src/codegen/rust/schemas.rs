//! What the glue embeds of the nodes' output schemas (`SCHEMAS_JSON`, before its repeated
//! subtrees are shared out): each node's document as `schemas/` writes it, its named types
//! referred to in one map of shared definitions, and its grammar when one is sent; not the
//! model-facing variants, which the runtime derives from the document with the one rewrite
//! the compiler also uses (`aelc_runtime::glue::EmbeddedSchemas`; issue 42).
//!
//! A document goes in the shared form only when the runtime's way back (making it
//! self-contained from the map) gives it back byte for byte; one that would not is embedded
//! self-contained, which the runtime reads as it is.

use std::collections::BTreeMap;

use aelc_runtime::glue::{EmbeddedNode, EmbeddedSchemas};
use aelc_runtime::ordered::Json;
use serde_json::{Map, Value};

use crate::codegen::model_schema::output_documents;
use crate::codegen::shared_defs::share;
use crate::ir::Program;

/// The embedded schemas of `program`, as the glue's `SCHEMAS_JSON` holds them.
pub(super) fn embedded(program: &Program) -> EmbeddedSchemas {
    let documents = output_documents(program);
    let mut defs = BTreeMap::new();
    let shared: Vec<Value> = documents
        .iter()
        .map(|(document, _)| share(document, &mut defs))
        .collect();
    let mut holder = Map::new();
    holder.insert("$defs".into(), Value::Object(defs.into_iter().collect()));
    let mut embedded = EmbeddedSchemas {
        defs: Json::from(Value::Object(holder)),
        nodes: shared
            .into_iter()
            .zip(&documents)
            .map(|(document, (_, grammar))| EmbeddedNode {
                document: document.into(),
                grammar: grammar.clone(),
            })
            .collect(),
    };
    for (i, (document, _)) in documents.into_iter().enumerate() {
        let whole = compact(&document);
        let back = embedded.document(i).map(|d| d.to_string());
        if back.as_deref() != Some(whole.as_str()) {
            if let Some(node) = embedded.nodes.get_mut(i) {
                node.document = document.into();
            }
        }
    }
    embedded
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}
