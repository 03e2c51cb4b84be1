//! The reads behind the v3 transaction routes (`ledger_read::tx::v3::V3TxReader`): canonical
//! transactions in the incumbent's v3 order `(block_height, microblock_sequence, tx_index)`,
//! anchored transactions at sequence 2147483647, `tx_index` as the incumbent shows it
//! (`BootShift`), streamed transactions not yet anchored on top; the pending mempool by
//! `(receipt_time, tx_id)`.

use super::db_row::DbRow;
use ledger_read::chain::HeightOrHash;
use ledger_read::cursor::{MempoolCursor, TxCursor, ANCHORED_SEQUENCE};
use ledger_read::microblock::MicroblockReader;
use ledger_read::tx::v3::{MempoolScope, TxScope, V3AnyTx, V3Block, V3MempoolTx, V3Tx, V3TxReader};
use ledger_read::tx::{AnyTx, MinedTx, TxEvent, TxReader};
use ledger_read::ReadError;

use super::explorer_tx::{shown_index_sql, tx_event, BootShift, EVENT_COLUMNS, PAGE_TX_COLUMNS, SEQ};
use super::sql::{select, Val};
use super::{Store, StoreError};

fn u(v: i64) -> u64 {
    u64::try_from(v).unwrap_or_default()
}

fn i(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// `t`'s position compared with `op` (`<=`, `>`, `=`) to the bound `$h, $s, $i` placeholders.
fn position_cond(op: &str, shown: &str, h: usize) -> String {
    let (s, x) = (h + 1, h + 2);
    match op {
        "=" => format!("(t.block_height = ${h} AND {SEQ} = ${s} AND {shown} = ${x})"),
        _ => {
            let strict = if op == "<=" { "<" } else { ">" };
            format!(
                "(t.block_height {strict} ${h} OR (t.block_height = ${h} AND ({SEQ} {strict} ${s} \
                 OR ({SEQ} = ${s} AND {shown} {op} ${x}))))"
            )
        }
    }
}

fn position_vals(c: TxCursor) -> [Val; 3] {
    [i(c.block_height).into(), i(c.microblock_sequence).into(), i(c.tx_index).into()]
}

fn position_of(t: &MinedTx) -> TxCursor {
    TxCursor {
        block_height: t.block_height,
        microblock_sequence: t.microblock_sequence.map_or(ANCHORED_SEQUENCE, u64::from),
        tx_index: u64::from(t.tx_index),
    }
}

/// The base of every anchored list: canonical transactions of canonical blocks, optionally one.
fn scope_where(scope: TxScope<'_>, vals: &mut Vec<Val>) -> String {
    let mut sql = "FROM txs t JOIN blocks b ON b.index_block_hash = t.index_block_hash \
                   WHERE t.canonical = true"
        .to_string();
    if let TxScope::Block(h) = scope {
        vals.push(h.into());
        sql.push_str(&format!(" AND t.index_block_hash = ${}", vals.len()));
    }
    sql
}

impl Store {
    /// The streamed, not yet anchored transactions (every list of all transactions shows them
    /// on top), each with its position.
    async fn v3_previews(&self, scope: TxScope<'_>) -> Result<Vec<MinedTx>, ReadError> {
        match scope {
            TxScope::All => self.unanchored_txs().await,
            TxScope::Block(_) => Ok(Vec::new()),
        }
    }

    /// What v3 shows of each row beyond v1: its parent block's index hash (previews: the tip
    /// they build on). The boot block's transactions shown in block 1 keep the boot block's
    /// own values, as the incumbent's `txs` rows of them do: its parent index hash and its
    /// block time (its burn time, even 0), where v1 shows block 1's.
    /// A parent already read with the row (`Some`) is taken as is; the others are looked up,
    /// once per block.
    async fn with_parents(&self, txs: Vec<(MinedTx, Option<String>)>) -> Result<Vec<V3Tx>, StoreError> {
        let mut parents: std::collections::HashMap<String, String> = Default::default();
        let mut boots: std::collections::HashMap<String, Option<BootTxs>> = Default::default();
        let mut out = Vec::with_capacity(txs.len());
        for (mut tx, known) in txs {
            if let Some(p) = known {
                parents.entry(tx.index_block_hash.clone()).or_insert(p);
            }
            if !parents.contains_key(&tx.index_block_hash) {
                let p = if tx.index_block_hash.is_empty() {
                    self.tip_index_block_hash().await?
                } else {
                    let row = select(
                        "SELECT parent_index_block_hash FROM blocks WHERE index_block_hash = $1",
                        vec![tx.index_block_hash.clone().into()],
                    )
                    .fetch_optional(self)
                    .await?;
                    row.map(|r| r.try_get::<String, _>("parent_index_block_hash"))
                        .transpose()?
                        .unwrap_or_default()
                };
                parents.insert(tx.index_block_hash.clone(), p);
            }
            let mut parent_index_block_hash = parents[&tx.index_block_hash].clone();
            if tx.block_height == 1 && !tx.index_block_hash.is_empty() {
                if !boots.contains_key(&tx.index_block_hash) {
                    let b = self.boot_txs(&tx.index_block_hash).await?;
                    boots.insert(tx.index_block_hash.clone(), b);
                }
                if let Some(b) = boots[&tx.index_block_hash].as_ref().filter(|b| b.ids.contains(&tx.tx_id)) {
                    tx.block_time = b.block_time;
                    parent_index_block_hash = b.parent_index_block_hash.clone();
                }
            }
            out.push(V3Tx { tx, parent_index_block_hash });
        }
        Ok(out)
    }

    /// The boot block's transactions held by block 1 `index_block_hash`, with the boot block's
    /// parent index hash and burn time; none unless block 1 was built on a stored block 0.
    async fn boot_txs(&self, index_block_hash: &str) -> Result<Option<BootTxs>, StoreError> {
        let row = select(
            "SELECT b.tx_count - g.tx_count AS own, g.burn_block_time, g.parent_index_block_hash FROM blocks b \
             JOIN blocks g ON g.index_block_hash = b.parent_index_block_hash AND g.block_height = 0 \
             WHERE b.index_block_hash = $1 AND b.block_height = 1",
            vec![index_block_hash.into()],
        )
        .fetch_optional(self)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let own: i64 = row.try_get("own")?;
        let ids = select(
            "SELECT tx_id FROM txs WHERE index_block_hash = $1 AND tx_index >= $2",
            vec![index_block_hash.into(), own.into()],
        )
        .fetch_all(self)
        .await?
        .iter()
        .map(|r| r.try_get::<String, _>("tx_id"))
        .collect::<Result<_, _>>()?;
        Ok(Some(BootTxs {
            ids,
            block_time: u(row.try_get("burn_block_time")?),
            parent_index_block_hash: row.try_get("parent_index_block_hash")?,
        }))
    }

    async fn v3_shown(&self) -> Result<(Option<BootShift>, String), StoreError> {
        let shift = self.boot_shift(None).await?;
        Ok((shift, shown_index_sql(shift)))
    }

    /// Pending mempool rows (selected with `columns`), with their receipt heights.
    async fn v3_mempool_rows(&self, rows: &[DbRow]) -> Result<Vec<V3MempoolTx>, StoreError> {
        let txs = self.mempool_with_abis(rows).await?;
        txs.into_iter()
            .zip(rows)
            .map(|(tx, r)| {
                Ok(V3MempoolTx { tx, receipt_block_height: u(r.try_get("receipt_block_height")?) })
            })
            .collect()
    }
}

/// The boot block's transactions in block 1 and what they keep of the boot block.
struct BootTxs {
    ids: std::collections::HashSet<String>,
    block_time: u64,
    parent_index_block_hash: String,
}

/// The condition (` AND …`, its value pushed) restricting the pending transactions to `scope`:
/// for a principal, the incumbent's four roles (sender, token transfer recipient, deployed
/// contract, called contract: `contract_id` holds both contracts).
fn mempool_scope(scope: MempoolScope<'_>, vals: &mut Vec<Val>) -> String {
    match scope {
        MempoolScope::All => String::new(),
        MempoolScope::Principal(p) => {
            vals.push(p.into());
            let n = vals.len();
            format!(" AND (sender_address = ${n} OR token_transfer_recipient = ${n} OR contract_id = ${n})")
        }
    }
}

const MEMPOOL_COLUMNS: &str =
    "tx_id, raw_tx, status, replaced_by_tx_id, receipt_time, tx_type, contract_id, receipt_block_height";

impl V3TxReader for Store {
    async fn v3_tx(&self, tx_id: &str) -> Result<Option<V3AnyTx>, ReadError> {
        match TxReader::tx(self, tx_id, true).await? {
            Some(AnyTx::Mined(t)) => Ok(self.with_parents(vec![(t, None)]).await?.pop().map(V3AnyTx::Mined)),
            // The mempool entry if not pruned (a dropped transaction is not found).
            Some(AnyTx::Mempool(_)) => {
                let rows = select(
                    &format!("SELECT {MEMPOOL_COLUMNS} FROM mempool_txs WHERE tx_id = $1 AND pruned = false"),
                    vec![tx_id.into()],
                )
                .fetch_all(self)
                .await
                .map_err(StoreError::from)?;
                Ok(self.v3_mempool_rows(&rows).await?.pop().map(V3AnyTx::Mempool))
            }
            None => Ok(None),
        }
    }

    async fn v3_tx_events(
        &self,
        tx_id: &str,
        from: u64,
        take: u32,
    ) -> Result<Option<(u64, Vec<TxEvent>)>, ReadError> {
        let row = select(
            "SELECT index_block_hash, microblock_hash, event_count FROM txs WHERE tx_id = $1 \
             AND (canonical = true OR index_block_hash = '') ORDER BY canonical DESC LIMIT 1",
            vec![tx_id.into()],
        )
        .fetch_optional(self)
        .await
        .map_err(StoreError::from)?;
        let Some(row) = row else { return Ok(None) };
        let get = |c: &str| row.try_get::<String, _>(c).map_err(StoreError::from);
        let (block, micro) = (get("index_block_hash")?, get("microblock_hash")?);
        let count = u(row.try_get("event_count").map_err(StoreError::from)?);
        let rows = select(
            &format!(
                "SELECT {EVENT_COLUMNS} FROM events WHERE tx_id = $1 AND index_block_hash = $2 \
                 AND microblock_hash = $3 AND event_index >= $4 ORDER BY event_index LIMIT $5"
            ),
            vec![tx_id.into(), block.into(), micro.into(), i(from).into(), i64::from(take).into()],
        )
        .fetch_all(self)
        .await
        .map_err(StoreError::from)?;
        let events = rows.iter().map(tx_event).collect::<Result<_, _>>().map_err(StoreError::from)?;
        Ok(Some((count, events)))
    }

    async fn v3_block(&self, at: &HeightOrHash) -> Result<Option<V3Block>, ReadError> {
        let (cond, vals): (&str, Vec<Val>) = match at {
            HeightOrHash::Latest => ("canonical = true ORDER BY block_height DESC", vec![]),
            HeightOrHash::Hash(h) => {
                ("(block_hash = $1 OR index_block_hash = $1) AND canonical = true", vec![h.as_str().into()])
            }
            HeightOrHash::Height(h) => ("block_height = $1 AND canonical = true", vec![i(*h).into()]),
        };
        let row =
            select(&format!("SELECT index_block_hash, tx_count FROM blocks WHERE {cond} LIMIT 1"), vals)
                .fetch_optional(self)
                .await
                .map_err(StoreError::from)?;
        let Some(row) = row else { return Ok(None) };
        let index_block_hash: String = row.try_get("index_block_hash").map_err(StoreError::from)?;
        let mut tx_count = u(row.try_get("tx_count").map_err(StoreError::from)?);
        // Block 1 holding the boot block's transactions counts its own only, as the incumbent.
        if let Some(s) = self.boot_shift(Some(&index_block_hash)).await? {
            tx_count = u(s.own);
        }
        Ok(Some(V3Block { index_block_hash, tx_count }))
    }

    async fn v3_tx_total(&self) -> Result<u64, ReadError> {
        // The boot block's transactions shown in block 1 are not counted, as the incumbent.
        // All three are kept with the canonical tip (one statement once kept).
        let count_boot = |s: BootShift| async move {
            let row = select(
                "SELECT COUNT(*) AS n FROM txs t JOIN blocks b ON b.index_block_hash = t.index_block_hash \
                 WHERE t.canonical = true AND b.canonical = true AND t.block_height = 1 AND t.tx_index >= $1",
                vec![s.own.into()],
            )
            .fetch_one(self)
            .await?;
            Ok::<_, StoreError>(u(row.try_get("n")?))
        };
        let (total, boot) = self.canonical_total_and_boot(count_boot).await?;
        Ok(total.saturating_sub(boot))
    }

    async fn v3_txs(
        &self,
        scope: TxScope<'_>,
        from: Option<TxCursor>,
        take: u32,
    ) -> Result<Vec<V3Tx>, ReadError> {
        let mut page: Vec<(MinedTx, Option<String>)> = self
            .v3_previews(scope)
            .await?
            .into_iter()
            .filter(|t| from.is_none_or(|c| position_of(t) <= c))
            .take(take as usize)
            .map(|t| (t, None))
            .collect();
        let room = take as usize - page.len();
        if room > 0 {
            let (_, shown) = self.v3_shown().await?;
            let mut vals = Vec::new();
            let mut sql = scope_where(scope, &mut vals);
            if let Some(c) = from {
                let at = vals.len() + 1;
                vals.extend(position_vals(c));
                sql.push_str(&format!(" AND {}", position_cond("<=", &shown, at)));
            }
            vals.push(i64::try_from(room).unwrap_or(i64::MAX).into());
            // Ties (a boot transaction shown at one of block 1's own indexes): block 1's first.
            // The parent index hash with the row: the block is joined already.
            let sql = format!(
                "SELECT {PAGE_TX_COLUMNS}, b.parent_index_block_hash AS v3_parent {sql} \
                 ORDER BY t.block_height DESC, {SEQ} DESC, {shown} DESC, t.tx_index ASC LIMIT ${}",
                vals.len()
            );
            let rows = select(&sql, vals).fetch_all(self).await.map_err(StoreError::from)?;
            let txs = self.with_abis(&rows).await?;
            for (tx, r) in txs.into_iter().zip(&rows) {
                let parent: String = r.try_get("v3_parent").map_err(StoreError::from)?;
                page.push((tx, Some(parent)));
            }
        }
        Ok(self.with_parents(page).await?)
    }

    async fn v3_positions_after(
        &self,
        scope: TxScope<'_>,
        after: TxCursor,
        take: u32,
    ) -> Result<Vec<TxCursor>, ReadError> {
        let (_, shown) = self.v3_shown().await?;
        let mut vals = Vec::new();
        let mut sql = scope_where(scope, &mut vals);
        let at = vals.len() + 1;
        vals.extend(position_vals(after));
        sql.push_str(&format!(" AND {}", position_cond(">", &shown, at)));
        vals.push(i64::from(take).into());
        let sql = format!(
            "SELECT t.block_height AS h, {SEQ} AS s, {shown} AS x {sql} \
             ORDER BY t.block_height ASC, {SEQ} ASC, {shown} ASC, t.tx_index DESC LIMIT ${}",
            vals.len()
        );
        let rows = select(&sql, vals).fetch_all(self).await.map_err(StoreError::from)?;
        let mut out: Vec<TxCursor> = rows
            .iter()
            .map(|r| {
                Ok(TxCursor {
                    block_height: u(r.try_get("h")?),
                    microblock_sequence: u(r.try_get("s")?),
                    tx_index: u(r.try_get("x")?),
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)?;
        // The streamed transactions follow every anchored one, oldest first.
        let mut previews: Vec<TxCursor> =
            self.v3_previews(scope).await?.iter().map(position_of).filter(|p| *p > after).collect();
        previews.sort();
        out.extend(previews);
        out.truncate(take as usize);
        Ok(out)
    }

    async fn v3_tx_at(&self, scope: TxScope<'_>, at: TxCursor) -> Result<bool, ReadError> {
        if self.v3_previews(scope).await?.iter().any(|t| position_of(t) == at) {
            return Ok(true);
        }
        let (_, shown) = self.v3_shown().await?;
        let mut vals = Vec::new();
        let mut sql = scope_where(scope, &mut vals);
        let n = vals.len() + 1;
        vals.extend(position_vals(at));
        sql.push_str(&format!(" AND {}", position_cond("=", &shown, n)));
        let row = select(&format!("SELECT 1 AS x {sql} LIMIT 1"), vals)
            .fetch_optional(self)
            .await
            .map_err(StoreError::from)?;
        Ok(row.is_some())
    }

    async fn v3_mempool(
        &self,
        scope: MempoolScope<'_>,
        from: Option<&MempoolCursor>,
        take: u32,
    ) -> Result<(u64, Vec<V3MempoolTx>), ReadError> {
        let mut vals: Vec<Val> = Vec::new();
        let scoped = mempool_scope(scope, &mut vals);
        let n = select(
            &format!("SELECT COUNT(*) AS n FROM mempool_txs WHERE pruned = false{scoped}"),
            vals.clone(),
        )
        .fetch_one(self)
        .await
        .map_err(StoreError::from)?;
        let total = u(n.try_get("n").map_err(StoreError::from)?);
        let mut cond = scoped;
        if let Some(c) = from {
            let t = vals.len() + 1;
            vals.push(i(c.receipt_time).into());
            vals.push(c.tx_id.as_str().into());
            cond.push_str(&format!(
                " AND (receipt_time < ${t} OR (receipt_time = ${t} AND tx_id <= ${}))",
                t + 1
            ));
        }
        vals.push(i64::from(take).into());
        let sql = format!(
            "SELECT {MEMPOOL_COLUMNS} FROM mempool_txs WHERE pruned = false{cond} \
             ORDER BY receipt_time DESC, tx_id DESC LIMIT ${}",
            vals.len()
        );
        let rows = select(&sql, vals).fetch_all(self).await.map_err(StoreError::from)?;
        Ok((total, self.v3_mempool_rows(&rows).await?))
    }

    async fn v3_mempool_before(
        &self,
        scope: MempoolScope<'_>,
        before: &MempoolCursor,
        take: u32,
    ) -> Result<Vec<MempoolCursor>, ReadError> {
        let mut vals: Vec<Val> = Vec::new();
        let scoped = mempool_scope(scope, &mut vals);
        let t = vals.len() + 1;
        vals.extend([i(before.receipt_time).into(), before.tx_id.as_str().into(), i64::from(take).into()]);
        let sql = format!(
            "SELECT receipt_time, tx_id FROM mempool_txs WHERE pruned = false{scoped} \
             AND (receipt_time > ${t} OR (receipt_time = ${t} AND tx_id > ${})) \
             ORDER BY receipt_time ASC, tx_id ASC LIMIT ${}",
            t + 1,
            t + 2
        );
        let rows = select(&sql, vals).fetch_all(self).await.map_err(StoreError::from)?;
        Ok(rows
            .iter()
            .map(|r| {
                Ok(MempoolCursor { receipt_time: u(r.try_get("receipt_time")?), tx_id: r.try_get("tx_id")? })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)?)
    }
}
