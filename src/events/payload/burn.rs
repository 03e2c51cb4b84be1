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
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RewardRecipient {
    /// Bitcoin address text.
    pub recipient: String,
    /// Satoshis paid.
    pub amt: u64,
}
