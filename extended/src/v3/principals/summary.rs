//! The incumbent's v3 `TransactionSummary` of a mined transaction, read from the parts of its
//! JSON materialized at ingest (`MinedTx::api_json`) and its block fields: nothing decoded.

use serde_json::{json, Map, Value};

use crate::tx::{materialized_from_raw, MinedTx};

/// The members of a materialized part (`"a":1,"b":2`) as an object.
fn part(text: &str) -> Map<String, Value> {
    match serde_json::from_str::<Value>(&format!("{{{text}}}")) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// A token transfer memo as the incumbent's `memoToString` shows it: the bytes as UTF-8 with
/// the NUL padding removed.
pub fn memo_repr(hex: &str) -> String {
    let bytes = stacks_codec::decode_hex(hex).unwrap_or_default();
    String::from_utf8_lossy(&bytes).replace('\0', "")
}

pub fn summary_json(tx: &MinedTx) -> Value {
    let text = match &tx.api_json {
        Some(t) => t.clone(),
        None => materialized_from_raw(&tx.tx_id, &tx.raw_tx, tx.is_burnchain_op, &tx.raw_result)
            .unwrap_or_default(),
    };
    let mut parts = text.split('\n');
    let head = part(parts.next().unwrap_or_default());
    let tail = part(parts.nth(1).unwrap_or_default());
    let sponsor = match (head.get("sponsored"), head.get("sponsor_address"), head.get("sponsor_nonce")) {
        (Some(Value::Bool(true)), Some(a), Some(n)) => json!({ "address": a, "nonce": n }),
        _ => Value::Null,
    };
    let mut out = json!({
        "tx_id": tx.tx_id,
        "sender": { "address": head.get("sender_address"), "nonce": head.get("nonce") },
        "sponsor": sponsor,
        "fee_rate": head.get("fee_rate"),
        "block": {
            "height": tx.block_height,
            "hash": tx.block_hash,
            "index_hash": tx.index_block_hash,
            "time": tx.block_time,
            "tx_index": tx.tx_index,
        },
        "bitcoin_block": { "height": tx.burn_block_height, "time": tx.burn_block_time },
        "status": tx.status,
    });
    let field = |obj: &str, key: &str| tail.get(obj).and_then(|o| o.get(key)).cloned().unwrap_or(Value::Null);
    let ty = tail.get("tx_type").and_then(Value::as_str).unwrap_or_default();
    let o = out.as_object_mut().expect("an object");
    match ty {
        "token_transfer" => {
            let memo = match field("token_transfer", "memo") {
                Value::String(h) if !h.is_empty() => json!({ "hex": h, "repr": memo_repr(&h) }),
                _ => Value::Null,
            };
            o.insert("type".into(), "token_transfer".into());
            o.insert(
                "token_transfer".into(),
                json!({
                    "recipient": field("token_transfer", "recipient_address"),
                    "amount": field("token_transfer", "amount"),
                    "memo": memo,
                }),
            );
        }
        "smart_contract" => {
            o.insert("type".into(), "smart_contract".into());
            o.insert(
                "smart_contract".into(),
                json!({
                    "clarity_version": field("smart_contract", "clarity_version"),
                    "contract_id": field("smart_contract", "contract_id"),
                }),
            );
        }
        "contract_call" => {
            o.insert("type".into(), "contract_call".into());
            o.insert(
                "contract_call".into(),
                json!({
                    "contract_id": field("contract_call", "contract_id"),
                    "function_name": field("contract_call", "function_name"),
                }),
            );
        }
        "poison_microblock" => {
            o.insert("type".into(), "poison_microblock".into());
        }
        "coinbase" => {
            o.insert("type".into(), "coinbase".into());
            o.insert(
                "coinbase".into(),
                json!({ "alt_recipient": field("coinbase_payload", "alt_recipient") }),
            );
        }
        "tenure_change" => {
            o.insert("type".into(), "tenure_change".into());
            o.insert("tenure_change".into(), json!({ "cause": field("tenure_change_payload", "cause") }));
        }
        other => {
            o.insert("type".into(), other.into());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memos_lose_their_padding() {
        assert_eq!(memo_repr("0x00000000"), "");
        assert_eq!(memo_repr("0x686900"), "hi");
    }
}
