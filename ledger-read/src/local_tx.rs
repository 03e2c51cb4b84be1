//! The one write the API surfaces make: a transaction we (not the node) put into the node's
//! mempool, recorded in ours. Rosetta `/construction/submit`, the `/v2/transactions` broadcast
//! hook and the faucet record through it; the store implements it (`Store::record_local_tx`).

use std::future::Future;
use std::pin::Pin;

use thiserror::Error;

/// Who put the transaction into the mempool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalSource {
    /// Rosetta `/construction/submit`.
    RosettaSubmit,
    /// A `/v2/transactions` broadcast through the node proxy.
    V2Broadcast,
    /// The STX faucet's transfer.
    Faucet,
}

impl LocalSource {
    pub fn as_str(self) -> &'static str {
        match self {
            LocalSource::RosettaSubmit => "rosetta_submit",
            LocalSource::V2Broadcast => "v2_broadcast",
            LocalSource::Faucet => "faucet",
        }
    }
}

/// What recording a local transaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalTxOutcome {
    /// The transaction entered the mempool now (and was announced).
    Added { tx_id: String },
    /// It was there already (the node's own event came first, or an earlier submission):
    /// nothing was written.
    Known { tx_id: String },
}

/// Why a local transaction was not recorded.
#[derive(Debug, Error)]
pub enum LocalTxError {
    /// Not a transaction we can record: nothing was written.
    #[error("not a recordable transaction: {0}")]
    Invalid(String),
    /// The store failed (everything rolled back); shown as the store's own error.
    #[error("{0}")]
    Store(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// What recording returns.
pub type RecordFuture<'a> = Pin<Box<dyn Future<Output = Result<LocalTxOutcome, LocalTxError>> + Send + 'a>>;

/// Where the surfaces record the transactions they put into the node's mempool.
pub trait LocalTxSink: Send + Sync {
    /// Records `raw_tx` (consensus bytes), which `source` put into the node's mempool, in ours.
    /// Idempotent: a transaction already in the mempool (or mined) is left as it is.
    fn record<'a>(&'a self, raw_tx: &'a [u8], source: LocalSource) -> RecordFuture<'a>;
}
