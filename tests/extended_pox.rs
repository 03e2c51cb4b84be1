//! End to end: ingest every oracle fixture, then replay every recorded request of the PoX
//! routes (`/extended/v1/{pox2,pox3,pox4}/*`, the old `/poxN_events` forms and v2
//! `/pox/cycles/*`) through the
//! public route table and compare with what the incumbent answered, on SQLite and PostgreSQL.

mod common;

use std::sync::Arc;

use common::{replay, shared_file, Db, TestStore};
use test_support::oracle::OracleEntry;

use common::ORACLE_FIXTURES as FIXTURES;

/// `/extended/v1/pox2/...`, `/pox9/events`, `/pox4_events` and `/extended/v2/pox/cycles/...`.
fn is_pox(e: &OracleEntry) -> bool {
    let v1 = e
        .path
        .strip_prefix("/extended/v1/pox")
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
    e.method == "GET" && (v1 || e.path.starts_with("/extended/v2/pox/"))
}

async fn pox_matches_oracle(db: Db) {
    let mut totals = (0, 0);
    for (fixture, network) in FIXTURES {
        let Some(tsv) = shared_file(&format!("fixtures/{fixture}.tsv")) else { return };
        let Some(ts) = TestStore::new(db, "extended_pox", network).await else { return };
        replay(&ts.store, &tsv, &[]).await;
        let api = stacks_ledger::api::routes(Arc::clone(&ts.store));
        let Some(report) = common::parity::check_parity(&api, fixture, is_pox, &[]).await else { return };
        report.print(&format!("{db:?} {fixture}"));
        totals.0 += report.matched();
        totals.1 += report.compared;
        report.assert_all_match();
        ts.finish().await;
    }
    println!("{db:?} pox: {}/{} recorded answers matched", totals.0, totals.1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_pox_events_match_the_oracle() {
    pox_matches_oracle(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_pox_events_match_the_oracle() {
    pox_matches_oracle(Db::Postgres).await;
}
