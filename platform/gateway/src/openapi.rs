//! `/openapi.json`: an OpenAPI 3.1 document derived by `utoipa` from the handlers and the
//! types they answer with, plus one concrete run route per served agent whose request body is
//! the agent's emitted input schema and whose `output` is its emitted output schema — the
//! same documents the gate and the pipeline enforce.
//!
//! The gateway holds each schema self-contained (`schemas/defs.json` written back in,
//! [`crate::project`]), its definitions under `$defs` with local `#/$defs/…` references; in an
//! OpenAPI document those move to `components/schemas` as `defs.<name>`, once for every agent
//! that uses them (one build's `$defs` keys are unique, and a key names one schema), and the
//! references follow.

use aelc_runtime::exec::shared_defs;
use serde_json::{json, Map, Value as Json};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::project::Project;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "aelc gateway",
        description = "Runs a built AEL project's agents: the input schema is the gate, the \
                       output schema the billing rule; every run returns a receipt."
    ),
    paths(
        crate::runs::create_run,
        crate::routes::list_agents,
        crate::routes::get_agent,
        crate::routes::get_receipt,
        crate::upload::put_file,
        crate::routes::get_file,
        crate::routes::healthz,
        crate::routes::metrics,
    ),
    components(schemas(
        crate::runs::RunResponse,
        crate::runs::InputError,
        crate::routes::AgentList,
        crate::routes::AgentSummary,
        crate::routes::Price,
        crate::routes::RunCounts,
        crate::error::ErrorBody,
        crate::error::ErrorDetail,
    )),
    modifiers(&Bearer)
)]
struct ApiDoc;

struct Bearer;

impl Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
}

/// The document for `project` (deterministic: same project, same bytes).
pub fn document(project: &Project) -> Json {
    let mut doc = serde_json::to_value(ApiDoc::openapi()).unwrap_or(Json::Null);
    doc["info"]["version"] = json!(env!("CARGO_PKG_VERSION"));
    for agent in &project.agents {
        let prefix = component_prefix(&agent.name);
        let input = hoist(&agent.input_schema, &prefix, "input", &mut doc);
        let output = hoist(&agent.output_schema, &prefix, "output", &mut doc);
        let response = json!({
            "allOf": [
                {"$ref": "#/components/schemas/RunResponse"},
                {"type": "object", "properties": {"output": {"anyOf": [output, {"type": "null"}]}}}
            ]
        });
        let path = format!("/v1/agents/{}/runs", agent.name);
        let mut summary = format!("Run {}", agent.name);
        if let Some(price) = &agent.currency {
            summary.push_str(&format!(" ({} {price} per successful run)", agent.price));
        }
        doc["paths"][path] = json!({
            "post": {
                "tags": ["agents"],
                "summary": summary,
                "description": agent.description,
                "operationId": format!("run_{prefix}"),
                "security": [{"bearer": []}],
                "parameters": [{"name": "Idempotency-Key", "in": "header", "required": false,
                                "schema": {"type": "string", "maxLength": 255}}],
                "requestBody": {"required": true, "content": request_content(project, agent, input)},
                "responses": {
                    "200": {"description": "The agent answered",
                            "content": {"application/json": {"schema": response.clone()}}},
                    "422": {"description": "Refused at the gate; nothing billed",
                            "content": {"application/json": {"schema": response.clone()}}},
                    "502": {"description": "No acceptable answer; nothing billed",
                            "content": {"application/json": {"schema": response}}},
                    "default": {"description": "A refusal",
                                "content": {"application/json": {"schema":
                                    {"$ref": "#/components/schemas/ErrorBody"}}}}
                }
            }
        });
    }
    doc
}

/// The request body's media types: the input document as `application/json`, and for an agent
/// with several inputs (a session) or a stream parameter, its lines as `application/x-ndjson`
/// (spec §12.1): each line's schema is a `oneOf` of what a line may be, its `value` referring
/// into the input schema (`…/properties/camera`, `…/items`) so the two never disagree.
fn request_content(project: &Project, agent: &crate::project::Agent, input: Json) -> Json {
    let node = project.program.node(agent.node);
    let reference = input["$ref"].as_str().unwrap_or_default().to_owned();
    let at = json!({"type": "string", "format": "date-time",
                    "description": "When the value was observed (RFC 3339)"});
    let line = match node {
        Some(node) if aelc_runtime::stream::node_stream(node).is_some() => Some(json!({
            "description": "One chunk of the stream, or its end record (one JSON object a line)",
            "oneOf": [
                {"type": "object", "additionalProperties": false,
                 "required": ["seq", "at", "value"],
                 "properties": {
                     "seq": {"type": "integer", "minimum": 0,
                             "description": "The chunk's sequence number"},
                     "at": at,
                     "value": {"$ref": format!("{reference}/items")}}},
                {"type": "object", "additionalProperties": false, "required": ["end"],
                 "properties": {
                     "end": {"enum": ["complete", "error", "cancelled"]},
                     "message": {"type": "string",
                                 "description": "Why the stream ended, for `error` only"}}}
            ]
        })),
        Some(node) if node.params.len() > 1 => Some(json!({
            "description": "One observation of one input (one JSON object a line)",
            "oneOf": node.params.iter().map(|param| json!({
                "type": "object", "additionalProperties": false,
                "required": ["input", "at", "value"],
                "properties": {
                    "input": {"const": param.name},
                    "at": at,
                    "value": {"$ref": format!("{reference}/properties/{}", param.name)}}
            })).collect::<Vec<_>>()
        })),
        _ => None,
    };
    let mut content = json!({"application/json": {"schema": input}});
    if let Some(line) = line {
        content["application/x-ndjson"] = json!({"schema": line});
    }
    content
}

/// `acme/review` → `acme_review`: a component-name-safe prefix.
fn component_prefix(agent: &str) -> String {
    agent
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// Moves `schema` into `components/schemas/<prefix>.<role>` and its `$defs` into
/// `components/schemas/defs.<name>`, and returns a reference to it. The definitions are
/// shared: every agent of the served project has its named types from the same build
/// (`schemas/defs.json`), so a type two agents use is one component (`defs.` cannot be an
/// agent's prefix, which always holds the `_` of `owner/name`).
fn hoist(schema: &Json, prefix: &str, role: &str, doc: &mut Json) -> Json {
    let mut schema = schema.clone();
    let defs = schema
        .as_object_mut()
        .and_then(|o| {
            o.remove("$schema");
            o.remove("$defs")
        })
        .and_then(|d| match d {
            Json::Object(m) => Some(m),
            _ => None,
        })
        .unwrap_or_default();
    let rename = |name: &str| format!("defs.{name}");
    let mut components: Map<String, Json> = Map::new();
    for (name, mut def) in defs {
        rewrite_refs(&mut def, &rename);
        components.insert(rename(&name), def);
    }
    rewrite_refs(&mut schema, &rename);
    let own = format!("{prefix}.{role}");
    components.insert(own.clone(), schema);
    if !doc["components"]["schemas"].is_object() {
        doc["components"]["schemas"] = json!({});
    }
    if let Some(target) = doc["components"]["schemas"].as_object_mut() {
        target.extend(components);
    }
    json!({"$ref": format!("#/components/schemas/{own}")})
}

/// Points every local `#/$defs/<name>` reference of `value` at its component (the
/// runtime's walker: a `$ref` inside a `default` or an `enum` is data, left alone).
fn rewrite_refs(value: &mut Json, rename: &dyn Fn(&str) -> String) {
    shared_defs::rewrite_refs(value, &|r| {
        r.strip_prefix("#/$defs/")
            .map(|name| format!("#/components/schemas/{}", rename(name)))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_move_to_components_and_references_follow() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"f": {"type": "array", "items": {"$ref": "#/$defs/Finding"}}},
            "$defs": {"Finding": {"type": "object",
                                  "properties": {"s": {"$ref": "#/$defs/Severity"}}},
                      "Severity": {"enum": ["low", "high"]}}
        });
        let mut doc = json!({"components": {"schemas": {}}});
        let r = hoist(&schema, "acme_review", "output", &mut doc);
        assert_eq!(
            r,
            json!({"$ref": "#/components/schemas/acme_review.output"})
        );
        let c = &doc["components"]["schemas"];
        assert_eq!(
            c["acme_review.output"]["properties"]["f"]["items"]["$ref"],
            "#/components/schemas/defs.Finding"
        );
        assert_eq!(
            c["defs.Finding"]["properties"]["s"]["$ref"],
            "#/components/schemas/defs.Severity"
        );
        assert!(c["acme_review.output"].get("$defs").is_none());
        // A second agent using the same types shares their components.
        let r = hoist(&schema, "acme_triage", "output", &mut doc);
        assert_eq!(
            r,
            json!({"$ref": "#/components/schemas/acme_triage.output"})
        );
        let c = &doc["components"]["schemas"];
        assert_eq!(
            c["acme_triage.output"]["properties"]["f"]["items"]["$ref"],
            "#/components/schemas/defs.Finding"
        );
        let defs: Vec<&String> = c
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| k.starts_with("defs."))
            .collect();
        assert_eq!(defs, ["defs.Finding", "defs.Severity"]);
        assert!(c["acme_review.output"].get("$schema").is_none());
    }
}
