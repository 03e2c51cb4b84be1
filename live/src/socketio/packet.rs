//! Engine.IO v4 and Socket.IO v5 text framing, and the incumbent's Socket.IO topic names. No I/O.

use serde_json::{json, Value};

use warp::filters::ws::Message;

use crate::hub::{Notification, Topic, Wire};
use crate::jsonrpc::{is_principal, normalize_tx_id};

/// Engine.IO packet types (the first character of a text packet).
pub mod eio {
    pub const OPEN: char = '0';
    pub const CLOSE: char = '1';
    pub const PING: char = '2';
    pub const PONG: char = '3';
    pub const MESSAGE: char = '4';
    pub const UPGRADE: char = '5';
    pub const NOOP: char = '6';
    /// Separates packets in one long-polling body.
    pub const SEPARATOR: char = '\x1e';
}

/// A Socket.IO packet the server acts on (the payload of an Engine.IO message).
#[derive(Debug, Clone, PartialEq)]
pub enum SioPacket {
    Connect {
        nsp: String,
    },
    Disconnect {
        nsp: String,
    },
    Event {
        nsp: String,
        ack: Option<u64>,
        args: Vec<Value>,
    },
    /// Acks from the client, binary packets: nothing to do.
    Ignored,
}

/// Parses a Socket.IO v5 packet: type digit, optional `/nsp,`, optional ack id, optional JSON.
pub fn parse_sio(text: &str) -> Result<SioPacket, String> {
    let mut chars = text.chars();
    let kind = chars.next().ok_or("empty Socket.IO packet")?;
    let mut rest = chars.as_str();
    let mut nsp = "/".to_owned();
    if rest.starts_with('/') {
        let (n, r) = rest.split_once(',').unwrap_or((rest, ""));
        nsp = n.to_owned();
        rest = r;
    }
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let ack = if digits > 0 {
        Some(rest[..digits].parse::<u64>().map_err(|_| "ack id out of range")?)
    } else {
        None
    };
    rest = &rest[digits..];
    match kind {
        '0' => Ok(SioPacket::Connect { nsp }),
        '1' => Ok(SioPacket::Disconnect { nsp }),
        '2' => match serde_json::from_str::<Value>(rest) {
            Ok(Value::Array(args)) if args.first().is_some_and(Value::is_string) => {
                Ok(SioPacket::Event { nsp, ack, args })
            }
            _ => Err("an EVENT packet must carry a JSON array starting with the event name".into()),
        },
        '3' | '5' | '6' => Ok(SioPacket::Ignored),
        other => Err(format!("unknown Socket.IO packet type {other:?}")),
    }
}

fn nsp_prefix(nsp: &str) -> String {
    if nsp == "/" {
        String::new()
    } else {
        format!("{nsp},")
    }
}

/// `40{"sid":...}`: the namespace is connected.
pub fn connect_ok(nsp: &str, sid: &str) -> String {
    format!("{}0{}{}", eio::MESSAGE, nsp_prefix(nsp), json!({ "sid": sid }))
}

/// `44{"message":...}`: the namespace connection is refused.
pub fn connect_error(nsp: &str, message: &str) -> String {
    format!("{}4{}{}", eio::MESSAGE, nsp_prefix(nsp), json!({ "message": message }))
}

/// `43<id>[args]`.
pub fn ack(nsp: &str, id: u64, args: &[Value]) -> String {
    format!("{}3{}{id}{}", eio::MESSAGE, nsp_prefix(nsp), Value::from(args.to_vec()))
}

/// `42["name", args...]` on the default namespace.
pub fn event(name: &str, args: Vec<Value>) -> String {
    let mut all = Vec::with_capacity(args.len() + 1);
    all.push(Value::from(name));
    all.extend(args);
    format!("{}2{}", eio::MESSAGE, Value::Array(all))
}

/// The topic a Socket.IO room name stands for (the incumbent's names).
pub fn parse_topic(name: &str) -> Option<Topic> {
    let asset_ok = |a: &str| a.contains("::") && is_principal(a.split("::").next().unwrap_or_default());
    Some(match name {
        "block" => Topic::Block,
        "microblock" => Topic::Microblock,
        "mempool" => Topic::Mempool,
        "nft-event" => Topic::NftEvent,
        _ => {
            let (kind, arg) = name.split_once(':')?;
            match kind {
                "transaction" => Topic::Tx(normalize_tx_id(arg)?),
                "address-transaction" if is_principal(arg) => Topic::AddressTx(arg.to_owned()),
                "address-stx-balance" if is_principal(arg) => Topic::AddressBalance(arg.to_owned()),
                "nft-asset-event" => {
                    // The asset identifier contains `::`, the value is hex: split at the last `+`.
                    let (asset, value) = arg.rsplit_once('+')?;
                    let hex = value.strip_prefix("0x")?;
                    let hex_ok = hex.len() % 2 == 0 && hex.bytes().all(|b| b.is_ascii_hexdigit());
                    if !asset_ok(asset) || !hex_ok {
                        return None;
                    }
                    Topic::NftAsset(asset.to_owned(), value.to_ascii_lowercase())
                }
                "nft-collection-event" if asset_ok(arg) => Topic::NftCollection(arg.to_owned()),
                _ => return None,
            }
        }
    })
}

/// The event name and arguments the incumbent emits for a notification, plus our trailing
/// `{"seq": n}` argument (extra arguments are ignored by the incumbent's clients).
pub fn notification_event(n: &Notification) -> (String, Vec<Value>) {
    let p = n.payload.clone();
    let (name, mut args) = match &n.topic {
        Topic::Block => ("block".to_owned(), vec![p]),
        Topic::Microblock => ("microblock".to_owned(), vec![p]),
        Topic::Mempool => ("mempool".to_owned(), vec![p]),
        Topic::NftEvent => ("nft-event".to_owned(), vec![p]),
        Topic::Tx(id) => (format!("transaction:{id}"), vec![p]),
        Topic::AddressTx(a) => (format!("address-transaction:{a}"), vec![a.as_str().into(), p]),
        Topic::AddressBalance(a) => {
            // The incumbent sends (principal, balance); the JSON-RPC payload also names the address.
            let mut balance = p;
            if let Value::Object(m) = &mut balance {
                m.remove("address");
            }
            (format!("address-stx-balance:{a}"), vec![a.as_str().into(), balance])
        }
        Topic::NftAsset(a, v) => {
            (format!("nft-asset-event:{a}+{v}"), vec![a.as_str().into(), v.as_str().into(), p])
        }
        Topic::NftCollection(a) => (format!("nft-collection-event:{a}"), vec![a.as_str().into(), p]),
        Topic::Reorg => ("reorg".to_owned(), vec![p]),
    };
    args.push(json!({ "seq": n.seq }));
    (name, args)
}

/// The notification's `42[...]` packet, encoded once for every Socket.IO connection.
pub fn notification_packet(n: &Notification) -> &Message {
    n.encoded(Wire::SocketIo, |n| {
        let (name, args) = notification_event(n);
        event(&name, args)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADDR: &str = "ST1HB1T8WRNBYB0Y3T7WXZS38NKKPTBR3EG9EPJKR";

    #[test]
    fn packets_parse_with_namespace_and_ack_id() {
        assert_eq!(parse_sio("0").unwrap(), SioPacket::Connect { nsp: "/".into() });
        assert_eq!(parse_sio("0/admin,{\"x\":1}").unwrap(), SioPacket::Connect { nsp: "/admin".into() });
        assert_eq!(
            parse_sio("212[\"subscribe\",\"block\"]").unwrap(),
            SioPacket::Event {
                nsp: "/".into(),
                ack: Some(12),
                args: vec![json!("subscribe"), json!("block")]
            }
        );
        assert!(parse_sio("2{\"a\":1}").is_err());
        assert!(parse_sio("9").is_err());
        assert_eq!(ack("/", 12, &[Value::Null]), "4312[null]");
        assert_eq!(connect_ok("/", "s"), "40{\"sid\":\"s\"}");
        assert_eq!(connect_error("/x", "no"), "44/x,{\"message\":\"no\"}");
    }

    #[test]
    fn topics_follow_the_incumbent_names() {
        let tx = format!("0x{}", "AB".repeat(32));
        assert_eq!(parse_topic(&format!("transaction:{tx}")), Some(Topic::Tx(tx.to_ascii_lowercase())));
        assert_eq!(
            parse_topic(&format!("address-stx-balance:{ADDR}")),
            Some(Topic::AddressBalance(ADDR.into()))
        );
        let asset = format!("{ADDR}.nft::n");
        assert_eq!(
            parse_topic(&format!("nft-asset-event:{asset}+0x0100")),
            Some(Topic::NftAsset(asset.clone(), "0x0100".into()))
        );
        assert_eq!(parse_topic(&format!("nft-collection-event:{asset}")), Some(Topic::NftCollection(asset)));
        for bad in ["blocks", "transaction:0x12", "address-transaction:nope", "nft-asset-event:x+0x01", ""] {
            assert_eq!(parse_topic(bad), None, "{bad}");
        }
    }

    #[test]
    fn notifications_carry_the_incumbent_arguments_and_seq() {
        let n = Notification::new(
            7,
            Topic::AddressBalance(ADDR.into()),
            json!({"address": ADDR, "balance": "10"}),
        );
        let text = notification_packet(&n).to_str().unwrap();
        let v: Value = serde_json::from_str(&text[2..]).unwrap();
        assert_eq!(v, json!([format!("address-stx-balance:{ADDR}"), ADDR, {"balance": "10"}, {"seq": 7}]));
        assert!(text.starts_with("42"));
    }
}
