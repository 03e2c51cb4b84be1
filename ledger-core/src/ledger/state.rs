//! The state-dependent part of a block, computed when the block joins the canonical chain
//! (its parent is then the canonical tip, so "the state before the block" is the current
//! canonical state):
//!
//! * **unlocks**: a lock ends at the first block whose burn height reaches its unlock height
//!   (or the unlock height of its PoX contract version, when the node reports one and it comes
//!   first). That block gets a block-level `stx_unlock` operation moving the locked amount back
//!   to the liquid balance — before its transactions, which may spend it.
//! * **locks**: a lock event carries the account's new *total* lock (stack-increase and
//!   stack-extend re-send it), so its `stx_lock` operation moves `total − locked before`.
//! * **balance rows**: the end-of-block state of every account the block touched.
//!
//! The rows are a function of the block's ancestry only, so a block that is orphaned and later
//! restored keeps them: reorgs only flip `canonical` flags.

use std::collections::{BTreeMap, HashMap};

use serde_json::json;

use super::ops::op;
use super::rows::{BalanceRow, LockIntent, OpRow};
use super::{pox_version, LedgerError};

/// An account's STX state after some block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccountState {
    pub liquid: i64,
    pub locked: i64,
    /// Burn height at which the current lock ends (0: no lock).
    pub unlock_burn_height: i64,
    pub lock_tx_id: Option<String>,
    /// Stacks height of the block with the lock event.
    pub lock_height: i64,
    /// Burn height of that block.
    pub lock_burn_height: i64,
    /// 1..4 for pox..pox-4, 0 when not locked.
    pub pox_version: i64,
}

impl AccountState {
    pub fn total(&self) -> i64 {
        self.liquid + self.locked
    }
}

/// The block a materialization is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockContext {
    pub block_height: i64,
    pub burn_block_height: i64,
    /// `pox_v1_unlock_height` .. `pox_v4_unlock_height`, as the node reported them.
    pub pox_unlock_heights: [Option<i64>; 4],
}

impl BlockContext {
    /// Burn height at which a lock of this state really ends.
    pub fn effective_unlock(&self, s: &AccountState) -> i64 {
        let forced = usize::try_from(s.pox_version - 1)
            .ok()
            .and_then(|i| self.pox_unlock_heights.get(i).copied().flatten());
        match forced {
            Some(f) if f < s.unlock_burn_height => f,
            _ => s.unlock_burn_height,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Materialized {
    /// `stx_unlock` (block-level) and `stx_lock` operations.
    pub ops: Vec<OpRow>,
    /// End-of-block state of every touched account, sorted by account.
    pub balances: Vec<BalanceRow>,
}

/// Accounts whose state `materialize` needs: every account an operation or lock touches. The
/// store adds the locked accounts whose lock may end in this block.
pub fn touched_accounts(ops: &[OpRow], locks: &[LockIntent]) -> Vec<String> {
    let mut v: Vec<String> = ops
        .iter()
        .filter(|o| o.applies())
        .map(|o| o.account.clone())
        .chain(locks.iter().map(|l| l.account.clone()))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Resolves locks and unlocks and computes the end-of-block balances. `prior` holds the state
/// before the block of every touched account and of every locked account that may unlock here
/// (missing accounts start empty). `next_block_op` is the first free block-level op_index.
pub fn materialize(
    ctx: &BlockContext,
    ops: &[OpRow],
    locks: &[LockIntent],
    prior: &HashMap<String, AccountState>,
    next_block_op: i64,
) -> Result<Materialized, LedgerError> {
    let mut state: BTreeMap<String, AccountState> = BTreeMap::new();
    let mut out = Materialized::default();

    // Unlocks first, in account order (deterministic).
    let mut expiring: Vec<(&String, &AccountState)> = prior
        .iter()
        .filter(|(_, s)| s.locked != 0 && ctx.effective_unlock(s) <= ctx.burn_block_height)
        .collect();
    expiring.sort_by(|a, b| a.0.cmp(b.0));
    for (op_index, (account, s)) in (next_block_op..).zip(expiring) {
        let meta = json!({
            "lock_tx_id": s.lock_tx_id,
            "unlock_burn_height": ctx.effective_unlock(s),
            "unlocked_amount": s.locked.to_string(),
        });
        let mut o = op("stx_unlock", "success", account.clone(), Some(s.locked), Some(meta.to_string()));
        o.tx_index = -1;
        o.op_index = op_index;
        o.locked_delta = -s.locked;
        let mut n = s.clone();
        n.liquid += s.locked;
        n.locked = 0;
        n.unlock_burn_height = 0;
        n.pox_version = 0;
        state.insert(account.clone(), n);
        out.ops.push(o);
    }

    // Then block-level rewards and transactions in order, lock intents at their op_index.
    let mut all: Vec<Result<&OpRow, &LockIntent>> = ops.iter().map(Ok).chain(locks.iter().map(Err)).collect();
    all.sort_by_key(|x| match x {
        Ok(o) => (o.tx_index, o.op_index),
        Err(l) => (l.tx_index, l.op_index),
    });
    for item in all {
        match item {
            Ok(o) => {
                if !o.applies() {
                    continue;
                }
                let s = entry(&mut state, prior, &o.account);
                s.liquid = s.liquid.checked_add(o.amount.unwrap_or(0)).ok_or_else(|| overflow(&o.account))?;
                s.locked = s.locked.checked_add(o.locked_delta).ok_or_else(|| overflow(&o.account))?;
            }
            Err(l) => {
                let s = entry(&mut state, prior, &l.account);
                let delta = l.locked_total - s.locked;
                s.liquid -= delta;
                s.locked = l.locked_total;
                s.unlock_burn_height = l.unlock_height;
                s.lock_tx_id = Some(l.tx_id.clone());
                s.lock_height = ctx.block_height;
                s.lock_burn_height = ctx.burn_block_height;
                s.pox_version = pox_version(&l.contract).unwrap_or(0);
                let meta = json!({
                    "locked_total": l.locked_total.to_string(),
                    "unlock_burn_height": l.unlock_height,
                    "contract": l.contract,
                });
                let mut o =
                    op("stx_lock", "success", l.account.clone(), Some(-delta), Some(meta.to_string()));
                o.tx_id = l.tx_id.clone();
                o.tx_index = l.tx_index;
                o.op_index = l.op_index;
                o.locked_delta = delta;
                out.ops.push(o);
            }
        }
    }
    out.balances = state.into_iter().map(|(account, state)| BalanceRow { account, state }).collect();
    Ok(out)
}

fn entry<'a>(
    state: &'a mut BTreeMap<String, AccountState>,
    prior: &HashMap<String, AccountState>,
    account: &str,
) -> &'a mut AccountState {
    state.entry(account.to_owned()).or_insert_with(|| prior.get(account).cloned().unwrap_or_default())
}

fn overflow(account: &str) -> LedgerError {
    LedgerError::Other(format!("balance of {account} overflows 64 bits"))
}
