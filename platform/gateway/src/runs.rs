//! `POST /v1/agents/{owner}/{name}/runs`: the gate, the reservation, the run, the receipt.
//!
//! In order, each step ending the request when it refuses:
//! 1. the caller's key; the agent; the content type; `Idempotency-Key`'s shape;
//! 2. the size: a `Content-Length` over `max_input_bytes` is refused (413) before a byte of the
//!    body is read, and a body that grows past it while streaming is cut off at the limit;
//!    a body that does not arrive within the timeout is refused (408);
//! 3. **the gate** ([`Executor::admit`]): a document that does not decode, or fails an input
//!    check, gets its receipt (`rejected_input` or `failed`, stored) and 422 — nothing reserved;
//! 4. **the reservation** ([`Store::begin_run`]): the agent's price held on the caller's
//!    balance, the idempotency key claimed (a replay answers the first receipt, another input
//!    409), all in one transaction;
//! 5. the run on a blocking thread ([`Executor::run_admitted`]);
//! 6. **the receipt and the money in one transaction** ([`Store::finish_run`]): `succeeded`
//!    posts the price to the agent's owner, anything else voids the reservation — and only
//!    then the response, so no receipt a client saw can be lost.
//!
//! **Hanging up changes nothing.** From the reservation on (steps 4–6), a call is owned by a
//! task of its own ([`AppState::in_flight`]), not by the request: hyper drops a request's
//! future when its connection closes, and an MCP client may cancel a call, but the task runs
//! to the end — the receipt stored, the money posted or voided — exactly as if the caller had
//! waited. A caller that comes back finds it: the same `Idempotency-Key` answers the first
//! run's document, `GET /v1/receipts/{id}` the receipt. We finish and settle rather than
//! cancel because the model call is already paid for by then, the providers cannot be
//! interrupted mid-answer, and a run cut at an arbitrary point would leave its money and its
//! key to the lease's sweep. A model that never answers ends at its node's `timeout` with a
//! `timeout` receipt, whoever is waiting. A store that fails at step 6 is asked again in the
//! background until it takes the receipt ([`settle_durably`]); the caller is answered 503 at
//! once, naming the receipt it is owed, and the key answers `409 idempotency_in_progress`
//! until the receipt is stored.
//!
//! The response document is the same for a fresh run and a replay: `status`, `code`,
//! `output`, `receipt` (and `errors` / `refusal` when the gate refused). HTTP status: 200 when
//! the agent answered (`succeeded`, or a declared `failed`), 422 when the gate refused, 502
//! when the run ended without an acceptable answer (`invalid_output`, `error`; free).
//!
//! [`Executor::admit`]: aelc_runtime::exec::Executor::admit
//! [`Executor::run_admitted`]: aelc_runtime::exec::Executor::run_admitted
//! [`Store::begin_run`]: aelc_store::Store::begin_run
//! [`Store::finish_run`]: aelc_store::Store::finish_run
//! [`AppState::in_flight`]: crate::AppState::in_flight

use aelc_runtime::reserved::ReservedCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use aelc_runtime::exec::{Admission, Admitted, Env, Externs, Run};
use aelc_runtime::files::{MediaStore, StoredFile};
use aelc_runtime::money::Amount;
use aelc_runtime::pipeline::{Status, SystemClock};
use aelc_runtime::provider::router::ModelRouter;
use aelc_runtime::receipt::{sha256_hex, IdSource, UuidIds};
use aelc_store::{Account, BeginRun, Begun, Settlement, StoreError, StoredReceipt};
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{json, Value as Json};
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::OwnedSemaphorePermit;
use utoipa::ToSchema;

use crate::error::{ApiError, ErrorBody};
use crate::{now_ms, AppState};

/// A run's response document (its `output` and `receipt` are the agent's own schemas),
/// borrowed from the finished run: serialized straight to text, never built as a
/// `serde_json::Value` first, since a refusal at the gate does little else.
#[derive(Serialize, ToSchema)]
pub struct RunResponse<'a> {
    /// `succeeded`, `rejected_input`, `invalid_output`, `failed`, `error`.
    #[schema(value_type = String)]
    pub status: Status,
    /// The declared or reserved code when the run did not succeed.
    pub code: Option<&'a str>,
    /// The accepted output (the agent's output schema), `null` without one.
    #[schema(value_type = Object)]
    pub output: Option<&'a serde_json::value::RawValue>,
    /// The receipt (spec §10), with its delegated tree.
    #[schema(value_type = Object)]
    pub receipt: &'a aelc_runtime::receipt::Receipt,
    /// The decoder's errors when the input was refused.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<InputError<'a>>,
    /// Why the run ended without an answer, when no attempt says it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refusal: Option<&'a str>,
}

/// One reason an input was refused (spec §4).
#[derive(Serialize, ToSchema)]
pub struct InputError<'a> {
    /// JSON Pointer into the document.
    pub pointer: &'a str,
    /// The path from the parameter (`request.locale`).
    pub path: &'a str,
    pub code: &'a str,
    pub message: &'a str,
}

/// Runs `f` on the blocking pool (the executor and the providers block) with the executor and
/// a fresh host of `tenant`; says too whether the file store failed to answer a read of it.
async fn blocking<T, F>(
    app: &Arc<AppState>,
    tenant: &str,
    f: F,
) -> Result<(T, bool), tokio::task::JoinError>
where
    T: Send + 'static,
    F: FnOnce(&aelc_runtime::exec::Executor<'static>, &mut Env<'_>) -> T + Send + 'static,
{
    let app = Arc::clone(app);
    let tenant = tenant.to_owned();
    let failed = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&failed);
    let cx = crate::spans::current();
    let out = tokio::task::spawn_blocking(move || {
        crate::spans::attached(cx, || {
            let mut host = RunHost::new(&app, &tenant, seen);
            f(&app.project.executor, &mut host.env())
        })
    })
    .await?;
    Ok((out, failed.load(Ordering::Relaxed)))
}

/// The gateway's files as one call reads them, noting a read the file store failed to answer
/// (unreachable, refusing): the refusal that follows is not the caller's doing, and the call is
/// answered `503 files_unavailable` rather than `422`.
struct WatchedFiles {
    files: aelc_runtime::files::Files,
    failed: Arc<AtomicBool>,
}

impl MediaStore for WatchedFiles {
    fn record(&self, id: &str) -> Result<Option<StoredFile>, String> {
        let read = self.files.record(id);
        self.failed.fetch_or(read.is_err(), Ordering::Relaxed);
        read
    }

    fn bytes(&self, file: &StoredFile, max: u64) -> Result<Vec<u8>, String> {
        let read = self.files.bytes(file, max);
        self.failed.fetch_or(read.is_err(), Ordering::Relaxed);
        read
    }
}

/// Receipt ids of a run whose id the gateway chose before it began: that one for the run,
/// fresh ones for its delegated calls.
struct RunIds(Option<String>);

impl IdSource for RunIds {
    fn receipt_id(&mut self) -> String {
        UuidIds.receipt_id()
    }

    fn run_receipt_id(&mut self) -> String {
        self.0.take().unwrap_or_else(|| UuidIds.receipt_id())
    }
}

/// Inputs up to this size are admitted on the request's task (see [`execute`]); a decode runs
/// at hundreds of MB/s, so this is tens of microseconds of a worker thread at most.
const INLINE_GATE_BYTES: usize = 64 * 1024;

/// What one run needs besides the program: a model over the shared providers, the clock,
/// fresh ids, and no Rust externs (a gateway runs only what its build describes).
struct RunHost {
    model: ModelRouter,
    clock: SystemClock,
    ids: UuidIds,
    externs: Externs,
    /// Media references resolve in the gateway's files, for the caller only.
    files: WatchedFiles,
    tenant: String,
}

impl RunHost {
    fn new(app: &AppState, tenant: &str, failed: Arc<AtomicBool>) -> RunHost {
        RunHost {
            model: ModelRouter::shared(&app.project.connected, None),
            clock: SystemClock::default(),
            ids: UuidIds,
            externs: Externs::new(),
            files: WatchedFiles {
                files: app.files.clone(),
                failed,
            },
            tenant: tenant.to_owned(),
        }
    }

    /// [`Executor::admit`](aelc_runtime::exec::Executor::admit) on this thread.
    fn admit(
        mut self,
        app: &AppState,
        node: aelc_runtime::program::NodeId,
        input: &[u8],
    ) -> Result<Admission, aelc_runtime::exec::Unrunnable> {
        app.project.executor.admit(node, input, &mut self.env())
    }

    fn env(&mut self) -> Env<'_> {
        Env {
            model: &mut self.model,
            clock: &mut self.clock,
            ids: &mut self.ids,
            externs: &mut self.externs,
            check_accepts: true,
            media: Some(aelc_runtime::exec::MediaAccess {
                store: &self.files,
                tenant: &self.tenant,
            }),
        }
    }
}

/// Run an agent on one input document. (An `application/x-ndjson` body is a session or a
/// stream instead: [`crate::routes::post_run`] sends it to the live runs.)
#[utoipa::path(
    post,
    path = "/v1/agents/{owner}/{name}/runs",
    params(
        ("owner" = String, Path, description = "The agent's owner (`acme` of `acme/review`)"),
        ("name" = String, Path, description = "The agent's name"),
        ("Idempotency-Key" = Option<String>, Header, description = "Retries with the same key and input return the first receipt and bill once"),
        ("Ael-Mandate" = Option<String>, Header, description = "`ACCOUNT/NAME` of one of the caller's mandates: its budget applies and the receipt is its own"),
    ),
    request_body(content = Object, content_type = "application/json", description = "The input document (the agent's input schema)"),
    responses(
        (status = 200, description = "The agent answered: `succeeded` (billed) or a declared `failed` (free)", body = RunResponse),
        (status = 422, description = "Refused at the gate: `rejected_input` or an input check's code; nothing billed", body = RunResponse),
        (status = 502, description = "No acceptable answer (`invalid_output`, `error`); nothing billed", body = RunResponse),
        (status = 401, body = ErrorBody), (status = 402, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 408, body = ErrorBody), (status = 409, body = ErrorBody), (status = 413, body = ErrorBody),
        (status = 415, body = ErrorBody), (status = 503, body = ErrorBody),
    ),
    security(("bearer" = [])),
    tag = "runs"
)]
pub async fn create_run(
    State(app): State<Arc<AppState>>,
    Path((owner, name)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let account = crate::accounts::caller(&app, &headers).await?;
    let agent_name = format!("{owner}/{name}");
    let agent_index = app
        .project
        .agent_index(&agent_name)
        .ok_or_else(|| ApiError::NotFound(format!("the agent {agent_name}")))?;
    content_type(&headers)?;
    let key = idempotency_key(&headers)?;
    let mandate = mandate_header(&app, &account, &headers).await?;
    let max = app.project.max_input_bytes();
    if content_length(&headers).is_some_and(|n| n > max as u64) {
        return too_large(&app, &account, agent_index, &mandate, max).await;
    }
    let bytes = match read_body(body, max, app.body_timeout).await {
        Err(ApiError::TooLarge { .. }) => {
            return too_large(&app, &account, agent_index, &mandate, max).await
        }
        other => other?,
    };
    let done = execute(
        &app,
        Call {
            tenant: &account,
            agent: agent_index,
            input: bytes,
            idempotency_key: key,
            mandate,
        },
    )
    .await?;
    Ok(respond(
        done.status,
        done.text,
        done.replayed.then_some("true"),
    ))
}

/// A body over `max_input_bytes`: refused (413) before the rest of it is read, with a stored
/// receipt (`rejected_input`, `input_too_large`) like every other gate refusal; its
/// `input_sha256` is that of nothing, since the input was never read.
async fn too_large(
    app: &AppState,
    account: &aelc_store::Account,
    agent: usize,
    mandate: &Option<String>,
    max: usize,
) -> Result<Response, ApiError> {
    app.metrics.gate_refusal("input_too_large");
    let agent = &app.project.agents[agent];
    let node = app
        .project
        .program
        .node(agent.node)
        .map_or("", |n| n.name.as_str());
    let error = ApiError::TooLarge { limit: max };
    let id = format!("rcpt_{}", uuid::Uuid::now_v7().simple());
    let mut receipt = aelc_runtime::receipt::Receipt::rejected_input(
        id.clone(),
        &app.project.program.package.name,
        &agent.version,
        node,
        b"",
    );
    receipt.code = Some(error.code().to_owned());
    receipt.refusal = Some(error.message());
    // Its span, as the executor's gate shows a refusal (the executor never saw this input).
    aelc_runtime::trace::refused(
        node,
        aelc_runtime::trace::GateRefusal {
            run: receipt.ended(),
            errors: 0,
            check: None,
        },
    );
    let document = json!({
        "status": Status::RejectedInput,
        "code": error.code(),
        "output": null,
        "receipt": receipt,
        "refusal": error.message(),
        "error": {"code": error.code(), "message": error.message()},
    });
    let row = receipt_row(&id, &account.name, agent, mandate.clone(), &document);
    let text = row.json.clone();
    app.refusals.record_refusal(row).await?;
    Ok(respond(StatusCode::PAYLOAD_TOO_LARGE, text, None))
}

/// One call of an agent, from the gate to the stored receipt: what the HTTP route and the MCP
/// server's `call_agent` share.
pub struct Call<'a> {
    /// Who pays (the mandate's account for the MCP server).
    pub tenant: &'a aelc_store::Account,
    /// Index into the project's agents.
    pub agent: usize,
    pub input: Bytes,
    pub idempotency_key: Option<String>,
    /// `ACCOUNT/NAME` of the mandate the call is made under: its budget is checked in the
    /// reservation's transaction and its receipts are its own.
    pub mandate: Option<String>,
}

/// What a finished call answered.
#[derive(Debug)]
pub struct Done {
    pub status: StatusCode,
    /// The response document (`status`, `code`, `output`, `receipt`, …) as JSON text,
    /// serialized once for the store and the response.
    pub text: String,
    /// A replay of an earlier call with the same idempotency key.
    pub replayed: bool,
}

impl Done {
    /// The response document as a value, for callers that look inside it (the MCP server,
    /// a session's list of runs); the HTTP route sends [`Done::text`] as it is.
    pub fn document(&self) -> Json {
        serde_json::from_str(&self.text).unwrap_or(Json::Null)
    }
}

/// Runs steps 3–6 of the module doc for a call whose body has been read.
pub async fn execute(app: &Arc<AppState>, call: Call<'_>) -> Result<Done, ApiError> {
    let account = call.tenant;
    let agent = app
        .project
        .agents
        .get(call.agent)
        .ok_or_else(|| ApiError::NotFound("the agent".to_owned()))?;
    let agent_name = &agent.name;
    let bytes = call.input;
    let key = call.idempotency_key;
    if !agent.missing.is_empty() {
        return Err(ApiError::AgentUnavailable(format!(
            "{agent_name} needs {}, which this gateway does not have (run it from Rust \
             through the generated glue)",
            agent.missing.join(", ")
        )));
    }
    let slot = Arc::clone(&app.run_slots)
        .try_acquire_owned()
        .map_err(|_| ApiError::Overloaded)?;

    // 3. The gate: decoding and input checks are CPU work, bounded by `max_input_bytes`, so
    // they run on the request's own task unless the input can hold media references (whose
    // checks read the file store) or is large enough to hold a worker thread up.
    let node = agent.node;
    let (admission, files_failed) = if !agent.takes_media && bytes.len() <= INLINE_GATE_BYTES {
        let unread = Arc::new(AtomicBool::new(false));
        (
            RunHost::new(app, &account.name, unread).admit(app, node, &bytes),
            false,
        )
    } else {
        let gate_bytes = bytes.clone();
        blocking(app, &account.name, move |executor, env| {
            executor.admit(node, &gate_bytes, env)
        })
        .await
        .map_err(|e| ApiError::Internal(format!("the gate failed: {e}")))?
    };
    let admitted = match admission.map_err(|e| ApiError::AgentUnavailable(e.to_string()))? {
        Admission::Refused(mut run) => {
            let code = run.outcome.code.clone().unwrap_or_default();
            app.metrics.gate_refusal(&code);
            let run_id = run.receipt.receipt.clone();
            let row = run_row(&run_id, &account.name, agent, call.mandate, &mut run, None);
            let text = row.json.clone();
            app.refusals.record_refusal(row).await?;
            if files_failed {
                // Refused because the file store did not answer: the caller may retry.
                return Err(ApiError::FilesUnavailable(format!(
                    "the file store could not be read, so the input's media could not be \
                     checked; nothing was called or billed (receipt {run_id}: GET \
                     /v1/receipts/{run_id}); retry later"
                )));
            }
            return Ok(Done {
                status: StatusCode::UNPROCESSABLE_ENTITY,
                text,
                replayed: false,
            });
        }
        Admission::Admitted(admitted) => admitted,
    };

    // 4. The reservation: checked here, where nothing is held yet; taken in the run's task.
    if agent.price > Amount::ZERO && agent.currency.as_deref() != Some(&account.currency) {
        return Err(ApiError::Currency {
            account: account.currency.clone(),
            price: agent.currency.clone().unwrap_or_default(),
        });
    }
    let owned = OwnedCall {
        app: Arc::clone(app),
        tenant: account.clone(),
        agent: call.agent,
        input: bytes,
        idempotency_key: key,
        mandate: call.mandate,
    };
    // Steps 4–6 belong to a task the caller cannot cancel (see "Hanging up" in the module
    // doc): this future may be dropped at any await from here on, the task is not.
    let (answer, answered) = tokio::sync::oneshot::channel();
    app.in_flight.spawn(crate::spans::in_context(
        owned.reserve_run_settle(admitted, slot, answer),
    ));
    answered
        .await
        .map_err(|_| ApiError::Internal("a run's task ended without an answer".to_owned()))?
}

/// A call that passed the gate, owned whole by its task: steps 4–6.
struct OwnedCall {
    app: Arc<AppState>,
    tenant: Account,
    agent: usize,
    input: Bytes,
    idempotency_key: Option<String>,
    mandate: Option<String>,
}

impl OwnedCall {
    /// Reserves, runs and settles, sending the caller its answer as soon as there is one
    /// (nobody may be listening any more); a store that fails to take the receipt is asked
    /// again after the answer ([`settle_durably`]).
    async fn reserve_run_settle(
        self,
        admitted: Admitted,
        slot: OwnedSemaphorePermit,
        answer: tokio::sync::oneshot::Sender<Result<Done, ApiError>>,
    ) {
        match self.reserve_and_run(admitted, slot).await {
            Err(refused) => {
                let _ = answer.send(Err(refused));
            }
            Ok(Reserved::Replay(done)) => {
                let _ = answer.send(Ok(done));
            }
            Ok(Reserved::Ran(finished)) => {
                let Finished {
                    row,
                    settlement,
                    status,
                } = *finished;
                match self.app.store.finish_run(&row, &settlement).await {
                    Ok(()) => {
                        let _ = answer.send(Ok(Done {
                            status,
                            text: row.json,
                            replayed: false,
                        }));
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, run = %row.id,
                            "the store did not take a run's receipt; asking again");
                        // The caller is told which receipt is owed: it is stored (and its
                        // money settled) once the store takes it.
                        let _ = answer.send(Err(ApiError::Store(format!(
                            "the store did not take the run's receipt {id} ({e}); it is \
                             stored once the store is back: GET /v1/receipts/{id}",
                            id = row.id
                        ))));
                        settle_durably(&*self.app.store, &row, &settlement).await;
                    }
                }
            }
        }
    }

    /// Steps 4 and 5: the reservation (or the replay of a finished call), then the run, which
    /// holds `slot` (one of `max_runs`) until it ends.
    async fn reserve_and_run(
        &self,
        admitted: Admitted,
        slot: OwnedSemaphorePermit,
    ) -> Result<Reserved, ApiError> {
        let app = &self.app;
        let account = &self.tenant;
        let agent = &app.project.agents[self.agent];
        let run_id = format!("rcpt_{}", uuid::Uuid::now_v7().simple());
        let begin = BeginRun {
            run: run_id.clone(),
            tenant: account.name.clone(),
            agent: agent.name.clone(),
            version: agent.version.clone(),
            input_sha256: sha256_hex(&self.input),
            reserve: agent.price,
            currency: account.currency.clone(),
            idempotency_key: self.idempotency_key.clone(),
            mandate: self.mandate.clone(),
            owner: app.lease.instance.clone(),
            at_ms: now_ms(),
            // The gate admitted it, so it is a JSON document and so UTF-8.
            input_json: app
                .keep_inputs
                .then(|| String::from_utf8_lossy(&self.input).into_owned()),
            trace_id: aelc_runtime::trace::current_trace_id(),
        };
        match app.store.begin_run(&begin).await? {
            Begun::Started => {}
            Begun::Replayed { status, receipt } => {
                return Ok(Reserved::Replay(Done {
                    status: http_status(status),
                    text: receipt,
                    replayed: true,
                }))
            }
            Begun::InProgress => return Err(ApiError::IdempotencyInProgress),
            Begun::KeyConflict => return Err(ApiError::IdempotencyConflict),
            Begun::Insufficient { available, needed } => {
                return Err(ApiError::InsufficientFunds {
                    available: format!("{available} {}", account.currency),
                    needed: format!("{needed} {}", account.currency),
                })
            }
            Begun::OverBudget { left, needed } => {
                return Err(ApiError::OverBudget {
                    left: format!("{left} {}", account.currency),
                    needed: format!("{needed} {}", account.currency),
                })
            }
        }

        // 5. The run.
        let started = Instant::now();
        let in_flight = app.metrics.run_started();
        let run_bytes = self.input.clone();
        let top_id = run_id.clone();
        // A media read the store fails here ends the run `rejected_input` (free), answered 422
        // like any refusal: its key is spent by then, so a 503 would invite a retry that
        // replays the refusal.
        let finished = blocking(app, &account.name, move |executor, env| {
            // The receipt (and the run's span) carry the id the store already has.
            let mut ids = RunIds(Some(top_id));
            let mut env = Env {
                model: &mut *env.model,
                clock: &mut *env.clock,
                ids: &mut ids,
                externs: &mut *env.externs,
                check_accepts: env.check_accepts,
                media: env.media,
            };
            executor.run_admitted(admitted, &run_bytes, &mut env)
        })
        .await
        .map(|(run, _)| run);
        drop(in_flight);
        drop(slot);

        // 6. The receipt and the money (stored by the caller of this, then the answer).
        let mandate = self.mandate.clone();
        let (row, settlement, status) = match finished {
            Ok(Ok(mut run)) => {
                run.receipt.receipt = run_id.clone();
                let succeeded = run.outcome.status == Status::Succeeded;
                let price = succeeded.then_some(agent.price);
                let billed = price.map(|p| (p, account.currency.as_str()));
                let row = run_row(&run_id, &account.name, agent, mandate, &mut run, billed);
                // The run's span has the executor's receipt; the request's has what the
                // gateway's receipt bills (the agent's price).
                crate::spans::billed(&run.receipt.cost.amount, &account.currency);
                let settlement = if succeeded && agent.price > Amount::ZERO {
                    Settlement::Charge {
                        payee: agent.owner.clone(),
                        amount: agent.price,
                    }
                } else {
                    Settlement::Void
                };
                app.metrics
                    .run(&agent.name, run.outcome.status.as_str(), started);
                (row, settlement, http_status(run.outcome.status))
            }
            Ok(Err(unrunnable)) => {
                let document =
                    error_document(app, &run_id, agent, &self.input, &unrunnable.to_string());
                let row = receipt_row(&run_id, &account.name, agent, mandate, &document);
                (row, Settlement::Void, StatusCode::BAD_GATEWAY)
            }
            Err(join) => {
                tracing::error!(error = %join, agent = %agent.name, "a run panicked");
                let why = "the run failed inside the gateway";
                let document = error_document(app, &run_id, agent, &self.input, why);
                let row = receipt_row(&run_id, &account.name, agent, mandate, &document);
                (row, Settlement::Void, StatusCode::BAD_GATEWAY)
            }
        };
        Ok(Reserved::Ran(Box::new(Finished {
            row,
            settlement,
            status,
        })))
    }
}

/// What steps 4 and 5 came to.
enum Reserved {
    /// The idempotency key's first call had finished: its document, nothing reserved.
    Replay(Done),
    /// The run ended: its receipt and settlement, to store.
    Ran(Box<Finished>),
}

struct Finished {
    row: StoredReceipt,
    settlement: Settlement,
    status: StatusCode,
}

/// The longest pause between two attempts to store a receipt, and how long to keep asking.
const SETTLE_PAUSE_MAX: Duration = Duration::from_secs(5);
const SETTLE_GIVE_UP: Duration = Duration::from_secs(15 * 60);

/// Asks the store again, with growing pauses, to take a finished run's receipt and settle its
/// money, until it does or refuses for good. A refusal other than a backend failure means the
/// run is no longer this process's to finish (another process voided it once this one's lease
/// ran out while the store was unreachable: the store's one-finish rule keeps the money right),
/// so there is nothing left to do. After [`SETTLE_GIVE_UP`] the run is left open for the
/// lease's sweep, which voids it when this process stops.
pub(crate) async fn settle_durably(
    store: &dyn aelc_store::Store,
    row: &StoredReceipt,
    settlement: &Settlement,
) {
    let began = Instant::now();
    let mut pause = Duration::from_millis(50);
    loop {
        tokio::time::sleep(pause).await;
        match store.finish_run(row, settlement).await {
            Ok(()) => {
                tracing::info!(run = %row.id, "stored a run's receipt after the store came back");
                return;
            }
            Err(StoreError::Backend(e)) if began.elapsed() < SETTLE_GIVE_UP => {
                tracing::debug!(error = %e, run = %row.id, "the store still refuses a receipt");
            }
            Err(e) => {
                tracing::error!(error = %e, run = %row.id,
                    "gave up storing a run's receipt; the lease's sweep voids its reservation");
                return;
            }
        }
        pause = (pause * 2).min(SETTLE_PAUSE_MAX);
    }
}

/// The HTTP status of a run that ended with `status` (see the module doc): the one mapping.
pub fn http_status(status: Status) -> StatusCode {
    match status {
        Status::Succeeded | Status::Failed => StatusCode::OK,
        Status::RejectedInput => StatusCode::UNPROCESSABLE_ENTITY,
        Status::InvalidOutput | Status::Error => StatusCode::BAD_GATEWAY,
    }
}

/// A JSON response of `text` (a document serialized once, also what the store keeps).
pub(crate) fn respond(
    status: StatusCode,
    text: String,
    replayed: Option<&'static str>,
) -> Response {
    let json = HeaderValue::from_static("application/json");
    let mut response = (status, [(header::CONTENT_TYPE, json)], text).into_response();
    if let Some(v) = replayed {
        response
            .headers_mut()
            .insert("idempotent-replayed", HeaderValue::from_static(v));
    }
    response
}

/// The store's row (and the response text) of a finished run. `billed`: the price the caller
/// pays (a successful run), which becomes the receipt's `cost` (the model calls' cost stays
/// `spent`); a run that did not succeed costs the caller nothing.
fn run_row(
    id: &str,
    tenant: &str,
    agent: &crate::project::Agent,
    mandate: Option<String>,
    run: &mut Run,
    billed: Option<(Amount, &str)>,
) -> StoredReceipt {
    if let Some((price, currency)) = billed {
        run.receipt.cost = aelc_runtime::receipt::Cost {
            amount: price.to_string(),
            currency: Some(currency.to_owned()),
        };
    } else if run.outcome.status != Status::Succeeded {
        run.receipt.cost.amount = "0".to_owned();
    }
    let output = run
        .outcome
        .output_json
        .as_deref()
        .and_then(|t| serde_json::from_str::<&serde_json::value::RawValue>(t).ok());
    let status = run.outcome.status;
    let document = RunResponse {
        status,
        code: run.outcome.code.as_deref(),
        output,
        receipt: &run.receipt,
        errors: run
            .input_errors
            .iter()
            .map(|e| InputError {
                pointer: &e.pointer,
                path: &e.path,
                code: e.code.as_str(),
                message: &e.message,
            })
            .collect(),
        refusal: run.refusal.as_deref(),
    };
    StoredReceipt {
        id: id.to_owned(),
        tenant: tenant.to_owned(),
        agent: agent.name.clone(),
        version: agent.version.clone(),
        status,
        code: run.outcome.code.clone(),
        mandate,
        json: document_text(&document),
        at_ms: now_ms(),
    }
}

/// The text of a run's response document, written into a buffer the size of a typical one
/// (`serde_json::to_string` starts at 128 bytes and grows three times for a 640-byte refusal).
fn document_text(document: &RunResponse<'_>) -> String {
    let mut text = Vec::with_capacity(1024);
    // A document of strings, numbers and a derived receipt always serializes.
    if serde_json::to_writer(&mut text, document).is_err() {
        return String::new();
    }
    // serde_json writes UTF-8 only.
    String::from_utf8(text).unwrap_or_default()
}

/// The store's row of a receipt: its indexed fields (status, code) read off the response
/// document it stores, so the two never disagree.
pub(crate) fn receipt_row(
    id: &str,
    tenant: &str,
    agent: &crate::project::Agent,
    mandate: Option<String>,
    document: &Json,
) -> StoredReceipt {
    StoredReceipt {
        id: id.to_owned(),
        tenant: tenant.to_owned(),
        agent: agent.name.clone(),
        version: agent.version.clone(),
        status: document["status"]
            .as_str()
            .and_then(Status::parse)
            .unwrap_or(Status::Error),
        code: document["code"].as_str().map(str::to_owned),
        mandate,
        json: document.to_string(),
        at_ms: now_ms(),
    }
}

/// The document of a run that ended inside the gateway without the executor's receipt (the
/// agent could not run, or its thread panicked): a whole receipt (`error`, `internal_error`,
/// nothing spent), so every stored receipt reads as the published receipt schema.
fn error_document(
    app: &AppState,
    id: &str,
    agent: &crate::project::Agent,
    input: &[u8],
    why: &str,
) -> Json {
    let node = app
        .project
        .program
        .node(agent.node)
        .map_or("", |n| n.name.as_str());
    let mut receipt = aelc_runtime::receipt::Receipt::rejected_input(
        id.to_owned(),
        &app.project.program.package.name,
        &agent.version,
        node,
        input,
    );
    receipt.status = Status::Error;
    receipt.code = Some(ReservedCode::InternalError.as_str().to_owned());
    receipt.refusal = Some(why.to_owned());
    // The run's span with the receipt the caller gets (the executor made none, or one that a
    // panic cut short).
    aelc_runtime::trace::ended_run(
        &app.project.program.package.name,
        &agent.version,
        node,
        &receipt.ended(),
    );
    json!({
        "status": Status::Error,
        "code": ReservedCode::InternalError.as_str(),
        "output": null,
        "receipt": receipt,
        "refusal": why,
    })
}

/// `application/json` (with any parameters); `application/x-ndjson` (sessions and streams,
/// spec §12.1) went to [`crate::live`] before this.
fn content_type(headers: &HeaderMap) -> Result<(), ApiError> {
    let value = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    match content_essence(headers).as_str() {
        "application/json" => Ok(()),
        _ => Err(ApiError::UnsupportedMediaType(if value.is_empty() {
            "nothing".to_owned()
        } else {
            value.chars().take(100).collect()
        })),
    }
}

/// The request's media type without its parameters, lowercased (`application/json`).
pub(crate) fn content_essence(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// `Ael-Mandate: ACCOUNT/NAME`: the call is made under one of the caller's mandates (the MCP
/// server hiring through this gateway), so its budget is checked in the reservation's
/// transaction and the receipt is the mandate's. Another account's mandate is not found.
pub(crate) async fn mandate_header(
    app: &AppState,
    account: &aelc_store::Account,
    headers: &HeaderMap,
) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get("ael-mandate") else {
        return Ok(None);
    };
    let id = value
        .to_str()
        .map_err(|_| ApiError::NotFound("the mandate".to_owned()))?;
    match app.store.mandate(id).await? {
        Some(m) if m.account == account.name => Ok(Some(m.id())),
        _ => Err(ApiError::NotFound(format!("the mandate {id}"))),
    }
}

pub(crate) fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let key = value.to_str().map_err(|_| ApiError::BadIdempotencyKey)?;
    if key.is_empty() || key.len() > 255 || !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ApiError::BadIdempotencyKey);
    }
    Ok(Some(key.to_owned()))
}

fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

/// Reads at most `max` bytes of `body` within `timeout`.
pub(crate) async fn read_body(
    body: Body,
    max: usize,
    timeout: Duration,
) -> Result<Bytes, ApiError> {
    match tokio::time::timeout(timeout, axum::body::to_bytes(body, max)).await {
        Err(_) => Err(ApiError::BodyTimeout),
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(e)) => {
            // axum reports a body over the limit as a length-limit error in the chain.
            let over = std::error::Error::source(&e)
                .map(|s| s.to_string().contains("length limit"))
                .unwrap_or(false)
                || e.to_string().contains("length limit");
            if over {
                Err(ApiError::TooLarge { limit: max })
            } else {
                Err(ApiError::BadBody(e.to_string()))
            }
        }
    }
}
