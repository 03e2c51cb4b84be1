//! The canonical chain's state: a block's effects made canonical (tip caches, totals, mempool,
//! microblock stream), and reorgs, which flip a fork's flags and recompute what follows them.

use std::collections::{BTreeSet, HashMap};

use super::super::conn::Conn;
use super::super::rows::*;
use super::super::sql;
use super::super::sql::{exec, exec_in, fetch_in, Val};
use super::super::totals::Pending;
use super::super::{ApplyError, StoreError};
use super::assets::{apply_ft, ft_deltas, nft_pairs, nft_recompute, nft_upsert_from_events};
use super::chain::{
    at_of, derive_stored, log_block_event, stored_block, stored_block_of, StoredBlock, BLOCK_ADDED,
    BLOCK_REMOVED, STORED_BLOCK,
};
use super::mempool::{mempool_rows_where, prune_mined, restore_mempool};
use super::microblocks::settle_stream;
use super::{Ctx, Inserts, Receipt, BLOCK_TABLES};
use crate::ledger::block::DerivedBlock;
use crate::ledger::state::{touched_accounts, BlockContext};
use crate::ledger::{self, AccountState};

/// Whether [`canonicalize`] finds a block's lock operations and balance rows stored.
#[derive(Debug, Clone, Copy)]
pub(super) enum Materialize {
    /// Stored (`blocks.materialized`): the tip cache is set from them.
    Stored,
    /// Computed and written now; `marked`: the block's row already says `materialized` (it
    /// was inserted so in this transaction), else it is updated.
    Now { marked: bool },
}

/// Makes a block's effects part of the canonical state: computes its lock/unlock operations
/// and balance rows the first time, then updates the tip caches (accounts, FT balances, NFT
/// custody), prunes its transactions from the mempool and settles the microblock stream it
/// builds on. Its parent must be the canonical tip.
pub(super) async fn canonicalize(
    conn: &mut Conn,
    d: &DerivedBlock,
    materialized: Materialize,
    nft_direct: bool,
    receipt: Receipt,
    totals: &mut Pending,
) -> Result<(), ApplyError> {
    let b = &d.block;
    let at = at_of(b, true);
    if let Materialize::Stored = materialized {
        // Writes over the accounts' table. No state set in this transaction is pending here:
        // `restore_chain` flushes before it restores, and a restored fork's stored blocks come
        // before its others (a block once canonical had a canonical parent).
        let sql = format!(
            "INSERT INTO stx_accounts ({cols}) SELECT {cols} FROM stx_balances WHERE index_block_hash = $1 {ACCOUNT_UPSERT}",
            cols = ACCOUNT_COLS.join(", ")
        );
        exec(conn, &sql, vec![(&b.index_block_hash).into()]).await?;
    } else {
        let bctx = BlockContext {
            block_height: b.block_height,
            burn_block_height: b.burn_block_height,
            pox_unlock_heights: [
                b.pox_v1_unlock_height,
                b.pox_v2_unlock_height,
                b.pox_v3_unlock_height,
                b.pox_v4_unlock_height,
            ],
        };
        let prior = load_prior(conn, totals, &touched_accounts(&d.ops, &d.locks), &bctx).await?;
        let m = ledger::materialize(&bctx, &d.ops, &d.locks, &prior, d.next_block_op_index())?;
        let mut ins = Inserts::default();
        ins.add("operations", OP_COLS, m.ops.iter().map(|o| op_vals(o, &at)).collect());
        let bal = m.balances.iter().map(|r| balance_vals(&r.account, &r.state, &at));
        ins.add("stx_balances", BALANCE_COLS, bal.collect());
        ins.send(conn).await?;
        for r in &m.balances {
            totals.set_account(&r.account, r.state.clone(), b.block_height);
        }
        if let Materialize::Now { marked: false } = materialized {
            exec(
                conn,
                "UPDATE blocks SET materialized = true WHERE index_block_hash = $1",
                vec![(&b.index_block_hash).into()],
            )
            .await?;
        }
    }
    apply_ft(conn, &ft_deltas(&d.token_ops), 1).await?;
    note_stx_holders(totals, d);
    totals.apply(d, 1);
    totals.add_tx_lists(d);
    if nft_direct {
        nft_upsert_from_events(conn, d).await?;
    }
    let ids: Vec<String> = d.txs.iter().map(|t| t.tx_id.clone()).collect();
    prune_mined(conn, &ids).await?;
    settle_stream(conn, d, receipt).await?;
    Ok(())
}

/// The state before the block of the accounts it touches and of the locked accounts whose
/// lock may end at its burn height: the states set earlier in this transaction (`totals`),
/// else the stored ones.
async fn load_prior(
    conn: &mut Conn,
    totals: &Pending,
    touched: &[String],
    bctx: &BlockContext,
) -> Result<HashMap<String, AccountState>, sqlx::Error> {
    let cols = format!("account, {ACCOUNT_STATE_COLS}");
    let mut out = HashMap::new();
    let mut stored = Vec::new();
    for a in touched {
        match totals.account(a) {
            Some(s) => {
                out.insert(a.clone(), s.clone());
            }
            None => stored.push(a.clone()),
        }
    }
    let mut rows = fetch_in(
        conn,
        &format!("SELECT {cols} FROM stx_accounts WHERE account IN ({{in}})"),
        vec![],
        &stored,
    )
    .await?;
    let ends = lock_ends(bctx);
    let sql = format!(
        "SELECT {cols} FROM stx_accounts WHERE locked <> 0 AND ((pox_version = 0 AND unlock_burn_height <= $1) \
         OR (pox_version = 1 AND unlock_burn_height <= $2) OR (pox_version = 2 AND unlock_burn_height <= $3) \
         OR (pox_version = 3 AND unlock_burn_height <= $4) OR (pox_version = 4 AND unlock_burn_height <= $5))"
    );
    rows.extend(sql::fetch_all(conn, &sql, ends.iter().map(|&e| Val::I(e)).collect()).await?);
    for r in rows {
        let account: String = r.try_get("account")?;
        // A stored row of an account set in this transaction is older than its set state.
        if totals.account(&account).is_some() {
            continue;
        }
        out.insert(account, account_state(&r)?);
    }
    for (a, s) in totals.accounts().filter(|(_, s)| lock_may_end(s, &ends)) {
        out.insert(a.clone(), s.clone());
    }
    Ok(out)
}

/// Per PoX version (0..=4), the burn height up to which a lock has ended at the block: its
/// own unlock height, or every lock of the version once the node's forced unlock height is
/// reached (the scan above and [`lock_may_end`] apply the same limits).
fn lock_ends(bctx: &BlockContext) -> [i64; 5] {
    let h = bctx.burn_block_height;
    let mut ends = [h; 5];
    for (e, forced) in ends[1..].iter_mut().zip(bctx.pox_unlock_heights) {
        if forced.is_some_and(|f| f <= h) {
            *e = i64::MAX;
        }
    }
    ends
}

/// Whether `s` is a lock that [`lock_ends`] says may have ended.
fn lock_may_end(s: &AccountState, ends: &[i64; 5]) -> bool {
    let end = usize::try_from(s.pox_version).ok().and_then(|v| ends.get(v));
    s.locked != 0 && end.is_some_and(|&e| s.unlock_burn_height <= e)
}

/// Records the accounts the incumbent keeps an 'stx' balance row for (`stx_holders`, never
/// deleted): each transaction's fee payer, even at fee 0, each STX event's sender and
/// recipient, each miner reward's recipient; written with the totals at the flush.
fn note_stx_holders(totals: &mut Pending, d: &DerivedBlock) {
    let payers = d.txs.iter().map(|t| match (&t.sponsor_address, t.sponsored) {
        (Some(s), true) => s.as_str(),
        _ => t.sender_address.as_str(),
    });
    let movers =
        d.events.iter().filter(|e| e.kind.starts_with("stx_") && e.kind != "stx_lock").flat_map(|e| {
            let sender = e.sender.as_deref().filter(|_| e.kind != "stx_mint");
            let recipient = e.recipient.as_deref().filter(|_| e.kind != "stx_burn");
            sender.into_iter().chain(recipient)
        });
    let rewarded = d.miner_rewards.iter().map(|r| r.recipient.as_str());
    totals.add_stx_holders(payers.chain(movers).chain(rewarded));
}

async fn flip(conn: &mut Conn, blocks: &[String], canonical: bool) -> Result<(), sqlx::Error> {
    for t in BLOCK_TABLES {
        let sql = format!("UPDATE {t} SET canonical = $1 WHERE index_block_hash IN ({{in}})");
        exec_in(conn, &sql, vec![canonical.into()], blocks).await?;
    }
    Ok(())
}

/// A block arrived above the tip on a non-canonical parent: the fork ending at that parent
/// becomes canonical and the blocks it replaces are orphaned (the incumbent's
/// `restoreOrphanedChain`). Nothing is deleted; flags flip and the tip caches follow.
pub(super) async fn restore_chain(
    conn: &mut Conn,
    ctx: &Ctx<'_>,
    parent: &StoredBlock,
    receipt: Receipt,
    totals: &mut Pending,
) -> Result<(), ApplyError> {
    // The principal-list rows of the blocks about to be orphaned must be stored to be deleted,
    // the restored blocks' rows continue the counts below the fork point, and the accounts'
    // states are recomputed from the stored tables.
    totals.flush(conn).await?;
    let mut fork = vec![parent.clone()];
    while let Some(last) = fork.last().filter(|b| b.block_height > 1) {
        let p = stored_block(conn, &last.parent_index_block_hash).await?.ok_or_else(|| {
            StoreError::Corrupt(format!("parent of stored block {} is missing", last.index_block_hash))
        })?;
        if p.canonical || p.block_height == 0 {
            break;
        }
        fork.push(p);
    }
    fork.reverse();
    let lowest = fork[0].block_height;
    let orphaned_rows = sql::fetch_all(
        conn,
        &format!("{STORED_BLOCK} WHERE canonical = true AND block_height >= $1 ORDER BY block_height"),
        vec![lowest.into()],
    )
    .await?;
    let orphaned: Vec<StoredBlock> = orphaned_rows.iter().map(stored_block_of).collect::<Result<_, _>>()?;
    tracing::info!(
        fork_height = lowest,
        orphaned = orphaned.len(),
        restored = fork.len(),
        "reorg: restoring an orphaned fork"
    );

    // Orphan the replaced blocks and undo their effect on the tip caches.
    let ids: Vec<String> = orphaned.iter().map(|b| b.index_block_hash.clone()).collect();
    let mut nft = BTreeSet::new();
    for b in &orphaned {
        let d = derive_stored(conn, b, ctx).await?;
        apply_ft(conn, &ft_deltas(&d.token_ops), -1).await?;
        totals.apply(&d, -1);
        nft.extend(nft_pairs(&d));
    }
    flip(conn, &ids, false).await?;
    super::super::totals::remove_tx_lists(conn, &ids).await?;
    // Followers of the event log see the orphaned blocks removed from the tip down.
    for b in orphaned.iter().rev() {
        log_block_event(conn, BLOCK_REMOVED, &b.index_block_hash, &b.block_hash, b.block_height).await?;
    }
    let accounts: Vec<String> = fetch_in(
        conn,
        "SELECT DISTINCT account FROM stx_balances WHERE index_block_hash IN ({in})",
        vec![],
        &ids,
    )
    .await?
    .iter()
    .map(|r| r.try_get("account"))
    .collect::<Result<_, _>>()?;
    recompute_accounts(conn, &accounts).await?;
    let back = mempool_rows_where(conn, "index_block_hash IN ({in})", &ids).await?;
    restore_mempool(conn, back, receipt).await?;

    // Restore the fork, lowest first, each on top of the canonical chain so far.
    for b in &fork {
        let d = derive_stored(conn, b, ctx).await?;
        flip(conn, std::slice::from_ref(&b.index_block_hash), true).await?;
        let m = if b.materialized { Materialize::Stored } else { Materialize::Now { marked: false } };
        canonicalize(conn, &d, m, false, receipt, totals).await?;
        log_block_event(conn, BLOCK_ADDED, &b.index_block_hash, &b.block_hash, b.block_height).await?;
        nft.extend(nft_pairs(&d));
    }
    nft_recompute(conn, &nft).await?;
    Ok(())
}

/// Resets the tip cache of `accounts` to their latest canonical balance row.
async fn recompute_accounts(conn: &mut Conn, accounts: &[String]) -> Result<(), sqlx::Error> {
    exec_in(conn, "DELETE FROM stx_accounts WHERE account IN ({in})", vec![], accounts).await?;
    let cols = ACCOUNT_COLS.iter().map(|c| format!("b.{c}")).collect::<Vec<_>>().join(", ");
    let sql = format!(
        "INSERT INTO stx_accounts ({}) SELECT {cols} FROM stx_balances b WHERE b.account IN ({{in}}) \
         AND b.canonical = true AND b.block_height = (SELECT MAX(b2.block_height) FROM stx_balances b2 \
         WHERE b2.account = b.account AND b2.canonical = true)",
        ACCOUNT_COLS.join(", ")
    );
    exec_in(conn, &sql, vec![], accounts).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locked(pox_version: i64, unlock_burn_height: i64) -> AccountState {
        AccountState { locked: 10, unlock_burn_height, pox_version, ..AccountState::default() }
    }

    #[test]
    fn a_lock_ends_at_its_height_or_at_its_versions_forced_unlock() {
        let bctx = BlockContext {
            block_height: 5,
            burn_block_height: 100,
            pox_unlock_heights: [Some(90), Some(120), None, None],
        };
        let ends = lock_ends(&bctx);
        assert_eq!(ends, [100, i64::MAX, 100, 100, 100]);
        // pox-1 is past its forced unlock: every lock of it ends, however late its own height.
        assert!(lock_may_end(&locked(1, 500), &ends));
        assert!(lock_may_end(&locked(2, 100), &ends));
        assert!(!lock_may_end(&locked(2, 101), &ends));
        assert!(!lock_may_end(&locked(4, 101), &ends));
        assert!(!lock_may_end(&AccountState { liquid: 5, ..AccountState::default() }, &ends));
        assert!(!lock_may_end(&locked(7, 0), &ends));
    }
}
