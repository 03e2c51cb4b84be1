//! `check-data` (the in-project rosetta-cli `check:data`) against our Rosetta server over a
//! real HTTP socket: it passes after each fixture and on a generated devnet chain that reorgs
//! while it syncs (orphans > 0), on SQLite and PostgreSQL, and started above genesis; and it
//! fails on a server that lies about one operation amount or one parent hash.

mod common;

use ledger_read::TipReader;
use std::sync::Arc;

use common::{devnet_config, devnet_events, ingest_all, replay, shared_file, Db, TestStore};
use rosetta_check::data::{Checker, Options, Report};
use serde_json::Value;
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;
use warp::Filter;

/// Serves the public API on an ephemeral port; the server stops with the test's runtime.
async fn serve(store: Arc<Store>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(warp::serve(common::routes(store)).incoming(listener).run());
    format!("http://{addr}")
}

fn options(url: &str) -> Option<Options> {
    let mut o = Options::new(url);
    o.specs = vec![
        test_support::load_json("rosetta-spec/api.json")?,
        test_support::load_json("rosetta-spec/api-v1.4.7.json")?,
    ];
    o.coverage = Some(1.0);
    Some(o)
}

fn assert_passes(report: &Report, label: &str) {
    println!("{label}: {} {}", serde_json::to_string(&report.stats).unwrap(), report.summary());
    assert!(report.ok(), "{label}: {:#?}", report.failures);
    assert!(
        report.stats.blocks > 0 && report.stats.active_reconciliations > 0,
        "{label}: {:?}",
        report.stats
    );
    assert_eq!(report.stats.failed_reconciliations, 0, "{label}");
}

async fn fixture_passes(db: Db, fixture: &str, network: Network) {
    let Some(tsv) = shared_file(&format!("fixtures/{fixture}.tsv")) else { return };
    let Some(ts) = TestStore::new(db, "rosetta_check", network).await else { return };
    replay(&ts.store, &tsv, &[]).await;
    let url = serve(Arc::clone(&ts.store)).await;
    let Some(opts) = options(&url) else { return };
    let mut checker = Checker::new(opts).unwrap();
    checker.sync().await.unwrap();
    let report = checker.finish().await;
    assert_passes(&report, &format!("{db:?} {fixture}"));
    ts.finish().await;
}

use common::ORACLE_FIXTURES as FIXTURES;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_check_data_passes_on_every_fixture() {
    for (fixture, network) in FIXTURES {
        fixture_passes(Db::Sqlite, fixture, network).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_check_data_passes_on_every_fixture() {
    for (fixture, network) in FIXTURES {
        fixture_passes(Db::Postgres, fixture, network).await;
    }
}

/// Ingests a devnet chain with forks in slices, syncing the checker after each slice so it
/// sees reorganisations happen under it.
async fn devnet_with_reorgs_passes(db: Db) {
    let (events, generator) = devnet_events(devnet_config(7, 60, 4));
    assert!(generator.stats().forks > 0, "{:?}", generator.stats());
    let Some(ts) = TestStore::new(db, "rosetta_check_devnet", Network::Testnet).await else { return };
    let url = serve(Arc::clone(&ts.store)).await;
    let Some(opts) = options(&url) else { return };
    let mut checker = Checker::new(opts).unwrap();
    let mut started = false;
    for chunk in events.chunks(6) {
        ingest_all(&ts.store, chunk.iter().cloned(), &[], "devnet").await;
        if ts.store.tip().await.unwrap().map(|t| t.block).is_some() {
            if !started {
                checker.start().await.unwrap();
                started = true;
            }
            checker.sync().await.unwrap();
        }
    }
    let report = checker.finish().await;
    assert_passes(&report, &format!("{db:?} devnet"));
    assert!(report.stats.orphans > 0, "the checker saw no reorg: {:?}", report.stats);
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_check_data_passes_on_a_devnet_chain_with_reorgs() {
    devnet_with_reorgs_passes(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_check_data_passes_on_a_devnet_chain_with_reorgs() {
    devnet_with_reorgs_passes(Db::Postgres).await;
}

/// Started above genesis, the check takes each account's balance below its first block from
/// the server, as rosetta-cli does with a start index, and passes: every account reconciled,
/// `/events/blocks` compared from the start block on.
async fn starting_above_genesis_passes(db: Db) {
    let (events, _) = devnet_events(devnet_config(11, 40, 4));
    let Some(ts) = TestStore::new(db, "rosetta_check_start", Network::Testnet).await else { return };
    ingest_all(&ts.store, events, &[], "devnet").await;
    let tip = ts.store.tip().await.unwrap().map(|t| t.block).unwrap();
    let url = serve(Arc::clone(&ts.store)).await;
    let Some(mut opts) = options(&url) else { return };
    let start = 20;
    opts.start = Some(start);
    let mut checker = Checker::new(opts).unwrap();
    checker.sync().await.unwrap();
    let report = checker.finish().await;
    assert_passes(&report, &format!("{db:?} devnet from block {start}"));
    assert_eq!(report.stats.blocks as i64, tip.block_height - start + 1, "{:?}", report.stats);
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_check_data_passes_started_above_genesis() {
    starting_above_genesis_passes(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_check_data_passes_started_above_genesis() {
    starting_above_genesis_passes(Db::Postgres).await;
}

/// A server in front of ours that rewrites `/block` answers with `lie`.
async fn lying_proxy(upstream: String, lie: fn(&mut Value)) -> String {
    let client = reqwest::Client::new();
    let route = warp::post().and(warp::path::full()).and(warp::body::bytes()).then(
        move |path: warp::path::FullPath, body: bytes::Bytes| {
            let (client, upstream) = (client.clone(), upstream.clone());
            async move {
                let res = client
                    .post(format!("{upstream}{}", path.as_str()))
                    .header("content-type", "application/json")
                    .body(body)
                    .send()
                    .await
                    .unwrap();
                let status = res.status().as_u16();
                let mut v: Value = res.json().await.unwrap();
                if path.as_str() == "/rosetta/v1/block" && status == 200 {
                    lie(&mut v);
                }
                warp::reply::with_status(
                    warp::reply::json(&v),
                    warp::http::StatusCode::from_u16(status).unwrap(),
                )
            }
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(warp::serve(route).incoming(listener).run());
    format!("http://{addr}")
}

/// Adds 1 µSTX to the first operation with an amount in block 5.
fn alter_amount(v: &mut Value) {
    if v["block"]["block_identifier"]["index"] != 5 {
        return;
    }
    for tx in v["block"]["transactions"].as_array_mut().unwrap() {
        for op in tx["operations"].as_array_mut().unwrap() {
            if let Some(value) = op["amount"]["value"].as_str() {
                let n: i128 = value.parse().unwrap();
                op["amount"]["value"] = Value::from((n + 1).to_string());
                return;
            }
        }
    }
    panic!("block 5 has no operation with an amount");
}

fn alter_parent(v: &mut Value) {
    if v["block"]["block_identifier"]["index"] == 7 {
        v["block"]["parent_block_identifier"]["hash"] = Value::from(format!("0x{}", "ee".repeat(32)));
    }
}

async fn checker_detects(lie: fn(&mut Value), group: &str) {
    let (events, _) = devnet_events(devnet_config(3, 12, 3));
    let Some(ts) = TestStore::new(Db::Sqlite, "rosetta_check_lies", Network::Testnet).await else { return };
    ingest_all(&ts.store, events, &[], "devnet").await;
    let url = serve(Arc::clone(&ts.store)).await;
    let proxy = lying_proxy(url, lie).await;
    let Some(opts) = options(&proxy) else { return };
    let mut checker = Checker::new(opts).unwrap();
    checker.sync().await.unwrap();
    let report = checker.finish().await;
    println!("{:#?}", report.failures);
    assert!(!report.ok(), "the checker missed the lie");
    assert!(report.failure_counts.get(group).copied().unwrap_or(0) > 0, "{group}: {:#?}", report.failures);
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_data_fails_on_an_altered_operation_amount() {
    checker_detects(alter_amount, "reconciliation").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_data_fails_on_an_altered_parent_hash() {
    checker_detects(alter_parent, "block_syncing").await;
}
