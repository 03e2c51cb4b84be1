//! Transaction events inside `/new_block` and `/new_microblocks`.
//!
//! An event is `{txid, event_index, committed, type: "<kind>", "<kind>": {...}}`. The node
//! writes keys in alphabetical order, so `type` usually comes *after* the body; serde's
//! internally-tagged enums would buffer every event into an untyped tree to cope. This decoder
//! instead parses each known body key straight into its struct as it appears and picks the one
//! `type` names at the end. Unknown kinds are kept (`EventBody::Unknown`) rather than failing
//! the whole block.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use super::num::{u128_dec, u64_flex};

/// One event emitted by a transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct TxEvent {
    /// 0x-prefixed id of the emitting transaction.
    pub txid: String,
    /// Position in the block's event list as the node numbered it (not per transaction).
    pub event_index: u64,
    /// False for events of a transaction whose effects were rolled back.
    pub committed: bool,
    pub body: EventBody,
}

#[derive(Debug, Clone, PartialEq)]
pub enum EventBody {
    Contract(ContractEvent),
    StxTransfer(StxTransferEvent),
    StxMint(StxMintEvent),
    StxBurn(StxBurnEvent),
    StxLock(StxLockEvent),
    FtTransfer(FtTransferEvent),
    FtMint(FtMintEvent),
    FtBurn(FtBurnEvent),
    NftTransfer(NftTransferEvent),
    NftMint(NftMintEvent),
    NftBurn(NftBurnEvent),
    /// A `type` this version does not know; `data` is the object under the key named by
    /// `type`, if present.
    Unknown {
        kind: String,
        data: Option<serde_json::Value>,
    },
}

impl EventBody {
    /// The node's `type` string.
    pub fn kind(&self) -> &str {
        match self {
            EventBody::Unknown { kind, .. } => kind,
            known => Kind::of(known).map(Kind::key).unwrap_or_default(),
        }
    }
}

/// `print` output and other contract logs.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ContractEvent {
    pub contract_identifier: String,
    pub topic: String,
    /// Consensus-serialised Clarity value, 0x hex. (The node's JSON `value` rendering is
    /// ignored: it is lossy and non-standard.)
    pub raw_value: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct StxTransferEvent {
    pub sender: String,
    pub recipient: String,
    #[serde(deserialize_with = "u128_dec")]
    pub amount: u128,
    /// Hex without 0x; only sent for Clarity 2 `stx-transfer-memo?`.
    #[serde(default)]
    pub memo: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct StxMintEvent {
    pub recipient: String,
    #[serde(deserialize_with = "u128_dec")]
    pub amount: u128,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct StxBurnEvent {
    pub sender: String,
    #[serde(deserialize_with = "u128_dec")]
    pub amount: u128,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct StxLockEvent {
    #[serde(deserialize_with = "u128_dec")]
    pub locked_amount: u128,
    /// Burn block height at which the lock ends (sent as a string).
    #[serde(deserialize_with = "u64_flex")]
    pub unlock_height: u64,
    pub locked_address: String,
    /// Locking PoX contract; absent on old nodes, meaning the original `pox`.
    #[serde(default)]
    pub contract_identifier: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct FtTransferEvent {
    /// `<contract id>::<token name>`.
    pub asset_identifier: String,
    pub sender: String,
    pub recipient: String,
    #[serde(deserialize_with = "u128_dec")]
    pub amount: u128,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct FtMintEvent {
    pub asset_identifier: String,
    pub recipient: String,
    #[serde(deserialize_with = "u128_dec")]
    pub amount: u128,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct FtBurnEvent {
    pub asset_identifier: String,
    pub sender: String,
    #[serde(deserialize_with = "u128_dec")]
    pub amount: u128,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct NftTransferEvent {
    pub asset_identifier: String,
    pub sender: String,
    pub recipient: String,
    /// The token id as a consensus-serialised Clarity value, 0x hex.
    pub raw_value: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct NftMintEvent {
    pub asset_identifier: String,
    pub recipient: String,
    pub raw_value: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct NftBurnEvent {
    pub asset_identifier: String,
    pub sender: String,
    pub raw_value: String,
}

/// The known event kinds, each named by its `type` string, which is also its body's key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Contract,
    StxTransfer,
    StxMint,
    StxBurn,
    StxLock,
    FtTransfer,
    FtMint,
    FtBurn,
    NftTransfer,
    NftMint,
    NftBurn,
}

impl Kind {
    const ALL: [Kind; 11] = [
        Kind::Contract,
        Kind::StxTransfer,
        Kind::StxMint,
        Kind::StxBurn,
        Kind::StxLock,
        Kind::FtTransfer,
        Kind::FtMint,
        Kind::FtBurn,
        Kind::NftTransfer,
        Kind::NftMint,
        Kind::NftBurn,
    ];

    fn key(self) -> &'static str {
        match self {
            Kind::Contract => "contract_event",
            Kind::StxTransfer => "stx_transfer_event",
            Kind::StxMint => "stx_mint_event",
            Kind::StxBurn => "stx_burn_event",
            Kind::StxLock => "stx_lock_event",
            Kind::FtTransfer => "ft_transfer_event",
            Kind::FtMint => "ft_mint_event",
            Kind::FtBurn => "ft_burn_event",
            Kind::NftTransfer => "nft_transfer_event",
            Kind::NftMint => "nft_mint_event",
            Kind::NftBurn => "nft_burn_event",
        }
    }

    fn from_key(key: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.key() == key)
    }

    fn of(body: &EventBody) -> Option<Kind> {
        Some(match body {
            EventBody::Contract(_) => Kind::Contract,
            EventBody::StxTransfer(_) => Kind::StxTransfer,
            EventBody::StxMint(_) => Kind::StxMint,
            EventBody::StxBurn(_) => Kind::StxBurn,
            EventBody::StxLock(_) => Kind::StxLock,
            EventBody::FtTransfer(_) => Kind::FtTransfer,
            EventBody::FtMint(_) => Kind::FtMint,
            EventBody::FtBurn(_) => Kind::FtBurn,
            EventBody::NftTransfer(_) => Kind::NftTransfer,
            EventBody::NftMint(_) => Kind::NftMint,
            EventBody::NftBurn(_) => Kind::NftBurn,
            EventBody::Unknown { .. } => return None,
        })
    }

    fn next_body<'de, A: MapAccess<'de>>(self, map: &mut A) -> Result<EventBody, A::Error> {
        Ok(match self {
            Kind::Contract => EventBody::Contract(map.next_value()?),
            Kind::StxTransfer => EventBody::StxTransfer(map.next_value()?),
            Kind::StxMint => EventBody::StxMint(map.next_value()?),
            Kind::StxBurn => EventBody::StxBurn(map.next_value()?),
            Kind::StxLock => EventBody::StxLock(map.next_value()?),
            Kind::FtTransfer => EventBody::FtTransfer(map.next_value()?),
            Kind::FtMint => EventBody::FtMint(map.next_value()?),
            Kind::FtBurn => EventBody::FtBurn(map.next_value()?),
            Kind::NftTransfer => EventBody::NftTransfer(map.next_value()?),
            Kind::NftMint => EventBody::NftMint(map.next_value()?),
            Kind::NftBurn => EventBody::NftBurn(map.next_value()?),
        })
    }
}

/// An event object key, recognised without allocating for the known ones.
enum Field {
    Txid,
    EventIndex,
    Committed,
    Type,
    Body(Kind),
    Other(String),
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an event field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
                Ok(match v {
                    "txid" => Field::Txid,
                    "event_index" => Field::EventIndex,
                    "committed" => Field::Committed,
                    "type" => Field::Type,
                    other => {
                        Kind::from_key(other).map_or_else(|| Field::Other(other.to_owned()), Field::Body)
                    }
                })
            }
        }
        d.deserialize_identifier(FieldVisitor)
    }
}

impl<'de> Deserialize<'de> for TxEvent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(EventVisitor)
    }
}

struct EventVisitor;

impl<'de> Visitor<'de> for EventVisitor {
    type Value = TxEvent;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a transaction event object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TxEvent, A::Error> {
        let (mut txid, mut event_index, mut committed, mut kind) = (None, None, None, None);
        // Normally exactly one body key; more are parsed but only the one `type` names is kept.
        let mut bodies: Vec<EventBody> = Vec::with_capacity(1);
        let mut others: Vec<(String, serde_json::Value)> = Vec::new();
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Txid => txid = Some(map.next_value::<String>()?),
                Field::EventIndex => event_index = Some(map.next_value::<u64>()?),
                Field::Committed => committed = Some(map.next_value::<bool>()?),
                Field::Type => kind = Some(map.next_value::<String>()?),
                Field::Body(k) => bodies.push(k.next_body(&mut map)?),
                Field::Other(key) => others.push((key, map.next_value()?)),
            }
        }
        let txid = txid.ok_or_else(|| de::Error::missing_field("txid"))?;
        let event_index = event_index.ok_or_else(|| de::Error::missing_field("event_index"))?;
        let committed = committed.ok_or_else(|| de::Error::missing_field("committed"))?;
        let kind = kind.ok_or_else(|| de::Error::missing_field("type"))?;
        let body = match Kind::from_key(&kind) {
            Some(k) => bodies
                .into_iter()
                .find(|b| Kind::of(b) == Some(k))
                .ok_or_else(|| de::Error::missing_field(k.key()))?,
            None => {
                let data = others.into_iter().find(|(key, _)| *key == kind).map(|(_, v)| v);
                EventBody::Unknown { kind, data }
            }
        };
        Ok(TxEvent { txid, event_index, committed, body })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<TxEvent, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn parses_body_before_or_after_type() {
        let sorted = r#"{"committed":true,"event_index":13,"stx_transfer_event":{"amount":"920869",
            "memo":"686f74","recipient":"ST8Z","sender":"STVW"},"txid":"0x99","type":"stx_transfer_event"}"#;
        let ev = parse(sorted).unwrap();
        assert_eq!((ev.txid.as_str(), ev.event_index, ev.committed), ("0x99", 13, true));
        let EventBody::StxTransfer(t) = &ev.body else { panic!("{ev:?}") };
        assert_eq!((t.amount, t.memo.as_deref()), (920_869, Some("686f74")));
        assert_eq!(ev.body.kind(), "stx_transfer_event");

        let type_first = r#"{"txid":"0x1","type":"stx_lock_event","committed":true,"event_index":1,
            "stx_lock_event":{"locked_amount":"2500170000000000","unlock_height":"140",
            "locked_address":"STB4","contract_identifier":"ST000000000000000000002AMW42H.pox-4"}}"#;
        let EventBody::StxLock(l) = parse(type_first).unwrap().body else { panic!() };
        assert_eq!((l.locked_amount, l.unlock_height), (2_500_170_000_000_000, 140));
    }

    #[test]
    fn ignores_the_json_value_rendering_even_with_huge_numbers() {
        let json = r#"{"txid":"0x1","type":"contract_event","committed":true,"event_index":0,
            "contract_event":{"contract_identifier":"SP000000000000000000002Q6VF78.pox","topic":"print",
            "raw_value":"0x0c","value":{"UInt":340282366920938463463374607431768211455}}}"#;
        let EventBody::Contract(c) = parse(json).unwrap().body else { panic!() };
        assert_eq!((c.topic.as_str(), c.raw_value.as_str()), ("print", "0x0c"));
    }

    #[test]
    fn unknown_kinds_are_kept() {
        let json = r#"{"txid":"0x1","type":"future_event","committed":false,"event_index":4,
            "future_event":{"x":1},"extra":2}"#;
        let ev = parse(json).unwrap();
        assert_eq!(ev.body.kind(), "future_event");
        assert_eq!(
            ev.body,
            EventBody::Unknown { kind: "future_event".into(), data: Some(serde_json::json!({"x":1})) }
        );
    }

    #[test]
    fn missing_fields_are_named() {
        let err = |json: &str| parse(json).unwrap_err().to_string();
        assert!(err(r#"{"type":"stx_mint_event","committed":true,"event_index":1}"#)
            .contains("missing field `txid`"));
        assert!(err(r#"{"txid":"0x1","type":"stx_mint_event","committed":true,"event_index":1}"#)
            .contains("missing field `stx_mint_event`"));
        assert!(err(r#"{"txid":"0x1","committed":true,"event_index":1,
            "stx_mint_event":{"recipient":"SP1","amount":"1"}}"#)
        .contains("missing field `type`"));
        let e = err(r#"{"txid":"0x1","type":"ft_mint_event","committed":true,"event_index":1,
            "ft_mint_event":{"asset_identifier":"a::b","amount":"1"}}"#);
        assert!(e.contains("missing field `recipient`"), "{e}");
        let e = err(r#"{"txid":"0x1","type":"stx_mint_event","committed":true,"event_index":1,
            "stx_mint_event":{"recipient":"SP1","amount":"12x"}}"#);
        assert!(e.contains("invalid value"), "{e}");
    }

    #[test]
    fn a_body_for_another_kind_does_not_satisfy_type() {
        let json = r#"{"txid":"0x1","type":"stx_burn_event","committed":true,"event_index":1,
            "stx_mint_event":{"recipient":"SP1","amount":"1"}}"#;
        assert!(parse(json).unwrap_err().to_string().contains("missing field `stx_burn_event`"));
    }
}
