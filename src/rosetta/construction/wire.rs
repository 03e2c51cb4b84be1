//! Construction failures as entries of THE Rosetta error table (`crate::rosetta::error`): the
//! incumbent's codes where it had one, ours (646+, 660+) otherwise. Each
//! [`ConstructionError`] maps to exactly one kind.

use serde_json::json;

use super::error::ConstructionError;
use crate::rosetta::{ErrorKind, RosettaError};
use stacks_node_proxy::NodeError;

pub fn kind_of(e: &ConstructionError) -> ErrorKind {
    use ConstructionError as E;
    match e {
        E::InvalidOperation(_) => ErrorKind::InvalidOperation,
        E::InvalidFee(_) => ErrorKind::InvalidFee,
        E::MissingFee => ErrorKind::FeesNotAvailable,
        E::InvalidSymbol(_) => ErrorKind::InvalidSymbol,
        E::InvalidDecimals(_) => ErrorKind::InvalidCurrencyDecimals,
        E::InvalidSender(_) => ErrorKind::InvalidSender,
        E::InvalidRecipient(_) => ErrorKind::InvalidRecipient,
        E::InvalidAmount(_) => ErrorKind::AmountNotAvailable,
        E::InvalidTransaction(_) => ErrorKind::InvalidTransactionString,
        E::NotSigned => ErrorKind::TransactionNotSigned,
        E::SignedMismatch { .. } | E::InvalidMetadata { .. } => ErrorKind::InvalidParams,
        E::InvalidCurve(_) => ErrorKind::InvalidCurveType,
        E::InvalidPublicKey(_) | E::PublicKeyNotSender { .. } => ErrorKind::InvalidPublicKey,
        E::PublicKeyCount { got: 0, .. } => ErrorKind::PublicKeyNotAvailable,
        E::PublicKeyCount { expected: 1, .. } => ErrorKind::NeedOnePublicKey,
        E::PublicKeyCount { .. } => ErrorKind::InvalidPublicKey,
        E::NoSignature => ErrorKind::NoSignatures,
        E::SignatureCount { .. } => ErrorKind::NeedOnlyOneSignature,
        E::SignatureType(_) => ErrorKind::SignatureTypeNotSupported,
        E::InvalidSignature(_) => ErrorKind::InvalidSignature,
        E::SignatureNotVerified(_) => ErrorKind::SignatureNotVerified,
        E::MissingNonce => ErrorKind::MissingNonce,
        E::UnsupportedTransaction(_) => ErrorKind::UnsupportedTransaction,
    }
}

impl From<ConstructionError> for RosettaError {
    fn from(e: ConstructionError) -> Self {
        RosettaError::with_message(kind_of(&e), e.to_string())
    }
}

impl From<NodeError> for RosettaError {
    fn from(e: NodeError) -> Self {
        match &e {
            // A refusal with the node's JSON body (`POST /v2/transactions` answers 400 with its
            // reason); any other answer, or none, is the node being unavailable.
            NodeError::Rejected(r) if r.status == 400 && r.json.is_some() => {
                let reason = r.reason().unwrap_or("Unknown");
                let kind = match reason {
                    "BadNonce" | "ConflictingNonceInMempool" => ErrorKind::BadNonce,
                    "NotEnoughFunds" => ErrorKind::InsufficientFunds,
                    "FeeTooLow" => ErrorKind::FeeTooLow,
                    _ => ErrorKind::TransactionRejected,
                };
                RosettaError::with_details(kind, json!({ "reason": reason, "reason_data": r.reason_data() }))
            }
            _ => RosettaError::with_message(ErrorKind::NodeUnavailable, e.to_string()),
        }
    }
}
