//! OpenTelemetry spans of runs, gates and model attempts, by the GenAI semantic conventions
//! (`gen_ai.*`), made with the OpenTelemetry API only: a host that exports them installs the
//! SDK (`aelc-telemetry`) and calls [`install`]; until then every function here is one relaxed
//! atomic load and nothing else, so a host without telemetry pays nothing per run.
//!
//! The executor runs on one thread from its gate to its receipt, so a span is made current
//! (OpenTelemetry's thread-local [`Context`]) while it is open: a run span is the parent of its
//! model attempts and of its delegated runs, and a provider's request carries the attempt's
//! `traceparent` ([`inject`]). A host that moves a run to another thread carries the context
//! with it (the gateway attaches it on the blocking pool).
//!
//! Invariants: no attribute holds a key, an input or an answer unless the operator opted in
//! with `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` ([`capture_content`]); an
//! attribute name is written once, in [`attr`].
//!
//! Cost, for the gate's hot path (a refusal makes two spans): spans are started through the
//! host's own tracer ([`Starter`], the SDK's, not the API's boxed global one: one allocation and
//! one dynamic call less per span operation); attribute keys and fixed values are static; a
//! value that must be copied (a receipt id) is copied only for a span that records; a gate span
//! is not made current (nothing runs under it), so it costs no context clone; names are joined
//! without the formatting machinery.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

pub use opentelemetry::trace::SpanKind;
use opentelemetry::trace::{
    SpanContext, SpanId, Status, TraceContextExt, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{Context, ContextGuard, KeyValue, Value};

/// The attribute names, each written once.
pub mod attr {
    pub const OPERATION: &str = "gen_ai.operation.name";
    pub const PROVIDER: &str = "gen_ai.provider.name";
    pub const REQUEST_MODEL: &str = "gen_ai.request.model";
    pub const REQUEST_MAX_TOKENS: &str = "gen_ai.request.max_tokens";
    pub const RESPONSE_MODEL: &str = "gen_ai.response.model";
    pub const RESPONSE_ID: &str = "gen_ai.response.id";
    pub const FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
    pub const INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
    pub const OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
    pub const AGENT_NAME: &str = "gen_ai.agent.name";
    pub const TOOL_NAME: &str = "gen_ai.tool.name";
    pub const INPUT_MESSAGES: &str = "gen_ai.input.messages";
    pub const OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
    pub const ERROR_TYPE: &str = "error.type";
    pub const AGENT: &str = "aelc.agent";
    pub const VERSION: &str = "aelc.agent.version";
    pub const NODE: &str = "aelc.node";
    pub const RECEIPT: &str = "aelc.receipt.id";
    pub const STATUS: &str = "aelc.run.status";
    pub const CODE: &str = "aelc.run.code";
    pub const COST: &str = "aelc.run.cost";
    pub const SPENT: &str = "aelc.run.spent";
    pub const CURRENCY: &str = "aelc.run.currency";
    /// What a gateway billed the caller (its receipt's `cost`), on the request's span.
    pub const BILLED: &str = "aelc.run.billed";
    pub const BINDING: &str = "aelc.binding";
    pub const ATTEMPT: &str = "aelc.attempt";
    pub const REFUSED_STEP: &str = "aelc.acceptance.step";
    pub const REFUSED_CODE: &str = "aelc.acceptance.code";
    pub const GATE_OUTCOME: &str = "aelc.gate.outcome";
    pub const GATE_ERRORS: &str = "aelc.gate.errors";
    pub const GATE_CHECK: &str = "aelc.gate.check";
    /// The model server's host and port (from the binding's base URL), on an attempt.
    pub const SERVER_ADDRESS: &str = "server.address";
    pub const SERVER_PORT: &str = "server.port";
}

/// The variable of the conventions' opt-in to prompt and answer content in spans.
pub const CAPTURE_CONTENT_VAR: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

static ENABLED: AtomicBool = AtomicBool::new(false);
static CAPTURE: AtomicBool = AtomicBool::new(false);
static STARTER: OnceLock<Box<dyn Starter>> = OnceLock::new();

/// What starts spans: the host's tracer (the SDK's, which `aelc-telemetry` wraps), so that the
/// runtime needs the OpenTelemetry API only and still calls the SDK's tracer directly (the
/// API's global tracer boxes every span once more and dispatches every call on it twice).
pub trait Starter: Send + Sync + 'static {
    /// Starts the span `name` of `kind` with `attributes` as a child of `parent`'s span (a
    /// root when it has none): `parent` with the new span. Plain arguments, not the API's
    /// `SpanBuilder`: a host's own spans (`aelc-telemetry`'s) need none of its fields.
    fn start(
        &self,
        name: Cow<'static, str>,
        kind: SpanKind,
        attributes: Vec<KeyValue>,
        parent: &Context,
    ) -> Context;
}

/// Turns the spans on, started by `starter` (the first one installed in the process stays);
/// `capture_content`: the operator's opt-in.
pub fn install(capture_content: bool, starter: Box<dyn Starter>) {
    let _ = STARTER.set(starter);
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

/// The starter spans are made with, while they are on: given once at [`install`], so no span
/// site asks a provider for a tracer.
fn starter() -> Option<&'static dyn Starter> {
    if !enabled() {
        return None;
    }
    STARTER.get().map(|s| &**s)
}

/// Starts a span `name` of `kind` with `attributes` under `parent`'s span: `parent` with it,
/// or `None` when spans are off. What every span here and the gateway's request span start with.
pub fn start_span(
    name: impl Into<Cow<'static, str>>,
    kind: SpanKind,
    attributes: Vec<KeyValue>,
    parent: &Context,
) -> Option<Context> {
    let starter = starter()?;
    Some(starter.start(name.into(), kind, attributes, parent))
}

/// [`start_span`] under the current span, without cloning the current context.
fn start_here(
    name: impl Into<Cow<'static, str>>,
    kind: SpanKind,
    attributes: Vec<KeyValue>,
) -> Option<Context> {
    let starter = starter()?;
    let name = name.into();
    Some(Context::map_current(|parent| {
        starter.start(name, kind, attributes, parent)
    }))
}

/// The caller's trace context from its W3C `traceparent` and `tracestate` headers, to continue
/// its trace: the empty context when `traceparent` is missing or malformed (a new trace
/// begins). Parsed here, with the W3C rules, rather than by the global propagator (a lock and a
/// clone of the current context per request), and the pair of [`inject`].
pub fn caller(traceparent: Option<&str>, tracestate: Option<&str>) -> Context {
    match remote_parent(traceparent.unwrap_or(""), tracestate) {
        Some(sc) => Context::new().with_remote_span_context(sc),
        None => Context::new(),
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
    inner: Option<(Context, Option<ContextGuard>)>,
}

impl Scope {
    /// A span that does nothing (spans off).
    pub const fn none() -> Scope {
        Scope { inner: None }
    }

    /// Starts `name` as a child of the current span (or a root) and makes it current;
    /// `attributes` is only called when spans are on.
    pub fn start(
        name: impl Into<Cow<'static, str>>,
        kind: SpanKind,
        attributes: impl FnOnce() -> Vec<KeyValue>,
    ) -> Scope {
        let mut scope = Scope::start_detached(name, kind, attributes);
        if let Some((cx, guard)) = &mut scope.inner {
            *guard = Some(cx.clone().attach());
        }
        scope
    }

    /// Starts `name` as a child of the current span without making it current: a span nothing
    /// is started under (a gate), which then costs no clone of the context and no switch of it.
    pub fn start_detached(
        name: impl Into<Cow<'static, str>>,
        kind: SpanKind,
        attributes: impl FnOnce() -> Vec<KeyValue>,
    ) -> Scope {
        if !enabled() {
            return Scope::none();
        }
        Scope {
            inner: start_here(name, kind, attributes()).map(|cx| (cx, None)),
        }
    }

    /// Sets attributes made by `f` (not called when the span does not record).
    pub fn set(&self, f: impl FnOnce() -> Vec<KeyValue>) {
        if let Some((cx, _)) = &self.inner {
            let span = cx.span();
            if span.is_recording() {
                span.set_attributes(f());
            }
        }
    }

    /// Marks the span failed with `why` (`error.type`).
    pub fn fail(&self, why: &str) {
        if let Some((cx, _)) = &self.inner {
            failed(&cx.span(), why);
        }
    }

    /// Ends the span and makes its parent current again.
    pub fn end(self) {}
}

/// `span` failed with `why`: status ERROR and `error.type` (when it records).
fn failed(span: &opentelemetry::trace::SpanRef<'_>, why: &str) {
    if span.is_recording() {
        span.set_attribute(KeyValue::new(attr::ERROR_TYPE, why.to_owned()));
        span.set_status(Status::error(why.to_owned()));
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        if let Some((cx, guard)) = self.inner.take() {
            drop(guard);
            let span = cx.span();
            // Unwound by a panic: the span never got its outcome.
            if std::thread::panicking() {
                span.set_status(Status::error("panic"));
            }
            span.end();
        }
    }
}

/// Sets attributes on the current span (a provider describing the call its attempt makes).
pub fn annotate(f: impl FnOnce() -> Vec<KeyValue>) {
    if !enabled() {
        return;
    }
    Context::map_current(|cx| {
        let span = cx.span();
        if span.is_recording() {
            span.set_attributes(f());
        }
    });
}

/// The `traceparent` (and `tracestate`, when not empty) of the current span, W3C trace
/// context: what an outgoing request carries. Empty when spans are off or none is current.
pub fn inject() -> Vec<(&'static str, String)> {
    if !enabled() {
        return Vec::new();
    }
    Context::map_current(|cx| {
        let span = cx.span();
        let sc = span.span_context();
        if !sc.is_valid() {
            return Vec::new();
        }
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
    })
}

/// The trace id (32 hex digits) of the current span when it is exported (spans on, sampled):
/// what a host stores beside a run so its operators can find the trace.
pub fn current_trace_id() -> Option<String> {
    if !enabled() {
        return None;
    }
    let cx = Context::current();
    let span = cx.span();
    let sc = span.span_context();
    (sc.is_valid() && sc.is_sampled()).then(|| sc.trace_id().to_string())
}

/// The span of a run of `node` (`invoke_agent {node}`), current until it ends; its
/// attributes are set by [`finish_run`].
pub fn run_span(agent: &str, version: &str, node: &str) -> Scope {
    if !enabled() {
        return Scope::none();
    }
    Scope::start(joined("invoke_agent ", node), SpanKind::Internal, || {
        // Room for how it ends (six, and `error.type`), set then without regrowth.
        let mut attributes = Vec::with_capacity(12);
        attributes.extend([
            KeyValue::new(attr::OPERATION, "invoke_agent"),
            KeyValue::new(attr::AGENT_NAME, agent.to_owned()),
            KeyValue::new(attr::AGENT, agent.to_owned()),
            KeyValue::new(attr::VERSION, version.to_owned()),
            KeyValue::new(attr::NODE, node.to_owned()),
        ]);
        attributes
    })
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
    scope.set(|| ended_attributes(ended, 0));
    if ended.failed {
        scope.fail(ended.code.unwrap_or("error"));
    }
    scope.end();
}

/// The attributes of how a run ended (six at most), with room for `more`.
fn ended_attributes(ended: &Ended<'_>, more: usize) -> Vec<KeyValue> {
    let mut out = Vec::with_capacity(6 + more);
    out.extend([
        KeyValue::new(attr::RECEIPT, ended.receipt.to_owned()),
        KeyValue::new(attr::STATUS, ended.status),
        KeyValue::new(attr::COST, ended.cost.to_owned()),
        KeyValue::new(attr::SPENT, ended.spent.to_owned()),
    ]);
    if let Some(code) = ended.code {
        out.push(KeyValue::new(attr::CODE, code.to_owned()));
    }
    if let Some(currency) = ended.currency {
        out.push(KeyValue::new(attr::CURRENCY, currency.to_owned()));
    }
    out
}

/// The span of the input gate of `node` (`gate {node}`), not current: no span is made under
/// a gate.
pub fn gate_span(node: &str) -> Scope {
    if !enabled() {
        return Scope::none();
    }
    Scope::start_detached(joined("gate ", node), SpanKind::Internal, || {
        // Room for the verdict's attributes, set when the gate ends (no regrowth then).
        let mut attributes = Vec::with_capacity(GATE_ATTRIBUTES);
        attributes.push(KeyValue::new(attr::NODE, node.to_owned()));
        attributes
    })
}

/// The most attributes a gate span has: the node, the verdict, the refused run's six, the
/// error count and the check.
const GATE_ATTRIBUTES: usize = 10;

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
    scope.set(|| match refused {
        None => vec![KeyValue::new(attr::GATE_OUTCOME, "admitted")],
        Some(refusal) => {
            let mut out = ended_attributes(&refusal.run, 3);
            out.push(KeyValue::new(attr::GATE_OUTCOME, "refused"));
            out.push(KeyValue::new(
                attr::GATE_ERRORS,
                i64::try_from(refusal.errors).unwrap_or(i64::MAX),
            ));
            if let Some(check) = refusal.check {
                out.push(KeyValue::new(attr::GATE_CHECK, check.to_owned()));
            }
            out
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
    let scope = Scope::start(joined("chat ", binding), SpanKind::Client, || {
        vec![
            KeyValue::new(attr::OPERATION, "chat"),
            KeyValue::new(attr::BINDING, binding.to_owned()),
            KeyValue::new(attr::ATTEMPT, i64::from(attempt)),
        ]
    });
    if capture_content() {
        scope.set(|| {
            vec![KeyValue::new(
                attr::INPUT_MESSAGES,
                messages("user", prompt),
            )]
        });
    }
    scope
}

/// What a provider is about to call, on the current attempt's span: its name by the
/// conventions (`openai`, `anthropic`, `gcp.gemini`), the model, the token limit, and the
/// server (`server.address`, `server.port`) read off `base_url`.
pub fn describe_call(provider: &'static str, model: &str, max_tokens: u32, base_url: &str) {
    if !enabled() {
        return;
    }
    let cx = Context::current();
    let span = cx.span();
    if !span.is_recording() {
        return;
    }
    span.update_name(joined("chat ", model));
    span.set_attributes([
        KeyValue::new(attr::PROVIDER, provider),
        KeyValue::new(attr::REQUEST_MODEL, model.to_owned()),
        KeyValue::new(attr::REQUEST_MAX_TOKENS, i64::from(max_tokens)),
    ]);
    if let Some((host, port)) = server_of(base_url) {
        span.set_attributes([
            KeyValue::new(attr::SERVER_ADDRESS, host.to_owned()),
            KeyValue::new(attr::SERVER_PORT, i64::from(port)),
        ]);
    }
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
    annotate(|| {
        let mut out = Vec::new();
        if let Some(id) = id {
            out.push(KeyValue::new(attr::RESPONSE_ID, id.to_owned()));
        }
        if let Some(model) = model {
            out.push(KeyValue::new(attr::RESPONSE_MODEL, model.to_owned()));
        }
        out
    });
}

/// The answer of an attempt on its span: why the model stopped, the tokens it used (and the
/// text, when the operator opted in).
pub fn attempt_answered(scope: &Scope, finish: &'static str, usage: (u64, u64), text: &str) {
    scope.set(|| {
        let tokens = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        let mut out = vec![
            KeyValue::new(
                attr::FINISH_REASONS,
                Value::Array(opentelemetry::Array::String(vec![finish.into()])),
            ),
            KeyValue::new(attr::INPUT_TOKENS, tokens(usage.0)),
            KeyValue::new(attr::OUTPUT_TOKENS, tokens(usage.1)),
        ];
        if capture_content() {
            out.push(KeyValue::new(
                attr::OUTPUT_MESSAGES,
                messages("assistant", text),
            ));
        }
        out
    });
}

/// The acceptance step that refused an attempt's answer (1–7 of the pipeline) and its code.
pub fn attempt_refused(scope: &Scope, step: u8, code: &str) {
    scope.set(|| {
        vec![
            KeyValue::new(attr::REFUSED_STEP, i64::from(step)),
            KeyValue::new(attr::REFUSED_CODE, code.to_owned()),
        ]
    });
}

/// One message of the conventions' content capture (`[{"role", "parts": [{"type": "text",
/// "content"}]}]`), as JSON text.
fn messages(role: &str, text: &str) -> String {
    serde_json::json!([{ "role": role, "parts": [{ "type": "text", "content": text }] }])
        .to_string()
}

/// A span of a tool call (`execute_tool {tool}`, the conventions' operation) for async code:
/// the context holding it, to run the call's future in
/// (`opentelemetry::context::FutureExt::with_context`) and to end with [`end`]; `None` when
/// spans are off. The MCP server's tools. `caller`: the context the call continues (an HTTP
/// request's `traceparent`), asked only when spans are on; `None` for the current one.
pub fn tool_context(tool: &str, caller: impl FnOnce() -> Option<Context>) -> Option<Context> {
    if !enabled() {
        return None;
    }
    let parent = caller().unwrap_or_else(Context::current);
    start_span(
        joined("execute_tool ", tool),
        SpanKind::Internal,
        vec![
            KeyValue::new(attr::OPERATION, "execute_tool"),
            KeyValue::new(attr::TOOL_NAME, tool.to_owned()),
        ],
        &parent,
    )
}

/// Ends the span of `cx` (from [`tool_context`]), failed with `error` when there is one.
pub fn end(cx: Option<Context>, error: Option<&str>) {
    if let Some(cx) = cx {
        let span = cx.span();
        if let Some(why) = error {
            failed(&span, why);
        }
        span.end();
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
