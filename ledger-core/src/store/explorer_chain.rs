//! The chain family's reads (blocks, burn blocks, supply, burnchain rewards) for `/extended`.
//!
//! Canonical Stacks blocks occupy every height from 1 to the tip, so list pages seek by height
//! (`(canonical, block_height)` index) instead of skipping `offset` rows.

use ledger_read::chain::{
    BlockContents, BlockRecord, BlockRef, BlocksPage, BurnBlockRecord, BurnPoxTx, BurnRef, BurnchainReward,
    ChainReader, PoxTxsOf, RewardSlotHolder, SupplyRecord,
};
use ledger_read::ReadError;

use super::db_row::Cols;
use super::explorer_block_list::{reads_stored_ids, stored_ids};
use super::sql::{get_bool, select, Val};
use super::{Store, StoreError};

/// The block columns of a [`BlockRecord`].
const BLOCK_COLUMNS: &str = "(CASE WHEN canonical THEN 1 ELSE 0 END) AS canonical, block_height, block_hash, \
    index_block_hash, parent_block_hash, parent_index_block_hash, block_time, burn_block_time, burn_block_hash, \
    burn_block_height, miner_txid, parent_microblock_hash, parent_microblock_sequence, tenure_height, signer_bitvec, \
    execution_cost_read_count, execution_cost_read_length, execution_cost_runtime, execution_cost_write_count, \
    execution_cost_write_length, tx_count";

/// The canonical blocks at or below height `$1`, newest first, at most `$2`: the pages of
/// `blocks_below`, the v1 list (`listed_blocks`) and the v2 list (`v2_page`).
const BELOW: &str = "WHERE canonical = true AND block_height <= $1 ORDER BY block_height DESC LIMIT $2";

fn u(v: i64) -> u64 {
    u64::try_from(v).unwrap_or_default()
}

fn i(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn block_record(r: &impl Cols) -> Result<BlockRecord, sqlx::Error> {
    Ok(BlockRecord {
        canonical: r.flag("canonical")?,
        block_height: u(r.int("block_height")?),
        block_hash: r.text("block_hash")?,
        index_block_hash: r.text("index_block_hash")?,
        parent_block_hash: r.text("parent_block_hash")?,
        parent_index_block_hash: r.text("parent_index_block_hash")?,
        block_time: r.int("block_time")?,
        burn_block_time: r.int("burn_block_time")?,
        burn_block_hash: r.text("burn_block_hash")?,
        burn_block_height: u(r.int("burn_block_height")?),
        miner_txid: r.text("miner_txid")?,
        parent_microblock_hash: r.text("parent_microblock_hash")?,
        parent_microblock_sequence: r.int("parent_microblock_sequence")?,
        tenure_height: r.opt_int("tenure_height")?,
        signer_bitvec: r.opt_text("signer_bitvec")?,
        execution_cost: [
            r.int("execution_cost_read_count")?,
            r.int("execution_cost_read_length")?,
            r.int("execution_cost_runtime")?,
            r.int("execution_cost_write_count")?,
            r.int("execution_cost_write_length")?,
        ],
        tx_count: u(r.int("tx_count")?),
    })
}

impl Store {
    /// The blocks of `FROM blocks {where_}` (with its order and limit).
    async fn block_rows(&self, where_: &str, vals: Vec<Val>) -> Result<Vec<BlockRecord>, StoreError> {
        let inner = format!("SELECT {BLOCK_COLUMNS} FROM blocks {where_}");
        let rows = select(&inner, vals).fetch_all(self).await?;
        let mut blocks: Vec<BlockRecord> = rows.iter().map(block_record).collect::<Result<_, _>>()?;
        self.without_boot_txs(&mut blocks).await?;
        Ok(blocks)
    }

    /// `ChainReader::block_list`: the page's blocks read with their stored transaction ids
    /// (`blocks.tx_ids`) in one statement. A 1M-chain page holds 2,000 ids (138 KB); read by
    /// hash in a second statement they were a quarter of the route's CPU (`perf`).
    async fn listed_blocks(
        &self,
        height: u64,
        limit: u32,
    ) -> Result<Vec<(BlockRecord, BlockContents)>, StoreError> {
        static SQL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        let sql = SQL.get_or_init(|| format!("SELECT {BLOCK_COLUMNS}, tx_ids FROM blocks {BELOW}"));
        let rows = select(sql, vec![i(height).into(), i64::from(limit).into()]).fetch_all(self).await?;
        let mut blocks = Vec::with_capacity(rows.len());
        let mut stored = std::collections::BTreeMap::new();
        for mut r in rows {
            let b = block_record(&r)?;
            if reads_stored_ids(&b) {
                stored.insert(
                    b.index_block_hash.clone(),
                    stored_ids(&b.index_block_hash, r.take_text("tx_ids")?)?,
                );
            }
            blocks.push(b);
        }
        self.without_boot_txs(&mut blocks).await?;
        let contents = self.list_contents(&blocks, stored).await?;
        Ok(blocks.into_iter().zip(contents).collect())
    }

    /// Block 1's `tx_count` without the boot block's transactions (`genesis_tx_count`).
    async fn without_boot_txs(&self, blocks: &mut [BlockRecord]) -> Result<(), StoreError> {
        for b in blocks.iter_mut().filter(|b| b.block_height == 1) {
            b.tx_count = b.tx_count.saturating_sub(self.genesis_tx_count(b).await?);
        }
        Ok(())
    }

    /// `ChainReader::blocks_page` in one statement: the page's blocks, each with the two
    /// cursors (uncorrelated subqueries, evaluated once), instead of reading and decoding the
    /// `2 × limit + 1` blocks around the page for two hashes. An empty page (nothing at or
    /// below `start`) reads the cursors alone.
    async fn v2_page(&self, start: u64, limit: u32) -> Result<BlocksPage, StoreError> {
        const CURSORS: &str = "(SELECT index_block_hash FROM blocks WHERE canonical = true AND block_height = $3) \
            AS next_cursor, (SELECT index_block_hash FROM blocks WHERE canonical = true AND block_height = $4) \
            AS prev_cursor";
        let next = i(start.saturating_add(u64::from(limit)));
        // No height is −1: no older page.
        let prev = start.checked_sub(u64::from(limit)).map_or(-1, i);
        let vals: Vec<Val> = vec![i(start).into(), i64::from(limit).into(), next.into(), prev.into()];
        let inner = format!("SELECT {BLOCK_COLUMNS}, {CURSORS} FROM blocks {BELOW}");
        let rows = select(&inner, vals).fetch_all(self).await?;
        let (next, prev) = match rows.first() {
            Some(r) => (r.opt_text("next_cursor")?, r.opt_text("prev_cursor")?),
            None => {
                // $1 and $2 are not in this statement: the cursors are $3 and $4 renumbered.
                let sql = CURSORS.replace("$3", "$1").replace("$4", "$2");
                let r =
                    select(&format!("SELECT {sql}"), vec![next.into(), prev.into()]).fetch_one(self).await?;
                (r.try_get("next_cursor")?, r.try_get("prev_cursor")?)
            }
        };
        let mut blocks: Vec<BlockRecord> = rows.iter().map(block_record).collect::<Result<_, _>>()?;
        self.without_boot_txs(&mut blocks).await?;
        Ok((blocks, next, prev))
    }

    /// How many of block 1's transactions came from the boot block (stored after its own, see
    /// `ledger::derive_block`); the incumbent counts and orders them as block 0's.
    async fn genesis_tx_count(&self, block: &BlockRecord) -> Result<u64, StoreError> {
        if block.block_height != 1 {
            return Ok(0);
        }
        let n = self
            .int(
                "SELECT tx_count FROM blocks WHERE index_block_hash = $1 AND block_height = 0",
                vec![(&block.parent_index_block_hash).into()],
            )
            .await;
        match n {
            Ok(n) => Ok(u(n)),
            Err(StoreError::Sql(sqlx::Error::RowNotFound)) => Ok(0),
            Err(e) => Err(e),
        }
    }

    async fn one_block(&self, where_: &str, vals: Vec<Val>) -> Result<Option<BlockRecord>, StoreError> {
        Ok(self.block_rows(where_, vals).await?.into_iter().next())
    }

    async fn tip_height(&self) -> Result<Option<u64>, StoreError> {
        let b = self.one_block("WHERE canonical = true ORDER BY block_height DESC LIMIT 1", vec![]).await?;
        Ok(b.map(|b| b.block_height))
    }

    async fn strings(&self, sql: &str, vals: Vec<Val>, col: &str) -> Result<Vec<String>, StoreError> {
        let rows = select(sql, vals).fetch_all(self).await?;
        Ok(rows.iter().map(|r| r.try_get::<String, _>(col)).collect::<Result<_, _>>()?)
    }

    async fn int(&self, sql: &str, vals: Vec<Val>) -> Result<i64, StoreError> {
        let r = select(sql, vals).fetch_one(self).await?;
        Ok(r.try_get::<Option<i64>, _>(0)?.unwrap_or(0))
    }

    /// The burn blocks (hash, height, time) that have canonical Stacks blocks, newest first.
    async fn burn_block_heads(
        &self,
        where_: &str,
        vals: Vec<Val>,
    ) -> Result<Vec<(String, i64, i64)>, StoreError> {
        let sql = format!(
            "SELECT burn_block_hash, burn_block_height, MAX(burn_block_time) AS burn_block_time FROM blocks \
             WHERE canonical = true {where_}"
        );
        let rows = select(&sql, vals).fetch_all(self).await?;
        Ok(rows
            .iter()
            .map(|r| {
                Ok((
                    r.try_get("burn_block_hash")?,
                    r.try_get("burn_block_height")?,
                    r.try_get("burn_block_time")?,
                ))
            })
            .collect::<Result<_, sqlx::Error>>()?)
    }

    async fn burn_block_record(
        &self,
        (hash, height, time): (String, i64, i64),
    ) -> Result<BurnBlockRecord, StoreError> {
        let blocks = self
            .block_rows(
                "WHERE canonical = true AND burn_block_hash = $1 ORDER BY block_height DESC",
                vec![hash.clone().into()],
            )
            .await?;
        // The incumbent averages the gaps between consecutive blocks of the burn block.
        let avg_block_time = match (blocks.first(), blocks.last()) {
            (Some(newest), Some(oldest)) if blocks.len() > 1 => {
                (newest.block_time - oldest.block_time) as f64 / (blocks.len() - 1) as f64
            }
            _ => 0.0,
        };
        Ok(BurnBlockRecord {
            burn_block_hash: hash,
            burn_block_height: u(height),
            burn_block_time: time,
            total_tx_count: blocks.iter().map(|b| b.tx_count).sum(),
            stacks_blocks: blocks.into_iter().map(|b| b.block_hash).collect(),
            avg_block_time,
        })
    }

    /// The STX in existence at a canonical height: mints and matured coinbases, less burns.
    async fn supply_at(&self, height: i64) -> Result<i128, StoreError> {
        let ops = self
            .int(
                "SELECT CAST(COALESCE(SUM(amount), 0) AS BIGINT) FROM operations WHERE canonical = true \
                 AND status = 'success' AND op_type IN ('mint', 'burn') AND block_height <= $1",
                vec![height.into()],
            )
            .await?;
        let coinbase = self
            .int(
                "SELECT CAST(COALESCE(SUM(coinbase_amount), 0) AS BIGINT) FROM miner_rewards \
                 WHERE canonical = true AND block_height <= $1",
                vec![height.into()],
            )
            .await?;
        Ok(i128::from(ops) + i128::from(coinbase))
    }
}

impl ChainReader for Store {
    async fn block(&self, by: BlockRef) -> Result<Option<BlockRecord>, ReadError> {
        let canonical_first = "ORDER BY canonical DESC, block_height DESC LIMIT 1";
        Ok(match by {
            BlockRef::Hash(h) => {
                self.one_block(&format!("WHERE block_hash = $1 {canonical_first}"), vec![h.into()]).await?
            }
            // v2 finds canonical blocks only.
            BlockRef::AnyHash(h) => {
                match self
                    .one_block("WHERE index_block_hash = $1 AND canonical = true", vec![h.clone().into()])
                    .await?
                {
                    Some(b) => Some(b),
                    None => {
                        self.one_block("WHERE block_hash = $1 AND canonical = true", vec![h.into()]).await?
                    }
                }
            }
            BlockRef::Height(h) => {
                self.one_block("WHERE canonical = true AND block_height = $1", vec![i(h).into()]).await?
            }
            BlockRef::Latest => {
                self.one_block("WHERE canonical = true ORDER BY block_height DESC LIMIT 1", vec![]).await?
            }
            BlockRef::BurnHash(h) => {
                self.one_block(
                    "WHERE canonical = true AND burn_block_hash = $1 ORDER BY block_height DESC LIMIT 1",
                    vec![h.into()],
                )
                .await?
            }
            BlockRef::BurnHeight(h) => {
                self.one_block(
                    "WHERE canonical = true AND burn_block_height = $1 ORDER BY block_height DESC LIMIT 1",
                    vec![i(h).into()],
                )
                .await?
            }
        })
    }

    async fn block_contents(&self, block: &BlockRecord) -> Result<BlockContents, ReadError> {
        let ibh = &block.index_block_hash;
        // The incumbent's order: anchored transactions first, then microblock transactions by
        // sequence, each by its tx_index descending; boot-block transactions keep their own
        // indexes (they follow block 1's own here) and come first on a tie.
        let own = i(block.tx_count);
        // A canonical block's ids as stored with it (`blocks.tx_ids`, migration 0042); an
        // orphaned block's and block 1's derived from its rows (`reads_stored_ids`).
        let tx_ids = match reads_stored_ids(block) {
            true => self.stored_tx_ids(ibh).await?,
            // The canonical flag is tested through an expression, not `canonical = true`: given
            // the latter, SQLite's planner (no statistics) walked `txs_canonical_order`, i.e.
            // every canonical transaction, instead of seeking the block's rows (`txs_block`):
            // 2.5 s per block on the 1M-tx store, which made `/extended/v1/block?limit=20` time
            // out.
            false => {
                self.strings(
                    "SELECT tx_id FROM txs WHERE index_block_hash = $1 AND (CASE WHEN canonical THEN 1 ELSE 0 END) = 1 ORDER BY COALESCE(microblock_sequence, 2147483647) DESC, \
                     (CASE WHEN tx_index >= $2 THEN tx_index - $2 ELSE tx_index END) DESC, tx_index DESC",
                    vec![ibh.into(), own.into()],
                    "tx_id",
                )
                .await?
                .into()
            }
        };
        // The incumbent's accepted microblocks are the canonical-stream ones built on the
        // block's parent, whichever block confirmed them: the same as the block's own for a
        // canonical block, its canonical sibling's for an orphaned one.
        let accepted = select(
            "SELECT microblock_hash, MIN(microblock_sequence) AS seq, MAX(tx_count) AS tx_count FROM microblocks \
             WHERE parent_index_block_hash = $1 \
             AND ((index_block_hash = '' AND microblock_canonical = true) OR (index_block_hash <> '' AND canonical = true)) \
             GROUP BY microblock_hash ORDER BY seq",
            vec![block.parent_index_block_hash.as_str().into()],
        )
        .fetch_all(self)
        .await
        .map_err(StoreError::from)?;
        let mut contents = BlockContents::default();
        for r in &accepted {
            let hash: String = r.try_get("microblock_hash").map_err(StoreError::from)?;
            let count: i64 = r.try_get("tx_count").map_err(StoreError::from)?;
            contents.microblocks_accepted.push(hash.clone());
            contents.microblock_tx_count.push((hash, u(count)));
        }
        contents.microblocks_streamed = self
            .strings(
                "SELECT microblock_hash, MIN(microblock_sequence) AS seq FROM microblocks WHERE parent_index_block_hash = $1 \
                 AND ((index_block_hash = '' AND microblock_canonical = true) OR (index_block_hash <> '' AND canonical = true)) \
                 GROUP BY microblock_hash ORDER BY seq",
                vec![ibh.into()],
                "microblock_hash",
            )
            .await?;
        contents.tx_ids = tx_ids;
        Ok(contents)
    }

    async fn block_signer_signatures(&self, block: &BlockRecord) -> Result<Vec<String>, ReadError> {
        let row = select(
            "SELECT signer_signatures FROM blocks WHERE index_block_hash = $1",
            vec![(&block.index_block_hash).into()],
        )
        .fetch_optional(self)
        .await
        .map_err(StoreError::from)?;
        let text: Option<String> = match row {
            Some(r) => r.try_get("signer_signatures").map_err(StoreError::from)?,
            None => None,
        };
        Ok(text.and_then(|t| serde_json::from_str::<Vec<String>>(&t).ok()).unwrap_or_default())
    }

    async fn blocks(&self, limit: u32, offset: u64) -> Result<(u64, Vec<BlockRecord>), ReadError> {
        let Some(tip) = self.tip_height().await? else { return Ok((0, vec![])) };
        let Some(start) = tip.checked_sub(offset) else { return Ok((tip, vec![])) };
        Ok((tip, ChainReader::blocks_below(self, start, limit).await?))
    }

    async fn blocks_below(&self, height: u64, limit: u32) -> Result<Vec<BlockRecord>, ReadError> {
        Ok(self.block_rows(BELOW, vec![i(height).into(), i64::from(limit).into()]).await?)
    }

    async fn blocks_page(&self, start: u64, limit: u32) -> Result<BlocksPage, ReadError> {
        Ok(self.v2_page(start, limit).await?)
    }

    async fn block_by_time(&self, time: i64) -> Result<Option<BlockRecord>, ReadError> {
        Ok(self
            .one_block(
                "WHERE canonical = true AND block_time <= $1 ORDER BY block_height DESC LIMIT 1",
                vec![time.into()],
            )
            .await?)
    }

    async fn burn_block_blocks(
        &self,
        burn_block_hash: &str,
        limit: u32,
        offset: u64,
    ) -> Result<(u64, Vec<BlockRecord>), ReadError> {
        let total = self
            .int(
                "SELECT COUNT(*) FROM blocks WHERE canonical = true AND burn_block_hash = $1",
                vec![burn_block_hash.into()],
            )
            .await?;
        let blocks = self
            .block_rows(
                "WHERE canonical = true AND burn_block_hash = $1 ORDER BY block_height DESC LIMIT $2 OFFSET $3",
                vec![burn_block_hash.into(), i64::from(limit).into(), i(offset).into()],
            )
            .await?;
        Ok((u(total), blocks))
    }

    async fn tenure_blocks(
        &self,
        tenure_height: u64,
        below_height: Option<u64>,
        limit: u32,
    ) -> Result<(u64, Vec<BlockRecord>), ReadError> {
        let t = i(tenure_height);
        let total = self
            .int("SELECT COUNT(*) FROM blocks WHERE canonical = true AND tenure_height = $1", vec![t.into()])
            .await?;
        let below = below_height.map(i).unwrap_or(i64::MAX);
        let blocks = self
            .block_rows(
                "WHERE canonical = true AND tenure_height = $1 AND block_height <= $2 ORDER BY block_height DESC LIMIT $3",
                vec![t.into(), below.into(), i64::from(limit).into()],
            )
            .await?;
        Ok((u(total), blocks))
    }

    async fn average_block_times(&self, now: i64, windows: [i64; 4]) -> Result<[(i64, u64); 4], ReadError> {
        // The incumbent's query: the canonical blocks of the longest window by height, each with
        // the gap to the one before it (in that set); a window averages the gaps of its blocks.
        let t = "(CASE WHEN block_time = 0 THEN burn_block_time ELSE block_time END)";
        let win = |k: usize| {
            format!(
                "CAST(SUM(CASE WHEN t >= ${k} THEN t - p ELSE 0 END) AS BIGINT) AS s{k}, \
             CAST(SUM(CASE WHEN t >= ${k} THEN 1 ELSE 0 END) AS BIGINT) AS n{k}"
            )
        };
        let sql = format!(
            "WITH o AS (SELECT {t} AS t, LAG({t}) OVER (ORDER BY block_height) AS p FROM blocks \
             WHERE canonical = true AND {t} >= $4) \
             SELECT {}, {}, {}, {} FROM o WHERE p IS NOT NULL",
            win(1),
            win(2),
            win(3),
            win(4)
        );
        let vals = windows.iter().map(|w| (now - w).into()).collect();
        let r = select(&sql, vals).fetch_one(self).await.map_err(StoreError::from)?;
        let mut out = [(0, 0); 4];
        for (k, slot) in out.iter_mut().enumerate() {
            let get = |c: String| r.try_get::<Option<i64>, _>(c.as_str()).map(Option::unwrap_or_default);
            let (s, n) = (get(format!("s{}", k + 1)), get(format!("n{}", k + 1)));
            *slot = (s.map_err(StoreError::from)?, u64::try_from(n.map_err(StoreError::from)?).unwrap_or(0));
        }
        Ok(out)
    }

    async fn burn_block(&self, by: BurnRef) -> Result<Option<BurnBlockRecord>, ReadError> {
        let heads = match by {
            BurnRef::Hash(h) => {
                self.burn_block_heads(
                    "AND burn_block_hash = $1 GROUP BY burn_block_hash, burn_block_height",
                    vec![h.into()],
                )
                .await?
            }
            BurnRef::Height(h) => {
                self.burn_block_heads(
                    "AND burn_block_height = $1 GROUP BY burn_block_hash, burn_block_height",
                    vec![i(h).into()],
                )
                .await?
            }
            BurnRef::Latest => {
                self.burn_block_heads(
                    "GROUP BY burn_block_hash, burn_block_height ORDER BY burn_block_height DESC LIMIT 1",
                    vec![],
                )
                .await?
            }
        };
        match heads.into_iter().next() {
            Some(head) => Ok(Some(self.burn_block_record(head).await?)),
            None => Ok(None),
        }
    }

    async fn burn_blocks(&self, limit: u32, offset: u64) -> Result<(u64, Vec<BurnBlockRecord>), ReadError> {
        // The incumbent's total counts the canonical Stacks blocks, not the burn blocks.
        let total = self.tip_height().await?.unwrap_or(0);
        let heads = self
            .burn_block_heads(
                "GROUP BY burn_block_hash, burn_block_height ORDER BY burn_block_height DESC LIMIT $1 OFFSET $2",
                vec![i64::from(limit).into(), i(offset).into()],
            )
            .await?;
        let mut out = Vec::with_capacity(heads.len());
        for head in heads {
            out.push(self.burn_block_record(head).await?);
        }
        // As v2 blocks: the total comes with the rows.
        Ok((if out.is_empty() { 0 } else { total }, out))
    }

    async fn supply(&self, height: Option<u64>) -> Result<Option<SupplyRecord>, ReadError> {
        let block = match height {
            Some(h) => self.block(BlockRef::Height(h)).await?,
            None => self.block(BlockRef::Latest).await?,
        };
        let Some(block) = block else { return Ok(None) };
        let h = i(block.block_height);
        let total = self.supply_at(h).await?;
        Ok(Some(SupplyRecord { total_ustx: total, block_height: block.block_height }))
    }

    async fn burnchain_rewards(
        &self,
        recipient: Option<&str>,
        limit: u32,
        offset: u64,
    ) -> Result<Vec<BurnchainReward>, ReadError> {
        let (filter, mut vals): (&str, Vec<Val>) = match recipient {
            Some(r) => ("AND r.recipient = $3", vec![r.into()]),
            None => ("", vec![]),
        };
        vals.insert(0, i(offset).into());
        vals.insert(0, i64::from(limit).into());
        let sql = format!(
            "SELECT (CASE WHEN r.canonical THEN 1 ELSE 0 END) AS canonical, r.burn_block_hash, r.burn_block_height, \
             COALESCE(b.burn_amount, 0) AS burn_amount, r.recipient, r.amount, r.reward_index FROM burnchain_rewards r \
             LEFT JOIN burn_blocks b ON b.burn_block_hash = r.burn_block_hash WHERE r.canonical = true {filter} \
             ORDER BY r.burn_block_height DESC, r.reward_index DESC LIMIT $1 OFFSET $2"
        );
        let rows = select(&sql, vals).fetch_all(self).await.map_err(StoreError::from)?;
        let rows = rows
            .iter()
            .map(|r| {
                Ok(BurnchainReward {
                    canonical: get_bool(r, "canonical")?,
                    burn_block_hash: r.try_get("burn_block_hash")?,
                    burn_block_height: u(r.try_get("burn_block_height")?),
                    burn_amount: r.try_get("burn_amount")?,
                    reward_recipient: r.try_get("recipient")?,
                    reward_amount: r.try_get("amount")?,
                    reward_index: u(r.try_get("reward_index")?),
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)?;
        Ok(rows)
    }

    async fn burnchain_reward_total(&self, recipient: &str) -> Result<i128, ReadError> {
        let total = self
            .int(
                "SELECT CAST(COALESCE(SUM(amount), 0) AS BIGINT) FROM burnchain_rewards WHERE canonical = true AND recipient = $1",
                vec![recipient.into()],
            )
            .await?;
        Ok(i128::from(total))
    }

    async fn block_list(
        &self,
        height: u64,
        limit: u32,
    ) -> Result<Vec<(BlockRecord, BlockContents)>, ReadError> {
        Ok(self.listed_blocks(height, limit).await?)
    }

    async fn pox_txs(
        &self,
        of: PoxTxsOf,
        limit: u32,
        offset: u64,
    ) -> Result<(u64, Vec<BurnPoxTx>), ReadError> {
        Ok(self.burn_pox_txs(of, limit, offset).await?)
    }

    async fn reward_slot_holders(
        &self,
        address: Option<&str>,
        limit: u32,
        offset: u64,
    ) -> Result<(u64, Vec<RewardSlotHolder>), ReadError> {
        let (filter, mut vals): (&str, Vec<Val>) = match address {
            Some(a) => ("AND address = $1", vec![a.into()]),
            None => ("", vec![]),
        };
        let total = self
            .int(
                &format!("SELECT COUNT(*) FROM reward_slot_holders WHERE canonical = true {filter}"),
                vals.clone(),
            )
            .await?;
        let n = vals.len();
        vals.push(i64::from(limit).into());
        vals.push(i(offset).into());
        let sql = format!(
            "SELECT (CASE WHEN canonical THEN 1 ELSE 0 END) AS canonical, burn_block_hash, burn_block_height, address, \
             slot_index FROM reward_slot_holders WHERE canonical = true {filter} \
             ORDER BY burn_block_height DESC, slot_index DESC LIMIT ${} OFFSET ${}",
            n + 1,
            n + 2
        );
        let rows = select(&sql, vals).fetch_all(self).await.map_err(StoreError::from)?;
        let rows = rows
            .iter()
            .map(|r| {
                Ok(RewardSlotHolder {
                    canonical: get_bool(r, "canonical")?,
                    burn_block_hash: r.try_get("burn_block_hash")?,
                    burn_block_height: u(r.try_get("burn_block_height")?),
                    address: r.try_get("address")?,
                    slot_index: u(r.try_get("slot_index")?),
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)?;
        Ok((u(total), rows))
    }
}
