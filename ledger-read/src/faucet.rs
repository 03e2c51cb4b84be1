//! The faucets' bookkeeping, which the store keeps so that it survives restarts and holds
//! across API processes: the rate-limit records of the requests served, and the faucet key's
//! next possible nonce. The transfer a faucet sends enters our mempool through
//! [`crate::LocalTxSink`], as every local submission does.

use std::future::Future;
use std::pin::Pin;

use crate::ReadError;

/// One request to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaucetRequest {
    /// The address funded, as given.
    pub address: String,
    /// `stx` or `btc`.
    pub currency: &'static str,
    /// `regular`, `stacking`, `large`, `xlarge`: each has its own budget.
    pub kind: &'static str,
    /// The client: the first `X-Forwarded-For` entry, else the socket's address.
    pub ip: String,
    /// Unix milliseconds.
    pub occurred_at: i64,
}

/// At most `max` requests per `window_ms` for one (address, currency, kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub max: u32,
    pub window_ms: i64,
}

/// What [`FaucetBook::reserve`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reservation {
    /// Recorded, with this id (for [`FaucetBook::release`]).
    Granted(i64),
    /// Over the limit: nothing recorded; a slot frees in `retry_after_ms`.
    Limited { retry_after_ms: i64 },
}

/// What a faucet book call returns.
pub type BookFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, ReadError>> + Send + 'a>>;

/// Where the faucets keep their requests and read their key's nonce.
pub trait FaucetBook: Send + Sync {
    /// Records `req` unless `limit` (when given) is reached. Concurrent callers, in this
    /// process or another on the same database, cannot both take the last free slot.
    fn reserve<'a>(&'a self, req: &'a FaucetRequest, limit: Option<RateLimit>)
        -> BookFuture<'a, Reservation>;

    /// Forgets a reservation whose request sent nothing, so it does not count against the limit.
    fn release(&self, id: i64) -> BookFuture<'_, ()>;

    /// One past the highest nonce `account` used, as origin or sponsor, in a canonical
    /// transaction or a pending mempool one (0 if none): the incumbent's `possible_next_nonce`.
    fn possible_next_nonce<'a>(&'a self, account: &'a str) -> BookFuture<'a, i64>;
}
