//! `aelc run` end to end: the binary against recorded answers (`--replay`) and against a real
//! HTTP server on 127.0.0.1 speaking the OpenAI and Anthropic formats, plus the prompts it
//! renders (a snapshot of the review example's prompt).

#[path = "../../stdlib/runtime/tests/it/provider_server.rs"]
pub(crate) mod provider_server;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::scratch::Scratch;

use aelc::driver::project::find_node;
use aelc::driver::{self, DiskWorld};
use aelc_runtime::exec::{prompt_text, Env, Executor, Externs, Run, Schemas};
use aelc_runtime::model::{FinishReason, ModelAnswer, ReplayModel, Usage};
use aelc_runtime::pipeline::TickClock;
use aelc_runtime::prompt::PromptPart;
use aelc_runtime::receipt::CountingIds;
use provider_server::{json_reply, sse, Reply, Server};
use serde_json::{json, Value};

const KEY_VAR: &str = "AELC_RUN_TEST_KEY";
const KEY: &str = "sk-run-test-9f8e7d6c5b4a";

fn review_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/review")
}

/// A scratch folder unique to one test, removed when it ends.
fn scratch(name: &str) -> Scratch {
    Scratch::new("aelc-run", name)
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
fn review_project(name: &str, primary: &str, backup: &str) -> Scratch {
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
    let exec = Executor::new(&program, Schemas::default());
    let inputs = exec
        .decode_input(
            node,
            br#"{"document": "Teh cat sat.", "locale": "de-CH", "max_findings": 2}"#,
        )
        .unwrap();
    let parts = exec
        .render_prompt(node, &inputs, "null", &mut Externs::new())
        .unwrap();
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
    let report = run_with(
        &exec,
        "review",
        br#"{"document": "Teh cat sat.", "locale": "de-CH", "max_findings": 2}"#,
        &mut replay,
        false,
    );
    assert_eq!(
        report.receipt.status,
        aelc_runtime::pipeline::Status::Succeeded
    );
    assert_eq!(replay.requests[0].prompt, *prompt);
    assert_eq!(prompt_text(&report.parts), *prompt);
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
    let exec = Executor::new(&program, Schemas::default());
    let banner = r#"{"ref": "holon://files/b0b", "content_type": "image/png", "size": 10, "sha256": "0000000000000000000000000000000000000000000000000000000000000000"}"#;
    let input = format!(
        r#"{{"items": [{{"name": "pear", "qty": 2}}, {{"name": "fig", "qty": 1}}], "tone": "warm", "banner": {banner}}}"#
    );
    let inputs = exec.decode_input(node, input.as_bytes()).unwrap();
    let parts = exec
        .render_prompt(node, &inputs, "{}", &mut Externs::new())
        .unwrap();
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
    let inputs = exec.decode_input(node, big.as_bytes()).unwrap();
    assert_eq!(
        exec.render_prompt(node, &inputs, "{}", &mut Externs::new()),
        Err(aelc_runtime::prompt::PromptError::TooLarge { limit: 200 })
    );
    let mut replay = ReplayModel::default();
    let report = run_with(&exec, "answer", big.as_bytes(), &mut replay, false);
    assert_eq!(
        report.receipt.status,
        aelc_runtime::pipeline::Status::RejectedInput
    );
    assert_eq!(report.receipt.cost.amount, "0");
    assert!(report.refusal.is_some_and(|r| r.contains("max_prompt")));
    let mut text_only = program.clone();
    text_only.bindings[0].accepts = vec![aelc_runtime::provider::PartKind::Text];
    let exec = Executor::new(&text_only, Schemas::default());
    let report = run_with(&exec, "answer", input.as_bytes(), &mut replay, true);
    // The binding takes no images: an error before the call.
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
    let exec = Executor::new(&program, Schemas::default());
    let inputs = exec
        .decode_input(node, br#"{"topic": "templates"}"#)
        .unwrap();
    let parts = exec
        .render_prompt(node, &inputs, "{}", &mut Externs::new())
        .unwrap();
    assert_eq!(
        parts,
        [PromptPart::Text(
            "Use {{ name }} and {% if %} for templates.".into()
        )]
    );
}

/// Runs node `name` of `exec` on `input` with `replay` answering.
fn run_with(
    exec: &Executor<'_>,
    name: &str,
    input: &[u8],
    replay: &mut ReplayModel,
    check_accepts: bool,
) -> Run {
    let program = exec.program();
    let node = aelc::driver::run::node_id(program, find_node(program, name).unwrap());
    let mut env = Env {
        model: replay,
        clock: &mut TickClock::default(),
        ids: &mut CountingIds::default(),
        externs: &mut Externs::new(),
        check_accepts,
        media: None,
    };
    exec.run(node, input, &mut env).unwrap()
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

// ---------------------------------------------------------------- the one executor (spec §12)

/// A project for the executor's tests: bodies, an extern registered from Rust, delegated
/// calls, raw mode, budgets. Its one binding replays answers at a price.
const EXECUTOR_SOURCE: &str = r#"
struct Ask {
    text: Str<100>,
}

struct Reply {
    words: List<Str<100>, 4>,
}

struct Pair {
    a: Reply,
    b: Reply,
}

errors AskError {
    /// The model kept giving more than two words.
    too_many,
}

check at_most_two(output: Reply) fails AskError {
    require output.words.len() <= 2 else too_many "more than two words";
}

fn echo(ask: Ask) -> Reply {
    Reply { words: [ask.text] }
}

/// Calls the node's model (the seed's form).
extern fn ask_model(ask: Ask) -> Reply;
/// Rust that upper-cases every word.
extern fn shout(reply: Reply) -> Reply;
/// Rust that reads words out of the raw answer.
extern fn parse_words(raw: Raw) -> Reply;

/// A body with no model: a pure fn computes the answer.
node pure(ask: Ask) -> Reply {
    return echo(ask);
}

/// The model call, then Rust.
node loud(ask: Ask) -> Reply {
    config {
        prompt: file("prompts/ask.md");
        model: binding("m");
    }
    return shout(ask_model(ask));
}

/// A model node that fails with a declared code.
node child(ask: Ask) -> Reply fails AskError {
    config {
        prompt: file("prompts/ask.md");
        model: binding("m");
    }
    output {
        check at_most_two;
        on_failure: fail(too_many);
    }
}

/// Two delegated calls.
node parent(ask: Ask) -> Pair fails AskError {
    return Pair { a: child(ask), b: child(ask) };
}

/// Raw mode: the author's parser reads the answer.
node raw_words(ask: Ask) -> Reply {
    config {
        prompt: file("prompts/ask.md");
        model: binding("m");
    }
    output {
        raw;
        parse: parse_words;
        on_failure: retry(2);
    }
}
"#;

fn executor_program() -> aelc::ir::Program {
    let toml = "[package]\nname = \"acme/ask\"\nversion = \"0.1.0\"\n\n[bindings.m]\nprovider = \"replay\"\nmodel = \"r\"\naccepts = [\"text\"]\nprice = { input_per_mtok = 1, output_per_mtok = 2, currency = \"EUR\" }\n";
    let world = aelc::driver::MemoryWorld::new()
        .with("/p/ael.toml", toml)
        .with("/p/nodes/ask.node.ael", EXECUTOR_SOURCE)
        .with("/p/prompts/ask.md", "Words for: {{ ask.text }}\n");
    let compilation = driver::check_path(&world, Path::new("/p")).unwrap();
    let codes: Vec<String> = compilation
        .diagnostics
        .iter()
        .map(|d| format!("{} {}", d.code, d.message))
        .collect();
    assert!(
        compilation.program.is_some(),
        "the executor fixture checks: {codes:?}"
    );
    compilation.program.unwrap()
}

fn stop_answer(text: &str, input_tokens: u64, output_tokens: u64) -> ModelAnswer {
    ModelAnswer {
        text: text.to_owned(),
        finish_reason: FinishReason::Stop,
        usage: Usage {
            input_tokens,
            output_tokens,
        },
    }
}

/// Runs `name` with `answers` and the Rust externs of the fixture registered.
fn run_executor(
    program: &aelc::ir::Program,
    name: &str,
    input: &str,
    answers: &[&str],
) -> (Run, ReplayModel) {
    let exec = Executor::new(program, aelc::driver::run::schemas(program));
    let node = aelc::driver::run::node_id(program, find_node(program, name).unwrap());
    let mut replay = ReplayModel::new(answers.iter().map(|a| stop_answer(a, 100, 50)));
    let mut externs = fixture_externs();
    let mut env = Env {
        model: &mut replay,
        clock: &mut TickClock::default(),
        ids: &mut CountingIds::default(),
        externs: &mut externs,
        check_accepts: true,
        media: None,
    };
    let run = exec.run(node, input.as_bytes(), &mut env).unwrap();
    (run, replay)
}

fn words(value: &aelc_runtime::value::Value) -> Vec<String> {
    use aelc_runtime::value::Value;
    match value {
        Value::Struct(fields) => match fields.first() {
            Some(Value::List(items)) => items
                .iter()
                .map(|i| match i {
                    Value::Str(s) => s.to_string(),
                    other => format!("{other:?}"),
                })
                .collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

fn reply(words: &[&str]) -> aelc_runtime::value::Value {
    use aelc_runtime::value::Value;
    Value::Struct(vec![Value::List(
        words.iter().map(|w| Value::Str((*w).into())).collect(),
    )])
}

/// `shout` and `parse_words`, as a host registers them.
fn fixture_externs() -> Externs {
    let mut externs = Externs::new();
    externs.register_fn("shout", |args| {
        let w = args.first().map(words).unwrap_or_default();
        let upper: Vec<String> = w.iter().map(|s| s.to_uppercase()).collect();
        Ok(reply(&upper.iter().map(String::as_str).collect::<Vec<_>>()))
    });
    externs.register_fn("parse_words", |args| {
        use aelc_runtime::eval::{EvalError, EvalErrorKind};
        let Some(aelc_runtime::value::Value::Str(text)) = args.first() else {
            return Err(EvalError::new(EvalErrorKind::Extern, "no raw text"));
        };
        if text.contains('!') {
            return Err(EvalError::new(EvalErrorKind::Extern, "a `!` is no word"));
        }
        Ok(reply(&text.split_whitespace().collect::<Vec<_>>()))
    });
    externs
}

const ASK: &str = r#"{"text": "hello"}"#;

#[test]
fn a_body_calling_a_pure_fn_runs_without_a_model() {
    let program = executor_program();
    let (run, replay) = run_executor(&program, "pure", ASK, &[]);
    assert_eq!(
        run.outcome.status,
        aelc_runtime::pipeline::Status::Succeeded,
        "{:?}",
        run.refusal
    );
    assert_eq!(
        run.outcome.output_json.as_deref(),
        Some(r#"{"words":["hello"]}"#)
    );
    assert!(replay.requests.is_empty() && run.receipt.attempts.is_empty());
    assert_eq!(run.receipt.spent.amount, "0");
}

#[test]
fn the_model_call_then_a_registered_extern() {
    let program = executor_program();
    let (run, replay) = run_executor(&program, "loud", ASK, &[r#"{"words": ["hi", "there"]}"#]);
    assert_eq!(
        run.outcome.status,
        aelc_runtime::pipeline::Status::Succeeded,
        "{:?}",
        run.refusal
    );
    assert_eq!(
        run.outcome.output_json.as_deref(),
        Some(r#"{"words":["HI","THERE"]}"#)
    );
    // The runtime rendered the node's prompt for the call.
    assert_eq!(replay.requests[0].prompt, "Words for: hello\n");
    assert_eq!(run.receipt.attempts.len(), 1);
    // 100 in × 1/M + 50 out × 2/M.
    assert_eq!(run.receipt.cost.amount, "0.0002");
    // Without `shout` registered the node cannot run, and nothing is called.
    let exec = Executor::new(&program, Schemas::default());
    let node = aelc::driver::run::node_id(&program, find_node(&program, "loud").unwrap());
    let mut replay = ReplayModel::default();
    let mut env = Env {
        model: &mut replay,
        clock: &mut TickClock::default(),
        ids: &mut CountingIds::default(),
        externs: &mut Externs::new(),
        check_accepts: false,
        media: None,
    };
    let refused = exec.run(node, ASK.as_bytes(), &mut env).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "node `loud` cannot run here: it needs extern fn `shout` (called by `loud`), which has no implementation here"
    );
    assert!(replay.requests.is_empty());
}

#[test]
fn delegated_calls_have_child_receipts_and_take_answers_in_order() {
    let program = executor_program();
    let (run, replay) = run_executor(
        &program,
        "parent",
        ASK,
        &[r#"{"words": ["a"]}"#, r#"{"words": ["b", "c"]}"#],
    );
    assert_eq!(
        run.outcome.status,
        aelc_runtime::pipeline::Status::Succeeded,
        "{:?}",
        run.refusal
    );
    assert_eq!(
        run.outcome.output_json.as_deref(),
        Some(r#"{"a":{"words":["a"]},"b":{"words":["b","c"]}}"#)
    );
    let nodes: Vec<&str> = replay.requests.iter().map(|r| r.node.as_str()).collect();
    assert_eq!(nodes, ["child", "child"]);
    let children = &run.receipt.delegated;
    assert_eq!(children.len(), 2);
    assert!(children
        .iter()
        .all(|c| c.node == "child" && c.attempts.len() == 1));
    // The parent made no call itself, and is billed for its children's.
    assert!(run.receipt.attempts.is_empty());
    assert_eq!(run.receipt.spent.amount, "0.0004");
    assert_eq!(run.receipt.cost.amount, "0.0004");
    // Every receipt has its own id.
    let mut ids = vec![run.receipt.receipt.clone()];
    ids.extend(children.iter().map(|c| c.receipt.clone()));
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3);
}

#[test]
fn a_failing_child_ends_the_parent_with_its_declared_code() {
    let program = executor_program();
    // The first child gets three words: `at_most_two` fails, and its policy is `fail(too_many)`.
    let (run, replay) = run_executor(&program, "parent", ASK, &[r#"{"words": ["a", "b", "c"]}"#]);
    assert_eq!(run.outcome.status, aelc_runtime::pipeline::Status::Failed);
    assert_eq!(run.outcome.code.as_deref(), Some("too_many"));
    assert_eq!(replay.requests.len(), 1, "the second child never ran");
    let [child] = run.receipt.delegated.as_slice() else {
        panic!("one child receipt: {:?}", run.receipt.delegated);
    };
    assert_eq!(child.status, aelc_runtime::pipeline::Status::Failed);
    assert_eq!(child.code.as_deref(), Some("too_many"));
    assert_eq!(
        child.attempts[0]
            .rejected
            .as_ref()
            .and_then(|r| r.check.as_deref()),
        Some("at_most_two")
    );
    // Nothing billed for a failed run, though the call was spent.
    assert_eq!(run.receipt.cost.amount, "0");
    assert_eq!(run.receipt.spent.amount, "0.0002");
    assert!(run.refusal.is_some_and(|r| r.contains("`child`")));
}

#[test]
fn raw_mode_hands_the_answer_to_the_parser() {
    let program = executor_program();
    let raw = find_node(&program, "raw_words").unwrap();
    let parser = &program.fns[raw.output_stage.raw_parse.unwrap().0 as usize];
    assert!(
        parser.params[0].raw,
        "the parser's parameter is Raw, not a bool"
    );
    // The parser refuses the first answer (step 2), accepts the second as it reads it.
    let (run, _) = run_executor(&program, "raw_words", ASK, &["bad!", "one two"]);
    assert_eq!(
        run.outcome.status,
        aelc_runtime::pipeline::Status::Succeeded,
        "{:?}",
        run.outcome.attempts
    );
    assert_eq!(
        run.outcome.output_json.as_deref(),
        Some(r#"{"words":["one","two"]}"#)
    );
    let first = run.outcome.attempts[0].rejected.as_ref().unwrap();
    assert_eq!((first.step, first.code.as_str()), (2, "undecodable_output"));
    assert!(
        first.message.contains("a `!` is no word"),
        "{}",
        first.message
    );
    // What the parser returns goes through step 3: five words break `List<_, 4>`.
    let (run, _) = run_executor(&program, "raw_words", ASK, &["a b c d e", "x"]);
    let first = run.outcome.attempts[0].rejected.as_ref().unwrap();
    assert_eq!(first.step, 3, "{first:?}");
    assert_eq!(
        run.outcome.output_json.as_deref(),
        Some(r#"{"words":["x"]}"#)
    );
}

/// The children's calls are reserved in the parent's budget too: with room for one worst case
/// and not two, the second child is never called, and the run spends within `max_cost`.
#[test]
fn max_cost_holds_across_delegated_calls() {
    use aelc_runtime::money::Amount;
    let mut program = executor_program();
    let answers = [r#"{"words": ["a"]}"#, r#"{"words": ["b"]}"#];
    let (free, _) = run_executor(&program, "parent", ASK, &answers);
    let worst = Amount::parse(&free.receipt.delegated[0].reserved.amount).unwrap();
    let spent = Amount::parse(&free.receipt.delegated[0].spent.amount).unwrap();
    assert!(spent <= worst, "a call costs at most its reservation");
    // Room for one call's worst case: after it, what it cost plus the next worst case is more.
    let max = worst;
    let index = program
        .nodes
        .iter()
        .position(|n| n.name == "parent")
        .unwrap();
    program.nodes[index].budget.max_cost = Some(aelc::ir::Money {
        amount: max.to_string(),
        currency: "EUR".into(),
    });
    let (run, replay) = run_executor(&program, "parent", ASK, &answers);
    assert_eq!(replay.requests.len(), 1, "the second call did not fit");
    assert_eq!(run.outcome.status, aelc_runtime::pipeline::Status::Error);
    assert_eq!(run.outcome.code.as_deref(), Some("budget_exceeded"));
    assert!(Amount::parse(&run.receipt.spent.amount).unwrap() <= max);
    assert_eq!(run.receipt.delegated.len(), 2);
    assert_eq!(
        run.receipt.delegated[1].code.as_deref(),
        Some("budget_exceeded")
    );
    assert!(run.receipt.delegated[1].attempts.is_empty());
}

#[test]
fn two_identical_runs_have_two_receipts() {
    let program = executor_program();
    let exec = Executor::new(&program, Schemas::default());
    let node = aelc::driver::run::node_id(&program, find_node(&program, "pure").unwrap());
    let mut ids = Vec::new();
    for _ in 0..2 {
        let mut replay = ReplayModel::default();
        let mut env = Env {
            model: &mut replay,
            clock: &mut TickClock::default(),
            ids: &mut aelc_runtime::receipt::UuidIds,
            externs: &mut Externs::new(),
            check_accepts: false,
            media: None,
        };
        let run = exec.run(node, ASK.as_bytes(), &mut env).unwrap();
        ids.push(run.receipt.receipt);
    }
    assert_ne!(ids[0], ids[1]);
    assert!(ids
        .iter()
        .all(|id| id.starts_with("rcpt_") && id.len() == 37));
}

/// A cycle of delegations (made by hand here: the IR of `parent` calls `parent`) ends at the
/// depth bound with an error naming the chain; a node missing from the program is named before
/// anything runs.
#[test]
fn delegation_cycles_and_missing_nodes_are_clear_errors() {
    use aelc_runtime::expr::Expr;
    let mut program = executor_program();
    let index = program
        .nodes
        .iter()
        .position(|n| n.name == "parent")
        .unwrap();
    let body = program.nodes[index].body.as_mut().unwrap();
    body.expr = Expr::CallNode {
        node: index as u32,
        args: vec![Expr::local(0)],
    };
    let (run, replay) = run_executor(&program, "parent", ASK, &[]);
    assert!(replay.requests.is_empty());
    assert_eq!(run.outcome.status, aelc_runtime::pipeline::Status::Error);
    assert_eq!(run.receipt.cost.amount, "0");
    let why = run.refusal.unwrap_or_default();
    assert!(why.contains("delegated calls nest deeper than 16"), "{why}");
    assert!(why.contains("parent → parent → parent"), "{why}");

    let body = program.nodes[index].body.as_mut().unwrap();
    body.expr = Expr::CallNode {
        node: 99,
        args: vec![Expr::local(0)],
    };
    let exec = Executor::new(&program, Schemas::default());
    let mut replay = ReplayModel::default();
    let mut env = Env {
        model: &mut replay,
        clock: &mut TickClock::default(),
        ids: &mut CountingIds::default(),
        externs: &mut Externs::new(),
        check_accepts: false,
        media: None,
    };
    let refused = exec
        .run(aelc::ir::NodeId(index as u32), ASK.as_bytes(), &mut env)
        .unwrap_err();
    assert_eq!(refused.node, "parent");
    assert_eq!(refused.missing, ["node #99, which the program lacks"]);
}

// ---------------------------------------------------------------- sessions (spec §12.1)

const FUSE_SOURCE: &str = r#"
struct Frame {
    brightness: u8,
}

struct Reading {
    celsius: i16,
}

struct Estimate {
    fire: bool,
}

fn judge(camera: Frame, reading: Reading) -> Estimate {
    Estimate { fire: camera.brightness > 200 && reading.celsius > 60 }
}

node fuse(camera: Frame, reading: Reading) -> Estimate {
    inputs {
        combine: latest;
        fresh: camera 200ms, reading 1s;
    }
    return judge(camera, reading);
}

node pair(camera: Frame, reading: Reading) -> Estimate {
    inputs {
        combine: zip;
    }
    return judge(camera, reading);
}
"#;

fn fuse_program() -> aelc::ir::Program {
    let toml = "[package]\nname = \"acme/fuse\"\nversion = \"0.1.0\"\n";
    let world = aelc::driver::MemoryWorld::new()
        .with("/p/ael.toml", toml)
        .with("/p/nodes/fuse.node.ael", FUSE_SOURCE);
    let compilation = driver::check_path(&world, Path::new("/p")).unwrap();
    let codes: Vec<String> = compilation
        .diagnostics
        .iter()
        .map(|d| format!("{} {}", d.code, d.message))
        .collect();
    assert!(compilation.program.is_some(), "{codes:?}");
    compilation.program.unwrap()
}

/// One session line: `input` observed `ms` after 14:00:00 with `value`.
fn observed(input: &str, ms: u64, value: &str) -> String {
    format!(
        r#"{{"input": "{input}", "at": "2026-12-02T14:00:{:02}.{:03}Z", "value": {value}}}"#,
        ms / 1000,
        ms % 1000
    )
}

/// What each line of `lines` became: `wait`, `refused`, or the run's status and code.
fn session_verdicts(node: &str, lines: &[String]) -> Vec<String> {
    use aelc_runtime::exec::{parse_session, Arrival, Session};
    let program = fuse_program();
    let exec = Executor::new(&program, Schemas::default());
    let id = aelc::driver::run::node_id(&program, find_node(&program, node).unwrap());
    let mut replay = ReplayModel::default();
    let mut externs = Externs::new();
    let mut session = Session::new(&exec, id, &externs).unwrap();
    let mut env = Env {
        model: &mut replay,
        clock: &mut TickClock::default(),
        ids: &mut CountingIds::default(),
        externs: &mut externs,
        check_accepts: false,
        media: None,
    };
    let observations = parse_session(&lines.join("\n")).unwrap();
    observations
        .iter()
        .map(|o| match session.observe(o, &mut env) {
            Arrival::Waiting => "wait".to_owned(),
            Arrival::Refused { why, .. } => format!("refused: {why}"),
            Arrival::Ran(run) => match (&run.outcome.code, &run.outcome.output_json) {
                (Some(code), _) => format!("{code}: {}", run.receipt.refusal.unwrap_or_default()),
                (None, Some(json)) => json.clone(),
                (None, None) => "?".to_owned(),
            },
        })
        .collect()
}

/// `latest` runs on each arrival with every input's latest value; a camera frame older than its
/// 200 ms bound is refused with `stale_input` (on the receipt), never combined with a new
/// reading, and the node waits for a fresh frame.
#[test]
fn latest_refuses_a_stale_frame_and_waits_for_a_fresh_one() {
    let hot = r#"{"celsius": 80}"#;
    let verdicts = session_verdicts(
        "fuse",
        &[
            observed("camera", 0, r#"{"brightness": 250}"#),
            observed("reading", 100, hot),
            observed("reading", 150, r#"{"celsius": 20}"#),
            observed("reading", 400, hot),
            observed("reading", 420, hot),
            observed("camera", 450, r#"{"brightness": 250}"#),
        ],
    );
    assert_eq!(
        verdicts,
        [
            "wait",
            r#"{"fire":true}"#,
            r#"{"fire":false}"#,
            "stale_input: stale input: `camera` is 400 ms old, its bound is 200 ms",
            "wait",
            r#"{"fire":true}"#,
        ]
    );
}

/// `zip` runs when every input has a new value, each input's newest, then waits again.
#[test]
fn zip_runs_when_every_input_is_new() {
    let verdicts = session_verdicts(
        "pair",
        &[
            observed("camera", 0, r#"{"brightness": 10}"#),
            observed("camera", 50, r#"{"brightness": 250}"#),
            observed("reading", 60, r#"{"celsius": 90}"#),
            observed("reading", 70, r#"{"celsius": 10}"#),
            observed("camera", 80, r#"{"brightness": 250}"#),
        ],
    );
    assert_eq!(
        verdicts,
        [
            "wait",
            "wait",
            r#"{"fire":true}"#,
            "wait",
            r#"{"fire":false}"#
        ]
    );
}

/// Bad observations are refused on their own, naming what is wrong, and never combined.
#[test]
fn bad_observations_are_refused_alone() {
    let verdicts = session_verdicts(
        "pair",
        &[
            observed("radar", 0, "{}"),
            observed("camera", 10, r#"{"brightness": 999}"#),
            observed("camera", 20, r#"{"brightness": 1}"#),
            observed("reading", 5, r#"{"celsius": 1}"#),
        ],
    );
    assert!(
        verdicts[0].contains("`radar` is not an input of `pair` (its inputs: camera, reading)"),
        "{verdicts:?}"
    );
    assert!(
        verdicts[1].contains("the value of `camera` does not decode"),
        "{verdicts:?}"
    );
    assert_eq!(verdicts[2], "wait");
    assert!(verdicts[3].contains("time order"), "{verdicts:?}");
    let bad =
        aelc_runtime::exec::parse_session(r#"{"input": "camera", "at": "noon", "value": {}}"#);
    assert!(bad.is_err_and(|e| e.line == 1 && e.message.contains("RFC 3339")));
}

/// `aelc run --session` prints one receipt per run; a stale refusal fails the command.
#[test]
fn aelc_run_feeds_a_session() {
    let dir = scratch("session");
    let files = [
        (
            "ael.toml",
            "[package]\nname = \"acme/fuse\"\nversion = \"0.1.0\"\n".to_owned(),
        ),
        ("nodes/fuse.node.ael", FUSE_SOURCE.to_owned()),
        (
            "session.jsonl",
            [
                observed("camera", 0, r#"{"brightness": 250}"#),
                observed("reading", 100, r#"{"celsius": 80}"#),
                observed("reading", 900, r#"{"celsius": 80}"#),
            ]
            .join("\n"),
        ),
    ];
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let out = aelc(&["run", "fuse", "--session", "session.jsonl"], &dir);
    let stdout = text(&out.stdout);
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert_eq!(lines[0], json!({"fire": true}));
    assert_eq!(lines[1]["status"], "succeeded");
    assert_eq!(lines[2]["status"], "rejected_input");
    assert_eq!(lines[2]["code"], "stale_input");
    assert!(text(&out.stderr).contains("`camera` is 900 ms old"));
    let none = aelc(
        &[
            "run",
            "fuse",
            "--input",
            "session.jsonl",
            "--session",
            "session.jsonl",
        ],
        &dir,
    );
    assert_eq!(none.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------- media at run time (spec §12.1)

const PHOTO_SOURCE: &str = r#"
struct Shot {
    photo: Image<1MiB>,
}

struct Caption {
    text: Str<200>,
}

builder shot_parts(shot: Shot) -> Parts {
    text("Describe the picture.")
    image(shot.photo)
}

node caption(shot: Shot) -> Caption {
    config {
        model: binding("m");
    }
    input {
        builder shot_parts;
    }
}
"#;

fn shot(expires_at: &str) -> String {
    format!(
        r#"{{"photo": {{"ref": "holon://files/b0b", "content_type": "image/png", "size": 10, "sha256": "{}", "expires_at": "{expires_at}"}}}}"#,
        "0".repeat(64)
    )
}

/// An expired reference is refused before anything is read or called; a live provider never
/// receives a `holon://` reference (no file store resolves it here), while a replay may.
#[test]
fn expired_and_unresolvable_media_are_refused_before_the_call() {
    let program = answer_project(PHOTO_SOURCE, "", r#"["text", "image"]"#);
    let exec = Executor::new(&program, Schemas::default());
    let answer = || {
        ReplayModel::new([ModelAnswer {
            text: r#"{"text": "a cat"}"#.into(),
            finish_reason: FinishReason::Stop,
            usage: Usage::default(),
        }])
    };
    let mut replay = answer();
    let old = run_with(
        &exec,
        "caption",
        shot("2001-01-01T00:00:00Z").as_bytes(),
        &mut replay,
        false,
    );
    assert_eq!(
        old.outcome.status,
        aelc_runtime::pipeline::Status::RejectedInput
    );
    assert!(replay.requests.is_empty());
    let why = old.receipt.refusal.unwrap_or_default();
    assert!(
        why.contains("holon://files/b0b") && why.contains("expired at 2001-01-01T00:00:00Z"),
        "{why}"
    );

    let mut replay = answer();
    let fresh = run_with(
        &exec,
        "caption",
        shot("2999-01-01T00:00:00Z").as_bytes(),
        &mut replay,
        false,
    );
    assert_eq!(
        fresh.outcome.status,
        aelc_runtime::pipeline::Status::Succeeded,
        "{:?}",
        fresh.refusal
    );

    let mut replay = answer();
    let live = run_with(
        &exec,
        "caption",
        shot("2999-01-01T00:00:00Z").as_bytes(),
        &mut replay,
        true,
    );
    assert_eq!(live.outcome.code.as_deref(), Some("model_unavailable"));
    assert!(replay.requests.is_empty());
    assert!(live.refusal.unwrap_or_default().contains("no file store"));
}

/// A file store that counts what it reads, around the local one.
struct Counting<'a> {
    store: &'a aelc_runtime::files::Files,
    reads: std::sync::atomic::AtomicU32,
}

impl Counting<'_> {
    fn reads(&self) -> u32 {
        self.reads.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl aelc_runtime::files::MediaStore for Counting<'_> {
    fn record(&self, id: &str) -> Result<Option<aelc_runtime::files::StoredFile>, String> {
        self.store.record(id)
    }

    fn bytes(&self, file: &aelc_runtime::files::StoredFile, max: u64) -> Result<Vec<u8>, String> {
        self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.store.bytes(file, max)
    }
}

/// The header of a 2×3 PNG: enough for its type and dimensions to be read.
fn tiny_png() -> Vec<u8> {
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    png.extend_from_slice(&[0, 0, 0, 2, 0, 0, 0, 3, 8, 2, 0, 0, 0, 0, 0, 0, 0]);
    png
}

/// With a file store, every reference is checked against it before anything is read (tenant,
/// expiry, existence), and a live call's media goes to the provider as inline data read and
/// verified through the store, never as a `holon://` reference.
#[test]
fn media_is_checked_against_the_store_and_sent_inline() {
    use aelc_runtime::exec::MediaAccess;
    use aelc_runtime::files::Files;
    use aelc_runtime::pipeline::Status;
    use aelc_runtime::provider::Part;

    let program = answer_project(PHOTO_SOURCE, "", r#"["text", "image"]"#);
    let exec = Executor::new(&program, Schemas::default());
    let dir = scratch("media-store");
    let files = Files::in_project(&dir);
    let png = tiny_png();
    let mine = files.put(&png, "local", None, None).unwrap();
    assert_eq!(
        (
            mine.media.content_type.as_str(),
            mine.media.width,
            mine.media.height
        ),
        ("image/png", Some(2), Some(3))
    );
    let theirs = files.put(&png, "acme", None, None).unwrap();
    let expired = files
        .put(&png, "local", Some("2001-01-01T00:00:00Z".into()), None)
        .unwrap();
    let store = Counting {
        store: &files,
        reads: Default::default(),
    };
    let run = |media: &aelc_runtime::value::MediaRef| {
        let mut replay = ReplayModel::new([ModelAnswer {
            text: r#"{"text": "a cat"}"#.into(),
            finish_reason: FinishReason::Stop,
            usage: Usage::default(),
        }]);
        let input = format!(r#"{{"photo": {}}}"#, serde_json::to_string(media).unwrap());
        let node = aelc::driver::run::node_id(&program, find_node(&program, "caption").unwrap());
        let mut env = Env {
            model: &mut replay,
            clock: &mut TickClock::default(),
            ids: &mut CountingIds::default(),
            externs: &mut Externs::new(),
            check_accepts: true,
            media: Some(MediaAccess {
                store: &store,
                tenant: "local",
            }),
        };
        let run = exec.run(node, input.as_bytes(), &mut env).unwrap();
        (run, replay.requests)
    };

    let (ok, requests) = run(&mine.media);
    assert_eq!(ok.outcome.status, Status::Succeeded, "{:?}", ok.refusal);
    assert_eq!(store.reads(), 1);
    let parts = requests[0]
        .call
        .as_ref()
        .and_then(|c| c.parts.clone())
        .unwrap();
    let Some(Part::Image(source)) = parts.get(1) else {
        panic!("no image part: {parts:?}");
    };
    assert!(
        source.url.starts_with("data:image/png;base64,iVBORw0KGgo"),
        "{}",
        source.url
    );

    for (media, why) in [
        (&theirs.media, "no such file for tenant `local`"),
        (&expired.media, "expired at 2001-01-01T00:00:00Z"),
    ] {
        let (refused, requests) = run(media);
        assert_eq!(refused.outcome.status, Status::RejectedInput);
        let refusal = refused.receipt.refusal.unwrap_or_default();
        assert!(refusal.contains(why), "{refusal}");
        assert!(requests.is_empty());
        assert_eq!(store.reads(), 1, "refused before any byte is read");
    }

    let mut missing = mine.media.clone();
    missing.reference = "holon://files/0000nothing".into();
    let (refused, _) = run(&missing);
    let refusal = refused.receipt.refusal.unwrap_or_default();
    assert!(refusal.contains("(`ref`): no such file"), "{refusal}");

    // Bytes that do not match the SHA-256 (same length) are refused, and nothing is sent.
    let content = dir.join(".ael/files").join(&mine.media.sha256);
    let mut damaged = png.clone();
    damaged[20] ^= 1;
    std::fs::write(&content, &damaged).unwrap();
    let (refused, requests) = run(&mine.media);
    assert_eq!(refused.outcome.status, Status::RejectedInput);
    assert!(requests.is_empty());
    let refusal = refused.refusal.unwrap_or_default();
    assert!(refusal.contains("(`sha256`)"), "{refusal}");
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------ streams and the file store from the CLI

fn sensors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sensors")
}

/// `aelc run monitor --session F.jsonl` feeds the stream's buffer: a complete stream runs the
/// node on the chunks buffered (a duplicate discarded), a cut one is never complete, and a
/// malformed line or a chunk over `chunk` bytes is an error naming its line and field.
#[test]
fn a_stream_node_runs_from_a_session_file() {
    let root = sensors();
    let complete = aelc(
        &["run", "monitor", "--session", "sessions/readings.jsonl"],
        &root,
    );
    assert_eq!(
        complete.status.code(),
        Some(0),
        "{}",
        text(&complete.stderr)
    );
    let out = text(&complete.stdout);
    assert!(
        out.starts_with(r#"{"readings":6,"hot":3,"level":"hot"}"#),
        "{out}"
    );
    assert!(text(&complete.stderr).contains("1 duplicate"));

    let cut = aelc(
        &["run", "monitor", "--session", "sessions/cut.jsonl"],
        &root,
    );
    assert_eq!(cut.status.code(), Some(1));
    let out = text(&cut.stdout);
    assert!(out.contains(r#""code":"incomplete_stream""#), "{out}");
    assert!(!out.contains(r#""status":"succeeded""#), "{out}");

    let dir = scratch("stream-bad");
    let cases = [
        ("{\"seq\": 1, \"at\": \"2026-12-02T14:00:00Z\", \"valeu\": 1}\n", "line 1: `line`"),
        (
            "{\"seq\": 1, \"at\": \"2026-12-02T14:00:00Z\", \"value\": {\"sensor\": \"s\", \"tenths\": 9999}}\n",
            "line 1: `value`",
        ),
        (
            &format!(
                "{{\"seq\": 1, \"at\": \"2026-12-02T14:00:00Z\", \"value\": {{\"sensor\": \"{}\", \"tenths\": 1}}}}\n",
                "s".repeat(300)
            ),
            "line 1: `chunk`",
        ),
        ("{\"end\": \"done\"}\n", "line 1: `end`"),
    ];
    for (i, (content, want)) in cases.iter().enumerate() {
        let file = dir.join(format!("bad{i}.jsonl"));
        std::fs::write(&file, content).unwrap();
        let bad = aelc(
            &["run", "monitor", "--session", file.to_str().unwrap()],
            &root,
        );
        assert_eq!(bad.status.code(), Some(1), "{content}");
        let err = text(&bad.stderr);
        assert!(err.contains(want), "{content}: {err}");
        assert!(!text(&bad.stdout).contains(r#""status":"succeeded""#));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `aelc files put` stores a file in `.ael/files/` and prints its reference.
#[test]
fn files_put_prints_a_reference() {
    let dir = scratch("files-put");
    std::fs::write(
        dir.join("ael.toml"),
        "[package]\nname = \"acme/files\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("shot.png"), tiny_png()).unwrap();
    let put = aelc(
        &[
            "files",
            "put",
            "shot.png",
            "--tenant",
            "acme",
            "--expires",
            "2h",
        ],
        &dir,
    );
    assert_eq!(put.status.code(), Some(0), "{}", text(&put.stderr));
    let reference: Value = serde_json::from_slice(&put.stdout).unwrap();
    assert!(reference["ref"]
        .as_str()
        .unwrap()
        .starts_with("holon://files/"));
    assert_eq!(reference["content_type"], "image/png");
    assert_eq!(reference["size"], tiny_png().len());
    assert_eq!(
        reference["sha256"],
        aelc_runtime::files::sha256_hex(&tiny_png())
    );
    assert_eq!(
        (reference["width"].clone(), reference["height"].clone()),
        (json!(2), json!(3))
    );
    assert_eq!(reference["source"], "file:shot.png");
    assert!(reference["expires_at"].as_str().unwrap().ends_with('Z'));
    let sha = reference["sha256"].as_str().unwrap();
    assert_eq!(
        std::fs::read(dir.join(".ael/files").join(sha)).unwrap(),
        tiny_png()
    );

    // A prepared file records the step and the file it came from, by reference and SHA-256;
    // the source is checked as for any use (another tenant's file is refused).
    std::fs::write(dir.join("caption.txt"), "a tiny picture").unwrap();
    let from = reference["ref"].as_str().unwrap();
    let prepared = aelc(
        &[
            "files",
            "put",
            "caption.txt",
            "--tenant",
            "acme",
            "--prepared-from",
            from,
            "--step",
            "caption",
        ],
        &dir,
    );
    assert_eq!(
        prepared.status.code(),
        Some(0),
        "{}",
        text(&prepared.stderr)
    );
    let prepared: Value = serde_json::from_slice(&prepared.stdout).unwrap();
    assert_eq!(
        prepared["source"],
        format!(
            "prepared:caption:{from}@sha256:{sha}",
            sha = reference["sha256"].as_str().unwrap()
        )
    );
    let id = prepared["ref"]
        .as_str()
        .unwrap()
        .trim_start_matches("holon://files/");
    let record = std::fs::read_to_string(dir.join(format!(".ael/files/refs/{id}.json"))).unwrap();
    assert!(record.contains(r#""step": "caption""#), "{record}");
    let foreign = aelc(
        &[
            "files",
            "put",
            "caption.txt",
            "--prepared-from",
            from,
            "--step",
            "caption",
        ],
        &dir,
    );
    assert_eq!(foreign.status.code(), Some(2));
    assert!(
        text(&foreign.stderr).contains("no such file for tenant `local`"),
        "{}",
        text(&foreign.stderr)
    );

    let bad = aelc(&["files", "put", "shot.png", "--expires", "soon"], &dir);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("--expires `soon`"));
    let missing = aelc(&["files", "put", "nope.png"], &dir);
    assert_eq!(missing.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// End to end: `aelc files put`, then `aelc run` against an OpenAI-compatible server, which
/// receives the image inline (a `data:` URL), never the `holon://` reference; a reference to a
/// file the store lacks is refused naming `ref`, before any request.
#[test]
fn a_stored_file_reaches_the_provider_inline() {
    let server = Server::start(vec![openai_stream(r#"{"text": "a tiny picture"}"#)]);
    let dir = scratch("media-e2e");
    let toml = format!(
        "[package]\nname = \"acme/caption\"\nversion = \"0.1.0\"\n\n[bindings.m]\nprovider = \"openai\"\nmodel = \"local-model\"\nbase_url = \"{}\"\napi_key_env = \"{KEY_VAR}\"\naccepts = [\"text\", \"image\"]\n",
        server.url("/v1")
    );
    std::fs::write(dir.join("ael.toml"), toml).unwrap();
    std::fs::create_dir_all(dir.join("nodes")).unwrap();
    std::fs::write(dir.join("nodes/caption.node.ael"), PHOTO_SOURCE).unwrap();
    std::fs::write(dir.join("shot.png"), tiny_png()).unwrap();
    let put = aelc(&["files", "put", "shot.png"], &dir);
    assert_eq!(put.status.code(), Some(0), "{}", text(&put.stderr));
    let reference = text(&put.stdout);

    let mut missing: Value = serde_json::from_str(&reference).unwrap();
    missing["ref"] = json!("holon://files/0000nothing");
    std::fs::write(
        dir.join("missing.json"),
        json!({ "photo": missing }).to_string(),
    )
    .unwrap();
    let refused = aelc(&["run", "caption", "--input", "missing.json"], &dir);
    assert_eq!(refused.status.code(), Some(1));
    let err = text(&refused.stderr);
    assert!(err.contains("(`ref`): no such file"), "{err}");
    assert!(server.requests().is_empty());

    std::fs::write(
        dir.join("input.json"),
        format!(r#"{{"photo": {}}}"#, reference.trim()),
    )
    .unwrap();
    let out = aelc(&["run", "caption", "--input", "input.json"], &dir);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let (requests, _) = server.finish();
    let body = requests[0].body.to_string();
    assert!(body.contains("data:image/png;base64,iVBORw0KGgo"), "{body}");
    assert!(!body.contains("holon://"), "{body}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Under `on_full: pause` a recorded stream's producer (the file) stops when the buffer is
/// full: the node runs on what is buffered, which makes room, and reading goes on; nothing is
/// dropped.
#[test]
fn a_paused_stream_runs_the_node_each_time_the_buffer_fills() {
    let dir = scratch("stream-pause");
    let root = sensors();
    let source = std::fs::read_to_string(root.join("nodes/sensors.node.ael"))
        .unwrap()
        .replace("on_full: drop_oldest;", "on_full: pause;")
        .replace("buffer: 4KiB;", "buffer: 128B;")
        .replace("chunk: 256B;", "chunk: 64B;");
    std::fs::create_dir_all(dir.join("nodes")).unwrap();
    std::fs::write(dir.join("nodes/sensors.node.ael"), source).unwrap();
    for file in ["ael.toml", "prompts/fuse.md", "sessions/readings.jsonl"] {
        std::fs::create_dir_all(dir.join(file).parent().unwrap()).unwrap();
        std::fs::copy(root.join(file), dir.join(file)).unwrap();
    }
    let out = aelc(
        &["run", "monitor", "--session", "sessions/readings.jsonl"],
        &dir,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Each chunk's value is 35 bytes: three fit in 128.
    let outputs: Vec<String> = text(&out.stdout)
        .lines()
        .filter(|l| !l.contains("\"receipt\""))
        .map(str::to_owned)
        .collect();
    assert_eq!(
        outputs,
        [
            r#"{"readings":3,"hot":1,"level":"warm"}"#,
            r#"{"readings":3,"hot":2,"level":"hot"}"#
        ]
    );
    let err = text(&out.stderr);
    assert!(err.contains("0 dropped oldest, 0 dropped newest"), "{err}");
    assert!(err.contains("1 pauses"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A stream beside another input (`above(readings: Readings, limit: Limit)`): every line names
/// its input, the stream's envelopes go to its buffer, the other input's observations are
/// kept, and the node runs on the chunks with the latest limit; a run without a limit, or
/// with one older than its `fresh` bound, is refused; a line naming no input is an error
/// naming `input`.
#[test]
fn a_stream_beside_another_input_names_each_line() {
    let dir = scratch("stream-mixed");
    let root = sensors();
    let mut source = std::fs::read_to_string(root.join("nodes/sensors.node.ael")).unwrap();
    source.push_str(
        r#"
/// A threshold.
struct Limit {
    /// Tenths of a degree.
    tenths: i32<-500..=1500>,
}

/// Counts the readings above a limit given beside the stream.
node above(readings: Readings, limit: Limit) -> Alert {
    inputs {
        combine: latest;
        fresh: limit 1s;
    }
    return Alert {
        readings: readings.len(),
        hot: readings.count(|r| r.tenths > limit.tenths),
        level: normal,
    };
}
"#,
    );
    std::fs::create_dir_all(dir.join("nodes")).unwrap();
    std::fs::write(dir.join("nodes/sensors.node.ael"), source).unwrap();
    for file in ["ael.toml", "prompts/fuse.md"] {
        std::fs::create_dir_all(dir.join(file).parent().unwrap()).unwrap();
        std::fs::copy(root.join(file), dir.join(file)).unwrap();
    }
    let reading = |seq: u32, ms: u32, tenths: i32| {
        format!(
            r#"{{"input": "readings", "seq": {seq}, "at": "2026-12-02T14:00:00.{ms:03}Z", "value": {{"sensor": "s", "tenths": {tenths}}}}}"#
        )
    };
    let limit = |ms: u32, tenths: i32| {
        format!(
            r#"{{"input": "limit", "at": "2026-12-02T14:00:00.{ms:03}Z", "value": {{"tenths": {tenths}}}}}"#
        )
    };
    let end = r#"{"input": "readings", "end": "complete"}"#;
    let cases: [(&str, Vec<String>, i32, &str); 3] = [
        (
            "ok",
            vec![
                limit(0, 500),
                reading(1, 100, 400),
                reading(2, 200, 600),
                reading(3, 300, 700),
                end.to_owned(),
            ],
            0,
            r#"{"readings":3,"hot":2,"level":"normal"}"#,
        ),
        (
            "missing",
            vec![reading(1, 100, 400), end.to_owned()],
            1,
            r#""code":"missing_input""#,
        ),
        (
            "nameless",
            vec![
                limit(0, 500),
                r#"{"seq": 1, "at": "2026-12-02T14:00:00.100Z", "value": {"sensor": "s", "tenths": 1}}"#.to_owned(),
            ],
            1,
            "line 2: `input`",
        ),
    ];
    for (name, lines, code, want) in cases {
        let file = dir.join(format!("{name}.jsonl"));
        std::fs::write(&file, lines.join("\n") + "\n").unwrap();
        let out = aelc(&["run", "above", "--session", file.to_str().unwrap()], &dir);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{name}: {}",
            text(&out.stderr)
        );
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(all.contains(want), "{name}: {all}");
    }
    // A limit older than its 1 s bound when the stream ends: `stale_input`, never combined.
    let file = dir.join("stale.jsonl");
    let stale = [
        limit(0, 500),
        r#"{"input": "readings", "seq": 1, "at": "2026-12-02T14:00:02.000Z", "value": {"sensor": "s", "tenths": 900}}"#.to_owned(),
        end.to_owned(),
    ];
    std::fs::write(&file, stale.join("\n") + "\n").unwrap();
    let out = aelc(&["run", "above", "--session", file.to_str().unwrap()], &dir);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains(r#""code":"stale_input""#),
        "{}",
        text(&out.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
