//! Why a model call produced no answer, as typed data; the text is made in [`fmt::Display`].
//!
//! Messages quote the provider only through the redacting helpers of [`super::secret`], so no
//! API key reaches them. [`ProviderError::code`] maps each variant onto the reserved codes of
//! spec §5 that receipts use.

use super::request::PartKind;
use crate::reserved::ReservedCode;
use std::fmt;
use std::time::Duration;

/// A failed model call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProviderError {
    /// The binding names `api_key_env` but the variable is not set.
    MissingApiKey { var: String },
    /// The variable `api_key_env` names is set, but holds no usable key; `problem` says why
    /// ("is set but empty").
    UnusableApiKey { var: String, problem: &'static str },
    /// A part kind the binding does not `accept`, or that this provider cannot carry in that
    /// form; found before anything is sent.
    UnsupportedPart {
        kind: PartKind,
        provider: &'static str,
        reason: String,
    },
    /// The binding itself is unusable (a base URL that is no URL, …).
    InvalidConfig { reason: String },
    /// No complete answer within the request's `timeout`.
    Timeout { after: Duration },
    /// The endpoint could not be reached, or answered with a server error (HTTP 5xx).
    ModelUnavailable { status: Option<u16>, reason: String },
    /// HTTP 429. `retry_after` is the delay the server asked for, when it said one; retrying is
    /// the caller's decision (the node's failure policy and budget), never this layer's.
    RateLimited {
        retry_after: Option<Duration>,
        reason: String,
    },
    /// The endpoint refused the request (HTTP 4xx other than 429: a bad key, an unknown model,
    /// a schema the structured-output mode does not take).
    Refused { status: u16, reason: String },
    /// The answer grew past `max_answer` bytes; reading stopped there (step 1, `too_large`).
    /// `partial` is what was received (bounded: the limit plus the last piece read), for the
    /// pipeline's step 1 and the receipt's byte count; it is never printed.
    TooLarge {
        limit: u64,
        received: u64,
        partial: String,
    },
    /// The stream ended, or the connection was cut, before the provider's end event: the
    /// answer is `truncated_output` and never complete, even if its prefix parses.
    Truncated {
        received: u64,
        reason: String,
        partial: String,
    },
    /// The provider's response is not the shape its API documents.
    Malformed { reason: String },
}

/// A [`ProviderError::Malformed`]: the response is not the shape its provider's API documents
/// (one constructor for every provider's reader).
pub(crate) fn malformed(reason: impl Into<String>) -> ProviderError {
    ProviderError::Malformed {
        reason: reason.into(),
    }
}

impl ProviderError {
    /// The receipt code (spec §5 reserved codes, or step 1's `too_large`).
    ///
    /// Every failure to obtain an answer from a reachable, configured endpoint is
    /// `model_unavailable`, so a `fallback(binding(…))` policy can move to another binding.
    pub fn code(&self) -> &'static str {
        match self {
            ProviderError::Timeout { .. } => ReservedCode::Timeout.as_str(),
            ProviderError::TooLarge { .. } => "too_large",
            ProviderError::Truncated { .. } => ReservedCode::TruncatedOutput.as_str(),
            ProviderError::MissingApiKey { .. }
            | ProviderError::UnusableApiKey { .. }
            | ProviderError::UnsupportedPart { .. }
            | ProviderError::InvalidConfig { .. }
            | ProviderError::ModelUnavailable { .. }
            | ProviderError::RateLimited { .. }
            | ProviderError::Refused { .. }
            | ProviderError::Malformed { .. } => ReservedCode::ModelUnavailable.as_str(),
        }
    }

    /// Whether asking again may succeed: the endpoint was unreachable, busy, rate limited,
    /// slow or cut off; not when it refused the request or the binding is not usable.
    pub fn retryable(&self) -> bool {
        match self {
            ProviderError::Timeout { .. }
            | ProviderError::ModelUnavailable { .. }
            | ProviderError::RateLimited { .. }
            | ProviderError::Truncated { .. } => true,
            ProviderError::Refused { status, .. } => *status == 408 || *status == 409,
            ProviderError::MissingApiKey { .. }
            | ProviderError::UnusableApiKey { .. }
            | ProviderError::UnsupportedPart { .. }
            | ProviderError::InvalidConfig { .. }
            | ProviderError::TooLarge { .. }
            | ProviderError::Malformed { .. } => false,
        }
    }

    /// aelc's own sentence for this failure, with the HTTP status when there was one and
    /// whether asking again may help, and nothing the provider wrote: what a host that serves
    /// other people's calls (the gateway) puts in answers and receipts, keeping the provider's
    /// text ([`fmt::Display`]) for its operator's log. A provider's error text can carry
    /// account details (an organisation or project id, a partly masked key).
    pub fn summary(&self) -> String {
        let retry = if self.retryable() {
            "retryable"
        } else {
            "not retryable"
        };
        let what = match self {
            ProviderError::MissingApiKey { .. }
            | ProviderError::UnusableApiKey { .. }
            | ProviderError::InvalidConfig { .. } => {
                "the model binding is not configured on this host".to_owned()
            }
            ProviderError::UnsupportedPart { kind, .. } => {
                format!("the model binding cannot take a {kind} part")
            }
            ProviderError::Timeout { after } => format!(
                "no complete answer from the model within {} ms",
                after.as_millis()
            ),
            ProviderError::ModelUnavailable {
                status: Some(status),
                ..
            } => format!("the model endpoint failed (HTTP {status})"),
            ProviderError::ModelUnavailable { status: None, .. } => {
                "the model endpoint could not be reached".to_owned()
            }
            ProviderError::RateLimited { .. } => {
                "the model endpoint is rate limiting (HTTP 429)".to_owned()
            }
            ProviderError::Refused { status, .. } => {
                format!("the model endpoint refused the request (HTTP {status})")
            }
            ProviderError::TooLarge { limit, .. } => {
                format!("the answer exceeded max_answer ({limit} bytes)")
            }
            ProviderError::Truncated { received, .. } => {
                format!("the answer was cut off after {received} bytes")
            }
            ProviderError::Malformed { .. } => {
                "the model endpoint's response is not the shape its API documents".to_owned()
            }
        };
        format!("{what}; {retry}")
    }

    /// Whether the request never left this process (so nothing was billed).
    pub fn before_the_call(&self) -> bool {
        matches!(
            self,
            ProviderError::MissingApiKey { .. }
                | ProviderError::UnusableApiKey { .. }
                | ProviderError::UnsupportedPart { .. }
                | ProviderError::InvalidConfig { .. }
        )
    }
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProviderError::MissingApiKey { var } => write!(
                f,
                "the environment variable `{var}` named by the binding's `api_key_env` is not set"
            ),
            ProviderError::UnusableApiKey { var, problem } => write!(
                f,
                "the environment variable `{var}` named by the binding's `api_key_env` {problem}"
            ),
            ProviderError::UnsupportedPart {
                kind,
                provider,
                reason,
            } => write!(
                f,
                "the {provider} binding cannot take a {kind} part: {reason}"
            ),
            ProviderError::InvalidConfig { reason } => write!(f, "invalid binding: {reason}"),
            ProviderError::Timeout { after } => {
                write!(
                    f,
                    "no complete answer within {} ms (timeout)",
                    after.as_millis()
                )
            }
            ProviderError::ModelUnavailable {
                status: Some(status),
                reason,
            } => write!(f, "the model endpoint answered HTTP {status}: {reason}"),
            ProviderError::ModelUnavailable {
                status: None,
                reason,
            } => write!(f, "the model endpoint is unreachable: {reason}"),
            ProviderError::RateLimited {
                retry_after: Some(delay),
                reason,
            } => write!(
                f,
                "rate limited (HTTP 429), retry after {} ms: {reason}",
                delay.as_millis()
            ),
            ProviderError::RateLimited {
                retry_after: None,
                reason,
            } => write!(f, "rate limited (HTTP 429): {reason}"),
            ProviderError::Refused { status, reason } => {
                write!(
                    f,
                    "the model endpoint refused the request (HTTP {status}): {reason}"
                )
            }
            ProviderError::TooLarge {
                limit, received, ..
            } => write!(
                f,
                "the answer exceeded max_answer: {received} bytes received, at most {limit} \
                 allowed; reading stopped (too_large)"
            ),
            ProviderError::Truncated {
                received, reason, ..
            } => write!(
                f,
                "the answer was cut off after {received} bytes: {reason} (truncated_output)"
            ),
            ProviderError::Malformed { reason } => {
                write!(f, "the provider's response is malformed: {reason}")
            }
        }
    }
}

impl std::error::Error for ProviderError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_the_reserved_names() {
        let timeout = ProviderError::Timeout {
            after: Duration::from_millis(250),
        };
        assert_eq!(timeout.code(), "timeout");
        assert_eq!(
            timeout.to_string(),
            "no complete answer within 250 ms (timeout)"
        );
        let limited = ProviderError::RateLimited {
            retry_after: Some(Duration::from_secs(2)),
            reason: "slow down".into(),
        };
        assert_eq!(limited.code(), "model_unavailable");
        assert!(limited.to_string().contains("retry after 2000 ms"));
        assert!(ProviderError::MissingApiKey { var: "K".into() }.before_the_call());
    }

    #[test]
    fn summaries_say_status_and_retry_and_nothing_of_the_provider() {
        let refused = ProviderError::Refused {
            status: 401,
            reason: "Incorrect API key provided: sk-proj-****abcd (org org-123, proj_456)".into(),
        };
        assert_eq!(
            refused.summary(),
            "the model endpoint refused the request (HTTP 401); not retryable"
        );
        let down = ProviderError::ModelUnavailable {
            status: Some(503),
            reason: "overloaded, org-123".into(),
        };
        assert_eq!(
            down.summary(),
            "the model endpoint failed (HTTP 503); retryable"
        );
        for e in [refused, down] {
            assert!(!e.summary().contains("org-123") && !e.summary().contains("sk-"));
            assert!(
                e.to_string().contains("org-123"),
                "the detail stays for the log"
            );
        }
    }
}
