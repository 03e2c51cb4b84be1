//! The canonical tip every surface reads, and how the store's errors read to a surface.

use ledger_read::{MicroblockTip, ReadError, ReadFuture, Tip, TipReader};

use super::rosetta::{ledger_block, BLOCK_FIELDS};
use super::sql::select;
use super::{Store, StoreError};

impl From<StoreError> for ReadError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Sql(
                sqlx::Error::PoolTimedOut
                | sqlx::Error::PoolClosed
                | sqlx::Error::Io(_)
                | sqlx::Error::Tls(_),
            ) => ReadError::Unavailable(Box::new(e)),
            other => ReadError::Failed(Box::new(other)),
        }
    }
}

/// The one tip every surface reads.
impl TipReader for Store {
    fn tip(&self) -> ReadFuture<'_, Option<Tip>> {
        Box::pin(async move { Ok(self.read_tip().await?) })
    }
}

impl Store {
    /// The canonical tip's index block hash ('' before any block): the one column of the tip
    /// that some reads key on, without the rest of [`Tip`].
    pub(super) async fn tip_index_block_hash(&self) -> Result<String, StoreError> {
        let row = select(
            "SELECT index_block_hash FROM blocks WHERE canonical = true ORDER BY block_height DESC LIMIT 1",
            vec![],
        )
        .fetch_optional(self)
        .await?;
        Ok(row.map(|r| r.try_get::<String, _>("index_block_hash")).transpose()?.unwrap_or_default())
    }

    /// One statement (one snapshot): the canonical tip block, the newest microblock streamed on
    /// it and still on the stream's canonical branch, and the highest canonical burn block
    /// announced after it.
    pub(super) async fn read_tip(&self) -> Result<Option<Tip>, StoreError> {
        const MICROBLOCK: &str = "FROM microblocks m WHERE m.parent_index_block_hash = k.index_block_hash \
             AND m.index_block_hash = '' AND m.microblock_canonical = true \
             ORDER BY m.microblock_sequence DESC LIMIT 1";
        // `+ 0`: SQLite answers a bare `MAX(burn_block_height)` from the height index, walking
        // every burn block when none came after the tip; the newer ones are few, found by
        // `burn_blocks_event` (migration 0040).
        let row = select(
            &format!(
                "SELECT {BLOCK_FIELDS}, \
                 (SELECT m.microblock_hash {MICROBLOCK}) AS microblock_hash, \
                 (SELECT m.microblock_sequence {MICROBLOCK}) AS microblock_sequence, \
                 (SELECT MAX(bb.burn_block_height + 0) FROM burn_blocks bb WHERE bb.canonical = true \
                   AND bb.raw_event_id > k.raw_event_id) AS burn_after \
                 FROM blocks k WHERE k.canonical = true ORDER BY k.block_height DESC LIMIT 1"
            ),
            vec![],
        )
        .fetch_optional(self)
        .await?;
        let Some(r) = row else { return Ok(None) };
        let block = ledger_block(&r)?;
        let microblock = match r.try_get::<Option<String>, _>("microblock_hash")? {
            Some(hash) => Some(MicroblockTip { hash, sequence: r.try_get("microblock_sequence")? }),
            None => None,
        };
        // As the incumbent keeps it: a new Stacks block sets the burn height to its own; burn
        // blocks announced after it can only raise it.
        let after: Option<i64> = r.try_get("burn_after")?;
        let burn_height = after.unwrap_or(0).max(block.burn_block_height);
        Ok(Some(Tip { block, microblock, burn_height }))
    }
}
