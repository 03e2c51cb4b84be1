//! Faucet errors and the one place they become HTTP responses (the incumbent's faucet-scoped
//! error handler: `{error, success: false}` bodies).

use ledger_read::ReadError;
use stacks_extended::{with_common_headers, ApiError};
use thiserror::Error;
use warp::http::header::{HeaderValue, RETRY_AFTER};
use warp::http::StatusCode;
use warp::reply::Response;

/// The incumbent's texts.
pub const NOT_AVAILABLE: &str = "Faucet is not available";
pub const TEMPORARILY_UNAVAILABLE: &str = "Faucet is temporarily unavailable, please try again later";
pub const OUT_OF_FUNDS: &str = "Faucet is temporarily out of funds, please try again later";
pub const REQUEST_FAILED: &str = "Faucet request failed, please try again later";
pub const TOO_MANY_REQUESTS: &str = "Too many requests";
/// The STX faucet takes its parameters in the query only.
pub const STX_BODY_HELP: &str = "The STX faucet takes its parameters in the query string, not in the \
    request body: POST /extended/v1/faucets/stx?address=<testnet address>[&stacking=true], for example \
    `curl -X POST \"http://localhost:3999/extended/v1/faucets/stx?address=ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM\"`";

#[derive(Debug, Error)]
pub enum FaucetError {
    /// Mainnet, or this faucet switched off: 403.
    #[error("Faucet is not available")]
    NotAvailable,
    /// A client mistake the incumbent answers with 400 (a body for the STX faucet, `large` with
    /// `xlarge`).
    #[error("{0}")]
    BadRequest(String),
    /// An invalid parameter value: the spec's invalid-input error (500).
    #[error("invalid value for parameter `{param}`: {reason}")]
    InvalidParam { param: &'static str, reason: String },
    /// Over the rate limit: 429 with `Retry-After` (seconds).
    #[error("Too many requests")]
    TooManyRequests { retry_after_secs: u64 },
    /// Node, bitcoind or database unreachable, or no faucet key: 503.
    #[error("faucet temporarily unavailable: {0}")]
    Unavailable(String),
    /// Every faucet key out of funds (or no spendable UTXO): 503.
    #[error("faucet out of funds: {0}")]
    OutOfFunds(String),
    /// Anything else (a refused broadcast, a bitcoind error, unconfigured BTC faucet): 500.
    #[error("faucet request failed: {0}")]
    Failed(String),
}

impl From<ReadError> for FaucetError {
    fn from(e: ReadError) -> Self {
        match &e {
            // The database cannot be reached: the incumbent's "PG connection error" case.
            ReadError::Unavailable(source) => FaucetError::Unavailable(source.to_string()),
            ReadError::Failed(source) => FaucetError::Failed(source.to_string()),
        }
    }
}

#[derive(serde::Serialize)]
struct Body<'a> {
    error: &'a str,
    success: bool,
}

impl FaucetError {
    pub fn status(&self) -> StatusCode {
        match self {
            FaucetError::NotAvailable => StatusCode::FORBIDDEN,
            FaucetError::BadRequest(_) => StatusCode::BAD_REQUEST,
            FaucetError::InvalidParam { .. } | FaucetError::Failed(_) => StatusCode::INTERNAL_SERVER_ERROR,
            FaucetError::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            FaucetError::Unavailable(_) | FaucetError::OutOfFunds(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    pub fn into_response(self) -> Response {
        let error = match &self {
            FaucetError::InvalidParam { param, reason } => {
                return ApiError::invalid(param, reason.clone()).into_response()
            }
            FaucetError::NotAvailable => NOT_AVAILABLE,
            FaucetError::BadRequest(message) => message.as_str(),
            FaucetError::TooManyRequests { .. } => TOO_MANY_REQUESTS,
            FaucetError::Unavailable(_) => TEMPORARILY_UNAVAILABLE,
            FaucetError::OutOfFunds(_) => OUT_OF_FUNDS,
            FaucetError::Failed(_) => REQUEST_FAILED,
        };
        // The cause stays in the log; the client gets the incumbent's text.
        match self.status() {
            s if s.is_server_error() => tracing::warn!(error = %self, "faucet request failed"),
            _ => tracing::debug!(error = %self, "faucet request refused"),
        }
        let reply =
            warp::reply::with_status(warp::reply::json(&Body { error, success: false }), self.status());
        let mut res = with_common_headers(reply);
        if let FaucetError::TooManyRequests { retry_after_secs } = self {
            res.headers_mut().insert(RETRY_AFTER, HeaderValue::from(retry_after_secs));
        }
        res
    }
}
