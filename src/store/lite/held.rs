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
//! "Unchanged" is read from the wal-index header, as SQLite's own readers do before each
//! transaction (`walIndexTryHdr`): every commit, by any connection of any process, rewrites it
//! (its frame count, change counter and checksum). The header is read through the mapping
//! SQLite made for the connection (the VFS's `xShmMap`, region 0), without a lock: its two
//! copies are read in the order SQLite reads them, and a read where they differ (a commit under
//! way) counts as a change. The header is read *before* the transaction begins, so a commit
//! that lands between the two is seen as a change at the next statement, never missed.
//!
//! A transaction held by an idle connection would keep a checkpoint from copying what committed
//! after it began, and the WAL from starting over. The writer of this process ends every idle
//! one before its own transaction begins, and connections put back while it writes end theirs
//! (`WriteFence` in `mod.rs`); those left idle past another process's commit are ended by the
//! pool's release thread.

use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{fence, Ordering};

use rusqlite::{ffi, Connection};

/// Bytes of one copy of the wal-index header (`WalIndexHdr`, https://sqlite.org/walformat.html);
/// the wal-index's first region begins with two copies.
const HEADER_BYTES: usize = 48;
/// Offset of the header's `isInit` byte: 0 until a connection has initialized the wal-index.
const IS_INIT: usize = 12;
/// The size of the wal-index regions SQLite maps (`WALINDEX_PGSZ`).
const REGION_BYTES: i32 = 32_768;

/// The wal-index header: equal bytes, no commit in between (see the module doc).
pub(in crate::store) type Header = [u8; HEADER_BYTES];

/// SQLite's mapping of a connection's wal-index (its first region).
struct WalIndex(NonNull<u8>);

// SAFETY: the pointer is SQLite's shared mapping of the wal-index, valid for as long as the
// connection that mapped it is open (the VFS unmaps a file's regions only when the last of the
// process's connections to it closes). `ReadConn` owns both and is moved between threads whole;
// the mapping is only ever read, with volatile reads.
unsafe impl Send for WalIndex {}

impl WalIndex {
    /// The wal-index `conn` reads through, once it has read a WAL database (`None` otherwise:
    /// a rollback-journal file, or a VFS without shared memory).
    fn of(conn: &Connection) -> Option<WalIndex> {
        // SAFETY: `handle` is `conn`'s open database; `SQLITE_FCNTL_FILE_POINTER` writes the
        // main database's `sqlite3_file*` (owned by SQLite, valid while `conn` is open). The
        // methods table is checked for version 2 (the first with `xShmMap`) before use, and
        // `xShmMap` with `bExtend = 0` only returns a region that already exists.
        unsafe {
            let db = conn.handle();
            let mut file: *mut ffi::sqlite3_file = std::ptr::null_mut();
            let rc = ffi::sqlite3_file_control(
                db,
                c"main".as_ptr(),
                ffi::SQLITE_FCNTL_FILE_POINTER,
                (&mut file as *mut *mut ffi::sqlite3_file).cast::<c_void>(),
            );
            if rc != ffi::SQLITE_OK || file.is_null() || (*file).pMethods.is_null() {
                return None;
            }
            let methods = &*(*file).pMethods;
            if methods.iVersion < 2 {
                return None;
            }
            let map = methods.xShmMap?;
            let mut region: *mut c_void = std::ptr::null_mut();
            if map(file, 0, REGION_BYTES, 0, &mut region) != ffi::SQLITE_OK {
                return None;
            }
            NonNull::new(region.cast::<u8>()).map(WalIndex)
        }
    }

    /// The header now: `None` when its two copies differ (a commit is writing it) or it was
    /// never initialized.
    fn header(&self) -> Option<Header> {
        let p = self.0.as_ptr();
        // SAFETY: region 0 is at least 32 KiB and stays mapped (see `Send` above); the header's
        // two copies are its first 96 bytes. Read as SQLite reads them: copy 0, a barrier,
        // copy 1 (writers write copy 1 first).
        let (a, b) = unsafe {
            let a = std::ptr::read_volatile(p.cast::<Header>());
            fence(Ordering::SeqCst);
            let b = std::ptr::read_volatile(p.add(HEADER_BYTES).cast::<Header>());
            (a, b)
        };
        (a == b && a[IS_INIT] != 0).then_some(a)
    }
}

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
        if self.held.is_some() && self.held != self.wal.as_ref().and_then(WalIndex::header) {
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
