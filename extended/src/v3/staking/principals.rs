//! `/principals/{p}/staking` (the principal's pox-5 STX stake and its bond totals, with sBTC
//! rewards accrued, claimed and claimable) and `/principals/{p}/staking/bonds` (its bond
//! positions by bond index, ascending).

use serde_json::{json, Value};

use super::model::{Position, StakingState};
use super::principal;
use super::window::{to_page, window};
use crate::error::ApiError;
use crate::params::Query;
use crate::v3::{cursor, page};

fn rewards(accrued: u128, claimed: u128) -> Value {
    json!({
        "accrued": accrued.to_string(),
        "claimed": claimed.to_string(),
        "claimable": (accrued as i128 - claimed as i128).to_string(),
    })
}

pub(super) fn summary(s: &StakingState, p: &[String], _: &Query) -> Result<Value, ApiError> {
    let who = principal(&p[0])?;
    let t = s.totals.get(&who).cloned().unwrap_or_default();
    let locked = s.active_stake(&who).map_or(0, |st| st.amount_ustx);
    Ok(json!({
        "stx": { "locked": locked.to_string(), "rewards": { "btc": rewards(t.stx_accrued, t.stx_claimed) } },
        "bonds": {
            "count": t.bond_count,
            "locked": { "btc": t.bond_btc_locked.to_string(), "stx": t.bond_stx_locked.to_string() },
            "rewards": { "btc": rewards(t.bond_accrued, t.bond_claimed) },
        },
    }))
}

pub(super) fn bonds(s: &StakingState, p: &[String], q: &Query) -> Result<Value, ApiError> {
    let who = principal(&p[0])?;
    let limit = page::limit(q, page::TX)?;
    let c = cursor::read(q, cursor::BOND)?.map(|c| c.parse::<i64>().unwrap_or(i64::MAX));
    let rows: Vec<&Position> = s.positions.values().filter(|p| p.principal == who).collect();
    let mut rows = rows;
    rows.sort_by_key(|p| p.bond_index);
    let start = c.map_or(0, |c| rows.iter().position(|p| p.bond_index >= c).unwrap_or(rows.len()));
    let w = window(&rows, start, limit as usize, |p| p.bond_index.to_string());
    let total = s.totals.get(&who).map_or(0, |t| t.bond_count);
    Ok(to_page(total, limit, &w, |p| position(p)))
}

fn position(p: &Position) -> Value {
    json!({
        "bond_index": p.bond_index,
        "status": p.status.as_str(),
        "active": p.active,
        "enrollment": { "tx_id": p.tx_id, "btc_lockup": { "amount": p.btc_locked.to_string() } },
        "locked": { "btc": p.btc_locked.to_string(), "stx": p.stx_locked.to_string() },
        "rewards": { "btc": rewards(p.accrued, p.claimed) },
    })
}
