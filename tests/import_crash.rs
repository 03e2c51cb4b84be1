//! Crash safety of `import-events`, with the real binary: an import killed with SIGKILL part-way
//! leaves exactly a prefix of the log applied (nothing half-applied: the store equals a clean
//! import of those lines), and running the same import again resumes after it and ends with
//! the same ledger as a one-shot import: nothing lost, nothing applied twice. The indexes the
//! import set aside (an import into an empty store builds its read-only indexes at the end)
//! are all there once the resumed import ends, as the migrations define them. On SQLite and on
//! PostgreSQL.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{check_invariants, devnet_config, devnet_events, digest_diff, write_tsv_file, Db, TestDb};
use sqlx::{Connection, PgConnection};
use stacks_ledger::ingest::import::{import_events, ImportOptions};
use stacks_ledger::ingest::progress::ProgressMode;
use stacks_ledger::ingest::{EventSink, RawEventLog};
use stacks_ledger::ledger::Network;
use stacks_ledger::store::{IndexDefinition, Store};

/// About 750 events: a few seconds of import in a debug build.
const BLOCKS: u64 = 120;
const TXS_PER_BLOCK: u32 = 8;

fn import_command(file: &Path, url: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_stacks-ledger"));
    // Small batches, so that the kill lands between two commits of this short log.
    c.args(["import-events", "--file", &file.display().to_string(), "--db", url, "--batch-events", "100"])
        .args(["--network", "testnet", "--log-level", "warn"])
        .env_remove("DATABASE_URL")
        .env_remove("PG_CONNECTION_URI")
        .env_remove("STACKS_CHAIN_ID")
        .env_remove("RUST_LOG")
        .env_remove("STACKS_API_LOG_LEVEL");
    for (k, _) in std::env::vars() {
        if k.starts_with("PG_") {
            c.env_remove(k);
        }
    }
    c
}

/// The highest stored event id, read on a connection of its own (read-only for SQLite); `None`
/// while the database or its tables do not exist yet.
async fn last_id(url: &str) -> Option<i64> {
    const SQL: &str = "SELECT MAX(id) FROM raw_events";
    match url.strip_prefix("sqlite://") {
        Some(path) if !Path::new(path).exists() => None,
        Some(path) => {
            let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
            let conn = rusqlite::Connection::open_with_flags(path, flags).ok()?;
            conn.busy_timeout(std::time::Duration::from_secs(10)).ok()?;
            conn.query_row(SQL, [], |r| r.get::<_, Option<i64>>(0)).ok().flatten()
        }
        None => {
            let mut conn = PgConnection::connect(url).await.ok()?;
            let id = sqlx::query_scalar::<_, Option<i64>>(SQL).fetch_one(&mut conn).await.ok().flatten();
            let _ = conn.close().await;
            id
        }
    }
}

/// Imports `file` into a fresh store with the library, for reference: its digest, and the
/// store's indexes as the migrations define them (read before the import), which the import
/// leaves the same.
async fn clean_import(
    engine: Db,
    name: &str,
    file: &Path,
) -> Option<(std::collections::BTreeMap<String, (u64, String)>, Vec<IndexDefinition>)> {
    let db = TestDb::new(engine, name).await?;
    let store = Store::open(&db.url, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap();
    let indexes = store.index_definitions().await.unwrap();
    let summary = import_events(&store, file, ImportOptions::default(), ProgressMode::Hidden).await.unwrap();
    assert!(summary.indexes_built > 0, "{name}: an import into an empty store defers indexes");
    assert_eq!(store.index_definitions().await.unwrap(), indexes, "{name}: indexes after the import");
    let digest = store.ledger_digest().await.unwrap();
    store.close().await;
    db.drop_db().await;
    Some((digest, indexes))
}

async fn crash_and_resume(engine: Db) {
    let Some(db) = TestDb::new(engine, "crash").await else { return };
    let label = format!("{engine:?} import crash");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("devnet.tsv");
    let (events, _) = devnet_events(devnet_config(5, BLOCKS, TXS_PER_BLOCK));
    write_tsv_file(&file, &events);
    let n = events.len() as i64;
    let threshold = n * 35 / 100;

    // Start the import and SIGKILL it once a third of the log is in.
    let started = Instant::now();
    let mut child =
        import_command(&file, &db.url).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let mut seen = None;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            panic!(
                "{label}: the import finished ({status}) before it could be killed; last id seen {seen:?}"
            );
        }
        seen = last_id(&db.url).await;
        if seen.is_some_and(|id| id >= threshold) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "{label}: the import makes no progress");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    let killed_after = started.elapsed();
    assert_eq!(status.signal(), Some(9), "{label}: {status}");

    // Some but not all events are in, exactly the lines 1..=k: no gap, nothing half-applied.
    // Opened as the resuming import opens it: the indexes it set aside stay so.
    let store =
        Store::open_for_replay(&db.url, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap();
    let deferred = store.deferred_index_count().await.unwrap();
    assert!(deferred > 0, "{label}: the killed import had set indexes aside");
    let k = store.last_event_id().await.unwrap().expect("events were applied before the kill");
    assert!(k >= threshold && k < n, "{label}: {k} of {n} events applied when killed");
    let stored = store.raw_events_after(None, usize::MAX).await.unwrap();
    assert_eq!(
        stored,
        events[..k as usize].to_vec(),
        "{label}: the stored log is not the file's first {k} lines"
    );
    check_invariants(&store, &format!("{label} (killed)"), true).await;
    let crashed = store.ledger_digest().await.unwrap();
    let prefix_file = dir.path().join("prefix.tsv");
    write_tsv_file(&prefix_file, &events[..k as usize]);
    let (prefix, _) = clean_import(engine, "crash_prefix", &prefix_file).await.unwrap();
    let diff = digest_diff(&crashed, &prefix);
    assert!(diff.is_empty(), "{label}: the killed import left more than {k} whole events: {diff:#?}");
    store.close().await;

    // The same command again resumes after event k and finishes the log.
    let resumed = Instant::now();
    let out = import_command(&file, &db.url).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{label}: {}", String::from_utf8_lossy(&out.stderr));
    let expected = format!("{} events applied, {k} skipped, ", n - k);
    assert!(stdout.starts_with(&expected), "{label}: {stdout}");
    assert!(stdout.contains(&format!("; {deferred} indexes built at the end")), "{label}: {stdout}");
    let resumed_secs = resumed.elapsed().as_secs_f64();

    let store = Store::open(&db.url, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap();
    let stored = store.raw_events_after(None, usize::MAX).await.unwrap();
    let lines = std::fs::read_to_string(&file).unwrap().lines().count();
    assert_eq!(stored.len(), lines, "{label}: raw events vs the file's lines");
    assert_eq!(stored, events, "{label}: the stored log is the file");
    let digest = store.ledger_digest().await.unwrap();
    assert_eq!(store.deferred_index_count().await.unwrap(), 0, "{label}: indexes left unbuilt");
    let indexes = store.index_definitions().await.unwrap();
    store.close().await;
    let (one_shot, schema_indexes) = clean_import(engine, "crash_oneshot", &file).await.unwrap();
    assert_eq!(indexes, schema_indexes, "{label}: indexes after the resumed import");
    let diff = digest_diff(&digest, &one_shot);
    assert!(diff.is_empty(), "{label}: killed + resumed ≠ one-shot: {diff:#?}");
    println!(
        "{label}: {n} events; killed after {:.2} s at event {k}; resumed {} events in {resumed_secs:.2} s; \
         ledger equals a one-shot import ({} rows); total {:.2} s",
        killed_after.as_secs_f64(),
        n - k,
        digest.values().map(|d| d.0).sum::<u64>(),
        started.elapsed().as_secs_f64()
    );
    db.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_import_killed_part_way_resumes_to_the_same_ledger() {
    crash_and_resume(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_import_killed_part_way_resumes_to_the_same_ledger() {
    crash_and_resume(Db::Postgres).await;
}
