//! End to end, the chain family of `/extended` (v1 `/block`, v2 `/blocks`, `/burn-blocks`,
//! `/block-tenures`, `/burnchain`, `/stx_supply`, `/info/network_block_time(s)`): ingest every
//! oracle fixture, replay every recorded request of these routes through the public route table
//! and compare status and body with the incumbent's recording, on both engines.
//!
//! Ignored keys: none for this family. Row orders the incumbent leaves to its plan are compared
//! through `parity_allow::normalize_entry` (block 1's tied indexes; docs/extended-deviations.md).

mod common;

use std::sync::Arc;

use common::parity::check_parity_normalized;
use common::parity_allow::normalize_entry;
use common::{replay, shared_file, Db, TestStore};
use test_support::oracle::OracleEntry;

use common::ORACLE_FIXTURES as FIXTURES;

/// The recorded requests this family serves. HEAD/OPTIONS belong to ext-tx (CORS and HEAD for
/// every route); `/pox-transactions` is listed apart until it lands.
fn ours(e: &OracleEntry) -> bool {
    let p = e.path.as_str();
    let family = p.starts_with("/extended/v1/block")
        || p.starts_with("/extended/v2/blocks")
        || p.starts_with("/extended/v2/burn-blocks")
        || p.starts_with("/extended/v2/block-tenures")
        || p.starts_with("/extended/v1/burnchain/")
        || p.starts_with("/extended/v1/stx_supply")
        || p.starts_with("/extended/v1/info/network_block_time");
    family && !matches!(e.method.as_str(), "HEAD" | "OPTIONS") && !pending(e)
}

fn pending(e: &OracleEntry) -> bool {
    e.path.ends_with("/pox-transactions")
}

async fn chain_matches_oracle(db: Db) {
    for (fixture, network) in FIXTURES {
        let Some(tsv) = shared_file(&format!("fixtures/{fixture}.tsv")) else { return };
        let Some(ts) = TestStore::new(db, "extended_chain", network).await else { return };
        replay(&ts.store, &tsv, &[]).await;
        let api = common::routes(Arc::clone(&ts.store));
        let Some(mut report) = check_parity_normalized(&api, fixture, ours, &[], normalize_entry).await
        else {
            return;
        };
        println!(
            "{db:?} {fixture}: {} of {} recorded answers match",
            report.compared - report.mismatches.len(),
            report.compared
        );
        report.label = format!("{db:?} {fixture}");
        report.assert_all_match();
        ts.finish().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_chain_routes_match_the_oracle_on_every_fixture() {
    chain_matches_oracle(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_chain_routes_match_the_oracle_on_every_fixture() {
    chain_matches_oracle(Db::Postgres).await;
}
