//! End to end: ingest every oracle fixture, then replay every recorded request of the
//! microblock routes (`/extended/v1/microblock`, `/microblock/{hash}`,
//! `/microblock/unanchored/txs`) through the public route table and compare with what the
//! incumbent answered, on SQLite and PostgreSQL.

mod common;

use std::sync::Arc;

use common::{replay, shared_file, Db, TestStore};
use test_support::oracle::OracleEntry;

use common::ORACLE_FIXTURES as FIXTURES;

/// Keys that cannot match by nature (the one list, tests/common/parity_allow.rs): the incumbent
/// gives a streamed, not yet anchored transaction its own wall-clock time as `block_time`.
fn unanchored_ignored() -> Vec<&'static str> {
    common::parity_allow::ignored_keys("/extended/v1/microblock/unanchored/txs")
}

fn is_microblock(e: &OracleEntry) -> bool {
    e.method == "GET" && e.path.starts_with("/extended/v1/microblock")
}

fn is_unanchored_txs(e: &OracleEntry) -> bool {
    e.path == "/extended/v1/microblock/unanchored/txs"
}

async fn microblocks_match_oracle(db: Db) {
    let mut totals = (0, 0);
    for (fixture, network) in FIXTURES {
        let Some(tsv) = shared_file(&format!("fixtures/{fixture}.tsv")) else { return };
        let Some(ts) = TestStore::new(db, "extended_microblock", network).await else { return };
        replay(&ts.store, &tsv, &[]).await;
        let api = stacks_ledger::api::routes(Arc::clone(&ts.store));
        let select = |e: &OracleEntry| is_microblock(e) && !is_unanchored_txs(e);
        let Some(entities) = common::parity::check_parity(&api, fixture, select, &[]).await else { return };
        let select = |e: &OracleEntry| is_microblock(e) && is_unanchored_txs(e);
        let Some(unanchored) =
            common::parity::check_parity(&api, fixture, select, &unanchored_ignored()).await
        else {
            return;
        };
        for report in [&entities, &unanchored] {
            report.print(&format!("{db:?} {fixture}"));
            totals.0 += report.matched();
            totals.1 += report.compared;
        }
        entities.assert_all_match();
        unanchored.assert_all_match();
        ts.finish().await;
    }
    println!("{db:?} microblocks: {}/{} recorded answers matched", totals.0, totals.1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_microblocks_match_the_oracle() {
    microblocks_match_oracle(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_microblocks_match_the_oracle() {
    microblocks_match_oracle(Db::Postgres).await;
}
