//! The SQLite read path: read-only connections used synchronously on the calling thread
//! (rusqlite), instead of sqlx's SQLite driver, which runs every connection on a worker thread
//! of its own and hands each statement and each row across channels. A read of the benchmark
//! routes takes a few hundred microseconds of CPU; those hand-offs (thread wake-ups and
//! switches, ~37% of the server's CPU in the session 13 profile) cost more than the query.
//! A statement here runs on the async worker like any other CPU work of the request.
//!
//! The writer's connection is one too (`LiteWriter`, through `conn::Conn`); migrations, the
//! background checkpointer and PostgreSQL stay on sqlx. The statements are the store's own
//! texts (`$N` placeholders, bound by number as sqlx does), so one read or write function runs
//! on either path (`sql::select`, `conn::Conn`).
//!
//! WAL: each statement runs in its own implicit read transaction and sees every transaction
//! committed before it started, as on a pooled sqlx connection. Connections are opened
//! read-only, with the read pragmas the sqlx pool sets (`connect` in `mod.rs`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{Connection, OpenFlags};

use super::db_row::{DbRow, LiteRow, Names};
use super::sql::Val;

/// Process-wide SQLite settings, applied before the first connection of either driver (sqlx
/// and rusqlite link the same SQLite): its memory statistics off. With them on (SQLite's
/// default), every allocation and free inside SQLite takes a global mutex to count itself
/// (`pthread_mutex_lock`/`unlock` ~3–4 % of an uncached read's CPU), for figures nothing here
/// reads. Later calls, and a call after SQLite was initialized (where `sqlite3_config` refuses
/// with `SQLITE_MISUSE`), change nothing.
pub(super) fn configure_sqlite() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: `SQLITE_CONFIG_MEMSTATUS` takes one int; called once, before this process
        // opens a SQLite connection (`connect` in mod.rs), or refused by SQLite.
        let rc = unsafe { rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS, 0) };
        if rc != rusqlite::ffi::SQLITE_OK {
            tracing::debug!(rc, "SQLite was initialized before its memory statistics could be turned off");
        }
    });
}

/// Idle connections kept; more are opened while more threads read at once (one per runtime
/// worker at most, as a read never awaits), and closed when put back beyond this.
const IDLE_KEPT: usize = 8;
/// Prepared statements kept per connection: the store has a few hundred read shapes.
const STATEMENTS_KEPT: usize = 512;

pub(super) struct LiteReader {
    path: String,
    idle: Mutex<Vec<Connection>>,
    closed: AtomicBool,
}

/// A rusqlite error as sqlx reports a database's.
#[derive(Debug)]
struct LiteError(rusqlite::Error);

impl std::fmt::Display for LiteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for LiteError {}

impl sqlx::error::DatabaseError for LiteError {
    fn message(&self) -> &str {
        match &self.0 {
            rusqlite::Error::SqliteFailure(_, Some(m)) => m,
            _ => "SQLite statement failed",
        }
    }
    fn as_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        self
    }
    fn as_error_mut(&mut self) -> &mut (dyn std::error::Error + Send + Sync + 'static) {
        self
    }
    fn into_error(self: Box<Self>) -> Box<dyn std::error::Error + Send + Sync + 'static> {
        self
    }
    fn kind(&self) -> sqlx::error::ErrorKind {
        use rusqlite::ffi;
        use sqlx::error::ErrorKind;
        match &self.0 {
            rusqlite::Error::SqliteFailure(e, _) => match e.extended_code {
                ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
                    ErrorKind::UniqueViolation
                }
                ffi::SQLITE_CONSTRAINT_FOREIGNKEY => ErrorKind::ForeignKeyViolation,
                ffi::SQLITE_CONSTRAINT_NOTNULL => ErrorKind::NotNullViolation,
                ffi::SQLITE_CONSTRAINT_CHECK => ErrorKind::CheckViolation,
                _ => ErrorKind::Other,
            },
            _ => ErrorKind::Other,
        }
    }
}

fn sql_error(e: rusqlite::Error) -> sqlx::Error {
    sqlx::Error::Database(Box::new(LiteError(e)))
}

fn bind_error(msg: String) -> sqlx::Error {
    sqlx::Error::Protocol(msg)
}

impl LiteReader {
    /// Read connections to the SQLite file at `path` (opened one now, to fail early).
    pub(super) fn open(path: &str) -> Result<LiteReader, sqlx::Error> {
        let reader = LiteReader {
            path: path.to_owned(),
            idle: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
        };
        let conn = reader.connect()?;
        reader.idle().push(conn);
        Ok(reader)
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<Connection>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn connect(&self) -> Result<Connection, sqlx::Error> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.path, flags).map_err(sql_error)?;
        // The sqlx pool's settings that matter to a reader (`connect` in mod.rs).
        conn.busy_timeout(Duration::from_millis(10_000)).map_err(sql_error)?;
        conn.execute_batch("PRAGMA cache_size = -65536; PRAGMA temp_store = MEMORY;").map_err(sql_error)?;
        conn.set_prepared_statement_cache_capacity(STATEMENTS_KEPT);
        Ok(conn)
    }

    /// Closes the idle connections; reads after this fail (as on a closed sqlx pool).
    pub(super) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.idle().clear();
    }

    /// The rows of `sql` with `vals` (the first `max` at most), read on this thread.
    pub(super) fn fetch(&self, sql: &str, vals: Vec<Val>, max: usize) -> Result<Vec<DbRow>, sqlx::Error> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(sqlx::Error::PoolClosed);
        }
        let conn = match self.idle().pop() {
            Some(c) => c,
            None => self.connect()?,
        };
        let (text, vals) = super::sql::sqlite_read(sql, vals);
        let out = run(&conn, text.sql(), &vals, max, Some(text.names())).map(|(rows, _)| rows);
        // A connection that failed is closed (an error here is rare: a broken file or a bug).
        if out.is_ok() && !self.closed.load(Ordering::SeqCst) {
            let mut idle = self.idle();
            if idle.len() < IDLE_KEPT {
                idle.push(conn);
            }
        }
        out
    }
}

/// The value of a `$N` / `?N` placeholder name (1-based), as sqlx's SQLite driver binds them.
fn placeholder_number(name: &str) -> Option<usize> {
    name.strip_prefix('$').or_else(|| name.strip_prefix('?'))?.parse().ok()
}

/// `vals` bound to `stmt`'s placeholders: `$N` / `?N` by number, anonymous `?`s in order.
fn bind(stmt: &mut rusqlite::Statement<'_>, vals: &[Val]) -> Result<(), sqlx::Error> {
    let mut anonymous = 0;
    for i in 1..=stmt.parameter_count() {
        let k = match stmt.parameter_name(i) {
            None => {
                anonymous += 1;
                anonymous
            }
            Some(name) => placeholder_number(name)
                .ok_or_else(|| bind_error(format!("unsupported SQL parameter {name}")))?,
        };
        let v = vals
            .get(k.wrapping_sub(1))
            .ok_or_else(|| bind_error(format!("placeholder {k} has no value ({} given)", vals.len())))?;
        let v = match v {
            Val::I(i) | Val::OI(Some(i)) => ValueRef::Integer(*i),
            Val::OI(None) | Val::OT(None) => ValueRef::Null,
            Val::T(s) | Val::OT(Some(s)) => ValueRef::Text(s.as_bytes()),
            Val::B(b) => ValueRef::Integer(i64::from(*b)),
        };
        stmt.raw_bind_parameter(i, ToSqlOutput::Borrowed(v)).map_err(sql_error)?;
    }
    Ok(())
}

/// The first `max` rows of `sql` (a statement as SQLite gets it: `sql::for_engine`), and the
/// rows it changed when it ran to its end (a write). `max` is `usize::MAX` for a write, which
/// must run to completion. `kept`: where the statement text's column names are kept (read
/// from the statement when empty, or when the statement has another number of columns).
fn run(
    conn: &Connection,
    sql: &str,
    vals: &[Val],
    max: usize,
    kept: Option<&std::sync::OnceLock<Arc<Names>>>,
) -> Result<(Vec<DbRow>, u64), sqlx::Error> {
    let mut stmt = conn.prepare_cached(sql).map_err(sql_error)?;
    bind(&mut stmt, vals)?;
    let read_names = |stmt: &rusqlite::Statement<'_>| {
        Arc::new(Names::new(stmt.column_names().into_iter().map(str::to_owned).collect()))
    };
    let names = match kept {
        Some(k) => {
            let n = k.get_or_init(|| read_names(&stmt));
            if n.len() == stmt.column_count() {
                n.clone()
            } else {
                read_names(&stmt)
            }
        }
        None => read_names(&stmt),
    };
    let writes = !stmt.readonly();
    let n = names.len();
    let mut rows = stmt.raw_query();
    let mut out = Vec::new();
    let mut done = false;
    while out.len() < max {
        let Some(row) = rows.next().map_err(sql_error)? else {
            done = true;
            break;
        };
        let mut vals = Vec::with_capacity(n);
        for i in 0..n {
            vals.push(match row.get_ref(i).map_err(sql_error)? {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(i) => Value::Integer(i),
                ValueRef::Real(r) => Value::Real(r),
                ValueRef::Text(t) => {
                    Value::Text(String::from_utf8(t.to_vec()).map_err(|e| sqlx::Error::Decode(Box::new(e)))?)
                }
                ValueRef::Blob(b) => Value::Blob(b.to_vec()),
            });
        }
        out.push(DbRow::Lite(LiteRow { names: names.clone(), vals }));
    }
    drop(rows);
    let changed = if done && writes { conn.changes() } else { 0 };
    Ok((out, changed))
}

/// The SQLite writer: one read-write connection used synchronously on the calling thread
/// (`conn::Conn`), for the same reason as the readers above. The ingest path ran ~110
/// statements per block through sqlx's worker thread, two thread wake-ups each (21 % of the
/// live path's CPU in the session 14 profile).
///
/// Its statements come rewritten for SQLite by `sql::for_engine` (FAIL conflicts, positional
/// placeholders), as sqlx's driver got them.
pub(super) struct LiteWriter {
    conn: Connection,
}

/// Prepared statements the writer keeps: the write path has a few hundred shapes (multi-row
/// INSERTs in seven sizes per table, `IN` lists in six).
const WRITER_STATEMENTS_KEPT: usize = 1024;

impl LiteWriter {
    /// A read-write connection to the existing SQLite file at `path`, with the settings the
    /// sqlx pool gives its connections (`connect` in `mod.rs`, and sqlx's own `foreign_keys`).
    /// The file's page size and WAL mode were set when the pool created it.
    pub(super) fn open(path: &str) -> Result<LiteWriter, sqlx::Error> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(sql_error)?;
        conn.busy_timeout(Duration::from_millis(10_000)).map_err(sql_error)?;
        conn.execute_batch(
            "PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
             PRAGMA cache_size = -65536; PRAGMA temp_store = MEMORY;",
        )
        .map_err(sql_error)?;
        conn.set_prepared_statement_cache_capacity(WRITER_STATEMENTS_KEPT);
        Ok(LiteWriter { conn })
    }

    /// The rows of `sql` (as SQLite gets it) with `vals`.
    pub(super) fn fetch(&mut self, sql: &str, vals: &[Val]) -> Result<Vec<DbRow>, sqlx::Error> {
        Ok(run(&self.conn, sql, vals, usize::MAX, None)?.0)
    }

    /// Runs `sql` (as SQLite gets it) with `vals`; the rows it changed.
    pub(super) fn execute(&mut self, sql: &str, vals: &[Val]) -> Result<u64, sqlx::Error> {
        Ok(run(&self.conn, sql, vals, usize::MAX, None)?.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl LiteReader {
        fn fetch_all(&self, sql: &str, vals: Vec<Val>) -> Result<Vec<DbRow>, sqlx::Error> {
            self.fetch(sql, vals, usize::MAX)
        }
    }

    fn store_file() -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db").display().to_string();
        let c = Connection::open(&path).unwrap();
        c.execute_batch(
            "PRAGMA journal_mode = WAL; CREATE TABLE t (a INTEGER, b TEXT); \
             INSERT INTO t VALUES (1, 'x'), (2, NULL), (3, 'z');",
        )
        .unwrap();
        (dir, path)
    }

    #[test]
    fn placeholders_bind_by_number_and_rows_decode() {
        let (_dir, path) = store_file();
        let r = LiteReader::open(&path).unwrap();
        // `$2` before `$1`: bound by number, not by position.
        let rows = r
            .fetch_all(
                "SELECT a, b FROM t WHERE a >= $2 AND (b = $1 OR b IS NULL) ORDER BY a",
                vec!["z".into(), 2i64.into()],
            )
            .unwrap();
        let got: Vec<(i64, Option<String>)> =
            rows.iter().map(|r| (r.try_get("a").unwrap(), r.try_get("b").unwrap())).collect();
        assert_eq!(got, [(2, None), (3, Some("z".into()))]);
        // Booleans as integers, NULLs, and a missing value reported.
        let rows = r
            .fetch_all(
                "SELECT COUNT(*) AS n FROM t WHERE ($1 OR a = 1) AND $2 IS NULL",
                vec![false.into(), Val::OT(None)],
            )
            .unwrap();
        assert_eq!(rows[0].try_get::<i64, _>("n").unwrap(), 1);
        assert!(r.fetch_all("SELECT $2", vec![1i64.into()]).is_err());
        // Many values: the statement is rewritten to anonymous placeholders.
        let list: Vec<Val> = (0..20i64).map(Val::from).collect();
        let sql =
            format!("SELECT COUNT(*) AS n FROM t WHERE a IN ({})", super::super::sql::placeholders(1, 20));
        assert_eq!(r.fetch_all(&sql, list).unwrap()[0].try_get::<i64, _>("n").unwrap(), 3);
    }

    #[test]
    fn reads_see_commits_and_never_write() {
        let (_dir, path) = store_file();
        let r = LiteReader::open(&path).unwrap();
        let count =
            || r.fetch_all("SELECT COUNT(*) AS n FROM t", vec![]).unwrap()[0].try_get::<i64, _>("n").unwrap();
        assert_eq!(count(), 3);
        Connection::open(&path).unwrap().execute("INSERT INTO t VALUES (4, 'w')", []).unwrap();
        assert_eq!(count(), 4);
        assert!(r.fetch_all("DELETE FROM t", vec![]).is_err());
        r.close();
        assert!(matches!(r.fetch_all("SELECT 1", vec![]), Err(sqlx::Error::PoolClosed)));
    }
}
