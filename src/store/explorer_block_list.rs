//! The contents of the v1 `/block` list. The incumbent builds them with one query over all
//! listed blocks that differs from its by-id answer (`block_contents`): a block's
//! `microblocks_accepted` are the canonical-stream microblocks built on its parent (whichever
//! block confirmed them) and its `microblocks_streamed` are those its parent confirmed, both
//! newest sequence first; the latter only when their own parent is one of the listed blocks
//! or their parents. Transactions: microblock sequence, then `tx_index`, both descending.

use std::collections::{BTreeMap, HashMap, HashSet};

use stacks_extended::{BlockContents, BlockRecord};

use super::explorer_tx::shown_index_sql;
use super::one_row::{decode_rows, rows_sql, Cols, PageRow};
use super::sql::select_in;
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
        // Block 1's boot-block rows by the index the incumbent shows (`BootShift`), as in the
        // by-id answer; a boot row first on a tie.
        let shift = match blocks.iter().any(|b| b.block_height == 1) {
            true => self.boot_shift(None).await?,
            false => None,
        };
        let index = shown_index_sql(shift);
        // The transactions of 20 blocks are hundreds of rows: read as one row (`one_row`).
        let names = [String::from("tx_id"), String::from("index_block_hash")];
        let inner = format!(
            "SELECT t.tx_id, t.index_block_hash FROM txs t WHERE t.index_block_hash IN ({{in}}) \
             AND (CASE WHEN t.canonical THEN 1 ELSE 0 END) = 1 \
             ORDER BY COALESCE(t.microblock_sequence, 2147483647) DESC, {index} DESC, t.tx_index DESC"
        );
        let mut txs = Vec::new();
        if self.lite.is_some() {
            // Rows cross for free on SQLite's calling-thread reads (`Store::page_rows`).
            txs.extend(select_in(self, &inner, vec![], &own).await?.into_iter().map(PageRow::Db));
        } else {
            let sql = format!("SELECT {} AS rows", rows_sql(self.engine, &names, &inner));
            for chunk in select_in(self, &sql, vec![], &own).await? {
                let text: Option<String> = chunk.try_get("rows")?;
                txs.extend(
                    decode_rows(&names, text.as_deref().unwrap_or("[]"))?.into_iter().map(PageRow::Json),
                );
            }
        }
        let mbs = select_in(
            self,
            "SELECT microblock_hash, parent_index_block_hash, index_block_hash FROM microblocks \
                 WHERE parent_index_block_hash IN ({in}) AND microblock_canonical = true \
                 ORDER BY microblock_sequence DESC",
            vec![],
            &near,
        )
        .await?;
        let mut tx_ids: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for r in &txs {
            tx_ids.entry(r.text("index_block_hash")?).or_default().push(r.text("tx_id")?);
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
        // Every listed block's accepted microblocks, counted in one statement (not one per
        // microblock: the list is answered per request).
        let mut accepted_all: Vec<String> = Vec::new();
        let mut per_block = Vec::with_capacity(blocks.len());
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
            accepted_all.extend(accepted.iter().cloned());
            per_block.push((accepted, streamed));
        }
        accepted_all.sort();
        accepted_all.dedup();
        let counts = self.microblock_tx_counts(&accepted_all).await?;
        let mut out = Vec::with_capacity(blocks.len());
        for (b, (accepted, streamed)) in blocks.iter().zip(per_block) {
            let counts = accepted.iter().map(|h| (h.clone(), counts.get(h).copied().unwrap_or(0))).collect();
            out.push(BlockContents {
                tx_ids: tx_ids.remove(&b.index_block_hash).unwrap_or_default(),
                microblocks_accepted: accepted,
                microblocks_streamed: streamed,
                microblock_tx_count: counts,
            });
        }
        Ok(out)
    }

    /// The canonical transactions of each microblock (the incumbent counts them per list
    /// entry), keyed by microblock hash; microblocks without any are absent.
    async fn microblock_tx_counts(&self, hashes: &[String]) -> Result<HashMap<String, u64>, StoreError> {
        let rows = select_in(
            self,
            "SELECT microblock_hash, CAST(COUNT(DISTINCT tx_id) AS BIGINT) AS n FROM txs \
             WHERE microblock_hash IN ({in}) AND canonical = true GROUP BY microblock_hash",
            vec![],
            hashes,
        )
        .await?;
        rows.iter()
            .map(|r| {
                Ok((r.try_get("microblock_hash")?, u64::try_from(r.try_get::<i64, _>("n")?).unwrap_or(0)))
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)
    }
}
