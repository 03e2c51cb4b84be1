//! `/mempool` and `/mempool/transaction` (`/mempool` takes a `NetworkRequest`).

use serde::{Deserialize, Serialize};

use super::{Metadata, NetworkIdentifier, Transaction, TransactionIdentifier};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MempoolResponse {
    pub transaction_identifiers: Vec<TransactionIdentifier>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MempoolTransactionRequest {
    pub network_identifier: NetworkIdentifier,
    pub transaction_identifier: TransactionIdentifier,
}

/// Operations of a pending transaction are a best-effort estimate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MempoolTransactionResponse {
    pub transaction: Transaction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}
