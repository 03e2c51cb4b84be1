//! End to end, on both engines: the read paths made cheap for the 1M-tx benchmarks answer
//! exactly what the plain queries would.
//!
//! - `/extended/v1/address/{p}/transactions?offset=N` (the deep-offset skip over the covering
//!   index, stopping at a block boundary): every page at any offset is the matching slice of
//!   the whole list, walked page by page, which is in the route's order without duplicates.
//! - the unfiltered `/extended/v1/tx` total, summed from the blocks' counts and cached per
//!   canonical tip, is never stale: after every event of a chain with forks and microblocks it
//!   equals a fresh count of the canonical transactions.
//! - the per-account STX and FT/NFT totals kept at ingest for `/balances` and `/stx` equal
//!   the sums recomputed from every account's canonical history, after every event.
//! - historical nonces (`nonces_at`: the sender's last transaction at or below a height) equal
//!   the highest nonce used up to that height, recomputed from the mined transactions, for
//!   Rosetta `/account/balance` and `/extended/v1/address/{a}/nonces?block_height=`.

mod common;

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use common::{devnet_config, devnet_events, ingest_all, Db, TestStore};
use serde_json::{json, Value};
use stacks_ledger::ledger::Network;

async fn get(
    api: &(impl warp::Filter<Extract = (impl warp::Reply,)> + Clone + 'static),
    path: &str,
) -> Value {
    let res = warp::test::request().path(path).reply(api).await;
    assert_eq!(res.status(), 200, "GET {path}: {:?}", res.body());
    serde_json::from_slice(res.body()).unwrap()
}

/// The route's order: newest block first, then microblock sequence (anchored last), then index.
fn order_key(tx: &Value) -> (i64, i64, i64) {
    let seq = tx["microblock_sequence"].as_i64().unwrap_or(2147483647);
    (tx["block_height"].as_i64().unwrap(), seq, tx["tx_index"].as_i64().unwrap())
}

async fn read_paths(db: Db) {
    let Some(ts) = TestStore::new(db, "read_paths", Network::Testnet).await else { return };
    let (events, _) = devnet_events(devnet_config(11, 40, 12));
    let api = common::routes(Arc::clone(&ts.store));
    // The boot block's transactions: stored in block 1, and left out of the unfiltered total as
    // the incumbent does (docs/extended-deviations.md, "Block 0").
    let boot = events
        .iter()
        .filter(|e| e.path == "/new_block")
        .map(|e| serde_json::from_str::<Value>(&e.payload).unwrap())
        .find(|b| b["block_height"] == 0)
        .map_or(0, |b| b["transactions"].as_array().map_or(0, Vec::len) as u64);
    // The `/extended/v1/tx` total is cached per canonical tip: after every event (new blocks,
    // forks and reorgs, microblocks, mempool) the route's total is the uncached count (before
    // block 1 that count is 0, block 0 being stored without its transactions).
    let (mut changes, mut last) = (0, None);
    for ev in events {
        ingest_all(&ts.store, [ev], &[], "devnet").await;
        let total = get(&api, "/extended/v1/tx?limit=1").await["total"].as_u64().unwrap();
        let count = ts.store.canonical_tx_total(false).await.unwrap();
        assert_eq!(total, count.saturating_sub(boot), "{db:?}: stale /tx total");
        let bad = ts.store.tx_total_mismatch().await.unwrap();
        assert!(bad.is_none(), "{db:?}: Σ blocks.tx_count ≠ canonical txs (kept, counted): {bad:?}");
        // The per-account totals kept by the write path (balances, stx) equal the sums over
        // each account's canonical history at every tip, through forks and microblocks.
        let bad = ts.store.account_totals_mismatches().await.unwrap();
        assert!(bad.is_empty(), "{db:?}: kept totals ≠ recomputed for {bad:?}");
        changes += usize::from(last.is_some_and(|l| l != total));
        last = Some(total);
    }
    assert!(changes > 10, "{db:?}: the total changed only {changes} times");
    // Migration 0017's backfill of the asset totals (for stores that already have events)
    // sums to the same as the write path kept.
    ts.store.rebuild_asset_totals().await.unwrap();
    let bad = ts.store.account_totals_mismatches().await.unwrap();
    assert!(bad.is_empty(), "{db:?}: backfilled asset totals ≠ recomputed for {bad:?}");

    // The principals with the longest lists: the busiest sender and the most called contract.
    let recent = get(&api, "/extended/v1/tx?limit=50").await;
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for t in recent["results"].as_array().unwrap() {
        for p in [&t["sender_address"], &t["contract_call"]["contract_id"]] {
            if let Some(p) = p.as_str() {
                *count.entry(p.to_string()).or_default() += 1;
            }
        }
    }
    let mut principals: Vec<(usize, String)> = count.into_iter().map(|(p, n)| (n, p)).collect();
    principals.sort();
    let principals: Vec<String> = principals.into_iter().rev().take(3).map(|(_, p)| p).collect();
    assert!(!principals.is_empty());

    let mut lists: Vec<(String, Vec<Value>)> = Vec::new();
    for p in &principals {
        let base = format!("/extended/v1/address/{p}/transactions");
        let first = get(&api, &format!("{base}?limit=50")).await;
        let total = first["total"].as_u64().unwrap() as usize;
        assert!(total > 50, "{db:?} {p}: {total} txs, too few to page");
        // The whole list, page by page.
        let mut all: Vec<Value> = Vec::new();
        while all.len() < total {
            let page = get(&api, &format!("{base}?limit=50&offset={}", all.len())).await;
            assert_eq!(page["total"].as_u64().unwrap() as usize, total);
            let rows = page["results"].as_array().unwrap();
            assert!(!rows.is_empty(), "{db:?} {p}: empty page at {}", all.len());
            all.extend(rows.iter().cloned());
        }
        assert_eq!(all.len(), total);
        let ids: HashSet<&str> = all.iter().map(|t| t["tx_id"].as_str().unwrap()).collect();
        assert_eq!(ids.len(), total, "{db:?} {p}: duplicates across pages");
        for w in all.windows(2) {
            assert!(
                order_key(&w[0]) > order_key(&w[1]),
                "{db:?} {p}: out of order {:?}",
                (&w[0]["tx_id"], &w[1]["tx_id"])
            );
        }
        // Pages at offsets that fall inside blocks, of every size, are slices of the whole.
        for (offset, limit) in
            [(1, 7), (13, 20), (total / 2, 50), (total - 3, 10), (total - 1, 1), (total, 5)]
        {
            let page = get(&api, &format!("{base}?limit={limit}&offset={offset}")).await;
            let want: Vec<&Value> = all.iter().skip(offset).take(limit).collect();
            let got: Vec<&Value> = page["results"].as_array().unwrap().iter().collect();
            assert_eq!(got, want, "{db:?} {p}: offset {offset} limit {limit}");
            // Past the end the incumbent's total (read from the page's first row) is 0.
            let want_total = if offset >= total { 0 } else { total };
            assert_eq!(page["total"].as_u64().unwrap() as usize, want_total, "offset {offset}");
        }
        lists.push((base, all));
    }

    // SQLite finds a page's rows through its entries' `account_txs.tx_rid` (migration 0045):
    // row addresses, which a dump and restore may renumber. With every `txs` row moved, the
    // check sees stale pointers, and the pages (new URLs: none answered from the response
    // cache), read by key instead, are the same.
    if db == Db::Sqlite {
        assert_eq!(ts.store.account_tx_rid_mismatches().await.unwrap(), Vec::<String>::new());
        ts.db.execute_raw("UPDATE txs SET rowid = rowid + 1000000").await;
        assert!(!ts.store.account_tx_rid_mismatches().await.unwrap().is_empty(), "stale pointers unseen");
        for (base, all) in &lists {
            let mut again: Vec<Value> = Vec::new();
            while again.len() < all.len() {
                let page = get(&api, &format!("{base}?limit=30&offset={}", again.len())).await;
                let rows = page["results"].as_array().unwrap();
                assert!(!rows.is_empty(), "{base}: empty page at {}", again.len());
                again.extend(rows.iter().cloned());
            }
            assert!(&again == all, "{base}: pages read by key differ from the pointed ones");
        }
    }

    // Historical nonces: the highest nonce the account used (as origin or sponsor) in a mined
    // canonical transaction at or below each height, from the transactions themselves.
    let tip = get(&api, "/extended/v1/block?limit=1").await["results"][0]["height"].as_i64().unwrap();
    let sender = &principals.iter().find(|p| !p.contains('.')).expect("a standard principal").clone();
    let mut mined: Vec<(i64, i64)> = Vec::new();
    let mut offset = 0;
    loop {
        let page = get(&api, &format!("/extended/v1/tx?limit=50&offset={offset}")).await;
        let rows = page["results"].as_array().unwrap();
        if rows.is_empty() {
            break;
        }
        for t in rows {
            let h = t["block_height"].as_i64().unwrap();
            if t["sender_address"] == json!(sender) && !t["is_burnchain_op"].as_bool().unwrap_or(false) {
                mined.push((h, t["nonce"].as_i64().unwrap()));
            }
            if t["sponsored"] == json!(true) && t["sponsor_address"] == json!(sender) {
                mined.push((h, t["sponsor_nonce"].as_i64().unwrap()));
            }
        }
        offset += rows.len();
    }
    assert!(!mined.is_empty());
    let net = json!({ "blockchain": "stacks", "network": "testnet" });
    for h in [1, 2, tip / 3, tip / 2, tip - 1, tip] {
        let expected = mined.iter().filter(|(bh, _)| *bh <= h).map(|(_, n)| *n).max();
        let body = json!({ "network_identifier": net, "account_identifier": { "address": sender },
                           "block_identifier": { "index": h } });
        let res = warp::test::request()
            .method("POST")
            .path("/rosetta/v1/account/balance")
            .json(&body)
            .reply(&api)
            .await;
        assert_eq!(res.status(), 200, "{db:?} balance at {h}: {:?}", res.body());
        let v: Value = serde_json::from_slice(res.body()).unwrap();
        let next = v["metadata"]["sequence_number"].as_i64().unwrap();
        assert_eq!(next, expected.map_or(0, |n| n + 1), "{db:?} {sender} Rosetta next nonce at {h}");
        let n = get(&api, &format!("/extended/v1/address/{sender}/nonces?block_height={h}")).await;
        assert_eq!(n["last_executed_tx_nonce"].as_i64(), expected, "{db:?} {sender} last nonce at {h}");
    }
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_read_paths_answer_as_the_plain_queries() {
    read_paths(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_read_paths_answer_as_the_plain_queries() {
    read_paths(Db::Postgres).await;
}
