//! `/block`'s answer written straight from the stored rows: borrowed `#[derive(Serialize)]`
//! views instead of the owned `rosetta-spec` models, so a 100-transaction block is rendered
//! without a few thousand small allocations, and stored operation metadata (written compact by
//! serde_json on ingest) is copied as raw JSON instead of being parsed and re-serialized.
//!
//! The bytes are the ones `serde_json::to_vec` gives for the `BlockResponse` that
//! [`super::ops::transactions`] builds (that path still serves `/block/transaction` and
//! `/search/transactions`); `tests/rosetta_block_view.rs` checks it block by block.

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use super::ops::{op_type, payload_metadata, LOCKED_SUB_ACCOUNT};
use ledger_read::{BlockContents, LedgerBlock, LedgerTx, OpRow};
use rosetta_spec::Metadata;

/// The whole `/block` response body.
#[derive(Serialize)]
pub struct BlockBody<'a> {
    block: BlockView<'a>,
}

#[derive(Serialize)]
struct BlockView<'a> {
    block_identifier: Id<'a>,
    parent_block_identifier: Id<'a>,
    timestamp: i64,
    transactions: Vec<TxView<'a>>,
    metadata: BlockMeta,
}

#[derive(Serialize)]
struct Id<'a> {
    index: i64,
    hash: &'a str,
}

#[derive(Serialize)]
struct BlockMeta {
    burn_block_height: i64,
}

#[derive(Serialize)]
struct Hash<'a> {
    hash: &'a str,
}

#[derive(Serialize)]
struct TxView<'a> {
    transaction_identifier: Hash<'a>,
    operations: Vec<OpView<'a>>,
}

#[derive(Serialize)]
struct Index {
    index: i64,
}

#[derive(Serialize)]
struct OpView<'a> {
    operation_identifier: Index,
    #[serde(skip_serializing_if = "Option::is_none")]
    related_operations: Option<[Index; 1]>,
    #[serde(rename = "type")]
    ty: &'a str,
    status: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    account: Option<Account<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    amount: Option<Amount>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<Meta<'a>>,
}

#[derive(Serialize)]
struct Account<'a> {
    address: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    sub_account: Option<SubAccount>,
}

#[derive(Serialize)]
struct SubAccount {
    address: &'static str,
}

#[derive(Serialize)]
struct Amount {
    #[serde(serialize_with = "decimal")]
    value: i64,
    currency: Stx,
}

/// STX, 6 decimals (as `ops::stx()`).
#[derive(Serialize)]
struct Stx {
    symbol: &'static str,
    decimals: i32,
}

const STX: Stx = Stx { symbol: "STX", decimals: 6 };

/// An amount's value is a decimal string.
fn decimal<S: Serializer>(v: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// An operation's metadata, in the cheapest form that gives the same bytes.
#[derive(Clone, Copy)]
enum Meta<'a> {
    /// The stored JSON object, as stored.
    Stored(&'a RawValue),
    /// A contract call without stored metadata: its contract and function.
    Call(&'a LedgerTx),
    /// Built (payload metadata, or stored metadata with the call's fields merged in).
    Built(&'a Metadata),
}

impl Serialize for Meta<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Call<'a> {
            #[serde(skip_serializing_if = "Option::is_none")]
            contract_id: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            function_name: Option<&'a str>,
        }
        match self {
            Meta::Stored(raw) => raw.serialize(s),
            Meta::Call(tx) => {
                Call { contract_id: tx.contract_id.as_deref(), function_name: tx.function_name.as_deref() }
                    .serialize(s)
            }
            Meta::Built(m) => m.serialize(s),
        }
    }
}

/// Stored metadata that is a non-empty JSON object (what `ops::metadata` keeps).
fn stored_object(text: Option<&str>) -> Option<&RawValue> {
    let text = text?;
    if !text.starts_with('{') || text == "{}" {
        return None;
    }
    serde_json::from_str::<&RawValue>(text).ok()
}

/// How an operation's metadata is written; `Built` points into the maps built for this block.
#[derive(Clone, Copy)]
enum MetaSlot<'a> {
    None,
    Stored(&'a RawValue),
    Call(&'a LedgerTx),
    Built(usize),
}

/// Decides an operation's metadata as `ops::operations` does; maps it has to build (parsed
/// payloads, merged metadata) go to `built`.
fn op_meta<'a>(
    row: &'a OpRow,
    ty: &str,
    tx: Option<&'a LedgerTx>,
    built: &mut Vec<Metadata>,
) -> MetaSlot<'a> {
    let parsed = matches!(ty, "stack_stx" | "delegate_stx" | "revoke_delegate_stx" | "tenure_change");
    if let Some(m) = tx.filter(|_| parsed).and_then(payload_metadata) {
        if m.is_empty() {
            return MetaSlot::None;
        }
        built.push(m);
        return MetaSlot::Built(built.len() - 1);
    }
    let call = tx.filter(|_| (ty == "contract_call" || parsed) && ty != "tenure_change");
    match (call, stored_object(row.metadata.as_deref())) {
        (None, Some(raw)) => MetaSlot::Stored(raw),
        (None, None) => MetaSlot::None,
        (Some(tx), None) => MetaSlot::Call(tx),
        (Some(tx), Some(raw)) => {
            // Not written by the ledger today (calls carry no stored metadata): merge as the
            // model path does.
            let mut m: Metadata = serde_json::from_str(raw.get()).unwrap_or_default();
            if let Some(c) = &tx.contract_id {
                m.insert("contract_id".into(), c.clone().into());
            }
            if let Some(f) = &tx.function_name {
                m.insert("function_name".into(), f.clone().into());
            }
            built.push(m);
            MetaSlot::Built(built.len() - 1)
        }
    }
}

/// The Rosetta operations of one transaction's rows (or of the block-level rows), indexed from
/// `first_index`, appended to `out`: the same rules as `ops::operations`.
fn operations<'a>(
    rows: &'a [OpRow],
    tx: Option<&'a LedgerTx>,
    first_index: i64,
    built: &mut Vec<Metadata>,
    out: &mut Vec<(OpView<'a>, MetaSlot<'a>)>,
) {
    // Stored op_index → Rosetta index, for related operations (a transaction has a few rows).
    let mut index_of: Vec<(i64, i64)> = Vec::with_capacity(rows.len());
    let mut next = first_index;
    for row in rows {
        let ty = op_type(row, tx);
        let meta = op_meta(row, ty, tx, built);
        let index = next;
        next += 1;
        match index_of.iter_mut().find(|(o, _)| *o == row.op_index) {
            Some(slot) => slot.1 = index,
            None => index_of.push((row.op_index, index)),
        }
        let related = row
            .related_op_index
            .and_then(|r| index_of.iter().find(|(o, _)| *o == r))
            .map(|&(_, i)| [Index { index: i }]);
        let account = |locked: bool| {
            (!row.account.is_empty()).then_some(Account {
                address: &row.account,
                sub_account: locked.then_some(SubAccount { address: LOCKED_SUB_ACCOUNT }),
            })
        };
        let op = OpView {
            operation_identifier: Index { index },
            related_operations: related,
            ty,
            status: &row.status,
            account: account(false),
            amount: row.amount.map(|value| Amount { value, currency: STX }),
            metadata: None,
        };
        out.push((op, meta));
        if row.locked_delta != 0 || ty == "stx_lock" || ty == "stx_unlock" {
            // The same change seen from the locked balance.
            let op = OpView {
                operation_identifier: Index { index: next },
                related_operations: Some([Index { index }]),
                ty,
                status: &row.status,
                account: account(true),
                amount: Some(Amount { value: row.locked_delta, currency: STX }),
                metadata: None,
            };
            out.push((op, meta));
            next += 1;
        }
    }
}

/// The `/block` body of block `b` with `contents`, as JSON bytes.
pub fn render(b: &LedgerBlock, contents: &BlockContents) -> serde_json::Result<Vec<u8>> {
    let ops = &contents.ops[..];
    // Rows are ordered by (tx_index, op_index): each transaction's rows are one run, the
    // block-level rows (tx_index -1) come first.
    let split = ops.partition_point(|o| o.tx_index < 0);
    let block_level = &ops[ops.partition_point(|o| o.tx_index < -1)..split];
    let coinbase = contents.txs.iter().position(|t| t.tx_type == "coinbase");
    let mut built = Vec::new();
    let mut txs: Vec<(&str, Vec<(OpView, MetaSlot)>)> = Vec::with_capacity(contents.txs.len() + 1);
    let mut rest = &ops[split..];
    for (i, tx) in contents.txs.iter().enumerate() {
        // Rows of no listed transaction are skipped, as the model path does; a repeated
        // tx_index gets its rows once.
        rest = &rest[rest.partition_point(|o| o.tx_index < tx.tx_index)..];
        let n = rest.partition_point(|o| o.tx_index == tx.tx_index);
        let (rows, after) = rest.split_at(n);
        rest = after;
        let mut out = Vec::with_capacity(rows.len() + 1);
        operations(rows, Some(tx), 0, &mut built, &mut out);
        if Some(i) == coinbase && !block_level.is_empty() {
            let first = out.len() as i64;
            operations(block_level, None, first, &mut built, &mut out);
        }
        txs.push((&tx.tx_id, out));
    }
    if coinbase.is_none() && !block_level.is_empty() {
        let mut out = Vec::with_capacity(block_level.len());
        operations(block_level, None, 0, &mut built, &mut out);
        txs.push((&b.index_block_hash, out));
    }
    let transactions = txs
        .into_iter()
        .map(|(hash, ops)| TxView {
            transaction_identifier: Hash { hash },
            operations: ops
                .into_iter()
                .map(|(mut op, meta)| {
                    op.metadata = match meta {
                        MetaSlot::None => None,
                        MetaSlot::Stored(raw) => Some(Meta::Stored(raw)),
                        MetaSlot::Call(tx) => Some(Meta::Call(tx)),
                        MetaSlot::Built(i) => Some(Meta::Built(&built[i])),
                    };
                    op
                })
                .collect(),
        })
        .collect();
    let parent = if b.block_height <= 1 {
        Id { index: b.block_height, hash: &b.block_hash }
    } else {
        Id { index: b.block_height - 1, hash: &b.parent_block_hash }
    };
    let body = BlockBody {
        block: BlockView {
            block_identifier: Id { index: b.block_height, hash: &b.block_hash },
            parent_block_identifier: parent,
            timestamp: b.timestamp_ms,
            transactions,
            metadata: BlockMeta { burn_block_height: b.burn_block_height },
        },
    };
    serde_json::to_vec(&body)
}
