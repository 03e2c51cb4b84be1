//! Live updates wired to ingestion: after an event commits, what it changed ([`Change`]) goes to
//! the notifier, directly (SQLite, one process) or through PostgreSQL NOTIFY to every API
//! process LISTENing on the database. A transaction we put into the mempool ourselves
//! (`Store::record_local_tx`: Rosetta submit, `/v2` broadcast, faucet) reaches the notifier
//! the same ways. See `docs/live.md`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use stacks_live::{Change, Hub, LiveConfig, Notifier};
use tokio::sync::mpsc;
use warp::{Filter, Rejection, Reply};

use crate::events::{EventPath, EventPayload};
use crate::ingest::{EventSink, IncomingEvent, IngestError, IngestOutcome, RawEventLog};
use crate::store::{Engine, LiveNotifier, Store, StoreError};

/// How often a `readonly` process on a SQLite file looks for events the writer committed.
const FOLLOW_EVERY: Duration = Duration::from_millis(50);
/// How long a `readonly` process on a replica waits for it to replay a change announced on the
/// primary before announcing it anyway.
const REPLAY_WAIT: Duration = Duration::from_secs(10);

/// What an event changed, for the live updates; `None` when nothing a subscriber sees.
pub fn change_of(event: &IncomingEvent) -> Option<Change> {
    change_of_payload(event.path, &event.payload)
}

fn change_of_payload(path: EventPath, payload: &str) -> Option<Change> {
    // A block's change needs nothing from its body (the notifier reads the chain): it is not
    // parsed a second time on the node's POST.
    match path {
        EventPath::NewBlock | EventPath::NewBurnBlock => return Some(Change::Chain),
        EventPath::AttachmentsNew | EventPath::StackerDbChunks | EventPath::ProposalResponse => return None,
        EventPath::NewMempoolTx | EventPath::DropMempoolTx | EventPath::NewMicroblocks => {}
    }
    let payload = EventPayload::parse(path, payload).ok()?;
    match payload {
        EventPayload::NewMempoolTx(m) => {
            let tx_ids = m
                .raw_txs
                .iter()
                .filter_map(|raw| hex::decode(raw.trim_start_matches("0x")).ok())
                .map(|bytes| format!("0x{}", hex::encode(stacks_codec::tx::txid_of(&bytes))))
                .collect();
            Some(Change::MempoolAdded { tx_ids })
        }
        EventPayload::DropMempoolTx(d) => Some(Change::MempoolDropped { tx_ids: d.dropped_txids }),
        EventPayload::NewMicroblocks(m) => {
            let mut microblock_hashes: Vec<String> = Vec::new();
            for h in m.transactions.iter().filter_map(|t| t.microblock_hash.as_ref()) {
                let h = format!("0x{}", h.trim_start_matches("0x").to_ascii_lowercase());
                if !microblock_hashes.contains(&h) {
                    microblock_hashes.push(h);
                }
            }
            let tx_ids = m.transactions.into_iter().map(|t| t.txid).collect();
            Some(Change::Microblocks { tx_ids, microblock_hashes })
        }
        EventPayload::NewBlock(_)
        | EventPayload::NewBurnBlock(_)
        | EventPayload::AttachmentsNew(_)
        | EventPayload::Unmodelled(_) => None,
    }
}

/// Splits a change so that each NOTIFY payload fits PostgreSQL's limit.
fn notify_payloads(change: &Change) -> Vec<String> {
    use crate::store::MAX_NOTIFY_PAYLOAD;
    // A tx id is 66 characters plus quotes and a comma.
    let per = MAX_NOTIFY_PAYLOAD / 72;
    let split = |ids: &Vec<String>, make: fn(Vec<String>) -> Change| -> Vec<Change> {
        ids.chunks(per.max(1)).map(|c| make(c.to_vec())).collect()
    };
    let parts = match change {
        Change::Chain => vec![Change::Chain],
        Change::MempoolAdded { tx_ids } => split(tx_ids, |tx_ids| Change::MempoolAdded { tx_ids }),
        Change::MempoolDropped { tx_ids } => split(tx_ids, |tx_ids| Change::MempoolDropped { tx_ids }),
        Change::Microblocks { tx_ids, microblock_hashes } => {
            // The hashes (a few per stream) ride on the first part.
            let mut parts =
                split(tx_ids, |tx_ids| Change::Microblocks { tx_ids, microblock_hashes: Vec::new() });
            match parts.first_mut() {
                Some(Change::Microblocks { microblock_hashes: first, .. }) => {
                    first.clone_from(microblock_hashes)
                }
                _ => parts.push(Change::Microblocks {
                    tx_ids: Vec::new(),
                    microblock_hashes: microblock_hashes.clone(),
                }),
            }
            parts
        }
    };
    parts.iter().filter_map(|c| serde_json::to_string(c).ok()).collect()
}

/// Where the ingesting side announces changes.
#[derive(Clone)]
pub enum Feed {
    /// Straight to this process's notifier.
    Local(mpsc::UnboundedSender<Change>),
    /// NOTIFY on the database; every listening process (this one too) picks it up. The
    /// payloads go to [`send_notifies`].
    Postgres(mpsc::UnboundedSender<Outgoing>),
}

/// What [`send_notifies`] is handed, in order.
pub enum Outgoing {
    Notify(String),
    /// Everything before it has been sent: tell the waiter ([`Feed::flush`]).
    Flushed(tokio::sync::oneshot::Sender<()>),
}

impl Feed {
    /// Where a process without live updates of its own (`writeonly`) announces: NOTIFY for
    /// the API processes on PostgreSQL; nowhere on SQLite, whose `readonly` processes follow
    /// the file.
    pub fn announcing_only(store: &Arc<Store>) -> Feed {
        match store.engine() {
            Engine::Postgres => Feed::postgres(Arc::clone(store)),
            Engine::Sqlite => Feed::Local(mpsc::unbounded_channel().0),
        }
    }

    /// NOTIFY through `store`, from a task of its own (call within the runtime).
    fn postgres(store: Arc<Store>) -> Feed {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(send_notifies(store, rx));
        Feed::Postgres(tx)
    }

    pub async fn announce(&self, change: Change) {
        match self {
            Feed::Local(tx) => {
                let _ = tx.send(change);
            }
            Feed::Postgres(tx) => {
                for payload in notify_payloads(&change) {
                    let _ = tx.send(Outgoing::Notify(payload));
                }
            }
        }
    }

    /// Waits, at most `within`, until every change announced so far has been sent: at
    /// shutdown, before the store closes, so that the last events' NOTIFYs are not lost.
    pub async fn flush(&self, within: Duration) {
        let Feed::Postgres(tx) = self else { return };
        let (done, sent) = tokio::sync::oneshot::channel();
        if tx.send(Outgoing::Flushed(done)).is_ok() && tokio::time::timeout(within, sent).await.is_err() {
            tracing::warn!("live: NOTIFYs still queued after {} s; not sent", within.as_secs());
        }
    }
}

/// Sends the announced payloads as NOTIFYs, one statement each (PostgreSQL delivers one of
/// identical payloads sent in one transaction), in the order announced, each after the commit
/// it follows (it was announced after that commit). The node's POST does not wait for them: a
/// round trip on its path cost ~0.1 ms of the ~1 ms a mempool POST takes. One connection is
/// kept for them ([`LiveNotifier`]).
async fn send_notifies(store: Arc<Store>, mut rx: mpsc::UnboundedReceiver<Outgoing>) {
    let mut notifier = LiveNotifier::default();
    while let Some(out) = rx.recv().await {
        let payload = match out {
            Outgoing::Notify(payload) => payload,
            Outgoing::Flushed(done) => {
                let _ = done.send(());
                continue;
            }
        };
        match notifier.notify(&store, &payload).await {
            Ok(()) => {}
            Err(e) if closed(&e) => break,
            // The event is committed; subscribers miss this update and see the next.
            Err(e) => tracing::warn!(error = %e, "live: NOTIFY failed"),
        }
    }
    notifier.close().await;
}

/// An [`EventSink`] that announces each event it applied.
pub struct LiveSink<S> {
    inner: Arc<S>,
    feed: Feed,
}

impl<S> LiveSink<S> {
    pub fn new(inner: Arc<S>, feed: Feed) -> LiveSink<S> {
        LiveSink { inner, feed }
    }
}

impl<S: EventSink> EventSink for LiveSink<S> {
    async fn ingest(&self, event: IncomingEvent) -> Result<IngestOutcome, IngestError> {
        let change = change_of(&event);
        let outcome = self.inner.ingest(event).await?;
        if let (IngestOutcome::Applied { .. }, Some(change)) = (&outcome, change) {
            self.feed.announce(change).await;
        }
        Ok(outcome)
    }

    async fn last_event_id(&self) -> Result<Option<i64>, IngestError> {
        self.inner.last_event_id().await
    }

    /// The inner sink's batch, then each applied event's announcement, in order.
    async fn ingest_many(
        &self,
        events: Vec<IncomingEvent>,
    ) -> Result<Vec<Result<IngestOutcome, IngestError>>, IngestError> {
        let changes: Vec<Option<Change>> = events.iter().map(change_of).collect();
        let outcomes = self.inner.ingest_many(events).await?;
        for (outcome, change) in outcomes.iter().zip(changes) {
            if let (Ok(IngestOutcome::Applied { .. }), Some(change)) = (outcome, change) {
                self.feed.announce(change).await;
            }
        }
        Ok(outcomes)
    }
}

/// The live-update service of one API process: the hub, its notifier task and, on PostgreSQL,
/// the LISTEN task feeding it.
pub struct Live {
    pub hub: Arc<Hub>,
    pub config: LiveConfig,
    /// `/socket.io/` sessions.
    pub socketio: stacks_live::socketio::SocketIo,
    feed: Feed,
    processed: Arc<AtomicU64>,
}

impl Live {
    /// Starts the notifier over `store` (announcing from its current tip on).
    pub async fn start(store: Arc<Store>, config: LiveConfig) -> Result<Live, StoreError> {
        let hub = Arc::new(Hub::new(config.queue, config.replay_window).with_idle_grace(config.idle_grace));
        let processed = Arc::new(AtomicU64::new(0));
        let done = Arc::clone(&processed);
        let (tx, mut rx) = mpsc::unbounded_channel::<Change>();
        let mut notifier = Notifier::new(Arc::clone(&store), Arc::clone(&hub))
            .await
            .map_err(|e| StoreError::Corrupt(format!("live: reading the chain tip: {e}")))?;
        tokio::spawn(async move {
            while let Some(change) = rx.recv().await {
                if let Err(e) = notifier.apply(&change).await {
                    tracing::warn!(error = %e, ?change, "live: computing updates failed");
                }
                done.fetch_add(1, Ordering::Release);
            }
        });
        let feed = match store.listen_live().await? {
            None => {
                // SQLite, no NOTIFY. A transaction we put into the mempool (`local_txs`, no
                // raw event): this process's at once, other processes' by following the file.
                let recorded = store.local_txs_recorded();
                tokio::spawn(forward_recorded(recorded, tx.clone()));
                tokio::spawn(follow_local_txs(Arc::clone(&store), tx.clone()));
                // A `readonly` process follows the raw events the writer's process commits
                // (each in the transaction of its effects).
                if store.is_readonly() {
                    tokio::spawn(follow_raw_events(Arc::clone(&store), tx.clone()));
                }
                Feed::Local(tx)
            }
            Some(mut stream) => {
                let replica = store.is_readonly().then(|| Arc::clone(&store));
                tokio::spawn(async move {
                    while let Some(item) = stream.next().await {
                        match item.map(|p| serde_json::from_str::<Change>(&p)) {
                            Ok(Ok(change)) => {
                                // Heard on the primary: announced once the replica this
                                // process reads has replayed it, so a subscriber can read
                                // what it is told about.
                                if let Some(store) = &replica {
                                    match store.wait_for_replay(REPLAY_WAIT).await {
                                        Ok(true) => {}
                                        Ok(false) => tracing::warn!(
                                            "live: the replica did not replay a change within {} s; announced anyway",
                                            REPLAY_WAIT.as_secs()
                                        ),
                                        Err(e) => tracing::warn!(error = %e, "live: replica replay position"),
                                    }
                                }
                                if tx.send(change).is_err() {
                                    break;
                                }
                            }
                            Ok(Err(e)) => tracing::warn!(error = %e, "live: unreadable NOTIFY payload"),
                            Err(e) => tracing::warn!(error = %e, "live: LISTEN connection failed"),
                        }
                    }
                });
                Feed::postgres(Arc::clone(&store))
            }
        };
        debug_assert!(matches!(feed, Feed::Postgres(_)) == (store.engine() == Engine::Postgres));
        let socketio = stacks_live::socketio::SocketIo::new(Arc::clone(&hub), config.clone());
        Ok(Live { hub, config, socketio, feed, processed })
    }

    /// How many changes this process's notifier has turned into notifications (tests wait on it).
    pub fn processed(&self) -> u64 {
        self.processed.load(Ordering::Acquire)
    }

    /// Where ingestion in this process announces what it committed.
    pub fn feed(&self) -> Feed {
        self.feed.clone()
    }

    /// `/extended/v1/ws` and `/socket.io/`.
    pub fn routes(&self) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
        stacks_live::ws::route(Arc::clone(&self.hub), self.config.clone()).or(self.socketio.routes())
    }
}

/// Announces each transaction this process records locally (`Store::record_local_tx`) as it
/// commits; one the channel dropped (a burst) comes through [`follow_local_txs`] instead.
async fn forward_recorded(
    mut recorded: tokio::sync::broadcast::Receiver<String>,
    tx: mpsc::UnboundedSender<Change>,
) {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        let tx_ids = match recorded.recv().await {
            Ok(id) => vec![id],
            Err(RecvError::Lagged(_)) => continue,
            Err(RecvError::Closed) => return,
        };
        if tx.send(Change::MempoolAdded { tx_ids }).is_err() {
            return;
        }
    }
}

/// Announces every `local_txs` row committed after the newest one now, looking every
/// [`FOLLOW_EVERY`]: transactions other processes on the SQLite file put into the mempool (this
/// process's own come here again; the notifier announces a mempool transaction once).
async fn follow_local_txs(store: Arc<Store>, tx: mpsc::UnboundedSender<Change>) {
    let mut last = match store.last_local_tx_id().await {
        Ok(id) => id,
        Err(e) => {
            tracing::warn!(error = %e, "live: cannot read the newest local transaction; not following them");
            return;
        }
    };
    loop {
        tokio::time::sleep(FOLLOW_EVERY).await;
        let rows = match store.local_txs_after(last, 256).await {
            Ok(rows) => rows,
            // The store was closed (shutdown): nothing more will commit.
            Err(e) if closed(&e) => return,
            Err(e) => {
                tracing::warn!(error = %e, "live: reading new local transactions failed");
                continue;
            }
        };
        let Some(newest) = rows.last().map(|r| r.id) else { continue };
        last = Some(newest);
        let tx_ids = rows.into_iter().map(|r| r.tx_id).collect();
        if tx.send(Change::MempoolAdded { tx_ids }).is_err() {
            return;
        }
    }
}

/// Whether `e` says the store was closed (`Store::close`, at shutdown): a loop that follows it
/// ends there, rather than warning every [`FOLLOW_EVERY`] until the process exits.
fn closed(e: &StoreError) -> bool {
    e.is_closed()
}

/// Announces every raw event committed after the newest one now, in id order, looking every
/// [`FOLLOW_EVERY`].
async fn follow_raw_events(store: Arc<Store>, tx: mpsc::UnboundedSender<Change>) {
    let mut last = match store.last_event_id().await {
        Ok(id) => id,
        Err(e) => {
            tracing::warn!(error = %e, "live: cannot read the newest event; no live updates");
            return;
        }
    };
    loop {
        tokio::time::sleep(FOLLOW_EVERY).await;
        let events = match store.raw_events_after(last, 256).await {
            Ok(events) => events,
            Err(IngestError::Store(e)) if e.downcast_ref::<StoreError>().is_some_and(closed) => return,
            Err(e) => {
                tracing::warn!(error = %e, "live: reading the writer's new events failed");
                continue;
            }
        };
        for event in events {
            last = Some(event.id);
            let change = EventPath::from_path(&event.path).and_then(|p| change_of_payload(p, &event.payload));
            if let Some(change) = change {
                if tx.send(change).is_err() {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_changes_are_split_for_notify() {
        let ids: Vec<String> = (0..500).map(|i| format!("0x{i:064x}")).collect();
        let parts = notify_payloads(&Change::MempoolAdded { tx_ids: ids.clone() });
        assert!(parts.len() > 1);
        let mut back = Vec::new();
        for p in &parts {
            assert!(p.len() < crate::store::MAX_NOTIFY_PAYLOAD + 100, "{}", p.len());
            match serde_json::from_str::<Change>(p).unwrap() {
                Change::MempoolAdded { tx_ids } => back.extend(tx_ids),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(back, ids);
    }

    /// The loops that follow a store end once it is closed (at shutdown `serve` closes the store
    /// while they still run: each then warned that it read a closed pool, every FOLLOW_EVERY).
    #[tokio::test]
    async fn followers_end_when_the_store_closes() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/db.sqlite", dir.path().display());
        let store = Arc::new(
            Store::open(&url, crate::ledger::Network::Testnet, crate::compose::tx_render()).await.unwrap(),
        );
        let (tx, _rx) = mpsc::unbounded_channel();
        let local = tokio::spawn(follow_local_txs(Arc::clone(&store), tx.clone()));
        let raw = tokio::spawn(follow_raw_events(Arc::clone(&store), tx));
        // Both past their first read, polling.
        tokio::time::sleep(FOLLOW_EVERY * 4).await;
        assert!(!local.is_finished() && !raw.is_finished());
        store.close().await;
        let ended = tokio::time::timeout(FOLLOW_EVERY * 40, async { (local.await, raw.await) }).await;
        let (local, raw) = ended.expect("a follower kept polling the closed store");
        local.unwrap();
        raw.unwrap();
    }
}
