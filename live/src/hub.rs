//! The protocol-independent fan-out: every notification is computed once, numbered, kept in a
//! bounded replay ring and sent to every connection through ONE `tokio::sync::broadcast`
//! channel. A connection filters what it receives by its own subscriptions.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;
use tokio::sync::broadcast;

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
    /// Strictly increasing per hub, from 1; 0 means "nothing seen yet".
    pub seq: u64,
    pub topic: Topic,
    pub payload: Value,
    /// The frame text per protocol, encoded by the first connection that sends it and shared
    /// by all others (10,000 subscribers must not serialise a block 10,000 times).
    encoded: [OnceLock<String>; 2],
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

    /// The frame for `wire`, encoded once by `encode`.
    pub fn encoded(&self, wire: Wire, encode: impl FnOnce(&Notification) -> String) -> &str {
        self.encoded[wire as usize].get_or_init(|| encode(self))
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

struct Ring {
    next_seq: u64,
    items: VecDeque<Arc<Notification>>,
}

/// The fan-out hub. Cheap to share (`Arc<Hub>`).
pub struct Hub {
    tx: broadcast::Sender<Arc<Notification>>,
    ring: Mutex<Ring>,
    replay_window: usize,
}

impl Hub {
    /// `queue`: how far one connection may fall behind before it is dropped as a slow consumer
    /// (the broadcast channel's capacity). `replay_window`: how many recent notifications are kept
    /// for resume.
    pub fn new(queue: usize, replay_window: usize) -> Hub {
        let (tx, _) = broadcast::channel(queue.max(1));
        let ring = Ring { next_seq: 1, items: VecDeque::with_capacity(replay_window.min(1 << 16)) };
        Hub { tx, ring: Mutex::new(ring), replay_window }
    }

    fn ring(&self) -> std::sync::MutexGuard<'_, Ring> {
        // A panic while holding the lock leaves the ring consistent (push/pop only).
        self.ring.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Numbers, records and broadcasts one notification; returns its sequence number.
    pub fn publish(&self, topic: Topic, payload: Value) -> u64 {
        let mut ring = self.ring();
        let seq = ring.next_seq;
        ring.next_seq += 1;
        let n = Arc::new(Notification::new(seq, topic, payload));
        if self.replay_window > 0 {
            if ring.items.len() == self.replay_window {
                ring.items.pop_front();
            }
            ring.items.push_back(Arc::clone(&n));
        }
        // Sent under the lock so that broadcast order is sequence order. No receiver is fine.
        let _ = self.tx.send(n);
        seq
    }

    /// A new receiver and the latest sequence number issued before it: everything after that
    /// number reaches the receiver.
    pub fn receiver(&self) -> (broadcast::Receiver<Arc<Notification>>, u64) {
        let ring = self.ring();
        (self.tx.subscribe(), ring.next_seq - 1)
    }

    /// The latest sequence number issued (0 before the first).
    pub fn latest_seq(&self) -> u64 {
        self.ring().next_seq - 1
    }

    /// The kept notifications numbered in `(since, upto]`, in order, when none of them has left
    /// the window.
    pub fn replay(&self, since: u64, upto: u64) -> Result<Vec<Arc<Notification>>, ReplayError> {
        let ring = self.ring();
        let latest = ring.next_seq - 1;
        if since > latest {
            return Err(ReplayError::Unknown { since, latest });
        }
        let oldest = ring.items.front().map_or(ring.next_seq, |n| n.seq);
        if since + 1 < oldest && since < upto {
            return Err(ReplayError::TooOld { since, oldest });
        }
        Ok(ring.items.iter().filter(|n| n.seq > since && n.seq <= upto).cloned().collect())
    }

    /// Connections currently receiving.
    pub fn receiver_count(&self) -> usize {
        self.tx.receiver_count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sequence_numbers_increase_and_receivers_see_later_ones() {
        let hub = Hub::new(8, 4);
        assert_eq!(hub.publish(Topic::Block, json!(1)), 1);
        let (mut rx, latest) = hub.receiver();
        assert_eq!(latest, 1);
        assert_eq!(hub.publish(Topic::Mempool, json!(2)), 2);
        let n = rx.try_recv().unwrap();
        assert_eq!((n.seq, n.topic.clone(), n.payload.clone()), (2, Topic::Mempool, json!(2)));
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn replay_is_exact_inside_the_window_and_refused_outside() {
        let hub = Hub::new(8, 3);
        for i in 1..=5 {
            hub.publish(Topic::Block, json!(i));
        }
        // Kept: 3, 4, 5.
        let seqs = |v: Vec<Arc<Notification>>| v.iter().map(|n| n.seq).collect::<Vec<_>>();
        assert_eq!(seqs(hub.replay(2, 5).unwrap()), vec![3, 4, 5]);
        assert_eq!(seqs(hub.replay(3, 4).unwrap()), vec![4]);
        assert_eq!(seqs(hub.replay(5, 5).unwrap()), Vec::<u64>::new());
        assert_eq!(hub.replay(1, 5), Err(ReplayError::TooOld { since: 1, oldest: 3 }));
        assert_eq!(hub.replay(9, 5), Err(ReplayError::Unknown { since: 9, latest: 5 }));
    }

    #[test]
    fn a_lagging_receiver_is_told_so() {
        let hub = Hub::new(2, 0);
        let (mut rx, _) = hub.receiver();
        for i in 0..5 {
            hub.publish(Topic::Block, json!(i));
        }
        assert!(matches!(rx.try_recv(), Err(broadcast::error::TryRecvError::Lagged(3))));
    }
}
