//! End to end, the chain family of `/extended` (v1 `/block`, v2 `/blocks`, `/burn-blocks`,
//! `/block-tenures`, `/burnchain`, `/stx_supply`, `/info/network_block_time(s)`): ingest every
//! oracle fixture, replay every recorded request of these routes through the public route table
//! and compare status and body with the incumbent's recording, on both engines.
//!
//! Ignored keys (see docs/extended-deviations.md): none for this family so far.

mod common;

use std::sync::Arc;

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

/// Answers known to differ, each with its reason (docs/extended-deviations.md, ext-chain).
/// Anything else that differs fails the test.
fn known_difference(fixture: &str, url: &str) -> Option<&'static str> {
    let path = url.split('?').next().unwrap_or(url);
    if fixture == "mainnet-reorg-scenario1" && url.contains("0xeaff5903") {
        return Some("open: the txs of this non-canonical block differ");
    }
    if fixture != "mocknet" && path.starts_with("/extended/v2/blocks/") && path.ends_with("/transactions") {
        return Some(
            "open: v2 block transactions outside mocknet (boot block 1's txs carry the boot block's \
             times and total in the incumbent; forks and microblocks not reconciled yet)",
        );
    }
    if fixture == "regtest-env-pox-4-stack-stx-in-reward-phase-S1"
        && matches!(path, "/extended/v1/block" | "/extended/v1/block/")
    {
        return Some("open: the list's block 1 interleaves the boot transactions differently");
    }
    if fixture == "regtest-env-pox-4-stack-stx-in-reward-phase-S1"
        && (url.contains("by_height/1")
            || url.contains("/103")
            || url.contains("0x455c137a")
            || url.contains("0x53f422de"))
    {
        return Some("open: block 1's boot transactions interleave differently in this fixture");
    }
    None
}

async fn chain_matches_oracle(db: Db) {
    for (fixture, network) in FIXTURES {
        let Some(tsv) = shared_file(&format!("fixtures/{fixture}.tsv")) else { return };
        let Some(ts) = TestStore::new(db, "extended_chain", network).await else { return };
        replay(&ts.store, &tsv, &[]).await;
        let api = stacks_ledger::api::routes(Arc::clone(&ts.store));
        let Some(mut report) = common::parity::check_parity(&api, fixture, ours, &[]).await else { return };
        println!(
            "{db:?} {fixture}: {} of {} recorded answers match",
            report.compared - report.mismatches.len(),
            report.compared
        );
        report.mismatches.retain(|m| match known_difference(fixture, &m.url) {
            Some(why) => {
                println!("  known: {} {} ({why}): {}", m.method, m.url, m.diffs.join("; "));
                false
            }
            None => true,
        });
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
