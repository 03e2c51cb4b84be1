//! Ledger rows → column lists and bound values, one function per table.

use super::db_row::DbRow;
use super::sql::Val;
use crate::ledger::rows::*;
use crate::ledger::AccountState;

/// The columns of an account's state, in `stx_accounts` (the tip) and `stx_balances` (after
/// each block).
pub const ACCOUNT_STATE_COLS: &str =
    "liquid, locked, unlock_burn_height, lock_tx_id, lock_height, lock_burn_height, pox_version";

/// An account's state from a row with the columns of [`ACCOUNT_STATE_COLS`].
pub fn account_state(r: &DbRow) -> Result<AccountState, sqlx::Error> {
    Ok(AccountState {
        liquid: r.try_get("liquid")?,
        locked: r.try_get("locked")?,
        unlock_burn_height: r.try_get("unlock_burn_height")?,
        lock_tx_id: r.try_get("lock_tx_id")?,
        lock_height: r.try_get("lock_height")?,
        lock_burn_height: r.try_get("lock_burn_height")?,
        pox_version: r.try_get("pox_version")?,
    })
}

/// Where a block's rows sit in the chain.
pub struct At<'a> {
    pub index_block_hash: &'a str,
    pub block_hash: &'a str,
    pub block_height: i64,
    pub burn_block_height: i64,
    pub canonical: bool,
}

pub const BLOCK_COLS: &[&str] = &[
    "index_block_hash",
    "block_hash",
    "block_height",
    "parent_index_block_hash",
    "parent_block_hash",
    "parent_microblock_hash",
    "parent_microblock_sequence",
    "block_time",
    "burn_block_time",
    "burn_block_hash",
    "burn_block_height",
    "miner_txid",
    "parent_burn_block_hash",
    "parent_burn_block_height",
    "parent_burn_block_time",
    "tenure_height",
    "consensus_hash",
    "signer_bitvec",
    "signer_signatures",
    "signer_signature_hash",
    "miner_signature",
    "execution_cost_read_count",
    "execution_cost_read_length",
    "execution_cost_runtime",
    "execution_cost_write_count",
    "execution_cost_write_length",
    "tx_count",
    "tx_total_size",
    "cycle_number",
    "reward_set",
    "pox_v1_unlock_height",
    "pox_v2_unlock_height",
    "pox_v3_unlock_height",
    "pox_v4_unlock_height",
    "canonical",
    "materialized",
    "raw_event_id",
    "tx_ids",
];

/// A block's stored columns; `txs` are the `txs` rows stored under it (their ids are kept in
/// `tx_ids`, see [`block_tx_ids`]). `materialized`: its lock operations and balance rows are
/// written in the same transaction (a canonical block on arrival).
pub fn block_vals(
    b: &BlockRow,
    txs: &[TxRow],
    canonical: bool,
    materialized: bool,
    raw_event_id: i64,
) -> Vec<Val> {
    vec![
        (&b.index_block_hash).into(),
        (&b.block_hash).into(),
        b.block_height.into(),
        (&b.parent_index_block_hash).into(),
        (&b.parent_block_hash).into(),
        (&b.parent_microblock_hash).into(),
        b.parent_microblock_sequence.into(),
        b.block_time.into(),
        b.burn_block_time.into(),
        (&b.burn_block_hash).into(),
        b.burn_block_height.into(),
        (&b.miner_txid).into(),
        (&b.parent_burn_block_hash).into(),
        b.parent_burn_block_height.into(),
        b.parent_burn_block_time.into(),
        b.tenure_height.into(),
        (&b.consensus_hash).into(),
        (&b.signer_bitvec).into(),
        (&b.signer_signatures).into(),
        (&b.signer_signature_hash).into(),
        (&b.miner_signature).into(),
        b.cost.read_count.into(),
        b.cost.read_length.into(),
        b.cost.runtime.into(),
        b.cost.write_count.into(),
        b.cost.write_length.into(),
        b.tx_count.into(),
        b.tx_total_size.into(),
        b.cycle_number.into(),
        (&b.reward_set).into(),
        b.pox_v1_unlock_height.into(),
        b.pox_v2_unlock_height.into(),
        b.pox_v3_unlock_height.into(),
        b.pox_v4_unlock_height.into(),
        canonical.into(),
        materialized.into(),
        raw_event_id.into(),
        block_tx_ids(txs).into(),
    ]
}

/// `blocks.tx_ids` (migration 0042): the ids of the transactions stored under a block as a
/// JSON array, newest first (`COALESCE(microblock_sequence, 2147483647) DESC, tx_index DESC`,
/// the order the v1 block routes render), the same text as the migration's backfill.
pub fn block_tx_ids(txs: &[TxRow]) -> String {
    let mut order: Vec<&TxRow> = txs.iter().collect();
    order.sort_by_key(|t| std::cmp::Reverse((t.microblock_sequence.unwrap_or(2_147_483_647), t.tx_index)));
    let mut out = String::with_capacity(2 + order.len() * 69);
    out.push('[');
    for (i, t) in order.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('"');
        out.push_str(&t.tx_id);
        out.push('"');
    }
    out.push(']');
    out
}

pub const TX_COLS: &[&str] = &[
    "tx_id",
    "index_block_hash",
    "microblock_hash",
    "block_hash",
    "block_height",
    "burn_block_height",
    "tx_index",
    "raw_tx",
    "synthetic_tx",
    "api_json",
    "tx_type",
    "nonce",
    "fee",
    "sender_address",
    "sponsored",
    "sponsor_address",
    "sponsor_nonce",
    "anchor_mode",
    "post_condition_mode",
    "status",
    "raw_result",
    "vm_error",
    "event_count",
    "execution_cost_read_count",
    "execution_cost_read_length",
    "execution_cost_runtime",
    "execution_cost_write_count",
    "execution_cost_write_length",
    "microblock_sequence",
    "microblock_parent_hash",
    "contract_id",
    "function_name",
    "token_transfer_recipient",
    "token_transfer_amount",
    "is_burnchain_op",
    "raw_size",
    "canonical",
    "in_block_time",
    "in_burn_block_time",
    "in_parent_burn_block_time",
    "in_parent_block_hash",
];

/// A transaction's row under `at`; `block` is the block it is in, whose fields the row keeps
/// (migration 0043), `None` for a streamed row (no block yet).
pub fn tx_vals(t: &TxRow, at: &At, block: Option<&BlockRow>) -> Vec<Val> {
    vec![
        (&t.tx_id).into(),
        at.index_block_hash.into(),
        (&t.microblock_hash).into(),
        at.block_hash.into(),
        at.block_height.into(),
        at.burn_block_height.into(),
        t.tx_index.into(),
        (&t.raw_tx).into(),
        (&t.synthetic_tx).into(),
        (&t.api_json).into(),
        (&t.tx_type).into(),
        t.nonce.into(),
        t.fee.into(),
        (&t.sender_address).into(),
        t.sponsored.into(),
        (&t.sponsor_address).into(),
        t.sponsor_nonce.into(),
        (&t.anchor_mode).into(),
        (&t.post_condition_mode).into(),
        (&t.status).into(),
        (&t.raw_result).into(),
        (&t.vm_error).into(),
        t.event_count.into(),
        t.cost.read_count.into(),
        t.cost.read_length.into(),
        t.cost.runtime.into(),
        t.cost.write_count.into(),
        t.cost.write_length.into(),
        t.microblock_sequence.into(),
        (&t.microblock_parent_hash).into(),
        (&t.contract_id).into(),
        (&t.function_name).into(),
        (&t.token_transfer_recipient).into(),
        t.token_transfer_amount.into(),
        t.is_burnchain_op.into(),
        t.raw_size.into(),
        at.canonical.into(),
        block.map(|b| b.block_time).into(),
        block.map(|b| b.burn_block_time).into(),
        block.map(|b| b.parent_burn_block_time).into(),
        block.map(|b| b.parent_block_hash.clone()).into(),
    ]
}

pub const EVENT_COLS: &[&str] = &[
    "tx_id",
    "index_block_hash",
    "microblock_hash",
    "block_height",
    "tx_index",
    "event_index",
    "kind",
    "sender",
    "recipient",
    "amount",
    "asset_identifier",
    "value_hex",
    "contract_identifier",
    "topic",
    "memo",
    "unlock_height",
    "canonical",
];

pub fn event_vals(e: &EventRow, microblock_hash: &str, at: &At) -> Vec<Val> {
    vec![
        (&e.tx_id).into(),
        at.index_block_hash.into(),
        microblock_hash.into(),
        at.block_height.into(),
        e.tx_index.into(),
        e.event_index.into(),
        (&e.kind).into(),
        (&e.sender).into(),
        (&e.recipient).into(),
        (&e.amount).into(),
        (&e.asset_identifier).into(),
        (&e.value_hex).into(),
        (&e.contract_identifier).into(),
        (&e.topic).into(),
        (&e.memo).into(),
        e.unlock_height.into(),
        at.canonical.into(),
    ]
}

pub const OP_COLS: &[&str] = &[
    "index_block_hash",
    "block_height",
    "tx_id",
    "tx_index",
    "op_index",
    "op_type",
    "status",
    "account",
    "amount",
    "locked_delta",
    "related_op_index",
    "metadata",
    "canonical",
    "asset_identifier",
    "token_amount",
];

pub fn op_vals(o: &OpRow, at: &At) -> Vec<Val> {
    vec![
        at.index_block_hash.into(),
        at.block_height.into(),
        (&o.tx_id).into(),
        o.tx_index.into(),
        o.op_index.into(),
        (&o.op_type).into(),
        (&o.status).into(),
        (&o.account).into(),
        o.amount.into(),
        o.locked_delta.into(),
        o.related_op_index.into(),
        (&o.metadata).into(),
        at.canonical.into(),
        (&o.asset_identifier).into(),
        (&o.token_amount).into(),
    ]
}

pub const BALANCE_COLS: &[&str] = &[
    "account",
    "index_block_hash",
    "block_height",
    "liquid",
    "locked",
    "unlock_burn_height",
    "lock_tx_id",
    "lock_height",
    "lock_burn_height",
    "pox_version",
    "canonical",
];

pub fn balance_vals(account: &str, s: &AccountState, at: &At) -> Vec<Val> {
    vec![
        account.into(),
        at.index_block_hash.into(),
        at.block_height.into(),
        s.liquid.into(),
        s.locked.into(),
        s.unlock_burn_height.into(),
        (&s.lock_tx_id).into(),
        s.lock_height.into(),
        s.lock_burn_height.into(),
        s.pox_version.into(),
        at.canonical.into(),
    ]
}

pub const ACCOUNT_COLS: &[&str] = &[
    "account",
    "block_height",
    "liquid",
    "locked",
    "unlock_burn_height",
    "lock_tx_id",
    "lock_height",
    "lock_burn_height",
    "pox_version",
];

pub fn account_vals(account: &str, s: &AccountState, block_height: i64) -> Vec<Val> {
    vec![
        account.into(),
        block_height.into(),
        s.liquid.into(),
        s.locked.into(),
        s.unlock_burn_height.into(),
        (&s.lock_tx_id).into(),
        s.lock_height.into(),
        s.lock_burn_height.into(),
        s.pox_version.into(),
    ]
}

pub const ACCOUNT_UPSERT: &str = "ON CONFLICT (account) DO UPDATE SET block_height = excluded.block_height, \
    liquid = excluded.liquid, locked = excluded.locked, unlock_burn_height = excluded.unlock_burn_height, \
    lock_tx_id = excluded.lock_tx_id, lock_height = excluded.lock_height, \
    lock_burn_height = excluded.lock_burn_height, pox_version = excluded.pox_version";

pub const ACCOUNT_TX_COLS: &[&str] = &[
    "principal",
    "tx_id",
    "index_block_hash",
    "block_height",
    "tx_index",
    "canonical",
    "listed",
    "boot",
    "seq",
];

/// SQLite's `account_txs` columns: [`ACCOUNT_TX_COLS`] and `tx_rid`, the rowid of the
/// transaction's `txs` row (migration 0045).
pub static ACCOUNT_TX_COLS_WITH_RID: std::sync::LazyLock<Vec<&'static str>> =
    std::sync::LazyLock::new(|| [ACCOUNT_TX_COLS, &["tx_rid"]].concat());

/// SQLite's `txs` columns as a block's rows are inserted: [`TX_COLS`] and the `rowid` chosen
/// for each (see `account_txs.tx_rid`).
pub static TX_COLS_WITH_ROWID: std::sync::LazyLock<Vec<&'static str>> =
    std::sync::LazyLock::new(|| [TX_COLS, &["rowid"]].concat());

pub fn account_tx_vals(a: &AccountTxRow, at: &At) -> Vec<Val> {
    vec![
        (&a.principal).into(),
        (&a.tx_id).into(),
        at.index_block_hash.into(),
        at.block_height.into(),
        a.tx_index.into(),
        at.canonical.into(),
        a.listed.into(),
        a.boot.into(),
        a.seq.into(),
    ]
}

pub const CONTRACT_COLS: &[&str] = &[
    "contract_id",
    "index_block_hash",
    "tx_id",
    "block_height",
    "clarity_version",
    "source_code",
    "abi",
    "canonical",
    "success",
    "abi_jsonb",
];

pub fn contract_vals(c: &ContractRow, at: &At) -> Vec<Val> {
    vec![
        (&c.contract_id).into(),
        at.index_block_hash.into(),
        (&c.tx_id).into(),
        at.block_height.into(),
        c.clarity_version.into(),
        (&c.source_code).into(),
        (&c.abi).into(),
        at.canonical.into(),
        c.success.into(),
        (&c.abi_jsonb).into(),
    ]
}

pub const MINER_REWARD_COLS: &[&str] = &[
    "index_block_hash",
    "reward_index",
    "block_height",
    "from_index_block_hash",
    "from_block_hash",
    "recipient",
    "miner_address",
    "coinbase_amount",
    "tx_fees_anchored",
    "tx_fees_streamed_confirmed",
    "tx_fees_streamed_produced",
    "canonical",
];

pub fn miner_reward_vals(i: usize, r: &MinerRewardRow, at: &At) -> Vec<Val> {
    vec![
        at.index_block_hash.into(),
        (i as i64).into(),
        at.block_height.into(),
        (&r.from_index_block_hash).into(),
        (&r.from_block_hash).into(),
        (&r.recipient).into(),
        (&r.miner_address).into(),
        r.coinbase_amount.into(),
        r.tx_fees_anchored.into(),
        r.tx_fees_streamed_confirmed.into(),
        r.tx_fees_streamed_produced.into(),
        at.canonical.into(),
    ]
}

pub const POX_COLS: &[&str] = &[
    "index_block_hash",
    "block_height",
    "tx_id",
    "tx_index",
    "event_index",
    "pox_contract",
    "name",
    "stacker",
    "balance",
    "locked",
    "burnchain_unlock_height",
    "pox_addr",
    "pox_addr_raw",
    "amount_ustx",
    "delegate_to",
    "lock_period",
    "start_burn_height",
    "unlock_burn_height",
    "start_cycle_id",
    "end_cycle_id",
    "signer_key",
    "data",
    "canonical",
];

pub fn pox_vals(p: &PoxEventRow, at: &At) -> Vec<Val> {
    vec![
        at.index_block_hash.into(),
        at.block_height.into(),
        (&p.tx_id).into(),
        p.tx_index.into(),
        p.event_index.into(),
        (&p.pox_contract).into(),
        (&p.name).into(),
        (&p.stacker).into(),
        (&p.balance).into(),
        (&p.locked).into(),
        p.burnchain_unlock_height.into(),
        (&p.pox_addr).into(),
        (&p.pox_addr_raw).into(),
        (&p.amount_ustx).into(),
        (&p.delegate_to).into(),
        p.lock_period.into(),
        p.start_burn_height.into(),
        p.unlock_burn_height.into(),
        p.start_cycle_id.into(),
        p.end_cycle_id.into(),
        (&p.signer_key).into(),
        (&p.data).into(),
        at.canonical.into(),
    ]
}

pub const MICROBLOCK_COLS: &[&str] = &[
    "microblock_hash",
    "index_block_hash",
    "microblock_sequence",
    "microblock_parent_hash",
    "parent_index_block_hash",
    "block_height",
    "tx_count",
    "canonical",
    "microblock_canonical",
    "stream_burn_block_hash",
    "stream_burn_block_time",
    "stream_burn_block_height",
    "stream_receipt_time",
];

pub fn microblock_vals(m: &MicroblockRow, at: &At, microblock_canonical: bool) -> Vec<Val> {
    vec![
        (&m.microblock_hash).into(),
        at.index_block_hash.into(),
        m.microblock_sequence.into(),
        (&m.microblock_parent_hash).into(),
        (&m.parent_index_block_hash).into(),
        at.block_height.into(),
        m.tx_count.into(),
        at.canonical.into(),
        microblock_canonical.into(),
        m.stream_burn_block.as_ref().map(|b| b.0.clone()).into(),
        m.stream_burn_block.as_ref().map(|b| b.1).into(),
        m.stream_burn_block.as_ref().map(|b| b.2).into(),
        m.stream_receipt_time.into(),
    ]
}

pub const MEMPOOL_COLS: &[&str] = &[
    "tx_id",
    "raw_tx",
    "tx_type",
    "sender_address",
    "nonce",
    "sponsored",
    "sponsor_address",
    "sponsor_nonce",
    "fee",
    "contract_id",
    "function_name",
    "token_transfer_recipient",
    "raw_size",
    "receipt_time",
    "status",
    "replaced_by_tx_id",
    "pruned",
    "receipt_block_height",
    "arrival",
];

/// `receipt_block_height`: the canonical tip's height when the transaction entered the mempool;
/// `arrival`: its place in the order of arrival (`write::arrival`).
pub fn mempool_vals(
    m: &MempoolTxRow,
    receipt_time: i64,
    receipt_block_height: i64,
    pruned: bool,
    arrival: i64,
) -> Vec<Val> {
    vec![
        (&m.tx_id).into(),
        (&m.raw_tx).into(),
        (&m.tx_type).into(),
        (&m.sender_address).into(),
        m.nonce.into(),
        m.sponsored.into(),
        (&m.sponsor_address).into(),
        m.sponsor_nonce.into(),
        m.fee.into(),
        (&m.contract_id).into(),
        (&m.function_name).into(),
        (&m.token_transfer_recipient).into(),
        m.raw_size.into(),
        receipt_time.into(),
        "pending".into(),
        Val::OT(None),
        pruned.into(),
        receipt_block_height.into(),
        arrival.into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tx(id: &str, tx_index: i64, seq: Option<i64>) -> TxRow {
        TxRow { tx_id: id.into(), tx_index, microblock_sequence: seq, ..TxRow::default() }
    }

    #[test]
    fn block_tx_ids_lists_anchored_then_microblocks_newest_first() {
        // Anchored rows (no sequence) first, then the confirmed microblocks' by sequence, each
        // by tx_index descending; the text is the compact JSON serde_json writes.
        let txs = [
            tx("0xa0", 0, None),
            tx("0xm00", 0, Some(0)),
            tx("0xa1", 1, None),
            tx("0xm10", 0, Some(1)),
            tx("0xm01", 1, Some(0)),
        ];
        let text = block_tx_ids(&txs);
        assert_eq!(text, r#"["0xa1","0xa0","0xm10","0xm01","0xm00"]"#);
        let ids: Vec<&str> = serde_json::from_str(&text).unwrap();
        assert_eq!(serde_json::to_string(&ids).unwrap(), text);
        assert_eq!(block_tx_ids(&[]), "[]");
    }
}
