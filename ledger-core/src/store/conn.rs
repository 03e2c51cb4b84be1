//! The connection writes go through: sqlx's on PostgreSQL, or on SQLite a rusqlite connection
//! used synchronously on the calling thread (`lite::LiteWriter`). The write functions take a
//! `&mut Conn` and run the same statement texts on either (`sql::exec`, `sql::fetch_all`, ...).
//!
//! On the rusqlite side a statement completes inside the `await` that runs it: an event's whole
//! apply runs on the async worker that called `ingest`, without a hand-off per statement (nor
//! one per event: the caller awaits the result anyway, and a block is a few ms of CPU).
//!
//! Transactions are SQL statements sent on the connection ([`Conn::begin`], [`Tx`]), the ones
//! sqlx's own transactions send (`BEGIN`, `SAVEPOINT _sqlx_savepoint_N`, ...), so nesting and a
//! [`Tx`] dropped unfinished (rolled back) behave as `sqlx::Transaction` does, on both engines.

use futures_util::TryStreamExt;
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, Connection, Executor};

use super::db_row::DbRow;
use super::lite::LiteWriter;
use super::sql::{query, Val};

pub(super) struct Conn {
    link: Link,
    /// Open transactions (1: a transaction, more: savepoints in it).
    depth: usize,
    /// sqlx: depths of [`Tx`]s dropped unfinished, rolled back before the next statement
    /// (a `Drop` cannot await).
    dropped: Vec<usize>,
}

enum Link {
    Sqlx(AnyConnection),
    Pooled(PoolConnection<Any>),
    Lite(LiteWriter),
}

impl Conn {
    fn new(link: Link) -> Conn {
        Conn { link, depth: 0, dropped: Vec::new() }
    }

    pub(super) fn sqlx(conn: AnyConnection) -> Conn {
        Conn::new(Link::Sqlx(conn))
    }

    pub(super) fn pooled(conn: PoolConnection<Any>) -> Conn {
        Conn::new(Link::Pooled(conn))
    }

    pub(super) fn lite(writer: LiteWriter) -> Conn {
        Conn::new(Link::Lite(writer))
    }

    pub(super) fn is_postgres(&self) -> bool {
        match &self.link {
            Link::Sqlx(c) => c.backend_name() == "PostgreSQL",
            Link::Pooled(c) => c.backend_name() == "PostgreSQL",
            Link::Lite(_) => false,
        }
    }

    /// Whether a transaction is open (statements then run inside it).
    pub(super) fn in_transaction(&self) -> bool {
        self.depth > 0
    }

    /// The sqlx connection, once the rollbacks of dropped transactions are sent. An error on
    /// the rusqlite writer.
    async fn sqlx_conn(&mut self) -> Result<&mut AnyConnection, sqlx::Error> {
        let conn: &mut AnyConnection = match &mut self.link {
            Link::Sqlx(c) => c,
            Link::Pooled(c) => c,
            Link::Lite(_) => {
                return Err(sqlx::Error::Protocol("a sqlx connection expected, not the SQLite writer".into()))
            }
        };
        for depth in std::mem::take(&mut self.dropped) {
            conn.execute(rollback_sql(depth).as_str()).await?;
        }
        Ok(conn)
    }

    /// Runs `sql` (as its engine gets it, see `sql::for_engine`) with `vals`; the rows it
    /// changed. `prepared`: sqlx keeps the statement prepared (see `sql::pg_any`).
    pub(super) async fn execute(
        &mut self,
        sql: &str,
        vals: Vec<Val>,
        prepared: bool,
    ) -> Result<u64, sqlx::Error> {
        if let Link::Lite(w) = &mut self.link {
            return w.execute(sql, &vals);
        }
        let conn = self.sqlx_conn().await?;
        Ok(query(sql, vals).persistent(prepared).execute(conn).await?.rows_affected())
    }

    /// The rows of `sql` (as its engine gets it) with `vals`.
    pub(super) async fn fetch(
        &mut self,
        sql: &str,
        vals: Vec<Val>,
        prepared: bool,
    ) -> Result<Vec<DbRow>, sqlx::Error> {
        if let Link::Lite(w) = &mut self.link {
            return w.fetch(sql, &vals);
        }
        let conn = self.sqlx_conn().await?;
        Ok(query(sql, vals).persistent(prepared).fetch_all(conn).await?.into_iter().map(DbRow::Any).collect())
    }

    /// `f` on each row of the read `sql` (as its engine gets it) with `vals`, without holding
    /// them all, until it returns `false`: the backfills' scans of whole tables.
    pub(super) async fn for_each(
        &mut self,
        sql: &str,
        vals: Vec<Val>,
        mut f: impl FnMut(DbRow) -> Result<bool, sqlx::Error>,
    ) -> Result<(), sqlx::Error> {
        if let Link::Lite(w) = &mut self.link {
            return w.for_each(sql, &vals, f);
        }
        let conn = self.sqlx_conn().await?;
        let mut rows = query(sql, vals).fetch(conn);
        while let Some(row) = rows.try_next().await? {
            if !f(DbRow::Any(row))? {
                break;
            }
        }
        Ok(())
    }

    /// Applies SQLite's migrations (`lite::migrate`); PostgreSQL's run on sqlx's pool.
    pub(super) fn migrate_sqlite(
        &mut self,
        migrator: &sqlx::migrate::Migrator,
    ) -> Result<(), sqlx::migrate::MigrateError> {
        match &mut self.link {
            Link::Lite(w) => w.migrate(migrator),
            _ => Err(sqlx::migrate::MigrateError::Execute(sqlx::Error::Configuration(
                "SQLite migrations on a PostgreSQL connection".into(),
            ))),
        }
    }

    /// A statement without values, sent as written (`PRAGMA`, `SET`, transaction control).
    pub(super) async fn batch(&mut self, sql: &str) -> Result<(), sqlx::Error> {
        if let Link::Lite(w) = &mut self.link {
            return w.execute(sql, &[]).map(|_| ());
        }
        let conn = self.sqlx_conn().await?;
        conn.execute(sql).await.map(|_| ())
    }

    /// Opens a transaction, or a savepoint inside the open one.
    pub(super) async fn begin(&mut self) -> Result<Tx<'_>, sqlx::Error> {
        let sql = match self.depth {
            0 => "BEGIN".to_owned(),
            d => format!("SAVEPOINT _sqlx_savepoint_{d}"),
        };
        self.batch(&sql).await?;
        self.depth += 1;
        Ok(Tx { conn: self, open: true })
    }

    pub(super) async fn close(self) {
        match self.link {
            Link::Sqlx(c) => {
                let _ = c.close().await;
            }
            Link::Pooled(c) => drop(c),
            Link::Lite(w) => drop(w),
        }
    }
}

/// What ends the transaction (`depth` 1) or savepoint at `depth`, as sqlx's do.
fn commit_sql(depth: usize) -> String {
    match depth {
        1 => "COMMIT".to_owned(),
        d => format!("RELEASE SAVEPOINT _sqlx_savepoint_{}", d - 1),
    }
}

fn rollback_sql(depth: usize) -> String {
    match depth {
        1 => "ROLLBACK".to_owned(),
        d => format!("ROLLBACK TO SAVEPOINT _sqlx_savepoint_{}", d - 1),
    }
}

/// An open transaction (or savepoint) on a [`Conn`], used as the connection itself
/// (`&mut tx`). Dropped without [`Tx::commit`] or [`Tx::rollback`], it is rolled back.
pub(super) struct Tx<'c> {
    conn: &'c mut Conn,
    open: bool,
}

impl Tx<'_> {
    pub(super) async fn commit(mut self) -> Result<(), sqlx::Error> {
        self.end(commit_sql(self.conn.depth)).await
    }

    pub(super) async fn rollback(mut self) -> Result<(), sqlx::Error> {
        self.end(rollback_sql(self.conn.depth)).await
    }

    /// A failed COMMIT or ROLLBACK leaves the transaction open: `Drop` rolls it back.
    async fn end(&mut self, sql: String) -> Result<(), sqlx::Error> {
        self.conn.batch(&sql).await?;
        self.conn.depth -= 1;
        self.open = false;
        Ok(())
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if !self.open {
            return;
        }
        let depth = self.conn.depth;
        self.conn.depth -= 1;
        match &mut self.conn.link {
            // A failure leaves the connection as after a failed rollback with sqlx; the store
            // drops its writer after any database error.
            Link::Lite(w) => {
                let _ = w.execute(&rollback_sql(depth), &[]);
            }
            _ => self.conn.dropped.push(depth),
        }
    }
}

impl std::ops::Deref for Tx<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        self.conn
    }
}

impl std::ops::DerefMut for Tx<'_> {
    fn deref_mut(&mut self) -> &mut Conn {
        self.conn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lite_conn() -> (tempfile::TempDir, Conn) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db").display().to_string();
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT);")
            .unwrap();
        (dir, Conn::lite(LiteWriter::open(&path, None).unwrap()))
    }

    async fn count(conn: &mut Conn) -> i64 {
        conn.fetch("SELECT COUNT(*) AS n FROM t", vec![], true).await.unwrap()[0].try_get("n").unwrap()
    }

    #[tokio::test]
    async fn transactions_nest_and_roll_back_when_dropped() {
        let (_dir, mut conn) = lite_conn();
        let mut tx = conn.begin().await.unwrap();
        assert_eq!(
            tx.execute("INSERT INTO t VALUES ($1, $2)", vec![1i64.into(), "x".into()], true).await.unwrap(),
            1
        );
        {
            let mut inner = tx.begin().await.unwrap();
            inner.execute("INSERT INTO t VALUES (2, 'y')", vec![], true).await.unwrap();
            // Dropped: back to the savepoint.
        }
        {
            let mut inner = tx.begin().await.unwrap();
            inner.execute("INSERT INTO t VALUES (3, 'z')", vec![], true).await.unwrap();
            inner.commit().await.unwrap();
        }
        tx.commit().await.unwrap();
        assert_eq!(count(&mut conn).await, 2);
        {
            let mut tx = conn.begin().await.unwrap();
            tx.execute("DELETE FROM t", vec![], true).await.unwrap();
            tx.execute("INSERT INTO t VALUES (1, 'a')", vec![], true).await.unwrap();
            // A failed statement is a typed database error; the dropped transaction is rolled
            // back whole.
            let e = tx.execute("INSERT INTO t VALUES (1, 'dup')", vec![], true).await.unwrap_err();
            assert!(matches!(&e, sqlx::Error::Database(d) if d.is_unique_violation()), "{e:?}");
        }
        assert_eq!(count(&mut conn).await, 2);
        assert_eq!(conn.depth, 0);
    }
}
