//! A `/new_block`: its rows stored once, then its effects made canonical when it extends the
//! tip (after restoring its fork when it builds on one).

use super::super::conn::Conn;
use super::super::rows::*;
use super::super::sql::{fetch_one, insert_rows};
use super::super::totals::Pending;
use super::super::ApplyError;
use super::canonical::{canonicalize, restore_chain, Materialize};
use super::chain::{at_of, block_reads, genesis_of};
use super::mempool::log_added_and_gc;
use super::{Ctx, Inserts, Receipt};
use crate::events::payload::NewBlock;
use crate::ledger::block::DerivedBlock;
use crate::ledger::{self, int, normalize_hex, TxRow};
use std::collections::HashMap;

pub(super) async fn apply_block(
    conn: &mut Conn,
    ctx: &Ctx<'_>,
    b: &NewBlock,
    pre: Option<&DerivedBlock>,
    totals: &mut Pending,
) -> Result<(), ApplyError> {
    let ibh = normalize_hex(&b.index_block_hash);
    let parent_ibh = normalize_hex(&b.parent_index_block_hash);
    let reads = block_reads(conn, &ibh, &parent_ibh).await?;
    if reads.this.is_some() {
        tracing::info!(index_block_hash = %ibh, "block already stored; event kept in the raw log only");
        return Ok(());
    }
    let height = int(b.block_height);
    let parent = reads.parent.filter(|p| p.block_height == height - 1);
    if height > 1 && parent.is_none() {
        return Err(ApplyError::Rejected(format!(
            "DB does not contain a parent block at height {} with index_block_hash {parent_ibh}",
            height - 1
        )));
    }
    let genesis = genesis_of(conn, &parent_ibh, height).await?;
    let derived_here;
    let derived = match pre.filter(|_| genesis.is_none()) {
        Some(d) => d,
        None => {
            derived_here = ledger::derive_block(b, genesis.as_ref(), ctx.network, ctx.render)?;
            &derived_here
        }
    };
    if height == 0 {
        // The boot block stays non-canonical; its transactions join block 1 (incumbent rule).
        insert_rows(
            conn,
            "blocks",
            BLOCK_COLS,
            // Its transactions are stored under block 1, none under its own hash.
            vec![block_vals(&derived.block, &[], false, false, ctx.raw_event_id)],
            "",
        )
        .await?;
        return Ok(());
    }
    let tip = reads.tip;
    let canonical = tip.as_ref().is_none_or(|t| height > t.block_height);
    // For a canonical block the tip is its parent's height (one canonical block per height).
    let receipt =
        Receipt { time: ctx.receipt_time, block_height: height - 1, raw_event_id: ctx.raw_event_id };
    if let Some(p) = parent.as_ref().filter(|p| canonical && !p.canonical && p.block_height >= 1) {
        restore_chain(conn, ctx, p, receipt, totals).await?;
    }
    // A canonical block is materialized below, in this transaction: its row says so from the
    // start (no UPDATE of it afterwards).
    insert_static(conn, derived, canonical, ctx.raw_event_id).await?;
    super::super::bns::write_block(conn, derived, ctx.network, canonical).await?;
    super::super::staking::write_block(conn, derived, canonical).await?;
    if canonical {
        canonicalize(conn, derived, Materialize::Now { marked: true }, true, receipt, totals).await?;
        log_added_and_gc(conn, &derived.block, tip.map_or(0, |t| t.block_height)).await?;
    }
    Ok(())
}

/// The rows that do not depend on chain state (one statement on PostgreSQL, see [`Inserts`]).
async fn insert_static(
    conn: &mut Conn,
    d: &DerivedBlock,
    canonical: bool,
    raw_event_id: i64,
) -> Result<(), sqlx::Error> {
    let at = at_of(&d.block, canonical);
    let mut ins = Inserts::default();
    ins.add("blocks", BLOCK_COLS, vec![block_vals(&d.block, &d.txs, canonical, canonical, raw_event_id)]);
    let txs = d.txs.iter().map(|t| tx_vals(t, &at, Some(&d.block)));
    // SQLite: each row's rowid is chosen here, so that its principals' `account_txs` rows
    // point at it (`tx_rid`, migration 0045). One writer: nothing else inserts meanwhile.
    let tx_rids = if conn.is_postgres() { None } else { Some(next_tx_rowid(conn).await?) };
    let rid_of: HashMap<&str, Option<i64>> = match tx_rids {
        Some(first) => tx_rowids(&d.txs, first),
        None => HashMap::new(),
    };
    match tx_rids {
        Some(first) => {
            let rows = txs.zip(first..).map(|(mut v, rid)| {
                v.push(rid.into());
                v
            });
            ins.add("txs", &TX_COLS_WITH_ROWID, rows.collect());
        }
        None => ins.add("txs", TX_COLS, txs.collect()),
    }
    let micro_of: HashMap<&str, &str> =
        d.txs.iter().map(|t| (t.tx_id.as_str(), t.microblock_hash.as_str())).collect();
    let events =
        d.events.iter().map(|e| event_vals(e, micro_of.get(e.tx_id.as_str()).copied().unwrap_or(""), &at));
    ins.add("events", EVENT_COLS, events.collect());
    let ops = d.ops.iter().chain(&d.token_ops).map(|o| op_vals(o, &at));
    ins.add("operations", OP_COLS, ops.collect());
    let links = d.account_txs.iter().map(|a| account_tx_vals(a, &at));
    if tx_rids.is_some() {
        let rows = links.zip(&d.account_txs).map(|(mut v, a)| {
            v.push(rid_of.get(a.tx_id.as_str()).copied().flatten().into());
            v
        });
        ins.add("account_txs", &ACCOUNT_TX_COLS_WITH_RID, rows.collect());
    } else {
        ins.add("account_txs", ACCOUNT_TX_COLS, links.collect());
    }
    ins.add("smart_contracts", CONTRACT_COLS, d.contracts.iter().map(|c| contract_vals(c, &at)).collect());
    let rewards = d.miner_rewards.iter().enumerate().map(|(i, r)| miner_reward_vals(i, r, &at));
    ins.add("miner_rewards", MINER_REWARD_COLS, rewards.collect());
    ins.add("pox_events", POX_COLS, d.pox_events.iter().map(|p| pox_vals(p, &at)).collect());
    let micro = d.microblocks.iter().map(|m| microblock_vals(m, &at, true));
    ins.add("microblocks", MICROBLOCK_COLS, micro.collect());
    ins.send(conn).await
}

/// The rowid the next `txs` row gets (SQLite).
async fn next_tx_rowid(conn: &mut Conn) -> Result<i64, sqlx::Error> {
    let r = fetch_one(conn, "SELECT COALESCE(MAX(rowid), 0) + 1 AS next FROM txs", vec![]).await?;
    r.try_get("next")
}

/// Each transaction id of a block's rows with the rowid its row gets (rows numbered from
/// `first` in order); `None` for an id stored twice under the block (two microblocks), which
/// its `account_txs` rows then cannot point at alone.
fn tx_rowids(txs: &[TxRow], first: i64) -> HashMap<&str, Option<i64>> {
    let mut out: HashMap<&str, Option<i64>> = HashMap::with_capacity(txs.len());
    for (t, rid) in txs.iter().zip(first..) {
        out.entry(t.tx_id.as_str()).and_modify(|r| *r = None).or_insert(Some(rid));
    }
    out
}
