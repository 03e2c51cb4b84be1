//! The kept real-node chains (tests/realnode/*/: made by a real mocknet `stacks-node`, see
//! tests/realnode/README.md): each chain's raw event log, replayed into a store on SQLite and
//! PostgreSQL, must answer `/v2/accounts` for every principal the chain touched,
//! `/v2/contracts/source` and `/interface` for every contract it deployed, and the chain-tip
//! fields of `/v2/info`, exactly as the node itself answered at the same tip; every transaction
//! ends as it did when our `serve` followed it live; and `check-data` reconciles the chain. The
//! node is not needed: its answers were recorded beside each chain.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use common::{replay, Db, TestStore};
use rosetta_check::data::{Checker, Options};
use serde_json::Value;
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;

/// The kept chains, by directory name under tests/realnode/.
const CHAINS: [&str; 3] = ["contracts", "pox", "bns"];

fn chain_dir(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/realnode")).join(name)
}

fn load(dir: &std::path::Path, file: &str) -> Value {
    let path = dir.join(file);
    serde_json::from_str(
        &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

async fn get(
    api: &(impl warp::Filter<Extract = (impl warp::Reply,), Error = std::convert::Infallible> + Clone + 'static),
    path: &str,
) -> (u16, Value) {
    let res = warp::test::request().path(path).reply(api).await;
    (res.status().as_u16(), serde_json::from_slice(res.body()).unwrap_or(Value::Null))
}

/// Serves the public API on an ephemeral port for `check-data`.
async fn serve(store: Arc<Store>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(warp::serve(common::routes(store)).incoming(listener).run());
    format!("http://{addr}")
}

/// What one chain compared, so a chain that compares nothing fails.
#[derive(Debug, Default)]
struct Compared {
    accounts: usize,
    contracts: usize,
    failed_deploys: usize,
    txs: usize,
    /// Sponsored transactions whose listing was checked for the sender and the sponsor, by kind.
    sponsored: BTreeMap<String, usize>,
}

async fn chain_matches_the_node(db: Db, name: &str) -> Option<Compared> {
    let dir = chain_dir(name);
    let specs = vec![
        test_support::load_json("rosetta-spec/api.json")?,
        test_support::load_json("rosetta-spec/api-v1.4.7.json")?,
    ];
    let ts = TestStore::new(db, "realnode", Network::Testnet).await?;
    replay(&ts.store, &dir.join("chain.tsv"), &[]).await;
    let api = common::routes(Arc::clone(&ts.store));
    let label = format!("{db:?} {name}");
    let mut c = Compared::default();

    // /v2/info: the chain tip the node reported.
    let node_info = load(&dir, "node-info.json");
    let (status, info) = get(&api, "/v2/info").await;
    assert_eq!(status, 200, "{label}: {info}");
    // The tips and the chain id. Not compared: `parent_network_id` (the burnchain's magic, which
    // the node takes from its configuration: regtest's in mocknet), the versions, and the stable
    // burn block (mocknet sends no burn-block events, so the ledger has none to answer with).
    let fields = [
        "stacks_tip_height",
        "stacks_tip",
        "stacks_tip_consensus_hash",
        "burn_block_height",
        "pox_consensus",
        "network_id",
    ];
    for field in fields {
        assert_eq!(info[field], node_info[field], "{label}: /v2/info {field}");
    }

    // /v2/accounts: the whole answer (balance, locked, unlock_height, nonce).
    for (principal, node) in load(&dir, "node-accounts.json").as_object().unwrap() {
        let (status, ours) = get(&api, &format!("/v2/accounts/{principal}?proof=0")).await;
        assert_eq!(status, 200, "{label} {principal}: {ours}");
        assert_eq!(&ours, node, "{label}: /v2/accounts/{principal}");
        c.accounts += 1;
    }

    // /v2/contracts: a failed deploy is unknown to the node, and to us.
    for (id, node) in load(&dir, "node-contracts.json").as_object().unwrap() {
        let (addr, contract) = id.split_once('.').unwrap();
        let (status, source) = get(&api, &format!("/v2/contracts/source/{addr}/{contract}?proof=0")).await;
        let (i_status, interface) = get(&api, &format!("/v2/contracts/interface/{addr}/{contract}")).await;
        if node["source"].is_null() {
            assert_eq!((status, i_status), (404, 404), "{label} {id}: {source} {interface}");
            c.failed_deploys += 1;
            continue;
        }
        assert_eq!((status, i_status), (200, 200), "{label} {id}: {source} {interface}");
        assert_eq!(source, node["source"], "{label}: /v2/contracts/source/{addr}/{contract}");
        assert_eq!(interface, node["interface"], "{label}: /v2/contracts/interface/{addr}/{contract}");
        c.contracts += 1;
    }

    // Each transaction ends in the replay as it did when `serve` followed it live.
    for tx in load(&dir, "txs.json").as_array().unwrap() {
        let Some(txid) = tx["txid"].as_str() else { continue };
        let (status, ours) = get(&api, &format!("/extended/v1/tx/{txid}")).await;
        assert_eq!(status, 200, "{label} {txid}: {ours}");
        assert_eq!(ours["tx_status"], tx["tx_status"], "{label}: {} {txid}", tx["label"]);
        assert_eq!(ours["tx_result"]["repr"], tx["tx_result"], "{label}: {} {txid}", tx["label"]);
        c.txs += 1;
    }

    // A sponsored transaction is its sponsor's in v1 `/transactions` and v2 (the fee payer is
    // among the incumbent's `principal_txs`), but not in v1 `transactions_with_transfers`, whose
    // query leaves the fee payer out, unless the sponsor is otherwise a party; the sender's in all.
    for tx in load(&dir, "txs.json").as_array().unwrap() {
        let Some(txid) = tx["txid"].as_str() else { continue };
        let (_, ours) = get(&api, &format!("/extended/v1/tx/{txid}?event_limit=50")).await;
        let Some(sponsor) = ours["sponsor_address"].as_str() else { continue };
        let sender = ours["sender_address"].as_str().unwrap();
        let party = |p: &str| {
            ours["token_transfer"]["recipient_address"].as_str() == Some(p)
                || ours["events"].as_array().unwrap().iter().any(|e| {
                    [&e["asset"]["sender"], &e["asset"]["recipient"]].iter().any(|a| a.as_str() == Some(p))
                })
        };
        for (who, with_transfers) in [(sender, true), (sponsor, party(sponsor))] {
            let lists = [
                (format!("/extended/v1/address/{who}/transactions?limit=50"), true),
                (format!("/extended/v2/addresses/{who}/transactions?limit=50"), true),
                (format!("/extended/v1/address/{who}/transactions_with_transfers?limit=50"), with_transfers),
            ];
            for (path, listed) in lists {
                let (status, page) = get(&api, &path).await;
                assert_eq!(status, 200, "{label} {path}: {page}");
                let rows = page["results"].as_array().unwrap();
                let ids: Vec<&str> =
                    rows.iter().map(|r| r["tx_id"].as_str().or(r["tx"]["tx_id"].as_str()).unwrap()).collect();
                assert!(rows.len() < 50, "{label} {path}: one page holds them all");
                assert_eq!(page["total"].as_u64(), Some(ids.len() as u64), "{label} {path}");
                assert_eq!(ids.contains(&txid), listed, "{label} {path}: {} {txid}", tx["label"]);
            }
        }
        *c.sponsored.entry(ours["tx_type"].as_str().unwrap().to_string()).or_default() += 1;
    }

    // check-data reconciles every account's balance with the chain's operations.
    let url = serve(Arc::clone(&ts.store)).await;
    let mut opts = Options::new(&url);
    opts.specs = specs;
    opts.coverage = Some(1.0);
    let mut checker = Checker::new(opts).unwrap();
    checker.sync().await.unwrap();
    let report = checker.finish().await;
    println!("{label}: check-data {} {}", serde_json::to_string(&report.stats).unwrap(), report.summary());
    assert!(report.ok(), "{label}: {:#?}", report.failures);
    assert!(
        report.stats.blocks > 0 && report.stats.active_reconciliations > 0,
        "{label}: {:?}",
        report.stats
    );
    assert_eq!(report.stats.failed_reconciliations, 0, "{label}");

    ts.finish().await;
    println!("{label}: {c:?}");
    assert!(c.accounts >= 5 && c.txs > 0, "{label}: {c:?}");
    Some(c)
}

async fn all_chains(db: Db) {
    let mut total = Compared::default();
    for name in CHAINS {
        let Some(c) = chain_matches_the_node(db, name).await else { return };
        total.contracts += c.contracts;
        total.failed_deploys += c.failed_deploys;
        for (kind, n) in c.sponsored {
            *total.sponsored.entry(kind).or_default() += n;
        }
    }
    assert!(total.contracts >= 3 && total.failed_deploys >= 1, "{db:?}: {total:?}");
    // The contracts chain's sponsored transfers and contract call.
    let sponsored = |kind: &str| total.sponsored.get(kind).copied().unwrap_or(0);
    assert!(sponsored("token_transfer") >= 3 && sponsored("contract_call") >= 1, "{db:?}: {total:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_real_node_chains_answer_as_the_node() {
    all_chains(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_real_node_chains_answer_as_the_node() {
    all_chains(Db::Postgres).await;
}
