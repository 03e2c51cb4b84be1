//! The v3 `Transaction`, `TransactionSummary`, `MempoolTransaction(Summary)` and
//! `TransactionEvent` entities. A transaction is rendered by v1's renderer (the materialized
//! `Transaction` JSON, [`crate::tx::mined_tx_json`] / [`crate::tx::mempool_tx_json`]) and
//! reshaped, so every number v3 shares with v1 comes from the one rule; events are rendered
//! from the stored event rows.

use serde_json::{json, Map, Value as Json};

use super::reader::{V3MempoolTx, V3Tx};
use crate::tx::{clarity_json, mempool_tx_json, mined_tx_json, RenderError, RenderOptions, TxEvent};

/// The heavy fields `include` adds to a single transaction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Include {
    pub function_args: bool,
    pub source_code: bool,
    pub post_conditions: bool,
    pub result: bool,
}

impl Include {
    /// The `include` values the incumbent accepts, in its schema's order.
    pub const FIELDS: [&'static str; 4] = ["function_args", "source_code", "post_conditions", "result"];

    fn options(&self) -> RenderOptions {
        RenderOptions { exclude_function_args: !self.function_args }
    }
}

/// A token transfer memo as the incumbent's `memoToString`: its bytes as UTF-8 (invalid
/// sequences replaced), every non-printable character (NUL padding, controls, format
/// characters) a space, each run of spaces and replacement characters one space, trimmed.
pub fn memo_repr(hex: &str) -> String {
    let bytes = stacks_codec::decode_hex(hex).unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let printable = |c: char| {
        !c.is_control()
            && !matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{feff}')
    };
    let mut out = String::with_capacity(text.len());
    let mut gap = false;
    for c in text.chars() {
        if !printable(c) || c.is_whitespace() || c == '\u{fffd}' {
            gap = true;
        } else {
            if gap && !out.is_empty() {
                out.push(' ');
            }
            gap = false;
            out.push(c);
        }
    }
    out
}

fn memo(v: &Json) -> Json {
    match v.as_str().filter(|m| !m.is_empty() && *m != "0x") {
        Some(m) => json!({ "hex": m, "repr": memo_repr(m) }),
        None => Json::Null,
    }
}

fn sender(address: &Json, nonce: &Json) -> Json {
    json!({ "address": address, "nonce": nonce })
}

fn sponsor(v1: &Json) -> Json {
    match (v1.get("sponsor_address"), v1.get("sponsor_nonce")) {
        (Some(a), Some(n)) if !a.is_null() && !n.is_null() && v1["sponsored"] == json!(true) => sender(a, n),
        _ => Json::Null,
    }
}

/// `type` and its payload object of a v1 transaction: `full` adds what only the single
/// transaction shows; `mempool` what the mempool entities leave out.
fn payload(v1: &Json, full: bool, mempool: bool, include: Include) -> (String, Option<Json>) {
    let tx_type = v1["tx_type"].as_str().unwrap_or_default().to_string();
    let body = match tx_type.as_str() {
        "token_transfer" => {
            let t = &v1["token_transfer"];
            Some(
                json!({ "recipient": t["recipient_address"], "amount": t["amount"], "memo": memo(&t["memo"]) }),
            )
        }
        "smart_contract" => {
            let s = &v1["smart_contract"];
            let mut m = Map::new();
            m.insert("clarity_version".into(), s["clarity_version"].clone());
            m.insert("contract_id".into(), s["contract_id"].clone());
            if full && include.source_code {
                m.insert("source_code".into(), s["source_code"].clone());
            }
            Some(Json::Object(m))
        }
        "contract_call" => {
            let c = &v1["contract_call"];
            let mut m = Map::new();
            m.insert("contract_id".into(), c["contract_id"].clone());
            m.insert("function_name".into(), c["function_name"].clone());
            if full && include.function_args {
                let args: Vec<Json> = c["function_args"]
                    .as_array()
                    .map(|a| a.iter().map(|x| json!({ "hex": x["hex"], "repr": x["repr"] })).collect())
                    .unwrap_or_default();
                m.insert("function_args".into(), args.into());
            }
            Some(Json::Object(m))
        }
        "coinbase" if mempool => None,
        "coinbase" => {
            let c = &v1["coinbase_payload"];
            let mut m = Map::new();
            m.insert("alt_recipient".into(), c["alt_recipient"].clone());
            if full {
                m.insert("payload".into(), c["data"].clone());
                m.insert("vrf_proof".into(), c.get("vrf_proof").cloned().unwrap_or(Json::Null));
            }
            Some(Json::Object(m))
        }
        "tenure_change" if mempool => None,
        "tenure_change" => {
            let t = &v1["tenure_change_payload"];
            Some(if full { t.clone() } else { json!({ "cause": t["cause"] }) })
        }
        _ => None,
    };
    (tx_type, body)
}

fn with_payload(mut m: Map<String, Json>, v1: &Json, full: bool, mempool: bool, include: Include) -> Json {
    let (tx_type, body) = payload(v1, full, mempool, include);
    if let Some(b) = body {
        m.insert(tx_type.clone(), b);
    }
    m.insert("type".into(), tx_type.into());
    Json::Object(m)
}

/// The summary fields of a mined transaction.
fn summary_fields(t: &V3Tx, v1: &Json) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("tx_id".into(), v1["tx_id"].clone());
    m.insert("sender".into(), sender(&v1["sender_address"], &v1["nonce"]));
    m.insert("sponsor".into(), sponsor(v1));
    m.insert("fee_rate".into(), v1["fee_rate"].clone());
    let index_hash = if t.tx.index_block_hash.is_empty() { "0x" } else { &t.tx.index_block_hash };
    m.insert(
        "block".into(),
        json!({
            "height": v1["block_height"],
            "hash": v1["block_hash"],
            "index_hash": index_hash,
            "time": v1["block_time"],
            "tx_index": v1["tx_index"],
        }),
    );
    m.insert(
        "bitcoin_block".into(),
        json!({ "height": v1["burn_block_height"], "time": v1["burn_block_time"] }),
    );
    m.insert("status".into(), v1["tx_status"].clone());
    m
}

/// A mined `TransactionSummary` (lists).
pub fn summary_json(t: &V3Tx) -> Result<Json, RenderError> {
    let v1 = mined_tx_json(&t.tx, None, RenderOptions { exclude_function_args: true })?;
    Ok(with_payload(summary_fields(t, &v1), &v1, false, false, Include::default()))
}

/// A mined `Transaction` with the `include`d heavy fields.
pub fn transaction_json(t: &V3Tx, include: Include) -> Result<Json, RenderError> {
    let v1 = mined_tx_json(&t.tx, None, include.options())?;
    let mut m = summary_fields(t, &v1);
    m.insert(
        "parent_block".into(),
        json!({ "hash": v1["parent_block_hash"], "index_hash": t.parent_index_block_hash }),
    );
    if include.post_conditions {
        m.insert("post_conditions".into(), v1["post_conditions"].clone());
    }
    m.insert("event_count".into(), v1["event_count"].clone());
    m.insert(
        "execution_cost".into(),
        json!({
            "read_count": v1["execution_cost_read_count"],
            "read_length": v1["execution_cost_read_length"],
            "runtime": v1["execution_cost_runtime"],
            "write_count": v1["execution_cost_write_count"],
            "write_length": v1["execution_cost_write_length"],
        }),
    );
    m.insert("vm_error".into(), v1["vm_error"].clone());
    if include.result {
        m.insert("result".into(), v1["tx_result"].clone());
    }
    Ok(with_payload(m, &v1, true, false, include))
}

fn mempool_fields(t: &V3MempoolTx, v1: &Json) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("tx_id".into(), v1["tx_id"].clone());
    m.insert("sender".into(), sender(&v1["sender_address"], &v1["nonce"]));
    m.insert("sponsor".into(), sponsor(v1));
    m.insert("fee_rate".into(), v1["fee_rate"].clone());
    m.insert("receipt_time".into(), t.tx.receipt_time.into());
    m.insert("receipt_block_height".into(), t.receipt_block_height.into());
    m.insert("status".into(), v1["tx_status"].clone());
    m
}

/// A `MempoolTransactionSummary` (lists).
pub fn mempool_summary_json(t: &V3MempoolTx) -> Result<Json, RenderError> {
    let v1 = mempool_tx_json(&t.tx, RenderOptions { exclude_function_args: true })?;
    Ok(with_payload(mempool_fields(t, &v1), &v1, false, true, Include::default()))
}

/// A `MempoolTransaction` with the `include`d heavy fields (`result` has none to add).
pub fn mempool_transaction_json(t: &V3MempoolTx, include: Include) -> Result<Json, RenderError> {
    let v1 = mempool_tx_json(&t.tx, include.options())?;
    let mut m = mempool_fields(t, &v1);
    m.insert("replaced_by_tx_id".into(), v1["replaced_by_tx_id"].clone());
    if include.post_conditions {
        m.insert("post_conditions".into(), v1["post_conditions"].clone());
    }
    Ok(with_payload(m, &v1, true, true, include))
}

/// A v3 `TransactionEvent` from its stored row.
pub fn event_json(e: &TxEvent) -> Json {
    let s = |v: &Option<String>| Json::from(v.clone().unwrap_or_default());
    let amount = || s(&e.amount);
    let value = || clarity_json(e.value_hex.as_deref().unwrap_or_default());
    let (family, action) = e.kind.split_once('_').unwrap_or((e.kind.as_str(), ""));
    let body = match (family, action) {
        ("contract", _) => (
            "contract_log",
            json!({ "contract_id": s(&e.contract_identifier), "topic": "print", "value": value() }),
        ),
        ("stx", "lock") => (
            "stx_lock",
            json!({
                "amount": amount(),
                "unlock_bitcoin_height": e.unlock_height.unwrap_or_default(),
                "address": s(&e.sender),
            }),
        ),
        ("stx", "transfer") => (
            "stx_asset",
            json!({
                "type": "transfer",
                "sender": s(&e.sender),
                "recipient": s(&e.recipient),
                "amount": amount(),
                "memo": e.memo.as_deref().filter(|m| !m.is_empty() && *m != "0x")
                    .map_or(Json::Null, |m| json!({ "hex": m, "repr": memo_repr(m) })),
            }),
        ),
        ("stx", "mint") => {
            ("stx_asset", json!({ "type": "mint", "recipient": s(&e.recipient), "amount": amount() }))
        }
        ("stx", _) => ("stx_asset", json!({ "type": "burn", "sender": s(&e.sender), "amount": amount() })),
        (fam, act) => {
            let (entity, tail) = if fam == "ft" { ("ft_asset", "amount") } else { ("nft_asset", "value") };
            let tail_value = if fam == "ft" { amount() } else { value() };
            let mut m = Map::new();
            m.insert("type".into(), act.into());
            m.insert("asset_identifier".into(), s(&e.asset_identifier));
            if act != "mint" {
                m.insert("sender".into(), s(&e.sender));
            }
            if act != "burn" {
                m.insert("recipient".into(), s(&e.recipient));
            }
            m.insert(tail.into(), tail_value);
            (entity, Json::Object(m))
        }
    };
    json!({ "event_index": e.event_index, "type": body.0, body.0: body.1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memos_read_as_the_incumbents_memo_to_string() {
        // Recorded (mainnet-reorg-scenario2 and epoch-3-transition principal transactions).
        assert_eq!(
            memo_repr("0x31303033303036323600000000000000000000000000000000000000000000000000"),
            "100300626"
        );
        assert_eq!(memo_repr(&format!("0x{}", "00".repeat(34))), "");
        assert_eq!(memo(&json!("0x5354580000")), json!({"hex": "0x5354580000", "repr": "STX"}));
        // Recorded (mainnet-reorg-scenario1, block 10): a space before the padding is trimmed.
        assert_eq!(
            memo_repr("0x55684f68200000000000000000000000000000000000000000000000000000000000"),
            "UhOh"
        );
        assert_eq!(memo_repr("0x000068690a0a7468657265ff00"), "hi there");
    }

    #[test]
    fn events_take_the_v3_shapes() {
        let e = TxEvent {
            event_index: 3,
            kind: "ft_transfer".into(),
            sender: Some("SA".into()),
            recipient: Some("SB".into()),
            amount: Some("5".into()),
            asset_identifier: Some("SP1.t::x".into()),
            ..Default::default()
        };
        assert_eq!(
            event_json(&e),
            json!({"event_index": 3, "type": "ft_asset", "ft_asset": {"type": "transfer",
                "asset_identifier": "SP1.t::x", "sender": "SA", "recipient": "SB", "amount": "5"}})
        );
        let lock = TxEvent {
            kind: "stx_lock".into(),
            sender: Some("SA".into()),
            amount: Some("9".into()),
            unlock_height: Some(40),
            ..Default::default()
        };
        assert_eq!(
            event_json(&lock),
            json!({"event_index": 0, "type": "stx_lock", "stx_lock": {"amount": "9",
                "unlock_bitcoin_height": 40, "address": "SA"}})
        );
        let mint = TxEvent {
            kind: "stx_mint".into(),
            recipient: Some("SB".into()),
            amount: Some("1".into()),
            ..Default::default()
        };
        assert_eq!(event_json(&mint)["stx_asset"], json!({"type": "mint", "recipient": "SB", "amount": "1"}));
    }
}
