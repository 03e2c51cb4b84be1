//! What the store hands the transaction renderer: stored rows, not JSON. Hex values are
//! `0x`-prefixed as stored.

/// A mined transaction (one row of `txs`, joined with its block).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MinedTx {
    pub tx_id: String,
    /// The serialized transaction; for a burnchain operation, the synthesized one.
    pub raw_tx: String,
    /// Burnchain operations have no real nonce or fee: both are served as 0.
    pub is_burnchain_op: bool,
    pub index_block_hash: String,
    /// `0x` for a streamed microblock transaction not yet anchored.
    pub block_hash: String,
    pub block_height: u64,
    /// The block's own time (Nakamoto) or its burn block's; 0 when unknown.
    pub block_time: u64,
    pub burn_block_time: u64,
    pub burn_block_height: u64,
    pub parent_burn_block_time: u64,
    pub parent_block_hash: String,
    pub canonical: bool,
    pub tx_index: u32,
    /// `success`, `abort_by_response`, `abort_by_post_condition`, `problematic_skipped`.
    pub status: String,
    pub raw_result: String,
    pub event_count: u64,
    /// `""` when the transaction is in the anchor block itself.
    pub microblock_hash: String,
    pub microblock_sequence: Option<u32>,
    pub microblock_canonical: bool,
    /// read_count, read_length, runtime, write_count, write_length.
    pub execution_cost: [u64; 5],
    pub vm_error: Option<String>,
    /// The called contract's ABI (JSON text) for a contract call, when it is known.
    pub contract_abi: Option<std::sync::Arc<str>>,
    /// What never changes about its JSON, materialized when its block was applied
    /// (`entity::materialized_json`); `None` for a row built outside the store (derived from
    /// `raw_tx` when rendered).
    pub api_json: Option<String>,
}

/// A mined transaction as a list page shows it, from its stored row text
/// (`entity::row_text`, materialized when its block was applied), with only what can change
/// read apart: `canonical` and the called contract's ABI.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListedTx {
    pub tx_id: String,
    pub canonical: bool,
    /// The called contract's ABI (JSON text) for a contract call, when it is known.
    pub contract_abi: Option<std::sync::Arc<str>>,
    /// The row's stored text (`txs.api_json` in its six-part form).
    pub api_json: String,
}

/// A transaction of a list page: from its stored row text when the store has it, else from the
/// row's fields (a streamed transaction, the boot block's, a row not yet materialized).
// A page's worth at most (50): boxing the larger variant would add an allocation per row of the
// pages that need it and save a few kilobytes.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageTx {
    Listed(ListedTx),
    Mined(MinedTx),
}

impl PageTx {
    pub fn tx_id(&self) -> &str {
        match self {
            PageTx::Listed(t) => &t.tx_id,
            PageTx::Mined(t) => &t.tx_id,
        }
    }
}

/// A transaction in the mempool (pending or dropped).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MempoolTx {
    pub tx_id: String,
    pub raw_tx: String,
    /// `pending` or one of the `dropped_*` statuses.
    pub status: String,
    pub replaced_by_tx_id: Option<String>,
    /// Unix seconds.
    pub receipt_time: u64,
    pub contract_abi: Option<std::sync::Arc<str>>,
}

/// Either kind, as `/tx/{id}` and `/tx/multiple` answer them (mined preferred).
// Short-lived (one per rendered transaction): boxing the larger variant would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnyTx {
    Mined(MinedTx),
    Mempool(MempoolTx),
}

/// One transaction event: the `events` row, declared once in the read interface (ingestion
/// writes the same type).
pub use crate::EventRow as TxEvent;
