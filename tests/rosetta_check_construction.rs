//! `check-construction` (the in-project rosetta-cli `check:construction`) end to end: our
//! server (online, on SQLite and PostgreSQL) backed by the devnet acting as the Stacks node,
//! plus an offline server for the offline calls. create_account, request_funds, transfer,
//! multisig_transfer, sponsored_transfer and the pox-4 calls stack_stx, delegate_stx and
//! revoke_delegate_stx run through derive → … → submit (every signing round); each reaches the
//! mempool, then a block with the intent's operations, and balances reconcile (the stacked
//! amount in the `locked` sub-account). And it must fail against a node that never mines.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use common::{Db, TestStore};
use rosetta_check::construction::{ConstructionChecker, ConstructionOptions, ConstructionReport};
use serde_json::Value;
use stacks_devnet::{serve_as_node, DevnetConfig, Generator};
use stacks_ledger::config::{Config, ConfigArgs};
use stacks_ledger::ledger::Network;

async fn listen() -> (tokio::net::TcpListener, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    (listener, url)
}

/// Observer + online API over `store`, the devnet node posting to the observer, an offline
/// API; then the check. `block_time`: how often the node mines.
async fn run_check(db: Db, block_time: Duration, timeout: Duration) -> Option<ConstructionReport> {
    let ts = TestStore::new(db, "check_construction", Network::Testnet).await?;
    let store = Arc::clone(&ts.store);
    let (events, observer_url) = listen().await;
    tokio::spawn(stacks_ledger::observer::run(
        events,
        Arc::clone(&store),
        50_000_000,
        std::future::pending(),
    ));

    let cfg = DevnetConfig {
        blocks: 4,
        txs_per_block: 3,
        accounts: 8,
        reward_maturity: 3,
        ..DevnetConfig::default()
    };
    let generator = Generator::new(cfg).unwrap();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel::<(SocketAddr, Vec<Value>)>();
    tokio::spawn(serve_as_node(
        generator,
        observer_url,
        "127.0.0.1:0".parse().unwrap(),
        block_time,
        move |addr, accounts| {
            let _ = ready_tx.send((addr, accounts));
        },
        std::future::pending(),
    ));
    let (node_addr, accounts) = ready_rx.await.expect("the devnet node starts");

    let args = ConfigArgs { node_rpc: Some(format!("http://{node_addr}")), ..ConfigArgs::default() };
    let v2 = Config::resolve(&args, |_| None).unwrap().v2;
    let faucets = common::faucets(&store);
    let (online, online_url) = listen().await;
    let api = stacks_ledger::api::routes_with(Arc::clone(&store), v2, faucets, &common::env_config());
    tokio::spawn(warp::serve(api).incoming(online).run());
    let (offline, offline_url) = listen().await;
    tokio::spawn(warp::serve(stacks_ledger::api::routes_offline(Network::Testnet)).incoming(offline).run());

    let funded = &accounts[0];
    let opts = ConstructionOptions {
        online_url,
        offline_url,
        network: Some("testnet".into()),
        prefunded: vec![(
            funded["address"].as_str().unwrap().to_owned(),
            funded["private_key"].as_str().unwrap().to_owned(),
        )],
        end_conditions: [
            ("create_account".to_owned(), 3),
            ("transfer".to_owned(), 3),
            ("multisig_transfer".to_owned(), 2),
            ("sponsored_transfer".to_owned(), 1),
            ("stack_stx".to_owned(), 1),
            ("delegate_stx".to_owned(), 1),
            ("revoke_delegate_stx".to_owned(), 1),
        ]
        .into_iter()
        .collect(),
        funding: 1_000_000_000,
        confirmation_timeout: timeout,
        seed: 7,
    };
    let report = ConstructionChecker::new(opts).unwrap().run().await;
    println!("{db:?}: {} {}", serde_json::to_string(&report.stats).unwrap(), report.summary());
    ts.finish().await;
    Some(report)
}

async fn passes(db: Db) {
    let Some(report) = run_check(db, Duration::from_millis(300), Duration::from_secs(60)).await else {
        return;
    };
    assert!(report.ok(), "{db:?}: {:#?}", report.failures);
    let s = &report.stats;
    // request_funds + 3 transfers + 2 × (funding a multisig account, its transfer: P2SH in two
    // rounds, P2WSH non-sequential in one) + 1 sponsored + stack_stx, delegate_stx,
    // revoke_delegate_stx; each: parse(unsigned), parse(signed), on chain; a transfer's sender
    // and recipient reconciled, and the sponsor; a pox-4 call's liquid balance, and the locked
    // sub-account after stack_stx.
    assert_eq!(s.transactions_confirmed, 12, "{s:?}");
    assert_eq!(s.transactions_in_mempool, 12, "{s:?}");
    assert_eq!(s.intents_checked, 36, "{s:?}");
    assert_eq!(s.balances_reconciled, 23, "{s:?}");
    assert_eq!(s.addresses_created, 6, "{s:?}");
    assert_eq!(report.end_conditions["transfer"], [3, 3]);
    assert_eq!(report.end_conditions["create_account"], [3, 3]);
    assert_eq!(report.end_conditions["multisig_transfer"], [2, 2]);
    assert_eq!(report.end_conditions["sponsored_transfer"], [1, 1]);
    for call in ["stack_stx", "delegate_stx", "revoke_delegate_stx"] {
        assert_eq!(report.end_conditions[call], [1, 1], "{call}");
    }
}

async fn fails_when_the_node_never_mines(db: Db) {
    let Some(report) = run_check(db, Duration::from_secs(3600), Duration::from_secs(3)).await else { return };
    assert!(!report.ok(), "{db:?}: a node that never mines must fail the check");
    assert_eq!(report.stats.transactions_confirmed, 0);
    assert_eq!(report.stats.transactions_in_mempool, 1, "submitted, then stuck: {:?}", report.stats);
    let all: Vec<&String> = report.failures.values().flatten().collect();
    assert!(all.iter().any(|f| f.contains("was not mined")), "{all:?}");
    for call in ["stack_stx", "delegate_stx", "revoke_delegate_stx"] {
        assert_eq!(report.end_conditions[call], [1, 0], "{call} never ran");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_check_construction_passes_against_the_devnet_node() {
    passes(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_check_construction_passes_against_the_devnet_node() {
    passes(Db::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_check_construction_fails_when_nothing_is_mined() {
    fails_when_the_node_never_mines(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_check_construction_fails_when_nothing_is_mined() {
    fails_when_the_node_never_mines(Db::Postgres).await;
}
