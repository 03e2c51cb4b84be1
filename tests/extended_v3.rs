//! `/extended/v3` transactions, blocks' transactions, events, mempool and supply end to end
//! on SQLite and PostgreSQL: a generated devnet chain is ingested and every
//! answer is checked against values recomputed from the chain's own `/new_block` payloads
//! (which transactions, in which order, with which events), and the cursor rules against the
//! incumbent's: `next`/`previous`/`current` across pages, all `null` on an empty page, the
//! limits, `H:0:0` naming a whole block, and a cursor that neither skips nor repeats a row while
//! new blocks arrive.

mod common;

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;

use common::{devnet_config, devnet_events, ingest_all, Db, TestStore};
use serde_json::Value;
use stacks_ledger::events::tsv::RawEvent;
use stacks_ledger::ledger::Network;
use warp::{Filter, Reply};

async fn get<F, R>(api: &F, path: &str) -> (u16, Value)
where
    F: Filter<Extract = (R,), Error = Infallible> + Clone + Send + Sync + 'static,
    R: Reply + Send,
{
    let res = warp::test::request().path(path).reply(api).await;
    (res.status().as_u16(), serde_json::from_slice(res.body()).unwrap_or(Value::Null))
}

/// One block of the generated chain: height and its transactions (id, tx_index).
#[derive(Debug, Clone)]
struct Block {
    height: u64,
    index_block_hash: String,
    block_hash: String,
    txs: Vec<(String, u64, String)>,
}

/// The chain's blocks by height (no forks, no microblocks in the chains generated here), with
/// each transaction's raw result.
fn blocks_of(events: &[RawEvent]) -> BTreeMap<u64, Block> {
    let mut out = BTreeMap::new();
    for e in events.iter().filter(|e| e.path == "/new_block") {
        let b: Value = serde_json::from_str(&e.payload).unwrap();
        let height = b["block_height"].as_u64().unwrap();
        let mut txs: Vec<(String, u64, String)> = b["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["txid"].as_str().unwrap().to_string(),
                    t["tx_index"].as_u64().unwrap(),
                    t["raw_result"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        txs.sort_by_key(|t| t.1);
        let block = Block {
            height,
            index_block_hash: b["index_block_hash"].as_str().unwrap().to_string(),
            block_hash: b["block_hash"].as_str().unwrap().to_string(),
            txs,
        };
        out.insert(height, block);
    }
    out
}

/// Events of every transaction by id, `(event_index within the tx, type)` in block order.
fn event_counts(events: &[RawEvent]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for e in events.iter().filter(|e| e.path == "/new_block") {
        let b: Value = serde_json::from_str(&e.payload).unwrap();
        for ev in b["events"].as_array().unwrap() {
            if ev["committed"] != Value::Bool(false) {
                *out.entry(ev["txid"].as_str().unwrap().to_string()).or_default() += 1;
            }
        }
    }
    out
}

/// Every canonical transaction id of heights ≥ 2, newest first (the boot block's transactions
/// are shown in block 1, so blocks 0 and 1 are checked as a set).
fn expected_order(blocks: &BTreeMap<u64, Block>) -> Vec<String> {
    blocks
        .values()
        .rev()
        .filter(|b| b.height >= 2)
        .flat_map(|b| b.txs.iter().rev().map(|t| t.0.clone()))
        .collect()
}

fn ids(page: &Value) -> Vec<String> {
    page["results"].as_array().unwrap().iter().map(|r| r["tx_id"].as_str().unwrap().to_string()).collect()
}

fn position(row: &Value) -> String {
    format!("{}:2147483647:{}", row["block"]["height"], row["block"]["tx_index"])
}

/// Every page of a transaction list `base` (with its `?limit=`), following `next`: checks each
/// page's `current` (its first row) and `previous` (the page before's first row).
async fn walk<F, R>(api: &F, base: &str) -> Vec<Value>
where
    F: Filter<Extract = (R,), Error = Infallible> + Clone + Send + Sync + 'static,
    R: Reply + Send,
{
    let mut pages: Vec<Value> = Vec::new();
    let mut url = base.to_string();
    loop {
        let (status, page) = get(api, &url).await;
        assert_eq!(status, 200, "{url}: {page}");
        let results = page["results"].as_array().unwrap();
        assert_eq!(page["cursor"]["current"], Value::String(position(&results[0])), "{url}");
        let previous = pages.last().map_or(Value::Null, |p| p["cursor"]["current"].clone());
        assert_eq!(page["cursor"]["previous"], previous, "{url}");
        let next = page["cursor"]["next"].as_str().map(String::from);
        pages.push(page);
        match next {
            Some(c) => url = format!("{base}&cursor={c}"),
            None => return pages,
        }
    }
}

async fn check(db: Db) {
    let mut cfg = devnet_config(22, 24, 4);
    cfg.forks = false;
    cfg.microblocks = false;
    let (events, _) = devnet_events(cfg);
    let Some(ts) = TestStore::new(db, "extended_v3", Network::Testnet).await else { return };
    let api = common::routes(Arc::clone(&ts.store));

    // Ingest up to block 16, page, then the rest: the cursor neither skips nor repeats a row.
    let cut = events
        .iter()
        .position(|e| {
            e.path == "/new_block"
                && serde_json::from_str::<Value>(&e.payload).unwrap()["block_height"].as_u64() == Some(17)
        })
        .unwrap();
    ingest_all(&ts.store, events[..cut].iter().cloned(), &[], "first part").await;
    let early = expected_order(&blocks_of(&events[..cut]));
    let (_, page1) = get(&api, "/extended/v3/transactions?limit=5").await;
    assert_eq!(ids(&page1), early[..5], "{page1}");
    let next = page1["cursor"]["next"].as_str().unwrap().to_string();
    ingest_all(&ts.store, events[cut..].iter().cloned(), &[], "second part").await;
    let (_, page2) = get(&api, &format!("/extended/v3/transactions?limit=5&cursor={next}")).await;
    assert_eq!(ids(&page2), early[5..10], "a cursor taken before new blocks keeps its place");
    let (_, again1) = get(&api, "/extended/v3/transactions?limit=5").await;
    assert_ne!(ids(&again1), ids(&page1), "the first page moved on with the new blocks");

    // The whole list, page by page, is the chain's transactions newest first.
    let blocks = blocks_of(&events);
    let order = expected_order(&blocks);
    let pages = walk(&api, "/extended/v3/transactions?limit=7").await;
    let listed: Vec<String> = pages.iter().flat_map(ids).collect();
    assert_eq!(listed[..order.len()], order[..], "newest first, every row once");
    let low: std::collections::BTreeSet<String> =
        blocks.values().filter(|b| b.height < 2).flat_map(|b| b.txs.iter().map(|t| t.0.clone())).collect();
    let tail: std::collections::BTreeSet<String> = listed[order.len()..].iter().cloned().collect();
    assert_eq!(tail, low, "block 1 shows its own and the boot block's transactions");
    let own_total = order.len() + blocks.get(&1).map_or(0, |b| b.txs.len());
    assert!(pages.iter().all(|p| p["total"] == own_total as u64 && p["limit"] == 7), "{}", pages[0]);
    for p in &pages[..pages.len() - 1] {
        assert_eq!(p["results"].as_array().unwrap().len(), 7);
    }

    // `H:0:0` is the whole of block H; an empty page has all-null cursors and total 0.
    let b10 = &blocks[&10];
    let (_, at10) = get(&api, "/extended/v3/transactions?limit=50&cursor=10:0:0").await;
    let first_ids: Vec<String> = b10.txs.iter().rev().map(|t| t.0.clone()).collect();
    assert_eq!(ids(&at10)[..first_ids.len()], first_ids[..]);
    let (_, empty) = get(&api, "/extended/v3/transactions?cursor=0:0:0").await;
    assert_eq!(empty["results"], serde_json::json!([]));
    assert_eq!(empty["total"], 0);
    assert_eq!(empty["cursor"], serde_json::json!({"next": null, "previous": null, "current": null}));

    // Limits: the maximum is served, above it and 0 are the spec's invalid-input answer with
    // the incumbent's message; a malformed cursor likewise.
    assert_eq!(get(&api, "/extended/v3/transactions?limit=50").await.1["limit"], 50);
    for (q, msg) in [
        ("limit=51", "querystring/limit must be <= 50"),
        ("limit=0", "querystring/limit must be >= 1"),
        ("cursor=garbage", "querystring/cursor must match pattern \"^[0-9]+:[0-9]+:[0-9]+$\""),
    ] {
        let (status, body) = get(&api, &format!("/extended/v3/transactions?{q}")).await;
        assert_eq!((status, body["message"].as_str()), (500, Some(msg)), "{q}: {body}");
        assert!(body["errorTag"].is_string() && body["stack"].is_string());
    }

    // A block's transactions, by height, hash, index hash and `latest`.
    for key in [b10.height.to_string(), b10.block_hash.clone(), b10.index_block_hash.clone()] {
        let (status, page) = get(&api, &format!("/extended/v3/blocks/{key}/transactions")).await;
        assert_eq!(status, 200, "{key}");
        assert_eq!(ids(&page), first_ids, "{key}");
        assert_eq!(page["total"], b10.txs.len() as u64);
        assert_eq!(page["cursor"]["previous"], Value::Null);
    }
    let pages = walk(&api, &format!("/extended/v3/blocks/{}/transactions?limit=2", b10.height)).await;
    assert_eq!(pages.iter().flat_map(ids).collect::<Vec<_>>(), first_ids);
    let tip = blocks.values().next_back().unwrap();
    let (_, latest) = get(&api, "/extended/v3/blocks/latest/transactions").await;
    assert_eq!(ids(&latest), tip.txs.iter().rev().map(|t| t.0.clone()).collect::<Vec<_>>());
    let (status, missing) = get(&api, "/extended/v3/blocks/9999/transactions").await;
    assert_eq!((status, missing["message"].as_str()), (404, Some("Block not found")));

    // One transaction, with and without the heavy fields.
    let counts = event_counts(&events);
    // The transaction with the most events (above block 1).
    let (block, (tx_id, _, raw_result)) = blocks
        .values()
        .filter(|b| b.height >= 2)
        .flat_map(|b| b.txs.iter().map(move |t| (b, t.clone())))
        .max_by_key(|(_, t)| counts.get(&t.0).copied().unwrap_or(0))
        .unwrap();
    assert!(counts[&tx_id] >= 3, "a transaction with several events");
    let (status, tx) = get(&api, &format!("/extended/v3/transactions/{tx_id}")).await;
    assert_eq!(status, 200, "{tx}");
    assert_eq!(tx["block"]["height"], block.height);
    assert_eq!(tx["block"]["index_hash"], block.index_block_hash.as_str());
    assert_eq!(tx["parent_block"]["index_hash"], blocks[&(block.height - 1)].index_block_hash.as_str());
    assert_eq!(tx["event_count"], counts[&tx_id] as u64);
    assert!(tx.get("result").is_none() && tx.get("post_conditions").is_none());
    for q in ["include=result,post_conditions", "include=result&include=post_conditions"] {
        let (_, full) = get(&api, &format!("/extended/v3/transactions/{tx_id}?{q}")).await;
        assert_eq!(full["result"]["hex"], raw_result.as_str(), "{q}");
        assert!(full["post_conditions"].is_array(), "{q}");
    }
    let (status, bad) = get(&api, &format!("/extended/v3/transactions/{tx_id}?include=nope")).await;
    assert_eq!(status, 500, "{bad}");
    let (status, none) = get(&api, &format!("/extended/v3/transactions/0x{}", "00".repeat(32))).await;
    assert_eq!((status, none["message"].as_str()), (404, Some("Transaction not found")));

    // Its events, two at a time: every index once, in order, with the cursors' rules.
    let n = counts[&tx_id];
    let mut seen = Vec::new();
    let mut url = format!("/extended/v3/transactions/{tx_id}/events?limit=2");
    loop {
        let (status, page) = get(&api, &url).await;
        assert_eq!(status, 200, "{page}");
        assert_eq!(page["total"], n as u64);
        let first = page["results"][0]["event_index"].as_u64().unwrap();
        assert_eq!(page["cursor"]["current"], first.to_string().as_str());
        let prev = (first > 0).then(|| first.saturating_sub(2).to_string());
        assert_eq!(page["cursor"]["previous"].as_str(), prev.as_deref());
        seen.extend(page["results"].as_array().unwrap().iter().map(|e| e["event_index"].as_u64().unwrap()));
        match page["cursor"]["next"].as_str() {
            Some(c) => url = format!("/extended/v3/transactions/{tx_id}/events?limit=2&cursor={c}"),
            None => break,
        }
    }
    assert_eq!(seen, (0..n as u64).collect::<Vec<_>>());
    let (status, body) = get(&api, &format!("/extended/v3/transactions/0x{}/events", "00".repeat(32))).await;
    assert_eq!((status, body["message"].as_str()), (500, Some("Transaction not found")));

    // The supply is v1's, in µSTX.
    let (_, supply) = get(&api, "/extended/v3/tokens/stx/supply").await;
    let (_, v1) = get(&api, "/extended/v1/stx_supply").await;
    let v1_ustx = v1["total_stx"].as_str().unwrap().replace('.', "");
    assert_eq!(supply["total"].as_str().unwrap().trim_start_matches('0'), v1_ustx.trim_start_matches('0'));
    assert_eq!(supply["projected_total_2050"], "2318000000000000");

    // The mempool list's envelope (the devnet chain's pending transactions, if any).
    let (status, mempool) = get(&api, "/extended/v3/mempool/transactions?limit=2").await;
    assert_eq!(status, 200, "{mempool}");
    let pending = mempool["results"].as_array().unwrap();
    if pending.is_empty() {
        assert_eq!(mempool["cursor"], serde_json::json!({"next": null, "previous": null, "current": null}));
    } else {
        let c = format!("{}:{}", pending[0]["receipt_time"], pending[0]["tx_id"].as_str().unwrap());
        assert_eq!(mempool["cursor"]["current"], c.as_str());
    }
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_v3_transactions_follow_the_chain() {
    check(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_v3_transactions_follow_the_chain() {
    check(Db::Postgres).await;
}
