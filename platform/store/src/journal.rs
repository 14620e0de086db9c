//! The refusal journal: receipts of calls refused at the gate are appended to a file of this
//! process, answered, and moved into the store in large transactions behind the callers' backs.
//!
//! Why: a refused call moves no money, and a gateway under a flood of bad input writes one
//! receipt per request. Committed in the request's path, even in groups of whatever had
//! queued meanwhile (the gateway's way before the journal), each refusal cost the database 5–8 KB of log on SQLite (every
//! B-tree page a small transaction touches), and the checkpoints that flush that log were the
//! gate's whole latency tail (p99 60 ms at 40k refusals/s; the book's gateway page has the
//! measurements). Appended to a file, a refusal costs its own bytes; moved in transactions of
//! thousands, it shares each page with its neighbours.
//!
//! Durability: [`Journal::record`] returns once the receipt's line is written to the journal
//! file (the operating system holds it: it survives the process being killed, the guarantee
//! SQLite gives at `synchronous = NORMAL`). A journal whose process is gone is moved into the
//! store by the next one that starts on the same folder ([`Journal::open`]), so a receipt a
//! client got back is never lost with the process. Each process writes its own files and holds
//! an exclusive lock on each until it is removed: a file that can be locked belongs to nobody.
//! Moving is idempotent (a receipt already stored is skipped), so a crash between a move and
//! the removal of its segment repeats nothing.
//!
//! Threads: a caller appends its own line under the journal's lock ([`Journal::record`]), and
//! one thread of the journal's moves what was appended, gathered for a few milliseconds, without
//! being woken for each append. A writer thread that appended for everyone, and a mover woken
//! by every batch it handed over, cost the gate about two context switches a refusal (216k
//! refusals: 111k switches of the writer, 87k of the mover, 79k preemptions of the request
//! threads), a fifth of the gateway's CPU in the kernel's scheduler.
//!
//! Segments: the journal is a sequence of files (`refusals-<uuid>-<n>.ndjson`, `n` eight
//! digits counting from 0), a new one each
//! time the last has grown past [`SEGMENT_BYTES`]; a segment is removed once every receipt in
//! it is stored. Under a steady flood the mover always lags the writer a little, so one file
//! would never be wholly stored at any moment and could never start over; a closed segment is,
//! soon after it closes. Removed before the kernel writes it back, a segment costs the disk
//! nothing.
//!
//! Reads: until a receipt is moved it is also kept in memory ([`Journal::pending`]), and
//! [`Journal::settle`] waits until everything recorded before it is in the store, so readers
//! never miss one ([`crate::journaled::Journaled`] does both for every read).

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::{oneshot, Notify};

use crate::{Result, Store, StoreError, StoredReceipt};

/// At most this many receipts moved into the store in one transaction.
const PER_MOVE: usize = 8192;
/// On SQLite the mover gathers receipts for this long before a transaction (unless a reader waits for
/// them, or [`PER_MOVE`] have come): each transaction rewrites the last, partly filled page of
/// every B-tree it touches, so fewer, larger ones write a fraction of the bytes (SQLite, gate
/// under load: 3.9–4.0 KB a refusal moved at once, 1.1–1.3 KB gathered for 5–10 ms, 0.94 KB
/// for 25 ms, 0.82 KB for 100 ms). Longer is not better: a transaction of more refusals is a
/// longer burst of CPU the request threads wait behind (gate p99 60–69 ms for 100 ms), and
/// with the documents compressed that burst, not the disk, is the gate's tail: 5 ms against
/// 20 ms, alternating in one run, p99 3.75–3.85 ms against 5.46–6.26 ms for 1.10–1.15 KB
/// against 0.85 KB written a refusal (`benches/gateway/bench.sh`, its `disk` column). Readers
/// never wait for it: they see receipts not yet moved ([`Journal::pending`]), and a settle
/// moves at once.
const GATHER: Duration = Duration::from_millis(5);
/// Receipts written and not yet taken by the mover, at most (the mover is inside a commit or a
/// checkpoint's flush, or the store is down): past this, appending waits, so memory stays
/// bounded while a flush of a second or two is absorbed.
const CARRIED: usize = 65_536;
/// A segment is closed, and the next one begun, once it holds this much.
const SEGMENT_BYTES: u64 = 4 << 20;
/// A failed move is tried again after this long (the store is down or busy).
const RETRY_AFTER: Duration = Duration::from_millis(200);

/// The journal's file names: `refusals-<uuid>-<n>.ndjson` in its folder (a process's
/// segments share its `<uuid>`; `n` counts them, eight digits).
const PREFIX: &str = "refusals-";
const SUFFIX: &str = ".ndjson";

/// A store's own synchronous way to commit a group of receipts, all or none, on a thread given
/// to it alone ([`Store::receipt_writer`]): the journal's mover uses it where the store has one
/// (SQLite), so that a move is one hand-off, not one per statement.
pub trait ReceiptWriter: Send {
    fn record(&mut self, rows: &[StoredReceipt]) -> Result<()>;
}

/// Receipts written to the journal and not yet in the store, by id.
pub(crate) type PendingMap = Mutex<HashMap<String, StoredReceipt>>;

/// What the mover takes in one go: rows now in the file, the settles that came after them,
/// and the segments closed before them (every row of which is in this batch or an earlier one).
#[derive(Default)]
struct Written {
    rows: Vec<StoredReceipt>,
    settles: Vec<oneshot::Sender<()>>,
    closed: Vec<Segment>,
}

impl Written {
    fn is_empty(&self) -> bool {
        self.rows.is_empty() && self.settles.is_empty() && self.closed.is_empty()
    }
}

/// One file of the journal, locked by this process for as long as the handle lives.
struct Segment {
    file: File,
    path: PathBuf,
    bytes: u64,
}

/// The handle callers share (cheap to clone); the mover finishes and ends when the last one
/// drops.
#[derive(Clone)]
pub struct Journal {
    handle: Arc<Handle>,
}

/// Owned by the callers' handles only: its drop tells the mover that nothing more comes.
struct Handle {
    shared: Arc<Shared>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.shared.lock().closing = true;
        self.shared.wake.notify_one();
    }
}

/// What the callers and the mover share.
struct Shared {
    state: Mutex<State>,
    /// The mover waits here: for anything at all when it is idle, for a settle or a full move
    /// while it gathers.
    wake: Condvar,
    /// Callers wait here for room when [`CARRIED`] receipts wait to be taken.
    room: Notify,
    pending: PendingMap,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The appending side: the segment, and what waits for the mover.
struct State {
    /// The segment being appended to: made (and locked) at the first refusal, so a process that
    /// refuses nothing (`aelc approve`, most MCP sessions) leaves no file behind.
    segment: Option<Segment>,
    /// `DIR/refusals-<uuid>`: this process's segments are named after it.
    stem: PathBuf,
    /// Segments begun so far (the next one's number).
    segments: u64,
    /// [`SEGMENT_BYTES`], smaller in tests.
    segment_bytes: u64,
    /// Written, not yet taken by the mover.
    outbox: Written,
    /// The mover waits for anything: the next append wakes it. While it gathers or stores, no
    /// append does (that is the point: a wake-up is two context switches).
    mover_idle: bool,
    /// Every handle is gone.
    closing: bool,
}

impl Journal {
    /// Opens a journal of this process in `dir` (made when missing), after moving into `store`
    /// every journal there whose process is gone. Must be called inside a tokio runtime (the
    /// mover reaches async stores through it).
    pub async fn open(store: Arc<dyn Store>, dir: &Path) -> Result<Journal> {
        Journal::open_with_segments_of(store, dir, SEGMENT_BYTES).await
    }

    async fn open_with_segments_of(
        store: Arc<dyn Store>,
        dir: &Path,
        segment_bytes: u64,
    ) -> Result<Journal> {
        fs::create_dir_all(dir).map_err(|e| io(dir, "make the folder", &e))?;
        let mover = Mover::new(Arc::clone(&store))?;
        let folder = dir.to_path_buf();
        let mover = tokio::task::spawn_blocking(move || -> Result<Mover> {
            let mut mover = mover;
            mover.replay_orphans(&folder)?;
            Ok(mover)
        })
        .await
        .map_err(|e| StoreError::Backend(format!("replaying refusal journals: {e}")))??;

        let stem = dir.join(format!("{PREFIX}{}", uuid::Uuid::now_v7().simple()));
        // The folder must take a file now, not at the first refusal (under a name that no
        // starting process takes for a journal).
        let probe = stem.with_extension("probe");
        OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&probe)
            .map_err(|e| io(&probe, "create", &e))?;
        fs::remove_file(&probe).map_err(|e| io(&probe, "remove", &e))?;

        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                segment: None,
                stem,
                segments: 0,
                segment_bytes,
                outbox: Written::default(),
                mover_idle: false,
                closing: false,
            }),
            wake: Condvar::new(),
            room: Notify::new(),
            pending: PendingMap::default(),
        });
        let for_mover = Arc::clone(&shared);
        spawn("aelc-journal-move", move || mover.run(&for_mover))?;
        Ok(Journal {
            handle: Arc::new(Handle { shared }),
        })
    }

    /// Appends `receipt` to the journal; returns once it is written (see the module's doc).
    ///
    /// The caller writes its own line, under the journal's lock: one `write` to the page cache
    /// of about a kilobyte, as nginx writes its access log from the worker that answered. A
    /// thread of the journal's own that wrote for everyone cost a wake-up of that thread and
    /// one of the caller's task per batch, more than the write itself.
    pub async fn record(&self, mut receipt: StoredReceipt) -> Result<()> {
        let shared = &self.handle.shared;
        let mut line = Vec::with_capacity(1024);
        write_line(&mut line, &mut receipt);
        // The readers' copy, made before the lock the other callers wait on.
        let kept = (receipt.id.clone(), receipt.clone());
        loop {
            // Made before the check, so a `notify_waiters` between the two is not missed.
            let room = shared.room.notified();
            {
                let mut state = shared.lock();
                if state.outbox.rows.len() < CARRIED {
                    state.append(&line)?;
                    // Under the journal's lock, so the mover cannot store and forget the row
                    // before it is here.
                    let (id, copy) = kept;
                    shared
                        .pending
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(id, copy);
                    state.outbox.rows.push(receipt);
                    if state.mover_idle || state.outbox.rows.len() == PER_MOVE {
                        state.mover_idle = false;
                        shared.wake.notify_one();
                    }
                    return Ok(());
                }
            }
            room.await;
        }
    }

    /// Waits until every receipt recorded before this call is in the store.
    pub async fn settle(&self) -> Result<()> {
        let shared = &self.handle.shared;
        let (done, settled) = oneshot::channel();
        shared.lock().outbox.settles.push(done);
        shared.wake.notify_one();
        settled.await.map_err(|_| stopped())
    }

    /// A receipt recorded and not yet moved into the store that `keep` accepts.
    pub fn pending(
        &self,
        id: &str,
        keep: impl Fn(&StoredReceipt) -> bool,
    ) -> Option<StoredReceipt> {
        let pending = self
            .handle
            .shared
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        pending.get(id).filter(|r| keep(r)).cloned()
    }
}

fn spawn(name: &str, body: impl FnOnce() + Send + 'static) -> Result<()> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(body)
        .map(drop)
        .map_err(|e| StoreError::Backend(format!("cannot start the thread {name}: {e}")))
}

fn stopped() -> StoreError {
    StoreError::Backend("the refusal journal has stopped".to_owned())
}

fn io(path: &Path, what: &str, e: &std::io::Error) -> StoreError {
    StoreError::Backend(format!(
        "refusal journal: cannot {what} {}: {e}",
        path.display()
    ))
}

impl State {
    /// Appends one line, in a segment that is not full. A write that fails closes its segment:
    /// what it left half written is then that file's last line, which a replay drops (its
    /// caller got the error), rather than a damaged line in the middle of the next ones.
    fn append(&mut self, bytes: &[u8]) -> Result<()> {
        // A full segment is closed before this line: all its rows are in the outbox or taken.
        if let Some(full) = self
            .segment
            .take_if(|segment| segment.bytes >= self.segment_bytes)
        {
            self.outbox.closed.push(full);
        }
        let segment = match &mut self.segment {
            Some(segment) => segment,
            None => {
                let segment = self.begin_segment()?;
                self.segment.insert(segment)
            }
        };
        if let Err(e) = segment.file.write_all(bytes) {
            let error = io(&segment.path, "append to", &e);
            self.outbox.closed.extend(self.segment.take());
            return Err(error);
        }
        segment.bytes += bytes.len() as u64;
        Ok(())
    }

    /// The next segment: made under a name no other process looks at, locked, then renamed.
    /// Under its own name it is never unlocked, so a process starting meanwhile cannot take it
    /// for an orphan and remove it under this one's feet.
    fn begin_segment(&mut self) -> Result<Segment> {
        let mut name = self.stem.clone().into_os_string();
        name.push(format!("-{:08}{SUFFIX}", self.segments));
        let path = PathBuf::from(name);
        let making = path.with_extension("making");
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&making)
            .map_err(|e| io(&making, "create", &e))?;
        // Held until the segment is removed: a journal that can be locked belongs to nobody.
        file.try_lock()
            .map_err(|e| StoreError::Backend(format!("cannot lock {}: {e}", making.display())))?;
        fs::rename(&making, &path).map_err(|e| io(&making, "rename", &e))?;
        self.segments += 1;
        Ok(Segment {
            file,
            path,
            bytes: 0,
        })
    }
}

/// How the mover stores rows: the store's own blocking writer (SQLite), else its async
/// `record_receipts` on the runtime that opened the journal.
enum Sink {
    Blocking(Box<dyn ReceiptWriter>),
    Async(Arc<dyn Store>, tokio::runtime::Handle),
}

impl Sink {
    fn record(&mut self, rows: &[StoredReceipt]) -> Result<()> {
        match self {
            Sink::Blocking(writer) => writer.record(rows),
            Sink::Async(store, runtime) => runtime.block_on(store.record_receipts(rows)),
        }
    }
}

/// The thread that moves journaled receipts into the store.
struct Mover {
    sink: Sink,
}

impl Mover {
    fn new(store: Arc<dyn Store>) -> Result<Mover> {
        let sink = match store.receipt_writer()? {
            Some(writer) => Sink::Blocking(writer),
            None => Sink::Async(store, tokio::runtime::Handle::current()),
        };
        Ok(Mover { sink })
    }

    /// How long to gather rows for a transaction: [`GATHER`] on SQLite, whose transactions each
    /// rewrite whole pages; none on PostgreSQL, which logs rows, not pages, and whose async
    /// writes share the request threads' runtime, so large ones cost the gate its tail
    /// (measured: p99 13–14 ms gathered, 4.6–5.7 ms not, same binary, alternating).
    fn gather(&self) -> Duration {
        match self.sink {
            Sink::Blocking(_) => GATHER,
            Sink::Async(..) => Duration::ZERO,
        }
    }

    /// Stores `rows`, all of them, whatever it takes: a receipt already stored (a journal
    /// moved twice) is skipped; a store that fails is tried again until it answers.
    fn store(&mut self, rows: &[StoredReceipt]) {
        if rows.is_empty() {
            return;
        }
        loop {
            match self.sink.record(rows) {
                Ok(()) => return,
                Err(StoreError::Exists(_)) if rows.len() > 1 => {
                    for chunk in rows.chunks(rows.len().div_ceil(2)) {
                        self.store(chunk);
                    }
                    return;
                }
                Err(StoreError::Exists(_)) => return,
                Err(e) => {
                    eprintln!("aelc: the refusal journal could not store receipts yet: {e}");
                    std::thread::sleep(RETRY_AFTER);
                }
            }
        }
    }

    /// Takes what was written, gathered for up to [`Mover::gather`] (less when a reader
    /// settles or [`PER_MOVE`] rows wait), and stores it; when every handle is gone, stores
    /// the rest with the last segment and ends.
    fn run(mut self, shared: &Shared) {
        loop {
            let batch = {
                let mut state = shared.lock();
                while state.outbox.is_empty() && !state.closing {
                    state.mover_idle = true;
                    state = shared
                        .wake
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                state.mover_idle = false;
                let until = Instant::now() + self.gather();
                while state.outbox.settles.is_empty()
                    && state.outbox.rows.len() < PER_MOVE
                    && !state.closing
                {
                    let left = until.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    state = shared
                        .wake
                        .wait_timeout(state, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
                let mut batch = std::mem::take(&mut state.outbox);
                if state.closing {
                    // Nothing more comes: the last segment goes with the rest, removed once
                    // everything is stored (a process that replays it first only finds
                    // receipts already stored).
                    batch.closed.extend(state.segment.take());
                    if batch.is_empty() {
                        return;
                    }
                }
                batch
            };
            shared.room.notify_waiters();
            self.store(&batch.rows);
            {
                let mut pending = shared
                    .pending
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                for row in &batch.rows {
                    pending.remove(&row.id);
                }
            }
            // Every row of a closed segment is stored now: it is done with. Dropping the
            // handle after the removal lets go of its lock.
            for segment in batch.closed {
                let _ = fs::remove_file(&segment.path);
            }
            for done in batch.settles {
                let _ = done.send(());
            }
        }
    }

    /// Moves every journal in `dir` that no live process holds, then removes it.
    fn replay_orphans(&mut self, dir: &Path) -> Result<()> {
        let entries = fs::read_dir(dir).map_err(|e| io(dir, "read", &e))?;
        let mut names: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(PREFIX) && n.ends_with(SUFFIX))
            })
            .collect();
        names.sort();
        for path in names {
            let Ok(file) = File::open(&path) else {
                continue;
            };
            // Locked: its process is alive and moves it itself.
            if file.try_lock().is_err() {
                continue;
            }
            let rows = read_journal(&file, &path)?;
            for chunk in rows.chunks(PER_MOVE) {
                self.store(chunk);
            }
            match fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(io(&path, "remove", &e))
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// Appends `receipt`'s line: its fields as a JSON object with an empty `json`, a tab, then its
/// document as it is. Why not the whole receipt as one JSON object: the document is JSON text
/// already, and escaping it as a string (every `"` of it) was the writer's whole cost, 15 k
/// instructions of a 640-byte refusal, a twelfth of the gate's. Compact JSON holds no raw tab
/// (in a string serde writes `\t`), so a line's first tab ends its fields. A document with a
/// raw newline (never one the gateway writes: serde_json's compact text has none) would end the
/// line early, so it is written the old way, inside the object.
fn write_line(bytes: &mut Vec<u8>, receipt: &mut StoredReceipt) {
    let raw = !receipt.json.as_bytes().contains(&b'\n');
    let document = if raw {
        std::mem::take(&mut receipt.json)
    } else {
        String::new()
    };
    // A receipt of strings and numbers always serializes.
    if serde_json::to_writer(&mut *bytes, &*receipt).is_ok() {
        if raw {
            bytes.push(b'\t');
            bytes.extend_from_slice(document.as_bytes());
        }
        bytes.push(b'\n');
    }
    if raw {
        receipt.json = document;
    }
}

/// A journal line's receipt: `FIELDS\tDOCUMENT` ([`write_line`]), or, as lines with a raw
/// newline in their document were and every line before this form, one JSON object.
fn read_line(line: &[u8]) -> std::result::Result<StoredReceipt, String> {
    let Some(tab) = line.iter().position(|&b| b == b'\t') else {
        return serde_json::from_slice(line).map_err(|e| e.to_string());
    };
    let mut receipt: StoredReceipt =
        serde_json::from_slice(&line[..tab]).map_err(|e| e.to_string())?;
    let document = &line[tab + 1..];
    receipt.json = String::from_utf8(document.to_vec())
        .map_err(|_| "its document is not UTF-8 text".to_owned())?;
    Ok(receipt)
}

/// The receipts of a journal file. A last line without its newline was being written when the
/// process died: its caller never got an answer, so it is dropped. Any other line that does not
/// read is an error naming the file and line (the file is kept for a person to look at).
fn read_journal(file: &File, path: &Path) -> Result<Vec<StoredReceipt>> {
    let mut rows = Vec::new();
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| io(path, "read", &e))?;
        if n == 0 || line.last() != Some(&b'\n') {
            return Ok(rows);
        }
        number += 1;
        line.pop();
        let parsed = read_line(&line).map_err(|e| {
            StoreError::Backend(format!(
                "refusal journal {} line {number}: {e}",
                path.display()
            ))
        })?;
        rows.push(parsed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(n: usize) -> StoredReceipt {
        StoredReceipt {
            id: format!("rcpt_{n}"),
            tenant: "demo".to_owned(),
            agent: "acme/review".to_owned(),
            version: "1.0.0".to_owned(),
            status: crate::Status::RejectedInput,
            code: Some("invalid_input".to_owned()),
            mandate: None,
            json: format!("{{\"receipt\":\"rcpt_{n}\"}}"),
            at_ms: 1,
        }
    }

    /// Every document comes back from its line as written: JSON (raw after the tab), text with
    /// a tab or a raw newline (written inside the object), and lines written before the tab.
    #[test]
    fn lines_keep_their_documents() {
        let documents = [
            r#"{"status":"rejected_input","errors":[{"message":"a \"quoted\"\tword é🦀"}]}"#,
            "not json\twith a tab",
            "a raw\nnewline",
            "",
        ];
        for document in documents {
            let mut receipt = refusal(7);
            receipt.json = document.to_owned();
            let mut bytes = Vec::new();
            write_line(&mut bytes, &mut receipt);
            assert_eq!(receipt.json, document, "the writer keeps the receipt whole");
            assert_eq!(bytes.iter().filter(|&&b| b == b'\n').count(), 1);
            assert_eq!(bytes.pop(), Some(b'\n'));
            assert_eq!(read_line(&bytes).unwrap(), receipt);
        }
        let before = serde_json::to_vec(&refusal(8)).unwrap();
        assert_eq!(read_line(&before).unwrap(), refusal(8));
        let mut bad = b"{\"id\":1}\t{}".to_vec();
        assert!(read_line(&bad).is_err());
        bad = serde_json::to_vec(&refusal(9)).unwrap();
        bad.extend_from_slice(b"\t\xff");
        assert!(read_line(&bad).unwrap_err().contains("UTF-8"));
    }

    fn journals(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// Callers on several threads append their own lines at once: every line is whole (the
    /// journal reads back every receipt, none twice), all are stored after a settle, and
    /// nothing is left pending.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn callers_append_side_by_side() {
        let dir = std::env::temp_dir().join(format!(
            "aelc-journal-side-by-side-{}",
            uuid::Uuid::now_v7().simple()
        ));
        let store = crate::open(&format!("sqlite:{}", dir.join("store.db").display()))
            .await
            .unwrap();
        let folder = dir.join("refusals");
        let journal = Journal::open_with_segments_of(Arc::clone(&store), &folder, 64 << 10)
            .await
            .unwrap();
        let tasks: Vec<_> = (0..8)
            .map(|t| {
                let journal = journal.clone();
                tokio::spawn(async move {
                    for n in 0..250 {
                        journal.record(refusal(t * 1000 + n)).await.unwrap();
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        // What the files hold before anything is removed: every line reads, none is torn.
        let mut in_files = 0;
        for name in journals(&folder) {
            let path = folder.join(&name);
            in_files += read_journal(&File::open(&path).unwrap(), &path)
                .unwrap()
                .len();
        }
        journal.settle().await.unwrap();
        assert!(in_files <= 2000, "{in_files} lines for 2,000 receipts");
        for t in 0..8 {
            for n in 0..250 {
                let id = format!("rcpt_{}", t * 1000 + n);
                assert!(store.receipt("demo", &id).await.unwrap().is_some(), "{id}");
            }
        }
        assert!(journal.handle.shared.pending.lock().unwrap().is_empty());
        drop(journal);
        let _ = fs::remove_dir_all(dir);
    }

    /// Full segments are closed, and removed once all their receipts are stored; the last one
    /// goes when the journal is dropped. Nothing is lost on the way.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn segments_rotate_and_go_once_stored() {
        let dir = std::env::temp_dir().join(format!(
            "aelc-journal-segments-{}",
            uuid::Uuid::now_v7().simple()
        ));
        let store = crate::open(&format!("sqlite:{}", dir.join("store.db").display()))
            .await
            .unwrap();
        let folder = dir.join("refusals");
        let journal = Journal::open_with_segments_of(Arc::clone(&store), &folder, 1024)
            .await
            .unwrap();
        for n in 0..60 {
            journal.record(refusal(n)).await.unwrap();
        }
        journal.settle().await.unwrap();
        // 60 lines of ~190 bytes made at least ten segments, and every full one is gone. One
        // more line goes into a segment that is not full: it stays.
        journal.record(refusal(60)).await.unwrap();
        journal.settle().await.unwrap();
        let left = journals(&folder);
        assert_eq!(left.len(), 1, "{left:?}");
        let number: u64 = left[0]
            .strip_suffix(SUFFIX)
            .and_then(|n| n.rsplit('-').next())
            .and_then(|n| n.parse().ok())
            .expect("refusals-<uuid>-<n>.ndjson");
        assert!(number >= 10, "{left:?}");
        for n in 0..=60 {
            assert!(store
                .receipt("demo", &format!("rcpt_{n}"))
                .await
                .unwrap()
                .is_some());
        }
        drop(journal);
        for _ in 0..100 {
            if journals(&folder).is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(journals(&folder), Vec::<String>::new());
        let _ = fs::remove_dir_all(dir);
    }
}
