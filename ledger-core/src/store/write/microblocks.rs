//! Streamed microblocks: previews on the canonical tip, and what an anchor block settles.

use std::collections::{BTreeSet, HashMap};

use super::super::conn::Conn;
use super::super::rows::*;
use super::super::sql;
use super::super::sql::{exec_in, insert_rows};
use super::super::ApplyError;
use super::chain::tip;
use super::mempool::{mempool_rows_where, prune_mined, restore_mempool};
use super::{Ctx, Receipt};
use crate::events::payload::NewMicroblocks;
use crate::ledger::block::DerivedBlock;
use crate::ledger::{self, MempoolTxRow};

/// The anchor block decides the fate of the stream built on its parent: streamed microblocks
/// it does not accept are orphaned, and their transactions that it does not include go back
/// to the mempool.
pub(super) async fn settle_stream(
    conn: &mut Conn,
    d: &DerivedBlock,
    receipt: Receipt,
) -> Result<(), sqlx::Error> {
    let rows = sql::fetch_all(conn, "SELECT microblock_hash FROM microblocks WHERE parent_index_block_hash = $1 AND index_block_hash = '' \
         AND microblock_canonical = true",
        vec![(&d.block.parent_index_block_hash).into()])
    .await?;
    let accepted: BTreeSet<&str> = d.microblocks.iter().map(|m| m.microblock_hash.as_str()).collect();
    let mut orphaned = Vec::new();
    for r in rows {
        let h: String = r.try_get("microblock_hash")?;
        if !accepted.contains(h.as_str()) {
            orphaned.push(h);
        }
    }
    if orphaned.is_empty() {
        return Ok(());
    }
    exec_in(
        conn,
        "UPDATE microblocks SET microblock_canonical = false WHERE index_block_hash = '' AND microblock_hash IN ({in})",
        vec![],
        &orphaned,
    )
    .await?;
    let included: BTreeSet<&str> = d.txs.iter().map(|t| t.tx_id.as_str()).collect();
    let txs =
        mempool_rows_where(conn, "index_block_hash = '' AND microblock_hash IN ({in})", &orphaned).await?;
    let back: Vec<MempoolTxRow> = txs.into_iter().filter(|t| !included.contains(t.tx_id.as_str())).collect();
    restore_mempool(conn, back, receipt).await
}

/// A streamed microblock batch: kept as a preview when it builds on the canonical tip and
/// connects to what is already streamed (the incumbent ignores other batches, as we do).
pub(super) async fn apply_microblocks(
    conn: &mut Conn,
    ctx: &Ctx<'_>,
    m: &NewMicroblocks,
) -> Result<(), ApplyError> {
    let mut s = ledger::microblocks::derive_stream(m, ctx.network, ctx.render)?;
    for mb in &mut s.microblocks {
        mb.stream_receipt_time = Some(ctx.receipt_time);
    }
    let Some(tip) = tip(conn).await? else {
        tracing::info!("microblocks before any block: ignored");
        return Ok(());
    };
    if s.parent_index_block_hash != tip.index_block_hash {
        tracing::info!(parent = %s.parent_index_block_hash, tip = %tip.index_block_hash, "microblocks not built on the canonical tip: ignored");
        return Ok(());
    }
    let Some(first) = s.microblocks.first() else { return Ok(()) };
    let streamed = sql::fetch_all(
        conn,
        "SELECT microblock_hash, microblock_sequence FROM microblocks WHERE parent_index_block_hash = $1 \
         AND index_block_hash = '' AND microblock_canonical = true",
        vec![(&tip.index_block_hash).into()],
    )
    .await?;
    let known: HashMap<String, i64> = streamed
        .iter()
        .map(|r| Ok((r.try_get("microblock_hash")?, r.try_get("microblock_sequence")?)))
        .collect::<Result<_, sqlx::Error>>()?;
    // A stream's first microblock should name the anchor block as its parent; the incumbent
    // does not check that (only the parent index block hash, checked above), and recorded
    // streams exist that break it, so it is only logged.
    let connects = if first.microblock_sequence == 0 {
        if first.microblock_parent_hash != tip.block_hash {
            tracing::warn!(microblock = %first.microblock_hash, parent = %first.microblock_parent_hash,
                anchor = %tip.block_hash, "first microblock does not name the anchor block as its parent");
        }
        true
    } else {
        known.contains_key(&first.microblock_parent_hash)
    };
    if !connects {
        tracing::info!(microblock = %first.microblock_hash, "gap in the microblock stream: batch ignored");
        return Ok(());
    }
    // A micro-fork: streamed microblocks at or after the new batch's start are replaced.
    let new: BTreeSet<&str> = s.microblocks.iter().map(|m| m.microblock_hash.as_str()).collect();
    let replaced: Vec<String> = known
        .iter()
        .filter(|(h, seq)| **seq >= first.microblock_sequence && !new.contains(h.as_str()))
        .map(|(h, _)| h.clone())
        .collect();
    if !replaced.is_empty() {
        exec_in(
            conn,
            "UPDATE microblocks SET microblock_canonical = false WHERE index_block_hash = '' AND microblock_hash IN ({in})",
            vec![],
            &replaced,
        )
        .await?;
        let in_batch: BTreeSet<&str> = s.txs.iter().map(|t| t.tx_id.as_str()).collect();
        let back = mempool_rows_where(conn, "index_block_hash = '' AND microblock_hash IN ({in})", &replaced)
            .await?;
        restore_mempool(
            conn,
            back.into_iter().filter(|t| !in_batch.contains(t.tx_id.as_str())).collect(),
            Receipt {
                time: ctx.receipt_time,
                block_height: tip.block_height,
                raw_event_id: ctx.raw_event_id,
            },
        )
        .await?;
    }
    let at = At {
        index_block_hash: "",
        block_hash: "",
        block_height: tip.block_height + 1,
        burn_block_height: tip.burn_block_height,
        canonical: false,
    };
    let mbs = s.microblocks.iter().map(|mb| microblock_vals(mb, &at, true)).collect();
    insert_rows(
        conn,
        "microblocks",
        MICROBLOCK_COLS,
        mbs,
        "ON CONFLICT (microblock_hash, index_block_hash) DO NOTHING",
    )
    .await?;
    let txs = s.txs.iter().map(|t| tx_vals(t, &at, None)).collect();
    insert_rows(
        conn,
        "txs",
        TX_COLS,
        txs,
        "ON CONFLICT (tx_id, index_block_hash, microblock_hash) DO NOTHING",
    )
    .await?;
    let micro_of: HashMap<&str, &str> =
        s.txs.iter().map(|t| (t.tx_id.as_str(), t.microblock_hash.as_str())).collect();
    let evs =
        s.events.iter().map(|e| event_vals(e, micro_of.get(e.tx_id.as_str()).copied().unwrap_or(""), &at));
    insert_rows(
        conn,
        "events",
        EVENT_COLS,
        evs.collect(),
        "ON CONFLICT (tx_id, index_block_hash, microblock_hash, event_index) DO NOTHING",
    )
    .await?;
    let ids: Vec<String> = s.txs.iter().map(|t| t.tx_id.clone()).collect();
    prune_mined(conn, &ids).await?;
    Ok(())
}
