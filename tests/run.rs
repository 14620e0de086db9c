//! `aelc run` end to end: the binary against recorded answers (`--replay`) and against a real
//! HTTP server on 127.0.0.1 speaking the OpenAI and Anthropic formats, plus the prompts it
//! renders (a snapshot of the review example's prompt).

#[path = "../stdlib/runtime/tests/provider_server/mod.rs"]
mod provider_server;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use aelc::codegen::emit::find_node;
use aelc::driver::run::{self as driver_run, NodeRun};
use aelc::driver::{self, DiskWorld};
use aelc_runtime::model::ReplayModel;
use aelc_runtime::pipeline::TickClock;
use aelc_runtime::prompt::PromptPart;
use provider_server::{json_reply, sse, Reply, Server};
use serde_json::{json, Value};

const KEY_VAR: &str = "AELC_RUN_TEST_KEY";
const KEY: &str = "sk-run-test-9f8e7d6c5b4a";

fn review_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/review")
}

/// A scratch folder unique to one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("aelc-run-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn aelc(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_aelc"))
        .args(args)
        .current_dir(dir)
        .env(KEY_VAR, KEY)
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The receipt: the last line of stdout.
/// `aelc run review --input input.json --replay answers.jsonl --project ROOT`, run in `dir`.
fn replay_review(dir: &Path, root: &Path) -> Output {
    let root = root.to_str().unwrap();
    let args = [
        "run",
        "review",
        "--input",
        "input.json",
        "--replay",
        "answers.jsonl",
        "--project",
        root,
    ];
    aelc(&args, dir)
}

fn receipt(out: &Output) -> Value {
    let stdout = text(&out.stdout);
    let last = stdout.lines().last().unwrap_or("");
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn assert_no_key(out: &Output) {
    assert!(!text(&out.stdout).contains(KEY), "key on stdout");
    assert!(!text(&out.stderr).contains(KEY), "key on stderr");
}

const ANSWER: &str = r#"{"summary": "Two typos.", "findings": [{"line": 1, "severity": "low", "message": "Missing article."}, {"line": 2, "severity": "high", "message": "Typo: teh."}]}"#;
const SORTED: &str = r#"{"summary":"Two typos.","findings":[{"line":2,"severity":"high","message":"Typo: teh."},{"line":1,"severity":"low","message":"Missing article."}]}"#;

#[test]
fn replayed_answers_run_through_the_pipeline() {
    let dir = scratch("replay");
    std::fs::write(
        dir.join("input.json"),
        r#"{"document": "Teh cat sat.\nOn teh mat.", "max_findings": 3}"#,
    )
    .unwrap();
    let line = json!({"text": format!("```json\n{ANSWER}\n```"), "finish_reason": "stop"});
    std::fs::write(dir.join("answers.jsonl"), format!("{line}\n")).unwrap();
    let root = review_root();
    let out = replay_review(&dir, &root);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().next(), Some(SORTED));
    let r = receipt(&out);
    assert_eq!(r["status"], "succeeded");
    assert_eq!(r["node"], "review");
    assert_eq!(r["agent"], "acme/review");
    assert_eq!(r["attempts"].as_array().map(Vec::len), Some(1));
}

#[test]
fn a_truncated_replay_is_never_accepted() {
    let dir = scratch("truncated");
    std::fs::write(dir.join("input.json"), r#"{"document": "Some text."}"#).unwrap();
    // Repairs and the fallback all get a cut-off answer whose prefix would parse.
    let line = json!({"text": ANSWER, "finish_reason": "length"});
    std::fs::write(
        dir.join("answers.jsonl"),
        format!("{line}\n{line}\n{line}\n{line}\n"),
    )
    .unwrap();
    let root = review_root();
    let out = aelc(
        &[
            "run",
            "review",
            "--input",
            "input.json",
            "--replay",
            "answers.jsonl",
            "--project",
        ],
        &dir,
    );
    // `--project` without a value is a usage error.
    assert_eq!(out.status.code(), Some(2));
    let out = replay_review(&dir, &root);
    assert_eq!(out.status.code(), Some(1));
    let r = receipt(&out);
    assert_eq!(r["status"], "failed");
    assert_eq!(r["code"], "too_many_findings");
    let attempts = r["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 4);
    assert!(attempts
        .iter()
        .all(|a| a["rejected"]["code"] == "truncated_output"));
    assert_eq!(r["cost"]["amount"], "0");
}

#[test]
fn a_bad_input_is_rejected_with_paths_and_nothing_billed() {
    let dir = scratch("rejected");
    std::fs::write(
        dir.join("input.json"),
        r#"{"document": "x", "locale": "much-too-long-locale", "extra": 1}"#,
    )
    .unwrap();
    std::fs::write(dir.join("answers.jsonl"), "").unwrap();
    let root = review_root();
    let out = replay_review(&dir, &root);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("request.locale: "), "{stderr}");
    assert!(stderr.contains("(too_long)"), "{stderr}");
    assert!(stderr.contains("(unknown_field)"), "{stderr}");
    let r = receipt(&out);
    assert_eq!(r["status"], "rejected_input");
    assert_eq!(r["code"], "invalid_input");
    assert_eq!(r["attempts"], json!([]));
    assert_eq!(r["cost"]["amount"], "0");
    // Only one line: no output.
    assert_eq!(text(&out.stdout).lines().count(), 1);
}

#[test]
fn an_input_check_fails_before_any_call() {
    let dir = scratch("blank");
    std::fs::write(dir.join("input.json"), r#"{"document": "   "}"#).unwrap();
    std::fs::write(dir.join("answers.jsonl"), "").unwrap();
    let root = review_root();
    let out = replay_review(&dir, &root);
    assert_eq!(out.status.code(), Some(1));
    let r = receipt(&out);
    assert_eq!(r["status"], "failed");
    assert_eq!(r["code"], "empty_document");
    assert_eq!(r["attempts"], json!([]));
    assert!(text(&out.stderr).contains("the document is blank"));
}

#[test]
fn usage_errors_exit_2() {
    let dir = scratch("usage");
    let root = review_root();
    let project = root.to_str().unwrap();
    let missing = aelc(
        &[
            "run",
            "review",
            "--input",
            "nope.json",
            "--project",
            project,
        ],
        &dir,
    );
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("nope.json"));
    let unknown = aelc(
        &["run", "reviw", "--input", "nope.json", "--project", project],
        &dir,
    );
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown.stderr).contains("did you mean `review`"));
    std::fs::write(dir.join("input.json"), r#"{"document": "x"}"#).unwrap();
    std::fs::write(dir.join("bad.jsonl"), "{\"text\": 1}\n").unwrap();
    let bad = aelc(
        &[
            "run",
            "review",
            "--input",
            "input.json",
            "--replay",
            "bad.jsonl",
            "--project",
            project,
        ],
        &dir,
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("line 1"));
    let override_bad = aelc(
        &[
            "run",
            "review",
            "--input",
            "input.json",
            "--binding",
            "primary_model=colour=blue",
            "--project",
            project,
        ],
        &dir,
    );
    assert_eq!(override_bad.status.code(), Some(2));
    assert!(text(&override_bad.stderr).contains("unknown key `colour`"));
}

/// A copy of the review example whose bindings point at `server`.
fn review_project(name: &str, primary: &str, backup: &str) -> PathBuf {
    let dir = scratch(name);
    copy_dir(&review_root(), &dir);
    let toml = format!(
        r#"[package]
name = "acme/review"
version = "0.1.0"

[bindings.primary_model]
{primary}
accepts = ["text"]
price = {{ input_per_mtok = 0.15, output_per_mtok = 0.60, currency = "EUR" }}

[bindings.backup_model]
{backup}
accepts = ["text"]

[limits]
max_input_bytes = 65536
"#
    );
    std::fs::write(dir.join("ael.toml"), toml).unwrap();
    std::fs::write(
        dir.join("input.json"),
        r#"{"document": "Teh cat sat.\nOn teh mat.", "max_findings": 3, "strict": true}"#,
    )
    .unwrap();
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn openai_stream(content: &str) -> Reply {
    let mut events = Vec::new();
    for piece in content.as_bytes().chunks(40) {
        let piece = String::from_utf8_lossy(piece);
        events.push(sse(
            &json!({"choices": [{"index": 0, "delta": {"content": piece}}]}),
        ));
    }
    events.push(sse(
        &json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ));
    events.push(sse(
        &json!({"choices": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 200}}),
    ));
    events.push("data: [DONE]\n\n".to_owned());
    Reply::Stream {
        events,
        chunked: true,
        complete: true,
    }
}

#[test]
fn a_live_openai_binding_end_to_end() {
    let server = Server::start(vec![
        json_reply(500, &json!({"error": {"message": "upstream overloaded"}})),
        openai_stream(&format!("```json\n{ANSWER}\n```")),
    ]);
    let primary = format!(
        "provider = \"openai\"\nmodel = \"local-model\"\nbase_url = \"{}\"\napi_key_env = \"{KEY_VAR}\"",
        server.url("/v1")
    );
    let dir = review_project(
        "openai",
        &primary,
        "provider = \"replay\"\nmodel = \"recorded\"",
    );
    let out = aelc(&["run", "review", "--input", "input.json"], &dir);
    assert_no_key(&out);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().next(), Some(SORTED));
    let r = receipt(&out);
    assert_eq!(r["status"], "succeeded");
    let attempts = r["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "the 500, then the repair that succeeded");
    assert_eq!(attempts[0]["rejected"]["code"], "model_unavailable");
    assert!(attempts[0]["rejected"]["message"]
        .as_str()
        .unwrap()
        .contains("500"));
    // 1000 input tokens at 0.15/Mtok + 200 output tokens at 0.60/Mtok.
    assert_eq!(r["cost"], json!({"amount": "0.00027", "currency": "EUR"}));
    let (requests, _) = server.finish();
    assert_eq!(requests.len(), 2);
    let first = &requests[0];
    assert_eq!(first.path, "/v1/chat/completions");
    assert_eq!(
        first.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let body = &first.body;
    assert_eq!(body["model"], "local-model");
    assert_eq!(body["stream"], true);
    assert_eq!(body["temperature"], 0.2);
    assert!(body["max_tokens"].as_u64().unwrap() > 256);
    assert_eq!(body["response_format"]["type"], "json_schema");
    assert_eq!(body["response_format"]["json_schema"]["strict"], true);
    assert_eq!(
        body["response_format"]["json_schema"]["schema"]["type"],
        "object"
    );
    let prompt = body["messages"][0]["content"].as_str().unwrap();
    assert_eq!(body["messages"][0]["role"], "user");
    assert!(prompt.contains("Return at most 3 findings"), "{prompt}");
    assert!(
        prompt.contains("Be strict: report every problem"),
        "{prompt}"
    );
    assert!(
        prompt.contains("\"findings\""),
        "the schema is inserted: {prompt}"
    );
    assert!(prompt.ends_with("Teh cat sat.\nOn teh mat.\n"), "{prompt}");
    // The key is sent in the header and nowhere else.
    assert!(!body.to_string().contains(KEY));
}

#[test]
fn a_live_anthropic_binding_falls_back_after_a_rate_limit() {
    let tool_input = ANSWER;
    let message = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "tool_use", "id": "t1", "name": "review", "input": serde_json::from_str::<Value>(tool_input).unwrap()}],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 10, "output_tokens": 20}
    });
    let events = vec![
        provider_server::named_sse(
            "message_start",
            &json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-test", "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ),
        provider_server::named_sse(
            "content_block_start",
            &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1", "name": "review", "input": {}}}),
        ),
        provider_server::named_sse(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": tool_input}}),
        ),
        provider_server::named_sse(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": 0}),
        ),
        provider_server::named_sse(
            "message_delta",
            &json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 20}}),
        ),
        provider_server::named_sse("message_stop", &json!({"type": "message_stop"})),
    ];
    let _ = message;
    let rate_limited = Reply::Full {
        status: 429,
        headers: vec![("retry-after".into(), "0".into())],
        body: br#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#
            .to_vec(),
    };
    let server = Server::start(vec![
        rate_limited.clone(),
        rate_limited.clone(),
        rate_limited,
        Reply::Stream {
            events,
            chunked: false,
            complete: true,
        },
    ]);
    let primary = format!(
        "provider = \"openai\"\nmodel = \"gpt-test\"\nbase_url = \"{}\"\napi_key_env = \"{KEY_VAR}\"",
        server.url("/v1")
    );
    let backup = format!(
        "provider = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{}\"\napi_key_env = \"{KEY_VAR}\"",
        server.url("")
    );
    let dir = review_project("anthropic", &primary, &backup);
    let out = aelc(&["run", "review", "--input", "input.json"], &dir);
    assert_no_key(&out);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().next(), Some(SORTED));
    let r = receipt(&out);
    let attempts = r["attempts"].as_array().unwrap();
    let bindings: Vec<&str> = attempts
        .iter()
        .map(|a| a["binding"].as_str().unwrap())
        .collect();
    assert_eq!(
        bindings,
        [
            "primary_model",
            "primary_model",
            "primary_model",
            "backup_model"
        ]
    );
    assert!(attempts[0]["rejected"]["message"]
        .as_str()
        .unwrap()
        .contains("429"));
    let (requests, _) = server.finish();
    let last = requests.last().unwrap();
    assert_eq!(last.path, "/v1/messages");
    assert_eq!(last.header("x-api-key"), Some(KEY));
    assert_eq!(last.body["model"], "claude-test");
    assert_eq!(last.body["tool_choice"]["type"], "tool");
    assert!(last.body["max_tokens"].as_u64().unwrap() > 256);
    assert_eq!(last.body["tools"][0]["input_schema"]["type"], "object");
}

#[test]
fn a_binding_override_points_the_run_at_another_server() {
    let server = Server::start(vec![openai_stream(ANSWER)]);
    // ael.toml points at a closed port; the override moves it to the test server.
    let primary = format!(
        "provider = \"openai\"\nmodel = \"gpt-test\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_env = \"{KEY_VAR}\""
    );
    let dir = review_project("override", &primary, "provider = \"replay\"\nmodel = \"r\"");
    let url = format!("primary_model=base_url={}", server.url("/v1"));
    let out = aelc(
        &[
            "run",
            "review",
            "--input",
            "input.json",
            "--binding",
            &url,
            "--binding",
            "primary_model=model=llama-3.2",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (requests, _) = server.finish();
    assert_eq!(requests[0].body["model"], "llama-3.2");
}

/// The review example's prompt, rendered by the library for one input.
#[test]
fn the_review_prompt_renders_as_the_template_says() {
    let compilation = driver::check_path(&DiskWorld, &review_root()).unwrap();
    let program = compilation.program.expect("the review example lowers");
    let node = find_node(&program, "review").unwrap();
    assert!(
        node.template.is_some(),
        "the template is lowered into the IR"
    );
    let run = NodeRun::new(&program, node);
    let inputs = run
        .decode_input(br#"{"document": "Teh cat sat.", "locale": "de-CH", "max_findings": 2}"#)
        .unwrap();
    let parts = run.prompt(&inputs, "{ \"type\": \"object\" }").unwrap();
    let [PromptPart::Text(prompt)] = parts.as_slice() else {
        panic!("one text part: {parts:?}");
    };
    insta::assert_snapshot!("review_prompt", prompt);
    // A replayed run sees exactly this prompt.
    let mut replay = ReplayModel::from_jsonl(
        &json!({"text": "{\"summary\": \"ok\", \"findings\": []}", "finish_reason": "stop"})
            .to_string(),
    )
    .unwrap();
    let mut clock = TickClock::default();
    let report = run.run(
        br#"{"document": "Teh cat sat.", "locale": "de-CH", "max_findings": 2}"#,
        None,
        "{ \"type\": \"object\" }",
        &mut replay,
        &mut clock,
    );
    assert_eq!(
        report.receipt.status,
        aelc_runtime::pipeline::Status::Succeeded
    );
    assert_eq!(replay.requests[0].prompt, *prompt);
    assert_eq!(driver_run::prompt_text(&report.parts), *prompt);
}

/// A template with a loop and an enum, and a builder with system, rendered text and an image,
/// lowered by the compiler and run by the runtime.
#[test]
fn loops_enums_and_builders_are_lowered_and_rendered() {
    let source = r#"
enum Tone { plain, warm }

struct Item {
    name: Str<32>,
    qty: u8,
}

struct Order {
    items: List<Item, 5>,
    tone: Tone,
    photo: Option<Image<1MiB>>,
    banner: Image<1MiB>,
}

struct Reply {
    text: Str<200>,
}

builder order_parts(order: Order) -> Parts {
    system("Answer in JSON.")
    text(render())
    image(order.banner)
}

node answer(order: Order) -> Reply {
    config {
        prompt: file("prompts/answer.md");
        model: binding("m");
        max_prompt: 200B;
    }
    input {
        builder order_parts;
    }
}
"#;
    let template = "Tone: {{ order.tone }}.\n{% for i in order.items %}- {{ i.qty }} x {{ i.name }}{% if i.qty > 1 %} (several){% end %}\n{% end %}{{ order.items.first() }}\n";
    let program = answer_project(source, template, r#"["text", "image"]"#);
    let node = find_node(&program, "answer").unwrap();
    let run = NodeRun::new(&program, node);
    let banner = r#"{"ref": "holon://files/b0b", "content_type": "image/png", "size": 10, "sha256": "0000000000000000000000000000000000000000000000000000000000000000"}"#;
    let input = format!(
        r#"{{"items": [{{"name": "pear", "qty": 2}}, {{"name": "fig", "qty": 1}}], "tone": "warm", "banner": {banner}}}"#
    );
    let inputs = run.decode_input(input.as_bytes()).unwrap();
    let parts = run.prompt(&inputs, "{}").unwrap();
    assert_eq!(parts.len(), 3, "{parts:?}");
    assert_eq!(parts[0], PromptPart::System("Answer in JSON.".into()));
    assert_eq!(
        parts[1],
        PromptPart::Text(
            "Tone: warm.\n- 2 x pear (several)\n- 1 x fig\n{\"name\":\"pear\",\"qty\":2}\n".into()
        )
    );
    assert!(matches!(&parts[2], PromptPart::Image(m) if m.reference == "holon://files/b0b"));
    // The IR round-trips through ir.json with the template and the builder's parts.
    let json = serde_json::to_string(&program).unwrap();
    let back: aelc::ir::Program = serde_json::from_str(&json).unwrap();
    assert_eq!(back, program);
    // Over max_prompt (200 B): refused before any call, nothing billed.
    let many: Vec<String> = (0..5)
        .map(|i| format!(r#"{{"name": "{}", "qty": {i}}}"#, "x".repeat(32)))
        .collect();
    let big = format!(
        r#"{{"items": [{}], "tone": "plain", "banner": {banner}}}"#,
        many.join(",")
    );
    let inputs = run.decode_input(big.as_bytes()).unwrap();
    assert_eq!(
        run.prompt(&inputs, "{}"),
        Err(aelc_runtime::prompt::PromptError::TooLarge { limit: 200 })
    );
    let mut replay = ReplayModel::default();
    let report = run.run(
        big.as_bytes(),
        None,
        "{}",
        &mut replay,
        &mut TickClock::default(),
    );
    assert_eq!(
        report.receipt.status,
        aelc_runtime::pipeline::Status::RejectedInput
    );
    assert_eq!(report.receipt.cost.amount, "0");
    assert!(report.refusal.is_some_and(|r| r.contains("max_prompt")));
    let report = run.run(
        input.as_bytes(),
        Some(&[aelc_runtime::provider::PartKind::Text]),
        "{}",
        &mut replay,
        &mut TickClock::default(),
    );
    // The binding given here takes no images: an error before the call.
    assert_eq!(report.receipt.status, aelc_runtime::pipeline::Status::Error);
    assert_eq!(report.receipt.code.as_deref(), Some("model_unavailable"));
    assert!(replay.requests.is_empty());
}

/// Template delimiters are written into a prompt as strings inside tags: the checker and the
/// renderer read `{{ "{{" }}` as a tag holding a string, and the prompt gets the braces.
#[test]
fn template_delimiters_are_written_as_strings() {
    let source = r#"
struct Ask {
    topic: Str<40>,
}

struct Reply {
    text: Str<200>,
}

node answer(ask: Ask) -> Reply {
    config {
        prompt: file("prompts/answer.md");
        model: binding("m");
    }
}
"#;
    let template =
        r##"Use {{ "{{" }} name {{ "}}" }} and {{ r#"{% if %}"# }} for {{ ask.topic }}."##;
    let program = answer_project(source, template, r#"["text"]"#);
    let node = find_node(&program, "answer").unwrap();
    let run = NodeRun::new(&program, node);
    let inputs = run.decode_input(br#"{"topic": "templates"}"#).unwrap();
    let parts = run.prompt(&inputs, "{}").unwrap();
    assert_eq!(
        parts,
        [PromptPart::Text(
            "Use {{ name }} and {% if %} for templates.".into()
        )]
    );
}

/// A project in memory: one module `source` with a node `answer` whose prompt is `template`,
/// and a replay binding `m` accepting the part kinds `accepts`; checked clean, its program.
fn answer_project(source: &str, template: &str, accepts: &str) -> aelc::ir::Program {
    let toml = format!(
        "[package]\nname = \"acme/answer\"\nversion = \"0.1.0\"\n\n[bindings.m]\nprovider = \"replay\"\nmodel = \"r\"\naccepts = {accepts}\n"
    );
    let world = aelc::driver::MemoryWorld::new()
        .with("/p/ael.toml", toml)
        .with("/p/nodes/answer.node.ael", source)
        .with("/p/prompts/answer.md", template);
    let compilation = driver::check_path(&world, Path::new("/p")).unwrap();
    let codes: Vec<&str> = compilation.diagnostics.iter().map(|d| d.code).collect();
    assert!(codes.is_empty(), "{codes:?}");
    compilation.program.unwrap()
}

/// A node whose output is not an object (a list) runs against an OpenAI-compatible server in
/// structured-output mode: the request carries codegen's `{"value": …}` variant, the answer
/// comes back wrapped, and the pipeline sees the list.
#[test]
fn a_list_output_runs_in_openai_schema_mode() {
    let server = Server::start(vec![openai_stream(r#"{"value": ["typo", "grammar"]}"#)]);
    let dir = scratch("list-openai");
    let toml = format!(
        "[package]\nname = \"acme/tags\"\nversion = \"0.1.0\"\n\n[bindings.m]\nprovider = \"openai\"\nmodel = \"local-model\"\nbase_url = \"{}\"\napi_key_env = \"{KEY_VAR}\"\naccepts = [\"text\"]\n",
        server.url("/v1")
    );
    let files = [
        ("ael.toml", toml.as_str()),
        (
            "nodes/tags.node.ael",
            "struct Text {\n    body: Str<200>,\n}\n\nnode tags(text: Text) -> List<Str<20>, 5> {\n    config {\n        prompt: file(\"prompts/tags.md\");\n        model: binding(\"m\");\n    }\n}\n",
        ),
        ("prompts/tags.md", "Tag this: {{ text.body }}\n{{ output_schema }}\n"),
        ("input.json", r#"{"body": "Teh cat."}"#),
    ];
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let out = aelc(&["run", "tags", "--input", "input.json"], &dir);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(
        text(&out.stdout).lines().next(),
        Some(r#"["typo","grammar"]"#)
    );
    let (requests, _) = server.finish();
    let format = &requests[0].body["response_format"]["json_schema"];
    assert_eq!(format["strict"], true);
    assert_eq!(format["schema"]["type"], "object");
    assert_eq!(format["schema"]["required"], json!(["value"]));
    assert_eq!(format["schema"]["properties"]["value"]["type"], "array");
    let _ = std::fs::remove_dir_all(&dir);
}
