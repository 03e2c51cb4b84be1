//! Why a construction step failed, in the domain's terms. The route layer maps each variant to
//! one listed Rosetta error (see `wire.rs`); nothing here knows about HTTP.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConstructionError {
    #[error("invalid operation: {0}")]
    InvalidOperation(String),
    #[error("invalid fee: {0}")]
    InvalidFee(String),
    #[error("no fee: give a fee operation or metadata.fee")]
    MissingFee,
    #[error("currency symbol {0:?} is not STX")]
    InvalidSymbol(String),
    #[error("currency decimals {0} are not 6")]
    InvalidDecimals(i32),
    #[error("invalid sender: {0}")]
    InvalidSender(String),
    #[error("invalid recipient: {0}")]
    InvalidRecipient(String),
    #[error("invalid amount: {0}")]
    InvalidAmount(String),
    #[error("the transaction cannot be decoded: {0}")]
    InvalidTransaction(String),
    #[error("the transaction is not signed")]
    NotSigned,
    #[error("the transaction is {actual}, but the request says {claimed}")]
    SignedMismatch { claimed: &'static str, actual: &'static str },
    #[error("curve type {0:?} is not secp256k1")]
    InvalidCurve(String),
    #[error("invalid public key: {0}")]
    InvalidPublicKey(String),
    #[error(
        "{expected} public keys are needed (the origin's, in member order, then the sponsor's), got {got}"
    )]
    PublicKeyCount { expected: usize, got: usize },
    #[error("the public keys make the address {key_address}, not {sender}")]
    PublicKeyNotSender { key_address: String, sender: String },
    #[error("no signature given")]
    NoSignature,
    #[error("{given} signatures given; the transaction takes {room} more")]
    SignatureCount { given: usize, room: usize },
    #[error("signature type {0:?} is not ecdsa_recovery")]
    SignatureType(String),
    #[error("invalid signature: {0}")]
    InvalidSignature(String),
    #[error("the signature does not verify: {0}")]
    SignatureNotVerified(String),
    #[error("no nonce: metadata.account_sequence (or nonce) is required")]
    MissingNonce,
    #[error("missing or invalid metadata `{field}`: {reason}")]
    InvalidMetadata { field: &'static str, reason: String },
    #[error("the transaction is not one the Construction API builds: {0}")]
    UnsupportedTransaction(String),
}

pub type Result<T, E = ConstructionError> = std::result::Result<T, E>;
