//! Row types: one struct per table the store writes, with the store's column types (`i64`,
//! `String`, `bool`). Amounts that may exceed 64 bits (fungible tokens) are decimal text.

/// `blocks`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BlockRow {
    pub index_block_hash: String,
    pub block_hash: String,
    pub block_height: i64,
    pub parent_index_block_hash: String,
    pub parent_block_hash: String,
    /// `""` when the block confirms no microblock stream.
    pub parent_microblock_hash: String,
    /// `-1` when none.
    pub parent_microblock_sequence: i64,
    pub block_time: i64,
    pub burn_block_time: i64,
    pub burn_block_hash: String,
    pub burn_block_height: i64,
    pub miner_txid: String,
    pub parent_burn_block_hash: String,
    pub parent_burn_block_height: i64,
    pub parent_burn_block_time: i64,
    pub tenure_height: Option<i64>,
    pub consensus_hash: Option<String>,
    /// The signer bitvec as a string of `0`/`1` (Nakamoto).
    pub signer_bitvec: Option<String>,
    /// JSON array of 0x-hex signatures.
    pub signer_signatures: Option<String>,
    pub signer_signature_hash: Option<String>,
    pub miner_signature: Option<String>,
    pub cost: Cost,
    pub tx_count: i64,
    pub tx_total_size: i64,
    pub cycle_number: Option<i64>,
    /// The reward set as the node sent it (JSON).
    pub reward_set: Option<String>,
    pub pox_v1_unlock_height: Option<i64>,
    pub pox_v2_unlock_height: Option<i64>,
    pub pox_v3_unlock_height: Option<i64>,
    pub pox_v4_unlock_height: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cost {
    pub read_count: i64,
    pub read_length: i64,
    pub runtime: i64,
    pub write_count: i64,
    pub write_length: i64,
}

impl Cost {
    pub fn add(&mut self, o: &Cost) {
        self.read_count += o.read_count;
        self.read_length += o.read_length;
        self.runtime += o.runtime;
        self.write_count += o.write_count;
        self.write_length += o.write_length;
    }
}

/// `txs`: one row per (transaction, block) — or per (transaction, microblock) for a streamed,
/// not yet anchored one (`index_block_hash == ""`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TxRow {
    pub tx_id: String,
    pub tx_index: i64,
    /// 0x hex as received; `"0x00"` for burnchain operations.
    pub raw_tx: String,
    /// For burnchain operations: the serialized transaction synthesized the way the incumbent
    /// does (nonce 0, fee 0, empty signature), so readers decode every tx the same way.
    pub synthetic_tx: Option<String>,
    /// Its stored text ([`ledger_read::TxRender`]): the materialized parts, then the whole row
    /// text under its block, rendered once so that no read decodes the transaction again.
    pub api_json: String,
    pub tx_type: String,
    pub nonce: i64,
    pub fee: i64,
    pub sender_address: String,
    pub sponsored: bool,
    pub sponsor_address: Option<String>,
    pub sponsor_nonce: Option<i64>,
    pub anchor_mode: String,
    pub post_condition_mode: String,
    pub status: String,
    pub raw_result: String,
    /// NUL bytes stripped.
    pub vm_error: Option<String>,
    pub event_count: i64,
    pub cost: Cost,
    /// `""` when the tx was not in a microblock.
    pub microblock_hash: String,
    pub microblock_sequence: Option<i64>,
    pub microblock_parent_hash: Option<String>,
    /// Deployed contract (smart_contract) or called contract (contract_call).
    pub contract_id: Option<String>,
    pub function_name: Option<String>,
    pub token_transfer_recipient: Option<String>,
    pub token_transfer_amount: Option<i64>,
    pub is_burnchain_op: bool,
    /// Byte length of the serialized transaction.
    pub raw_size: i64,
}

/// `events`: declared in the read interface, the row ingestion writes and `/extended` renders.
pub use ledger_read::EventRow;

/// `operations`: declared in the read interface, the one model ingestion writes and the
/// surfaces read.
pub use ledger_read::OpRow;

/// A lock event whose balance effect depends on the lock already in force (stack-increase and
/// stack-extend re-send the *total*): resolved into an `stx_lock` operation by `materialize`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockIntent {
    pub tx_id: String,
    pub tx_index: i64,
    pub op_index: i64,
    pub account: String,
    pub locked_total: i64,
    pub unlock_height: i64,
    pub contract: String,
}

/// `smart_contracts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractRow {
    pub contract_id: String,
    pub tx_id: String,
    pub clarity_version: Option<i64>,
    pub source_code: String,
    /// The node's ABI text (its `/v2/contracts/interface` answer).
    pub abi: Option<String>,
    /// The same ABI in the incumbent's jsonb key order (what `/extended` serves).
    pub abi_jsonb: Option<String>,
    /// False for a deploy that failed (its row is kept, as the incumbent keeps it).
    pub success: bool,
}

/// `miner_rewards`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MinerRewardRow {
    pub from_index_block_hash: String,
    pub from_block_hash: String,
    pub recipient: String,
    pub miner_address: String,
    pub coinbase_amount: i64,
    pub tx_fees_anchored: i64,
    pub tx_fees_streamed_confirmed: i64,
    pub tx_fees_streamed_produced: i64,
}

impl MinerRewardRow {
    pub fn total(&self) -> i64 {
        self.coinbase_amount
            + self.tx_fees_anchored
            + self.tx_fees_streamed_confirmed
            + self.tx_fees_streamed_produced
    }
}

/// `pox_events`: a pox-2/3/4 `print` decoded to its common fields.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PoxEventRow {
    pub tx_id: String,
    pub tx_index: i64,
    pub event_index: i64,
    /// `pox-2`, `pox-3` or `pox-4`.
    pub pox_contract: String,
    pub name: String,
    pub stacker: String,
    pub balance: Option<String>,
    pub locked: Option<String>,
    pub burnchain_unlock_height: Option<i64>,
    /// Bitcoin address text when the version is known, else the raw tuple's hex.
    pub pox_addr: Option<String>,
    pub pox_addr_raw: Option<String>,
    pub amount_ustx: Option<String>,
    pub delegate_to: Option<String>,
    pub lock_period: Option<i64>,
    pub start_burn_height: Option<i64>,
    pub unlock_burn_height: Option<i64>,
    pub start_cycle_id: Option<i64>,
    pub end_cycle_id: Option<i64>,
    pub signer_key: Option<String>,
    /// The `data` tuple as a JSON object of `key: repr`.
    pub data: String,
}

/// `microblocks`: a microblock as confirmed by an anchor block (or streamed, not yet anchored,
/// when `index_block_hash == ""`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MicroblockRow {
    pub microblock_hash: String,
    pub microblock_sequence: i64,
    pub microblock_parent_hash: String,
    /// The anchor block the stream builds on.
    pub parent_index_block_hash: String,
    pub tx_count: i64,
    /// A streamed microblock's burn block as the stream announced it (hash, time, height):
    /// the incumbent shows these as the microblock's `parent_burn_block_*`. `None` on rows
    /// derived from an anchor block.
    pub stream_burn_block: Option<(String, i64, i64)>,
    /// When this server received the `/new_microblocks` event of a streamed microblock (unix
    /// seconds): the incumbent's `block_time` of its transactions until an anchor block
    /// confirms them. `None` on rows derived from an anchor block.
    pub stream_receipt_time: Option<i64>,
}

/// Links a principal to a transaction it is involved in (`account_txs`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct AccountTxRow {
    pub principal: String,
    pub tx_id: String,
    pub tx_index: i64,
    /// Listed among the principal's transactions by the incumbent (not only its locked
    /// account).
    pub listed: bool,
    /// One of the boot block's (block 0's) transactions, stored in block 1.
    pub boot: bool,
    /// The transaction's microblock sequence, [`ANCHORED_SEQ`] for one of the anchored block:
    /// the principal lists' order within a block, kept here so that a page is picked from
    /// `account_txs` alone (migration 0041).
    pub seq: i64,
}

/// The `seq` of an anchored-block transaction: after every microblock's, as the incumbent
/// orders them (`COALESCE(microblock_sequence, 2147483647)`).
pub const ANCHORED_SEQ: i64 = i32::MAX as i64;

/// `mempool_txs`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MempoolTxRow {
    pub tx_id: String,
    pub raw_tx: String,
    pub tx_type: String,
    pub sender_address: String,
    pub nonce: i64,
    pub sponsored: bool,
    pub sponsor_address: Option<String>,
    pub sponsor_nonce: Option<i64>,
    pub fee: i64,
    pub contract_id: Option<String>,
    pub function_name: Option<String>,
    pub token_transfer_recipient: Option<String>,
    pub raw_size: i64,
}

/// `stx_balances`: an account's state at the end of a block (only for touched accounts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BalanceRow {
    pub account: String,
    pub state: crate::ledger::AccountState,
}
