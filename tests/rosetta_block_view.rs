//! `/block` is rendered straight from the stored rows (`src/rosetta/block_view.rs`); its bytes
//! must be exactly those of the `rosetta-spec` model the reference path builds
//! (`rosetta::block::block_model`, serialized as `warp::reply::json` does). Checked for every
//! block that was ever canonical, through HTTP, on SQLite and PostgreSQL, over a devnet chain
//! with forks, microblocks, token transfers, contract calls, stacking and miner rewards, and over
//! the real-node fixtures with PoX-4 stacking and Nakamoto tenure changes.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use common::{devnet_config, devnet_events, ingest_all, replay, shared_file, Db, TestStore};
use serde_json::{json, Value};
use stacks_ledger::ledger::Network;
use stacks_ledger::rosetta::block::block_model;
use stacks_ledger::store::Store;

/// Compares the two renderings of every block the event log ever added; returns the operation
/// types seen and the number of blocks compared.
async fn compare_all(store: &Arc<Store>, label: &str) -> (BTreeSet<String>, usize) {
    let api = common::routes(Arc::clone(store));
    let network = json!({"blockchain": "stacks", "network": store.network().as_str()});
    let hashes: BTreeSet<String> =
        store.rosetta_block_events(0, i64::MAX).await.unwrap().into_iter().map(|e| e.block_hash).collect();
    let (mut types, mut compared) = (BTreeSet::new(), 0);
    for hash in hashes {
        let b = store.rosetta_block_by_hash(&hash).await.unwrap().unwrap();
        if !b.materialized {
            continue;
        }
        let contents = store.rosetta_block_contents(&b.index_block_hash).await.unwrap();
        let expected = serde_json::to_vec(&block_model(&b, &contents)).unwrap();
        let body = json!({"network_identifier": network, "block_identifier": {"hash": hash}});
        let res = warp::test::request()
            .method("POST")
            .path("/rosetta/v1/block")
            .body(body.to_string())
            .reply(&api)
            .await;
        assert_eq!(res.status(), 200, "{label} {hash}");
        assert_eq!(res.headers()["content-type"], "application/json", "{label} {hash}");
        assert!(
            res.body().as_ref() == expected.as_slice(),
            "{label} block {hash}:\n ours {}\n reference {}",
            String::from_utf8_lossy(res.body()),
            String::from_utf8_lossy(&expected)
        );
        let parsed: Value = serde_json::from_slice(res.body()).unwrap();
        for tx in parsed["block"]["transactions"].as_array().unwrap() {
            for op in tx["operations"].as_array().unwrap() {
                types.insert(op["type"].as_str().unwrap().to_owned());
            }
        }
        compared += 1;
    }
    (types, compared)
}

/// Two devnet chains: one that forks (and streams microblocks), one long enough for stacking.
async fn devnet(db: Db) {
    let mut types = BTreeSet::new();
    for (cfg, forks) in [(devnet_config(11, 50, 2), true), (devnet_config(5, 60, 4), false)] {
        let (events, generator) = devnet_events(cfg);
        assert!(!forks || generator.stats().forks > 0, "{:?}", generator.stats());
        let Some(ts) = TestStore::new(db, "rosetta_block_view_devnet", Network::Testnet).await else {
            return;
        };
        ingest_all(&ts.store, events, &[], "devnet").await;
        let (seen, compared) = compare_all(&ts.store, &format!("{db:?} devnet")).await;
        assert!(compared > 50, "{db:?} devnet: {compared} blocks compared");
        types.extend(seen);
        ts.finish().await;
    }
    for t in ["coinbase", "fee", "token_transfer", "contract_call", "miner_reward", "stx_lock", "stack_stx"] {
        assert!(types.contains(t), "{db:?} devnet: no {t} operation among {types:?}");
    }
}

async fn fixture(db: Db, name: &str, network: Network, must_see: &[&str]) {
    let Some(tsv) = shared_file(&format!("fixtures/{name}.tsv")) else { return };
    let Some(ts) = TestStore::new(db, "rosetta_block_view_fixture", network).await else { return };
    replay(&ts.store, &tsv, &[]).await;
    let (types, compared) = compare_all(&ts.store, &format!("{db:?} {name}")).await;
    assert!(compared > 0, "{db:?} {name}: no block compared");
    for t in must_see {
        assert!(types.contains(*t), "{db:?} {name}: no {t} operation among {types:?}");
    }
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_block_view_is_the_model_byte_for_byte() {
    devnet(Db::Sqlite).await;
    fixture(Db::Sqlite, "regtest-env-pox-4-stack-stx-in-reward-phase-S1", Network::Testnet, &["stack_stx"])
        .await;
    fixture(Db::Sqlite, "epoch-3-transition", Network::Testnet, &["tenure_change"]).await;
    fixture(Db::Sqlite, "mainnet-reorg-scenario1", Network::Mainnet, &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_block_view_is_the_model_byte_for_byte() {
    devnet(Db::Postgres).await;
    fixture(Db::Postgres, "regtest-env-pox-4-stack-stx-in-reward-phase-S1", Network::Testnet, &["stack_stx"])
        .await;
    fixture(Db::Postgres, "epoch-3-transition", Network::Testnet, &["tenure_change"]).await;
    fixture(Db::Postgres, "mainnet-reorg-scenario1", Network::Mainnet, &[]).await;
}
