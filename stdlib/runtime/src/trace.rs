//! OpenTelemetry spans of runs, gates and model attempts, by the GenAI semantic conventions
//! (`gen_ai.*`): a host that exports them (`aelc-telemetry`) calls [`install`] with its
//! [`Host`]; until then every function here is one relaxed atomic load and nothing else, so a
//! host without telemetry pays nothing per run.
//!
//! A span is the runtime's own ([`context`], [`record`]), not the OpenTelemetry API's: its ids,
//! flags and trace state are the API's types, its attributes are written as they are set
//! straight into OTLP's protobuf under static keys ([`Key`]), and the host only chooses its ids
//! and sampling ([`Host::begin`]) and exports it when it ends ([`Host::export`]).
//!
//! The executor runs on one thread from its gate to its receipt, so a span is made current
//! (this module's thread-local [`Context`]) while it is open: a run span is the parent of its
//! model attempts and of its delegated runs, and a provider's request carries the attempt's
//! `traceparent` ([`inject`]). A host that moves a run to another thread carries the context
//! with it (the gateway attaches it on the blocking pool).
//!
//! Invariants: no attribute holds a key, an input or an answer unless the operator opted in
//! with `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` ([`capture_content`]); an
//! attribute name is written once, in [`attr`].
//!
//! Cost, for the gate's hot path (a refusal makes two spans): a span is one allocation and
//! one attribute buffer; a value is copied once, into that buffer, and only for a span that
//! records; a gate span is not made current (nothing runs under it), so it costs no switch of
//! the context; names are joined without the formatting machinery.

mod context;
mod host;
mod record;
pub mod wire;

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

pub use context::{Context, Guard, InContext};
pub use host::Host;
pub use opentelemetry::trace::{SpanContext, SpanKind, Status};
use opentelemetry::trace::{SpanId, TraceFlags, TraceId, TraceState};
pub use record::{Key, Record, MAX_ATTRIBUTES};

/// The attribute names, each written once.
pub mod attr {
    use super::Key;

    pub const OPERATION: Key = Key::new("gen_ai.operation.name");
    pub const PROVIDER: Key = Key::new("gen_ai.provider.name");
    pub const REQUEST_MODEL: Key = Key::new("gen_ai.request.model");
    pub const REQUEST_MAX_TOKENS: Key = Key::new("gen_ai.request.max_tokens");
    pub const RESPONSE_MODEL: Key = Key::new("gen_ai.response.model");
    pub const RESPONSE_ID: Key = Key::new("gen_ai.response.id");
    pub const FINISH_REASONS: Key = Key::new("gen_ai.response.finish_reasons");
    pub const INPUT_TOKENS: Key = Key::new("gen_ai.usage.input_tokens");
    pub const OUTPUT_TOKENS: Key = Key::new("gen_ai.usage.output_tokens");
    pub const AGENT_NAME: Key = Key::new("gen_ai.agent.name");
    pub const TOOL_NAME: Key = Key::new("gen_ai.tool.name");
    pub const INPUT_MESSAGES: Key = Key::new("gen_ai.input.messages");
    pub const OUTPUT_MESSAGES: Key = Key::new("gen_ai.output.messages");
    pub const ERROR_TYPE: Key = Key::new("error.type");
    pub const AGENT: Key = Key::new("aelc.agent");
    pub const VERSION: Key = Key::new("aelc.agent.version");
    pub const NODE: Key = Key::new("aelc.node");
    pub const RECEIPT: Key = Key::new("aelc.receipt.id");
    pub const STATUS: Key = Key::new("aelc.run.status");
    pub const CODE: Key = Key::new("aelc.run.code");
    pub const COST: Key = Key::new("aelc.run.cost");
    pub const SPENT: Key = Key::new("aelc.run.spent");
    pub const CURRENCY: Key = Key::new("aelc.run.currency");
    /// What a gateway billed the caller (its receipt's `cost`), on the request's span.
    pub const BILLED: Key = Key::new("aelc.run.billed");
    pub const BINDING: Key = Key::new("aelc.binding");
    pub const ATTEMPT: Key = Key::new("aelc.attempt");
    pub const REFUSED_STEP: Key = Key::new("aelc.acceptance.step");
    pub const REFUSED_CODE: Key = Key::new("aelc.acceptance.code");
    pub const GATE_OUTCOME: Key = Key::new("aelc.gate.outcome");
    pub const GATE_ERRORS: Key = Key::new("aelc.gate.errors");
    pub const GATE_CHECK: Key = Key::new("aelc.gate.check");
    /// The model server's host and port (from the binding's base URL), on an attempt.
    pub const SERVER_ADDRESS: Key = Key::new("server.address");
    pub const SERVER_PORT: Key = Key::new("server.port");
}

/// The variable of the conventions' opt-in to prompt and answer content in spans.
pub const CAPTURE_CONTENT_VAR: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

static ENABLED: AtomicBool = AtomicBool::new(false);
static CAPTURE: AtomicBool = AtomicBool::new(false);
static HOST: OnceLock<Box<dyn Host>> = OnceLock::new();

/// Turns the spans on, exported by `host` (the first one installed in the process stays);
/// `capture_content`: the operator's opt-in.
pub fn install(capture_content: bool, host: Box<dyn Host>) {
    let _ = HOST.set(host);
    CAPTURE.store(capture_content, Ordering::Relaxed);
    ENABLED.store(true, Ordering::Release);
}

/// Turns the spans off again (after the host shut its provider down).
pub fn uninstall() {
    ENABLED.store(false, Ordering::Release);
}

/// Whether spans are made at all.
#[inline]
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// The host spans are exported by, while they are on: given once at [`install`].
fn host() -> Option<&'static dyn Host> {
    if !enabled() {
        return None;
    }
    HOST.get().map(|h| &**h)
}

/// Starts a span `name` of `kind` under `parent`'s span, its first attributes written by
/// `attributes` (called only when it records): its context, or `None` when spans are off.
/// What every span here and the gateway's request span start with.
pub fn start_span(
    name: impl Into<Cow<'static, str>>,
    kind: SpanKind,
    attributes: impl FnOnce(&mut Record),
    parent: &Context,
) -> Option<Context> {
    let host = host()?;
    let parent = parent.span_context();
    let (context, records) = host.begin(parent);
    let record = records.then(|| {
        let mut record = Record::new(context.clone(), parent, kind, name.into());
        attributes(&mut record);
        record
    });
    Some(Context::of(context, record, host))
}

/// [`start_span`] under the current span.
fn start_here(
    name: impl Into<Cow<'static, str>>,
    kind: SpanKind,
    attributes: impl FnOnce(&mut Record),
) -> Option<Context> {
    host()?;
    start_span(name, kind, attributes, &Context::current())
}

/// The caller's trace context from its W3C `traceparent` and `tracestate` headers, to continue
/// its trace: the empty context when `traceparent` is missing or malformed (a new trace
/// begins). Parsed here, with the W3C rules, rather than by the global propagator (a lock and a
/// clone of the current context per request), and the pair of [`inject`].
pub fn caller(traceparent: Option<&str>, tracestate: Option<&str>) -> Context {
    match remote_parent(traceparent.unwrap_or(""), tracestate) {
        Some(sc) => Context::remote(sc),
        None => Context::none(),
    }
}

/// `version-traceid-spanid-flags` (lowercase hex; version `ff` is invalid, version `00` has
/// exactly these four fields, a later one may add more after a `-`).
fn remote_parent(traceparent: &str, tracestate: Option<&str>) -> Option<SpanContext> {
    let tp = traceparent.trim();
    let hex = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let field = |from: usize, len: usize| tp.get(from..from + len).filter(|f| hex(f));
    let version = u8::from_str_radix(field(0, 2)?, 16).ok()?;
    let dashes = [2, 35, 52]
        .iter()
        .all(|&i| tp.as_bytes().get(i) == Some(&b'-'));
    let rest_ok = match version {
        0 => tp.len() == 55,
        0xff => false,
        _ => tp.len() == 55 || tp.as_bytes().get(55) == Some(&b'-'),
    };
    if !dashes || !rest_ok {
        return None;
    }
    let trace_id = TraceId::from_hex(field(3, 32)?).ok()?;
    let span_id = SpanId::from_hex(field(36, 16)?).ok()?;
    let flags = u8::from_str_radix(field(53, 2)?, 16).ok()?;
    if trace_id == TraceId::INVALID || span_id == SpanId::INVALID {
        return None;
    }
    let state = tracestate
        .and_then(|s| s.parse::<TraceState>().ok())
        .unwrap_or_default();
    Some(SpanContext::new(
        trace_id,
        span_id,
        // Only the sampled flag is known; the others are zeroed, as the W3C asks.
        TraceFlags::new(flags) & TraceFlags::SAMPLED,
        true,
        state,
    ))
}

/// `prefix` then `name`, in one allocation of the right size (a span name).
fn joined(prefix: &str, name: &str) -> String {
    let mut out = String::with_capacity(prefix.len() + name.len());
    out.push_str(prefix);
    out.push_str(name);
    out
}

/// Whether prompts and answers may go into spans (the operator opted in).
pub fn capture_content() -> bool {
    enabled() && CAPTURE.load(Ordering::Relaxed)
}

/// An open span, until it ends (dropped or [`Scope::end`]); current on this thread meanwhile
/// when started with [`Scope::start`]. `None` inside when spans are off: every method is then
/// a no-op.
pub struct Scope {
    inner: Option<(Context, Option<Guard>)>,
}

impl Scope {
    /// A span that does nothing (spans off).
    pub const fn none() -> Scope {
        Scope { inner: None }
    }

    /// Starts `name` as a child of the current span (or a root) and makes it current;
    /// `attributes` is only called when the span records.
    pub fn start(
        name: impl Into<Cow<'static, str>>,
        kind: SpanKind,
        attributes: impl FnOnce(&mut Record),
    ) -> Scope {
        let mut scope = Scope::start_detached(name, kind, attributes);
        if let Some((cx, guard)) = &mut scope.inner {
            *guard = Some(cx.clone().attach());
        }
        scope
    }

    /// Starts `name` as a child of the current span without making it current: a span nothing
    /// is started under (a gate), which then costs no switch of the context.
    pub fn start_detached(
        name: impl Into<Cow<'static, str>>,
        kind: SpanKind,
        attributes: impl FnOnce(&mut Record),
    ) -> Scope {
        if !enabled() {
            return Scope::none();
        }
        Scope {
            inner: start_here(name, kind, attributes).map(|cx| (cx, None)),
        }
    }

    /// Sets attributes with `f` (not called when the span does not record).
    pub fn set(&self, f: impl FnOnce(&mut Record)) {
        if let Some((cx, _)) = &self.inner {
            cx.record(f);
        }
    }

    /// Marks the span failed with `why` (`error.type`).
    pub fn fail(&self, why: &str) {
        self.set(|record| failed(record, why));
    }

    /// Ends the span and makes its parent current again.
    pub fn end(self) {}
}

/// A span failed with `why`: status ERROR and `error.type`.
fn failed(record: &mut Record, why: &str) {
    record.str(attr::ERROR_TYPE, why);
    record.set_status(Status::error(why.to_owned()));
}

impl Drop for Scope {
    fn drop(&mut self) {
        if let Some((cx, guard)) = self.inner.take() {
            drop(guard);
            // Unwound by a panic: the span never got its outcome.
            if std::thread::panicking() {
                cx.record(|record| record.set_status(Status::error("panic")));
            }
            cx.end();
        }
    }
}

/// Sets attributes on the current span (a provider describing the call its attempt makes).
pub fn annotate(f: impl FnOnce(&mut Record)) {
    if !enabled() {
        return;
    }
    Context::current().record(f);
}

/// The `traceparent` (and `tracestate`, when not empty) of the current span, W3C trace
/// context: what an outgoing request carries. Empty when spans are off or none is current.
pub fn inject() -> Vec<(&'static str, String)> {
    if !enabled() {
        return Vec::new();
    }
    let cx = Context::current();
    {
        let Some(sc) = cx.span_context() else {
            return Vec::new();
        };
        let mut headers = vec![(
            "traceparent",
            format!(
                "00-{}-{}-{:02x}",
                sc.trace_id(),
                sc.span_id(),
                sc.trace_flags().to_u8()
            ),
        )];
        let state = sc.trace_state().header();
        if !state.is_empty() {
            headers.push(("tracestate", state));
        }
        headers
    }
}

/// The trace id (32 hex digits) of the current span when it is exported (spans on, sampled):
/// what a host stores beside a run so its operators can find the trace.
pub fn current_trace_id() -> Option<String> {
    if !enabled() {
        return None;
    }
    Context::current()
        .span_context()
        .filter(|sc| sc.is_sampled())
        .map(|sc| sc.trace_id().to_string())
}

/// The span of a run of `node` (`invoke_agent {node}`), current until it ends; its
/// attributes are set by [`finish_run`].
pub fn run_span(agent: &str, version: &str, node: &str) -> Scope {
    if !enabled() {
        return Scope::none();
    }
    Scope::start(
        joined("invoke_agent ", node),
        SpanKind::Internal,
        |record| {
            record.str(attr::OPERATION, "invoke_agent");
            record.str(attr::AGENT_NAME, agent);
            record.str(attr::AGENT, agent);
            record.str(attr::VERSION, version);
            record.str(attr::NODE, node);
        },
    )
}

/// How a run ended, as its span shows it (the receipt's fields).
#[derive(Clone, Copy, Debug)]
pub struct Ended<'a> {
    pub receipt: &'a str,
    pub status: &'static str,
    pub code: Option<&'a str>,
    /// What the caller is billed.
    pub cost: &'a str,
    /// What the model calls cost.
    pub spent: &'a str,
    pub currency: Option<&'a str>,
    /// The run ended `invalid_output` or `error`: the span's status is ERROR.
    pub failed: bool,
}

/// What a run ended with, on its span: receipt, status, code, cost; ERROR when it ended
/// `invalid_output` or `error`.
pub fn finish_run(scope: Scope, ended: &Ended<'_>) {
    scope.set(|record| {
        ended_attributes(record, ended);
        if ended.failed {
            failed(record, ended.code.unwrap_or("error"));
        }
    });
    scope.end();
}

/// The attributes of how a run ended (six at most).
fn ended_attributes(record: &mut Record, ended: &Ended<'_>) {
    record.str(attr::RECEIPT, ended.receipt);
    record.str(attr::STATUS, ended.status);
    record.str(attr::COST, ended.cost);
    record.str(attr::SPENT, ended.spent);
    if let Some(code) = ended.code {
        record.str(attr::CODE, code);
    }
    if let Some(currency) = ended.currency {
        record.str(attr::CURRENCY, currency);
    }
}

/// The span of the input gate of `node` (`gate {node}`), not current: no span is made under
/// a gate.
pub fn gate_span(node: &str) -> Scope {
    if !enabled() {
        return Scope::none();
    }
    Scope::start_detached(joined("gate ", node), SpanKind::Internal, |record| {
        record.str(attr::NODE, node);
    })
}

/// A gate's refusal: the refused run, the decoder's error count and the input check that
/// refused, if one did.
#[derive(Clone, Copy, Debug)]
pub struct GateRefusal<'a> {
    pub run: Ended<'a>,
    pub errors: usize,
    pub check: Option<&'a str>,
}

/// The gate's verdict on its span: admitted, or refused (see [`GateRefusal`]).
pub fn finish_gate(scope: Scope, refused: Option<GateRefusal<'_>>) {
    scope.set(|record| match refused {
        None => record.str(attr::GATE_OUTCOME, "admitted"),
        Some(refusal) => {
            ended_attributes(record, &refusal.run);
            record.str(attr::GATE_OUTCOME, "refused");
            record.int(
                attr::GATE_ERRORS,
                i64::try_from(refusal.errors).unwrap_or(i64::MAX),
            );
            if let Some(check) = refusal.check {
                record.str(attr::GATE_CHECK, check);
            }
        }
    });
    scope.end();
}

/// A refusal a host made itself, before or beside the executor's gate (the gateway's body
/// over its bound, a session's stale observation, a request's run past its limit): a
/// `gate {node}` span begun and ended at once, as the executor's gate shows its own.
pub fn refused(node: &str, refusal: GateRefusal<'_>) {
    if enabled() {
        finish_gate(gate_span(node), Some(refusal));
    }
}

/// A run a host ended itself, without the executor's receipt (its agent could not run, or
/// its thread panicked): an `invoke_agent {node}` span begun and ended at once.
pub fn ended_run(agent: &str, version: &str, node: &str, ended: &Ended<'_>) {
    if enabled() {
        finish_run(run_span(agent, version, node), ended);
    }
}

/// The CLIENT span of one model attempt: `chat {binding}` until the provider names its model
/// ([`describe_call`]).
pub fn attempt_span(binding: &str, attempt: u32, prompt: &str) -> Scope {
    if !enabled() {
        return Scope::none();
    }
    Scope::start(joined("chat ", binding), SpanKind::Client, |record| {
        record.str(attr::OPERATION, "chat");
        record.str(attr::BINDING, binding);
        record.int(attr::ATTEMPT, i64::from(attempt));
        if capture_content() {
            record.str(attr::INPUT_MESSAGES, &messages("user", prompt));
        }
    })
}

/// What a provider is about to call, on the current attempt's span: its name by the
/// conventions (`openai`, `anthropic`, `gcp.gemini`), the model, the token limit, and the
/// server (`server.address`, `server.port`) read off `base_url`.
pub fn describe_call(provider: &'static str, model: &str, max_tokens: u32, base_url: &str) {
    annotate(|record| {
        record.name = Cow::Owned(joined("chat ", model));
        record.str(attr::PROVIDER, provider);
        record.str(attr::REQUEST_MODEL, model);
        record.int(attr::REQUEST_MAX_TOKENS, i64::from(max_tokens));
        if let Some((host, port)) = server_of(base_url) {
            record.str(attr::SERVER_ADDRESS, host);
            record.int(attr::SERVER_PORT, i64::from(port));
        }
    });
}

/// The host and port of an `http(s)://` URL (the scheme's port when none is written), without
/// any user information (`user:key@`, which is never exported); `None` for another scheme or
/// an empty host.
fn server_of(url: &str) -> Option<(&str, u16)> {
    let (rest, default_port) = if let Some(rest) = url.strip_prefix("https://") {
        (rest, 443)
    } else {
        (url.strip_prefix("http://")?, 80)
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = if let Some(v6) = host_port.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        (host, after.strip_prefix(':'))
    } else {
        match host_port.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        }
    };
    if host.is_empty() {
        return None;
    }
    let port = match port {
        None | Some("") => default_port,
        Some(p) => p.parse().ok()?,
    };
    Some((host, port))
}

/// The response's id and model as the provider reported them, on the current attempt's span.
pub fn describe_response(id: Option<&str>, model: Option<&str>) {
    annotate(|record| {
        if let Some(id) = id {
            record.str(attr::RESPONSE_ID, id);
        }
        if let Some(model) = model {
            record.str(attr::RESPONSE_MODEL, model);
        }
    });
}

/// The answer of an attempt on its span: why the model stopped, the tokens it used (and the
/// text, when the operator opted in).
pub fn attempt_answered(scope: &Scope, finish: &'static str, usage: (u64, u64), text: &str) {
    scope.set(|record| {
        let tokens = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        record.strings(attr::FINISH_REASONS, &[finish]);
        record.int(attr::INPUT_TOKENS, tokens(usage.0));
        record.int(attr::OUTPUT_TOKENS, tokens(usage.1));
        if capture_content() {
            record.str(attr::OUTPUT_MESSAGES, &messages("assistant", text));
        }
    });
}

/// The acceptance step that refused an attempt's answer (1–7 of the pipeline) and its code.
pub fn attempt_refused(scope: &Scope, step: u8, code: &str) {
    scope.set(|record| {
        record.int(attr::REFUSED_STEP, i64::from(step));
        record.str(attr::REFUSED_CODE, code);
    });
}

/// One message of the conventions' content capture (`[{"role", "parts": [{"type": "text",
/// "content"}]}]`), as JSON text.
fn messages(role: &str, text: &str) -> String {
    serde_json::json!([{ "role": role, "parts": [{ "type": "text", "content": text }] }])
        .to_string()
}

/// A span of a tool call (`execute_tool {tool}`, the conventions' operation) for async code:
/// the context holding it, to run the call's future in ([`Context::wrap`]) and to end with
/// [`end`]; `None` when spans are off. The MCP server's tools. `caller`: the context the call
/// continues (an HTTP request's `traceparent`), asked only when spans are on; `None` for the
/// current one.
pub fn tool_context(tool: &str, caller: impl FnOnce() -> Option<Context>) -> Option<Context> {
    if !enabled() {
        return None;
    }
    let parent = caller().unwrap_or_else(Context::current);
    start_span(
        joined("execute_tool ", tool),
        SpanKind::Internal,
        |record| {
            record.str(attr::OPERATION, "execute_tool");
            record.str(attr::TOOL_NAME, tool);
        },
        &parent,
    )
}

/// Ends the span of `cx` (from [`tool_context`]), failed with `error` when there is one.
pub fn end(cx: Option<Context>, error: Option<&str>) {
    if let Some(cx) = cx {
        if let Some(why) = error {
            cx.record(|record| failed(record, why));
        }
        cx.end();
    }
}

#[cfg(test)]
mod tests {
    use super::{remote_parent, server_of};

    #[test]
    fn a_callers_traceparent_is_read_by_the_w3c_rules() {
        let good = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        let sc = remote_parent(good, Some("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"))
            .expect("a valid traceparent");
        assert_eq!(
            sc.trace_id().to_string(),
            "0af7651916cd43dd8448eb211c80319c"
        );
        assert_eq!(sc.span_id().to_string(), "b7ad6b7169203331");
        assert!(sc.is_sampled() && sc.is_remote());
        assert_eq!(
            sc.trace_state().header(),
            "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"
        );
        // Unknown flags are dropped; a later version may carry more fields.
        let sc = remote_parent(&good.replace("-01", "-09"), None).expect("flags 09");
        assert_eq!(sc.trace_flags().to_u8(), 1);
        let later = "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00-more";
        assert!(remote_parent(later, None).is_some_and(|sc| !sc.is_sampled()));
        for bad in [
            "",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-more",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0g",
            "00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "0-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333é-01",
        ] {
            assert!(remote_parent(bad, None).is_none(), "{bad}");
        }
    }

    #[test]
    fn the_server_is_read_off_the_base_url() {
        for (url, want) in [
            ("http://127.0.0.1:8080/v1", Some(("127.0.0.1", 8080))),
            ("https://api.openai.com/v1", Some(("api.openai.com", 443))),
            ("http://localhost/v1?x=1", Some(("localhost", 80))),
            (
                "https://user:sk-secret@proxy.example:8443/v1",
                Some(("proxy.example", 8443)),
            ),
            ("http://[::1]:11434/v1", Some(("::1", 11434))),
            ("http://[::1]/v1", Some(("::1", 80))),
            ("http://host:/v1", Some(("host", 80))),
            ("http://host:99999/v1", None),
            ("http:///v1", None),
            ("ftp://host/v1", None),
            ("", None),
        ] {
            assert_eq!(server_of(url), want, "{url}");
        }
    }
}
