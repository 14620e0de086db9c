//! The read routes and uploads: agents (capability, price, measured success rate), an agent's
//! manifest, a receipt with its delegated tree, a file's metadata, health and metrics (uploads
//! are [`crate::upload`]'s).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value as Json;
use utoipa::ToSchema;

use crate::error::{ApiError, ErrorBody};
use crate::AppState;
use crate::{live, runs};

/// `POST /v1/agents/{owner}/{name}/runs`: a JSON body is one run ([`runs::create_run`], whose
/// OpenAPI description this route has); an `application/x-ndjson` body is a session or a
/// stream ([`live`]).
pub async fn post_run(
    State(app): State<Arc<AppState>>,
    Path((owner, name)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    if live::is_ndjson(&headers) {
        return live::create_live_run(app, format!("{owner}/{name}"), headers, body).await;
    }
    runs::create_run(State(app), Path((owner, name)), headers, body).await
}

/// One agent in `GET /v1/agents`.
#[derive(Debug, Serialize, ToSchema)]
pub struct AgentSummary {
    /// `owner/name`.
    pub name: String,
    pub version: String,
    pub description: Option<String>,
    pub capability: Option<String>,
    /// What a successful run costs; `null` when free.
    pub price: Option<Price>,
    /// succeeded / (succeeded + invalid_output + error); `null` before any counted run.
    pub success_rate: Option<f64>,
    pub runs: RunCounts,
    /// Whether this gateway can run it (an agent needing Rust externs cannot).
    pub available: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Price {
    /// Exact decimal text.
    pub amount: String,
    pub currency: String,
}

/// An agent's receipts by status.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunCounts {
    pub succeeded: u64,
    pub invalid_output: u64,
    pub error: u64,
    /// Declared failures: counted apart from the success rate.
    pub failed: u64,
    /// Refused at the gate: not counted.
    pub rejected_input: u64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AgentList {
    pub agents: Vec<AgentSummary>,
}

/// The agents served here.
#[utoipa::path(get, path = "/v1/agents", tag = "agents",
    responses((status = 200, body = AgentList)))]
pub async fn list_agents(State(app): State<Arc<AppState>>) -> Result<Response, ApiError> {
    let mut agents = Vec::new();
    for agent in &app.project.agents {
        let stats = app.store.agent_stats(&agent.name).await?;
        agents.push(AgentSummary {
            name: agent.name.clone(),
            version: agent.version.clone(),
            description: agent.description.clone(),
            capability: agent.capability.clone(),
            price: agent.currency.as_ref().map(|c| Price {
                amount: agent.price.to_string(),
                currency: c.clone(),
            }),
            success_rate: stats.success_rate(),
            runs: RunCounts {
                succeeded: stats.succeeded,
                invalid_output: stats.invalid_output,
                error: stats.error,
                failed: stats.failed,
                rejected_input: stats.rejected_input,
            },
            available: agent.missing.is_empty(),
        });
    }
    Ok(axum::Json(AgentList { agents }).into_response())
}

/// An agent's manifest (`holon.yaml`, as JSON).
#[utoipa::path(get, path = "/v1/agents/{owner}/{name}", tag = "agents",
    params(("owner" = String, Path), ("name" = String, Path)),
    responses((status = 200, description = "The manifest (spec §9.2)", body = Object),
              (status = 404, body = ErrorBody)))]
pub async fn get_agent(
    State(app): State<Arc<AppState>>,
    Path((owner, name)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let full = format!("{owner}/{name}");
    let agent = app
        .project
        .agent(&full)
        .ok_or_else(|| ApiError::NotFound(format!("the agent {full}")))?;
    Ok(axum::Json(&agent.manifest).into_response())
}

/// One of the caller's receipts, with its delegated tree.
#[utoipa::path(get, path = "/v1/receipts/{id}", tag = "receipts",
    params(("id" = String, Path, description = "`rcpt_…`")),
    responses((status = 200, description = "The receipt (spec §10)", body = Object),
              (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn get_receipt(
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let account = crate::accounts::caller(&app, &headers).await?;
    let not_found = || ApiError::NotFound(format!("the receipt {id}"));
    let stored = app
        .store
        .receipt(&account.name, &id)
        .await?
        .ok_or_else(not_found)?;
    let document: Json = serde_json::from_str(&stored.json)
        .map_err(|e| ApiError::Internal(format!("a stored receipt is not JSON: {e}")))?;
    Ok(axum::Json(&document["receipt"]).into_response())
}

/// One of the caller's files: its metadata (another account's file is not found).
#[utoipa::path(get, path = "/v1/files/{id}", tag = "files",
    params(("id" = String, Path, description = "The id after `holon://files/`")),
    responses((status = 200, description = "The file's metadata", body = Object),
              (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn get_file(
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let account = crate::accounts::caller(&app, &headers).await?;
    let meta = app
        .store
        .file(&account.name, &id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("the file {id}")))?;
    Ok(axum::Json(serde_json::json!({
        "ref": format!("holon://files/{}", meta.id),
        "content_type": meta.media_type,
        "size": meta.size,
        "sha256": meta.sha256,
        "created_ms": meta.created_ms,
    }))
    .into_response())
}

/// Liveness: 200 while the gateway serves.
#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses((status = 200, description = "`ok`")))]
pub async fn healthz() -> &'static str {
    "ok\n"
}

/// Prometheus text exposition.
#[utoipa::path(get, path = "/metrics", tag = "operations",
    responses((status = 200, description = "Prometheus text format", content_type = "text/plain")))]
pub async fn metrics(State(app): State<Arc<AppState>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        app.metrics.render(),
    )
        .into_response()
}
