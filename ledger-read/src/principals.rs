//! What the `/extended/v3/principals/{p}/…` routes need from storage. Balance changes are the
//! principal's operations (STX and token operations, see `docs/store.md`) folded per
//! transaction and asset by the store's one effect rule; this crate only pages and renders.

use std::future::Future;

use crate::tip::TipReader;
use crate::tx::MinedTx;
use crate::ReadError;

/// A transaction's place in the chain, as v3 transaction cursors name it
/// (`height:microblock_sequence:tx_index`, [`ANCHORED`] for anchored transactions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TxPosition {
    pub block_height: u64,
    pub microblock_sequence: u32,
    pub tx_index: u32,
}

/// The microblock sequence the incumbent gives anchored transactions.
pub const ANCHORED: u32 = 2_147_483_647;

impl std::fmt::Display for TxPosition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.block_height, self.microblock_sequence, self.tx_index)
    }
}

/// The asset class of a balance change, in the incumbent's order (its `asset_type` 1, 2, 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AssetKind {
    Stx,
    Ft,
    Nft,
}

impl AssetKind {
    /// The number the incumbent's cursors carry.
    pub fn code(self) -> u8 {
        match self {
            AssetKind::Stx => 1,
            AssetKind::Ft => 2,
            AssetKind::Nft => 3,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            AssetKind::Stx => "stx",
            AssetKind::Ft => "ft",
            AssetKind::Nft => "nft",
        }
    }
}

/// What one canonical transaction did to one asset of a principal. STX counts the fee the
/// principal paid as sent; an NFT counts one per token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BalanceChange {
    pub tx_id: String,
    pub position: TxPosition,
    pub kind: AssetKind,
    /// `stx` for STX, else the token's asset identifier.
    pub asset_identifier: String,
    pub sent: u128,
    pub received: u128,
}

/// One row of a principal's transaction list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrincipalTx {
    pub tx: MinedTx,
    /// As shown (the boot block's transactions with the incumbent's index).
    pub position: TxPosition,
    pub sender: String,
    /// The sponsor of a sponsored transaction.
    pub sponsor: Option<String>,
    /// STX sent (fee included) and received by the principal in it.
    pub stx_sent: u128,
    pub stx_received: u128,
    /// Whether it changed the principal's STX (or made it pay a fee, even 0), FT, NFT balances.
    pub affected: [bool; 3],
}

/// STX locked by PoX at the tip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StxLock {
    pub amount: i128,
    pub pox_version: u32,
    pub lock_tx_id: String,
    pub stacks_lock_height: u64,
    pub burn_lock_height: u64,
    pub burn_unlock_height: u64,
}

pub trait PrincipalsReader: TipReader {
    /// The principal's canonical transactions (the incumbent's `principal_txs` set), newest
    /// first, starting at `from` (inclusive) when given, at most `limit`.
    fn principal_txs(
        &self,
        principal: &str,
        from: Option<TxPosition>,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<PrincipalTx>, ReadError>> + Send;

    /// The positions of up to `limit` of the principal's transactions after `after` (newer),
    /// oldest first: the last one starts the previous page.
    fn principal_txs_after(
        &self,
        principal: &str,
        after: TxPosition,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<TxPosition>, ReadError>> + Send;

    /// Whether one of the principal's transactions is at exactly `at`.
    fn principal_tx_at(
        &self,
        principal: &str,
        at: TxPosition,
    ) -> impl Future<Output = Result<bool, ReadError>> + Send;

    /// How many transactions the principal's list holds.
    fn principal_tx_count(&self, principal: &str) -> impl Future<Output = Result<u64, ReadError>> + Send;

    /// The principal's balance changes in those of `tx_ids` that are canonical: newest
    /// transaction first, then STX, FT, NFT, each by asset identifier.
    fn balance_changes(
        &self,
        principal: &str,
        tx_ids: &[String],
    ) -> impl Future<Output = Result<Vec<BalanceChange>, ReadError>> + Send;

    /// The principal's STX lock in force at the tip, if any.
    fn stx_lock(&self, principal: &str) -> impl Future<Output = Result<Option<StxLock>, ReadError>> + Send;

    /// The principal's positive FT balances `(asset, balance)`, any order.
    fn ft_positions(
        &self,
        principal: &str,
    ) -> impl Future<Output = Result<Vec<(String, u128)>, ReadError>> + Send;

    /// The principal's stored balance of one FT, 0 without a row. Negative when the stored
    /// history starts mid-chain (an account that spends what it got before), as the incumbent's
    /// point lookup shows it.
    fn ft_balance(
        &self,
        principal: &str,
        asset: &str,
    ) -> impl Future<Output = Result<i128, ReadError>> + Send;

    /// The NFTs the principal holds `(asset, value hex)`, any order.
    fn nft_positions(
        &self,
        principal: &str,
    ) -> impl Future<Output = Result<Vec<(String, String)>, ReadError>> + Send;
}
