//! The wal-index header of a SQLite connection, read through SQLite's own shared-memory mapping:
//! the store's only `unsafe` code (the crate denies it everywhere else).
//!
//! Every commit to a WAL database, by any connection of any process, rewrites the header (its
//! frame count, change counter and checksum), so two equal reads of it mean that nothing
//! committed in between. SQLite's own readers decide the same way before each transaction
//! (`walIndexTryHdr`). Reading it costs a comparison of 96 bytes, without a lock or a statement,
//! which is what lets a reader keep its transaction while nothing commits (`held`) and a cached
//! API answer check that it is current (`Store::generation`). `docs/benchmarks.md`
//! ("Machinery") has the measurements that keep both.
//!
//! No safe interface of rusqlite or SQLite exposes the header: `sqlite3_file_control` gives the
//! database's file, and its methods' `xShmMap` the region SQLite already mapped.

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

/// The wal-index header: equal bytes, no commit in between.
pub(in crate::store) type Header = [u8; HEADER_BYTES];

/// SQLite's mapping of a connection's wal-index (its first region). Valid while the connection
/// it was taken from is open: its owner keeps both together ([`super::held::ReadConn`]).
pub(super) struct WalIndex(NonNull<u8>);

// SAFETY: the pointer is SQLite's shared mapping of the wal-index, valid for as long as the
// connection that mapped it is open (the VFS unmaps a file's regions only when the last of the
// process's connections to it closes). `ReadConn` owns both and is moved between threads whole;
// the mapping is only ever read, with volatile reads.
unsafe impl Send for WalIndex {}

impl WalIndex {
    /// The wal-index `conn` reads through, once it has read a WAL database (`None` otherwise:
    /// a rollback-journal file, or a VFS without shared memory).
    pub(super) fn of(conn: &Connection) -> Option<WalIndex> {
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
    pub(super) fn header(&self) -> Option<Header> {
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

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Barrier};
    use std::time::{Duration, Instant};

    use rusqlite::{Connection, OpenFlags};

    use super::*;

    const CHILD_DB: &str = "STACKS_LEDGER_WAL_INDEX_CHILD_DB";

    fn writer(path: &str) -> Connection {
        let c = Connection::open(path).unwrap();
        c.busy_timeout(Duration::from_secs(10)).unwrap();
        c.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; CREATE TABLE IF NOT EXISTS t (n INTEGER PRIMARY KEY);")
            .unwrap();
        c
    }

    /// A read-only connection that has read the database once (which maps its wal-index).
    fn reader(path: &str) -> (Connection, WalIndex) {
        let c = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        c.busy_timeout(Duration::from_secs(10)).unwrap();
        rows(&c);
        let wal = WalIndex::of(&c).expect("a WAL database's wal-index");
        (c, wal)
    }

    fn rows(c: &Connection) -> i64 {
        c.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).unwrap()
    }

    /// Readers on four threads read the header around each statement while a writer commits:
    /// whenever the header was the same before and after a statement, the statement saw the
    /// state that header stands for, so one header never stands for two row counts.
    #[test]
    fn equal_headers_mean_the_same_committed_state_under_concurrent_readers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db").display().to_string();
        let w = writer(&path);
        let done = Arc::new(AtomicBool::new(false));
        let start = Arc::new(Barrier::new(5));
        let readers: Vec<_> = (0..4)
            .map(|_| {
                let (path, done, start) = (path.clone(), done.clone(), start.clone());
                std::thread::spawn(move || {
                    let (c, wal) = reader(&path);
                    let mut seen: HashMap<Header, i64> = HashMap::new();
                    let mut consistent_reads = 0;
                    start.wait();
                    while !done.load(Ordering::SeqCst) {
                        let before = wal.header();
                        let n = rows(&c);
                        if let Some(h) = before.filter(|h| wal.header() == Some(*h)) {
                            let first = *seen.entry(h).or_insert(n);
                            assert_eq!(first, n, "one header, two states");
                            consistent_reads += 1;
                        }
                    }
                    (seen.len(), consistent_reads, wal.header(), rows(&c))
                })
            })
            .collect();
        start.wait();
        for n in 0..2_000 {
            w.execute("INSERT INTO t (n) VALUES (?1)", [n]).unwrap();
        }
        done.store(true, Ordering::SeqCst);
        let last = reader(&path).1.header().expect("a header after the last commit");
        for r in readers {
            let (headers, reads, final_header, final_rows) = r.join().unwrap();
            assert!(headers > 1, "the readers saw commits change the header ({headers} headers)");
            assert!(reads > 0);
            assert_eq!((final_header, final_rows), (Some(last), 2_000));
        }
    }

    /// The child of the crash test: commits rows until it is killed.
    #[test]
    #[ignore = "run by crash_of_a_writer_process_leaves_the_header_readable"]
    fn crash_child_commits_until_killed() {
        let Ok(path) = std::env::var(CHILD_DB) else { return };
        let w = writer(&path);
        for n in 0.. {
            w.execute("INSERT INTO t (n) VALUES (?1)", [n]).unwrap();
        }
    }

    /// A writer process killed (SIGKILL) in the middle of its commits: a reader that mapped the
    /// wal-index before the crash reads the header as before, it stands for the rows the
    /// crashed process committed, and the next commit, by a new writer, changes it.
    #[test]
    fn crash_of_a_writer_process_leaves_the_header_readable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.db").display().to_string();
        drop(writer(&path));
        let (c, wal) = reader(&path);
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--ignored", "--exact", "store::lite::wal_index::tests::crash_child_commits_until_killed"])
            .env(CHILD_DB, &path)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while rows(&c) < 500 {
            assert!(Instant::now() < deadline, "the child committed nothing");
            std::thread::sleep(Duration::from_millis(5));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let header = wal.header().expect("the header after the crash");
        let committed = rows(&c);
        assert!(committed >= 500);
        assert_eq!(wal.header(), Some(header), "nothing commits after the crash");
        let w = writer(&path);
        w.execute("INSERT INTO t (n) VALUES (-1)", []).unwrap();
        assert_ne!(wal.header(), Some(header), "a commit after recovery changes the header");
        assert_eq!(rows(&c), committed + 1);
    }
}
