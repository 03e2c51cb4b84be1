//! Socket.IO at `/socket.io/` (Engine.IO v4, Socket.IO v5), the incumbent's second live-update
//! interface: long-polling, WebSocket, and the upgrade from one to the other, over the same hub
//! as the JSON-RPC endpoint. The framing is small and implemented here because warp does not
//! hand a tower service the raw hyper request it needs to upgrade (see docs/live.md).

pub mod packet;
pub mod session;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use warp::filters::ws::{Message, WebSocket, Ws};
use warp::http::StatusCode;
use warp::reply::Response;
use warp::{Filter, Rejection, Reply};

use crate::config::LiveConfig;
use crate::hub::Hub;
use packet::eio;
use session::{handshake_topics, Handshake, Session};

/// Largest HTTP body or WebSocket frame a client may send (Engine.IO `maxPayload`).
pub const MAX_PAYLOAD: u64 = 1_000_000;
/// Close code for a session ended by the server (slow consumer, ping timeout).
const CLOSE_POLICY: u16 = 1008;

/// The Socket.IO server: its sessions by id.
#[derive(Clone)]
pub struct SocketIo {
    hub: Arc<Hub>,
    config: LiveConfig,
    sessions: Arc<Mutex<HashMap<String, Arc<Session>>>>,
}

/// An Engine.IO error: its code and message.
type EioError = (u8, &'static str);

/// Engine.IO's error bodies.
fn bad_request((code, message): EioError) -> Response {
    let body = serde_json::json!({ "code": code, "message": message }).to_string();
    let mut r = warp::reply::with_status(body, StatusCode::BAD_REQUEST).into_response();
    r.headers_mut().insert("content-type", warp::http::HeaderValue::from_static("application/json"));
    r
}

fn text(body: String) -> Response {
    let mut r = body.into_response();
    r.headers_mut().insert("content-type", warp::http::HeaderValue::from_static("text/plain; charset=UTF-8"));
    r
}

impl SocketIo {
    pub fn new(hub: Arc<Hub>, config: LiveConfig) -> SocketIo {
        SocketIo { hub, config, sessions: Arc::default() }
    }

    fn session(&self, sid: &str) -> Option<Arc<Session>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner()).get(sid).cloned()
    }

    /// A new session with its driver task; it leaves the registry when it closes.
    fn open(&self, q: &HashMap<String, String>, websocket: bool) -> Result<Arc<Session>, EioError> {
        let since = match q.get("since_seq") {
            None => None,
            Some(v) => Some(v.parse::<u64>().map_err(|_| (3, "since_seq must be a non-negative integer"))?),
        };
        let handshake =
            Handshake { topics: handshake_topics(q.get("subscriptions").map(String::as_str)), since };
        let sid = uuid::Uuid::new_v4().simple().to_string();
        let session = Arc::new(Session::new(
            sid.clone(),
            Arc::clone(&self.hub),
            self.config.clone(),
            handshake,
            websocket,
        ));
        self.sessions.lock().unwrap_or_else(|e| e.into_inner()).insert(sid.clone(), Arc::clone(&session));
        let (driven, sessions) = (Arc::clone(&session), Arc::clone(&self.sessions));
        tokio::spawn(async move {
            driven.drive().await;
            // Let the transport deliver the close before the session id becomes unknown.
            tokio::time::sleep(Duration::from_secs(1)).await;
            sessions.lock().unwrap_or_else(|e| e.into_inner()).remove(&sid);
        });
        Ok(session)
    }

    /// `GET` long-polling: the open packet for a new session, else what is queued (waiting
    /// for it up to a ping interval).
    async fn poll(self, q: HashMap<String, String>) -> Response {
        let Some(sid) = q.get("sid") else {
            return match self.open(&q, false) {
                Ok(s) => text(s.open_packet()),
                Err(e) => bad_request(e),
            };
        };
        let Some(s) = self.session(sid) else { return bad_request((1, "Session ID unknown")) };
        let deadline = tokio::time::Instant::now() + self.config.ping_interval + self.config.ping_timeout;
        loop {
            let wake = s.wake.notified();
            if s.is_upgraded() {
                return text(eio::NOOP.to_string());
            }
            if let Some(packets) = s.take() {
                let texts: Vec<&str> = packets.iter().filter_map(|p| p.to_str().ok()).collect();
                return text(texts.join(&eio::SEPARATOR.to_string()));
            }
            if s.closed().is_some() {
                return text(eio::CLOSE.to_string());
            }
            let deadline = if s.is_probing() {
                deadline.min(tokio::time::Instant::now() + Duration::from_millis(100))
            } else {
                deadline
            };
            if tokio::time::timeout_at(deadline, wake).await.is_err() {
                return text(eio::NOOP.to_string());
            }
        }
    }

    /// `POST` long-polling: packets from the client.
    fn post(self, q: HashMap<String, String>, body: bytes::Bytes) -> Response {
        let Some(s) = q.get("sid").and_then(|sid| self.session(sid)) else {
            return bad_request((1, "Session ID unknown"));
        };
        let Ok(body) = std::str::from_utf8(&body) else { return bad_request((3, "Bad request")) };
        for p in body.split(eio::SEPARATOR) {
            s.receive(p);
        }
        text("ok".into())
    }

    /// A WebSocket: a new session, or the upgrade of a polling one (`2probe`/`3probe`/`5`).
    async fn websocket(self, socket: WebSocket, q: HashMap<String, String>) {
        let (mut tx, mut rx) = socket.split();
        let limit = self.config.message_timeout;
        let s = match q.get("sid") {
            None => match self.open(&q, true) {
                Ok(s) => {
                    if tx.send(Message::text(s.open_packet())).await.is_err() {
                        s.close("transport closed");
                        return;
                    }
                    s
                }
                Err((_, why)) => {
                    let _ = tx.send(Message::close_with(CLOSE_POLICY, why)).await;
                    return;
                }
            },
            Some(sid) => {
                let Some(s) = self.session(sid).filter(|s| !s.is_upgraded()) else {
                    let _ = tx.send(Message::close_with(CLOSE_POLICY, "Session ID unknown")).await;
                    return;
                };
                // The probe: answered on this socket while polling still carries the session.
                loop {
                    match tokio::time::timeout(
                        self.config.ping_interval + self.config.ping_timeout,
                        rx.next(),
                    )
                    .await
                    {
                        Ok(Some(Ok(m))) => match m.to_str() {
                            Ok(t) if t.starts_with(eio::PING) => {
                                s.probing();
                                let pong = format!("{}{}", eio::PONG, &t[1..]);
                                if tx.send(Message::text(pong)).await.is_err() {
                                    return;
                                }
                            }
                            Ok(t) if t == eio::UPGRADE.to_string() => break,
                            _ => {}
                        },
                        _ => return,
                    }
                }
                s.upgrade();
                s
            }
        };
        // Reading has its own task, woken only when the client sent something (polling the
        // stream costs a read attempt that zeroes tungstenite's 128 KiB read buffer; it must not
        // happen every time the outbox wakes this writer).
        let reader = {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                loop {
                    match rx.next().await {
                        Some(Ok(m)) if m.is_close() => break s.close("transport closed by the client"),
                        Some(Ok(m)) => {
                            if let Ok(t) = m.to_str() {
                                s.receive(t);
                            }
                        }
                        Some(Err(_)) | None => break s.close("transport closed"),
                    }
                }
            })
        };
        loop {
            let wake = s.wake.notified();
            if let Some(packets) = s.take() {
                // The whole batch with one flush.
                let write = async {
                    for p in packets {
                        tx.feed(p).await?;
                    }
                    tx.flush().await
                };
                if !matches!(tokio::time::timeout(limit, write).await, Ok(Ok(()))) {
                    s.close("transport closed: write failed or timed out");
                }
                continue;
            }
            if let Some(reason) = s.closed() {
                let reason: String = reason.chars().take(120).collect();
                let _ = tokio::time::timeout(limit, tx.send(Message::close_with(CLOSE_POLICY, reason))).await;
                break;
            }
            wake.await;
        }
        reader.abort();
        let _ = tokio::time::timeout(limit, tx.close()).await;
    }

    /// `/socket.io/`: GET and POST long-polling, GET upgraded to a WebSocket.
    pub fn routes(&self) -> impl Filter<Extract = (Response,), Error = Rejection> + Clone {
        let me = self.clone();
        let with = warp::any().map(move || me.clone());
        let base = warp::path("socket.io").and(warp::path::end());
        let query = warp::query::<HashMap<String, String>>().or(warp::any().map(HashMap::new)).unify();
        let ws = base.and(warp::get()).and(warp::ws()).and(with.clone()).and(query).and_then(
            |ws: Ws, io: SocketIo, q: HashMap<String, String>| async move {
                if let Err(e) = check(&q, "websocket") {
                    return Ok::<_, Rejection>(bad_request(e));
                }
                Ok(ws
                    .max_message_size(MAX_PAYLOAD as usize)
                    .on_upgrade(move |socket| io.websocket(socket, q))
                    .into_response())
            },
        );
        let get = base.and(warp::get()).and(with.clone()).and(query).and_then(
            |io: SocketIo, q: HashMap<String, String>| async move {
                Ok::<_, Rejection>(match check(&q, "polling") {
                    Err(e) => bad_request(e),
                    Ok(()) => io.poll(q).await,
                })
            },
        );
        let post = base
            .and(warp::post())
            .and(with)
            .and(query)
            .and(warp::body::content_length_limit(MAX_PAYLOAD))
            .and(warp::body::bytes())
            .and_then(|io: SocketIo, q: HashMap<String, String>, body: bytes::Bytes| async move {
                Ok::<_, Rejection>(match check(&q, "polling") {
                    Err(e) => bad_request(e),
                    Ok(()) => io.post(q, body),
                })
            });
        ws.or(get).unify().or(post).unify()
    }
}

/// Only Engine.IO v4 and the transport the request actually uses.
fn check(q: &HashMap<String, String>, transport: &str) -> Result<(), EioError> {
    if q.get("EIO").map(String::as_str) != Some("4") {
        return Err((5, "Unsupported protocol version"));
    }
    if q.get("transport").map(String::as_str) != Some(transport) {
        return Err((0, "Transport unknown"));
    }
    Ok(())
}
