//! What the node-RPC answers (`/v2`) read: the canonical tip, `/v2/info`'s state, an account and
//! a deployed contract, each at the canonical tip. A trait of its own beside
//! [`LedgerReader`](crate::LedgerReader) so that `/v2` can be served (and tested) from an
//! implementation of just these reads.

use crate::ledger::{ReadFuture, TipReader};

/// The canonical Stacks tip with the consensus data `/v2/info` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2Tip {
    pub block_height: i64,
    pub block_hash: String,
    pub index_block_hash: String,
    /// The tip's consensus hash, when the node's block event carried one.
    pub consensus_hash: Option<String>,
    /// The Stacks tip's own burn block height.
    pub burn_block_height: i64,
    /// Nakamoto tenure height, when recorded.
    pub tenure_height: Option<i64>,
}

/// A canonical burn block as `/v2/info` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2BurnBlock {
    pub height: i64,
    pub consensus_hash: Option<String>,
}

/// The newest streamed microblock on the tip (pre-Nakamoto unconfirmed state).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2Microblock {
    pub hash: String,
    pub sequence: i64,
}

/// Everything `/v2/info` derives from the ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2InfoState {
    pub tip: V2Tip,
    /// The highest canonical burn block (the burnchain tip as last announced).
    pub burn_tip: Option<V2BurnBlock>,
    /// The canonical burn block `stable_confirmations` (7 on bitcoin mainnet and testnet) below
    /// the burn tip, when stored.
    pub stable_burn: Option<V2BurnBlock>,
    pub microblock_tip: Option<V2Microblock>,
}

/// An account as the node's `/v2/accounts` reports it, at the canonical tip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct V2Account {
    /// Unlocked µSTX.
    pub balance: i64,
    pub locked: i64,
    /// Burn height at which `locked` unlocks; 0 when nothing is locked.
    pub unlock_height: i64,
    /// The next nonce: one past the highest used on the canonical chain (the node's nonce
    /// ignores the mempool too); always 0 for the boot address, as on the node.
    pub nonce: i64,
}

/// A contract deployed on the canonical chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2Contract {
    pub source: String,
    /// The ABI JSON text as the node emitted it, when it did.
    pub abi: Option<String>,
    pub clarity_version: Option<i64>,
    pub publish_height: i64,
}

/// The reads behind the `/v2` answers served from the ledger, the canonical tip
/// ([`TipReader`]) included.
pub trait V2Reader: TipReader {
    /// What `/v2/info` needs, or `None` before the first canonical block.
    fn v2_info_state(&self) -> ReadFuture<'_, Option<V2InfoState>>;

    /// `principal`'s balance, lock and next nonce at the canonical tip (zeros for a principal
    /// the ledger never saw, as the node answers for an empty account).
    fn v2_account<'a>(&'a self, principal: &'a str) -> ReadFuture<'a, V2Account>;

    /// The contract `contract_id` (`ADDR.name`) as deployed on the canonical chain (a failed
    /// deploy created nothing on the node).
    fn v2_contract<'a>(&'a self, contract_id: &'a str) -> ReadFuture<'a, Option<V2Contract>>;
}
