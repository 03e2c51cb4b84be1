//! The reads the `/extended` routes need, answered from the ledger.

use ledger_read::tip::{ChainTip, ExplorerReader};
use ledger_read::ReadError;

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

impl ExplorerReader for Store {
    /// One statement (one snapshot): the canonical tip, the newest microblock streamed on it
    /// and still on the stream's canonical branch (`streamed_microblock_tip`), and the highest
    /// canonical burn block announced after it (`burn_height_after`).
    async fn chain_tip(&self) -> Result<Option<ChainTip>, ReadError> {
        const MICROBLOCK: &str = "FROM microblocks m WHERE m.parent_index_block_hash = k.index_block_hash \
             AND m.index_block_hash = '' AND m.microblock_canonical = true \
             ORDER BY m.microblock_sequence DESC LIMIT 1";
        // `+ 0`: SQLite answers a bare `MAX(burn_block_height)` from the height index, walking
        // every burn block when none came after the tip; the newer ones are few, found by
        // `burn_blocks_event` (migration 0040).
        let row = select(
            &format!(
                "SELECT k.index_block_hash, k.block_hash, k.block_height, k.burn_block_height, \
                 (SELECT m.microblock_hash {MICROBLOCK}) AS microblock_hash, \
                 (SELECT m.microblock_sequence {MICROBLOCK}) AS microblock_sequence, \
                 (SELECT MAX(bb.burn_block_height + 0) FROM burn_blocks bb WHERE bb.canonical = true \
                   AND bb.raw_event_id > k.raw_event_id) AS burn_after \
                 FROM blocks k WHERE k.canonical = true ORDER BY k.block_height DESC LIMIT 1"
            ),
            vec![],
        )
        .fetch_optional(self)
        .await
        .map_err(StoreError::from)?;
        let Some(r) = row else { return Ok(None) };
        let get = || -> Result<ChainTip, sqlx::Error> {
            let microblock = match r.try_get::<Option<String>, _>("microblock_hash")? {
                Some(h) => {
                    let seq: i64 = r.try_get("microblock_sequence")?;
                    Some((h, u32::try_from(seq).unwrap_or(u32::MAX)))
                }
                None => None,
            };
            // As the incumbent keeps it: a new Stacks block sets the burn height to its own;
            // burn blocks announced after it can only raise it.
            let after: Option<i64> = r.try_get("burn_after")?;
            let burn_height = after.unwrap_or(0).max(r.try_get("burn_block_height")?);
            Ok(ChainTip {
                block_height: u64::try_from(r.try_get::<i64, _>("block_height")?).unwrap_or_default(),
                block_hash: r.try_get("block_hash")?,
                index_block_hash: r.try_get("index_block_hash")?,
                burn_block_height: u64::try_from(burn_height).unwrap_or_default(),
                microblock,
            })
        };
        Ok(Some(get().map_err(StoreError::from)?))
    }
}
