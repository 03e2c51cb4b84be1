//! THE Rosetta error table: every error any `/rosetta/v1` route can return, with fixed codes,
//! fixed messages and an honest `retriable` flag. Codes 601–645 keep the incumbent's numbers and
//! messages; 646 and up are ours. Per-request context goes in `details`, never in the message.
//!
//! Everything is served with HTTP 500 and the Rosetta `Error` body (see `reply`), the only
//! failure shape rosetta-cli's client decodes.

use rosetta_spec::ErrorCatalog;
use serde_json::{json, Value};
use thiserror::Error;
use warp::http::StatusCode;
use warp::reply::Response;
use warp::Reply;

/// Declares [`ErrorKind`]: variant = code, message, retriable.
macro_rules! error_table {
    ($($(#[$meta:meta])* $variant:ident = $code:literal, $message:literal, $retriable:literal;)+) => {
        /// One kind of Rosetta error. Codes are explicit so adding a variant renumbers nothing.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorKind {
            $($(#[$meta])* $variant,)+
        }

        impl ErrorKind {
            /// Every kind, in code order.
            pub const ALL: &'static [ErrorKind] = &[$(ErrorKind::$variant,)+];

            pub const fn code(self) -> i32 {
                match self { $(ErrorKind::$variant => $code,)+ }
            }

            pub const fn message(self) -> &'static str {
                match self { $(ErrorKind::$variant => $message,)+ }
            }

            pub const fn retriable(self) -> bool {
                match self { $(ErrorKind::$variant => $retriable,)+ }
            }
        }
    };
}

// Retriable only where sending the same request later can succeed: a block or transaction that
// is not indexed *yet*, a node or database that is down. The incumbent also flagged 601, 606,
// 608 and 616 retriable; a malformed account or hash never becomes valid (docs/rosetta-deviations.md).
error_table! {
    InvalidAccount = 601, "Invalid Account.", false;
    InsufficientFunds = 602, "Insufficient Funds.", false;
    AccountEmpty = 603, "Account is empty.", false;
    InvalidBlockIndex = 604, "Invalid block index.", false;
    /// Not indexed (yet): the chain may reach it.
    BlockNotFound = 605, "Block not found.", true;
    InvalidBlockHash = 606, "Invalid block hash.", false;
    /// Not indexed (yet): it may be mined or arrive in the mempool.
    TransactionNotFound = 607, "Transaction not found.", true;
    InvalidTransactionHash = 608, "Invalid transaction hash.", false;
    InvalidParams = 609, "Invalid params.", false;
    InvalidNetwork = 610, "Invalid network.", false;
    InvalidBlockchain = 611, "Invalid blockchain.", false;
    UnknownError = 612, "Unknown error.", false;
    NetworkIdentifierNull = 613, "Network identifier object is null.", false;
    AccountIdentifierNull = 614, "Account identifier object is null.", false;
    BlockIdentifierNull = 615, "Block identifier is null.", false;
    TransactionIdentifierNull = 616, "Transaction identifier is null.", false;
    BlockchainNameNull = 617, "Blockchain name is null.", false;
    NetworkNameNull = 618, "Network name is null.", false;
    InvalidCurveType = 619, "Invalid curve type.", false;
    InvalidPublicKey = 620, "invalid public key.", false;
    InvalidOperation = 621, "Invalid operation", false;
    InvalidFee = 622, "Invalid fee", false;
    InvalidSymbol = 623, "Invalid symbol", false;
    InvalidCurrencyDecimals = 624, "Invalid currency decimals", false;
    InvalidTransactionType = 625, "Invalid transaction type", false;
    InvalidSender = 626, "Invalid sender address", false;
    InvalidRecipient = 627, "Invalid recipient address", false;
    InvalidTransactionString = 628, "Invalid transaction string", false;
    TransactionNotSigned = 629, "Transaction not signed", false;
    AmountNotAvailable = 630, "Amount not available", false;
    FeesNotAvailable = 631, "Fees not available", false;
    PublicKeyNotAvailable = 632, "Public key not available", false;
    NoSignatures = 633, "no signature found", false;
    InvalidSignature = 634, "Invalid Signature", false;
    SignatureNotVerified = 635, "Signature(s) not verified with this public key(s)", false;
    NeedOnePublicKey = 636, "Need one public key for single signature", false;
    NeedOnlyOneSignature = 637, "Need only one signature", false;
    SignatureTypeNotSupported = 638, "Signature type not supported.", false;
    MissingTransactionSize = 639, "Transaction size required to calculate total fee.", false;
    StackingEligibleError = 640, "Account not eligible for stacking.", false;
    InvalidSubAccount = 641, "Invalid sub-account", false;
    MissingSenderAddress = 642, "Missing sender address", false;
    MissingNonce = 643, "Missing transaction nonce", false;
    MissingContractAddress = 644, "Missing contract address", false;
    MissingContractName = 645, "Missing contract name", false;
    /// This server runs offline (`STACKS_API_MODE=offline`): online endpoints are refused.
    OfflineMode = 646, "Endpoint not available in offline mode.", false;
    /// Stacks is account-based: there are no coins to list.
    CoinsUnsupported = 647, "Account coins are not supported: Stacks is account-based.", false;
    /// The Stacks node is not configured or did not answer.
    NodeUnavailable = 648, "Stacks node unavailable.", true;
    /// The ledger database did not answer.
    StoreUnavailable = 649, "Ledger store unavailable.", true;
    /// `/call` with a method not listed in `allow.call_methods`.
    UnknownCallMethod = 650, "Call method not supported.", false;
    /// A URL under `/rosetta/v1` that names no endpoint (or a method other than POST).
    UnknownEndpoint = 651, "Endpoint not found.", false;
    /// The request body is not JSON, or not the JSON object the endpoint takes.
    MalformedRequest = 652, "Malformed request body.", false;
    /// A valid currency this server does not track (only STX is).
    UnsupportedCurrency = 653, "Currency not supported.", false;
    /// Construction (660 up): the node refused the nonce (used, or not the next one).
    BadNonce = 660, "Transaction rejected: bad nonce.", false;
    /// The node refused the fee as too low.
    FeeTooLow = 661, "Transaction rejected: fee too low.", false;
    /// The node refused the transaction for another reason (named in `details`).
    TransactionRejected = 662, "Transaction rejected by the node.", false;
    /// A transaction the Construction API does not build (P2WPKH origins, multisig sponsors,
    /// post-conditions, other payloads).
    UnsupportedTransaction = 663, "Transaction not supported by the Construction API.", false;
}

/// A Rosetta error: its kind plus optional per-request context.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{} ({})", .kind.message(), .kind.code())]
pub struct RosettaError {
    pub kind: ErrorKind,
    pub details: Option<Value>,
}

impl RosettaError {
    pub fn new(kind: ErrorKind) -> Self {
        Self { kind, details: None }
    }

    /// With `{"message": context}` as details.
    pub fn with_message(kind: ErrorKind, context: impl Into<String>) -> Self {
        Self { kind, details: Some(json!({ "message": context.into() })) }
    }

    pub fn with_details(kind: ErrorKind, details: Value) -> Self {
        Self { kind, details: Some(details) }
    }
}

impl From<ErrorKind> for RosettaError {
    fn from(kind: ErrorKind) -> Self {
        Self::new(kind)
    }
}

/// The one place a failed read becomes a Rosetta error: a store that cannot be reached is 649
/// (retriable), any other failure 612 with the cause only in the log.
impl From<ledger_read::ReadError> for RosettaError {
    fn from(e: ledger_read::ReadError) -> Self {
        if e.is_unavailable() {
            tracing::warn!(error = %e, "rosetta: store unavailable");
            RosettaError::new(ErrorKind::StoreUnavailable)
        } else {
            // Internals stay in the log, not in the answer.
            tracing::error!(error = %e, "rosetta: store read failed");
            RosettaError::new(ErrorKind::UnknownError)
        }
    }
}

impl ErrorCatalog for RosettaError {
    fn code(&self) -> i32 {
        self.kind.code()
    }
    fn message(&self) -> &'static str {
        self.kind.message()
    }
    fn retriable(&self) -> bool {
        self.kind.retriable()
    }
    fn details(&self) -> Option<Value> {
        self.details.clone()
    }
    fn all() -> Vec<Self> {
        ErrorKind::ALL.iter().map(|k| RosettaError::new(*k)).collect()
    }
}

impl warp::reject::Reject for RosettaError {}

impl Reply for RosettaError {
    fn into_response(self) -> Response {
        if self.kind.retriable() || self.kind == ErrorKind::UnknownError {
            tracing::warn!(code = self.kind.code(), details = ?self.details, "rosetta error");
        } else {
            tracing::debug!(code = self.kind.code(), details = ?self.details, "rosetta error");
        }
        warp::reply::with_status(warp::reply::json(&self.to_wire()), StatusCode::INTERNAL_SERVER_ERROR)
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_is_valid_and_codes_ascend() {
        assert_eq!(RosettaError::check_catalog(), Ok(()));
        let codes: Vec<i32> = ErrorKind::ALL.iter().map(|k| k.code()).collect();
        assert!(codes.windows(2).all(|w| w[0] < w[1]), "{codes:?}");
        assert_eq!(codes.first(), Some(&601));
    }

    #[test]
    fn details_only_in_details() {
        let e = RosettaError::with_message(ErrorKind::BlockNotFound, "index 7").to_wire();
        assert_eq!(e.message, "Block not found.");
        assert_eq!(e.details.unwrap()["message"], "index 7");
        assert!(e.retriable);
    }
}
