//! What the node-RPC answers (`/v2`) read: `/v2/info`'s state and a deployed contract at the
//! canonical tip, beside the tip and account states every surface reads. A trait of its own beside
//! [`LedgerReader`](crate::LedgerReader) so that `/v2` can be served (and tested) from an
//! implementation of just these reads.

use crate::ledger::{AccountReader, ReadFuture};
use crate::tip::{Tip, TipReader};

/// A canonical burn block as `/v2/info` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2BurnBlock {
    pub height: i64,
    pub consensus_hash: Option<String>,
}

/// Everything `/v2/info` derives from the ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2InfoState {
    /// The canonical tip, its microblock tip included.
    pub tip: Tip,
    /// The highest canonical burn block (the burnchain tip as last announced).
    pub burn_tip: Option<V2BurnBlock>,
    /// The canonical burn block `stable_confirmations` (7 on bitcoin mainnet and testnet) below
    /// the burn tip, when stored.
    pub stable_burn: Option<V2BurnBlock>,
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
/// ([`TipReader`]) and account states ([`AccountReader`]) included.
pub trait V2Reader: TipReader + AccountReader {
    /// What `/v2/info` needs, or `None` before the first canonical block.
    fn v2_info_state(&self) -> ReadFuture<'_, Option<V2InfoState>>;

    /// The contract `contract_id` (`ADDR.name`) as deployed on the canonical chain (a failed
    /// deploy created nothing on the node).
    fn v2_contract<'a>(&'a self, contract_id: &'a str) -> ReadFuture<'a, Option<V2Contract>>;
}
