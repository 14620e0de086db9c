//! Sessions and streams over HTTP (spec §12.1, §13): `POST /v1/agents/{owner}/{name}/runs`
//! with an `application/x-ndjson` body, read frame by frame and line by line into the
//! runtime's session and stream API, each run billed through [`runs::execute`] like any other.
//!
//! - **A session** (an agent with several inputs, `combine: latest | zip`): one observation a
//!   line, `{"input": "camera", "at": "…", "value": {…}}`. Each line goes to
//!   [`Session::combine`] as it arrives; when the inputs combine, their document runs through
//!   [`runs::execute`] (gate, reservation, run, receipt, settlement). Freshness is measured at
//!   the gateway's wall clock (or the line's `at` when later): a stale input gets a stored
//!   `stale_input` receipt (`rejected_input`, nothing billed) and is never combined; the
//!   session goes on.
//! - **A stream** (an agent whose parameter is a `stream`): chunk envelopes of §7.1 into the
//!   bounded buffer ([`aelc_runtime::stream::channel`]), on the gateway's clock, every limit
//!   enforced. The agent runs on the chunks buffered when `on_full: pause` finds the buffer full
//!   (the consumer makes room) and at `{"end": "complete"}`. While a run is in progress, or
//!   `rate` makes the producer wait, **the body is not read**: the request's bytes stay in
//!   hyper's and the kernel's buffers and TCP's window closes on the client (backpressure).
//!   A stream that stops without `{"end": "complete"}` is never complete: its end gets a stored
//!   receipt (`incomplete_stream`, `stream_error`, `stream_cancelled`), nothing billed.
//!
//! A line that is refused (not an envelope, an unknown input, a value that does not decode, a
//! chunk over the stream's `chunk` bytes, a sequence rule) ends the request: a stored receipt
//! (`rejected_input`) naming the line and the field, 422 (413 for a line over its bound), and
//! nothing more is read. Runs that happened before it stand (each has its own receipt).
//!
//! The response is one JSON document: the last run's fields (`status`, `code`, `output`,
//! `receipt`), every run of the request in `runs`, the stream's counters in `stream`, and
//! for a refusal `error: {code, message, line, field}` with the refusal's receipt. The HTTP
//! status is the refusal's, else the last run's (as for one document), else 200.
//!
//! `Idempotency-Key: K` makes run n of the request use `K#n`: a retried session replays the
//! runs it made. There is no bound on a session's length (each line is bounded), but one
//! request makes at most [`MAX_RUNS`] runs; the gap between two frames is bounded by the
//! gateway's body timeout.

mod lines;

use aelc_runtime::reserved::ReservedCode;
use std::sync::Arc;
use std::time::Duration;

use aelc_runtime::exec::{
    parse_observation, session_line_bound, Combined, Externs, Session, STALE_INPUT,
};
use aelc_runtime::pipeline::{Status, SystemClock};
use aelc_runtime::receipt::Receipt;
use aelc_runtime::stream::{self, Envelope, Offered, StreamEnd, StreamError, StreamStats};
use aelc_runtime::value::Value;
use aelc_store::Account;
use axum::body::{Body, Bytes, HttpBody};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{json, Value as Json};

use crate::error::ApiError;
use crate::runs::{self, Call};
use crate::AppState;
use lines::{Lines, TooLong};

/// The most runs one session or stream request makes; the next is refused (413).
pub const MAX_RUNS: usize = 1000;

/// Whether the body is a session or a stream (`application/x-ndjson`).
pub fn is_ndjson(headers: &HeaderMap) -> bool {
    runs::content_essence(headers) == "application/x-ndjson"
}

/// A session or a stream run of agent `agent_name` (see the module doc).
pub async fn create_live_run(
    app: Arc<AppState>,
    agent_name: String,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let account = crate::accounts::caller(&app, &headers).await?;
    let agent = app
        .project
        .agent_index(&agent_name)
        .ok_or_else(|| ApiError::NotFound(format!("the agent {agent_name}")))?;
    let key = runs::idempotency_key(&headers)?;
    let mandate = runs::mandate_header(&app, &account, &headers).await?;
    let spec = &app.project.agents[agent];
    if !spec.missing.is_empty() {
        return Err(ApiError::AgentUnavailable(format!(
            "{agent_name} needs {}, which this gateway does not have",
            spec.missing.join(", ")
        )));
    }
    let node = app.project.program.node(spec.node).ok_or_else(|| {
        ApiError::Internal(format!("{agent_name}: its node is not in the program"))
    })?;
    let mut live = Live {
        app: &app,
        account: &account,
        agent,
        key,
        mandate,
        runs: Vec::new(),
        body,
        timeout: app.body_timeout,
    };
    let ended = match stream::node_stream(node) {
        Some(index) => live.stream(index).await?,
        None => live.session().await?,
    };
    Ok(live.respond(ended))
}

/// Why a request stopped before its end, as the caller is told.
struct Stop {
    status: StatusCode,
    /// The receipt's and the error's code.
    code: String,
    message: String,
    line: Option<usize>,
    field: Option<String>,
    /// The decoder's errors of a value that did not decode.
    errors: Vec<Json>,
}

impl Stop {
    fn line(status: StatusCode, code: &str, line: usize, field: &str, message: String) -> Stop {
        Stop {
            status,
            code: code.to_owned(),
            message: format!("line {line}: `{field}`: {message}"),
            line: Some(line),
            field: Some(field.to_owned()),
            errors: Vec::new(),
        }
    }

    fn stream(e: &StreamError) -> Stop {
        // A chunk over its bound is "too large", like a document over `max_input_bytes`.
        let status = if e.field == "chunk" {
            StatusCode::PAYLOAD_TOO_LARGE
        } else {
            StatusCode::UNPROCESSABLE_ENTITY
        };
        Stop::line(
            status,
            "rejected_stream",
            e.line,
            &e.field,
            e.message.clone(),
        )
    }
}

/// How a request ended.
enum Ended {
    /// Every line was taken (and a stream ended complete).
    Whole { stream: Option<StreamStats> },
    /// Refused; the refusal's stored document.
    Stopped {
        stop: Stop,
        document: Json,
        stream: Option<StreamStats>,
    },
}

/// The next line of the body.
enum Next {
    Line(Bytes),
    /// The body ended.
    End,
    TooLong(TooLong),
    /// No frame within the body timeout.
    Idle,
    /// The connection broke.
    Broken(String),
}

/// One request in progress.
struct Live<'a> {
    app: &'a Arc<AppState>,
    account: &'a Account,
    agent: usize,
    key: Option<String>,
    mandate: Option<String>,
    /// The HTTP statuses and response documents of the runs made, in order.
    runs: Vec<(StatusCode, Json)>,
    body: Body,
    timeout: Duration,
}

impl Live<'_> {
    /// The next line within `lines`' bound, reading a frame only when the last is used up:
    /// while the caller of this is busy (a run, a paused stream) nothing is read.
    async fn next_line(&mut self, lines: &mut Lines) -> Next {
        loop {
            if !lines.needs_frame() {
                match lines.next_line() {
                    Ok(Some(line)) => return Next::Line(line),
                    Ok(None) => {}
                    Err(e) => return Next::TooLong(e),
                }
            }
            let frame =
                std::future::poll_fn(|cx| std::pin::Pin::new(&mut self.body).poll_frame(cx));
            match tokio::time::timeout(self.timeout, frame).await {
                Err(_) => return Next::Idle,
                Ok(None) => {
                    return match lines.last_line() {
                        Some(line) => Next::Line(line),
                        None => Next::End,
                    }
                }
                Ok(Some(Err(e))) => return Next::Broken(e.to_string()),
                Ok(Some(Ok(frame))) => {
                    // Trailers carry no lines.
                    if let Ok(data) = frame.into_data() {
                        lines.push(data);
                    }
                }
            }
        }
    }

    /// Runs the agent on `inputs` (a session's combined values, a stream's chunks) through
    /// the one run path: gate, reservation, run, receipt, settlement.
    async fn run(&mut self, inputs: &[Value]) -> Result<Option<Stop>, ApiError> {
        if self.runs.len() >= MAX_RUNS {
            return Ok(Some(Stop {
                status: StatusCode::PAYLOAD_TOO_LARGE,
                code: "too_many_runs".to_owned(),
                message: format!(
                    "one request makes at most {MAX_RUNS} runs; send the rest in another request"
                ),
                line: None,
                field: None,
                errors: Vec::new(),
            }));
        }
        let app = self.app;
        let node = app.project.agents[self.agent].node;
        let Some(ir) = app.project.program.node(node) else {
            return Err(ApiError::Internal("the agent's node is gone".to_owned()));
        };
        let input = app.project.executor.input_json(ir, inputs);
        let n = self.runs.len() + 1;
        let done = runs::execute(
            app,
            Call {
                tenant: self.account,
                agent: self.agent,
                input: Bytes::from(input),
                idempotency_key: self.key.as_ref().map(|k| format!("{k}#{n}")),
                mandate: self.mandate.clone(),
            },
        )
        .await?;
        self.runs.push((done.status, done.document()));
        Ok(None)
    }

    /// A refusal's receipt (`rejected_input` with `code`, nothing ran, nothing billed),
    /// stored before it is answered; its response document.
    async fn refused(&mut self, code: &str, why: &str, errors: &[Json]) -> Result<Json, ApiError> {
        let app = self.app;
        app.metrics.gate_refusal(code);
        let agent = &app.project.agents[self.agent];
        let node = app
            .project
            .program
            .node(agent.node)
            .map_or("", |n| n.name.as_str());
        let id = format!("rcpt_{}", uuid::Uuid::now_v7().simple());
        let mut receipt = Receipt::rejected_input(
            id.clone(),
            &app.project.program.package.name,
            &agent.version,
            node,
            b"",
        );
        receipt.code = Some(code.to_owned());
        receipt.refusal = Some(why.to_owned());
        // Its span, as the executor's gate shows a refusal (the executor never saw this one).
        aelc_runtime::trace::refused(
            node,
            aelc_runtime::trace::GateRefusal {
                run: receipt.ended(),
                errors: errors.len(),
                check: None,
            },
        );
        let mut document = json!({
            "status": Status::RejectedInput,
            "code": code,
            "output": null,
            "receipt": receipt,
            "refusal": why,
        });
        if !errors.is_empty() {
            document["errors"] = Json::Array(errors.to_vec());
        }
        let row = runs::receipt_row(
            &id,
            &self.account.name,
            agent,
            self.mandate.clone(),
            &document,
        );
        app.refusals.record_refusal(row).await?;
        Ok(document)
    }

    async fn stop(&mut self, stop: Stop, stream: Option<StreamStats>) -> Result<Ended, ApiError> {
        let document = self
            .refused(&stop.code, &stop.message, &stop.errors)
            .await?;
        Ok(Ended::Stopped {
            stop,
            document,
            stream,
        })
    }

    /// A session of observations (see the module doc).
    async fn session(&mut self) -> Result<Ended, ApiError> {
        let app = Arc::clone(self.app);
        let agent = &app.project.agents[self.agent];
        let externs = Externs::new();
        let mut session = match Session::new(&app.project.executor, agent.node, &externs) {
            Ok(s) => s,
            Err(e) => {
                return self
                    .stop(
                        Stop {
                            status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
                            code: "not_a_session".to_owned(),
                            message: format!(
                                "{e}; send its input as one `application/json` document"
                            ),
                            line: None,
                            field: None,
                            errors: Vec::new(),
                        },
                        None,
                    )
                    .await
            }
        };
        let bound = session_line_bound(app.project.program.limits.max_input_bytes);
        let mut lines = Lines::new(usize::try_from(bound).unwrap_or(usize::MAX));
        loop {
            let line = match self.next_line(&mut lines).await {
                Next::Line(line) => line,
                Next::End => return Ok(Ended::Whole { stream: None }),
                other => {
                    let stop = self.body_stop(other, lines.line + 1, "value");
                    return self.stop(stop, None).await;
                }
            };
            let n = lines.line;
            let Ok(text) = std::str::from_utf8(&line) else {
                let stop = Stop::line(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    ReservedCode::InvalidInput.as_str(),
                    n,
                    "line",
                    "the line is not UTF-8".to_owned(),
                );
                return self.stop(stop, None).await;
            };
            let observation = match parse_observation(n, text) {
                Ok(Some(o)) => o,
                Ok(None) => continue,
                Err(e) => {
                    let stop = Stop::line(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        ReservedCode::InvalidInput.as_str(),
                        n,
                        &e.field,
                        e.message,
                    );
                    return self.stop(stop, None).await;
                }
            };
            match session.combine(&observation, Some(crate::now_ms())) {
                Combined::Waiting => {}
                Combined::Refused { errors, why, field } => {
                    let mut stop = Stop::line(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        ReservedCode::InvalidInput.as_str(),
                        n,
                        field,
                        why,
                    );
                    stop.errors = errors
                        .iter()
                        .map(|e| {
                            json!({"pointer": e.pointer, "path": e.path,
                                   "code": e.code.as_str(), "message": e.message})
                        })
                        .collect();
                    return self.stop(stop, None).await;
                }
                Combined::Stale(why) => {
                    let document = self
                        .refused(STALE_INPUT, &format!("line {n}: stale input: {why}"), &[])
                        .await?;
                    self.runs
                        .push((runs::http_status(Status::RejectedInput), document));
                }
                Combined::Ready(inputs) => {
                    if let Some(stop) = self.run(&inputs).await? {
                        return self.stop(stop, None).await;
                    }
                }
            }
        }
    }

    /// A stream of chunks (see the module doc).
    async fn stream(&mut self, index: u32) -> Result<Ended, ApiError> {
        let app = Arc::clone(self.app);
        let (mut writer, reader) =
            stream::channel(app.project.program, index, Box::new(SystemClock::default()))
                .map_err(ApiError::Internal)?;
        let line_bytes = usize::try_from(writer.line_bytes()).unwrap_or(usize::MAX);
        let mut lines = Lines::new(line_bytes);
        let cut = loop {
            let line = match self.next_line(&mut lines).await {
                Next::Line(line) => line,
                Next::End => break None,
                Next::Broken(why) => break Some(format!("the connection broke: {why}")),
                Next::Idle => {
                    let stop = self.body_stop(Next::Idle, lines.line + 1, "line");
                    drop(writer);
                    return self.stop(stop, Some(reader.stats())).await;
                }
                too_long @ Next::TooLong(_) => {
                    let stop = self.body_stop(too_long, lines.line + 1, "chunk");
                    return self.stop(stop, Some(reader.stats())).await;
                }
            };
            let text = String::from_utf8_lossy(&line);
            let sent = match writer.try_send(&text) {
                Ok(Some(sent)) => sent,
                Ok(None) => continue,
                Err(e) => return self.stop(Stop::stream(&e), Some(reader.stats())).await,
            };
            let (envelope, mut offered) = sent;
            loop {
                match offered {
                    Offered::Full => {
                        if reader.buffered() == 0 {
                            let e = StreamError::new(
                                lines.line,
                                "buffer",
                                "the chunk alone is larger than the stream's `buffer`",
                            );
                            return self.stop(Stop::stream(&e), Some(reader.stats())).await;
                        }
                        // The consumer makes room: the agent runs on what is buffered, and
                        // the body is not read meanwhile.
                        let chunks = reader.take().chunks;
                        if let Some(stop) = self.run(&[Value::List(chunks)]).await? {
                            return self.stop(stop, Some(reader.stats())).await;
                        }
                    }
                    Offered::Wait(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                    _ => break,
                }
                offered = match writer.try_send_envelope(&envelope) {
                    Ok(o) => o,
                    Err(e) => return self.stop(Stop::stream(&e), Some(reader.stats())).await,
                };
            }
            if matches!(envelope, Envelope::End(_)) || reader.end().is_some() {
                // Whatever follows the end record is not read.
                break None;
            }
        };
        drop(writer);
        let taken = reader.take();
        let stats = reader.stats();
        match taken.end.unwrap_or(StreamEnd::Cut) {
            StreamEnd::Complete => {
                if let Some(stop) = self.run(&[Value::List(taken.chunks)]).await? {
                    return self.stop(stop, Some(stats)).await;
                }
                Ok(Ended::Whole {
                    stream: Some(stats),
                })
            }
            end => {
                let mut message = end.describe();
                if let Some(why) = cut {
                    message = format!("{message} ({why})");
                }
                let stop = Stop {
                    status: StatusCode::UNPROCESSABLE_ENTITY,
                    code: end.code().to_owned(),
                    message,
                    line: None,
                    field: Some("end".to_owned()),
                    errors: Vec::new(),
                };
                self.stop(stop, Some(stats)).await
            }
        }
    }

    /// The refusal of a body that broke off, idled or sent too long a line.
    fn body_stop(&self, next: Next, line: usize, field: &str) -> Stop {
        match next {
            Next::TooLong(e) => Stop::line(
                StatusCode::PAYLOAD_TOO_LARGE,
                if field == "chunk" {
                    "rejected_stream"
                } else {
                    "input_too_large"
                },
                e.line,
                field,
                if field == "chunk" {
                    "the line is longer than a chunk of this stream can be with its envelope (see the stream's `chunk` limit)".to_owned()
                } else {
                    "the line is longer than an observation can be (`max_input_bytes` for its value plus its envelope)".to_owned()
                },
            ),
            Next::Idle => Stop::line(
                StatusCode::REQUEST_TIMEOUT,
                "body_timeout",
                line,
                "line",
                format!(
                    "no bytes arrived for {} s, so the request ends here",
                    self.timeout.as_secs()
                ),
            ),
            Next::Broken(why) => Stop::line(
                StatusCode::BAD_REQUEST,
                "bad_body",
                line,
                "line",
                format!("the request body broke off: {why}"),
            ),
            Next::Line(_) | Next::End => Stop::line(
                StatusCode::INTERNAL_SERVER_ERROR,
                ReservedCode::InternalError.as_str(),
                line,
                "line",
                "a line was refused without a reason".to_owned(),
            ),
        }
    }

    /// The response (see the module doc).
    fn respond(self, ended: Ended) -> Response {
        let counters = |s: &StreamStats| {
            json!({"accepted": s.accepted, "duplicates": s.duplicates, "stale": s.stale,
                   "over_rate": s.over_rate, "dropped_oldest": s.dropped_oldest,
                   "dropped_newest": s.dropped_newest, "expired": s.expired,
                   "paused": s.paused, "peak_bytes": s.peak_bytes})
        };
        let (status, mut document, stream) = match ended {
            Ended::Whole { stream } => {
                let (status, document) = self.runs.last().cloned().unwrap_or_else(|| {
                    (
                        StatusCode::OK,
                        json!({"status": null, "code": null, "output": null, "receipt": null}),
                    )
                });
                (status, document, stream)
            }
            Ended::Stopped {
                stop,
                mut document,
                stream,
            } => {
                document["error"] = json!({"code": stop.code, "message": stop.message,
                                           "line": stop.line, "field": stop.field});
                (stop.status, document, stream)
            }
        };
        document["runs"] = self.runs.into_iter().map(|(_, run)| run).collect();
        if let Some(s) = &stream {
            document["stream"] = counters(s);
        }
        runs::respond(status, document.to_string(), None)
    }
}
