//! The one SQL implementation of [`Store`], for SQLite and PostgreSQL.
//!
//! **One struct over `sqlx::Any`**, not two: the schema, the statements and the rules are the
//! same on both databases (`$1` placeholders work on both, every column is `TEXT` or `BIGINT`,
//! `ON CONFLICT DO NOTHING` exists in both), so one copy of each operation keeps the two
//! backends from drifting apart. What differs is small and lives in [`Dialect`]:
//! - how a write transaction starts: SQLite takes the write lock up front (`BEGIN IMMEDIATE`),
//!   so two processes never deadlock upgrading a read lock to a write lock (the `busy_timeout`
//!   makes the second wait instead); PostgreSQL starts a plain `READ COMMITTED` transaction;
//! - how concurrent writers are kept apart: SQLite has one writer at a time; on PostgreSQL every
//!   guarded change is a *conditional* `UPDATE … WHERE <the rule still holds>` (a balance stays
//!   ≥ 0, a mandate within budget, a run still open, an approval still approved), which takes the
//!   row lock and re-checks the rule after any concurrent writer committed, and rows are locked in
//!   one order everywhere (idempotency key, run, mandate, balances sorted by name) so two
//!   transactions never wait on each other in a cycle. A deadlock or serialization failure
//!   reported anyway is retried ([`retry`]);
//! - the migrations (`migrations/sqlite/`, `migrations/postgres/`: they differ in how a row
//!   gets its next number, an `INTEGER PRIMARY KEY` or a sequence, and in how 0009 changes a
//!   table, which SQLite does by copying it).
//!
//! Ledger model: each tenant has two ledger accounts, `NAME` (available) and `NAME@held`
//! (open reservations, [`held_account`]); money enters through `@funding` ([`FUNDING`]), the only
//! account allowed below zero. A transfer is one row of `transfers`, and the entries are the
//! view `entries` over them, a debit and a credit each (migration 0009). The `balances` table
//! holds each ledger account's sum, updated in the same transaction as the transfers.

mod accounts;
mod conn;
mod console;
pub use console::MAX_RUNS_PAGE;
mod ledger;
mod mandates;
mod runs;
mod sqlite_receipts;
mod sqlite_runs;

use crate::{
    Account, AgentStats, Approval, ApprovalUse, Balance, BeginRun, Begun, ConsoleSession, Entry,
    FileMeta, Mandate, MandateToken, MandateUse, Recovered, Result, RunDetails, RunQuery, RunRow,
    Settlement, Store, StoreError, StoredReceipt, UnixMs,
};
use aelc_runtime::money::Amount;
use async_trait::async_trait;
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{Any, AnyPool, Row, Transaction};
use std::future::Future;
use std::sync::{Arc, Once};
use std::time::Duration;

/// The platform's funding account: the debit side of every [`Store::fund`]. Not a valid tenant
/// name (tenants match `[a-z0-9][a-z0-9_-]*`), so no tenant can be it.
pub const FUNDING: &str = "@funding";

/// The ledger account holding `tenant`'s open reservations.
pub fn held_account(tenant: &str) -> String {
    format!("{tenant}@held")
}

/// Which database a [`SqlStore`] talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// The `VALUES` rows of an `INSERT` of `rows` rows of `columns` parameters each: `($1, $2), ($3,
/// $4)`, numbered row after row (both databases read `$N`), or SQLite's positional `(?, ?), (?,
/// ?)` for [`Dialect::Sqlite`], which binds hundreds without looking each name up.
pub(super) fn value_rows(dialect: Dialect, rows: usize, columns: usize) -> String {
    let mut sql = String::with_capacity(rows * columns * 5);
    for row in 0..rows {
        sql.push_str(if row == 0 { "(" } else { ", (" });
        for column in 0..columns {
            if column > 0 {
                sql.push_str(", ");
            }
            match dialect {
                Dialect::Sqlite => sql.push('?'),
                Dialect::Postgres => {
                    sql.push('$');
                    sql.push_str(&(row * columns + column + 1).to_string());
                }
            }
        }
        sql.push(')');
    }
    sql
}

/// The store on SQLite or PostgreSQL (see the module doc).
pub struct SqlStore {
    pool: AnyPool,
    dialect: Dialect,
    /// SQLite's database file (for [`Store::receipt_writer`]'s connection).
    sqlite_path: Option<String>,
    /// SQLite's background checkpointer ([`checkpoint_in_background`]), stopped with the store.
    checkpointer: Option<tokio::task::AbortHandle>,
    /// SQLite's run writer ([`sqlite_runs`]): runs' reservations and settlements, committed in
    /// groups on a thread of its own. `None` on PostgreSQL, whose writers run side by side.
    run_writer: Option<sqlite_runs::RunWriter>,
}

impl Drop for SqlStore {
    fn drop(&mut self) {
        if let Some(task) = &self.checkpointer {
            task.abort();
        }
    }
}

/// Every SQLite connection's settings. The busy timeout (ms): how long a connection waits for
/// another process's write lock before failing. `synchronous = NORMAL` in WAL mode: a commit is
/// in the log file before it returns, so a killed process (SIGKILL, a panic, an OOM kill) loses
/// nothing; the log is flushed to the disk at checkpoints, not at every commit, so a power cut
/// can lose the last commits (SQLite's documented trade, its recommended setting for WAL).
/// `FULL` would flush at every commit; book/src/store.md says when to choose PostgreSQL instead.
///
/// `wal_autocheckpoint`: SQLite's default copies the log back into the database (and flushes
/// both) inside the commit that finds 1,000 pages in the log, so one commit in every few
/// hundred waited for a checkpoint: the gateway's p99 latency under load was 50–200 ms. Here a
/// background task checkpoints instead ([`checkpoint_in_background`]), and the commit-time
/// checkpoint is kept only as a safety net for a log that grows past 10,000 pages (40 MB).
pub(crate) const SQLITE_PRAGMAS: [&str; 5] = [
    "PRAGMA busy_timeout = 30000",
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA foreign_keys = ON",
    "PRAGMA wal_autocheckpoint = 10000",
];

/// How often the background checkpointer runs.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(100);

/// Checkpoints SQLite's log every [`CHECKPOINT_EVERY`] on a connection of its own:
/// `PASSIVE` copies what no reader still needs without taking the write lock, so commits go on
/// meanwhile, and once the log is copied the next commit starts it again from the beginning,
/// which keeps it small. A failed checkpoint (a busy database) is tried again at the next tick.
fn checkpoint_in_background(pool: AnyPool) -> tokio::task::AbortHandle {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(CHECKPOINT_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if pool.is_closed() {
                return;
            }
            let _ = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
                .execute(&pool)
                .await;
        }
    })
    .abort_handle()
}

/// Opens the store at `url` and applies its migrations: `postgres://…` (or `postgresql://…`)
/// for PostgreSQL, `sqlite:PATH` or a plain path for SQLite (the file is created when missing).
pub async fn open(url: &str) -> Result<Arc<dyn Store>> {
    Ok(Arc::new(SqlStore::open(url).await?))
}

impl SqlStore {
    /// See [`open`].
    pub async fn open(url: &str) -> Result<SqlStore> {
        static DRIVERS: Once = Once::new();
        DRIVERS.call_once(sqlx::any::install_default_drivers);
        let mut sqlite_path = None;
        let (dialect, url) = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            (Dialect::Postgres, url.to_owned())
        } else {
            let path = url
                .strip_prefix("sqlite://")
                .or_else(|| url.strip_prefix("sqlite:"))
                .unwrap_or(url);
            if path.is_empty() {
                return Err(StoreError::Backend(format!(
                    "store URL `{url}` names no file (sqlite:PATH, a path, or postgres://…)"
                )));
            }
            let path = path.split('?').next().unwrap_or(path);
            // `.ael/store.db` in a fresh project: the folder is made like the file.
            if let Some(parent) = std::path::Path::new(path).parent() {
                if !parent.as_os_str().is_empty() {
                    std::fs::create_dir_all(parent).map_err(|e| {
                        StoreError::Backend(format!("cannot create {}: {e}", parent.display()))
                    })?;
                }
            }
            sqlite_path = Some(path.to_owned());
            (Dialect::Sqlite, format!("sqlite://{path}?mode=rwc"))
        };
        let options = AnyPoolOptions::new().acquire_timeout(Duration::from_secs(60));
        let pool = match dialect {
            // WAL: readers never block the one writer; foreign keys are off by default in
            // SQLite; the busy timeout makes a second process wait for the write lock.
            Dialect::Sqlite => {
                options
                    .max_connections(8)
                    .after_connect(sqlite_settings)
                    .connect(&url)
                    .await
            }
            Dialect::Postgres => options.max_connections(16).connect(&url).await,
        }
        .map_err(|e| {
            StoreError::Backend(format!("cannot open the store at `{}`: {e}", redact(&url)))
        })?;
        let migrations = match dialect {
            Dialect::Sqlite => sqlx::migrate!("migrations/sqlite"),
            Dialect::Postgres => sqlx::migrate!("migrations/postgres"),
        };
        migrations
            .run(&pool)
            .await
            .map_err(|e| StoreError::Backend(format!("migrating the store: {e}")))?;
        let checkpointer =
            (dialect == Dialect::Sqlite).then(|| checkpoint_in_background(pool.clone()));
        let run_writer = match &sqlite_path {
            Some(path) => Some(sqlite_runs::RunWriter::start(path)?),
            None => None,
        };
        Ok(SqlStore {
            pool,
            dialect,
            sqlite_path,
            checkpointer,
            run_writer,
        })
    }

    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// A write transaction (see the module doc for why SQLite's is `IMMEDIATE`).
    ///
    /// Begun on a task of its own, which a cancelled caller does not stop: sqlx 0.8 begins a
    /// transaction in two steps (the `BEGIN`, then a check of the connection), and a caller
    /// cancelled between them (an HTTP client that hangs up drops the handler's future) left
    /// the connection in the pool inside a transaction that no guard would end, so every
    /// later write on it failed. Here the begin always finishes; a caller that is gone drops
    /// a whole `Transaction`, which rolls back. (The conformance suite's
    /// `cancelled_calls_leave_the_store_usable`.)
    async fn write(&self) -> std::result::Result<Transaction<'static, Any>, Fail> {
        let pool = self.pool.clone();
        let dialect = self.dialect;
        let begun = tokio::spawn(async move {
            match dialect {
                Dialect::Sqlite => pool.begin_with("BEGIN IMMEDIATE").await,
                Dialect::Postgres => pool.begin().await,
            }
        })
        .await
        .map_err(|e| {
            Fail::from(sqlx::Error::Protocol(format!(
                "beginning a transaction: {e}"
            )))
        })?;
        Ok(begun?)
    }
}

/// Applies [`SQLITE_PRAGMAS`] to a new connection (a named function: a closure here does not
/// get the higher-ranked lifetime `after_connect` needs).
fn sqlite_settings<'c>(
    conn: &'c mut sqlx::AnyConnection,
    _: sqlx::pool::PoolConnectionMetadata,
) -> std::pin::Pin<Box<dyn Future<Output = std::result::Result<(), sqlx::Error>> + Send + 'c>> {
    Box::pin(async move {
        for pragma in SQLITE_PRAGMAS {
            sqlx::query(pragma).execute(&mut *conn).await?;
        }
        Ok(())
    })
}

/// A URL without its password, for error messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

/// An operation's failure inside the implementation: a store answer, or a database error kept
/// whole so [`retry`] can tell a deadlock from the rest.
pub(crate) enum Fail {
    Store(StoreError),
    Sql(sqlx::Error),
    /// From SQLite's run writer's own connection ([`sqlite_runs`]).
    Sqlite(rusqlite::Error),
}

impl From<StoreError> for Fail {
    fn from(e: StoreError) -> Fail {
        Fail::Store(e)
    }
}

impl From<sqlx::Error> for Fail {
    fn from(e: sqlx::Error) -> Fail {
        Fail::Sql(e)
    }
}

impl From<rusqlite::Error> for Fail {
    fn from(e: rusqlite::Error) -> Fail {
        Fail::Sqlite(e)
    }
}

impl Fail {
    fn into_store(self) -> StoreError {
        match self {
            Fail::Store(e) => e,
            Fail::Sql(e) => StoreError::Backend(e.to_string()),
            Fail::Sqlite(e) => StoreError::Backend(e.to_string()),
        }
    }

    /// True when the statement broke a unique or primary key (the thing exists already).
    fn is_unique_violation(&self) -> bool {
        match self {
            Fail::Sql(e) => is_unique_violation(e),
            Fail::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => matches!(
                e.extended_code,
                rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                    | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
            ),
            _ => false,
        }
    }

    /// PostgreSQL's serialization failure and deadlock, SQLite's busy/locked: the transaction
    /// was rolled back whole and can run again.
    fn retryable(&self) -> bool {
        match self {
            Fail::Sql(sqlx::Error::Database(e)) => matches!(
                e.code().as_deref(),
                Some("40001" | "40P01" | "5" | "6" | "517" | "261" | "262")
            ),
            Fail::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => matches!(
                e.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            ),
            _ => false,
        }
    }
}

/// Runs `attempt` (one transaction) again when the database rolled it back for a conflict.
async fn retry<T, F, Fut>(attempt: F) -> Result<T>
where
    F: Fn() -> Fut,
    Fut: Future<Output = std::result::Result<T, Fail>>,
{
    let mut tries = 0u32;
    loop {
        match attempt().await {
            Ok(v) => return Ok(v),
            Err(e) if e.retryable() && tries < 8 => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(5 << tries.min(6))).await;
            }
            Err(e) => return Err(e.into_store()),
        }
    }
}

/// True when `e` broke a unique or primary key (the thing exists already).
fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.kind() == sqlx::error::ErrorKind::UniqueViolation)
}

/// Amount columns: stored nano-units back to an [`Amount`].
fn amount(row: &AnyRow, column: &str) -> std::result::Result<Amount, Fail> {
    Ok(crate::from_nano(row.try_get::<i64, _>(column)?))
}

/// `ACCOUNT/NAME` split at its first `/`.
fn mandate_key(id: &str) -> Result<(&str, &str)> {
    id.split_once('/')
        .filter(|(a, n)| !a.is_empty() && !n.is_empty())
        .ok_or_else(|| StoreError::NotFound(format!("mandate `{id}` (expected ACCOUNT/NAME)")))
}

#[async_trait]
impl Store for SqlStore {
    fn backend(&self) -> &'static str {
        match self.dialect {
            Dialect::Sqlite => "sqlite",
            Dialect::Postgres => "postgres",
        }
    }

    async fn create_account(&self, account: &Account, key_sha256: &str) -> Result<()> {
        retry(|| self.insert_account(account, Some(key_sha256), false)).await
    }

    async fn ensure_account(&self, account: &Account) -> Result<()> {
        retry(|| self.insert_account(account, None, true)).await
    }

    async fn account(&self, name: &str) -> Result<Option<Account>> {
        self.find_account("name", name)
            .await
            .map_err(Fail::into_store)
    }

    async fn account_by_key(&self, key_sha256: &str) -> Result<Option<Account>> {
        self.find_account("key_sha256", key_sha256)
            .await
            .map_err(Fail::into_store)
    }

    async fn fund(
        &self,
        account: &str,
        amount: Amount,
        currency: &str,
        at_ms: UnixMs,
    ) -> Result<String> {
        retry(|| self.fund_once(account, amount, currency, at_ms)).await
    }

    async fn balance(&self, account: &str) -> Result<Balance> {
        self.read_balance(account).await.map_err(Fail::into_store)
    }

    async fn entries(&self, account: &str) -> Result<Vec<Entry>> {
        self.read_entries(account).await.map_err(Fail::into_store)
    }

    async fn begin_run(&self, run: &BeginRun) -> Result<Begun> {
        retry(|| self.begin_run_once(run)).await
    }

    async fn finish_run(&self, receipt: &StoredReceipt, settlement: &Settlement) -> Result<()> {
        retry(|| self.finish_run_once(receipt, settlement)).await
    }

    async fn record_receipts(&self, receipts: &[StoredReceipt]) -> Result<()> {
        retry(|| self.record_receipts_once(receipts)).await
    }

    fn receipt_writer(&self) -> Result<Option<Box<dyn crate::journal::ReceiptWriter>>> {
        match &self.sqlite_path {
            Some(path) => Ok(Some(Box::new(sqlite_receipts::SqliteReceipts::open(path)?))),
            None => Ok(None),
        }
    }

    async fn receipt(&self, tenant: &str, id: &str) -> Result<Option<StoredReceipt>> {
        self.find_receipt("tenant", tenant, id)
            .await
            .map_err(Fail::into_store)
    }

    async fn mandate_receipt(&self, mandate: &str, id: &str) -> Result<Option<StoredReceipt>> {
        self.find_receipt("mandate", mandate, id)
            .await
            .map_err(Fail::into_store)
    }

    async fn agent_stats(&self, agent: &str) -> Result<AgentStats> {
        self.read_agent_stats(agent).await.map_err(Fail::into_store)
    }

    async fn renew_lease(&self, owner: &str, until_ms: UnixMs) -> Result<()> {
        retry(|| self.upsert_lease(owner, until_ms)).await
    }

    async fn release_lease(&self, owner: &str) -> Result<()> {
        retry(|| self.delete_lease(owner)).await
    }

    async fn recover(&self, restarting: Option<&str>, now_ms: UnixMs) -> Result<Recovered> {
        self.recover_abandoned(restarting, now_ms).await
    }

    async fn open_runs(&self) -> Result<u64> {
        self.count_open_runs().await.map_err(Fail::into_store)
    }

    async fn create_mandate(&self, mandate: &Mandate) -> Result<()> {
        retry(|| self.insert_mandate(mandate)).await
    }

    async fn mandate(&self, id: &str) -> Result<Option<Mandate>> {
        self.find_mandate(id).await.map_err(Fail::into_store)
    }

    async fn mandates(&self, account: Option<&str>) -> Result<Vec<Mandate>> {
        self.list_mandates(account).await.map_err(Fail::into_store)
    }

    async fn mandate_use(&self, id: &str) -> Result<MandateUse> {
        self.read_mandate_use(id).await.map_err(Fail::into_store)
    }

    async fn create_approval(&self, approval: &Approval) -> Result<()> {
        retry(|| self.insert_approval(approval)).await
    }

    async fn approval(&self, id: &str, now_ms: UnixMs) -> Result<Option<Approval>> {
        self.find_approval(id, now_ms)
            .await
            .map_err(Fail::into_store)
    }

    async fn decide_approval(&self, id: &str, approve: bool, now_ms: UnixMs) -> Result<Approval> {
        retry(|| self.decide_approval_once(id, approve, now_ms)).await
    }

    async fn use_approval(&self, call: &ApprovalUse) -> Result<()> {
        retry(|| self.use_approval_once(call)).await
    }

    async fn create_mandate_token(&self, token: &MandateToken) -> Result<()> {
        retry(|| self.insert_mandate_token(token)).await
    }

    async fn mandate_token(&self, token_sha256: &str) -> Result<Option<MandateToken>> {
        self.find_mandate_token(token_sha256)
            .await
            .map_err(Fail::into_store)
    }

    async fn revoke_mandate_token(
        &self,
        token_sha256: &str,
        now_ms: UnixMs,
    ) -> Result<MandateToken> {
        retry(|| self.revoke_mandate_token_once(token_sha256, now_ms)).await
    }

    async fn put_file(&self, file: &FileMeta, max_stored_bytes: u64) -> Result<()> {
        retry(|| self.insert_file(file, max_stored_bytes)).await
    }

    async fn file(&self, tenant: &str, id: &str) -> Result<Option<FileMeta>> {
        self.find_file(tenant, id).await.map_err(Fail::into_store)
    }

    async fn files(&self, tenant: &str) -> Result<Vec<FileMeta>> {
        self.list_files(tenant).await.map_err(Fail::into_store)
    }

    async fn stored_bytes(&self, tenant: &str) -> Result<u64> {
        self.sum_file_sizes(&self.pool, tenant)
            .await
            .map_err(Fail::into_store)
    }

    async fn delete_file(&self, id: &str) -> Result<Option<FileMeta>> {
        retry(|| self.remove_file(id)).await
    }

    async fn create_console_session(&self, session: &ConsoleSession) -> Result<()> {
        retry(|| self.insert_console_session(session)).await
    }

    async fn console_session(
        &self,
        id_sha256: &str,
        now_ms: UnixMs,
    ) -> Result<Option<ConsoleSession>> {
        self.find_console_session(id_sha256, now_ms)
            .await
            .map_err(Fail::into_store)
    }

    async fn end_console_session(&self, id_sha256: &str, now_ms: UnixMs) -> Result<()> {
        retry(|| self.delete_console_session(id_sha256, now_ms)).await
    }

    async fn run_details(&self, tenant: &str, id: &str) -> Result<Option<RunDetails>> {
        self.find_run_details(tenant, id)
            .await
            .map_err(Fail::into_store)
    }

    async fn runs_page(&self, tenant: &str, query: &RunQuery) -> Result<Vec<RunRow>> {
        self.list_runs(tenant, query)
            .await
            .map_err(Fail::into_store)
    }

    async fn agent_days(&self, agent: &str, since_ms: UnixMs) -> Result<Vec<(i64, AgentStats)>> {
        self.read_agent_days(agent, since_ms)
            .await
            .map_err(Fail::into_store)
    }

    async fn spend_by_agent(
        &self,
        tenant: &str,
        since_ms: UnixMs,
    ) -> Result<Vec<(i64, String, Amount)>> {
        self.read_spend_by_agent(tenant, since_ms)
            .await
            .map_err(Fail::into_store)
    }

    async fn approvals(&self, mandate: &str, now_ms: UnixMs) -> Result<Vec<Approval>> {
        self.list_approvals(mandate, now_ms)
            .await
            .map_err(Fail::into_store)
    }

    async fn expired_files(&self, now_ms: UnixMs, limit: u32) -> Result<Vec<FileMeta>> {
        self.list_expired_files(now_ms, limit)
            .await
            .map_err(Fail::into_store)
    }

    async fn take_turn(&self, name: &str, until_ms: UnixMs, now_ms: UnixMs) -> Result<bool> {
        retry(|| self.claim_lease(name, until_ms, now_ms)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbered row after row, or positional for SQLite's many-row inserts.
    #[test]
    fn value_rows_number_every_parameter_once() {
        assert_eq!(value_rows(Dialect::Postgres, 1, 3), "($1, $2, $3)");
        assert_eq!(value_rows(Dialect::Postgres, 2, 2), "($1, $2), ($3, $4)");
        assert_eq!(value_rows(Dialect::Sqlite, 2, 2), "(?, ?), (?, ?)");
    }
}
