//! Batched ingest writes the same store as event-by-event ingest. The maintained read totals
//! (`account_stx_totals`, `account_asset_totals`, `account_block_txs`) are gathered over all
//! blocks of a store transaction and written once before it commits (`store::totals::Pending`),
//! so a reorg inside a batch, at any position, must still leave exactly the rows that one
//! transaction per event leaves. A forking devnet chain is ingested one event at a time and in
//! batches of several sizes (so reorgs fall at different places in a batch), and every table
//! is compared through `Store::ledger_digest`.

mod common;

use common::{
    check_invariants, devnet_config, devnet_events, digest_diff, incoming, ingest_all, Db, TestStore,
};
use stacks_ledger::ingest::IngestOutcome;
use stacks_ledger::ledger::Network;

async fn batches_equal_single_events(db: Db) {
    let mut cfg = devnet_config(23, 60, 10);
    cfg.fork_per_mille = 300;
    let (events, generator) = devnet_events(cfg);
    let stats = generator.stats();
    assert!(stats.forks > 2, "{db:?}: too few forks to test: {stats:?}");

    let Some(one) = TestStore::new(db, "batches_single", Network::Testnet).await else { return };
    let fed = ingest_all(&one.store, events.iter().cloned(), &[], "single").await;
    assert_eq!(fed.applied, events.len());
    let want = one.store.ledger_digest().await.unwrap();
    assert!(want["account_block_txs"].0 > 0 && want["account_asset_totals"].0 > 0, "{want:?}");
    one.finish().await;

    for size in [3, 7, 64, events.len()] {
        let label = format!("{db:?} batches of {size}");
        let Some(b) = TestStore::new(db, &format!("batches_{size}"), Network::Testnet).await else { return };
        for chunk in events.chunks(size) {
            let out = b.store.ingest_batch(chunk.iter().map(incoming).collect()).await.unwrap();
            assert_eq!(out.len(), chunk.len(), "{label}");
            for o in out {
                assert!(matches!(o, Ok(IngestOutcome::Applied { .. })), "{label}: {o:?}");
            }
        }
        check_invariants(&b.store, &label, true).await;
        let got = b.store.ledger_digest().await.unwrap();
        let diff = digest_diff(&want, &got);
        assert!(diff.is_empty(), "{label}: differs from event-by-event ingest: {diff:#?}");
        b.finish().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_batches_equal_single_events() {
    batches_equal_single_events(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_batches_equal_single_events() {
    batches_equal_single_events(Db::Postgres).await;
}
