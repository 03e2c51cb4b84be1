//! Read transactions kept open across statements while nothing commits.
//!
//! In WAL mode every statement run in autocommit begins and ends a read transaction of its own:
//! a shared lock on the database file and one on a WAL read mark, each taken under a
//! process-wide mutex and, when no other connection of the process holds it, with an `fcntl`
//! call; the threads of a busy API contend on those mutexes and sleep on futexes. That was
//! ~20 % of the CPU of a one-row read (address nonces) and 5–8 % of a list page (`perf`).
//! A reader connection here begins a transaction once and keeps it for as long as
//! the database is unchanged, and ends it as soon as anything commits, so a statement never
//! reads an older state than it would have in autocommit.
//!
//! "Unchanged" is read from the wal-index header (`wal_index`): every commit, by any connection
//! of any process, rewrites it, and a read while a commit writes it counts as a change. The
//! header is read *before* the transaction begins, so a commit that lands between the two is
//! seen as a change at the next statement, never missed.
//!
//! A transaction held by an idle connection would keep a checkpoint from copying what committed
//! after it began, and the WAL from starting over. The writer of this process ends every idle
//! one before its own transaction begins, and connections put back while it writes end theirs
//! (`WriteFence` in `mod.rs`); those left idle past another process's commit are ended by the
//! pool's release thread.

use rusqlite::Connection;

use super::wal_index::{Header, WalIndex};

/// A read-only connection and the read transaction it may hold.
pub(super) struct ReadConn {
    pub(super) conn: Connection,
    wal: Option<WalIndex>,
    /// Whether it keeps read transactions across statements.
    hold: bool,
    /// The wal-index header read just before the held transaction began; `None`: none held.
    held: Option<Header>,
}

impl ReadConn {
    /// `conn`, which keeps read transactions open when `hold` and its database is in WAL mode.
    /// Without `hold` it still reads the wal-index header ([`ReadConn::header`]).
    pub(super) fn new(conn: Connection, hold: bool) -> rusqlite::Result<ReadConn> {
        // A first read opens the WAL (and maps the wal-index) of a WAL database.
        conn.query_row("PRAGMA schema_version", [], |r| r.get::<_, i64>(0))?;
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
        let wal = if mode.eq_ignore_ascii_case("wal") { WalIndex::of(&conn) } else { None };
        Ok(ReadConn { conn, wal, hold, held: None })
    }

    /// The wal-index header now (`None`: no wal-index, or a commit is writing it).
    pub(super) fn header(&self) -> Option<Header> {
        self.wal.as_ref().and_then(WalIndex::header)
    }

    /// The header of the state the next statement reads, read before that state's transaction
    /// began (after [`ReadConn::refresh`]: the held one's, else the header now, as the
    /// statement's own transaction begins after this).
    pub(super) fn state_header(&self) -> Option<Header> {
        self.held.or_else(|| self.header())
    }

    /// Readies the connection for a statement that must see every commit made before now: the
    /// held transaction is kept when nothing committed since it began, else ended, and another
    /// begun (none on a database without a wal-index: each statement is its own).
    pub(super) fn refresh(&mut self) -> rusqlite::Result<()> {
        if !self.hold {
            return Ok(());
        }
        let now = self.header();
        if self.held.is_some() && self.held == now {
            return Ok(());
        }
        self.end()?;
        if let Some(header) = now {
            self.conn.prepare_cached("BEGIN")?.raw_execute()?;
            self.held = Some(header);
        }
        Ok(())
    }

    /// Ends the held transaction when something committed after it began: idle, it would only
    /// keep checkpoints from copying that commit.
    pub(super) fn release_if_stale(&mut self) -> rusqlite::Result<()> {
        if self.held.is_some() && self.held != self.header() {
            self.end()?;
        }
        Ok(())
    }

    /// Ends the held transaction, if any.
    pub(super) fn end(&mut self) -> rusqlite::Result<()> {
        if self.held.take().is_some() || !self.conn.is_autocommit() {
            self.conn.prepare_cached("COMMIT")?.raw_execute()?;
        }
        Ok(())
    }

    /// Whether a transaction is held (tests).
    #[cfg(test)]
    pub(super) fn holds(&self) -> bool {
        self.held.is_some() && !self.conn.is_autocommit()
    }
}
