//! Traces (issue 43): `aelc serve` and `aelc run` export their spans over OTLP/HTTP to a real
//! receiver on 127.0.0.1 that decodes every export with the official protobuf definitions
//! (the `opentelemetry-proto` crate's messages). A successful run, a repaired one (a model
//! span per attempt), a gate refusal, a delegated call, a caller's `traceparent` continued and
//! passed to the model server, `aelc run` delivering its spans before it exits, a dead
//! collector changing nothing in a run, and no secret in any span.

use super::*;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode as SpanStatus;
use prost::Message;
use std::collections::BTreeMap;

/// One decoded span, ids in hex.
#[derive(Clone, Debug)]
struct Rec {
    name: String,
    kind: i32,
    trace: String,
    id: String,
    parent: String,
    attrs: BTreeMap<String, String>,
    error: bool,
    service: String,
}

impl Rec {
    fn attr(&self, key: &str) -> &str {
        self.attrs.get(key).map_or("", String::as_str)
    }
}

/// An OTLP/HTTP receiver: every export decoded into [`Rec`]s, every raw body kept (to search
/// for secrets).
struct Receiver {
    port: u16,
    spans: Arc<Mutex<Vec<Rec>>>,
    bodies: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Receiver {
    fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the receiver");
        let port = listener.local_addr().expect("its address").port();
        let spans = Arc::new(Mutex::new(Vec::new()));
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let (s, b) = (Arc::clone(&spans), Arc::clone(&bodies));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (s, b) = (Arc::clone(&s), Arc::clone(&b));
                std::thread::spawn(move || {
                    let _ = receive(stream, &s, &b);
                });
            }
        });
        Receiver {
            port,
            spans,
            bodies,
        }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn spans(&self) -> Vec<Rec> {
        self.spans.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Waits until `done` holds of the spans received (at most 15 s), and returns them.
    fn wait_for(&self, what: &str, done: impl Fn(&[Rec]) -> bool) -> Vec<Rec> {
        let start = Instant::now();
        loop {
            let spans = self.spans();
            if done(&spans) {
                return spans;
            }
            assert!(
                start.elapsed() < Duration::from_secs(15),
                "no {what} among {:#?}",
                spans.iter().map(|s| &s.name).collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn raw(&self) -> Vec<u8> {
        self.bodies
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .concat()
    }
}

fn receive(
    mut stream: TcpStream,
    spans: &Mutex<Vec<Rec>>,
    bodies: &Mutex<Vec<Vec<u8>>>,
) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    loop {
        let mut length = 0usize;
        let mut head = String::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line)? == 0 {
                return Ok(());
            }
            let lower = line.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
            head.push_str(&line);
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0u8; length];
        reader.read_exact(&mut body)?;
        assert!(head.starts_with("POST /v1/traces "), "{head}");
        let request = ExportTraceServiceRequest::decode(body.as_slice())
            .expect("an ExportTraceServiceRequest");
        let mut out = Vec::new();
        for resource in &request.resource_spans {
            let service = resource
                .resource
                .iter()
                .flat_map(|r| &r.attributes)
                .find(|kv| kv.key == "service.name")
                .map(|kv| value(kv.value.as_ref()))
                .unwrap_or_default();
            for scope in &resource.scope_spans {
                for span in &scope.spans {
                    out.push(Rec {
                        name: span.name.clone(),
                        kind: span.kind,
                        trace: hex(&span.trace_id),
                        id: hex(&span.span_id),
                        parent: hex(&span.parent_span_id),
                        attrs: span
                            .attributes
                            .iter()
                            .map(|kv| (kv.key.clone(), value(kv.value.as_ref())))
                            .collect(),
                        error: span
                            .status
                            .as_ref()
                            .is_some_and(|s| s.code == SpanStatus::Error as i32),
                        service: service.clone(),
                    });
                }
            }
        }
        bodies.lock().unwrap_or_else(|e| e.into_inner()).push(body);
        spans.lock().unwrap_or_else(|e| e.into_inner()).extend(out);
        // An empty ExportTraceServiceResponse.
        write!(
            stream,
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n"
        )?;
        stream.flush()?;
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// An attribute's value as text (arrays joined by `,`).
fn value(v: Option<&opentelemetry_proto::tonic::common::v1::AnyValue>) -> String {
    match v.and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        Some(any_value::Value::ArrayValue(a)) => a
            .values
            .iter()
            .map(|v| value(Some(v)))
            .collect::<Vec<_>>()
            .join(","),
        _ => String::new(),
    }
}

/// The export settings of a test process: batches every 50 ms, to `endpoint`.
fn otel(endpoint: &str) -> Vec<(&'static str, String)> {
    vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.to_owned()),
        ("OTEL_SERVICE_NAME", "aelc-under-test".to_owned()),
        ("OTEL_BSP_SCHEDULE_DELAY", "50".to_owned()),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "2000".to_owned()),
    ]
}

fn post(gw: &Gateway, agent: &str, key: &str, body: &str, traceparent: Option<&str>) -> Reply {
    let mut request = http()
        .post(gw.url(&format!("/v1/agents/acme/{agent}/runs")))
        .header("authorization", &format!("Bearer {key}"))
        .header("content-type", "application/json");
    if let Some(tp) = traceparent {
        request = request.header("traceparent", tp);
    }
    let mut response = request.send(body).expect("the request");
    let text = response.body_mut().read_to_string().expect("the body");
    Reply {
        status: response.status().as_u16(),
        body: serde_json::from_str(&text).unwrap_or(Value::String(text)),
        replayed: false,
    }
}

/// The spans of one trace.
fn trace_of<'a>(spans: &'a [Rec], trace: &str) -> Vec<&'a Rec> {
    spans.iter().filter(|s| s.trace == trace).collect()
}

fn children<'a>(spans: &'a [Rec], parent: &Rec) -> Vec<&'a Rec> {
    spans.iter().filter(|s| s.parent == parent.id).collect()
}

/// The run span carrying `receipt`.
fn run_span<'a>(spans: &'a [Rec], receipt: &str) -> &'a Rec {
    spans
        .iter()
        .find(|s| s.name.starts_with("invoke_agent ") && s.attr("aelc.receipt.id") == receipt)
        .unwrap_or_else(|| panic!("no run span of {receipt}"))
}

/// The echo project plus an agent that repairs an answer twice.
fn repairing(dir: &Path) {
    let nodes = dir.join("nodes/echo.node.ael");
    let mut text = std::fs::read_to_string(&nodes).expect("the echo node");
    text.push_str(
        r#"
/// Asks its model again, twice, before it gives up.
agent patient(ask: Ask) -> Echo fails EchoError {
    config {
        prompt: file("prompts/echo.md");
        model: binding("m");
    }
    output {
        on_failure: repair(2);
    }
    publish {
        capability: "text.patient";
        price: 0.01 EUR;
    }
}
"#,
    );
    std::fs::write(&nodes, text).expect("the echo node");
}

const CALLER_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const CALLER_SPAN: &str = "b7ad6b7169203331";

#[test]
fn gateway_runs_are_traced_by_the_genai_conventions() {
    let model = FakeModel::start();
    let receiver = Receiver::start();
    let dir = temp_dir("traces");
    project(&dir, model.port);
    repairing(&dir);
    let store = sqlite_url("traces");
    let key = account(&dir, &store, "demo", "10 EUR");
    let gw = Gateway::start_with_env(&dir, &store, &[], &otel(&receiver.endpoint()));

    // -- a successful run, in the caller's trace
    let traceparent = format!("00-{CALLER_TRACE}-{CALLER_SPAN}-01");
    let ok = post(&gw, "echo", &key, &ask("[ok] hello"), Some(&traceparent));
    assert_eq!(ok.status, 200, "{}", ok.body);
    let ok_id = ok.body["receipt"]["receipt"]
        .as_str()
        .expect("an id")
        .to_owned();
    let spans = receiver.wait_for("the successful run", |s| {
        s.iter().any(|s| s.attr("aelc.receipt.id") == ok_id)
            && s.iter().any(|s| s.kind == SpanKind::Server as i32)
    });
    let run = run_span(&spans, &ok_id);
    assert_eq!(
        run.trace, CALLER_TRACE,
        "the caller's trace was not continued"
    );
    assert_eq!(run.service, "aelc-under-test");
    assert_eq!(run.name, "invoke_agent echo");
    assert_eq!(run.attr("gen_ai.operation.name"), "invoke_agent");
    assert_eq!(run.attr("aelc.agent"), "acme/echo");
    assert_eq!(run.attr("aelc.agent.version"), "0.1.0");
    assert_eq!(run.attr("aelc.node"), "echo");
    assert_eq!(run.attr("aelc.run.status"), "succeeded");
    assert!(!run.error);
    let server = spans
        .iter()
        .find(|s| s.id == run.parent)
        .expect("the run's parent");
    assert_eq!(server.kind, SpanKind::Server as i32);
    assert_eq!(
        server.parent, CALLER_SPAN,
        "the SERVER span's parent is the caller's"
    );
    assert_eq!(server.name, "POST /v1/agents/{owner}/{name}/runs");
    assert_eq!(server.attr("http.route"), "/v1/agents/{owner}/{name}/runs");
    assert_eq!(server.attr("http.request.method"), "POST");
    assert_eq!(server.attr("http.response.status_code"), "200");
    assert_eq!(server.attr("url.path"), "/v1/agents/acme/echo/runs");
    assert_eq!(server.attr("aelc.run.billed"), "0.01");
    assert_eq!(server.attr("aelc.run.currency"), "EUR");
    let gate = trace_of(&spans, CALLER_TRACE)
        .into_iter()
        .find(|s| s.name == "gate echo")
        .expect("the gate's span");
    assert_eq!(gate.attr("aelc.gate.outcome"), "admitted");
    let chats = children(&spans, run);
    assert_eq!(chats.len(), 1, "{chats:#?}");
    let chat = chats[0];
    assert_eq!(chat.name, "chat fake");
    assert_eq!(chat.kind, SpanKind::Client as i32);
    for (k, v) in [
        ("gen_ai.operation.name", "chat"),
        ("gen_ai.provider.name", "openai"),
        ("gen_ai.request.model", "fake"),
        ("gen_ai.response.id", "c"),
        ("gen_ai.response.finish_reasons", "stop"),
        ("gen_ai.usage.input_tokens", "20"),
        ("gen_ai.usage.output_tokens", "5"),
        ("aelc.attempt", "1"),
    ] {
        assert_eq!(chat.attr(k), v, "{k} of {chat:#?}");
    }
    assert!(chat
        .attr("gen_ai.request.max_tokens")
        .parse::<u32>()
        .is_ok());
    assert_eq!(chat.attr("aelc.acceptance.step"), "");
    // The model server saw the attempt's span as its parent.
    let seen = model.traceparents.lock().expect("traceparents").clone();
    assert_eq!(seen, vec![format!("00-{CALLER_TRACE}-{}-01", chat.id)]);

    // -- a repaired run: one CLIENT span per attempt, each with the step that refused it
    let bad = post(&gw, "patient", &key, &ask("[bad] hello"), None);
    assert_eq!(bad.status, 502, "{}", bad.body);
    let bad_id = bad.body["receipt"]["receipt"]
        .as_str()
        .expect("an id")
        .to_owned();
    let attempts = bad.body["receipt"]["attempts"]
        .as_array()
        .expect("attempts")
        .len();
    assert_eq!(attempts, 3, "two repairs were not made: {}", bad.body);
    let spans = receiver.wait_for("the repaired run", |s| {
        s.iter().any(|s| s.attr("aelc.receipt.id") == bad_id)
            && s.iter()
                .filter(|s| s.kind == SpanKind::Server as i32)
                .count()
                >= 2
    });
    let run = run_span(&spans, &bad_id);
    assert!(run.error, "an invalid_output run is an ERROR span");
    assert_eq!(run.attr("aelc.run.status"), "invalid_output");
    assert_eq!(run.attr("aelc.run.code"), "invalid_output");
    let chats = children(&spans, run);
    assert_eq!(chats.len(), attempts, "{chats:#?}");
    let mut numbers: Vec<&str> = chats.iter().map(|c| c.attr("aelc.attempt")).collect();
    numbers.sort();
    assert_eq!(numbers[0], "1");
    for chat in &chats {
        assert_eq!(chat.attr("aelc.acceptance.step"), "2", "{chat:#?}");
        assert!(!chat.attr("aelc.acceptance.code").is_empty());
    }
    let server = spans
        .iter()
        .find(|s| s.id == run.parent)
        .expect("its SERVER span");
    assert!(server.error, "a 502 is an ERROR SERVER span");

    // -- a gate refusal: its own span, the decoder's error count, no model span, no run
    let before = model.calls();
    let refused = post(
        &gw,
        "echo",
        &key,
        r#"{"text": "[ok] hi", "extra": 1, "more": 2}"#,
        None,
    );
    assert_eq!(refused.status, 422, "{}", refused.body);
    let refused_id = refused.body["receipt"]["receipt"]
        .as_str()
        .expect("an id")
        .to_owned();
    let spans = receiver.wait_for("the gate refusal", |s| {
        s.iter().any(|s| s.attr("aelc.receipt.id") == refused_id)
    });
    let gate = spans
        .iter()
        .find(|s| s.attr("aelc.receipt.id") == refused_id)
        .expect("the gate span");
    assert_eq!(gate.name, "gate echo");
    assert_eq!(gate.attr("aelc.gate.outcome"), "refused");
    assert_eq!(gate.attr("aelc.gate.errors"), "2");
    assert_eq!(gate.attr("aelc.run.status"), "rejected_input");
    let in_trace = trace_of(&spans, &gate.trace);
    assert!(
        in_trace
            .iter()
            .all(|s| !s.name.starts_with("chat ") && !s.name.starts_with("invoke_agent ")),
        "{in_trace:#?}"
    );
    assert_eq!(model.calls(), before);

    // -- a delegated call: the callee's run is a child of the caller's
    let piped = post(&gw, "pipeline", &key, &ask("[ok] through"), None);
    assert_eq!(piped.status, 200, "{}", piped.body);
    let piped_id = piped.body["receipt"]["receipt"]
        .as_str()
        .expect("an id")
        .to_owned();
    let spans = receiver.wait_for("the delegated call", |s| {
        s.iter().any(|s| s.attr("aelc.receipt.id") == piped_id)
    });
    let outer = run_span(&spans, &piped_id);
    assert_eq!(outer.name, "invoke_agent pipeline");
    let inner = children(&spans, outer);
    assert_eq!(inner.len(), 1, "{inner:#?}");
    assert_eq!(inner[0].name, "invoke_agent echo");
    assert_eq!(
        inner[0].attr("aelc.receipt.id"),
        piped.body["receipt"]["delegated"][0]["receipt"]
            .as_str()
            .expect("the delegated receipt")
    );
    let chats = children(&spans, inner[0]);
    assert_eq!(chats.len(), 1);
    assert_eq!(chats[0].name, "chat fake");

    // -- no secret and no content in any span
    let raw = String::from_utf8_lossy(&receiver.raw()).into_owned();
    for secret in [key.as_str(), "test-key", "hello", "through", "echoed"] {
        assert!(!raw.contains(secret), "`{secret}` was exported");
    }
    gw.kill();
}

#[test]
fn a_dead_collector_changes_nothing_and_is_counted() {
    let model = FakeModel::start();
    let dir = temp_dir("traces-dead");
    project(&dir, model.port);
    let store = sqlite_url("traces-dead");
    let key = account(&dir, &store, "demo", "10 EUR");
    // A port nothing listens on.
    let dead = {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let gw = Gateway::start_with_env(
        &dir,
        &store,
        &[],
        &otel(&format!("http://127.0.0.1:{dead}")),
    );
    let plain = Gateway::start(&dir, &store, &[]);
    for text in ["[ok] one", "[bad] two"] {
        let traced = post(&gw, "echo", &key, &ask(text), None);
        let untraced = post(&plain, "echo", &key, &ask(text), None);
        assert_eq!(traced.status, untraced.status, "{}", traced.body);
        for field in ["status", "code", "output"] {
            assert_eq!(traced.body[field], untraced.body[field], "{field}");
        }
        let (a, b) = (&traced.body["receipt"], &untraced.body["receipt"]);
        for field in [
            "status",
            "code",
            "cost",
            "spent",
            "reserved",
            "attempts",
            "input_sha256",
        ] {
            assert_eq!(a[field], b[field], "receipt {field}");
        }
    }
    // The spans that could not be delivered are counted in /metrics.
    let start = Instant::now();
    loop {
        let (status, text) = get(&gw, "/metrics", None);
        assert_eq!(status, 200);
        let failed = text
            .lines()
            .find(|l| l.starts_with("aelc_trace_spans_dropped_total{reason=\"export_failed\"}"))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0);
        if failed > 0 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "no dropped spans counted:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    gw.kill();

    // A collector that takes the connection and never answers, and a batch queue of one
    // span: the run is as quick as ever, and the spans past the queue are dropped and counted.
    let hole = TcpListener::bind("127.0.0.1:0").expect("bind the black hole");
    let hole_port = hole.local_addr().expect("its address").port();
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&held);
    std::thread::spawn(move || {
        for stream in hole.incoming().flatten() {
            keep.lock().unwrap_or_else(|e| e.into_inner()).push(stream);
        }
    });
    let mut env = otel(&format!("http://127.0.0.1:{hole_port}"));
    env.retain(|(k, _)| *k != "OTEL_EXPORTER_OTLP_TIMEOUT");
    env.push(("OTEL_EXPORTER_OTLP_TIMEOUT", "20000".to_owned()));
    env.push(("OTEL_BSP_MAX_QUEUE_SIZE", "1".to_owned()));
    let stuck = Gateway::start_with_env(&dir, &store, &[], &env);
    let began = Instant::now();
    let traced = post(&stuck, "echo", &key, &ask("[ok] three"), None);
    let untraced = post(&plain, "echo", &key, &ask("[ok] three"), None);
    assert_eq!(traced.status, 200, "{}", traced.body);
    assert_eq!(traced.body["output"], untraced.body["output"]);
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "a hanging collector slowed the run"
    );
    // One export hangs with the first span, the queue holds one more: of the request's four
    // spans (request, gate, run, attempt) at least two are dropped.
    let (status, text) = get(&stuck, "/metrics", None);
    assert_eq!(status, 200);
    let full = text
        .lines()
        .find(|l| l.starts_with("aelc_trace_spans_dropped_total{reason=\"queue_full\"}"))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(0);
    assert!(full >= 2, "queue_full {full}:\n{text}");
    stuck.kill();
    plain.kill();
}

#[test]
fn aelc_run_delivers_its_spans_before_it_exits() {
    let model = FakeModel::start();
    let receiver = Receiver::start();
    let dir = temp_dir("traces-run");
    project(&dir, model.port);
    std::fs::write(dir.join("in.json"), ask("[ok] cli")).expect("the input");
    let mut env = otel(&receiver.endpoint());
    // Batches would wait a minute: only the flush at exit can deliver them.
    env.retain(|(k, _)| *k != "OTEL_BSP_SCHEDULE_DELAY");
    env.push(("OTEL_BSP_SCHEDULE_DELAY", "60000".to_owned()));
    let out = Command::new(AELC)
        .args(["run", "echo", "--input", "in.json"])
        .current_dir(&dir)
        .env("AELC_FAKE_KEY", "test-key")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("aelc run");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Everything arrived by the time the process ended: no waiting here.
    let spans = receiver.spans();
    let root = spans
        .iter()
        .find(|s| s.name == "aelc run")
        .unwrap_or_else(|| panic!("no root span in {spans:#?}"));
    assert_eq!(root.parent, "");
    let names: Vec<&str> = trace_of(&spans, &root.trace)
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    for name in ["gate echo", "invoke_agent echo", "chat fake"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    // The model server got the trace too.
    let seen = model.traceparents.lock().expect("traceparents").clone();
    assert_eq!(seen.len(), 1);
    assert!(
        seen[0].starts_with(&format!("00-{}-", root.trace)),
        "{seen:?}"
    );

    // Without the opt-in no span holds the prompt or the answer; with it, the attempt does.
    let chat = spans
        .iter()
        .find(|s| s.name == "chat fake")
        .expect("the attempt");
    assert_eq!(chat.attr("gen_ai.input.messages"), "");
    assert_eq!(chat.attr("gen_ai.output.messages"), "");
    let out = Command::new(AELC)
        .args(["run", "echo", "--input", "in.json"])
        .current_dir(&dir)
        .env("AELC_FAKE_KEY", "test-key")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .env("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
        .output()
        .expect("aelc run");
    assert!(out.status.success());
    let captured: Vec<Rec> = receiver
        .spans()
        .into_iter()
        .filter(|s| s.name == "chat fake" && s.trace != root.trace)
        .collect();
    assert_eq!(captured.len(), 1, "{captured:#?}");
    let input: Value =
        serde_json::from_str(captured[0].attr("gen_ai.input.messages")).expect("JSON messages");
    assert_eq!(input[0]["role"], "user");
    assert!(input[0]["parts"][0]["content"]
        .as_str()
        .is_some_and(|t| t.contains("[ok] cli")));
    assert!(captured[0]
        .attr("gen_ai.output.messages")
        .contains("echoed"));
    assert!(!String::from_utf8_lossy(&receiver.raw()).contains("test-key"));

    // Disabled (either way): nothing is sent, and the model call carries no trace context.
    for (name, value) in [
        ("OTEL_SDK_DISABLED", "true"),
        ("OTEL_TRACES_EXPORTER", "none"),
    ] {
        let before = receiver.spans().len();
        let out = Command::new(AELC)
            .args(["run", "echo", "--input", "in.json"])
            .current_dir(&dir)
            .env("AELC_FAKE_KEY", "test-key")
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .env(name, value)
            .output()
            .expect("aelc run");
        assert!(out.status.success());
        assert_eq!(receiver.spans().len(), before, "{name}={value} exported");
        let seen = model.traceparents.lock().expect("traceparents").clone();
        assert_eq!(seen.last().map(String::as_str), Some(""), "{name}={value}");
    }
}

#[test]
fn mcp_tool_calls_are_spans_over_their_runs() {
    if mcp_python().is_none() {
        return;
    }
    let receiver = Receiver::start();
    // The session of `mcp_session_with_out_of_band_approval`, its server exporting.
    mcp_session_traced("oob", &otel(&receiver.endpoint()));
    // `aelc mcp` flushed its spans as it exited.
    let spans = receiver.spans();
    let tools: Vec<&Rec> = spans
        .iter()
        .filter(|s| s.attr("gen_ai.operation.name") == "execute_tool")
        .collect();
    for tool in [
        "search_agents",
        "get_agent",
        "call_agent",
        "get_budget",
        "get_receipt",
    ] {
        assert!(
            tools
                .iter()
                .any(|s| s.name == format!("execute_tool {tool}")
                    && s.attr("gen_ai.tool.name") == tool),
            "no span of {tool} among {:?}",
            tools.iter().map(|s| &s.name).collect::<Vec<_>>()
        );
    }
    // A call that ran: its gate and run are children of the tool call, its attempt below.
    let run = spans
        .iter()
        .find(|s| s.name == "invoke_agent echo" && s.attr("aelc.run.status") == "succeeded")
        .expect("a run of echo");
    let tool = spans
        .iter()
        .find(|s| s.id == run.parent)
        .expect("the run's parent");
    assert_eq!(tool.name, "execute_tool call_agent");
    assert!(children(&spans, run).iter().any(|s| s.name == "chat fake"));
    // A refused call (the mandate denies it) is an ERROR tool span with no run under it.
    assert!(tools
        .iter()
        .any(|s| s.name == "execute_tool call_agent" && s.error && children(&spans, s).is_empty()));
}
