//! PoX events: the node's synthetic `print` from the boot pox-2/3/4 contracts,
//! `(ok (tuple (name ..) (stacker ..) (balance ..) (locked ..) (burnchain-unlock-height ..)
//! (data (tuple ..))))`, decoded to the fields every event kind shares plus the usual `data`
//! members; the whole `data` tuple is also kept as `{key: repr}` JSON.

use stacks_codec::clarity::Value;
use stacks_codec::decode_hex;

use super::btc::pox_address_text;
use super::rows::PoxEventRow;
use super::{int, is_boot_address};

/// `Some` when the log is a pox-2/3/4 print that decodes; other logs (and undecodable values)
/// are plain contract logs.
pub fn decode(contract_identifier: &str, topic: &str, raw_value: &str, mainnet: bool) -> Option<PoxEventRow> {
    let (addr, name) = contract_identifier.split_once('.')?;
    if topic != "print" || !is_boot_address(addr) || !matches!(name, "pox-2" | "pox-3" | "pox-4") {
        return None;
    }
    let value = Value::deserialize(&decode_hex(raw_value).ok()?).ok()?;
    let Value::ResponseOk(inner) = value else { return None };
    let Value::Tuple(top) = *inner else { return None };
    let get = |entries: &[(String, Value)], k: &str| {
        entries.iter().rev().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    };
    let event_name = match get(&top, "name")? {
        Value::StringAscii(b) => String::from_utf8_lossy(&b).into_owned(),
        _ => return None,
    };
    let stacker = principal(&get(&top, "stacker")?)?;
    let data = match get(&top, "data") {
        Some(Value::Tuple(d)) => d,
        _ => Vec::new(),
    };
    let d = |k: &str| get(&data, k);
    let (pox_addr, pox_addr_raw) = match d("pox-addr").map(unwrap_some) {
        Some(Some(v)) => (pox_addr(&v, mainnet), Some(stacks_codec::to_hex_prefixed(&v.serialize()))),
        _ => (None, None),
    };
    let json: serde_json::Map<String, serde_json::Value> =
        data.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.repr()))).collect();
    Some(PoxEventRow {
        pox_contract: name.to_owned(),
        name: event_name,
        stacker,
        balance: get(&top, "balance").and_then(|v| uint_text(&v)),
        locked: get(&top, "locked").and_then(|v| uint_text(&v)),
        burnchain_unlock_height: get(&top, "burnchain-unlock-height").and_then(|v| uint_i64(&v)),
        pox_addr,
        pox_addr_raw,
        amount_ustx: d("amount-ustx").or_else(|| d("lock-amount")).and_then(|v| uint_text(&v)),
        delegate_to: d("delegate-to").and_then(|v| principal(&v)),
        lock_period: d("lock-period").or_else(|| d("extend-count")).and_then(|v| uint_i64(&v)),
        start_burn_height: d("start-burn-height").and_then(|v| uint_i64(&v)),
        unlock_burn_height: d("unlock-burn-height").and_then(|v| uint_i64(&v)),
        start_cycle_id: d("start-cycle-id").and_then(|v| uint_i64(&v)),
        end_cycle_id: d("end-cycle-id").map(unwrap_some).and_then(|v| v.and_then(|v| uint_i64(&v))),
        signer_key: d("signer-key").map(unwrap_some).and_then(|v| match v {
            Some(Value::Buffer(b)) => Some(stacks_codec::to_hex_prefixed(&b)),
            _ => None,
        }),
        data: serde_json::Value::Object(json).to_string(),
        ..PoxEventRow::default()
    })
}

fn unwrap_some(v: Value) -> Option<Value> {
    match v {
        Value::OptionalSome(inner) => Some(*inner),
        Value::OptionalNone => None,
        other => Some(other),
    }
}

/// A principal argument as its text (`None` for any other Clarity value).
pub fn principal(v: &Value) -> Option<String> {
    match v {
        Value::Principal(p) => Some(p.to_string()),
        _ => None,
    }
}

fn uint_text(v: &Value) -> Option<String> {
    match v {
        Value::UInt(n) => Some(n.to_string()),
        _ => None,
    }
}

fn uint_i64(v: &Value) -> Option<i64> {
    match v {
        Value::UInt(n) => u64::try_from(*n).ok().map(int),
        _ => None,
    }
}

fn pox_addr(v: &Value, mainnet: bool) -> Option<String> {
    let Value::Tuple(t) = v else { return None };
    let field = |k: &str| t.iter().find(|(n, _)| n == k).map(|(_, v)| v);
    let (Some(Value::Buffer(version)), Some(Value::Buffer(hash))) = (field("version"), field("hashbytes"))
    else {
        return None;
    };
    pox_address_text(*version.first()?, hash, mainnet)
}
