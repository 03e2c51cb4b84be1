//! `/new_microblocks` (pre-Nakamoto): transactions streamed in microblocks after an anchor
//! block, before the next anchor block confirms (or orphans) them.

use serde::Deserialize;

use super::block::TxReceipt;
use super::event::TxEvent;

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct NewMicroblocks {
    /// Index block hash of the anchor block the stream builds on.
    pub parent_index_block_hash: String,
    pub burn_block_hash: String,
    pub burn_block_height: u64,
    pub burn_block_timestamp: u64,
    /// Receipts with `microblock_sequence/hash/parent_hash` set.
    pub transactions: Vec<TxReceipt>,
    pub events: Vec<TxEvent>,
}
