//! `mcp/tools.json`: one MCP tool per agent (spec §9), in the shape of the MCP `tools/list`
//! result (`{"tools": [Tool, …]}`, MCP specification 2025-06-18, "Tools").
//!
//! A tool has `name`, `title`, `description`, `inputSchema` and `outputSchema`. MCP requires
//! both schemas to be objects at the root (`type: "object"`), as a tool's arguments and its
//! `structuredContent` are JSON objects; a non-object input or output is wrapped as
//! `{"value": …}` like the model-facing variants ([`super::model_schema::WRAP_KEY`]).

use serde_json::{json, Map, Value};

use super::model_schema::{wrap_root, wraps_root};

/// One agent as a tool: its name, docs and its two JSON Schema documents.
pub struct ToolSource<'a> {
    pub name: &'a str,
    pub description: Option<&'a str>,
    pub input: &'a Value,
    pub output: &'a Value,
}

/// The `tools/list` result for every agent, in the order given.
pub fn tools(agents: &[ToolSource<'_>]) -> Value {
    let tools: Vec<Value> = agents.iter().map(tool).collect();
    json!({ "tools": tools })
}

fn tool(agent: &ToolSource<'_>) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), json!(agent.name));
    m.insert("title".into(), json!(agent.name));
    if let Some(d) = agent.description {
        m.insert("description".into(), json!(d));
    }
    m.insert("inputSchema".into(), object_root(agent.input));
    m.insert("outputSchema".into(), object_root(agent.output));
    Value::Object(m)
}

/// The document with an object at its root: as it is, or wrapped as `{"value": …}`.
fn object_root(document: &Value) -> Value {
    if wraps_root(document) {
        wrap_root(document)
    } else {
        document.clone()
    }
}
