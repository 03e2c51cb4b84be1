//! What the NFT routes need from storage.

use std::future::Future;

use crate::tip::TipReader;
use crate::ReadError;

/// An NFT a principal holds now (custody follows the latest canonical event).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NftHolding {
    pub asset_identifier: String,
    pub hex: String,
    pub repr: String,
    pub block_height: u64,
    pub tx_id: String,
}

/// One canonical NFT event (transfer, mint or burn).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NftEvent {
    pub tx_id: String,
    pub event_index: u64,
    /// `transfer`, `mint` or `burn`.
    pub asset_event_type: String,
    pub sender: Option<String>,
    pub recipient: Option<String>,
    pub hex: String,
    pub repr: String,
}

pub trait TokenReader: TipReader {
    /// NFTs held by `principal` (only of `assets` when not empty), newest first, and their count.
    fn nft_holdings(
        &self,
        principal: &str,
        assets: &[String],
        limit: u32,
        offset: u64,
    ) -> impl Future<Output = Result<(u64, Vec<NftHolding>), ReadError>> + Send;
    /// Every canonical event of one token, newest first, and their count.
    fn nft_history(
        &self,
        asset_identifier: &str,
        value_hex: &str,
        limit: u32,
        offset: u64,
    ) -> impl Future<Output = Result<(u64, Vec<NftEvent>), ReadError>> + Send;
    /// Canonical mints of an asset, newest first, and their count.
    fn nft_mints(
        &self,
        asset_identifier: &str,
        limit: u32,
        offset: u64,
    ) -> impl Future<Output = Result<(u64, Vec<NftEvent>), ReadError>> + Send;
}
