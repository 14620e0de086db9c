//! Where uploaded files live: the project's folder (the default) or an S3-compatible object
//! store, chosen by one URL (`--files`, `AELC_FILES`), and the sweep of expired files.
//!
//! Both are [`Blobs`] under the runtime's one file store ([`Files`]), so an upload, a run's
//! read of its media and `aelc files put` behave the same on either; only the keys' home
//! differs. An object store is what lets several gateways serve as one: a file uploaded
//! through one is read by a run through another.
//!
//! - [`open`]: `s3://bucket/prefix` (also `s3a://`), configured by the standard `AWS_*`
//!   variables (`AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
//!   `AWS_ALLOW_HTTP` for a plain-HTTP endpoint); a plain path is a folder; nothing is the
//!   project's `.ael/files/`.
//! - [`ObjectBlobs`]: an upload is a multipart upload to `tmp/<uuid>` (parts of 5 MiB, at most
//!   [`PARTS_IN_FLIGHT`] in flight, so an upload holds a few parts in memory, never the file),
//!   copied to its `<sha256>` key once complete (a reader sees the whole object or none) and
//!   the temporary object deleted. A request that fails is retried a few times within
//!   [`RETRY_FOR`], then the error is the caller's (`503` at the gateway): a store that
//!   refuses for longer costs the calls of that window, not a hung gateway.
//! - [`sweep`]: the files whose expiry passed, at most [`SWEEP_BATCH`] a turn: the store's row
//!   first (the quota gets the room back, the file is no longer listed), then the record and,
//!   unless another record names them, the bytes. Any gateway may sweep; one at a time, by
//!   the store's turn `files-sweep` ([`aelc_store::Store::take_turn`]).
//!
//! The object store's calls are async; [`Blobs`] is blocking (the executor reads media on
//! blocking threads). Each call waits with `block_in_place` on the runtime the store was
//! opened on, so it may be made from the blocking pool, the command line's thread or a worker
//! of the multi-threaded runtime. Invariant: never from the thread of a current-thread
//! runtime, where `block_in_place` panics; every command that opens a file store (`serve`,
//! `mcp`, `mandate approve`, `files`) runs the multi-threaded one or calls from the blocking
//! pool.

use std::future::Future;
use std::path::Path as FsPath;
use std::sync::Arc;
use std::time::Duration;

use aelc_runtime::files::{BlobWriter, Blobs, Files, Folder};
use aelc_store::Store;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, WriteMultipart};

/// How many parts of one upload are sent at once (each 5 MiB, the S3 minimum part size).
pub const PARTS_IN_FLIGHT: usize = 2;

/// How long one request to the object store is retried before its error is returned.
pub const RETRY_FOR: Duration = Duration::from_secs(3);

/// The most files one turn of the sweep deletes.
pub const SWEEP_BATCH: u32 = 100;

/// The store's turn that one sweeper holds at a time.
pub const SWEEP_TURN: &str = "files-sweep";

/// The file store at `url` (see the module doc), or the folder `.ael/files/` of the project at
/// `project_root` when there is none. An object store is opened on the current tokio runtime.
pub fn open(url: Option<&str>, project_root: &FsPath) -> Result<Files, String> {
    let Some(url) = url.filter(|u| !u.is_empty()) else {
        return Ok(Files::in_project(project_root));
    };
    if url.starts_with("s3://") || url.starts_with("s3a://") {
        return Ok(Files::new(Arc::new(ObjectBlobs::s3(url)?)));
    }
    if let Some(path) = url.strip_prefix("file://") {
        return Ok(Files::new(Arc::new(Folder::new(path.into()))));
    }
    if url.contains("://") {
        return Err(format!(
            "file store `{url}`: write s3://BUCKET/PREFIX for an object store or a folder's path"
        ));
    }
    Ok(Files::new(Arc::new(Folder::new(url.into()))))
}

/// [`Blobs`] in an object store, under a prefix.
pub struct ObjectBlobs {
    store: Arc<dyn ObjectStore>,
    prefix: Path,
    url: String,
    runtime: tokio::runtime::Handle,
}

impl std::fmt::Debug for ObjectBlobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ObjectBlobs({})", self.url)
    }
}

impl ObjectBlobs {
    /// The S3 bucket and prefix of `url`, configured by the `AWS_*` variables.
    pub fn s3(url: &str) -> Result<ObjectBlobs, String> {
        ObjectBlobs::s3_with(url, &[])
    }

    /// [`ObjectBlobs::s3`], with `settings` (`aws_endpoint`, `aws_allow_http`, …: the
    /// variables' names in lower case) over the variables.
    pub fn s3_with(url: &str, settings: &[(&str, &str)]) -> Result<ObjectBlobs, String> {
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| format!("file store `{url}`: opened outside the async runtime"))?;
        // Refused when a provider is installed already, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let retry = object_store::RetryConfig {
            max_retries: 4,
            retry_timeout: RETRY_FOR,
            backoff: object_store::BackoffConfig {
                init_backoff: Duration::from_millis(50),
                max_backoff: Duration::from_secs(1),
                base: 2.0,
            },
        };
        // A request takes at most 30 s, a connection 3 s (an unreachable store is known
        // quickly); set before the settings, which may say otherwise.
        let mut builder = object_store::aws::AmazonS3Builder::from_env();
        let timeouts = [("timeout", "30s"), ("connect_timeout", "3s")];
        for (key, value) in timeouts.iter().chain(settings) {
            let key = key
                .parse()
                .map_err(|e| format!("file store `{url}`: setting `{key}`: {e}"))?;
            builder = builder.with_config(key, *value);
        }
        let store = builder
            .with_url(url)
            .with_retry(retry)
            .build()
            .map_err(|e| format!("file store `{url}`: {e}"))?;
        let prefix = url
            .split_once("://")
            .and_then(|(_, rest)| rest.split_once('/'))
            .map(|(_, prefix)| prefix)
            .unwrap_or("");
        let prefix = Path::parse(prefix.trim_matches('/'))
            .map_err(|e| format!("file store `{url}`: {e}"))?;
        Ok(ObjectBlobs {
            store: Arc::new(store),
            prefix,
            url: url.to_owned(),
            runtime,
        })
    }

    fn path(&self, key: &str) -> Path {
        key.split('/')
            .filter(|part| !part.is_empty())
            .fold(self.prefix.clone(), |path, part| path.clone().join(part))
    }

    fn wait<T>(&self, f: impl Future<Output = T>) -> T {
        wait(&self.runtime, f)
    }

    fn failed(&self, key: &str, e: object_store::Error) -> String {
        format!("{key} in {}: {e}", self.url)
    }
}

fn wait<T>(runtime: &tokio::runtime::Handle, f: impl Future<Output = T>) -> T {
    tokio::task::block_in_place(|| runtime.block_on(f))
}

impl Blobs for ObjectBlobs {
    fn location(&self) -> String {
        self.url.clone()
    }

    fn get(&self, key: &str, max: u64) -> Result<Option<Vec<u8>>, String> {
        use futures_util::StreamExt;
        let path = self.path(key);
        self.wait(async {
            let got = match self.store.get(&path).await {
                Ok(got) => got,
                Err(object_store::Error::NotFound { .. }) => return Ok(None),
                Err(e) => return Err(self.failed(key, e)),
            };
            let mut out = Vec::with_capacity(usize::try_from(got.meta.size.min(max)).unwrap_or(0));
            let mut stream = got.into_stream();
            while let Some(piece) = stream.next().await {
                let piece = piece.map_err(|e| self.failed(key, e))?;
                let room = usize::try_from(max.saturating_sub(out.len() as u64)).unwrap_or(0);
                out.extend_from_slice(&piece[..room.min(piece.len())]);
                if out.len() as u64 >= max {
                    break;
                }
            }
            Ok(Some(out))
        })
    }

    fn put(&self, key: &str, bytes: &[u8]) -> Result<(), String> {
        let path = self.path(key);
        let payload = object_store::PutPayload::from(bytes.to_vec());
        self.wait(self.store.put(&path, payload))
            .map(|_| ())
            .map_err(|e| self.failed(key, e))
    }

    fn writer(&self) -> Result<Box<dyn BlobWriter>, String> {
        let key = format!("tmp/{}.partial", uuid::Uuid::now_v7().simple());
        let temp = self.path(&key);
        let upload = self
            .wait(self.store.put_multipart(&temp))
            .map_err(|e| self.failed(&key, e))?;
        Ok(Box::new(ObjectWriter {
            store: Arc::clone(&self.store),
            blobs: ObjectBlobs {
                store: Arc::clone(&self.store),
                prefix: self.prefix.clone(),
                url: self.url.clone(),
                runtime: self.runtime.clone(),
            },
            key,
            temp,
            upload: Some(WriteMultipart::new(upload)),
        }))
    }

    fn delete(&self, key: &str) -> Result<(), String> {
        match self.wait(self.store.delete(&self.path(key))) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.failed(key, e)),
        }
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, String> {
        use futures_util::TryStreamExt;
        let under = self.path(prefix);
        let metas: Vec<object_store::ObjectMeta> = self
            .wait(self.store.list(Some(&under)).try_collect())
            .map_err(|e| self.failed(prefix, e))?;
        Ok(metas
            .into_iter()
            .filter_map(|m| {
                m.location
                    .prefix_match(&self.prefix)
                    .map(|parts| parts.map(|p| p.as_ref().to_owned()).collect::<Vec<_>>())
                    .map(|parts| parts.join("/"))
            })
            .collect())
    }
}

/// A multipart upload to `tmp/` ([`ObjectBlobs::writer`]); aborted when dropped unfinished.
struct ObjectWriter {
    store: Arc<dyn ObjectStore>,
    blobs: ObjectBlobs,
    key: String,
    temp: Path,
    upload: Option<WriteMultipart>,
}

impl BlobWriter for ObjectWriter {
    fn write(&mut self, piece: &[u8]) -> Result<(), String> {
        let Some(upload) = self.upload.as_mut() else {
            return Err(format!(
                "{} in {}: already finished",
                self.key, self.blobs.url
            ));
        };
        // Parts are sent by tasks of the runtime: at most PARTS_IN_FLIGHT at once, so the
        // memory an upload holds is bounded whatever its size.
        let _entered = self.blobs.runtime.enter();
        wait(
            &self.blobs.runtime,
            upload.wait_for_capacity(PARTS_IN_FLIGHT),
        )
        .map_err(|e| self.blobs.failed(&self.key, e))?;
        upload.write(piece);
        Ok(())
    }

    fn finish(mut self: Box<Self>, key: &str) -> Result<(), String> {
        let Some(upload) = self.upload.take() else {
            return Err(format!(
                "{} in {}: already finished",
                self.key, self.blobs.url
            ));
        };
        let finished = {
            let _entered = self.blobs.runtime.enter();
            wait(&self.blobs.runtime, upload.finish())
        };
        finished.map_err(|e| self.blobs.failed(&self.key, e))?;
        let target = self.blobs.path(key);
        let copied = wait(&self.blobs.runtime, self.store.copy(&self.temp, &target));
        // The temporary object goes whether or not the copy was made.
        if let Err(e) = wait(&self.blobs.runtime, self.store.delete(&self.temp)) {
            tracing::warn!(error = %e, key = %self.key, "a temporary upload was left");
        }
        copied.map_err(|e| self.blobs.failed(key, e))
    }
}

impl Drop for ObjectWriter {
    fn drop(&mut self) {
        if let Some(upload) = self.upload.take() {
            // Dropped anywhere (an async handler included): the abort is a task, not a wait.
            self.blobs.runtime.spawn(async move {
                if let Err(e) = upload.abort().await {
                    tracing::warn!(error = %e, "an abandoned upload was not aborted");
                }
            });
        }
    }
}

/// What one turn of the sweep did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Swept {
    /// Files whose row and record were deleted.
    pub files: u64,
    /// Whether this process held the turn (another sweeper may have).
    pub took_turn: bool,
}

/// One turn of the sweep of expired files (see the module doc), if this process gets the
/// store's turn; the turn lasts `turn` (then any process may take it).
pub async fn sweep(
    store: &Arc<dyn Store>,
    files: &Files,
    now_ms: i64,
    turn: Duration,
) -> Result<Swept, String> {
    let until = now_ms.saturating_add(i64::try_from(turn.as_millis()).unwrap_or(i64::MAX));
    let took = store
        .take_turn(SWEEP_TURN, until, now_ms)
        .await
        .map_err(|e| format!("taking the turn to sweep files: {e}"))?;
    if !took {
        return Ok(Swept::default());
    }
    let expired = store
        .expired_files(now_ms, SWEEP_BATCH)
        .await
        .map_err(|e| format!("reading the expired files: {e}"))?;
    let mut swept = Swept {
        files: 0,
        took_turn: true,
    };
    for meta in expired {
        // The row first: once it is gone the file is neither listed nor counted, and a failure
        // below leaves at worst bytes no row names (never a row naming no bytes).
        if store
            .delete_file(&meta.id)
            .await
            .map_err(|e| format!("deleting the row of file {}: {e}", meta.id))?
            .is_none()
        {
            continue;
        }
        let files = files.clone();
        let id = meta.id.clone();
        tokio::task::spawn_blocking(move || files.remove(&id))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("deleting file {}: {e}", meta.id))?;
        swept.files += 1;
    }
    Ok(swept)
}
