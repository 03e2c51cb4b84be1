//! Testnet faucets: STX (regular and stacking) and BTC (regtest), with per-address rate limits
//! kept in the store so they survive restarts and hold across API processes.
//!
//! * [`config`]: the incumbent's environment variables.
//! * [`stx`]: token transfers built and signed with our codec, broadcast through the node.
//! * [`btc`]: payments through bitcoind's JSON-RPC.
//! * [`routes`]: the HTTP side (`/extended/v1/faucets/...`), translating to JSON only.

pub mod btc;
pub mod btc_address;
pub mod config;
mod error;
pub mod node;
mod routes;
pub mod stx;

use std::future::Future;
use std::sync::Arc;

pub use config::{FaucetConfig, FaucetConfigError};
pub use error::FaucetError;
pub use routes::{routes, ClientAddr};

use ledger_read::{FaucetBook, FaucetRequest, LocalTxSink, RateLimit, Reservation};

use crate::ledger::Network;
use btc::{BtcFaucet, BtcSent};
use node::Node;
use stx::{StxFaucet, StxSent};

/// The seed's limits, per address funded.
pub const STX_LIMIT: RateLimit = RateLimit { max: 5, window_ms: 5 * 60 * 1000 };
pub const STX_STACKING_LIMIT: RateLimit = RateLimit { max: 1, window_ms: 2 * 24 * 60 * 60 * 1000 };
pub const BTC_LIMIT: RateLimit = RateLimit { max: 5, window_ms: 5 * 60 * 1000 };

/// Unix milliseconds; replaceable so tests can step past a window without waiting.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// Everything the faucet routes need.
pub struct Faucets {
    /// Nonces and the faucet's own request rows (rate limits).
    book: Arc<dyn FaucetBook>,
    /// Where a sent STX transfer is recorded in our mempool: the one write path of the
    /// transactions we put into the node's mempool (`ledger_read::LocalTxSink`).
    local_txs: Arc<dyn LocalTxSink>,
    network: Network,
    stx_enabled: bool,
    btc_enabled: bool,
    rate_limit_enabled: bool,
    node: Node,
    stx: StxFaucet,
    btc: BtcFaucet,
    clock: Clock,
}

/// One request: who asked, for which address.
pub struct Requester {
    /// First `X-Forwarded-For` entry, else the socket address.
    pub ip: String,
}

impl Faucets {
    /// The faucets on `network`, keeping their requests in `book` and recording the transfers
    /// they send through `local_txs` (both the store itself when served). Fails only on an
    /// unusable key.
    pub fn new(
        book: Arc<dyn FaucetBook>,
        local_txs: Arc<dyn LocalTxSink>,
        network: Network,
        config: FaucetConfig,
    ) -> Result<Faucets, FaucetError> {
        let http = reqwest::Client::new();
        Ok(Faucets {
            network,
            book,
            local_txs,
            stx_enabled: config.stx_enabled,
            btc_enabled: config.btc_enabled,
            rate_limit_enabled: config.rate_limit_enabled,
            node: Node::new(http.clone(), config.node_url.as_deref()),
            stx: StxFaucet::new(config.stx_keys, config.stx_fallback_fee)?,
            btc: BtcFaucet::new(http, config.btc_rpc, config.btc_key)?,
            clock: Arc::new(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_millis() as i64)
                    .unwrap_or(0)
            }),
        })
    }

    /// Replaces the clock (tests).
    pub fn with_clock(mut self, clock: Clock) -> Faucets {
        self.clock = clock;
        self
    }

    /// The BTC faucet's address, when configured.
    pub fn btc_address(&self) -> Option<&str> {
        self.btc.address()
    }

    /// 403 unless on testnet with this faucet switched on.
    fn available(&self, enabled: bool) -> Result<(), FaucetError> {
        if self.network.is_mainnet() || !enabled {
            return Err(FaucetError::NotAvailable);
        }
        Ok(())
    }

    pub async fn send_stx(
        &self,
        who: &Requester,
        address: &str,
        stacking: bool,
    ) -> Result<StxSent, FaucetError> {
        counted("stx", self.try_send_stx(who, address, stacking).await)
    }

    async fn try_send_stx(
        &self,
        who: &Requester,
        address: &str,
        stacking: bool,
    ) -> Result<StxSent, FaucetError> {
        self.available(self.stx_enabled)?;
        let recipient = parse_stx_address(address)?;
        let (kind, limit) = if stacking { ("stacking", STX_STACKING_LIMIT) } else { ("regular", STX_LIMIT) };
        let req = self.request(recipient.to_string(), "stx", kind, who);
        let send =
            self.stx.send(self.book.as_ref(), self.local_txs.as_ref(), &self.node, recipient, stacking);
        self.limited(req, limit, send).await
    }

    pub async fn send_btc(&self, who: &Requester, address: &str, sats: u64) -> Result<BtcSent, FaucetError> {
        counted("btc", self.try_send_btc(who, address, sats).await)
    }

    async fn try_send_btc(&self, who: &Requester, address: &str, sats: u64) -> Result<BtcSent, FaucetError> {
        self.available(self.btc_enabled)?;
        validate_btc_address(address)?;
        // One budget per address, whatever the size (as the incumbent).
        let req = self.request(address.to_owned(), "btc", "regular", who);
        self.limited(req, BTC_LIMIT, self.btc.send(address, sats)).await
    }

    pub async fn btc_balance(&self, address: &str) -> Result<f64, FaucetError> {
        self.available(self.btc_enabled)?;
        validate_btc_address(address)?;
        self.btc.balance(address).await
    }

    /// Checks the network switch only (the parameter-independent part of every faucet route).
    pub fn check_stx_available(&self) -> Result<(), FaucetError> {
        self.available(self.stx_enabled)
    }

    fn request(
        &self,
        address: String,
        currency: &'static str,
        kind: &'static str,
        who: &Requester,
    ) -> FaucetRequest {
        FaucetRequest { address, currency, kind, ip: who.ip.clone(), occurred_at: (self.clock)() }
    }

    /// Reserves a use of the limit, runs `send`, and gives the use back when `send` failed
    /// (nothing was sent). Requests are recorded even with the limits off, as the incumbent does.
    async fn limited<T>(
        &self,
        req: FaucetRequest,
        limit: RateLimit,
        send: impl Future<Output = Result<T, FaucetError>>,
    ) -> Result<T, FaucetError> {
        let limit = self.rate_limit_enabled.then_some(limit);
        match self.book.reserve(&req, limit).await? {
            Reservation::Limited { retry_after_ms } => Err(FaucetError::TooManyRequests {
                retry_after_secs: (retry_after_ms.max(1) as u64).div_ceil(1000),
            }),
            Reservation::Granted(id) => match send.await {
                Ok(sent) => Ok(sent),
                Err(e) => {
                    if let Err(release) = self.book.release(id).await {
                        tracing::error!(error = %release, id, "cannot release a faucet request that sent nothing");
                    }
                    Err(e)
                }
            },
        }
    }
}

/// Counts a faucet request by its outcome (the metrics).
fn counted<T>(currency: &'static str, result: Result<T, FaucetError>) -> Result<T, FaucetError> {
    let outcome = match &result {
        Ok(_) => "sent",
        Err(FaucetError::NotAvailable) => "not_available",
        Err(FaucetError::BadRequest(_) | FaucetError::InvalidParam { .. }) => "invalid",
        Err(FaucetError::TooManyRequests { .. }) => "rate_limited",
        Err(FaucetError::Unavailable(_)) => "unavailable",
        Err(FaucetError::OutOfFunds(_)) => "out_of_funds",
        Err(FaucetError::Failed(_)) => "failed",
    };
    crate::metrics::faucet_request(currency, outcome);
    result
}

/// A testnet Stacks principal (standard or contract).
fn parse_stx_address(address: &str) -> Result<stacks_codec::address::Principal, FaucetError> {
    let invalid = |reason: String| FaucetError::InvalidParam { param: "address", reason };
    let principal: stacks_codec::address::Principal =
        address.parse().map_err(|e: stacks_codec::CodecError| invalid(format!("`{address}`: {e}")))?;
    if !principal.address().is_testnet() {
        return Err(invalid(format!("`{address}` is not a testnet address")));
    }
    Ok(principal)
}

fn validate_btc_address(address: &str) -> Result<(), FaucetError> {
    btc_address::validate_regtest(address).map_err(|reason| FaucetError::InvalidParam {
        param: "address",
        reason: format!("`{address}` is not a valid BTC regtest address: {reason}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stx_addresses_must_be_testnet_and_well_formed() {
        assert!(parse_stx_address("ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM").is_ok());
        assert!(parse_stx_address("ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM.contract").is_ok());
        for bad in
            ["SP000000000000000000002Q6VF78", "ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGN", "INVALID", ""]
        {
            let e = parse_stx_address(bad).unwrap_err();
            assert!(matches!(e, FaucetError::InvalidParam { param: "address", .. }), "{bad}: {e}");
        }
    }
}
