//! What the address, token, contract and search routes need from storage: plain models, the
//! store fills them, the handlers turn them into the incumbent's JSON.

use std::future::Future;

use crate::reader::{ExplorerReader, ReadError};
use crate::tx::MinedTx;
use crate::Paging;

/// A block named by a request (`until_block`, `block_height`, `block_hash`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UntilBlock {
    Height(u64),
    /// `0x`-prefixed lower-case block hash.
    Hash(String),
}

/// An account's STX state, as the incumbent derives it from the canonical chain.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StxTotals {
    pub total_sent: i128,
    pub total_received: i128,
    pub total_fees_sent: i128,
    pub total_miner_rewards_received: i128,
    pub locked: i128,
    pub lock_tx_id: Option<String>,
    pub lock_height: u64,
    pub burnchain_lock_height: u64,
    pub burnchain_unlock_height: u64,
}

impl StxTotals {
    /// The incumbent's `balance`: everything received less everything sent (locked included).
    pub fn balance(&self) -> i128 {
        self.total_received - self.total_sent - self.total_fees_sent + self.total_miner_rewards_received
    }
}

/// What the principal's pending mempool transactions would move.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MempoolDelta {
    pub inbound: i128,
    pub outbound: i128,
}

/// Per-asset FT or NFT totals of one principal (`balance` is the NFT count for NFTs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetTotals {
    pub asset_identifier: String,
    pub balance: i128,
    pub total_sent: i128,
    pub total_received: i128,
}

/// Highest nonces used by a principal (as origin or sponsor).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NonceState {
    pub last_executed: Option<u64>,
    pub last_mempool: Option<u64>,
    /// Every nonce (origin or sponsor) of the principal's pending mempool txs, when
    /// `last_executed` and `last_mempool` leave a gap.
    pub mempool_nonces: Vec<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FtHolder {
    pub address: String,
    pub balance: i128,
}

pub trait AddressReader: ExplorerReader {
    /// `None` when `at` names no stored block.
    fn resolve_block(&self, at: &UntilBlock) -> impl Future<Output = Result<Option<u64>, ReadError>> + Send;
    /// STX totals after the canonical block at `height` (the tip when `None`).
    fn stx_totals(
        &self,
        principal: &str,
        height: Option<u64>,
    ) -> impl Future<Output = Result<StxTotals, ReadError>> + Send;
    fn mempool_delta(&self, principal: &str) -> impl Future<Output = Result<MempoolDelta, ReadError>> + Send;
    /// `(fungible, non-fungible)` totals from the canonical asset events up to `height`.
    fn asset_totals(
        &self,
        principal: &str,
        height: Option<u64>,
    ) -> impl Future<Output = Result<(Vec<AssetTotals>, Vec<AssetTotals>), ReadError>> + Send;
    /// Current FT balances, a page of them ordered by token, and the total count.
    fn ft_balances(
        &self,
        principal: &str,
        token: Option<&str>,
        limit: u32,
        offset: u64,
    ) -> impl Future<Output = Result<(u64, Vec<(String, i128)>), ReadError>> + Send;
    fn nonces(
        &self,
        principal: &str,
        height: Option<u64>,
    ) -> impl Future<Output = Result<NonceState, ReadError>> + Send;
    /// Holders of `token` (`stx` or an FT asset identifier), richest first, with the total supply.
    fn ft_holders(
        &self,
        token: &str,
        limit: u32,
        offset: u64,
    ) -> impl Future<Output = Result<(u64, i128, Vec<FtHolder>), ReadError>> + Send;
    /// A page of the canonical transactions involving `principal` up to block `height` (the
    /// tip when `None`), newest first, and how many there are.
    fn address_txs(
        &self,
        principal: &str,
        height: Option<u64>,
        paging: Paging,
    ) -> impl Future<Output = Result<(u64, Vec<MinedTx>), ReadError>> + Send;
}
