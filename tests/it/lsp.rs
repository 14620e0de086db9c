//! The language server, driven through the real `aelc-lsp` binary over stdio.
//!
//! A tiny JSON-RPC client (Content-Length framing) spawns the server, initializes it, opens a
//! two-module project in a temporary folder and asserts each feature's answer. Waits have a
//! generous deadline only so that a broken server fails the test instead of hanging it; no
//! assertion depends on timing. The last test runs a real editor client, Neovim headless.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const DEADLINE: Duration = Duration::from_secs(60);

const MANIFEST: &str = r#"[package]
name = "acme/review"
version = "0.1.0"

[bindings.primary_model]
provider = "openai"
model = "gpt-4o-mini"
"#;

const COMMON: &str = r#"/// What the caller asks for.
struct ReviewRequest {
    /// The text to review.
    document: Str<4000>,
    strict: bool = false,
}

/// The errors the review node declares.
errors ReviewError {
    /// The document has no text.
    empty_document,
}

struct Review {
    summary: Str<500>,
}

/* 😀 ç */ struct Emoji { x: u8 }
"#;

const NODE: &str = r#"use types::common::{ReviewRequest, Review, ReviewError, Emoji};

check not_blank(request: ReviewRequest) fails ReviewError {
    require request.document.trim().len() > 0 else empty_document "the document is blank";
}

fn smile(e: Emoji) -> u8 {
    e.x
}

node review(request: ReviewRequest) -> Review fails ReviewError {
    config {
        prompt: file("prompts/review.md");
        model: binding("primary_model");
    }
    input {
        check not_blank;
    }
}
"#;

/// A temporary project: `ael.toml`, `types/common.ael`, `nodes/review.node.ael`, a prompt.
struct Project {
    dir: PathBuf,
}

impl Project {
    fn new(name: &str) -> Project {
        Project::with(name, &[])
    }

    /// The standard project plus `extra` files (path, text).
    fn with(name: &str, extra: &[(&str, &str)]) -> Project {
        let dir = std::env::temp_dir().join(format!("aelc-lsp-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (path, text) in [
            ("ael.toml", MANIFEST),
            ("types/common.ael", COMMON),
            ("nodes/review.node.ael", NODE),
            ("prompts/review.md", "Review {{ request.document }}\n"),
        ]
        .iter()
        .chain(extra)
        {
            let full = dir.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        }
        Project { dir }
    }

    fn uri(&self, path: &str) -> String {
        format!("file://{}", self.dir.join(path).display())
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

struct Client {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    /// Notifications received while waiting for something else.
    notifications: Vec<Value>,
    next_id: i64,
}

impl Client {
    fn start() -> Client {
        Client::start_with(&[])
    }

    fn start_with(env: &[(&str, &str)]) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_aelc-lsp"))
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("aelc-lsp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, incoming) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_message(&mut reader) {
                if tx.send(message).is_err() {
                    return;
                }
            }
        });
        Client {
            child,
            stdin,
            incoming,
            notifications: Vec::new(),
            next_id: 1,
        }
    }

    /// Starts the server and runs `initialize`/`initialized`.
    fn initialized(project: &Project) -> Client {
        Client::initialized_with(project, &[])
    }

    fn initialized_with(project: &Project, env: &[(&str, &str)]) -> Client {
        let mut client = Client::start_with(env);
        let result = client.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": format!("file://{}", project.dir.display()),
                "capabilities": {}
            }),
        );
        assert_eq!(result["capabilities"]["positionEncoding"], "utf-16");
        assert_eq!(result["serverInfo"]["name"], "aelc-lsp");
        client.notify("initialized", json!({}));
        client
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        self.send_raw(frame.as_bytes());
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn send_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    fn next(&mut self, deadline: Instant) -> Value {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.incoming.recv_timeout(left) {
            Ok(message) => message,
            Err(RecvTimeoutError::Timeout) => panic!("the server did not answer in time"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed its output (died?)"),
        }
    }

    /// The whole response (result or error) to request `id`.
    fn response(&mut self, id: i64) -> Value {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let message = self.next(deadline);
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return message;
            }
            self.notifications.push(message);
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        let response = self.response(id);
        assert!(
            response.get("error").is_none(),
            "{method} failed: {response}"
        );
        response["result"].clone()
    }

    /// The first `publishDiagnostics` for `uri` whose diagnostics satisfy `wanted`.
    fn diagnostics(&mut self, uri: &str, wanted: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let matches = |m: &Value| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && wanted(
                    m["params"]["diagnostics"]
                        .as_array()
                        .map_or(&[], Vec::as_slice),
                )
        };
        if let Some(at) = self.notifications.iter().position(matches) {
            let found = self.notifications.remove(at);
            self.notifications.drain(..at);
            return found["params"]["diagnostics"].as_array().unwrap().clone();
        }
        self.notifications.clear();
        let deadline = Instant::now() + DEADLINE;
        loop {
            let message = self.next(deadline);
            if matches(&message) {
                return message["params"]["diagnostics"].as_array().unwrap().clone();
            }
        }
    }

    fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "ael", "version": 1, "text": text}}),
        );
    }

    fn change_full(&mut self, uri: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }

    fn at(&mut self, method: &str, uri: &str, line: u32, character: u32, extra: Value) -> Value {
        let mut params = json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}});
        if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                p.insert(k.clone(), v.clone());
            }
        }
        self.request(method, params)
    }

    /// `shutdown`, `exit`, and the exit status.
    fn stop(mut self) -> i32 {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        self.child.wait().unwrap().code().unwrap_or(-1)
    }
}

fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length: ") {
            length = value.parse().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// The (line, character) of the `nth` occurrence of `needle` in `text`, UTF-16 columns.
fn pos(text: &str, needle: &str, nth: usize) -> (u32, u32) {
    let offset = text
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("`{needle}` #{nth} not in the text"))
        .0;
    let before = &text[..offset];
    let line = before.matches('\n').count() as u32;
    let column = before
        .rsplit('\n')
        .next()
        .unwrap_or("")
        .encode_utf16()
        .count() as u32;
    (line, column)
}

#[test]
fn diagnostics_arrive_for_a_broken_file_and_clear_when_fixed() {
    let project = Project::new("diagnostics");
    let mut client = Client::initialized(&project);
    let uri = project.uri("nodes/review.node.ael");
    let broken = NODE.replace(
        "fails ReviewError {\n    require",
        "fails ReviewError {\n    require (",
    );
    client.open(&uri, &broken);
    let found = client.diagnostics(&uri, |d| !d.is_empty());
    assert_eq!(found[0]["severity"], 1, "{found:?}");
    assert_eq!(found[0]["source"], "aelc");
    assert!(
        found[0]["code"].as_str().unwrap().starts_with('E'),
        "{found:?}"
    );
    client.change_full(&uri, 2, NODE);
    client.diagnostics(&uri, |d| d.iter().all(|x| x["severity"] != 1));
    assert_eq!(client.stop(), 0);
}

#[test]
fn hover_definition_and_references_work_across_files() {
    let project = Project::new("navigation");
    let mut client = Client::initialized(&project);
    let node = project.uri("nodes/review.node.ael");
    let common = project.uri("types/common.ael");
    client.open(&node, NODE);

    // Hover on a type used in the node file shows its declaration and docs from the other file.
    let (line, col) = pos(NODE, "ReviewRequest", 1);
    let hover = client.at("textDocument/hover", &node, line, col + 2, json!({}));
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("struct ReviewRequest"), "{text}");
    assert!(text.contains("What the caller asks for."), "{text}");

    // Hover on a field access: the field's type with its bounds in words, and its doc.
    let (line, col) = pos(NODE, "document", 0);
    let hover = client.at("textDocument/hover", &node, line, col + 1, json!({}));
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("document: Str<4000>"), "{text}");
    assert!(text.contains("at most 4000 characters"), "{text}");
    assert!(text.contains("The text to review."), "{text}");

    // Definition across files.
    let (line, col) = pos(NODE, "ReviewRequest", 1);
    let def = client.at("textDocument/definition", &node, line, col, json!({}));
    assert_eq!(def["uri"], common, "{def}");
    assert_eq!(def["range"]["start"], json!({"line": 1, "character": 7}));

    // Error code after `else`, and the check named in the node's input block.
    let (line, col) = pos(NODE, "empty_document", 0);
    let def = client.at("textDocument/definition", &node, line, col, json!({}));
    assert_eq!(def["uri"], common);
    assert_eq!(def["range"]["start"]["line"], 10);
    let (line, col) = pos(NODE, "not_blank", 1);
    let def = client.at("textDocument/definition", &node, line, col, json!({}));
    assert_eq!(def["uri"], node);
    assert_eq!(def["range"]["start"]["line"], 2);

    // `binding("…")` into ael.toml, `file("…")` to the prompt.
    let (line, col) = pos(NODE, "primary_model", 0);
    let def = client.at("textDocument/definition", &node, line, col, json!({}));
    assert_eq!(def["uri"], project.uri("ael.toml"));
    assert_eq!(def["range"]["start"], json!({"line": 4, "character": 10}));
    let (line, col) = pos(NODE, "prompts/review.md", 0);
    let def = client.at("textDocument/definition", &node, line, col, json!({}));
    assert_eq!(def["uri"], project.uri("prompts/review.md"));

    // References of ReviewRequest: its declaration, the `use`, two parameters.
    let (line, col) = pos(NODE, "ReviewRequest", 2);
    let refs = client.at(
        "textDocument/references",
        &node,
        line,
        col,
        json!({"context": {"includeDeclaration": true}}),
    );
    let refs = refs.as_array().unwrap();
    assert_eq!(refs.len(), 4, "{refs:?}");
    assert!(refs.iter().any(|r| r["uri"] == common));
    assert_eq!(refs.iter().filter(|r| r["uri"] == node).count(), 3);
    assert_eq!(client.stop(), 0);
}

#[test]
fn utf16_columns_are_right_after_an_emoji() {
    let project = Project::new("utf16");
    let mut client = Client::initialized(&project);
    let node = project.uri("nodes/review.node.ael");
    client.open(&node, NODE);
    let (line, col) = pos(NODE, "Emoji", 1);
    let def = client.at("textDocument/definition", &node, line, col, json!({}));
    // `/* 😀 ç */ struct Emoji`: the emoji counts two UTF-16 units, `ç` one.
    let (want_line, want_col) = pos(COMMON, "Emoji", 0);
    assert_eq!(want_col, 18);
    assert_eq!(
        def["range"]["start"],
        json!({"line": want_line, "character": want_col})
    );
    assert_eq!(def["range"]["end"]["character"], want_col + 5);
    assert_eq!(client.stop(), 0);
}

fn labels(items: &Value) -> Vec<String> {
    let list = items.get("items").unwrap_or(items);
    list.as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn completion_offers_what_fits_the_place() {
    let project = Project::new("completion");
    let mut client = Client::initialized(&project);
    let node = project.uri("nodes/review.node.ael");
    let text = NODE
        .replace("request.document.trim()", "request.")
        .replace("else empty_document", "else ")
        .replace(
            "model: binding(\"primary_model\");",
            "model: binding(\"\");\n        ",
        )
        .replace("check not_blank;", "check not_blank;\n        ");
    client.open(&node, &text);
    let (line, col) = pos(&text, "request.", 0);
    let fields = labels(&client.at("textDocument/completion", &node, line, col + 8, json!({})));
    assert!(
        fields.contains(&"document".to_owned()) && fields.contains(&"strict".to_owned()),
        "{fields:?}"
    );
    assert!(!fields.contains(&"summary".to_owned()), "{fields:?}");

    let (line, col) = pos(&text, "else ", 0);
    let codes = labels(&client.at("textDocument/completion", &node, line, col + 5, json!({})));
    assert_eq!(codes, ["empty_document"]);

    let (line, col) = pos(&text, "binding(\"", 0);
    let bindings = labels(&client.at("textDocument/completion", &node, line, col + 9, json!({})));
    assert_eq!(bindings, ["primary_model"]);

    let (line, _) = pos(&text, "model: binding", 0);
    let keys = labels(&client.at("textDocument/completion", &node, line + 1, 8, json!({})));
    assert!(
        keys.contains(&"timeout".to_owned()) && keys.contains(&"max_answer".to_owned()),
        "{keys:?}"
    );

    let everything = labels(&client.at("textDocument/completion", &node, 1, 0, json!({})));
    for wanted in [
        "struct",
        "node",
        "Str",
        "List",
        "u16",
        "Option",
        "ReviewRequest",
        "not_blank",
    ] {
        assert!(
            everything.contains(&wanted.to_owned()),
            "{wanted} missing in {everything:?}"
        );
    }
    assert_eq!(client.stop(), 0);
}

/// Found by `aelc-fuzz lsp` (`fuzz/regressions/lsp-adee8af79fcff0f9`): completing after a `{`
/// that follows a name ending in a character wider than a byte (`Café {`) sliced the line
/// inside the character, and the handler panicked.
#[test]
fn completion_after_a_name_with_wide_characters_answers() {
    let project = Project::new("completion-wide");
    let mut client = Client::initialized(&project);
    let node = project.uri("nodes/cafe.node.ael");
    let text = "struct Café { naïve: u8 }\nnode n(request: Café) -> Café {\n    config { request.naïve. }\n}\n";
    client.open(&node, text);
    // `Client::request` fails the test on an error response (a panicking handler answers one).
    for (line, character) in [(0, 20), (0, 13), (2, 27), (2, 13)] {
        client.at("textDocument/completion", &node, line, character, json!({}));
    }
    assert_eq!(client.stop(), 0);
}

#[test]
fn symbols_formatting_rename_and_semantic_tokens() {
    let project = Project::new("edit");
    let mut client = Client::initialized(&project);
    let node = project.uri("nodes/review.node.ael");
    let common = project.uri("types/common.ael");
    client.open(&node, NODE);

    let symbols = client.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": node}}),
    );
    let names: Vec<&str> = symbols
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["not_blank", "smile", "review"]);
    let review = &symbols[2];
    let blocks: Vec<&str> = review["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(blocks, ["config", "input"]);

    // Formatting an untidy buffer gives one edit with the canonical text.
    let untidy = "struct   Review{summary:Str<500>,}\n";
    let scratch = project.uri("types/scratch.ael");
    client.open(&scratch, untidy);
    let edits = client.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": scratch}, "options": {"tabSize": 4, "insertSpaces": true}}),
    );
    let edits = edits.as_array().unwrap();
    assert_eq!(edits.len(), 1, "{edits:?}");
    let formatted = edits[0]["new_text"]
        .as_str()
        .or(edits[0]["newText"].as_str())
        .unwrap();
    assert!(formatted.starts_with("struct Review {\n"), "{formatted}");
    // A formatted buffer needs no edit.
    client.change_full(&scratch, 2, formatted);
    let edits = client.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": scratch}, "options": {"tabSize": 4, "insertSpaces": true}}),
    );
    assert_eq!(edits, json!([]));

    // Rename a type: edits in both files.
    let (line, col) = pos(NODE, "ReviewRequest", 1);
    let edit = client.at(
        "textDocument/rename",
        &node,
        line,
        col,
        json!({"newName": "Request"}),
    );
    let changes = edit["changes"].as_object().unwrap();
    assert_eq!(changes[&node].as_array().unwrap().len(), 3, "{edit}");
    assert_eq!(changes[&common].as_array().unwrap().len(), 1, "{edit}");
    assert!(changes[&node]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["newText"] == "Request"));
    // A keyword is refused.
    let id = client.send_request(
        "textDocument/rename",
        json!({"textDocument": {"uri": node}, "position": {"line": line, "character": col}, "newName": "struct"}),
    );
    assert!(client.response(id).get("error").is_some());

    // Semantic tokens: well-formed (5 numbers each, known types, non-overlapping on a line).
    let tokens = client.request(
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": node}}),
    );
    let data: Vec<u64> = tokens["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert!(!data.is_empty());
    assert_eq!(data.len() % 5, 0);
    let (mut line, mut start, mut end) = (0u64, 0u64, 0u64);
    for token in data.chunks(5) {
        if token[0] > 0 {
            line += token[0];
            start = token[1];
        } else {
            start += token[1];
            assert!(start >= end, "overlapping tokens on line {line}");
        }
        end = start + token[2];
        assert!(token[2] > 0 && token[3] < 12);
    }
    // The first token is the `use` keyword (type 0).
    assert_eq!(&data[..5], &[0, 0, 3, 0, 0]);
    assert_eq!(client.stop(), 0);
}

#[test]
fn malformed_input_never_kills_the_server() {
    let project = Project::new("robust");
    let mut client = Client::initialized(&project);
    let node = project.uri("nodes/review.node.ael");
    // Garbage frames, a payload that is not JSON-RPC, a header without a length.
    client.send_raw(b"this is not a header\r\n\r\n");
    client.send_raw(b"Content-Length: 5\r\n\r\n{oops");
    client.send_raw(b"Content-Length: 2\r\n\r\n[]");
    client.send_raw(b"Content-Type: x\r\n\r\n");
    // A change before the open, an unknown method, bad params, a close of nothing.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": node, "version": 3}, "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "text": "x"}]}),
    );
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": project.uri("nope.ael")}}),
    );
    let id = client.send_request("aelc/unknown", json!({}));
    assert_eq!(client.response(id)["error"]["code"], -32601);
    let id = client.send_request("textDocument/hover", json!({"nonsense": true}));
    assert_eq!(client.response(id)["error"]["code"], -32602);

    // Typing the whole file one character at a time, with a hover at every tenth step:
    // half-typed text of every kind.
    client.open(&node, "");
    let mut typed = String::new();
    for (i, ch) in NODE.chars().enumerate() {
        let (line, character) = pos(&format!("{typed}\u{0}"), "\u{0}", 0);
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": node, "version": i + 2}, "contentChanges": [{
                "range": {"start": {"line": line, "character": character}, "end": {"line": line, "character": character}},
                "text": ch.to_string()
            }]}),
        );
        typed.push(ch);
        if i % 10 == 0 {
            let id = client.send_request(
                "textDocument/hover",
                json!({"textDocument": {"uri": node}, "position": {"line": line, "character": character}}),
            );
            let answer = client.response(id);
            assert!(answer.get("error").is_none(), "{answer}");
        }
    }
    // The server saw the same text: the edit ranges were applied correctly.
    let (line, col) = pos(NODE, "ReviewRequest", 1);
    let def = client.at("textDocument/definition", &node, line, col, json!({}));
    assert_eq!(def["uri"], project.uri("types/common.ael"));
    // Edits far out of range clamp instead of failing.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": node, "version": 9999}, "contentChanges": [{"range": {"start": {"line": 900, "character": 5}, "end": {"line": 2, "character": 99}}, "text": "😀"}]}),
    );
    // A request cancelled right away is answered, either way.
    let id = client.send_request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": node}}),
    );
    client.notify("$/cancelRequest", json!({"id": id}));
    let answer = client.response(id);
    assert!(
        answer.get("result").is_some() || answer["error"]["code"] == -32800,
        "{answer}"
    );
    assert_eq!(client.stop(), 0);
}

#[test]
fn requests_before_initialize_are_refused_and_exit_without_shutdown_is_status_1() {
    let mut client = Client::start();
    let id = client.send_request("textDocument/hover", json!({}));
    assert_eq!(client.response(id)["error"]["code"], -32002);
    client.notify("exit", Value::Null);
    assert_eq!(client.child.wait().unwrap().code(), Some(1));
}

/// A real editor client: Neovim headless with its built-in LSP client opens a broken file and
/// must receive its diagnostics. Skipped (with a message) when `nvim` is not installed; CI
/// installs it (`apt-get install -y neovim`).
#[test]
fn neovim_receives_diagnostics_of_a_broken_file() {
    if Command::new("nvim").arg("--version").output().is_err() {
        // CI installs Neovim (`.ci/run`), so there a missing `nvim` is a failure, not a skip.
        assert!(
            std::env::var_os("CI").is_none(),
            "`nvim` is not installed but CI is set: .ci/run must install it (apt-get install -y neovim)"
        );
        eprintln!(
            "\n!!! SKIPPED neovim_receives_diagnostics_of_a_broken_file: `nvim` is not installed \
             (apt-get install -y neovim); CI runs it !!!\n"
        );
        return;
    }
    let project = Project::new("neovim");
    let broken = project.dir.join("nodes/broken.node.ael");
    std::fs::write(&broken, "struct Broken {\n    field: ,\n}\n").unwrap();
    let out = project.dir.join("nvim-result.txt");
    let script = project.dir.join("check.lua");
    std::fs::write(&script, NEOVIM_SCRIPT).unwrap();
    let status = Command::new("nvim")
        .args(["--headless", "--clean", "-n"])
        .arg(&broken)
        .arg("-c")
        .arg(format!("luafile {}", script.display()))
        .env("AELC_LSP", env!("CARGO_BIN_EXE_aelc-lsp"))
        .env("AELC_ROOT", &project.dir)
        .env("AELC_OUT", &out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let result = std::fs::read_to_string(&out).unwrap_or_default();
    assert!(
        status.success(),
        "nvim failed ({status}); it wrote: {result}"
    );
    assert!(result.starts_with("diagnostics: "), "{result}");
    // The parse error of line 2 (0-based 1), from this server, with its code.
    let first = result.lines().nth(1).unwrap_or("");
    assert!(first.starts_with("aelc E"), "{result}");
    assert!(first.contains(" line 1 "), "{result}");
    assert!(Path::new(&out).is_file());
}

/// Starts the server with `vim.lsp.start` (Neovim 0.8+) or, on Neovim 0.7 (Debian 12),
/// `vim.lsp.start_client` + `buf_attach_client`; then waits for `vim.diagnostic.get` to fill.
const NEOVIM_SCRIPT: &str = r#"
local out = os.getenv("AELC_OUT")
local function finish(text, code)
  local f = io.open(out, "w")
  f:write(text)
  f:close()
  vim.cmd(code == 0 and "qa!" or ("cquit " .. code))
end
local config = {
  name = "aelc",
  cmd = { os.getenv("AELC_LSP") },
  root_dir = os.getenv("AELC_ROOT"),
}
local buf = vim.api.nvim_get_current_buf()
if vim.lsp.start then
  if not vim.lsp.start(config) then finish("vim.lsp.start failed", 3) end
else
  local client = vim.lsp.start_client(config)
  if not client then finish("no client", 3) end
  vim.lsp.buf_attach_client(buf, client)
end
local got = vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 20)
if not got then finish("no diagnostics arrived", 4) end
local lines = {}
for _, d in ipairs(vim.diagnostic.get(buf)) do
  table.insert(lines, tostring(d.source) .. " " .. tostring(d.code) .. " line " .. d.lnum .. " col " .. d.col .. ": " .. d.message:gsub("\n.*", ""))
end
finish("diagnostics: " .. #lines .. "\n" .. table.concat(lines, "\n") .. "\n", 0)
"#;

/// A second node in another file that uses the check, a field and an error code of the first.
const SECOND: &str = r#"use types::common::{ReviewRequest, Review, ReviewError};
use nodes::review::not_blank;

check strict_only(request: ReviewRequest) fails ReviewError {
    require request.strict else empty_document;
}

node second(request: ReviewRequest) -> Review fails ReviewError {
    config {
        prompt: file("prompts/review.md");
        model: binding("primary_model");
    }
    input {
        check not_blank;
        check strict_only;
    }
}
"#;

/// `(line, character, length, type)` of every semantic token, decoded from the relative form.
fn decode_tokens(data: &[u64]) -> Vec<(u64, u64, u64, u64)> {
    let (mut line, mut start) = (0, 0);
    data.chunks(5)
        .map(|t| {
            if t[0] > 0 {
                line += t[0];
                start = t[1];
            } else {
                start += t[1];
            }
            (line, start, t[2], t[3])
        })
        .collect()
}

fn edits_in(edit: &Value, uri: &str) -> Vec<(u64, u64)> {
    let mut found: Vec<(u64, u64)> = edit["changes"][uri]
        .as_array()
        .map(|edits| {
            edits
                .iter()
                .map(|e| {
                    (
                        e["range"]["start"]["line"].as_u64().unwrap(),
                        e["range"]["start"]["character"].as_u64().unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

fn as_pair((line, character): (u32, u32)) -> (u64, u64) {
    (u64::from(line), u64::from(character))
}

fn codes(diagnostics: &[Value]) -> Vec<String> {
    diagnostics
        .iter()
        .map(|d| d["code"].as_str().unwrap_or("").to_owned())
        .collect()
}

fn errors(diagnostics: &[Value]) -> usize {
    diagnostics.iter().filter(|d| d["severity"] == 1).count()
}

#[test]
fn diagnostics_cover_other_files_prompts_the_manifest_and_saves() {
    let project = Project::new("whole");
    let mut client = Client::initialized(&project);
    let node = project.uri("nodes/review.node.ael");
    let common = project.uri("types/common.ael");
    let prompt = project.uri("prompts/review.md");
    let manifest = project.uri("ael.toml");
    client.open(&node, NODE);
    let clean = client.diagnostics(&node, |_| true);
    assert_eq!(errors(&clean), 0, "the fixture project checks: {clean:?}");

    // An unsaved edit of another file breaks this one: `Review` no longer exists.
    client.open(&common, COMMON);
    let renamed = COMMON.replace("struct Review {", "struct Critique {");
    client.change_full(&common, 2, &renamed);
    let broken = client.diagnostics(&node, |d| errors(d) > 0);
    let (use_line, _) = pos(NODE, "Review,", 0);
    assert!(
        broken
            .iter()
            .any(|d| d["range"]["start"]["line"] == use_line
                || d["message"].as_str().unwrap().contains("Review")),
        "{broken:?}"
    );
    // Fixing the other file clears this one's diagnostics.
    client.change_full(&common, 3, COMMON);
    client.diagnostics(&node, |d| errors(d) == 0);

    // A prompt template naming a field that does not exist: the error lands in the `.md` file,
    // on the expression.
    let bad_prompt = "Review {{ request.nope }}\n";
    client.open(&prompt, bad_prompt);
    let found = client.diagnostics(&prompt, |d| errors(d) > 0);
    assert_eq!(found[0]["range"]["start"]["line"], 0, "{found:?}");
    let column = found[0]["range"]["start"]["character"].as_u64().unwrap();
    assert!((10..=18).contains(&column), "{found:?}");
    assert!(found[0]["code"].as_str().unwrap().starts_with('E'));
    client.change_full(&prompt, 2, "Review {{ request.document }}\n");
    client.diagnostics(&prompt, |d| d.is_empty());

    // A broken `ael.toml` (unsaved): the error is in the manifest, and clears when fixed.
    client.open(&manifest, "[package]\nname = 42\n");
    let found = client.diagnostics(&manifest, |d| errors(d) > 0);
    assert!(
        codes(&found).iter().all(|c| c.starts_with("E06")),
        "{found:?}"
    );
    // `name = 42` is refused on its line; the missing `version` is reported at `[package]`.
    assert!(
        found
            .iter()
            .any(|d| d["code"] == "E0602" && d["range"]["start"]["line"] == 1),
        "{found:?}"
    );
    client.change_full(&manifest, 2, MANIFEST);
    client.diagnostics(&manifest, |d| d.is_empty());

    // A file written on disk by another program and announced by `didSave` is checked too, and
    // its diagnostics clear when it is removed.
    let extra = project.dir.join("types/extra.ael");
    std::fs::write(&extra, "struct Extra {\n    x: Nope,\n}\n").unwrap();
    let extra_uri = project.uri("types/extra.ael");
    client.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": extra_uri}}),
    );
    let found = client.diagnostics(&extra_uri, |d| errors(d) > 0);
    assert_eq!(
        found[0]["range"]["start"],
        json!({"line": 1, "character": 7}),
        "{found:?}"
    );
    std::fs::remove_file(&extra).unwrap();
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": extra_uri, "type": 3}]}),
    );
    client.diagnostics(&extra_uri, |d| d.is_empty());
    assert_eq!(client.stop(), 0);
}

/// The editor shows what `aelc build` refuses: the publishing rules run in the server too (one
/// driver function for `aelc check`, `aelc build` and the LSP). A wrong example output lands
/// in the example file on the offending value, and clears when the example is fixed; a
/// publishing warning about an agent lands on its declaration.
#[test]
fn publishing_rules_reach_the_example_file_and_the_agent() {
    const AGENT: &str = "use types::common::{ReviewRequest, Review};\n\n/// Nothing to say.\nstruct Nothing {}\n\nagent answer(request: ReviewRequest) -> Review {\n    config {\n        prompt: file(\"prompts/review.md\");\n        model: binding(\"primary_model\");\n    }\n}\n\nagent quiet(request: ReviewRequest) -> Nothing {\n    config {\n        prompt: file(\"prompts/review.md\");\n        model: binding(\"primary_model\");\n    }\n}\n";
    const WRONG: &str =
        "{\"input\": {\"document\": \"d\"},\n \"answers\": [],\n \"output\": {\"summary\": 7}}\n";
    let project = Project::with(
        "publishing",
        &[
            ("nodes/answer.node.ael", AGENT),
            ("examples/answer/wrong.json", WRONG),
        ],
    );
    let mut client = Client::initialized(&project);
    let example = project.uri("examples/answer/wrong.json");
    let agent = project.uri("nodes/answer.node.ael");
    client.open(&agent, AGENT);
    let warned = client.diagnostics(&agent, |d| !d.is_empty());
    assert_eq!(codes(&warned), ["W0801"], "{warned:?}");
    let (line, character) = pos(AGENT, "quiet", 0);
    assert_eq!(
        warned[0]["range"]["start"],
        json!({"line": line, "character": character}),
        "{warned:?}"
    );
    client.open(&example, WRONG);
    let found = client.diagnostics(&example, |d| errors(d) > 0);
    assert_eq!(codes(&found), ["E0806"], "{found:?}");
    let (line, character) = pos(WRONG, "7", 0);
    assert_eq!(
        found[0]["range"],
        json!({"start": {"line": line, "character": character},
               "end": {"line": line, "character": character + 1}}),
        "{found:?}"
    );
    let fixed = WRONG.replace("7", "\"ok\"");
    client.change_full(&example, 2, &fixed);
    client.diagnostics(&example, |d| d.is_empty());
    assert_eq!(client.stop(), 0);
}

/// Issue 25 (A): a prompt of 20,000 nested blocks overflowed the server's stack (it aborted,
/// exit 134). It gets `E0725` at the tag past the bound, and the server goes on.
#[test]
fn a_prompt_nested_too_deeply_is_a_diagnostic_not_a_crash() {
    let project = Project::new("deep_prompt");
    let mut client = Client::initialized(&project);
    let prompt = project.uri("prompts/review.md");
    let tag = "{% if request.document.is_empty() %}";
    let deep = format!("{}x{}", tag.repeat(20_000), "{% end %}".repeat(20_000));
    client.open(&prompt, &deep);
    let found = client.diagnostics(&prompt, |d| errors(d) > 0);
    assert_eq!(codes(&found), ["E0725"], "{found:?}");
    let column = 128 * tag.len() as u64;
    assert_eq!(
        found[0]["range"]["start"],
        json!({"line": 0, "character": column})
    );
    client.change_full(&prompt, 2, "Review {{ request.document }}\n");
    client.diagnostics(&prompt, |d| d.is_empty());
    assert_eq!(client.stop(), 0);
}

/// Issue 25 (G): a document over the compiler's size bound (2 MiB) is refused with `E0011`
/// at its start, not analysed (a 28 MB one took 19.7 GB), and neither formatted; the rest
/// of the project is still checked, and the document is analysed again once it is smaller.
#[test]
fn a_document_over_the_size_bound_is_refused_with_e0011() {
    let project = Project::new("huge");
    let mut client = Client::initialized(&project);
    let huge = project.uri("types/huge.ael");
    let line = "struct Row { id: u32, name: Str<40> }\n";
    let text = line.repeat(aelc::driver::MAX_SOURCE_BYTES / line.len() + 1);
    client.open(&huge, &text);
    let found = client.diagnostics(&huge, |d| errors(d) > 0);
    assert_eq!(codes(&found), ["E0011"], "{found:?}");
    assert_eq!(
        found[0]["range"]["start"],
        json!({"line": 0, "character": 0})
    );
    let id = client.send_request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": huge}, "options": {"tabSize": 4, "insertSpaces": true}}),
    );
    let response = client.response(id);
    assert!(
        response["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("E0011")),
        "{response}"
    );
    client.change_full(&huge, 2, line);
    client.diagnostics(&huge, |d| d.is_empty());
    assert_eq!(client.stop(), 0);
}

#[test]
fn hover_shows_the_json_schema_of_types_and_fields() {
    let project = Project::new("schema");
    let mut client = Client::initialized(&project);
    let node = project.uri("nodes/review.node.ael");
    client.open(&node, NODE);
    let (line, col) = pos(NODE, "ReviewRequest", 1);
    let hover = client.at("textDocument/hover", &node, line, col, json!({}));
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("JSON Schema"), "{text}");
    assert!(text.contains("\"additionalProperties\": false"), "{text}");
    assert!(text.contains("\"maxLength\": 4000"), "{text}");
    assert!(text.contains("\"required\""), "{text}");
    assert!(!text.contains("last check without errors"), "{text}");

    // A field: its own fragment only.
    let (line, col) = pos(NODE, "document", 0);
    let hover = client.at("textDocument/hover", &node, line, col, json!({}));
    let text = hover["contents"]["value"].as_str().unwrap();
    let schema = text.split("```json\n").nth(1).expect("a JSON block");
    let schema: Value = serde_json::from_str(schema.split("\n```").next().unwrap()).unwrap();
    assert_eq!(schema["type"], "string", "{text}");
    assert_eq!(schema["maxLength"], 4000, "{text}");

    // While the project has errors, the last good program's schema is shown and said to be so.
    let broken = NODE.replace("e.x\n", "e.nope\n");
    client.change_full(&node, 2, &broken);
    client.diagnostics(&node, |d| errors(d) > 0);
    let (line, col) = pos(&broken, "ReviewRequest", 1);
    let hover = client.at("textDocument/hover", &node, line, col, json!({}));
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("\"maxLength\": 4000"), "{text}");
    assert!(
        text.contains("as of the last check without errors"),
        "{text}"
    );
    assert_eq!(client.stop(), 0);
}

#[test]
fn references_and_rename_of_fields_checks_and_error_codes_span_files() {
    let project = Project::with("rename", &[("nodes/second.node.ael", SECOND)]);
    let mut client = Client::initialized(&project);
    let node = project.uri("nodes/review.node.ael");
    let second = project.uri("nodes/second.node.ael");
    let common = project.uri("types/common.ael");
    client.open(&second, SECOND);
    let clean = client.diagnostics(&second, |_| true);
    assert_eq!(errors(&clean), 0, "{clean:?}");

    // The check: declared in review, imported and used in second.
    let (line, col) = pos(SECOND, "not_blank", 1);
    let def = client.at("textDocument/definition", &second, line, col, json!({}));
    assert_eq!(def["uri"], node);
    assert_eq!(
        def["range"]["start"],
        json!({"line": 2, "character": 6}),
        "{def}"
    );
    let edit = client.at(
        "textDocument/rename",
        &second,
        line,
        col,
        json!({"newName": "has_text"}),
    );
    assert_eq!(
        edits_in(&edit, &node),
        [
            as_pair(pos(NODE, "not_blank", 0)),
            as_pair(pos(NODE, "not_blank", 1))
        ]
    );
    assert_eq!(
        edits_in(&edit, &second),
        [
            as_pair(pos(SECOND, "not_blank", 0)),
            as_pair(pos(SECOND, "not_blank", 1))
        ]
    );

    // A field: `request.strict` in second, declared in common; rename touches both, and only
    // that field (not `strict_only`).
    let (line, col) = pos(SECOND, "strict else", 0);
    let refs = client.at(
        "textDocument/references",
        &second,
        line,
        col + 1,
        json!({"context": {"includeDeclaration": true}}),
    );
    let refs = refs.as_array().unwrap();
    assert_eq!(refs.len(), 2, "{refs:?}");
    let edit = client.at(
        "textDocument/rename",
        &second,
        line,
        col,
        json!({"newName": "exact"}),
    );
    assert_eq!(
        edits_in(&edit, &common),
        [as_pair(pos(COMMON, "strict", 0))]
    );
    assert_eq!(
        edits_in(&edit, &second),
        [as_pair(pos(SECOND, "strict else", 0))]
    );
    assert!(edits_in(&edit, &node).is_empty(), "{edit}");

    // A field used in a prompt template: rename reaches the `.md` file, and go to definition
    // works from there.
    let prompt = project.uri("prompts/review.md");
    let (line, col) = pos(COMMON, "document", 0);
    let edit = client.at(
        "textDocument/rename",
        &common,
        line,
        col,
        json!({"newName": "text"}),
    );
    assert_eq!(edits_in(&edit, &prompt), [(0, 18)], "{edit}");
    assert_eq!(edits_in(&edit, &node), [as_pair(pos(NODE, "document", 0))]);
    assert_eq!(edits_in(&edit, &common), [(line.into(), col.into())]);
    let def = client.at("textDocument/definition", &prompt, 0, 20, json!({}));
    assert_eq!(def["uri"], common, "{def}");
    assert_eq!(
        def["range"]["start"],
        json!({"line": line, "character": col})
    );
    let def = client.at("textDocument/definition", &prompt, 0, 12, json!({}));
    assert_eq!(
        def["uri"], node,
        "the parameter `request` of the node naming the prompt"
    );

    // An error code: declared in common, used after `else` in both node files.
    let (line, col) = pos(SECOND, "empty_document", 0);
    let refs = client.at(
        "textDocument/references",
        &second,
        line,
        col,
        json!({"context": {"includeDeclaration": false}}),
    );
    let mut uris: Vec<&str> = refs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    uris.sort();
    let mut want = vec![node.as_str(), second.as_str()];
    want.sort();
    assert_eq!(uris, want, "{refs}");

    // A fn, by references from its declaration.
    let (line, col) = pos(NODE, "smile", 0);
    let refs = client.at(
        "textDocument/references",
        &node,
        line,
        col,
        json!({"context": {"includeDeclaration": true}}),
    );
    assert_eq!(refs.as_array().unwrap().len(), 1, "{refs}");

    // The binding, from a use into `ael.toml`: both nodes and the manifest.
    let (line, col) = pos(SECOND, "primary_model", 0);
    let refs = client.at(
        "textDocument/references",
        &second,
        line,
        col + 2,
        json!({"context": {"includeDeclaration": true}}),
    );
    let refs = refs.as_array().unwrap();
    assert_eq!(refs.len(), 3, "{refs:?}");
    assert!(refs.iter().any(|r| r["uri"] == project.uri("ael.toml")));
    assert_eq!(client.stop(), 0);
}

#[test]
fn semantic_tokens_classify_names_by_what_they_denote() {
    let project = Project::new("tokens");
    let mut client = Client::start();
    let result = client.request("initialize", json!({"processId": null, "capabilities": {}}));
    let legend: Vec<String> = result["capabilities"]["semanticTokensProvider"]["legend"]
        ["tokenTypes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    client.notify("initialized", json!({}));
    let node = project.uri("nodes/review.node.ael");
    client.open(&node, NODE);
    let tokens = client.request(
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": node}}),
    );
    let data: Vec<u64> = tokens["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let decoded = decode_tokens(&data);
    let kind_at = |needle: &str, nth: usize| -> String {
        let (line, col) = pos(NODE, needle, nth);
        let token = decoded
            .iter()
            .find(|t| t.0 == u64::from(line) && t.1 == u64::from(col))
            .unwrap_or_else(|| panic!("no token at `{needle}` #{nth}"));
        assert_eq!(token.2, needle.encode_utf16().count() as u64, "`{needle}`");
        legend[token.3 as usize].clone()
    };
    assert_eq!(kind_at("check", 0), "keyword");
    assert_eq!(kind_at("ReviewRequest", 1), "type");
    assert_eq!(kind_at("request", 0), "parameter");
    assert_eq!(kind_at("document", 0), "property");
    assert_eq!(kind_at("empty_document", 0), "enumMember");
    assert_eq!(kind_at("\"the document is blank\"", 0), "string");
    assert_eq!(kind_at("not_blank", 0), "function");
    assert_eq!(kind_at("u8", 0), "type");
    assert_eq!(client.stop(), 0);
}

#[test]
fn unknown_documents_and_odd_uris_get_answers_not_crashes() {
    let project = Project::new("unknown");
    let mut client = Client::initialized(&project);
    let at =
        |uri: &str| json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}});
    // A file that exists nowhere, a non-file URI, a folder: each request is answered.
    for uri in [
        project.uri("nodes/missing.node.ael"),
        "untitled:Untitled-1".to_owned(),
        "file:///".to_owned(),
        project.uri(""),
    ] {
        for method in [
            "textDocument/hover",
            "textDocument/definition",
            "textDocument/references",
            "textDocument/completion",
            "textDocument/documentSymbol",
            "textDocument/formatting",
            "textDocument/semanticTokens/full",
            "textDocument/rename",
        ] {
            let mut params = at(&uri);
            params["context"] = json!({"includeDeclaration": true});
            params["newName"] = json!("x");
            params["options"] = json!({"tabSize": 4, "insertSpaces": true});
            let id = client.send_request(method, params);
            let answer = client.response(id);
            assert!(
                answer.get("result").is_some() || answer.get("error").is_some(),
                "{method} {uri}: {answer}"
            );
            if let Some(error) = answer.get("error") {
                assert_ne!(
                    error["code"], -32603,
                    "{method} {uri}: an internal error {answer}"
                );
            }
        }
    }
    // Notifications about unknown or odd documents are ignored.
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": "untitled:x"}}),
    );
    client.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": project.uri("nope.ael")}}),
    );
    client.notify("textDocument/didOpen", json!({"textDocument": {"uri": 42}}));
    // Still alive and right.
    let node = project.uri("nodes/review.node.ael");
    client.open(&node, NODE);
    let (line, col) = pos(NODE, "ReviewRequest", 1);
    let def = client.at("textDocument/definition", &node, line, col, json!({}));
    assert_eq!(def["uri"], project.uri("types/common.ael"));
    assert_eq!(client.stop(), 0);
}

#[test]
fn a_panicking_handler_becomes_an_error_response() {
    let project = Project::new("panic");
    let mut client = Client::initialized_with(&project, &[("AELC_LSP_CRASH_TEST", "1")]);
    let id = client.send_request("aelc/crashTest", json!({}));
    let answer = client.response(id);
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("keeps running"),
        "{answer}"
    );
    // The server goes on: diagnostics and requests still work.
    let node = project.uri("nodes/review.node.ael");
    client.open(&node, &NODE.replace("-> Review fails", "-> Nope fails"));
    client.diagnostics(&node, |d| errors(d) > 0);
    let (line, col) = pos(NODE, "ReviewRequest", 1);
    let def = client.at("textDocument/definition", &node, line, col, json!({}));
    assert_eq!(def["uri"], project.uri("types/common.ael"));
    // Without the variable the method does not exist.
    let mut plain = Client::initialized(&project);
    let id = plain.send_request("aelc/crashTest", json!({}));
    assert_eq!(plain.response(id)["error"]["code"], -32601);
    assert_eq!(plain.stop(), 0);
    assert_eq!(client.stop(), 0);
}

#[test]
fn queued_changes_are_coalesced_and_only_the_latest_version_is_published() {
    let project = Project::new("coalesce");
    let mut client = Client::initialized(&project);
    let node = project.uri("nodes/review.node.ael");
    // All the edits in one write: the server reads them faster than it checks a project, so it
    // finds them queued and checks only the newest text. Even versions are broken, odd ones are
    // fine; the last one (201) is fine.
    let broken = NODE.replace("-> Review fails", "-> Nope fails");
    let mut burst = Vec::new();
    let frame = |message: Value| {
        let body = message.to_string();
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    };
    burst.extend(frame(
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": node, "languageId": "ael", "version": 1, "text": NODE}}}),
    ));
    const LAST: i64 = 201;
    for version in 2..=LAST {
        let text = if version % 2 == 0 { &broken } else { NODE };
        burst.extend(frame(
            json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": node, "version": version},
            "contentChanges": [{"text": text}]}}),
        ));
    }
    client.send_raw(&burst);
    let id = client.send_request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": node}}),
    );
    client.response(id);
    let deadline = Instant::now() + DEADLINE;
    let mut versions = Vec::new();
    let mut pending = std::mem::take(&mut client.notifications);
    loop {
        let message = if pending.is_empty() {
            client.next(deadline)
        } else {
            pending.remove(0)
        };
        if message["method"] != "textDocument/publishDiagnostics"
            || message["params"]["uri"] != node.as_str()
        {
            continue;
        }
        let version = message["params"]["version"].as_i64().unwrap();
        let diagnostics = message["params"]["diagnostics"].as_array().unwrap();
        // Every publication describes the text of the version it names.
        assert_eq!(
            errors(diagnostics) > 0,
            version % 2 == 0,
            "version {version}: {diagnostics:?}"
        );
        versions.push(version);
        if version == LAST {
            break;
        }
    }
    assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");
    assert!(
        versions.len() < 100,
        "{} of {LAST} versions were checked: queued changes were not coalesced ({versions:?})",
        versions.len()
    );
    assert_eq!(client.stop(), 0);
}

#[test]
fn a_request_cancelled_while_queued_is_answered_request_cancelled() {
    let project = Project::new("cancel");
    let mut client = Client::initialized(&project);
    let node = project.uri("nodes/review.node.ael");
    client.open(&node, NODE);
    let frame = |message: Value| {
        let body = message.to_string();
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    };
    // A change makes the next request re-check the project; the request after it and its
    // cancellation arrive meanwhile, so the second request is still queued when it is cancelled.
    // The reader thread's speed is not ours to fix, so a few rounds are tried; every answer must
    // be a result or `RequestCancelled`, and at least one must be cancelled.
    let mut cancelled = 0;
    for round in 0..20 {
        let first = 1000 + round * 2;
        let second = first + 1;
        let mut burst = frame(
            json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": node, "version": round + 2},
            "contentChanges": [{"text": NODE}]}}),
        );
        for id in [first, second] {
            burst.extend(frame(
                json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/documentSymbol",
                "params": {"textDocument": {"uri": node}}}),
            ));
        }
        burst.extend(frame(
            json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": second}}),
        ));
        client.send_raw(&burst);
        let answer = client.response(first);
        assert!(answer.get("result").is_some(), "{answer}");
        let answer = client.response(second);
        if answer["error"]["code"] == -32800 {
            cancelled += 1;
            break;
        }
        assert!(answer.get("result").is_some(), "{answer}");
    }
    assert!(cancelled > 0, "no queued request was ever cancelled");
    assert_eq!(client.stop(), 0);
}

#[test]
fn utf16_ranges_of_diagnostics_and_edits_after_non_ascii_text() {
    let project = Project::new("utf16-edit");
    let mut client = Client::initialized(&project);
    let common = project.uri("types/common.ael");
    // `é` and `😀` before the error on the same line: 1 and 2 UTF-16 units, 2 and 4 bytes.
    let text = COMMON.replace(
        "/* 😀 ç */ struct Emoji { x: u8 }",
        "/* é😀 */ struct Emoji { x: Nope }",
    );
    client.open(&common, &text);
    let found = client.diagnostics(&common, |d| errors(d) > 0);
    let (line, col) = pos(&text, "Nope", 0);
    assert_eq!(col, 28);
    assert_eq!(
        found[0]["range"]["start"],
        json!({"line": line, "character": col}),
        "{found:?}"
    );
    assert_eq!(
        found[0]["range"]["end"],
        json!({"line": line, "character": col + 4})
    );
    // An incremental edit addressed in UTF-16 columns after the emoji replaces exactly `Nope`.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": common, "version": 2}, "contentChanges": [{
            "range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": col + 4}},
            "text": "u8"
        }]}),
    );
    let fixed = client.diagnostics(&common, |d| errors(d) == 0);
    assert!(fixed.is_empty(), "{fixed:?}");
    // Hover right after the emoji, on `Emoji`.
    let (line, col) = pos(&text, "Emoji", 0);
    let hover = client.at("textDocument/hover", &common, line, col + 1, json!({}));
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("struct Emoji"),
        "{hover}"
    );
    assert_eq!(
        hover["range"]["start"],
        json!({"line": line, "character": col})
    );
    assert_eq!(client.stop(), 0);
}

#[test]
fn clients_that_allow_it_are_asked_to_watch_project_files() {
    let mut client = Client::start();
    client.request(
        "initialize",
        json!({"processId": null, "capabilities": {
            "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}}}),
    );
    client.notify("initialized", json!({}));
    let deadline = Instant::now() + DEADLINE;
    let request = loop {
        let message = client.next(deadline);
        if message["method"] == "client/registerCapability" {
            break message;
        }
    };
    let registration = &request["params"]["registrations"][0];
    assert_eq!(registration["method"], "workspace/didChangeWatchedFiles");
    let globs: Vec<&str> = registration["registerOptions"]["watchers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["globPattern"].as_str().unwrap())
        .collect();
    assert_eq!(globs, ["**/*.ael", "**/ael.toml", "**/*.md", "**/*.json"]);
    // The client's answer (even an error) is taken without complaint.
    client.send(
        json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no"}}),
    );
    assert_eq!(client.stop(), 0);

    // A client that did not offer dynamic registration is not asked.
    let project = Project::new("no-watch");
    let mut client = Client::initialized(&project);
    client.request("shutdown", Value::Null);
    assert!(
        client
            .notifications
            .iter()
            .all(|m| m["method"] != "client/registerCapability"),
        "{:?}",
        client.notifications
    );
    client.notify("exit", Value::Null);
    assert_eq!(client.child.wait().unwrap().code(), Some(0));
}

#[test]
fn pathological_documents_get_answers_for_every_request() {
    let project = Project::new("pathological");
    let mut client = Client::initialized(&project);
    let uri = project.uri("nodes/odd.ael");
    let deep = format!(
        "fn f() -> u8 {{ {}1{} }}",
        "(".repeat(3000),
        ")".repeat(3000)
    );
    let fields: String = (0..1000).map(|i| format!("f{i}: u8, ")).collect();
    let long_line = format!("struct S {{ {fields}}}");
    for (version, text) in [
        deep.as_str(),
        long_line.as_str(),
        "😀😀😀\u{0}\u{feff}é\r\n\r\n\t",
        "struct \"unterminated",
        "/* never closed /* nested",
        "node n(x: ) -> { config { prompt: file(\"missing.md\"); model: binding(\"\"); } }",
        "use ::::;; check c( fails { require else ; }",
        "",
    ]
    .into_iter()
    .enumerate()
    {
        client.change_full(&uri, version as i32 + 1, text);
        if version == 0 {
            client.open(&uri, text);
        }
        let last_line = text.lines().count() as u32;
        for (line, character) in [(0, 0), (0, 5), (0, 3000), (last_line, 0), (9999, 9999)] {
            let position = json!({"line": line, "character": character});
            for (method, extra) in [
                ("textDocument/hover", json!({})),
                ("textDocument/definition", json!({})),
                ("textDocument/completion", json!({})),
                (
                    "textDocument/references",
                    json!({"context": {"includeDeclaration": true}}),
                ),
                ("textDocument/prepareRename", json!({})),
                ("textDocument/rename", json!({"newName": "renamed"})),
            ] {
                let mut params = json!({"textDocument": {"uri": uri}, "position": position});
                for (k, v) in extra.as_object().unwrap() {
                    params[k] = v.clone();
                }
                let id = client.send_request(method, params);
                let answer = client.response(id);
                assert_ne!(
                    answer["error"]["code"], -32603,
                    "{method} on text #{version}: {answer}"
                );
            }
        }
        for method in [
            "textDocument/documentSymbol",
            "textDocument/semanticTokens/full",
            "textDocument/formatting",
        ] {
            let id = client.send_request(
                method,
                json!({"textDocument": {"uri": uri}, "options": {"tabSize": 4, "insertSpaces": true}}),
            );
            let answer = client.response(id);
            assert_ne!(
                answer["error"]["code"], -32603,
                "{method} on text #{version}: {answer}"
            );
        }
    }
    // Diagnostics of the last (empty) text still arrive, so the server is alive and current.
    client.diagnostics(&uri, |_| true);
    assert_eq!(client.stop(), 0);
}

#[test]
fn the_binary_answers_version_and_help_and_refuses_unknown_arguments() {
    let run = |arg: &str| {
        Command::new(env!("CARGO_BIN_EXE_aelc-lsp"))
            .arg(arg)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let version = run("--version");
    assert!(version.status.success());
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("aelc-lsp {}", env!("CARGO_PKG_VERSION"))
    );
    let help = run("--help");
    assert!(String::from_utf8_lossy(&help.stdout).contains("--stdio"));
    let bad = run("--port=9");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("`--port=9`"));
    // `--stdio` serves: with no input it ends at once, as a client that left without `exit`.
    assert_eq!(run("--stdio").status.code(), Some(1));
}

#[test]
fn std_opens_read_only_workspace_symbols_and_prompt_completion_is_filtered() {
    let contact = "use std::text::{Email};\n\nstruct Contact {\n    email: Email,\n}\n";
    let project = Project::with("std-symbols", &[("types/contact.ael", contact)]);
    let cache = project.dir.join("cache");
    let mut client =
        Client::initialized_with(&project, &[("XDG_CACHE_HOME", cache.to_str().unwrap())]);

    // Definition into std: a real, read-only file in the cache folder, at the declaration.
    let uri = project.uri("types/contact.ael");
    client.open(&uri, contact);
    let (line, col) = pos(contact, "Email", 1);
    let def = client.at("textDocument/definition", &uri, line, col + 1, json!({}));
    let target = def["uri"]
        .as_str()
        .unwrap()
        .strip_prefix("file://")
        .unwrap();
    let expected = cache
        .join("aelc/std")
        .join(env!("CARGO_PKG_VERSION"))
        .join("std/text.ael");
    assert_eq!(Path::new(target), expected, "{def}");
    let written = std::fs::read_to_string(&expected).unwrap();
    assert!(std::fs::metadata(&expected)
        .unwrap()
        .permissions()
        .readonly());
    let line = def["range"]["start"]["line"].as_u64().unwrap() as usize;
    assert!(
        written.lines().nth(line).unwrap().contains("type Email"),
        "{def}"
    );

    // workspace/symbol: the project's items, best match first, no std and no fields.
    let found = client.request("workspace/symbol", json!({"query": "review"}));
    let names: Vec<&str> = found
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["review", "Review", "ReviewError", "ReviewRequest"],
        "{found}"
    );
    let node = &found[0];
    assert_eq!(
        node["location"]["uri"],
        project.uri("nodes/review.node.ael")
    );
    assert_eq!(node["containerName"], "nodes::review");
    let fuzzy = client.request("workspace/symbol", json!({"query": "rvreq"}));
    assert_eq!(fuzzy[0]["name"], "ReviewRequest", "{fuzzy}");
    let std_only = client.request("workspace/symbol", json!({"query": "Email"}));
    assert_eq!(std_only, json!([]));

    // In a prompt, `request.` offers the fields of the node's request type, filtered by what
    // is typed.
    let prompt = project.uri("prompts/review.md");
    let text = "Review {{ request. }} and {{ request.d }}\n";
    client.open(&prompt, text);
    let (line, col) = pos(text, "request.", 0);
    let all = labels(&client.at("textDocument/completion", &prompt, line, col + 8, json!({})));
    assert_eq!(all, ["document", "strict"]);
    let (line, col) = pos(text, "request.d", 0);
    let typed = labels(&client.at("textDocument/completion", &prompt, line, col + 9, json!({})));
    assert_eq!(typed, ["document"]);
    assert_eq!(client.stop(), 0);
}

/// Renaming a parameter of an agent with several inputs renames that key of its examples'
/// `input` (which is keyed by parameter name); a field of the same name inside is left alone.
#[test]
fn renaming_a_parameter_of_a_several_input_agent_renames_its_example_input_key() {
    const FUSE: &str = r#"struct Frame {
    camera: u16,
}

struct Reading {
    tenths: i32,
}

struct Estimate {
    occupied: bool,
}

agent fuse(camera: Frame, reading: Reading) -> Estimate {
    inputs {
        combine: latest;
        fresh: camera 200ms, reading 10s;
    }
    return Estimate { occupied: camera.camera > 0 };
}
"#;
    const FUSED: &str = r#"{"input": {"camera": {"camera": 2}, "reading": {"tenths": 1}},
 "output": {"occupied": true}}
"#;
    let project = Project::with(
        "rename-parameter",
        &[
            ("nodes/fuse.node.ael", FUSE),
            ("examples/fuse/one.json", FUSED),
        ],
    );
    let mut client = Client::initialized(&project);
    let node = project.uri("nodes/fuse.node.ael");
    let example = project.uri("examples/fuse/one.json");
    client.open(&node, FUSE);
    let (line, col) = pos(FUSE, "camera: Frame", 0);
    let edit = client.at(
        "textDocument/rename",
        &node,
        line,
        col,
        json!({"newName": "frame"}),
    );
    assert_eq!(
        edits_in(&edit, &example),
        [as_pair(pos(FUSED, "camera", 0))],
        "{edit}"
    );
    assert_eq!(client.stop(), 0);
}

/// An example of the `review` agent: the field names appear as keys at several depths, as
/// values, and inside the model's answer, where a rename must not touch them.
const EXAMPLE: &str = r#"{
  "input": {"document": "document", "strict": true},
  "answers": ["{\"summary\": \"the document\"}"],
  "output": {"summary": "summary"}
}
"#;

#[test]
fn renaming_a_field_renames_the_keys_of_example_files_at_the_right_depth() {
    let agent = NODE.replace("node review", "agent review");
    let project = Project::with(
        "rename-examples",
        &[
            ("nodes/review.node.ael", &agent),
            ("examples/review/one.json", EXAMPLE),
            ("examples/other/two.json", EXAMPLE),
        ],
    );
    // A second agent whose examples live under a glob of their own.
    let custom = agent.replace("agent review", "agent review_too").replace(
        "    input {",
        "    publish {\n        capability: \"review.too\";\n        price: 0.01 EUR;\n        examples: \"cases/review-*.json\";\n    }\n    input {",
    );
    std::fs::write(project.dir.join("nodes/too.node.ael"), &custom).expect("node");
    std::fs::create_dir_all(project.dir.join("cases")).expect("cases");
    std::fs::write(project.dir.join("cases/review-three.json"), EXAMPLE).expect("example");
    let mut client = Client::initialized(&project);
    let common = project.uri("types/common.ael");
    let example = project.uri("examples/review/one.json");
    client.open(&common, COMMON);

    let (line, col) = pos(COMMON, "document", 0);
    let edit = client.at(
        "textDocument/rename",
        &common,
        line,
        col,
        json!({"newName": "text"}),
    );
    assert_eq!(
        edits_in(&edit, &example),
        [as_pair(pos(EXAMPLE, "document", 0))],
        "{edit}"
    );
    assert_eq!(edit["changes"][&example][0]["newText"], "text");
    // Examples under a `publish { examples }` glob of their own are followed too.
    assert_eq!(
        edits_in(&edit, &project.uri("cases/review-three.json")),
        [as_pair(pos(EXAMPLE, "document", 0))],
        "{edit}"
    );
    // A folder of no agent is not an example folder.
    assert_eq!(edits_in(&edit, &project.uri("examples/other/two.json")), []);

    let (line, col) = pos(COMMON, "summary", 0);
    let edit = client.at(
        "textDocument/rename",
        &common,
        line,
        col,
        json!({"newName": "abstract"}),
    );
    let (key_line, key_col) = pos(EXAMPLE, "\"summary\": \"summary\"", 0);
    assert_eq!(
        edits_in(&edit, &example),
        [(u64::from(key_line), u64::from(key_col) + 1)],
        "{edit}"
    );

    // Renaming the agent moves its examples folder, after the text edits.
    let node = project.uri("nodes/review.node.ael");
    client.open(&node, &agent);
    let (line, col) = pos(&agent, "agent review", 0);
    let edit = client.at(
        "textDocument/rename",
        &node,
        line,
        col + 7,
        json!({"newName": "critique"}),
    );
    let operations = edit["documentChanges"].as_array().expect("documentChanges");
    let last = operations.last().unwrap();
    assert_eq!(last["kind"], "rename", "{edit}");
    assert_eq!(last["oldUri"], project.uri("examples/review"));
    assert_eq!(last["newUri"], project.uri("examples/critique"));
    assert!(
        operations
            .iter()
            .any(|op| op["textDocument"]["uri"] == node && op["edits"][0]["newText"] == "critique"),
        "{edit}"
    );
    assert_eq!(client.stop(), 0);
}

/// `textDocument/codeAction` at a range.
fn code_actions(
    client: &mut Client,
    uri: &str,
    (line, character): (u32, u32),
    shown: &[Value],
) -> Value {
    let at = json!({"line": line, "character": character});
    client.request(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": uri},
            "range": {"start": at, "end": at},
            "context": {"diagnostics": shown}
        }),
    )
}

/// A diagnostic whose help names the fix comes with it as a quick fix: a misspelt type is
/// replaced by the one in scope (just the name), a misspelt provider in `ael.toml` by the
/// provider, in the quotes it was written with; nowhere else is anything offered.
#[test]
fn quick_fixes_replace_what_did_you_mean_names() {
    let project = Project::new("code-actions");
    let mut client = Client::initialized(&project);
    let uri = project.uri("nodes/review.node.ael");
    let typo = NODE.replacen("request: ReviewRequest", "request: ReviewRequst", 1);
    client.open(&uri, &typo);
    let shown = client.diagnostics(&uri, |d| codes(d).contains(&"E0204".to_owned()));
    let at = pos(&typo, "ReviewRequst", 0);
    let actions = code_actions(&mut client, &uri, (at.0, at.1 + 3), &shown);
    assert_eq!(actions.as_array().map(Vec::len), Some(1), "{actions}");
    let action = &actions[0];
    assert_eq!(action["kind"], "quickfix");
    assert_eq!(action["isPreferred"], true);
    assert_eq!(action["title"], "Replace with `ReviewRequest`");
    assert_eq!(action["diagnostics"][0]["code"], "E0204");
    let edit = &action["edit"]["changes"][&uri][0];
    assert_eq!(edit["newText"], "ReviewRequest");
    assert_eq!(
        edit["range"]["start"],
        json!({"line": at.0, "character": at.1})
    );
    assert_eq!(
        edit["range"]["end"],
        json!({"line": at.0, "character": at.1 + "ReviewRequst".len() as u32})
    );
    let elsewhere = code_actions(&mut client, &uri, (0, 0), &[]);
    assert_eq!(elsewhere, json!([]));

    let manifest = project.uri("ael.toml");
    let toml = MANIFEST.replace("provider = \"openai\"", "provider = \"openia\"");
    client.open(&manifest, &toml);
    client.diagnostics(&manifest, |d| codes(d).contains(&"E0607".to_owned()));
    let at = pos(&toml, "\"openia\"", 0);
    let actions = code_actions(&mut client, &manifest, at, &[]);
    let edit = &actions[0]["edit"]["changes"][&manifest][0];
    assert_eq!(edit["newText"], "\"openai\"", "{actions}");
    assert_eq!(client.stop(), 0);
}

/// Failing before sema's resolution (`sema::resolution`) replaced the LSP's syntax-level index:
/// two structs declare `name`, and the value `a` gets its type from a fn's result, which the
/// syntax alone cannot tell, so `a.name` was taken for either struct's field; a `let` without
/// a type showed no type on hover; inside `config { … }` written on one line completion
/// offered the top-level keywords instead of the block's keys.
#[test]
fn names_resolve_by_what_sema_infers_and_config_keys_complete_inline() {
    const TEAMS: &str = r#"use types::common::{ReviewRequest, Review};

struct Author {
    name: Str<100>,
}

struct Team {
    name: Str<100>,
    size: u8,
}

fn lead(t: Team) -> Author {
    Author { name: t.name }
}

fn lead_name(t: Team) -> Str<100> {
    let a = lead(t);
    a.name
}

node inline(request: ReviewRequest) -> Review {
    config { model: binding("primary_model"); }
}
"#;
    let project = Project::with("resolution", &[("nodes/teams.node.ael", TEAMS)]);
    let mut client = Client::initialized(&project);
    let uri = project.uri("nodes/teams.node.ael");
    client.open(&uri, TEAMS);

    // Team's `name`: read in `lead` only; `a.name` is Author's.
    let (line, col) = pos(TEAMS, "name", 1);
    let refs = client.at(
        "textDocument/references",
        &uri,
        line,
        col,
        json!({"context": {"includeDeclaration": false}}),
    );
    let found: Vec<(u64, u64)> = refs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let start = &r["range"]["start"];
            (
                start["line"].as_u64().unwrap(),
                start["character"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(found, [as_pair(pos(TEAMS, "t.name", 0)).add(2)], "{refs}");

    // Author's `name`: the struct literal's field and `a.name`, not `t.name`.
    let (line, col) = pos(TEAMS, "name", 0);
    let edit = client.at(
        "textDocument/rename",
        &uri,
        line,
        col,
        json!({"newName": "full_name"}),
    );
    let mut edits = edits_in(&edit, &uri);
    edits.sort();
    assert_eq!(
        edits,
        [
            as_pair(pos(TEAMS, "name", 0)),
            as_pair(pos(TEAMS, "name: t.name", 0)),
            as_pair(pos(TEAMS, "a.name", 0)).add(2),
        ],
        "{edit}"
    );

    // Hover on a `let` without a type shows the type sema inferred.
    let (line, col) = pos(TEAMS, "a.name", 0);
    let hover = client.at("textDocument/hover", &uri, line, col, json!({}));
    let shown = hover["contents"]["value"].as_str().unwrap_or("");
    assert!(shown.contains("Author"), "{hover}");

    // After `a.`: Author's fields only (Team's `size` is not one of them).
    let members = labels(&client.at("textDocument/completion", &uri, line, col + 2, json!({})));
    assert_eq!(members, ["name"], "{members:?}");

    // Inside `config { … }` on one line: the keys of `config`, no keywords.
    let (line, col) = pos(TEAMS, "config { ", 0);
    let keys = labels(&client.at("textDocument/completion", &uri, line, col + 9, json!({})));
    assert!(
        keys.contains(&"prompt".to_owned()) && keys.contains(&"timeout".to_owned()),
        "{keys:?}"
    );
    assert!(!keys.contains(&"struct".to_owned()), "{keys:?}");
    assert_eq!(client.stop(), 0);
}

/// A position moved right by `n` columns.
trait Add {
    fn add(self, n: u64) -> Self;
}

impl Add for (u64, u64) {
    fn add(self, n: u64) -> Self {
        (self.0, self.1 + n)
    }
}

/// The edit of the one quick fix offered at `at` for a diagnostic of `code`: its new text and
/// where it starts and ends.
fn one_fix(
    client: &mut Client,
    uri: &str,
    at: (u32, u32),
    code: &str,
) -> (String, (u32, u32), (u32, u32)) {
    let point = |p: &Value| {
        (
            p["line"].as_u64().unwrap_or(0) as u32,
            p["character"].as_u64().unwrap_or(0) as u32,
        )
    };
    // The diagnostics of this text: one of `code` over `at`.
    let shown = client.diagnostics(uri, |ds| {
        ds.iter().any(|d| {
            d["code"] == code
                && point(&d["range"]["start"]) <= at
                && at <= point(&d["range"]["end"])
        })
    });
    let actions = code_actions(client, uri, at, &shown);
    assert_eq!(actions.as_array().map(Vec::len), Some(1), "{actions}");
    assert_eq!(actions[0]["diagnostics"][0]["code"], code, "{actions}");
    let edit = &actions[0]["edit"]["changes"][uri][0];
    (
        edit["newText"].as_str().unwrap_or_default().to_owned(),
        point(&edit["range"]["start"]),
        point(&edit["range"]["end"]),
    )
}

/// More helps that name their fix come with it (issue 20): a misspelt binding in
/// `binding("…")` (E0212) or format in `@format("…")` (E0306) is replaced between the string's
/// quotes, a misspelt field by the one "did you mean" names (E0206), and a regex construct whose
/// portable spelling the help names is rewritten (E0307): in a raw string just the construct,
/// `\d` by `[0-9]`; in an ordinary string, whose escapes shift the bytes, the whole literal.
#[test]
fn quick_fixes_keep_string_quotes_and_rewrite_patterns() {
    let project = Project::new("code-actions-more");
    let mut client = Client::initialized(&project);
    let node = project.uri("nodes/review.node.ael");
    let typo = NODE.replacen(
        "binding(\"primary_model\")",
        "binding(\"primary_modle\")",
        1,
    );
    client.open(&node, &typo);
    let at = pos(&typo, "primary_modle", 0);
    let (text, start, end) = one_fix(&mut client, &node, at, "E0212");
    assert_eq!(text, "primary_model");
    assert_eq!(
        (start, end),
        (at, (at.0, at.1 + "primary_modle".len() as u32))
    );

    let typo = NODE.replacen("request.document.trim()", "request.documnet.trim()", 1);
    client.change_full(&node, 2, &typo);
    let at = pos(&typo, "documnet", 0);
    let (text, start, end) = one_fix(&mut client, &node, at, "E0206");
    assert_eq!(text, "document");
    assert_eq!((start, end), (at, (at.0, at.1 + "documnet".len() as u32)));

    let common = project.uri("types/common.ael");
    let raw = COMMON.replacen(
        "summary: Str<500>,",
        "summary: Str<500> @pattern(r\"^\\d+$\"),",
        1,
    );
    client.open(&common, &raw);
    let at = pos(&raw, "\\d", 0);
    let (text, start, end) = one_fix(&mut client, &common, at, "E0307");
    assert_eq!(text, "[0-9]");
    assert_eq!((start, end), (at, (at.0, at.1 + 2)));

    let plain = COMMON.replacen(
        "summary: Str<500>,",
        "summary: Str<500> @pattern(\"^\\\\w+\\\"$\"),",
        1,
    );
    client.change_full(&common, 2, &plain);
    let at = pos(&plain, "\"^", 0);
    let (text, start, end) = one_fix(&mut client, &common, at, "E0307");
    assert_eq!(text, "\"^[A-Za-z0-9_]+\\\"$\"");
    let literal = "\"^\\\\w+\\\"$\"";
    assert_eq!((start, end), (at, (at.0, at.1 + literal.len() as u32)));

    let format = COMMON.replacen(
        "summary: Str<500>,",
        "summary: Str<500> @format(\"emial\"),",
        1,
    );
    client.change_full(&common, 3, &format);
    let at = pos(&format, "emial", 0);
    let (text, start, end) = one_fix(&mut client, &common, at, "E0306");
    assert_eq!(text, "email");
    assert_eq!((start, end), (at, (at.0, at.1 + "emial".len() as u32)));
    assert_eq!(client.stop(), 0);
}

/// E0510 (several inputs, no `combine`) offers one insertion per way of combining, none
/// preferred; the first, applied, is what the checker asked for.
#[test]
fn quick_fixes_write_the_missing_combine() {
    let project = Project::new("code-actions-combine");
    let mut client = Client::initialized(&project);
    let uri = project.uri("nodes/review.node.ael");
    let two = NODE.replacen(
        "node review(request: ReviewRequest)",
        "node review(request: ReviewRequest, second: ReviewRequest)",
        1,
    );
    client.open(&uri, &two);
    let at = pos(&two, "review(", 0);
    let shown = client.diagnostics(&uri, |ds| ds.iter().any(|d| d["code"] == "E0510"));
    let actions = code_actions(&mut client, &uri, at, &shown);
    let titles: Vec<&str> = actions
        .as_array()
        .map(|a| a.iter().filter_map(|x| x["title"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        titles,
        [
            "Insert `inputs { combine: together; }`",
            "Insert `inputs { combine: latest; }`",
            "Insert `inputs { combine: zip; }`",
        ],
        "{actions}"
    );
    assert!(actions[0]["isPreferred"] == json!(false), "{actions}");
    let edit = &actions[0]["edit"]["changes"][&uri][0];
    let config = pos(&two, "config {", 0);
    assert_eq!(
        edit["range"]["start"],
        json!({"line": config.0, "character": config.1})
    );
    assert_eq!(edit["range"]["end"], edit["range"]["start"]);
    let insert = edit["newText"].as_str().unwrap_or_default();
    let fixed = two.replacen("config {", &format!("{insert}config {{"), 1);
    assert!(fixed.contains("    inputs {\n        combine: together;\n    }\n    config {"));
    client.change_full(&uri, 2, &fixed);
    let after = client.diagnostics(&uri, |_| true);
    assert!(
        after.iter().all(|d| d["code"] != "E0510"),
        "the fix leaves E0510: {after:?}"
    );
    assert_eq!(client.stop(), 0);
}
