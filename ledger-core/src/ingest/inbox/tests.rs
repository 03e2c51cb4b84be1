use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use super::*;
use crate::events::EventPath;
use crate::ingest::memory::{FailKind, MemorySink};

fn live(payload: &str) -> IncomingEvent {
    IncomingEvent {
        id: None,
        receive_timestamp: None,
        path: EventPath::NewMempoolTx,
        payload: payload.to_owned(),
    }
}

fn config(queue_bytes: usize, batch: usize) -> InboxConfig {
    InboxConfig { queue_bytes, batch }
}

/// Waits (at most 10 s) until `done` holds.
async fn until(what: &str, done: impl Fn() -> bool) {
    for _ in 0..1000 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for: {what}");
}

/// A sink whose batches wait for a permit each: the test decides when the applier may go on.
struct Gated {
    inner: Arc<MemorySink>,
    gate: Arc<Semaphore>,
    batches: std::sync::Mutex<Vec<usize>>,
}

impl Gated {
    /// Over `memory`, with no permit yet: every batch waits.
    fn closed(memory: &Arc<MemorySink>) -> Arc<Gated> {
        Arc::new(Gated {
            inner: Arc::clone(memory),
            gate: Arc::new(Semaphore::new(0)),
            batches: Default::default(),
        })
    }
}

impl EventSink for Gated {
    async fn ingest(&self, event: IncomingEvent) -> Result<IngestOutcome, IngestError> {
        self.inner.ingest(event).await
    }

    async fn last_event_id(&self) -> Result<Option<i64>, IngestError> {
        self.inner.last_event_id().await
    }

    async fn ingest_many(
        &self,
        events: Vec<IncomingEvent>,
    ) -> Result<Vec<Result<IngestOutcome, IngestError>>, IngestError> {
        self.gate.acquire().await.expect("gate open").forget();
        self.batches.lock().unwrap().push(events.len());
        self.inner.ingest_many(events).await
    }
}

#[tokio::test]
async fn logged_events_are_applied_in_order_under_their_ids_and_leave_the_inbox() {
    let memory = Arc::new(MemorySink::new());
    let logged =
        Logged::start(Arc::clone(&memory), Arc::clone(&memory), InboxConfig::default()).await.unwrap();
    for n in 1..=50 {
        let outcome = logged.ingest(live(&format!("[{n}]"))).await.unwrap();
        assert_eq!(outcome, IngestOutcome::Logged { id: n });
    }
    until("all applied", || logged.pending() == 0).await;
    let stored = memory.events();
    assert_eq!(stored.iter().map(|e| e.id).collect::<Vec<_>>(), (1..=50).collect::<Vec<_>>());
    assert!(stored.iter().all(|e| e.payload == format!("[{}]", e.id)), "payloads kept with their ids");
    // The receive time is stamped when the event is logged, as PostgreSQL prints it.
    assert!(stored[0].receive_timestamp.ends_with("+00"), "{}", stored[0].receive_timestamp);
    logged.close(Duration::from_secs(5)).await;
    assert!(memory.inbox_ids().is_empty(), "applied rows are deleted: {:?}", memory.inbox_ids());
}

#[tokio::test]
async fn events_that_arrive_while_a_batch_applies_go_in_the_next_batch() {
    let memory = Arc::new(MemorySink::new());
    let gated = Gated::closed(&memory);
    let logged = Logged::start(Arc::clone(&gated), Arc::clone(&memory), config(1 << 20, 4)).await.unwrap();
    for n in 1..=10 {
        logged.ingest(live(&format!("[{n}]"))).await.unwrap();
    }
    gated.gate.add_permits(100);
    until("all applied", || logged.pending() == 0).await;
    // The first batch took what had come (the applier may have started on the first event
    // alone); every batch is at most 4 events.
    let batches = gated.batches.lock().unwrap().clone();
    assert_eq!(batches.iter().sum::<usize>(), 10, "{batches:?}");
    assert!(batches.iter().all(|n| *n <= 4), "{batches:?}");
    assert!(batches.len() <= 4, "events waiting are batched: {batches:?}");
    assert_eq!(memory.events().iter().map(|e| e.id).collect::<Vec<_>>(), (1..=10).collect::<Vec<_>>());
}

#[tokio::test]
async fn an_invalid_body_is_refused_before_it_is_logged_and_takes_no_id() {
    let memory = Arc::new(MemorySink::new());
    let logged =
        Logged::start(Arc::clone(&memory), Arc::clone(&memory), InboxConfig::default()).await.unwrap();
    let err = logged.ingest(live("{not json")).await.unwrap_err();
    assert!(matches!(err, IngestError::Invalid { path: EventPath::NewMempoolTx, .. }), "{err}");
    assert!(memory.inbox_ids().is_empty());
    assert_eq!(logged.ingest(live("[1]")).await.unwrap(), IngestOutcome::Logged { id: 1 });
    until("applied", || logged.pending() == 0).await;
    assert_eq!(memory.event_count(), 1);
}

#[tokio::test]
async fn an_event_the_ledger_refuses_stalls_the_applier_and_later_posts_until_it_applies() {
    let memory = Arc::new(MemorySink::new());
    // The third event applied is refused until healed.
    memory.fail_after(2, FailKind::Rejected);
    let logged = Logged::start(Arc::clone(&memory), Arc::clone(&memory), config(1 << 20, 1)).await.unwrap();
    for n in 1..=3 {
        logged.ingest(live(&format!("[{n}]"))).await.unwrap();
    }
    until("stalled", || logged.stalled().is_some()).await;
    let reason = logged.stalled().unwrap();
    assert!(reason.starts_with("event 3: ") && reason.contains("simulated unknown parent"), "{reason}");
    assert_eq!(memory.event_count(), 2, "the events before it are applied");
    assert_eq!(logged.pending(), 1);
    // A POST meanwhile is refused, and not logged: the node retries it.
    let err = logged.ingest(live("[4]")).await.unwrap_err();
    assert!(
        matches!(&err, IngestError::Rejected { .. }) && err.to_string().contains("cannot be applied yet"),
        "{err}"
    );
    // The refused event stays in the inbox (the applied rows before it go at the next trim).
    assert_eq!(memory.inbox_ids().last(), Some(&3));
    memory.heal();
    until("applied after the retry", || logged.pending() == 0 && logged.stalled().is_none()).await;
    assert_eq!(logged.ingest(live("[4]")).await.unwrap(), IngestOutcome::Logged { id: 4 });
    until("applied", || logged.pending() == 0).await;
    assert_eq!(memory.events().iter().map(|e| e.id).collect::<Vec<_>>(), vec![1, 2, 3, 4]);
}

#[tokio::test]
async fn a_full_queue_holds_the_post_back_until_the_applier_makes_room() {
    let memory = Arc::new(MemorySink::new());
    let gated = Gated::closed(&memory);
    // Room for two events of up to 1 KiB.
    let logged =
        Arc::new(Logged::start(Arc::clone(&gated), Arc::clone(&memory), config(2048, 8)).await.unwrap());
    let body = format!("[\"{}\"]", "x".repeat(1000));
    logged.ingest(live(&body)).await.unwrap();
    logged.ingest(live(&body)).await.unwrap();
    let third = tokio::spawn({
        let logged = Arc::clone(&logged);
        let body = body.clone();
        async move { logged.ingest(live(&body)).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!third.is_finished(), "the third POST waits for room");
    assert_eq!(memory.inbox_ids(), vec![1, 2], "and is not logged yet");
    gated.gate.add_permits(100);
    assert_eq!(third.await.unwrap().unwrap(), IngestOutcome::Logged { id: 3 });
    until("all applied", || logged.pending() == 0).await;
    assert_eq!(memory.event_count(), 3);
}

#[tokio::test]
async fn recover_applies_what_a_crash_left_in_the_inbox_and_ids_go_on_from_there() {
    let memory = Arc::new(MemorySink::new());
    memory.ingest(live("[1]")).await.unwrap();
    // Logged before the "crash": 2 applied already (its row not yet deleted), 3 to 5 not.
    for id in 2..=5 {
        let ev = IncomingEvent {
            id: Some(id),
            receive_timestamp: Some("2026-11-29 12:00:00+00".into()),
            ..live(&format!("[{id}]"))
        };
        memory.inbox_put(&ev).await.unwrap();
        if id == 2 {
            memory.ingest(ev).await.unwrap();
        }
    }
    assert_eq!(recover(&*memory, &*memory, 2).await.unwrap(), 3);
    assert_eq!(memory.events().iter().map(|e| e.id).collect::<Vec<_>>(), vec![1, 2, 3, 4, 5]);
    assert_eq!(memory.events()[3].receive_timestamp, "2026-11-29 12:00:00+00", "logged time kept");
    assert!(memory.inbox_ids().is_empty());
    let logged =
        Logged::start(Arc::clone(&memory), Arc::clone(&memory), InboxConfig::default()).await.unwrap();
    assert_eq!(logged.ingest(live("[6]")).await.unwrap(), IngestOutcome::Logged { id: 6 });
}

#[tokio::test]
async fn recover_stops_at_an_event_the_ledger_refuses_and_keeps_it() {
    let memory = Arc::new(MemorySink::new());
    for id in 1..=3 {
        let ev = IncomingEvent {
            id: Some(id),
            receive_timestamp: Some("2026-11-29 12:00:00+00".into()),
            ..live("[0]")
        };
        memory.inbox_put(&ev).await.unwrap();
    }
    memory.fail_after(1, FailKind::Rejected);
    let err = recover(&*memory, &*memory, 8).await.unwrap_err();
    assert!(matches!(err, IngestError::Rejected { .. }), "{err}");
    assert_eq!(memory.event_count(), 1);
    assert_eq!(memory.inbox_ids(), vec![1, 2, 3], "nothing deleted on failure");
}

#[tokio::test]
async fn close_applies_what_is_queued() {
    let memory = Arc::new(MemorySink::new());
    let logged =
        Logged::start(Arc::clone(&memory), Arc::clone(&memory), InboxConfig::default()).await.unwrap();
    for n in 1..=20 {
        logged.ingest(live(&format!("[{n}]"))).await.unwrap();
    }
    logged.close(Duration::from_secs(10)).await;
    assert_eq!(memory.event_count(), 20);
    assert_eq!(logged.pending(), 0);
    assert!(memory.inbox_ids().is_empty());
}
