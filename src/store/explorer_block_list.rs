//! The contents of the v1 `/block` list. The incumbent builds them with one query over all
//! listed blocks that differs from its by-id answer (`block_contents`): a block's
//! `microblocks_accepted` are the canonical-stream microblocks built on its parent (whichever
//! block confirmed them) and its `microblocks_streamed` are those its parent confirmed, both
//! newest sequence first; the latter only when their own parent is one of the listed blocks
//! or their parents. Transactions: microblock sequence, then `tx_index`, both descending.

use std::collections::{BTreeMap, HashSet};

use sqlx::any::AnyRow;
use sqlx::Row;
use stacks_extended::{BlockContents, BlockRecord};

use super::sql::{fetch_in, query};
use super::{Store, StoreError};

impl Store {
    pub(crate) async fn list_contents(
        &self,
        blocks: &[BlockRecord],
    ) -> Result<Vec<BlockContents>, StoreError> {
        if blocks.is_empty() {
            return Ok(vec![]);
        }
        let own: Vec<String> = blocks.iter().map(|b| b.index_block_hash.clone()).collect();
        let mut near: Vec<String> = own.clone();
        near.extend(blocks.iter().map(|b| b.parent_index_block_hash.clone()));
        near.sort();
        near.dedup();

        // The flag is tested through an expression so that SQLite seeks `txs_block` per block:
        // with `canonical = true` it walks `txs_canonical_order`, i.e. every canonical tx.
        let txs = self
            .rows_in(
                "SELECT tx_id, index_block_hash FROM txs WHERE index_block_hash IN ({in}) \
                 AND (CASE WHEN canonical THEN 1 ELSE 0 END) = 1 \
                 ORDER BY COALESCE(microblock_sequence, 2147483647) DESC, tx_index DESC",
                &own,
            )
            .await?;
        let mbs = self
            .rows_in(
                "SELECT microblock_hash, parent_index_block_hash, index_block_hash FROM microblocks \
                 WHERE parent_index_block_hash IN ({in}) AND microblock_canonical = true \
                 ORDER BY microblock_sequence DESC",
                &near,
            )
            .await?;
        let mut tx_ids: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for r in &txs {
            tx_ids.entry(r.try_get("index_block_hash")?).or_default().push(r.try_get("tx_id")?);
        }
        let mb: Vec<(String, String, String)> = mbs
            .iter()
            .map(|r| {
                Ok((
                    r.try_get("microblock_hash")?,
                    r.try_get("parent_index_block_hash")?,
                    r.try_get("index_block_hash")?,
                ))
            })
            .collect::<Result<_, sqlx::Error>>()?;
        let mut out = Vec::with_capacity(blocks.len());
        for b in blocks {
            let parent = &b.parent_index_block_hash;
            let mut seen = HashSet::new();
            let accepted: Vec<String> = mb
                .iter()
                .filter(|(h, p, _)| p == parent && seen.insert(h.clone()))
                .map(|(h, _, _)| h.clone())
                .collect();
            let mut seen = HashSet::new();
            let streamed: Vec<String> = mb
                .iter()
                .filter(|(h, _, confirmed_by)| confirmed_by == parent && seen.insert(h.clone()))
                .map(|(h, _, _)| h.clone())
                .collect();
            let mut counts = Vec::with_capacity(accepted.len());
            for h in &accepted {
                counts.push((h.clone(), self.microblock_tx_count(h).await?));
            }
            out.push(BlockContents {
                tx_ids: tx_ids.remove(&b.index_block_hash).unwrap_or_default(),
                microblocks_accepted: accepted,
                microblocks_streamed: streamed,
                microblock_tx_count: counts,
            });
        }
        Ok(out)
    }

    async fn rows_in(&self, sql: &str, items: &[String]) -> Result<Vec<AnyRow>, StoreError> {
        let mut conn = self.pool.acquire().await?;
        Ok(fetch_in(&mut conn, sql, vec![], items).await?)
    }

    /// The canonical transactions of a microblock (the incumbent counts them per list entry).
    async fn microblock_tx_count(&self, hash: &str) -> Result<u64, StoreError> {
        let r = query(
            "SELECT CAST(COUNT(DISTINCT tx_id) AS BIGINT) AS n FROM txs WHERE microblock_hash = $1 AND canonical = true",
            vec![hash.into()],
        )
        .fetch_one(&self.pool)
        .await?;
        Ok(u64::try_from(r.try_get::<i64, _>("n")?).unwrap_or(0))
    }
}
