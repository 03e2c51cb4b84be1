//! Shared test harness: a fresh store per test on SQLite or PostgreSQL, fixture replay.

#![allow(dead_code)]

pub mod live;
pub mod npm;
pub mod parity;
pub mod parity_allow;
pub mod server;
pub mod ws;

use ledger_read::TipReader;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use sqlx::{Connection, Executor, PgConnection};
use stacks_devnet::{DevnetConfig, Generator};
use stacks_ledger::config::{Config, ConfigArgs};
use stacks_ledger::events::{EventPath, RawEvent, TsvReader, TsvWriter};
use stacks_ledger::faucet::Faucets;
use stacks_ledger::ingest::{EventSink, IncomingEvent, IngestError, IngestOutcome};
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Db {
    Sqlite,
    Postgres,
}

/// The fixtures the incumbent's answers were recorded on (`../shared/oracle/<fixture>/`), with
/// their networks.
pub const ORACLE_FIXTURES: [(&str, Network); 8] = [
    ("mocknet", Network::Testnet),
    ("mainnet-block0", Network::Mainnet),
    ("epoch-3-transition", Network::Testnet),
    ("regtest-env-pox-4-stack-stx-in-reward-phase-S1", Network::Testnet),
    ("mainnet-reorg-scenario1", Network::Mainnet),
    ("mainnet-reorg-scenario2", Network::Mainnet),
    ("mainnet-out-of-order-microblock", Network::Mainnet),
    ("poisonmicroblock", Network::Mainnet),
];

static SEQ: AtomicU32 = AtomicU32::new(0);

pub fn in_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// A store that cleans up after itself.
pub struct TestStore {
    pub store: Arc<Store>,
    pub db: TestDb,
}

/// An empty database (a fresh SQLite path or a newly created PostgreSQL database) that is
/// removed by [`TestDb::drop_db`]; nothing has opened it yet.
pub struct TestDb {
    pub engine: Db,
    /// What `Store::open` and `--db` take.
    pub url: String,
    cleanup: Cleanup,
}

enum Cleanup {
    Dir(PathBuf),
    Pg { admin: String, db: String },
}

/// The PostgreSQL admin URL; `None` (after saying why) when it is not configured outside CI.
pub fn pg_admin_url() -> Option<String> {
    match std::env::var("STACKS_LEDGER_TEST_PG_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ if in_ci() => panic!("STACKS_LEDGER_TEST_PG_URL must be set in CI"),
        _ => {
            println!("skipping PostgreSQL: STACKS_LEDGER_TEST_PG_URL not set");
            None
        }
    }
}

impl TestDb {
    /// `None` (after saying why) when PostgreSQL is not configured outside CI.
    pub async fn new(db: Db, name: &str) -> Option<TestDb> {
        let unique = format!("{name}_{}_{}", std::process::id(), SEQ.fetch_add(1, Ordering::SeqCst));
        match db {
            Db::Sqlite => {
                let dir = std::env::temp_dir().join(format!("stacks-ledger-test-{unique}"));
                let _ = std::fs::remove_dir_all(&dir);
                let url = format!("sqlite://{}/nested/ledger.db", dir.display());
                Some(TestDb { engine: db, url, cleanup: Cleanup::Dir(dir) })
            }
            Db::Postgres => {
                let admin = pg_admin_url()?;
                let dbname = format!("sl_{}", unique.to_ascii_lowercase().replace('-', "_"));
                let mut c = PgConnection::connect(&admin).await.expect("connect to PostgreSQL");
                c.execute(format!("DROP DATABASE IF EXISTS {dbname}").as_str()).await.unwrap();
                c.execute(format!("CREATE DATABASE {dbname}").as_str()).await.unwrap();
                c.close().await.unwrap();
                let url = with_database(&admin, &dbname);
                Some(TestDb { engine: db, url, cleanup: Cleanup::Pg { admin, db: dbname } })
            }
        }
    }

    /// The PostgreSQL database's name, for `Db::Postgres`.
    pub fn database_name(&self) -> Option<&str> {
        match &self.cleanup {
            Cleanup::Pg { db, .. } => Some(db),
            Cleanup::Dir(_) => None,
        }
    }

    /// The SQLite file, for `Db::Sqlite`.
    pub fn sqlite_path(&self) -> Option<PathBuf> {
        self.url.strip_prefix("sqlite://").map(PathBuf::from)
    }

    /// Runs `sql` on a connection of the test's own, beside the store's (to change what the
    /// store wrote behind its back); the rows it changed.
    pub async fn execute_raw(&self, sql: &str) -> u64 {
        match self.sqlite_path() {
            Some(path) => {
                let c = rusqlite::Connection::open(path).unwrap();
                c.busy_timeout(std::time::Duration::from_secs(10)).unwrap();
                c.execute(sql, []).unwrap() as u64
            }
            None => {
                let mut c = PgConnection::connect(&self.url).await.unwrap();
                let n = c.execute(sql).await.unwrap().rows_affected();
                c.close().await.unwrap();
                n
            }
        }
    }

    pub async fn drop_db(self) {
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

impl TestStore {
    /// `None` (after saying why) when PostgreSQL is not configured outside CI.
    pub async fn new(db: Db, name: &str, network: Network) -> Option<TestStore> {
        let db = TestDb::new(db, name).await?;
        let store = Store::open(&db.url, network, stacks_ledger::compose::tx_render())
            .await
            .expect("open the test store");
        Some(TestStore { store: Arc::new(store), db })
    }

    pub async fn finish(self) {
        self.store.close().await;
        self.db.drop_db().await;
    }
}

/// The admin URL with its database replaced.
pub fn with_database(url: &str, db: &str) -> String {
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
    ingest_all(store, reader.map(Result::unwrap), refused, &path.display().to_string()).await
}

/// Ingests `events` through `EventSink::ingest`, with their ids and timestamps, in order.
/// Panics on an error, except an `Invalid` refusal of an id listed in `refused`.
pub async fn ingest_all(
    store: &Store,
    events: impl IntoIterator<Item = RawEvent>,
    refused: &[i64],
    label: &str,
) -> Replay {
    let mut r = Replay::default();
    for ev in events {
        match store.ingest(incoming(&ev)).await {
            Ok(IngestOutcome::Applied { .. } | IngestOutcome::Logged { .. }) => r.applied += 1,
            Ok(IngestOutcome::AlreadyStored { .. }) => r.already += 1,
            Err(IngestError::Invalid { reason, .. }) if refused.contains(&ev.id) => {
                println!("event {} refused as expected: {reason}", ev.id);
                r.refused += 1;
            }
            Err(e) => panic!("{label}: event {} ({}): {e}", ev.id, ev.path),
        }
    }
    r
}

/// A logged event as the sink receives it in a replay: with its id and timestamp.
pub fn incoming(ev: &RawEvent) -> IncomingEvent {
    IncomingEvent {
        id: Some(ev.id),
        receive_timestamp: Some(ev.receive_timestamp.clone()),
        path: EventPath::from_path(&ev.path).unwrap(),
        payload: ev.payload.clone(),
    }
}

/// Every event of a TSV log.
pub fn read_tsv(path: &Path) -> Vec<RawEvent> {
    TsvReader::new(BufReader::new(File::open(path).unwrap())).map(Result::unwrap).collect()
}

/// The boot addresses: genesis boot transactions all use nonce 0.
pub const BOOT: [&str; 2] = ["SP000000000000000000002Q6VF78", "ST000000000000000000002AMW42H"];

/// The store's ledger invariants, whatever the events were:
/// - every account's balance (liquid and locked) is the sum of its canonical successful
///   operations, the tip cache equals the balance history at the tip, and the balance
///   `/extended` derives from the totals kept at ingest is the same figure;
/// - the supply identity: Σ balances = mints + miner rewards − burns − fees;
/// - every account's canonical nonces are one contiguous run (from 0 when the log starts at
///   genesis), and the next nonce is one past it;
/// - one canonical block per height from the tip down to height 1, each the parent of the next;
/// - each block's `tx_ids` lists its rows as the replaced queries did;
/// - the canonical transaction total, summed from the blocks' counts, is the rows' count.
pub async fn check_invariants(store: &Store, label: &str, from_genesis: bool) {
    // Every account's balance is the sum of its canonical operations (tip cache and history).
    let tip = store.tip().await.unwrap().map(|t| t.block).expect("a canonical tip");
    let mut accounts: Vec<String> = store.accounts().await.unwrap().into_iter().map(|a| a.0).collect();
    accounts.extend(store.operation_accounts().await.unwrap());
    accounts.sort();
    accounts.dedup();
    let mut total = 0i64;
    for a in &accounts {
        let bal = store.balance(a, None).await.unwrap();
        assert_eq!(bal, store.operations_sum(a).await.unwrap(), "{label}: {a} balance ≠ Σ operations");
        assert_eq!(
            bal,
            store.balance(a, Some(tip.block_height)).await.unwrap(),
            "{label}: {a} tip cache ≠ history"
        );
        // `/extended`'s balance, derived from the totals kept at ingest, is the same figure.
        let kept = store.stx_sums_kept(a).await.unwrap();
        assert_eq!(
            kept.balance(),
            i128::from(bal.0 + bal.1),
            "{label}: {a} balance from the kept totals ≠ the balance index"
        );
        total += bal.0 + bal.1;
    }
    // The totals kept at ingest for `/balances` equal the sums over each account's history.
    let bad = store.account_totals_mismatches().await.unwrap();
    assert!(bad.is_empty(), "{label}: kept totals ≠ recomputed for {bad:?}");
    // Total supply: issuance less destruction equals what the accounts hold.
    let supply = store.supply().await.unwrap();
    assert_eq!(supply.total(), total, "{label}: supply {supply:?}");

    // Each principal link keeps its transaction's microblock sequence (migration 0041).
    let (_, bad_seqs) = store.account_tx_seqs().await.unwrap();
    assert_eq!(bad_seqs, 0, "{label}: account_txs.seq ≠ its transaction's microblock sequence");

    // Each principal link points at its transaction's row (SQLite, migration 0045).
    let bad = store.account_tx_rid_mismatches().await.unwrap();
    assert!(bad.is_empty(), "{label}: account_txs.tx_rid ≠ its transaction's rowid: {bad:?}");

    // Each block's materialized transaction ids are what its rows and the queries they replace
    // derive (migration 0042).
    let bad = store.block_tx_id_mismatches().await.unwrap();
    assert!(bad.is_empty(), "{label}: blocks.tx_ids ≠ derived: {bad:?}");
    // The canonical transaction total summed from the blocks' counts is the rows' count.
    let bad = store.tx_total_mismatch().await.unwrap();
    assert!(bad.is_none(), "{label}: Σ blocks.tx_count over canonical blocks ≠ canonical txs: {bad:?}");
    // Each transaction row's copy of its block's fields is the block's (migration 0043).
    let bad = store.tx_block_field_mismatches().await.unwrap();
    assert!(bad.is_empty(), "{label}: txs block fields ≠ their block's: {bad:?}");
    // Each mined row's stored row text is the JSON its fields and raw bytes render (0044).
    let bad = store.tx_row_text_mismatches().await.unwrap();
    assert!(bad.is_empty(), "{label}: stored row texts ≠ rendered: {bad:?}");

    // Nonces: each account's canonical nonces are one contiguous run, and the next nonce is
    // one past it (genesis boot transactions all use nonce 0, so the boot address is exempt).
    for u in store.nonce_usage().await.unwrap() {
        if BOOT.contains(&u.account.as_str()) {
            continue;
        }
        assert_eq!(u.tx_count, u.distinct_nonces, "{label}: {u:?} reuses a nonce");
        assert_eq!(u.distinct_nonces, u.max_nonce - u.min_nonce + 1, "{label}: {u:?} has a gap");
        if from_genesis {
            assert_eq!(u.min_nonce, 0, "{label}: {u:?}");
        }
        assert_eq!(store.next_nonce(&u.account).await.unwrap(), u.max_nonce + 1, "{label}: {u:?}");
    }

    // One canonical block per height from the first to the tip, each the parent of the next.
    let mut height = tip.block_height;
    let mut child = store.canonical_block_at(height).await.unwrap().expect("the tip's block");
    while height > 1 {
        height -= 1;
        let b = store.canonical_block_at(height).await.unwrap();
        let Some(b) = b else { break };
        assert_eq!(child.parent_index_block_hash, b.index_block_hash, "{label}: chain broken at {height}");
        let at = store.blocks_at_height(height).await.unwrap();
        assert_eq!(at.iter().filter(|x| x.canonical).count(), 1, "{label}: height {height}");
        child = b;
    }
    assert!(child.block_height <= 1, "{label}: canonical chain stops at {}", child.block_height);
}

/// Ingesting `events` again applies nothing and changes no table.
pub async fn check_reingest_adds_nothing(store: &Store, events: &[RawEvent], refused: &[i64], label: &str) {
    let before = store.table_counts().await.unwrap();
    let digest = store.ledger_digest().await.unwrap();
    let again = ingest_all(store, events.iter().cloned(), refused, label).await;
    assert_eq!(again.applied, 0, "{label}: re-ingest applied events");
    assert_eq!(store.table_counts().await.unwrap(), before, "{label}: re-ingest changed the store");
    assert_eq!(store.ledger_digest().await.unwrap(), digest, "{label}: re-ingest changed a row");
}

/// The tables whose digests differ, with both sides, for assertion messages.
pub fn digest_diff(a: &BTreeMap<String, (u64, String)>, b: &BTreeMap<String, (u64, String)>) -> Vec<String> {
    let mut tables: Vec<&String> = a.keys().chain(b.keys()).collect();
    tables.sort();
    tables.dedup();
    tables
        .into_iter()
        .filter(|t| a.get(*t) != b.get(*t))
        .map(|t| format!("{t}: {:?} vs {:?}", a.get(t), b.get(t)))
        .collect()
}

/// A generated chain with forks and microblocks, small enough for a debug-build test: short
/// reward maturity so miner rewards pay out, frequent forks and streams.
pub fn devnet_config(seed: u64, blocks: u64, txs_per_block: u32) -> DevnetConfig {
    DevnetConfig {
        seed,
        blocks,
        txs_per_block,
        forks: true,
        microblocks: true,
        accounts: 12,
        reward_maturity: 6,
        fork_per_mille: 120,
        microblock_per_mille: 500,
        ..DevnetConfig::default()
    }
}

/// Every event of the chain, and the generator after it (its ledger is the chain's end state).
pub fn devnet_events(cfg: DevnetConfig) -> (Vec<RawEvent>, Generator) {
    let mut generator = Generator::new(cfg).unwrap();
    let events = generator.by_ref().map(|e| e.unwrap().into_raw()).collect();
    (events, generator)
}

/// Writes `events` as a TSV log.
pub fn write_tsv_file(path: &Path, events: &[RawEvent]) {
    let mut w = TsvWriter::new(std::io::BufWriter::new(File::create(path).unwrap()));
    for e in events {
        w.write_event(e).unwrap();
    }
    w.flush().unwrap();
}

/// The server's configuration as `serve` reads it with no flags: from the process environment,
/// so that the variables a test sets take effect. An unusable value fails the test, naming it.
pub fn env_config() -> Config {
    Config::from_process_env(&ConfigArgs::default()).unwrap_or_else(|e| panic!("configuration: {e}"))
}

/// Every route of the public API over `store` with no node (`api::routes`), configured by the
/// process environment ([`env_config`]).
pub fn routes(
    store: Arc<Store>,
) -> impl warp::Filter<Extract = (impl warp::Reply,), Error = std::convert::Infallible> + Clone {
    stacks_ledger::api::routes(store, &env_config()).unwrap_or_else(|e| panic!("faucets: {e}"))
}

/// The faucets the process environment configures over `store` ([`env_config`]).
pub fn faucets(store: &Arc<Store>) -> Arc<Faucets> {
    stacks_ledger::api::faucets(store, &env_config()).unwrap_or_else(|e| panic!("faucets: {e}"))
}

/// Serves `filter` (a fake node, bitcoind, …) on an ephemeral loopback port for the rest of the
/// test.
pub async fn serve<F>(filter: F) -> std::net::SocketAddr
where
    F: warp::Filter + Clone + Send + Sync + 'static,
    F::Extract: warp::Reply,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(warp::serve(filter).incoming(listener).run());
    addr
}
