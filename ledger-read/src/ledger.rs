//! The reader trait. Its futures are boxed so that a surface can hold `Arc<dyn LedgerReader>`
//! (one allocation per read, next to a database round trip).

use std::future::Future;
use std::pin::Pin;

use crate::error::ReadError;
use crate::rows::{AccountState, BlockContents, BlockEventRow, LedgerBlock, TxRef};
use crate::tip::TipReader;

/// What a read returns.
pub type ReadFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, ReadError>> + Send + 'a>>;

/// The ledger as Rosetta reads it, its tip ([`TipReader`]) and account states
/// ([`AccountReader`]) included. Hashes and transaction ids are `0x`-prefixed lower-case hex;
/// heights are Stacks block heights.
pub trait LedgerReader: TipReader + AccountReader {
    /// The lowest canonical block (the genesis block the chain reports).
    fn genesis(&self) -> ReadFuture<'_, Option<LedgerBlock>>;

    /// The canonical block at `height`.
    fn block_at(&self, height: i64) -> ReadFuture<'_, Option<LedgerBlock>>;

    /// The block with this block hash, the canonical one first if forks share it.
    fn block_by_hash<'a>(&'a self, block_hash: &'a str) -> ReadFuture<'a, Option<LedgerBlock>>;

    /// The block with this index block hash (any fork).
    fn block_by_index_hash<'a>(&'a self, index_block_hash: &'a str) -> ReadFuture<'a, Option<LedgerBlock>>;

    /// The block's transactions and STX operations, in ledger order.
    fn block_contents<'a>(&'a self, index_block_hash: &'a str) -> ReadFuture<'a, BlockContents>;

    /// `account`'s next nonce counting its pending mempool transactions too: one past the
    /// highest of its canonical nonces and its pending mempool nonces, as origin or sponsor
    /// (0 for an account never seen). What Rosetta `/construction/metadata` hands out.
    fn next_nonce_with_mempool<'a>(&'a self, account: &'a str) -> ReadFuture<'a, i64>;

    /// The index block hash of the canonical block that mined `tx_id`.
    fn tx_block<'a>(&'a self, tx_id: &'a str) -> ReadFuture<'a, Option<String>>;

    /// The canonical transactions involving `principal` at or below `max_height`, newest first.
    fn account_txs<'a>(&'a self, principal: &'a str, max_height: i64) -> ReadFuture<'a, Vec<TxRef>>;

    /// Pending mempool transaction ids, oldest first.
    fn mempool_ids(&self) -> ReadFuture<'_, Vec<String>>;

    /// A pending mempool transaction's raw bytes (0x hex).
    fn mempool_raw<'a>(&'a self, tx_id: &'a str) -> ReadFuture<'a, Option<String>>;

    /// The block event log from sequence `from`, at most `limit` entries, in order.
    fn block_events(&self, from: i64, limit: i64) -> ReadFuture<'_, Vec<BlockEventRow>>;

    /// The last sequence of the block event log (0 when empty).
    fn max_sequence(&self) -> ReadFuture<'_, i64>;
}

/// An account's STX state, the one read behind every surface's balance of an account (Rosetta's
/// `/account/balance`, the node's `/v2/accounts`).
pub trait AccountReader: Send + Sync {
    /// `account`'s balances, lock and next nonce after the canonical block at `height`, or at
    /// the canonical tip when `None` (zeros for an account the chain has not seen by then).
    fn account<'a>(&'a self, account: &'a str, height: Option<i64>) -> ReadFuture<'a, AccountState>;
}
