//! Events that cannot be applied return the right `IngestError` and leave every table exactly
//! as it was; a replayed id is `AlreadyStored`. On SQLite and PostgreSQL.

mod common;

use std::fs::File;
use std::io::BufReader;

use common::{shared_file, Db, TestStore};
use stacks_ledger::events::{EventPath, RawEvent, TsvReader};
use stacks_ledger::ingest::{EventSink, IncomingEvent, IngestError, IngestOutcome, RawEventLog};
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;

fn mocknet() -> Option<Vec<RawEvent>> {
    let path = shared_file("fixtures/mocknet.tsv")?;
    Some(TsvReader::new(BufReader::new(File::open(path).unwrap())).map(Result::unwrap).collect())
}

fn event(id: Option<i64>, path: EventPath, payload: String) -> IncomingEvent {
    IncomingEvent { id, receive_timestamp: None, path, payload }
}

/// Ingests `ev`, expecting an error, and checks nothing changed.
async fn refused(store: &Store, ev: IncomingEvent) -> IngestError {
    let before = store.table_counts().await.unwrap();
    let err = store.ingest(ev).await.expect_err("event must be refused");
    assert_eq!(store.table_counts().await.unwrap(), before, "a refused event changed the store: {err}");
    err
}

async fn failures(db: Db) {
    let Some(events) = mocknet() else { return };
    let Some(ts) = TestStore::new(db, "failures", Network::Testnet).await else { return };
    let store = &ts.store;
    for ev in &events[..3] {
        let e = event(Some(ev.id), EventPath::from_path(&ev.path).unwrap(), ev.payload.clone());
        assert!(matches!(store.ingest(e).await.unwrap(), IngestOutcome::Applied { .. }));
    }
    let block4 = &events[3].payload;
    assert_eq!(serde_json::from_str::<serde_json::Value>(block4).unwrap()["block_height"], 4);

    // Unknown parent: the node retries later.
    let mut v: serde_json::Value = serde_json::from_str(block4).unwrap();
    v["parent_index_block_hash"] = format!("0x{}", "ab".repeat(32)).into();
    let err = refused(store, event(None, EventPath::NewBlock, v.to_string())).await;
    assert!(matches!(&err, IngestError::Rejected { reason, .. } if reason.contains("parent")), "{err}");

    // A raw transaction that does not decode.
    let mut v: serde_json::Value = serde_json::from_str(block4).unwrap();
    v["transactions"][0]["raw_tx"] = "0x0011".into();
    let err = refused(store, event(None, EventPath::NewBlock, v.to_string())).await;
    assert!(
        matches!(&err, IngestError::Invalid { reason, .. } if reason.contains("does not decode")),
        "{err}"
    );

    // Not JSON / missing fields.
    let err = refused(store, event(None, EventPath::NewBlock, "{".into())).await;
    assert!(matches!(err, IngestError::Invalid { .. }), "{err}");
    let err = refused(store, event(None, EventPath::NewBurnBlock, "{}".into())).await;
    assert!(matches!(err, IngestError::Invalid { .. }), "{err}");

    // An event for a transaction that is not in the block.
    let mut v: serde_json::Value = serde_json::from_str(block4).unwrap();
    if let Some(e) = v["events"].as_array_mut().and_then(|a| a.first_mut()) {
        e["txid"] = format!("0x{}", "cd".repeat(32)).into();
        let err = refused(store, event(None, EventPath::NewBlock, v.to_string())).await;
        assert!(matches!(err, IngestError::Invalid { .. }), "{err}");
    }

    // The real block 4 then applies, and replaying its id writes nothing.
    let ok = store.ingest(event(Some(events[3].id), EventPath::NewBlock, block4.clone())).await.unwrap();
    assert_eq!(ok, IngestOutcome::Applied { id: events[3].id });
    let before = store.table_counts().await.unwrap();
    let again = store.ingest(event(Some(events[3].id), EventPath::NewBlock, block4.clone())).await.unwrap();
    assert_eq!(again, IngestOutcome::AlreadyStored { id: events[3].id });
    assert_eq!(store.table_counts().await.unwrap(), before);
    // A live event gets the next id.
    let live = store.ingest(event(None, EventPath::StackerDbChunks, "{}".into())).await.unwrap();
    assert_eq!(live, IngestOutcome::Applied { id: events[3].id + 1 });
    assert_eq!(store.last_event_id().await.unwrap(), Some(events[3].id + 1));
    let raw = store.raw_events_after(Some(events[3].id), 10).await.unwrap();
    assert_eq!((raw.len(), raw[0].path.as_str()), (1, "/stackerdb_chunks"));

    // A one-transaction mempool post (on PostgreSQL one statement over a one-row table,
    // `sql::pg_row`, and two of them: the plan kept after five executions is exercised too):
    // under a taken id it writes nothing; under new ids each adds its raw event, and the
    // transaction's row once.
    let coinbase_raw = serde_json::from_str::<serde_json::Value>(&events[1].payload).unwrap()["transactions"]
        [0]["raw_tx"]
        .clone();
    let post = serde_json::json!([coinbase_raw]).to_string();
    let before = store.table_counts().await.unwrap();
    let taken = store.ingest(event(Some(events[3].id), EventPath::NewMempoolTx, post.clone())).await.unwrap();
    assert_eq!(taken, IngestOutcome::AlreadyStored { id: events[3].id });
    assert_eq!(store.table_counts().await.unwrap(), before, "a post under a taken id wrote something");
    for k in 0..7i64 {
        let ok = store.ingest(event(None, EventPath::NewMempoolTx, post.clone())).await.unwrap();
        assert_eq!(ok, IngestOutcome::Applied { id: events[3].id + 2 + k });
    }
    let after = store.table_counts().await.unwrap();
    let count = |c: &std::collections::BTreeMap<&str, i64>, t: &str| c.get(t).copied().unwrap_or(0);
    assert_eq!(count(&after, "raw_events"), count(&before, "raw_events") + 7);
    assert_eq!(count(&after, "mempool_txs"), count(&before, "mempool_txs") + 1);
    ts.finish().await;

    // Another network's transactions are refused, blocks and mempool alike.
    let Some(ts) = TestStore::new(db, "failures_chain", Network::Mainnet).await else { return };
    let err = refused(&ts.store, event(None, EventPath::NewBlock, events[0].payload.clone())).await;
    assert!(matches!(&err, IngestError::Invalid { reason, .. } if reason.contains("chain id")), "{err}");
    let coinbase_raw = serde_json::from_str::<serde_json::Value>(&events[1].payload).unwrap()["transactions"]
        [0]["raw_tx"]
        .clone();
    let err = refused(
        &ts.store,
        event(None, EventPath::NewMempoolTx, serde_json::json!([coinbase_raw]).to_string()),
    )
    .await;
    assert!(matches!(&err, IngestError::Invalid { reason, .. } if reason.contains("chain id")), "{err}");
    assert!(ts.store.is_empty().await.unwrap());
    ts.finish().await;
}

#[tokio::test]
async fn sqlite_failures_leave_the_store_unchanged() {
    failures(Db::Sqlite).await;
}

#[tokio::test]
async fn postgres_failures_leave_the_store_unchanged() {
    failures(Db::Postgres).await;
}

/// `Store::ingest_batch`: refused events inside a batch leave nothing behind (the batch is
/// re-applied without them) and the rest of the batch applies, so the store ends exactly as
/// when only the good events are ingested one by one; a replayed id in the batch is
/// `AlreadyStored`.
async fn batch_matches_one_by_one(db: Db) {
    let Some(events) = mocknet() else { return };
    let good: Vec<IncomingEvent> = events
        .iter()
        .map(|ev| IncomingEvent {
            id: Some(ev.id),
            receive_timestamp: Some(ev.receive_timestamp.clone()),
            path: EventPath::from_path(&ev.path).unwrap(),
            payload: ev.payload.clone(),
        })
        .collect();
    let block4 = &events[3].payload;
    let mut orphan: serde_json::Value = serde_json::from_str(block4).unwrap();
    orphan["parent_index_block_hash"] = format!("0x{}", "ab".repeat(32)).into();
    let mut undecodable: serde_json::Value = serde_json::from_str(block4).unwrap();
    undecodable["transactions"][0]["raw_tx"] = "0x0011".into();

    let Some(one) = TestStore::new(db, "batch_one", Network::Testnet).await else { return };
    for ev in &good {
        one.store.ingest(ev.clone()).await.unwrap();
    }

    let Some(batch) = TestStore::new(db, "batch_many", Network::Testnet).await else { return };
    // Block 4 with an unknown parent, then (once block 3 is in) block 4 with a transaction that
    // does not decode, a body that is not JSON, and a replayed id.
    let mut input = good[..2].to_vec();
    input.push(event(Some(1_000_001), EventPath::NewBlock, orphan.to_string()));
    input.push(good[2].clone());
    input.push(event(Some(1_000_002), EventPath::NewBlock, undecodable.to_string()));
    input.extend(good[3..5].iter().cloned());
    input.push(event(Some(1_000_003), EventPath::NewBlock, "{".into()));
    input.push(good[5].clone());
    input.push(good[0].clone());
    input.extend(good[6..].iter().cloned());
    // Two batches: the second starts mid-log on what the first committed.
    let second = input.split_off(input.len() / 2);
    let mut results = batch.store.ingest_batch(input).await.unwrap();
    results.extend(batch.store.ingest_batch(second).await.unwrap());
    for (i, r) in results.iter().enumerate() {
        match i {
            2 => assert!(matches!(r, Err(IngestError::Rejected { .. })), "{i}: {r:?}"),
            4 | 7 => assert!(matches!(r, Err(IngestError::Invalid { .. })), "{i}: {r:?}"),
            9 => assert_eq!(r.as_ref().unwrap(), &IngestOutcome::AlreadyStored { id: good[0].id.unwrap() }),
            _ => assert!(matches!(r, Ok(IngestOutcome::Applied { .. })), "{i}: {r:?}"),
        }
    }
    assert_eq!(batch.store.table_counts().await.unwrap(), one.store.table_counts().await.unwrap());
    assert_eq!(batch.store.canonical_counts().await.unwrap(), one.store.canonical_counts().await.unwrap());
    assert_eq!(batch.store.supply().await.unwrap(), one.store.supply().await.unwrap());
    assert_eq!(batch.store.accounts().await.unwrap(), one.store.accounts().await.unwrap());
    assert_eq!(batch.store.last_event_id().await.unwrap(), one.store.last_event_id().await.unwrap());
    one.finish().await;
    batch.finish().await;
}

#[tokio::test]
async fn sqlite_batch_matches_one_by_one() {
    batch_matches_one_by_one(Db::Sqlite).await;
}

#[tokio::test]
async fn postgres_batch_matches_one_by_one() {
    batch_matches_one_by_one(Db::Postgres).await;
}
