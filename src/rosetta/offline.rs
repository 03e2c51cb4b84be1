//! `/rosetta` in offline mode (`serve --mode offline`): no store and no node. `/network/list`
//! and `/network/options` answer (rosetta-cli asks them of an offline server); every other Data
//! API endpoint is the listed 646 "not available in offline mode". The construction routes are
//! mounted ahead of this with an offline [`super::construction::Context`].

use std::convert::Infallible;

use bytes::Bytes;
use warp::http::Method;
use warp::reply::Response;
use warp::{Filter, Rejection, Reply};

use super::{json, network, unknown, ErrorKind, RosettaError, RosettaResult, BODY_LIMIT};
use crate::ledger::Network;

/// The Data API endpoints; offline they are all 646 (other paths stay 404's Rosetta twin, 404).
const ONLINE_ONLY: &[&str] = &[
    "network/status",
    "block",
    "block/transaction",
    "account/balance",
    "account/coins",
    "mempool",
    "mempool/transaction",
    "call",
    "events/blocks",
    "search/transactions",
];

pub fn routes(network: Network) -> impl Filter<Extract = (Response,), Error = Rejection> + Clone {
    warp::path("rosetta")
        .and(warp::path::tail())
        .and(warp::method())
        .and(
            warp::body::content_length_limit(BODY_LIMIT)
                .and(warp::body::bytes())
                .or_else(|_| async { Ok::<_, Infallible>((Bytes::new(),)) }),
        )
        .map(move |tail: warp::path::Tail, method: Method, body: Bytes| {
            let res = if method != Method::POST {
                Err(RosettaError::with_message(ErrorKind::UnknownEndpoint, format!("{method} is not served")))
            } else {
                dispatch(network, tail.as_str(), &body)
            };
            stacks_extended::with_common_headers(match res {
                Ok(res) => res,
                Err(e) => e.into_response(),
            })
        })
}

fn dispatch(network: Network, path: &str, body: &Bytes) -> RosettaResult<Response> {
    let path = path.trim_end_matches('/');
    match path.strip_prefix("v1/") {
        Some("network/list") => json(network::list_for(network, body)),
        Some("network/options") => json(network::options_for(network, body)),
        Some(endpoint) if ONLINE_ONLY.contains(&endpoint) || endpoint.starts_with("construction/") => {
            Err(RosettaError::with_message(ErrorKind::OfflineMode, format!("POST /rosetta/{path}")))
        }
        _ => Err(unknown(path)),
    }
}
