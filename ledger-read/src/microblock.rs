//! What the microblock routes need from storage.

use std::future::Future;

use crate::tx::MinedTx;
use crate::Paging;
use crate::ReadError;

/// One microblock as the incumbent's `Microblock` entity shows it. Hashes are `0x` hex.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MicroblockRecord {
    pub canonical: bool,
    pub microblock_canonical: bool,
    pub microblock_hash: String,
    pub microblock_sequence: u32,
    pub microblock_parent_hash: String,
    /// The anchor block that confirms it (the tip's height + 1 while it is streamed).
    pub block_height: u64,
    /// The anchor block it builds on.
    pub parent_block_height: u64,
    pub parent_block_hash: String,
    /// The parent anchor block's burn block.
    pub parent_burn_block_hash: String,
    pub parent_burn_block_time: u64,
    pub parent_burn_block_height: u64,
    /// The confirming anchor block's hash; `0x` while streamed.
    pub block_hash: String,
    /// Its transaction ids, in the incumbent's order.
    pub txs: Vec<String>,
}

pub trait MicroblockReader: Send + Sync + 'static {
    /// A page of canonical microblocks (streamed on the tip first, then confirmed, newest
    /// first), and the incumbent's `total`: how many microblocks were accepted from streams.
    fn microblocks(
        &self,
        paging: Paging,
    ) -> impl Future<Output = Result<(u64, Vec<MicroblockRecord>), ReadError>> + Send;

    /// A microblock by `0x` hash: its canonical confirmed row, else its streamed row, else a
    /// row confirmed by a block on another fork.
    fn microblock(
        &self,
        hash: &str,
    ) -> impl Future<Output = Result<Option<MicroblockRecord>, ReadError>> + Send;

    /// The transactions of the microblocks streamed on the canonical tip and not orphaned,
    /// newest first.
    fn unanchored_txs(&self) -> impl Future<Output = Result<Vec<MinedTx>, ReadError>> + Send;
}
