//! The rows a reader returns: the ledger's model, declared once (the store writes and reads
//! the same types).

/// A block, with what every surface shows of it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LedgerBlock {
    pub index_block_hash: String,
    pub block_hash: String,
    pub block_height: i64,
    pub parent_block_hash: String,
    /// Milliseconds: the burn block time before Nakamoto, the block's own time after.
    pub timestamp_ms: i64,
    pub burn_block_height: i64,
    /// The consensus hash of the burn block the block's tenure started in, when the node's
    /// block event carried one.
    pub consensus_hash: Option<String>,
    /// Nakamoto tenure height, when recorded.
    pub tenure_height: Option<i64>,
    pub canonical: bool,
    /// Lock/unlock operations and balance rows exist (the block was canonical once).
    pub materialized: bool,
}

/// A transaction of a block, with what its operations' types and metadata need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerTx {
    pub tx_id: String,
    pub tx_index: i64,
    pub tx_type: String,
    pub status: String,
    pub contract_id: Option<String>,
    pub function_name: Option<String>,
    /// The raw transaction (hex), loaded only when its payload gives operation metadata
    /// (stacking calls, tenure changes).
    pub raw_tx: Option<String>,
    /// The raw Clarity result (hex) of such a transaction; `None` while pending.
    pub raw_result: Option<String>,
}

/// One operation of the ledger (`operations`): one STX balance change, a zero-amount marker
/// (coinbase, contract_call...), or a token operation. Ingestion derives these, the store keeps
/// them, the surfaces read them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OpRow {
    /// `""` for block-level operations (miner rewards, unlocks).
    pub tx_id: String,
    /// `-1` for block-level operations.
    pub tx_index: i64,
    pub op_index: i64,
    pub op_type: String,
    /// The transaction status; only `success` operations change balances.
    pub status: String,
    pub account: String,
    /// Change of the liquid (spendable) balance; `None` for markers.
    pub amount: Option<i64>,
    /// Change of the locked balance (stx_lock / stx_unlock).
    pub locked_delta: i64,
    pub related_op_index: Option<i64>,
    /// Operation-specific JSON (memo, unlock height, lock tx...).
    pub metadata: Option<String>,
    /// `None` for STX; the token's asset identifier for a fungible or non-fungible token
    /// operation (`ft_*`/`nft_*`).
    pub asset_identifier: Option<String>,
    /// A token operation's signed amount, decimal text: FT units (u128 magnitude), or ±1 per
    /// NFT token. `amount` is `None` on token operations, so no STX sum ever sees them.
    pub token_amount: Option<String>,
}

impl OpRow {
    /// Whether the operation moves a balance.
    pub fn applies(&self) -> bool {
        self.status == "success" && (self.amount.unwrap_or(0) != 0 || self.locked_delta != 0)
    }
}

/// One transaction event (`events`): the row ingestion derives and writes
/// (`ledger-core/src/ledger/rows.rs` re-exports it) and the one `/extended` renders
/// ([`crate::tx::TxEvent`] names it so). Integers are the store's BIGINT columns; the renderers print
/// them as JSON numbers, which are the same digits whatever their Rust type.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EventRow {
    pub tx_id: String,
    /// The transaction's index in its block as stored (block 1's boot rows after its own).
    pub tx_index: i64,
    /// Renumbered 0..n−1 per transaction.
    pub event_index: i64,
    /// `stx_transfer`, `stx_mint`, `stx_burn`, `stx_lock`, `ft_transfer`, `ft_mint`, `ft_burn`,
    /// `nft_transfer`, `nft_mint`, `nft_burn`, `contract_log`.
    pub kind: String,
    pub sender: Option<String>,
    pub recipient: Option<String>,
    /// Decimal text (u128-safe).
    pub amount: Option<String>,
    pub asset_identifier: Option<String>,
    /// NFT token id or contract-log value: consensus-serialized Clarity, 0x hex.
    pub value_hex: Option<String>,
    /// Log emitter, or the locking PoX contract for `stx_lock`.
    pub contract_identifier: Option<String>,
    pub topic: Option<String>,
    /// 0x hex.
    pub memo: Option<String>,
    /// `stx_lock`: the burn height the lock ends at.
    pub unlock_height: Option<i64>,
}

/// A block's transactions and STX operations, in ledger order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockContents {
    pub txs: Vec<LedgerTx>,
    pub ops: Vec<OpRow>,
}

/// One entry of the block event log: a block became canonical (`added`) or was orphaned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockEventRow {
    pub sequence: i64,
    pub added: bool,
    pub block_height: i64,
    pub block_hash: String,
}

/// An account's STX state after a block: µSTX balances, kept by the store as an index of the
/// account's operations (the liquid balance is the sum of their `amount`s, the locked one of
/// their `locked_delta`s), and the next nonce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AccountState {
    /// Spendable µSTX.
    pub liquid: i64,
    /// µSTX locked by stacking.
    pub locked: i64,
    /// The burn height at which `locked` unlocks; 0 when nothing is locked.
    pub unlock_height: i64,
    /// One past the highest nonce the account used on the canonical chain, as origin or
    /// sponsor (0 for an account never seen). The boot address's genesis deploys count.
    pub next_nonce: i64,
}

/// The boot address (mainnet, testnet): the boot contracts' deployer, whose key nobody holds.
pub const BOOT_ADDRESSES: [&str; 2] = ["SP000000000000000000002Q6VF78", "ST000000000000000000002AMW42H"];

/// Whether `address` is the boot address of either network.
pub fn is_boot_address(address: &str) -> bool {
    BOOT_ADDRESSES.contains(&address)
}

/// Where a transaction is mined: its block's index hash and its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxRef {
    pub index_block_hash: String,
    pub tx_id: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_successful_moves_apply() {
        let fee = OpRow { status: "success".into(), amount: Some(-10), ..OpRow::default() };
        assert!(fee.applies());
        assert!(!OpRow { status: "abort_by_response".into(), ..fee.clone() }.applies());
        let marker = OpRow { status: "success".into(), amount: None, ..OpRow::default() };
        assert!(!marker.applies());
        let lock = OpRow { status: "success".into(), amount: Some(0), locked_delta: 5, ..OpRow::default() };
        assert!(lock.applies());
    }
}
