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

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use crate::{Result, Store, StoreError, StoredReceipt};

/// One receipt waiting for its group's commit.
struct Pending {
    receipt: StoredReceipt,
    done: oneshot::Sender<Result<()>>,
}

/// The handle callers share (cheap to clone); the writer task ends when the last one drops.
#[derive(Clone)]
pub struct GroupCommit {
    queue: mpsc::Sender<Pending>,
}

impl GroupCommit {
    /// Starts the writer on the current tokio runtime: at most `max_group` receipts per
    /// transaction, at most `queue` waiting.
    pub fn start(store: Arc<dyn Store>, max_group: usize, queue: usize) -> GroupCommit {
        let (sender, receiver) = mpsc::channel(queue.max(1));
        tokio::spawn(write_groups(store, receiver, max_group.max(1)));
        GroupCommit { queue: sender }
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

/// The writer: takes what has queued (waiting only when nothing has), commits it as one group.
async fn write_groups(
    store: Arc<dyn Store>,
    mut receiver: mpsc::Receiver<Pending>,
    max_group: usize,
) {
    let mut group: Vec<Pending> = Vec::with_capacity(max_group);
    while receiver.recv_many(&mut group, max_group).await > 0 {
        let (rows, waiting): (Vec<StoredReceipt>, Vec<_>) =
            group.drain(..).map(|p| (p.receipt, p.done)).unzip();
        // A caller that stopped waiting (its request was cancelled) needs no answer, hence
        // the ignored sends.
        match store.record_receipts(&rows).await {
            Ok(()) => {
                for done in waiting {
                    let _ = done.send(Ok(()));
                }
            }
            Err(_) if rows.len() > 1 => {
                for (row, done) in rows.iter().zip(waiting) {
                    let _ = done.send(store.record_receipts(std::slice::from_ref(row)).await);
                }
            }
            Err(e) => {
                for done in waiting {
                    let _ = done.send(Err(e.clone()));
                }
            }
        }
    }
}
