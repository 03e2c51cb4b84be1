//! One connection's subscriptions, whatever the protocol: which topics it follows from which
//! sequence number (registered with the hub, which then delivers only those), which reorg
//! notices it got, and the exact replay for a resume.

use std::collections::HashMap;
use std::sync::Arc;

use crate::hub::{Hub, Notification, Receiver, ReplayError, Topic};

/// topic → the sequence number it was subscribed at (only later notifications are sent live;
/// earlier ones come from the replay, exactly once).
#[derive(Debug, Default)]
pub struct Subscriptions {
    subs: HashMap<Topic, u64>,
    /// The newest reorg notice sent, so a replay does not repeat one.
    reorg_sent: u64,
}

impl Subscriptions {
    pub fn is_empty(&self) -> bool {
        self.subs.is_empty()
    }

    /// Whether `n`, delivered by the hub, goes out (and records a reorg notice as sent). The hub
    /// only delivers subscribed topics; this drops what was already queued before an
    /// unsubscribe, or before a resubscription whose replay covered it.
    pub fn wants(&mut self, n: &Notification) -> bool {
        if n.topic == Topic::Reorg {
            let any = self.subs.values().any(|from| n.seq > *from);
            if any && n.seq > self.reorg_sent {
                self.reorg_sent = n.seq;
                return true;
            }
            return false;
        }
        self.subs.get(&n.topic).is_some_and(|from| n.seq > *from)
    }

    pub fn remove(&mut self, hub: &Hub, rx: &Receiver, topic: &Topic) {
        hub.unsubscribe(rx, topic);
        self.subs.remove(topic);
    }

    /// Drops every subscription.
    pub fn clear(&mut self, hub: &Hub, rx: &Receiver) {
        hub.unsubscribe_all(rx);
        self.subs.clear();
    }

    /// Subscribes `rx` to `topic` from now on; with `since`, first returns the missed
    /// notifications of that topic and missed reorg notices, in order.
    pub fn subscribe(
        &mut self,
        hub: &Hub,
        rx: &Receiver,
        topic: Topic,
        since: Option<u64>,
    ) -> Result<Vec<Arc<Notification>>, ReplayError> {
        let (latest, missed) = hub.subscribe(rx, topic.clone(), since)?;
        let mut replay = Vec::new();
        for n in missed {
            let reorg = n.topic == Topic::Reorg && n.seq > self.reorg_sent;
            if reorg {
                self.reorg_sent = n.seq;
            }
            if reorg || n.topic == topic {
                replay.push(n);
            }
        }
        // Live delivery starts after `latest`; anything up to it came from the replay.
        self.subs.insert(topic, latest);
        Ok(replay)
    }
}
