//! An in-memory [`EventSink`] + [`RawEventLog`] + [`EventInbox`]: the fake everything around the seam is tested
//! with, and what `serve` runs on until a ledger store is wired in.
//!
//! It keeps the raw log only (no ledger), checks that payloads are JSON, honours replayed ids
//! the way the store must (an id already stored is not written again) and can be told to fail,
//! so callers can show that a failed ingest changes nothing.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::de::IgnoredAny;

use super::{EventInbox, EventSink, IncomingEvent, IngestError, IngestOutcome, RawEventLog};
use crate::events::RawEvent;
use crate::timestamp::format_pg_timestamp_micros;

/// Which error a simulated failure returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailKind {
    Invalid,
    Rejected,
    Store,
}

#[derive(Debug, Default)]
pub struct MemorySink {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    events: BTreeMap<i64, RawEvent>,
    /// The event inbox (`EventInbox`): logged events by id.
    inbox: BTreeMap<i64, IncomingEvent>,
    /// `(ingests still allowed to succeed, then the error every later ingest returns)`.
    failure: Option<(usize, FailKind)>,
}

impl MemorySink {
    pub fn new() -> Self {
        Self::default()
    }

    /// Every `ingest` from now on fails with `kind` and stores nothing.
    pub fn fail_with(&self, kind: FailKind) {
        self.fail_after(0, kind);
    }

    /// The next `successes` ingests behave normally; every one after them fails with `kind`.
    pub fn fail_after(&self, successes: usize, kind: FailKind) {
        self.lock().failure = Some((successes, kind));
    }

    /// Stops failing.
    pub fn heal(&self) {
        self.lock().failure = None;
    }

    /// The stored events, in id order.
    pub fn events(&self) -> Vec<RawEvent> {
        self.lock().events.values().cloned().collect()
    }

    pub fn event_count(&self) -> usize {
        self.lock().events.len()
    }

    /// The ids the inbox holds, applied or not.
    pub fn inbox_ids(&self) -> Vec<i64> {
        self.lock().inbox.keys().copied().collect()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the map half-updated (every update is a
        // single insert or clear), so a poisoned lock is still consistent.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn ingest_now(&self, event: IncomingEvent) -> Result<IngestOutcome, IngestError> {
        let mut state = self.lock();
        if let Some((remaining, kind)) = &mut state.failure {
            if *remaining == 0 {
                return Err(simulated(*kind, &event));
            }
            *remaining -= 1;
        }
        serde_json::from_str::<IgnoredAny>(&event.payload)
            .map_err(|e| IngestError::Invalid { path: event.path, reason: e.to_string() })?;
        let id = match event.id {
            Some(id) if state.events.contains_key(&id) => return Ok(IngestOutcome::AlreadyStored { id }),
            Some(id) => id,
            None => state.events.keys().next_back().map_or(1, |last| last + 1),
        };
        let receive_timestamp = event.receive_timestamp.unwrap_or_else(now_timestamp);
        let raw =
            RawEvent { id, receive_timestamp, path: event.path.as_str().to_owned(), payload: event.payload };
        state.events.insert(id, raw);
        Ok(IngestOutcome::Applied { id })
    }
}

fn simulated(kind: FailKind, event: &IncomingEvent) -> IngestError {
    let path = event.path;
    match kind {
        FailKind::Invalid => IngestError::Invalid { path, reason: "simulated invalid payload".into() },
        FailKind::Rejected => IngestError::Rejected { path, reason: "simulated unknown parent block".into() },
        FailKind::Store => IngestError::Store(Box::new(std::io::Error::other("simulated store failure"))),
    }
}

impl EventSink for MemorySink {
    async fn ingest(&self, event: IncomingEvent) -> Result<IngestOutcome, IngestError> {
        self.ingest_now(event)
    }

    async fn last_event_id(&self) -> Result<Option<i64>, IngestError> {
        Ok(self.lock().events.keys().next_back().copied())
    }
}

/// As the store's: an inbox row is applied when its id is at most the highest stored.
impl EventInbox for MemorySink {
    async fn inbox_next_id(&self) -> Result<i64, IngestError> {
        let state = self.lock();
        let raw = state.events.keys().next_back().copied().unwrap_or(0);
        Ok(raw.max(state.inbox.keys().next_back().copied().unwrap_or(0)) + 1)
    }

    async fn inbox_put(&self, event: &IncomingEvent) -> Result<(), IngestError> {
        serde_json::from_str::<IgnoredAny>(&event.payload)
            .map_err(|e| IngestError::Invalid { path: event.path, reason: e.to_string() })?;
        let id = event.id.ok_or_else(|| IngestError::Store("an inbox event needs its id".into()))?;
        self.lock().inbox.insert(id, event.clone());
        Ok(())
    }

    async fn inbox_pending(&self) -> Result<Vec<IncomingEvent>, IngestError> {
        let state = self.lock();
        let applied = state.events.keys().next_back().copied().unwrap_or(0);
        Ok(state.inbox.range(applied + 1..).map(|(_, e)| e.clone()).collect())
    }

    async fn inbox_trim(&self) -> Result<u64, IngestError> {
        let mut state = self.lock();
        let applied = state.events.keys().next_back().copied().unwrap_or(0);
        let before = state.inbox.len();
        state.inbox.retain(|id, _| *id > applied);
        Ok((before - state.inbox.len()) as u64)
    }
}

impl RawEventLog for MemorySink {
    async fn raw_events_after(
        &self,
        after_id: Option<i64>,
        limit: usize,
    ) -> Result<Vec<RawEvent>, IngestError> {
        let start = match after_id {
            None => i64::MIN,
            Some(after) => match after.checked_add(1) {
                Some(start) => start,
                None => return Ok(Vec::new()),
            },
        };
        Ok(self.lock().events.range(start..).take(limit).map(|(_, e)| e.clone()).collect())
    }

    async fn is_empty(&self) -> Result<bool, IngestError> {
        Ok(self.lock().events.is_empty())
    }

    async fn wipe(&self) -> Result<(), IngestError> {
        self.lock().events.clear();
        Ok(())
    }
}

/// The current UTC time as PostgreSQL prints a `timestamptz` (`2024-01-01 00:00:00.123456+00`),
/// the form the raw log keeps.
fn now_timestamp() -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    format_pg_timestamp_micros(i64::try_from(now.as_micros()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventPath;

    fn live(payload: &str) -> IncomingEvent {
        IncomingEvent {
            id: None,
            receive_timestamp: None,
            path: EventPath::NewBurnBlock,
            payload: payload.into(),
        }
    }

    fn replayed(id: i64, payload: &str) -> IncomingEvent {
        IncomingEvent { id: Some(id), receive_timestamp: Some("ts".into()), ..live(payload) }
    }

    #[tokio::test]
    async fn assigns_ids_keeps_replayed_ones_and_skips_known_ids() {
        let sink = MemorySink::new();
        assert_eq!(sink.ingest(live("{}")).await.unwrap(), IngestOutcome::Applied { id: 1 });
        assert_eq!(sink.ingest(replayed(10, "[]")).await.unwrap(), IngestOutcome::Applied { id: 10 });
        assert_eq!(sink.ingest(replayed(10, "[1]")).await.unwrap(), IngestOutcome::AlreadyStored { id: 10 });
        assert_eq!(sink.ingest(live("{}")).await.unwrap(), IngestOutcome::Applied { id: 11 });
        assert_eq!(sink.last_event_id().await.unwrap(), Some(11));
        let events = sink.events();
        assert_eq!(events.iter().map(|e| e.id).collect::<Vec<_>>(), [1, 10, 11]);
        assert_eq!(events[1].payload, "[]");
        assert_eq!(events[1].receive_timestamp, "ts");
        assert_eq!(events[1].path, "/new_burn_block");
    }

    #[tokio::test]
    async fn pages_in_id_order_and_wipes() {
        let sink = MemorySink::new();
        for id in [5, -3, 7, i64::MAX] {
            sink.ingest(replayed(id, "{}")).await.unwrap();
        }
        let ids = |v: Vec<RawEvent>| v.into_iter().map(|e| e.id).collect::<Vec<_>>();
        assert_eq!(ids(sink.raw_events_after(None, 2).await.unwrap()), [-3, 5]);
        assert_eq!(ids(sink.raw_events_after(Some(5), 10).await.unwrap()), [7, i64::MAX]);
        assert!(sink.raw_events_after(Some(i64::MAX), 10).await.unwrap().is_empty());
        assert!(!sink.is_empty().await.unwrap());
        sink.wipe().await.unwrap();
        assert!(sink.is_empty().await.unwrap());
        assert_eq!(sink.last_event_id().await.unwrap(), None);
    }

    #[tokio::test]
    async fn simulated_failures_store_nothing() {
        let sink = MemorySink::new();
        sink.fail_after(1, FailKind::Rejected);
        sink.ingest(live("{}")).await.unwrap();
        let err = sink.ingest(live("{}")).await.unwrap_err();
        assert!(matches!(err, IngestError::Rejected { path: EventPath::NewBurnBlock, .. }), "{err}");
        sink.fail_with(FailKind::Store);
        assert!(matches!(sink.ingest(replayed(9, "{}")).await, Err(IngestError::Store(_))));
        assert_eq!(sink.event_count(), 1);
        sink.heal();
        sink.ingest(replayed(9, "{}")).await.unwrap();
        assert_eq!(sink.event_count(), 2);
        let err = sink.ingest(live("{not json")).await.unwrap_err();
        assert!(matches!(err, IngestError::Invalid { .. }), "{err}");
        assert_eq!(sink.event_count(), 2);
    }

    #[test]
    fn receive_timestamps_are_now_as_postgres_prints_it() {
        let before = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
        let stamp = now_timestamp();
        let at = crate::timestamp::parse_pg_timestamp(&stamp).unwrap();
        assert!((before..=before + 1).contains(&at), "{stamp}");
        assert!(stamp.ends_with("+00") && stamp.as_bytes()[10] == b' ', "{stamp}");
    }
}
