//! The ledger model: what the store records for each node event, derived by pure code (no SQL,
//! no async) so every rule can be unit-tested on hand-made payloads.
//!
//! * [`block`]: a `/new_block` → block, transactions, events, operations, contracts, PoX events,
//!   miner rewards, account↔tx links and accepted microblocks ([`DerivedBlock`]).
//! * [`state`]: the state-dependent part of a block (lock deltas, unlocks, end-of-block balances),
//!   computed when the block joins the canonical chain ([`materialize`]).
//! * [`mempool`], [`microblocks`], [`burn`]: the other event kinds.
//!
//! Every STX balance change is exactly one [`OpRow`]; an account's balance is the sum of its
//! canonical successful operations (`amount` moves the liquid part, `locked_delta` the locked
//! part). Fungible and non-fungible token movements are operations too (`ft_*`/`nft_*`, with
//! an `asset_identifier`, in their own op_index range); [`effect::effect`] is the one rule that
//! says what any operation does to sent, received, fees, rewards and locked.

pub mod abi;
pub mod block;
pub mod bns;
pub mod bns_import;
pub mod btc;
pub mod burn;
pub mod effect;
pub mod mempool;
pub mod microblocks;
pub mod ops;
pub mod pox;
pub mod pox5;
pub mod rows;
pub mod state;
pub mod synth;
pub mod tx;

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

pub use block::{derive_block, DerivedBlock};
pub use rows::*;
pub use state::{materialize, AccountState, Materialized};

/// The chain the store follows; transactions of any other chain are refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Network {
    Mainnet,
    Testnet,
}

impl Network {
    pub fn chain_id(self) -> u32 {
        match self {
            Network::Mainnet => 0x0000_0001,
            Network::Testnet => 0x8000_0000,
        }
    }

    pub fn is_mainnet(self) -> bool {
        self == Network::Mainnet
    }

    pub fn from_chain_id(chain_id: u32) -> Option<Network> {
        [Network::Mainnet, Network::Testnet].into_iter().find(|n| n.chain_id() == chain_id)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Network::Mainnet => "mainnet",
            Network::Testnet => "testnet",
        }
    }
}

impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Network {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "mainnet" => Ok(Network::Mainnet),
            "testnet" => Ok(Network::Testnet),
            other => Err(format!("unknown network `{other}` (expected mainnet or testnet)")),
        }
    }
}

/// Why a payload cannot be turned into ledger rows. All of these are the event's fault (the
/// store maps them to `IngestError::Invalid`).
#[derive(Debug, Error, PartialEq, Eq)]
pub enum LedgerError {
    #[error("transaction {txid}: raw_tx does not decode: {reason}")]
    BadRawTx { txid: String, reason: String },
    #[error("transaction {txid}: txid does not match its raw bytes ({computed})")]
    TxidMismatch { txid: String, computed: String },
    #[error("transaction {txid}: chain id 0x{found:08x} is not the configured {network} chain id 0x{expected:08x}")]
    WrongChain { txid: String, found: u32, expected: u32, network: Network },
    #[error("transaction {txid}: {reason}")]
    BadReceipt { txid: String, reason: String },
    #[error("event {event_index} refers to transaction {txid}, which is not in the block")]
    OrphanEvent { txid: String, event_index: u64 },
    #[error("event {event_index} of transaction {txid} has an unsupported type `{kind}`")]
    UnknownEvent { txid: String, event_index: u64, kind: String },
    #[error("burnchain operation {txid} cannot be synthesized: {reason}")]
    BurnchainOp { txid: String, reason: String },
    #[error("amount {amount} of {what} does not fit a signed 64-bit integer")]
    AmountOverflow { what: String, amount: u128 },
    #[error("{0}")]
    Other(String),
}

/// An STX amount as the store keeps it (µSTX in a signed 64-bit integer: the whole supply fits
/// 2^63 several thousand times over, so a larger amount is malformed input).
pub fn stx_amount(amount: u128, what: impl FnOnce() -> String) -> Result<i64, LedgerError> {
    i64::try_from(amount).map_err(|_| LedgerError::AmountOverflow { what: what(), amount })
}

/// Heights and counters from the node are `u64`; the store keeps `i64`.
pub(crate) fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The PoX contract version a boot contract name stands for (`pox` = 1).
pub fn pox_version(contract_id: &str) -> Option<i64> {
    let (addr, name) = contract_id.split_once('.')?;
    if !is_boot_address(addr) {
        return None;
    }
    match name {
        "pox" => Some(1),
        "pox-2" => Some(2),
        "pox-3" => Some(3),
        "pox-4" => Some(4),
        _ => None,
    }
}

/// The boot-code addresses of mainnet and testnet (the model's, `ledger-read`).
pub use ledger_read::is_boot_address;

/// Strips a `0x` prefix and lower-cases, the way ids are compared.
pub fn normalize_hex(s: &str) -> String {
    let body = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s);
    format!("0x{}", body.to_ascii_lowercase())
}

#[cfg(test)]
mod tests;
