//! The seven steps of spec §6.1: how a model's answer becomes a typed output, and the failure
//! policies and budget around them.
//!
//! Per answer ([`Pipeline::process`]):
//! 1. **Receive**: more than `max_answer` bytes is `too_large`; a cut-off answer (finish reason
//!    `length`, or a stream that ended without its end) is `truncated_output`, never complete,
//!    even if its prefix parses.
//! 2. **Decode**: exactly one JSON value, optionally inside one markdown code fence (```` ```json
//!    ```` or ```` ``` ````, whitespace around it allowed); anything else — prose around it, two
//!    values, bad syntax — is `undecodable_output`.
//! 3. **Structural check**: the decoder's errors (spec §4), one rejection each, with paths.
//! 4. **Output checks** in declared order, through [`OutputStage::check`]; the first failing
//!    check is the rejection (`check` names it, `code` is its declared code).
//! 5. **Transform** through [`OutputStage::transform`].
//! 6. **Structural check again**: [`crate::validate::validate_value`] on the transformed value
//!    (skipped when no transform is declared: the value is then the one step 3 checked).
//! 7. **Accept**, or go on with the failure policy.
//!
//! Around the answers ([`Pipeline::run`]): the first call goes to the node's binding; then each
//! policy in order — `retry(n)`: n more calls; `repair(n)`: n more calls, each carrying the
//! rejection reasons of the previous attempt only (reasons replace earlier ones, so the prompt
//! does not grow); `fallback(binding)`: one call on that binding (later retries and repairs use
//! it too); `fail(code)`: the end, status `failed` with that code. Without `fail` the end is
//! `invalid_output`. The budget is checked before every call (`max_calls`, `max_time` on the
//! injected [`Clock`], `max_cost` on exact decimals); an answer that arrives after `max_time` is
//! not accepted. Running out of budget ends the run with status `error`, code
//! `budget_exceeded`; so do `model_unavailable`/`timeout` when the last call got no answer, and
//! `internal_error` when a check or transform cannot be evaluated (a program bug: no retry).

use crate::decode::Decoder;
use crate::error::Code;
use crate::eval::EvalError;
use crate::meter::{self, worst_case, Meter};
use crate::model::{FinishReason, Model, ModelAnswer, ModelRequest, Usage};
use crate::money::{Amount, Price};
use crate::provider::NodeCall;
use crate::rejection::Rejection;
use crate::reserved::ReservedCode;
use crate::trace;
use crate::ty::{Ty, TypeTable};
use crate::validate::Validator;
use crate::value::Value;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One step of `on_failure:` (the same shape as the compiler's IR).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "policy", rename_all = "snake_case")]
pub enum Policy {
    Retry { times: u32 },
    Repair { times: u32 },
    Fallback { binding: String },
    Fail { code: String },
}

/// `budget { … }`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Budget {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_calls: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_time_ms: Option<u64>,
    /// Decimal text in the bindings' currency (`"0.05"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost: Option<String>,
}

impl Budget {
    /// The budget as a meter frame's limits.
    pub fn limits(&self) -> meter::Limits {
        meter::Limits {
            max_calls: self.max_calls,
            max_cost: self.max_cost.as_deref().and_then(Amount::parse),
            max_time_ms: self.max_time_ms,
        }
    }
}

/// Milliseconds since some fixed point; injected so tests are deterministic.
pub trait Clock {
    fn now_ms(&mut self) -> u64;

    /// The wall-clock time in milliseconds since the Unix epoch, for what expires (a media
    /// reference's `expires_at`). The system's clock unless a test clock says otherwise.
    fn unix_ms(&mut self) -> i64 {
        unix_now_ms()
    }
}

/// The system's wall clock in milliseconds since the Unix epoch (0 before it): what a host
/// without a test clock stamps records with.
pub fn unix_now_ms() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The real clock.
pub struct SystemClock(std::time::Instant);

impl Default for SystemClock {
    fn default() -> SystemClock {
        SystemClock(std::time::Instant::now())
    }
}

impl Clock for SystemClock {
    fn now_ms(&mut self) -> u64 {
        u64::try_from(self.0.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

/// A test clock: every reading advances it by `tick` ms.
#[derive(Clone, Debug, Default)]
pub struct TickClock {
    pub now: u64,
    pub tick: u64,
}

impl Clock for TickClock {
    fn now_ms(&mut self) -> u64 {
        let now = self.now;
        self.now = self.now.saturating_add(self.tick);
        now
    }
}

/// A clock that moves only when told to, shared by its clones: tests (and a replayed stream,
/// whose time is the time its chunks carry) set it. Both readings are the one value, in
/// milliseconds since the Unix epoch.
#[derive(Clone, Debug, Default)]
pub struct ManualClock(std::sync::Arc<std::sync::atomic::AtomicI64>);

impl ManualClock {
    pub fn at(unix_ms: i64) -> ManualClock {
        ManualClock(std::sync::Arc::new(std::sync::atomic::AtomicI64::new(
            unix_ms,
        )))
    }

    pub fn set(&self, unix_ms: i64) {
        self.0.store(unix_ms, std::sync::atomic::Ordering::SeqCst);
    }

    /// Moves the clock forward to `unix_ms`; never back.
    pub fn advance_to(&self, unix_ms: i64) {
        self.0
            .fetch_max(unix_ms, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn get(&self) -> i64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Clock for ManualClock {
    fn now_ms(&mut self) -> u64 {
        u64::try_from(self.get()).unwrap_or(0)
    }

    fn unix_ms(&mut self) -> i64 {
        self.get()
    }
}

/// A failed output check: which check, its declared code and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckFailure {
    pub check: String,
    pub code: String,
    pub message: Option<String>,
}

/// Steps 4 and 5: the node's output checks and transform. The expression evaluator
/// ([`crate::stage::IrStage`]) and Rust-written `extern check`s both plug in here.
pub trait OutputStage {
    /// Runs the checks in declared order; the first failure, if any.
    fn check(&mut self, output: &Value) -> Result<Option<CheckFailure>, EvalError>;
    /// Applies the transform (identity when none is declared).
    fn transform(&mut self, output: Value) -> Result<Value, EvalError>;
    /// Whether a transform is declared. Without one, step 6 would re-check the very value
    /// step 3 just checked, so it is skipped.
    fn has_transform(&self) -> bool {
        true
    }
    /// Raw mode (`output { raw; parse: f; }`): the author's parser turns the answer's text
    /// into a value in place of step 2's decoding. `None`: the node decodes JSON. An `Err`
    /// from the parser rejects the answer at step 2 with its message.
    fn parse_raw(&mut self, text: &str) -> Option<Result<Value, EvalError>> {
        let _ = text;
        None
    }
}

/// No checks, no transform.
pub struct NoStage;

impl OutputStage for NoStage {
    fn check(&mut self, _output: &Value) -> Result<Option<CheckFailure>, EvalError> {
        Ok(None)
    }
    fn transform(&mut self, output: Value) -> Result<Value, EvalError> {
        Ok(output)
    }
    fn has_transform(&self) -> bool {
        false
    }
}

/// One model call and what became of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Attempt {
    pub binding: String,
    /// Bytes of the answer (0 when the call got none).
    pub bytes: u64,
    #[serde(default)]
    pub usage: Usage,
    /// The call's exact cost, decimal text.
    pub cost: String,
    /// What was reserved for the call before it was made (its worst case), decimal text.
    #[serde(default = "zero_text")]
    pub reserved: String,
    /// The first rejection (the receipt's summary); `None` for the accepted attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected: Option<Rejection>,
    /// Every rejection of this attempt (what a repair sends back).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<Rejection>,
}

fn zero_text() -> String {
    "0".to_owned()
}

/// How a run ended (spec §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Succeeded,
    RejectedInput,
    InvalidOutput,
    Failed,
    Error,
}

/// The one vocabulary of statuses: receipts, the store's rows and indexes, the gateway's
/// response documents and its HTTP mapping all read these words from here ([`Status::as_str`],
/// [`Status::parse`]); serde writes the same words.
impl Status {
    /// Every status, in the order of spec §10.
    pub const ALL: [Status; 5] = [
        Status::Succeeded,
        Status::RejectedInput,
        Status::InvalidOutput,
        Status::Failed,
        Status::Error,
    ];

    /// The status as receipts write it (`rejected_input`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Status::Succeeded => "succeeded",
            Status::RejectedInput => "rejected_input",
            Status::InvalidOutput => "invalid_output",
            Status::Failed => "failed",
            Status::Error => "error",
        }
    }

    /// The status a receipt's word names; `None` for any other word.
    pub fn parse(word: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.as_str() == word)
    }

    /// Whether the agent answered: `succeeded`, or a `failed` it declared. A run that ends so
    /// is a success of the call (HTTP 200); the others are refusals or failures of the run.
    pub fn answered(self) -> bool {
        matches!(self, Status::Succeeded | Status::Failed)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The result of a run: status, code, the accepted output, the attempts and the cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub status: Status,
    /// `None` on success; `invalid_output`, a declared code, or a reserved code.
    pub code: Option<String>,
    pub output: Option<Value>,
    /// The output's canonical JSON (what is hashed and printed).
    pub output_json: Option<String>,
    pub attempts: Vec<Attempt>,
    /// What the calls cost.
    pub cost: Amount,
    /// The sum of what was reserved before each call.
    pub reserved: Amount,
    pub currency: Option<String>,
}

impl Outcome {
    /// The input was refused (decoding or input checks): nothing ran, nothing is billed.
    pub fn rejected_input() -> Outcome {
        Outcome {
            status: Status::RejectedInput,
            code: Some(ReservedCode::InvalidInput.to_code()),
            output: None,
            output_json: None,
            attempts: Vec::new(),
            cost: Amount::ZERO,
            reserved: Amount::ZERO,
            currency: None,
        }
    }

    /// A run that ended before any call with `status` and `code`: nothing spent.
    pub fn no_call(status: Status, code: &str) -> Outcome {
        Outcome {
            status,
            code: Some(code.to_owned()),
            ..Outcome::rejected_input()
        }
    }
}

/// Why one answer was not accepted.
#[derive(Clone, Debug, PartialEq)]
pub enum Refusal {
    /// Steps 1–6 rejected it; the failure policy decides what next.
    Rejected(Vec<Rejection>),
    /// A check or the transform could not be evaluated: `internal_error`, no retry.
    Internal(Box<Rejection>),
}

/// A node's output pipeline.
pub struct Pipeline<'a> {
    pub table: &'a TypeTable,
    pub output_ty: &'a Ty,
    /// The node's binding (`model: binding("…")`).
    pub binding: String,
    pub max_answer: u64,
    pub policies: Vec<Policy>,
    pub budget: Budget,
    /// Prices by binding name; a binding without a price costs nothing.
    pub prices: BTreeMap<String, Price>,
    /// The node whose answer this is (carried on each request).
    pub node: String,
    /// What live providers need besides the prompt (parts, schemas, timeout), carried on
    /// each request; its bytes count in each call's worst case.
    pub call: Option<Arc<NodeCall>>,
}

/// The root of output paths (`output.findings[0]`).
pub const OUTPUT_ROOT: &str = "output";

/// One planned call: the binding, and whether it carries the previous reasons.
struct Planned {
    binding: String,
    repair: bool,
}

impl<'a> Pipeline<'a> {
    /// A pipeline with no policies and no budget.
    pub fn new(table: &'a TypeTable, output_ty: &'a Ty, binding: &str, max_answer: u64) -> Self {
        Pipeline {
            table,
            output_ty,
            binding: binding.to_owned(),
            max_answer,
            policies: Vec::new(),
            budget: Budget::default(),
            prices: BTreeMap::new(),
            node: String::new(),
            call: None,
        }
    }

    /// Steps 1–6 for one answer; `Ok` is step 7's accepted value.
    pub fn process(
        &self,
        decoder: &mut Decoder<'_>,
        validator: &mut Validator<'_>,
        answer: &str,
        finish: FinishReason,
        stage: &mut dyn OutputStage,
    ) -> Result<Value, Refusal> {
        // Step 1.
        if answer.len() as u64 > self.max_answer {
            return Err(Refusal::Rejected(vec![Rejection::simple(
                1,
                "too_large",
                format!(
                    "the answer has {} bytes, at most {} are allowed",
                    answer.len(),
                    self.max_answer
                ),
            )]));
        }
        match finish {
            FinishReason::Stop => {}
            FinishReason::Length => {
                return Err(Refusal::Rejected(vec![Rejection::simple(
                    1,
                    ReservedCode::TruncatedOutput.as_str(),
                    "the answer was cut off at the length limit, so it is never complete",
                )]))
            }
            FinishReason::Incomplete => {
                return Err(Refusal::Rejected(vec![Rejection::simple(
                    1,
                    ReservedCode::TruncatedOutput.as_str(),
                    "the answer's stream ended without its end, so it is never complete",
                )]))
            }
        }
        // Raw mode: the parser stands for step 2; what it returns is checked at step 3.
        if let Some(parsed) = stage.parse_raw(answer) {
            let value = parsed.map_err(|e| {
                Refusal::Rejected(vec![Rejection::simple(
                    2,
                    ReservedCode::UndecodableOutput.as_str(),
                    format!("the raw parser refused the answer: {}", e.message),
                )])
            })?;
            let errors = validator.validate(&value, self.output_ty, OUTPUT_ROOT);
            if !errors.is_empty() {
                return Err(Refusal::Rejected(
                    errors
                        .into_iter()
                        .map(|e| Rejection::structural(3, e))
                        .collect(),
                ));
            }
            return self.accept(validator, value, stage);
        }
        // Steps 2 and 3: one pass; syntax errors are step 2, the rest step 3.
        let Some(json) = strip_fence(answer) else {
            return Err(Refusal::Rejected(vec![Rejection::simple(
                2,
                ReservedCode::UndecodableOutput.as_str(),
                "the answer's code fence is not one ```json (or ```) fence closed around one JSON value",
            )]));
        };
        let value = match decoder.decode_str(json, self.output_ty, OUTPUT_ROOT) {
            Ok(v) => v,
            Err(errors) => {
                if let Some(syntax) = errors.iter().find(|e| e.code == Code::InvalidJson) {
                    return Err(Refusal::Rejected(vec![Rejection::simple(
                        2,
                        ReservedCode::UndecodableOutput.as_str(),
                        format!(
                            "the answer is not exactly one JSON value (optionally in one code fence): {}",
                            syntax.message
                        ),
                    )]));
                }
                let reasons = errors
                    .into_iter()
                    .map(|e| Rejection::structural(3, e))
                    .collect();
                return Err(Refusal::Rejected(reasons));
            }
        };
        self.accept(validator, value, stage)
    }

    /// Steps 4–7 for a value that passed step 3: the node's checks, its transform, the
    /// structural check again. Also what a node body's computed answer goes through.
    pub fn accept(
        &self,
        validator: &mut Validator<'_>,
        value: Value,
        stage: &mut dyn OutputStage,
    ) -> Result<Value, Refusal> {
        // Step 4.
        match stage.check(&value) {
            Ok(None) => {}
            Ok(Some(failure)) => {
                let message = match &failure.message {
                    Some(m) => format!("check {} failed: {m} ({})", failure.check, failure.code),
                    None => format!("check {} failed ({})", failure.check, failure.code),
                };
                return Err(Refusal::Rejected(vec![Rejection {
                    step: 4,
                    code: failure.code,
                    path: None,
                    pointer: None,
                    check: Some(failure.check),
                    message,
                }]));
            }
            Err(e) => return Err(Refusal::Internal(Box::new(internal(4, &e)))),
        }
        // Step 5.
        if !stage.has_transform() {
            return Ok(value);
        }
        let value = stage
            .transform(value)
            .map_err(|e| Refusal::Internal(Box::new(internal(5, &e))))?;
        // Step 6.
        let errors = validator.validate(&value, self.output_ty, OUTPUT_ROOT);
        if !errors.is_empty() {
            return Err(Refusal::Rejected(
                errors
                    .into_iter()
                    .map(|e| Rejection::structural(6, e))
                    .collect(),
            ));
        }
        // Step 7: accepted.
        Ok(value)
    }

    /// The whole run: calls, steps, policies and budget, on a meter of its own (the
    /// pipeline's [`Budget`] as its one frame).
    pub fn run(
        &self,
        prompt: &str,
        model: &mut dyn Model,
        stage: &mut dyn OutputStage,
        clock: &mut dyn Clock,
    ) -> Outcome {
        let mut meter = Meter::single(self.budget.limits(), clock.now_ms());
        self.run_metered(prompt, model, stage, clock, &mut meter)
    }

    /// The whole run, spending from `meter` (the frames of the node and of its callers; see
    /// [`crate::meter`]): before each call its worst case is reserved in every frame, and a
    /// call that does not fit is not made (`budget_exceeded`).
    pub fn run_metered(
        &self,
        prompt: &str,
        model: &mut dyn Model,
        stage: &mut dyn OutputStage,
        clock: &mut dyn Clock,
        meter: &mut Meter,
    ) -> Outcome {
        let max_input = usize::try_from(self.max_answer).unwrap_or(usize::MAX);
        let mut decoder = Decoder::new(self.table).with_max_input_bytes(max_input);
        let mut validator = Validator::new(self.table);
        let (plan, fail_code) = self.plan();
        let mut attempts: Vec<Attempt> = Vec::new();
        let mut total = Amount::ZERO;
        let mut reserved = Amount::ZERO;
        let mut last_reasons: Vec<Rejection> = Vec::new();
        let mut last_model_error: Option<&'static str> = None;
        // A repair quotes the previous answer back, so its bytes count in the next worst case.
        let mut last_answer_bytes = 0u64;
        let currency = self.prices.values().next().map(|p| p.currency.clone());
        let end = |status: Status,
                   code: Option<&str>,
                   attempts: Vec<Attempt>,
                   total: Amount,
                   reserved: Amount| Outcome {
            status,
            code: code.map(str::to_owned),
            output: None,
            output_json: None,
            attempts,
            cost: total,
            reserved,
            currency: currency.clone(),
        };
        for (i, planned) in plan.iter().enumerate() {
            let repair = if planned.repair {
                last_reasons.clone()
            } else {
                Vec::new()
            };
            let price = self.prices.get(&planned.binding);
            let worst = price.map_or(Amount::ZERO, |p| {
                let sent = self.request_bytes(prompt, &repair, last_answer_bytes);
                worst_case(p, sent, self.max_answer)
            });
            let reservation = match meter
                .check_time(clock.now_ms())
                .and_then(|()| meter.reserve(worst))
            {
                Ok(r) => r,
                Err(_) => {
                    return end(
                        Status::Error,
                        Some(ReservedCode::BudgetExceeded.as_str()),
                        attempts,
                        total,
                        reserved,
                    )
                }
            };
            reserved = reserved.saturating_add(worst);
            let request = ModelRequest {
                binding: planned.binding.clone(),
                prompt: prompt.to_owned(),
                repair,
                max_answer: self.max_answer,
                attempt: i as u32 + 1,
                node: self.node.clone(),
                call: self.call.clone(),
            };
            // One CLIENT span per attempt, current during the call (the provider names its
            // model on it and sends its `traceparent`) and until the steps have judged it.
            let span = trace::attempt_span(&planned.binding, request.attempt, prompt);
            let answer = model.call(&request);
            if let Ok(a) = &answer {
                let finish = match a.finish_reason {
                    FinishReason::Stop => "stop",
                    FinishReason::Length => "length",
                    FinishReason::Incomplete => "incomplete",
                };
                let usage = (a.usage.input_tokens, a.usage.output_tokens);
                trace::attempt_answered(&span, finish, usage, &a.text);
            }
            let ModelAnswer {
                text,
                finish_reason,
                usage,
            } = match answer {
                Ok(a) => a,
                Err(e) => {
                    span.fail(e.code());
                    drop(span);
                    meter.settle(reservation, Amount::ZERO);
                    last_answer_bytes = 0;
                    let rejection = Rejection::simple(1, e.code(), e.to_string());
                    last_model_error = Some(e.code());
                    last_reasons = vec![rejection.clone()];
                    attempts.push(Attempt {
                        binding: planned.binding.clone(),
                        bytes: 0,
                        usage: Usage::default(),
                        cost: "0".to_owned(),
                        reserved: worst.to_string(),
                        rejected: Some(rejection),
                        reasons: Vec::new(),
                    });
                    continue;
                }
            };
            last_model_error = None;
            last_answer_bytes = text.len() as u64;
            let cost = price
                .and_then(Price::per_token)
                .map(|p| p.cost(usage.input_tokens, usage.output_tokens))
                .unwrap_or(Amount::ZERO);
            meter.settle(reservation, cost);
            total = total.saturating_add(cost);
            let mut attempt = Attempt {
                binding: planned.binding.clone(),
                bytes: text.len() as u64,
                usage,
                cost: cost.to_string(),
                reserved: worst.to_string(),
                rejected: None,
                reasons: Vec::new(),
            };
            if meter.late(clock.now_ms()) {
                span.fail(ReservedCode::BudgetExceeded.as_str());
                attempt.rejected = Some(Rejection::simple(
                    1,
                    ReservedCode::BudgetExceeded.as_str(),
                    "the answer arrived after the budget's max_time",
                ));
                attempts.push(attempt);
                return end(
                    Status::Error,
                    Some(ReservedCode::BudgetExceeded.as_str()),
                    attempts,
                    total,
                    reserved,
                );
            }
            match self.process(&mut decoder, &mut validator, &text, finish_reason, stage) {
                Ok(value) => {
                    attempts.push(attempt);
                    let json = value.to_json_string(self.output_ty, self.table);
                    return Outcome {
                        status: Status::Succeeded,
                        code: None,
                        output: Some(value),
                        output_json: Some(json),
                        attempts,
                        cost: total,
                        reserved,
                        currency,
                    };
                }
                Err(Refusal::Internal(rejection)) => {
                    trace::attempt_refused(&span, rejection.step, &rejection.code);
                    span.fail(ReservedCode::InternalError.as_str());
                    attempt.rejected = Some(*rejection);
                    attempts.push(attempt);
                    return end(
                        Status::Error,
                        Some(ReservedCode::InternalError.as_str()),
                        attempts,
                        total,
                        reserved,
                    );
                }
                Err(Refusal::Rejected(reasons)) => {
                    if let Some(first) = reasons.first() {
                        trace::attempt_refused(&span, first.step, &first.code);
                    }
                    attempt.rejected = reasons.first().cloned();
                    attempt.reasons = reasons.clone();
                    last_reasons = reasons;
                    attempts.push(attempt);
                }
            }
        }
        if let Some(code) = last_model_error {
            return end(Status::Error, Some(code), attempts, total, reserved);
        }
        match fail_code {
            Some(code) => end(Status::Failed, Some(&code), attempts, total, reserved),
            None => end(
                Status::InvalidOutput,
                Some(ReservedCode::InvalidOutput.as_str()),
                attempts,
                total,
                reserved,
            ),
        }
    }

    /// The bytes a call sends at most: the prompt, the repair's reasons and the previous
    /// answer it quotes, and what [`Pipeline::call`] adds.
    fn request_bytes(&self, prompt: &str, repair: &[Rejection], last_answer: u64) -> u64 {
        let mut bytes = prompt.len() as u64;
        if !repair.is_empty() {
            bytes = bytes.saturating_add(last_answer);
            // The fixed sentences around them, then each reason as a line: its place, message
            // and code (`provider::adapter::reason_line`).
            bytes = bytes.saturating_add(256);
            for r in repair {
                let place = r.path.as_deref().or(r.check.as_deref()).unwrap_or("");
                let line = place.len() + r.message.len() + r.code.len() + 8;
                bytes = bytes.saturating_add(line as u64);
            }
        }
        if let Some(call) = &self.call {
            bytes = bytes.saturating_add(call.request_bytes());
        }
        bytes
    }

    /// The calls the policies allow, in order, and the final `fail` code if declared.
    fn plan(&self) -> (Vec<Planned>, Option<String>) {
        let mut binding = self.binding.clone();
        let mut plan = vec![Planned {
            binding: binding.clone(),
            repair: false,
        }];
        for policy in &self.policies {
            match policy {
                Policy::Retry { times } | Policy::Repair { times } => {
                    let repair = matches!(policy, Policy::Repair { .. });
                    // Bounded: a policy asks for a handful of calls; the budget bounds the rest.
                    for _ in 0..(*times).min(1_000) {
                        plan.push(Planned {
                            binding: binding.clone(),
                            repair,
                        });
                    }
                }
                Policy::Fallback { binding: other } => {
                    binding = other.clone();
                    plan.push(Planned {
                        binding: binding.clone(),
                        repair: false,
                    });
                }
                Policy::Fail { code } => return (plan, Some(code.clone())),
            }
        }
        (plan, None)
    }
}

fn internal(step: u8, e: &EvalError) -> Rejection {
    Rejection::simple(
        step,
        ReservedCode::InternalError.as_str(),
        format!(
            "the {} could not be evaluated: {}",
            if step == 4 { "check" } else { "transform" },
            e.message
        ),
    )
}

/// The JSON inside an answer: the whole text, or the inside of one ```` ```json ```` /
/// ```` ``` ```` fence (whitespace around it allowed). `None` for a fence with another language.
pub fn strip_fence(answer: &str) -> Option<&str> {
    // Most answers start and end with a bracket: nothing to trim, and no need to decode
    // characters at both ends to find that out.
    let bytes = answer.as_bytes();
    let text = if bytes.first().is_some_and(u8::is_ascii_graphic)
        && bytes.last().is_some_and(u8::is_ascii_graphic)
    {
        answer
    } else {
        answer.trim()
    };
    let Some(rest) = text.strip_prefix("```") else {
        return Some(text);
    };
    let (info, body) = rest.split_once('\n')?;
    let info = info.trim();
    if !(info.is_empty() || info.eq_ignore_ascii_case("json")) {
        return None;
    }
    body.trim_end().strip_suffix("```")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences() {
        assert_eq!(strip_fence(" {\"a\":1} \n"), Some("{\"a\":1}"));
        assert_eq!(strip_fence("```json\n{\"a\":1}\n```"), Some("{\"a\":1}\n"));
        assert_eq!(strip_fence("```\n[1]\n```\n"), Some("[1]\n"));
        assert_eq!(strip_fence("```python\n[1]\n```"), None);
        assert_eq!(strip_fence("```json\n[1]"), None);
    }
}
