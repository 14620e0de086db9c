//! Every refusal the gateway answers with: a stable code, an HTTP status and a sentence the
//! caller can act on, as one JSON shape (`{"error": {"code", "message"}}`), in one
//! `IntoResponse`.

use aelc_runtime::reserved::ReservedCode;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

/// A refusal (see the module doc).
#[derive(Debug)]
pub enum ApiError {
    /// No `Authorization: Bearer …`, or a key no account has.
    Unauthorized,
    /// No such agent, receipt or file (another tenant's receipt is "no such receipt").
    NotFound(String),
    /// The body is not `application/json` (or `application/x-ndjson`).
    UnsupportedMediaType(String),
    /// The body is larger than `max_input_bytes`.
    TooLarge {
        limit: usize,
    },
    /// An upload is larger than the gateway's file limit (`max_file_bytes`).
    FileTooLarge {
        limit: u64,
    },
    /// An upload with no bytes.
    EmptyFile,
    /// An upload would take the account past `max_stored_bytes_per_account`
    /// (the store's [`aelc_store::StoreError::Quota`], which says by how much).
    QuotaExceeded(aelc_store::StoreError),
    /// The body did not arrive in time.
    BodyTimeout,
    /// The body could not be read (the connection broke).
    BadBody(String),
    /// The balance cannot cover the agent's price.
    InsufficientFunds {
        available: String,
        needed: String,
    },
    /// The mandate's budget cannot cover the agent's price.
    OverBudget {
        left: String,
        needed: String,
    },
    /// The price's currency is not the caller's.
    Currency {
        account: String,
        price: String,
    },
    /// Same `Idempotency-Key`, another input.
    IdempotencyConflict,
    /// Same `Idempotency-Key`, first call still running.
    IdempotencyInProgress,
    /// A malformed `Idempotency-Key`.
    BadIdempotencyKey,
    /// Every run slot is busy, or the gateway is shutting down.
    Overloaded,
    /// The agent needs what this gateway cannot run (a Rust `extern fn`).
    AgentUnavailable(String),
    /// The store failed; nothing was billed that the caller was not told about.
    Store(String),
    /// The file store (a folder, an object store) did not answer: an upload is not stored, a
    /// run whose media could not be read is refused before anything is called. The text says
    /// which, for the caller.
    FilesUnavailable(String),
    /// `POST /v1/files?expires=…` names no time.
    BadExpiry(String),
    Internal(String),
}

/// The body of every refusal.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable: `unauthorized`, `not_found`, `unsupported_media_type`, `input_too_large`,
    /// `file_too_large`, `empty_file`, `quota_exceeded`, `body_timeout`, `bad_body`, `insufficient_funds`, `over_budget`, `currency_mismatch`,
    /// `idempotency_conflict`, `idempotency_in_progress`, `bad_idempotency_key`, `overloaded`,
    /// `agent_unavailable`, `store_unavailable`, `files_unavailable`, `bad_expiry`, `internal_error`.
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::TooLarge { .. }
            | ApiError::FileTooLarge { .. }
            | ApiError::QuotaExceeded(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::EmptyFile => StatusCode::BAD_REQUEST,
            ApiError::BodyTimeout => StatusCode::REQUEST_TIMEOUT,
            ApiError::BadBody(_) | ApiError::BadIdempotencyKey | ApiError::BadExpiry(_) => {
                StatusCode::BAD_REQUEST
            }
            ApiError::InsufficientFunds { .. }
            | ApiError::OverBudget { .. }
            | ApiError::Currency { .. } => StatusCode::PAYMENT_REQUIRED,
            ApiError::IdempotencyConflict | ApiError::IdempotencyInProgress => StatusCode::CONFLICT,
            ApiError::Overloaded
            | ApiError::AgentUnavailable(_)
            | ApiError::Store(_)
            | ApiError::FilesUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            ApiError::Unauthorized => "unauthorized",
            ApiError::NotFound(_) => "not_found",
            ApiError::UnsupportedMediaType(_) => "unsupported_media_type",
            ApiError::TooLarge { .. } => "input_too_large",
            ApiError::FileTooLarge { .. } => "file_too_large",
            ApiError::EmptyFile => "empty_file",
            ApiError::QuotaExceeded(_) => "quota_exceeded",
            ApiError::BodyTimeout => "body_timeout",
            ApiError::BadBody(_) => "bad_body",
            ApiError::InsufficientFunds { .. } => "insufficient_funds",
            ApiError::OverBudget { .. } => "over_budget",
            ApiError::Currency { .. } => "currency_mismatch",
            ApiError::IdempotencyConflict => "idempotency_conflict",
            ApiError::IdempotencyInProgress => "idempotency_in_progress",
            ApiError::BadIdempotencyKey => "bad_idempotency_key",
            ApiError::Overloaded => "overloaded",
            ApiError::AgentUnavailable(_) => "agent_unavailable",
            ApiError::Store(_) => "store_unavailable",
            ApiError::FilesUnavailable(_) => "files_unavailable",
            ApiError::BadExpiry(_) => "bad_expiry",
            ApiError::Internal(_) => ReservedCode::InternalError.as_str(),
        }
    }

    pub fn message(&self) -> String {
        match self {
            ApiError::Unauthorized => "send the account's API key as `Authorization: Bearer KEY` \
                 (`aelc account add NAME` prints one)"
                .to_owned(),
            ApiError::NotFound(what) => format!("{what} does not exist"),
            ApiError::UnsupportedMediaType(got) => format!(
                "the body must be `application/json` (one input document) or \
                 `application/x-ndjson` (a session); got `{got}`"
            ),
            ApiError::TooLarge { limit } => {
                format!("the input is larger than max_input_bytes ({limit} bytes)")
            }
            ApiError::FileTooLarge { limit } => {
                format!("the file is larger than the gateway's upload limit ({limit} bytes)")
            }
            ApiError::EmptyFile => "the upload has no bytes; send the file as the body".to_owned(),
            ApiError::QuotaExceeded(why) => {
                format!("{why} (delete files with `aelc files delete ID`)")
            }
            ApiError::BodyTimeout => "the request body did not arrive in time".to_owned(),
            ApiError::BadBody(why) => format!("the request body could not be read: {why}"),
            ApiError::InsufficientFunds { available, needed } => format!(
                "the agent's price is {needed}; the account has {available} available \
                 (`aelc fund ACCOUNT AMOUNT`)"
            ),
            ApiError::Currency { account, price } => {
                format!("the agent is priced in {price}; the account pays in {account}")
            }
            ApiError::OverBudget { left, needed } => {
                format!("the mandate's budget has {left} left; this call may cost {needed}")
            }
            ApiError::IdempotencyConflict => {
                "this Idempotency-Key was used with another input".to_owned()
            }
            ApiError::IdempotencyInProgress => {
                "the first request with this Idempotency-Key is still running; retry later"
                    .to_owned()
            }
            ApiError::BadIdempotencyKey => {
                "an Idempotency-Key is 1 to 255 visible ASCII characters".to_owned()
            }
            ApiError::Overloaded => "the gateway is at capacity; retry later".to_owned(),
            ApiError::BadExpiry(why) => format!("?expires={why}"),
            ApiError::AgentUnavailable(why)
            | ApiError::Store(why)
            | ApiError::FilesUnavailable(why)
            | ApiError::Internal(why) => why.clone(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code(),
                message: self.message(),
            },
        };
        let mut response = (status, axum::Json(body)).into_response();
        let headers = response.headers_mut();
        match self {
            ApiError::Unauthorized => {
                headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            ApiError::Overloaded
            | ApiError::IdempotencyInProgress
            | ApiError::Store(_)
            | ApiError::FilesUnavailable(_) => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            _ => {}
        }
        response
    }
}

impl From<aelc_store::StoreError> for ApiError {
    fn from(e: aelc_store::StoreError) -> ApiError {
        tracing::error!(error = %e, "store");
        ApiError::Store(format!("the store failed: {e}"))
    }
}
