//! `aelc files put FILE [--tenant T] [--expires WHEN] [--prepared-from REF --step STEP]
//! [--project DIR] [--files URL]`: stores a file in the project's file store
//! (`aelc_runtime::files::Files`: `.ael/files/`, or the object store or folder of `--files`,
//! else `AELC_FILES`, the gateway's) and prints its media reference as one line of JSON (spec §7, §12.1): content type, size, SHA-256, expiry,
//! source, and the dimensions, duration and sample rate read from its header. `aelc run` uses
//! that store, for the tenant `local`.
//!
//! With `--prepared-from`, the file is the result of preparation step `--step` applied to a
//! stored file (a PDF's text made by a tool): the source is checked and its bytes verified as
//! for any use, and the new reference records the step, the source and its SHA-256
//! (`Files::put_prepared`, spec §7).
//!
//! `aelc files list ACCOUNT` and `aelc files delete ID` (each with `--store URL`, `--project
//! DIR`; `delete` also `--files URL`): the gateway's uploads of an account, as the store
//! records them (what its quota counts), and their removal, record and bytes.
//!
//! Exit 0 when done, 1 when `delete` finds no such file or the store fails, 2 for usage and
//! I/O errors (no project, an unreadable file, an unreadable `--expires`).

use std::path::PathBuf;

use aelc_runtime::files::{expires_at, Files, MediaStore, LOCAL_TENANT};

use super::args::{FilesCommand, FilesPutArgs, StoreArgs};
use super::{Output, Status};
use crate::driver::{find_project_root, DiskWorld};

/// The largest file stored: the largest media type bound the language allows is far below it,
/// and the whole file is read to hash it.
const MAX_FILE_BYTES: u64 = 1 << 30;

pub fn run(out: &Output, cmd: &FilesCommand) -> Status {
    match cmd {
        FilesCommand::Put(args) => put(out, args),
        FilesCommand::List { account, store } => list(out, account, store),
        FilesCommand::Delete { id, store, files } => delete(out, id, store, files.as_deref()),
    }
}

/// `aelc files list ACCOUNT`: the account's files in the store, oldest first, one JSON line
/// each (`ref`, `content_type`, `size`, `sha256`, `created_ms`), then on stderr how many and
/// the bytes they take (what the quota counts).
fn list(out: &Output, account: &str, store: &StoreArgs) -> Status {
    super::account::with_store(out, store, |s| async move {
        let files = s.files(account).await.map_err(|e| e.to_string())?;
        let mut total = 0u64;
        for file in &files {
            total += file.size;
            let line = serde_json::json!({
                "ref": format!("{}{}", aelc_runtime::media::REF_PREFIX, file.id),
                "content_type": file.media_type,
                "size": file.size,
                "sha256": file.sha256,
                "created_ms": file.created_ms,
            });
            super::print_line(&line.to_string());
        }
        super::eprint_line(&format!(
            "{account}: {} file(s), {total} bytes",
            files.len()
        ));
        Ok(())
    })
}

/// `aelc files delete ID`: the store's record (an upload's, whatever its account) and the
/// file store's copy (record and, unless shared, bytes; `--files`, else `AELC_FILES`, else the
/// project's folder), so the account's quota and the disk both get the room back. A file only
/// in the file store (`aelc files put`) is deleted there.
fn delete(out: &Output, id: &str, store: &StoreArgs, files: Option<&str>) -> Status {
    let id = id
        .strip_prefix(aelc_runtime::media::REF_PREFIX)
        .unwrap_or(id)
        .to_owned();
    let start = store.project.clone().unwrap_or_else(|| PathBuf::from("."));
    let Some(root) = find_project_root(&DiskWorld, &start) else {
        return out.fatal(&format!(
            "no ael.toml at or above {}: the files live in a project's .ael/files/ \
             (pass --project DIR)",
            start.display()
        ));
    };
    let (_runtime, local) = match open_files(files, &root) {
        Ok(opened) => opened,
        Err(e) => return out.fatal(&e),
    };
    super::account::with_store(out, store, |s| async move {
        let recorded = s.delete_file(&id).await.map_err(|e| e.to_string())?;
        // The file store's calls wait (on their own runtime, for an object store): a thread
        // of the blocking pool, not this runtime's one thread.
        let (files, key) = (local.clone(), id.clone());
        let removed = tokio::task::spawn_blocking(move || files.remove(&key))
            .await
            .map_err(|e| e.to_string())??;
        match (recorded, removed) {
            (None, None) => Err(format!(
                "no file `{id}` in the store or in {}",
                local.location()
            )),
            (Some(meta), _) => {
                super::print_line(&format!(
                    "deleted {}{id} ({} bytes of {})",
                    aelc_runtime::media::REF_PREFIX,
                    meta.size,
                    meta.tenant
                ));
                Ok(())
            }
            (None, Some(stored)) => {
                super::print_line(&format!(
                    "deleted {} ({} bytes of {})",
                    stored.media.reference, stored.media.size, stored.tenant
                ));
                Ok(())
            }
        }
    })
}

/// The file store of `--files` (else `AELC_FILES`, else the project's folder), and the runtime
/// an object store's client runs on (kept while the store is used; its calls wait on it).
fn open_files(
    flag: Option<&str>,
    root: &std::path::Path,
) -> Result<(Option<tokio::runtime::Runtime>, Files), String> {
    let url = super::serve::files_url(flag);
    let runtime = url
        .is_some()
        .then(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the async runtime: {e}"))
        })
        .transpose()?;
    let _entered = runtime.as_ref().map(tokio::runtime::Runtime::enter);
    let files =
        aelc_gateway::files::open(url.as_deref(), root).map_err(|e| format!("--files: {e}"))?;
    Ok((runtime, files))
}

fn put(out: &Output, args: &FilesPutArgs) -> Status {
    let start = args.project.clone().unwrap_or_else(|| PathBuf::from("."));
    let Some(root) = find_project_root(&DiskWorld, &start) else {
        return out.fatal(&format!("no ael.toml at or above {}", start.display()));
    };
    let tenant = args.tenant.as_deref().unwrap_or(LOCAL_TENANT);
    if tenant.is_empty() || tenant.len() > 128 || tenant.chars().any(char::is_control) {
        return out
            .fatal("--tenant: a tenant is 1 to 128 characters, none of them control characters");
    }
    let now_ms =
        aelc_runtime::pipeline::Clock::unix_ms(&mut aelc_runtime::pipeline::SystemClock::default());
    let expires_at = match args
        .expires
        .as_deref()
        .map(|text| expires_at(text, now_ms).map_err(|e| format!("--expires {e}")))
        .transpose()
    {
        Ok(e) => e,
        Err(message) => return out.fatal(&message),
    };
    let size = match std::fs::metadata(&args.file) {
        Ok(m) => m.len(),
        Err(e) => return out.fatal(&format!("cannot read {}: {e}", args.file.display())),
    };
    if size > MAX_FILE_BYTES {
        return out.fatal(&format!(
            "{} has {size} bytes; the local store takes at most {MAX_FILE_BYTES}",
            args.file.display()
        ));
    }
    let bytes = match std::fs::read(&args.file) {
        Ok(b) => b,
        Err(e) => return out.fatal(&format!("cannot read {}: {e}", args.file.display())),
    };
    let name = args
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let source = Some(format!("file:{name}"));
    let (_runtime, store) = match open_files(args.files.as_deref(), &root) {
        Ok(opened) => opened,
        Err(e) => return out.fatal(&e),
    };
    let stored = match (&args.prepared_from, &args.step) {
        (Some(from), Some(step)) => {
            let Some(id) = from.strip_prefix(aelc_runtime::media::REF_PREFIX) else {
                return out.fatal(&format!(
                    "--prepared-from `{from}`: a reference starts with {}",
                    aelc_runtime::media::REF_PREFIX
                ));
            };
            let original = match store.record(id) {
                Ok(Some(original)) => original,
                Ok(None) => {
                    return out.fatal(&format!(
                        "--prepared-from `{from}`: no such file in the store"
                    ))
                }
                Err(e) => return out.fatal(&format!("--prepared-from `{from}`: {e}")),
            };
            store
                .put_prepared(&original.media, tenant, now_ms, step, expires_at, |_| {
                    Ok(bytes)
                })
                .map_err(|e| format!("--prepared-from `{from}`: {e}"))
        }
        _ => store.put(&bytes, tenant, expires_at, source),
    };
    match stored {
        Ok(stored) => match serde_json::to_string(&stored.media) {
            Ok(json) => {
                super::print_line(&json);
                Status::Ok
            }
            Err(e) => out.fatal(&e.to_string()),
        },
        Err(message) => out.fatal(&message),
    }
}
