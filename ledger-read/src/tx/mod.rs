//! What the transaction routes need from storage.

pub mod model;
pub mod v3;

use std::future::Future;

pub use model::{AnyTx, ListedTx, MempoolTx, MinedTx, PageTx, TxEvent};

use crate::Paging;
use crate::ReadError;

/// `sort_by` of the transaction list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TxSort {
    #[default]
    BlockHeight,
    BurnBlockTime,
    Fee,
}

/// The filters of `GET /extended/v1/tx`, validated.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TxListFilter {
    /// Empty: every type.
    pub types: Vec<String>,
    pub ascending: bool,
    pub sort: TxSort,
    pub from_address: Option<String>,
    pub to_address: Option<String>,
    pub start_time: Option<u64>,
    pub end_time: Option<u64>,
    pub contract_id: Option<String>,
    pub function_name: Option<String>,
    pub nonce: Option<u64>,
    /// `unanchored=true`: also the tip's streamed microblock transactions not anchored yet.
    pub unanchored: bool,
}

/// `order_by` of the mempool list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MempoolSort {
    #[default]
    Age,
    Size,
    Fee,
}

/// The filters of `GET /extended/v1/tx/mempool`, validated.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MempoolFilter {
    pub sender_address: Option<String>,
    pub recipient_address: Option<String>,
    /// Sender, recipient or called contract.
    pub address: Option<String>,
    pub sort: MempoolSort,
    pub ascending: bool,
}

/// A block named by hash or by height.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockRef {
    Hash(String),
    Height(u64),
}

pub trait TxReader: Send + Sync + 'static {
    /// A transaction by `0x` id, as the incumbent's `searchTx`: its canonical mined row, else
    /// its mempool entry (any status), else none. A transaction mined only on another fork
    /// and not (back) in the mempool is not found: a reorg puts the orphaned block's
    /// transactions back into the mempool, but a block that was never canonical leaves
    /// nothing there. Streamed microblock transactions not yet anchored count only when
    /// `unanchored`.
    fn tx(
        &self,
        tx_id: &str,
        unanchored: bool,
    ) -> impl Future<Output = Result<Option<AnyTx>, ReadError>> + Send;

    /// Any stored row of a transaction (`/tx/{id}/raw`): its canonical mined row, else its
    /// latest row on another fork, else its mempool entry; streamed microblock transactions
    /// not yet anchored included.
    fn tx_any_row(&self, tx_id: &str) -> impl Future<Output = Result<Option<AnyTx>, ReadError>> + Send;

    /// A page of a mined transaction's events (in the block it was mined in), by event index.
    fn tx_events(
        &self,
        tx: &MinedTx,
        paging: Paging,
    ) -> impl Future<Output = Result<Vec<TxEvent>, ReadError>> + Send;

    /// Canonical transactions matching `filter`, and how many there are: each from its stored
    /// row text where the store has it ([`PageTx`]).
    fn tx_list(
        &self,
        filter: &TxListFilter,
        paging: Paging,
    ) -> impl Future<Output = Result<(u64, Vec<PageTx>), ReadError>> + Send;

    /// The transactions of a canonical block (newest microblock first, the anchor block's own
    /// first of all), and how many there are.
    fn block_txs(
        &self,
        block: &BlockRef,
        paging: Paging,
    ) -> impl Future<Output = Result<(u64, Vec<MinedTx>), ReadError>> + Send;

    /// Whether any block, on any fork, has this hash or height.
    fn block_known(&self, block: &BlockRef) -> impl Future<Output = Result<bool, ReadError>> + Send;

    /// Pending mempool transactions matching `filter`, and how many there are.
    fn mempool_list(
        &self,
        filter: &MempoolFilter,
        paging: Paging,
    ) -> impl Future<Output = Result<(u64, Vec<MempoolTx>), ReadError>> + Send;

    /// `(tx_type, fee)` of every pending mempool transaction.
    fn mempool_fees(&self) -> impl Future<Output = Result<Vec<(String, u64)>, ReadError>> + Send;
}

/// One pending mempool transaction, as the mempool stats need it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MempoolStatRow {
    pub tx_type: String,
    pub fee: u64,
    /// The serialized transaction's length.
    pub byte_size: u64,
    /// The canonical tip's height when it entered the mempool.
    pub receipt_block_height: u64,
}

/// Whose events `GET /extended/v1/tx/events` lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventOwner {
    /// `0x` id.
    TxId(String),
    /// A principal: the sender or recipient of asset events, the locked address of STX locks,
    /// the contract of contract logs.
    Address(String),
}

/// The validated filters of `GET /extended/v1/tx/events`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFilter {
    pub owner: EventOwner,
    /// Stored event kinds (`stx_transfer`, `contract_log`, ...), sorted, never empty.
    pub kinds: Vec<String>,
}

/// The reads of the mempool stats and event search routes.
pub trait TxStatsReader: Send + Sync + 'static {
    /// Every pending mempool transaction.
    fn mempool_stat_rows(&self) -> impl Future<Output = Result<Vec<MempoolStatRow>, ReadError>> + Send;

    /// A page of canonical events matching `filter`, newest first (block height, microblock
    /// sequence, tx index, event index, all descending).
    fn events_filtered(
        &self,
        filter: &EventFilter,
        paging: Paging,
    ) -> impl Future<Output = Result<Vec<TxEvent>, ReadError>> + Send;
}
