//! The node's event-observer JSON, written field for field the way stacks-node sends it (the
//! shapes in the recorded fixtures). Only serialization lives here; what goes in is decided by
//! `txgen` and `chain`. Amounts the node writes as decimal strings are strings here too.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

/// A transaction's or a block's execution cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Cost {
    pub read_count: u64,
    pub read_length: u64,
    pub runtime: u64,
    pub write_count: u64,
    pub write_length: u64,
}

impl std::ops::AddAssign for Cost {
    fn add_assign(&mut self, o: Cost) {
        self.read_count += o.read_count;
        self.read_length += o.read_length;
        self.runtime += o.runtime;
        self.write_count += o.write_count;
        self.write_length += o.write_length;
    }
}

/// An event body, by the node's `type` name. Addresses and asset ids are already text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventBody {
    StxTransfer {
        sender: String,
        recipient: String,
        amount: u128,
        memo: Option<String>,
    },
    StxMint {
        recipient: String,
        amount: u128,
    },
    /// `stx-burn?` (BNS preorders).
    StxBurn {
        sender: String,
        amount: u128,
    },
    StxLock {
        locked_amount: u128,
        unlock_height: u64,
        locked_address: String,
        contract_identifier: String,
    },
    FtTransfer {
        asset: String,
        sender: String,
        recipient: String,
        amount: u128,
    },
    FtMint {
        asset: String,
        recipient: String,
        amount: u128,
    },
    NftTransfer {
        asset: String,
        sender: String,
        recipient: String,
        raw_value: String,
    },
    NftMint {
        asset: String,
        recipient: String,
        raw_value: String,
    },
    NftBurn {
        asset: String,
        sender: String,
        raw_value: String,
    },
    /// A `print`: `raw_value` is the 0x hex of the printed Clarity value.
    Print {
        contract_identifier: String,
        raw_value: String,
    },
}

impl EventBody {
    pub fn kind(&self) -> &'static str {
        match self {
            EventBody::StxTransfer { .. } => "stx_transfer_event",
            EventBody::StxMint { .. } => "stx_mint_event",
            EventBody::StxBurn { .. } => "stx_burn_event",
            EventBody::StxLock { .. } => "stx_lock_event",
            EventBody::FtTransfer { .. } => "ft_transfer_event",
            EventBody::FtMint { .. } => "ft_mint_event",
            EventBody::NftTransfer { .. } => "nft_transfer_event",
            EventBody::NftMint { .. } => "nft_mint_event",
            EventBody::NftBurn { .. } => "nft_burn_event",
            EventBody::Print { .. } => "contract_event",
        }
    }
}

impl Serialize for EventBody {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match self {
            EventBody::StxTransfer { sender, recipient, amount, memo } => {
                m.serialize_entry("amount", &amount.to_string())?;
                if let Some(memo) = memo {
                    m.serialize_entry("memo", memo)?;
                }
                m.serialize_entry("recipient", recipient)?;
                m.serialize_entry("sender", sender)?;
            }
            EventBody::StxMint { recipient, amount } => {
                m.serialize_entry("amount", &amount.to_string())?;
                m.serialize_entry("recipient", recipient)?;
            }
            EventBody::StxBurn { sender, amount } => {
                m.serialize_entry("amount", &amount.to_string())?;
                m.serialize_entry("sender", sender)?;
            }
            EventBody::StxLock { locked_amount, unlock_height, locked_address, contract_identifier } => {
                m.serialize_entry("locked_amount", &locked_amount.to_string())?;
                m.serialize_entry("unlock_height", &unlock_height.to_string())?;
                m.serialize_entry("locked_address", locked_address)?;
                m.serialize_entry("contract_identifier", contract_identifier)?;
            }
            EventBody::FtTransfer { asset, sender, recipient, amount } => {
                m.serialize_entry("amount", &amount.to_string())?;
                m.serialize_entry("asset_identifier", asset)?;
                m.serialize_entry("recipient", recipient)?;
                m.serialize_entry("sender", sender)?;
            }
            EventBody::FtMint { asset, recipient, amount } => {
                m.serialize_entry("amount", &amount.to_string())?;
                m.serialize_entry("asset_identifier", asset)?;
                m.serialize_entry("recipient", recipient)?;
            }
            EventBody::NftTransfer { asset, sender, recipient, raw_value } => {
                m.serialize_entry("asset_identifier", asset)?;
                m.serialize_entry("raw_value", raw_value)?;
                m.serialize_entry("recipient", recipient)?;
                m.serialize_entry("sender", sender)?;
            }
            EventBody::NftMint { asset, recipient, raw_value } => {
                m.serialize_entry("asset_identifier", asset)?;
                m.serialize_entry("raw_value", raw_value)?;
                m.serialize_entry("recipient", recipient)?;
            }
            EventBody::NftBurn { asset, sender, raw_value } => {
                m.serialize_entry("asset_identifier", asset)?;
                m.serialize_entry("raw_value", raw_value)?;
                m.serialize_entry("sender", sender)?;
            }
            EventBody::Print { contract_identifier, raw_value } => {
                m.serialize_entry("contract_identifier", contract_identifier)?;
                m.serialize_entry("raw_value", raw_value)?;
                m.serialize_entry("topic", "print")?;
            }
        }
        m.end()
    }
}

/// `{txid, event_index, committed, type, <type>: body}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxEvent {
    pub txid: String,
    /// Position in the block's (or microblock payload's) event list.
    pub event_index: u32,
    /// False for the rolled-back events of a post-condition abort.
    pub committed: bool,
    pub body: EventBody,
}

impl Serialize for TxEvent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let kind = self.body.kind();
        let mut m = s.serialize_map(Some(5))?;
        m.serialize_entry("txid", &self.txid)?;
        m.serialize_entry("event_index", &self.event_index)?;
        m.serialize_entry("committed", &self.committed)?;
        m.serialize_entry("type", kind)?;
        m.serialize_entry(kind, &self.body)?;
        m.end()
    }
}

/// Where a transaction sat in a microblock stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MicroblockPos {
    pub sequence: u16,
    pub hash: String,
    pub parent_hash: String,
}

/// A transaction receipt.
#[derive(Debug, Clone, PartialEq)]
pub struct Receipt {
    pub txid: String,
    pub tx_index: u32,
    pub raw_tx: String,
    /// `success`, `abort_by_response` or `abort_by_post_condition`.
    pub status: &'static str,
    pub raw_result: String,
    pub execution_cost: Cost,
    /// For contract deploys whose analysis passed.
    pub contract_abi: Option<serde_json::Value>,
    /// Why a failed deploy failed (stacks-node's text); `null` otherwise.
    pub vm_error: Option<String>,
    /// Send the ABI as `contract_interface` (nodes since 2025) rather than `contract_abi`.
    pub contract_interface_key: bool,
    pub microblock: Option<MicroblockPos>,
}

impl Serialize for Receipt {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(12))?;
        m.serialize_entry("txid", &self.txid)?;
        m.serialize_entry("tx_index", &self.tx_index)?;
        m.serialize_entry("raw_tx", &self.raw_tx)?;
        m.serialize_entry("status", self.status)?;
        m.serialize_entry("raw_result", &self.raw_result)?;
        m.serialize_entry("execution_cost", &self.execution_cost)?;
        let abi_key = if self.contract_interface_key { "contract_interface" } else { "contract_abi" };
        m.serialize_entry(abi_key, &self.contract_abi)?;
        m.serialize_entry("burnchain_op", &None::<()>)?;
        m.serialize_entry("vm_error", &self.vm_error)?;
        let mb = self.microblock.as_ref();
        m.serialize_entry("microblock_sequence", &mb.map(|p| p.sequence))?;
        m.serialize_entry("microblock_hash", &mb.map(|p| &p.hash))?;
        m.serialize_entry("microblock_parent_hash", &mb.map(|p| &p.parent_hash))?;
        m.end()
    }
}

fn dec<S: Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&v.to_string())
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MaturedReward {
    /// The rewarded block's index block hash (the node's field name is historical).
    pub from_index_consensus_hash: String,
    pub from_stacks_block_hash: String,
    pub recipient: String,
    pub miner_address: String,
    #[serde(serialize_with = "dec")]
    pub coinbase_amount: u128,
    #[serde(serialize_with = "dec")]
    pub tx_fees_anchored: u128,
    #[serde(serialize_with = "dec")]
    pub tx_fees_streamed_confirmed: u128,
    #[serde(serialize_with = "dec")]
    pub tx_fees_streamed_produced: u128,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RewardSet {
    pub rewarded_addresses: Vec<String>,
    /// Nakamoto-era signers; only on chains with PoX-5 traffic (older chains stay as they were).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signers: Option<Vec<RewardSetSigner>>,
    #[serde(serialize_with = "dec")]
    pub pox_ustx_threshold: u128,
}

/// One signer of a reward set, as stacks-node sends it (`stacked_amt` as decimal text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RewardSetSigner {
    pub signing_key: String,
    pub weight: u64,
    #[serde(serialize_with = "dec")]
    pub stacked_amt: u128,
}

/// `/new_block`.
#[derive(Debug, Serialize)]
pub struct NewBlock<'a> {
    pub block_hash: String,
    pub block_height: u64,
    pub index_block_hash: String,
    pub parent_index_block_hash: String,
    pub parent_block_hash: String,
    pub parent_microblock: String,
    pub parent_microblock_sequence: u16,
    pub burn_block_hash: String,
    pub burn_block_height: u64,
    pub burn_block_time: u64,
    pub miner_txid: String,
    pub parent_burn_block_hash: String,
    pub parent_burn_block_height: u64,
    pub parent_burn_block_timestamp: u64,
    pub anchored_cost: Cost,
    pub confirmed_microblocks_cost: Cost,
    pub pox_v1_unlock_height: u64,
    pub pox_v2_unlock_height: u64,
    pub pox_v3_unlock_height: u64,
    pub reward_set: Option<&'a RewardSet>,
    pub cycle_number: Option<u64>,
    pub matured_miner_rewards: &'a [MaturedReward],
    pub transactions: &'a [Receipt],
    pub events: &'a [TxEvent],
    /// Current nodes only (`DevnetConfig::current_node_fields`): the coinbase height, and the
    /// block's consensus hash.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenure_height: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consensus_hash: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RewardRecipient {
    pub recipient: String,
    pub amt: u64,
}

/// `/new_burn_block`.
#[derive(Debug, Serialize)]
pub struct NewBurnBlock<'a> {
    pub burn_block_hash: String,
    pub burn_block_height: u64,
    pub burn_amount: u64,
    pub reward_recipients: &'a [RewardRecipient],
    pub reward_slot_holders: &'a [String],
    pub consensus_hash: String,
    pub parent_burn_block_hash: String,
}

/// `/new_microblocks`.
#[derive(Debug, Serialize)]
pub struct NewMicroblocks<'a> {
    pub parent_index_block_hash: String,
    pub burn_block_hash: String,
    pub burn_block_height: u64,
    pub burn_block_timestamp: u64,
    pub transactions: &'a [Receipt],
    pub events: &'a [TxEvent],
}

/// `/drop_mempool_tx`.
#[derive(Debug, Serialize)]
pub struct DropMempoolTx<'a> {
    pub dropped_txids: &'a [String],
    pub reason: &'static str,
    pub new_txid: Option<&'a str>,
}

/// One entry of `/attachments/new` (stacks-node's `make_new_attachment_payload`, keys in the
/// order its `serde_json` map writes them).
#[derive(Debug, Serialize)]
pub struct NewAttachment {
    pub attachment_index: u128,
    pub block_height: u64,
    /// 0x hex of the attachment's bytes (the zonefile).
    pub content: String,
    pub content_hash: String,
    pub contract_id: String,
    pub index_block_hash: String,
    pub metadata: String,
    pub tx_id: String,
}

/// Serializes a payload. Our types cannot fail to serialize (string keys, no non-finite floats).
pub fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ledger_core::events::payload::{EventBody as Parsed, TxEvent as ParsedEvent, TxReceipt};

    #[test]
    fn events_round_trip_through_the_ledger_models() {
        let ev = TxEvent {
            txid: "0x01".into(),
            event_index: 3,
            committed: true,
            body: EventBody::StxLock {
                locked_amount: 5,
                unlock_height: 140,
                locked_address: "ST1".into(),
                contract_identifier: "ST000000000000000000002AMW42H.pox-4".into(),
            },
        };
        let parsed: ParsedEvent = serde_json::from_str(&to_json(&ev)).unwrap();
        assert_eq!((parsed.event_index, parsed.committed), (3, true));
        let Parsed::StxLock(l) = parsed.body else { panic!() };
        assert_eq!((l.locked_amount, l.unlock_height), (5, 140));
    }

    #[test]
    fn receipt_microblock_fields_are_all_or_nothing() {
        let mut r = Receipt {
            txid: "0x02".into(),
            tx_index: 1,
            raw_tx: "0x00".into(),
            status: "success",
            raw_result: "0x0703".into(),
            execution_cost: Cost::default(),
            contract_abi: None,
            vm_error: None,
            contract_interface_key: false,
            microblock: None,
        };
        let parsed: TxReceipt = serde_json::from_str(&to_json(&r)).unwrap();
        assert_eq!(parsed.microblock(), Ok(None));
        r.microblock = Some(MicroblockPos { sequence: 2, hash: "0xaa".into(), parent_hash: "0xbb".into() });
        let parsed: TxReceipt = serde_json::from_str(&to_json(&r)).unwrap();
        assert_eq!(parsed.microblock().unwrap().unwrap().sequence, 2);
    }
}
