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
//! - [`spans`]: a SERVER span per request (OpenTelemetry), continuing the caller's trace;
//! - [`lease`]: this process's lease on its runs, so several processes share one store;
//! - [`listener`]: the connections: at most N (503 beyond), a share per client, a complete
//!   request head within a timeout, idle ones closed;
//! - [`upload`]: `POST /v1/files` streamed to the file store within the account's quota;
//! - [`console`]: `/console`, the gateway in a browser (signed in with an account's key);
//! - [`files`]: where the files live (the project's folder, an S3 bucket) and their sweep;
//! - [`error`]: every refusal as a stable code and status.
//!
//! Handlers are thin: they extract, call the executor and the store, and map errors in one
//! place. Runs execute on tokio's blocking pool (the executor and the providers are blocking),
//! at most `max_runs` at once; one more is refused with 503 rather than queued.

pub mod accounts;
pub mod console;
pub mod error;
pub mod files;
pub mod lease;
pub mod listener;
pub mod live;
pub mod metrics;
pub mod openapi;
pub mod project;
pub mod routes;
pub mod runs;
pub mod spans;
pub mod upload;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use aelc_store::journaled::Journaled;
use aelc_store::{Account, Store};
use axum::routing::{get, post};
use axum::Router;
use tokio::sync::Semaphore;
use tokio_util::task::TaskTracker;

pub use project::Project;

/// How the gateway is set up (`aelc serve`'s flags).
#[derive(Clone, Debug)]
pub struct Limits {
    /// Connections held at once; one more gets 503.
    pub max_connections: usize,
    /// Connections one client (an IPv4 address, an IPv6 /64) holds at once; one more gets 429.
    pub max_connections_per_client: usize,
    /// How long a connection may take to send a complete request head (and, kept alive, to
    /// begin its next request).
    pub header_timeout: Duration,
    /// How long a connection may stay open with no request in progress.
    pub idle_timeout: Duration,
    /// Uploads to `/v1/files` in progress at once; one more gets 503.
    pub max_uploads: usize,
    /// Runs executing at once; one more gets 503.
    pub max_runs: usize,
    /// How long a request body may take to arrive.
    pub body_timeout: Duration,
    /// The largest upload to `/v1/files`.
    pub max_file_bytes: usize,
    /// This process's name among those sharing the store: its runs are stored with it
    /// ([`lease`]). Unique among live processes; the same name after a restart releases the
    /// earlier life's runs at once.
    pub instance: String,
    /// How long a process that stopped renewing keeps its runs before another voids them.
    pub lease: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 4096,
            max_connections_per_client: per_client_share(4096),
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_uploads: 32,
            max_runs: 256,
            body_timeout: Duration::from_secs(30),
            max_file_bytes: 20 * 1024 * 1024,
            instance: lease::instance_name("aelc", std::process::id()),
            lease: Duration::from_secs(30),
        }
    }
}

/// The default `max_connections_per_client`: a sixteenth of `max_connections` (at least one),
/// so sixteen clients are needed to take every slot, and one client's share is still room for
/// a browser's or a pool's few connections.
pub fn per_client_share(max_connections: usize) -> usize {
    (max_connections / 16).max(1)
}

impl Limits {
    fn connections(&self) -> listener::ConnectionLimits {
        listener::ConnectionLimits {
            max_connections: self.max_connections,
            max_connections_per_client: self.max_connections_per_client,
            header_timeout: self.header_timeout,
            idle_timeout: self.idle_timeout,
        }
    }
}

/// What every handler shares.
pub struct AppState {
    pub project: Project,
    /// This process's lease on the runs it begins.
    pub lease: lease::Lease,
    pub store: Arc<dyn Store>,
    pub metrics: Arc<metrics::Metrics>,
    pub run_slots: Arc<Semaphore>,
    pub body_timeout: Duration,
    pub max_file_bytes: usize,
    /// Uploads in progress ([`upload`]): one permit each.
    pub upload_slots: Arc<Semaphore>,
    /// The most an account's files may take (`[limits] max_stored_bytes_per_account`).
    pub max_stored_bytes: u64,
    /// Uploaded files: bytes by SHA-256 and one record per reference (the runtime's layout, the
    /// same as `aelc files put`), in a folder or an object store ([`files`]); the metadata is
    /// also in the store (quota, listing, expiry).
    pub files: aelc_runtime::files::Files,
    /// The accounts of the API keys seen lately.
    pub keys: accounts::KeyCache,
    /// `store` itself, through which refused calls' receipts are journaled ([`Journaled`]).
    pub refusals: Arc<Journaled>,
    /// The tasks that own calls from their reservation to their settlement ([`runs`]: a caller
    /// that hangs up cancels none of them); [`AppState::finish_in_flight`] waits for them.
    pub in_flight: TaskTracker,
    /// Whether a run keeps its input document (its owner sees it in the console) or only its
    /// SHA-256 (`aelc serve --no-keep-inputs`). Refused calls never keep theirs.
    pub keep_inputs: bool,
    /// Where the console links a run's trace: a URL with `{trace_id}` in it (`aelc serve
    /// --trace-url`, e.g. Jaeger's `http://jaeger:16686/trace/{trace_id}`).
    pub trace_link: Option<String>,
    openapi: serde_json::Value,
}

impl AppState {
    /// Prepares `project` for serving: takes this instance's lease ([`lease`]), voiding the
    /// runs abandoned by stopped processes, and creates the accounts of the agents' owners (who
    /// are paid) when missing. Receipts of refused calls are journaled in the folder `journal`
    /// (of this machine; `crate::journal` of the store says why and how they stay durable).
    pub async fn new(
        project: Project,
        store: Arc<dyn Store>,
        files: aelc_runtime::files::Files,
        journal: &std::path::Path,
        limits: &Limits,
    ) -> Result<AppState, String> {
        let (lease, recovered) = lease::Lease::take(&store, &files, limits).await?;
        if recovered.voided_runs > 0 {
            tracing::warn!(
                runs = recovered.voided_runs,
                "voided the reservations of runs that a stopped process left unfinished"
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
        let max_stored_bytes = project
            .program
            .limits
            .max_stored_bytes_per_account
            .unwrap_or(upload::DEFAULT_MAX_STORED_BYTES);
        let refusals = Arc::new(
            Journaled::open(store, journal)
                .await
                .map_err(|e| format!("the refusal journal in {}: {e}", journal.display()))?,
        );
        let store: Arc<dyn Store> = refusals.clone();
        Ok(AppState {
            lease,
            keys: accounts::KeyCache::default(),
            refusals,
            project,
            store,
            metrics: Arc::new(metrics::Metrics::default()),
            run_slots: Arc::new(Semaphore::new(limits.max_runs.max(1))),
            body_timeout: limits.body_timeout,
            max_file_bytes: limits.max_file_bytes,
            upload_slots: Arc::new(Semaphore::new(limits.max_uploads.max(1))),
            max_stored_bytes,
            files,
            in_flight: TaskTracker::new(),
            keep_inputs: true,
            trace_link: None,
            openapi,
        })
    }

    /// Waits until every call begun so far has stored its receipt and settled its money, its
    /// callers gone or not (a graceful stop, the end of an MCP session, `aelc approve`).
    pub async fn finish_in_flight(&self) {
        self.in_flight.close();
        self.in_flight.wait().await;
        self.in_flight.reopen();
    }
}

/// The routes of spec §13.
pub fn router(state: Arc<AppState>) -> Router {
    let metrics = Arc::clone(&state.metrics);
    Router::new()
        .route("/v1/agents", get(routes::list_agents))
        .route("/v1/agents/{owner}/{name}", get(routes::get_agent))
        .route("/v1/agents/{owner}/{name}/runs", post(routes::post_run))
        .route("/v1/receipts/{id}", get(routes::get_receipt))
        .route("/v1/files", post(upload::put_file))
        .route("/v1/files/{id}", get(routes::get_file))
        .route("/healthz", get(routes::healthz))
        .route("/metrics", get(routes::metrics))
        .route("/openapi.json", get(openapi_json))
        .merge(console::routes())
        .with_state(state)
        .layer(axum::middleware::from_fn_with_state(
            metrics,
            metrics::track,
        ))
        .layer(axum::middleware::from_fn(spans::server_span))
}

async fn openapi_json(
    axum::extract::State(app): axum::extract::State<Arc<AppState>>,
) -> axum::Json<serde_json::Value> {
    axum::Json(app.openapi.clone())
}

/// Serves until `shutdown` resolves, then stops accepting, finishes the requests in flight
/// and every call begun (their receipts stored and their money settled, whether or not their
/// callers still wait) and returns. `extra` routes are served beside the gateway's on the same
/// connections (`/mcp`, which this crate cannot build: the MCP server is built on it).
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    limits: &Limits,
    extra: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let served = listener::serve(
        listener,
        router(Arc::clone(&state)).merge(extra),
        &limits.connections(),
        shutdown,
    )
    .await;
    // The requests have ended; the calls whose callers hung up may still be running.
    state.finish_in_flight().await;
    // Every run in flight has finished: nothing of this instance is left to void.
    state.lease.release(&*state.store).await;
    // Every refusal answered is in the database before the process ends (a journal left
    // behind would be moved by the next start; this spares it the wait).
    if let Err(e) = state.refusals.settle().await {
        tracing::error!(error = %e, "the refusal journal could not be moved into the store");
    }
    served
}

/// Milliseconds since the Unix epoch (the runtime's wall clock).
pub use aelc_runtime::pipeline::unix_now_ms as now_ms;
