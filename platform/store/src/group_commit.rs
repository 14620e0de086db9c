//! Group commit of receipts: many callers each wait for their receipt to be durable, and one
//! writer commits whatever has queued up meanwhile in a single transaction.
//!
//! Why: a gateway refusing inputs at the gate writes one receipt per request, and every commit
//! is a write to the database's log (a WAL append on SQLite under its one writer lock, a
//! commit record and its flush on PostgreSQL). Committed one by one, the commits are the
//! bottleneck; committed in groups, their cost is shared. This is PostgreSQL's own
//! `commit_delay` idea, without the delay: the writer never waits to fill a group. Under light
//! load a group is one receipt committed at once; under heavy load it is whatever arrived while
//! the previous group was committing (at most `max_group`).
//!
//! Durability is unchanged: [`GroupCommit::record`] returns only after the transaction holding
//! the receipt committed, so a caller that answers after it never answers for a receipt that a
//! crash could lose. The queue is bounded: when it is full, `record` waits (backpressure), it
//! never grows without bound.
//!
//! A group whose commit fails (one bad row makes the whole transaction fail) is retried one
//! receipt at a time, so each caller gets the answer for its own receipt.
//!
//! Where the store offers a blocking [`ReceiptWriter`] (SQLite: see `sql/sqlite_receipts.rs`),
//! the writer is a thread of its own that commits each group in one call; otherwise
//! (PostgreSQL) it is a task committing through [`Store::record_receipts`].

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use crate::{Result, Store, StoreError, StoredReceipt};

/// One receipt waiting for its group's commit.
struct Pending {
    receipt: StoredReceipt,
    done: oneshot::Sender<Result<()>>,
}

/// A store's own synchronous way to commit a group of receipts, all or none, on a thread
/// given to it alone ([`Store::receipt_writer`]).
pub trait ReceiptWriter: Send {
    fn record(&mut self, rows: &[StoredReceipt]) -> Result<()>;
}

/// The handle callers share (cheap to clone); the writer task ends when the last one drops.
#[derive(Clone)]
pub struct GroupCommit {
    queue: mpsc::Sender<Pending>,
}

impl GroupCommit {
    /// Starts the writer: at most `max_group` receipts per transaction, at most `queue`
    /// waiting. The store's [`ReceiptWriter`] on a thread named `aelc-receipts` when it has
    /// one, else a task on the current tokio runtime.
    pub fn start(store: Arc<dyn Store>, max_group: usize, queue: usize) -> Result<GroupCommit> {
        let (sender, receiver) = mpsc::channel(queue.max(1));
        let max_group = max_group.max(1);
        match store.receipt_writer()? {
            Some(writer) => {
                std::thread::Builder::new()
                    .name("aelc-receipts".to_owned())
                    .spawn(move || write_groups_on_thread(writer, receiver, max_group))
                    .map_err(|e| {
                        StoreError::Backend(format!("cannot start the receipt writer: {e}"))
                    })?;
            }
            None => {
                tokio::spawn(write_groups(store, receiver, max_group));
            }
        }
        Ok(GroupCommit { queue: sender })
    }

    /// Stores `receipt` and returns once it is committed.
    pub async fn record(&self, receipt: StoredReceipt) -> Result<()> {
        let (done, committed) = oneshot::channel();
        self.queue
            .send(Pending { receipt, done })
            .await
            .map_err(|_| stopped())?;
        committed.await.map_err(|_| stopped())?
    }
}

fn stopped() -> StoreError {
    StoreError::Backend("the receipt writer has stopped".to_owned())
}

/// The writer thread: waits for a receipt, takes whatever else has queued meanwhile, commits
/// the group; ends when every [`GroupCommit`] handle is gone.
fn write_groups_on_thread(
    mut writer: Box<dyn ReceiptWriter>,
    mut receiver: mpsc::Receiver<Pending>,
    max_group: usize,
) {
    let mut group: Vec<Pending> = Vec::with_capacity(max_group);
    while let Some(first) = receiver.blocking_recv() {
        group.push(first);
        while group.len() < max_group {
            match receiver.try_recv() {
                Ok(next) => group.push(next),
                Err(_) => break,
            }
        }
        let (rows, waiting): (Vec<StoredReceipt>, Vec<_>) =
            group.drain(..).map(|p| (p.receipt, p.done)).unzip();
        let outcome = writer.record(&rows);
        let alone = (outcome.is_err() && rows.len() > 1).then(|| {
            rows.iter()
                .map(|row| writer.record(std::slice::from_ref(row)))
                .collect()
        });
        answer(waiting, outcome, alone);
    }
}

/// Answers each caller of a group: its own result when the rows were tried again one by one
/// (`alone`, after the group failed), else the group's. A caller that stopped waiting (its
/// request was cancelled) needs no answer, hence the ignored sends.
fn answer(
    waiting: Vec<oneshot::Sender<Result<()>>>,
    group: Result<()>,
    alone: Option<Vec<Result<()>>>,
) {
    match alone {
        Some(results) => {
            for (done, result) in waiting.into_iter().zip(results) {
                let _ = done.send(result);
            }
        }
        None => {
            for done in waiting {
                let _ = done.send(group.clone());
            }
        }
    }
}

/// The writer task: takes what has queued (waiting only when nothing has), commits it as one group.
async fn write_groups(
    store: Arc<dyn Store>,
    mut receiver: mpsc::Receiver<Pending>,
    max_group: usize,
) {
    let mut group: Vec<Pending> = Vec::with_capacity(max_group);
    while receiver.recv_many(&mut group, max_group).await > 0 {
        let (rows, waiting): (Vec<StoredReceipt>, Vec<_>) =
            group.drain(..).map(|p| (p.receipt, p.done)).unzip();
        let outcome = store.record_receipts(&rows).await;
        let alone = if outcome.is_err() && rows.len() > 1 {
            let mut results = Vec::with_capacity(rows.len());
            for row in &rows {
                results.push(store.record_receipts(std::slice::from_ref(row)).await);
            }
            Some(results)
        } else {
            None
        };
        answer(waiting, outcome, alone);
    }
}
