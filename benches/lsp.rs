//! Time from `didChange` to `publishDiagnostics` on a generated 5,000-line project.
//!
//! The server runs in-process on the same event loop as `aelc-lsp` ([`aelc::lsp::server::serve`])
//! with its transport over in-memory pipes, so the figure is the server's own work (apply the
//! edit, re-check the whole project, convert and encode diagnostics), not process start-up.
//! Each round changes one module (alternating between a broken and a fixed version, so the
//! diagnostics really change) and waits for the notification carrying that version.
//!
//! Run: `cargo bench --bench lsp` (`AELC_LSP_BENCH_ROUNDS=N` for more or fewer rounds).
//! Target: under 30 ms.
//!
//! Paired against another build: `AELC_LSP_BINARY=new/aelc-lsp AELC_LSP_BASELINE=old/aelc-lsp
//! cargo bench --bench lsp` starts both servers as processes on the same project and times
//! their rounds alternately (A B A B), so both see the same machine load; it prints each
//! one's median and the median of the per-pair ratios.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

use aelc::driver::{check_path, DiskWorld};
use aelc::lsp::{analysis::Analysis, server, transport::Transport};
use serde_json::{json, Value};

/// A `Read` fed by a channel of byte chunks.
struct PipeReader {
    chunks: Receiver<Vec<u8>>,
    current: Vec<u8>,
    at: usize,
}

impl Read for PipeReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at >= self.current.len() {
            match self.chunks.recv() {
                Ok(chunk) => {
                    self.current = chunk;
                    self.at = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len() - self.at);
        buf[..n].copy_from_slice(&self.current[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// A `Write` that sends complete frames' bytes to a channel.
struct PipeWriter(Sender<Vec<u8>>);

impl Write for PipeWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.send(buf.to_vec()).map_err(io::Error::other)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Reassembles frames from the writer's chunks.
struct Frames {
    chunks: Receiver<Vec<u8>>,
    buffer: Vec<u8>,
}

impl Frames {
    fn next(&mut self) -> Value {
        loop {
            if let Some(end) = find(&self.buffer, b"\r\n\r\n") {
                let header = String::from_utf8_lossy(&self.buffer[..end]).to_string();
                let length: usize = header
                    .lines()
                    .find_map(|l| l.strip_prefix("Content-Length: "))
                    .and_then(|v| v.trim().parse().ok())
                    .expect("a Content-Length");
                let start = end + 4;
                if self.buffer.len() >= start + length {
                    let body = self.buffer[start..start + length].to_vec();
                    self.buffer.drain(..start + length);
                    return serde_json::from_slice(&body).expect("JSON");
                }
            }
            let chunk = self
                .chunks
                .recv_timeout(Duration::from_secs(120))
                .expect("the server answers");
            self.buffer.extend(chunk);
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn frame(message: &Value) -> Vec<u8> {
    let body = message.to_string();
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// One module of about 500 lines: structs, an errors set, checks, fns and a node.
fn module(n: usize) -> String {
    let mut text = format!("//! Generated module {n}.\n\n");
    for s in 0..20 {
        text.push_str(&format!(
            "/// Struct {s} of module {n}.\nstruct Record{n}x{s} {{\n"
        ));
        for f in 0..15 {
            text.push_str(&format!(
                "    /// Field {f}.\n    field_{f}: Str<{}>,\n",
                100 + f
            ));
        }
        text.push_str("}\n\n");
    }
    text.push_str(&format!(
        "errors Failure{n} {{\n    empty,\n    too_long,\n}}\n\n"
    ));
    for c in 0..6 {
        text.push_str(&format!(
            "check rule_{n}_{c}(input: Record{n}x{c}) fails Failure{n} {{\n    require input.field_0.trim().len() > 0 else empty \"blank\";\n    require input.field_1.len() <= 50 else too_long;\n}}\n\n"
        ));
    }
    text.push_str(&format!(
        "node work_{n}(input: Record{n}x0) -> Record{n}x1 fails Failure{n} {{\n    config {{\n        timeout: 30s;\n    }}\n    input {{\n        check rule_{n}_0;\n    }}\n}}\n"
    ));
    text
}

fn write_project(dir: &Path) -> (PathBuf, String, usize) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("modules")).unwrap();
    std::fs::write(
        dir.join("ael.toml"),
        "[package]\nname = \"bench/lsp\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    let mut lines = 0;
    let mut first = None;
    for n in 0..10 {
        let text = module(n);
        lines += text.lines().count();
        let path = dir.join(format!("modules/m{n}.ael"));
        std::fs::write(&path, &text).unwrap();
        first.get_or_insert((path, text));
    }
    let (path, text) = first.unwrap();
    (path, text, lines)
}

// The allocator the `aelc` binaries ship with, so that the figures are theirs.
aelc::ship_allocator!();

fn main() {
    aelc::allocator::configure();
    let rounds: usize = std::env::var("AELC_LSP_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let dir = std::env::temp_dir().join(format!("aelc-lsp-bench-{}", std::process::id()));
    let (path, text, lines) = write_project(&dir);
    if let (Ok(binary), Ok(baseline)) = (
        std::env::var("AELC_LSP_BINARY"),
        std::env::var("AELC_LSP_BASELINE"),
    ) {
        paired(&binary, &baseline, &path, &text, lines, rounds);
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let uri = format!("file://{}", path.display());

    let (to_server, server_input) = mpsc::channel();
    let (server_output, from_server) = mpsc::channel();
    let reader = PipeReader {
        chunks: server_input,
        current: Vec::new(),
        at: 0,
    };
    let handle = std::thread::spawn(move || {
        let transport = Transport::new(reader, PipeWriter(server_output)).unwrap();
        server::serve(transport)
    });
    let mut frames = Frames {
        chunks: from_server,
        buffer: Vec::new(),
    };
    let send = |m: Value| to_server.send(frame(&m)).unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}),
    );
    while frames.next().get("id") != Some(&json!(1)) {}
    send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    send(
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "ael", "version": 1, "text": text}}}),
    );
    let wait_for = |frames: &mut Frames, version: i64| loop {
        let m = frames.next();
        if m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == uri
            && m["params"]["version"] == version
        {
            return m["params"]["diagnostics"].as_array().map_or(0, Vec::len);
        }
    };
    wait_for(&mut frames, 1);

    let broken = text.replacen("field_0: Str<100>,", "field_0: Str<100>,,", 1);
    let mut times = Vec::with_capacity(rounds);
    let mut counts = (0, 0);
    for round in 0..rounds {
        let version = round as i64 + 2;
        let body = if round % 2 == 0 { &broken } else { &text };
        let started = Instant::now();
        send(
            json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"text": body}]}}),
        );
        let count = wait_for(&mut frames, version);
        times.push(started.elapsed());
        if round % 2 == 0 {
            counts.0 = count;
        } else {
            counts.1 = count;
        }
    }
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}));
    send(json!({"jsonrpc": "2.0", "method": "exit"}));
    let _ = handle.join();

    // Baselines in the same run, on the same project: the batch compiler alone, and the
    // server's analysis (the compiler recording its resolution, and the publishing rules); the
    // rest of the figure above is the overlay, diagnostics conversion and JSON-RPC.
    let mut check = Vec::with_capacity(rounds);
    let mut analysis = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let started = Instant::now();
        let compilation = check_path(&DiskWorld, &dir).expect("the project reads");
        check.push(started.elapsed());
        assert!(!compilation.files.is_empty());
        let started = Instant::now();
        let computed = Analysis::compute(&DiskWorld, &dir);
        analysis.push(started.elapsed());
        assert!(!computed.resolution.definitions.is_empty());
    }
    let _ = std::fs::remove_dir_all(&dir);
    check.sort();
    analysis.sort();

    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = times[times.len() / 2];
    let p95 = times[(times.len() * 95 / 100).min(times.len() - 1)];
    println!(
        "lsp didChange → publishDiagnostics, {lines} lines in 10 modules, {rounds} rounds: \
         min {:.2} ms, median {:.2} ms, p95 {:.2} ms, max {:.2} ms (target < 30 ms; \
         {} diagnostics when broken, {} when fixed)",
        ms(times[0]),
        ms(median),
        ms(p95),
        ms(times[times.len() - 1]),
        counts.0,
        counts.1,
    );
    println!(
        "baseline, same project: driver::check_path median {:.2} ms; Analysis::compute \
         (check recording the resolution) median {:.2} ms",
        ms(check[check.len() / 2]),
        ms(analysis[analysis.len() / 2]),
    );
}

/// One language server running as a process, its answers read on a thread of their own.
struct Server {
    child: std::process::Child,
    input: std::process::ChildStdin,
    frames: Frames,
    uri: String,
    version: i64,
}

impl Server {
    fn start(binary: &str, path: &Path, text: &str) -> Server {
        let mut child = std::process::Command::new(binary)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{binary} starts: {e}"));
        let input = child.stdin.take().expect("a piped stdin");
        let mut output = child.stdout.take().expect("a piped stdout");
        let (sender, chunks) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buffer = vec![0; 64 * 1024];
            while let Ok(n @ 1..) = output.read(&mut buffer) {
                if sender.send(buffer[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let mut server = Server {
            child,
            input,
            frames: Frames {
                chunks,
                buffer: Vec::new(),
            },
            uri: format!("file://{}", path.display()),
            version: 1,
        };
        server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"capabilities": {}}}));
        while server.frames.next().get("id") != Some(&json!(1)) {}
        server.send(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
        let uri = server.uri.clone();
        server.send(
            &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "ael", "version": 1, "text": text}}}),
        );
        server.wait_for(1);
        server
    }

    fn send(&mut self, message: &Value) {
        self.input
            .write_all(&frame(message))
            .expect("the server reads");
        self.input.flush().expect("the server reads");
    }

    fn wait_for(&mut self, version: i64) -> usize {
        loop {
            let m = self.frames.next();
            if m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == self.uri.as_str()
                && m["params"]["version"] == version
            {
                return m["params"]["diagnostics"].as_array().map_or(0, Vec::len);
            }
        }
    }

    /// One didChange to `text`, timed until its diagnostics arrive.
    fn change(&mut self, text: &str) -> (Duration, usize) {
        self.version += 1;
        let version = self.version;
        let uri = self.uri.clone();
        let started = Instant::now();
        self.send(
            &json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"text": text}]}}),
        );
        let count = self.wait_for(version);
        (started.elapsed(), count)
    }

    fn stop(mut self) {
        self.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}));
        self.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
        let _ = self.child.wait();
    }
}

/// `binary` against `baseline`, alternating rounds on the same project.
fn paired(binary: &str, baseline: &str, path: &Path, text: &str, lines: usize, rounds: usize) {
    let mut new = Server::start(binary, path, text);
    let mut old = Server::start(baseline, path, text);
    let broken = text.replacen("field_0: Str<100>,", "field_0: Str<100>,,", 1);
    let (mut a, mut b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let body = if round % 2 == 0 { &broken } else { text };
        let (t_new, n_new) = new.change(body);
        let (t_old, n_old) = old.change(body);
        assert_eq!(
            n_new, n_old,
            "both servers report the same number of diagnostics"
        );
        ratios.push(t_new.as_secs_f64() / t_old.as_secs_f64());
        a.push(t_new);
        b.push(t_old);
    }
    new.stop();
    old.stop();
    a.sort();
    b.sort();
    ratios.sort_by(f64::total_cmp);
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "lsp didChange → publishDiagnostics, {lines} lines in 10 modules, {rounds} paired rounds: \
         new median {:.2} ms (p95 {:.2}), baseline median {:.2} ms (p95 {:.2}); \
         new/baseline median of paired ratios {:.3} (min {:.3}, max {:.3})",
        ms(a[a.len() / 2]),
        ms(a[(a.len() * 95 / 100).min(a.len() - 1)]),
        ms(b[b.len() / 2]),
        ms(b[(b.len() * 95 / 100).min(b.len() - 1)]),
        ratios[ratios.len() / 2],
        ratios[0],
        ratios[ratios.len() - 1],
    );
}
