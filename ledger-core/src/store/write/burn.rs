//! Burn blocks: their rewards, reward slots and PoX transactions, with burn-chain forks.

use super::super::conn::Conn;
use super::super::sql::{exec, insert_rows, Val};
use super::super::ApplyError;
use super::Ctx;
use crate::events::payload::NewBurnBlock;
use crate::ledger;

pub(super) async fn apply_burn_block(
    conn: &mut Conn,
    ctx: &Ctx<'_>,
    b: &NewBurnBlock,
) -> Result<(), ApplyError> {
    let r = ledger::burn::derive_burn_block(b);
    // A burn block at height h replaces whatever was at h or above on another branch. The
    // other tables' rows are written and flipped only here, together with their burn block's
    // row (same hash, same height), so a canonical row of theirs has a canonical `burn_blocks`
    // row: when `burn_blocks` has none to flip (no burn fork, nearly always), neither have
    // they, and their three UPDATEs are skipped.
    let flip = |t: &str| {
        format!("UPDATE {t} SET canonical = false WHERE burn_block_height >= $1 AND burn_block_hash <> $2 AND canonical = true")
    };
    let at_and_hash = || vec![r.burn_block_height.into(), (&r.burn_block_hash).into()];
    if exec(conn, &flip("burn_blocks"), at_and_hash()).await? > 0 {
        for t in ["burnchain_rewards", "reward_slot_holders", "burn_block_pox_txs"] {
            exec(conn, &flip(t), at_and_hash()).await?;
        }
    }
    let at = |h: &String| -> Vec<Val> { vec![h.into(), r.burn_block_height.into()] };
    insert_rows(
        conn,
        "burn_blocks",
        &[
            "burn_block_hash",
            "burn_block_height",
            "burn_amount",
            "consensus_hash",
            "parent_burn_block_hash",
            "canonical",
            "raw_event_id",
        ],
        vec![vec![
            (&r.burn_block_hash).into(),
            r.burn_block_height.into(),
            r.burn_amount.into(),
            (&r.consensus_hash).into(),
            (&r.parent_burn_block_hash).into(),
            true.into(),
            ctx.raw_event_id.into(),
        ]],
        "ON CONFLICT (burn_block_hash) DO UPDATE SET canonical = true, raw_event_id = excluded.raw_event_id",
    )
    .await?;
    let rewards = r.rewards.iter().enumerate().map(|(i, (who, amt))| {
        let mut v = at(&r.burn_block_hash);
        v.extend([(i as i64).into(), who.into(), (*amt).into(), true.into()]);
        v
    });
    insert_rows(
        conn,
        "burnchain_rewards",
        &["burn_block_hash", "burn_block_height", "reward_index", "recipient", "amount", "canonical"],
        rewards.collect(),
        "ON CONFLICT (burn_block_hash, reward_index) DO UPDATE SET canonical = true",
    )
    .await?;
    let slots = r.slot_holders.iter().enumerate().map(|(i, who)| {
        let mut v = at(&r.burn_block_hash);
        v.extend([(i as i64).into(), who.into(), true.into()]);
        v
    });
    insert_rows(
        conn,
        "reward_slot_holders",
        &["burn_block_hash", "burn_block_height", "slot_index", "address", "canonical"],
        slots.collect(),
        "ON CONFLICT (burn_block_hash, slot_index) DO UPDATE SET canonical = true",
    )
    .await?;
    let pox_txs = r.pox_txs.iter().map(|(tx_id, utxo, who, amt)| {
        let mut v = at(&r.burn_block_hash);
        v.extend([tx_id.into(), (*utxo).into(), who.into(), (*amt).into(), true.into()]);
        v
    });
    insert_rows(
        conn,
        "burn_block_pox_txs",
        &["burn_block_hash", "burn_block_height", "tx_id", "utxo_idx", "recipient", "amount", "canonical"],
        pox_txs.collect(),
        "ON CONFLICT (burn_block_hash, tx_id, utxo_idx) DO UPDATE SET canonical = true",
    )
    .await?;
    Ok(())
}
