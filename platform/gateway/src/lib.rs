//! `aelc-gateway`: serves a built project's agents over HTTP (spec §13), the platform of seed
//! `000_…`: the input schema is a gate, the output schema is the billing rule, every run has a
//! durable receipt and money moves only in the store's transactions.
//!
//! - [`project`]: the build output (`target/ael/`) loaded without the compiler;
//! - [`runs`]: `POST /v1/agents/{owner}/{name}/runs` — gate, reservation, run, receipt;
//! - [`live`]: the same route with an `application/x-ndjson` body: sessions and streams;
//! - [`routes`]: agents, manifests, receipts, uploads, health, metrics;
//! - [`accounts`]: tenants, API keys, funding;
//! - [`openapi`]: `/openapi.json`, derived from the handlers' types and the agents' schemas;
//! - [`metrics`]: `/metrics` (Prometheus);
//! - [`listener`]: at most N connections, 503 beyond;
//! - [`error`]: every refusal as a stable code and status.
//!
//! Handlers are thin: they extract, call the executor and the store, and map errors in one
//! place. Runs execute on tokio's blocking pool (the executor and the providers are blocking),
//! at most `max_runs` at once; one more is refused with 503 rather than queued.

pub mod accounts;
pub mod error;
pub mod listener;
pub mod live;
pub mod metrics;
pub mod openapi;
pub mod project;
pub mod routes;
pub mod runs;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use aelc_store::group_commit::GroupCommit;
use aelc_store::{Account, Store};
use axum::routing::{get, post};
use axum::Router;
use tokio::sync::Semaphore;

pub use project::Project;

/// How the gateway is set up (`aelc serve`'s flags).
#[derive(Clone, Debug)]
pub struct Limits {
    /// Connections held at once; one more gets 503.
    pub max_connections: usize,
    /// Runs executing at once; one more gets 503.
    pub max_runs: usize,
    /// How long a request body may take to arrive.
    pub body_timeout: Duration,
    /// The largest upload to `/v1/files`.
    pub max_file_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 4096,
            max_runs: 256,
            body_timeout: Duration::from_secs(30),
            max_file_bytes: 20 * 1024 * 1024,
        }
    }
}

/// What every handler shares.
pub struct AppState {
    pub project: Project,
    pub store: Arc<dyn Store>,
    pub metrics: Arc<metrics::Metrics>,
    pub run_slots: Arc<Semaphore>,
    pub body_timeout: Duration,
    pub max_file_bytes: usize,
    /// Uploaded files: bytes by SHA-256 and one record per reference (the runtime's layout, the
    /// same as `aelc files put`); the metadata is also in the store.
    pub files: aelc_runtime::files::LocalFiles,
    /// The accounts of the API keys seen lately.
    pub keys: accounts::KeyCache,
    /// Receipts of refused calls, committed in groups ([`GroupCommit`]).
    pub refusals: GroupCommit,
    openapi: serde_json::Value,
}

/// At most this many refused calls' receipts in one transaction, and this many waiting.
const REFUSALS_PER_COMMIT: usize = 256;
const REFUSALS_WAITING: usize = 4096;

impl AppState {
    /// Prepares `project` for serving: voids the runs a killed gateway left open, and creates
    /// the accounts of the agents' owners (who are paid) when missing.
    pub async fn new(
        project: Project,
        store: Arc<dyn Store>,
        files: aelc_runtime::files::LocalFiles,
        limits: &Limits,
    ) -> Result<AppState, String> {
        let recovered = store.recover().await.map_err(|e| e.to_string())?;
        if recovered.voided_runs > 0 {
            tracing::warn!(
                runs = recovered.voided_runs,
                "voided the reservations of runs a previous gateway left unfinished"
            );
        }
        for agent in &project.agents {
            if agent.owner.is_empty() {
                continue;
            }
            let account = Account {
                name: agent.owner.clone(),
                currency: agent
                    .currency
                    .clone()
                    .unwrap_or_else(|| accounts::DEFAULT_CURRENCY.to_owned()),
                created_ms: now_ms(),
            };
            store
                .ensure_account(&account)
                .await
                .map_err(|e| format!("the account of {}: {e}", agent.name))?;
        }
        let openapi = openapi::document(&project);
        let refusals =
            GroupCommit::start(Arc::clone(&store), REFUSALS_PER_COMMIT, REFUSALS_WAITING);
        Ok(AppState {
            keys: accounts::KeyCache::default(),
            refusals,
            project,
            store,
            metrics: Arc::new(metrics::Metrics::default()),
            run_slots: Arc::new(Semaphore::new(limits.max_runs.max(1))),
            body_timeout: limits.body_timeout,
            max_file_bytes: limits.max_file_bytes,
            files,
            openapi,
        })
    }
}

/// The routes of spec §13.
pub fn router(state: Arc<AppState>) -> Router {
    let metrics = Arc::clone(&state.metrics);
    Router::new()
        .route("/v1/agents", get(routes::list_agents))
        .route("/v1/agents/{owner}/{name}", get(routes::get_agent))
        .route("/v1/agents/{owner}/{name}/runs", post(runs::create_run))
        .route("/v1/receipts/{id}", get(routes::get_receipt))
        .route("/v1/files", post(routes::put_file))
        .route("/v1/files/{id}", get(routes::get_file))
        .route("/healthz", get(routes::healthz))
        .route("/metrics", get(routes::metrics))
        .route("/openapi.json", get(openapi_json))
        .with_state(state)
        .layer(axum::middleware::from_fn_with_state(
            metrics,
            metrics::track,
        ))
}

async fn openapi_json(
    axum::extract::State(app): axum::extract::State<Arc<AppState>>,
) -> axum::Json<serde_json::Value> {
    axum::Json(app.openapi.clone())
}

/// Serves until `shutdown` resolves, then stops accepting, finishes the requests in flight
/// (runs included: their receipts are stored before their answers) and returns.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    limits: &Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = listener::BoundedListener::new(listener, limits.max_connections);
    axum::serve(listener, router(state))
        .with_graceful_shutdown(shutdown)
        .await
}

/// Milliseconds since the Unix epoch (the runtime's wall clock).
pub use aelc_runtime::pipeline::unix_now_ms as now_ms;
