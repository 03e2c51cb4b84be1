//! The Rosetta errors the construction routes return: the incumbent's codes (601–645) where
//! it had one, new ones from 660 up. Each [`ConstructionError`] maps to exactly one entry.

use rosetta_spec::ErrorCatalog;
use serde_json::{json, Value as Json};

use super::error::ConstructionError;
use super::node::NodeError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    InsufficientFunds,
    InvalidParams,
    InvalidNetwork,
    InvalidBlockchain,
    UnknownError,
    InvalidCurve,
    InvalidPublicKey,
    InvalidOperation,
    InvalidFee,
    InvalidSymbol,
    InvalidDecimals,
    InvalidSender,
    InvalidRecipient,
    InvalidTransaction,
    NotSigned,
    AmountNotAvailable,
    FeesNotAvailable,
    PublicKeyNotAvailable,
    NoSignature,
    InvalidSignature,
    SignatureNotVerified,
    NeedOnePublicKey,
    NeedOneSignature,
    SignatureTypeNotSupported,
    SizeRequired,
    MissingSender,
    MissingNonce,
    OfflineMode,
    NodeUnavailable,
    BadNonce,
    FeeTooLow,
    Rejected,
    UnsupportedTransaction,
}

impl Code {
    pub const ALL: [Code; 33] = [
        Code::InsufficientFunds,
        Code::InvalidParams,
        Code::InvalidNetwork,
        Code::InvalidBlockchain,
        Code::UnknownError,
        Code::InvalidCurve,
        Code::InvalidPublicKey,
        Code::InvalidOperation,
        Code::InvalidFee,
        Code::InvalidSymbol,
        Code::InvalidDecimals,
        Code::InvalidSender,
        Code::InvalidRecipient,
        Code::InvalidTransaction,
        Code::NotSigned,
        Code::AmountNotAvailable,
        Code::FeesNotAvailable,
        Code::PublicKeyNotAvailable,
        Code::NoSignature,
        Code::InvalidSignature,
        Code::SignatureNotVerified,
        Code::NeedOnePublicKey,
        Code::NeedOneSignature,
        Code::SignatureTypeNotSupported,
        Code::SizeRequired,
        Code::MissingSender,
        Code::MissingNonce,
        Code::OfflineMode,
        Code::NodeUnavailable,
        Code::BadNonce,
        Code::FeeTooLow,
        Code::Rejected,
        Code::UnsupportedTransaction,
    ];

    /// (code, message, retriable); the messages are the incumbent's, byte for byte.
    fn entry(self) -> (i32, &'static str, bool) {
        match self {
            Code::InsufficientFunds => (602, "Insufficient Funds.", false),
            Code::InvalidParams => (609, "Invalid params.", false),
            Code::InvalidNetwork => (610, "Invalid network.", false),
            Code::InvalidBlockchain => (611, "Invalid blockchain.", false),
            Code::UnknownError => (612, "Unknown error.", false),
            Code::InvalidCurve => (619, "Invalid curve type.", false),
            Code::InvalidPublicKey => (620, "invalid public key.", false),
            Code::InvalidOperation => (621, "Invalid operation", false),
            Code::InvalidFee => (622, "Invalid fee", false),
            Code::InvalidSymbol => (623, "Invalid symbol", false),
            Code::InvalidDecimals => (624, "Invalid currency decimals", false),
            Code::InvalidSender => (626, "Invalid sender address", false),
            Code::InvalidRecipient => (627, "Invalid recipient address", false),
            Code::InvalidTransaction => (628, "Invalid transaction string", false),
            Code::NotSigned => (629, "Transaction not signed", false),
            Code::AmountNotAvailable => (630, "Amount not available", false),
            Code::FeesNotAvailable => (631, "Fees not available", false),
            Code::PublicKeyNotAvailable => (632, "Public key not available", false),
            Code::NoSignature => (633, "no signature found", false),
            Code::InvalidSignature => (634, "Invalid Signature", false),
            Code::SignatureNotVerified => (635, "Signature(s) not verified with this public key(s)", false),
            Code::NeedOnePublicKey => (636, "Need one public key for single signature", false),
            Code::NeedOneSignature => (637, "Need only one signature", false),
            Code::SignatureTypeNotSupported => (638, "Signature type not supported.", false),
            Code::SizeRequired => (639, "Transaction size required to calculate total fee.", false),
            Code::MissingSender => (642, "Missing sender address", false),
            Code::MissingNonce => (643, "Missing transaction nonce", false),
            Code::OfflineMode => (660, "Endpoint not available in offline mode", false),
            Code::NodeUnavailable => (661, "Stacks node not available", true),
            Code::BadNonce => (662, "Transaction rejected: bad nonce", false),
            Code::FeeTooLow => (663, "Transaction rejected: fee too low", false),
            Code::Rejected => (664, "Transaction rejected by the node", false),
            Code::UnsupportedTransaction => (665, "Transaction not supported by the Construction API", false),
        }
    }
}

/// A listed error with optional per-request details.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub code: Code,
    pub details: Option<Json>,
}

impl ApiError {
    pub fn new(code: Code) -> Self {
        ApiError { code, details: None }
    }

    pub fn with(code: Code, message: impl std::fmt::Display) -> Self {
        ApiError { code, details: Some(json!({ "message": message.to_string() })) }
    }
}

impl ErrorCatalog for ApiError {
    fn code(&self) -> i32 {
        self.code.entry().0
    }
    fn message(&self) -> &'static str {
        self.code.entry().1
    }
    fn retriable(&self) -> bool {
        self.code.entry().2
    }
    fn details(&self) -> Option<Json> {
        self.details.clone()
    }
    fn all() -> Vec<Self> {
        Code::ALL.iter().map(|&c| ApiError::new(c)).collect()
    }
}

impl From<ConstructionError> for ApiError {
    fn from(e: ConstructionError) -> Self {
        use ConstructionError as E;
        let code = match &e {
            E::InvalidOperation(_) => Code::InvalidOperation,
            E::InvalidFee(_) => Code::InvalidFee,
            E::MissingFee => Code::FeesNotAvailable,
            E::InvalidSymbol(_) => Code::InvalidSymbol,
            E::InvalidDecimals(_) => Code::InvalidDecimals,
            E::InvalidSender(_) => Code::InvalidSender,
            E::InvalidRecipient(_) => Code::InvalidRecipient,
            E::InvalidAmount(_) => Code::AmountNotAvailable,
            E::InvalidTransaction(_) => Code::InvalidTransaction,
            E::NotSigned => Code::NotSigned,
            E::SignedMismatch { .. } | E::InvalidMetadata { .. } => Code::InvalidParams,
            E::InvalidCurve(_) => Code::InvalidCurve,
            E::InvalidPublicKey(_) | E::PublicKeyNotSender { .. } => Code::InvalidPublicKey,
            E::PublicKeyCount(0) => Code::PublicKeyNotAvailable,
            E::PublicKeyCount(_) => Code::NeedOnePublicKey,
            E::NoSignature => Code::NoSignature,
            E::SignatureCount(_) => Code::NeedOneSignature,
            E::SignatureType(_) => Code::SignatureTypeNotSupported,
            E::InvalidSignature(_) => Code::InvalidSignature,
            E::SignatureNotVerified(_) => Code::SignatureNotVerified,
            E::MissingNonce => Code::MissingNonce,
            E::UnsupportedTransaction(_) => Code::UnsupportedTransaction,
        };
        ApiError::with(code, e)
    }
}

impl From<NodeError> for ApiError {
    fn from(e: NodeError) -> Self {
        match &e {
            NodeError::Unreachable { .. } | NodeError::Status { .. } => {
                ApiError::with(Code::NodeUnavailable, &e)
            }
            NodeError::Rejected { reason, reason_data, .. } => {
                let code = match reason.as_str() {
                    "BadNonce" | "ConflictingNonceInMempool" => Code::BadNonce,
                    "NotEnoughFunds" => Code::InsufficientFunds,
                    "FeeTooLow" => Code::FeeTooLow,
                    _ => Code::Rejected,
                };
                ApiError { code, details: Some(json!({ "reason": reason, "reason_data": reason_data })) }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_messages_are_unique() {
        let all = ApiError::catalog();
        let mut codes: Vec<i32> = all.iter().map(|e| e.code).collect();
        let mut messages: Vec<&str> = all.iter().map(|e| e.message.as_str()).collect();
        codes.sort();
        codes.dedup();
        messages.sort();
        messages.dedup();
        assert_eq!((codes.len(), messages.len()), (all.len(), all.len()));
        assert!(all.iter().all(|e| e.details.is_none()));
    }
}
