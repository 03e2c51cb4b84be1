//! One Engine.IO session and its Socket.IO socket: an outbox of encoded packets that whichever
//! transport is current (a long-polling GET or the WebSocket) drains, the subscriptions, and a
//! driver task that feeds the outbox from what the hub delivers for them, and pings. Notification
//! packets in the outbox are the shared frames (encoded once for every session).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{json, Value};
use tokio::sync::Notify;
use tokio::time::{sleep_until, Instant};
use warp::filters::ws::Message;

use super::packet::{self, eio, SioPacket};
use crate::config::LiveConfig;
use crate::hub::{Hub, Notification, Receiver, RecvError, Topic};
use crate::subs::Subscriptions;

/// What the handshake query asked for.
#[derive(Debug, Clone)]
pub struct Handshake {
    /// `subscriptions=a,b,c`: `Err` names the first invalid topic (the connection is refused).
    pub topics: Result<Vec<Topic>, String>,
    /// `since_seq=n` (ours): replay what was missed on those topics.
    pub since: Option<u64>,
}

impl Default for Handshake {
    fn default() -> Handshake {
        Handshake { topics: Ok(Vec::new()), since: None }
    }
}

/// Parses the comma-separated topic list of a handshake query.
pub fn handshake_topics(raw: Option<&str>) -> Result<Vec<Topic>, String> {
    let Some(raw) = raw.filter(|r| !r.is_empty()) else { return Ok(Vec::new()) };
    raw.split(',').map(|t| packet::parse_topic(t).ok_or_else(|| format!("Invalid topic: {t}"))).collect()
}

#[derive(Debug)]
struct State {
    outbox: VecDeque<Message>,
    /// Why the session ended; the transports send what is left and a close.
    closed: Option<String>,
    /// The WebSocket is the transport (from the start, or after the upgrade).
    upgraded: bool,
    /// A WebSocket probe is under way: polls end quickly so the client can pause polling.
    probing: bool,
    /// The default namespace is connected.
    connected: bool,
    handshake: Handshake,
    subs: Subscriptions,
    last_pong: Instant,
}

pub struct Session {
    pub sid: String,
    state: Mutex<State>,
    /// Woken when the outbox grows, the transport changes, or the session closes.
    pub wake: Notify,
    hub: Arc<Hub>,
    /// What the hub delivers for this session's subscriptions.
    rx: Receiver,
    config: LiveConfig,
}

/// Packets an idle session may hold before it counts as a slow consumer (per notification
/// queue of the config, plus room for acks and pings).
const SLACK: usize = 64;

impl Session {
    pub fn new(
        sid: String,
        hub: Arc<Hub>,
        config: LiveConfig,
        handshake: Handshake,
        upgraded: bool,
    ) -> Session {
        let state = State {
            outbox: VecDeque::new(),
            closed: None,
            upgraded,
            probing: false,
            connected: false,
            handshake,
            subs: Subscriptions::default(),
            last_pong: Instant::now(),
        };
        let rx = hub.connect_via("socketio");
        Session { sid, state: Mutex::new(state), wake: Notify::new(), hub, rx, config }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Every update leaves the state consistent; a panic elsewhere must not wedge the session.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The Engine.IO open packet.
    pub fn open_packet(&self) -> String {
        let open = json!({
            "sid": self.sid,
            "upgrades": if self.state().upgraded { json!([]) } else { json!(["websocket"]) },
            "pingInterval": self.config.ping_interval.as_millis() as u64,
            "pingTimeout": self.config.ping_timeout.as_millis() as u64,
            "maxPayload": super::MAX_PAYLOAD,
        });
        format!("{}{open}", eio::OPEN)
    }

    fn push(&self, st: &mut State, packet: impl Into<Packet>) {
        if st.closed.is_some() {
            return;
        }
        if st.outbox.len() >= self.config.queue + SLACK {
            let why =
                format!("slow consumer: {} packets not taken (queue {})", st.outbox.len(), self.config.queue);
            self.close_locked(st, why);
            return;
        }
        st.outbox.push_back(packet.into().0);
        self.wake.notify_waiters();
    }

    fn close_locked(&self, st: &mut State, reason: String) {
        if st.closed.is_none() {
            tracing::debug!(sid = %self.sid, %reason, "socket.io session closed");
            // Tell the client why before the transport closes (ours; the incumbent says nothing).
            if st.connected && !reason.starts_with("client") && !reason.starts_with("transport") {
                st.outbox
                    .push_back(Message::text(packet::event("closing", vec![json!({ "reason": reason })])));
            }
            st.outbox.push_back(Message::text(eio::CLOSE.to_string()));
            st.closed = Some(reason);
        }
        self.wake.notify_waiters();
    }

    pub fn close(&self, reason: impl Into<String>) {
        self.close_locked(&mut self.state(), reason.into());
    }

    pub fn closed(&self) -> Option<String> {
        self.state().closed.clone()
    }

    pub fn is_upgraded(&self) -> bool {
        self.state().upgraded
    }

    pub fn is_probing(&self) -> bool {
        self.state().probing
    }

    /// A WebSocket probe arrived: a pending poll returns a noop (as engine.io does), so the
    /// client can pause polling and finish the upgrade.
    pub fn probing(&self) {
        self.state().probing = true;
        self.wake.notify_waiters();
    }

    /// The WebSocket takes over: a pending poll returns a noop.
    pub fn upgrade(&self) {
        self.state().upgraded = true;
        self.wake.notify_waiters();
    }

    /// Everything queued (text frames), or `None` when nothing is.
    pub fn take(&self) -> Option<Vec<Message>> {
        let mut st = self.state();
        (!st.outbox.is_empty()).then(|| st.outbox.drain(..).collect())
    }

    /// One Engine.IO packet from the client, from either transport.
    pub fn receive(&self, text: &str) {
        let mut st = self.state();
        let mut chars = text.chars();
        match chars.next() {
            Some(eio::PONG) => st.last_pong = Instant::now(),
            // Engine.IO v3 clients ping; answer in kind.
            Some(eio::PING) => self.push(&mut st, format!("{}{}", eio::PONG, chars.as_str())),
            Some(eio::MESSAGE) => self.message(&mut st, chars.as_str()),
            Some(eio::CLOSE) => self.close_locked(&mut st, "client closed".into()),
            Some(eio::NOOP | eio::UPGRADE) => {}
            _ => self.close_locked(&mut st, format!("client sent an invalid packet: {text:.40}")),
        }
    }

    fn message(&self, st: &mut State, text: &str) {
        match packet::parse_sio(text) {
            Err(e) => self.close_locked(st, format!("client sent an invalid Socket.IO packet: {e}")),
            Ok(SioPacket::Ignored) => {}
            Ok(SioPacket::Connect { nsp }) if nsp != "/" => {
                self.push(st, packet::connect_error(&nsp, "Invalid namespace"));
            }
            Ok(SioPacket::Connect { nsp }) => match st.handshake.topics.clone() {
                Err(msg) => self.push(st, packet::connect_error(&nsp, &msg)),
                Ok(topics) => {
                    let since = st.handshake.since;
                    let mut replay = Vec::new();
                    for t in topics {
                        match st.subs.subscribe(&self.hub, &self.rx, t, since) {
                            Ok(r) => replay.extend(r),
                            Err(e) => {
                                st.subs.clear(&self.hub, &self.rx);
                                self.push(st, packet::connect_error(&nsp, &e.to_string()));
                                return;
                            }
                        }
                    }
                    st.connected = true;
                    self.push(st, packet::connect_ok(&nsp, &self.sid));
                    // Several topics replay overlapping ranges: send each notification once, in order.
                    replay.sort_by_key(|n| n.seq);
                    replay.dedup_by_key(|n| n.seq);
                    for n in replay {
                        self.push(st, packet::notification_packet(&n).clone());
                    }
                }
            },
            Ok(SioPacket::Disconnect { .. }) => {
                st.connected = false;
                st.subs.clear(&self.hub, &self.rx);
            }
            Ok(SioPacket::Event { nsp, ack, args }) => {
                if nsp != "/" || !st.connected {
                    return;
                }
                let reply = match args[0].as_str() {
                    Some("subscribe") => self.subscribe(st, &args[1..]),
                    Some("unsubscribe") => {
                        for t in topic_names(&args[1..]) {
                            if let Some(topic) = packet::parse_topic(&t) {
                                st.subs.remove(&self.hub, &self.rx, &topic);
                            }
                        }
                        Ok(Vec::new())
                    }
                    _ => Err("unknown event: use subscribe or unsubscribe".to_owned()),
                };
                let (ack_args, replay) = match reply {
                    Ok(replay) => (vec![Value::Null], replay),
                    Err(msg) => (vec![Value::from(msg)], Vec::new()),
                };
                if let Some(id) = ack {
                    self.push(st, packet::ack(&nsp, id, &ack_args));
                }
                for n in replay {
                    self.push(st, packet::notification_packet(&n).clone());
                }
            }
        }
    }

    /// `subscribe(topic | topic[], {since_seq}?)`: all topics or none.
    fn subscribe(&self, st: &mut State, args: &[Value]) -> Result<Vec<Arc<Notification>>, String> {
        let names = topic_names(&args[..args.len().min(1)]);
        if names.is_empty() {
            return Err("subscribe needs a topic or a list of topics".into());
        }
        let topics = names
            .iter()
            .map(|t| packet::parse_topic(t).ok_or_else(|| format!("Invalid topic: {t}")))
            .collect::<Result<Vec<_>, _>>()?;
        let since = match args.get(1).and_then(|o| o.get("since_seq")) {
            None => None,
            Some(v) => Some(v.as_u64().ok_or("since_seq must be a non-negative integer")?),
        };
        let mut replay = Vec::new();
        for t in topics {
            replay.extend(st.subs.subscribe(&self.hub, &self.rx, t, since).map_err(|e| e.to_string())?);
        }
        replay.sort_by_key(|n| n.seq);
        replay.dedup_by_key(|n| n.seq);
        Ok(replay)
    }

    /// Queues what the hub delivered, under one lock and with one wake-up for the batch.
    fn offer(&self, batch: &[Arc<Notification>]) {
        let mut st = self.state();
        for n in batch {
            if st.connected && st.subs.wants(n) {
                self.push(&mut st, packet::notification_packet(n).clone());
            }
        }
    }

    /// Feeds the outbox from the hub and pings until the session closes. Engine.IO v4: the
    /// server pings every `ping_interval`; no pong within `ping_timeout` ends the session.
    pub async fn drive(self: Arc<Session>) {
        let mut next_ping = Instant::now() + self.config.ping_interval;
        let mut pong_due: Option<Instant> = None;
        loop {
            let wake = self.wake.notified();
            if self.closed().is_some() {
                break;
            }
            tokio::select! {
                batch = self.rx.recv() => match batch {
                    Ok(batch) => self.offer(&batch),
                    Err(RecvError::Lagged(k)) => self.close(format!(
                        "slow consumer: fell {k} notifications behind (queue {})", self.config.queue
                    )),
                    Err(RecvError::Closed) => self.close("server shutting down"),
                },
                _ = sleep_until(next_ping), if pong_due.is_none() => {
                    let mut st = self.state();
                    self.push(&mut st, eio::PING.to_string());
                    pong_due = Some(Instant::now() + self.config.ping_timeout);
                }
                _ = sleep_until(pong_due.unwrap_or_else(Instant::now)), if pong_due.is_some() => {
                    let last_pong = self.state().last_pong;
                    let sent = pong_due.unwrap_or_else(Instant::now) - self.config.ping_timeout;
                    if last_pong < sent {
                        self.close("ping timeout: no pong from the client");
                    } else {
                        next_ping = last_pong + self.config.ping_interval;
                        pong_due = None;
                    }
                }
                _ = wake => {}
            }
        }
        // Closed: the hub delivers nothing more while the transports finish.
        self.hub.unsubscribe_all(&self.rx);
    }
}

/// An outbox entry: a shared notification frame or a packet's text.
pub struct Packet(Message);

impl From<String> for Packet {
    fn from(text: String) -> Packet {
        Packet(Message::text(text))
    }
}

impl From<Message> for Packet {
    fn from(frame: Message) -> Packet {
        Packet(frame)
    }
}

/// Topic names from string or string-array arguments.
fn topic_names(args: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    for a in args {
        match a {
            Value::String(s) => out.push(s.clone()),
            Value::Array(items) => out.extend(items.iter().filter_map(Value::as_str).map(str::to_owned)),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The queued packets' text.
    fn take(s: &Session) -> Option<Vec<String>> {
        s.take().map(|v| v.iter().map(|m| m.to_str().unwrap().to_owned()).collect())
    }

    fn session(hub: &Arc<Hub>, handshake: Handshake) -> Session {
        Session::new("s1".into(), Arc::clone(hub), LiveConfig::default(), handshake, false)
    }

    #[test]
    fn handshake_subscriptions_connect_and_filter() {
        let hub = Arc::new(Hub::new(16, 16));
        let s = session(&hub, Handshake { topics: handshake_topics(Some("block,mempool")), since: None });
        hub.publish(Topic::Block, json!({"height": 1}));
        s.receive("40");
        assert_eq!(take(&s).unwrap(), vec!["40{\"sid\":\"s1\"}".to_owned()]);
        hub.publish(Topic::NftEvent, json!({}));
        hub.publish(Topic::Mempool, json!("m"));
        // The hub delivered only the subscribed topic.
        let delivered: Vec<_> = std::iter::from_fn(|| s.rx.try_recv().unwrap()).collect();
        assert_eq!(delivered.len(), 1);
        s.offer(&delivered);
        assert_eq!(take(&s).unwrap(), vec!["42[\"mempool\",\"m\",{\"seq\":3}]".to_owned()]);
    }

    #[test]
    fn invalid_handshake_topics_refuse_the_connection() {
        let hub = Arc::new(Hub::new(16, 16));
        let s = session(&hub, Handshake { topics: handshake_topics(Some("block,nope")), since: None });
        s.receive("40");
        assert_eq!(take(&s).unwrap(), vec!["44{\"message\":\"Invalid topic: nope\"}".to_owned()]);
    }

    #[test]
    fn subscribe_acks_and_resume_replays() {
        let hub = Arc::new(Hub::new(16, 16));
        hub.publish(Topic::Block, json!(1));
        hub.publish(Topic::Mempool, json!(2));
        hub.publish(Topic::Block, json!(3));
        let s = session(&hub, Handshake::default());
        s.receive("40");
        take(&s);
        s.receive("425[\"subscribe\",[\"block\"],{\"since_seq\":1}]");
        assert_eq!(take(&s).unwrap(), vec!["435[null]".to_owned(), "42[\"block\",3,{\"seq\":3}]".to_owned()]);
        s.receive("426[\"subscribe\",\"blockz\"]");
        assert_eq!(take(&s).unwrap(), vec!["436[\"Invalid topic: blockz\"]".to_owned()]);
        s.receive("427[\"unsubscribe\",\"block\"]");
        assert_eq!(take(&s).unwrap(), vec!["437[null]".to_owned()]);
        s.receive("428[\"subscribe\",\"block\",{\"since_seq\":99}]");
        assert!(take(&s).unwrap()[0].starts_with("438[\"sequence 99 was never issued"));
    }

    #[test]
    fn pings_are_answered_and_bad_packets_close() {
        let hub = Arc::new(Hub::new(16, 16));
        let s = session(&hub, Handshake::default());
        s.receive("2probe");
        assert_eq!(take(&s).unwrap(), vec!["3probe".to_owned()]);
        s.receive("x");
        assert!(s.closed().unwrap().starts_with("client sent an invalid packet"));
        assert_eq!(take(&s).unwrap(), vec!["1".to_owned()]);
    }
}
