//! A JSON-RPC client on `/extended/v1/ws` that keeps the notifications it reads.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long a request waits for its reply.
const REPLY_WAIT: Duration = Duration::from_secs(10);

pub struct WsClient {
    pub ws: Ws,
    pub notes: Vec<Value>,
    next_id: u64,
}

impl WsClient {
    pub async fn connect(addr: SocketAddr) -> WsClient {
        let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/extended/v1/ws")).await.unwrap();
        WsClient::from_stream(ws)
    }

    /// A client on a stream connected some other way.
    pub fn from_stream(ws: Ws) -> WsClient {
        WsClient { ws, notes: Vec::new(), next_id: 1 }
    }

    /// The next text message within `wait` (pings, answered by reading, do not extend it).
    pub async fn next_json(&mut self, wait: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            match tokio::time::timeout_at(deadline, self.ws.next()).await {
                Ok(Some(Ok(Message::Text(t)))) => return Some(serde_json::from_str(t.as_str()).unwrap()),
                Ok(Some(Ok(Message::Close(_)))) | Ok(None) | Ok(Some(Err(_))) | Err(_) => return None,
                Ok(Some(Ok(_))) => continue,
            }
        }
    }

    /// Sends a request and returns its reply; notifications read meanwhile are kept.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let req = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.ws.send(Message::text(req.to_string())).await.unwrap();
        loop {
            let v = self.next_json(REPLY_WAIT).await.expect("a reply");
            if v.get("id") == Some(&json!(id)) {
                return v;
            }
            self.notes.push(v);
        }
    }

    /// Subscribes (the reply must be a result); the result.
    pub async fn subscribe(&mut self, params: Value) -> Value {
        let r = self.call("subscribe", params.clone()).await;
        assert!(r.get("result").is_some(), "{params}: {r}");
        r["result"].clone()
    }

    /// Reads notifications until none comes for `quiet`.
    pub async fn drain(&mut self, quiet: Duration) -> &[Value] {
        while let Some(v) = self.next_json(quiet).await {
            self.notes.push(v);
        }
        &self.notes
    }

    /// Reads until a `method` notification about `tx_id` has come (panics after `wait`).
    pub async fn wait_for(&mut self, method: &str, tx_id: &str, wait: Duration) {
        let deadline = tokio::time::Instant::now() + wait;
        while self.count(method, tx_id) == 0 {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let v = self
                .next_json(left)
                .await
                .unwrap_or_else(|| panic!("no {method} for {tx_id}: {:?}", self.notes));
            self.notes.push(v);
        }
    }

    /// The `method` notifications about `tx_id` kept so far.
    pub fn count(&self, method: &str, tx_id: &str) -> usize {
        self.notes.iter().filter(|n| n["method"] == method && n["params"]["tx_id"] == tx_id).count()
    }

    /// The `method` notifications kept so far.
    pub fn of(&self, method: &str) -> Vec<&Value> {
        self.notes.iter().filter(|n| n["method"] == method).collect()
    }

    /// The methods of the notifications kept so far.
    pub fn methods(&self) -> BTreeSet<String> {
        self.notes.iter().map(|n| n["method"].as_str().unwrap_or("?").to_owned()).collect()
    }
}
