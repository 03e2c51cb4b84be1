//! What the address, token, contract and search routes need from storage: plain models, the
//! store fills them, the handlers turn them into the incumbent's JSON.

use std::future::Future;

use crate::tip::TipReader;
use crate::tx::{MinedTx, PageTx, TxEvent};
use crate::Paging;
use crate::ReadError;

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

/// One inbound STX transfer (`/address/{p}/stx_inbound`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StxInbound {
    pub sender: String,
    pub amount: String,
    /// `0x` hex.
    pub memo: String,
    pub block_height: u64,
    pub tx_id: String,
    /// `bulk-send`, `stx-transfer` or `stx-transfer-memo`.
    pub transfer_type: String,
    pub tx_index: u32,
}

/// What the incumbent's principal ETag hashes (`last_tx:last_mempool_tx:pox_state`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrincipalActivity {
    /// The newest canonical transaction involving the principal.
    pub last_tx_id: Option<String>,
    /// Its newest pending transaction (only when asked for).
    pub last_mempool_tx_id: Option<String>,
    /// Set while STX of the principal are locked, so an unlock changes the ETag.
    pub pox_state: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FtHolder {
    pub address: String,
    pub balance: i128,
}

pub trait AddressReader: TipReader {
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
    /// A page of the canonical transactions the incumbent lists for `principal` (see
    /// `docs/store.md`, "Principal transactions"; not the boot block's) in blocks `from..=to`
    /// (`to` = `None`: the tip), newest first, and how many there are.
    fn address_txs(
        &self,
        principal: &str,
        from: u64,
        to: Option<u64>,
        paging: Paging,
    ) -> impl Future<Output = Result<(u64, Vec<MinedTx>), ReadError>> + Send;

    /// [`AddressReader::address_txs`] as the v1 page renders it: each transaction from its
    /// stored row text where the store has it ([`PageTx`]).
    fn address_txs_listed(
        &self,
        principal: &str,
        from: u64,
        to: Option<u64>,
        paging: Paging,
    ) -> impl Future<Output = Result<(u64, Vec<PageTx>), ReadError>> + Send {
        async move {
            let (total, txs) = self.address_txs(principal, from, to, paging).await?;
            Ok((total, txs.into_iter().map(PageTx::Mined).collect()))
        }
    }

    /// The transactions the incumbent's `transactions_with_transfers` lists for `principal` in
    /// blocks `from..=to`, newest first, and how many there are: those of
    /// [`AddressReader::address_txs`] and the boot block's, but not one whose only tie to
    /// `principal` is that it sponsored it (that route's rule is sender, token-transfer
    /// recipient, called or deployed contract, or a party of an STX, FT or NFT event; the fee
    /// payer is not among them). `paging` `None`: every one (its `height=N` answer).
    fn address_txs_with_transfers(
        &self,
        principal: &str,
        from: u64,
        to: Option<u64>,
        paging: Option<Paging>,
    ) -> impl Future<Output = Result<(u64, Vec<MinedTx>), ReadError>> + Send;
    /// Per transaction of `txs`: its STX/FT/NFT asset events that `principal` sends or
    /// receives, newest event first.
    fn principal_tx_events(
        &self,
        principal: &str,
        txs: &[MinedTx],
    ) -> impl Future<Output = Result<Vec<Vec<TxEvent>>, ReadError>> + Send;
    /// A page of the canonical asset and lock events of `principal` up to `height`, newest
    /// first, and how many there are.
    fn address_assets(
        &self,
        principal: &str,
        height: Option<u64>,
        paging: Paging,
    ) -> impl Future<Output = Result<(u64, Vec<TxEvent>), ReadError>> + Send;
    /// A page of the STX `principal` received in blocks `from..=to` (token transfers, transfer
    /// events with a memo, send-many-memo calls), newest first, and how many there are.
    fn stx_inbound(
        &self,
        principal: &str,
        from: u64,
        to: Option<u64>,
        paging: Paging,
    ) -> impl Future<Output = Result<(u64, Vec<StxInbound>), ReadError>> + Send;
    /// The principal's latest activity, for its ETag; the mempool part only when `mempool`.
    fn principal_activity(
        &self,
        principal: &str,
        mempool: bool,
    ) -> impl Future<Output = Result<PrincipalActivity, ReadError>> + Send;
}
