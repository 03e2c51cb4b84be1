//! The incumbent's `Transaction`, `MempoolTransaction` and `TransactionEvent` JSON, built from
//! stored rows. The one renderer every route family uses for transactions: the decoded part
//! comes from `stacks_codec`'s `api_tx_fields`, the rest from the block and the receipt.

use serde_json::{json, Map, Value as Json};
use stacks_codec::clarity::Value as Clarity;
use stacks_codec::tx::Transaction;

use super::abi::apply_abi;
use super::model::{AnyTx, MempoolTx, MinedTx, TxEvent};
use crate::time::iso8601;

/// What a route asks of the renderer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// Drop `contract_call.function_args` (`exclude_function_args=true`).
    pub exclude_function_args: bool,
}

/// The stored transaction does not decode: the store holds only transactions it decoded, so
/// this means corrupted data.
#[derive(Debug, thiserror::Error)]
#[error("stored transaction {tx_id} does not decode: {reason}")]
pub struct RenderError {
    pub tx_id: String,
    pub reason: String,
}

impl From<RenderError> for crate::ApiError {
    fn from(e: RenderError) -> Self {
        crate::ApiError::Internal(Box::new(e))
    }
}

type JsonMap = Map<String, Json>;

/// The decoded fields, split where the mined or mempool fields go (after `anchor_mode`).
fn decoded(
    tx_id: &str,
    raw_tx: &str,
    abi: Option<&str>,
    opts: RenderOptions,
) -> Result<(JsonMap, JsonMap), RenderError> {
    let err = |reason: String| RenderError { tx_id: tx_id.to_string(), reason };
    let bytes = stacks_codec::decode_hex(raw_tx).map_err(|e| err(e.to_string()))?;
    let tx = Transaction::deserialize(&bytes).map_err(|e| err(e.to_string()))?;
    let mut fields = tx.api_tx_fields();
    // The id is the stored one: a burnchain operation's synthesized bytes do not hash to it.
    fields.insert("tx_id".into(), tx_id.into());
    if let Some(Json::Object(call)) = fields.get_mut("contract_call") {
        if let Some(abi) = abi {
            apply_abi(call, abi);
        }
        if opts.exclude_function_args {
            call.remove("function_args");
        }
    }
    let mut head = Map::new();
    let mut tail = Map::new();
    let mut after = false;
    for (k, v) in fields {
        if after {
            tail.insert(k, v);
        } else {
            after = k == "anchor_mode";
            head.insert(k, v);
        }
    }
    Ok((head, tail))
}

pub fn clarity_json(hex: &str) -> Json {
    let repr = stacks_codec::decode_hex(hex)
        .ok()
        .and_then(|b| Clarity::deserialize(&b).ok())
        .map(|v| v.repr())
        .unwrap_or_default();
    json!({ "hex": hex, "repr": repr })
}

/// The time as the incumbent serves block `*_iso` fields: `""` when unknown (0).
fn iso(t: u64) -> String {
    if t == 0 {
        String::new()
    } else {
        // Stored times come from BIGINT columns, so they fit an i64.
        iso8601(t as i64)
    }
}

/// A mined transaction. `events` is `None` in lists (served as `[]`) and the page of events
/// on single-transaction lookups.
pub fn mined_tx_json(
    tx: &MinedTx,
    events: Option<&[TxEvent]>,
    opts: RenderOptions,
) -> Result<Json, RenderError> {
    let (mut m, tail) = decoded(&tx.tx_id, &tx.raw_tx, tx.contract_abi.as_deref(), opts)?;
    if tx.is_burnchain_op {
        m.insert("nonce".into(), 0.into());
        m.insert("fee_rate".into(), "0".into());
    }
    m.insert("block_hash".into(), tx.block_hash.clone().into());
    m.insert("block_height".into(), tx.block_height.into());
    m.insert("block_time".into(), tx.block_time.into());
    m.insert(
        "block_time_iso".into(),
        if tx.block_time > 0 { iso(tx.block_time) } else { String::new() }.into(),
    );
    if tx.block_hash == "0x" {
        // A streamed microblock transaction: no burn block yet, which the incumbent shows as -1.
        m.insert("burn_block_time".into(), (-1).into());
        m.insert("burn_block_height".into(), (-1).into());
        m.insert("burn_block_time_iso".into(), "".into());
    } else {
        m.insert("burn_block_time".into(), tx.burn_block_time.into());
        m.insert("burn_block_height".into(), tx.burn_block_height.into());
        m.insert("burn_block_time_iso".into(), iso(tx.burn_block_time).into());
    }
    m.insert("parent_burn_block_time".into(), tx.parent_burn_block_time.into());
    m.insert("parent_burn_block_time_iso".into(), iso(tx.parent_burn_block_time).into());
    m.insert("canonical".into(), tx.canonical.into());
    m.insert("tx_index".into(), tx.tx_index.into());
    m.insert("tx_status".into(), tx.status.clone().into());
    m.insert("tx_result".into(), clarity_json(&tx.raw_result));
    m.insert("event_count".into(), tx.event_count.into());
    m.insert("parent_block_hash".into(), tx.parent_block_hash.clone().into());
    m.insert("is_unanchored".into(), (tx.block_hash == "0x").into());
    let micro_hash = if tx.microblock_hash.is_empty() { "0x" } else { &tx.microblock_hash };
    m.insert("microblock_hash".into(), micro_hash.into());
    m.insert("microblock_sequence".into(), tx.microblock_sequence.unwrap_or(i32::MAX as u32).into());
    m.insert("microblock_canonical".into(), tx.microblock_canonical.into());
    let names = ["read_count", "read_length", "runtime", "write_count", "write_length"];
    for (name, v) in names.iter().zip(tx.execution_cost) {
        m.insert(format!("execution_cost_{name}"), v.into());
    }
    m.insert("vm_error".into(), tx.vm_error.clone().into());
    let events: Vec<Json> = events.unwrap_or_default().iter().map(event_json).collect();
    m.insert("events".into(), events.into());
    m.extend(tail);
    Ok(Json::Object(m))
}

/// A mempool transaction.
pub fn mempool_tx_json(tx: &MempoolTx, opts: RenderOptions) -> Result<Json, RenderError> {
    let (mut m, tail) = decoded(&tx.tx_id, &tx.raw_tx, tx.contract_abi.as_deref(), opts)?;
    m.insert("tx_status".into(), tx.status.clone().into());
    m.insert("replaced_by_tx_id".into(), tx.replaced_by_tx_id.clone().into());
    m.insert("receipt_time".into(), tx.receipt_time.into());
    m.insert("receipt_time_iso".into(), iso8601(tx.receipt_time as i64).into());
    m.extend(tail);
    Ok(Json::Object(m))
}

/// Either kind.
pub fn any_tx_json(tx: &AnyTx, events: Option<&[TxEvent]>, opts: RenderOptions) -> Result<Json, RenderError> {
    match tx {
        AnyTx::Mined(t) => mined_tx_json(t, events, opts),
        AnyTx::Mempool(t) => mempool_tx_json(t, opts),
    }
}

/// One `TransactionEvent`.
pub fn event_json(e: &TxEvent) -> Json {
    let s = |v: &Option<String>| v.clone().unwrap_or_default();
    let mut m = Map::new();
    m.insert("event_index".into(), e.event_index.into());
    let (event_type, asset_event_type) = match e.kind.as_str() {
        "contract_log" => ("smart_contract_log", ""),
        "stx_lock" => ("stx_lock", ""),
        k => {
            let (family, action) = k.split_once('_').unwrap_or((k, ""));
            let t = match family {
                "stx" => "stx_asset",
                "ft" => "fungible_token_asset",
                _ => "non_fungible_token_asset",
            };
            (t, action)
        }
    };
    m.insert("event_type".into(), event_type.into());
    m.insert("tx_id".into(), e.tx_id.clone().into());
    match event_type {
        "smart_contract_log" => {
            m.insert(
                "contract_log".into(),
                json!({
                    "contract_id": s(&e.contract_identifier),
                    "topic": s(&e.topic),
                    "value": clarity_json(e.value_hex.as_deref().unwrap_or("0x")),
                }),
            );
        }
        "stx_lock" => {
            m.insert(
                "stx_lock_event".into(),
                json!({
                    "locked_amount": s(&e.amount),
                    "unlock_height": e.unlock_height.unwrap_or_default(),
                    "locked_address": s(&e.sender),
                }),
            );
        }
        _ => {
            let mut a = Map::new();
            a.insert("asset_event_type".into(), asset_event_type.into());
            if event_type != "stx_asset" {
                a.insert("asset_id".into(), s(&e.asset_identifier).into());
            }
            a.insert("sender".into(), s(&e.sender).into());
            a.insert("recipient".into(), s(&e.recipient).into());
            if event_type == "non_fungible_token_asset" {
                a.insert("value".into(), clarity_json(e.value_hex.as_deref().unwrap_or("0x")));
            } else {
                a.insert("amount".into(), s(&e.amount).into());
            }
            if let Some(memo) = &e.memo {
                a.insert("memo".into(), memo.clone().into());
            }
            m.insert("asset".into(), Json::Object(a));
        }
    }
    Json::Object(m)
}
