//! MCP over Streamable HTTP (issue 46): the `/mcp` of `aelc serve`, one token per mandate.
//!
//! What the stdio server guarantees is checked over HTTP by the same Python scripts
//! (`tests/mcp/session.py`, `tests/mcp/concurrency.py`) given the URL: the official SDK's
//! Streamable HTTP client with a mandate token. The refusals are checked here with plain HTTP:
//! no token, an account key, an unknown, expired or revoked token (on an open session too), a
//! token in the URL, another token's session, a browser `Origin`, the session caps, idle
//! sessions, a body too large, malformed JSON-RPC. On SQLite and on PostgreSQL.
//!
//! Waits are bounded (a deadline that fails the test), never timed assertions.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::{account, aelc, http, mandate, mcp_session_on, mcp_shared_store, pg, project, runtime};
use super::{sqlite_url, temp_dir, FakeModel, Gateway, AELC};

/// An `initialize` request, as a client sends it first.
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

const LIST_TOOLS: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

/// One answer of `/mcp`.
pub(super) struct Answer {
    pub(super) status: u16,
    session: Option<String>,
    challenge: Option<String>,
    pub(super) body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

/// A POST to `/mcp` with the headers a Streamable HTTP client sends.
pub(super) fn post(
    gw: &Gateway,
    path: &str,
    token: Option<&str>,
    session: Option<&str>,
    extra: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut request = http()
        .post(gw.url(path))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(t) = token {
        request = request.header("authorization", &format!("Bearer {t}"));
    }
    if let Some(s) = session {
        request = request
            .header("mcp-session-id", s)
            .header("mcp-protocol-version", "2025-06-18");
    }
    for (name, value) in extra {
        request = request.header(*name, *value);
    }
    let mut response = request.send(body).expect("the request");
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let (session, challenge) = (header("mcp-session-id"), header("www-authenticate"));
    let body = response.body_mut().read_to_string().unwrap_or_default();
    Answer {
        status: response.status().as_u16(),
        session,
        challenge,
        body,
    }
}

/// A session opened and initialized with `token`; its id.
pub(super) fn open_session(gw: &Gateway, token: &str) -> String {
    let opened = post(gw, "/mcp", Some(token), None, &[], INITIALIZE);
    assert_eq!(opened.status, 200, "initialize: {}", opened.body);
    let id = opened.session.expect("a session id");
    let ready = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let notified = post(gw, "/mcp", Some(token), Some(&id), &[], ready);
    assert_eq!(notified.status, 202, "initialized: {}", notified.body);
    id
}

fn delete_session(gw: &Gateway, token: &str, id: &str) -> u16 {
    http()
        .delete(gw.url("/mcp"))
        .header("authorization", &format!("Bearer {token}"))
        .header("mcp-session-id", id)
        .header("mcp-protocol-version", "2025-06-18")
        .call()
        .expect("the request")
        .status()
        .as_u16()
}

/// A project with one account (`demo`, funded) and its mandate `demo/sandbox`, on `store`;
/// returns the account's API key.
pub(super) fn setup(dir: &std::path::Path, model: &FakeModel, store: &str) -> String {
    project(dir, model.port);
    let key = account(dir, store, "demo", "5 EUR");
    for (id, allow) in [("demo/sandbox", "*"), ("demo/other", "acme/echo")] {
        mandate(dir, store, id, "1", "0.5", allow, &[]);
    }
    aelc(&["build"], dir);
    key
}

pub(super) fn token(dir: &std::path::Path, store: &str, mandate: &str, expires: &[&str]) -> String {
    let mut args = vec!["mandate", "token", mandate, "--store", store];
    args.extend_from_slice(expires);
    let out = aelc(&args, dir);
    let token = out.trim().to_owned();
    assert!(token.starts_with("aelm_"), "a token on stdout: {out:?}");
    token
}

fn refusals_suite(name: &str, store: &str) {
    let model = FakeModel::start();
    let dir = temp_dir(&format!("mcp-http-{name}"));
    let key = setup(&dir, &model, store);
    let gw = Gateway::start(
        &dir,
        store,
        &[
            "--mcp-allowed-origin",
            "https://app.example:443",
            "--mcp-max-body",
            "4096",
        ],
    );
    let good = token(&dir, store, "demo/sandbox", &[]);

    // No token: 401 with the bare challenge (RFC 6750 §3.1: no error code without a token).
    let none = post(&gw, "/mcp", None, None, &[], INITIALIZE);
    assert_eq!(none.status, 401, "{}", none.body);
    assert_eq!(none.challenge.as_deref(), Some("Bearer realm=\"aelc-mcp\""));
    assert!(none.body.contains("aelc mandate token"), "{}", none.body);

    // An account API key is not a mandate token.
    let account_key = post(&gw, "/mcp", Some(&key), None, &[], INITIALIZE);
    assert_eq!(account_key.status, 401);
    let challenge = account_key.challenge.unwrap_or_default();
    assert!(challenge.starts_with("Bearer ") && challenge.contains("invalid_token"));
    assert!(
        account_key.body.contains("account API key"),
        "{}",
        account_key.body
    );

    // Unknown and expired tokens.
    let unknown = post(
        &gw,
        "/mcp",
        Some(&format!("aelm_{}", "0".repeat(64))),
        None,
        &[],
        INITIALIZE,
    );
    assert_eq!(unknown.status, 401);
    assert!(unknown.body.contains("unknown token"), "{}", unknown.body);
    // `aelc mandate token` refuses a token dead on arrival; one that has run out since (put in
    // the store as the command would have, an hour ago) is refused at the door.
    let dead = std::process::Command::new(AELC)
        .args(["mandate", "token", "demo/sandbox", "--store", store])
        .args(["--expires", "2001-01-01T00:00:00Z"])
        .output()
        .expect("run aelc");
    assert!(!dead.status.success());
    assert!(String::from_utf8_lossy(&dead.stderr).contains("would have expired already"));
    let old = aelc_mcp::http::new_token();
    runtime().block_on(async {
        let s = aelc_store::open(store).await.expect("open the store");
        let now = aelc_gateway::now_ms();
        let made = aelc_store::MandateToken {
            token_sha256: aelc_mcp::http::token_sha256(&old),
            mandate: "demo/sandbox".to_owned(),
            created_ms: now - 3_600_000,
            expires_ms: Some(now - 1),
            revoked_ms: None,
        };
        s.create_mandate_token(&made).await.expect("a token");
    });
    let expired = post(&gw, "/mcp", Some(&old), None, &[], INITIALIZE);
    assert_eq!(expired.status, 401);
    assert!(expired.body.contains("expired"), "{}", expired.body);

    // A token in the URL is refused, even with a good one in the header.
    for query in [format!("access_token={good}"), format!("x={good}")] {
        let in_url = post(
            &gw,
            &format!("/mcp?{query}"),
            Some(&good),
            None,
            &[],
            INITIALIZE,
        );
        assert_eq!(in_url.status, 401, "{query}");
        assert!(in_url
            .challenge
            .unwrap_or_default()
            .contains("invalid_request"));
    }

    // Origin: a browser origin not allowed is 403; the allowed one and none (not a browser)
    // pass.
    let evil = [("origin", "https://evil.example")];
    assert_eq!(
        post(&gw, "/mcp", Some(&good), None, &evil, INITIALIZE).status,
        403
    );
    let allowed = [("origin", "https://app.example")];
    let from_app = post(&gw, "/mcp", Some(&good), None, &allowed, INITIALIZE);
    assert_eq!(from_app.status, 200, "{}", from_app.body);
    assert!(from_app.session.is_some());

    // The session acts as the token's mandate; another token (even of the same mandate)
    // cannot use it.
    let session = open_session(&gw, &good);
    let listed = post(&gw, "/mcp", Some(&good), Some(&session), &[], LIST_TOOLS);
    assert_eq!(listed.status, 200);
    assert!(listed.body.contains("call_agent"), "{}", listed.body);
    let budget = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_budget","arguments":{}}}"#;
    let mine = post(&gw, "/mcp", Some(&good), Some(&session), &[], budget);
    assert!(
        mine.body.contains(r#"\"mandate\":\"demo/sandbox\""#),
        "{}",
        mine.body
    );
    let other = token(&dir, store, "demo/other", &[]);
    let stolen = post(&gw, "/mcp", Some(&other), Some(&session), &[], LIST_TOOLS);
    assert_eq!(stolen.status, 403, "{}", stolen.body);
    let theirs = open_session(&gw, &other);
    let budget_other = post(&gw, "/mcp", Some(&other), Some(&theirs), &[], budget);
    assert!(
        budget_other.body.contains(r#"\"mandate\":\"demo/other\""#),
        "{}",
        budget_other.body
    );

    // Malformed JSON-RPC: the protocol's errors.
    let garbled = post(&gw, "/mcp", Some(&good), Some(&session), &[], "{oops");
    assert_eq!(garbled.status, 400);
    assert_eq!(garbled.json()["error"]["code"], -32700, "{}", garbled.body);
    let not_rpc = post(
        &gw,
        "/mcp",
        Some(&good),
        Some(&session),
        &[],
        r#"{"jsonrpc":"2.0","id":7}"#,
    );
    assert_eq!(not_rpc.status, 400);
    assert_eq!(not_rpc.json()["error"]["code"], -32600, "{}", not_rpc.body);
    assert_eq!(not_rpc.json()["id"], 7);

    // A body past --mcp-max-body.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"search_agents","arguments":{{"query":"{}"}}}}}}"#,
        "x".repeat(5000)
    );
    assert_eq!(
        post(&gw, "/mcp", Some(&good), Some(&session), &[], &big).status,
        413
    );

    // Revocation ends the token at once, on its open session too: its next request is
    // refused, and its open event stream ends.
    let stream = {
        let (url, good, session) = (gw.url("/mcp"), good.clone(), session.clone());
        std::thread::spawn(move || {
            let mut response = http()
                .get(&url)
                .header("accept", "text/event-stream")
                .header("authorization", &format!("Bearer {good}"))
                .header("mcp-session-id", &session)
                .header("mcp-protocol-version", "2025-06-18")
                .call()
                .expect("the event stream");
            assert_eq!(response.status().as_u16(), 200);
            let opened = Instant::now();
            // Read to the end: the keep-alive comments never end it, the session's close does.
            let _ =
                std::io::Read::read_to_end(&mut response.body_mut().as_reader(), &mut Vec::new());
            opened.elapsed()
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    aelc(&["mandate", "revoke", &good, "--store", store], &dir);
    let revoked = post(&gw, "/mcp", Some(&good), Some(&session), &[], LIST_TOOLS);
    assert_eq!(revoked.status, 401, "{}", revoked.body);
    assert!(revoked.body.contains("revoked"), "{}", revoked.body);
    assert!(revoked
        .challenge
        .unwrap_or_default()
        .contains("invalid_token"));
    let open_for = stream.join().expect("the stream's reader");
    assert!(
        open_for > Duration::from_millis(200) && open_for < Duration::from_secs(10),
        "the stream lasted until its token's revocation, not longer: {open_for:?}"
    );
    let unknown_revoked = std::process::Command::new(AELC)
        .args(["mandate", "revoke", "aelm_nope", "--store", store])
        .output()
        .expect("run aelc");
    assert!(!unknown_revoked.status.success());
    assert!(String::from_utf8_lossy(&unknown_revoked.stderr)
        .contains("a mandate token with this value does not exist"));
    // The other mandate's token is untouched.
    assert_eq!(
        post(&gw, "/mcp", Some(&other), Some(&theirs), &[], LIST_TOOLS).status,
        200
    );
}

#[test]
fn mcp_http_refusals_on_sqlite() {
    refusals_suite("refusals", &sqlite_url("mcp-http-refusals"));
}

#[test]
fn mcp_http_refusals_on_postgres() {
    let Some(server) = pg::server() else { return };
    let url = runtime().block_on(server.fresh_database("mcp_http_refusals"));
    refusals_suite("refusals-pg", &url);
}

/// At most `--mcp-max-sessions-per-token` per token and `--mcp-max-sessions` in all (503
/// beyond); a deleted session frees its place, and so does an idle one once closed.
#[test]
fn mcp_http_sessions_are_capped_and_idle_ones_closed() {
    let model = FakeModel::start();
    let dir = temp_dir("mcp-http-caps");
    let store = sqlite_url("mcp-http-caps");
    setup(&dir, &model, &store);
    let gw = Gateway::start(
        &dir,
        &store,
        &[
            "--mcp-max-sessions",
            "3",
            "--mcp-max-sessions-per-token",
            "2",
        ],
    );
    let a = token(&dir, &store, "demo/sandbox", &[]);
    let b = token(&dir, &store, "demo/sandbox", &[]);
    let c = token(&dir, &store, "demo/other", &[]);
    let first = open_session(&gw, &a);
    open_session(&gw, &a);
    let third = post(&gw, "/mcp", Some(&a), None, &[], INITIALIZE);
    assert_eq!(third.status, 503, "{}", third.body);
    assert!(
        third.body.contains("as many as one token may"),
        "{}",
        third.body
    );
    open_session(&gw, &b);
    let full = post(&gw, "/mcp", Some(&c), None, &[], INITIALIZE);
    assert_eq!(full.status, 503, "{}", full.body);
    assert!(full.body.contains("as many MCP sessions"), "{}", full.body);
    assert_eq!(delete_session(&gw, &a, &first), 200);
    open_session(&gw, &c);
    drop(gw);

    // Idle: a session with nothing said for a second is closed and its place freed.
    let gw = Gateway::start(
        &dir,
        &store,
        &[
            "--mcp-idle-timeout",
            "1",
            "--mcp-max-sessions-per-token",
            "1",
        ],
    );
    let idle = open_session(&gw, &a);
    assert_eq!(
        post(&gw, "/mcp", Some(&a), None, &[], INITIALIZE).status,
        503
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let again = post(&gw, "/mcp", Some(&a), None, &[], INITIALIZE);
        if again.status == 200 {
            break;
        }
        assert_eq!(again.status, 503, "{}", again.body);
        assert!(
            Instant::now() < deadline,
            "the idle session was never closed"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let gone = post(&gw, "/mcp", Some(&a), Some(&idle), &[], LIST_TOOLS);
    assert_eq!(
        gone.status, 404,
        "the idle session is closed: {}",
        gone.body
    );
}

/// The seed's session over `aelc serve`'s `/mcp`: elicitation answered by the client.
#[test]
fn mcp_http_session_with_elicitation() {
    mcp_session_on("serve-elicit", &sqlite_url("mcp-serve-elicit"));
}

#[test]
fn mcp_http_session_with_out_of_band_approval_on_postgres() {
    let Some(server) = pg::server() else { return };
    let url = runtime().block_on(server.fresh_database("mcp_serve_oob"));
    mcp_session_on("serve-oob", &url);
}

#[test]
fn mcp_http_session_with_out_of_band_approval_on_sqlite() {
    mcp_session_on("serve-oob", &sqlite_url("mcp-serve-oob"));
}

/// The seed's race, 20 calls on a budget's last cents, receipts per mandate and an expired
/// mandate, across sessions of one token on one `aelc serve`.
#[test]
fn mcp_http_sessions_share_one_store_on_sqlite() {
    mcp_shared_store(&sqlite_url("mcp-shared-http"), true);
}

#[test]
fn mcp_http_sessions_share_one_store_on_postgres() {
    let Some(server) = pg::server() else { return };
    let url = runtime().block_on(server.fresh_database("mcp_shared_http"));
    mcp_shared_store(&url, true);
}

/// `aelc mcp --http ADDR --mandate M` serves `/mcp` alone, for the tokens of `M` only.
#[test]
fn mcp_http_alone_serves_its_mandate_only() {
    use std::io::BufRead;
    let model = FakeModel::start();
    let dir = temp_dir("mcp-http-alone");
    let store = sqlite_url("mcp-http-alone");
    setup(&dir, &model, &store);
    let mut child = std::process::Command::new(AELC)
        .args(["mcp", "--mandate", "demo/sandbox", "--http", "127.0.0.1:0"])
        .args(["--built", "target/ael", "--store", &store])
        .current_dir(&dir)
        .env("AELC_FAKE_KEY", "test-key")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start aelc mcp --http");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the serving line");
    let port = line
        .trim()
        .trim_end_matches("/mcp")
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    let gw = Gateway { child, port };
    let mine = token(&dir, &store, "demo/sandbox", &[]);
    let theirs = token(&dir, &store, "demo/other", &[]);
    assert_eq!(
        post(&gw, "/mcp", Some(&mine), None, &[], INITIALIZE).status,
        200
    );
    let refused = post(&gw, "/mcp", Some(&theirs), None, &[], INITIALIZE);
    assert_eq!(refused.status, 401, "{}", refused.body);
    assert!(refused.body.contains("another mandate"), "{}", refused.body);
}

/// Reads a response from `stream` until `done` holds for what came so far (bounded).
fn read_until(stream: &mut std::net::TcpStream, done: impl Fn(&str) -> bool) -> String {
    use std::io::Read;
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("a read timeout");
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    while !done(&String::from_utf8_lossy(&seen)) {
        assert!(
            Instant::now() < deadline,
            "never came: {}",
            String::from_utf8_lossy(&seen)
        );
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => seen.extend_from_slice(&buffer[..n]),
            Err(_) => {}
        }
    }
    String::from_utf8_lossy(&seen).into_owned()
}

/// A client whose connection drops while its `call_agent` runs reconnects with the last event
/// id it saw (`Last-Event-ID`, the transport's resumption) and gets the call's result on the
/// resumed stream: rmcp keeps a request's events for its session, and the call itself settles
/// whatever the connection does (issue 47).
#[test]
fn mcp_http_a_dropped_stream_is_resumed() {
    use std::io::Write;
    let model = FakeModel::start();
    let dir = temp_dir("mcp-http-resume");
    let store = sqlite_url("mcp-http-resume");
    setup(&dir, &model, &store);
    let gw = Gateway::start(&dir, &store, &[]);
    let token = token(&dir, &store, "demo/sandbox", &[]);
    let session = open_session(&gw, &token);

    let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"call_agent","arguments":{"agent":"acme/echo","input":{"text":"[hold] resumed"}}}}"#;
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", gw.port)).expect("connect");
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{}\r\nauthorization: Bearer {token}\r\n\
         mcp-session-id: {session}\r\nmcp-protocol-version: 2025-06-18\r\n\
         content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
         content-length: {}\r\n\r\n{call}",
        gw.port,
        call.len()
    )
    .expect("send the call");
    // The stream's first event (rmcp's priming event) carries the id to resume from.
    let head = read_until(&mut stream, |seen| {
        seen.lines().any(|l| l.starts_with("id:"))
    });
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let last_event = head
        .lines()
        .find_map(|l| l.strip_prefix("id:"))
        .map(|id| id.trim().to_owned())
        .expect("an event id");
    let deadline = Instant::now() + Duration::from_secs(30);
    while model.calls() < 1 {
        assert!(
            Instant::now() < deadline,
            "the call never reached the model"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(stream);

    // Reconnect with the last event id while the call still runs (a client reconnects at
    // once; rmcp forgets a request's stream that nobody read once it answered): the call's
    // result arrives on the resumed stream, which ends once the call has answered.
    let mut resumed = http()
        .get(gw.url("/mcp"))
        .header("authorization", &format!("Bearer {token}"))
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .header("last-event-id", &last_event)
        .header("accept", "text/event-stream")
        .call()
        .expect("resume");
    assert_eq!(resumed.status().as_u16(), 200);
    model.release();
    let replayed = resumed
        .body_mut()
        .read_to_string()
        .expect("the resumed stream");
    let data = replayed
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .find(|d| d.contains("\"id\":7"))
        .unwrap_or_else(|| panic!("the call's answer in {replayed}"));
    let answer: Value = serde_json::from_str(data.trim()).expect("JSON-RPC");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"]["status"], "succeeded",
        "{answer}"
    );
}
