//! The contents of the v1 `/block` list. The incumbent builds them with one query over all
//! listed blocks that differs from its by-id answer (`block_contents`): a block's
//! `microblocks_accepted` are the canonical-stream microblocks built on its parent (whichever
//! block confirmed them) and its `microblocks_streamed` are those its parent confirmed, both
//! newest sequence first; the latter only when their own parent is one of the listed blocks
//! or their parents. Transactions: microblock sequence, then `tx_index`, both descending, as
//! materialized with each block (`blocks.tx_ids`, migration 0042) for all but block 1 and
//! orphaned blocks ([`reads_stored_ids`]).

use std::collections::{BTreeMap, HashMap, HashSet};

use ledger_read::chain::{BlockContents, BlockRecord, TxIds};

use super::db_row::Cols;
use super::explorer_tx::shown_index_sql;
use super::sql::{get_bool, select, select_in};
use super::{Store, StoreError};

impl Store {
    /// The list's contents of `blocks`, given the ids read from `blocks.tx_ids` (keyed by
    /// block) of those [`reads_stored_ids`] takes them from.
    pub(super) async fn list_contents(
        &self,
        blocks: &[BlockRecord],
        mut tx_ids: BTreeMap<String, TxIds>,
    ) -> Result<Vec<BlockContents>, StoreError> {
        if blocks.is_empty() {
            return Ok(vec![]);
        }
        let mut near: Vec<String> = blocks.iter().map(|b| b.index_block_hash.clone()).collect();
        near.extend(blocks.iter().map(|b| b.parent_index_block_hash.clone()));
        near.sort();
        near.dedup();

        let derived: Vec<String> =
            blocks.iter().filter(|b| !reads_stored_ids(b)).map(|b| b.index_block_hash.clone()).collect();
        let block_one = blocks.iter().any(|b| b.block_height == 1);
        tx_ids
            .extend(self.derived_tx_ids(&derived, block_one).await?.into_iter().map(|(k, v)| (k, v.into())));
        let mbs = select_in(
            self,
            "SELECT microblock_hash, parent_index_block_hash, index_block_hash FROM microblocks \
                 WHERE parent_index_block_hash IN ({in}) AND microblock_canonical = true \
                 ORDER BY microblock_sequence DESC",
            vec![],
            &near,
        )
        .await?;
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

    /// Block `ibh`'s transaction ids as stored with it (`blocks.tx_ids`, materialized when it
    /// was stored, migration 0042), for a block [`reads_stored_ids`] takes them from; none for
    /// an unknown block.
    pub(super) async fn stored_tx_ids(&self, ibh: &str) -> Result<TxIds, StoreError> {
        let row = select("SELECT tx_ids FROM blocks WHERE index_block_hash = $1", vec![ibh.into()])
            .fetch_optional(self)
            .await?;
        match row {
            Some(mut r) => stored_ids(ibh, r.take_text("tx_ids")?),
            None => Ok(TxIds::default()),
        }
    }

    /// The transaction ids of the blocks `hashes` derived from their `txs` rows, as the list
    /// did before migration 0042: the canonical rows, microblock sequence then the index the
    /// incumbent shows descending. `block_one`: one of the listed blocks is block 1, whose
    /// boot-block rows are ordered by the index the incumbent shows (`BootShift`), a boot row
    /// first on a tie.
    pub(super) async fn derived_tx_ids(
        &self,
        hashes: &[String],
        block_one: bool,
    ) -> Result<BTreeMap<String, Vec<String>>, StoreError> {
        let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        if hashes.is_empty() {
            return Ok(out);
        }
        // The flag is tested through an expression so that SQLite seeks `txs_block` per block:
        // with `canonical = true` it walks `txs_canonical_order`, i.e. every canonical tx.
        let shift = match block_one {
            true => self.boot_shift(None).await?,
            false => None,
        };
        let index = shown_index_sql(shift);
        let inner = format!(
            "SELECT t.tx_id, t.index_block_hash FROM txs t WHERE t.index_block_hash IN ({{in}}) \
             AND (CASE WHEN t.canonical THEN 1 ELSE 0 END) = 1 \
             ORDER BY COALESCE(t.microblock_sequence, 2147483647) DESC, {index} DESC, t.tx_index DESC"
        );
        let txs = select_in(self, &inner, vec![], hashes).await?;
        for r in &txs {
            out.entry(r.text("index_block_hash")?).or_default().push(r.text("tx_id")?);
        }
        Ok(out)
    }

    /// `blocks.tx_ids` (migration 0042) against what the `txs` rows derive (for consistency
    /// checks): every block's list must be its rows' ids in the stored order, and every block
    /// whose list the reads take ([`reads_stored_ids`]) must list what the queries it
    /// replaced return, the by-id one (`block_contents`) and the list's (`derived_tx_ids`),
    /// each over the block's canonical rows. The blocks that differ, each with what differs.
    pub async fn block_tx_id_mismatches(&self) -> Result<Vec<String>, StoreError> {
        let blocks = select(
            "SELECT index_block_hash, block_height, tx_ids, (CASE WHEN canonical THEN 1 ELSE 0 END) AS canonical \
             FROM blocks",
            vec![],
        )
        .fetch_all(self)
        .await?;
        let group = |rows: Vec<super::db_row::DbRow>| -> Result<BTreeMap<String, Vec<String>>, StoreError> {
            let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for r in &rows {
                out.entry(r.try_get("index_block_hash")?).or_default().push(r.try_get("tx_id")?);
            }
            Ok(out)
        };
        let rows = select(
            "SELECT index_block_hash, tx_id FROM txs WHERE index_block_hash <> '' \
             ORDER BY index_block_hash, COALESCE(microblock_sequence, 2147483647) DESC, tx_index DESC",
            vec![],
        )
        .fetch_all(self)
        .await?;
        let mut stored_rows = group(rows)?;
        // The by-id query (`block_contents`) over every canonical block at once.
        let rows = select(
            "SELECT t.index_block_hash, t.tx_id FROM txs t JOIN blocks b ON b.index_block_hash = t.index_block_hash \
             WHERE (CASE WHEN t.canonical THEN 1 ELSE 0 END) = 1 AND b.canonical = true \
             ORDER BY t.index_block_hash, COALESCE(t.microblock_sequence, 2147483647) DESC, \
             (CASE WHEN t.tx_index >= b.tx_count THEN t.tx_index - b.tx_count ELSE t.tx_index END) DESC, t.tx_index DESC",
            vec![],
        )
        .fetch_all(self)
        .await?;
        let mut by_id = group(rows)?;
        let mut out = Vec::new();
        let mut read = Vec::new();
        for b in &blocks {
            let ibh: String = b.try_get("index_block_hash")?;
            let text: String = b.try_get("tx_ids")?;
            let stored: Vec<String> = match serde_json::from_str(&text) {
                Ok(ids) => ids,
                Err(e) => {
                    out.push(format!("{ibh}: tx_ids {text:?} is not a JSON list of strings: {e}"));
                    continue;
                }
            };
            let rows = stored_rows.remove(&ibh).unwrap_or_default();
            if stored != rows {
                out.push(format!("{ibh}: tx_ids {stored:?}, its rows {rows:?}"));
            }
            let height: i64 = b.try_get("block_height")?;
            let canonical = get_bool(b, "canonical")?;
            if canonical && height != 1 {
                let q = by_id.remove(&ibh).unwrap_or_default();
                if stored != q {
                    out.push(format!("{ibh}: tx_ids {stored:?}, by-id query {q:?}"));
                }
                read.push((ibh, stored));
            }
        }
        // The list's query, over the same blocks.
        let hashes: Vec<String> = read.iter().map(|(h, _)| h.clone()).collect();
        let mut listed = self.derived_tx_ids(&hashes, false).await?;
        for (ibh, stored) in read {
            let q = listed.remove(&ibh).unwrap_or_default();
            if stored != q {
                out.push(format!("{ibh}: tx_ids {stored:?}, list query {q:?}"));
            }
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

/// Block `ibh`'s `blocks.tx_ids` text as ids; a text that is not a list of strings is a
/// corrupt store.
pub(super) fn stored_ids(ibh: &str, text: String) -> Result<TxIds, StoreError> {
    TxIds::from_json(text).map_err(|e| StoreError::Corrupt(format!("blocks.tx_ids of {ibh}: {e}")))
}

/// Whether a block's transaction ids are read from `blocks.tx_ids`. That list holds every row
/// stored under the block; a canonical block's rows are all canonical (a reorg flips a block's
/// rows with the block, `write::canonical::flip`), so it is what the canonical-row query
/// derives. Derived from the rows instead: an orphaned block (its rows are not canonical) and
/// block 1 (the order of the boot block's rows depends on the route, `BootShift`).
pub(super) fn reads_stored_ids(b: &BlockRecord) -> bool {
    b.canonical && b.block_height != 1
}
