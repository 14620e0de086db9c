//! The statements of a run's writes, written once and run on either kind of connection: a
//! `sqlx` connection (PostgreSQL; SQLite outside the gateway's run writer) or SQLite's run
//! writer's own `rusqlite` connection ([`super::sqlite_runs`]).
//!
//! Why two connections for one set of statements: through `sqlx`, every SQLite statement is a
//! message to the connection's worker thread and an answer back, and a run's reservation and
//! settlement are about 26 statements, so under load a run's transactions held SQLite's one
//! write lock through 26 thread hand-offs, each waiting for a core (the full run topped out at
//! ~640 a second on two cores, the book's performance page). The run writer runs whole groups
//! of runs' statements on its own thread with no hand-off. The rules (which statements, in
//! which order, what each answer means) stay in one place: the operations are written against
//! [`Conn`], and only binding and reading differ.

use super::Fail;
use sqlx::any::AnyRow;
use sqlx::{Any, AnyConnection, Row as _};

/// One statement parameter, typed so that PostgreSQL is told a `NULL`'s type.
#[derive(Clone, Copy, Debug)]
pub(super) enum Arg<'a> {
    Int(i64),
    Text(&'a str),
    MaybeText(Option<&'a str>),
    MaybeBlob(Option<&'a [u8]>),
}

/// A connection the write operations run on (see the module doc).
#[allow(async_fn_in_trait)] // used only with concrete connections, never boxed
pub(super) trait Conn {
    /// Runs a statement; the number of rows it changed.
    async fn execute(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64, Fail>;
    /// Runs a query; its first row, if any.
    async fn fetch_optional(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Option<Row>, Fail>;
}

/// A row read by [`Conn::fetch_optional`], its columns read by position.
pub(super) enum Row {
    Sqlx(AnyRow),
    Sqlite(Vec<rusqlite::types::Value>),
}

/// A column type both connections can read.
pub(super) trait Column:
    for<'r> sqlx::Decode<'r, Any> + sqlx::Type<Any> + rusqlite::types::FromSql
{
}

impl<T> Column for T where
    T: for<'r> sqlx::Decode<'r, Any> + sqlx::Type<Any> + rusqlite::types::FromSql
{
}

impl Row {
    /// Column `index` (0-based, in the query's order).
    pub(super) fn get<T: Column>(&self, index: usize) -> Result<T, Fail> {
        match self {
            Row::Sqlx(row) => Ok(row.try_get::<T, _>(index)?),
            Row::Sqlite(values) => {
                let value = values
                    .get(index)
                    .ok_or_else(|| Fail::Sqlite(rusqlite::Error::InvalidColumnIndex(index)))?;
                T::column_result(value.into()).map_err(|e| {
                    Fail::Sqlite(rusqlite::Error::FromSqlConversionFailure(
                        index,
                        value.data_type(),
                        Box::new(e),
                    ))
                })
            }
        }
    }
}

fn bind<'q>(
    mut query: sqlx::query::Query<'q, Any, sqlx::any::AnyArguments<'q>>,
    args: &[Arg<'q>],
) -> sqlx::query::Query<'q, Any, sqlx::any::AnyArguments<'q>> {
    for arg in args {
        query = match *arg {
            Arg::Int(v) => query.bind(v),
            Arg::Text(v) => query.bind(v),
            Arg::MaybeText(v) => query.bind(v),
            Arg::MaybeBlob(v) => query.bind(v),
        };
    }
    query
}

impl Conn for AnyConnection {
    async fn execute(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64, Fail> {
        let query = bind(sqlx::query(sql), args);
        Ok(query.execute(&mut *self).await?.rows_affected())
    }

    async fn fetch_optional(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Option<Row>, Fail> {
        let query = bind(sqlx::query(sql), args);
        Ok(query.fetch_optional(&mut *self).await?.map(Row::Sqlx))
    }
}

impl Conn for rusqlite::Connection {
    async fn execute(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64, Fail> {
        let mut statement = self.prepare_cached(sql)?;
        bind_numbered(&mut statement, args)?;
        Ok(statement.raw_execute()? as u64)
    }

    async fn fetch_optional(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Option<Row>, Fail> {
        let mut statement = self.prepare_cached(sql)?;
        bind_numbered(&mut statement, args)?;
        let columns = statement.column_count();
        let mut rows = statement.raw_query();
        let Some(row) = rows.next()? else {
            return Ok(None);
        };
        let values = (0..columns)
            .map(|i| row.get::<_, rusqlite::types::Value>(i))
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(Some(Row::Sqlite(values)))
    }
}

/// Binds `$N` parameters by their number: SQLite numbers named parameters in the order they
/// first appear, which need not be `$1, $2, …`.
fn bind_numbered(statement: &mut rusqlite::Statement<'_>, args: &[Arg<'_>]) -> Result<(), Fail> {
    use rusqlite::types::Null;
    for index in 1..=statement.parameter_count() {
        let number = statement
            .parameter_name(index)
            .and_then(|name| name.strip_prefix('$'))
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| (1..=args.len()).contains(n))
            .ok_or_else(|| {
                rusqlite::Error::InvalidParameterCount(statement.parameter_count(), args.len())
            })?;
        match args[number - 1] {
            Arg::Int(v) => statement.raw_bind_parameter(index, v)?,
            Arg::Text(v) => statement.raw_bind_parameter(index, v)?,
            Arg::MaybeText(Some(v)) => statement.raw_bind_parameter(index, v)?,
            Arg::MaybeBlob(Some(v)) => statement.raw_bind_parameter(index, v)?,
            Arg::MaybeText(None) | Arg::MaybeBlob(None) => {
                statement.raw_bind_parameter(index, Null)?
            }
        }
    }
    Ok(())
}
