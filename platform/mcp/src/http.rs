//! MCP over Streamable HTTP at `/mcp` (`aelc serve`, `aelc mcp --http`): rmcp's session
//! service behind one gate, so that the seed's "one server, one mandate" holds over the network
//! as "one token, one mandate".
//!
//! Every request passes [`admit`] before rmcp sees it:
//! - **A mandate token**, `Authorization: Bearer aelm_…` (`aelc mandate token ACCOUNT/NAME`),
//!   looked up by its SHA-256 in the store on every request, so `aelc mandate revoke` ends it at
//!   once, sessions included. No token, an unknown, expired or revoked one, or an account API
//!   key (not a mandate token) is `401` with `WWW-Authenticate: Bearer` (RFC 6750); a token in
//!   the URL's query is refused the same way (it would end up in logs and histories).
//! - **The session is the token's**: a session begun with one token is refused to any other
//!   (`403`), and each call acts under the token's mandate (a [`Grant`] on the request, read by
//!   the tools); nothing a client sends names a mandate.
//! - **Bounded**: at most `max_sessions` sessions, `max_sessions_per_token` per token (`503`
//!   with `Retry-After` beyond); a body larger than `max_body_bytes` is `413`; a body that is
//!   not JSON is JSON-RPC's parse error (`-32700`), JSON that is not a JSON-RPC message its
//!   invalid request (`-32600`), both `400`.
//!
//! rmcp does the rest: sessions (`Mcp-Session-Id`), server-to-client requests (elicitation)
//! over the request's event stream, the `Origin` check (a browser origin not allowed is `403`,
//! a request without `Origin` — not a browser — passes), the `Host` check against DNS
//! rebinding, and closing a session idle for `idle_timeout` (its `keep_alive`). A sweeper
//! ([`Gate::sweep`]) forgets sessions rmcp closed and closes those whose token was revoked or
//! expired, so their open streams end too.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use aelc_gateway::accounts::{bearer_key, key_sha256};
use aelc_store::Store;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{json, Value};
/// What stops `/mcp`'s sessions and sweeper (rmcp's own cancellation token).
pub use tokio_util::sync::CancellationToken;

use crate::McpServer;

/// The prefix of a mandate token (an account API key starts `ael_`).
pub const TOKEN_PREFIX: &str = "aelm_";

/// The header rmcp names a session with.
const SESSION_HEADER: &str = "mcp-session-id";

/// A new random mandate token (244 random bits), shown once; the store keeps its [`token_sha256`].
pub fn new_token() -> String {
    format!("{TOKEN_PREFIX}{}", aelc_gateway::accounts::random_secret())
}

/// What the store keeps of a token (the same hash as an account key's).
pub fn token_sha256(token: &str) -> String {
    key_sha256(token)
}

/// How `/mcp` is bounded (`aelc serve --mcp-…` and `aelc mcp --http`'s flags).
#[derive(Clone, Debug)]
pub struct HttpLimits {
    /// Sessions open at once, all tokens together; one more is `503`.
    pub max_sessions: usize,
    /// Sessions one token holds at once; one more is `503`.
    pub max_sessions_per_token: usize,
    /// A session with no message either way for this long is closed.
    pub idle_timeout: Duration,
    /// The largest request body.
    pub max_body_bytes: usize,
    /// Browser origins allowed to call (`https://app.example:443`, `http://localhost:*`); a
    /// request with any other `Origin` is `403`; one without `Origin` passes.
    pub allowed_origins: Vec<String>,
    /// `Host` names (or `host:port`) the server answers to, against DNS rebinding; empty: any.
    pub allowed_hosts: Vec<String>,
}

/// The default [`HttpLimits::max_sessions`].
pub const MAX_SESSIONS: usize = 1024;
/// The default [`HttpLimits::max_sessions_per_token`]: room for an agent framework's pool of
/// parallel sessions, not for one token to take the server.
pub const MAX_SESSIONS_PER_TOKEN: usize = 32;
/// The default [`HttpLimits::idle_timeout`], in seconds (rmcp's own default).
pub const IDLE_TIMEOUT_SECS: u64 = 300;
/// The default [`HttpLimits::max_body_bytes`] (rmcp's own default).
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

impl Default for HttpLimits {
    fn default() -> HttpLimits {
        HttpLimits {
            max_sessions: MAX_SESSIONS,
            max_sessions_per_token: MAX_SESSIONS_PER_TOKEN,
            idle_timeout: Duration::from_secs(IDLE_TIMEOUT_SECS),
            max_body_bytes: MAX_BODY_BYTES,
            allowed_origins: Vec::new(),
            allowed_hosts: loopback_hosts(),
        }
    }
}

/// rmcp's default `Host` allow-list: a server on this machine, reached as this machine.
pub fn loopback_hosts() -> Vec<String> {
    ["localhost", "127.0.0.1", "::1", "[::1]"]
        .map(str::to_owned)
        .to_vec()
}

/// The mandate a request acts under, put on it by [`admit`] once its token is checked.
#[derive(Clone, Debug)]
pub struct Grant {
    /// `ACCOUNT/NAME`.
    pub mandate: String,
}

/// The `/mcp` route: rmcp's Streamable HTTP service for `server` (built with
/// [`McpServer::for_tokens`]) behind [`admit`]. `only`: the one mandate whose tokens are
/// accepted (`aelc mcp --http --mandate`); `None` accepts every mandate's. Stops its sessions
/// when `cancel` is cancelled.
pub fn router(
    server: McpServer,
    store: Arc<dyn Store>,
    limits: &HttpLimits,
    only: Option<String>,
    cancel: CancellationToken,
) -> axum::Router {
    let mut sessions = SessionConfig::default();
    sessions.keep_alive = Some(limits.idle_timeout);
    let mut manager = LocalSessionManager::default();
    manager.session_config = sessions;
    let manager = Arc::new(manager);
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(cancel.child_token())
        .with_max_request_body_bytes(limits.max_body_bytes)
        .with_allowed_origins(limits.allowed_origins.clone())
        .enforce_origin_validation();
    let config = if limits.allowed_hosts.is_empty() {
        config.disable_allowed_hosts()
    } else {
        config.with_allowed_hosts(limits.allowed_hosts.clone())
    };
    let service =
        StreamableHttpService::new(move || Ok(server.clone()), Arc::clone(&manager), config);
    let gate = Arc::new(Gate {
        store,
        limits: limits.clone(),
        only,
        manager,
        sessions: Mutex::new(Sessions::default()),
    });
    tokio::spawn(Arc::clone(&gate).sweep(cancel));
    axum::Router::new()
        .route_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(gate, admit))
}

/// Serves `/mcp` alone on `listener` (`aelc mcp --http`) until `shutdown` resolves.
pub async fn serve(
    router: axum::Router,
    listener: tokio::net::TcpListener,
    cancel: CancellationToken,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            shutdown.await;
            cancel.cancel();
        })
        .await
        .map_err(|e| format!("the MCP HTTP server stopped: {e}"))
}

/// What the gate shares between requests.
struct Gate {
    store: Arc<dyn Store>,
    limits: HttpLimits,
    only: Option<String>,
    manager: Arc<LocalSessionManager>,
    sessions: Mutex<Sessions>,
}

/// The open sessions, by id, with their token's hash; and sessions being opened.
#[derive(Default)]
struct Sessions {
    open: HashMap<String, String>,
    /// Initializations in flight, by token hash (counted against the caps).
    opening: HashMap<String, usize>,
}

impl Sessions {
    fn held_by(&self, token: &str) -> usize {
        self.open.values().filter(|t| *t == token).count()
            + self.opening.get(token).copied().unwrap_or(0)
    }

    fn total(&self) -> usize {
        self.open.len() + self.opening.values().sum::<usize>()
    }
}

/// A session being opened: released when the initialization ends, however it ends.
struct Opening<'a> {
    gate: &'a Gate,
    token: String,
}

impl Drop for Opening<'_> {
    fn drop(&mut self) {
        let mut sessions = self.gate.lock();
        if let Some(n) = sessions.opening.get_mut(&self.token) {
            *n -= 1;
            if *n == 0 {
                sessions.opening.remove(&self.token);
            }
        }
    }
}

impl Gate {
    fn lock(&self) -> std::sync::MutexGuard<'_, Sessions> {
        // The map stays consistent whatever panicked while holding it (each change is one call).
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a session being opened by `token` against the caps, until the returned guard
    /// is dropped (by then the session is in `open`, or was never made).
    fn open(&self, token: &str) -> Result<Opening<'_>, Refusal> {
        let mut sessions = self.lock();
        if sessions.total() >= self.limits.max_sessions {
            return Err(Refusal::Busy(
                "the server holds as many MCP sessions as it may; retry later".to_owned(),
            ));
        }
        if sessions.held_by(token) >= self.limits.max_sessions_per_token {
            return Err(Refusal::Busy(format!(
                "this token holds {} sessions, as many as one token may; end one (DELETE) or \
                 retry later",
                self.limits.max_sessions_per_token
            )));
        }
        *sessions.opening.entry(token.to_owned()).or_default() += 1;
        Ok(Opening {
            gate: self,
            token: token.to_owned(),
        })
    }

    /// Closes every open session of `token` (revoked or expired).
    async fn close_sessions_of(&self, token: &str) {
        let ids: Vec<String> = {
            let mut sessions = self.lock();
            let ids: Vec<String> = sessions
                .open
                .iter()
                .filter(|(_, t)| *t == token)
                .map(|(id, _)| id.clone())
                .collect();
            for id in &ids {
                sessions.open.remove(id);
            }
            ids
        };
        for id in ids {
            self.close(&id).await;
        }
    }

    async fn close(&self, id: &str) {
        use rmcp::transport::streamable_http_server::SessionManager;
        let id: rmcp::transport::streamable_http_server::SessionId = Arc::from(id);
        if let Err(e) = self.manager.close_session(&id).await {
            tracing::debug!(session = %id, error = %e, "closing an MCP session");
        }
    }

    /// Every second: forgets the sessions rmcp closed (idle, deleted, ended) and closes those
    /// whose token can no longer be used.
    async fn sweep(self: Arc<Gate>, cancel: CancellationToken) {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tick.tick() => {}
            }
            let live: std::collections::HashSet<String> = self
                .manager
                .sessions
                .read()
                .await
                .keys()
                .map(|id| id.to_string())
                .collect();
            let tokens: std::collections::HashSet<String> = {
                let mut sessions = self.lock();
                sessions.open.retain(|id, _| live.contains(id));
                sessions.open.values().cloned().collect()
            };
            let now = aelc_gateway::now_ms();
            for token in tokens {
                let usable = match self.store.mandate_token(&token).await {
                    Ok(Some(t)) => t.refusal(now).is_none(),
                    Ok(None) => false,
                    // The store is unreachable: the next request says so; keep the sessions.
                    Err(_) => true,
                };
                if !usable {
                    self.close_sessions_of(&token).await;
                }
            }
        }
    }
}

/// Every refusal of the gate: a stable code, a status and a sentence the caller can act on, in
/// the gateway's shape (`{"error": {"code", "message"}}`), or JSON-RPC's error object for a body
/// that is not one message. Made into a response in one place ([`IntoResponse`]).
#[derive(Debug)]
enum Refusal {
    /// No usable `Authorization: Bearer …` (RFC 6750 §3.1: no error code without a token).
    NoToken(&'static str),
    /// A token that is not a usable mandate token (`invalid_token`).
    BadToken(&'static str),
    /// A token in the URL's query (`invalid_request`).
    TokenInUrl,
    /// A session opened with another token.
    AnotherTokensSession,
    /// A session cap is reached.
    Busy(String),
    /// The store cannot be read.
    Store(String),
    /// The body is larger than `max_body_bytes`.
    TooLarge(usize),
    /// The body is not JSON (JSON-RPC `-32700`).
    Parse(String),
    /// JSON that is not one MCP JSON-RPC message (JSON-RPC `-32600`), with its `id` if any.
    Invalid(Value, String),
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        // RFC 6750 §3's challenge for a 401: its `error` only when a token was sent.
        let (status, code, message, challenge) = match self {
            Refusal::Parse(why) => {
                return jsonrpc_error(StatusCode::BAD_REQUEST, Value::Null, -32700, &why)
            }
            Refusal::Invalid(id, why) => {
                return jsonrpc_error(StatusCode::BAD_REQUEST, id, -32600, &why)
            }
            Refusal::TooLarge(limit) => {
                let why = format!("Invalid Request: the body is larger than {limit} bytes");
                return jsonrpc_error(StatusCode::PAYLOAD_TOO_LARGE, Value::Null, -32600, &why);
            }
            Refusal::NoToken(why) => (
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                why.to_owned(),
                Some(None),
            ),
            Refusal::BadToken(why) => (
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                why.to_owned(),
                Some(Some("invalid_token")),
            ),
            Refusal::TokenInUrl => (
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "a token in the URL is refused: send it in the header \
                 `Authorization: Bearer TOKEN`"
                    .to_owned(),
                Some(Some("invalid_request")),
            ),
            Refusal::AnotherTokensSession => (
                StatusCode::FORBIDDEN,
                "forbidden",
                "this session was opened with another token".to_owned(),
                None,
            ),
            Refusal::Busy(why) => (StatusCode::SERVICE_UNAVAILABLE, "overloaded", why, None),
            Refusal::Store(why) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "store_unavailable",
                why,
                None,
            ),
        };
        let body = json!({"error": {"code": code, "message": message}});
        let mut response = (status, axum::Json(body)).into_response();
        let headers = response.headers_mut();
        if let Some(error) = challenge {
            let challenge = match error {
                Some(e) => format!(
                    "Bearer realm=\"aelc-mcp\", error=\"{e}\", error_description=\"{}\"",
                    message.replace(['"', '\\'], "'")
                ),
                None => "Bearer realm=\"aelc-mcp\"".to_owned(),
            };
            if let Ok(value) = HeaderValue::from_str(&challenge) {
                headers.insert(header::WWW_AUTHENTICATE, value);
            }
        }
        if status == StatusCode::SERVICE_UNAVAILABLE {
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}

/// The gate in front of rmcp (see the module doc).
async fn admit(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    match pass(&gate, request, next).await {
        Ok(response) => response,
        Err(refusal) => refusal.into_response(),
    }
}

async fn pass(gate: &Gate, request: Request, next: Next) -> Result<Response, Refusal> {
    if request.uri().query().is_some_and(query_has_token) {
        return Err(Refusal::TokenInUrl);
    }
    let Some(token) = bearer_key(request.headers()) else {
        return Err(Refusal::NoToken(
            if request.headers().contains_key(header::AUTHORIZATION) {
                "the Authorization header must be one `Bearer TOKEN`"
            } else {
                "this endpoint needs a mandate token: `Authorization: Bearer TOKEN` \
                 (a human makes one with `aelc mandate token ACCOUNT/NAME`)"
            },
        ));
    };
    let hash = token_sha256(token);
    let found = gate
        .store
        .mandate_token(&hash)
        .await
        .map_err(|e| Refusal::Store(format!("the store cannot be read: {e}")))?;
    let Some(found) = found else {
        let is_account_key = matches!(gate.store.account_by_key(&hash).await, Ok(Some(_)));
        return Err(Refusal::BadToken(if is_account_key {
            "an account API key is not a mandate token; a human makes one with \
             `aelc mandate token ACCOUNT/NAME`"
        } else {
            "unknown token"
        }));
    };
    if let Some(why) = found.refusal(aelc_gateway::now_ms()) {
        gate.close_sessions_of(&hash).await;
        return Err(Refusal::BadToken(why));
    }
    if gate
        .only
        .as_ref()
        .is_some_and(|only| *only != found.mandate)
    {
        return Err(Refusal::BadToken(
            "this server serves another mandate's tokens only",
        ));
    }
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let Some(id) = &session {
        let owner = gate.lock().open.get(id).cloned();
        if owner.is_some_and(|owner| owner != hash) {
            return Err(Refusal::AnotherTokensSession);
        }
    }
    let (mut parts, body) = request.into_parts();
    parts.extensions.insert(Grant {
        mandate: found.mandate.clone(),
    });
    let mut opening = None;
    let body = if parts.method == Method::POST {
        let limit = gate.limits.max_body_bytes;
        let bytes = axum::body::to_bytes(body, limit)
            .await
            .map_err(|_| Refusal::TooLarge(limit))?;
        let message = check_message(&bytes)?;
        let initializes = matches!(
            &message,
            ClientJsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::InitializeRequest(_))
        );
        if initializes && session.is_none() {
            opening = Some(gate.open(&hash)?);
        }
        Body::from(bytes)
    } else {
        body
    };
    let deleting = parts.method == Method::DELETE;
    let response = next.run(Request::from_parts(parts, body)).await;
    if opening.is_some() {
        if let Some(id) = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
        {
            gate.lock().open.insert(id.to_owned(), hash.clone());
        }
    }
    drop(opening);
    if deleting && response.status().is_success() {
        if let Some(id) = &session {
            gate.lock().open.remove(id);
        }
        // rmcp answers a session's end `202 Accepted`; it has ended, and the Python SDK warns
        // on anything but `200`.
        return Ok(StatusCode::OK.into_response());
    }
    Ok(response)
}

/// Whether a URL query carries a credential: an `access_token`/`token`/`key` parameter, or a
/// value shaped like a mandate token or an account key.
fn query_has_token(query: &str) -> bool {
    query.split('&').any(|pair| {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let name = name.to_ascii_lowercase();
        matches!(
            name.as_str(),
            "access_token" | "token" | "key" | "api_key" | "authorization"
        ) || value.starts_with(TOKEN_PREFIX)
            || value.starts_with("ael_")
            || value.to_ascii_lowercase().starts_with("bearer")
    })
}

/// The body as one JSON-RPC message, or the protocol's error for it.
fn check_message(bytes: &[u8]) -> Result<ClientJsonRpcMessage, Refusal> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| Refusal::Parse(format!("Parse error: the body is not JSON ({e})")))?;
    let id = match &value {
        Value::Object(o) => match o.get("id") {
            Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
            _ => Value::Null,
        },
        _ => Value::Null,
    };
    serde_json::from_value(value).map_err(|e| {
        Refusal::Invalid(
            id,
            format!("Invalid Request: not one MCP JSON-RPC message ({e})"),
        )
    })
}

fn jsonrpc_error(status: StatusCode, id: Value, code: i64, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (status, axum::Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_in_queries_are_found() {
        assert!(query_has_token("access_token=x"));
        assert!(query_has_token("a=1&Token=x"));
        assert!(query_has_token("x=aelm_0123"));
        assert!(query_has_token("x=ael_0123"));
        assert!(!query_has_token("cursor=2&q=hello"));
    }

    #[test]
    fn malformed_bodies_get_the_protocol_errors() {
        let code = |bytes: &[u8]| match check_message(bytes) {
            Ok(message) => panic!("{message:?} was accepted"),
            Err(refusal) => refusal.into_response().status(),
        };
        assert_eq!(code(b"{not json"), StatusCode::BAD_REQUEST);
        assert_eq!(code(b"[1, 2]"), StatusCode::BAD_REQUEST);
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1}"#),
            StatusCode::BAD_REQUEST
        );
        assert!(check_message(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).is_ok());
    }

    #[test]
    fn refusals_carry_their_challenge() {
        let challenge = |r: Refusal| {
            let response = r.into_response();
            let header = response
                .headers()
                .get(header::WWW_AUTHENTICATE)
                .map(|v| v.to_str().unwrap_or_default().to_owned());
            (response.status(), header)
        };
        assert_eq!(
            challenge(Refusal::NoToken("x")),
            (
                StatusCode::UNAUTHORIZED,
                Some("Bearer realm=\"aelc-mcp\"".to_owned())
            )
        );
        let (status, header) = challenge(Refusal::BadToken("the \"token\" expired"));
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(
            header.as_deref(),
            Some("Bearer realm=\"aelc-mcp\", error=\"invalid_token\", error_description=\"the 'token' expired\"")
        );
        assert!(challenge(Refusal::TokenInUrl)
            .1
            .is_some_and(|h| h.contains("invalid_request")));
        assert_eq!(
            challenge(Refusal::Busy("full".into())),
            (StatusCode::SERVICE_UNAVAILABLE, None)
        );
    }

    #[test]
    fn tokens_are_long_random_and_prefixed() {
        let (a, b) = (new_token(), new_token());
        assert_ne!(a, b);
        assert!(a.starts_with(TOKEN_PREFIX) && a.len() == TOKEN_PREFIX.len() + 64);
        assert_eq!(token_sha256(&a).len(), 64);
    }
}
