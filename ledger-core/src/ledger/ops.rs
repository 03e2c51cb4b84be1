//! The STX operations of one transaction, in Rosetta order: `fee` first, then the
//! transaction's own operation(s), then one or two per event. Every balance change is exactly
//! one row; `coinbase`, `contract_call`, `smart_contract`, `poison_microblock` and
//! `tenure_change` are zero-amount markers. Lock events become [`LockIntent`]s (their delta
//! depends on the lock in force, see `state`).

use serde_json::json;

use super::rows::{EventRow, LockIntent, OpRow, TxRow};

/// Derives the static operations of `tx` (its `events` are already normalised; a non-success
/// transaction has none).
pub fn tx_operations(tx: &TxRow, memo: Option<&str>, events: &[EventRow]) -> (Vec<OpRow>, Vec<LockIntent>) {
    let mut ops = Vec::new();
    let mut locks = Vec::new();
    let mut next = 0i64;
    let push = |ops: &mut Vec<OpRow>, next: &mut i64, mut op: OpRow| -> i64 {
        op.tx_id = tx.tx_id.clone();
        op.tx_index = tx.tx_index;
        op.op_index = *next;
        *next += 1;
        ops.push(op);
        *next - 1
    };
    let pays_fee =
        matches!(tx.tx_type.as_str(), "token_transfer" | "contract_call" | "smart_contract") || tx.fee > 0;
    if pays_fee && !tx.is_burnchain_op && tx.status != "problematic_skipped" {
        // The sponsor pays a sponsored transaction's fee; the fee is charged whatever the
        // outcome, so the operation is always `success`.
        let payer = tx.sponsor_address.clone().unwrap_or_else(|| tx.sender_address.clone());
        push(&mut ops, &mut next, op("fee", "success", payer, Some(-tx.fee), None));
    }
    match tx.tx_type.as_str() {
        "token_transfer" if tx.status != "success" => {
            // A failed transfer moves nothing; its intent is kept with the failure status.
            if let (Some(recipient), Some(amount)) = (&tx.token_transfer_recipient, tx.token_transfer_amount)
            {
                let meta = memo.map(|m| json!({ "memo": m }).to_string());
                let debit = push(
                    &mut ops,
                    &mut next,
                    op("token_transfer", &tx.status, tx.sender_address.clone(), Some(-amount), meta.clone()),
                );
                let mut credit = op("token_transfer", &tx.status, recipient.clone(), Some(amount), meta);
                credit.related_op_index = Some(debit);
                push(&mut ops, &mut next, credit);
            }
        }
        "token_transfer" => {}
        other => {
            push(&mut ops, &mut next, op(other, &tx.status, tx.sender_address.clone(), None, None));
        }
    }
    for e in events {
        let amount = || e.amount.as_deref().and_then(|a| a.parse::<i64>().ok()).unwrap_or(0);
        let meta = || {
            let mut m = json!({ "event_index": e.event_index });
            if let Some(memo) = &e.memo {
                m["memo"] = json!(memo);
            }
            Some(m.to_string())
        };
        match e.kind.as_str() {
            "stx_transfer" => {
                let (Some(sender), Some(recipient)) = (&e.sender, &e.recipient) else { continue };
                let debit = push(
                    &mut ops,
                    &mut next,
                    op("token_transfer", "success", sender.clone(), Some(-amount()), meta()),
                );
                let mut credit = op("token_transfer", "success", recipient.clone(), Some(amount()), meta());
                credit.related_op_index = Some(debit);
                push(&mut ops, &mut next, credit);
            }
            "stx_mint" => {
                let Some(recipient) = &e.recipient else { continue };
                push(&mut ops, &mut next, op("mint", "success", recipient.clone(), Some(amount()), meta()));
            }
            "stx_burn" => {
                let Some(sender) = &e.sender else { continue };
                push(&mut ops, &mut next, op("burn", "success", sender.clone(), Some(-amount()), meta()));
            }
            "stx_lock" => {
                let Some(account) = &e.sender else { continue };
                let op_index = next;
                next += 1;
                locks.push(LockIntent {
                    tx_id: tx.tx_id.clone(),
                    tx_index: tx.tx_index,
                    op_index,
                    account: account.clone(),
                    locked_total: amount(),
                    unlock_height: e.unlock_height.unwrap_or(0),
                    contract: e.contract_identifier.clone().unwrap_or_default(),
                });
            }
            _ => {}
        }
    }
    (ops, locks)
}

pub fn op(
    op_type: &str,
    status: &str,
    account: String,
    amount: Option<i64>,
    metadata: Option<String>,
) -> OpRow {
    OpRow {
        op_type: op_type.to_owned(),
        status: status.to_owned(),
        account,
        amount,
        metadata,
        ..OpRow::default()
    }
}

/// Token operations are numbered from here within their transaction, so the STX operations keep
/// Rosetta's contiguous `op_index` 0..n whatever tokens the transaction moves (both live in
/// `operations`, which has `(index_block_hash, tx_index, op_index)` as its key).
pub const TOKEN_OP_BASE: i64 = 1 << 32;

/// The fungible and non-fungible token operations of a transaction's (normalised, successful)
/// events: a transfer is a debit and a credit (the credit's `related_op_index` names the
/// debit), a mint a credit, a burn a debit. FT amounts are the event's u128 units; an NFT
/// moves one token (its value is in the metadata).
pub fn token_operations(tx_id: &str, tx_index: i64, events: &[EventRow]) -> Vec<OpRow> {
    let mut ops: Vec<OpRow> = Vec::new();
    for e in events {
        let (nft, sends, receives) = match e.kind.as_str() {
            "ft_transfer" => (false, true, true),
            "ft_mint" => (false, false, true),
            "ft_burn" => (false, true, false),
            "nft_transfer" => (true, true, true),
            "nft_mint" => (true, false, true),
            "nft_burn" => (true, true, false),
            _ => continue,
        };
        let Some(asset) = &e.asset_identifier else { continue };
        let units = if nft { "1".to_owned() } else { e.amount.clone().unwrap_or_else(|| "0".to_owned()) };
        let mut meta = json!({ "event_index": e.event_index });
        if let (true, Some(v)) = (nft, &e.value_hex) {
            meta["value"] = json!(v);
        }
        let meta = Some(meta.to_string());
        let mut row = |account: &String, debit: bool, related: Option<i64>| -> i64 {
            let op_index = TOKEN_OP_BASE + ops.len() as i64;
            ops.push(OpRow {
                tx_id: tx_id.to_owned(),
                tx_index,
                op_index,
                op_type: e.kind.clone(),
                status: "success".to_owned(),
                account: account.clone(),
                amount: None,
                locked_delta: 0,
                related_op_index: related,
                metadata: meta.clone(),
                asset_identifier: Some(asset.clone()),
                token_amount: Some(if debit { format!("-{units}") } else { units.clone() }),
            });
            op_index
        };
        let debit = match (&e.sender, sends) {
            (Some(s), true) => Some(row(s, true, None)),
            _ => None,
        };
        if let (Some(r), true) = (&e.recipient, receives) {
            row(r, false, debit);
        }
    }
    ops
}
