//! What the v3 transaction routes read (the store implements it; no SQL here).

use std::future::Future;

use crate::chain::HeightOrHash;
use crate::cursor::{MempoolCursor, TxCursor, ANCHORED_SEQUENCE};
use crate::tx::{MempoolTx, MinedTx, TxEvent};
use crate::ReadError;

/// A canonical mined transaction (streamed, not yet anchored ones included) with what v3 shows
/// beyond the v1 row: its parent block's index hash.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct V3Tx {
    pub tx: MinedTx,
    pub parent_index_block_hash: String,
}

impl V3Tx {
    /// Its place in the transaction order (`tx_index` as shown).
    pub fn position(&self) -> TxCursor {
        TxCursor {
            block_height: self.tx.block_height,
            microblock_sequence: self.tx.microblock_sequence.map_or(ANCHORED_SEQUENCE, u64::from),
            tx_index: u64::from(self.tx.tx_index),
        }
    }
}

/// A transaction in the mempool, not pruned.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct V3MempoolTx {
    pub tx: MempoolTx,
    /// The canonical tip's height when it arrived.
    pub receipt_block_height: u64,
}

impl V3MempoolTx {
    pub fn position(&self) -> MempoolCursor {
        MempoolCursor { receipt_time: self.tx.receipt_time, tx_id: self.tx.tx_id.clone() }
    }
}

/// Either (mined preferred), as `/transactions/{tx_id}` answers.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum V3AnyTx {
    Mined(V3Tx),
    Mempool(V3MempoolTx),
}

/// The block a block's transaction list pages through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V3Block {
    pub index_block_hash: String,
    /// The block's own transactions (the incumbent's `blocks.tx_count`).
    pub tx_count: u64,
}

/// Which transactions a list pages through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxScope<'a> {
    /// Every canonical transaction, streamed ones not yet anchored included.
    All,
    /// The canonical transactions of one block (its index block hash).
    Block(&'a str),
}

/// Which pending transactions a mempool list pages through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MempoolScope<'a> {
    /// Every pending transaction.
    All,
    /// Those involving a principal as the incumbent counts it: its sender, a token transfer's
    /// recipient, the deployed contract or the called contract (not its sponsor).
    Principal(&'a str),
}

pub trait V3TxReader: Send + Sync + 'static {
    /// A transaction by `0x` id: its canonical (microblock-canonical) mined row, streamed and
    /// not yet anchored ones included; else its mempool entry if not pruned.
    fn v3_tx(&self, tx_id: &str) -> impl Future<Output = Result<Option<V3AnyTx>, ReadError>> + Send;

    /// The canonical mined transaction's `event_count` and up to `take` of its events from
    /// `event_index` `from` on; `None` when it is not mined (canonically).
    fn v3_tx_events(
        &self,
        tx_id: &str,
        from: u64,
        take: u32,
    ) -> impl Future<Output = Result<Option<(u64, Vec<TxEvent>)>, ReadError>> + Send;

    /// The canonical block named by `at` (a hash names a block or index block hash).
    fn v3_block(&self, at: &HeightOrHash) -> impl Future<Output = Result<Option<V3Block>, ReadError>> + Send;

    /// The number of canonical transactions in canonical blocks (the incumbent's
    /// `chain_tip.tx_count`).
    fn v3_tx_total(&self) -> impl Future<Output = Result<u64, ReadError>> + Send;

    /// Up to `take` transactions of `scope` at or before `from` (all when `None`), newest first.
    fn v3_txs(
        &self,
        scope: TxScope<'_>,
        from: Option<TxCursor>,
        take: u32,
    ) -> impl Future<Output = Result<Vec<V3Tx>, ReadError>> + Send;

    /// The positions of up to `take` transactions of `scope` after `after`, oldest first (the
    /// previous page).
    fn v3_positions_after(
        &self,
        scope: TxScope<'_>,
        after: TxCursor,
        take: u32,
    ) -> impl Future<Output = Result<Vec<TxCursor>, ReadError>> + Send;

    /// Whether a transaction of `scope` sits exactly at `at`.
    fn v3_tx_at(
        &self,
        scope: TxScope<'_>,
        at: TxCursor,
    ) -> impl Future<Output = Result<bool, ReadError>> + Send;

    /// The number of pending (not pruned) mempool transactions of `scope` and up to `take` of
    /// them at or after `from` in the mempool order (newest receipt first, then tx id
    /// descending).
    fn v3_mempool(
        &self,
        scope: MempoolScope<'_>,
        from: Option<&MempoolCursor>,
        take: u32,
    ) -> impl Future<Output = Result<(u64, Vec<V3MempoolTx>), ReadError>> + Send;

    /// The positions of up to `take` pending transactions of `scope` before `before` in the
    /// mempool order, nearest first (the previous page).
    fn v3_mempool_before(
        &self,
        scope: MempoolScope<'_>,
        before: &MempoolCursor,
        take: u32,
    ) -> impl Future<Output = Result<Vec<MempoolCursor>, ReadError>> + Send;
}
