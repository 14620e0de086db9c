//! The double-entry ledger: balanced transfers, each one row (its debit and credit entries are
//! the `entries` view over it) applied to the `balances` rows in the same transaction, plus the
//! reads of balances and entries.

use super::conn::{Arg, Conn};
use super::{amount, held_account, value_rows, Dialect, Fail, SqlStore, FUNDING};
use crate::{to_nano, Balance, Entry, StoreError, UnixMs};
use aelc_runtime::money::Amount;
use sqlx::Row;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// One balanced movement of `amount` nano-units from `debit` to `credit`.
pub(super) struct Transfer<'a> {
    pub id: String,
    /// `fund`, `reserve`, `post`, `void`.
    pub kind: &'static str,
    pub debit: String,
    pub credit: String,
    pub amount: i64,
    pub currency: &'a str,
    pub run: Option<&'a str>,
    pub at_ms: UnixMs,
}

/// Writes the transfers (zero amounts move nothing and are skipped) and applies them to the
/// balances: each account's net change once, in name order (one lock order for every
/// transaction), refused when it would take an account other than [`FUNDING`] below zero.
///
/// A transfer is one row: its two entries are the `entries` view over it (migration 0009), not
/// rows of their own, and the transfers of one call go in one `INSERT`.
pub(super) async fn apply<C: Conn>(conn: &mut C, transfers: &[Transfer<'_>]) -> Result<(), Fail> {
    let moving: Vec<&Transfer> = transfers.iter().filter(|t| t.amount > 0).collect();
    for rows in moving.chunks(TRANSFERS_PER_INSERT) {
        let args: Vec<Arg> = rows
            .iter()
            .flat_map(|t| {
                [
                    Arg::Text(&t.id),
                    Arg::Text(t.kind),
                    Arg::Text(&t.debit),
                    Arg::Text(&t.credit),
                    Arg::Int(t.amount),
                    Arg::Text(t.currency),
                    Arg::MaybeText(t.run),
                    Arg::Int(t.at_ms),
                ]
            })
            .collect();
        conn.execute(&INSERT_TRANSFERS[rows.len() - 1], &args)
            .await?;
    }
    let mut net: BTreeMap<&str, i64> = BTreeMap::new();
    for t in &moving {
        *net.entry(&t.debit).or_default() -= t.amount;
        *net.entry(&t.credit).or_default() += t.amount;
    }
    for (account, delta) in net.into_iter().filter(|(_, d)| *d != 0) {
        let changed = conn
            .execute(
                "UPDATE balances SET amount = amount + $1 \
                 WHERE account = $2 AND (amount + $1 >= 0 OR account = $3)",
                &[Arg::Int(delta), Arg::Text(account), Arg::Text(FUNDING)],
            )
            .await?;
        if changed == 0 {
            let row = conn
                .fetch_optional(
                    "SELECT amount FROM balances WHERE account = $1",
                    &[Arg::Text(account)],
                )
                .await?;
            return Err(match row {
                None => StoreError::NotFound(format!("account `{account}`")),
                Some(row) => StoreError::Insufficient {
                    available: crate::from_nano(row.get(0)?),
                    needed: crate::from_nano(-delta),
                },
            }
            .into());
        }
    }
    Ok(())
}

/// Transfers per `INSERT` of [`apply`]: a settlement writes two (the price posted, the rest
/// voided), every other operation one.
const TRANSFERS_PER_INSERT: usize = 2;

/// The columns of `transfers` that [`apply`] binds, in order.
const TRANSFER_COLUMNS: usize = 8;

/// `INSERT_TRANSFERS[n - 1]` inserts `n` transfers (`$1`… numbered row after row).
static INSERT_TRANSFERS: LazyLock<Vec<String>> = LazyLock::new(|| {
    (1..=TRANSFERS_PER_INSERT)
        .map(|rows| {
            format!(
                "INSERT INTO transfers (id, kind, debit_account, credit_account, amount, \
                 currency, run, at_ms) VALUES {}",
                value_rows(Dialect::Postgres, rows, TRANSFER_COLUMNS)
            )
        })
        .collect()
});

/// The currency of `account`, or not found.
pub(super) async fn currency_of<C: Conn>(conn: &mut C, account: &str) -> Result<String, Fail> {
    let row = conn
        .fetch_optional(
            "SELECT currency FROM accounts WHERE name = $1",
            &[Arg::Text(account)],
        )
        .await?;
    match row {
        Some(row) => row.get(0),
        None => Err(StoreError::NotFound(format!("account `{account}`")).into()),
    }
}

/// Refuses `got` when it is not `expected`.
pub(super) fn same_currency(expected: &str, got: &str) -> Result<(), StoreError> {
    if expected == got {
        Ok(())
    } else {
        Err(StoreError::Currency {
            expected: expected.to_owned(),
            got: got.to_owned(),
        })
    }
}

/// A fresh transfer id (time-ordered).
pub(super) fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::now_v7().simple())
}

impl SqlStore {
    pub(super) async fn fund_once(
        &self,
        account: &str,
        value: Amount,
        currency: &str,
        at_ms: UnixMs,
    ) -> Result<String, Fail> {
        let nano = to_nano(value, &format!("the amount {value} funded to `{account}`"))?;
        let mut tx = self.write().await?;
        same_currency(&currency_of(&mut *tx, account).await?, currency)?;
        let id = new_id("tr");
        let transfer = Transfer {
            id: id.clone(),
            kind: "fund",
            debit: FUNDING.to_owned(),
            credit: account.to_owned(),
            amount: nano,
            currency,
            run: None,
            at_ms,
        };
        apply(&mut *tx, &[transfer]).await?;
        tx.commit().await?;
        Ok(id)
    }

    pub(super) async fn read_balance(&self, account: &str) -> Result<Balance, Fail> {
        let rows = sqlx::query("SELECT account, amount FROM balances WHERE account IN ($1, $2)")
            .bind(account)
            .bind(held_account(account))
            .fetch_all(&self.pool)
            .await?;
        if rows.is_empty() {
            return Err(StoreError::NotFound(format!("account `{account}`")).into());
        }
        let mut balance = Balance::default();
        for row in &rows {
            let name: String = row.try_get("account")?;
            if name == account {
                balance.available = amount(row, "amount")?;
            } else {
                balance.reserved = amount(row, "amount")?;
            }
        }
        Ok(balance)
    }

    /// The entries of the tenant's two ledger accounts (`NAME` and `NAME@held`), oldest first:
    /// the entries of `NAME` sum to `available`, those of `NAME@held` to `reserved`.
    pub(super) async fn read_entries(&self, account: &str) -> Result<Vec<Entry>, Fail> {
        let rows = sqlx::query(
            "SELECT transfer, account, credit, amount, kind, at_ms FROM entries \
             WHERE account IN ($1, $2) ORDER BY id",
        )
        .bind(account)
        .bind(held_account(account))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(Entry {
                    transfer: row.try_get("transfer")?,
                    account: row.try_get("account")?,
                    credit: row.try_get::<i64, _>("credit")? == 1,
                    amount: amount(row, "amount")?,
                    kind: row.try_get("kind")?,
                    at_ms: row.try_get("at_ms")?,
                })
            })
            .collect()
    }
}
