//! `/new_block`: one processed Stacks block (epoch 2.x anchored block or Nakamoto block) with
//! its transaction receipts, events, matured miner rewards and, at cycle boundaries, the
//! reward set.

use std::fmt;

use serde::de::{self, Deserializer};
use serde::Deserialize;
use thiserror::Error;

use super::burnchain_op::{opt_burnchain_op, BurnchainOp};
use super::event::TxEvent;
use super::num::{opt_u128_dec, u128_dec};

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct NewBlock {
    pub block_hash: String,
    pub block_height: u64,
    pub index_block_hash: String,
    pub parent_index_block_hash: String,
    pub parent_block_hash: String,
    /// Tip of the microblock stream this block confirms (all zeros: none; always so after
    /// Nakamoto).
    pub parent_microblock: String,
    pub parent_microblock_sequence: u16,
    /// Unix seconds of the burn block the block was mined in.
    pub burn_block_time: u64,
    pub burn_block_hash: String,
    pub burn_block_height: u64,
    pub miner_txid: String,
    pub parent_burn_block_hash: String,
    pub parent_burn_block_height: u64,
    pub parent_burn_block_timestamp: u64,
    /// Nakamoto block timestamp (unix seconds); `null`/absent before Nakamoto.
    #[serde(default)]
    pub block_time: Option<u64>,
    /// Coinbase height: equals `block_height` in epoch 2.x, counts tenures in Nakamoto.
    #[serde(default)]
    pub tenure_height: Option<u64>,
    #[serde(default)]
    pub consensus_hash: Option<String>,
    /// Hex of the consensus-serialised signer bitvec (Nakamoto).
    #[serde(default)]
    pub signer_bitvec: Option<String>,
    /// Signer signatures, hex without 0x (Nakamoto).
    #[serde(default)]
    pub signer_signature: Option<Vec<String>>,
    #[serde(default)]
    pub signer_signature_hash: Option<String>,
    #[serde(default)]
    pub miner_signature: Option<String>,
    /// Block execution cost; absent on old nodes (then summed from the receipts).
    #[serde(default)]
    pub anchored_cost: Option<ExecutionCost>,
    #[serde(default)]
    pub confirmed_microblocks_cost: Option<ExecutionCost>,
    #[serde(default)]
    pub pox_v1_unlock_height: Option<u64>,
    #[serde(default)]
    pub pox_v2_unlock_height: Option<u64>,
    #[serde(default)]
    pub pox_v3_unlock_height: Option<u64>,
    #[serde(default)]
    pub pox_v4_unlock_height: Option<u64>,
    /// Set on the block where a reward cycle's set is first computed, with `cycle_number`.
    #[serde(default)]
    pub reward_set: Option<RewardSet>,
    #[serde(default)]
    pub cycle_number: Option<u64>,
    pub matured_miner_rewards: Vec<MaturedMinerReward>,
    pub transactions: Vec<TxReceipt>,
    pub events: Vec<TxEvent>,
}

impl NewBlock {
    /// The block's own time: Nakamoto `block_time`, else the burn block's time (as the
    /// incumbent does).
    pub fn effective_block_time(&self) -> u64 {
        self.block_time.unwrap_or(self.burn_block_time)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub struct ExecutionCost {
    pub read_count: u64,
    pub read_length: u64,
    pub runtime: u64,
    pub write_count: u64,
    pub write_length: u64,
}

/// A transaction receipt in a block or microblock.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TxReceipt {
    pub txid: String,
    pub tx_index: u32,
    /// 0x hex of the serialised transaction; `"0x00"` for burnchain operations.
    pub raw_tx: String,
    pub status: TxStatus,
    /// 0x hex of the consensus-serialised Clarity result.
    pub raw_result: String,
    pub execution_cost: ExecutionCost,
    /// Contract ABI for deployments (current nodes).
    #[serde(default)]
    pub contract_interface: Option<serde_json::Value>,
    /// The same under its pre-rename name (older nodes).
    #[serde(default)]
    pub contract_abi: Option<serde_json::Value>,
    #[serde(default)]
    pub microblock_sequence: Option<u16>,
    #[serde(default)]
    pub microblock_hash: Option<String>,
    #[serde(default)]
    pub microblock_parent_hash: Option<String>,
    /// Clarity VM error text for failed transactions (may contain NUL bytes).
    #[serde(default)]
    pub vm_error: Option<String>,
    #[serde(default, deserialize_with = "opt_burnchain_op")]
    pub burnchain_op: Option<BurnchainOp>,
}

/// Where a microblock-confirmed transaction sat in its stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MicroblockRef<'a> {
    pub sequence: u16,
    pub hash: &'a str,
    pub parent_hash: &'a str,
}

/// A receipt carrying some but not all of the three microblock fields.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("transaction {txid} has partial microblock data (sequence, hash and parent hash must all be set or all be null)")]
pub struct PartialMicroblockInfo {
    pub txid: String,
}

impl TxReceipt {
    /// The contract ABI under either field name.
    pub fn contract_abi(&self) -> Option<&serde_json::Value> {
        self.contract_interface.as_ref().or(self.contract_abi.as_ref()).filter(|v| !v.is_null())
    }

    /// Microblock position: all three fields or none, as the incumbent requires.
    pub fn microblock(&self) -> Result<Option<MicroblockRef<'_>>, PartialMicroblockInfo> {
        match (self.microblock_sequence, &self.microblock_hash, &self.microblock_parent_hash) {
            (Some(sequence), Some(hash), Some(parent_hash)) => {
                Ok(Some(MicroblockRef { sequence, hash, parent_hash }))
            }
            (None, None, None) => Ok(None),
            _ => Err(PartialMicroblockInfo { txid: self.txid.clone() }),
        }
    }

    /// Burnchain operations have no Stacks transaction bytes.
    pub fn is_burnchain_op(&self) -> bool {
        self.raw_tx == "0x00"
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxStatus {
    Success,
    AbortByResponse,
    AbortByPostCondition,
    /// Known-problematic transaction included but not executed.
    ProblematicSkipped,
}

impl TxStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TxStatus::Success => "success",
            TxStatus::AbortByResponse => "abort_by_response",
            TxStatus::AbortByPostCondition => "abort_by_post_condition",
            TxStatus::ProblematicSkipped => "problematic_skipped",
        }
    }
}

impl fmt::Display for TxStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for TxStatus {
    // Unknown statuses are errors: the ledger cannot tell whether the tx's effects apply.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        const ALL: [TxStatus; 4] = [
            TxStatus::Success,
            TxStatus::AbortByResponse,
            TxStatus::AbortByPostCondition,
            TxStatus::ProblematicSkipped,
        ];
        let s = String::deserialize(d)?;
        ALL.into_iter().find(|v| v.as_str() == s).ok_or_else(|| {
            de::Error::unknown_variant(
                &s,
                &["success", "abort_by_response", "abort_by_post_condition", "problematic_skipped"],
            )
        })
    }
}

/// Block reward maturing in this block for the miner of an earlier block.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct MaturedMinerReward {
    /// Index block hash of the rewarded block (the node's name is historical).
    pub from_index_consensus_hash: String,
    pub from_stacks_block_hash: String,
    pub recipient: String,
    /// Null/absent before Stacks 2.1; then `recipient` is the miner.
    #[serde(default)]
    pub miner_address: Option<String>,
    #[serde(deserialize_with = "u128_dec")]
    pub coinbase_amount: u128,
    #[serde(deserialize_with = "u128_dec")]
    pub tx_fees_anchored: u128,
    #[serde(deserialize_with = "u128_dec")]
    pub tx_fees_streamed_confirmed: u128,
    #[serde(deserialize_with = "u128_dec")]
    pub tx_fees_streamed_produced: u128,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RewardSet {
    #[serde(default)]
    pub rewarded_addresses: Vec<RewardedAddress>,
    /// Nakamoto signers; absent for pre-Nakamoto reward sets.
    #[serde(default)]
    pub signers: Option<Vec<RewardSetSigner>>,
    #[serde(default, deserialize_with = "opt_u128_dec")]
    pub pox_ustx_threshold: Option<u128>,
}

/// A PoX reward address: current nodes send Bitcoin address text, 2024-era nodes sent the
/// internal structure (`{"Standard":[{"bytes":..,"version":..},"SerializeP2PKH"]}`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum RewardedAddress {
    Text(String),
    Structured(serde_json::Value),
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RewardSetSigner {
    /// Compressed secp256k1 public key, hex without 0x.
    pub signing_key: String,
    pub weight: u32,
    #[serde(deserialize_with = "u128_dec")]
    pub stacked_amt: u128,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tx(extra: &str) -> String {
        format!(
            r#"{{"txid":"0x01","tx_index":0,"raw_tx":"0x00","status":"success","raw_result":"0x0703",
            "execution_cost":{{"read_count":1,"read_length":2,"runtime":3,"write_count":4,"write_length":5}}{extra}}}"#
        )
    }

    #[test]
    fn receipt_optional_fields_and_helpers() {
        let r: TxReceipt = serde_json::from_str(&tx("")).unwrap();
        assert_eq!(r.execution_cost.runtime, 3);
        assert_eq!(r.microblock(), Ok(None));
        assert!(r.is_burnchain_op() && r.contract_abi().is_none() && r.burnchain_op.is_none());

        let r: TxReceipt = serde_json::from_str(&tx(
            r#","microblock_sequence":2,"microblock_hash":"0xaa","microblock_parent_hash":"0xbb","contract_abi":{"functions":[]}"#,
        ))
        .unwrap();
        assert_eq!(
            r.microblock(),
            Ok(Some(MicroblockRef { sequence: 2, hash: "0xaa", parent_hash: "0xbb" }))
        );
        assert!(r.contract_abi().is_some());

        let r: TxReceipt = serde_json::from_str(&tx(r#","microblock_hash":"0xaa""#)).unwrap();
        assert_eq!(r.microblock(), Err(PartialMicroblockInfo { txid: "0x01".into() }));
    }

    #[test]
    fn status_is_strict() {
        let err = serde_json::from_str::<TxReceipt>(&tx("").replace("success", "maybe")).unwrap_err();
        assert!(err.to_string().contains("unknown variant `maybe`"), "{err}");
        let r: TxReceipt = serde_json::from_str(&tx("").replace("success", "problematic_skipped")).unwrap();
        assert_eq!(r.status, TxStatus::ProblematicSkipped);
    }

    #[test]
    fn missing_required_receipt_field_is_named() {
        let json = tx("").replace(r#""raw_result":"0x0703","#, "");
        let err = serde_json::from_str::<TxReceipt>(&json).unwrap_err();
        assert!(err.to_string().contains("missing field `raw_result`"), "{err}");
    }

    #[test]
    fn reward_set_address_forms() {
        let rs: RewardSet = serde_json::from_str(
            r#"{"rewarded_addresses":["mkmW1",{"Standard":[{"bytes":"5146","version":26},"SerializeP2PKH"]}],
            "pox_ustx_threshold":"137250270000000000","start_cycle_state":{"missed_reward_slots":[]},
            "signers":[{"signing_key":"0298","weight":3,"stacked_amt":"457500900000000000"}]}"#,
        )
        .unwrap();
        assert_eq!(rs.rewarded_addresses[0], RewardedAddress::Text("mkmW1".into()));
        assert!(matches!(rs.rewarded_addresses[1], RewardedAddress::Structured(_)));
        assert_eq!(rs.pox_ustx_threshold, Some(137_250_270_000_000_000));
        assert_eq!(rs.signers.unwrap()[0].stacked_amt, 457_500_900_000_000_000);
    }
}
