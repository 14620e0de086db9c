//! `POST /v1/files`: an upload streamed into the file store, within bounds.
//!
//! An upload is never held whole in memory: each piece of the body is appended to a temporary
//! file of the store and hashed on the way (`aelc_runtime::files::Incoming`), at most
//! [`WRITE_PIECE`] bytes waiting to be written, then renamed into its content-addressed place.
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
use axum::extract::State;
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

/// Stores the body as a file of the caller and returns its media reference (what an input's
/// media field carries: `ref`, `type`, `size`, `sha256`, header facts).
#[utoipa::path(post, path = "/v1/files", tag = "files",
    request_body(content = Vec<u8>, content_type = "application/octet-stream",
                 description = "The bytes; the type is sniffed from them"),
    responses((status = 201, description = "The media reference", body = Object),
              (status = 400, description = "`empty_file`", body = ErrorBody),
              (status = 401, body = ErrorBody),
              (status = 408, body = ErrorBody),
              (status = 413, description = "`file_too_large`, `quota_exceeded`", body = ErrorBody),
              (status = 503, description = "`overloaded`: every upload slot is busy", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn put_file(
    State(app): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let account = crate::accounts::caller(&app, &headers).await?;
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
    let tenant = account.name.clone();
    let received = blocking(move || incoming.finish(&tenant, None, None)).await?;
    let stored = received.stored();
    if stored.media.size == 0 {
        return Err(ApiError::EmptyFile);
    }
    let meta = FileMeta {
        id: stored.id().to_owned(),
        tenant: account.name.clone(),
        sha256: stored.media.sha256.clone(),
        size: stored.media.size,
        media_type: stored.media.content_type.clone(),
        created_ms: now_ms(),
        expires_ms: None,
        source: stored.media.source.clone(),
    };
    // Dropping `received` on a refusal removes its bytes.
    match app.store.put_file(&meta, quota).await {
        Ok(()) => {}
        Err(e @ StoreError::Quota { .. }) => return Err(ApiError::QuotaExceeded(e)),
        Err(e) => return Err(e.into()),
    }
    match blocking(move || received.commit()).await {
        Ok(stored) => {
            let reference = serde_json::to_value(&stored.media).unwrap_or(Json::Null);
            Ok((StatusCode::CREATED, axum::Json(reference)).into_response())
        }
        Err(e) => {
            // The row is there, the bytes are not: take the row back so the reference is not
            // handed out, and the quota not spent on it.
            if let Err(undo) = app.store.delete_file(&meta.id).await {
                tracing::error!(error = %undo, file = %meta.id, "an upload's record was left");
            }
            Err(e)
        }
    }
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

/// `f` on the blocking pool (file IO), its error a 500.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?
        .map_err(|e| {
            tracing::error!(error = %e, "cannot store an upload");
            ApiError::Internal("the file could not be stored".to_owned())
        })
}

fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}
