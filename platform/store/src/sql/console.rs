//! What the console reads and keeps: signed-in sessions, an account's runs page by page, a
//! mandate's approvals. Reads only, except the sessions; nothing here moves money or decides an
//! approval (the console decides through [`crate::Store::decide_approval`], as `aelc approve`).

use sqlx::any::AnyRow;
use sqlx::Row;

use super::mandates::{approval_row, APPROVAL_COLUMNS};
use super::{amount, Fail, SqlStore};
use aelc_runtime::money::Amount;

use crate::{AgentStats, Approval, ConsoleSession, RunQuery, RunRow, Status, StoreError, UnixMs};

/// The most rows one page may ask for (a larger `limit` is cut to it).
pub const MAX_RUNS_PAGE: u32 = 500;

impl SqlStore {
    pub(super) async fn insert_console_session(&self, s: &ConsoleSession) -> Result<(), Fail> {
        sqlx::query(
            "INSERT INTO console_sessions (id_sha256, account, csrf, created_ms, expires_ms) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&s.id_sha256)
        .bind(&s.account)
        .bind(&s.csrf)
        .bind(s.created_ms)
        .bind(s.expires_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub(super) async fn find_console_session(
        &self,
        id_sha256: &str,
        now_ms: UnixMs,
    ) -> Result<Option<ConsoleSession>, Fail> {
        let row = sqlx::query(
            "SELECT id_sha256, account, csrf, created_ms, expires_ms FROM console_sessions \
             WHERE id_sha256 = $1 AND expires_ms > $2",
        )
        .bind(id_sha256)
        .bind(now_ms)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| {
            Ok(ConsoleSession {
                id_sha256: r.try_get("id_sha256")?,
                account: r.try_get("account")?,
                csrf: r.try_get("csrf")?,
                created_ms: r.try_get("created_ms")?,
                expires_ms: r.try_get("expires_ms")?,
            })
        })
        .transpose()
    }

    pub(super) async fn delete_console_session(
        &self,
        id_sha256: &str,
        now_ms: UnixMs,
    ) -> Result<(), Fail> {
        sqlx::query("DELETE FROM console_sessions WHERE id_sha256 = $1 OR expires_ms <= $2")
            .bind(id_sha256)
            .bind(now_ms)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub(super) async fn list_runs(
        &self,
        tenant: &str,
        query: &RunQuery,
    ) -> Result<Vec<RunRow>, Fail> {
        // Only the filters given are in the statement (at most 16 texts, each planned once by
        // the database): a filter written `($n IS NULL OR …)` keeps SQLite from seeking the
        // index to the cursor, so a page deep in a large account read every newer run first.
        let mut sql = String::from(
            "SELECT r.id, r.agent, r.version, r.mandate, r.reserved, r.currency, r.state, \
             r.created_ms, r.finished_ms, rc.status, rc.code \
             FROM runs r LEFT JOIN receipts rc ON rc.id = r.id WHERE r.tenant = $1",
        );
        let mut n = 1;
        let mut filter = |sql: &mut String, condition: &str| {
            n += 1;
            sql.push_str(&condition.replace('?', &format!("${n}")));
        };
        if query.agent.is_some() {
            filter(&mut sql, " AND r.agent = ?");
        }
        if query.status.is_some() {
            filter(&mut sql, " AND rc.status = ?");
        }
        if query.before.is_some() {
            filter(&mut sql, " AND r.id < ?");
        }
        if query.since_ms.is_some() {
            filter(&mut sql, " AND r.created_ms >= ?");
        }
        filter(&mut sql, " ORDER BY r.id DESC LIMIT ?");
        let limit = i64::from(query.limit.clamp(1, MAX_RUNS_PAGE));
        let mut statement = sqlx::query(&sql).bind(tenant);
        if let Some(agent) = &query.agent {
            statement = statement.bind(agent.as_str());
        }
        if let Some(status) = query.status {
            statement = statement.bind(status.as_str());
        }
        if let Some(before) = &query.before {
            statement = statement.bind(before.as_str());
        }
        if let Some(since) = query.since_ms {
            statement = statement.bind(since);
        }
        let rows = statement.bind(limit).fetch_all(&self.pool).await?;
        rows.iter().map(run_row).collect()
    }

    pub(super) async fn read_agent_days(
        &self,
        agent: &str,
        since_ms: UnixMs,
    ) -> Result<Vec<(i64, AgentStats)>, Fail> {
        let rows = sqlx::query(
            "SELECT at_ms / 86400000 AS day, status, COUNT(*) AS n FROM receipts \
             WHERE agent = $1 AND at_ms >= $2 GROUP BY at_ms / 86400000, status ORDER BY 1",
        )
        .bind(agent)
        .bind(since_ms)
        .fetch_all(&self.pool)
        .await?;
        let mut days: Vec<(i64, AgentStats)> = Vec::new();
        for row in &rows {
            let day: i64 = row.try_get("day")?;
            let n = u64::try_from(row.try_get::<i64, _>("n")?).unwrap_or(0);
            let Some(status) = Status::parse(&row.try_get::<String, _>("status")?) else {
                continue;
            };
            match days.last_mut() {
                Some((d, stats)) if *d == day => stats.add(status, n),
                _ => {
                    let mut stats = AgentStats::default();
                    stats.add(status, n);
                    days.push((day, stats));
                }
            }
        }
        Ok(days)
    }

    /// A run's payment is the transfer `{run}:post` (`runs.rs`), so it is found by primary key
    /// from the tenant's runs (`runs_tenant`): no index on the ledger is needed for this.
    pub(super) async fn read_spend_by_agent(
        &self,
        tenant: &str,
        since_ms: UnixMs,
    ) -> Result<Vec<(i64, String, Amount)>, Fail> {
        let rows = sqlx::query(
            "SELECT t.at_ms / 86400000 AS day, r.agent AS agent, \
             CAST(SUM(t.amount) AS BIGINT) AS spent \
             FROM runs r JOIN transfers t ON t.id = r.id || ':post' \
             WHERE r.tenant = $1 AND r.created_ms >= $2 - 86400000 AND t.at_ms >= $2 \
             GROUP BY t.at_ms / 86400000, r.agent ORDER BY 1, 2",
        )
        .bind(tenant)
        .bind(since_ms)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok((
                    row.try_get("day")?,
                    row.try_get("agent")?,
                    amount(row, "spent")?,
                ))
            })
            .collect()
    }

    pub(super) async fn list_approvals(
        &self,
        mandate: &str,
        now_ms: UnixMs,
    ) -> Result<Vec<Approval>, Fail> {
        let rows = sqlx::query(&format!(
            "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE mandate = $1 \
             ORDER BY created_ms DESC, id DESC"
        ))
        .bind(mandate)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(|r| approval_row(r, now_ms)).collect()
    }
}

fn run_row(row: &AnyRow) -> Result<RunRow, Fail> {
    let status = match row.try_get::<Option<String>, _>("status")? {
        None => None,
        Some(word) => Some(Status::parse(&word).ok_or_else(|| {
            Fail::from(StoreError::Backend(format!(
                "a receipt's status `{word}` is unknown"
            )))
        })?),
    };
    Ok(RunRow {
        id: row.try_get("id")?,
        agent: row.try_get("agent")?,
        version: row.try_get("version")?,
        status,
        code: row.try_get("code")?,
        mandate: row.try_get("mandate")?,
        reserved: amount(row, "reserved")?,
        currency: row.try_get("currency")?,
        state: row.try_get("state")?,
        created_ms: row.try_get("created_ms")?,
        finished_ms: row.try_get("finished_ms")?,
    })
}
