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
        let api = common::routes(Arc::clone(&ts.store));
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
        streamed_txs_carry_their_receipt_time(&api, &tsv).await;
        ts.finish().await;
    }
    println!("{db:?} microblocks: {}/{} recorded answers matched", totals.0, totals.1);
}

/// A streamed, not yet anchored transaction's `block_time` is when its `/new_microblocks` event
/// was received (the incumbent's own clock at ingest; here the receipt time the TSV carries, which
/// the recordings, made on the import day, cannot show).
async fn streamed_txs_carry_their_receipt_time<F, R>(api: &F, tsv: &std::path::Path)
where
    F: warp::Filter<Extract = (R,), Error = std::convert::Infallible> + Clone + Send + Sync + 'static,
    R: warp::Reply + Send,
{
    let received: Vec<i64> = common::read_tsv(tsv)
        .iter()
        .filter(|e| e.path == "/new_microblocks")
        .map(|e| stacks_ledger::store::parse_pg_timestamp(&e.receive_timestamp).unwrap())
        .collect();
    let res = warp::test::request().path("/extended/v1/microblock/unanchored/txs").reply(api).await;
    let body: serde_json::Value = serde_json::from_slice(res.body()).unwrap();
    for tx in body["results"].as_array().unwrap() {
        let t = tx["block_time"].as_i64().unwrap();
        assert!(received.contains(&t), "{}: block_time {t}, streams received at {received:?}", tx["tx_id"]);
        assert!(tx["block_time_iso"].as_str().is_some_and(|s| s.ends_with(".000Z")), "{tx}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_microblocks_match_the_oracle() {
    microblocks_match_oracle(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_microblocks_match_the_oracle() {
    microblocks_match_oracle(Db::Postgres).await;
}
