//! The reads behind `/extended/v1/microblock/*`.
//!
//! A microblock has a streamed row (`index_block_hash = ''`, kept when the stream was
//! accepted) and a row per anchor block that confirmed it. The incumbent shows one row per
//! microblock: the confirmed one once there is one. Its `parent_burn_block_*` is the burn block
//! the stream announced when it was streamed, else the confirming block's parent burn block.

use ledger_read::microblock::{MicroblockReader, MicroblockRecord};
use ledger_read::tx::MinedTx;
use ledger_read::{Paging, ReadError};

use super::db_row::DbRow;
use super::explorer_tx::{BLOCK_FIELD_COLUMNS, MINED_TX_COLUMNS};
use super::sql::{get_bool, select, Val};
use super::{Store, StoreError};

/// `m` is the microblock row, `p` its parent anchor block, `b` the confirming one (LEFT JOINed:
/// a streamed row has none).
const COLUMNS: &str = "m.microblock_hash, m.index_block_hash, m.microblock_sequence, m.microblock_parent_hash, \
    m.block_height, (CASE WHEN m.index_block_hash = '' OR m.canonical THEN 1 ELSE 0 END) AS canonical, \
    (CASE WHEN m.microblock_canonical THEN 1 ELSE 0 END) AS microblock_canonical, \
    COALESCE(p.block_height, m.block_height - 1) AS parent_block_height, \
    COALESCE(p.block_hash, b.parent_block_hash) AS parent_block_hash, \
    COALESCE(s.stream_burn_block_hash, b.parent_burn_block_hash, p.burn_block_hash) AS parent_burn_block_hash, \
    COALESCE(s.stream_burn_block_time, b.parent_burn_block_time, p.burn_block_time) AS parent_burn_block_time, \
    COALESCE(s.stream_burn_block_height, b.parent_burn_block_height, p.burn_block_height) AS parent_burn_block_height, \
    b.block_hash";

const FROM: &str = "FROM microblocks m LEFT JOIN blocks p ON p.index_block_hash = m.parent_index_block_hash \
    LEFT JOIN blocks b ON b.index_block_hash = m.index_block_hash \
    LEFT JOIN microblocks s ON s.microblock_hash = m.microblock_hash AND s.index_block_hash = ''";

/// A microblock's transactions (a streamed one's are the preview rows, `''` like it).
const TXS: &str =
    "JOIN txs t ON t.index_block_hash = m.index_block_hash AND t.microblock_hash = m.microblock_hash";

fn u(v: i64) -> u64 {
    u64::try_from(v).unwrap_or_default()
}

fn record(r: &DbRow) -> Result<MicroblockRecord, sqlx::Error> {
    Ok(MicroblockRecord {
        canonical: get_bool(r, "canonical")?,
        microblock_canonical: get_bool(r, "microblock_canonical")?,
        microblock_hash: r.try_get("microblock_hash")?,
        microblock_sequence: u32::try_from(r.try_get::<i64, _>("microblock_sequence")?).unwrap_or_default(),
        microblock_parent_hash: r.try_get("microblock_parent_hash")?,
        block_height: u(r.try_get("block_height")?),
        parent_block_height: r.try_get::<Option<i64>, _>("parent_block_height")?.map(u).unwrap_or_default(),
        parent_block_hash: r.try_get::<Option<String>, _>("parent_block_hash")?.unwrap_or_default(),
        parent_burn_block_hash: r.try_get::<Option<String>, _>("parent_burn_block_hash")?.unwrap_or_default(),
        parent_burn_block_time: r
            .try_get::<Option<i64>, _>("parent_burn_block_time")?
            .map(u)
            .unwrap_or_default(),
        parent_burn_block_height: r
            .try_get::<Option<i64>, _>("parent_burn_block_height")?
            .map(u)
            .unwrap_or_default(),
        block_hash: r.try_get::<Option<String>, _>("block_hash")?.unwrap_or_else(|| "0x".into()),
        txs: Vec::new(),
    })
}

impl Store {
    /// Rows with their transaction ids filled in (the index block hash is in the row).
    async fn with_txs(&self, rows: &[DbRow]) -> Result<Vec<MicroblockRecord>, StoreError> {
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let mut m = record(r)?;
            let index_block_hash: String = r.try_get("index_block_hash")?;
            let txs = select(
                "SELECT tx_id FROM txs WHERE index_block_hash = $1 AND microblock_hash = $2 ORDER BY tx_index DESC",
                vec![index_block_hash.into(), m.microblock_hash.clone().into()],
            )
            .fetch_all(self)
            .await?;
            m.txs = txs.iter().map(|t| t.try_get("tx_id")).collect::<Result<_, _>>()?;
            out.push(m);
        }
        Ok(out)
    }
}

impl MicroblockReader for Store {
    async fn microblocks(&self, paging: Paging) -> Result<(u64, Vec<MicroblockRecord>), ReadError> {
        // The incumbent's total is its chain tip's `microblock_count`: the microblocks accepted
        // from streams, whatever became of them since.
        let n = select("SELECT COUNT(*) AS n FROM microblocks WHERE index_block_hash = ''", vec![])
            .fetch_one(self)
            .await
            .map_err(StoreError::from)?;
        let total = u(n.try_get("n").map_err(StoreError::from)?);
        // The incumbent pages over (microblock, transaction) pairs and groups them afterwards,
        // so a page can start or end inside a microblock's transaction list. The stream on the
        // tip (not confirmed yet, so above every confirmed microblock) comes first, then the
        // confirmed canonical microblocks by (block height, sequence): an index range.
        let tip = self.tip_index_block_hash().await?;
        let streamed = select(
            &format!(
                "SELECT {COLUMNS}, t.tx_id {FROM} {TXS} WHERE m.parent_index_block_hash = $1 \
                 AND m.index_block_hash = '' AND m.microblock_canonical = true \
                 ORDER BY m.microblock_sequence DESC, t.tx_index DESC"
            ),
            vec![tip.into()],
        )
        .fetch_all(self)
        .await
        .map_err(StoreError::from)?;
        let streamed_count = streamed.len() as u64;
        let offset = usize::try_from(paging.offset).unwrap_or(usize::MAX);
        let limit = paging.limit as usize;
        let mut rows: Vec<DbRow> = streamed.into_iter().skip(offset).take(limit).collect();
        if rows.len() < limit {
            let off = paging.offset.saturating_sub(streamed_count);
            let vals: Vec<Val> = vec![
                i64::try_from(limit - rows.len()).unwrap_or(i64::MAX).into(),
                i64::try_from(off).unwrap_or(i64::MAX).into(),
            ];
            let more = select(
                &format!(
                    "SELECT {COLUMNS}, t.tx_id {FROM} {TXS} WHERE m.canonical = true \
                     ORDER BY m.block_height DESC, m.microblock_sequence DESC, t.tx_index DESC LIMIT $1 OFFSET $2"
                ),
                vals,
            )
            .fetch_all(self)
            .await
            .map_err(StoreError::from)?;
            rows.extend(more);
        }
        let mut out: Vec<(String, MicroblockRecord)> = Vec::new();
        for r in &rows {
            let index_block_hash: String = r.try_get("index_block_hash").map_err(StoreError::from)?;
            let hash: String = r.try_get("microblock_hash").map_err(StoreError::from)?;
            let tx_id: String = r.try_get("tx_id").map_err(StoreError::from)?;
            match out.last_mut() {
                Some((ibh, m)) if *ibh == index_block_hash && m.microblock_hash == hash => m.txs.push(tx_id),
                _ => {
                    let mut m = record(r).map_err(StoreError::from)?;
                    m.txs.push(tx_id);
                    out.push((index_block_hash, m));
                }
            }
        }
        Ok((total, out.into_iter().map(|(_, m)| m).collect()))
    }

    async fn microblock(&self, hash: &str) -> Result<Option<MicroblockRecord>, ReadError> {
        let rows = select(
            &format!(
                "SELECT {COLUMNS} {FROM} WHERE m.microblock_hash = $1 \
                 ORDER BY m.canonical DESC, (CASE WHEN m.index_block_hash = '' THEN 1 ELSE 0 END) DESC, \
                 m.block_height DESC LIMIT 1"
            ),
            vec![hash.into()],
        )
        .fetch_all(self)
        .await
        .map_err(StoreError::from)?;
        Ok(self.with_txs(&rows).await?.pop())
    }

    async fn unanchored_txs(&self) -> Result<Vec<MinedTx>, ReadError> {
        // Streamed rows have no block yet: the parent anchor block `p` supplies the parent block
        // hash, the stream the parent burn time. The canonical tip they build on is read by the
        // same statement (one snapshot, one statement less per list).
        let columns = MINED_TX_COLUMNS
            .replace(BLOCK_FIELD_COLUMNS, PREVIEW_BLOCK)
            .replace("(CASE WHEN t.canonical THEN 1 ELSE 0 END) AS canonical", "1 AS canonical");
        let rows = select(
            &format!(
                "SELECT {columns} FROM microblocks m JOIN txs t ON t.index_block_hash = '' \
                 AND t.microblock_hash = m.microblock_hash JOIN blocks p ON p.index_block_hash = m.parent_index_block_hash \
                 WHERE m.parent_index_block_hash = (SELECT k.index_block_hash FROM blocks k WHERE k.canonical = true \
                   ORDER BY k.block_height DESC LIMIT 1) \
                 AND m.index_block_hash = '' AND m.microblock_canonical = true \
                 ORDER BY m.microblock_sequence DESC, t.tx_index DESC"
            ),
            vec![],
        )
        .fetch_all(self)
        .await
        .map_err(StoreError::from)?;
        Ok(self.with_abis(&rows).await?)
    }
}

/// A streamed transaction's `block_time` is when its `/new_microblocks` event arrived, as the
/// incumbent stamps it (its receipt clock) until an anchor block confirms it.
const PREVIEW_BLOCK: &str = "COALESCE(m.stream_receipt_time, 0) AS block_time, 0 AS burn_block_time, \
    COALESCE(m.stream_burn_block_time, p.burn_block_time) AS parent_burn_block_time, p.block_hash AS parent_block_hash";
