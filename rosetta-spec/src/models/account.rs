//! `/account/balance`.

use serde::{Deserialize, Serialize};

use super::PartialBlockIdentifier;
use super::{AccountIdentifier, Amount, BlockIdentifier, Coin, Metadata, NetworkIdentifier};

/// A `block_identifier` makes it a historical lookup; without one the tip is used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountBalanceRequest {
    pub network_identifier: NetworkIdentifier,
    pub account_identifier: AccountIdentifier,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_identifier: Option<PartialBlockIdentifier>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountBalanceResponse {
    /// The block the balances were computed at.
    pub block_identifier: BlockIdentifier,
    pub balances: Vec<Amount>,
    /// Moved to `/account/coins` in 1.4.7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coins: Option<Vec<Coin>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}
