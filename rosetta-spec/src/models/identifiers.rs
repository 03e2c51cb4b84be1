//! Identifiers: networks, blocks, transactions, operations, accounts and coins.

use serde::{Deserialize, Serialize};

use super::Metadata;

/// Names a network (`blockchain` + `network`, optionally a shard or sub-network).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkIdentifier {
    pub blockchain: String,
    pub network: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_network_identifier: Option<SubNetworkIdentifier>,
}

impl NetworkIdentifier {
    pub fn new(blockchain: impl Into<String>, network: impl Into<String>) -> Self {
        Self { blockchain: blockchain.into(), network: network.into(), sub_network_identifier: None }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubNetworkIdentifier {
    pub network: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A block by both height and hash; what every response carries.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BlockIdentifier {
    pub index: i64,
    pub hash: String,
}

impl BlockIdentifier {
    pub fn new(index: i64, hash: impl Into<String>) -> Self {
        Self { index, hash: hash.into() }
    }
}

/// A block lookup key in requests: by index, by hash, by both, or (empty) the tip.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PartialBlockIdentifier {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
}

impl From<BlockIdentifier> for PartialBlockIdentifier {
    fn from(b: BlockIdentifier) -> Self {
        Self { index: Some(b.index), hash: Some(b.hash) }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TransactionIdentifier {
    pub hash: String,
}

impl TransactionIdentifier {
    pub fn new(hash: impl Into<String>) -> Self {
        Self { hash: hash.into() }
    }
}

/// Position of an operation within its transaction (`index` is contiguous from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OperationIdentifier {
    pub index: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_index: Option<i64>,
}

impl OperationIdentifier {
    pub fn new(index: i64) -> Self {
        Self { index, network_index: None }
    }
}

/// An account; every field, `metadata` included, is part of its identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountIdentifier {
    pub address: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_account: Option<SubAccountIdentifier>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl AccountIdentifier {
    pub fn new(address: impl Into<String>) -> Self {
        Self { address: address.into(), sub_account: None, metadata: None }
    }
}

/// A partition of an account's balance (for example locked or staked funds).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubAccountIdentifier {
    pub address: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Names a UTXO-style coin.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CoinIdentifier {
    pub identifier: String,
}
