//! The optional indexer endpoints, first defined by Rosetta 1.4.7: `/events/blocks`,
//! `/search/transactions` and `/account/coins`. Shapes follow `api-v1.4.7.json`.

use serde::{Deserialize, Serialize};

use super::{AccountIdentifier, BlockIdentifier, Coin, CoinIdentifier, Currency, Metadata};
use super::{NetworkIdentifier, Transaction, TransactionIdentifier};

/// Without `offset` the last `limit` events up to the tip are returned; `offset: 0` starts at the beginning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventsBlocksRequest {
    pub network_identifier: NetworkIdentifier,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventsBlocksResponse {
    pub max_sequence: i64,
    pub events: Vec<BlockEvent>,
}

/// One step of the canonical-chain log; replaying all events rebuilds the chain.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BlockEvent {
    /// Strictly increasing across the log.
    pub sequence: i64,
    pub block_identifier: BlockIdentifier,
    pub r#type: BlockEventType,
}

wire_enum! {
    BlockEventType {
        BlockAdded = "block_added",
        BlockRemoved = "block_removed",
    }
}

/// Searches canonical blocks only, newest first; conditions combine with `operator`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchTransactionsRequest {
    pub network_identifier: NetworkIdentifier,
    pub operator: Operator,
    /// Pins the chain height while paginating.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_block: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_identifier: Option<TransactionIdentifier>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_identifier: Option<AccountIdentifier>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coin_identifier: Option<CoinIdentifier>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<Currency>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success: Option<bool>,
}

wire_enum! {
    Operator {
        Or = "or",
        And = "and",
    }
}

/// `next_offset` is absent on the last page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchTransactionsResponse {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<i64>,
    pub transactions: Vec<BlockTransaction>,
}

/// A transaction together with the block that contains it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockTransaction {
    pub block_identifier: BlockIdentifier,
    pub transaction: Transaction,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountCoinsRequest {
    pub network_identifier: NetworkIdentifier,
    pub account_identifier: AccountIdentifier,
    pub include_mempool: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currencies: Option<Vec<Currency>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountCoinsResponse {
    pub block_identifier: BlockIdentifier,
    pub coins: Vec<Coin>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}
