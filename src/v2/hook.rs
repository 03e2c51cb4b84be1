//! The proxy's broadcast hook over the store: a transaction the node accepted is in our mempool
//! before the client has its answer; a `call-read` with invalid input is refused before it
//! reaches the node.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use stacks_node_proxy::{BroadcastHook, BroadcastedTx, SOURCE_HEADER};
use warp::http::HeaderValue;
use warp::reply::Response;

use crate::store::{LocalSource, Store};

pub struct LedgerHook {
    store: Arc<Store>,
}

impl LedgerHook {
    pub fn new(store: Arc<Store>) -> Self {
        LedgerHook { store }
    }
}

impl BroadcastHook for LedgerHook {
    fn on_broadcast(&self, tx: BroadcastedTx) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            // The node has accepted the transaction: a failure here is only ours to log, and
            // the node's own `/new_mempool_tx` event will bring the transaction anyway.
            match self.store.record_local_tx(&tx.raw_tx, LocalSource::V2Broadcast).await {
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
