//! Mempool garbage collection, as the incumbent does it: a transaction still pending 256
//! blocks after it arrived is pruned with the status `dropped_stale_garbage_collect` (its
//! `tx_status` in the API), one received later stays pending. On SQLite and PostgreSQL.

mod common;

use common::{devnet_events, ingest_all, Db, TestStore};
use stacks_devnet::DevnetConfig;
use stacks_ledger::events::RawEvent;
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;

const BLOCKS: u64 = 270;

fn chain(seed: u64) -> Vec<RawEvent> {
    let cfg = DevnetConfig { seed, blocks: BLOCKS, txs_per_block: 1, accounts: 4, ..DevnetConfig::default() };
    devnet_events(cfg).0
}

fn block_height(ev: &RawEvent) -> Option<u64> {
    if ev.path != "/new_block" {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(&ev.payload).unwrap();
    v["block_height"].as_u64()
}

/// The txid of a `/new_mempool_tx` event holding one transaction.
fn txid_of(ev: &RawEvent) -> String {
    let txs: Vec<String> = serde_json::from_str(&ev.payload).unwrap();
    assert_eq!(txs.len(), 1, "{}", ev.payload);
    let raw = stacks_codec::decode_hex(&txs[0]).unwrap();
    format!("0x{}", hex::encode(stacks_codec::tx::txid_of(&raw)))
}

async fn pending(store: &Store, txid: &str) -> bool {
    store.mempool_tx_ids().await.unwrap().iter().any(|t| t == txid)
}

async fn gc(db: Db) {
    let Some(ts) = TestStore::new(db, "mempool_gc", Network::Testnet).await else { return };
    let store = &ts.store;
    let label = format!("{db:?} mempool gc");

    // Two transactions of another chain (same network, valid, never mined here) reach the
    // mempool: one on a tip at height 10, one at height 200.
    let foreign: Vec<RawEvent> = chain(2)
        .into_iter()
        .filter(|e| {
            e.path == "/new_mempool_tx" && serde_json::from_str::<Vec<String>>(&e.payload).unwrap().len() == 1
        })
        .take(2)
        .collect();
    assert_eq!(foreign.len(), 2);
    let (old, young) = (txid_of(&foreign[0]), txid_of(&foreign[1]));
    let mut events = Vec::new();
    for ev in chain(1) {
        let h = block_height(&ev);
        events.push(ev);
        match h {
            Some(10) => events.push(foreign[0].clone()),
            Some(200) => events.push(foreign[1].clone()),
            _ => {}
        }
    }
    for (i, ev) in events.iter_mut().enumerate() {
        ev.id = i as i64 + 1;
    }
    assert!(!events.iter().any(
        |e| e.path == "/new_block" && (e.payload.contains(&old[2..]) || e.payload.contains(&young[2..]))
    ));

    // Received on a tip at 10: pending through the block at 266 (on a tip at 265 = 10 + 255),
    // collected by the block at 267 (on a tip at 266 = 10 + 256).
    let mut at = 0;
    for ev in events {
        let h = block_height(&ev);
        ingest_all(store, [ev], &[], &label).await;
        let Some(h) = h else { continue };
        at = h;
        if h == 11 {
            assert!(pending(store, &old).await, "{label}: {old} pending at first");
            assert_eq!(store.mempool_status(&old).await.unwrap(), Some(("pending".into(), None, false)));
        }
        if h == 266 {
            assert!(pending(store, &old).await, "{label}: {old} collected too early");
        }
        if h == 267 {
            assert!(!pending(store, &old).await, "{label}: {old} not collected");
            assert_eq!(
                store.mempool_status(&old).await.unwrap(),
                Some(("dropped_stale_garbage_collect".into(), None, true)),
                "{label}"
            );
        }
    }
    assert_eq!(at, BLOCKS);
    // Received on a tip at 200: 70 blocks later it is still pending.
    assert!(pending(store, &young).await, "{label}: {young} collected too early");
    assert_eq!(store.mempool_status(&young).await.unwrap(), Some(("pending".into(), None, false)));
    // Mined transactions are pruned as before, not garbage-collected.
    assert!(store.mempool_tx_ids().await.unwrap().iter().all(|t| t == &young), "{label}");
    println!("{label}: {old} collected at block 267, {young} still pending at {BLOCKS}");
    ts.finish().await;
}

#[tokio::test]
async fn sqlite_mempool_gc_after_256_blocks() {
    gc(Db::Sqlite).await;
}

#[tokio::test]
async fn postgres_mempool_gc_after_256_blocks() {
    gc(Db::Postgres).await;
}
