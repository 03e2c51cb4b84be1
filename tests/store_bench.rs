//! Ingest throughput on the realnode-2 log (8,065 block transactions, 7,512 mempool posts).
//! Not a timed assertion: run by hand with
//! `cargo test --release -p stacks-ledger --test store_bench -- --ignored --nocapture`.

mod common;

use std::time::Instant;

use common::{replay, shared_file, Db, TestStore};
use stacks_ledger::ledger::Network;

async fn bench(db: Db) {
    let Some(path) = shared_file("bench/realnode-2/events.tsv") else { return };
    let Some(ts) = TestStore::new(db, "bench", Network::Testnet).await else { return };
    let start = Instant::now();
    let r = replay(&ts.store, &path, &[]).await;
    let secs = start.elapsed().as_secs_f64();
    let counts = ts.store.table_counts().await.unwrap();
    let txs = counts["txs"];
    println!(
        "{db:?}: {} events in {secs:.2} s ({:.0} events/s); {txs} block txs → {:.0} tx/s",
        r.applied,
        r.applied as f64 / secs,
        txs as f64 / secs
    );
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn realnode2_sqlite() {
    bench(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn realnode2_postgres() {
    bench(Db::Postgres).await;
}
