//! SQLite's receipt writer for the refusal journal's mover ([`crate::journal`]): one thread
//! with a connection of its own, committing a whole group of receipts in one call.
//!
//! Why a second way to write receipts: through `sqlx`, every statement on SQLite is a message to
//! the connection's worker thread and an answer back to the async task, so a group's
//! `BEGIN IMMEDIATE`, `INSERT` and `COMMIT` (and the pool's checkout) were four to six thread
//! hand-offs. On a busy two-core machine each hand-off waits for a core (they were the gate's
//! latency tail while refusals were committed in the request's path). Here the mover's thread
//! runs the whole transaction on its own connection with a statement prepared once.
//!
//! The rules are those of the `sqlx` path: the same settings ([`SQLITE_PRAGMAS`]), the write lock
//! taken up front (`BEGIN IMMEDIATE`, waiting on another process by the busy timeout), all rows
//! or none, a duplicate id reported as [`StoreError::Exists`].

use super::runs::{INSERT_RECEIPTS, RECEIPT_COLUMNS};
use super::{value_rows, Dialect, SQLITE_PRAGMAS};
use crate::document;
use crate::journal::ReceiptWriter;
use crate::{Result, StoreError, StoredReceipt};
use rusqlite::{params, Connection, ErrorCode};

/// A connection to the store's database file, already migrated by the `sqlx` pool that opened it.
pub(crate) struct SqliteReceipts {
    connection: Connection,
    /// The insert of one receipt ([`INSERT_RECEIPTS`] with one row of parameters).
    insert: String,
}

impl SqliteReceipts {
    pub(crate) fn open(path: &str) -> Result<SqliteReceipts> {
        let connection = connect(path)?;
        let row = value_rows(Dialect::Sqlite, 1, RECEIPT_COLUMNS);
        Ok(SqliteReceipts {
            connection,
            insert: format!("{INSERT_RECEIPTS}{row}"),
        })
    }

    fn insert_all(&mut self, rows: &[StoredReceipt]) -> rusqlite::Result<()> {
        let transaction = self
            .connection
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        {
            let mut insert = transaction.prepare_cached(&self.insert)?;
            for r in rows {
                insert.execute(params![
                    r.id,
                    r.tenant,
                    r.agent,
                    r.version,
                    r.status.as_str(),
                    r.code,
                    r.mandate,
                    document::pack(&r.json),
                    r.at_ms
                ])?;
            }
        }
        transaction.commit()
    }
}

impl ReceiptWriter for SqliteReceipts {
    fn record(&mut self, rows: &[StoredReceipt]) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        self.insert_all(rows).map_err(|e| match e.sqlite_error() {
            Some(f)
                if f.code == ErrorCode::ConstraintViolation
                    && f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY =>
            {
                super::runs::receipts_exist(rows)
            }
            _ => StoreError::Backend(format!("storing receipts: {e}")),
        })
    }
}

/// A connection of its own to the store's database file, with the `sqlx` pool's settings
/// ([`SQLITE_PRAGMAS`]).
pub(super) fn connect(path: &str) -> Result<Connection> {
    let connection = Connection::open(path).map_err(|e| backend(path, &e))?;
    for pragma in SQLITE_PRAGMAS {
        // `journal_mode` answers with a row; the others with none.
        connection
            .query_row(pragma, [], |_| Ok(()))
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(()),
                e => Err(e),
            })
            .map_err(|e| backend(path, &e))?;
    }
    Ok(connection)
}

fn backend(path: &str, e: &rusqlite::Error) -> StoreError {
    StoreError::Backend(format!("cannot open the store at `{path}`: {e}"))
}
