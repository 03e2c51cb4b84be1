//! `/new_burn_block`: a Bitcoin block the node processed, with its PoX payouts.

use serde::Deserialize;

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct NewBurnBlock {
    pub burn_block_hash: String,
    pub burn_block_height: u64,
    /// Satoshis burnt by block commits in this block.
    pub burn_amount: u64,
    /// PoX payouts made in this block.
    pub reward_recipients: Vec<RewardRecipient>,
    /// Bitcoin addresses eligible for PoX payouts in this block (one entry per slot).
    pub reward_slot_holders: Vec<String>,
    /// Sent by newer nodes only.
    #[serde(default)]
    pub consensus_hash: Option<String>,
    #[serde(default)]
    pub parent_burn_block_hash: Option<String>,
    /// The Bitcoin transactions of this block that paid PoX reward slots (newer nodes only).
    #[serde(default)]
    pub pox_transactions: Vec<PoxTransaction>,
}

/// One Bitcoin transaction paying PoX reward slots.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PoxTransaction {
    pub txid: String,
    pub reward_recipients: Vec<PoxTxRecipient>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PoxTxRecipient {
    /// Bitcoin address text.
    pub recipient: String,
    /// Satoshis paid.
    pub amt: u64,
    /// The paying output's index in the transaction.
    pub utxo_idx: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RewardRecipient {
    /// Bitcoin address text.
    pub recipient: String,
    /// Satoshis paid.
    pub amt: u64,
}
