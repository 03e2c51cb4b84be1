//! `import-events` into an empty store sets the indexes only reads use aside and builds them
//! at its end (ledger-core/src/store/bulk.rs). Whatever way the import ends, the store is left with every
//! index the migrations define and the ledger of event-by-event ingestion:
//! - a whole import (a forking chain with microblocks: reorgs run while indexes are set aside);
//! - an import stopped by a bad line;
//! - an import killed part-way: `Store::open` builds what it left, `Store::open_for_replay`
//!   leaves them for the resuming import; reads answer meanwhile;
//! - `--wipe-db` over a full store.
//!
//! On SQLite and PostgreSQL.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use common::{
    check_invariants, devnet_config, devnet_events, digest_diff, incoming, ingest_all, write_tsv_file, Db,
    TestDb, TestStore,
};
use stacks_ledger::events::RawEvent;
use stacks_ledger::ingest::import::{import_events, ImportError, ImportOptions, ImportSummary};
use stacks_ledger::ingest::progress::ProgressMode;
use stacks_ledger::ingest::{EventSink, IngestOutcome};
use stacks_ledger::ledger::Network;
use stacks_ledger::store::{IndexDefinition, Store};

type Digest = BTreeMap<String, (u64, String)>;

/// The reference: the events ingested one by one (no index set aside), and the indexes of a
/// freshly migrated store.
async fn reference(engine: Db, events: &[RawEvent]) -> Option<(Digest, Vec<IndexDefinition>)> {
    let ts = TestStore::new(engine, "bulk_ref", Network::Testnet).await?;
    let indexes = ts.store.index_definitions().await.unwrap();
    assert!(indexes.len() > 50, "{engine:?}: {} indexes", indexes.len());
    ingest_all(&ts.store, events.iter().cloned(), &[], "reference").await;
    let digest = ts.store.ledger_digest().await.unwrap();
    ts.finish().await;
    Some((digest, indexes))
}

/// Asserts that `store` has every index, none left aside, and (when given) the digest.
async fn assert_whole(store: &Store, indexes: &[IndexDefinition], digest: Option<&Digest>, label: &str) {
    assert_eq!(store.deferred_index_count().await.unwrap(), 0, "{label}: indexes left aside");
    assert_eq!(store.index_definitions().await.unwrap(), indexes, "{label}: indexes");
    if let Some(digest) = digest {
        let diff = digest_diff(&store.ledger_digest().await.unwrap(), digest);
        assert!(diff.is_empty(), "{label}: ledger differs from event-by-event ingestion: {diff:#?}");
    }
}

async fn import(store: &Store, file: &Path, wipe: bool) -> Result<ImportSummary, ImportError> {
    import_events(store, file, ImportOptions { wipe, ..ImportOptions::default() }, ProgressMode::Hidden).await
}

async fn bulk_replay(engine: Db) {
    let (events, _) = devnet_events(devnet_config(23, 60, 6));
    let Some((digest, indexes)) = reference(engine, &events).await else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("devnet.tsv");
    write_tsv_file(&file, &events);

    // A whole import; then again with --wipe-db over the full store.
    let ts = TestStore::new(engine, "bulk_whole", Network::Testnet).await.unwrap();
    let summary = import(&ts.store, &file, false).await.unwrap();
    assert_eq!(summary.counts.applied as usize, events.len());
    assert!(summary.indexes_built >= 30, "{engine:?}: {} indexes built", summary.indexes_built);
    assert!(summary.to_string().contains(&format!("; {} indexes built at the end", summary.indexes_built)));
    assert_whole(&ts.store, &indexes, Some(&digest), &format!("{engine:?} whole import")).await;
    check_invariants(&ts.store, &format!("{engine:?} whole import"), true).await;
    let summary = import(&ts.store, &file, true).await.unwrap();
    assert!(summary.wiped && summary.indexes_built >= 30, "{engine:?}: {summary}");
    assert_whole(&ts.store, &indexes, Some(&digest), &format!("{engine:?} --wipe-db import")).await;
    ts.finish().await;

    // A bad line half-way: the lines before it are in, and so is every index.
    let half = events.len() / 2;
    let bad = dir.path().join("bad.tsv");
    write_tsv_file(&bad, &events[..half]);
    std::fs::OpenOptions::new().append(true).open(&bad).unwrap().write_all(b"not a raw event\n").unwrap();
    let ts = TestStore::new(engine, "bulk_bad", Network::Testnet).await.unwrap();
    let err = import(&ts.store, &bad, false).await.unwrap_err();
    assert_eq!(err.line(), Some(half as u64 + 1), "{engine:?}: {err}");
    assert_eq!(ts.store.last_event_id().await.unwrap(), Some(events[half - 1].id));
    assert_whole(&ts.store, &indexes, None, &format!("{engine:?} import stopped by a bad line")).await;
    ts.finish().await;

    interrupted(engine, &events, &indexes, &digest, &file).await;
}

/// An import that stopped with its indexes aside (as a killed one leaves the store).
async fn interrupted(
    engine: Db,
    events: &[RawEvent],
    indexes: &[IndexDefinition],
    digest: &Digest,
    file: &Path,
) {
    let label = format!("{engine:?} interrupted import");
    let db = TestDb::new(engine, "bulk_killed").await.unwrap();
    let store = Store::open(&db.url, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap();
    let deferred = store.defer_read_indexes().await.unwrap();
    assert!(deferred >= 30, "{label}: {deferred} indexes set aside");
    assert_eq!(store.defer_read_indexes().await.unwrap(), 0, "{label}: set aside twice");
    assert_eq!(store.deferred_index_count().await.unwrap(), deferred);
    let half = events.len() / 2;
    let outcomes = store.ingest_many(events[..half].iter().map(incoming).collect()).await.unwrap();
    assert!(outcomes.iter().all(|o| matches!(o, Ok(IngestOutcome::Applied { .. }))), "{label}");
    // Reads answer without the read-only indexes, only slower.
    check_invariants(&store, &format!("{label} (indexes aside)"), true).await;
    store.close().await;

    // The resuming import's open keeps them aside, and its end builds them.
    let store =
        Store::open_for_replay(&db.url, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap();
    assert_eq!(store.deferred_index_count().await.unwrap(), deferred, "{label}: reopened for the replay");
    let summary = import(&store, file, false).await.unwrap();
    assert_eq!(summary.resumed_after, Some(events[half - 1].id));
    assert_eq!(summary.indexes_built, deferred, "{label}: built by the resumed import");
    assert_whole(&store, indexes, Some(digest), &format!("{label}, resumed")).await;
    store.close().await;
    db.drop_db().await;

    // Any other open builds them first.
    let db = TestDb::new(engine, "bulk_reopened").await.unwrap();
    let store = Store::open(&db.url, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap();
    store.defer_read_indexes().await.unwrap();
    let outcomes = store.ingest_many(events[..half].iter().map(incoming).collect()).await.unwrap();
    assert!(outcomes.iter().all(|o| o.is_ok()), "{label}");
    store.close().await;
    let store = Store::open(&db.url, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap();
    assert_whole(&store, indexes, None, &format!("{label}, reopened")).await;
    store.close().await;
    db.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_bulk_replay_ends_with_every_index() {
    bulk_replay(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_bulk_replay_ends_with_every_index() {
    bulk_replay(Db::Postgres).await;
}
