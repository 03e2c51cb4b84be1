//! `/staking/signers…`: every principal that ever registered a signer key (by principal), one
//! signer's registration, the stakers under a signer (active STX stakes and bond
//! registrations, by principal), and the current cycle's reward-set signers with the signer
//! managers whose registered key they are.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::bonds::transaction;
use super::model::{KeyEvent, KeyEventKind, StakingState};
use super::principal;
use super::window::{to_page, window};
use crate::error::{ApiError, In, Rule};
use crate::params::Query;
use crate::pox::cycles::{percent, percent_of_scaled, total_stacked};
use crate::pox::PoxCycleRecord;
use crate::v3::{cursor, page};

pub(super) fn list(s: &StakingState, _: &[String], q: &Query) -> Result<Value, ApiError> {
    let limit = page::limit(q, page::SIGNER)?;
    let c = cursor::read(q, cursor::SIGNER)?;
    let rows: Vec<_> = s.signers.values().collect();
    let start = c.map_or(0, |c| rows.iter().position(|r| r.signer.as_str() >= c).unwrap_or(rows.len()));
    let w = window(&rows, start, limit as usize, |r| r.signer.clone());
    let total = if w.rows.is_empty() { 0 } else { rows.len() as i64 };
    Ok(to_page(total, limit, &w, |r| json!({ "signer": r.signer, "signer_key": r.signer_key })))
}

pub(super) fn one(s: &StakingState, p: &[String], _: &Query) -> Result<Value, ApiError> {
    let who = principal(&p[0])?;
    let r = s.signers.get(&who).ok_or_else(|| ApiError::NotFound("Staking signer not found".into()))?;
    Ok(json!({ "signer": r.signer, "signer_key": r.signer_key, "transaction": transaction(&r.at) }))
}

/// The signer's stakers: an STX stake under it still locked at the burn tip, or a bond
/// registration under it; `types` names which (`btc` for a bond).
pub(super) fn stakers(s: &StakingState, p: &[String], q: &Query) -> Result<Value, ApiError> {
    let who = principal(&p[0])?;
    let limit = page::limit(q, page::STAKER)?;
    let c = cursor::read(q, cursor::SIGNER)?;
    let mut set: BTreeMap<&str, (bool, bool)> = BTreeMap::new();
    for (staker, _) in s.stakes.iter().filter(|(k, st)| st.signer == who && s.active_stake(k).is_some()) {
        set.entry(staker).or_default().0 = true;
    }
    for r in s.registrations.iter().filter(|r| r.signer == who) {
        set.entry(&r.staker).or_default().1 = true;
    }
    let rows: Vec<(&str, (bool, bool))> = set.into_iter().collect();
    let start = c.map_or(0, |c| rows.iter().position(|r| r.0 >= c).unwrap_or(rows.len()));
    let w = window(&rows, start, limit as usize, |r| r.0.to_string());
    let total = if w.rows.is_empty() { 0 } else { rows.len() as i64 };
    Ok(to_page(total, limit, &w, |(staker, (stx, btc))| {
        let types: Vec<&str> =
            [(*stx, "stx"), (*btc, "btc")].into_iter().filter(|t| t.0).map(|t| t.1).collect();
        json!({ "staker": staker, "types": types })
    }))
}

/// `cycle_number` accepts only `current`.
pub(super) fn check_cycle(raw: &str) -> Result<(), ApiError> {
    if raw == "current" {
        Ok(())
    } else {
        Err(ApiError::schema(In::Path, "cycle_number", Rule::Constant))
    }
}

/// The latest cycle's signers by weight (descending) then key; the cursor is a signing key
/// of the cycle (another one is `Cursor not found`).
pub(super) fn cycle(s: &StakingState, c: Option<&PoxCycleRecord>, q: &Query) -> Result<Value, ApiError> {
    let limit = page::limit(q, page::SIGNER)?;
    let key = cursor::read(q, cursor::SIGNING_KEY)?;
    let c = c.ok_or_else(|| ApiError::NotFound("No PoX cycles found".into()))?;
    let mut rows: Vec<_> = c.signers.iter().collect();
    rows.sort_by(|a, b| b.weight.cmp(&a.weight).then(a.signing_key.cmp(&b.signing_key)));
    let start = match key {
        None => 0,
        Some(k) => {
            let k = if k.starts_with("0x") { k.to_string() } else { format!("0x{k}") };
            let at = rows
                .iter()
                .find(|r| r.signing_key == k)
                .ok_or_else(|| ApiError::NotFound("Cursor not found".into()))?;
            let w = at.weight;
            rows.iter()
                .position(|r| r.weight < w || (r.weight == w && r.signing_key >= k))
                .unwrap_or(rows.len())
        }
    };
    let total_weight: u64 = c.signers.iter().map(|s| s.weight).sum();
    let stacked = total_stacked(c) as f64;
    let anchor = c.block_height as i64;
    let w = window(&rows, start, limit as usize, |r| r.signing_key.clone());
    let total = if w.rows.is_empty() { 0 } else { rows.len() as i64 };
    Ok(to_page(total, limit, &w, |r| {
        json!({
            "signing_key": r.signing_key,
            "weight": { "amount": r.weight, "percent": percent(r.weight as f64, total_weight as f64) },
            "staked_stx": {
                "amount": r.stacked_amount.to_string(),
                "percent": percent_of_scaled(r.stacked_amount as f64 * 100.0, stacked),
            },
            "signer_managers": managers(&s.key_events, &r.signing_key, anchor, c.cycle_number as i64),
        })
    }))
}

/// The managers whose latest `register-signer` before the cycle's anchor block bound `key`,
/// by manager, each with its live grants and a later registration of another key (pending).
fn managers(events: &[KeyEvent], key: &str, anchor: i64, cycle: i64) -> Vec<Value> {
    let latest = |before: bool| {
        let mut m: BTreeMap<&str, &KeyEvent> = BTreeMap::new();
        for e in events
            .iter()
            .filter(|e| e.kind == KeyEventKind::Register && (e.at.block_height < anchor) == before)
        {
            m.insert(&e.manager, e);
        }
        m
    };
    let (effective, pending) = (latest(true), latest(false));
    let mut grants: BTreeMap<(&str, &str), &KeyEvent> = BTreeMap::new();
    for e in events.iter().filter(|e| e.kind != KeyEventKind::Register) {
        grants.insert((&e.manager, &e.signer_key), e);
    }
    effective
        .into_iter()
        .filter(|(_, e)| e.signer_key == key)
        .map(|(manager, e)| {
            let live: Vec<&&KeyEvent> = grants
                .iter()
                .filter(|((m, _), g)| *m == manager && g.kind == KeyEventKind::Grant)
                .map(|(_, g)| g)
                .collect();
            let granted: Vec<Value> = live
                .iter()
                .map(|g| json!({ "signer_key": g.signer_key, "auth_id": g.auth_id, "tx_id": g.at.tx_id }))
                .collect();
            let pending = pending.get(manager).filter(|p| p.signer_key != key).map(
                |p| json!({ "signer_key": p.signer_key, "effective_cycle": cycle + 1, "tx_id": p.at.tx_id }),
            );
            json!({
                "signer_manager": manager,
                "registered_at": {
                    "block_height": e.at.block_height,
                    "bitcoin_block_height": e.at.burn_block_height,
                    "tx_id": e.at.tx_id,
                },
                "grant_active": live.iter().any(|g| g.signer_key == key),
                "granted_keys": granted,
                "pending_key_update": pending,
            })
        })
        .collect()
}
