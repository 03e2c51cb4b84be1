//! `export-events` then `import-events` reproduces the ledger exactly: a store fed a log, its
//! raw event log exported to TSV, and that TSV imported into a fresh store give the same
//! `Store::ledger_digest` (every table, every row, canonical or not), on the same engine and on
//! the other one (the engines agree). The digest itself is shown to notice a one-value change.

mod common;

use std::path::Path;
use std::time::Instant;

use common::{devnet_config, devnet_events, digest_diff, ingest_all, read_tsv, shared_file, Db, TestStore};
use stacks_ledger::events::RawEvent;
use stacks_ledger::ingest::export::export_events;
use stacks_ledger::ingest::import::{import_events, ImportOptions};
use stacks_ledger::ingest::progress::ProgressMode;
use stacks_ledger::ledger::Network;

fn other(db: Db) -> Db {
    match db {
        Db::Sqlite => Db::Postgres,
        Db::Postgres => Db::Sqlite,
    }
}

/// Feeds `events` to a `source` store, exports its log, imports the export on both engines and
/// compares digests. `original` is the log file the events came from, if any: the export must
/// reproduce it byte for byte.
async fn round_trip(
    source: Db,
    name: &str,
    network: Network,
    events: Vec<RawEvent>,
    original: Option<&Path>,
) {
    let label = format!("{source:?} {name}");
    let Some(a) = TestStore::new(source, &format!("{name}_src"), network).await else { return };
    let started = Instant::now();
    let fed = ingest_all(&a.store, events.iter().cloned(), &[], &label).await;
    assert_eq!(fed.applied, events.len(), "{label}");
    let digest = a.store.ledger_digest().await.unwrap();

    // The digest covers every table the store counts, with the same row counts.
    let counts = a.store.table_counts().await.unwrap();
    for (table, n) in &counts {
        assert_eq!(digest.get(*table).map(|d| d.0 as i64), Some(*n), "{label}: digest of {table}");
    }
    assert!(digest["blocks"].0 > 0 && digest["txs"].0 > 0, "{label}: {digest:?}");

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("export.tsv");
    let exported = export_events(&*a.store, &file, false).await.unwrap();
    assert_eq!(exported.events as usize, events.len(), "{label}");
    assert_eq!(read_tsv(&file), events, "{label}: the export is the log that was fed");
    if let Some(original) = original {
        assert!(
            std::fs::read(&file).unwrap() == std::fs::read(original).unwrap(),
            "{label}: the export differs from {} byte-wise",
            original.display()
        );
    }

    for target in [source, other(source)] {
        let Some(b) = TestStore::new(target, &format!("{name}_dst"), network).await else { continue };
        let t = Instant::now();
        let summary =
            import_events(&*b.store, &file, ImportOptions::default(), ProgressMode::Hidden).await.unwrap();
        assert_eq!(summary.counts.applied as usize, events.len(), "{label} → {target:?}");
        let imported = b.store.ledger_digest().await.unwrap();
        let diff = digest_diff(&digest, &imported);
        assert!(diff.is_empty(), "{label} → {target:?}: ledgers differ: {diff:#?}");
        println!(
            "{label} → {target:?}: {} events re-imported in {:.2} s, {} tables identical ({} rows)",
            events.len(),
            t.elapsed().as_secs_f64(),
            imported.len(),
            imported.values().map(|d| d.0).sum::<u64>()
        );
        b.finish().await;
    }

    digest_notices_changes(&a, &label).await;
    println!("{label}: total {:.2} s", started.elapsed().as_secs_f64());
    a.finish().await;
}

/// One flipped flag, or a NULL turned into `''`, changes the digest of that table only; undoing
/// the change restores it.
async fn digest_notices_changes(ts: &TestStore, label: &str) {
    let store = &ts.store;
    let before = store.ledger_digest().await.unwrap();
    let block = "(SELECT index_block_hash FROM blocks ORDER BY index_block_hash LIMIT 1)";
    let flip = format!("UPDATE blocks SET canonical = NOT canonical WHERE index_block_hash = {block}");
    ts.db.execute_raw(&flip).await;
    let flipped = store.ledger_digest().await.unwrap();
    let diff = digest_diff(&before, &flipped);
    assert_eq!(diff.len(), 1, "{label}: {diff:?}");
    assert!(diff[0].starts_with("blocks:"), "{label}: {diff:?}");
    assert_eq!(flipped["blocks"].0, before["blocks"].0, "{label}");
    ts.db.execute_raw(&flip).await;
    assert_eq!(store.ledger_digest().await.unwrap(), before, "{label}: flipped back");

    let null_to_empty = "UPDATE txs SET vm_error = '' WHERE tx_id = \
        (SELECT tx_id FROM txs WHERE vm_error IS NULL ORDER BY tx_id LIMIT 1) AND vm_error IS NULL";
    assert_eq!(ts.db.execute_raw(null_to_empty).await, 1, "{label}");
    let diff = digest_diff(&before, &store.ledger_digest().await.unwrap());
    assert!(diff.len() == 1 && diff[0].starts_with("txs:"), "{label}: NULL vs '': {diff:?}");
}

async fn fixture(source: Db, file: &str, network: Network) {
    let Some(path) = shared_file(file) else { return };
    let name = file.rsplit('/').next().unwrap().trim_end_matches(".tsv").replace(['-', '.'], "_");
    round_trip(source, &name, network, read_tsv(&path), Some(&path)).await;
}

async fn devnet(source: Db) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("devnet.tsv");
    let (events, _) = devnet_events(devnet_config(4, 60, 5));
    common::write_tsv_file(&path, &events);
    round_trip(source, "devnet", Network::Testnet, events, Some(&path)).await;
}

macro_rules! engine_tests {
    ($engine:ident, $db:expr) => {
        mod $engine {
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn reorg_fixture_round_trips() {
                fixture($db, "fixtures/mainnet-reorg-scenario1.tsv", Network::Mainnet).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn devnet_chain_round_trips() {
                devnet($db).await;
            }
        }
    };
}

engine_tests!(sqlite, Db::Sqlite);
engine_tests!(postgres, Db::Postgres);
