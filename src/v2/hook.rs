//! The proxy's broadcast hook over the one write path for local transactions
//! ([`LocalTxSink`], the store's `record_local_tx`): a transaction the node accepted is in our
//! mempool before the client has its answer; a `call-read` with invalid input is refused before it
//! reaches the node.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use ledger_read::{LocalSource, LocalTxSink};
use stacks_node_proxy::{BroadcastHook, BroadcastedTx, SOURCE_HEADER};
use warp::http::HeaderValue;
use warp::reply::Response;

pub struct LedgerHook {
    local_txs: Arc<dyn LocalTxSink>,
}

impl LedgerHook {
    pub fn new(local_txs: Arc<dyn LocalTxSink>) -> Self {
        LedgerHook { local_txs }
    }
}

impl BroadcastHook for LedgerHook {
    fn on_broadcast(&self, tx: BroadcastedTx) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            // The node has accepted the transaction: a failure here is only ours to log, and
            // the node's own `/new_mempool_tx` event will bring the transaction anyway.
            match self.local_txs.record(&tx.raw_tx, LocalSource::V2Broadcast).await {
                Ok(outcome) => {
                    tracing::debug!(txid = ?tx.txid, ?outcome, "broadcast recorded in the mempool")
                }
                Err(e) => {
                    tracing::warn!(txid = ?tx.txid, error = %e, "broadcast not recorded in the mempool")
                }
            }
        })
    }

    fn check_call_read(&self, path: &str, body: &Bytes) -> Option<Response> {
        let mut refusal = super::params::call_read_path(path, body).err()?.into_response();
        refusal.headers_mut().insert(SOURCE_HEADER, HeaderValue::from_static("ledger"));
        Some(refusal)
    }
}
