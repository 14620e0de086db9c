//! Accounts (tenants) with their hashed keys, and the metadata of stored files.

use super::{held_account, is_unique_violation, Dialect, Fail, SqlStore};
use crate::{Account, FileMeta, StoreError, UnixMs};
use sqlx::any::AnyRow;
use sqlx::Row;

/// Refuses a name [`crate::valid_account_name`] does not accept.
pub(crate) fn check_name(name: &str) -> Result<(), StoreError> {
    if crate::valid_account_name(name) {
        Ok(())
    } else {
        Err(StoreError::Backend(format!(
            "account name `{name}` is not [a-z0-9][a-z0-9_-]* of at most {} bytes",
            crate::MAX_ACCOUNT_NAME
        )))
    }
}

fn account_row(row: &AnyRow) -> Result<Account, Fail> {
    Ok(Account {
        name: row.try_get("name")?,
        currency: row.try_get("currency")?,
        created_ms: row.try_get("created_ms")?,
    })
}

impl SqlStore {
    /// The account row and its two ledger rows (available, held), in one transaction.
    /// `or_ignore`: an existing account is kept as it is (`ensure_account`).
    pub(super) async fn insert_account(
        &self,
        account: &Account,
        key_sha256: Option<&str>,
        or_ignore: bool,
    ) -> Result<(), Fail> {
        check_name(&account.name)?;
        let mut tx = self.write().await?;
        let inserted = sqlx::query(
            "INSERT INTO accounts (name, currency, created_ms, key_sha256) VALUES ($1, $2, $3, $4) \
             ON CONFLICT DO NOTHING",
        )
        .bind(&account.name)
        .bind(&account.currency)
        .bind(account.created_ms)
        .bind(key_sha256)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if inserted == 0 {
            if or_ignore {
                return Ok(());
            }
            let taken_name = sqlx::query("SELECT 1 FROM accounts WHERE name = $1")
                .bind(&account.name)
                .fetch_optional(&mut *tx)
                .await?
                .is_some();
            return Err(StoreError::Exists(if taken_name {
                format!("account `{}`", account.name)
            } else {
                "an account with this key".to_owned()
            })
            .into());
        }
        for ledger in [account.name.clone(), held_account(&account.name)] {
            sqlx::query("INSERT INTO balances (account, amount) VALUES ($1, 0)")
                .bind(ledger)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// By `column` (`name` or `key_sha256`, never caller text).
    pub(super) async fn find_account(
        &self,
        column: &'static str,
        value: &str,
    ) -> Result<Option<Account>, Fail> {
        let sql = format!("SELECT name, currency, created_ms FROM accounts WHERE {column} = $1");
        let row = sqlx::query(&sql)
            .bind(value)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(account_row).transpose()
    }

    /// The file's row, if its tenant's files stay within `max_stored_bytes` with it (see
    /// [`crate::Store::put_file`]). The sum is read inside the write transaction: SQLite's
    /// `BEGIN IMMEDIATE` already makes writers take turns; on PostgreSQL a transaction-scoped
    /// advisory lock on the tenant does, so two uploads of one tenant never both read the sum
    /// before either is counted (a tenant need not have an account row to lock).
    pub(super) async fn insert_file(
        &self,
        file: &FileMeta,
        max_stored_bytes: u64,
    ) -> Result<(), Fail> {
        let size = i64::try_from(file.size)
            .map_err(|_| StoreError::Backend(format!("file `{}` is too large", file.id)))?;
        let mut tx = self.write().await?;
        if self.dialect == Dialect::Postgres {
            // Wrapped so the row is an integer: `sqlx::Any` cannot read a `void` column.
            sqlx::query("SELECT 1 FROM (SELECT pg_advisory_xact_lock(hashtext($1))) AS locked")
                .bind(&file.tenant)
                .execute(&mut *tx)
                .await?;
        }
        let stored: i64 = sqlx::query(SUM_SIZES)
            .bind(&file.tenant)
            .fetch_one(&mut *tx)
            .await?
            .try_get(0)?;
        let stored = u64::try_from(stored).unwrap_or(0);
        if stored.saturating_add(file.size) > max_stored_bytes {
            return Err(StoreError::Quota {
                stored,
                size: file.size,
                limit: max_stored_bytes,
            }
            .into());
        }
        let result = sqlx::query(
            "INSERT INTO files (id, tenant, sha256, size, media_type, created_ms, expires_ms, source) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&file.id)
        .bind(&file.tenant)
        .bind(&file.sha256)
        .bind(size)
        .bind(&file.media_type)
        .bind(file.created_ms)
        .bind(file.expires_ms)
        .bind(file.source.as_deref())
        .execute(&mut *tx)
        .await;
        match result {
            Err(e) if is_unique_violation(&e) => {
                Err(StoreError::Exists(format!("file `{}`", file.id)).into())
            }
            Err(e) => Err(e.into()),
            Ok(_) => Ok(tx.commit().await?),
        }
    }

    pub(super) async fn find_file(&self, tenant: &str, id: &str) -> Result<Option<FileMeta>, Fail> {
        let row = sqlx::query(&format!(
            "SELECT {FILE_COLUMNS} FROM files WHERE tenant = $1 AND id = $2"
        ))
        .bind(tenant)
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(file_row).transpose()
    }

    /// Oldest first: ids are UUIDv7s, and `created_ms` orders those made in one millisecond
    /// by another clock.
    pub(super) async fn list_files(&self, tenant: &str) -> Result<Vec<FileMeta>, Fail> {
        let rows = sqlx::query(&format!(
            "SELECT {FILE_COLUMNS} FROM files WHERE tenant = $1 ORDER BY created_ms, id"
        ))
        .bind(tenant)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(file_row).collect()
    }

    pub(super) async fn sum_file_sizes(
        &self,
        pool: &sqlx::AnyPool,
        tenant: &str,
    ) -> Result<u64, Fail> {
        let stored: i64 = sqlx::query(SUM_SIZES)
            .bind(tenant)
            .fetch_one(pool)
            .await?
            .try_get(0)?;
        Ok(u64::try_from(stored).unwrap_or(0))
    }

    /// Soonest expired first; a file without an expiry never is.
    pub(super) async fn list_expired_files(
        &self,
        now_ms: UnixMs,
        limit: u32,
    ) -> Result<Vec<FileMeta>, Fail> {
        let rows = sqlx::query(&format!(
            "SELECT {FILE_COLUMNS} FROM files WHERE expires_ms IS NOT NULL AND expires_ms <= $1 \
             ORDER BY expires_ms, id LIMIT $2"
        ))
        .bind(now_ms)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(file_row).collect()
    }

    pub(super) async fn remove_file(&self, id: &str) -> Result<Option<FileMeta>, Fail> {
        let mut tx = self.write().await?;
        let row = sqlx::query(&format!("SELECT {FILE_COLUMNS} FROM files WHERE id = $1"))
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
        let Some(row) = row else { return Ok(None) };
        let file = file_row(&row)?;
        sqlx::query("DELETE FROM files WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Some(file))
    }
}

/// The bytes a tenant's files take. `SUM` of a `BIGINT` is a `NUMERIC` on PostgreSQL, which
/// `sqlx::Any` cannot read: cast back.
const SUM_SIZES: &str =
    "SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM files WHERE tenant = $1";

const FILE_COLUMNS: &str = "id, tenant, sha256, size, media_type, created_ms, expires_ms, source";

fn file_row(row: &AnyRow) -> Result<FileMeta, Fail> {
    Ok(FileMeta {
        id: row.try_get("id")?,
        tenant: row.try_get("tenant")?,
        sha256: row.try_get("sha256")?,
        size: u64::try_from(row.try_get::<i64, _>("size")?).unwrap_or(0),
        media_type: row.try_get("media_type")?,
        created_ms: row.try_get("created_ms")?,
        expires_ms: row.try_get("expires_ms")?,
        source: row.try_get("source")?,
    })
}
