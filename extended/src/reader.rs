//! What the `/extended` routes need from storage. The store implements this; tests use fakes.

use std::future::Future;

use thiserror::Error;

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

#[derive(Debug, Error)]
pub enum ReadError {
    /// The database cannot be reached: the incumbent answers 503.
    #[error("the database service is unavailable")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("read failed: {0}")]
    Other(#[source] Box<dyn std::error::Error + Send + Sync>),
}

pub trait ExplorerReader: Send + Sync + 'static {
    fn chain_tip(&self) -> impl Future<Output = Result<Option<ChainTip>, ReadError>> + Send;
}
