//! The chain entities as the incumbent serializes them (key order included).

use serde_json::{json, Map, Value};

use super::reader::{BlockContents, BlockRecord, BurnBlockRecord, BurnchainReward, RewardSlotHolder};
use crate::time::iso8601;

/// `block_time` falls back to the burn block's time before Nakamoto blocks carried one.
fn block_time(b: &BlockRecord) -> i64 {
    if b.block_time > 0 {
        b.block_time
    } else {
        b.burn_block_time
    }
}

/// A missing tenure height is −1 on a Nakamoto block (it has a signer bitvec), else the height.
fn tenure_height(b: &BlockRecord) -> i64 {
    b.tenure_height.unwrap_or(if b.signer_bitvec.is_some() { -1 } else { b.block_height as i64 })
}

/// The fields v1 `Block` and v2 `NakamotoBlock` share, up to `miner_txid`.
fn base(b: &BlockRecord, with_parent_index: bool) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("canonical".into(), json!(b.canonical));
    m.insert("height".into(), json!(b.block_height));
    m.insert("hash".into(), json!(b.block_hash));
    m.insert("block_time".into(), json!(block_time(b)));
    m.insert("block_time_iso".into(), json!(iso8601(block_time(b))));
    m.insert("tenure_height".into(), json!(tenure_height(b)));
    m.insert("index_block_hash".into(), json!(b.index_block_hash));
    m.insert("parent_block_hash".into(), json!(b.parent_block_hash));
    if with_parent_index {
        m.insert("parent_index_block_hash".into(), json!(b.parent_index_block_hash));
    }
    m.insert("burn_block_time".into(), json!(b.burn_block_time));
    m.insert("burn_block_time_iso".into(), json!(iso8601(b.burn_block_time)));
    m.insert("burn_block_hash".into(), json!(b.burn_block_hash));
    m.insert("burn_block_height".into(), json!(b.burn_block_height));
    m.insert("miner_txid".into(), json!(b.miner_txid));
    m
}

fn costs(m: &mut Map<String, Value>, b: &BlockRecord) {
    let names = ["read_count", "read_length", "runtime", "write_count", "write_length"];
    for (name, v) in names.iter().zip(b.execution_cost) {
        m.insert(format!("execution_cost_{name}"), json!(v));
    }
}

fn is_zero_hash(h: &str) -> bool {
    h.trim_start_matches("0x").bytes().all(|c| c == b'0')
}

/// v1 `Block`.
pub fn block_v1(b: &BlockRecord, c: &BlockContents) -> Value {
    let mut m = base(b, false);
    costs(&mut m, b);
    m.insert("txs".into(), json!(c.tx_ids));
    let no_parent_mb = b.parent_microblock_hash.is_empty() || is_zero_hash(&b.parent_microblock_hash);
    m.insert(
        "parent_microblock_hash".into(),
        json!(if no_parent_mb { "" } else { b.parent_microblock_hash.as_str() }),
    );
    m.insert(
        "parent_microblock_sequence".into(),
        json!(if no_parent_mb { -1 } else { b.parent_microblock_sequence }),
    );
    m.insert("microblocks_accepted".into(), json!(c.microblocks_accepted));
    m.insert("microblocks_streamed".into(), json!(c.microblocks_streamed));
    let counts: Map<String, Value> =
        c.microblock_tx_count.iter().map(|(h, n)| (h.clone(), json!(n))).collect();
    m.insert("microblock_tx_count".into(), Value::Object(counts));
    Value::Object(m)
}

/// v2 `NakamotoBlock`.
pub fn block_v2(b: &BlockRecord) -> Value {
    let mut m = base(b, true);
    m.insert("tx_count".into(), json!(b.tx_count));
    costs(&mut m, b);
    Value::Object(m)
}

/// The incumbent's `avg_block_time`: rounded to 2 decimals (`parseFloat(toFixed(2))`), then
/// serialized by its `Type.Integer` schema, which truncates toward zero.
fn whole_seconds(avg: f64) -> i64 {
    ((avg * 100.0).round() / 100.0).trunc() as i64
}

/// v2 `BurnBlock`.
pub fn burn_block(b: &BurnBlockRecord) -> Value {
    json!({
        "burn_block_time": b.burn_block_time,
        "burn_block_time_iso": iso8601(b.burn_block_time),
        "burn_block_hash": b.burn_block_hash,
        "burn_block_height": b.burn_block_height,
        "stacks_blocks": b.stacks_blocks,
        "avg_block_time": whole_seconds(b.avg_block_time),
        "total_tx_count": b.total_tx_count,
    })
}

pub fn burnchain_reward(r: &BurnchainReward) -> Value {
    json!({
        "canonical": r.canonical,
        "burn_block_hash": r.burn_block_hash,
        "burn_block_height": r.burn_block_height,
        "burn_amount": r.burn_amount.to_string(),
        "reward_recipient": r.reward_recipient,
        "reward_amount": r.reward_amount.to_string(),
        "reward_index": r.reward_index,
    })
}

pub fn reward_slot_holder(r: &RewardSlotHolder) -> Value {
    json!({
        "canonical": r.canonical,
        "burn_block_hash": r.burn_block_hash,
        "burn_block_height": r.burn_block_height,
        "address": r.address,
        "slot_index": r.slot_index,
    })
}

/// µSTX as the incumbent's STX decimal string (`"60005738842.905579"`).
pub fn stx(ustx: i128) -> String {
    let sign = if ustx < 0 { "-" } else { "" };
    let a = ustx.unsigned_abs();
    format!("{sign}{}.{:06}", a / 1_000_000, a % 1_000_000)
}

/// `stx` with thousands separators in the integer part (`"60,005,738,842.905579"`).
pub fn stx_formatted(ustx: i128) -> String {
    let plain = stx(ustx);
    let (int, frac) = plain.split_once('.').unwrap_or((&plain, ""));
    let (sign, digits) = int.strip_prefix('-').map(|d| ("-", d)).unwrap_or(("", int));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    format!("{sign}{out}.{frac}")
}

/// `unlocked / total` in percent with two decimals, rounded half up; `NaN` for a zero total.
pub fn percent(unlocked: i128, total: i128) -> String {
    if total == 0 {
        return "NaN".into();
    }
    let hundredths = (unlocked * 20_000 + total) / (2 * total);
    format!("{}.{:02}", hundredths / 100, hundredths % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_format_like_the_incumbent() {
        assert_eq!(stx(60_005_738_842_905_579), "60005738842.905579");
        assert_eq!(stx_formatted(60_005_738_842_905_579), "60,005,738,842.905579");
        assert_eq!(stx_formatted(100_000_000), "100.000000");
        assert_eq!(stx_formatted(2_318_000_000_000_000), "2,318,000,000.000000");
        assert_eq!(stx(0), "0.000000");
        assert_eq!(percent(5, 5), "100.00");
        assert_eq!(percent(1, 3), "33.33");
        assert_eq!(percent(2, 3), "66.67");
        assert_eq!(percent(0, 0), "NaN");
    }

    #[test]
    fn avg_block_time_is_the_incumbents_truncated_integer() {
        let b = |avg| burn_block(&BurnBlockRecord { avg_block_time: avg, ..Default::default() });
        // 2 gaps of 7 and 8 s: 7.5 → 7 (rounded to 2 decimals, then truncated).
        assert_eq!(b(7.5)["avg_block_time"], serde_json::json!(7));
        // Rounding to 2 decimals first: 6.999 → 7.00 → 7.
        assert_eq!(b(6.999)["avg_block_time"], serde_json::json!(7));
        assert_eq!(b(0.0)["avg_block_time"], serde_json::json!(0));
        assert!(b(20.0 / 3.0)["avg_block_time"].is_i64());
    }

    #[test]
    fn v1_block_drops_an_all_zero_parent_microblock() {
        let b = BlockRecord {
            parent_microblock_hash: format!("0x{}", "0".repeat(64)),
            parent_microblock_sequence: 0,
            block_height: 3,
            ..Default::default()
        };
        let v = block_v1(&b, &BlockContents::default());
        assert_eq!(v["parent_microblock_hash"], "");
        assert_eq!(v["parent_microblock_sequence"], -1);
        assert_eq!(v["tenure_height"], 3);
        let nakamoto = BlockRecord { signer_bitvec: Some("00".into()), ..b };
        assert_eq!(block_v2(&nakamoto)["tenure_height"], -1);
    }
}
