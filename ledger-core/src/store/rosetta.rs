//! The ledger read interface ([`LedgerReader`], crate `ledger-read`) answered from the store:
//! what Rosetta reads. Every query is an index seek (blocks by height or hash, operations and
//! txs by block, balance rows by account and height).

use ledger_read::{
    BlockContents, BlockEventRow, LedgerBlock, LedgerReader, LedgerTx, OpRow, ReadFuture, TxRef,
};

use super::db_row::DbRow;
use super::sql::{get_bool, select};
use super::{Store, StoreError};

/// Loads `raw_tx` / `raw_result` only for the transactions whose payload is parsed into
/// operation metadata (`src/rosetta/stacking.rs`), not for every contract deployment.
const PAYLOAD_NEEDED: &str = "(tx_type = 'tenure_change' OR (tx_type = 'contract_call' AND function_name IN \
     ('stack-stx', 'delegate-stx', 'revoke-delegate-stx')))";

/// The columns of a [`LedgerBlock`] (of `blocks k`).
pub(super) const BLOCK_FIELDS: &str =
    "k.index_block_hash, k.block_hash, k.block_height, k.parent_block_hash, \
     k.block_time, k.burn_block_time, k.burn_block_height, k.consensus_hash, k.tenure_height, \
     (CASE WHEN k.signer_bitvec IS NULL THEN 0 ELSE 1 END) AS nakamoto, \
     (CASE WHEN k.canonical THEN 1 ELSE 0 END) AS canonical, \
     (CASE WHEN k.materialized THEN 1 ELSE 0 END) AS materialized";

/// A [`LedgerBlock`] from a row of [`BLOCK_FIELDS`].
pub(super) fn ledger_block(r: &DbRow) -> Result<LedgerBlock, sqlx::Error> {
    let nakamoto = get_bool(r, "nakamoto")?;
    let seconds: i64 = if nakamoto { r.try_get("block_time")? } else { r.try_get("burn_block_time")? };
    Ok(LedgerBlock {
        index_block_hash: r.try_get("index_block_hash")?,
        block_hash: r.try_get("block_hash")?,
        block_height: r.try_get("block_height")?,
        parent_block_hash: r.try_get("parent_block_hash")?,
        timestamp_ms: seconds.saturating_mul(1000),
        burn_block_height: r.try_get("burn_block_height")?,
        consensus_hash: r.try_get("consensus_hash")?,
        tenure_height: r.try_get("tenure_height")?,
        canonical: get_bool(r, "canonical")?,
        materialized: get_bool(r, "materialized")?,
    })
}

impl Store {
    /// The canonical block at `height`.
    pub async fn rosetta_block_at(&self, height: i64) -> Result<Option<LedgerBlock>, StoreError> {
        let sql = format!("SELECT {BLOCK_FIELDS} FROM blocks k WHERE canonical = true AND block_height = $1");
        let row = select(&sql, vec![height.into()]).fetch_optional(self).await?;
        Ok(row.as_ref().map(ledger_block).transpose()?)
    }

    /// The block with this block hash (0x hex), canonical first if forks share it.
    pub async fn rosetta_block_by_hash(&self, block_hash: &str) -> Result<Option<LedgerBlock>, StoreError> {
        let sql = format!(
            "SELECT {BLOCK_FIELDS} FROM blocks k WHERE block_hash = $1 ORDER BY canonical DESC, block_height DESC, index_block_hash LIMIT 1"
        );
        let row = select(&sql, vec![block_hash.into()]).fetch_optional(self).await?;
        Ok(row.as_ref().map(ledger_block).transpose()?)
    }

    /// The lowest canonical block (the genesis block Rosetta reports).
    pub async fn rosetta_genesis(&self) -> Result<Option<LedgerBlock>, StoreError> {
        let sql = format!(
            "SELECT {BLOCK_FIELDS} FROM blocks k WHERE canonical = true ORDER BY block_height ASC LIMIT 1"
        );
        let row = select(&sql, vec![]).fetch_optional(self).await?;
        Ok(row.as_ref().map(ledger_block).transpose()?)
    }

    /// The transactions and operations of the block `index_block_hash`, in ledger order.
    pub async fn rosetta_block_contents(&self, index_block_hash: &str) -> Result<BlockContents, StoreError> {
        let txs = select(
            &format!(
                "SELECT tx_id, tx_index, tx_type, status, contract_id, function_name, \
                 CASE WHEN {PAYLOAD_NEEDED} THEN raw_tx END AS raw_tx, \
                 CASE WHEN {PAYLOAD_NEEDED} THEN raw_result END AS raw_result FROM txs \
                 WHERE index_block_hash = $1 ORDER BY tx_index"
            ),
            vec![index_block_hash.into()],
        )
        .fetch_all(self)
        .await?
        .iter()
        .map(|r| {
            Ok(LedgerTx {
                tx_id: r.try_get("tx_id")?,
                tx_index: r.try_get("tx_index")?,
                tx_type: r.try_get("tx_type")?,
                status: r.try_get("status")?,
                contract_id: r.try_get("contract_id")?,
                function_name: r.try_get("function_name")?,
                raw_tx: r.try_get("raw_tx")?,
                raw_result: r.try_get("raw_result")?,
            })
        })
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
        let ops = select(
            "SELECT tx_id, tx_index, op_index, op_type, status, account, amount, locked_delta, related_op_index, \
             metadata FROM operations WHERE index_block_hash = $1 AND asset_identifier IS NULL ORDER BY tx_index, op_index",
            vec![index_block_hash.into()],
        )
        .fetch_all(self)
        .await?
        .iter()
        .map(|r| {
            Ok(OpRow {
                tx_id: r.try_get("tx_id")?,
                tx_index: r.try_get("tx_index")?,
                op_index: r.try_get("op_index")?,
                op_type: r.try_get("op_type")?,
                status: r.try_get("status")?,
                account: r.try_get("account")?,
                amount: r.try_get("amount")?,
                locked_delta: r.try_get("locked_delta")?,
                related_op_index: r.try_get("related_op_index")?,
                metadata: r.try_get("metadata")?,
                // STX operations only (`asset_identifier IS NULL`).
                asset_identifier: None,
                token_amount: None,
            })
        })
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
        Ok(BlockContents { txs, ops })
    }

    /// Where the transaction `tx_id` is mined on the canonical chain: its block's index hash.
    pub async fn rosetta_tx_block(&self, tx_id: &str) -> Result<Option<String>, StoreError> {
        let row = select(
            "SELECT index_block_hash FROM txs WHERE tx_id = $1 AND canonical = true AND index_block_hash <> '' LIMIT 1",
            vec![tx_id.into()],
        )
        .fetch_optional(self)
        .await?;
        Ok(row.map(|r| r.try_get("index_block_hash")).transpose()?)
    }

    /// Pending mempool transaction ids, oldest first.
    pub async fn rosetta_mempool_ids(&self) -> Result<Vec<String>, StoreError> {
        let rows =
            select("SELECT tx_id FROM mempool_txs WHERE pruned = false ORDER BY receipt_time, tx_id", vec![])
                .fetch_all(self)
                .await?;
        Ok(rows.iter().map(|r| r.try_get("tx_id")).collect::<Result<_, _>>()?)
    }

    /// A pending mempool transaction's raw bytes (0x hex).
    pub async fn rosetta_mempool_raw(&self, tx_id: &str) -> Result<Option<String>, StoreError> {
        let row =
            select("SELECT raw_tx FROM mempool_txs WHERE tx_id = $1 AND pruned = false", vec![tx_id.into()])
                .fetch_optional(self)
                .await?;
        Ok(row.map(|r| r.try_get("raw_tx")).transpose()?)
    }
}

impl Store {
    /// The block event log (`/events/blocks`) from sequence `from`, at most `limit` entries,
    /// in order.
    pub async fn rosetta_block_events(
        &self,
        from: i64,
        limit: i64,
    ) -> Result<Vec<BlockEventRow>, StoreError> {
        let rows = select(
            "SELECT sequence, kind, block_height, block_hash FROM block_events WHERE sequence >= $1 \
             ORDER BY sequence LIMIT $2",
            vec![from.into(), limit.into()],
        )
        .fetch_all(self)
        .await?;
        Ok(rows
            .iter()
            .map(|r| {
                let kind: String = r.try_get("kind")?;
                Ok(BlockEventRow {
                    sequence: r.try_get("sequence")?,
                    added: kind == "block_added",
                    block_height: r.try_get("block_height")?,
                    block_hash: r.try_get("block_hash")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()?)
    }

    /// The last sequence of the block event log (0 when empty).
    pub async fn rosetta_max_sequence(&self) -> Result<i64, StoreError> {
        let row = select("SELECT CAST(COALESCE(MAX(sequence), 0) AS BIGINT) AS n FROM block_events", vec![])
            .fetch_one(self)
            .await?;
        Ok(row.try_get("n")?)
    }

    /// The canonical transactions involving `principal` at or below `max_height`, newest first:
    pub async fn rosetta_account_txs(
        &self,
        principal: &str,
        max_height: i64,
    ) -> Result<Vec<TxRef>, StoreError> {
        let rows = select(
            "SELECT index_block_hash, tx_id FROM account_txs WHERE principal = $1 AND canonical = true \
             AND block_height <= $2 ORDER BY block_height DESC, tx_index DESC",
            vec![principal.into(), max_height.into()],
        )
        .fetch_all(self)
        .await?;
        Ok(rows
            .iter()
            .map(|r| {
                Ok(TxRef { index_block_hash: r.try_get("index_block_hash")?, tx_id: r.try_get("tx_id")? })
            })
            .collect::<Result<_, sqlx::Error>>()?)
    }

    /// The canonical block holding `index_block_hash` as Rosetta shows it.
    pub async fn rosetta_block_by_index_hash(
        &self,
        index_block_hash: &str,
    ) -> Result<Option<LedgerBlock>, StoreError> {
        let sql = format!("SELECT {BLOCK_FIELDS} FROM blocks k WHERE index_block_hash = $1");
        let row = select(&sql, vec![index_block_hash.into()]).fetch_optional(self).await?;
        Ok(row.as_ref().map(ledger_block).transpose()?)
    }
}

/// The reader over the inherent reads above (kept callable directly for the store's own tests).
impl LedgerReader for Store {
    fn genesis(&self) -> ReadFuture<'_, Option<LedgerBlock>> {
        Box::pin(async move { Ok(self.rosetta_genesis().await?) })
    }

    fn block_at(&self, height: i64) -> ReadFuture<'_, Option<LedgerBlock>> {
        Box::pin(async move { Ok(self.rosetta_block_at(height).await?) })
    }

    fn block_by_hash<'a>(&'a self, block_hash: &'a str) -> ReadFuture<'a, Option<LedgerBlock>> {
        Box::pin(async move { Ok(self.rosetta_block_by_hash(block_hash).await?) })
    }

    fn block_by_index_hash<'a>(&'a self, index_block_hash: &'a str) -> ReadFuture<'a, Option<LedgerBlock>> {
        Box::pin(async move { Ok(self.rosetta_block_by_index_hash(index_block_hash).await?) })
    }

    fn block_contents<'a>(&'a self, index_block_hash: &'a str) -> ReadFuture<'a, BlockContents> {
        Box::pin(async move { Ok(self.rosetta_block_contents(index_block_hash).await?) })
    }

    fn next_nonce_with_mempool<'a>(&'a self, account: &'a str) -> ReadFuture<'a, i64> {
        // The inherent read of the same name (`store/read.rs`).
        Box::pin(async move { Ok(Store::next_nonce_with_mempool(self, account).await?) })
    }

    fn tx_block<'a>(&'a self, tx_id: &'a str) -> ReadFuture<'a, Option<String>> {
        Box::pin(async move { Ok(self.rosetta_tx_block(tx_id).await?) })
    }

    fn account_txs<'a>(&'a self, principal: &'a str, max_height: i64) -> ReadFuture<'a, Vec<TxRef>> {
        Box::pin(async move { Ok(self.rosetta_account_txs(principal, max_height).await?) })
    }

    fn mempool_ids(&self) -> ReadFuture<'_, Vec<String>> {
        Box::pin(async move { Ok(self.rosetta_mempool_ids().await?) })
    }

    fn mempool_raw<'a>(&'a self, tx_id: &'a str) -> ReadFuture<'a, Option<String>> {
        Box::pin(async move { Ok(self.rosetta_mempool_raw(tx_id).await?) })
    }

    fn block_events(&self, from: i64, limit: i64) -> ReadFuture<'_, Vec<BlockEventRow>> {
        Box::pin(async move { Ok(self.rosetta_block_events(from, limit).await?) })
    }

    fn max_sequence(&self) -> ReadFuture<'_, i64> {
        Box::pin(async move { Ok(self.rosetta_max_sequence().await?) })
    }
}
