//! `/staking/bonds…`: bonds newest index first (cursor: bond index), and a bond's allowlist
//! and registrations newest transaction first (cursor: `height:microblock_sequence:tx_index`).

use serde_json::{json, Value};

use super::model::{AllowlistEntry, Bond, Lockup, Registration, StakingState, TxPlace};
use super::window::{to_page, window};
use super::{path_int, principal};
use crate::error::ApiError;
use crate::params::Query;
use crate::v3::{cursor, page};

/// A cursor `H:0:0` that names no row means the whole of block H.
const BLOCK_END: (i64, i64) = (cursor::ANCHORED_SEQUENCE as i64, cursor::MAX_TX_INDEX as i64);

pub(super) fn list(s: &StakingState, _: &[String], q: &Query) -> Result<Value, ApiError> {
    let limit = page::limit(q, page::TX)?;
    let cursor = cursor::read(q, cursor::BOND)?.map(|c| c.parse::<i64>().unwrap_or(i64::MAX));
    let rows: Vec<&Bond> = s.bonds.values().rev().collect();
    let start = cursor.map_or(0, |c| rows.iter().position(|b| b.index <= c).unwrap_or(rows.len()));
    let w = window(&rows, start, limit as usize, |b| b.index.to_string());
    Ok(to_page(rows.len() as i64, limit, &w, |b| summary(b, s.burn_block_height)))
}

pub(super) fn one(s: &StakingState, p: &[String], _: &Query) -> Result<Value, ApiError> {
    let index = path_int(&p[0], "bond_index")?;
    let b = s.bonds.get(&index).ok_or_else(|| ApiError::NotFound("Bond not found".into()))?;
    let mut v = summary(b, s.burn_block_height);
    v["transaction"] = transaction(&b.at);
    Ok(v)
}

pub(super) fn allowlist(s: &StakingState, p: &[String], q: &Query) -> Result<Value, ApiError> {
    let index = path_int(&p[0], "bond_index")?;
    let rows: Vec<&AllowlistEntry> =
        newest_first(s.allowlist.iter().filter(|e| e.bond_index == index), |e| &e.at);
    let total = s.bonds.get(&index).map_or(0, |b| b.allowed_count);
    tx_page(q, &rows, |e| &e.at, total, allowlist_json)
}

pub(super) fn allowlist_entry(s: &StakingState, p: &[String], _: &Query) -> Result<Value, ApiError> {
    let index = path_int(&p[0], "bond_index")?;
    let who = principal(&p[1])?;
    s.allowlist
        .iter()
        .find(|e| e.bond_index == index && e.staker == who)
        .map(allowlist_json)
        .ok_or_else(|| ApiError::NotFound("Bond allowlist entry not found".into()))
}

pub(super) fn registrations(s: &StakingState, p: &[String], q: &Query) -> Result<Value, ApiError> {
    let index = path_int(&p[0], "bond_index")?;
    let rows = newest_first(s.registrations.iter().filter(|r| r.bond_index == index), |r| &r.at);
    let total = s.bonds.get(&index).map_or(0, |b| b.registered_count);
    tx_page(q, &rows, |r| &r.at, total, registration_summary)
}

pub(super) fn registration(s: &StakingState, p: &[String], _: &Query) -> Result<Value, ApiError> {
    let index = path_int(&p[0], "bond_index")?;
    let who = principal(&p[1])?;
    let r = s
        .registrations
        .iter()
        .find(|r| r.bond_index == index && r.staker == who)
        .ok_or_else(|| ApiError::NotFound("Bond registration not found".into()))?;
    let mut v = registration_summary(r);
    match &r.lockup {
        Lockup::L1(txs) => {
            let txs: Vec<Value> =
                txs.iter().map(|(id, out)| json!({"tx_id": id, "output_index": out})).collect();
            v["l1_lockup"] = json!({ "transactions": txs });
        }
        Lockup::L2 => v["l2_lockup"] = json!({ "tx_id": r.at.tx_id }),
    }
    Ok(v)
}

/// Rows by transaction, newest first (a transaction's own rows: latest event first).
fn newest_first<'a, T>(rows: impl Iterator<Item = &'a T>, at: impl Fn(&T) -> &TxPlace) -> Vec<&'a T> {
    let mut v: Vec<&T> = rows.collect();
    v.sort_by(|a, b| {
        let (a, b) = (at(a), at(b));
        (b.cursor_key(), b.event_index).cmp(&(a.cursor_key(), a.event_index))
    });
    v
}

pub(crate) fn tx_cursor_text(at: &TxPlace) -> String {
    format!("{}:{}:{}", at.block_height, at.microblock_sequence, at.tx_index)
}

/// A page of rows in newest-first transaction order under the incumbent's cursor rules.
fn tx_page<T>(
    q: &Query,
    rows: &[&T],
    at: impl Fn(&T) -> &TxPlace,
    total: i64,
    render: impl Fn(&T) -> Value,
) -> Result<Value, ApiError> {
    let limit = page::limit(q, page::TX)?;
    let start = match cursor::read(q, cursor::TX)? {
        None => 0,
        Some(c) => {
            let n: Vec<i64> = c.split(':').map(|p| p.parse().unwrap_or(i64::MAX)).collect();
            let mut key = (n[0], n[1], n[2]);
            if key.1 == 0 && key.2 == 0 && !rows.iter().any(|r| at(r).cursor_key() == key) {
                key = (key.0, BLOCK_END.0, BLOCK_END.1);
            }
            rows.iter().position(|r| at(r).cursor_key() <= key).unwrap_or(rows.len())
        }
    };
    let w = window(rows, start, limit as usize, |r| tx_cursor_text(at(r)));
    Ok(to_page(total, limit, &w, |r| render(r)))
}

fn status(b: &Bond, burn_height: i64) -> &'static str {
    if burn_height < b.bond_start_height {
        "upcoming"
    } else if burn_height < b.unlock_burn_height {
        "active"
    } else {
        "unlocked"
    }
}

pub(crate) fn summary(b: &Bond, burn_height: i64) -> Value {
    json!({
        "index": b.index,
        "pox_version": "pox5",
        "status": status(b, burn_height),
        "parameters": {
            "target_rate_bps": b.target_rate,
            "stx_value_ratio": b.stx_value_ratio,
            "minimum_stx_ratio": b.min_ustx_ratio,
            "btc_capacity": b.btc_capacity.to_string(),
        },
        "registrations": { "allowed_count": b.allowed_count, "registered_count": b.registered_count },
        "schedule": {
            "activation": { "bitcoin_height": b.bond_start_height, "pox_cycle": b.first_reward_cycle },
            "unlock": { "bitcoin_height": b.unlock_burn_height, "pox_cycle": b.unlock_cycle },
        },
        "balances": {
            "locked": { "btc": b.btc_locked.to_string(), "stx": b.stx_locked.to_string() },
            "paid_out": { "btc": b.btc_paid_out.to_string() },
        },
    })
}

/// The incumbent's `transaction` object of a detail answer.
pub(crate) fn transaction(at: &TxPlace) -> Value {
    json!({
        "tx_id": at.tx_id,
        "block": {
            "height": at.block_height,
            "hash": at.block_hash,
            "index_hash": at.index_block_hash,
            "time": at.block_time,
            "tx_index": at.tx_index,
        },
        "bitcoin_block": { "height": at.burn_block_height, "time": at.burn_block_time },
    })
}

fn allowlist_json(e: &AllowlistEntry) -> Value {
    json!({ "staker": e.staker, "max_sats": e.max_sats.to_string() })
}

fn registration_summary(r: &Registration) -> Value {
    json!({
        "signer": r.signer,
        "staker": r.staker,
        "type": match r.lockup { Lockup::L1(_) => "l1", Lockup::L2 => "l2" },
        "balances": { "btc": r.sats_total.to_string(), "stx": r.amount_ustx.to_string() },
    })
}
