//! `POST /v1/files`: an upload streamed into the file store, within bounds.
//!
//! An upload is never held whole in memory: each piece of the body is appended to a temporary
//! object of the file store and hashed on the way (`aelc_runtime::files::Incoming`: a file of
//! the folder's `tmp/`, or an object store's multipart upload), at most [`WRITE_PIECE`] bytes
//! waiting to be written, then moved into its content-addressed place.
//!
//! An upload is complete or invisible: the bytes are placed and the record written first,
//! then the store's row is committed (with the quota check); a row refused takes the record
//! (and the bytes no other record names) back, and the reference is never handed out. A file
//! store that fails is `503 files_unavailable`, with nothing stored.
//!
//! `?expires=WHEN` (an RFC 3339 date-time or a time from now, `30s`, `2h`, `7d`) gives the
//! file an expiry: it is refused to runs from then on, and swept by a gateway
//! ([`crate::files::sweep`]).
//!
//! What it may cost is bounded:
//!
//! - **in progress at once**: `max_uploads` ([`crate::Limits`]); one more is `503 overloaded`,
//!   never queued (its body is not read);
//! - **one upload**: `max_file_bytes` (`413 file_too_large`: by `Content-Length` before a byte
//!   is read, or when the body grows past it) and `body_timeout` for the whole body (`408`);
//! - **an account's files**: `[limits] max_stored_bytes_per_account` of `ael.toml` (1 GiB by
//!   default): checked against the `Content-Length` before a byte is read, and decided by the
//!   store in the transaction that records the file (`413 quota_exceeded`; nothing recorded,
//!   the bytes removed);
//! - **an empty body** is refused (`400 empty_file`): each upload is a row of the store.

use std::sync::Arc;

use aelc_runtime::files::Incoming;
use aelc_store::{FileMeta, StoreError};
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use serde_json::Value as Json;

use crate::error::{ApiError, ErrorBody};
use crate::{now_ms, AppState};

/// The default of `[limits] max_stored_bytes_per_account`: 1 GiB.
pub const DEFAULT_MAX_STORED_BYTES: u64 = 1 << 30;

/// Bytes gathered from the body before they are handed to the writing thread: large enough
/// that a 20 MB upload is a hundred hand-offs, small enough that thirty uploads hold a few MiB.
const WRITE_PIECE: usize = 256 * 1024;

/// `POST /v1/files`'s query.
#[derive(Debug, Default, serde::Deserialize)]
pub struct UploadQuery {
    /// When the file expires (see the module doc).
    pub expires: Option<String>,
}

/// Stores the body as a file of the caller and returns its media reference (what an input's
/// media field carries: `ref`, `type`, `size`, `sha256`, header facts).
#[utoipa::path(post, path = "/v1/files", tag = "files",
    params(("expires" = Option<String>, Query, description = "When the file expires: an RFC 3339 date-time or a time from now (`30s`, `10m`, `2h`, `7d`)")),
    request_body(content = Vec<u8>, content_type = "application/octet-stream",
                 description = "The bytes; the type is sniffed from them"),
    responses((status = 201, description = "The media reference", body = Object),
              (status = 400, description = "`empty_file`, `bad_expiry`", body = ErrorBody),
              (status = 401, body = ErrorBody),
              (status = 408, body = ErrorBody),
              (status = 413, description = "`file_too_large`, `quota_exceeded`", body = ErrorBody),
              (status = 503, description = "`overloaded`: every upload slot is busy; `files_unavailable`", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn put_file(
    State(app): State<Arc<AppState>>,
    Query(query): Query<UploadQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let account = crate::accounts::caller(&app, &headers).await?;
    let expires_at = query
        .expires
        .as_deref()
        .map(|text| aelc_runtime::files::expires_at(text, now_ms()).map_err(ApiError::BadExpiry))
        .transpose()?;
    let expires_ms = expires_at.as_deref().and_then(aelc_runtime::files::unix_ms);
    let _slot = Arc::clone(&app.upload_slots)
        .try_acquire_owned()
        .map_err(|_| ApiError::Overloaded)?;
    let limit = app.max_file_bytes as u64;
    let quota = app.max_stored_bytes;
    if let Some(length) = content_length(&headers) {
        if length == 0 {
            return Err(ApiError::EmptyFile);
        }
        if length > limit {
            return Err(ApiError::FileTooLarge { limit });
        }
        // Refused before a byte is read when the account is full already; the store decides
        // again when the file is recorded (another upload may have taken the room meanwhile).
        let stored = app.store.stored_bytes(&account.name).await?;
        if stored.saturating_add(length) > quota {
            return Err(ApiError::QuotaExceeded(StoreError::Quota {
                stored,
                size: length,
                limit: quota,
            }));
        }
    }
    let files = app.files.clone();
    let incoming = blocking(move || files.incoming()).await?;
    let incoming =
        match tokio::time::timeout(app.body_timeout, receive(body, incoming, limit)).await {
            Err(_) => return Err(ApiError::BodyTimeout),
            Ok(incoming) => incoming?,
        };
    if incoming.size() == 0 {
        return Err(ApiError::EmptyFile);
    }
    let tenant = account.name.clone();
    let received = blocking(move || incoming.finish(&tenant, expires_at, None)).await?;
    // Placed and recorded before the row: a row never names bytes that are not there.
    let stored = blocking(move || received.commit()).await?;
    let meta = FileMeta {
        id: stored.id().to_owned(),
        tenant: account.name.clone(),
        sha256: stored.media.sha256.clone(),
        size: stored.media.size,
        media_type: stored.media.content_type.clone(),
        created_ms: now_ms(),
        expires_ms,
        source: stored.media.source.clone(),
    };
    let refused = match app.store.put_file(&meta, quota).await {
        Ok(()) => {
            let reference = serde_json::to_value(&stored.media).unwrap_or(Json::Null);
            return Ok((StatusCode::CREATED, axum::Json(reference)).into_response());
        }
        Err(e @ StoreError::Quota { .. }) => ApiError::QuotaExceeded(e),
        Err(e) => e.into(),
    };
    // No row: take the record back (and the bytes, unless another record names them), so the
    // reference, never handed out, names nothing.
    let files = app.files.clone();
    let id = meta.id.clone();
    if let Err(undo) = blocking(move || files.remove(&id)).await {
        tracing::error!(error = ?undo, file = %meta.id, "a refused upload's record was left");
    }
    Err(refused)
}

/// The body, piece by piece, into `incoming`, at most `limit` bytes.
async fn receive(body: Body, incoming: Incoming, limit: u64) -> Result<Incoming, ApiError> {
    let mut body = body;
    let mut incoming = incoming;
    let mut piece: Vec<u8> = Vec::with_capacity(WRITE_PIECE);
    let mut size = 0u64;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| ApiError::BadBody(e.to_string()))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        size += data.len() as u64;
        if size > limit {
            return Err(ApiError::FileTooLarge { limit });
        }
        // Written before it would outgrow its capacity, so the buffer is never reallocated.
        if !piece.is_empty() && piece.len() + data.len() > WRITE_PIECE {
            (incoming, piece) = write(incoming, piece).await?;
        }
        piece.extend_from_slice(&data);
    }
    if !piece.is_empty() {
        (incoming, _) = write(incoming, piece).await?;
    }
    Ok(incoming)
}

/// Appends `piece` on the blocking pool; gives both back (the buffer emptied, for reuse).
async fn write(
    mut incoming: Incoming,
    mut piece: Vec<u8>,
) -> Result<(Incoming, Vec<u8>), ApiError> {
    blocking(move || {
        incoming.write(&piece)?;
        piece.clear();
        Ok((incoming, piece))
    })
    .await
}

/// `f` on the blocking pool (the file store's IO), its error a 503 `files_unavailable`.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?
        .map_err(|e| {
            tracing::error!(error = %e, "cannot store an upload");
            ApiError::FilesUnavailable(
                "the file store could not be reached; nothing was stored, retry later".to_owned(),
            )
        })
}

fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}
