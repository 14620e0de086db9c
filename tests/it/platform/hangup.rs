//! A caller that hangs up keeps its money (issue 47): from its reservation on, a call belongs to
//! a task the connection cannot cancel, so it ends with a stored receipt and its money posted
//! or voided exactly as if the caller had waited; the same `Idempotency-Key` then answers the
//! first run's document. On SQLite and PostgreSQL, over real sockets that are closed at chosen
//! moments; and through the official MCP SDK, a `call_agent` the client cancels.

use super::*;

/// The echo project plus an agent that gives up on its model after a second.
fn impatient_project(dir: &Path, model_port: u16) {
    project(dir, model_port);
    let nodes = dir.join("nodes/echo.node.ael");
    let mut text = std::fs::read_to_string(&nodes).expect("the echo node");
    text.push_str(
        r#"
/// Gives up on its model after a second.
agent impatient(ask: Ask) -> Echo fails EchoError {
    config {
        prompt: file("prompts/echo.md");
        model: binding("m");
        timeout: 1s;
    }
    publish {
        capability: "text.impatient";
        price: 0.01 EUR;
    }
}
"#,
    );
    std::fs::write(&nodes, text).expect("the echo node");
}

/// A request written on a raw connection, which the test closes when it likes.
fn request(agent: &str, key: &str, idem: &str, body: &str) -> String {
    format!(
        "POST /v1/agents/acme/{agent}/runs HTTP/1.1\r\nhost: 127.0.0.1\r\n\
         authorization: Bearer {key}\r\ncontent-type: application/json\r\n\
         idempotency-key: {idem}\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn connect(gw: &Gateway) -> TcpStream {
    let stream = TcpStream::connect(("127.0.0.1", gw.port)).expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    stream
}

/// Waits (bounded) until `done` holds; panics naming `what` otherwise.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn succeeded_receipts(store: &str, agent: &str) -> u64 {
    runtime().block_on(async {
        let store = aelc_store::open(store).await.expect("open the store");
        store.agent_stats(agent).await.expect("stats").succeeded
    })
}

/// The issue's case: 0.02 EUR, a 0.01 agent whose model is held, the caller gone while it is.
fn hang_up_during_a_held_call(backend: &str, store: &str) {
    let model = FakeModel::start();
    let dir = temp_dir(&format!("hangup-{backend}"));
    impatient_project(&dir, model.port);
    let key = account(&dir, store, "demo", "0.02");
    let gw = Gateway::start(&dir, store, &[]);
    let body = ask("[hold] nobody waits for me");

    let mut caller = connect(&gw);
    caller
        .write_all(request("echo", &key, "held-1", &body).as_bytes())
        .expect("send");
    wait_until("the run reached the model", || model.calls() == 1);
    drop(caller);
    // The run goes on without its caller: its price is held, not lost and not freed.
    assert_eq!(
        ledger(store, &["demo"])[0],
        (amount("0.01"), amount("0.01"))
    );
    model.release();
    wait_until("the run settled", || open_runs(store) == 0);
    let balances = ledger(store, &["demo", "acme"]);
    assert_eq!(balances[0], (amount("0.01"), Amount::ZERO), "charged once");
    assert_eq!(balances[1].0, amount("0.01"), "the author was paid");

    // The caller comes back: the key answers the first run, and its receipt is found.
    let again = post_with_key(&gw, "echo", &key, &body, "held-1");
    assert_eq!(again.status, 200, "{}", again.body);
    assert!(again.replayed, "a replay, not a second run: {}", again.body);
    assert_eq!(again.body["status"], "succeeded");
    let id = again.body["receipt"]["receipt"]
        .as_str()
        .expect("a receipt id")
        .to_owned();
    let (code, text) = get(&gw, &format!("/v1/receipts/{id}"), Some(&key));
    assert_eq!(code, 200, "{text}");
    assert_eq!(model.calls(), 1, "the model was called once");
    assert_eq!(ledger(store, &["demo"])[0], (amount("0.01"), Amount::ZERO));

    // A model that never answers: the run ends at its node's timeout, with a receipt, though
    // nobody waits for it; nothing is charged.
    let stalled = ask("[stall] nobody waits for this either");
    let mut caller = connect(&gw);
    caller
        .write_all(request("impatient", &key, "stalled-1", &stalled).as_bytes())
        .expect("send");
    wait_until("the impatient run reached the model", || model.calls() == 2);
    drop(caller);
    wait_until("the impatient run ended", || open_runs(store) == 0);
    assert_eq!(ledger(store, &["demo"])[0], (amount("0.01"), Amount::ZERO));
    let again = post_with_key(&gw, "impatient", &key, &stalled, "stalled-1");
    assert!(again.replayed, "{}", again.body);
    assert_eq!(again.status, 502, "{}", again.body);
    assert_eq!(again.body["status"], "error");
    assert_eq!(again.body["code"], "timeout", "{}", again.body);

    // A graceful stop waits for a call whose caller is gone: its receipt and money settle
    // before the process exits (the model takes 3 s; the stop comes while it works).
    let held = ask("[stall] in flight at the stop");
    let mut caller = connect(&gw);
    let calls = model.calls();
    caller
        .write_all(request("echo", &key, "at-stop", &held).as_bytes())
        .expect("send");
    wait_until("the run reached the model", || model.calls() > calls);
    drop(caller);
    let status = gw.terminate();
    assert!(status.success(), "the gateway's stop: {status:?}");
    assert_eq!(
        open_runs(store),
        0,
        "a run was left open by a graceful stop"
    );
    assert_eq!(ledger(store, &["demo"])[0], (Amount::ZERO, Amount::ZERO));
    assert_eq!(succeeded_receipts(store, "acme/echo"), 2);
}

/// 40 calls, each cut at a point of its own: before its body ends, right after it (during the
/// gate), during its run, or never (read to the end).
fn calls_dropped_at_random(backend: &str, store: &str) {
    const CALLS: usize = 40;
    let model = FakeModel::start();
    let dir = temp_dir(&format!("storm-{backend}"));
    project(&dir, model.port);
    let key = account(&dir, store, "demo", "1");
    let gw = Gateway::start(&dir, store, &[]);
    let body = |n: usize| {
        if n % 2 == 0 {
            ask(&format!("[slow] storm {n}"))
        } else {
            ask(&format!("[ok] storm {n}"))
        }
    };
    // A fixed xorshift: the same storm every run, different moments for every call.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let plans: Vec<(u64, u64)> = (0..CALLS).map(|_| (next() % 4, next() % 50)).collect();
    std::thread::scope(|s| {
        for (n, &(how, ms)) in plans.iter().enumerate() {
            let (key, gw, body) = (&key, &gw, body(n));
            s.spawn(move || {
                let text = request("echo", key, &format!("storm-{n}"), &body);
                let mut caller = connect(gw);
                match how {
                    // Before the body ends.
                    0 => {
                        let cut = text.len() - body.len() / 2;
                        let _ = caller.write_all(&text.as_bytes()[..cut]);
                        std::thread::sleep(Duration::from_millis(ms));
                    }
                    // During the gate: the whole request, then gone.
                    1 => {
                        let _ = caller.write_all(text.as_bytes());
                    }
                    // During the run.
                    2 => {
                        let _ = caller.write_all(text.as_bytes());
                        std::thread::sleep(Duration::from_millis(ms));
                    }
                    // After the answer.
                    _ => {
                        let _ = caller.write_all(text.as_bytes());
                        caller
                            .set_read_timeout(Some(Duration::from_secs(20)))
                            .expect("timeout");
                        let mut answer = [0u8; 4096];
                        let _ = caller.read(&mut answer);
                    }
                }
                drop(caller);
            });
        }
    });
    wait_until("every run settled", || open_runs(store) == 0);
    let price = amount("0.01");
    let moved = |succeeded: u64| Amount(price.0 * u128::from(succeeded));
    let succeeded = succeeded_receipts(store, "acme/echo");
    let balances = ledger(store, &["demo", "acme"]);
    assert_eq!(balances[0].1, Amount::ZERO, "a reservation was left");
    assert_eq!(
        balances[0].0,
        Amount(amount("1").0 - moved(succeeded).0),
        "the balance moved by the price times the {succeeded} succeeded receipts"
    );
    assert_eq!(balances[1].0, moved(succeeded));

    // No key is stuck: every one answers its first run, or runs now if its first never got
    // past the gate; none is in progress, none runs twice.
    for (n, plan) in plans.iter().enumerate() {
        let reply = post_with_key(&gw, "echo", &key, &body(n), &format!("storm-{n}"));
        assert_eq!(
            reply.status, 200,
            "key storm-{n} (cut by plan {plan:?}): {}",
            reply.body
        );
        assert_eq!(reply.body["status"], "succeeded");
    }
    assert_eq!(succeeded_receipts(store, "acme/echo"), CALLS as u64);
    let balances = ledger(store, &["demo", "acme"]);
    assert_eq!(
        balances[0],
        (amount("0.6"), Amount::ZERO),
        "each key billed once"
    );
    assert_eq!(balances[1].0, amount("0.4"));
}

#[test]
fn a_caller_that_hangs_up_keeps_its_money_on_sqlite() {
    hang_up_during_a_held_call("sqlite", &sqlite_url("hangup"));
    calls_dropped_at_random("sqlite", &sqlite_url("storm"));
}

#[test]
fn a_caller_that_hangs_up_keeps_its_money_on_postgres() {
    let Some(server) = pg::server() else { return };
    let url = runtime().block_on(server.fresh_database("hangup"));
    hang_up_during_a_held_call("postgres", &url);
    let url = runtime().block_on(server.fresh_database("storm"));
    calls_dropped_at_random("postgres", &url);
}

/// The MCP client cancels a `call_agent` while the model works (`notifications/cancelled`):
/// the run still ends with its receipt, and the mandate's budget is spent once, not held.
#[test]
fn an_mcp_call_the_client_cancels_settles() {
    let Some(python) = mcp_python() else { return };
    let model = FakeModel::start();
    let dir = temp_dir("mcp-cancel");
    project(&dir, model.port);
    let store = sqlite_url("mcp-cancel");
    account(&dir, &store, "demo", "5 EUR");
    mandate(
        &dir,
        &store,
        "demo/sandbox",
        "1 EUR",
        "0.50 EUR",
        "text.*",
        &[],
    );
    aelc(&["build"], &dir);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/cancel.py");
    let out = Command::new(python)
        .arg(&script)
        .args([AELC, &dir.display().to_string(), &store, "demo/sandbox"])
        .output()
        .expect("run the Python MCP client");
    assert!(
        out.status.success(),
        "the cancelled MCP call:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(open_runs(&store), 0);
    assert_eq!(succeeded_receipts(&store, "acme/echo"), 1);
    let balances = ledger(&store, &["demo", "acme"]);
    assert_eq!(balances[0], (amount("4.99"), Amount::ZERO));
    assert_eq!(balances[1].0, amount("0.01"));
    assert_eq!(model.calls(), 1);
}

/// The guarantee at its root, in process: the future of `runs::execute` (what hyper holds for
/// a request, and rmcp for a tool call) is dropped while the model holds its answer. The call
/// still ends — receipt stored, price posted once, key bound — because from the reservation on
/// it belongs to a task of the gateway, not to that future.
#[test]
fn a_dropped_call_future_still_settles() {
    let model = FakeModel::start();
    let dir = temp_dir("dropped-future");
    project(&dir, model.port);
    let store_url = sqlite_url("dropped-future");
    account(&dir, &store_url, "demo", "0.02");
    aelc(&["build"], &dir);
    // The binding's key variable (the fake model ignores its value; every test sets the same).
    std::env::set_var("AELC_FAKE_KEY", "test-key");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let project = aelc_gateway::Project::load(&dir.join("target/ael")).expect("the build");
        let store = aelc_store::open(&store_url).await.expect("the store");
        let files = aelc_runtime::files::Files::in_project(&dir);
        let limits = aelc_gateway::Limits::default();
        let state = Arc::new(
            aelc_gateway::AppState::new(project, store, files, &dir.join(".ael/refusals"), &limits)
                .await
                .expect("the gateway's state"),
        );
        let tenant = state
            .store
            .account("demo")
            .await
            .expect("read")
            .expect("demo");
        let agent = state.project.agent_index("acme/echo").expect("the agent");
        let call = |text: &str| aelc_gateway::runs::Call {
            tenant: &tenant,
            agent,
            input: ask(text).into_bytes().into(),
            idempotency_key: Some("dropped-1".to_owned()),
            mandate: None,
        };
        let reached = async {
            while model.calls() == 0 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        tokio::select! {
            done = aelc_gateway::runs::execute(&state, call("[hold] dropped")) => {
                panic!("answered while the model held: {done:?}")
            }
            () = reached => {}
        }
        // The caller's future is gone; the model answers now.
        model.release();
        let deadline = Instant::now() + Duration::from_secs(30);
        while state.store.open_runs().await.expect("open runs") > 0 {
            assert!(Instant::now() < deadline, "the dropped call never settled");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let balance = state.store.balance("demo").await.expect("balance");
        assert_eq!(
            (balance.available, balance.reserved),
            (amount("0.01"), Amount::ZERO)
        );
        // The same key answers the first run's document.
        let again = aelc_gateway::runs::execute(&state, call("[hold] dropped"))
            .await
            .expect("the replay");
        assert!(again.replayed, "{}", again.text);
        assert_eq!(again.document()["status"], "succeeded");
        assert_eq!(model.calls(), 1);
        state.finish_in_flight().await;
    });
}
