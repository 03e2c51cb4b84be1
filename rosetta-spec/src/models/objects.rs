//! Core data objects: blocks, transactions, operations, amounts, coins and balance exemptions.

use serde::{Deserialize, Serialize};

use super::TransactionIdentifier;
use super::{AccountIdentifier, BlockIdentifier, CoinIdentifier, Metadata, OperationIdentifier};

/// Milliseconds since the Unix epoch (the spec's `Timestamp`: int64, minimum 0).
pub type Timestamp = i64;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    pub block_identifier: BlockIdentifier,
    pub parent_block_identifier: BlockIdentifier,
    pub timestamp: Timestamp,
    pub transactions: Vec<Transaction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transaction {
    pub transaction_identifier: TransactionIdentifier,
    pub operations: Vec<Operation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A one-sided balance change (or a non-balance event) of a single account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Operation {
    pub operation_identifier: OperationIdentifier,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub related_operations: Option<Vec<OperationIdentifier>>,
    pub r#type: String,
    /// Required by 1.4.6 and always written. Construction requests carry it empty, and clients
    /// built on 1.4.7+ omit it there, so a missing value decodes as `""` instead of failing.
    #[serde(default)]
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<AccountIdentifier>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<Amount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coin_change: Option<CoinChange>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A signed amount in atomic units; `value` is a decimal string because it may exceed 64 bits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Amount {
    pub value: String,
    pub currency: Currency,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl Amount {
    pub fn new(value: impl Into<String>, currency: Currency) -> Self {
        Self { value: value.into(), currency, metadata: None }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Currency {
    pub symbol: String,
    pub decimals: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl Currency {
    pub fn new(symbol: impl Into<String>, decimals: i32) -> Self {
        Self { symbol: symbol.into(), decimals, metadata: None }
    }
}

/// An operation status the server may return, and whether it changes balances.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OperationStatus {
    pub status: String,
    pub successful: bool,
}

wire_enum! {
    CoinAction {
        CoinCreated = "coin_created",
        CoinSpent = "coin_spent",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CoinChange {
    pub coin_identifier: CoinIdentifier,
    pub coin_action: CoinAction,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coin {
    pub coin_identifier: CoinIdentifier,
    pub amount: Amount,
}

/// Marks balances that may drift from the sum of operations, by sub-account address or currency.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BalanceExemption {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_account_address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<Currency>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exemption_type: Option<ExemptionType>,
}

wire_enum! {
    /// Direction in which a live balance may differ from the computed one.
    ExemptionType {
        GreaterOrEqual = "greater_or_equal",
        LessOrEqual = "less_or_equal",
        Dynamic = "dynamic",
    }
}
