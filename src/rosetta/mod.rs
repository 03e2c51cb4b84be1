//! The Rosetta Data API v1.4.6 (plus the 1.4.7 indexer endpoints) under `/rosetta/v1`.
//!
//! Every request goes through [`routes`]: one POST filter that reads the body, dispatches on the
//! path and turns any [`RosettaError`] into HTTP 500 with the Rosetta `Error` body. Anything else
//! under `/rosetta` (unknown endpoint, another method) is a Rosetta error too, so no Rosetta URL
//! ever reaches the `/extended` 404 fallback. The Data API reads through the ledger read
//! interface ([`LedgerReader`], crate `ledger-read`) and never names the store: handlers translate
//! its rows into the `rosetta-spec` models and nothing else (the store implements the reader in
//! `ledger-core/src/store/rosetta.rs`; `tests/rosetta_fake_reader.rs` serves an in-memory one). Only the
//! Construction API's online context (`construction::routes`) holds the store, to submit.

pub mod account;
pub mod block;
pub mod block_view;
pub mod call;
pub mod construction;
pub mod error;
pub mod indexer;
pub mod mempool;
pub mod network;
pub mod offline;
pub mod ops;
pub mod request;
pub mod stacking;

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use serde::Serialize;
use warp::http::Method;
use warp::reply::Response;
use warp::{Filter, Rejection, Reply};

pub use error::{ErrorKind, RosettaError};

use crate::ledger::Network;
use crate::v2::NodeTipCache;
use ledger_read::LedgerReader;
use stacks_node_proxy::ProxyConfig;

/// Largest request body accepted (a construction request carries at most one transaction).
pub const BODY_LIMIT: u64 = 4 * 1024 * 1024;

/// What every Rosetta handler needs.
pub struct Rosetta {
    /// The ledger (the store in the server).
    pub reader: Arc<dyn LedgerReader>,
    /// The only network served; requests naming another are refused with 610.
    pub network: Network,
    /// The node's tip (the `/v2` node, its `/v2/info` cached briefly), for `sync_status`; none:
    /// report what ingestion has seen.
    pub node_tip: Option<Arc<NodeTipCache>>,
}

impl Rosetta {
    pub fn new(reader: Arc<dyn LedgerReader>, network: Network) -> Self {
        Self { reader, network, node_tip: None }
    }

    /// `sync_status` against this node (the one `/v2` is configured with).
    pub fn with_node(mut self, node: Arc<ProxyConfig>) -> Self {
        self.node_tip = Some(Arc::new(NodeTipCache::new(node)));
        self
    }
}

/// What a handler returns.
pub type RosettaResult<T> = Result<T, RosettaError>;

/// Every `/rosetta` route. Requests outside `/rosetta` are rejected (not found) for the next API.
pub fn routes(ctx: Arc<Rosetta>) -> impl Filter<Extract = (Response,), Error = Rejection> + Clone {
    warp::path("rosetta")
        .and(warp::path::tail())
        .and(warp::method())
        .and(
            warp::body::content_length_limit(BODY_LIMIT)
                .and(warp::body::bytes())
                .or_else(|_| async { Ok::<_, Infallible>((Bytes::from_static(b"\x00too large"),)) }),
        )
        .and(warp::any().map(move || Arc::clone(&ctx)))
        .then(|tail: warp::path::Tail, method: Method, body: Bytes, ctx: Arc<Rosetta>| async move {
            let res = if method != Method::POST {
                Err(RosettaError::with_message(ErrorKind::UnknownEndpoint, format!("{method} is not served")))
            } else {
                dispatch(&ctx, tail.as_str(), &body).await
            };
            stacks_extended::with_common_headers(match res {
                Ok(res) => res,
                Err(e) => e.into_response(),
            })
        })
}

/// Routes one POST by its path under `/rosetta`.
async fn dispatch(ctx: &Rosetta, path: &str, body: &Bytes) -> RosettaResult<Response> {
    if body.as_ref() == b"\x00too large" {
        return Err(RosettaError::with_message(
            ErrorKind::MalformedRequest,
            format!("request body over {BODY_LIMIT} bytes"),
        ));
    }
    let path = path.trim_end_matches('/');
    let Some(endpoint) = path.strip_prefix("v1/") else {
        return Err(unknown(path));
    };
    match endpoint {
        "network/list" => json(network::list(ctx, body)),
        "network/options" => json(network::options(ctx, body)),
        "network/status" => json(network::status(ctx, body).await),
        "block" => block::block_json(ctx, body).await.map(json_bytes),
        "block/transaction" => json(block::transaction(ctx, body).await),
        "account/balance" => json(account::balance(ctx, body).await),
        "account/coins" => json(account::coins(ctx, body)),
        "mempool" => json(mempool::list(ctx, body).await),
        "mempool/transaction" => json(mempool::transaction(ctx, body).await),
        "call" => json(call::call(ctx, body)),
        "events/blocks" => json(indexer::events_blocks(ctx, body).await),
        "search/transactions" => json(indexer::search_transactions(ctx, body).await),
        _ => Err(unknown(path)),
    }
}

fn unknown(path: &str) -> RosettaError {
    RosettaError::with_message(ErrorKind::UnknownEndpoint, format!("POST /rosetta/{path}"))
}

/// A successful answer already serialized: HTTP 200, `application/json` as [`json`] sends it.
fn json_bytes(body: Vec<u8>) -> Response {
    let mut res = Response::new(body.into());
    res.headers_mut()
        .insert(warp::http::header::CONTENT_TYPE, warp::http::HeaderValue::from_static("application/json"));
    res
}

/// A successful answer: HTTP 200 with the model as JSON.
fn json<T: Serialize>(res: RosettaResult<T>) -> RosettaResult<Response> {
    res.map(|body| warp::reply::json(&body).into_response())
}
