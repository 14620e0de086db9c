//! The console (issue 44) in a real browser: Debian's Chromium driven by Selenium
//! (`tests/console/browse.py`) against a live `aelc serve`, on the echo project with runs, a
//! delegated call, a mandate and approvals made beforehand. The script does what a person does
//! and checks what they would see; this test checks the store afterwards: the approval the
//! browser approved is approved (what `check_approval` reads), the one it rejected is rejected,
//! and another account's approval was left alone.
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
    for id in ["demo/sandbox", "other/sandbox"] {
        mandate(&dir, &store, id, "2", "0.5", "*", &[]);
    }
    runtime().block_on(async {
        let s = aelc_store::open(&store).await.expect("open the store");
        for a in [
            pending_approval("appr_yes", "demo/sandbox", "[ok] <b>approve</b> me"),
            pending_approval("appr_no", "demo/sandbox", "[ok] reject me"),
            pending_approval("appr_theirs", "other/sandbox", "[ok] not yours"),
        ] {
            s.create_approval(&a).await.expect("an approval");
        }
    });

    let gw = Gateway::start(&dir, &store, &[]);
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
    for wanted in [
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
        let state = |id: &'static str| {
            let s = &s;
            async move {
                s.approval(id, aelc_gateway::now_ms())
                    .await
                    .expect("read")
                    .map(|a| a.state)
            }
        };
        use aelc_store::ApprovalState::{Approved, Pending, Rejected};
        assert_eq!(state("appr_yes").await, Some(Approved));
        assert_eq!(state("appr_no").await, Some(Rejected));
        assert_eq!(state("appr_theirs").await, Some(Pending));
    });
}
