//! Mandates (a human's grant, with what it has spent and holds) and approvals (one call put to
//! a human: pending → approved | rejected, approved → used; expiry from the caller's clock),
//! and the bearer tokens of `/mcp`, one mandate each (stored as their SHA-256).

use super::{amount, is_unique_violation, mandate_key, Fail, SqlStore};
use crate::{
    to_nano, Approval, ApprovalState, ApprovalUse, Mandate, MandateToken, MandateUse, StoreError,
    UnixMs,
};
use sqlx::any::AnyRow;
use sqlx::Row;

const MANDATE_COLUMNS: &str =
    "account, name, budget, currency, threshold, allow, deny, expires_ms, created_ms";

pub(super) const APPROVAL_COLUMNS: &str = "id, mandate, agent, version, input_sha256, input_json, \
     worst_case, currency, state, created_ms, expires_ms";

const TOKEN_COLUMNS: &str = "token_sha256, account, name, created_ms, expires_ms, revoked_ms";

fn token_row(row: &AnyRow) -> Result<MandateToken, Fail> {
    let account: String = row.try_get("account")?;
    let name: String = row.try_get("name")?;
    Ok(MandateToken {
        token_sha256: row.try_get("token_sha256")?,
        mandate: format!("{account}/{name}"),
        created_ms: row.try_get("created_ms")?,
        expires_ms: row.try_get("expires_ms")?,
        revoked_ms: row.try_get("revoked_ms")?,
    })
}

fn mandate_row(row: &AnyRow) -> Result<Mandate, Fail> {
    let globs = |column: &str| -> Result<Vec<String>, Fail> {
        let text: String = row.try_get(column)?;
        serde_json::from_str(&text).map_err(|e| {
            StoreError::Backend(format!("mandate column `{column}` is not a JSON list: {e}")).into()
        })
    };
    Ok(Mandate {
        account: row.try_get("account")?,
        name: row.try_get("name")?,
        budget: amount(row, "budget")?,
        currency: row.try_get("currency")?,
        threshold: amount(row, "threshold")?,
        allow: globs("allow")?,
        deny: globs("deny")?,
        expires_ms: row.try_get("expires_ms")?,
        created_ms: row.try_get("created_ms")?,
    })
}

/// The stored state as of `now_ms`: pending or approved past the expiry is `expired`.
fn state_at(stored: ApprovalState, expires_ms: UnixMs, now_ms: UnixMs) -> ApprovalState {
    match stored {
        ApprovalState::Pending | ApprovalState::Approved if now_ms >= expires_ms => {
            ApprovalState::Expired
        }
        other => other,
    }
}

fn parse_state(text: &str) -> Result<ApprovalState, Fail> {
    Ok(match text {
        "pending" => ApprovalState::Pending,
        "approved" => ApprovalState::Approved,
        "rejected" => ApprovalState::Rejected,
        "used" => ApprovalState::Used,
        "expired" => ApprovalState::Expired,
        other => {
            return Err(StoreError::Backend(format!("unknown approval state `{other}`")).into())
        }
    })
}

pub(super) fn approval_row(row: &AnyRow, now_ms: UnixMs) -> Result<Approval, Fail> {
    let expires_ms: i64 = row.try_get("expires_ms")?;
    let stored = parse_state(&row.try_get::<String, _>("state")?)?;
    Ok(Approval {
        id: row.try_get("id")?,
        mandate: row.try_get("mandate")?,
        agent: row.try_get("agent")?,
        version: row.try_get("version")?,
        input_sha256: row.try_get("input_sha256")?,
        input_json: row.try_get("input_json")?,
        worst_case: amount(row, "worst_case")?,
        currency: row.try_get("currency")?,
        state: state_at(stored, expires_ms, now_ms),
        created_ms: row.try_get("created_ms")?,
        expires_ms,
    })
}

impl SqlStore {
    pub(super) async fn insert_mandate(&self, m: &Mandate) -> Result<(), Fail> {
        let id = m.id();
        let budget = to_nano(m.budget, &format!("the budget of mandate `{id}`"))?;
        let threshold = to_nano(m.threshold, &format!("the threshold of mandate `{id}`"))?;
        let json = |globs: &[String]| serde_json::to_string(globs).unwrap_or_else(|_| "[]".into());
        let mut tx = self.write().await?;
        let result = sqlx::query(&format!(
            "INSERT INTO mandates ({MANDATE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
        ))
        .bind(&m.account)
        .bind(&m.name)
        .bind(budget)
        .bind(&m.currency)
        .bind(threshold)
        .bind(json(&m.allow))
        .bind(json(&m.deny))
        .bind(m.expires_ms)
        .bind(m.created_ms)
        .execute(&mut *tx)
        .await;
        match result {
            Err(e) if is_unique_violation(&e) => {
                return Err(StoreError::Exists(format!("mandate `{id}`")).into())
            }
            Err(sqlx::Error::Database(e))
                if e.kind() == sqlx::error::ErrorKind::ForeignKeyViolation =>
            {
                return Err(StoreError::NotFound(format!("account `{}`", m.account)).into())
            }
            other => other?,
        };
        tx.commit().await?;
        Ok(())
    }

    pub(super) async fn find_mandate(&self, id: &str) -> Result<Option<Mandate>, Fail> {
        let Ok((account, name)) = mandate_key(id) else {
            return Ok(None);
        };
        let row = sqlx::query(&format!(
            "SELECT {MANDATE_COLUMNS} FROM mandates WHERE account = $1 AND name = $2"
        ))
        .bind(account)
        .bind(name)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(mandate_row).transpose()
    }

    pub(super) async fn list_mandates(&self, account: Option<&str>) -> Result<Vec<Mandate>, Fail> {
        let rows = match account {
            Some(account) => {
                sqlx::query(&format!(
                "SELECT {MANDATE_COLUMNS} FROM mandates WHERE account = $1 ORDER BY account, name"
            ))
                .bind(account)
                .fetch_all(&self.pool)
                .await?
            }
            None => {
                sqlx::query(&format!(
                    "SELECT {MANDATE_COLUMNS} FROM mandates ORDER BY account, name"
                ))
                .fetch_all(&self.pool)
                .await?
            }
        };
        rows.iter().map(mandate_row).collect()
    }

    pub(super) async fn read_mandate_use(&self, id: &str) -> Result<MandateUse, Fail> {
        let (account, name) = mandate_key(id)?;
        let row =
            sqlx::query("SELECT spent, reserved FROM mandates WHERE account = $1 AND name = $2")
                .bind(account)
                .bind(name)
                .fetch_optional(&self.pool)
                .await?
                .ok_or_else(|| StoreError::NotFound(format!("mandate `{id}`")))?;
        Ok(MandateUse {
            spent: amount(&row, "spent")?,
            reserved: amount(&row, "reserved")?,
        })
    }

    pub(super) async fn insert_approval(&self, a: &Approval) -> Result<(), Fail> {
        let worst = to_nano(
            a.worst_case,
            &format!("the worst case of approval `{}`", a.id),
        )?;
        let mut tx = self.write().await?;
        let result = sqlx::query(&format!(
            "INSERT INTO approvals ({APPROVAL_COLUMNS}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
        ))
        .bind(&a.id)
        .bind(&a.mandate)
        .bind(&a.agent)
        .bind(&a.version)
        .bind(&a.input_sha256)
        .bind(&a.input_json)
        .bind(worst)
        .bind(&a.currency)
        .bind(a.state.as_str())
        .bind(a.created_ms)
        .bind(a.expires_ms)
        .execute(&mut *tx)
        .await;
        match result {
            Err(e) if is_unique_violation(&e) => {
                return Err(StoreError::Exists(format!("approval `{}`", a.id)).into())
            }
            other => other?,
        };
        tx.commit().await?;
        Ok(())
    }

    pub(super) async fn find_approval(
        &self,
        id: &str,
        now_ms: UnixMs,
    ) -> Result<Option<Approval>, Fail> {
        let row = sqlx::query(&format!(
            "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(|r| approval_row(r, now_ms)).transpose()
    }

    pub(super) async fn decide_approval_once(
        &self,
        id: &str,
        approve: bool,
        now_ms: UnixMs,
    ) -> Result<Approval, Fail> {
        let to = if approve { "approved" } else { "rejected" };
        let mut tx = self.write().await?;
        let changed = sqlx::query(
            "UPDATE approvals SET state = $1, decided_ms = $2 \
             WHERE id = $3 AND state = 'pending' AND expires_ms > $2",
        )
        .bind(to)
        .bind(now_ms)
        .bind(id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        let row = sqlx::query(&format!(
            "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("approval `{id}`")))?;
        let approval = approval_row(&row, now_ms)?;
        if changed == 0 {
            return Err(StoreError::Approval(format!(
                "approval `{id}` is {}, only a pending one can be {to}",
                approval.state.as_str()
            ))
            .into());
        }
        tx.commit().await?;
        Ok(approval)
    }

    /// One conditional `UPDATE` does the check and the change; when it changes nothing, the row
    /// is read to say why.
    pub(super) async fn use_approval_once(&self, call: &ApprovalUse) -> Result<(), Fail> {
        let mut tx = self.write().await?;
        let changed = sqlx::query(
            "UPDATE approvals SET state = 'used', used_ms = $1 \
             WHERE id = $2 AND state = 'approved' AND mandate = $3 AND agent = $4 \
             AND version = $5 AND input_sha256 = $6 AND expires_ms > $1",
        )
        .bind(call.at_ms)
        .bind(&call.id)
        .bind(&call.mandate)
        .bind(&call.agent)
        .bind(&call.version)
        .bind(&call.input_sha256)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if changed == 1 {
            tx.commit().await?;
            return Ok(());
        }
        let row = sqlx::query(&format!(
            "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE id = $1"
        ))
        .bind(&call.id)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("approval `{}`", call.id)))?;
        let a = approval_row(&row, call.at_ms)?;
        let why = if a.mandate != call.mandate {
            format!("bound to another mandate (`{}`)", a.mandate)
        } else if a.agent != call.agent || a.version != call.version {
            format!(
                "bound to another agent version (`{}` {})",
                a.agent, a.version
            )
        } else if a.input_sha256 != call.input_sha256 {
            "bound to another input".to_owned()
        } else {
            match a.state {
                ApprovalState::Pending => "pending: not approved yet".to_owned(),
                ApprovalState::Used => "used already".to_owned(),
                state => state.as_str().to_owned(),
            }
        };
        Err(StoreError::Approval(format!("`{}` is {why}", call.id)).into())
    }

    pub(super) async fn insert_mandate_token(&self, t: &MandateToken) -> Result<(), Fail> {
        let (account, name) = mandate_key(&t.mandate)?;
        let mut tx = self.write().await?;
        let exists = sqlx::query("SELECT 1 FROM mandates WHERE account = $1 AND name = $2")
            .bind(account)
            .bind(name)
            .fetch_optional(&mut *tx)
            .await?;
        if exists.is_none() {
            return Err(StoreError::NotFound(format!("mandate `{}`", t.mandate)).into());
        }
        let result = sqlx::query(&format!(
            "INSERT INTO mandate_tokens ({TOKEN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"
        ))
        .bind(&t.token_sha256)
        .bind(account)
        .bind(name)
        .bind(t.created_ms)
        .bind(t.expires_ms)
        .bind(t.revoked_ms)
        .execute(&mut *tx)
        .await;
        match result {
            Err(e) if is_unique_violation(&e) => {
                return Err(StoreError::Exists("this token".to_owned()).into())
            }
            other => other?,
        };
        tx.commit().await?;
        Ok(())
    }

    pub(super) async fn find_mandate_token(
        &self,
        token_sha256: &str,
    ) -> Result<Option<MandateToken>, Fail> {
        let row = sqlx::query(&format!(
            "SELECT {TOKEN_COLUMNS} FROM mandate_tokens WHERE token_sha256 = $1"
        ))
        .bind(token_sha256)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(token_row).transpose()
    }

    /// One conditional `UPDATE`: a token revoked already keeps its first revocation time.
    pub(super) async fn revoke_mandate_token_once(
        &self,
        token_sha256: &str,
        now_ms: UnixMs,
    ) -> Result<MandateToken, Fail> {
        let mut tx = self.write().await?;
        sqlx::query(
            "UPDATE mandate_tokens SET revoked_ms = $1 \
             WHERE token_sha256 = $2 AND revoked_ms IS NULL",
        )
        .bind(now_ms)
        .bind(token_sha256)
        .execute(&mut *tx)
        .await?;
        let row = sqlx::query(&format!(
            "SELECT {TOKEN_COLUMNS} FROM mandate_tokens WHERE token_sha256 = $1"
        ))
        .bind(token_sha256)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| StoreError::NotFound("a mandate token with this value".to_owned()))?;
        let token = token_row(&row)?;
        tx.commit().await?;
        Ok(token)
    }
}
