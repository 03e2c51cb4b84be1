//! The reads the `/extended` routes need, answered from the ledger.

use sqlx::Row;
use stacks_extended::{ChainTip, ExplorerReader, ReadError};

use super::sql::query;
use super::{Store, StoreError};

impl From<StoreError> for ReadError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Sql(sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_)) => {
                ReadError::Unavailable(Box::new(e))
            }
            other => ReadError::Other(Box::new(other)),
        }
    }
}

impl Store {
    /// The newest microblock streamed on top of `index_block_hash` and still on the stream's
    /// canonical branch: the unanchored tip.
    async fn streamed_microblock_tip(
        &self,
        index_block_hash: &str,
    ) -> Result<Option<(String, u32)>, StoreError> {
        let row = query(
            "SELECT microblock_hash, microblock_sequence FROM microblocks WHERE parent_index_block_hash = $1 \
             AND index_block_hash = '' AND microblock_canonical = true ORDER BY microblock_sequence DESC LIMIT 1",
            vec![index_block_hash.into()],
        )
        .fetch_optional(&self.pool)
        .await?;
        let Some(r) = row else { return Ok(None) };
        let seq: i64 = r.try_get("microblock_sequence")?;
        Ok(Some((r.try_get("microblock_hash")?, u32::try_from(seq).unwrap_or(u32::MAX))))
    }
}

impl Store {
    /// The highest canonical burn block announced after the Stacks block `index_block_hash`.
    async fn burn_height_after(&self, index_block_hash: &str) -> Result<Option<i64>, StoreError> {
        let row = query(
            "SELECT burn_block_height FROM burn_blocks WHERE canonical = true AND raw_event_id > \
             (SELECT raw_event_id FROM blocks WHERE index_block_hash = $1) \
             ORDER BY burn_block_height DESC LIMIT 1",
            vec![index_block_hash.into()],
        )
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| r.try_get("burn_block_height")).transpose()?)
    }
}

impl ExplorerReader for Store {
    async fn chain_tip(&self) -> Result<Option<ChainTip>, ReadError> {
        let Some(tip) = Store::chain_tip(self).await? else { return Ok(None) };
        let microblock = self.streamed_microblock_tip(&tip.index_block_hash).await?;
        // As the incumbent keeps it: a new Stacks block sets the burn height to its own; burn
        // blocks announced after it can only raise it.
        let after = self.burn_height_after(&tip.index_block_hash).await?;
        let burn_height = after.unwrap_or(0).max(tip.burn_block_height);
        Ok(Some(ChainTip {
            block_height: u64::try_from(tip.block_height).unwrap_or_default(),
            block_hash: tip.block_hash,
            index_block_hash: tip.index_block_hash,
            burn_block_height: u64::try_from(burn_height).unwrap_or_default(),
            microblock,
        }))
    }
}
