//! `agents/<agent>/holon.yaml`: the manifest the gateway publishes an agent with (spec §9.2).
//!
//! Fields, in this order: `name`, `version`, `description`, `capability`, `price`,
//! `interface.input`, `interface.output` (the emitted JSON Schemas), `errors` (declared codes
//! with their doc comments), `runtime.limits.max_input_bytes`, `models` (the bindings the agent
//! may call: its `model` first, then `fallback` bindings in policy order), `delegates` (the
//! agents its body calls) and `examples` (each example's input and expected outcome; the
//! recorded model answers stay in the project, they are test fixtures).
//!
//! `name` is the package name (`acme/review`) when the package publishes one agent, and
//! `owner/agent` when it publishes several. The text is built as a `serde_json::Value` in a
//! fixed key order and written with serde-saphyr, so it is byte-deterministic.

use serde_json::{json, Map, Value};

use super::publish::Example;
use crate::ir::{NodeIr, NodeKind, Policy, Program};

/// The manifest of one agent as a JSON value (key order is the YAML's).
pub fn manifest(
    program: &Program,
    agent: &NodeIr,
    input: &Value,
    output: &Value,
    examples: &[Example],
) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), json!(program.agent_name(agent)));
    m.insert("version".into(), json!(program.package.version));
    if let Some(d) = agent.docs.as_ref().or(program.package.description.as_ref()) {
        m.insert("description".into(), json!(d));
    }
    let publish = agent.publish.as_ref();
    if let Some(c) = publish.and_then(|p| p.capability.as_ref()) {
        m.insert("capability".into(), json!(c));
    }
    if let Some(p) = publish.and_then(|p| p.price.as_ref()) {
        m.insert(
            "price".into(),
            json!({"amount": p.amount, "currency": p.currency}),
        );
    }
    m.insert(
        "interface".into(),
        json!({"input": input, "output": output}),
    );
    let errors: Vec<Value> = agent
        .fails
        .and_then(|id| program.errors.get(id.0 as usize))
        .map(|set| {
            set.codes
                .iter()
                .map(|c| {
                    let mut e = Map::new();
                    e.insert("code".into(), json!(c.name));
                    if let Some(d) = &c.docs {
                        e.insert("description".into(), json!(d));
                    }
                    Value::Object(e)
                })
                .collect()
        })
        .unwrap_or_default();
    m.insert("errors".into(), Value::Array(errors));
    m.insert(
        "runtime".into(),
        json!({"limits": {"max_input_bytes": program.limits.max_input_bytes}}),
    );
    m.insert("models".into(), Value::Array(models(program, agent)));
    let delegates: Vec<Value> = agent
        .delegates
        .iter()
        .filter_map(|id| program.nodes.get(id.0 as usize))
        .filter(|n| n.kind == NodeKind::Agent)
        .map(|n| json!(program.agent_name(n)))
        .collect();
    m.insert("delegates".into(), Value::Array(delegates));
    let examples: Vec<Value> = examples
        .iter()
        .filter(|e| e.agent == agent.name)
        .filter_map(published_example)
        .collect();
    m.insert("examples".into(), Value::Array(examples));
    Value::Object(m)
}

/// The bindings an agent may call, each once: `model` first, then fallbacks.
fn models(program: &Program, agent: &NodeIr) -> Vec<Value> {
    let mut names: Vec<&str> = Vec::new();
    if let Some(m) = &agent.config.model {
        names.push(m);
    }
    for policy in &agent.output_stage.on_failure {
        if let Policy::Fallback { binding } = policy {
            if !names.contains(&binding.as_str()) {
                names.push(binding);
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let mut m = Map::new();
            m.insert("binding".into(), json!(name));
            if let Some(b) = program.bindings.iter().find(|b| b.name == name) {
                m.insert("provider".into(), json!(b.provider));
                m.insert("model".into(), json!(b.model));
                m.insert("accepts".into(), json!(b.accepts));
                if let Some(p) = &b.price {
                    m.insert(
                        "price".into(),
                        json!({
                            "input_per_mtok": p.input_per_mtok,
                            "output_per_mtok": p.output_per_mtok,
                            "currency": p.currency,
                        }),
                    );
                }
            }
            Value::Object(m)
        })
        .collect()
}

/// `{name, input, output}` or `{name, input, status, code}`; `None` if the file is not JSON
/// (which [`super::publish::check_examples`] has already reported).
fn published_example(example: &Example) -> Option<Value> {
    let value: Value = serde_json::from_str(&example.text).ok()?;
    let object = value.as_object()?;
    let mut m = Map::new();
    m.insert("name".into(), json!(example.name));
    for key in ["input", "output", "status", "code"] {
        if let Some(v) = object.get(key) {
            m.insert(key.into(), v.clone());
        }
    }
    Some(Value::Object(m))
}

/// The manifest as YAML text.
pub fn to_yaml(manifest: &Value) -> Result<String, String> {
    serde_saphyr::to_string(manifest).map_err(|e| e.to_string())
}
