//! The protocol-independent fan-out: every notification is computed once, numbered (one
//! sequence counter for every topic, taken under the hub lock), kept in a bounded replay ring and
//! pushed ONLY to the connections subscribed to its topic: the hub keeps, per topic (shared ones
//! like `block` and per-key ones like `tx_update` of one tx id alike), the inboxes of its
//! subscribers. A connection's task therefore wakes only for what it follows, and because every
//! push happens under the hub lock in sequence order, each inbox is ordered by `seq` across
//! topics. Each inbox is bounded: one that is full when a notification arrives is ended as a slow
//! consumer (and unregistered) instead of slowing the publisher or anyone else.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::Notify;
use warp::filters::ws::Message;

/// What a notification is about; a subscription names one topic.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Topic {
    Block,
    Microblock,
    Mempool,
    /// `0x` transaction id.
    Tx(String),
    AddressTx(String),
    AddressBalance(String),
    NftEvent,
    /// Asset identifier and the value's Clarity hex.
    NftAsset(String, String),
    NftCollection(String),
    /// Blocks left the canonical chain: sent to every connection with a subscription.
    Reorg,
}

impl Topic {
    /// Every topic's method, in the order of [`Topic::method`].
    pub const METHODS: [&'static str; 10] = [
        "block",
        "microblock",
        "mempool",
        "tx_update",
        "address_tx_update",
        "address_balance_update",
        "nft_event",
        "nft_asset_event",
        "nft_collection_event",
        "reorg",
    ];

    /// The JSON-RPC notification method (the incumbent's names, plus our `reorg`).
    pub fn method(&self) -> &'static str {
        match self {
            Topic::Block => "block",
            Topic::Microblock => "microblock",
            Topic::Mempool => "mempool",
            Topic::Tx(_) => "tx_update",
            Topic::AddressTx(_) => "address_tx_update",
            Topic::AddressBalance(_) => "address_balance_update",
            Topic::NftEvent => "nft_event",
            Topic::NftAsset(..) => "nft_asset_event",
            Topic::NftCollection(_) => "nft_collection_event",
            Topic::Reorg => "reorg",
        }
    }
}

/// One update, as every subscriber of its topic receives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// Strictly increasing per hub across all topics, from 1; 0 means "nothing seen yet".
    pub seq: u64,
    pub topic: Topic,
    pub payload: Value,
    /// The frame per protocol, encoded by the first connection that sends it and shared by all
    /// others: a frame's text is reference-counted, so 10,000 subscribers neither serialise nor
    /// copy a block 10,000 times.
    encoded: [OnceLock<Message>; 2],
}

/// The wire protocols a notification is encoded for.
#[derive(Debug, Clone, Copy)]
pub enum Wire {
    JsonRpc = 0,
    SocketIo = 1,
}

impl Notification {
    pub fn new(seq: u64, topic: Topic, payload: Value) -> Notification {
        Notification { seq, topic, payload, encoded: Default::default() }
    }

    /// The text frame for `wire`, encoded once by `encode`; clone it to send it (cheap).
    pub fn encoded(&self, wire: Wire, encode: impl FnOnce(&Notification) -> String) -> &Message {
        self.encoded[wire as usize].get_or_init(|| Message::text(encode(self)))
    }
}

/// Why missed notifications cannot be replayed exactly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    #[error("sequence {since} is older than the replay window (oldest kept: {oldest}); refetch the state and subscribe without since_seq")]
    TooOld { since: u64, oldest: u64 },
    #[error("sequence {since} was never issued by this server (latest: {latest}); it restarted or is another process: refetch the state and subscribe without since_seq")]
    Unknown { since: u64, latest: u64 },
}

/// Why a receiver gets nothing more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RecvError {
    /// Its inbox was full (this many notifications not taken) when another one arrived.
    #[error("fell {0} notifications behind")]
    Lagged(usize),
    /// The hub is gone (server shutting down).
    #[error("the hub closed")]
    Closed,
}

#[derive(Default)]
struct InboxState {
    queue: VecDeque<Arc<Notification>>,
    ended: Option<RecvError>,
}

/// One connection's bounded queue of notifications, filled by the hub, drained by its task.
struct Inbox {
    state: Mutex<InboxState>,
    /// One waiter (the connection's task); a wake-up before it waits is kept as a permit.
    ready: Notify,
    capacity: usize,
}

impl Inbox {
    fn state(&self) -> MutexGuard<'_, InboxState> {
        // Every update leaves the queue consistent; a panic elsewhere must not wedge delivery.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `n`; false when the inbox has ended (now, as a slow consumer, or before).
    fn push(&self, n: &Arc<Notification>) -> bool {
        let mut st = self.state();
        if st.ended.is_some() {
            return false;
        }
        if st.queue.len() >= self.capacity {
            let behind = st.queue.len();
            st.queue.clear();
            st.ended = Some(RecvError::Lagged(behind));
            drop(st);
            self.ready.notify_one();
            return false;
        }
        st.queue.push_back(Arc::clone(n));
        // The task drains everything it finds, so only the first item of a batch wakes it.
        let first = st.queue.len() == 1;
        drop(st);
        if first {
            self.ready.notify_one();
        }
        true
    }

    fn end(&self, why: RecvError) {
        let mut st = self.state();
        if st.ended.is_none() {
            st.ended = Some(why);
        }
        drop(st);
        self.ready.notify_one();
    }
}

/// A connection's end of the hub: what the hub pushed to it for its subscriptions, in `seq`
/// order. Dropping it unregisters the connection.
pub struct Receiver {
    id: u64,
    inbox: Arc<Inbox>,
    hub: Weak<Mutex<Inner>>,
}

impl Receiver {
    /// Everything queued (at least one notification), waiting for it; or why nothing more comes.
    /// Cancel-safe: nothing is taken unless it is returned.
    pub async fn recv(&self) -> Result<Vec<Arc<Notification>>, RecvError> {
        loop {
            {
                let mut st = self.inbox.state();
                if let Some(why) = st.ended {
                    return Err(why);
                }
                if !st.queue.is_empty() {
                    return Ok(st.queue.drain(..).collect());
                }
            }
            self.inbox.ready.notified().await;
        }
    }

    /// The next queued notification without waiting (`Ok(None)`: nothing queued).
    pub fn try_recv(&self) -> Result<Option<Arc<Notification>>, RecvError> {
        let mut st = self.inbox.state();
        match st.ended {
            Some(why) => Err(why),
            None => Ok(st.queue.pop_front()),
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        if let Some(inner) = self.hub.upgrade() {
            let mut inner = inner.lock().unwrap_or_else(|e| e.into_inner());
            inner.unregister(self.id);
            inner.conns.remove(&self.id);
            if inner.conns.is_empty() {
                inner.last_left = Some(Instant::now());
            }
        }
    }
}

/// A connected receiver and the topics it is registered for.
struct Conn {
    inbox: Arc<Inbox>,
    topics: HashSet<Topic>,
    /// `ws` or `socketio` (the metrics).
    transport: &'static str,
}

struct Inner {
    next_seq: u64,
    ring: VecDeque<Arc<Notification>>,
    next_id: u64,
    conns: HashMap<u64, Conn>,
    /// topic → its subscribers' inboxes by connection id.
    subscribers: HashMap<Topic, HashMap<u64, Arc<Inbox>>>,
    /// When the last connection left (a client may come back and resume); `None`: none has
    /// existed since the hub started, so no client holds a sequence number of this process.
    last_left: Option<Instant>,
    /// The sequence number of the latest gap ([`Hub::skip_if_idle`]).
    gap: Option<u64>,
}

impl Inner {
    /// Removes every registration of connection `id` (it stays connected).
    fn unregister(&mut self, id: u64) {
        let Some(conn) = self.conns.get_mut(&id) else { return };
        for topic in conn.topics.drain() {
            if let Some(subs) = self.subscribers.get_mut(&topic) {
                subs.remove(&id);
                if subs.is_empty() {
                    // Per-key topics (a tx id, an address) must not accumulate.
                    self.subscribers.remove(&topic);
                }
            }
        }
    }
}

/// The fan-out hub. Cheap to share (`Arc<Hub>`).
pub struct Hub {
    inner: Arc<Mutex<Inner>>,
    queue: usize,
    replay_window: usize,
    /// How long after the last connection left notifications are still computed
    /// ([`Hub::skip_if_idle`]; `None`: always).
    idle_grace: Option<Duration>,
}

impl Hub {
    /// `queue`: how many notifications one connection may leave untaken before it is dropped as
    /// a slow consumer. `replay_window`: how many recent notifications are kept for resume.
    pub fn new(queue: usize, replay_window: usize) -> Hub {
        let inner = Inner {
            next_seq: 1,
            ring: VecDeque::with_capacity(replay_window.min(1 << 16)),
            next_id: 0,
            conns: HashMap::new(),
            subscribers: HashMap::new(),
            last_left: None,
            gap: None,
        };
        Hub { inner: Arc::new(Mutex::new(inner)), queue: queue.max(1), replay_window, idle_grace: None }
    }

    /// Lets [`Hub::skip_if_idle`] skip work once no connection has existed for `grace` (or none
    /// ever has).
    pub fn with_idle_grace(mut self, grace: Duration) -> Hub {
        self.idle_grace = Some(grace);
        self
    }

    /// Whether the notifications of a change may go uncomputed because nobody could receive
    /// them: no connection now, and none since the hub started or for the idle grace. Then the
    /// replay ring gets a gap (one sequence number, issued but never sent, and the ring emptied),
    /// so that a resume from before it is refused as too old instead of missing what was
    /// skipped; consecutive skips share one gap. Checked under the hub lock, so a connection
    /// that arrives afterwards gets every notification of the changes computed after it.
    pub fn skip_if_idle(&self) -> bool {
        let Some(grace) = self.idle_grace else { return false };
        let mut inner = self.inner();
        let idle = inner.conns.is_empty() && inner.last_left.is_none_or(|at| at.elapsed() >= grace);
        if idle && inner.gap != Some(inner.next_seq - 1) {
            inner.gap = Some(inner.next_seq);
            inner.next_seq += 1;
            inner.ring.clear();
        }
        idle
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves the state consistent (push/pop/insert/remove).
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Numbers, records and delivers one notification to its topic's subscribers (a reorg
    /// notice: to every connection with a subscription); returns its sequence number.
    pub fn publish(&self, topic: Topic, payload: Value) -> u64 {
        let mut inner = self.inner();
        let seq = inner.next_seq;
        inner.next_seq += 1;
        let n = Arc::new(Notification::new(seq, topic, payload));
        if self.replay_window > 0 {
            if inner.ring.len() == self.replay_window {
                inner.ring.pop_front();
            }
            inner.ring.push_back(Arc::clone(&n));
        }
        // Pushed under the lock, so every inbox receives in sequence order.
        let mut ended = Vec::new();
        if n.topic == Topic::Reorg {
            for (id, c) in &inner.conns {
                if !c.topics.is_empty() && !c.inbox.push(&n) {
                    ended.push(*id);
                }
            }
        } else if let Some(subs) = inner.subscribers.get(&n.topic) {
            for (id, inbox) in subs {
                if !inbox.push(&n) {
                    ended.push(*id);
                }
            }
        }
        for id in ended {
            inner.unregister(id);
        }
        seq
    }

    /// A new connection, subscribed to nothing yet.
    pub fn connect(&self) -> Receiver {
        self.connect_via("ws")
    }

    /// [`connect`](Hub::connect) over `transport` (`ws`, `socketio`), which the subscriber
    /// counts are grouped by.
    pub fn connect_via(&self, transport: &'static str) -> Receiver {
        let mut inner = self.inner();
        let id = inner.next_id;
        inner.next_id += 1;
        let inbox = Arc::new(Inbox { state: Mutex::default(), ready: Notify::new(), capacity: self.queue });
        inner.conns.insert(id, Conn { inbox: Arc::clone(&inbox), topics: HashSet::new(), transport });
        Receiver { id, inbox, hub: Arc::downgrade(&self.inner) }
    }

    /// Registers `rx` for `topic`, atomically with reading the latest sequence number: every
    /// later notification of the topic reaches `rx`, none before. With `since`, also returns the
    /// kept notifications numbered in `(since, latest]` (all topics; the caller filters).
    pub fn subscribe(
        &self,
        rx: &Receiver,
        topic: Topic,
        since: Option<u64>,
    ) -> Result<(u64, Vec<Arc<Notification>>), ReplayError> {
        let mut inner = self.inner();
        let latest = inner.next_seq - 1;
        let replay = match since {
            Some(since) => Self::replay_locked(&inner, since, latest)?,
            None => Vec::new(),
        };
        let Inner { conns, subscribers, .. } = &mut *inner;
        // An ended inbox (slow consumer) gets nothing more; its connection is closing.
        if let Some(conn) = conns.get_mut(&rx.id).filter(|c| c.inbox.state().ended.is_none()) {
            subscribers.entry(topic.clone()).or_default().insert(rx.id, Arc::clone(&conn.inbox));
            conn.topics.insert(topic);
        }
        Ok((latest, replay))
    }

    /// Stops delivering `topic` to `rx`.
    pub fn unsubscribe(&self, rx: &Receiver, topic: &Topic) {
        let mut inner = self.inner();
        let Inner { conns, subscribers, .. } = &mut *inner;
        if let Some(conn) = conns.get_mut(&rx.id) {
            conn.topics.remove(topic);
        }
        if let Some(subs) = subscribers.get_mut(topic) {
            subs.remove(&rx.id);
            if subs.is_empty() {
                subscribers.remove(topic);
            }
        }
    }

    /// Stops delivering anything to `rx` (it stays connected).
    pub fn unsubscribe_all(&self, rx: &Receiver) {
        self.inner().unregister(rx.id);
    }

    /// The latest sequence number issued (0 before the first).
    pub fn latest_seq(&self) -> u64 {
        self.inner().next_seq - 1
    }

    fn replay_locked(inner: &Inner, since: u64, upto: u64) -> Result<Vec<Arc<Notification>>, ReplayError> {
        let latest = inner.next_seq - 1;
        if since > latest {
            return Err(ReplayError::Unknown { since, latest });
        }
        let oldest = inner.ring.front().map_or(inner.next_seq, |n| n.seq);
        if since + 1 < oldest && since < upto {
            return Err(ReplayError::TooOld { since, oldest });
        }
        // The ring is ordered by seq: skip to the first one after `since`.
        let start = inner.ring.partition_point(|n| n.seq <= since);
        Ok(inner.ring.range(start..).take_while(|n| n.seq <= upto).cloned().collect())
    }

    /// The kept notifications numbered in `(since, upto]`, in order, when none of them has left
    /// the window.
    pub fn replay(&self, since: u64, upto: u64) -> Result<Vec<Arc<Notification>>, ReplayError> {
        Self::replay_locked(&self.inner(), since, upto)
    }

    /// Connections currently connected.
    pub fn receiver_count(&self) -> usize {
        self.inner().conns.len()
    }

    /// Subscriptions by transport and topic method (the metrics).
    pub fn subscriptions_by_transport(&self) -> HashMap<(&'static str, &'static str), usize> {
        let mut counts = HashMap::new();
        for conn in self.inner().conns.values() {
            for topic in &conn.topics {
                *counts.entry((conn.transport, topic.method())).or_default() += 1;
            }
        }
        counts
    }

    /// Connections registered for `topic` (tests and metrics).
    pub fn subscriber_count(&self, topic: &Topic) -> usize {
        self.inner().subscribers.get(topic).map_or(0, HashMap::len)
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        for conn in self.inner().conns.values() {
            conn.inbox.end(RecvError::Closed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn seqs(v: &[Arc<Notification>]) -> Vec<u64> {
        v.iter().map(|n| n.seq).collect()
    }

    fn drain(rx: &Receiver) -> Vec<Arc<Notification>> {
        std::iter::from_fn(|| rx.try_recv().unwrap()).collect()
    }

    #[test]
    fn sequence_numbers_increase_and_subscribers_see_later_ones() {
        let hub = Hub::new(8, 4);
        assert_eq!(hub.publish(Topic::Block, json!(1)), 1);
        let rx = hub.connect();
        let (latest, replay) = hub.subscribe(&rx, Topic::Mempool, None).unwrap();
        assert_eq!((latest, replay.len()), (1, 0));
        assert_eq!(hub.publish(Topic::Mempool, json!(2)), 2);
        let n = rx.try_recv().unwrap().unwrap();
        assert_eq!((n.seq, n.topic.clone(), n.payload.clone()), (2, Topic::Mempool, json!(2)));
        assert!(rx.try_recv().unwrap().is_none());
    }

    #[test]
    fn a_subscriber_of_one_topic_never_receives_another() {
        let hub = Hub::new(64, 0);
        let (blocks, tx_a, addr) = (hub.connect(), hub.connect(), hub.connect());
        hub.subscribe(&blocks, Topic::Block, None).unwrap();
        hub.subscribe(&tx_a, Topic::Tx("0xa".into()), None).unwrap();
        hub.subscribe(&addr, Topic::AddressTx("SP1".into()), None).unwrap();
        for i in 0..10 {
            hub.publish(Topic::Tx("0xb".into()), json!(i));
            hub.publish(Topic::AddressBalance("SP1".into()), json!(i));
            hub.publish(Topic::Mempool, json!(i));
            hub.publish(Topic::NftEvent, json!(i));
        }
        hub.publish(Topic::Tx("0xa".into()), json!("a"));
        hub.publish(Topic::Block, json!("b"));
        hub.publish(Topic::AddressTx("SP1".into()), json!("s"));
        let topics = |rx: &Receiver| drain(rx).iter().map(|n| n.topic.clone()).collect::<Vec<_>>();
        assert_eq!(topics(&blocks), vec![Topic::Block]);
        assert_eq!(topics(&tx_a), vec![Topic::Tx("0xa".into())]);
        assert_eq!(topics(&addr), vec![Topic::AddressTx("SP1".into())]);
    }

    #[tokio::test]
    async fn a_task_is_woken_only_for_its_topic() {
        let hub = Arc::new(Hub::new(64, 0));
        let rx = hub.connect();
        hub.subscribe(&rx, Topic::Block, None).unwrap();
        // Other topics' notifications do not complete a pending receive.
        let waiting = tokio::spawn(async move { rx.recv().await.map(|v| seqs(&v)) });
        for i in 0..50 {
            hub.publish(Topic::Mempool, json!(i));
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "woke for another topic");
        let seq = hub.publish(Topic::Block, json!("b"));
        assert_eq!(waiting.await.unwrap(), Ok(vec![seq]));
    }

    #[test]
    fn one_sequence_across_topics_in_order_per_receiver() {
        let hub = Hub::new(64, 64);
        let rx = hub.connect();
        for t in [Topic::Block, Topic::Mempool, Topic::Tx("0xa".into())] {
            hub.subscribe(&rx, t, None).unwrap();
        }
        let mut published = Vec::new();
        for i in 0..5 {
            published.push(hub.publish(Topic::Mempool, json!(i)));
            published.push(hub.publish(Topic::Tx("0xa".into()), json!(i)));
            hub.publish(Topic::NftEvent, json!(i));
            published.push(hub.publish(Topic::Block, json!(i)));
        }
        let got = seqs(&drain(&rx));
        assert!(got.windows(2).all(|w| w[0] < w[1]), "{got:?}");
        assert_eq!(got, published);
    }

    #[test]
    fn resume_replays_across_topics_by_seq_then_continues_live() {
        let hub = Hub::new(64, 64);
        hub.publish(Topic::Block, json!(1));
        hub.publish(Topic::Mempool, json!(2));
        hub.publish(Topic::Tx("0xa".into()), json!(3));
        hub.publish(Topic::Block, json!(4));
        let rx = hub.connect();
        let (latest, replay) = hub.subscribe(&rx, Topic::Block, Some(1)).unwrap();
        assert_eq!((latest, seqs(&replay)), (4, vec![2, 3, 4]));
        let (_, replay) = hub.subscribe(&rx, Topic::Tx("0xa".into()), Some(1)).unwrap();
        assert_eq!(seqs(&replay), vec![2, 3, 4]);
        hub.publish(Topic::Tx("0xa".into()), json!(5));
        hub.publish(Topic::Block, json!(6));
        assert_eq!(seqs(&drain(&rx)), vec![5, 6]);
    }

    #[test]
    fn replay_is_exact_inside_the_window_and_refused_outside() {
        let hub = Hub::new(8, 3);
        for i in 1..=5 {
            hub.publish(Topic::Block, json!(i));
        }
        // Kept: 3, 4, 5.
        assert_eq!(seqs(&hub.replay(2, 5).unwrap()), vec![3, 4, 5]);
        assert_eq!(seqs(&hub.replay(3, 4).unwrap()), vec![4]);
        assert_eq!(seqs(&hub.replay(5, 5).unwrap()), Vec::<u64>::new());
        assert_eq!(hub.replay(1, 5), Err(ReplayError::TooOld { since: 1, oldest: 3 }));
        assert_eq!(hub.replay(9, 5), Err(ReplayError::Unknown { since: 9, latest: 5 }));
    }

    #[test]
    fn idle_skips_leave_a_gap_that_a_resume_cannot_cross() {
        // Without a grace nothing is ever skipped.
        assert!(!Hub::new(8, 8).skip_if_idle());

        let hub = Hub::new(8, 8).with_idle_grace(Duration::from_secs(3600));
        // Nobody ever connected: skipped, behind one gap for any number of skips.
        assert!(hub.skip_if_idle() && hub.skip_if_idle());
        assert_eq!(hub.latest_seq(), 1);
        assert_eq!(hub.replay(0, 1), Err(ReplayError::TooOld { since: 0, oldest: 2 }));
        assert_eq!(seqs(&hub.replay(1, 1).unwrap()), Vec::<u64>::new());

        // Connected: computed; after the last one leaves, still computed within the grace.
        let rx = hub.connect();
        hub.subscribe(&rx, Topic::Block, None).unwrap();
        assert!(!hub.skip_if_idle());
        assert_eq!(hub.publish(Topic::Block, json!(2)), 2);
        drop(rx);
        assert!(!hub.skip_if_idle());
        assert_eq!(hub.publish(Topic::Block, json!(3)), 3);
        assert_eq!(seqs(&hub.replay(2, 3).unwrap()), vec![3]);

        // Past the grace: a new gap, and a client that saw 3 is told to refetch.
        let hub = Hub::new(8, 8).with_idle_grace(Duration::ZERO);
        let rx = hub.connect();
        hub.subscribe(&rx, Topic::Block, None).unwrap();
        assert_eq!(hub.publish(Topic::Block, json!(1)), 1);
        drop(rx);
        assert!(hub.skip_if_idle());
        assert_eq!(hub.replay(1, 2), Err(ReplayError::TooOld { since: 1, oldest: 3 }));
        // A connection ends the skipping; what follows the gap replays exactly.
        let rx = hub.connect();
        assert!(!hub.skip_if_idle());
        let (latest, _) = hub.subscribe(&rx, Topic::Block, None).unwrap();
        assert_eq!(latest, 2);
        assert_eq!(hub.publish(Topic::Block, json!(3)), 3);
        assert_eq!(seqs(&hub.replay(2, 3).unwrap()), vec![3]);
        assert_eq!(seqs(&drain(&rx)), vec![3]);
    }

    #[test]
    fn a_lagging_receiver_is_ended_without_affecting_others() {
        let hub = Hub::new(2, 0);
        let (slow, fast, other) = (hub.connect(), hub.connect(), hub.connect());
        hub.subscribe(&slow, Topic::Block, None).unwrap();
        hub.subscribe(&fast, Topic::Block, None).unwrap();
        hub.subscribe(&other, Topic::Mempool, None).unwrap();
        let mut fast_got = Vec::new();
        for i in 0..5 {
            hub.publish(Topic::Block, json!(i));
            hub.publish(Topic::Mempool, json!(i));
            fast_got.extend(seqs(&drain(&fast)));
            drain(&other);
        }
        assert_eq!(slow.try_recv(), Err(RecvError::Lagged(2)));
        assert_eq!(fast_got, vec![1, 3, 5, 7, 9]);
        // The slow one is unregistered; the others still are.
        assert_eq!(hub.subscriber_count(&Topic::Block), 1);
        assert_eq!(hub.subscriber_count(&Topic::Mempool), 1);
        assert_eq!(hub.receiver_count(), 3);
        drop(slow);
        assert_eq!(hub.receiver_count(), 2);
    }

    #[test]
    fn reorg_notices_reach_every_subscribed_connection_and_keys_do_not_accumulate() {
        let hub = Hub::new(8, 0);
        let (a, b, idle) = (hub.connect(), hub.connect(), hub.connect());
        hub.subscribe(&a, Topic::Block, None).unwrap();
        hub.subscribe(&b, Topic::Tx("0xa".into()), None).unwrap();
        let seq = hub.publish(Topic::Reorg, json!({}));
        assert_eq!(seqs(&drain(&a)), vec![seq]);
        assert_eq!(seqs(&drain(&b)), vec![seq]);
        assert!(drain(&idle).is_empty());
        hub.unsubscribe(&b, &Topic::Tx("0xa".into()));
        assert_eq!(hub.subscriber_count(&Topic::Tx("0xa".into())), 0);
        assert!(!hub.inner().subscribers.contains_key(&Topic::Tx("0xa".into())));
        hub.unsubscribe_all(&a);
        hub.publish(Topic::Reorg, json!({}));
        assert!(drain(&a).is_empty() && drain(&b).is_empty());
    }

    #[test]
    fn frames_are_encoded_once_and_shared() {
        let hub = Hub::new(8, 0);
        let (a, b) = (hub.connect(), hub.connect());
        hub.subscribe(&a, Topic::Block, None).unwrap();
        hub.subscribe(&b, Topic::Block, None).unwrap();
        hub.publish(Topic::Block, json!({"h": 1}));
        let (na, nb) = (drain(&a).remove(0), drain(&b).remove(0));
        assert!(Arc::ptr_eq(&na, &nb));
        let mut calls = 0;
        let fa = na.encoded(Wire::JsonRpc, |_| {
            calls += 1;
            "x".into()
        });
        let fb = nb.encoded(Wire::JsonRpc, |_| unreachable!("encoded twice"));
        assert!(std::ptr::eq(fa, fb));
        assert_eq!((calls, fa.to_str().unwrap()), (1, "x"));
    }
}
