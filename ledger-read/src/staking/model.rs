//! The PoX-5 staking state the `/extended/v3/staking` routes read: bonds, their allowlists and
//! registrations, principals' bond positions, STX stakes, signers and reward totals, as they
//! stand on the canonical chain. Amounts are integers (sats, µSTX); the routes print them as
//! decimal strings, as the incumbent does.

use std::collections::BTreeMap;

/// Where the transaction that produced a row sits (the incumbent's `transaction` object and
/// its `height:microblock_sequence:tx_index` cursor).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TxPlace {
    pub tx_id: String,
    pub tx_index: i64,
    pub event_index: i64,
    pub block_height: i64,
    pub block_hash: String,
    pub index_block_hash: String,
    pub block_time: i64,
    /// 2147483647 for a transaction of the anchored block.
    pub microblock_sequence: i64,
    pub burn_block_height: i64,
    pub burn_block_time: i64,
}

impl TxPlace {
    /// The incumbent's transaction cursor key.
    pub fn cursor_key(&self) -> (i64, i64, i64) {
        (self.block_height, self.microblock_sequence, self.tx_index)
    }
}

/// A bond (`setup-bond`) with the counters its later events keep.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Bond {
    pub index: i64,
    pub target_rate: i64,
    pub stx_value_ratio: i64,
    pub min_ustx_ratio: i64,
    pub first_reward_cycle: i64,
    pub bond_start_height: i64,
    pub unlock_cycle: i64,
    pub unlock_burn_height: i64,
    /// Sum of the allowlist's `max_sats`.
    pub btc_capacity: u128,
    pub allowed_count: i64,
    pub registered_count: i64,
    pub btc_locked: i128,
    pub stx_locked: i128,
    pub btc_paid_out: u128,
    pub at: TxPlace,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowlistEntry {
    pub bond_index: i64,
    pub staker: String,
    pub max_sats: u128,
    pub at: TxPlace,
}

/// How a registration's BTC is locked: proven L1 outputs (`txid`, output index) or sBTC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lockup {
    L1(Vec<(String, i64)>),
    L2,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    pub bond_index: i64,
    pub signer: String,
    pub staker: String,
    pub amount_ustx: u128,
    pub sats_total: u128,
    pub lockup: Lockup,
    pub at: TxPlace,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PositionStatus {
    Enrolled,
    EarlyExit,
}

impl PositionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PositionStatus::Enrolled => "enrolled",
            PositionStatus::EarlyExit => "early_exit",
        }
    }
}

/// A principal's position in one bond.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    pub principal: String,
    pub bond_index: i64,
    pub status: PositionStatus,
    pub active: bool,
    /// The transaction that last (re-)enrolled it.
    pub tx_id: String,
    pub btc_locked: u128,
    pub stx_locked: u128,
    pub accrued: u128,
    pub claimed: u128,
}

/// A principal's pox-5 STX stake (latest `stake` / `stake-update` / `unstake` wins).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StxStake {
    pub amount_ustx: u128,
    pub unlock_burn_height: i64,
    pub signer: String,
}

/// A registered signer and its latest key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StakingSigner {
    pub signer: String,
    pub signer_key: String,
    pub at: TxPlace,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyEventKind {
    Register,
    Grant,
    Revoke,
}

/// A signer key binding event: `register-signer` binds a manager's key, `grant-signer-key` /
/// `revoke-signer-grant` keep the (key, manager) authorizations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyEvent {
    pub kind: KeyEventKind,
    pub manager: String,
    pub signer_key: String,
    pub auth_id: Option<String>,
    pub at: TxPlace,
}

/// Per principal running totals (the incumbent's `principal_staking_totals`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StakingTotals {
    pub stx_accrued: u128,
    pub stx_claimed: u128,
    pub bond_count: i64,
    pub bond_btc_locked: i128,
    pub bond_stx_locked: i128,
    pub bond_accrued: u128,
    pub bond_claimed: u128,
}

/// Everything the routes answer from, at one chain tip.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StakingState {
    /// The canonical tip's burn height (bond status and stake expiry are read against it).
    pub burn_block_height: i64,
    pub bonds: BTreeMap<i64, Bond>,
    /// In chain order.
    pub allowlist: Vec<AllowlistEntry>,
    /// In chain order.
    pub registrations: Vec<Registration>,
    pub positions: BTreeMap<(String, i64), Position>,
    pub stakes: BTreeMap<String, StxStake>,
    pub signers: BTreeMap<String, StakingSigner>,
    pub totals: BTreeMap<String, StakingTotals>,
    /// In chain order.
    pub key_events: Vec<KeyEvent>,
}

impl StakingState {
    /// A stake counts while its unlock height is at or above the burn tip.
    pub fn active_stake(&self, principal: &str) -> Option<&StxStake> {
        self.stakes
            .get(principal)
            .filter(|s| s.amount_ustx > 0 && s.unlock_burn_height >= self.burn_block_height)
    }
}
