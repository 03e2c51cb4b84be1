//! The canonical chain tip as the explorer reads see it, and the reader every explorer read
//! trait builds on.

use std::future::Future;

use crate::ReadError;

/// The canonical chain tip, with the unanchored (microblock) tip when there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainTip {
    pub block_height: u64,
    /// `0x`-prefixed hex, as served.
    pub block_hash: String,
    pub index_block_hash: String,
    pub burn_block_height: u64,
    /// The latest canonical microblock built on the tip, if any.
    pub microblock: Option<(String, u32)>,
}

pub trait ExplorerReader: Send + Sync + 'static {
    fn chain_tip(&self) -> impl Future<Output = Result<Option<ChainTip>, ReadError>> + Send;
}
