//! The chain entities as the incumbent serializes them (key order included).

use serde_json::{json, Map, Value};

use super::reader::{BlockContents, BlockRecord, BurnBlockRecord, BurnchainReward, RewardSlotHolder};
use crate::text::{Obj, EXECUTION_COST_NAMES};
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
    for (name, v) in EXECUTION_COST_NAMES.iter().zip(b.execution_cost) {
        m.insert((*name).to_owned(), json!(v));
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

/// [`base`] written as text into a page's buffer (the same members, order and bytes).
fn base_text(o: &mut Obj<'_>, b: &BlockRecord, with_parent_index: bool) {
    o.member("canonical", b.canonical);
    o.member("height", b.block_height);
    o.member("hash", &b.block_hash);
    o.member("block_time", block_time(b));
    o.iso("block_time_iso", block_time(b));
    o.member("tenure_height", tenure_height(b));
    o.member("index_block_hash", &b.index_block_hash);
    o.member("parent_block_hash", &b.parent_block_hash);
    if with_parent_index {
        o.member("parent_index_block_hash", &b.parent_index_block_hash);
    }
    o.member("burn_block_time", b.burn_block_time);
    o.iso("burn_block_time_iso", b.burn_block_time);
    o.member("burn_block_hash", &b.burn_block_hash);
    o.member("burn_block_height", b.burn_block_height);
    o.member("miner_txid", &b.miner_txid);
}

fn costs_text(o: &mut Obj<'_>, b: &BlockRecord) {
    for (name, v) in EXECUTION_COST_NAMES.iter().zip(b.execution_cost) {
        o.member(name, v);
    }
}

/// [`block_v1`] written as text into `out` (list pages: no tree per block).
pub fn block_v1_text(b: &BlockRecord, c: &BlockContents, out: &mut Vec<u8>) {
    let mut o = Obj::open(out);
    base_text(&mut o, b, false);
    costs_text(&mut o, b);
    o.raw_member("txs", |out| c.tx_ids.write_json(out));
    let no_parent_mb = b.parent_microblock_hash.is_empty() || is_zero_hash(&b.parent_microblock_hash);
    o.member("parent_microblock_hash", if no_parent_mb { "" } else { b.parent_microblock_hash.as_str() });
    o.member("parent_microblock_sequence", if no_parent_mb { -1 } else { b.parent_microblock_sequence });
    o.member("microblocks_accepted", &c.microblocks_accepted);
    o.member("microblocks_streamed", &c.microblocks_streamed);
    // As the map `block_v1` collects: a repeated hash keeps its first place and its last count.
    let mut counts = o.object("microblock_tx_count");
    let all = &c.microblock_tx_count;
    for (i, (h, _)) in all.iter().enumerate() {
        if all[..i].iter().any(|(seen, _)| seen == h) {
            continue;
        }
        let n = all.iter().rev().find(|(k, _)| k == h).map_or(0, |(_, n)| *n);
        counts.data_key_member(h, n);
    }
    counts.close();
    o.close();
}

/// [`block_v2`] written as text into `out`.
pub fn block_v2_text(b: &BlockRecord, out: &mut Vec<u8>) {
    let mut o = Obj::open(out);
    base_text(&mut o, b, true);
    o.member("tx_count", b.tx_count);
    costs_text(&mut o, b);
    o.close();
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

    fn sample_blocks() -> Vec<(BlockRecord, BlockContents)> {
        let b = BlockRecord {
            canonical: true,
            block_height: 7,
            block_hash: format!("0x{}", "ab".repeat(32)),
            index_block_hash: format!("0x{}", "cd".repeat(32)),
            parent_block_hash: format!("0x{}", "ef".repeat(32)),
            parent_index_block_hash: format!("0x{}", "12".repeat(32)),
            block_time: 1_700_000_123,
            burn_block_time: 1_700_000_100,
            burn_block_hash: format!("0x{}", "34".repeat(32)),
            burn_block_height: 812_345,
            miner_txid: format!("0x{}", "56".repeat(32)),
            parent_microblock_hash: format!("0x{}", "78".repeat(32)),
            parent_microblock_sequence: 3,
            tenure_height: Some(5),
            signer_bitvec: None,
            execution_cost: [1, -2, 3_000_000_000, 4, i64::MAX],
            tx_count: 9,
        };
        let c = BlockContents {
            tx_ids: vec!["0x01".into(), "0x02\"\u{7}".into()].into(),
            microblocks_accepted: vec!["0xaa".into(), "0xbb".into()],
            microblocks_streamed: vec!["0xcc".into()],
            microblock_tx_count: vec![("0xaa".into(), 2), ("0xbb\"".into(), 0), ("0xaa".into(), 5)],
        };
        let zero_parent = BlockRecord {
            parent_microblock_hash: format!("0x{}", "0".repeat(64)),
            block_time: 0,
            burn_block_time: 0,
            tenure_height: None,
            signer_bitvec: Some("00".into()),
            canonical: false,
            ..b.clone()
        };
        let far = BlockRecord {
            block_time: 400_000_000_000,
            burn_block_time: -5,
            tenure_height: None,
            ..b.clone()
        };
        vec![
            (b, c.clone()),
            (zero_parent, BlockContents::default()),
            (far, c),
            (BlockRecord::default(), BlockContents::default()),
        ]
    }

    #[test]
    fn block_texts_are_the_serialized_trees() {
        for (b, c) in sample_blocks() {
            let mut out = Vec::new();
            block_v1_text(&b, &c, &mut out);
            assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&block_v1(&b, &c)).unwrap());
            let mut out = Vec::new();
            block_v2_text(&b, &mut out);
            assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&block_v2(&b)).unwrap());
        }
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
