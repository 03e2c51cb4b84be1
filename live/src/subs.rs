//! One connection's subscriptions, whatever the protocol: which topics it follows from which
//! sequence number, which reorg notices it got, and the exact replay for a resume.

use std::collections::HashMap;
use std::sync::Arc;

use crate::hub::{Hub, Notification, ReplayError, Topic};

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

    /// Whether `n` goes to this connection (and records a reorg notice as sent). Reorg notices
    /// go to every connection with a subscription.
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

    pub fn remove(&mut self, topic: &Topic) {
        self.subs.remove(topic);
    }

    /// Subscribes to `topic` from now on; with `since`, first returns the missed notifications
    /// of that topic and missed reorg notices, in order.
    pub fn subscribe(
        &mut self,
        hub: &Hub,
        topic: Topic,
        since: Option<u64>,
    ) -> Result<Vec<Arc<Notification>>, ReplayError> {
        let latest = hub.latest_seq();
        let mut replay = Vec::new();
        if let Some(since) = since {
            for n in hub.replay(since, latest)? {
                let reorg = n.topic == Topic::Reorg && n.seq > self.reorg_sent;
                if reorg {
                    self.reorg_sent = n.seq;
                }
                if reorg || n.topic == topic {
                    replay.push(n);
                }
            }
        }
        // Live delivery starts after `latest`; anything up to it came from the replay.
        self.subs.insert(topic, latest);
        Ok(replay)
    }
}
