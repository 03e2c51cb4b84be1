//! Every shared event log, replayed through `EventSink::ingest` on SQLite and PostgreSQL, must
//! leave a consistent ledger (balances = operations, supply, nonces, one contiguous canonical
//! chain, idempotent replay) that agrees with what the incumbent answered after the same log.

mod common;

use std::collections::BTreeMap;

use common::{check_invariants, check_reingest_adds_nothing, read_tsv, replay, shared_file, Db, TestStore};
use serde_json::Value as Json;
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;

struct Fixture {
    file: &'static str,
    oracle: Option<&'static str>,
    network: Network,
    /// The log starts at the boot block, so every nonce sequence starts at 0.
    from_genesis: bool,
    /// Events the store must refuse as invalid (e.g. another network's transactions).
    refused: &'static [i64],
}

async fn check_fixture(db: Db, fx: Fixture) {
    let Some(path) = shared_file(fx.file) else { return };
    let name = fx.file.rsplit('/').next().unwrap().trim_end_matches(".tsv").replace(['-', '.'], "_");
    let Some(ts) = TestStore::new(db, &name, fx.network).await else { return };
    let store = &ts.store;
    let first = replay(store, &path, fx.refused).await;
    assert!(first.applied > 0, "{}: nothing applied", fx.file);

    check_invariants(store, fx.file, fx.from_genesis).await;

    // Replaying the same log adds nothing.
    let before = store.table_counts().await.unwrap();
    check_reingest_adds_nothing(store, &read_tsv(&path), fx.refused, fx.file).await;

    if let Some(oracle) = fx.oracle {
        let report = compare_with_oracle(store, oracle).await;
        println!("{db:?} {}: oracle {report:?}", fx.file);
        assert!(report.values().all(|(_, bad)| *bad == 0), "{}: oracle mismatches {report:?}", fx.file);
    }
    println!("{db:?} {}: {} applied, {} duplicate ids; {:?}", fx.file, first.applied, first.already, before);
    ts.finish().await;
}

/// Per check: (matches, mismatches).
async fn compare_with_oracle(store: &Store, oracle: &str) -> BTreeMap<&'static str, (usize, usize)> {
    let mut report: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
    let Some(dir) = shared_file(&format!("oracle/{oracle}")) else { return report };
    let manifest = std::fs::read_to_string(dir.join("manifest.jsonl")).unwrap();
    let mut tally = |k: &'static str, ok: bool, what: String| {
        let e = report.entry(k).or_default();
        if ok {
            e.0 += 1
        } else {
            e.1 += 1;
            println!("MISMATCH {k}: {what}");
        }
    };
    for line in manifest.lines() {
        let m: Json = serde_json::from_str(line).unwrap();
        if m["status"] != 200 || m["method"] != "GET" {
            continue;
        }
        let (path, q) = (m["path"].as_str().unwrap(), m["query"].as_str().unwrap_or(""));
        let file = dir.join(m["file"].as_str().unwrap());
        let Ok(body) = std::fs::read_to_string(&file) else { continue };
        let Ok(r) = serde_json::from_str::<Json>(&body) else { continue };
        let seg: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        match seg.as_slice() {
            ["extended", "v1", "block", "by_height", h] if q.is_empty() => {
                let ours = store.canonical_block_at(h.parse().unwrap()).await.unwrap();
                let theirs = r["hash"].as_str().unwrap();
                tally(
                    "canonical block per height",
                    ours.as_ref().map(|b| b.block_hash.as_str()) == Some(theirs),
                    format!("height {h}: {theirs} vs {ours:?}"),
                );
            }
            ["extended", "v1", "block", hash] if hash.starts_with("0x") && q.is_empty() => {
                let ours = store.block_by_hash(hash).await.unwrap();
                let ok = ours.as_ref().is_some_and(|b| {
                    Some(b.canonical) == r["canonical"].as_bool()
                        && b.block_height == r["height"].as_i64().unwrap()
                });
                tally("block canonical flag", ok, format!("{hash}: {} vs {ours:?}", r["canonical"]));
            }
            ["extended", "v1", "tx", id]
                if id.starts_with("0x") && q.is_empty() && r["receipt_time"].is_number() =>
            {
                // A mempool transaction.
                let ours = store.mempool_status(id).await.unwrap();
                let status = r["tx_status"].as_str().unwrap();
                let ok = ours
                    .as_ref()
                    .is_some_and(|(s, _, pruned)| s == status && *pruned == (status != "pending"));
                tally("mempool tx status", ok, format!("{id}: {status} vs {ours:?}"));
            }
            ["extended", "v1", "tx", id]
                if id.starts_with("0x") && q.is_empty() && r["tx_id"].is_string() =>
            {
                let ours = store.tx(id).await.unwrap();
                let ours = ours.first();
                let anchored = r["is_unanchored"] != Json::Bool(true);
                let ok = ours.is_some_and(|t| {
                    t.status == r["tx_status"].as_str().unwrap()
                        && (!anchored
                            || (t.canonical == r["canonical"].as_bool().unwrap()
                                && t.block_height == r["block_height"].as_i64().unwrap()))
                        && (anchored || t.index_block_hash.is_empty())
                });
                tally(
                    "tx status/canonical/height",
                    ok,
                    format!("{id}: {} {} {} vs {ours:?}", r["tx_status"], r["canonical"], r["block_height"]),
                );
            }
            ["extended", "v1", "address", principal, "stx"] if q.is_empty() => {
                let (liquid, locked) = store.balance(principal, None).await.unwrap();
                let ok = r["balance"].as_str() == Some(&(liquid + locked).to_string())
                    && r["locked"].as_str() == Some(&locked.to_string());
                tally(
                    "stx balance",
                    ok,
                    format!(
                        "{principal}: {} locked {} vs {} / {locked}",
                        r["balance"],
                        r["locked"],
                        liquid + locked
                    ),
                );
            }
            ["extended", "v1", "address", principal, "nonces"] if q.is_empty() => {
                let ours = store.next_nonce(principal).await.unwrap();
                let theirs = r["last_executed_tx_nonce"].as_i64().map_or(0, |n| n + 1);
                tally("next executed nonce", ours == theirs, format!("{principal}: {theirs} vs {ours}"));
            }
            ["extended", "v1", "tx", "mempool"] if q.is_empty() => {
                let ours = store.mempool_tx_ids().await.unwrap();
                let mut theirs: Vec<String> = r["results"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t["tx_id"].as_str().unwrap().to_owned())
                    .collect();
                theirs.sort();
                let total = r["total"].as_u64().unwrap() as usize;
                let mut ours_sorted = ours.clone();
                ours_sorted.sort();
                let ok = ours.len() == total && (total > theirs.len() || ours_sorted == theirs);
                tally("mempool", ok, format!("{total} {theirs:?} vs {ours:?}"));
            }
            _ => {}
        }
    }
    report
}

macro_rules! fixture_tests {
    ($($name:ident: $file:expr, $oracle:expr, $net:expr, $genesis:expr, $refused:expr;)*) => {
        mod sqlite {
            use super::*;
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                check_fixture(Db::Sqlite, Fixture { file: $file, oracle: $oracle, network: $net, from_genesis: $genesis, refused: $refused }).await;
            })*
        }
        mod postgres {
            use super::*;
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                check_fixture(Db::Postgres, Fixture { file: $file, oracle: $oracle, network: $net, from_genesis: $genesis, refused: $refused }).await;
            })*
        }
    };
}

fixture_tests! {
    // The last event streams mainnet microblock transactions (chain id 1) into this testnet
    // log: unconfirmed previews are kept as the node reported them, as the incumbent does.
    mocknet: "fixtures/mocknet.tsv", Some("mocknet"), Network::Testnet, false, &[];
    mainnet_block0: "fixtures/mainnet-block0.tsv", Some("mainnet-block0"), Network::Mainnet, true, &[];
    epoch_3_transition: "fixtures/epoch-3-transition.tsv", Some("epoch-3-transition"), Network::Testnet, true, &[];
    pox_4_stack_stx: "fixtures/regtest-env-pox-4-stack-stx-in-reward-phase-S1.tsv", Some("regtest-env-pox-4-stack-stx-in-reward-phase-S1"), Network::Testnet, true, &[];
    mainnet_reorg_scenario1: "fixtures/mainnet-reorg-scenario1.tsv", Some("mainnet-reorg-scenario1"), Network::Mainnet, false, &[];
    mainnet_reorg_scenario2: "fixtures/mainnet-reorg-scenario2.tsv", Some("mainnet-reorg-scenario2"), Network::Mainnet, false, &[];
    mainnet_out_of_order_microblock: "fixtures/mainnet-out-of-order-microblock.tsv", Some("mainnet-out-of-order-microblock"), Network::Mainnet, false, &[];
    poisonmicroblock: "fixtures/poisonmicroblock.tsv", Some("poisonmicroblock"), Network::Mainnet, false, &[];
}
