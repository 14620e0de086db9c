//! SQLite's run writer: runs' reservations ([`Store::begin_run`]) and settlements
//! ([`Store::finish_run`]) written by one thread on a connection of its own, many runs to a
//! transaction (group commit).
//!
//! Why: SQLite has one writer at a time. Through `sqlx`, each of a run's ~26 statements was a
//! hand-off to the connection's worker thread and back (see [`super::conn`]), and every run was
//! two transactions of its own, each rewriting the pages it touched into the log (about 129 KB
//! written a run). Under load the write lock was held through all those hand-offs while the
//! other runs' transactions slept in SQLite's busy handler. Here whatever runs queued while the
//! last group was written are written next, in one `BEGIN IMMEDIATE` … `COMMIT`, with no
//! hand-off between statements.
//!
//! The rules are those of the `sqlx` path, and the statements the same ([`begin_run_on`],
//! [`finish_run_on`]): each run's work sits in a savepoint, so a run that is refused (an
//! insufficient balance, a key already claimed) or fails rolls back alone and the others of
//! its group are kept; a caller is answered only after the group's `COMMIT` (the store's
//! durability is unchanged: `synchronous = NORMAL`); if SQLite gives up the whole transaction
//! (an I/O error, a full disk) or the commit fails, every run of the group is answered with
//! the error, and a busy database is answered as retryable, as before.
//!
//! [`Store::begin_run`]: crate::Store::begin_run
//! [`Store::finish_run`]: crate::Store::finish_run

use super::runs::{begin_run_on, finish_run_on};
use super::sqlite_receipts::connect;
use super::Fail;
use crate::{BeginRun, Begun, Result, Settlement, StoreError, StoredReceipt};
use rusqlite::Connection;
use std::future::Future;
use std::sync::mpsc;
use std::task::{Context, Poll, Waker};
use tokio::sync::oneshot;

/// At most this many runs' writes in one transaction.
const PER_GROUP: usize = 256;

/// Prepared statements kept: a run uses about a dozen distinct ones.
const STATEMENTS_KEPT: usize = 64;

/// The handle the store's async side sends runs' writes through.
pub(super) struct RunWriter {
    jobs: mpsc::Sender<Job>,
}

/// One run's write and where its answer goes.
enum Job {
    Begin {
        run: BeginRun,
        answer: oneshot::Sender<std::result::Result<Begun, Fail>>,
    },
    Finish {
        receipt: StoredReceipt,
        settlement: Settlement,
        answer: oneshot::Sender<std::result::Result<(), Fail>>,
    },
}

impl RunWriter {
    /// Opens the writer's connection to the database file at `path` (already migrated) and
    /// starts its thread, which ends when the writer is dropped.
    pub(super) fn start(path: &str) -> Result<RunWriter> {
        let connection = connect(path)?;
        connection.set_prepared_statement_cache_capacity(STATEMENTS_KEPT);
        let (jobs, queue) = mpsc::channel();
        std::thread::Builder::new()
            .name("aelc-store-runs".to_owned())
            .spawn(move || serve(connection, queue))
            .map_err(|e| StoreError::Backend(format!("cannot start the run writer: {e}")))?;
        Ok(RunWriter { jobs })
    }

    pub(super) async fn begin_run(&self, run: &BeginRun) -> std::result::Result<Begun, Fail> {
        let (answer, answered) = oneshot::channel();
        self.send(Job::Begin {
            run: run.clone(),
            answer,
        })?;
        answered.await.map_err(|_| stopped())?
    }

    pub(super) async fn finish_run(
        &self,
        receipt: &StoredReceipt,
        settlement: &Settlement,
    ) -> std::result::Result<(), Fail> {
        let (answer, answered) = oneshot::channel();
        self.send(Job::Finish {
            receipt: receipt.clone(),
            settlement: settlement.clone(),
            answer,
        })?;
        answered.await.map_err(|_| stopped())?
    }

    fn send(&self, job: Job) -> std::result::Result<(), Fail> {
        self.jobs.send(job).map_err(|_| stopped())
    }
}

fn stopped() -> Fail {
    Fail::Store(StoreError::Backend(
        "the store's run writer stopped".to_owned(),
    ))
}

/// The writer's thread: a group is whatever is queued once the last one is written.
fn serve(mut connection: Connection, queue: mpsc::Receiver<Job>) {
    while let Ok(first) = queue.recv() {
        let mut group = vec![first];
        while group.len() < PER_GROUP {
            match queue.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        write_group(&mut connection, group);
    }
}

/// A job's result with its caller, kept until the group's commit decides what the caller hears.
enum Done {
    Begun(
        oneshot::Sender<std::result::Result<Begun, Fail>>,
        std::result::Result<Begun, Fail>,
    ),
    Finished(
        oneshot::Sender<std::result::Result<(), Fail>>,
        std::result::Result<(), Fail>,
    ),
}

impl Job {
    /// Runs the job's statements (inside the savepoint its caller opened).
    fn run(self, connection: &mut Connection) -> Done {
        match self {
            Job::Begin { run, answer } => Done::Begun(answer, now(begin_run_on(connection, &run))),
            Job::Finish {
                receipt,
                settlement,
                answer,
            } => Done::Finished(
                answer,
                now(finish_run_on(connection, &receipt, &settlement)),
            ),
        }
    }

    fn fail(self, error: &rusqlite::Error) {
        match self {
            Job::Begin { answer, .. } => drop(answer.send(Err(Fail::Sqlite(copy(error))))),
            Job::Finish { answer, .. } => drop(answer.send(Err(Fail::Sqlite(copy(error))))),
        }
    }
}

impl Done {
    /// Whether the job's writes are to be kept (else its savepoint is rolled back).
    fn keep(&self) -> bool {
        matches!(
            self,
            Done::Begun(_, Ok(Begun::Started)) | Done::Finished(_, Ok(()))
        )
    }

    /// The error the job met, if it met one.
    fn error(&self) -> Option<&Fail> {
        match self {
            Done::Begun(_, Err(e)) | Done::Finished(_, Err(e)) => Some(e),
            _ => None,
        }
    }

    /// Tells the caller (once the group is committed).
    fn send(self) {
        match self {
            Done::Begun(answer, result) => drop(answer.send(result)),
            Done::Finished(answer, result) => drop(answer.send(result)),
        }
    }

    /// Tells the caller the group was not written.
    fn fail(self, error: &rusqlite::Error) {
        match self {
            Done::Begun(answer, _) => drop(answer.send(Err(Fail::Sqlite(copy(error))))),
            Done::Finished(answer, _) => drop(answer.send(Err(Fail::Sqlite(copy(error))))),
        }
    }
}

/// Writes `group` in one transaction, each job in a savepoint of its own, and answers each.
fn write_group(connection: &mut Connection, group: Vec<Job>) {
    if let Err(e) = run(connection, "BEGIN IMMEDIATE") {
        return group.into_iter().for_each(|job| job.fail(&e));
    }
    let mut jobs = group.into_iter();
    let mut done: Vec<Done> = Vec::with_capacity(jobs.len());
    let mut broken = None;
    for job in jobs.by_ref() {
        if let Err(e) = run(connection, "SAVEPOINT run") {
            job.fail(&e);
            broken = Some(e);
            break;
        }
        let result = job.run(connection);
        if connection.is_autocommit() {
            // SQLite rolled the whole transaction back (an I/O error, a full disk): nothing of
            // the group is written.
            let e = gave_up(result.error());
            result.fail(&e);
            broken = Some(e);
            break;
        }
        let ended = if result.keep() {
            run(connection, "RELEASE run")
        } else {
            run(connection, "ROLLBACK TO run").and_then(|()| run(connection, "RELEASE run"))
        };
        done.push(result);
        if let Err(e) = ended {
            broken = Some(e);
            break;
        }
    }
    let broken = match broken {
        Some(e) => Some(e),
        None => run(connection, "COMMIT").err(),
    };
    match broken {
        None => done.into_iter().for_each(Done::send),
        Some(e) => {
            if !connection.is_autocommit() {
                let _ = connection.execute_batch("ROLLBACK");
            }
            done.into_iter().for_each(|d| d.fail(&e));
            jobs.for_each(|job| job.fail(&e));
        }
    }
}

/// Runs one of the group's transaction statements, prepared once: `execute_batch` parsed each
/// again, two savepoint statements a job (16 k instructions a run of a full run's 650 k).
fn run(connection: &Connection, sql: &str) -> rusqlite::Result<()> {
    connection.prepare_cached(sql)?.execute([]).map(drop)
}

/// The error that made SQLite give up the transaction, as the job reported it.
fn gave_up(fail: Option<&Fail>) -> rusqlite::Error {
    match fail {
        Some(Fail::Sqlite(e)) => copy(e),
        Some(Fail::Store(e)) => failure(e.to_string()),
        Some(Fail::Sql(e)) => failure(e.to_string()),
        None => failure("SQLite ended the transaction".to_owned()),
    }
}

/// `error` again (rusqlite's error is not `Clone`), keeping SQLite's codes, which tell a busy
/// database (retried) from the rest.
fn copy(error: &rusqlite::Error) -> rusqlite::Error {
    match error {
        rusqlite::Error::SqliteFailure(code, message) => {
            rusqlite::Error::SqliteFailure(*code, message.clone())
        }
        other => failure(other.to_string()),
    }
}

fn failure(message: String) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ERROR),
        Some(message),
    )
}

/// Runs one operation to its end on this thread. Its statements are `rusqlite` calls, which
/// never wait on anything async, so it is ready at the first poll; one that is not is an
/// error, not a hang.
fn now<T>(
    operation: impl Future<Output = std::result::Result<T, Fail>>,
) -> std::result::Result<T, Fail> {
    let mut operation = std::pin::pin!(operation);
    match operation
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(result) => result,
        Poll::Pending => Err(Fail::Store(StoreError::Backend(
            "a statement of the run writer waited".to_owned(),
        ))),
    }
}
