//! Batched ingest writes the same store as event-by-event ingest. The maintained read totals
//! (`account_stx_totals`, `account_asset_totals`, `account_block_txs`) are gathered over all
//! blocks of a store transaction and written once before it commits (`store::totals::Pending`),
//! so a reorg inside a batch, at any position, must still leave exactly the rows that one
//! transaction per event leaves. A forking devnet chain is ingested one event at a time and in
//! batches of several sizes (so reorgs fall at different places in a batch), and every table
//! is compared through `Store::ledger_digest`.
//!
//! Runs of consecutive mempool events are applied together in a batch
//! (`write::apply_mempool_run`), so the chain also gets, inside such runs: transactions posted
//! again by a later post, posts of transactions already mined, a replayed event id and a post
//! whose transaction does not decode; each event's outcome must be the one-by-one outcome.

mod common;

use common::{check_invariants, devnet_config, devnet_events, digest_diff, incoming, Db, TestStore};
use stacks_ledger::events::RawEvent;
use stacks_ledger::ingest::{EventSink, IngestError, IngestOutcome};
use stacks_ledger::ledger::Network;

/// An event's outcome, comparable across ingest modes.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Applied,
    AlreadyStored,
    Invalid,
    Rejected,
}

fn outcome(r: Result<IngestOutcome, IngestError>) -> Outcome {
    match r {
        Ok(IngestOutcome::Applied { .. } | IngestOutcome::Logged { .. }) => Outcome::Applied,
        Ok(IngestOutcome::AlreadyStored { .. }) => Outcome::AlreadyStored,
        Err(IngestError::Invalid { .. }) => Outcome::Invalid,
        Err(IngestError::Rejected { .. }) => Outcome::Rejected,
        Err(e) => panic!("store error: {e}"),
    }
}

/// The devnet chain with mempool traffic a node can also send, placed right after blocks
/// (where the next block's mempool posts follow) and inside runs of posts: an earlier post
/// sent again (its transactions now mined, or still pending), an earlier post's last
/// transaction together with a new one, the same event id twice, and a post that does not
/// decode. Ids are renumbered in order (the replayed one keeps its twin's id).
fn with_mempool_traffic(events: Vec<RawEvent>) -> (Vec<RawEvent>, usize) {
    let mut out: Vec<RawEvent> = Vec::with_capacity(events.len() + 64);
    let mut posts: Vec<RawEvent> = Vec::new();
    let mut blocks = 0;
    let mut added = 0;
    for ev in events {
        let path = ev.path.clone();
        if path == "/new_mempool_tx" {
            let n = posts.len();
            if n % 5 == 4 {
                // A post repeating the previous post's last transaction, then a new one of it.
                let prev: Vec<String> = serde_json::from_str(&posts[n - 1].payload).unwrap();
                let mine: Vec<String> = serde_json::from_str(&ev.payload).unwrap();
                let both = vec![prev[prev.len() - 1].clone(), mine[0].clone()];
                push(&mut out, RawEvent { payload: serde_json::to_string(&both).unwrap(), ..ev.clone() });
                added += 1;
            }
            posts.push(ev.clone());
        }
        push(&mut out, ev.clone());
        if path == "/new_mempool_tx" && posts.len() % 7 == 3 {
            // The same event again (same id): already stored.
            let twin = out[out.len() - 1].clone();
            out.push(twin);
            added += 1;
        }
        if path == "/new_block" {
            blocks += 1;
            if blocks % 3 == 0 && posts.len() > 2 {
                // Posts of mined transactions (and of ones in the latest post, maybe pending).
                let early = posts[blocks % (posts.len() - 1)].clone();
                push(&mut out, early);
                let last = posts[posts.len() - 1].clone();
                push(&mut out, last);
                added += 2;
            }
            if blocks % 10 == 5 {
                push(
                    &mut out,
                    RawEvent { payload: r#"["0x0011"]"#.into(), path: "/new_mempool_tx".into(), ..ev },
                );
                added += 1;
            }
        }
    }
    (out, added)
}

/// Appends `ev` with the next id.
fn push(out: &mut Vec<RawEvent>, mut ev: RawEvent) {
    ev.id = out.last().map_or(1, |e| e.id + 1);
    out.push(ev);
}

async fn batches_equal_single_events(db: Db) {
    let mut cfg = devnet_config(23, 60, 10);
    cfg.fork_per_mille = 300;
    let (events, generator) = devnet_events(cfg);
    let stats = generator.stats();
    assert!(stats.forks > 2, "{db:?}: too few forks to test: {stats:?}");
    let (events, added) = with_mempool_traffic(events);
    assert!(added > 20, "{added}");

    let Some(one) = TestStore::new(db, "batches_single", Network::Testnet).await else { return };
    let mut want_outcomes = Vec::with_capacity(events.len());
    for ev in &events {
        want_outcomes.push(outcome(one.store.ingest(incoming(ev)).await));
    }
    let count = |o: Outcome| want_outcomes.iter().filter(|w| **w == o).count();
    assert!(count(Outcome::AlreadyStored) > 3 && count(Outcome::Invalid) > 2, "{want_outcomes:?}");
    assert_eq!(count(Outcome::Rejected), 0);
    let want = one.store.ledger_digest().await.unwrap();
    assert!(want["account_block_txs"].0 > 0 && want["account_asset_totals"].0 > 0, "{want:?}");
    one.finish().await;

    for size in [3, 7, 64, events.len()] {
        let label = format!("{db:?} batches of {size}");
        let Some(b) = TestStore::new(db, &format!("batches_{size}"), Network::Testnet).await else { return };
        let mut got_outcomes = Vec::with_capacity(events.len());
        for chunk in events.chunks(size) {
            let out = b.store.ingest_batch(chunk.iter().map(incoming).collect()).await.unwrap();
            assert_eq!(out.len(), chunk.len(), "{label}");
            got_outcomes.extend(out.into_iter().map(outcome));
        }
        for (i, (w, g)) in want_outcomes.iter().zip(&got_outcomes).enumerate() {
            assert_eq!(w, g, "{label}: event {i} ({})", events[i].path);
        }
        check_invariants(&b.store, &label, true).await;
        let got = b.store.ledger_digest().await.unwrap();
        let diff = digest_diff(&want, &got);
        assert!(diff.is_empty(), "{label}: differs from event-by-event ingest: {diff:#?}");
        b.finish().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_batches_equal_single_events() {
    batches_equal_single_events(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_batches_equal_single_events() {
    batches_equal_single_events(Db::Postgres).await;
}
