//! Acknowledging node events once they are logged, and applying them behind the acknowledgement
//! (`STACKS_LEDGER_EVENT_ACK=logged`; docs/configuration.md, docs/store.md "The event inbox").
//!
//! A node POSTs one event, waits for its `200`, then POSTs the next. Acknowledged after the
//! apply (the default, `applied`), every step of that chain waits for the one before: the
//! node's request, the event's parse, its transaction, the commit, the reply. [`Logged`]
//! answers once the event is *durable* (written to the inbox and committed, with the engine's
//! durability: `synchronous = NORMAL` on SQLite, `synchronous_commit` on PostgreSQL) and
//! applies it after, on a task of its own, while the node sends the next: the events that
//! arrived meanwhile go in one batch (one transaction, one commit).
//!
//! What does not change:
//! - An invalid body is refused before it is logged, with the same error as before.
//! - Events are applied in the order they were logged, each whole or not at all, under the id
//!   they were logged with; a crash loses nothing acknowledged: the next start applies what
//!   the inbox still holds ([`recover`]) before the observer listens.
//! - Readers see an event once it is applied; live updates are announced after it.
//!
//! What does: the ledger trails the node by the events in the queue (bounded by
//! [`InboxConfig::queue_bytes`]: a POST waits for room, so a syncing node is held to the
//! apply's pace), and an event the ledger refuses at apply time (e.g. a block whose parent is
//! unknown) cannot be refused to the POST that carried it. Then the applier stops at it, retries
//! it with a growing pause, and every POST meanwhile is answered `500` with the reason, as the
//! node's own retries would be under `applied`.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

use super::{EventInbox, EventSink, IncomingEvent, IngestError, IngestOutcome};
use crate::timestamp::{format_pg_timestamp, now_unix};

/// Settings of [`Logged`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InboxConfig {
    /// Payload bytes logged and not yet applied, at most; a POST beyond waits for room.
    pub queue_bytes: usize,
    /// Events applied in one transaction, at most.
    pub batch: usize,
}

/// The default queue bound: 256 MiB of event bodies.
pub const DEFAULT_QUEUE_BYTES: usize = 256 << 20;
/// The default batch bound.
pub const DEFAULT_BATCH: usize = 256;

impl Default for InboxConfig {
    fn default() -> Self {
        InboxConfig { queue_bytes: DEFAULT_QUEUE_BYTES, batch: DEFAULT_BATCH }
    }
}

/// The queue's room is counted in KiB (a semaphore's permits are `u32`).
const ROOM_UNIT: usize = 1024;
/// The applier's pause after a failed batch: doubled each time, up to the maximum.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(30);
/// Applied events between two deletions of applied inbox rows, while the queue stays busy
/// (an idle queue trims after [`TRIM_IDLE`]).
const TRIM_EVERY: u64 = 4096;
const TRIM_IDLE: Duration = Duration::from_secs(1);

/// Applies what the inbox holds from before this start, in order, in batches of `batch`.
/// Returns how many events it applied. An event the ledger refuses stops it with that error:
/// it stays in the inbox (and the observer must not take newer events ahead of it).
pub async fn recover<S: EventSink, L: EventInbox>(
    sink: &S,
    log: &L,
    batch: usize,
) -> Result<usize, IngestError> {
    let pending = log.inbox_pending().await?;
    let mut applied = 0;
    let mut rest = pending.into_iter().peekable();
    while rest.peek().is_some() {
        let chunk: Vec<IncomingEvent> = rest.by_ref().take(batch.max(1)).collect();
        for outcome in sink.ingest_many(chunk).await? {
            outcome?;
            applied += 1;
        }
    }
    if applied > 0 {
        tracing::info!(events = applied, "applied the events logged before this start");
    }
    log.inbox_trim().await?;
    Ok(applied)
}

/// An event logged and waiting to be applied, holding its room in the queue.
struct Queued {
    event: IncomingEvent,
    _room: OwnedSemaphorePermit,
}

struct Shared<L> {
    log: Arc<L>,
    /// The next id; held while an event is logged and queued, so that ids, the inbox and the
    /// queue agree on the order.
    next: tokio::sync::Mutex<(i64, mpsc::UnboundedSender<Queued>)>,
    room: Arc<Semaphore>,
    room_units: usize,
    /// Why the applier is stopped, while it is.
    stalled: Mutex<Option<String>>,
    /// Logged and not yet applied.
    pending: AtomicU64,
    /// Held while the gauge is set from `pending`, so that the last value set is the latest.
    gauge: Mutex<()>,
}

impl<L> Shared<L> {
    /// Adds `delta` to the events pending, and says so in the metrics.
    fn count(&self, delta: i64) {
        if delta >= 0 {
            self.pending.fetch_add(delta as u64, Ordering::AcqRel);
        } else {
            self.pending.fetch_sub(delta.unsigned_abs(), Ordering::AcqRel);
        }
        let _set = self.gauge.lock().unwrap_or_else(|e| e.into_inner());
        // Exported with the server's metrics (the `metrics` facade's recorder).
        metrics::gauge!("stacks_ledger_event_inbox_pending").set(self.pending.load(Ordering::Acquire) as f64);
    }
}

/// The event observer's sink with `STACKS_LEDGER_EVENT_ACK=logged` (see the module doc).
pub struct Logged<L> {
    shared: Arc<Shared<L>>,
    applier: Mutex<Option<JoinHandle<()>>>,
}

impl<L: EventInbox> Logged<L> {
    /// Starts the applier over `sink`. Call [`recover`] first: the ids go on from the inbox's.
    pub async fn start<S: EventSink>(
        sink: Arc<S>,
        log: Arc<L>,
        config: InboxConfig,
    ) -> Result<Self, IngestError> {
        let next = log.inbox_next_id().await?;
        let (tx, rx) = mpsc::unbounded_channel();
        let room_units =
            (config.queue_bytes / ROOM_UNIT).clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
        let shared = Arc::new(Shared {
            log,
            next: tokio::sync::Mutex::new((next, tx)),
            room: Arc::new(Semaphore::new(room_units)),
            room_units,
            stalled: Mutex::new(None),
            pending: AtomicU64::new(0),
            gauge: Mutex::new(()),
        });
        let applier = tokio::spawn(apply_loop(sink, Arc::clone(&shared), rx, config.batch.max(1)));
        Ok(Logged { shared, applier: Mutex::new(Some(applier)) })
    }

    /// Events logged and not yet applied.
    pub fn pending(&self) -> u64 {
        self.shared.pending.load(Ordering::Acquire)
    }

    /// Why the applier is stopped, if it is.
    pub fn stalled(&self) -> Option<String> {
        self.shared.stalled.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Takes no more events and applies those queued, waiting at most `wait` (what is left
    /// stays in the inbox for the next start).
    pub async fn close(&self, wait: Duration) {
        // Closing the channel ends the applier once it has emptied the queue.
        let (_, tx) = &mut *self.shared.next.lock().await;
        let (closed, _) = mpsc::unbounded_channel();
        drop(std::mem::replace(tx, closed));
        let applier = self.applier.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(mut applier) = applier {
            if tokio::time::timeout(wait, &mut applier).await.is_err() {
                tracing::warn!(
                    pending = self.pending(),
                    "stopping with logged events not applied: the next start applies them"
                );
                applier.abort();
            }
        }
    }
}

impl<L: EventInbox> EventSink for Logged<L> {
    async fn ingest(&self, mut event: IncomingEvent) -> Result<IngestOutcome, IngestError> {
        if let Some(reason) = self.stalled() {
            return Err(IngestError::Rejected {
                path: event.path,
                reason: format!("not logged: an earlier event cannot be applied yet ({reason})"),
            });
        }
        let units = event.payload.len().div_ceil(ROOM_UNIT).clamp(1, self.shared.room_units);
        let room = Arc::clone(&self.shared.room)
            .acquire_many_owned(units as u32)
            .await
            .map_err(|_| IngestError::Store("the event inbox is closed".into()))?;
        let mut next = self.shared.next.lock().await;
        let id = next.0;
        event.id = Some(id);
        event.receive_timestamp = Some(format_pg_timestamp(now_unix()));
        self.shared.log.inbox_put(&event).await?;
        next.0 += 1;
        self.shared.count(1);
        if next.1.send(Queued { event, _room: room }).is_err() {
            // Closed for shutdown: logged all the same, the next start applies it.
            tracing::warn!(id, "event logged while stopping: the next start applies it");
        }
        Ok(IngestOutcome::Logged { id })
    }

    async fn last_event_id(&self) -> Result<Option<i64>, IngestError> {
        let next = self.shared.next.lock().await;
        Ok(Some(next.0 - 1).filter(|id| *id > 0))
    }
}

/// Applies the queue in order: whatever has arrived, up to `batch` events a transaction.
async fn apply_loop<S: EventSink, L: EventInbox>(
    sink: Arc<S>,
    shared: Arc<Shared<L>>,
    mut rx: mpsc::UnboundedReceiver<Queued>,
    batch: usize,
) {
    let mut head: VecDeque<Queued> = VecDeque::new();
    let mut retry = RETRY_FIRST;
    let mut since_trim = 0u64;
    loop {
        if head.is_empty() {
            // Idle: delete the applied rows once nothing has come for a moment.
            let next = if since_trim > 0 {
                match tokio::time::timeout(TRIM_IDLE, rx.recv()).await {
                    Ok(next) => next,
                    Err(_) => {
                        trim(&*shared.log, &mut since_trim).await;
                        continue;
                    }
                }
            } else {
                rx.recv().await
            };
            match next {
                Some(q) => head.push_back(q),
                None => break,
            }
        }
        while head.len() < batch {
            match rx.try_recv() {
                Ok(q) => head.push_back(q),
                Err(_) => break,
            }
        }
        let n = head.len().min(batch);
        let events: Vec<IncomingEvent> = head.iter().take(n).map(|q| q.event.clone()).collect();
        let (applied, failure) = match sink.ingest_many(events).await {
            Ok(outcomes) => {
                let applied = outcomes.iter().take_while(|o| o.is_ok()).count();
                let failure = outcomes.into_iter().find_map(Result::err);
                (
                    applied,
                    failure
                        .map(|e| e.to_string())
                        .or_else(|| (applied < n).then(|| "not applied".to_owned())),
                )
            }
            Err(e) => (0, Some(e.to_string())),
        };
        head.drain(..applied);
        since_trim += applied as u64;
        shared.count(-(applied as i64));
        match failure {
            None => {
                if retry != RETRY_FIRST {
                    tracing::info!("logged events apply again");
                }
                retry = RETRY_FIRST;
                *shared.stalled.lock().unwrap_or_else(|e| e.into_inner()) = None;
            }
            Some(reason) => {
                let id = head.front().and_then(|q| q.event.id);
                tracing::error!(id, %reason, retry_in_ms = retry.as_millis() as u64, "a logged event cannot be applied");
                *shared.stalled.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(format!("event {}: {reason}", id.unwrap_or_default()));
                tokio::time::sleep(retry).await;
                retry = (retry * 2).min(RETRY_MAX);
                continue;
            }
        }
        if since_trim >= TRIM_EVERY {
            trim(&*shared.log, &mut since_trim).await;
        }
    }
    if since_trim > 0 {
        trim(&*shared.log, &mut since_trim).await;
    }
}

async fn trim<L: EventInbox>(log: &L, since_trim: &mut u64) {
    match log.inbox_trim().await {
        Ok(_) => *since_trim = 0,
        Err(e) => tracing::warn!(error = %e, "deleting applied events from the inbox"),
    }
}

#[cfg(test)]
mod tests;
