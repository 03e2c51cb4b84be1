//! JSON-RPC 2.0 over WebSocket, the incumbent's `/extended/v1/ws` protocol: requests parsed
//! into subscriptions, acks and errors; the connection's end of the hub. No I/O here.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use warp::filters::ws::Message;

use crate::hub::{Hub, Notification, Receiver, RecvError, Topic, Wire};
use crate::subs::Subscriptions;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
/// Ours: `since_seq` cannot be honoured exactly (see docs/live.md).
pub const RESUME_FAILED: i64 = -32010;

/// One connection: its subscriptions and what the hub delivers for them.
pub struct Connection {
    subs: Subscriptions,
    rx: Receiver,
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": id})
}

/// A notification as sent: the incumbent's form plus our top-level `seq`.
pub fn notification_json(n: &Notification) -> Value {
    json!({"jsonrpc": "2.0", "method": n.topic.method(), "params": n.payload, "seq": n.seq})
}

/// [`notification_json`] as a text frame, encoded once per notification for all connections
/// (clone it to send: the text is shared).
pub fn notification_frame(n: &Notification) -> &Message {
    n.encoded(Wire::JsonRpc, |n| notification_json(n).to_string())
}

/// `0x` + 64 hex digits, normalised to lower case with the prefix.
pub fn normalize_tx_id(raw: &str) -> Option<String> {
    let hex = raw.strip_prefix("0x").or_else(|| raw.strip_prefix("0X")).unwrap_or(raw);
    (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| format!("0x{}", hex.to_ascii_lowercase()))
}

/// A standard or contract principal (c32 address of the incumbent's pattern, optional name).
pub fn is_principal(raw: &str) -> bool {
    const C32: &str = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let (addr, name) = match raw.split_once('.') {
        Some((a, n)) => (a, Some(n)),
        None => (raw, None),
    };
    let addr_ok =
        (28..=41).contains(&addr.len()) && addr.starts_with('S') && addr.chars().all(|c| C32.contains(c));
    let name_ok = name.is_none_or(|n| {
        let mut cs = n.chars();
        cs.next().is_some_and(|c| c.is_ascii_alphabetic())
            && n.len() <= 40
            && cs.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    });
    addr_ok && name_ok
}

fn is_hex(s: &str) -> bool {
    s.strip_prefix("0x").is_some_and(|h| h.len() % 2 == 0 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The topic a subscribe/unsubscribe names, and its ack result.
fn topic_of(params: &Map<String, Value>) -> Result<(Topic, Value), String> {
    let str_param = |k: &str| params.get(k).and_then(Value::as_str);
    let event = str_param("event").ok_or("subscription requests must include an event name")?;
    let address = || match str_param("address") {
        Some(a) if is_principal(a) => Ok(a.to_owned()),
        _ => Err(format!("invalid address for {event}: must be a Stacks principal")),
    };
    let asset = || match str_param("asset_identifier") {
        Some(a) if a.contains("::") && is_principal(a.split("::").next().unwrap_or_default()) => {
            Ok(a.to_owned())
        }
        _ => Err(format!("invalid asset_identifier for {event}")),
    };
    Ok(match event {
        "block" => (Topic::Block, json!({})),
        "microblock" => (Topic::Microblock, json!({})),
        "mempool" => (Topic::Mempool, json!({})),
        "nft_event" => (Topic::NftEvent, json!({})),
        "tx_update" => {
            let id = str_param("tx_id")
                .and_then(normalize_tx_id)
                .ok_or("invalid tx_id: must be 64 hex digits, optionally 0x-prefixed")?;
            (Topic::Tx(id.clone()), json!({"tx_id": id}))
        }
        "address_tx_update" => {
            let a = address()?;
            (Topic::AddressTx(a.clone()), json!({"address": a}))
        }
        "address_balance_update" => {
            let a = address()?;
            (Topic::AddressBalance(a.clone()), json!({"address": a}))
        }
        "nft_asset_event" => {
            let a = asset()?;
            let v = str_param("value")
                .filter(|v| is_hex(v))
                .ok_or("invalid value: must be 0x-prefixed Clarity hex")?;
            (Topic::NftAsset(a.clone(), v.to_ascii_lowercase()), json!({"asset_identifier": a, "value": v}))
        }
        "nft_collection_event" => {
            let a = asset()?;
            (Topic::NftCollection(a.clone()), json!({"asset_identifier": a}))
        }
        other => return Err(format!("subscription event type {other:?} is unknown")),
    })
}

impl Connection {
    pub fn new(hub: &Hub) -> Connection {
        Connection { subs: Subscriptions::default(), rx: hub.connect_via("ws") }
    }

    /// The next notifications to send (a batch, in `seq` order, possibly empty after
    /// filtering), waiting for the hub to deliver some; or why nothing more comes.
    pub async fn next_batch(&mut self) -> Result<Vec<Arc<Notification>>, RecvError> {
        let mut batch = self.rx.recv().await?;
        batch.retain(|n| self.subs.wants(n));
        Ok(batch)
    }

    pub fn is_subscribed(&self) -> bool {
        !self.subs.is_empty()
    }

    /// Whether `n` goes to this connection (and records a reorg notice as sent).
    pub fn wants(&mut self, n: &Notification) -> bool {
        self.subs.wants(n)
    }

    /// Handles one text frame: the replies (a batch reply as one array) and then any replayed
    /// notifications, in the order to send them.
    pub fn handle_text(&mut self, hub: &Hub, text: &str) -> Vec<Value> {
        let mut replay = Vec::new();
        let reply = match serde_json::from_str::<Value>(text) {
            Err(_) => Some(error(Value::Null, PARSE_ERROR, "Parse error")),
            Ok(Value::Array(batch)) if batch.is_empty() => {
                Some(error(Value::Null, INVALID_REQUEST, "Invalid Request: empty batch"))
            }
            Ok(Value::Array(batch)) => {
                let replies: Vec<Value> =
                    batch.iter().filter_map(|r| self.handle_request(hub, r, &mut replay)).collect();
                (!replies.is_empty()).then_some(Value::Array(replies))
            }
            Ok(request) => self.handle_request(hub, &request, &mut replay),
        };
        reply.into_iter().chain(replay.iter().map(|n| notification_json(n))).collect()
    }

    fn handle_request(&mut self, hub: &Hub, r: &Value, replay: &mut Vec<Arc<Notification>>) -> Option<Value> {
        let Some(obj) = r.as_object() else {
            return Some(error(Value::Null, INVALID_REQUEST, "Invalid Request: not an object"));
        };
        let id = match obj.get("id") {
            // A notification from the client: no reply, as the incumbent.
            None => return None,
            Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => id.clone(),
            Some(_) => return Some(error(Value::Null, INVALID_REQUEST, "Invalid Request: bad id")),
        };
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Some(error(id, INVALID_REQUEST, "Invalid Request: jsonrpc must be \"2.0\""));
        }
        let method = obj.get("method").and_then(Value::as_str).unwrap_or_default();
        let subscribe = match method {
            "subscribe" => true,
            "unsubscribe" => false,
            _ => return Some(error(id, METHOD_NOT_FOUND, "Method not found")),
        };
        let empty = Map::new();
        let params = obj.get("params").and_then(Value::as_object).unwrap_or(&empty);
        let (topic, result) = match topic_of(params) {
            Ok(t) => t,
            Err(msg) => return Some(error(id, INVALID_PARAMS, &msg)),
        };
        if !subscribe {
            self.subs.remove(hub, &self.rx, &topic);
            return Some(json!({"jsonrpc": "2.0", "result": result, "id": id}));
        }
        let since = match params.get("since_seq") {
            None => None,
            Some(v) => match v.as_u64() {
                Some(since) => Some(since),
                None => return Some(error(id, INVALID_PARAMS, "since_seq must be a non-negative integer")),
            },
        };
        match self.subs.subscribe(hub, &self.rx, topic, since) {
            Ok(missed) => replay.extend(missed),
            Err(e) => return Some(error(id, RESUME_FAILED, &e.to_string())),
        }
        Some(json!({"jsonrpc": "2.0", "result": result, "id": id}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TX: &str = "0xAB00000000000000000000000000000000000000000000000000000000000001";
    const ADDR: &str = "ST1HB1T8WRNBYB0Y3T7WXZS38NKKPTBR3EG9EPJKR";

    fn one(c: &mut Connection, hub: &Hub, text: &str) -> Value {
        let out = c.handle_text(hub, text);
        assert_eq!(out.len(), 1, "{out:?}");
        out[0].clone()
    }

    #[test]
    fn acks_follow_the_incumbent() {
        let hub = Hub::new(8, 8);
        let mut c = Connection::new(&hub);
        let r =
            one(&mut c, &hub, r#"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"event":"block"}}"#);
        assert_eq!(r, json!({"jsonrpc":"2.0","result":{},"id":1}));
        let req = format!(
            r#"{{"jsonrpc":"2.0","id":"a","method":"subscribe","params":{{"event":"tx_update","tx_id":"{}"}}}}"#,
            &TX[2..]
        );
        let r = one(&mut c, &hub, &req);
        assert_eq!(r["result"]["tx_id"], TX.to_ascii_lowercase());
        let req = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"subscribe","params":{{"event":"address_balance_update","address":"{ADDR}"}}}}"#
        );
        assert_eq!(one(&mut c, &hub, &req)["result"], json!({"address": ADDR}));
    }

    #[test]
    fn errors_name_what_is_wrong() {
        let hub = Hub::new(8, 8);
        let mut c = Connection::new(&hub);
        let code = |v: &Value| v["error"]["code"].as_i64().unwrap();
        let r = one(&mut c, &hub, "{not json");
        assert_eq!((code(&r), r["id"].clone()), (PARSE_ERROR, Value::Null));
        let r = one(&mut c, &hub, r#"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{}}"#);
        assert_eq!(code(&r), INVALID_PARAMS);
        assert_eq!(r["error"]["message"], "subscription requests must include an event name");
        let r =
            one(&mut c, &hub, r#"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"event":"nope"}}"#);
        assert_eq!(code(&r), INVALID_PARAMS);
        let r = one(
            &mut c,
            &hub,
            r#"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"event":"tx_update","tx_id":"0x12"}}"#,
        );
        assert_eq!(code(&r), INVALID_PARAMS);
        let r = one(
            &mut c,
            &hub,
            r#"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"event":"address_tx_update","address":"nope"}}"#,
        );
        assert_eq!(code(&r), INVALID_PARAMS);
        let r = one(
            &mut c,
            &hub,
            r#"{"jsonrpc":"2.0","id":{"x":1},"method":"subscribe","params":{"event":"block"}}"#,
        );
        assert_eq!((code(&r), r["id"].clone()), (INVALID_REQUEST, Value::Null));
        let r = one(&mut c, &hub, r#"{"jsonrpc":"2.0","id":3,"method":"other"}"#);
        assert_eq!((code(&r), r["id"].clone()), (METHOD_NOT_FOUND, json!(3)));
        assert!(c
            .handle_text(&hub, r#"{"jsonrpc":"2.0","method":"subscribe","params":{"event":"block"}}"#)
            .is_empty());
        assert!(!c.is_subscribed());
    }

    #[test]
    fn batches_get_one_batch_reply() {
        let hub = Hub::new(8, 8);
        let mut c = Connection::new(&hub);
        let r = one(
            &mut c,
            &hub,
            r#"[{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"event":"block"}},
                {"jsonrpc":"2.0","id":2,"method":"subscribe","params":{"event":"bad"}},
                {"jsonrpc":"2.0","method":"subscribe","params":{"event":"mempool"}}]"#,
        );
        let r = r.as_array().unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0]["id"], 1);
        assert_eq!(r[1]["error"]["code"], INVALID_PARAMS);
    }

    #[test]
    fn filtering_replay_and_reorgs() {
        let hub = Hub::new(64, 64);
        hub.publish(Topic::Block, json!("b1"));
        hub.publish(Topic::Mempool, json!("m1"));
        hub.publish(Topic::Reorg, json!("r1"));
        hub.publish(Topic::Block, json!("b2"));
        let mut c = Connection::new(&hub);
        let out = c.handle_text(
            &hub,
            r#"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"event":"block","since_seq":1}}"#,
        );
        let methods: Vec<_> = out.iter().map(|v| (v["method"].clone(), v["seq"].clone())).collect();
        assert_eq!(
            methods,
            vec![(Value::Null, Value::Null), (json!("reorg"), json!(3)), (json!("block"), json!(4))]
        );
        // Live: later block notifications only (the hub delivers nothing else); the reorg is
        // not repeated.
        hub.publish(Topic::Mempool, json!("m2"));
        hub.publish(Topic::Block, json!("b3"));
        let got: Vec<u64> = std::iter::from_fn(|| c.rx.try_recv().unwrap()).map(|n| n.seq).collect();
        assert_eq!(got, vec![6]);
        let r = one(
            &mut c,
            &hub,
            r#"{"jsonrpc":"2.0","id":2,"method":"subscribe","params":{"event":"mempool","since_seq":99}}"#,
        );
        assert_eq!(r["error"]["code"], RESUME_FAILED);
        one(&mut c, &hub, r#"{"jsonrpc":"2.0","id":3,"method":"unsubscribe","params":{"event":"block"}}"#);
        assert!(!c.is_subscribed());
    }
}
