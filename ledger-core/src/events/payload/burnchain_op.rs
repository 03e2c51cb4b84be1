//! `burnchain_op` on a block transaction: a Stacks operation sent as a Bitcoin transaction
//! (such a receipt has `raw_tx == "0x00"`). The node writes `{"<op>": {...}}` with amounts as
//! JSON numbers that may exceed `u64`; those are plain `u128` fields, which serde_json parses
//! exactly (an untyped `Value` would round them through `f64`).

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

#[derive(Debug, Clone, PartialEq)]
pub enum BurnchainOp {
    StackStx(StackStxOp),
    DelegateStx(DelegateStxOp),
    TransferStx(TransferStxOp),
    PreStx(PreStxOp),
    VoteForAggregateKey(VoteForAggregateKeyOp),
    /// An operation this version does not model, kept untyped.
    Unknown {
        kind: String,
        data: serde_json::Value,
    },
}

/// A Stacks address as the node renders it inside burnchain ops.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct OpAddress {
    pub address: String,
    pub address_hash_bytes: String,
    pub address_version: u8,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct StackStxOp {
    pub sender: OpAddress,
    /// Bitcoin reward address (base58 / bech32 text).
    pub reward_addr: String,
    pub stacked_ustx: u128,
    pub num_cycles: u8,
    /// pox-4 only.
    #[serde(default)]
    pub signer_key: Option<String>,
    #[serde(default)]
    pub max_amount: Option<u128>,
    #[serde(default)]
    pub auth_id: Option<u32>,
    pub burn_block_height: u64,
    pub burn_header_hash: String,
    pub burn_txid: String,
    pub vtxindex: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct DelegateStxOp {
    pub sender: OpAddress,
    pub delegate_to: OpAddress,
    pub delegated_ustx: u128,
    /// `(output index, reward address)` when the delegator pins a reward address.
    #[serde(default)]
    pub reward_addr: Option<(u32, String)>,
    #[serde(default)]
    pub until_burn_height: Option<u64>,
    pub burn_block_height: u64,
    pub burn_header_hash: String,
    pub burn_txid: String,
    pub vtxindex: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct TransferStxOp {
    pub sender: OpAddress,
    pub recipient: OpAddress,
    /// (sic) the node's spelling.
    pub transfered_ustx: u128,
    /// 0x hex.
    pub memo: String,
    pub burn_block_height: u64,
    pub burn_header_hash: String,
    pub burn_txid: String,
    pub vtxindex: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PreStxOp {
    pub output: OpAddress,
    pub burn_block_height: u64,
    pub burn_header_hash: String,
    pub burn_txid: String,
    pub vtxindex: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct VoteForAggregateKeyOp {
    pub sender: OpAddress,
    pub aggregate_key: String,
    pub reward_cycle: u64,
    pub round: u32,
    pub signer_index: u16,
    pub signer_key: String,
    pub burn_block_height: u64,
    pub burn_header_hash: String,
    pub burn_txid: String,
    pub vtxindex: u32,
}

/// Field deserializer: `null`, absent or `{}` mean no operation (the node's own reader also
/// treats `{}` as none); use with `#[serde(default)]`.
pub fn opt_burnchain_op<'de, D: Deserializer<'de>>(d: D) -> Result<Option<BurnchainOp>, D::Error> {
    d.deserialize_option(OptOpVisitor)
}

struct OptOpVisitor;

impl<'de> Visitor<'de> for OptOpVisitor {
    type Value = Option<BurnchainOp>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("null or an object with one burnchain operation key")
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let Some(kind) = map.next_key::<String>()? else { return Ok(None) };
        let op = match kind.as_str() {
            "stack_stx" => BurnchainOp::StackStx(map.next_value()?),
            "delegate_stx" => BurnchainOp::DelegateStx(map.next_value()?),
            "transfer_stx" => BurnchainOp::TransferStx(map.next_value()?),
            "pre_stx" => BurnchainOp::PreStx(map.next_value()?),
            "vote_for_aggregate_key" => BurnchainOp::VoteForAggregateKey(map.next_value()?),
            _ => {
                let data = map.next_value()?;
                BurnchainOp::Unknown { kind, data }
            }
        };
        if let Some(extra) = map.next_key::<String>()? {
            return Err(de::Error::custom(format_args!(
                "burnchain_op has more than one operation key (`{extra}`)"
            )));
        }
        Ok(Some(op))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Holder {
        #[serde(default, deserialize_with = "opt_burnchain_op")]
        op: Option<BurnchainOp>,
    }

    fn parse(json: &str) -> Result<Option<BurnchainOp>, serde_json::Error> {
        serde_json::from_str::<Holder>(json).map(|h| h.op)
    }

    const SENDER: &str = r#"{"address":"ST1Z7V02CJRY3G5R2RDG7SFAZA8VGH0Y44NC2NAJN",
        "address_hash_bytes":"0x7e7d804c963c381702c3607cbd5f52370883c425","address_version":26}"#;

    #[test]
    fn stack_stx_with_u128_amounts_is_exact() {
        let json = format!(
            r#"{{"op":{{"stack_stx":{{"auth_id":123456789,"burn_block_height":121,
            "burn_header_hash":"71b8","burn_txid":"e5d9","max_amount":340282366920938463463374607431768211455,
            "num_cycles":6,"reward_addr":"tb1pf4x6","sender":{SENDER},
            "signer_key":"033b67","stacked_ustx":4500432000000000,"vtxindex":3}}}}}}"#
        );
        let Some(BurnchainOp::StackStx(op)) = parse(&json).unwrap() else { panic!() };
        assert_eq!(op.max_amount, Some(u128::MAX));
        assert_eq!(op.stacked_ustx, 4_500_432_000_000_000);
        assert_eq!((op.num_cycles, op.auth_id, op.sender.address_version), (6, Some(123_456_789), 26));
    }

    #[test]
    fn delegate_stx_reward_addr_tuple() {
        let json = format!(
            r#"{{"op":{{"delegate_stx":{{"burn_block_height":121,"burn_header_hash":"54fe",
            "burn_txid":"1570","delegate_to":{SENDER},"delegated_ustx":4500432000000000,
            "reward_addr":[1,"tb1pf4x6"],"sender":{SENDER},"until_burn_height":200,"vtxindex":3}}}}}}"#
        );
        let Some(BurnchainOp::DelegateStx(op)) = parse(&json).unwrap() else { panic!() };
        assert_eq!(op.reward_addr, Some((1, "tb1pf4x6".to_owned())));
        assert_eq!(op.until_burn_height, Some(200));
    }

    #[test]
    fn null_empty_unknown_and_invalid() {
        assert_eq!(parse(r#"{"op":null}"#).unwrap(), None);
        assert_eq!(parse(r#"{}"#).unwrap(), None);
        assert_eq!(parse(r#"{"op":{}}"#).unwrap(), None);
        assert_eq!(
            parse(r#"{"op":{"leader_block_commit":{"a":1}}}"#).unwrap(),
            Some(BurnchainOp::Unknown {
                kind: "leader_block_commit".into(),
                data: serde_json::json!({"a": 1})
            })
        );
        let err = parse(r#"{"op":{"pre_stx":{"burn_block_height":1}}}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `output`"), "{err}");
        assert!(parse(r#"{"op":{"x":{},"y":{}}}"#).is_err());
    }
}
