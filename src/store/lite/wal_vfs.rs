//! The SQLite writer's VFS: the default one ("unix"), except that the WAL frames of a commit
//! reach the file in a few writes of up to 128 KiB instead of two per frame.
//!
//! SQLite (3.46, `walWriteOneFrame`) writes a frame as its 24-byte header, then its page, two
//! calls at adjacent offsets, and a live block commits ~500 frames. Every call is a trip
//! through the kernel's buffered-write path, whose fixed cost (the system call, the inode's
//! lock and times, the dirty-page accounting) was half of a frame's: 4.1–4.6 µs a frame written
//! one by one against ~2 µs in writes of 40 frames (a C micro-benchmark of the pattern). So a
//! WAL file's frame writes are held back while they follow one another, header then page, and
//! go down as one write when the commit's last frame is complete (its header's "database size
//! after commit" is not 0), when the run reaches [`HELD_MAX`] bytes, or before any other call
//! on the file (reads, syncs, truncation, size, locks, close). The file's bytes and the order
//! of its calls' effects are the same; only the number of calls changes.
//!
//! Why this is safe: nothing reads a commit's frames before the commit publishes them (other
//! connections read only frames the WAL index lists, and SQLite lists a commit's frames after
//! its last `xWrite` returns, by which time they are in the file); this connection's own reads
//! of the WAL go through [`read`], which writes what is held first. A crash while frames are
//! held loses only an unpublished commit, as a crash before its writes would. The one other
//! 24-byte write SQLite makes to a WAL is `walRewriteChecksums` (a commit that had rewritten one
//! of its own frames), which reads each frame and then writes its header at the same offset,
//! with no page after it: a write at the offset of the file's previous read is therefore never
//! held. Only the writer's connection uses this VFS (`LiteWriter::open`).

use std::ffi::{c_int, c_void, CStr};
use std::sync::OnceLock;

use rusqlite::ffi;

/// The name connections open with (`Connection::open_with_flags_and_vfs`).
pub(super) const NAME: &str = "stacks-ledger-wal";
const NAME_C: &CStr = c"stacks-ledger-wal";

/// A WAL frame header's size (`WAL_FRAME_HDRSIZE`).
const HEADER: usize = 24;

/// Held frames are written once they reach this many bytes, even within a commit (a big
/// import's commit spills frames as its cache fills).
const HELD_MAX: usize = 8 << 20;

/// The most the default VFS writes in one call: its `seekAndWriteFd` keeps the low 17 bits of
/// a write's length (SQLite itself never writes more than a 64 KiB page and its header), so
/// held frames go down in writes of at most this many bytes (~31 frames of 4 KiB pages).
const MAX_WRITE: usize = 0x1ffff;

/// Our file: SQLite's base (our methods), the default VFS's file right after it in the same
/// allocation, and the held frames.
#[repr(C)]
struct File {
    base: ffi::sqlite3_file,
    real: *mut ffi::sqlite3_file,
    wal: bool,
    /// The offset of the last read, to recognize `walRewriteChecksums`' header writes.
    last_read: i64,
    /// Frame writes held back: where they start in the file, and their bytes (whole frames,
    /// then possibly a header whose page has not come yet). The buffer is kept across commits.
    held_at: i64,
    held: Vec<u8>,
    /// The held bytes end with a header that awaits its page.
    awaiting_page: bool,
    /// That header is a commit's last frame's.
    commit_frame: bool,
}

/// Where the default VFS's file starts in our allocation.
const REAL_AT: usize = std::mem::size_of::<File>().next_multiple_of(16);

/// Registers the VFS (once per process; not as the default); SQLite's result code if it could
/// not be.
pub(super) fn register() -> Result<(), c_int> {
    static DONE: OnceLock<Result<(), c_int>> = OnceLock::new();
    *DONE.get_or_init(|| {
        super::configure_sqlite();
        // SAFETY: `sqlite3_vfs_find` returns the default VFS, which lives as long as the process;
        // the VFS below is leaked, so it outlives every connection, as SQLite requires.
        unsafe {
            let real = ffi::sqlite3_vfs_find(std::ptr::null());
            if real.is_null() {
                return Err(ffi::SQLITE_ERROR);
            }
            let vfs = Box::leak(Box::new(ffi::sqlite3_vfs {
                iVersion: (*real).iVersion.min(3),
                szOsFile: (REAL_AT + (*real).szOsFile as usize) as c_int,
                mxPathname: (*real).mxPathname,
                pNext: std::ptr::null_mut(),
                zName: NAME_C.as_ptr(),
                pAppData: real.cast(),
                xOpen: Some(open),
                // The rest is the default VFS's own functions, called with this VFS: of the
                // unix VFS's, only `xOpen` reads the VFS it is given (its `pAppData`).
                ..*real
            }));
            match ffi::sqlite3_vfs_register(vfs, 0) {
                ffi::SQLITE_OK => Ok(()),
                rc => Err(rc),
            }
        }
    })
}

unsafe extern "C" fn open(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let real_vfs = (*vfs).pAppData as *mut ffi::sqlite3_vfs;
    let f = file as *mut File;
    let real = (file as *mut u8).add(REAL_AT) as *mut ffi::sqlite3_file;
    // SQLite hands us zeroed memory of `szOsFile` bytes; our fields are set before any use.
    std::ptr::write(
        f,
        File {
            base: ffi::sqlite3_file { pMethods: std::ptr::null() },
            real,
            wal: flags & ffi::SQLITE_OPEN_WAL != 0,
            last_read: -1,
            held_at: 0,
            held: Vec::new(),
            awaiting_page: false,
            commit_frame: false,
        },
    );
    let rc = ((*real_vfs).xOpen.expect("a VFS opens files"))(real_vfs, name, real, flags, out_flags);
    if (*real).pMethods.is_null() {
        // Not opened: SQLite will not call `xClose`, so drop our fields here.
        std::ptr::drop_in_place(f);
        return rc;
    }
    (*f).base.pMethods = &METHODS;
    rc
}

/// The default VFS's methods of `f`'s file.
unsafe fn real(f: *mut File) -> (*mut ffi::sqlite3_file, &'static ffi::sqlite3_io_methods) {
    let real = (*f).real;
    (real, &*(*real).pMethods)
}

/// Writes what is held, if anything, in as few calls as the default VFS allows.
unsafe fn flush(f: *mut File) -> c_int {
    if (*f).held.is_empty() {
        return ffi::SQLITE_OK;
    }
    (*f).awaiting_page = false;
    let (real, m) = real(f);
    let write = m.xWrite.expect("xWrite");
    #[cfg(test)]
    tests::FLUSHES.with(|n| n.set(n.get() + 1));
    let mut at = (*f).held_at;
    let mut rc = ffi::SQLITE_OK;
    for chunk in (*f).held.chunks(MAX_WRITE) {
        rc = write(real, chunk.as_ptr().cast(), chunk.len() as c_int, at);
        if rc != ffi::SQLITE_OK {
            break;
        }
        at += chunk.len() as i64;
    }
    (*f).held.clear();
    rc
}

/// Runs `then` after writing what is held; the write's error instead if it fails.
unsafe fn flushed(
    file: *mut ffi::sqlite3_file,
    then: impl FnOnce(*mut ffi::sqlite3_file, &ffi::sqlite3_io_methods) -> c_int,
) -> c_int {
    let f = file as *mut File;
    let rc = flush(f);
    if rc != ffi::SQLITE_OK {
        return rc;
    }
    let (real, m) = real(f);
    then(real, m)
}

unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    let f = file as *mut File;
    let flushed = flush(f);
    let (real, m) = real(f);
    let closed = (m.xClose.expect("xClose"))(real);
    std::ptr::drop_in_place(f);
    if flushed != ffi::SQLITE_OK {
        return flushed;
    }
    closed
}

unsafe extern "C" fn read(file: *mut ffi::sqlite3_file, buf: *mut c_void, amt: c_int, at: i64) -> c_int {
    (*(file as *mut File)).last_read = at;
    flushed(file, |real, m| (m.xRead.expect("xRead"))(real, buf, amt, at))
}

unsafe extern "C" fn write(file: *mut ffi::sqlite3_file, buf: *const c_void, amt: c_int, at: i64) -> c_int {
    let f = file as *mut File;
    let bytes: &[u8] = if amt > 0 { std::slice::from_raw_parts(buf.cast::<u8>(), amt as usize) } else { &[] };
    let held_end = (*f).held_at + (*f).held.len() as i64;
    // The page of the header held last: the frame is whole.
    if (*f).awaiting_page && at == held_end && !bytes.is_empty() {
        (*f).awaiting_page = false;
        (*f).held.extend_from_slice(bytes);
        if (*f).commit_frame || (*f).held.len() >= HELD_MAX {
            return flush(f);
        }
        return ffi::SQLITE_OK;
    }
    // A frame's header: held, after the frames it follows (if it follows them).
    if (*f).wal && bytes.len() == HEADER && at != (*f).last_read && !(*f).awaiting_page {
        if !(*f).held.is_empty() && at != held_end {
            let rc = flush(f);
            if rc != ffi::SQLITE_OK {
                return rc;
            }
        }
        if (*f).held.is_empty() {
            (*f).held_at = at;
        }
        (*f).held.extend_from_slice(bytes);
        (*f).awaiting_page = true;
        // WAL frame header: page number (4 bytes), then the database's size in pages after
        // the commit, for a commit's last frame, else 0.
        (*f).commit_frame = bytes[4..8] != [0, 0, 0, 0];
        #[cfg(test)]
        tests::FRAMES.with(|n| n.set(n.get() + 1));
        return ffi::SQLITE_OK;
    }
    let rc = flush(f);
    if rc != ffi::SQLITE_OK {
        return rc;
    }
    let (real, m) = real(f);
    (m.xWrite.expect("xWrite"))(real, buf, amt, at)
}

unsafe extern "C" fn truncate(file: *mut ffi::sqlite3_file, size: i64) -> c_int {
    flushed(file, |real, m| (m.xTruncate.expect("xTruncate"))(real, size))
}

unsafe extern "C" fn sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    flushed(file, |real, m| (m.xSync.expect("xSync"))(real, flags))
}

unsafe extern "C" fn file_size(file: *mut ffi::sqlite3_file, size: *mut i64) -> c_int {
    flushed(file, |real, m| (m.xFileSize.expect("xFileSize"))(real, size))
}

unsafe extern "C" fn lock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    flushed(file, |real, m| (m.xLock.expect("xLock"))(real, level))
}

unsafe extern "C" fn unlock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    flushed(file, |real, m| (m.xUnlock.expect("xUnlock"))(real, level))
}

unsafe extern "C" fn check_reserved_lock(file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    flushed(file, |real, m| (m.xCheckReservedLock.expect("xCheckReservedLock"))(real, out))
}

unsafe extern "C" fn file_control(file: *mut ffi::sqlite3_file, op: c_int, arg: *mut c_void) -> c_int {
    flushed(file, |real, m| (m.xFileControl.expect("xFileControl"))(real, op, arg))
}

unsafe extern "C" fn sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    let (real, m) = real(file as *mut File);
    (m.xSectorSize.expect("xSectorSize"))(real)
}

unsafe extern "C" fn device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    let (real, m) = real(file as *mut File);
    (m.xDeviceCharacteristics.expect("xDeviceCharacteristics"))(real)
}

// The shared-memory calls are made on the database file, which never holds a header.

unsafe extern "C" fn shm_map(
    file: *mut ffi::sqlite3_file,
    page: c_int,
    size: c_int,
    extend: c_int,
    out: *mut *mut c_void,
) -> c_int {
    let (real, m) = real(file as *mut File);
    match m.xShmMap {
        Some(x) => x(real, page, size, extend, out),
        None => ffi::SQLITE_IOERR,
    }
}

unsafe extern "C" fn shm_lock(file: *mut ffi::sqlite3_file, offset: c_int, n: c_int, flags: c_int) -> c_int {
    let (real, m) = real(file as *mut File);
    match m.xShmLock {
        Some(x) => x(real, offset, n, flags),
        None => ffi::SQLITE_IOERR,
    }
}

unsafe extern "C" fn shm_barrier(file: *mut ffi::sqlite3_file) {
    let (real, m) = real(file as *mut File);
    if let Some(x) = m.xShmBarrier {
        x(real);
    }
}

unsafe extern "C" fn shm_unmap(file: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    let (real, m) = real(file as *mut File);
    match m.xShmUnmap {
        Some(x) => x(real, delete),
        None => ffi::SQLITE_OK,
    }
}

unsafe extern "C" fn fetch(
    file: *mut ffi::sqlite3_file,
    at: i64,
    amt: c_int,
    out: *mut *mut c_void,
) -> c_int {
    flushed(file, |real, m| match m.xFetch {
        Some(x) => x(real, at, amt, out),
        None => {
            *out = std::ptr::null_mut();
            ffi::SQLITE_OK
        }
    })
}

unsafe extern "C" fn unfetch(file: *mut ffi::sqlite3_file, at: i64, p: *mut c_void) -> c_int {
    flushed(file, |real, m| match m.xUnfetch {
        Some(x) => x(real, at, p),
        None => ffi::SQLITE_OK,
    })
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(close),
    xRead: Some(read),
    xWrite: Some(write),
    xTruncate: Some(truncate),
    xSync: Some(sync),
    xFileSize: Some(file_size),
    xLock: Some(lock),
    xUnlock: Some(unlock),
    xCheckReservedLock: Some(check_reserved_lock),
    xFileControl: Some(file_control),
    xSectorSize: Some(sector_size),
    xDeviceCharacteristics: Some(device_characteristics),
    xShmMap: Some(shm_map),
    xShmLock: Some(shm_lock),
    xShmBarrier: Some(shm_barrier),
    xShmUnmap: Some(shm_unmap),
    xFetch: Some(fetch),
    xUnfetch: Some(unfetch),
};

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use rusqlite::{Connection, OpenFlags};

    thread_local! {
        /// Frames held, and writes of held frames, on this thread (each test's connection is
        /// used on its thread alone).
        pub(super) static FRAMES: Cell<u64> = const { Cell::new(0) };
        pub(super) static FLUSHES: Cell<u64> = const { Cell::new(0) };
    }

    fn counts() -> (u64, u64) {
        (FRAMES.with(Cell::get), FLUSHES.with(Cell::get))
    }

    fn writer(path: &std::path::Path, cache_pages: i64) -> Connection {
        super::register().unwrap();
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
        let c = Connection::open_with_flags_and_vfs(path, flags, super::NAME).unwrap();
        c.execute_batch(&format!(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 0; \
             PRAGMA cache_size = {cache_pages}; \
             CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT UNIQUE, v BLOB);"
        ))
        .unwrap();
        c
    }

    /// The database as a process that crashed now leaves it: the database file and the WAL,
    /// without the WAL index, so that opening the copy recovers every commit from the frames'
    /// headers (their page numbers and checksums) alone.
    fn crashed_copy(dir: &std::path::Path, path: &std::path::Path) -> Connection {
        let copy = dir.join("copy.db");
        std::fs::copy(path, &copy).unwrap();
        let wal = |p: &std::path::Path| std::path::PathBuf::from(format!("{}-wal", p.display()));
        assert!(std::fs::metadata(wal(path)).unwrap().len() > 0, "the commits are in the WAL");
        std::fs::copy(wal(path), wal(&copy)).unwrap();
        Connection::open(&copy).unwrap()
    }

    /// Inserts rows `ids`, each with a distinct key and a blob of `blob` bytes.
    fn insert_rows(c: &Connection, ids: std::ops::Range<i64>, blob: usize) {
        for id in ids {
            c.execute(
                "INSERT INTO t VALUES (?1, ?2, ?3)",
                (id, format!("{:x}", id * 7919), vec![id as u8; blob]),
            )
            .unwrap();
        }
    }

    fn check(c: &Connection, rows: i64) {
        let n: i64 = c.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(n, rows);
        let ok: String = c.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(ok, "ok");
    }

    #[test]
    fn every_commit_is_recovered_from_the_wal_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db");
        let c = writer(&path, 2000);
        let (frames, flushes) = counts();
        for batch in 0..20 {
            let tx = c.unchecked_transaction().unwrap();
            insert_rows(&tx, batch * 50..batch * 50 + 50, 300);
            tx.commit().unwrap();
        }
        let (frames, flushes) = (counts().0 - frames, counts().1 - flushes);
        assert_eq!(flushes, 20, "one write per commit");
        assert!(frames > 3 * 20, "several frames per commit ({frames})");
        check(&crashed_copy(dir.path(), &path), 1000);
        check(&c, 1000);
    }

    /// A transaction larger than the page cache writes frames before its commit, then rewrites
    /// some of them: the commit then rewrites those frames' headers alone
    /// (`walRewriteChecksums`), which must reach the file too.
    #[test]
    fn a_commit_that_rewrote_its_own_frames_is_recovered() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db");
        let c = writer(&path, 10);
        let tx = c.unchecked_transaction().unwrap();
        insert_rows(&tx, 0..2000, 200);
        tx.execute("UPDATE t SET v = zeroblob(180) WHERE id % 3 = 0", []).unwrap();
        tx.commit().unwrap();
        check(&crashed_copy(dir.path(), &path), 2000);
    }

    /// Another connection (the readers' VFS) sees each commit as soon as it returns: the
    /// frames are in the file before the WAL index lists them.
    #[test]
    fn a_reader_sees_each_commit_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db");
        let c = writer(&path, 2000);
        let reader = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        for batch in 0..30i64 {
            let tx = c.unchecked_transaction().unwrap();
            insert_rows(&tx, batch * 40..batch * 40 + 40, 500);
            tx.commit().unwrap();
            let n: i64 = reader.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0)).unwrap();
            assert_eq!(n, (batch + 1) * 40);
        }
    }

    /// A commit larger than [`super::HELD_MAX`] goes down in several writes, and is recovered.
    #[test]
    fn a_commit_larger_than_the_held_bound_is_recovered() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db");
        let c = writer(&path, 20_000);
        let (_, flushes) = counts();
        let tx = c.unchecked_transaction().unwrap();
        insert_rows(&tx, 0..3000, 4000);
        tx.commit().unwrap();
        assert!(counts().1 - flushes >= 2, "12 MB of frames in more than one write");
        check(&crashed_copy(dir.path(), &path), 3000);
    }
}
