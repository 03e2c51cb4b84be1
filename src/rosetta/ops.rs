//! Stored ledger operations → Rosetta operations and transactions.
//!
//! Each `operations` row is one Rosetta operation, except locks and unlocks: a lock moves STX
//! from the liquid balance to the locked one, so its row becomes two operations, one on the
//! account and one on its `locked` sub-account, so that both balances are the sum of their
//! operations (docs/rosetta-deviations.md).

use rosetta_spec::{
    AccountIdentifier, Amount, Currency, Metadata, Operation, OperationIdentifier, SubAccountIdentifier,
    Transaction, TransactionIdentifier,
};
use serde_json::Value;

use super::stacking;
use ledger_read::{BlockContents, LedgerTx, OpRow};

/// The sub-account holding locked (stacked) STX.
pub const LOCKED_SUB_ACCOUNT: &str = "locked";

/// STX, 6 decimals.
pub fn stx() -> Currency {
    Currency::new("STX", 6)
}

pub fn stx_amount(value: i64) -> Amount {
    Amount::new(value.to_string(), stx())
}

fn account(address: &str, locked: bool) -> Option<AccountIdentifier> {
    if address.is_empty() {
        return None;
    }
    let mut a = AccountIdentifier::new(address);
    if locked {
        a.sub_account = Some(SubAccountIdentifier { address: LOCKED_SUB_ACCOUNT.to_owned(), metadata: None });
    }
    Some(a)
}

fn metadata(text: Option<&str>) -> Option<Metadata> {
    match serde_json::from_str::<Value>(text?) {
        Ok(Value::Object(m)) if !m.is_empty() => Some(m),
        _ => None,
    }
}

/// The Rosetta type of a stored operation: direct PoX stacking calls are retyped as the
/// incumbent did (`stack_stx`, `delegate_stx`, `revoke_delegate_stx`).
pub(super) fn op_type<'a>(op: &'a OpRow, tx: Option<&LedgerTx>) -> &'a str {
    if op.op_type == "contract_call" {
        if let Some(tx) = tx {
            if tx.contract_id.as_deref().is_some_and(stacking::is_pox_contract) {
                if let Some(t) = tx.function_name.as_deref().and_then(stacking::stacking_op_type) {
                    return t;
                }
            }
        }
    }
    &op.op_type
}

/// The metadata the transaction's payload gives its stacking-call or tenure-change operation.
pub(super) fn payload_metadata(tx: &LedgerTx) -> Option<Metadata> {
    let raw = tx.raw_tx.as_deref()?;
    match stacks_codec::decode_hex(raw).and_then(|b| stacks_codec::tx::Transaction::deserialize(&b)) {
        Ok(decoded) => stacking::payload_metadata(&decoded, tx.raw_result.as_deref()),
        Err(e) => {
            // Stored bytes were decoded on ingest: failing now is a store problem, not the caller's.
            tracing::error!(tx_id = %tx.tx_id, error = %e, "stored transaction does not decode");
            None
        }
    }
}

/// The Rosetta operations of one transaction's stored rows (or of the block-level rows),
/// indexed from `first_index`.
pub fn operations(rows: &[&OpRow], tx: Option<&LedgerTx>, first_index: i64) -> Vec<Operation> {
    let mut out: Vec<Operation> = Vec::with_capacity(rows.len());
    // Stored op_index → Rosetta index, for related operations.
    let mut index_of = std::collections::HashMap::with_capacity(rows.len());
    let mut next = first_index;
    for row in rows {
        let ty = op_type(row, tx).to_owned();
        let mut meta = metadata(row.metadata.as_deref());
        let parsed =
            matches!(ty.as_str(), "stack_stx" | "delegate_stx" | "revoke_delegate_stx" | "tenure_change");
        if let Some(m) = tx.filter(|_| parsed).and_then(payload_metadata) {
            // As the incumbent: the parsed arguments / tenure fields are the whole metadata.
            meta = (!m.is_empty()).then_some(m);
        } else if ty == "contract_call" || parsed {
            if let Some(tx) = tx.filter(|_| ty != "tenure_change") {
                let m = meta.get_or_insert_with(Metadata::new);
                if let Some(c) = &tx.contract_id {
                    m.insert("contract_id".into(), Value::from(c.clone()));
                }
                if let Some(f) = &tx.function_name {
                    m.insert("function_name".into(), Value::from(f.clone()));
                }
            }
        }
        let index = next;
        next += 1;
        index_of.insert(row.op_index, index);
        let related = row
            .related_op_index
            .and_then(|r| index_of.get(&r).copied())
            .map(|i| vec![OperationIdentifier::new(i)]);
        out.push(Operation {
            operation_identifier: OperationIdentifier::new(index),
            related_operations: related,
            r#type: ty.clone(),
            status: row.status.clone(),
            account: account(&row.account, false),
            amount: row.amount.map(stx_amount),
            coin_change: None,
            metadata: meta.clone(),
        });
        if row.locked_delta != 0 || ty == "stx_lock" || ty == "stx_unlock" {
            // The same change seen from the locked balance.
            out.push(Operation {
                operation_identifier: OperationIdentifier::new(next),
                related_operations: Some(vec![OperationIdentifier::new(index)]),
                r#type: ty,
                status: row.status.clone(),
                account: account(&row.account, true),
                amount: Some(stx_amount(row.locked_delta)),
                coin_change: None,
                metadata: meta,
            });
            next += 1;
        }
    }
    out
}

/// A block's Rosetta transactions: its transactions in order, the block-level operations
/// (miner rewards, unlocks) appended to the coinbase transaction as the incumbent did, or, in a
/// block without one, in a transaction named by the block's index block hash.
pub fn transactions(contents: &BlockContents, index_block_hash: &str) -> Vec<Transaction> {
    let mut by_tx: std::collections::HashMap<i64, Vec<&OpRow>> = std::collections::HashMap::new();
    for o in &contents.ops {
        by_tx.entry(o.tx_index).or_default().push(o);
    }
    let block_level = by_tx.remove(&-1).unwrap_or_default();
    let coinbase = contents.txs.iter().position(|t| t.tx_type == "coinbase");
    let mut txs: Vec<Transaction> = contents
        .txs
        .iter()
        .enumerate()
        .map(|(i, tx)| {
            let rows = by_tx.remove(&tx.tx_index).unwrap_or_default();
            let mut ops = operations(&rows, Some(tx), 0);
            if Some(i) == coinbase && !block_level.is_empty() {
                ops.extend(operations(&block_level, None, ops.len() as i64));
            }
            Transaction {
                transaction_identifier: TransactionIdentifier::new(&tx.tx_id),
                operations: ops,
                metadata: None,
            }
        })
        .collect();
    if coinbase.is_none() && !block_level.is_empty() {
        txs.push(Transaction {
            transaction_identifier: TransactionIdentifier::new(index_block_hash),
            operations: operations(&block_level, None, 0),
            metadata: None,
        });
    }
    txs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(op_index: i64, ty: &str, amount: Option<i64>, locked: i64) -> OpRow {
        OpRow {
            tx_id: "0x01".into(),
            tx_index: 0,
            op_index,
            op_type: ty.into(),
            status: "success".into(),
            account: "ST1".into(),
            amount,
            locked_delta: locked,
            related_op_index: None,
            metadata: None,
            asset_identifier: None,
            token_amount: None,
        }
    }

    #[test]
    fn locks_become_a_liquid_and_a_locked_operation() {
        let rows = [row(0, "fee", Some(-10), 0), row(2, "stx_lock", Some(-500), 500)];
        let refs: Vec<&OpRow> = rows.iter().collect();
        let ops = operations(&refs, None, 0);
        assert_eq!(ops.len(), 3);
        assert_eq!(ops[2].account.as_ref().unwrap().sub_account.as_ref().unwrap().address, "locked");
        assert_eq!(ops[2].amount.as_ref().unwrap().value, "500");
        assert_eq!(ops[1].amount.as_ref().unwrap().value, "-500");
        assert_eq!(ops[2].related_operations, Some(vec![OperationIdentifier::new(1)]));
        let idx: Vec<i64> = ops.iter().map(|o| o.operation_identifier.index).collect();
        assert_eq!(idx, [0, 1, 2]);
    }

    #[test]
    fn pox_calls_are_retyped() {
        let tx = LedgerTx {
            tx_id: "0x01".into(),
            tx_index: 0,
            tx_type: "contract_call".into(),
            status: "success".into(),
            contract_id: Some("ST000000000000000000002AMW42H.pox-4".into()),
            function_name: Some("stack-stx".into()),
            raw_tx: None,
            raw_result: None,
        };
        let r = row(1, "contract_call", None, 0);
        assert_eq!(operations(&[&r], Some(&tx), 0)[0].r#type, "stack_stx");
        let other = LedgerTx { contract_id: Some("ST1.pox-4".into()), ..tx };
        assert_eq!(operations(&[&r], Some(&other), 0)[0].r#type, "contract_call");
    }
}
