//! [`ProviderModel`]: the pipeline's [`Model`] served by real providers, one per binding, so a
//! node's pipeline (retries, repairs, fallbacks, budget) runs against real endpoints.
//!
//! The pipeline's request names the binding and carries the rendered prompt and, for a repair,
//! the rejection reasons of the previous attempt; the node-level settings the pipeline does not
//! carry (timeout, temperature, the input builder's parts, the model-facing schemas) travel in
//! the request as a [`NodeCall`] (the executor's calls, one per node of a delegation tree), or
//! are given once, at [`ProviderModel::new`].
//!
//! A 429 with `retry-after` is not retried here (the node's policy decides whether to ask
//! again), but the next call to that binding, in this run or any other sharing the providers
//! ([`super::backoff`]), waits as long as the server asked, up to [`MAX_RETRY_AFTER`].
//!
//! Mapping back: `too_large` becomes an answer longer than `max_answer` (so step 1 rejects it
//! with its own code and byte count), a truncated stream an `Incomplete` answer, a timeout
//! [`ModelError::Timeout`], and every other failure [`ModelError::Unavailable`] with the
//! provider's (key-free) sentence.

use super::answer::FinishReason;
use super::backoff::RateLimits;
use super::error::ProviderError;
use super::request::{ModelRequest as ProviderRequest, OutputSchema, Part, Repair};
use super::Provider;
use crate::model::{self, Model, ModelAnswer, ModelError, ModelRequest};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// What every call of one node shares.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeCall {
    pub timeout: Duration,
    pub temperature: Option<f64>,
    /// The input builder's parts; when `None`, the request is the rendered prompt as one text
    /// part.
    pub parts: Option<Vec<Part>>,
    /// The model-facing output schema for each provider (`openai`, `anthropic`), from codegen
    /// (spec §9.3); a provider with none gets no structured-output mode. Set through
    /// [`NodeCall::set_schema`], which keeps `schema_bytes` true.
    schemas: BTreeMap<String, OutputSchema>,
    /// The bytes of the largest schema as sent, counted once (every call's worst case adds it).
    schema_bytes: u64,
    /// The answer's GBNF grammar, from codegen, for bindings with `constrain = "grammar"`.
    pub grammar: Option<String>,
}

impl NodeCall {
    pub fn new(timeout: Duration) -> NodeCall {
        NodeCall {
            timeout,
            temperature: None,
            parts: None,
            schemas: BTreeMap::new(),
            schema_bytes: 0,
            grammar: None,
        }
    }

    /// Sets the model-facing schema for `provider` (`openai`, `anthropic`).
    pub fn set_schema(&mut self, provider: &str, schema: OutputSchema) {
        let bytes = schema.schema.to_string().len() as u64;
        self.schema_bytes = self.schema_bytes.max(bytes);
        self.schemas.insert(provider.to_owned(), schema);
    }

    /// The model-facing schema for `provider`, if any.
    pub fn schema(&self, provider: &str) -> Option<&OutputSchema> {
        self.schemas.get(provider)
    }

    /// The most bytes these settings add to a request besides the prompt: the parts (media
    /// references count their URL) and the largest model-facing schema or the grammar, which
    /// providers count as input.
    pub fn request_bytes(&self) -> u64 {
        let parts: u64 = self.parts.iter().flatten().map(Part::bytes).sum();
        // A binding sends the schema or the grammar; either may be the larger.
        let grammar = self.grammar.as_ref().map_or(0, |g| g.len() as u64);
        parts.saturating_add(self.schema_bytes.max(grammar))
    }
}

/// Routes each call to its binding's provider.
#[derive(Debug)]
pub struct ProviderModel {
    /// Shared: one connected provider serves every run of a server (providers keep no
    /// per-call state), and one table of them, so a run's model is made without copying it.
    providers: Arc<Providers>,
    node: NodeCall,
    /// The text of the last answer, quoted back in a repair request.
    last_answer: Option<String>,
    /// Per binding: no call before an instant (a 429's `retry-after`), shared with every
    /// other run over the same providers ([`ProviderModel::with_rate_limits`]).
    limits: RateLimits,
    /// How long a call waited for a `retry-after`, in total (for tests and receipts' readers).
    pub waited: Duration,
    /// Where a failure's detail goes when its host keeps it from callers ([`Reporter`]).
    reporter: Option<Reporter>,
}

/// Told every failed call (the binding and the provider's error, whose text is the
/// provider's): a host serving other people's calls (the gateway) logs it for its operator,
/// and answers and receipts get the error's [`ProviderError::summary`] instead.
#[derive(Clone)]
pub struct Reporter(pub Arc<ReportFn>);

/// Connected providers by binding name.
pub type Providers = BTreeMap<String, Arc<dyn Provider>>;

/// What a [`Reporter`] calls: the binding and the error.
pub type ReportFn = dyn Fn(&str, &ProviderError) + Send + Sync;

impl std::fmt::Debug for Reporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reporter")
    }
}

pub use super::backoff::MAX_RETRY_AFTER;

impl ProviderModel {
    pub fn new(node: NodeCall) -> ProviderModel {
        ProviderModel {
            providers: Arc::default(),
            node,
            last_answer: None,
            limits: RateLimits::default(),
            waited: Duration::ZERO,
            reporter: None,
        }
    }

    /// Shares `limits` (a server's, [`super::router::Connected`]): a 429 told to any run makes
    /// every run wait, and this one waits for what others were told.
    pub fn with_rate_limits(mut self, limits: RateLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Failures' detail goes to `reporter`, their [`ProviderError::summary`] to the run.
    pub fn with_reporter(mut self, reporter: Option<Reporter>) -> Self {
        self.reporter = reporter;
        self
    }

    /// The node-level settings (the builder's parts are known only once the input is decoded).
    pub fn node_mut(&mut self) -> &mut NodeCall {
        &mut self.node
    }

    /// Serves `binding` with `provider`.
    pub fn with_binding(self, binding: impl Into<String>, provider: Box<dyn Provider>) -> Self {
        self.with_shared_binding(binding, Arc::from(provider))
    }

    /// Serves `binding` with a provider other runs share.
    pub fn with_shared_binding(
        mut self,
        binding: impl Into<String>,
        provider: Arc<dyn Provider>,
    ) -> Self {
        Arc::make_mut(&mut self.providers).insert(binding.into(), provider);
        self
    }

    /// Serves every binding of `providers`, a table other runs share.
    pub fn with_providers(mut self, providers: Arc<Providers>) -> Self {
        self.providers = providers;
        self
    }

    fn provider_request(&self, request: &ModelRequest, provider: &dyn Provider) -> ProviderRequest {
        // A request made by the executor carries its node's settings (a delegated call's node
        // has its own); otherwise the ones this model was made with.
        let node = request.call.as_deref().unwrap_or(&self.node);
        let parts = node
            .parts
            .clone()
            .unwrap_or_else(|| vec![Part::Text(request.prompt.clone())]);
        let repair = (!request.repair.is_empty()).then(|| Repair {
            previous_answer: self.last_answer.clone().unwrap_or_default(),
            reasons: request.repair.iter().map(reason_line).collect(),
        });
        ProviderRequest {
            parts,
            temperature: node.temperature,
            max_answer_bytes: request.max_answer,
            timeout: node.timeout,
            output_schema: node.schema(provider.name()).cloned(),
            grammar: node.grammar.clone(),
            repair,
        }
    }
}

/// One reason as the model reads it: where, what, and the code, each once (decoder messages
/// already start with their path and end with their code).
fn reason_line(rejection: &crate::rejection::Rejection) -> String {
    let mut line = String::new();
    if let Some(place) = rejection.path.as_deref().or(rejection.check.as_deref()) {
        if !rejection.message.starts_with(place) {
            line.push_str(place);
            line.push_str(": ");
        }
    }
    line.push_str(&rejection.message);
    if !rejection
        .message
        .ends_with(&format!("({})", rejection.code))
    {
        line.push_str(&format!(" ({})", rejection.code));
    }
    line
}

impl Model for ProviderModel {
    fn call(&mut self, request: &ModelRequest) -> Result<ModelAnswer, ModelError> {
        let Some(provider) = self.providers.get(&request.binding) else {
            return Err(ModelError::Unavailable(format!(
                "no provider serves the binding `{}`",
                request.binding
            )));
        };
        let asked = self.provider_request(request, provider.as_ref());
        // A failed call leaves no answer to quote in the next repair.
        self.last_answer = None;
        // A 429 asked for a pause (told to this run or another): wait as long as the server
        // said, no longer.
        let wait = self.limits.wait_for(&request.binding);
        if !wait.is_zero() {
            std::thread::sleep(wait);
            self.waited += wait;
        }
        let outcome = provider.complete(&asked);
        if let Err(ProviderError::RateLimited {
            retry_after: Some(delay),
            ..
        }) = &outcome
        {
            self.limits.hold(&request.binding, *delay);
        }
        let outcome = match (outcome, &self.reporter) {
            // Those the pipeline reads as answers (too large, cut off) or as its own code
            // (timeout) say nothing of the provider's: they go on as they are.
            (Err(e), Some(report))
                if !matches!(
                    e,
                    ProviderError::TooLarge { .. }
                        | ProviderError::Truncated { .. }
                        | ProviderError::Timeout { .. }
                ) =>
            {
                (report.0)(&request.binding, &e);
                return Err(ModelError::Unavailable(e.summary()));
            }
            (outcome, _) => outcome,
        };
        let answer = to_model_answer(outcome, request.max_answer)?;
        self.last_answer = Some(answer.text.clone());
        Ok(answer)
    }
}

fn to_model_answer(
    outcome: Result<super::Answer, ProviderError>,
    max_answer: u64,
) -> Result<ModelAnswer, ModelError> {
    match outcome {
        Ok(answer) => Ok(ModelAnswer {
            text: answer.text,
            finish_reason: match answer.finish_reason {
                FinishReason::Stop => model::FinishReason::Stop,
                FinishReason::Length => model::FinishReason::Length,
                // Cut by a filter: the answer is not whole.
                FinishReason::Other(raw) if raw == "content_filter" => {
                    model::FinishReason::Incomplete
                }
                // A refusal or an unreported reason: the decoder judges the text.
                FinishReason::Other(_) => model::FinishReason::Stop,
            },
            usage: model::Usage {
                input_tokens: answer.usage.input_tokens,
                output_tokens: answer.usage.output_tokens,
            },
        }),
        Err(ProviderError::TooLarge { partial, .. }) if partial.len() as u64 > max_answer => {
            Ok(ModelAnswer {
                text: partial,
                finish_reason: model::FinishReason::Stop,
                usage: model::Usage::default(),
            })
        }
        Err(ProviderError::Truncated { partial, .. }) => Ok(ModelAnswer {
            text: partial,
            finish_reason: model::FinishReason::Incomplete,
            usage: model::Usage::default(),
        }),
        Err(ProviderError::Timeout { .. }) => Err(ModelError::Timeout),
        Err(other) => Err(ModelError::Unavailable(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rejection::Rejection;

    fn rejection(path: Option<&str>, check: Option<&str>, code: &str, message: &str) -> Rejection {
        Rejection {
            step: 4,
            code: code.into(),
            path: path.map(str::to_string),
            pointer: None,
            check: check.map(str::to_string),
            message: message.into(),
        }
    }

    #[test]
    fn reasons_name_place_and_code_once() {
        let structural = rejection(
            Some("output.summary"),
            None,
            "wrong_type",
            "output.summary: expected a string, found a number (wrong_type)",
        );
        assert_eq!(
            reason_line(&structural),
            "output.summary: expected a string, found a number (wrong_type)"
        );
        let check = rejection(
            None,
            Some("within_limit"),
            "too_many_findings",
            "12 findings",
        );
        assert_eq!(
            reason_line(&check),
            "within_limit: 12 findings (too_many_findings)"
        );
    }
}
