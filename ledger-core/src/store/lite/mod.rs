//! SQLite, through its one driver, rusqlite: the read connections, the writer's
//! (`LiteWriter`, through `conn::Conn`), the migrations (`migrate`) and the background
//! checkpointer. Connections are used synchronously on the calling thread: a read of the
//! benchmark routes takes a few hundred microseconds of CPU, less than what handing each
//! statement and each row to a connection's own worker thread costs (what sqlx's SQLite
//! driver does: ~37 % of the server's CPU under `perf`, and a third of the uncached read
//! throughput, `docs/benchmarks.md`). A statement here runs on the async worker like any other
//! CPU work of the request. The statements are the store's own texts (`$N` placeholders, bound
//! by number), so one read or write function runs on either engine (`sql::select`,
//! `conn::Conn`); errors are reported as sqlx's, the store's one error type for both.
//!
//! WAL: each statement sees every transaction committed before it started; a connection keeps
//! one read transaction across statements while nothing commits (`held`). Read connections
//! are opened read-only.

mod held;
mod migrate;
#[allow(unsafe_code)]
mod wal_index;

pub(super) use wal_index::Header as WalHeader;

/// Rows read because the database changed, and the header of the state they were read from.
pub(super) type Changed = (Option<WalHeader>, Vec<DbRow>);

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{Connection, OpenFlags};

use super::db_row::{DbRow, LiteRow, Names};
use super::sql::Val;
use held::ReadConn;

/// Idle connections kept; more are opened while more threads read at once (one per runtime
/// worker at most, as a read never awaits), and closed when put back beyond this.
const IDLE_KEPT: usize = 8;
/// Prepared statements kept per connection: the store has a few hundred read shapes.
const STATEMENTS_KEPT: usize = 512;

/// How often the release thread ends the transactions idle connections hold past a commit.
const RELEASE_EVERY: Duration = Duration::from_millis(100);

pub(super) struct LiteReader {
    pool: Arc<Pool>,
}

struct Pool {
    path: String,
    /// Whether connections keep read transactions across statements (`held`). Not in a
    /// `readonly` process: its idle transactions would hold back the checkpoints and WAL
    /// restarts of a writer in another process, which cannot end them ([`WriteFence`]).
    hold: bool,
    idle: Mutex<Idle>,
    /// Connections reading now (out of `idle`).
    reading: AtomicUsize,
    closed: AtomicBool,
}

struct Idle {
    conns: Vec<ReadConn>,
    /// The writer has a transaction open ([`WriteFence`]): connections put back end theirs.
    writing: bool,
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
    /// Read connections to the SQLite file at `path` (opened one now, to fail early), and, with
    /// `hold`, the thread that ends the read transactions they hold idle once something commits.
    /// `hold`: whether they keep read transactions across statements (see [`Pool::hold`]).
    pub(super) fn open(path: &str, hold: bool) -> Result<LiteReader, sqlx::Error> {
        let pool = Arc::new(Pool {
            path: path.to_owned(),
            hold,
            idle: Mutex::new(Idle { conns: Vec::new(), writing: false }),
            reading: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
        });
        let conn = pool.connect()?;
        pool.idle().conns.push(conn);
        // Without `hold` no connection keeps a transaction: nothing for the thread to end.
        if hold {
            let weak = Arc::downgrade(&pool);
            std::thread::Builder::new()
                .name("sqlite-read-release".into())
                .spawn(move || release_idle(weak))
                .map_err(sqlx::Error::Io)?;
        }
        Ok(LiteReader { pool })
    }

    /// Closes the idle connections; reads after this fail (`PoolClosed`).
    pub(super) fn close(&self) {
        self.pool.closed.store(true, Ordering::SeqCst);
        self.pool.idle().conns.clear();
    }

    /// What this process's SQLite writer tells these connections (see [`WriteFence`]).
    pub(super) fn fence(&self) -> WriteFence {
        WriteFence(Arc::downgrade(&self.pool))
    }

    /// The rows of `sql` with `vals` (the first `max` at most), read on this thread.
    pub(super) fn fetch(&self, sql: &str, vals: Vec<Val>, max: usize) -> Result<Vec<DbRow>, sqlx::Error> {
        self.with_conn(|conn| {
            let (text, vals) = super::sql::sqlite_read(sql, vals);
            conn.refresh().map_err(sql_error)?;
            run(&conn.conn, text.sql(), &vals, max, Some(text.names())).map(|(rows, _)| rows)
        })
    }

    /// `f` on each row of `sql` with `vals`, read on this thread without holding them all,
    /// until it returns `false` (the digest's scans of whole tables).
    pub(super) fn for_each(
        &self,
        sql: &str,
        vals: Vec<Val>,
        f: impl FnMut(DbRow) -> Result<bool, sqlx::Error>,
    ) -> Result<(), sqlx::Error> {
        self.with_conn(|conn| {
            let (text, vals) = super::sql::sqlite_read(sql, vals);
            conn.refresh().map_err(sql_error)?;
            each_row(&conn.conn, text.sql(), &vals, Some(text.names()), f).map(|_| ())
        })
    }

    /// Connections open now (idle or reading), and idle.
    pub(super) fn connections(&self) -> (usize, usize) {
        let idle = self.pool.idle().conns.len();
        (idle + self.pool.reading.load(Ordering::Relaxed), idle)
    }

    /// `sql`'s rows (no parameters) unless the database is unchanged since the wal-index
    /// header `last` was read (`Ok(None)`), with the header of the state they were read from
    /// (`None`: unknown, no wal-index or a commit under way). Every commit, by any process,
    /// rewrites the header (`held`): an equal header means the same committed state.
    pub(super) fn fetch_if_changed(
        &self,
        sql: &str,
        last: Option<&WalHeader>,
    ) -> Result<Option<Changed>, sqlx::Error> {
        self.with_conn(|conn| {
            if last.is_some() && conn.header().as_ref() == last {
                return Ok(None);
            }
            let (text, vals) = super::sql::sqlite_read(sql, vec![]);
            conn.refresh().map_err(sql_error)?;
            let state = conn.state_header();
            let rows = run(&conn.conn, text.sql(), &vals, usize::MAX, Some(text.names()))?.0;
            Ok(Some((state, rows)))
        })
    }

    /// `f` on an idle connection (or a new one), put back after unless it failed.
    fn with_conn<T>(
        &self,
        f: impl FnOnce(&mut ReadConn) -> Result<T, sqlx::Error>,
    ) -> Result<T, sqlx::Error> {
        let pool = &self.pool;
        if pool.closed.load(Ordering::SeqCst) {
            return Err(sqlx::Error::PoolClosed);
        }
        let mut conn = match pool.idle().conns.pop() {
            Some(c) => c,
            None => pool.connect()?,
        };
        pool.reading.fetch_add(1, Ordering::Relaxed);
        let out = f(&mut conn);
        pool.reading.fetch_sub(1, Ordering::Relaxed);
        // A connection that failed is closed (an error here is rare: a broken file or a bug).
        if out.is_ok() && !pool.closed.load(Ordering::SeqCst) {
            // Under the lock that `WriteFence::enter` takes: a connection put back while the
            // writer's transaction is open never keeps a transaction idle through its commit.
            let mut idle = pool.idle();
            let ended = if idle.writing { conn.end() } else { conn.release_if_stale() };
            if ended.is_ok() && idle.conns.len() < IDLE_KEPT {
                idle.conns.push(conn);
            }
        }
        out
    }
}

impl Pool {
    fn idle(&self) -> std::sync::MutexGuard<'_, Idle> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn connect(&self) -> Result<ReadConn, sqlx::Error> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.path, flags).map_err(sql_error)?;
        conn.busy_timeout(Duration::from_millis(10_000)).map_err(sql_error)?;
        conn.execute_batch("PRAGMA cache_size = -65536; PRAGMA temp_store = MEMORY;").map_err(sql_error)?;
        conn.set_prepared_statement_cache_capacity(STATEMENTS_KEPT);
        ReadConn::new(conn, self.hold).map_err(sql_error)
    }
}

/// The release thread: every [`RELEASE_EVERY`], the transactions idle connections hold past a
/// commit are ended, so that a checkpoint can copy that commit; gone with the pool.
fn release_idle(pool: Weak<Pool>) {
    loop {
        std::thread::sleep(RELEASE_EVERY);
        let Some(pool) = pool.upgrade() else { return };
        if pool.closed.load(Ordering::SeqCst) {
            return;
        }
        // A connection whose transaction cannot end is closed.
        pool.idle().conns.retain_mut(|c| c.release_if_stale().is_ok());
    }
}

/// The writer's side of the kept read transactions. The WAL can start over (`walRestartLog`,
/// at a write transaction's first frame) only when no reader holds one of read marks 1..N, and a
/// checkpoint copies no frame past the oldest snapshot a reader holds. Ended lazily (at a
/// reader's next statement, or by the release thread within [`RELEASE_EVERY`]), idle
/// transactions held both back under sustained writes: the WAL grew to 2.1 GB in the mixed-load
/// benchmark and ingestion slowed to 57–71 % of its rate alone. So the writer of
/// this process ends every idle transaction before its own begins ([`WriteFence::enter`]), and
/// until it ends ([`WriteFence::leave`]) connections put back end theirs: while it writes,
/// readers hold read marks only while a statement runs, as in autocommit.
#[derive(Clone)]
pub(super) struct WriteFence(Weak<Pool>);

impl WriteFence {
    fn enter(&self) {
        if let Some(pool) = self.0.upgrade() {
            let mut idle = pool.idle();
            idle.writing = true;
            // A connection whose transaction cannot end is closed.
            idle.conns.retain_mut(|c| c.end().is_ok());
        }
    }

    fn leave(&self) {
        if let Some(pool) = self.0.upgrade() {
            pool.idle().writing = false;
        }
    }
}

/// The value of a `$N` / `?N` placeholder name (1-based).
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
    let mut out = Vec::new();
    let changed = each_row(conn, sql, vals, kept, |row| {
        out.push(row);
        Ok(out.len() < max)
    })?;
    Ok((out, changed))
}

/// `f` on each row of `sql` (as SQLite gets it) with `vals`, in order, until it returns
/// `false`; the rows the statement changed when it ran to its end (a write). `kept`: as in
/// [`run`].
fn each_row(
    conn: &Connection,
    sql: &str,
    vals: &[Val],
    kept: Option<&std::sync::OnceLock<Arc<Names>>>,
    mut f: impl FnMut(DbRow) -> Result<bool, sqlx::Error>,
) -> Result<u64, sqlx::Error> {
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
    let mut done = false;
    loop {
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
        if !f(DbRow::Lite(LiteRow { names: names.clone(), vals }))? {
            break;
        }
    }
    drop(rows);
    Ok(if done && writes { conn.changes() } else { 0 })
}

/// SQLite in WAL mode appends commits to the WAL file; a checkpoint copies them back into the
/// database file and fsyncs it. By default the committing connection does that itself, every
/// 1,000 pages, inside a commit: in a replay, those fsyncs took more than half the time.
/// Here a connection of its own checkpoints in the background, on a thread of its own (the
/// other core), so the writer only appends to the WAL. The writer keeps an automatic
/// checkpoint too, rarely (`LIVE_WRITER_AUTOCHECKPOINT_BYTES` in `store`): the WAL file can only
/// start over once a checkpoint has copied every frame, which one running beside a busy writer
/// never quite does; the writer's own, right after its commit, does, and the background one
/// has left it little to copy.
pub(super) struct Checkpointer {
    stop: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

/// How often the background checkpointer runs.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(200);

impl Checkpointer {
    pub(super) fn start(path: &str) -> Result<Checkpointer, sqlx::Error> {
        let writer = LiteWriter::open(path, None)?;
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("sqlite-checkpoint".into())
            .spawn(move || {
                // Until `stop` is called or the store is dropped (the sender with it).
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(CHECKPOINT_EVERY)
                {
                    // PASSIVE never waits for, nor blocks, the writer or the readers.
                    if let Err(e) = writer.conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
                        tracing::warn!(error = %e, "background WAL checkpoint failed");
                    }
                }
            })
            .map_err(sqlx::Error::Io)?;
        Ok(Checkpointer { stop, thread })
    }

    /// Stops the checkpoints (waiting for one under way) and closes the connection.
    pub(super) async fn stop(self) {
        let _ = self.stop.send(());
        let thread = self.thread;
        let _ = tokio::task::spawn_blocking(move || thread.join()).await;
    }
}

/// The SQLite writer: one read-write connection used synchronously on the calling thread
/// (`conn::Conn`), for the same reason as the readers above. The ingest path ran ~110
/// statements per block through sqlx's worker thread, two thread wake-ups each (21 % of the
/// live path's CPU under `perf`).
///
/// Its statements come rewritten for SQLite by `sql::for_engine` (FAIL conflicts, positional
/// placeholders), as sqlx's driver got them.
pub(super) struct LiteWriter {
    conn: Connection,
    /// This process's readers, told when a transaction of this connection begins and ends.
    fence: Option<WriteFence>,
    /// Inside [`WriteFence::enter`] (from a statement run outside a transaction until the
    /// connection is back in autocommit).
    fenced: bool,
}

/// Prepared statements the writer keeps: the write path has a few hundred shapes (multi-row
/// INSERTs in seven sizes per table, `IN` lists in six).
const WRITER_STATEMENTS_KEPT: usize = 1024;

impl LiteWriter {
    /// A read-write connection to the existing SQLite file at `path` (its page size and WAL
    /// mode set when [`LiteWriter::create`] made it). `fence`: this process's readers of the
    /// same file, if any.
    pub(super) fn open(path: &str, fence: Option<WriteFence>) -> Result<LiteWriter, sqlx::Error> {
        LiteWriter::connect(path, OpenFlags::empty(), fence, None)
    }

    /// [`LiteWriter::open`] of a file created if missing, with `page_size` bytes a page if it
    /// is new (an existing file keeps its own), in WAL mode: the store's at open, before it
    /// has readers, and the event inbox's (`store::inbox`).
    pub(super) fn create(path: &str, page_size: u32) -> Result<LiteWriter, sqlx::Error> {
        LiteWriter::connect(path, OpenFlags::SQLITE_OPEN_CREATE, None, Some(page_size))
    }

    fn connect(
        path: &str,
        extra: OpenFlags,
        fence: Option<WriteFence>,
        page_size: Option<u32>,
    ) -> Result<LiteWriter, sqlx::Error> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | extra;
        let conn = Connection::open_with_flags(path, flags).map_err(sql_error)?;
        conn.busy_timeout(Duration::from_millis(10_000)).map_err(sql_error)?;
        if let Some(size) = page_size {
            // A no-op once the file has tables; before WAL mode, which fixes a new file's.
            conn.execute_batch(&format!("PRAGMA page_size = {size}")).map_err(sql_error)?;
        }
        // WAL lets readers run beside the single writer; NORMAL sync is safe with WAL (a
        // crash loses at most the last commits, never integrity).
        conn.execute_batch(
            "PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
             PRAGMA cache_size = -65536; PRAGMA temp_store = MEMORY;",
        )
        .map_err(sql_error)?;
        conn.set_prepared_statement_cache_capacity(WRITER_STATEMENTS_KEPT);
        Ok(LiteWriter { conn, fence, fenced: false })
    }

    /// The rows of `sql` (as SQLite gets it) with `vals`.
    pub(super) fn fetch(&mut self, sql: &str, vals: &[Val]) -> Result<Vec<DbRow>, sqlx::Error> {
        Ok(self.fenced_run(sql, vals)?.0)
    }

    /// Runs `sql` (as SQLite gets it) with `vals`; the rows it changed.
    pub(super) fn execute(&mut self, sql: &str, vals: &[Val]) -> Result<u64, sqlx::Error> {
        Ok(self.fenced_run(sql, vals)?.1)
    }

    /// `f` on each row of the read `sql` (as SQLite gets it) with `vals`, without holding them
    /// all, until it returns `false`: the backfills' scans of whole tables.
    pub(super) fn for_each(
        &mut self,
        sql: &str,
        vals: &[Val],
        f: impl FnMut(DbRow) -> Result<bool, sqlx::Error>,
    ) -> Result<(), sqlx::Error> {
        self.fenced(|conn| each_row(conn, sql, vals, None, f).map(|_| ()))
    }

    /// Applies `migrator`'s migrations the database has not applied (`migrate`).
    pub(super) fn migrate(
        &mut self,
        migrator: &sqlx::migrate::Migrator,
    ) -> Result<(), sqlx::migrate::MigrateError> {
        migrate::run(&self.conn, migrator)
    }

    /// `run` inside the fence ([`LiteWriter::fenced`]).
    fn fenced_run(&mut self, sql: &str, vals: &[Val]) -> Result<(Vec<DbRow>, u64), sqlx::Error> {
        self.fenced(|conn| run(conn, sql, vals, usize::MAX, None))
    }

    /// `f` on the connection inside the fence, from a statement that starts outside a
    /// transaction (`BEGIN`, or a statement in autocommit) to the one after which none is open
    /// (`COMMIT`, `ROLLBACK`).
    fn fenced<T>(&mut self, f: impl FnOnce(&Connection) -> Result<T, sqlx::Error>) -> Result<T, sqlx::Error> {
        if let Some(fence) = self.fence.as_ref().filter(|_| !self.fenced) {
            fence.enter();
            self.fenced = true;
        }
        let out = f(&self.conn);
        if self.conn.is_autocommit() {
            self.unfence();
        }
        out
    }

    fn unfence(&mut self) {
        if std::mem::take(&mut self.fenced) {
            if let Some(fence) = &self.fence {
                fence.leave();
            }
        }
    }
}

impl Drop for LiteWriter {
    /// A writer dropped inside a transaction (after a failure; SQLite rolls it back as the
    /// connection closes) leaves the fence, so the readers keep transactions again.
    fn drop(&mut self) {
        self.unfence();
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

    /// The bundled SQLite carries the compile-time options of `.cargo/config.toml` (a build
    /// without them still works, but every reader thread contends on SQLite's global mutexes).
    #[test]
    fn sqlite_is_built_with_the_options_of_the_cargo_config() {
        let c = Connection::open_in_memory().unwrap();
        let mut stmt = c.prepare("PRAGMA compile_options").unwrap();
        let options: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
        assert!(options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"), "{options:?}");
        assert!(!options.iter().any(|o| o == "ENABLE_MEMORY_MANAGEMENT"), "{options:?}");
    }

    #[test]
    fn placeholders_bind_by_number_and_rows_decode() {
        let (_dir, path) = store_file();
        let r = LiteReader::open(&path, true).unwrap();
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
        let r = LiteReader::open(&path, true).unwrap();
        let count =
            || r.fetch_all("SELECT COUNT(*) AS n FROM t", vec![]).unwrap()[0].try_get::<i64, _>("n").unwrap();
        assert_eq!(count(), 3);
        Connection::open(&path).unwrap().execute("INSERT INTO t VALUES (4, 'w')", []).unwrap();
        assert_eq!(count(), 4);
        assert!(r.fetch_all("DELETE FROM t", vec![]).is_err());
        r.close();
        assert!(matches!(r.fetch_all("SELECT 1", vec![]), Err(sqlx::Error::PoolClosed)));
    }

    /// The header short cut of `fetch_if_changed`, in a process that holds transactions and in
    /// one that does not (`readonly`): unchanged, no statement; any commit by another
    /// connection, the statement again.
    #[test]
    fn a_read_is_skipped_only_while_nothing_commits() {
        for hold in [true, false] {
            let (_dir, path) = store_file();
            let r = LiteReader::open(&path, hold).unwrap();
            let sql = "SELECT COUNT(*) AS n FROM t";
            let n = |rows: Vec<DbRow>| rows[0].try_get::<i64, _>("n").unwrap();
            let (header, rows) = r.fetch_if_changed(sql, None).unwrap().expect("no header given: read");
            let header = header.expect("a WAL database's header");
            assert_eq!(n(rows), 3);
            assert!(r.fetch_if_changed(sql, Some(&header)).unwrap().is_none(), "unchanged: not read");
            let w = Connection::open(&path).unwrap();
            w.execute("INSERT INTO t VALUES (4, 'w')", []).unwrap();
            let (next, rows) = r.fetch_if_changed(sql, Some(&header)).unwrap().expect("a commit: read again");
            assert_eq!(n(rows), 4, "hold {hold}");
            assert_ne!(next, Some(header));
            // A commit that changes nothing the statement reads still moves the header.
            w.execute("CREATE TABLE other (a INTEGER)", []).unwrap();
            assert!(r.fetch_if_changed(sql, next.as_ref()).unwrap().is_some());
        }
    }

    fn count(r: &LiteReader) -> i64 {
        r.fetch_all("SELECT COUNT(*) AS n FROM t", vec![]).unwrap()[0].try_get::<i64, _>("n").unwrap()
    }

    fn idle_holds(r: &LiteReader) -> Vec<bool> {
        r.pool.idle().conns.iter().map(ReadConn::holds).collect()
    }

    #[test]
    fn a_read_transaction_is_kept_until_something_commits() {
        let (_dir, path) = store_file();
        let r = LiteReader::open(&path, true).unwrap();
        assert_eq!(count(&r), 3);
        assert_eq!(idle_holds(&r), [true], "the connection keeps its read transaction");
        assert_eq!(count(&r), 3);
        // Any other connection's commit: the next statement reads it, in a new transaction.
        let w = Connection::open(&path).unwrap();
        w.execute("INSERT INTO t VALUES (4, 'w')", []).unwrap();
        assert_eq!(count(&r), 4);
        w.execute("DELETE FROM t WHERE a = 1", []).unwrap();
        assert_eq!(count(&r), 3);
        assert_eq!(idle_holds(&r), [true]);
    }

    #[test]
    fn idle_transactions_end_after_a_commit_so_checkpoints_complete() {
        let (_dir, path) = store_file();
        let r = LiteReader::open(&path, true).unwrap();
        assert_eq!(count(&r), 3);
        let w = Connection::open(&path).unwrap();
        w.execute("INSERT INTO t VALUES (4, 'w')", []).unwrap();
        // The release thread ends the idle connection's transaction, which began before the
        // commit; held, it would keep the checkpoint from copying that commit.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while idle_holds(&r) != [false] {
            assert!(std::time::Instant::now() < deadline, "the idle transaction was never ended");
            std::thread::sleep(Duration::from_millis(20));
        }
        let (busy, log, copied): (i64, i64, i64) = w
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |x| Ok((x.get(0)?, x.get(1)?, x.get(2)?)))
            .unwrap();
        assert_eq!((busy, copied), (0, log), "every WAL frame checkpointed");
        assert_eq!(count(&r), 4);
    }

    #[test]
    fn the_writer_ends_idle_transactions_before_its_own() {
        let (_dir, path) = store_file();
        let r = LiteReader::open(&path, true).unwrap();
        let mut w = LiteWriter::open(&path, Some(r.fence())).unwrap();
        assert_eq!(count(&r), 3);
        assert_eq!(idle_holds(&r), [true]);
        w.execute("BEGIN", &[]).unwrap();
        assert_eq!(idle_holds(&r), [false], "ended when the writer's transaction began");
        // Put back while the writer's transaction is open: not kept.
        assert_eq!(count(&r), 3);
        assert_eq!(idle_holds(&r), [false]);
        w.execute("INSERT INTO t VALUES (4, 'w')", &[]).unwrap();
        w.execute("COMMIT", &[]).unwrap();
        assert_eq!(count(&r), 4);
        assert_eq!(idle_holds(&r), [true], "kept again once the writer's transaction ended");
        // A statement in autocommit is a transaction of its own: fenced too, and left.
        w.execute("INSERT INTO t VALUES (5, 'v')", &[]).unwrap();
        assert_eq!(count(&r), 5);
        assert_eq!(idle_holds(&r), [true]);
        // A writer dropped inside its transaction (rolled back) leaves the fence.
        w.execute("BEGIN", &[]).unwrap();
        w.execute("INSERT INTO t VALUES (6, 'u')", &[]).unwrap();
        drop(w);
        assert_eq!(count(&r), 5);
        assert_eq!(idle_holds(&r), [true]);
    }

    /// What an unfenced version did, in small (its WAL grew without bound): readers reading
    /// between the writer's transactions must not keep the WAL from starting over.
    #[test]
    fn the_wal_starts_over_while_readers_read_between_writes() {
        let (dir, path) = store_file();
        let r = LiteReader::open(&path, true).unwrap();
        let mut w = LiteWriter::open(&path, Some(r.fence())).unwrap();
        // Checkpoint inside every commit (as the writer does past its WAL bound).
        w.execute("PRAGMA wal_autocheckpoint = 1", &[]).unwrap();
        let blob = "x".repeat(3_000);
        for i in 0..400i64 {
            assert_eq!(count(&r), 3 + i);
            w.execute("BEGIN", &[]).unwrap();
            w.execute("INSERT INTO t VALUES ($1, $2)", &[Val::I(10 + i), Val::T(blob.clone())]).unwrap();
            w.execute("COMMIT", &[]).unwrap();
        }
        // 400 commits of ~2 pages: ~3.3 MB of frames if the WAL never started over.
        let wal = std::fs::metadata(dir.path().join("t.db-wal")).unwrap().len();
        assert!(wal < 256 << 10, "the WAL grew to {wal} bytes");
    }

    #[test]
    fn a_readonly_process_keeps_no_transaction() {
        let (_dir, path) = store_file();
        let r = LiteReader::open(&path, false).unwrap();
        assert_eq!(count(&r), 3);
        assert_eq!(idle_holds(&r), [false]);
    }

    #[test]
    fn without_a_wal_each_statement_is_its_own_transaction() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.db").display().to_string();
        let w = Connection::open(&path).unwrap();
        w.execute_batch("CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1);").unwrap();
        let r = LiteReader::open(&path, true).unwrap();
        assert_eq!(count(&r), 1);
        assert_eq!(idle_holds(&r), [false]);
        w.execute("INSERT INTO t VALUES (2)", []).unwrap();
        assert_eq!(count(&r), 2);
        assert!(!dir.path().join("j.db-shm").exists(), "no wal-index made for a rollback-journal file");
    }
}
