//! Concurrent writers on one store, on SQLite and PostgreSQL. A generated log is fed from
//! several tasks at once, each in id order: one task the chain (burn blocks, blocks,
//! microblocks, drops), three the mempool posts, every mempool post sent by two tasks racing
//! for it, and one task sending events that fail half-way (after their raw event is written,
//! inside the transaction). Then many tasks post live events (no id) at once.
//!
//! Every acknowledged event must be stored exactly once, with its own payload; no failed event
//! may leave a trace; the invariants hold; and the ledger equals a one-task ingest of the same
//! log, except for the mempool statuses, which legitimately depend on whether a post arrived
//! before or after the block that mined it.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use common::{
    check_invariants, devnet_config, devnet_events, digest_diff, incoming, ingest_all, Db, TestStore,
};
use stacks_ledger::events::{EventPath, RawEvent};
use stacks_ledger::ingest::{EventSink, IncomingEvent, IngestError, IngestOutcome, RawEventLog};
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;

const MEMPOOL_TASKS: usize = 3;
const LIVE_TASKS: usize = 6;
const LIVE_PER_TASK: usize = 15;

#[derive(Debug, Default)]
struct Acks {
    applied: Vec<i64>,
    already: Vec<i64>,
}

/// Ingests `events` in order; every one must be acknowledged.
async fn feed(store: Arc<Store>, events: Vec<RawEvent>) -> Acks {
    let mut acks = Acks::default();
    for ev in events {
        match store.ingest(incoming(&ev)).await {
            Ok(IngestOutcome::Applied { id } | IngestOutcome::Logged { id }) => acks.applied.push(id),
            Ok(IngestOutcome::AlreadyStored { id }) => acks.already.push(id),
            Err(e) => panic!("event {} ({}): {e}", ev.id, ev.path),
        }
        tokio::task::yield_now().await;
    }
    acks
}

/// Copies of blocks that fail inside the transaction: an unknown parent (rejected), a raw
/// transaction that does not decode (invalid). Ids above the log's.
fn failing(events: &[RawEvent], first_id: i64) -> Vec<IncomingEvent> {
    let mut out = Vec::new();
    let blocks = events.iter().filter(|e| e.path == "/new_block").skip(5).step_by(10);
    for (i, ev) in blocks.enumerate() {
        let mut v: serde_json::Value = serde_json::from_str(&ev.payload).unwrap();
        if i % 2 == 0 {
            v["parent_index_block_hash"] = format!("0x{}", "ab".repeat(32)).into();
        } else {
            v["transactions"][0]["raw_tx"] = "0x0011".into();
        }
        out.push(IncomingEvent {
            id: Some(first_id + i as i64),
            receive_timestamp: Some(ev.receive_timestamp.clone()),
            path: EventPath::NewBlock,
            payload: v.to_string(),
        });
    }
    out
}

async fn concurrent_writers(db: Db) {
    let (events, _) = devnet_events(devnet_config(6, 80, 6));
    let n = events.len() as i64;
    let label = format!("{db:?} concurrent writers");
    let Some(ts) = TestStore::new(db, "concurrent", Network::Testnet).await else { return };
    let store = Arc::clone(&ts.store);
    let started = Instant::now();

    // The chain in one task; each mempool post in two of the mempool tasks.
    let (mempool, chain): (Vec<RawEvent>, Vec<RawEvent>) =
        events.iter().cloned().partition(|e| e.path == "/new_mempool_tx");
    let mut mempool_tasks: Vec<Vec<RawEvent>> = vec![Vec::new(); MEMPOOL_TASKS];
    for (i, ev) in mempool.iter().enumerate() {
        mempool_tasks[i % MEMPOOL_TASKS].push(ev.clone());
        mempool_tasks[(i + 1) % MEMPOOL_TASKS].push(ev.clone());
    }
    for t in &mut mempool_tasks {
        t.sort_by_key(|e| e.id);
    }
    let bad = failing(&events, n + 1000);
    assert!(bad.len() >= 4, "{label}: {} failing events", bad.len());

    let mut tasks = vec![tokio::spawn(feed(Arc::clone(&store), chain))];
    tasks.extend(mempool_tasks.into_iter().map(|t| tokio::spawn(feed(Arc::clone(&store), t))));
    let bad_task = {
        let store = Arc::clone(&store);
        let bad = bad.clone();
        tokio::spawn(async move {
            let mut refused = 0;
            for ev in bad {
                match store.ingest(ev).await {
                    Err(IngestError::Rejected { .. } | IngestError::Invalid { .. }) => refused += 1,
                    other => panic!("a broken block was not refused: {other:?}"),
                }
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            refused
        })
    };
    let mut acks: BTreeMap<i64, (usize, usize)> = BTreeMap::new();
    for t in tasks {
        let a = t.await.unwrap();
        for id in a.applied {
            acks.entry(id).or_default().0 += 1;
        }
        for id in a.already {
            acks.entry(id).or_default().1 += 1;
        }
    }
    assert_eq!(bad_task.await.unwrap(), bad.len(), "{label}");
    let concurrent_secs = started.elapsed().as_secs_f64();

    // Every event applied exactly once; each raced mempool post applied once and found stored
    // once; nothing of the failed events.
    assert_eq!(acks.len() as i64, n, "{label}: acknowledged ids");
    for ev in &events {
        let expected = if ev.path == "/new_mempool_tx" { (1, 1) } else { (1, 0) };
        assert_eq!(acks.get(&ev.id), Some(&expected), "{label}: event {} ({})", ev.id, ev.path);
    }
    let stored = store.raw_events_after(None, usize::MAX).await.unwrap();
    assert_eq!(stored, events, "{label}: the stored log is the log, each event once");
    check_invariants(&store, &label, true).await;

    // The same ledger as one task feeding the log in order, mempool statuses aside.
    let Some(reference) = TestStore::new(db, "concurrent_ref", Network::Testnet).await else { return };
    ingest_all(&reference.store, events.iter().cloned(), &[], &label).await;
    let mut ours = store.ledger_digest().await.unwrap();
    let mut theirs = reference.store.ledger_digest().await.unwrap();
    let (our_mempool, their_mempool) = (ours.remove("mempool_txs"), theirs.remove("mempool_txs"));
    let diff = digest_diff(&ours, &theirs);
    assert!(diff.is_empty(), "{label}: concurrent ≠ sequential: {diff:#?}");
    assert_eq!(our_mempool.map(|m| m.0), their_mempool.map(|m| m.0), "{label}: mempool rows");
    reference.finish().await;

    // Live events (no id) posted by many tasks at once get distinct, consecutive ids, and each
    // is stored with its own payload.
    let live_started = Instant::now();
    let mut live = Vec::new();
    for t in 0..LIVE_TASKS {
        let store = Arc::clone(&store);
        live.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for i in 0..LIVE_PER_TASK {
                let payload = format!("{{\"task\":{t},\"seq\":{i}}}");
                let ev = IncomingEvent {
                    id: None,
                    receive_timestamp: None,
                    path: EventPath::StackerDbChunks,
                    payload: payload.clone(),
                };
                match store.ingest(ev).await.unwrap() {
                    IngestOutcome::Applied { id } => ids.push((id, payload)),
                    other => panic!("live event: {other:?}"),
                }
            }
            ids
        }));
    }
    let mut posted = BTreeMap::new();
    for t in live {
        for (id, payload) in t.await.unwrap() {
            assert!(posted.insert(id, payload).is_none(), "{label}: id {id} acknowledged twice");
        }
    }
    let total = (LIVE_TASKS * LIVE_PER_TASK) as i64;
    assert_eq!(
        posted.keys().copied().collect::<Vec<_>>(),
        (n + 1..=n + total).collect::<Vec<_>>(),
        "{label}"
    );
    let stored = store.raw_events_after(Some(n), usize::MAX).await.unwrap();
    let stored: BTreeMap<i64, String> = stored.into_iter().map(|e| (e.id, e.payload)).collect();
    assert_eq!(stored, posted, "{label}: live events as acknowledged");

    println!(
        "{label}: {n} events from {} tasks ({} mempool posts raced twice, {} failing events) in \
         {concurrent_secs:.2} s; {total} live events from {LIVE_TASKS} tasks in {:.2} s; total {:.2} s",
        MEMPOOL_TASKS + 2,
        mempool.len(),
        bad.len(),
        live_started.elapsed().as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_concurrent_writers_never_interleave() {
    concurrent_writers(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_concurrent_writers_never_interleave() {
    concurrent_writers(Db::Postgres).await;
}
