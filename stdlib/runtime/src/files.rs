//! The file store behind media references (spec §7, §12.1): where `holon://files/ID` points,
//! who may use it, until when, and its bytes, verified.
//!
//! - [`MediaStore`]: what the executor asks of a store, two primitives with no rules in them
//!   (a record by id, bytes by record); [`Files`] implements it on every backend.
//! - [`check_use`]: the rules of every use, with no byte read: the reference exists, belongs to
//!   the run's tenant, has not expired (the stored expiry and the reference's), and says what
//!   the store says (type, size, SHA-256, dimensions, duration, sample rate).
//! - [`fetch`]: [`check_use`], then the bytes, refused unless their size and SHA-256 are the
//!   reference's; [`data_url`] makes what a provider receives inline.
//! - [`sniff`]: a file's content type and header facts (dimensions, duration, sample rate)
//!   from its first bytes, by maintained header readers, without decoding it.
//! - [`Provenance`]: a prepared file (the text of a PDF, a frame of a video) records the step
//!   and the file it came from, by reference and SHA-256 ([`Files::put_prepared`]); the
//!   reference's `source` says it, and [`check_use`] refuses a reference whose `source` is
//!   not the stored one (provenance cannot be claimed, only recorded).
//! - [`Files`]: the store itself, over [`Blobs`], where its bytes and records are kept: the
//!   project's folder ([`Folder`], the default) or an object store (the gateway's S3 backend,
//!   `--files s3://bucket/prefix`). One layout on every backend: `<sha256>` holds each
//!   distinct content once, `refs/<id>.json` one record per stored reference ([`StoredFile`]),
//!   `tmp/` what is still arriving. Ids are UUIDv7s, so two tenants storing the same bytes get
//!   two references to one content. Locally the root is `.ael/files/` under the project.
//!
//! A content appears whole or not at all on every backend: it is written under `tmp/` first
//! and moved to its `<sha256>` name once complete (a rename; an object store's copy), and its
//! record is written after it, so a record never names bytes that are not there yet.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::media::REF_PREFIX;
use crate::value::MediaRef;

/// The tenant of runs on a developer's machine (`aelc run`, `aelc files put` without
/// `--tenant`).
pub const LOCAL_TENANT: &str = "local";

/// One stored reference: the reference as it is handed out, and who may use it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredFile {
    pub tenant: String,
    pub media: MediaRef,
    /// Where a prepared file came from (spec §7); `None` for a file stored as it was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prepared: Option<Provenance>,
}

/// Where a prepared file came from: the step that made it and the file it was made from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// What was done: `pdf_text`, `video_frame:12`, … (letters, digits, `_`, `-`, `:`, `.`).
    pub step: String,
    /// The reference it was prepared from (`holon://files/…`).
    pub from: String,
    /// The SHA-256 of the bytes it was prepared from, as verified when they were read.
    pub from_sha256: String,
}

/// The longest step name: the whole `source` stays within its bound (256 characters).
pub const MAX_STEP_LEN: usize = 64;

impl Provenance {
    /// The reference's `source`: `prepared:STEP:REF@sha256:HEX`.
    pub fn source(&self) -> String {
        format!(
            "prepared:{}:{}@sha256:{}",
            self.step, self.from, self.from_sha256
        )
    }

    /// Whether `step` is a step name ([`Provenance::step`]).
    pub fn valid_step(step: &str) -> bool {
        !step.is_empty()
            && step.len() <= MAX_STEP_LEN
            && step
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_-:.".contains(&b))
    }
}

impl StoredFile {
    /// The id after `holon://files/`.
    pub fn id(&self) -> &str {
        self.media
            .reference
            .strip_prefix(REF_PREFIX)
            .unwrap_or(&self.media.reference)
    }
}

/// What the executor needs of a file store. Implementations hold no rules: [`check_use`] and
/// [`fetch`] apply them, the same for every store.
pub trait MediaStore: Send + Sync {
    /// The record of reference `id` (the part after `holon://files/`); `None` when there is
    /// none. Reads no byte of the file.
    fn record(&self, id: &str) -> Result<Option<StoredFile>, String>;

    /// The bytes of `file`, reading at most `max` bytes (a longer content is cut there, and
    /// [`fetch`] refuses it by size).
    fn bytes(&self, file: &StoredFile, max: u64) -> Result<Vec<u8>, String>;
}

/// Why a reference may not be used: nothing was read or sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MediaRefusal {
    pub reference: String,
    /// The field of the reference at fault (`ref`, `expires_at`, `sha256`, `size`, …).
    pub field: &'static str,
    pub message: String,
}

impl std::fmt::Display for MediaRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "media reference {} (`{}`): {}",
            self.reference, self.field, self.message
        )
    }
}

fn refuse(m: &MediaRef, field: &'static str, message: impl Into<String>) -> MediaRefusal {
    MediaRefusal {
        reference: m.reference.clone(),
        field,
        message: message.into(),
    }
}

/// Whether `expires_at` (RFC 3339) has passed at `now_ms`; an unreadable date counts as passed.
pub fn has_expired(expires_at: &str, now_ms: i64) -> bool {
    unix_ms(expires_at).is_none_or(|ms| ms <= now_ms)
}

/// The Unix time in milliseconds of an RFC 3339 date-time; `None` for one that is not.
pub fn unix_ms(rfc3339: &str) -> Option<i64> {
    rfc3339
        .parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_millisecond())
}

/// The rules of one use of `m` by `tenant` at `now_ms` (see the module doc); reads no byte.
pub fn check_use(
    store: &dyn MediaStore,
    m: &MediaRef,
    tenant: &str,
    now_ms: i64,
) -> Result<StoredFile, MediaRefusal> {
    if let Some(at) = m.expires_at.as_deref().filter(|at| has_expired(at, now_ms)) {
        return Err(refuse(m, "expires_at", format!("expired at {at}")));
    }
    let Some(id) = m
        .reference
        .strip_prefix(REF_PREFIX)
        .filter(|id| !id.is_empty())
    else {
        return Err(refuse(
            m,
            "ref",
            format!("a reference starts with {REF_PREFIX}"),
        ));
    };
    // Another tenant's file is refused in the very words of a missing one, so a reference
    // tells a caller nothing about the files of others (not even that the id exists).
    let not_found = || refuse(m, "ref", format!("no such file for tenant `{tenant}`"));
    let stored = match store.record(id) {
        Ok(Some(s)) if s.tenant == tenant => s,
        Ok(_) => return Err(not_found()),
        Err(e) => return Err(refuse(m, "ref", format!("the store cannot be read: {e}"))),
    };
    if let Err(why) = provenance(&stored) {
        return Err(refuse(m, "source", why));
    }
    if let Some(at) = stored
        .media
        .expires_at
        .as_deref()
        .filter(|at| has_expired(at, now_ms))
    {
        return Err(refuse(m, "expires_at", format!("the file expired at {at}")));
    }
    let s = &stored.media;
    let same = [
        ("content_type", m.content_type == s.content_type),
        ("size", m.size == s.size),
        ("sha256", m.sha256 == s.sha256),
        ("width", agrees(m.width, s.width)),
        ("height", agrees(m.height, s.height)),
        ("duration_ms", agrees(m.duration_ms, s.duration_ms)),
        ("sample_rate", agrees(m.sample_rate, s.sample_rate)),
        ("pages", agrees(m.pages, s.pages)),
        ("source", m.source.is_none() || m.source == s.source),
    ];
    if let Some((field, _)) = same.iter().find(|(_, same)| !same) {
        return Err(refuse(
            m,
            field,
            format!("the reference's `{field}` is not the stored file's"),
        ));
    }
    Ok(stored)
}

/// A fact the reference states must be the stored one (a caller cannot claim smaller pixels
/// to pass `@max_pixels`); a fact it leaves out is not checked here.
fn agrees(claimed: Option<u64>, stored: Option<u64>) -> bool {
    claimed.is_none() || claimed == stored
}

/// The bytes of `m` for `tenant` at `now_ms`: [`check_use`], then read and verified.
pub fn fetch(
    store: &dyn MediaStore,
    m: &MediaRef,
    tenant: &str,
    now_ms: i64,
) -> Result<Vec<u8>, MediaRefusal> {
    let stored = check_use(store, m, tenant, now_ms)?;
    // One byte more than the size, so a longer content is seen as longer.
    let bytes = store
        .bytes(&stored, stored.media.size.saturating_add(1))
        .map_err(|e| refuse(m, "ref", format!("the file cannot be read: {e}")))?;
    if bytes.len() as u64 != stored.media.size {
        return Err(refuse(
            m,
            "size",
            format!(
                "the stored bytes are not {} bytes long; the file is damaged",
                stored.media.size
            ),
        ));
    }
    if sha256_hex(&bytes) != stored.media.sha256 {
        return Err(refuse(
            m,
            "sha256",
            "the stored bytes do not match the SHA-256; the file is damaged",
        ));
    }
    Ok(bytes)
}

/// Lowercase hex SHA-256 (the receipts' own).
pub use crate::receipt::sha256_hex;

/// `data:<type>;base64,<bytes>`: media inline, as the providers take it.
pub fn data_url(content_type: &str, bytes: &[u8]) -> String {
    use base64::Engine;
    format!(
        "data:{content_type};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// An expiry as written by a person: an RFC 3339 date-time, or a time from `now_ms` (`30s`,
/// `10m`, `2h`, `7d`). Returns the RFC 3339 date-time a reference carries.
pub fn expires_at(text: &str, now_ms: i64) -> Result<String, String> {
    if let Ok(t) = text.parse::<jiff::Timestamp>() {
        return Ok(t.to_string());
    }
    let usage = || {
        format!(
            "`{text}`: write an RFC 3339 date-time (2026-12-02T15:00:00Z) or a time from now (30s, 10m, 2h, 7d)"
        )
    };
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .filter(|i| *i > 0)
        .ok_or_else(usage)?;
    let (count, unit) = text.split_at(split);
    let count: i64 = count.parse().map_err(|_| usage())?;
    let seconds: i64 = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(usage()),
    };
    let ms = count
        .checked_mul(seconds * 1000)
        .and_then(|d| now_ms.checked_add(d))
        .ok_or_else(usage)?;
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.to_string())
        .map_err(|e| format!("`{text}`: {e}"))
}

/// What a file's first bytes say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sniffed {
    pub content_type: String,
    pub width: Option<u64>,
    pub height: Option<u64>,
    pub duration_ms: Option<u64>,
    pub sample_rate: Option<u64>,
}

/// The content type and header facts of `bytes`, read from headers only (`imagesize` for
/// images, `hound` for WAV, `claxon` for FLAC's STREAMINFO); `application/octet-stream` for what is not recognised.
pub fn sniff(bytes: &[u8]) -> Sniffed {
    sniff_head(bytes, std::str::from_utf8(bytes).is_ok())
}

/// How much of a file's beginning [`sniff_head`] is given when the file arrives in pieces
/// ([`Incoming`]): every header the readers look at fits (a JPEG's size can follow 64 KiB of
/// EXIF).
pub const SNIFF_BYTES: usize = 256 * 1024;

/// [`sniff`] of a file of which only the beginning, `head`, is at hand; `utf8` says whether
/// the whole file is UTF-8 (text is told from bytes by that alone).
pub fn sniff_head(bytes: &[u8], utf8: bool) -> Sniffed {
    let mut out = Sniffed {
        content_type: "application/octet-stream".to_owned(),
        ..Sniffed::default()
    };
    if let Ok(kind) = imagesize::image_type(bytes) {
        use imagesize::ImageType as T;
        let content_type = match kind {
            T::Png => Some("image/png"),
            T::Jpeg => Some("image/jpeg"),
            T::Gif => Some("image/gif"),
            T::Webp => Some("image/webp"),
            T::Bmp => Some("image/bmp"),
            T::Tiff => Some("image/tiff"),
            _ => None,
        };
        if let Some(ct) = content_type {
            out.content_type = ct.to_owned();
            if let Ok(size) = imagesize::blob_size(bytes) {
                out.width = Some(size.width as u64);
                out.height = Some(size.height as u64);
            }
            return out;
        }
    }
    if bytes.len() >= 12 && &bytes[0..4] == b"RIFF" && &bytes[8..12] == b"WAVE" {
        out.content_type = "audio/wav".to_owned();
        if let Ok(reader) = hound::WavReader::new(std::io::Cursor::new(bytes)) {
            let spec = reader.spec();
            out.sample_rate = Some(u64::from(spec.sample_rate));
            if spec.sample_rate > 0 {
                // `duration` counts samples per channel.
                out.duration_ms =
                    Some(u64::from(reader.duration()) * 1000 / u64::from(spec.sample_rate));
            }
        }
        return out;
    }
    if bytes.starts_with(b"fLaC") {
        out.content_type = "audio/flac".to_owned();
        let options = claxon::FlacReaderOptions {
            metadata_only: true,
            read_vorbis_comment: false,
        };
        if let Ok(reader) = claxon::FlacReader::new_ext(std::io::Cursor::new(bytes), options) {
            let info = reader.streaminfo();
            out.sample_rate = Some(u64::from(info.sample_rate));
            // `samples` counts inter-channel samples (per channel), when the encoder knew it.
            if let (Some(samples), true) = (info.samples, info.sample_rate > 0) {
                out.duration_ms = Some(samples.saturating_mul(1000) / u64::from(info.sample_rate));
            }
        }
    } else if bytes.starts_with(b"%PDF-") {
        out.content_type = "application/pdf".to_owned();
    } else if bytes.starts_with(b"ID3") || bytes.starts_with(&[0xFF, 0xFB]) {
        out.content_type = "audio/mpeg".to_owned();
    } else if utf8 {
        out.content_type = "text/plain".to_owned();
    }
    out
}

/// Where a file store keeps its bytes and records, by key (`<sha256>`, `refs/<id>.json`):
/// a folder ([`Folder`]) or an object store. Keys are made by [`Files`] only (hex digits,
/// ids, `refs/`, `tmp/`), never taken from a caller. Blocking: called from threads that may
/// wait (the gateway's blocking pool, the command line).
pub trait Blobs: Send + Sync + std::fmt::Debug {
    /// Where the store is (a folder, a URL), for messages.
    fn location(&self) -> String;
    /// The object `key`, its first `max` bytes; `None` when there is none.
    fn get(&self, key: &str, max: u64) -> Result<Option<Vec<u8>>, String>;
    /// Writes `bytes` at `key` whole (a record: small).
    fn put(&self, key: &str, bytes: &[u8]) -> Result<(), String>;
    /// A new object arriving in pieces, seen by no reader until [`BlobWriter::finish`].
    fn writer(&self) -> Result<Box<dyn BlobWriter>, String>;
    /// Removes `key`; one that is not there is no error.
    fn delete(&self, key: &str) -> Result<(), String>;
    /// The keys under `prefix` (`refs/`).
    fn list(&self, prefix: &str) -> Result<Vec<String>, String>;
}

/// An object arriving in pieces ([`Blobs::writer`]). Dropped before [`BlobWriter::finish`],
/// what it wrote is removed.
pub trait BlobWriter: Send {
    /// Appends `piece`.
    fn write(&mut self, piece: &[u8]) -> Result<(), String>;
    /// Every piece is written: the object becomes `key`, whole (replacing an object of the
    /// same key, which holds the same bytes since keys are SHA-256s).
    fn finish(self: Box<Self>, key: &str) -> Result<(), String>;
}

/// [`Blobs`] in a folder: each key a file under the root, a writer a file of `tmp/` renamed
/// into place.
#[derive(Clone, Debug)]
pub struct Folder {
    root: PathBuf,
}

impl Folder {
    pub fn new(root: PathBuf) -> Folder {
        Folder { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl Blobs for Folder {
    fn location(&self) -> String {
        self.root.display().to_string()
    }

    fn get(&self, key: &str, max: u64) -> Result<Option<Vec<u8>>, String> {
        let path = self.root.join(key);
        let f = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let mut out = Vec::new();
        f.take(max)
            .read_to_end(&mut out)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Some(out))
    }

    fn put(&self, key: &str, bytes: &[u8]) -> Result<(), String> {
        let path = self.root.join(key);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::write(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    fn writer(&self) -> Result<Box<dyn BlobWriter>, String> {
        let temp_dir = self.root.join("tmp");
        std::fs::create_dir_all(&temp_dir)
            .map_err(|e| format!("cannot create {}: {e}", temp_dir.display()))?;
        let temp = temp_dir.join(format!("{}.partial", uuid::Uuid::now_v7().simple()));
        let file = std::fs::File::create(&temp)
            .map_err(|e| format!("cannot create {}: {e}", temp.display()))?;
        Ok(Box::new(FolderWriter {
            root: self.root.clone(),
            temp: Temp(temp),
            file: std::io::BufWriter::with_capacity(64 * 1024, file),
        }))
    }

    fn delete(&self, key: &str) -> Result<(), String> {
        let path = self.root.join(key);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!("cannot remove {}: {e}", path.display())),
        }
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, String> {
        let dir = self.root.join(prefix);
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(format!("{}: {e}", dir.display())),
        };
        Ok(entries
            .flatten()
            .map(|e| format!("{prefix}{}", e.file_name().to_string_lossy()))
            .collect())
    }
}

/// A file of the folder's `tmp/` ([`Folder::writer`]).
struct FolderWriter {
    root: PathBuf,
    temp: Temp,
    file: std::io::BufWriter<std::fs::File>,
}

impl BlobWriter for FolderWriter {
    fn write(&mut self, piece: &[u8]) -> Result<(), String> {
        use std::io::Write;
        self.file
            .write_all(piece)
            .map_err(|e| format!("cannot write {}: {e}", self.temp.0.display()))
    }

    fn finish(self: Box<Self>, key: &str) -> Result<(), String> {
        let FolderWriter { root, temp, file } = *self;
        let file = file
            .into_inner()
            .map_err(|e| format!("cannot write {}: {}", temp.0.display(), e.error()))?;
        file.sync_all()
            .map_err(|e| format!("cannot write {}: {e}", temp.0.display()))?;
        drop(file);
        // Renamed, so a reader never sees half a file; the same bytes already there are
        // replaced by themselves.
        let content = root.join(key);
        std::fs::rename(&temp.0, &content)
            .map_err(|e| format!("cannot write {}: {e}", content.display()))
    }
}

/// A file store (see the module doc): its bytes and records in [`Blobs`].
#[derive(Clone, Debug)]
pub struct Files {
    blobs: std::sync::Arc<dyn Blobs>,
}

impl Files {
    /// The store of the project at `project_root`, in its folder `.ael/files/` (nothing is
    /// created until a put).
    pub fn in_project(project_root: &Path) -> Files {
        Files::new(std::sync::Arc::new(Folder::new(
            project_root.join(".ael").join("files"),
        )))
    }

    /// The store over `blobs` (an object store's).
    pub fn new(blobs: std::sync::Arc<dyn Blobs>) -> Files {
        Files { blobs }
    }

    /// Where the store is (a folder, a URL), for messages.
    pub fn location(&self) -> String {
        self.blobs.location()
    }

    /// The keys under `prefix` (`refs/`, `tmp/`): what an operator's check or a test looks at.
    pub fn list(&self, prefix: &str) -> Result<Vec<String>, String> {
        self.blobs.list(prefix)
    }

    fn record_key(id: &str) -> Option<String> {
        // Ids are what `put` makes: no separators, no dots, so no key can escape the store.
        let safe = !id.is_empty()
            && id.len() <= 64
            && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        safe.then(|| format!("refs/{id}.json"))
    }

    /// Stores `bytes` for `tenant` and returns the reference: content type and header facts
    /// sniffed, `expires_at` and `source` as given.
    pub fn put(
        &self,
        bytes: &[u8],
        tenant: &str,
        expires_at: Option<String>,
        source: Option<String>,
    ) -> Result<StoredFile, String> {
        let mut incoming = self.incoming()?;
        incoming.write(bytes)?;
        incoming.finish(tenant, expires_at, source)?.commit()
    }

    /// A file that will arrive in pieces ([`Incoming`]): written to a temporary object of the
    /// store as it comes (a file of `tmp/`, an object store's multipart upload), never held
    /// whole in memory.
    pub fn incoming(&self) -> Result<Incoming, String> {
        Ok(Incoming {
            store: self.clone(),
            writer: self.blobs.writer()?,
            hasher: sha2::Sha256::default(),
            head: Vec::new(),
            utf8: Utf8Stream::default(),
            size: 0,
        })
    }

    /// Removes reference `id`: its record, and its content when no other record of this store
    /// names the same bytes. Returns the removed record (`None` when there was none).
    ///
    /// Every record is read to find another naming the same bytes (a list and one read per
    /// record; on an object store, one request each). A put of the same bytes at the same
    /// moment can lose its content (its record written after the scan, its content removed by
    /// it); deleting is an operator's command (`aelc files delete`) and the expiry sweep's.
    pub fn remove(&self, id: &str) -> Result<Option<StoredFile>, String> {
        let Some(stored) = self.record(id)? else {
            return Ok(None);
        };
        let Some(key) = Files::record_key(id) else {
            return Ok(None);
        };
        self.blobs.delete(&key)?;
        let sha256 = &stored.media.sha256;
        let mut shared = false;
        for key in self.blobs.list("refs/")? {
            let other = self
                .blobs
                .get(&key, MAX_RECORD_BYTES)
                .ok()
                .flatten()
                .and_then(|bytes| serde_json::from_slice::<StoredFile>(&bytes).ok());
            if other.is_some_and(|o| &o.media.sha256 == sha256) {
                shared = true;
                break;
            }
        }
        if !shared && is_sha256(sha256) {
            self.blobs.delete(sha256)?;
        }
        Ok(Some(stored))
    }

    fn write_record(&self, stored: &StoredFile) -> Result<(), String> {
        let key = Files::record_key(stored.id())
            .ok_or_else(|| format!("`{}` is not a reference id", stored.id()))?;
        let json = serde_json::to_string_pretty(stored).map_err(|e| e.to_string())?;
        self.blobs.put(&key, json.as_bytes())
    }

    /// Stores `bytes`, the result of preparation `step` applied to the file `from` refers to,
    /// for `tenant`, recording where it came from (spec §7). `from` is checked and its bytes
    /// verified as for any use ([`fetch`]: tenant, expiry, size, SHA-256) before anything is
    /// stored, so the provenance names bytes that were really there. `prepare` makes the
    /// result from the source's bytes (a host's PDF text extractor, a frame grabber).
    pub fn put_prepared(
        &self,
        from: &MediaRef,
        tenant: &str,
        now_ms: i64,
        step: &str,
        expires_at: Option<String>,
        prepare: impl FnOnce(&[u8]) -> Result<Vec<u8>, String>,
    ) -> Result<StoredFile, String> {
        if !Provenance::valid_step(step) {
            return Err(format!(
                "`{step}` is not a step name: 1 to {MAX_STEP_LEN} letters, digits, `_`, `-`, `:` or `.`"
            ));
        }
        let source = fetch(self, from, tenant, now_ms).map_err(|e| e.to_string())?;
        let bytes = prepare(&source)?;
        let provenance = Provenance {
            step: step.to_owned(),
            from: from.reference.clone(),
            from_sha256: sha256_hex(&source),
        };
        let mut stored = self.put(&bytes, tenant, expires_at, Some(provenance.source()))?;
        stored.prepared = Some(provenance);
        self.write_record(&stored)?;
        Ok(stored)
    }
}

/// A file arriving in pieces ([`Files::incoming`]): each piece is appended to a temporary
/// object of the store ([`Blobs::writer`]) and hashed on the way; the first [`SNIFF_BYTES`]
/// are kept to sniff its type, and whether it is UTF-8 is followed piece by piece. Dropped
/// before [`Received::commit`], the temporary object is removed.
pub struct Incoming {
    store: Files,
    writer: Box<dyn BlobWriter>,
    hasher: sha2::Sha256,
    head: Vec<u8>,
    utf8: Utf8Stream,
    size: u64,
}

impl Incoming {
    /// Appends `piece`.
    pub fn write(&mut self, piece: &[u8]) -> Result<(), String> {
        use sha2::Digest;
        self.writer.write(piece)?;
        self.hasher.update(piece);
        let room = SNIFF_BYTES.saturating_sub(self.head.len());
        self.head.extend_from_slice(&piece[..room.min(piece.len())]);
        self.utf8.feed(piece);
        self.size += piece.len() as u64;
        Ok(())
    }

    /// The bytes received so far.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Every piece arrived: the file is described (sniffed, hashed, a new id), not yet
    /// visible in the store ([`Received::commit`]).
    pub fn finish(
        self,
        tenant: &str,
        expires_at: Option<String>,
        source: Option<String>,
    ) -> Result<Received, String> {
        use sha2::Digest;
        let Incoming {
            store,
            writer,
            hasher,
            head,
            utf8,
            size,
        } = self;
        let sha256 = crate::receipt::hex_digest(&hasher.finalize());
        let sniffed = sniff_head(&head, utf8.finish());
        let id = uuid::Uuid::now_v7().simple().to_string();
        let stored = StoredFile {
            prepared: None,
            tenant: tenant.to_owned(),
            media: MediaRef {
                reference: format!("{REF_PREFIX}{id}"),
                content_type: sniffed.content_type,
                size,
                sha256,
                expires_at,
                source,
                width: sniffed.width,
                height: sniffed.height,
                duration_ms: sniffed.duration_ms,
                sample_rate: sniffed.sample_rate,
                pages: None,
            },
        };
        Ok(Received {
            store,
            writer,
            stored,
        })
    }
}

/// A file received whole ([`Incoming::finish`]) and not yet in the store: its reference is
/// known, its bytes still in `tmp/`. Dropped without [`Received::commit`], the temporary
/// object is removed.
pub struct Received {
    store: Files,
    writer: Box<dyn BlobWriter>,
    stored: StoredFile,
}

impl Received {
    /// What the reference will be.
    pub fn stored(&self) -> &StoredFile {
        &self.stored
    }

    /// Moves the bytes to their content-addressed place ([`BlobWriter::finish`]: whole or not
    /// at all), then writes the record.
    pub fn commit(self) -> Result<StoredFile, String> {
        let Received {
            store,
            writer,
            stored,
        } = self;
        writer.finish(&stored.media.sha256)?;
        store.write_record(&stored)?;
        Ok(stored)
    }
}

/// The most a record is read of (a record is a few hundred bytes).
const MAX_RECORD_BYTES: u64 = 64 * 1024;

fn is_sha256(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A temporary file, removed when dropped (a no-op once it was renamed away).
struct Temp(PathBuf);

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Whether a byte stream is UTF-8, followed piece by piece: a character cut between two
/// pieces is carried over (at most three bytes).
#[derive(Default)]
struct Utf8Stream {
    valid: bool,
    started: bool,
    carry: Vec<u8>,
}

impl Utf8Stream {
    fn feed(&mut self, piece: &[u8]) {
        if !self.started {
            self.started = true;
            self.valid = true;
        }
        if !self.valid || piece.is_empty() {
            return;
        }
        let mut joined;
        let bytes = if self.carry.is_empty() {
            piece
        } else {
            joined = std::mem::take(&mut self.carry);
            joined.extend_from_slice(piece);
            &joined[..]
        };
        match std::str::from_utf8(bytes) {
            Ok(_) => self.carry.clear(),
            // Cut inside a character at the end: keep its first bytes for the next piece.
            Err(e) if e.error_len().is_none() => {
                self.carry = bytes[e.valid_up_to()..].to_vec();
            }
            Err(_) => self.valid = false,
        }
    }

    /// Whether everything fed was UTF-8 (nothing fed is: the empty text).
    fn finish(&self) -> bool {
        !self.started || (self.valid && self.carry.is_empty())
    }
}

/// The provenance of a stored file, checked: a record whose `source` does not say its
/// provenance is damaged (it was edited), and refused.
pub fn provenance(stored: &StoredFile) -> Result<Option<&Provenance>, String> {
    match &stored.prepared {
        None => Ok(None),
        Some(p) if stored.media.source.as_deref() == Some(p.source().as_str()) => Ok(Some(p)),
        Some(_) => Err(format!(
            "{}: the record's `source` is not its provenance; the record is damaged",
            stored.media.reference
        )),
    }
}

impl MediaStore for Files {
    fn record(&self, id: &str) -> Result<Option<StoredFile>, String> {
        let Some(key) = Files::record_key(id) else {
            return Ok(None);
        };
        let where_ = || format!("{} in {}", key, self.blobs.location());
        match self.blobs.get(&key, MAX_RECORD_BYTES)? {
            None => Ok(None),
            Some(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| format!("{}: {e}", where_())),
        }
    }

    fn bytes(&self, file: &StoredFile, max: u64) -> Result<Vec<u8>, String> {
        let sha = &file.media.sha256;
        if !is_sha256(sha) {
            return Err("the record's sha256 is not 64 hex digits".to_owned());
        }
        self.blobs.get(sha, max)?.ok_or_else(|| {
            format!(
                "{sha} is not in {}: the file's bytes are gone",
                self.blobs.location()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wav(sample_rate: u32, samples: u32) -> Vec<u8> {
        let spec = hound::WavSpec {
            channels: 1,
            sample_rate,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let mut out = std::io::Cursor::new(Vec::new());
        let Ok(mut writer) = hound::WavWriter::new(&mut out, spec) else {
            return Vec::new();
        };
        for _ in 0..samples {
            let _ = writer.write_sample(0i16);
        }
        let _ = writer.finalize();
        out.into_inner()
    }

    #[test]
    fn headers_give_type_duration_and_sample_rate() {
        let sniffed = sniff(&wav(16_000, 8_000));
        assert_eq!(sniffed.content_type, "audio/wav");
        assert_eq!(sniffed.sample_rate, Some(16_000));
        assert_eq!(sniffed.duration_ms, Some(500));
        assert_eq!(sniff(b"%PDF-1.7 ...").content_type, "application/pdf");
        assert_eq!(sniff(b"plain words").content_type, "text/plain");
        assert_eq!(
            sniff(&[0xff, 0x00, 0xfe]).content_type,
            "application/octet-stream"
        );
        // A truncated header is a type without facts, never a panic.
        let cut = &wav(16_000, 10)[..20];
        assert_eq!(sniff(cut).sample_rate, None);
    }

    /// A FLAC file of `samples` silent samples at `sample_rate`: its `fLaC` marker and its
    /// STREAMINFO block (the last metadata block), no frames; a header reader needs no more.
    pub(crate) fn flac(sample_rate: u32, samples: u64) -> Vec<u8> {
        let mut out = b"fLaC".to_vec();
        // Last block, type 0 (STREAMINFO), 34 bytes.
        out.extend_from_slice(&[0x80, 0, 0, 34]);
        out.extend_from_slice(&4096u16.to_be_bytes()); // min block size
        out.extend_from_slice(&4096u16.to_be_bytes()); // max block size
        out.extend_from_slice(&[0; 6]); // frame sizes unknown
                                        // 20 bits rate, 3 bits channels - 1 (mono), 5 bits bits-per-sample - 1 (16), 36 bits
                                        // of samples.
        let packed: u64 = (u64::from(sample_rate) << 44) | (15 << 36) | (samples & 0xF_FFFF_FFFF);
        out.extend_from_slice(&packed.to_be_bytes());
        out.extend_from_slice(&[0; 16]); // MD5 unknown
        out
    }

    #[test]
    fn flac_headers_give_sample_rate_and_duration() {
        let sniffed = sniff(&flac(44_100, 88_200));
        assert_eq!(sniffed.content_type, "audio/flac");
        assert_eq!(sniffed.sample_rate, Some(44_100));
        assert_eq!(sniffed.duration_ms, Some(2_000));
        // A cut header is a type without facts, never a panic.
        let cut = &flac(44_100, 88_200)[..20];
        assert_eq!(sniff(cut).content_type, "audio/flac");
        assert_eq!(sniff(cut).sample_rate, None);
    }

    #[test]
    fn a_prepared_file_records_where_it_came_from() {
        let dir = std::env::temp_dir().join(format!("aelc-prepared-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Files::in_project(&dir);
        let now = 1_796_220_000_000;
        let pdf = store
            .put(
                b"%PDF-1.7 hello",
                "acme",
                None,
                Some("file:a.pdf".to_owned()),
            )
            .unwrap();
        let text = store
            .put_prepared(&pdf.media, "acme", now, "pdf_text", None, |bytes| {
                Ok(bytes[9..].to_vec())
            })
            .unwrap();
        let provenance = text.prepared.clone().unwrap();
        assert_eq!(provenance.step, "pdf_text");
        assert_eq!(provenance.from, pdf.media.reference);
        assert_eq!(provenance.from_sha256, pdf.media.sha256);
        let source = text.media.source.clone().unwrap();
        assert_eq!(
            source,
            format!(
                "prepared:pdf_text:{}@sha256:{}",
                pdf.media.reference, pdf.media.sha256
            )
        );
        // Stored: the record read back says the same, and its uses pass.
        let id = text.id().to_owned();
        assert_eq!(store.record(&id).unwrap().unwrap(), text);
        assert_eq!(fetch(&store, &text.media, "acme", now).unwrap(), b"hello");
        // Checked: a reference claiming another source is refused naming `source`.
        let mut forged = text.media.clone();
        forged.source = Some("file:original.txt".to_owned());
        assert_eq!(
            check_use(&store, &forged, "acme", now).unwrap_err().field,
            "source"
        );
        // A record whose provenance was edited is refused as damaged.
        let mut edited = text.clone();
        edited.prepared.as_mut().unwrap().from_sha256 = "0".repeat(64);
        store.write_record(&edited).unwrap();
        let e = check_use(&store, &text.media, "acme", now).unwrap_err();
        assert_eq!(e.field, "source", "{e}");
        // Preparation reads the source as any use does: another tenant's file is refused, and
        // so is a bad step name; nothing is stored.
        assert!(store
            .put_prepared(&pdf.media, "other", now, "pdf_text", None, |b| Ok(
                b.to_vec()
            ))
            .unwrap_err()
            .contains("no such file for tenant `other`"));
        assert!(store
            .put_prepared(
                &pdf.media,
                "acme",
                now,
                "pdf text",
                None,
                |b| Ok(b.to_vec())
            )
            .is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn expiries_are_dates_or_times_from_now() {
        let now = 1_796_220_000_000; // 2026-12-02T14:00:00Z
        assert_eq!(expires_at("2h", now).as_deref(), Ok("2026-12-02T16:00:00Z"));
        assert_eq!(expires_at("7d", now).as_deref(), Ok("2026-12-09T14:00:00Z"));
        assert_eq!(
            expires_at("2026-12-02T15:00:00Z", now).as_deref(),
            Ok("2026-12-02T15:00:00Z")
        );
        for bad in ["soon", "h", "10y", "", "99999999999999999999d"] {
            assert!(expires_at(bad, now).is_err(), "{bad}");
        }
        assert!(has_expired("2026-12-02T14:00:00Z", now));
        assert!(!has_expired("2026-12-02T14:00:00.001Z", now));
        assert!(has_expired("not a date", now));
    }

    #[test]
    fn a_file_in_pieces_is_the_file_whole() {
        let dir = std::env::temp_dir().join(format!("aelc-incoming-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Files::in_project(&dir);
        // A text whose characters are cut between pieces, a WAV, and bytes that are not text.
        let text = "héllo wörld ✓ ".repeat(5_000).into_bytes();
        let mut not_text = text.clone();
        not_text.push(0xff);
        for (bytes, content_type) in [
            (text, "text/plain"),
            (wav(8_000, 4_000), "audio/wav"),
            (not_text, "application/octet-stream"),
        ] {
            let whole = sniff(&bytes);
            let mut incoming = store.incoming().unwrap();
            for piece in bytes.chunks(7) {
                incoming.write(piece).unwrap();
            }
            assert_eq!(incoming.size(), bytes.len() as u64);
            let received = incoming.finish("acme", None, None).unwrap();
            assert_eq!(received.stored().media.content_type, content_type);
            assert_eq!(received.stored().media.content_type, whole.content_type);
            assert_eq!(received.stored().media.duration_ms, whole.duration_ms);
            assert_eq!(received.stored().media.sha256, sha256_hex(&bytes));
            let stored = received.commit().unwrap();
            assert_eq!(fetch(&store, &stored.media, "acme", 0).unwrap(), bytes);
        }
        // Nothing is left in `tmp/`, and a dropped upload leaves nothing either.
        let mut dropped = store.incoming().unwrap();
        dropped.write(b"half").unwrap();
        drop(dropped);
        let received = store
            .incoming()
            .unwrap()
            .finish("acme", None, None)
            .unwrap();
        drop(received);
        assert_eq!(
            std::fs::read_dir(dir.join(".ael/files/tmp"))
                .unwrap()
                .count(),
            0
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn removing_a_reference_keeps_shared_bytes() {
        let dir = std::env::temp_dir().join(format!("aelc-remove-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Files::in_project(&dir);
        let a = store.put(b"same bytes", "acme", None, None).unwrap();
        let b = store.put(b"same bytes", "bob", None, None).unwrap();
        let content = dir.join(".ael/files").join(&a.media.sha256);
        assert_eq!(store.remove(a.id()).unwrap(), Some(a.clone()));
        assert_eq!(store.record(a.id()), Ok(None));
        assert!(content.exists(), "bob's reference still names the bytes");
        assert_eq!(store.remove(b.id()).unwrap(), Some(b.clone()));
        assert!(!content.exists(), "no reference names them any more");
        assert_eq!(store.remove(b.id()).unwrap(), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn another_tenants_file_is_refused_as_a_missing_one() {
        let dir = std::env::temp_dir().join(format!("aelc-oracle-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Files::in_project(&dir);
        let theirs = store.put(b"bob's", "bob", None, None).unwrap();
        let mut missing = theirs.media.clone();
        missing.reference = format!("{REF_PREFIX}{}", uuid::Uuid::now_v7().simple());
        let foreign = check_use(&store, &theirs.media, "alice", 0).unwrap_err();
        let absent = check_use(&store, &missing, "alice", 0).unwrap_err();
        assert_eq!(
            (foreign.field, &foreign.message),
            (absent.field, &absent.message)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn ids_cannot_leave_the_store() {
        let store = Files::in_project(Path::new("/nonexistent-project"));
        for id in ["../../etc/passwd", "a/b", "", "a.json", &"a".repeat(65)] {
            assert_eq!(store.record(id), Ok(None), "{id}");
        }
    }
}
