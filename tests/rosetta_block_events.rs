//! `/events/blocks` (Rosetta 1.4.7 indexer) follows reorgs: after the mainnet reorg fixtures and
//! a forking devnet chain, on SQLite and PostgreSQL, the event stream read page by page from
//! the start has consecutive sequences, `max_sequence` is its last one, every `block_removed`
//! removes the tip of the chain built so far (so it was added before), and applying all events
//! to an empty chain gives exactly the final canonical chain.

mod common;

use ledger_read::TipReader;
use std::sync::Arc;

use common::{devnet_config, devnet_events, ingest_all, replay, shared_file, Db, TestStore};
use serde_json::{json, Value};
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;

/// Reads the whole stream, applies it, and checks it against the store's canonical chain.
/// Returns (events, removals).
async fn follow(store: &Arc<Store>, network: &str, label: &str) -> (usize, usize) {
    let api = common::routes(Arc::clone(store));
    let network_id = json!({"blockchain": "stacks", "network": network});
    let (mut offset, mut events, mut removed) = (0i64, 0usize, 0usize);
    let mut last: Option<i64> = None;
    let mut max_sequence;
    let mut view: Vec<Value> = Vec::new();
    loop {
        let body = json!({"network_identifier": network_id, "offset": offset, "limit": 7});
        let res = warp::test::request()
            .method("POST")
            .path("/rosetta/v1/events/blocks")
            .body(body.to_string())
            .reply(&api)
            .await;
        assert_eq!(res.status(), 200, "{label}");
        let page: Value = serde_json::from_slice(res.body()).unwrap();
        max_sequence = page["max_sequence"].as_i64();
        let list = page["events"].as_array().unwrap().clone();
        if list.is_empty() {
            break;
        }
        assert!(list.len() <= 7, "{label}: page of {}", list.len());
        for e in list {
            let seq = e["sequence"].as_i64().unwrap();
            match last {
                Some(l) => assert_eq!(seq, l + 1, "{label}: gap before {e}"),
                None => assert_eq!(seq, 1, "{label}: the stream starts at 1"),
            }
            last = Some(seq);
            offset = seq + 1;
            events += 1;
            let id = e["block_identifier"].clone();
            match e["type"].as_str().unwrap() {
                "block_added" => {
                    let expected = view.len() as i64 + 1;
                    assert_eq!(id["index"], expected, "{label}: {e} does not extend the chain");
                    view.push(id);
                }
                "block_removed" => {
                    assert_eq!(view.last(), Some(&id), "{label}: {e} removes a block that is not the tip");
                    view.pop();
                    removed += 1;
                }
                other => panic!("{label}: event type {other}"),
            }
        }
    }
    assert_eq!(max_sequence, last.or(Some(0)), "{label}: max_sequence");
    let tip = store.tip().await.unwrap().map(|t| t.block).expect("a tip").block_height;
    let mut canonical = Vec::new();
    for h in 1..=tip {
        let b = store.rosetta_block_at(h).await.unwrap().expect("a canonical block at every height");
        canonical.push(json!({"index": b.block_height, "hash": b.block_hash}));
    }
    assert_eq!(view, canonical, "{label}: the applied stream is not the canonical chain");
    // Without an offset: the last events, ending at max_sequence.
    let body = json!({"network_identifier": network_id, "limit": 3});
    let res = warp::test::request()
        .method("POST")
        .path("/rosetta/v1/events/blocks")
        .body(body.to_string())
        .reply(&api)
        .await;
    let page: Value = serde_json::from_slice(res.body()).unwrap();
    let seqs: Vec<i64> =
        page["events"].as_array().unwrap().iter().map(|e| e["sequence"].as_i64().unwrap()).collect();
    let m = last.unwrap();
    assert_eq!(seqs, ((m - 2).max(1)..=m).collect::<Vec<_>>(), "{label}: tail page");
    println!("{label}: {events} events, {removed} removals, chain of {tip} blocks");
    (events, removed)
}

async fn fixture(db: Db, name: &str) {
    let Some(tsv) = shared_file(&format!("fixtures/{name}.tsv")) else { return };
    let Some(ts) = TestStore::new(db, "rosetta_block_events", Network::Mainnet).await else { return };
    replay(&ts.store, &tsv, &[]).await;
    let (events, removed) = follow(&ts.store, "mainnet", &format!("{db:?} {name}")).await;
    assert!(
        removed > 0 && events > removed,
        "{db:?} {name}: the fixture reorgs, the stream shows no removal"
    );
    ts.finish().await;
}

/// A devnet chain with forks, ingested in slices; the stream is checked after every slice.
async fn devnet(db: Db) {
    let (events, generator) = devnet_events(devnet_config(11, 50, 2));
    assert!(generator.stats().forks > 0, "{:?}", generator.stats());
    let Some(ts) = TestStore::new(db, "rosetta_block_events_devnet", Network::Testnet).await else { return };
    let mut removed = 0;
    for chunk in events.chunks(10) {
        ingest_all(&ts.store, chunk.iter().cloned(), &[], "devnet").await;
        if ts.store.tip().await.unwrap().map(|t| t.block).is_some() {
            removed = follow(&ts.store, "testnet", &format!("{db:?} devnet")).await.1;
        }
    }
    assert!(removed > 0, "{db:?} devnet: no removal");
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_block_events_follow_reorgs() {
    fixture(Db::Sqlite, "mainnet-reorg-scenario1").await;
    fixture(Db::Sqlite, "mainnet-reorg-scenario2").await;
    devnet(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_block_events_follow_reorgs() {
    fixture(Db::Postgres, "mainnet-reorg-scenario1").await;
    fixture(Db::Postgres, "mainnet-reorg-scenario2").await;
    devnet(Db::Postgres).await;
}
