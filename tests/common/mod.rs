//! Shared test harness: a fresh store per test on SQLite or PostgreSQL, fixture replay.

#![allow(dead_code)]

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use sqlx::{Connection, Executor, PgConnection};
use stacks_ledger::events::{EventPath, TsvReader};
use stacks_ledger::ingest::{EventSink, IncomingEvent, IngestError, IngestOutcome};
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Db {
    Sqlite,
    Postgres,
}

static SEQ: AtomicU32 = AtomicU32::new(0);

fn in_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// A store that cleans up after itself.
pub struct TestStore {
    pub store: Arc<Store>,
    cleanup: Cleanup,
}

enum Cleanup {
    Dir(PathBuf),
    Pg { admin: String, db: String },
}

impl TestStore {
    /// `None` (after saying why) when PostgreSQL is not configured outside CI.
    pub async fn new(db: Db, name: &str, network: Network) -> Option<TestStore> {
        let unique = format!("{name}_{}_{}", std::process::id(), SEQ.fetch_add(1, Ordering::SeqCst));
        match db {
            Db::Sqlite => {
                let dir = std::env::temp_dir().join(format!("stacks-ledger-test-{unique}"));
                let _ = std::fs::remove_dir_all(&dir);
                let url = format!("sqlite://{}/nested/ledger.db", dir.display());
                let store = Store::open(&url, network).await.expect("open sqlite store");
                Some(TestStore { store: Arc::new(store), cleanup: Cleanup::Dir(dir) })
            }
            Db::Postgres => {
                let admin = match std::env::var("STACKS_LEDGER_TEST_PG_URL") {
                    Ok(u) if !u.is_empty() => u,
                    _ if in_ci() => panic!("STACKS_LEDGER_TEST_PG_URL must be set in CI"),
                    _ => {
                        println!("skipping PostgreSQL: STACKS_LEDGER_TEST_PG_URL not set");
                        return None;
                    }
                };
                let dbname = format!("sl_{}", unique.to_ascii_lowercase().replace('-', "_"));
                let mut c = PgConnection::connect(&admin).await.expect("connect to PostgreSQL");
                c.execute(format!("DROP DATABASE IF EXISTS {dbname}").as_str()).await.unwrap();
                c.execute(format!("CREATE DATABASE {dbname}").as_str()).await.unwrap();
                c.close().await.unwrap();
                let url = with_database(&admin, &dbname);
                let store = Store::open(&url, network).await.expect("open postgres store");
                Some(TestStore { store: Arc::new(store), cleanup: Cleanup::Pg { admin, db: dbname } })
            }
        }
    }

    pub async fn finish(self) {
        self.store.close().await;
        match self.cleanup {
            Cleanup::Dir(d) => {
                let _ = std::fs::remove_dir_all(d);
            }
            Cleanup::Pg { admin, db } => {
                if let Ok(mut c) = PgConnection::connect(&admin).await {
                    let _ = c.execute(format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)").as_str()).await;
                }
            }
        }
    }
}

/// The admin URL with its database replaced.
fn with_database(url: &str, db: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let scheme_end = base.find("://").map(|i| i + 3).unwrap_or(0);
    let host_part = &base[scheme_end..];
    let prefix = match host_part.find('/') {
        Some(i) => &base[..scheme_end + i],
        None => base,
    };
    format!("{prefix}/{db}{query}")
}

/// Path of a shared file; `None` (after saying so) when it is missing outside CI.
pub fn shared_file(rel: &str) -> Option<PathBuf> {
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared")).join(rel);
    if path.exists() {
        return Some(path);
    }
    if in_ci() {
        panic!("shared file {} not found", path.display());
    }
    println!("skipping: {} not found", path.display());
    None
}

#[derive(Debug, Default, Clone, Copy)]
pub struct Replay {
    pub applied: usize,
    pub already: usize,
    pub refused: usize,
}

/// Ingests every event of a TSV log through `EventSink::ingest`, with its ids and timestamps.
pub async fn replay(store: &Store, path: &PathBuf, refused: &[i64]) -> Replay {
    let reader = TsvReader::new(BufReader::new(File::open(path).unwrap()));
    let mut r = Replay::default();
    for ev in reader {
        let ev = ev.unwrap();
        let event = IncomingEvent {
            id: Some(ev.id),
            receive_timestamp: Some(ev.receive_timestamp.clone()),
            path: EventPath::from_path(&ev.path).unwrap(),
            payload: ev.payload,
        };
        match store.ingest(event).await {
            Ok(IngestOutcome::Applied { .. }) => r.applied += 1,
            Ok(IngestOutcome::AlreadyStored { .. }) => r.already += 1,
            Err(IngestError::Invalid { reason, .. }) if refused.contains(&ev.id) => {
                println!("event {} refused as expected: {reason}", ev.id);
                r.refused += 1;
            }
            Err(e) => panic!("{}: event {} ({}): {e}", path.display(), ev.id, ev.path),
        }
    }
    r
}
