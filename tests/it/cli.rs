//! The real `aelc` binary on `validate` and `test`: exit codes 0/1/2, error pointers, JSON
//! output, and replays of the seven steps (truncated, fenced, prose, extra fields, failing
//! checks, a repair that succeeds, budget exhaustion, a node body) through example files.
//!
//! The fixture project is `tests/cli_fixtures/pick`; tests that need failing examples copy it
//! into a temporary folder and add files there.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::scratch::Scratch;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli_fixtures/pick")
}

fn aelc(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_aelc"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap_or_else(|e| panic!("cannot run aelc: {e}"))
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The JSON documents among the lines of the command's stdout (`--message-format json`).
fn json_lines(o: &Output) -> Vec<serde_json::Value> {
    stdout(o)
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A copy of the fixture project in a scratch folder, removed when the test ends.
fn copy_fixture(name: &str) -> Scratch {
    let dest = Scratch::new("aelc-cli", name);
    copy_dir(&fixture(), &dest);
    dest
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    for entry in std::fs::read_dir(from).into_iter().flatten().flatten() {
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            if entry.file_name() != "target" {
                copy_dir(&path, &target);
            }
        } else {
            std::fs::copy(&path, &target).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
}

fn write(dir: &Path, relative: &str, text: &str) -> PathBuf {
    let path = dir.join(relative);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
    }
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path
}

/// The closing line of `aelc test`.
fn summary(o: &Output) -> String {
    stdout(o).lines().last().unwrap_or_default().to_owned()
}

// ---------------------------------------------------------------- validate

#[test]
fn validate_accepts_a_valid_input_and_output() {
    let dir = copy_fixture("validate-ok");
    write(&dir, "in.json", r#"{"text": "tea", "limit": 2.0}"#);
    let o = aelc(&["validate", "pick", "--input", "in.json"], &dir);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    write(
        &dir,
        "out.json",
        r#"{"items": [{"name": "tea", "level": "low"}], "note": null}"#,
    );
    let o = aelc(&["validate", "pick", "--output", "out.json"], &dir);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn validate_reports_every_error_with_pointer_path_and_code() {
    let dir = copy_fixture("validate-bad");
    write(
        &dir,
        "in.json",
        r#"{"text": "this text is far longer than one hundred characters, which is the bound that the request type declares for it", "limit": 9, "colour": "red", "limit": 1}"#,
    );
    let o = aelc(&["validate", "pick", "--input", "in.json"], &dir);
    assert_eq!(code(&o), 1);
    let err = stderr(&o);
    for needle in [
        "error[too_long]: request.text: text has 109 characters, at most 100 are allowed (too_long)",
        "--> in.json at /text",
        "error[out_of_range]: request.limit:",
        "error[unknown_field]: request.colour:",
        "--> in.json at /colour",
        "error[duplicate_key]: request.limit:",
        "4 error(s)",
    ] {
        assert!(err.contains(needle), "missing {needle:?} in\n{err}");
    }
    // In document order.
    let at = |s: &str| err.find(s).unwrap_or(usize::MAX);
    assert!(at("/text") < at("/colour"));

    let o = aelc(
        &[
            "--message-format",
            "json",
            "validate",
            "pick",
            "--input",
            "in.json",
        ],
        &dir,
    );
    assert_eq!(code(&o), 1);
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 4, "{}", stdout(&o));
    let first = &lines[0];
    assert_eq!(first["pointer"], "/text");
    assert_eq!(first["path"], "request.text");
    assert_eq!(first["code"], "too_long");
    assert_eq!(first["file"], "in.json");
    assert_eq!(first["severity"], "error");
    let codes: Vec<&str> = lines.iter().filter_map(|l| l["code"].as_str()).collect();
    assert_eq!(
        codes,
        ["too_long", "out_of_range", "unknown_field", "duplicate_key"]
    );
}

#[test]
fn validate_output_rejects_extra_fields_and_bad_text() {
    let dir = copy_fixture("validate-out");
    write(
        &dir,
        "out.json",
        r#"{"items": [{"name": "tea", "level": "medium", "why": 1}], "note": "\ud800"}"#,
    );
    let o = aelc(&["validate", "pick", "--output", "out.json"], &dir);
    assert_eq!(code(&o), 1);
    let err = stderr(&o);
    assert!(
        err.contains("error[unknown_variant]: output.items[0].level:"),
        "{err}"
    );
    assert!(
        err.contains("error[unknown_field]: output.items[0].why:"),
        "{err}"
    );
    assert!(err.contains("error[invalid_text]: output.note:"), "{err}");
    assert!(err.contains("at /items/0/why"), "{err}");
}

#[test]
fn validate_refuses_deep_and_huge_payloads_without_crashing() {
    let dir = copy_fixture("validate-deep");
    write(&dir, "deep.json", &"[".repeat(500_000));
    let o = aelc(&["validate", "pick", "--output", "deep.json"], &dir);
    assert_eq!(code(&o), 1);
    // The output of `pick` is bounded by max_answer, far below 500 KB: `too_large` first.
    assert!(stderr(&o).contains("(too_large)"), "{}", stderr(&o));
    // The input bound (max_input_bytes = 4096) is checked before anything else.
    write(
        &dir,
        "big.json",
        &format!("{{\"text\": \"{}\"}}", "a".repeat(5000)),
    );
    let o = aelc(&["validate", "pick", "--input", "big.json"], &dir);
    assert_eq!(code(&o), 1);
    assert!(stderr(&o).contains("(too_large)"), "{}", stderr(&o));
}

#[test]
fn validate_usage_and_io_errors_exit_2() {
    let dir = copy_fixture("validate-usage");
    let o = aelc(&["validate", "pick", "--input", "missing.json"], &dir);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("cannot read missing.json"),
        "{}",
        stderr(&o)
    );
    write(&dir, "in.json", "{}");
    let o = aelc(&["validate", "pik", "--input", "in.json"], &dir);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("did you mean `pick`"), "{}", stderr(&o));
    let o = aelc(&["validate", "pick"], &dir);
    assert_eq!(code(&o), 2, "neither --input nor --output");
    let o = aelc(
        &[
            "validate", "pick", "--input", "in.json", "--output", "in.json",
        ],
        &dir,
    );
    assert_eq!(code(&o), 2, "both --input and --output");
    let o = aelc(
        &["validate", "pick", "--input", "in.json"],
        &std::env::temp_dir(),
    );
    assert_eq!(code(&o), 2, "no project: {}", stderr(&o));
}

// ---------------------------------------------------------------- test

#[test]
fn test_passes_the_fixture_examples() {
    let o = aelc(&["test"], &fixture());
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}\n{}", stderr(&o));
    for name in [
        "ok    examples/pick/clean.json",
        // Step 1: the first answer was cut off: never complete, even though it parses.
        "ok    examples/pick/truncated.json",
        // Step 2: one fenced value is accepted; trailing prose is not.
        "ok    examples/pick/fenced.json",
        "ok    examples/pick/prose.json",
        // Step 3: an extra field, twice, ends in the declared failure.
        "ok    examples/pick/extra_field.json",
        // Step 4 then 7: a failing check, then a repair that succeeds on the second attempt.
        "ok    examples/pick/repaired.json",
        "ok    examples/pick/blank.json",
        "ok    examples/pick/refused.json",
        "ok    examples/pick_body/clean.json",
        "ok    examples/pick_budget/exhausted.json",
    ] {
        assert!(out.contains(name), "missing {name:?} in\n{out}");
    }
    assert_eq!(summary(&o), "10 passed, 0 failed");
}

#[test]
fn test_reports_failures_and_exits_1() {
    let dir = copy_fixture("test-bad");
    let good = r#"{\"items\": [{\"name\": \"tea\", \"level\": \"low\"}]}"#;
    // A wrong expectation: the transform orders, but the check passes; the output differs.
    write(
        &dir,
        "examples/pick/wrong_output.json",
        &format!(
            r#"{{"input": {{"text": "t", "limit": 2}}, "answers": ["{good}"], "output": {{"items": [{{"name": "tee", "level": "low"}}]}}}}"#
        ),
    );
    // An input that does not validate: the exact pointer.
    write(
        &dir,
        "examples/pick/bad_input.json",
        &format!(
            r#"{{"input": {{"text": "t", "limit": 7}}, "answers": ["{good}"], "output": {{"items": []}}}}"#
        ),
    );
    // An expected output that does not validate.
    write(
        &dir,
        "examples/pick/bad_output.json",
        &format!(
            r#"{{"input": {{"text": "t"}}, "answers": ["{good}"], "output": {{"items": [{{"name": "tea", "level": "low", "x": 1}}]}}}}"#
        ),
    );
    // An answer too many.
    write(
        &dir,
        "examples/pick/unused.json",
        &format!(
            r#"{{"input": {{"text": "t"}}, "answers": ["{good}", "{good}"], "output": {{"items": [{{"name": "tea", "level": "low"}}]}}}}"#
        ),
    );
    // The wrong failure: a truncated answer and no good one is `too_many` (the final fail),
    // never a success.
    write(
        &dir,
        "examples/pick/wrong_status.json",
        &format!(
            r#"{{"input": {{"text": "t"}}, "answers": [{{"text": "{good}", "finish_reason": "length"}}, {{"text": "{good}", "finish_reason": "incomplete"}}], "status": "invalid_output"}}"#
        ),
    );
    write(&dir, "examples/pick/not_an_example.json", r#"{"input": 1}"#);
    let o = aelc(&["test"], &dir);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert_eq!(summary(&o), "10 passed, 6 failed", "{out}");
    for needle in [
        "FAIL  examples/pick/wrong_output.json",
        "the output differs",
        r#"expected {"items":[{"name":"tee","level":"low"}]}"#,
        "FAIL  examples/pick/bad_input.json",
        "the input at `/limit` does not match the input schema: request.limit:",
        "FAIL  examples/pick/bad_output.json",
        "the output at `/items/0/x` does not match the output schema",
        "FAIL  examples/pick/unused.json",
        "1 of 2 answers were not used",
        "FAIL  examples/pick/wrong_status.json",
        "expected invalid_output, got failed (too_many)",
        "step 1: the answer was cut off",
        "FAIL  examples/pick/not_an_example.json",
        "neither `output` nor `status`",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }

    // The same run as JSON Lines: one object per example, then the totals; nothing else on
    // stdout, so a CI tool can read it line by line.
    let o = aelc(&["test", "--message-format", "json"], &dir);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 17, "{lines:#?}");
    assert_eq!(lines[16], serde_json::json!({"passed": 10, "failed": 6}));
    let wrong = lines
        .iter()
        .find(|l| l["example"] == "examples/pick/wrong_output.json")
        .expect("a line for wrong_output.json");
    assert_eq!(wrong["agent"], "pick");
    assert_eq!(wrong["passed"], false);
    assert!(
        wrong["problems"][0]
            .as_str()
            .is_some_and(|p| p.contains("the output differs")),
        "{wrong}"
    );
}

/// `aelc test` runs node bodies through the one executor: the seed's form after a `let` is
/// the model call; an extern fn that is not the model call is Rust `aelc test` does not have,
/// and the example says which, before anything runs.
#[test]
fn test_runs_bodies_and_names_the_extern_it_lacks() {
    let dir = copy_fixture("test-body");
    write(
        &dir,
        "nodes/odd.node.ael",
        r#"use nodes::pick::{Request, Answer, write_pick};

/// A body that computes before calling the extern fn that stands for the model call.
agent odd(request: Request) -> Answer {
    config {
        prompt: file("prompts/pick.md");
        model: binding("primary_model");
    }
    publish {
        capability: "fixture.odd";
        price: 0.01 EUR;
        examples: "examples/odd/*.json";
    }
    let r = request;
    return write_pick(r);
}

/// Rust that tidies an answer.
extern fn tidy(answer: Answer) -> Answer;

/// A body that hands the model's answer to Rust.
agent tidied(request: Request) -> Answer {
    config {
        prompt: file("prompts/pick.md");
        model: binding("primary_model");
    }
    publish {
        capability: "fixture.tidied";
        price: 0.01 EUR;
        examples: "examples/tidied/*.json";
    }
    return tidy(write_pick(request));
}
"#,
    );
    write(
        &dir,
        "examples/odd/one.json",
        r#"{"input": {"text": "t"}, "answers": ["{\"items\": []}"], "output": {"items": []}}"#,
    );
    write(
        &dir,
        "examples/tidied/one.json",
        r#"{"input": {"text": "t"}, "answers": ["{\"items\": []}"], "output": {"items": []}}"#,
    );
    let o = aelc(&["test"], &dir);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}\n{}", stderr(&o));
    assert!(out.contains("ok    examples/odd/one.json"), "{out}");
    assert!(out.contains("FAIL  examples/tidied/one.json"), "{out}");
    assert!(
        out.contains("cannot replay: node `tidied` cannot run here: it needs extern fn `tidy` (called by `tidied`)"),
        "{out}"
    );
}

#[test]
fn test_on_a_folder_without_a_project_exits_2() {
    let o = aelc(&["test", "."], &std::env::temp_dir());
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}

// ---------------------------------------------------------------- the runner, as a library

mod runner {
    use super::fixture;
    use aelc::driver::run::schemas;
    use aelc::driver::{self, DiskWorld};
    use aelc::ir::Program;
    use aelc_runtime::exec::{Env, Executor, Externs, Run};
    use aelc_runtime::model::{FinishReason, ModelAnswer, ReplayModel, Usage};
    use aelc_runtime::pipeline::{Status, TickClock};
    use aelc_runtime::receipt::CountingIds;

    fn answer(text: &str) -> ModelAnswer {
        ModelAnswer {
            text: text.to_owned(),
            finish_reason: FinishReason::Stop,
            usage: Usage {
                input_tokens: 1_000,
                output_tokens: 500,
            },
        }
    }

    fn program() -> Program {
        let compilation = driver::check_path(&DiskWorld, &fixture()).unwrap();
        let codes: Vec<&str> = compilation.diagnostics.iter().map(|d| d.code).collect();
        assert!(codes.is_empty(), "{codes:?}");
        compilation.program.unwrap()
    }

    /// Runs `name` on `input` through the one executor, with `model` answering.
    fn run(program: &Program, name: &str, input: &[u8], model: &mut ReplayModel) -> Run {
        let exec = Executor::new(program, schemas(program));
        let node = aelc::driver::project::find_node(program, name).unwrap();
        let id = aelc::driver::run::node_id(program, node);
        let mut env = Env {
            model,
            clock: &mut TickClock::default(),
            ids: &mut CountingIds::default(),
            externs: &mut Externs::new(),
            check_accepts: false,
            media: None,
        };
        exec.run(id, input, &mut env).unwrap()
    }

    const GOOD: &str = r#"{"items": [{"name": "tea", "level": "low"}]}"#;

    #[test]
    fn a_refused_input_calls_nothing_and_bills_nothing() {
        let program = program();
        for input in [
            &br#"{"text": "t", "colour": 1}"#[..], // rejected_input
            &br#"{"text": " "}"#[..],              // input check `not_blank`
        ] {
            let mut model = ReplayModel::new([answer(GOOD)]);
            let run = run(&program, "pick", input, &mut model);
            assert!(model.requests.is_empty(), "no model call");
            assert!(run.outcome.attempts.is_empty());
            assert_eq!(run.receipt.cost.amount, "0");
            assert_eq!(run.receipt.spent.amount, "0");
            assert_eq!(run.receipt.reserved.amount, "0");
            assert!(run.outcome.output.is_none() && run.receipt.output_sha256.is_none());
        }
        let mut model = ReplayModel::new([]);
        let refused = run(
            &program,
            "pick",
            br#"{"text": "t", "colour": 1}"#,
            &mut model,
        );
        assert_eq!(refused.outcome.status, Status::RejectedInput);
        assert_eq!(refused.receipt.code.as_deref(), Some("invalid_input"));
        assert_eq!(
            refused.input_errors.first().map(|e| e.pointer.as_str()),
            Some("/colour")
        );
        let blank = run(&program, "pick", br#"{"text": " "}"#, &mut model);
        assert_eq!(blank.outcome.status, Status::Failed);
        assert_eq!(blank.outcome.code.as_deref(), Some("blank"));
        assert!(
            blank
                .refusal
                .as_deref()
                .is_some_and(|r| r.contains("not_blank")),
            "{:?}",
            blank.refusal
        );
    }

    #[test]
    fn a_rejected_answer_never_becomes_the_output() {
        let program = program();
        // Decodes, but fails `within` (limit 1) twice: the value is never the output.
        let two = r#"{"items": [{"name": "a", "level": "low"}, {"name": "b", "level": "low"}]}"#;
        let mut model = ReplayModel::new([answer(two), answer(two)]);
        let run = run(
            &program,
            "pick",
            br#"{"text": "t", "limit": 1}"#,
            &mut model,
        );
        assert_eq!(run.outcome.status, Status::Failed);
        assert_eq!(run.outcome.code.as_deref(), Some("too_many"));
        assert!(run.outcome.output.is_none() && run.outcome.output_json.is_none());
        assert!(run.receipt.output_sha256.is_none());
        // Free for the caller, whatever the calls cost.
        assert_eq!(run.receipt.cost.amount, "0");
        assert_eq!(run.receipt.status, Status::Failed);
        let steps: Vec<u8> = run
            .outcome
            .attempts
            .iter()
            .filter_map(|a| a.rejected.as_ref().map(|r| r.step))
            .collect();
        assert_eq!(steps, [4, 4]);
        // The repair carried the reasons of the first attempt.
        assert!(model.requests.get(1).is_some_and(|r| !r.repair.is_empty()));
    }

    #[test]
    fn the_seed_body_runs_its_extern_as_the_model_call() {
        let program = program();
        let node = |name: &str| program.nodes.iter().find(|n| n.name == name).unwrap();
        let write_pick = program.fns.iter().position(|f| f.name == "write_pick");
        assert_eq!(
            node("pick_body").model_call.map(|f| f.0 as usize),
            write_pick,
            "sema classifies the seed's form"
        );
        assert_eq!(node("pick").model_call, None);
        let mut model = ReplayModel::new([answer(GOOD)]);
        let run = run(&program, "pick_body", br#"{"text": "t"}"#, &mut model);
        assert_eq!(run.outcome.status, Status::Succeeded, "{:?}", run.refusal);
        assert_eq!(model.requests.len(), 1);
        assert_eq!(model.requests[0].node, "pick_body");
        assert_eq!(run.receipt.attempts.len(), 1);
    }
}

// ---------------------------------------------------------------- closed output

/// `aelc … | head -1`: the reader is gone before aelc writes (`true` exits at once, aelc first
/// reads and checks a project), so every write fails with a broken pipe. The lost output is no
/// reason to panic, which `println!` would do (exit code 101).
#[test]
fn a_closed_stdout_is_not_a_panic() {
    let dir = copy_fixture("closed-stdout");
    write(&dir, "nodes/ugly.node.ael", "struct   Ugly{a:u8}\n");
    let with_stdout_closed = |args: &str| {
        Command::new("bash")
            .arg("-c")
            .arg(format!("\"$AELC\" {args} | true; exit ${{PIPESTATUS[0]}}"))
            .env("AELC", env!("CARGO_BIN_EXE_aelc"))
            .env("NO_COLOR", "1")
            .current_dir(&dir)
            .output()
            .unwrap_or_else(|e| panic!("cannot run sh: {e}"))
    };
    for (args, expected) in [
        ("fmt --check", 1),
        ("explain E0101", 0),
        ("check --message-format json", 0),
        ("schema --help", 0),
    ] {
        let o = with_stdout_closed(args);
        assert!(
            !stderr(&o).contains("panicked"),
            "aelc {args}: {}",
            stderr(&o)
        );
        assert_eq!(code(&o), expected, "aelc {args}: {}", stderr(&o));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `aelc check` names files as paths from where it runs (spec §11, "path as given"), and a
/// folder or file inside a project is checked in that project (found upwards), so its imports
/// and prompt files resolve.
#[test]
fn check_names_files_from_where_it_runs_and_finds_the_project_upwards() {
    let dir = copy_fixture("check-paths");
    let parent = dir.parent().unwrap_or(&dir).to_path_buf();
    let project = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    write(&dir, "nodes/broken.ael", "struct Broken { a: Nope }\n");
    let file_of = |o: &Output| -> Vec<String> {
        json_lines(o)
            .iter()
            .filter_map(|d| d["file"].as_str().map(str::to_owned))
            .collect()
    };
    fn with(extra: &str) -> Vec<&str> {
        let mut args = vec!["--message-format", "json", "check"];
        if !extra.is_empty() {
            args.push(extra);
        }
        args
    }

    let given = aelc(&with(&project), &parent);
    assert_eq!(code(&given), 1, "{}", stderr(&given));
    assert_eq!(file_of(&given), [format!("{project}/nodes/broken.ael")]);

    let here = aelc(&with(""), &dir);
    assert_eq!(file_of(&here), ["nodes/broken.ael"]);

    // From a subfolder: the project above is checked, not the folder's files alone (which
    // would report the prompt files of the fixture's nodes as missing).
    let nodes = dir.join("nodes");
    let below = aelc(&with(""), &nodes);
    assert_eq!(code(&below), 1, "{}", stderr(&below));
    assert_eq!(file_of(&below), ["broken.ael"]);

    // One file of a project: checked in the project, only its diagnostics reported.
    let one = aelc(&with("broken.ael"), &nodes);
    assert_eq!(file_of(&one), ["broken.ael"]);
    let clean_file = std::fs::read_dir(&nodes)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|name| name != "broken.ael" && name.ends_with(".ael"))
        .unwrap_or_default();
    let clean = aelc(&with(&clean_file), &nodes);
    assert_eq!(code(&clean), 0, "{clean_file}: {}", stdout(&clean));
    assert!(file_of(&clean).is_empty(), "{}", stdout(&clean));

    let missing = aelc(&with("no-such-folder"), &nodes);
    assert_eq!(code(&missing), 2);
    assert!(
        stderr(&missing).contains("no-such-folder"),
        "{}",
        stderr(&missing)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `aelc check` reports the publishing rules `aelc build` refuses to emit with (one driver
/// function for both, and for the language server): an example whose input or output breaks
/// its schema is E0805/E0806 in both, exit 1, located in the example file at the offending
/// value, in JSON as in text.
#[test]
fn check_reports_the_examples_build_refuses_at_their_place() {
    let dir = copy_fixture("check-publish");
    write(
        &dir,
        "examples/pick/wrong.json",
        "{\n  \"input\": {\"text\": \"t\", \"limit\": 9},\n  \"answers\": [],\n  \"output\": {\"items\": [{\"name\": \"tea\", \"level\": \"mid\"}]}\n}\n",
    );
    let places = |o: &Output| -> Vec<String> {
        json_lines(o)
            .into_iter()
            .filter(|d| d["code"].as_str().is_some_and(|c| c.starts_with("E08")))
            .map(|d| format!("{} {}:{}:{}", d["code"], d["file"], d["line"], d["column"]))
            .collect()
    };
    let check = aelc(&["--message-format", "json", "check"], &dir);
    assert_eq!(code(&check), 1, "{}", stdout(&check));
    let expected = [
        r#""E0805" "examples/pick/wrong.json":2:35"#,
        r#""E0806" "examples/pick/wrong.json":4:49"#,
    ];
    assert_eq!(places(&check), expected, "{}", stdout(&check));
    let build = aelc(&["--message-format", "json", "build"], &dir);
    assert_eq!(code(&build), 1, "{}", stdout(&build));
    assert_eq!(places(&build), expected, "{}", stdout(&build));
    assert!(
        !dir.join("target/ael").exists(),
        "a refused build writes nothing"
    );
    // People read the same place.
    let text = aelc(&["check"], &dir);
    assert_eq!(code(&text), 1);
    assert!(
        stderr(&text).contains("examples/pick/wrong.json:4:49")
            || stdout(&text).contains("examples/pick/wrong.json:4:49"),
        "{}{}",
        stdout(&text),
        stderr(&text)
    );
    // Fixed, it checks and builds clean.
    write(
        &dir,
        "examples/pick/wrong.json",
        r#"{"input": {"text": "t"}, "answers": ["{\"items\": []}"], "output": {"items": []}}"#,
    );
    assert_eq!(code(&aelc(&["check"], &dir)), 0);
    assert_eq!(code(&aelc(&["build"], &dir)), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `aelc fmt --check` without paths covers the whole project the current folder belongs to,
/// and names files from where it runs.
#[test]
fn fmt_without_paths_covers_the_project_from_a_subfolder() {
    let dir = copy_fixture("fmt-paths");
    write(&dir, "nodes/ugly.ael", "struct   Ugly {a:u8}\n");
    write(&dir, "types/also.ael", "struct   Also {b:u8}\n");
    // The two files written here (the fixture's own formatting is not what this is about).
    let listed = |o: &Output| -> Vec<String> {
        let mut lines: Vec<String> = stdout(o)
            .lines()
            .filter(|l| l.contains("ugly") || l.contains("also"))
            .map(str::to_owned)
            .collect();
        lines.sort();
        lines
    };
    let below = aelc(&["fmt", "--check"], &dir.join("nodes"));
    assert_eq!(code(&below), 1, "{}", stderr(&below));
    assert_eq!(
        listed(&below),
        [
            "would reformat ../types/also.ael",
            "would reformat ugly.ael"
        ]
    );
    let here = aelc(&["fmt", "--check"], &dir);
    assert_eq!(
        listed(&here),
        [
            "would reformat nodes/ugly.ael",
            "would reformat types/also.ael"
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------- issue 25: hardening

/// A copy of the fixture that `aelc build` accepts (its refused example is for `aelc test`,
/// and publishing refuses it), built once.
fn built_fixture(name: &str) -> Scratch {
    let dir = copy_fixture(name);
    let _ = std::fs::remove_file(dir.join("examples/pick/refused.json"));
    let o = aelc(&["build"], &dir);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    dir
}

/// Finding B: a folder of `target/ael/` that is a symbolic link to a folder elsewhere is never
/// written through, and nothing is deleted there; the build refuses, naming the link (exit 2).
#[cfg(unix)]
#[test]
fn build_refuses_to_write_through_a_symlinked_output_folder() {
    let dir = built_fixture("build-symlink");
    let outside = dir.with_file_name(format!(
        "{}-outside",
        dir.file_name().unwrap_or_default().to_string_lossy()
    ));
    let _ = std::fs::remove_dir_all(&outside);
    write(&outside, "foreign.txt", "not aelc's");
    let rust = dir.join("target/ael/rust");
    std::fs::remove_dir_all(&rust).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(&outside, &rust).unwrap_or_else(|e| panic!("{e}"));
    for args in [&["build"][..], &["build", "--check"]] {
        let o = aelc(args, &dir);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("target/ael/rust is a symbolic link"),
            "{}",
            stderr(&o)
        );
    }
    let names: Vec<String> = std::fs::read_dir(&outside)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["foreign.txt"], "nothing written or deleted there");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&outside);
}

/// Finding B: a build deletes a file it wrote before and no longer produces, and keeps a file
/// it did not write, even in a folder it writes in; finding L: a temporary file an interrupted
/// build left is deleted by the next build.
#[test]
fn build_deletes_only_files_it_wrote() {
    let dir = built_fixture("build-stale");
    let out = dir.join("target/ael");
    let manifest = std::fs::read_to_string(out.join(".aelc-manifest")).unwrap_or_default();
    assert!(
        manifest.lines().any(|l| l == "schemas/pick.input.json"),
        "{manifest}"
    );
    // A node the last build wrote and this one does not: listed, so deleted.
    write(&out, "schemas/gone.input.json", "{}");
    std::fs::write(
        out.join(".aelc-manifest"),
        format!("{manifest}schemas/gone.input.json\n"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    write(&out, "schemas/mine.json", "kept");
    write(&out, "schemas/.pick.input.json.999999.tmp", "half");
    let o = aelc(&["build", "--check"], &dir);
    assert_eq!(code(&o), 1);
    assert!(
        stderr(&o).contains("schemas/gone.input.json (no longer produced)"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("mine.json"), "{}", stderr(&o));
    let o = aelc(&["build"], &dir);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("1 removed"), "{}", stderr(&o));
    assert!(!out.join("schemas/gone.input.json").exists());
    assert!(!out.join("schemas/.pick.input.json.999999.tmp").exists());
    assert_eq!(
        std::fs::read_to_string(out.join("schemas/mine.json"))
            .ok()
            .as_deref(),
        Some("kept")
    );
    assert_eq!(
        std::fs::read_to_string(out.join(".aelc-manifest")).ok(),
        Some(manifest)
    );
    // A manifest that names a path outside the output folder is refused, not followed.
    write(&out, ".aelc-manifest", "../ael.toml\n");
    let o = aelc(&["build"], &dir);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("line 1: `../ael.toml`"),
        "{}",
        stderr(&o)
    );
    assert!(dir.join("ael.toml").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A build with nothing changed since the last clean one skips everything (issue 23), and
/// each kind of change builds again: a module, a prompt, an example, `ael.toml`, a new module,
/// a deleted or edited output file, another output folder.
#[test]
fn an_unchanged_rebuild_is_skipped_and_every_change_builds() {
    let dir = built_fixture("build-stamp");
    let out = dir.join("target/ael");
    let skipped = |dir: &Path| {
        let o = aelc(&["build"], dir);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        stderr(&o).starts_with("up to date: ")
    };
    // The first build created `target/`, which is no change of the project.
    assert!(skipped(&dir), "nothing changed");
    let input = out.join("schemas/pick.input.json");
    let before = std::fs::read(&input).unwrap_or_default();
    let append = |rel: &str, text: &str| {
        let path = dir.join(rel);
        let mut old = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
        old.push_str(text);
        std::fs::write(&path, old).unwrap_or_else(|e| panic!("{rel}: {e}"));
    };
    let changes: [(&str, &dyn Fn()); 7] = [
        ("a module", &|| {
            append(
                "nodes/pick.node.ael",
                "\n/// More.\nstruct Extra { x: bool }\n",
            )
        }),
        ("a prompt", &|| append("prompts/pick.md", "\nBe brief.\n")),
        ("ael.toml", &|| append("ael.toml", "\n")),
        ("an example", &|| append("examples/pick/clean.json", " ")),
        ("a new example", &|| {
            let clean = std::fs::read_to_string(dir.join("examples/pick/clean.json")).unwrap();
            write(&dir, "examples/pick/clean2.json", &clean);
        }),
        ("a new module", &|| {
            write(
                &dir,
                "nodes/more.ael",
                "/// More.\nstruct More { y: bool }\n",
            );
        }),
        ("a deleted output", &|| {
            std::fs::remove_file(&input).unwrap()
        }),
    ];
    for (what, change) in changes {
        change();
        assert!(
            !skipped(&dir),
            "{what} changed: the build must not be skipped"
        );
        assert!(
            skipped(&dir),
            "after {what}, a second build has nothing to do"
        );
    }
    assert_eq!(std::fs::read(&input).unwrap_or_default(), before, "rebuilt");
    // An output edited by hand is written again.
    write(&out, "schemas/pick.input.json", "{}");
    assert!(!skipped(&dir));
    assert_eq!(std::fs::read(&input).unwrap_or_default(), before);
    // Another output folder has no stamp yet.
    let o = aelc(&["build", "--out", "elsewhere"], &dir);
    assert!(stderr(&o).starts_with("built "), "{}", stderr(&o));
}

/// A project with warnings is up to date like any other (issue 42): the skipped build prints
/// the warnings the last build printed, byte for byte, before its summary; a change still
/// builds, and a build asked for another rendering (JSON) builds rather than replay the text.
#[test]
fn a_build_with_warnings_is_skipped_and_replays_them() {
    let dir = built_fixture("build-stamp-warnings");
    write(&dir, "nodes/unused.ael", "use nodes::pick::{Level};\n");
    // Everything before the closing line (`built …` or `up to date: …`).
    let split = |o: &std::process::Output| {
        let text = stderr(o);
        let body = text.trim_end_matches('\n');
        let cut = body.rfind('\n').map_or(0, |i| i + 1);
        (text[..cut].to_owned(), text[cut..].to_owned())
    };
    let first = aelc(&["build"], &dir);
    assert_eq!(code(&first), 0, "{}", stderr(&first));
    let (warnings, last) = split(&first);
    assert!(warnings.contains("warning[W0201]"), "{}", stderr(&first));
    assert!(last.starts_with("built "), "{}", stderr(&first));
    for _ in 0..2 {
        let again = aelc(&["build"], &dir);
        assert_eq!(code(&again), 0, "{}", stderr(&again));
        let (replayed, last) = split(&again);
        assert_eq!(replayed, warnings, "the same warnings, byte for byte");
        assert!(last.starts_with("up to date: "), "{}", stderr(&again));
    }
    // JSON diagnostics are another rendering: built (and then replayed as JSON).
    let json = aelc(&["build", "--message-format", "json"], &dir);
    assert!(stderr(&json).starts_with("built "), "{}", stderr(&json));
    assert!(stdout(&json).contains("\"W0201\""), "{}", stdout(&json));
    let json_again = aelc(&["build", "--message-format", "json"], &dir);
    assert!(
        stderr(&json_again).starts_with("up to date: "),
        "{}",
        stderr(&json_again)
    );
    assert_eq!(stdout(&json_again), stdout(&json));
    // A change builds, with its warnings.
    write(&dir, "nodes/unused.ael", "use nodes::pick::{Level};\n\n");
    let changed = aelc(&["build"], &dir);
    let (rebuilt, last) = split(&changed);
    assert_eq!(rebuilt, warnings, "{}", stderr(&changed));
    assert!(last.starts_with("built "), "{}", stderr(&changed));
}

/// Finding C: an endless input is read only up to its bound, then refused as the decoder
/// refuses a document over `max_input_bytes` (`too_large`), for every way in.
#[cfg(unix)]
#[test]
fn endless_inputs_are_refused_as_too_large() {
    let dir = copy_fixture("endless");
    let too_large = "the document has more than the 4096 bytes allowed (too_large)";
    let o = aelc(&["validate", "pick", "--input", "/dev/zero"], &dir);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains(too_large), "{}", stderr(&o));
    // The output's bound is the node's max_answer.
    let o = aelc(&["validate", "pick", "--output", "/dev/zero"], &dir);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("(too_large)"), "{}", stderr(&o));
    write(&dir, "answers.jsonl", "");
    let o = aelc(
        &[
            "run",
            "pick",
            "--input",
            "/dev/zero",
            "--replay",
            "answers.jsonl",
        ],
        &dir,
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains(too_large), "{}", stderr(&o));
    assert!(stdout(&o).contains("\"rejected_input\""), "{}", stdout(&o));
    let o = Command::new(env!("CARGO_BIN_EXE_aelc"))
        .args(["run", "pick", "--input", "-", "--replay", "answers.jsonl"])
        .current_dir(&dir)
        .stdin(std::fs::File::open("/dev/zero").unwrap_or_else(|e| panic!("{e}")))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains(too_large), "{}", stderr(&o));
    // A replay file is held to its bounds too (exit 2: the file is unusable).
    write(&dir, "in.json", r#"{"text": "tea"}"#);
    let o = aelc(
        &["run", "pick", "--input", "in.json", "--replay", "/dev/zero"],
        &dir,
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("/dev/zero: line 1 has more than"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Finding L: `aelc fmt` formats a symlinked file through the link (the link stays a link),
/// and deletes the temporary files an interrupted run left.
#[cfg(unix)]
#[test]
fn fmt_writes_through_a_symlink_and_clears_leftover_temporaries() {
    let dir = copy_fixture("fmt-symlink");
    let real = write(&dir, "shared/real.ael", "struct   Real{a:u8}\n");
    let link = dir.join("nodes/linked.ael");
    std::os::unix::fs::symlink(&real, &link).unwrap_or_else(|e| panic!("{e}"));
    let leftovers = [
        write(&dir, "nodes/.ugly.ael.aelc-fmt-999999.tmp", "half"),
        write(&dir, "shared/.real.ael.aelc-fmt-999999.tmp", "half"),
    ];
    let o = aelc(&["fmt", "nodes/linked.ael"], &dir);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let is_link = std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink());
    assert!(is_link, "the link is kept");
    let text = std::fs::read_to_string(&real).unwrap_or_default();
    assert!(text.starts_with("struct Real {"), "{text}");
    for leftover in leftovers {
        assert!(!leftover.exists(), "{} is deleted", leftover.display());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Finding L: a folder with no `.ael` file and no project is an error (exit 1), not a silent
/// pass; a project with only its `ael.toml` says so; an `ael.toml` that is a folder is named.
#[test]
fn check_says_when_there_is_nothing_to_check() {
    let dir = std::env::temp_dir().join(format!("aelc-cli-nothing-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    write(&dir, "empty/notes.txt", "no modules here");
    let o = aelc(&["check"], &dir.join("empty"));
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no .ael files in ., and no ael.toml at or above it"),
        "{}",
        stderr(&o)
    );
    write(
        &dir,
        "project/ael.toml",
        "[package]\nname = \"acme/empty\"\nversion = \"0.1.0\"\n",
    );
    let o = aelc(&["check", "project"], &dir);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the project at project has no .ael files"),
        "{}",
        stderr(&o)
    );
    std::fs::create_dir_all(dir.join("folder/ael.toml")).unwrap_or_else(|e| panic!("{e}"));
    write(&dir, "folder/a.ael", "struct A { a: u8 }\n");
    for args in [&["check"][..], &["build"]] {
        let o = aelc(args, &dir.join("folder"));
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("ael.toml is a folder; a project's ael.toml must be a file"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(!stderr(&o).contains("E0211"), "{}", stderr(&o));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The README's "Running a node" replay line works as written: the bundled request and recorded
/// answer, no network. The line is read from README.md itself (`cargo run --release --` becomes
/// this build's binary) and run from a copy of the repository's `examples/review`.
#[test]
fn the_readme_replay_line_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let line = readme
        .replace("\\\n", " ")
        .lines()
        .find(|l| l.starts_with("cargo run --release -- run ") && l.contains("--replay"))
        .expect("README.md shows a `cargo run --release -- run … --replay …` line")
        .to_owned();
    let args: Vec<&str> = line
        .trim_start_matches("cargo run --release -- ")
        .split_whitespace()
        .collect();
    let scratch = Scratch::new("aelc-cli", "readme-replay");
    copy_dir(
        &root.join("examples/review"),
        &scratch.join("examples/review"),
    );
    let out = aelc(&args, &scratch);
    assert_eq!(
        code(&out),
        0,
        "{line}\nstdout: {}\nstderr: {}",
        stdout(&out),
        stderr(&out)
    );
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 2, "the output and the receipt: {lines:?}");
    // The transform sorts the findings most severe first: the recorded answer had them the
    // other way round.
    assert_eq!(
        lines[0]["findings"][0]["severity"], "medium",
        "{}",
        lines[0]
    );
    assert_eq!(lines[1]["status"], "succeeded", "{}", lines[1]);
}

/// Codegen diagnostics made from the IR (W0801, the glue's E0850) still name the file and line
/// of the declaration they are about, so that JSON consumers (CI annotations, editors) can
/// place them.
#[test]
fn codegen_diagnostics_in_json_name_the_file_of_the_declaration() {
    let dir = Scratch::new("aelc-cli", "w0801-file");
    write(
        &dir,
        "ael.toml",
        "[package]\nname = \"acme/w\"\nversion = \"0.1.0\"\n\n[bindings.m]\nprovider = \"openai\"\nmodel = \"gpt-4o-mini\"\n",
    );
    write(&dir, "prompts/p.md", "Hi {{ q.text }}\n");
    write(
        &dir,
        "nodes/w.node.ael",
        "struct Q {\n    text: Str<100>,\n}\n\nstruct A {\n    tags: Map<Str<20>, Str<20>, 10>,\n}\n\nagent w(q: Q) -> A {\n    config {\n        prompt: file(\"prompts/p.md\");\n        model: binding(\"m\");\n    }\n}\n",
    );
    let build = aelc(&["build", "--message-format", "json"], &dir);
    assert_eq!(code(&build), 0, "{}{}", stdout(&build), stderr(&build));
    let w0801: Vec<serde_json::Value> = json_lines(&build)
        .into_iter()
        .filter(|d| d["code"] == "W0801")
        .collect();
    assert_eq!(w0801.len(), 1, "{}", stdout(&build));
    assert_eq!(w0801[0]["file"], "nodes/w.node.ael", "{}", w0801[0]);
    assert_eq!(w0801[0]["line"], 9, "{}", w0801[0]);

    // E0850 of the Rust glue (two fields meeting after case conversion) points at the struct.
    write(
        &dir,
        "types/clash.ael",
        "struct Clash {
    fooBar: u8,
    foo_bar: u8,
}
",
    );
    write(
        &dir,
        "nodes/c.node.ael",
        "use types::clash::{Clash};

node c(x: Clash) -> Clash {
    return x;
}
",
    );
    let build = aelc(&["build", "--message-format", "json"], &dir);
    assert_eq!(code(&build), 1, "{}{}", stdout(&build), stderr(&build));
    let e0850: Vec<serde_json::Value> = json_lines(&build)
        .into_iter()
        .filter(|d| d["code"] == "E0850")
        .collect();
    assert_eq!(e0850.len(), 1, "{}", stdout(&build));
    assert_eq!(e0850[0]["file"], "types/clash.ael", "{}", e0850[0]);
    assert_eq!(e0850[0]["line"], 1, "{}", e0850[0]);

    // A clash between two declarations (two nodes meeting at the glue's top level) points at
    // the second of them, as rustc places a name defined twice.
    write(
        &dir,
        "types/clash.ael",
        "struct Clash {\n    foo_bar: u8,\n}\n",
    );
    write(
        &dir,
        "nodes/d.node.ael",
        "use types::clash::{Clash};\n\nnode cC(x: Clash) -> Clash {\n    return x;\n}\n",
    );
    write(
        &dir,
        "nodes/c.node.ael",
        "use types::clash::{Clash};\n\nnode c_c(x: Clash) -> Clash {\n    return x;\n}\n",
    );
    let build = aelc(&["build", "--message-format", "json"], &dir);
    assert_eq!(code(&build), 1, "{}{}", stdout(&build), stderr(&build));
    let e0850: Vec<serde_json::Value> = json_lines(&build)
        .into_iter()
        .filter(|d| d["code"] == "E0850")
        .collect();
    assert_eq!(e0850.len(), 1, "{}", stdout(&build));
    let file = e0850[0]["file"].as_str().unwrap_or_default();
    assert!(
        file == "nodes/c.node.ael" || file == "nodes/d.node.ael",
        "{}",
        e0850[0]
    );
    assert_eq!(e0850[0]["line"], 3, "{}", e0850[0]);
}

/// `aelc::build::compile` (a `build.rs`) runs the build of `aelc build`: it watches every file
/// and folder the build read — the examples and prompts included, never the project folder
/// itself (cargo would scan `target/` with it) — and refuses what `aelc build` refuses, a
/// publishing rule included, writing nothing then.
#[test]
fn build_rs_compiles_what_aelc_build_builds_and_watches_every_input() {
    let project = copy_fixture("build-rs");
    let out = Scratch::new("aelc-cli", "build-rs-out");
    let compiled = aelc::build::compile_to(&project.join("ael.toml"), &out).unwrap();
    assert_eq!(compiled.glue, out.join("pick.rs"));
    let glue = std::fs::read_to_string(&compiled.glue).unwrap();
    let built = aelc(&["build"], &project);
    assert_eq!(code(&built), 0, "{}", stderr(&built));
    assert_eq!(
        glue,
        std::fs::read_to_string(project.join("target/ael/rust/pick.rs")).unwrap(),
        "the same glue as `aelc build`"
    );
    let root = std::fs::canonicalize(&*project).unwrap();
    let inputs: Vec<String> = compiled
        .inputs
        .iter()
        .map(|p| {
            let p = std::fs::canonicalize(p).unwrap();
            p.strip_prefix(&root).unwrap().display().to_string()
        })
        .collect();
    for wanted in [
        "ael.toml",
        "nodes",
        "nodes/pick.node.ael",
        "prompts/pick.md",
        "examples/pick",
        "examples/pick/clean.json",
        "examples/pick_budget/exhausted.json",
    ] {
        assert!(inputs.iter().any(|i| i == wanted), "{wanted} in {inputs:?}");
    }
    assert!(
        !inputs.iter().any(String::is_empty),
        "not the project folder: {inputs:?}"
    );

    // An example that breaks a publishing rule: `aelc build` refuses it, and so does build.rs.
    write(
        &project,
        "examples/pick/clean.json",
        "{\"not\": \"an example\"}",
    );
    std::fs::remove_file(&compiled.glue).unwrap();
    let refused = aelc(&["build"], &project);
    assert_eq!(code(&refused), 1, "{}", stderr(&refused));
    let err = aelc::build::compile_to(&project.join("ael.toml"), &out).unwrap_err();
    let first = stderr(&refused)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned();
    let code_word = first.split(['[', ']']).nth(1).unwrap_or("?").to_owned();
    assert!(code_word.starts_with('E'), "a diagnostic code in {first}");
    assert!(
        err.message.contains(&code_word),
        "{code_word} in {}",
        err.message
    );
    assert!(!compiled.glue.exists(), "nothing written");
}
