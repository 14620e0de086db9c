//! The console (issue 44) in a real browser: Debian's Chromium driven by Selenium
//! (`tests/console/browse.py`) against a live `aelc serve`, on the echo project with runs, a
//! delegated call and a mandate. The script does what a person does and checks what they would
//! see. Meanwhile an agent waits on the human over MCP (`tests/console/agent.py`, the official
//! Python SDK on the gateway's `/mcp`): one client polls `check_approval` for two calls, another
//! waits in an elicitation form nobody answers. The browser approves and rejects those very
//! calls; the agent must see each decision (the approved calls run, the rejected one does not).
//! This test checks the store afterwards, and that another account's approval was left alone.
//!
//! Screenshots of every page are taken into a scratch folder, or into `book/src/console/`
//! (the book's pictures) when `AELC_UPDATE_SCREENSHOTS=1`.

use super::*;

/// A Python with `selenium` and Debian's `chromium` + `chromium-driver`, or a loud skip (a
/// failure under `CI`, where `.ci/run` installs them).
fn browser_python() -> Option<String> {
    let python = std::env::var("AELC_BROWSER_PYTHON")
        .ok()
        .filter(|p| !p.is_empty());
    let browser =
        Path::new("/usr/bin/chromium").exists() && Path::new("/usr/bin/chromedriver").exists();
    match python {
        Some(p) if browser => Some(p),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "the console's browser test needs AELC_BROWSER_PYTHON (a Python with selenium) \
                 and /usr/bin/chromium + /usr/bin/chromedriver: .ci/run installs them"
            );
            eprintln!(
                "\n!!! SKIPPED the console in a browser: set AELC_BROWSER_PYTHON and install \
                 chromium + chromium-driver !!!\n"
            );
            None
        }
    }
}

fn run_id(reply: &Reply) -> String {
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body["receipt"]["receipt"]
        .as_str()
        .expect("a receipt id")
        .to_owned()
}

#[test]
fn the_console_in_a_browser() {
    let Some(python) = browser_python() else {
        return;
    };
    let model = FakeModel::start();
    let dir = temp_dir("console");
    project(&dir, model.port);
    let store = sqlite_url("console");
    let key = account(&dir, &store, "demo", "5 EUR");
    let other_key = account(&dir, &store, "other", "1 EUR");
    // Two calls of 1.01 EUR each are approved and run under it.
    for id in ["demo/sandbox", "other/sandbox"] {
        mandate(&dir, &store, id, "5", "0.5", "*", &[]);
    }
    runtime().block_on(async {
        let s = aelc_store::open(&store).await.expect("open the store");
        let theirs = pending_approval("appr_theirs", "other/sandbox", "[ok] <b>not</b> yours");
        s.create_approval(&theirs).await.expect("an approval");
    });

    // Traces exported (to a collector that is not there: the run page only needs the id) and
    // linked by the operator's template.
    let nowhere = format!("http://127.0.0.1:{}", free_port());
    let gw = Gateway::start_with_env(
        &dir,
        &store,
        &["--trace-url", "http://127.0.0.1:16686/trace/{trace_id}"],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", nowhere.as_str())],
    );
    let piped = run_id(&post_with_key(
        &gw,
        "pipeline",
        &key,
        &ask("[ok] through the pipeline"),
        "console-1",
    ));
    let bad = post_with_key(&gw, "echo", &key, &ask("[bad] not json"), "console-2");
    assert_eq!(bad.body["status"], "invalid_output", "{}", bad.body);
    let theirs = run_id(&post_with_key(
        &gw,
        "echo",
        &other_key,
        &ask("[ok] someone else's"),
        "console-3",
    ));

    // The agent asks over MCP; the calls it waits on are the ones the browser decides.
    let token = aelc(
        &["mandate", "token", "demo/sandbox", "--store", &store],
        &dir,
    );
    let mut agent = Command::new(&python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/console/agent.py"))
        .args([&gw.url("/mcp"), token.trim()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the MCP agent");
    let mut said = BufReader::new(agent.stdout.take().expect("its stdout")).lines();
    let asked: Value = match said.next() {
        Some(Ok(line)) => serde_json::from_str(&line).expect("the agent's approval ids"),
        _ => panic!("the agent asked nothing: {}", finish(agent).1),
    };
    let elicited = wait_for_elicited(&store);
    let approve = format!("{},{elicited}", asked["poll_yes"].as_str().expect("an id"));
    let reject = asked["poll_no"].as_str().expect("an id").to_owned();

    let screenshots = match std::env::var_os("AELC_UPDATE_SCREENSHOTS") {
        Some(_) => Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/console"),
        None => dir.join("screenshots"),
    };
    std::fs::create_dir_all(&screenshots).expect("the screenshots' folder");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/console/browse.py");
    let out = Command::new(&python)
        .arg(&script)
        .args([&gw.url(""), &key, &piped, &theirs])
        .arg(&screenshots)
        .args([&approve, &reject])
        .output()
        .expect("run the browser script");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the browser script failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let passed: Vec<String> =
        serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("the checks' names");
    let (agent_ok, agent_said) = finish(agent);
    let agent_said = format!(
        "{}{agent_said}",
        said.map_while(Result::ok).collect::<Vec<_>>().join("\n")
    );
    assert!(agent_ok, "the MCP agent failed:\n{agent_said}");
    for wanted in [
        "poll_saw_approved",
        "poll_saw_rejected",
        "approved_call_ran",
        "rejected_call_refused",
        "elicited_call_ran_on_console_approval",
        "form_withdrawn",
    ] {
        assert!(
            agent_said.contains(&format!("\"{wanted}\"")),
            "{wanted} was not checked:\n{agent_said}"
        );
    }
    for wanted in [
        "input_shown",
        "trace_linked",
        "signed_in_to_agents",
        "cookie_http_only",
        "cookie_same_site_strict",
        "delegated_call_nested",
        "other_accounts_run_is_404",
        "post_without_csrf_refused",
        "post_from_another_origin_refused",
        "approved_in_browser",
        "rejected_in_browser",
        "decided_once",
        "csp_forbids_scripts",
        "old_session_ended",
        "nothing_leaves_the_gateway",
    ] {
        assert!(
            passed.iter().any(|p| p == wanted),
            "{wanted} was not checked: {passed:?}"
        );
    }
    for page in [
        "sign-in", "agents", "agent", "runs", "run", "money", "mandates", "files",
    ] {
        let png = std::fs::read(screenshots.join(format!("{page}.png"))).expect("a screenshot");
        assert!(png.starts_with(b"\x89PNG"), "{page}.png is not a PNG");
    }

    // What the browser decided is what the store (and so `check_approval`) says.
    runtime().block_on(async {
        let s = aelc_store::open(&store).await.expect("open the store");
        use aelc_store::ApprovalState::{Pending, Rejected, Used};
        let poll_yes = asked["poll_yes"].as_str().expect("an id").to_owned();
        assert_eq!(
            state_of(&s, &poll_yes).await,
            Some(Used),
            "approved, then run"
        );
        assert_eq!(
            state_of(&s, &elicited).await,
            Some(Used),
            "approved, then run"
        );
        assert_eq!(state_of(&s, &reject).await, Some(Rejected));
        assert_eq!(state_of(&s, "appr_theirs").await, Some(Pending));
        // The run page's input and trace are what the store kept with the run.
        let details = s
            .run_details("demo", &piped)
            .await
            .expect("read")
            .expect("the run's details");
        assert_eq!(
            details.input_json.as_deref(),
            Some(ask("[ok] through the pipeline").as_str())
        );
        let trace = details.trace_id.expect("a trace id: traces are exported");
        assert!(
            trace.len() == 32 && trace.bytes().all(|b| b.is_ascii_hexdigit()),
            "{trace}"
        );
    });
}

async fn state_of(
    s: &std::sync::Arc<dyn aelc_store::Store>,
    id: &str,
) -> Option<aelc_store::ApprovalState> {
    s.approval(id, aelc_gateway::now_ms())
        .await
        .expect("read")
        .map(|a| a.state)
}

/// The approval the eliciting client's call made (its id is not told to the client until the
/// human decides): found in the store, where the console finds it.
fn wait_for_elicited(store: &str) -> String {
    runtime().block_on(async {
        let s = aelc_store::open(store).await.expect("open the store");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let pending = s
                .approvals("demo/sandbox", aelc_gateway::now_ms())
                .await
                .expect("read the approvals");
            if let Some(a) = pending
                .iter()
                .find(|a| a.input_json.contains("elicit approve"))
            {
                return a.id.clone();
            }
            assert!(
                Instant::now() < deadline,
                "the eliciting call asked nothing: {pending:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
}

/// Waits for `child` to exit: whether it succeeded, and what it printed on stderr.
fn finish(mut child: Child) -> (bool, String) {
    let mut err = String::new();
    if let Some(mut stderr) = child.stderr.take() {
        let _ = stderr.read_to_string(&mut err);
    }
    let ok = child.wait().map(|s| s.success()).unwrap_or(false);
    (ok, err)
}

/// `aelc serve --no-keep-inputs`: a run keeps only its input's SHA-256 (in the receipt), and
/// no trace id when traces are off; the run page says the input was not kept.
#[test]
fn a_gateway_told_not_to_keep_inputs_keeps_none() {
    let model = FakeModel::start();
    let dir = temp_dir("console-no-inputs");
    project(&dir, model.port);
    let store = sqlite_url("console-no-inputs");
    let key = account(&dir, &store, "demo", "5 EUR");
    let gw = Gateway::start(&dir, &store, &["--no-keep-inputs"]);
    let run = run_id(&post_with_key(
        &gw,
        "echo",
        &key,
        &ask("[ok] a secret"),
        "no-inputs-1",
    ));
    runtime().block_on(async {
        let s = aelc_store::open(&store).await.expect("open the store");
        let details = s.run_details("demo", &run).await.expect("read");
        assert_eq!(
            details,
            Some(aelc_store::RunDetails {
                input_json: None,
                trace_id: None,
            })
        );
    });
}

/// A trace link template the console cannot fill is refused when the gateway starts, naming
/// the flag, rather than rendering broken links.
#[test]
fn a_trace_link_without_its_placeholder_is_refused_at_start() {
    let dir = temp_dir("console-trace-url");
    project(&dir, 9);
    let store = sqlite_url("console-trace-url");
    for (template, why) in [
        ("http://jaeger:16686/search", "{trace_id}"),
        ("javascript:alert(1)//{trace_id}", "http://"),
    ] {
        let out = Command::new(AELC)
            .args(["serve", "--addr", "127.0.0.1:0", "--trace-url", template])
            .args(["--store", &store])
            .current_dir(&dir)
            .output()
            .expect("run aelc serve");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{template} was accepted");
        assert!(
            stderr.contains("--trace-url") && stderr.contains(why),
            "{template}: {stderr}"
        );
    }
}
