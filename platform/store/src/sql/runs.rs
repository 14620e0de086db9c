//! Runs and receipts: a run's reservation is taken in `begin_run` and posted or voided in the
//! transaction that stores its receipt; `recover` voids the runs of a process that died.

use super::conn::{Arg, Conn};
use super::ledger::{apply, currency_of, same_currency, Transfer};
use super::{held_account, mandate_key, retry, value_rows, Dialect, Fail, SqlStore};
use crate::document;
use crate::{
    to_nano, AgentStats, BeginRun, Begun, Recovered, RunDetails, Settlement, Status, StoreError,
    StoredReceipt, UnixMs,
};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};
use std::sync::LazyLock;

/// The run row as `finish_run` and `recover` need it.
struct OpenRun {
    tenant: String,
    reserved: i64,
    currency: String,
    mandate: Option<String>,
    /// Whether it was begun with an idempotency key (a run without one has no row in
    /// `idempotency` to bind to its receipt).
    keyed: bool,
}

impl SqlStore {
    pub(super) async fn begin_run_once(&self, run: &BeginRun) -> Result<Begun, Fail> {
        if let Some(writer) = &self.run_writer {
            return writer.begin_run(run).await;
        }
        let mut tx = self.write().await?;
        let begun = begin_run_on(&mut *tx, run).await?;
        if matches!(begun, Begun::Started) {
            tx.commit().await?;
        } else {
            tx.rollback().await?;
        }
        Ok(begun)
    }

    pub(super) async fn finish_run_once(
        &self,
        receipt: &StoredReceipt,
        settlement: &Settlement,
    ) -> Result<(), Fail> {
        if let Some(writer) = &self.run_writer {
            return writer.finish_run(receipt, settlement).await;
        }
        let mut tx = self.write().await?;
        finish_run_on(&mut *tx, receipt, settlement).await?;
        tx.commit().await?;
        Ok(())
    }

    pub(super) async fn record_receipts_once(
        &self,
        receipts: &[StoredReceipt],
    ) -> Result<(), Fail> {
        if receipts.is_empty() {
            return Ok(());
        }
        let mut tx = self.write().await?;
        for rows in receipts.chunks(RECEIPTS_PER_INSERT) {
            insert_receipts(&mut tx, self.dialect, rows).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// By `column` (`tenant` or `mandate`, never caller text) and id.
    pub(super) async fn find_receipt(
        &self,
        column: &'static str,
        owner: &str,
        id: &str,
    ) -> Result<Option<StoredReceipt>, Fail> {
        let sql = format!(
            "SELECT id, tenant, agent, version, status, code, mandate, document, at_ms \
             FROM receipts WHERE {column} = $1 AND id = $2"
        );
        let row = sqlx::query(&sql)
            .bind(owner)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(receipt_row).transpose()
    }

    pub(super) async fn find_run_details(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<RunDetails>, Fail> {
        let row = sqlx::query("SELECT input, trace_id FROM runs WHERE tenant = $1 AND id = $2")
            .bind(tenant)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let input_json = match row.try_get::<Option<Vec<u8>>, _>("input")? {
            Some(stored) => Some(document::unpack(id, stored)?),
            None => None,
        };
        Ok(Some(RunDetails {
            input_json,
            trace_id: row.try_get("trace_id")?,
        }))
    }

    pub(super) async fn read_agent_stats(&self, agent: &str) -> Result<AgentStats, Fail> {
        let rows = sqlx::query(
            "SELECT status, COUNT(*) AS n FROM receipts WHERE agent = $1 GROUP BY status",
        )
        .bind(agent)
        .fetch_all(&self.pool)
        .await?;
        let mut stats = AgentStats::default();
        for row in &rows {
            let n = u64::try_from(row.try_get::<i64, _>("n")?).unwrap_or(0);
            if let Some(status) = Status::parse(&row.try_get::<String, _>("status")?) {
                stats.add(status, n);
            }
        }
        Ok(stats)
    }

    pub(super) async fn count_open_runs(&self) -> Result<u64, Fail> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM runs WHERE state = 'open'")
            .fetch_one(&self.pool)
            .await?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// `owner`'s lease: inserted, or moved to `until_ms` (never shortened by a late renewal).
    pub(super) async fn upsert_lease(&self, owner: &str, until_ms: UnixMs) -> Result<(), Fail> {
        sqlx::query(
            "INSERT INTO leases (owner, until_ms) VALUES ($1, $2) \
             ON CONFLICT (owner) DO UPDATE SET until_ms = excluded.until_ms \
             WHERE leases.until_ms < excluded.until_ms",
        )
        .bind(owner)
        .bind(until_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Lease `name` until `until_ms` if it is free at `now_ms` (absent or run out): one
    /// statement, so of two processes asking at once one gets it.
    pub(super) async fn claim_lease(
        &self,
        name: &str,
        until_ms: UnixMs,
        now_ms: UnixMs,
    ) -> Result<bool, Fail> {
        let done = sqlx::query(
            "INSERT INTO leases (owner, until_ms) VALUES ($1, $2) \
             ON CONFLICT (owner) DO UPDATE SET until_ms = excluded.until_ms \
             WHERE leases.until_ms < $3",
        )
        .bind(name)
        .bind(until_ms)
        .bind(now_ms)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    pub(super) async fn delete_lease(&self, owner: &str) -> Result<(), Fail> {
        sqlx::query("DELETE FROM leases WHERE owner = $1")
            .bind(owner)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The open runs of owners without a live lease (and of `restarting`), each voided in its
    /// own transaction (the same lock order as `finish_run`); a run finished meanwhile by a live
    /// process is left alone. Leases that ended are deleted once their runs are voided.
    pub(super) async fn recover_abandoned(
        &self,
        restarting: Option<&str>,
        now: UnixMs,
    ) -> crate::Result<Recovered> {
        let backend = |e: sqlx::Error| StoreError::Backend(e.to_string());
        let abandoned = "SELECT runs.id FROM runs LEFT JOIN leases ON leases.owner = runs.owner \
             WHERE runs.state = 'open' AND (leases.owner IS NULL OR leases.until_ms < $1";
        let sql = match restarting {
            Some(_) => format!("{abandoned} OR runs.owner = $2)"),
            None => format!("{abandoned})"),
        };
        let mut query = sqlx::query_scalar(&sql).bind(now);
        if let Some(owner) = restarting {
            query = query.bind(owner);
        }
        let ids: Vec<String> = query.fetch_all(&self.pool).await.map_err(backend)?;
        let mut recovered = Recovered::default();
        for id in &ids {
            if retry(|| self.void_run_once(id, now)).await? {
                recovered.voided_runs += 1;
            }
        }
        // An ended lease whose process never came back: its runs are voided, it can go.
        sqlx::query("DELETE FROM leases WHERE until_ms < $1")
            .bind(now)
            .execute(&self.pool)
            .await
            .map_err(backend)?;
        Ok(recovered)
    }

    async fn void_run_once(&self, id: &str, now: UnixMs) -> Result<bool, Fail> {
        let mut tx = self.write().await?;
        let run = match close_run(&mut *tx, id, "voided", now).await {
            Ok(run) => run,
            // Finished meanwhile: nothing to void.
            Err(Fail::Store(StoreError::Exists(_))) => return Ok(false),
            Err(e) => return Err(e),
        };
        if let Some(mandate) = &run.mandate {
            settle_mandate(&mut *tx, mandate, 0, run.reserved).await?;
        }
        let release = Transfer {
            id: format!("{id}:void"),
            kind: "void",
            debit: held_account(&run.tenant),
            credit: run.tenant.clone(),
            amount: run.reserved,
            currency: &run.currency,
            run: Some(id),
            at_ms: now,
        };
        sqlx::query("DELETE FROM idempotency WHERE run = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        // The balances last, as in `begin_run_on`.
        apply(&mut *tx, &[release]).await?;
        tx.commit().await?;
        Ok(true)
    }
}

/// A run's reservation, written on `conn` inside a write transaction that the caller commits
/// only when the answer is [`Begun::Started`] (every other answer, and every error, leaves
/// something half-written to roll back: the idempotency key's claim, the mandate's count).
pub(super) async fn begin_run_on<C: Conn>(conn: &mut C, run: &BeginRun) -> Result<Begun, Fail> {
    let reserve = to_nano(
        run.reserve,
        &format!("the reservation of run `{}`", run.run),
    )?;
    same_currency(&currency_of(conn, &run.tenant).await?, &run.currency)?;

    // The key first: it is the first row two retries of one request both touch.
    if let Some(key) = &run.idempotency_key {
        let claimed = conn
            .execute(
                "INSERT INTO idempotency (tenant, key, run, input_sha256, state) \
                 VALUES ($1, $2, $3, $4, 'running') ON CONFLICT DO NOTHING",
                &[
                    Arg::Text(&run.tenant),
                    Arg::Text(key),
                    Arg::Text(&run.run),
                    Arg::Text(&run.input_sha256),
                ],
            )
            .await?;
        if claimed == 0 {
            return key_verdict(conn, run, key).await;
        }
    }

    if let Some(id) = &run.mandate {
        if let Some(over) = reserve_on_mandate(conn, run, id, reserve).await? {
            return Ok(over);
        }
    }

    let input = run.input_json.as_deref().map(document::pack);
    let inserted = conn
        .execute(
            "INSERT INTO runs (id, tenant, agent, version, input_sha256, idempotency_key, mandate, \
             reserved, currency, state, created_ms, owner, input, trace_id) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'open', $10, $11, $12, $13)",
            &[
                Arg::Text(&run.run),
                Arg::Text(&run.tenant),
                Arg::Text(&run.agent),
                Arg::Text(&run.version),
                Arg::Text(&run.input_sha256),
                Arg::MaybeText(run.idempotency_key.as_deref()),
                Arg::MaybeText(run.mandate.as_deref()),
                Arg::Int(reserve),
                Arg::Text(&run.currency),
                Arg::Int(run.at_ms),
                Arg::Text(&run.owner),
                Arg::MaybeBlob(input.as_deref()),
                Arg::MaybeText(run.trace_id.as_deref()),
            ],
        )
        .await;
    match inserted {
        Err(e) if e.is_unique_violation() => {
            return Err(StoreError::Exists(format!("run `{}`", run.run)).into())
        }
        other => other?,
    };

    // The balances last: on PostgreSQL their rows, which every run of a tenant updates, stay
    // locked from their `UPDATE` to the commit, and each statement sent in between is a round
    // trip that every other run of the tenant waits for (a run refused for its balance has
    // then written its row for nothing, and it is rolled back with the rest).
    let hold = Transfer {
        id: format!("{}:reserve", run.run),
        kind: "reserve",
        debit: run.tenant.clone(),
        credit: held_account(&run.tenant),
        amount: reserve,
        currency: &run.currency,
        run: Some(&run.run),
        at_ms: run.at_ms,
    };
    match apply(conn, &[hold]).await {
        Err(Fail::Store(StoreError::Insufficient { available, .. })) => {
            return Ok(Begun::Insufficient {
                available,
                needed: run.reserve,
            });
        }
        Err(e) if e.is_unique_violation() => {
            return Err(StoreError::Exists(format!("run `{}`", run.run)).into())
        }
        other => other?,
    }
    Ok(Begun::Started)
}

/// A run's receipt and settlement, written on `conn` inside a write transaction that the
/// caller commits when this succeeds.
pub(super) async fn finish_run_on<C: Conn>(
    conn: &mut C,
    receipt: &StoredReceipt,
    settlement: &Settlement,
) -> Result<(), Fail> {
    let id = &receipt.id;
    let run = close_run(conn, id, "finished", receipt.at_ms).await?;
    let (payee, charge) = match settlement {
        Settlement::Void => (None, 0),
        Settlement::Charge { payee, amount } => {
            let charge = to_nano(*amount, &format!("the charge of run `{id}`"))?;
            if charge > run.reserved {
                return Err(StoreError::Insufficient {
                    available: crate::from_nano(run.reserved),
                    needed: *amount,
                }
                .into());
            }
            same_currency(&currency_of(conn, payee).await?, &run.currency)?;
            (Some(payee.as_str()), charge)
        }
    };
    if let Some(mandate) = &run.mandate {
        settle_mandate(conn, mandate, charge, run.reserved).await?;
    }
    let held = held_account(&run.tenant);
    let mut transfers = Vec::new();
    if let Some(payee) = payee {
        transfers.push(Transfer {
            id: format!("{id}:post"),
            kind: "post",
            debit: held.clone(),
            credit: payee.to_owned(),
            amount: charge,
            currency: &run.currency,
            run: Some(id),
            at_ms: receipt.at_ms,
        });
    }
    transfers.push(Transfer {
        id: format!("{id}:void"),
        kind: "void",
        debit: held,
        credit: run.tenant.clone(),
        amount: run.reserved - charge,
        currency: &run.currency,
        run: Some(id),
        at_ms: receipt.at_ms,
    });
    insert_receipt(conn, receipt).await?;
    if run.keyed {
        conn.execute(
            "UPDATE idempotency SET state = 'done', receipt = $1 WHERE run = $1",
            &[Arg::Text(id)],
        )
        .await?;
    }
    // The balances last, as in `begin_run_on`.
    apply(conn, &transfers).await
}

/// What an idempotency key already claimed answers for this call.
async fn key_verdict<C: Conn>(conn: &mut C, run: &BeginRun, key: &str) -> Result<Begun, Fail> {
    let row = conn
        .fetch_optional(
            "SELECT i.input_sha256, i.state, i.receipt, r.status, r.document FROM idempotency i \
             LEFT JOIN receipts r ON r.id = i.receipt WHERE i.tenant = $1 AND i.key = $2",
            &[Arg::Text(&run.tenant), Arg::Text(key)],
        )
        .await?;
    // Freed between the claim and this read (recover voided its run): still running a moment
    // ago, so the caller retries as for a run in progress.
    let Some(row) = row else {
        return Ok(Begun::InProgress);
    };
    if row.get::<String>(0)? != run.input_sha256 {
        return Ok(Begun::KeyConflict);
    }
    Ok(match row.get::<Option<Vec<u8>>>(4)? {
        Some(stored) if row.get::<String>(1)? == "done" => Begun::Replayed {
            status: parse_status(&row.get::<String>(3)?)?,
            receipt: document::unpack(&row.get::<String>(2)?, stored)?,
        },
        _ => Begun::InProgress,
    })
}

/// Counts `reserve` against the mandate's budget; `Some(OverBudget)` when it does not fit.
async fn reserve_on_mandate<C: Conn>(
    conn: &mut C,
    run: &BeginRun,
    id: &str,
    reserve: i64,
) -> Result<Option<Begun>, Fail> {
    let (account, name) = mandate_key(id)?;
    let row = conn
        .fetch_optional(
            "SELECT currency, expires_ms FROM mandates WHERE account = $1 AND name = $2",
            &[Arg::Text(account), Arg::Text(name)],
        )
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("mandate `{id}`")))?;
    if account != run.tenant {
        return Err(StoreError::Approval(format!(
            "mandate `{id}` spends the money of `{account}`, not of `{}`",
            run.tenant
        ))
        .into());
    }
    if let Some(expires) = row.get::<Option<i64>>(1)? {
        if run.at_ms >= expires {
            return Err(StoreError::Approval(format!("mandate `{id}` expired")).into());
        }
    }
    same_currency(&row.get::<String>(0)?, &run.currency)?;
    let mandate = [Arg::Int(reserve), Arg::Text(account), Arg::Text(name)];
    let changed = conn
        .execute(
            "UPDATE mandates SET reserved = reserved + $1 \
             WHERE account = $2 AND name = $3 AND budget - spent - reserved >= $1",
            &mandate,
        )
        .await?;
    if changed > 0 {
        return Ok(None);
    }
    let left: i64 = conn
        .fetch_optional(
            "SELECT budget - spent - reserved FROM mandates WHERE account = $1 AND name = $2",
            &mandate[1..],
        )
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("mandate `{id}`")))?
        .get(0)?;
    Ok(Some(Begun::OverBudget {
        left: crate::from_nano(left),
        needed: run.reserve,
    }))
}

/// Moves a finished run's reservation off the mandate, counting `spent` of it as spent.
async fn settle_mandate<C: Conn>(
    conn: &mut C,
    id: &str,
    spent: i64,
    reserved: i64,
) -> Result<(), Fail> {
    let (account, name) = mandate_key(id)?;
    conn.execute(
        "UPDATE mandates SET spent = spent + $1, reserved = reserved - $2 \
         WHERE account = $3 AND name = $4",
        &[
            Arg::Int(spent),
            Arg::Int(reserved),
            Arg::Text(account),
            Arg::Text(name),
        ],
    )
    .await?;
    Ok(())
}

/// Moves an open run to `state` (locking its row); a run already closed is
/// [`StoreError::Exists`] (its receipt), a missing one not found.
async fn close_run<C: Conn>(
    conn: &mut C,
    id: &str,
    state: &str,
    at_ms: UnixMs,
) -> Result<OpenRun, Fail> {
    let changed = conn
        .execute(
            "UPDATE runs SET state = $1, finished_ms = $2 WHERE id = $3 AND state = 'open'",
            &[Arg::Text(state), Arg::Int(at_ms), Arg::Text(id)],
        )
        .await?;
    let row = conn
        .fetch_optional(
            "SELECT tenant, reserved, currency, mandate, state, idempotency_key \
             FROM runs WHERE id = $1",
            &[Arg::Text(id)],
        )
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("run `{id}`")))?;
    if changed == 0 {
        let now: String = row.get(4)?;
        return Err(StoreError::Exists(format!("the end of run `{id}` ({now})")).into());
    }
    Ok(OpenRun {
        tenant: row.get(0)?,
        reserved: row.get(1)?,
        currency: row.get(2)?,
        mandate: row.get(3)?,
        keyed: row.get::<Option<String>>(5)?.is_some(),
    })
}

async fn insert_receipt<C: Conn>(conn: &mut C, r: &StoredReceipt) -> Result<(), Fail> {
    let document = document::pack(&r.json);
    let inserted = conn
        .execute(
            &INSERT_RECEIPT,
            &[
                Arg::Text(&r.id),
                Arg::Text(&r.tenant),
                Arg::Text(&r.agent),
                Arg::Text(&r.version),
                Arg::Text(r.status.as_str()),
                Arg::MaybeText(r.code.as_deref()),
                Arg::MaybeText(r.mandate.as_deref()),
                Arg::MaybeBlob(Some(&document)),
                Arg::Int(r.at_ms),
            ],
        )
        .await;
    match inserted {
        Err(e) if e.is_unique_violation() => Err(receipts_exist(std::slice::from_ref(r)).into()),
        Err(e) => Err(e),
        Ok(_) => Ok(()),
    }
}

/// The insert of one receipt ([`INSERT_RECEIPTS`] with `$1`…`$9`: nine numbered parameters
/// cost nothing to look up on either database).
static INSERT_RECEIPT: LazyLock<String> = LazyLock::new(|| {
    let values = value_rows(Dialect::Postgres, 1, RECEIPT_COLUMNS);
    format!("{INSERT_RECEIPTS}{values}")
});

/// Rows per `INSERT` of [`insert_receipts`]: 9 parameters each, far below both databases'
/// limits (SQLite 32,766, PostgreSQL 65,535), and one statement instead of 64 round trips to
/// the driver.
const RECEIPTS_PER_INSERT: usize = 64;

/// The insert of receipts up to its `VALUES`: the columns of `receipts` in the order every
/// writer binds them (this module's [`insert_receipts`], SQLite's writer thread).
pub(super) const INSERT_RECEIPTS: &str =
    "INSERT INTO receipts (id, tenant, agent, version, status, code, mandate, document, at_ms) VALUES ";

/// How many columns [`INSERT_RECEIPTS`] names.
pub(super) const RECEIPT_COLUMNS: usize = 9;

/// Inserts `rows` in one statement (`INSERT … VALUES (…), (…)`). SQLite gets positional `?`
/// parameters: it finds a numbered `$N` by a linear search of the statement's parameter names,
/// which made binding 576 of them quadratic (6% of a gateway's time under load, measured with
/// `perf`); PostgreSQL has only numbered ones.
async fn insert_receipts(
    conn: &mut AnyConnection,
    dialect: Dialect,
    rows: &[StoredReceipt],
) -> Result<(), Fail> {
    let sql = format!(
        "{INSERT_RECEIPTS}{}",
        value_rows(dialect, rows.len(), RECEIPT_COLUMNS)
    );
    let mut query = sqlx::query(&sql);
    for r in rows {
        query = query
            .bind(&r.id)
            .bind(&r.tenant)
            .bind(&r.agent)
            .bind(&r.version)
            .bind(r.status.as_str())
            .bind(r.code.as_deref())
            .bind(r.mandate.as_deref())
            .bind(document::pack(&r.json))
            .bind(r.at_ms);
    }
    match query.execute(&mut *conn).await.map_err(Fail::from) {
        Err(e) if e.is_unique_violation() => Err(receipts_exist(rows).into()),
        Err(e) => Err(e),
        Ok(_) => Ok(()),
    }
}

/// The answer to an insert of `rows` that met a receipt id already stored.
pub(super) fn receipts_exist(rows: &[StoredReceipt]) -> StoreError {
    let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    StoreError::Exists(if ids.len() == 1 {
        format!("receipt `{}`", ids[0])
    } else {
        format!("one of the receipts {}", ids.join(", "))
    })
}

fn receipt_row(row: &AnyRow) -> Result<StoredReceipt, Fail> {
    let id: String = row.try_get("id")?;
    Ok(StoredReceipt {
        json: document::unpack(&id, row.try_get("document")?)?,
        id,
        tenant: row.try_get("tenant")?,
        agent: row.try_get("agent")?,
        version: row.try_get("version")?,
        status: status_of(row)?,
        code: row.try_get("code")?,
        mandate: row.try_get("mandate")?,
        at_ms: row.try_get("at_ms")?,
    })
}

/// A row's `status` column, a word of [`Status`].
fn status_of(row: &AnyRow) -> Result<Status, Fail> {
    parse_status(&row.try_get::<String, _>("status")?)
}

/// A stored status, a word of [`Status`].
fn parse_status(word: &str) -> Result<Status, Fail> {
    Status::parse(word).ok_or_else(|| {
        StoreError::Backend(format!("a receipt's status `{word}` is unknown")).into()
    })
}
