//! Traces (issue 43): `aelc serve`, `aelc run`, `aelc test` and `/mcp` export their spans over
//! OTLP/HTTP to a real receiver on 127.0.0.1 that decodes every export: protobuf with the
//! official definitions (the `opentelemetry-proto` crate's messages), JSON by the OTLP JSON
//! mapping (hex ids, integer enums, `intValue` as a string), read here field by field so the
//! exporter's own serializer is not what checks it. A successful run, a repaired one (a model
//! span per attempt), a gate refusal, a delegated call, a caller's `traceparent` and
//! `tracestate` continued and passed to the model server, sessions and streams (spans per
//! observation batch, the live route's own refusals), `aelc run` and `aelc test` delivering
//! their spans before they exit, the Anthropic and Gemini answers' attributes, `http/json`,
//! the export headers, the samplers, `/mcp` continuing its caller's trace, a dead collector
//! changing nothing in a run, and no secret in any span.

use super::*;
use crate::run::provider_server;

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

/// What a receiver has got: the spans decoded, each export's raw body (to search for
/// secrets) and its request head (lower-cased).
#[derive(Default)]
struct Got {
    spans: Mutex<Vec<Rec>>,
    bodies: Mutex<Vec<Vec<u8>>>,
    heads: Mutex<Vec<String>>,
}

/// An OTLP/HTTP receiver: every export decoded into [`Rec`]s, protobuf or JSON by its
/// `content-type`.
struct Receiver {
    port: u16,
    got: Arc<Got>,
}

impl Receiver {
    fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the receiver");
        let port = listener.local_addr().expect("its address").port();
        let got = Arc::new(Got::default());
        let shared = Arc::clone(&got);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let got = Arc::clone(&shared);
                std::thread::spawn(move || {
                    let _ = receive(stream, &got);
                });
            }
        });
        Receiver { port, got }
    }

    /// The request heads of the exports so far, lower-cased.
    fn heads(&self) -> Vec<String> {
        self.got
            .heads
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn spans(&self) -> Vec<Rec> {
        self.got
            .spans
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
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
        self.got
            .bodies
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .concat()
    }
}

fn receive(mut stream: TcpStream, got: &Got) -> std::io::Result<()> {
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
            head.push_str(&lower);
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0u8; length];
        reader.read_exact(&mut body)?;
        assert!(head.starts_with("post /v1/traces "), "{head}");
        let json = head.contains("\r\ncontent-type: application/json");
        let out = if json {
            decode_json(&body)
        } else {
            assert!(
                head.contains("\r\ncontent-type: application/x-protobuf"),
                "{head}"
            );
            decode_protobuf(&body)
        };
        got.bodies
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(body);
        got.heads
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(head);
        got.spans
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(out);
        // An empty ExportTraceServiceResponse.
        let (kind, answer) = if json {
            ("application/json", "{}")
        } else {
            ("application/x-protobuf", "")
        };
        write!(
            stream,
            "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n{answer}",
            answer.len()
        )?;
        stream.flush()?;
    }
}

/// An export in protobuf, by the official messages.
fn decode_protobuf(body: &[u8]) -> Vec<Rec> {
    let request = ExportTraceServiceRequest::decode(body).expect("an ExportTraceServiceRequest");
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
    out
}

/// An export in JSON, by the OTLP JSON mapping: lowerCamelCase fields, trace and span ids as
/// hex (not base64), enums as integers, 64-bit integers as strings (or numbers). Any other
/// shape fails the test.
fn decode_json(body: &[u8]) -> Vec<Rec> {
    let request: Value = serde_json::from_slice(body).expect("an export in JSON");
    let id = |v: &Value, len: usize| -> String {
        let text = v.as_str().unwrap_or("");
        assert!(
            text.is_empty() || (text.len() == len && text.bytes().all(|b| b.is_ascii_hexdigit())),
            "not a hex id of {len} digits: {v}"
        );
        text.to_ascii_lowercase()
    };
    let mut out = Vec::new();
    for resource in request["resourceSpans"].as_array().expect("resourceSpans") {
        let service = json_attributes(&resource["resource"]["attributes"])
            .remove("service.name")
            .unwrap_or_default();
        for scope in resource["scopeSpans"].as_array().expect("scopeSpans") {
            for span in scope["spans"].as_array().expect("spans") {
                let kind = span["kind"].as_i64().expect("kind, an integer");
                out.push(Rec {
                    name: span["name"].as_str().expect("a name").to_owned(),
                    kind: i32::try_from(kind).expect("a kind"),
                    trace: id(&span["traceId"], 32),
                    id: id(&span["spanId"], 16),
                    parent: id(&span["parentSpanId"], 16),
                    attrs: json_attributes(&span["attributes"]),
                    error: span["status"]["code"].as_i64() == Some(SpanStatus::Error as i64),
                    service: service.clone(),
                });
            }
        }
    }
    out
}

/// Key-values in JSON (`[{"key", "value": {"stringValue" | "intValue" | …}}]`) as text.
fn json_attributes(list: &Value) -> BTreeMap<String, String> {
    fn text(v: &Value) -> String {
        if let Some(s) = v.get("stringValue").and_then(Value::as_str) {
            return s.to_owned();
        }
        if let Some(i) = v.get("intValue") {
            // proto3 JSON writes an int64 as a string; a number is accepted too.
            return match i {
                Value::String(s) => s.parse::<i64>().expect("an intValue").to_string(),
                other => other.as_i64().expect("an intValue").to_string(),
            };
        }
        if let Some(b) = v.get("boolValue").and_then(Value::as_bool) {
            return b.to_string();
        }
        if let Some(d) = v.get("doubleValue").and_then(Value::as_f64) {
            return d.to_string();
        }
        if let Some(values) = v.get("arrayValue").and_then(|a| a["values"].as_array()) {
            return values.iter().map(text).collect::<Vec<_>>().join(",");
        }
        panic!("an AnyValue of no known kind: {v}")
    }
    list.as_array()
        .into_iter()
        .flatten()
        .map(|kv| {
            let key = kv["key"].as_str().expect("a key").to_owned();
            (key, text(&kv["value"]))
        })
        .collect()
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
/// A caller's vendor entries, passed on as they came.
const CALLER_STATE: &str = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";

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
    let ok = post_agent(
        &gw,
        "echo",
        &key,
        &ask("[ok] hello"),
        &[
            ("traceparent", traceparent.as_str()),
            ("tracestate", CALLER_STATE),
        ],
    );
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
    // The model server saw the attempt's span as its parent, and the caller's trace state.
    let seen = model.traceparents.lock().expect("traceparents").clone();
    assert_eq!(seen, vec![format!("00-{CALLER_TRACE}-{}-01", chat.id)]);
    let states = model.tracestates.lock().expect("tracestates").clone();
    assert_eq!(states, vec![CALLER_STATE.to_owned()]);
    // The server it called, from the binding's base URL.
    assert_eq!(chat.attr("server.address"), "127.0.0.1");
    assert_eq!(chat.attr("server.port"), model.port.to_string());

    // -- a repaired run: one CLIENT span per attempt, each with the step that refused it
    let bad = post_agent(&gw, "patient", &key, &ask("[bad] hello"), &[]);
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
    let refused = post_agent(
        &gw,
        "echo",
        &key,
        r#"{"text": "[ok] hi", "extra": 1, "more": 2}"#,
        &[],
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
    let piped = post_agent(&gw, "pipeline", &key, &ask("[ok] through"), &[]);
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
        let traced = post_agent(&gw, "echo", &key, &ask(text), &[]);
        let untraced = post_agent(&plain, "echo", &key, &ask(text), &[]);
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
    let traced = post_agent(&stuck, "echo", &key, &ask("[ok] three"), &[]);
    let untraced = post_agent(&plain, "echo", &key, &ask("[ok] three"), &[]);
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

/// `traceparent` of the caller's span in `trace`, sampled or not.
fn parent_in(trace: &str, sampled: bool) -> String {
    format!(
        "00-{trace}-{CALLER_SPAN}-{}",
        if sampled { "01" } else { "00" }
    )
}

#[test]
fn sessions_and_streams_make_spans_per_observation_batch() {
    let model = FakeModel::start();
    let receiver = Receiver::start();
    let dir = temp_dir("traces-live");
    live_project(&dir, model.port);
    let store = sqlite_url("traces-live");
    let key = account(&dir, &store, "demo", "5 EUR");
    let gw = Gateway::start_with_env(&dir, &store, &[], &otel(&receiver.endpoint()));
    let observation = |input: &str, ms: i64, value: Value| {
        json!({"input": input, "at": at(ms), "value": value}).to_string() + "\n"
    };

    // -- a session: a stale frame (refused by the live route itself), then two batches that
    //    combine and run, all under the request's one SERVER span
    let session = [
        observation("camera", -5000, json!({"people": 2})),
        observation("reading", 0, json!({"tenths": 215})),
        observation("camera", 0, json!({"people": 0})),
        observation("camera", 0, json!({"people": 3})),
    ]
    .concat();
    let caller = parent_in(CALLER_TRACE, true);
    let r = post_agent(&gw, "fuse", &key, &session, &[("traceparent", &caller)]);
    assert_eq!(r.status, 200, "{}", r.body);
    let ids: Vec<String> = r.body["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|run| {
            run["receipt"]["receipt"]
                .as_str()
                .expect("an id")
                .to_owned()
        })
        .collect();
    assert_eq!(ids.len(), 3, "{}", r.body);
    let spans = receiver.wait_for("the session's spans", |s| {
        ids.iter()
            .all(|id| s.iter().any(|s| s.attr("aelc.receipt.id") == id))
            && s.iter()
                .any(|s| s.kind == SpanKind::Server as i32 && s.trace == CALLER_TRACE)
    });
    let server = spans
        .iter()
        .find(|s| s.kind == SpanKind::Server as i32 && s.trace == CALLER_TRACE)
        .expect("the request's span");
    let stale = spans
        .iter()
        .find(|s| s.attr("aelc.receipt.id") == ids[0])
        .expect("the stale frame's span");
    assert_eq!(stale.name, "gate fuse");
    assert_eq!(stale.parent, server.id);
    assert_eq!(stale.attr("aelc.gate.outcome"), "refused");
    assert_eq!(stale.attr("aelc.run.status"), "rejected_input");
    assert_eq!(stale.attr("aelc.run.code"), "stale_input");
    assert_eq!(stale.attr("aelc.gate.errors"), "0");
    for id in &ids[1..] {
        let run = run_span(&spans, id);
        assert_eq!(run.name, "invoke_agent fuse");
        assert_eq!(run.parent, server.id, "{run:#?}");
        assert_eq!(run.attr("aelc.run.status"), "succeeded");
    }
    let admitted = children(&spans, server)
        .iter()
        .filter(|s| s.name == "gate fuse" && s.attr("aelc.gate.outcome") == "admitted")
        .count();
    assert_eq!(admitted, 2, "one gate per batch");

    // -- a line the decoder refuses ends the session: its own gate span with the error count
    let r = post_agent(
        &gw,
        "fuse",
        &key,
        &observation("camera", 0, json!({"people": 9999})),
        &[],
    );
    assert_eq!(r.status, 422, "{}", r.body);
    let id = r.body["receipt"]["receipt"]
        .as_str()
        .expect("an id")
        .to_owned();
    let spans = receiver.wait_for("the refused line's span", |s| {
        s.iter().any(|s| s.attr("aelc.receipt.id") == id)
    });
    let refused = spans
        .iter()
        .find(|s| s.attr("aelc.receipt.id") == id)
        .expect("its span");
    assert_eq!(refused.name, "gate fuse");
    assert_eq!(refused.attr("aelc.gate.outcome"), "refused");
    assert_eq!(refused.attr("aelc.gate.errors"), "1", "{refused:#?}");
    assert!(
        trace_of(&spans, &refused.trace)
            .iter()
            .all(|s| !s.name.starts_with("invoke_agent ")),
        "a refused line ran"
    );

    // -- a stream whose buffer fills: the agent runs on each batch (the full buffer, then
    //    what is left at the end), a gate and a run span each, under one SERVER span
    let note = "n".repeat(900);
    let body =
        (1..=6u64).map(|seq| chunk(seq, &note)).collect::<String>() + "{\"end\": \"complete\"}\n";
    let r = post_agent(&gw, "count", &key, &body, &[]);
    assert_eq!(r.status, 200, "{}", r.body);
    let ids: Vec<String> = r.body["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|run| {
            run["receipt"]["receipt"]
                .as_str()
                .expect("an id")
                .to_owned()
        })
        .collect();
    assert_eq!(ids.len(), 2, "{}", r.body);
    // The request's span ends after its runs, so it may come in a later export.
    let spans = receiver.wait_for("the stream's runs and its request", |s| {
        ids.iter()
            .all(|id| s.iter().any(|s| s.attr("aelc.receipt.id") == id))
            && s.iter().any(|run| {
                run.attr("aelc.receipt.id") == ids[0] && s.iter().any(|p| p.id == run.parent)
            })
    });
    let first = run_span(&spans, &ids[0]);
    let server = spans
        .iter()
        .find(|s| s.id == first.parent)
        .expect("the run's parent");
    assert_eq!(server.kind, SpanKind::Server as i32);
    assert_eq!(run_span(&spans, &ids[1]).parent, server.id);
    let gates = children(&spans, server)
        .iter()
        .filter(|s| s.name == "gate count")
        .count();
    assert_eq!(gates, 2);
    gw.kill();
}

#[test]
fn aelc_test_is_one_trace_under_its_root_span() {
    let receiver = Receiver::start();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/review");
    let mut env = otel(&receiver.endpoint());
    // Only the flush at exit can deliver them.
    env.retain(|(k, _)| *k != "OTEL_BSP_SCHEDULE_DELAY");
    env.push(("OTEL_BSP_SCHEDULE_DELAY", "60000".to_owned()));
    let out = Command::new(AELC)
        .arg("test")
        .arg(&root)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("aelc test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let spans = receiver.spans();
    let test = spans
        .iter()
        .find(|s| s.name == "aelc test")
        .unwrap_or_else(|| panic!("no root span in {spans:#?}"));
    assert_eq!(test.parent, "");
    assert_eq!(test.service, "aelc-under-test");
    // Every example's gate and run is in the root's trace, under it.
    let runs: Vec<&Rec> = children(&spans, test)
        .into_iter()
        .filter(|s| s.name.starts_with("invoke_agent "))
        .collect();
    assert!(!runs.is_empty(), "{spans:#?}");
    assert!(
        spans.iter().all(|s| s.trace == test.trace),
        "a span outside the run's trace"
    );
    // The replayed answers have their attempt spans.
    assert!(runs.iter().any(|run| children(&spans, run)
        .iter()
        .any(|s| s.name.starts_with("chat "))));
}

/// The echo project with its binding on `provider`'s API at `base_url`, model `model`.
fn provider_project(dir: &Path, provider: &str, model: &str, base_url: &str) {
    project(dir, 0);
    let toml = std::fs::read_to_string(dir.join("ael.toml")).expect("ael.toml");
    let toml = toml
        .replace(
            "provider = \"openai\"",
            &format!("provider = \"{provider}\""),
        )
        .replace("model = \"fake\"", &format!("model = \"{model}\""))
        .replace(
            "base_url = \"http://127.0.0.1:0/v1\"",
            &format!("base_url = \"{base_url}\""),
        );
    std::fs::write(dir.join("ael.toml"), toml).expect("ael.toml");
    std::fs::write(dir.join("in.json"), ask("[ok] provider")).expect("the input");
}

#[test]
fn anthropic_and_gemini_answers_have_their_response_attributes() {
    use provider_server::{named_sse, sse, Reply, Server};
    // Anthropic's Messages stream: the answer as a forced tool's input.
    let anthropic = vec![
        named_sse(
            "message_start",
            &json!({"type": "message_start", "message": {"id": "msg_trace1", "type": "message",
                "role": "assistant", "model": "claude-test-20250101", "content": [],
                "usage": {"input_tokens": 40, "output_tokens": 1}}}),
        ),
        named_sse(
            "content_block_start",
            &json!({"type": "content_block_start", "index": 0, "content_block":
                {"type": "tool_use", "id": "toolu_1", "name": "answer", "input": {}}}),
        ),
        named_sse(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": 0, "delta":
                {"type": "input_json_delta", "partial_json": "{\"reply\": \"echoed\"}"}}),
        ),
        named_sse(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": 0}),
        ),
        named_sse(
            "message_delta",
            &json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 9}}),
        ),
        named_sse("message_stop", &json!({"type": "message_stop"})),
    ];
    // Gemini's stream: chunks of the text, usage on each, the finish reason on the last.
    let gemini_chunk = |text: &str, finish: Option<&str>| {
        let mut candidate =
            json!({"content": {"role": "model", "parts": [{"text": text}]}, "index": 0});
        if let Some(f) = finish {
            candidate["finishReason"] = json!(f);
        }
        sse(&json!({
            "candidates": [candidate],
            "usageMetadata": {"promptTokenCount": 31, "candidatesTokenCount": 7,
                "thoughtsTokenCount": 5, "totalTokenCount": 43},
            "modelVersion": "gemini-test-001",
            "responseId": "resp_trace2",
        }))
    };
    let gemini = vec![
        gemini_chunk("{\"reply\": ", None),
        gemini_chunk("\"echoed\"}", Some("STOP")),
    ];
    for (provider, model, events, base, want) in [
        (
            "anthropic",
            "claude-test",
            anthropic,
            "",
            [
                ("gen_ai.provider.name", "anthropic"),
                ("gen_ai.response.id", "msg_trace1"),
                ("gen_ai.response.model", "claude-test-20250101"),
                ("gen_ai.response.finish_reasons", "stop"),
                ("gen_ai.usage.input_tokens", "40"),
                ("gen_ai.usage.output_tokens", "9"),
            ],
        ),
        (
            "gemini",
            "gemini-test",
            gemini,
            "/v1beta",
            [
                ("gen_ai.provider.name", "gcp.gemini"),
                ("gen_ai.response.id", "resp_trace2"),
                ("gen_ai.response.model", "gemini-test-001"),
                ("gen_ai.response.finish_reasons", "stop"),
                ("gen_ai.usage.input_tokens", "31"),
                // Thinking tokens are output tokens.
                ("gen_ai.usage.output_tokens", "12"),
            ],
        ),
    ] {
        let server = Server::start(vec![Reply::Stream {
            events,
            chunked: true,
            complete: true,
        }]);
        let receiver = Receiver::start();
        let dir = temp_dir(&format!("traces-{provider}"));
        provider_project(&dir, provider, model, &server.url(base));
        let out = Command::new(AELC)
            .args(["run", "echo", "--input", "in.json"])
            .current_dir(&dir)
            .env("AELC_FAKE_KEY", "test-key")
            .envs(otel(&receiver.endpoint()))
            .output()
            .expect("aelc run");
        assert!(
            out.status.success(),
            "{provider}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let spans = receiver.spans();
        let chat = spans
            .iter()
            .find(|s| s.kind == SpanKind::Client as i32)
            .unwrap_or_else(|| panic!("{provider}: no attempt in {spans:#?}"));
        assert_eq!(chat.name, format!("chat {model}"));
        assert_eq!(chat.attr("gen_ai.request.model"), model);
        for (k, v) in want {
            assert_eq!(chat.attr(k), v, "{provider}: {k} of {chat:#?}");
        }
        assert_eq!(chat.attr("server.address"), "127.0.0.1");
        assert_eq!(chat.attr("server.port"), server.addr.port().to_string());
        let (requests, _) = server.finish();
        let traceparent = requests[0].header("traceparent").unwrap_or("");
        assert_eq!(
            traceparent,
            format!("00-{}-{}-01", chat.trace, chat.id),
            "{provider}"
        );
        assert!(!String::from_utf8_lossy(&receiver.raw()).contains("test-key"));
    }
}

#[test]
fn http_json_and_the_export_headers() {
    let model = FakeModel::start();
    let receiver = Receiver::start();
    let dir = temp_dir("traces-json");
    project(&dir, model.port);
    std::fs::write(dir.join("in.json"), ask("[ok] json")).expect("the input");
    let mut env = otel(&receiver.endpoint());
    env.push(("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json".to_owned()));
    env.push((
        "OTEL_EXPORTER_OTLP_HEADERS",
        "authorization=Bearer%20vendor-token,x-scope=team%2Fa".to_owned(),
    ));
    let out = Command::new(AELC)
        .args(["run", "echo", "--input", "in.json"])
        .current_dir(&dir)
        .env("AELC_FAKE_KEY", "test-key")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("aelc run");
    assert!(out.status.success());
    let heads = receiver.heads();
    assert!(!heads.is_empty(), "nothing exported");
    for head in &heads {
        // The receiver decoded JSON only for this content type (protobuf is refused below).
        assert!(
            head.contains("\r\ncontent-type: application/json"),
            "{head}"
        );
        // The headers, URL-decoded (the receiver lower-cases what it keeps).
        assert!(
            head.contains("\r\nauthorization: bearer vendor-token\r\n"),
            "{head}"
        );
        assert!(head.contains("\r\nx-scope: team/a\r\n"), "{head}");
    }
    let spans = receiver.spans();
    let root = spans
        .iter()
        .find(|s| s.name == "aelc run")
        .unwrap_or_else(|| panic!("no root span in {spans:#?}"));
    assert_eq!(root.parent, "");
    assert_eq!(root.service, "aelc-under-test");
    let chat = spans
        .iter()
        .find(|s| s.name == "chat fake")
        .expect("the attempt");
    assert_eq!(chat.kind, SpanKind::Client as i32);
    assert_eq!(chat.trace, root.trace);
    assert_eq!(chat.attr("gen_ai.usage.input_tokens"), "20");
    assert_eq!(chat.attr("gen_ai.response.finish_reasons"), "stop");
    // The ids in JSON are the ids the model server was given.
    let seen = model.traceparents.lock().expect("traceparents").clone();
    assert_eq!(seen, vec![format!("00-{}-{}-01", chat.trace, chat.id)]);
    let run = spans
        .iter()
        .find(|s| s.id == chat.parent)
        .expect("the attempt's parent");
    assert_eq!(run.name, "invoke_agent echo");
}

#[test]
fn the_sampler_variables_are_honoured() {
    let model = FakeModel::start();
    let dir = temp_dir("traces-sampler");
    project(&dir, model.port);
    std::fs::write(dir.join("in.json"), ask("[ok] sampled")).expect("the input");

    // -- always_off: a CLI run exports nothing (its flush at exit included), and the model
    //    server is told the trace is not sampled
    let receiver = Receiver::start();
    let mut env = otel(&receiver.endpoint());
    env.push(("OTEL_TRACES_SAMPLER", "always_off".to_owned()));
    let out = Command::new(AELC)
        .args(["run", "echo", "--input", "in.json"])
        .current_dir(&dir)
        .env("AELC_FAKE_KEY", "test-key")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("aelc run");
    assert!(out.status.success());
    assert!(receiver.heads().is_empty(), "always_off exported");
    let seen = model.traceparents.lock().expect("traceparents").clone();
    assert!(
        seen.last().is_some_and(|tp| tp.ends_with("-00")),
        "{seen:?}"
    );

    let store = sqlite_url("traces-sampler");
    let key = account(&dir, &store, "demo", "5 EUR");
    // A gate refusal: a request's spans without a model call.
    let refused = r#"{"text": "[ok] hi", "extra": 1}"#;
    let gateway = |sampler: &str, arg: Option<&str>, receiver: &Receiver| {
        let mut env = otel(&receiver.endpoint());
        env.push(("OTEL_TRACES_SAMPLER", sampler.to_owned()));
        if let Some(arg) = arg {
            env.push(("OTEL_TRACES_SAMPLER_ARG", arg.to_owned()));
        }
        Gateway::start_with_env(&dir, &store, &[], &env)
    };
    let traces = |receiver: &Receiver| {
        let mut t: Vec<String> = receiver.spans().into_iter().map(|s| s.trace).collect();
        t.sort();
        t.dedup();
        t
    };
    let (t1, t2) = (
        "11111111111111111111111111111111",
        "22222222222222222222222222222222",
    );

    // -- parentbased_always_off: only a caller that sampled its trace gets spans; a caller
    //    that did not, and a request without a caller, get none
    let (unsampled, sampled) = (parent_in(t1, false), parent_in(t2, true));
    let receiver = Receiver::start();
    let gw = gateway("parentbased_always_off", None, &receiver);
    for headers in [vec![("traceparent", unsampled.as_str())], vec![]] {
        assert_eq!(post_agent(&gw, "echo", &key, refused, &headers).status, 422);
    }
    assert_eq!(
        post_agent(&gw, "echo", &key, refused, &[("traceparent", &sampled)]).status,
        422
    );
    assert!(gw.terminate().success());
    assert_eq!(traces(&receiver), vec![t2.to_owned()]);
    let server = receiver
        .spans()
        .into_iter()
        .find(|s| s.kind == SpanKind::Server as i32)
        .expect("the sampled request's span");
    assert_eq!(server.parent, CALLER_SPAN);

    // -- parentbased_traceidratio (ratio 1): the caller's decision still wins
    let receiver = Receiver::start();
    let gw = gateway("parentbased_traceidratio", Some("1.0"), &receiver);
    assert_eq!(
        post_agent(&gw, "echo", &key, refused, &[("traceparent", &unsampled)]).status,
        422
    );
    assert_eq!(
        post_agent(&gw, "echo", &key, refused, &[("traceparent", &sampled)]).status,
        422
    );
    assert!(gw.terminate().success());
    assert_eq!(traces(&receiver), vec![t2.to_owned()]);

    // -- traceidratio: the ratio alone decides, whatever the caller's flag (the
    //    specification's TraceIdRatioBased ignores the parent's sampled flag): 1 records a
    //    caller's unsampled trace, 0 drops a sampled one
    let receiver = Receiver::start();
    let gw = gateway("traceidratio", Some("1.0"), &receiver);
    assert_eq!(
        post_agent(&gw, "echo", &key, refused, &[("traceparent", &unsampled)]).status,
        422
    );
    assert!(gw.terminate().success());
    assert_eq!(traces(&receiver), vec![t1.to_owned()]);
    let receiver = Receiver::start();
    let gw = gateway("traceidratio", Some("0"), &receiver);
    assert_eq!(
        post_agent(&gw, "echo", &key, refused, &[("traceparent", &sampled)]).status,
        422
    );
    assert!(gw.terminate().success());
    assert!(receiver.heads().is_empty(), "traceidratio 0 exported");
}

#[test]
fn mcp_over_http_continues_its_callers_trace() {
    let model = FakeModel::start();
    let receiver = Receiver::start();
    let dir = temp_dir("traces-mcp-http");
    let store = sqlite_url("traces-mcp-http");
    mcp_http::setup(&dir, &model, &store);
    let gw = Gateway::start_with_env(&dir, &store, &[], &otel(&receiver.endpoint()));
    let token = mcp_http::token(&dir, &store, "demo/sandbox", &[]);
    let session = mcp_http::open_session(&gw, &token);
    let caller = parent_in(CALLER_TRACE, true);
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"call_agent","arguments":{"agent":"acme/echo","input":{"text":"[ok] over mcp"}}}}"#;
    let answer = mcp_http::post(
        &gw,
        "/mcp",
        Some(&token),
        Some(&session),
        &[("traceparent", &caller), ("tracestate", CALLER_STATE)],
        call,
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(answer.body.contains("succeeded"), "{}", answer.body);
    let spans = receiver.wait_for("the tool call and its run", |s| {
        s.iter().any(|s| s.name == "execute_tool call_agent")
            && s.iter().any(|s| s.name == "chat fake")
    });
    let tool = spans
        .iter()
        .find(|s| s.name == "execute_tool call_agent")
        .expect("the tool's span");
    assert_eq!(
        tool.trace, CALLER_TRACE,
        "the caller's trace was not continued"
    );
    assert_eq!(tool.parent, CALLER_SPAN);
    let run = children(&spans, tool)
        .into_iter()
        .find(|s| s.name == "invoke_agent echo")
        .expect("the run under the tool call");
    let chat = children(&spans, run)
        .into_iter()
        .find(|s| s.name == "chat fake")
        .expect("the attempt");
    let seen = model.traceparents.lock().expect("traceparents").clone();
    assert_eq!(seen, vec![format!("00-{CALLER_TRACE}-{}-01", chat.id)]);
    let states = model.tracestates.lock().expect("tracestates").clone();
    assert_eq!(states, vec![CALLER_STATE.to_owned()]);
    gw.kill();
}

#[test]
fn a_body_over_the_limit_has_its_refusal_span_and_protobuf_carries_the_headers() {
    let model = FakeModel::start();
    let receiver = Receiver::start();
    let dir = temp_dir("traces-large");
    project(&dir, model.port);
    let store = sqlite_url("traces-large");
    let key = account(&dir, &store, "demo", "10 EUR");
    let mut env = otel(&receiver.endpoint());
    // The traces variable wins over the general one.
    env.push(("OTEL_EXPORTER_OTLP_HEADERS", "x-general=no".to_owned()));
    env.push((
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        "authorization=Bearer%20vendor-token, x-scope=team%2Fa".to_owned(),
    ));
    let gw = Gateway::start_with_env(&dir, &store, &[], &env);

    // Over the project's `max_input_bytes` (2048): refused before the executor sees it, with
    // the same gate span as the executor's refusals.
    let big = format!(r#"{{"text": "{}"}}"#, "x".repeat(3000));
    let r = post_agent(&gw, "echo", &key, &big, &[]);
    assert_eq!(r.status, 413, "{}", r.body);
    let id = r.body["receipt"]["receipt"]
        .as_str()
        .expect("an id")
        .to_owned();
    let spans = receiver.wait_for("the refusal's span and its request", |s| {
        s.iter().any(|s| s.attr("aelc.receipt.id") == id)
            && s.iter().any(|s| s.kind == SpanKind::Server as i32)
    });
    let gate = spans
        .iter()
        .find(|s| s.attr("aelc.receipt.id") == id)
        .expect("the gate span");
    assert_eq!(gate.name, "gate echo");
    assert_eq!(gate.attr("aelc.gate.outcome"), "refused");
    assert_eq!(gate.attr("aelc.gate.errors"), "0");
    assert_eq!(gate.attr("aelc.run.status"), "rejected_input");
    assert_eq!(gate.attr("aelc.run.code"), "input_too_large");
    assert_eq!(gate.service, "aelc-under-test");
    let server = spans
        .iter()
        .find(|s| s.id == gate.parent)
        .expect("the gate's parent");
    assert_eq!(server.kind, SpanKind::Server as i32);
    assert_eq!(server.attr("http.response.status_code"), "413");
    assert!(
        trace_of(&spans, &gate.trace)
            .iter()
            .all(|s| !s.name.starts_with("invoke_agent ")),
        "a body over the limit ran"
    );

    // Every export: protobuf, with the traces headers URL-decoded and not the general ones.
    let heads = receiver.heads();
    assert!(!heads.is_empty());
    for head in &heads {
        assert!(
            head.contains("\r\ncontent-type: application/x-protobuf\r\n"),
            "{head}"
        );
        assert!(
            head.contains("\r\nauthorization: bearer vendor-token\r\n"),
            "{head}"
        );
        assert!(head.contains("\r\nx-scope: team/a\r\n"), "{head}");
        assert!(!head.contains("x-general"), "{head}");
    }
    gw.kill();
}
