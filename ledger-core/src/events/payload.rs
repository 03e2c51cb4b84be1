//! Typed models of the JSON bodies a Stacks node POSTs to an event observer.
//!
//! Unknown fields are ignored everywhere (nodes add fields over time); fields the ledger needs
//! are required, so a missing one fails with serde's "missing field `name`" message. Clarity
//! amounts arrive as decimal strings and are parsed to `u128` (see [`num`]).

mod attachment;
mod block;
mod burn;
mod burnchain_op;
mod event;
mod mempool;
mod microblocks;
pub mod num;

use serde::de::IgnoredAny;
use thiserror::Error;

use super::path::EventPath;

pub use attachment::{Attachment, AttachmentsNew};
pub use block::{
    ExecutionCost, MaturedMinerReward, MicroblockRef, NewBlock, PartialMicroblockInfo, RewardSet,
    RewardSetSigner, RewardedAddress, TxReceipt, TxStatus,
};
pub use burn::{NewBurnBlock, PoxTransaction, PoxTxRecipient, RewardRecipient};
pub use burnchain_op::{
    BurnchainOp, DelegateStxOp, OpAddress, PreStxOp, StackStxOp, TransferStxOp, VoteForAggregateKeyOp,
};
pub use event::{
    ContractEvent, EventBody, FtBurnEvent, FtMintEvent, FtTransferEvent, NftBurnEvent, NftMintEvent,
    NftTransferEvent, StxBurnEvent, StxLockEvent, StxMintEvent, StxTransferEvent, TxEvent,
};
pub use mempool::{DropMempoolTx, DropReason, NewMempoolTx};
pub use microblocks::NewMicroblocks;

/// A parsed event body, by path.
#[derive(Debug, Clone, PartialEq)]
pub enum EventPayload {
    NewBlock(Box<NewBlock>),
    NewBurnBlock(NewBurnBlock),
    NewMempoolTx(NewMempoolTx),
    DropMempoolTx(DropMempoolTx),
    NewMicroblocks(NewMicroblocks),
    AttachmentsNew(AttachmentsNew),
    /// `/stackerdb_chunks` and `/proposal_response`: kept in the raw log only, so the body is
    /// only checked to be JSON.
    Unmodelled(EventPath),
}

/// A body that does not match its path's model.
#[derive(Debug, Error)]
#[error("invalid {path} payload: {source}")]
pub struct PayloadError {
    pub path: EventPath,
    #[source]
    pub source: serde_json::Error,
}

impl EventPayload {
    pub fn parse(path: EventPath, json: &str) -> Result<EventPayload, PayloadError> {
        let wrap = |source| PayloadError { path, source };
        Ok(match path {
            EventPath::NewBlock => EventPayload::NewBlock(serde_json::from_str(json).map_err(wrap)?),
            EventPath::NewBurnBlock => EventPayload::NewBurnBlock(serde_json::from_str(json).map_err(wrap)?),
            EventPath::NewMempoolTx => EventPayload::NewMempoolTx(serde_json::from_str(json).map_err(wrap)?),
            EventPath::DropMempoolTx => {
                EventPayload::DropMempoolTx(serde_json::from_str(json).map_err(wrap)?)
            }
            EventPath::NewMicroblocks => {
                EventPayload::NewMicroblocks(serde_json::from_str(json).map_err(wrap)?)
            }
            EventPath::AttachmentsNew => {
                EventPayload::AttachmentsNew(serde_json::from_str(json).map_err(wrap)?)
            }
            EventPath::StackerDbChunks | EventPath::ProposalResponse => {
                serde_json::from_str::<IgnoredAny>(json).map_err(wrap)?;
                EventPayload::Unmodelled(path)
            }
        })
    }

    pub fn path(&self) -> EventPath {
        match self {
            EventPayload::NewBlock(_) => EventPath::NewBlock,
            EventPayload::NewBurnBlock(_) => EventPath::NewBurnBlock,
            EventPayload::NewMempoolTx(_) => EventPath::NewMempoolTx,
            EventPayload::DropMempoolTx(_) => EventPath::DropMempoolTx,
            EventPayload::NewMicroblocks(_) => EventPath::NewMicroblocks,
            EventPayload::AttachmentsNew(_) => EventPath::AttachmentsNew,
            EventPayload::Unmodelled(path) => *path,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Nakamoto `/new_block` shaped like the current node's output (no fixture has these
    /// fields populated).
    const NAKAMOTO_BLOCK: &str = r#"{
        "block_hash":"0xaa","block_height":120,"block_time":1715000000,
        "burn_block_hash":"0xbb","burn_block_height":240,"burn_block_time":1714999000,
        "consensus_hash":"0xcc","cycle_number":null,"reward_set":null,
        "index_block_hash":"0xdd","parent_index_block_hash":"0xee","parent_block_hash":"0xff",
        "parent_microblock":"0x0000000000000000000000000000000000000000000000000000000000000000",
        "parent_microblock_sequence":0,"miner_txid":"0x11",
        "parent_burn_block_hash":"0x22","parent_burn_block_height":239,"parent_burn_block_timestamp":1714998000,
        "anchored_cost":{"read_count":1,"read_length":2,"runtime":3,"write_count":4,"write_length":5},
        "confirmed_microblocks_cost":{"read_count":0,"read_length":0,"runtime":0,"write_count":0,"write_length":0},
        "pox_v1_unlock_height":25,"pox_v2_unlock_height":26,"pox_v3_unlock_height":27,"pox_v4_unlock_height":28,
        "tenure_height":61,"signer_bitvec":"000800000001ff",
        "signer_signature":["01ab","00cd"],"signer_signature_hash":"0x33","miner_signature":"0x44",
        "matured_miner_rewards":[],"transactions":[],"events":[]
    }"#;

    #[test]
    fn nakamoto_block_fields() {
        let EventPayload::NewBlock(b) = EventPayload::parse(EventPath::NewBlock, NAKAMOTO_BLOCK).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (b.block_time, b.tenure_height, b.effective_block_time()),
            (Some(1_715_000_000), Some(61), 1_715_000_000)
        );
        assert_eq!(b.signer_bitvec.as_deref(), Some("000800000001ff"));
        assert_eq!(b.signer_signature.as_deref(), Some(&["01ab".to_owned(), "00cd".to_owned()][..]));
        assert_eq!((b.pox_v4_unlock_height, b.reward_set.is_none()), (Some(28), true));
        assert_eq!(b.anchored_cost.unwrap().write_length, 5);
    }

    #[test]
    fn missing_required_block_field_names_the_field() {
        let json = NAKAMOTO_BLOCK.replace(r#""index_block_hash":"0xdd","#, "");
        let err = EventPayload::parse(EventPath::NewBlock, &json).unwrap_err();
        assert_eq!(err.path, EventPath::NewBlock);
        let msg = err.to_string();
        assert!(msg.starts_with("invalid /new_block payload: missing field `index_block_hash`"), "{msg}");
    }

    #[test]
    fn pre_nakamoto_block_time_falls_back_to_burn_time() {
        let json = NAKAMOTO_BLOCK.replace(r#""block_time":1715000000,"#, "");
        let EventPayload::NewBlock(b) = EventPayload::parse(EventPath::NewBlock, &json).unwrap() else {
            panic!()
        };
        assert_eq!(b.effective_block_time(), 1_714_999_000);
    }

    #[test]
    fn unmodelled_paths_only_need_json() {
        let p = EventPayload::parse(EventPath::StackerDbChunks, r#"{"anything":[1,2]}"#).unwrap();
        assert_eq!(p.path(), EventPath::StackerDbChunks);
        assert!(EventPayload::parse(EventPath::ProposalResponse, "{").is_err());
    }

    #[test]
    fn burn_block_and_wrong_shape() {
        let json = r#"{"burn_amount":0,"burn_block_hash":"0x49","burn_block_height":1,
            "reward_recipients":[{"recipient":"mkmW1","amt":10000}],"reward_slot_holders":["mkmW1"]}"#;
        let EventPayload::NewBurnBlock(b) = EventPayload::parse(EventPath::NewBurnBlock, json).unwrap()
        else {
            panic!()
        };
        assert_eq!((b.reward_recipients[0].amt, b.consensus_hash), (10_000, None));
        assert!(b.pox_transactions.is_empty());
        let json = r#"{"burn_amount":0,"burn_block_hash":"0x49","burn_block_height":1,"reward_recipients":[],
            "reward_slot_holders":[],"pox_transactions":[{"txid":"AB01",
            "reward_recipients":[{"recipient":"mkmW1","amt":700,"utxo_idx":2}]}]}"#;
        let EventPayload::NewBurnBlock(b) = EventPayload::parse(EventPath::NewBurnBlock, json).unwrap()
        else {
            panic!()
        };
        let t = &b.pox_transactions[0];
        let r = &t.reward_recipients[0];
        assert_eq!((t.txid.as_str(), r.utxo_idx, r.recipient.as_str(), r.amt), ("AB01", 2, "mkmW1", 700));
        assert!(EventPayload::parse(EventPath::NewMempoolTx, "{}").is_err());
    }
}
