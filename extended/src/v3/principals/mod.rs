//! `/extended/v3/principals/{p}/…` (staking aside): a principal's
//! transactions with its involvement and STX balance changes, its balance changes per
//! transaction and asset, its STX, FT and NFT balances, its nonces and its pending mempool
//! transactions. Balance changes are the principal's operations as the store folds them
//! ([`PrincipalsReader`]); here they are only paged with the incumbent's cursors and rendered.

mod balances;
mod changes;
mod mempool;
use ledger_read::principals as reader;
mod txs;

use std::sync::Arc;

use warp::path::FullPath;
use warp::reply::Response;
use warp::{Filter, Rejection, Reply};

pub use reader::*;

use crate::error::ApiError;
use crate::handler::{get, if_none_match, reply, with_reader, Get};
use crate::params::{query, Query};
use crate::ExtendedReader;

/// Every route of the family.
pub(crate) fn routes<R: ExtendedReader>(
    reader: Arc<R>,
) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    let r = with_reader(reader.clone());
    let inm = if_none_match();
    let one = warp::get()
        .and(warp::path!("extended" / "v3" / "principals" / String / String))
        .and(get(reader.clone()))
        .and_then(|p: String, what: String, Get { reader: r, query: q, inm }: Get<R>| async move {
            let inm = inm.as_deref();
            let res = match what.as_str() {
                "transactions" => txs::transactions(&*r, &p, &q, inm).await,
                "balance-changes" => changes::by_tx_ids(&*r, &p, &q, inm).await,
                "nonces" => balances::nonces(&*r, &p, inm).await,
                _ => return Err(warp::reject::not_found()),
            };
            reply(res)
        });
    let two =
        warp::get()
            .and(warp::path!("extended" / "v3" / "principals" / String / String / String))
            .and(warp::path::full())
            .and(query())
            .and(inm)
            .and(r.clone())
            .and_then(
                |p: String,
                 a: String,
                 b: String,
                 full: FullPath,
                 q: Query,
                 inm: Option<String>,
                 r: Arc<R>| async move {
                    let inm = inm.as_deref();
                    let res = match (a.as_str(), b.as_str()) {
                        ("balances", "stx") => balances::stx(&*r, &p, inm).await,
                        // `…/balances/ft/`: the single-token route with an empty asset.
                        ("balances", "ft") if full.as_str().ends_with('/') => {
                            balances::ft_one(&*r, &p, "", inm).await
                        }
                        ("balances", "ft") => balances::ft(&*r, &p, &q, inm).await,
                        ("balances", "nft") => balances::nft(&*r, &p, &q, inm).await,
                        ("mempool", "transactions") => mempool::transactions(&*r, &p, &q, inm).await,
                        _ => return Err(warp::reject::not_found()),
                    };
                    reply(res)
                },
            );
    let three = warp::get()
        .and(warp::path!("extended" / "v3" / "principals" / String / String / String / String))
        .and(get(reader.clone()))
        .and_then(|p: String, a: String, b: String, c: String, Get { reader: r, query: q, inm }: Get<R>| async move {
            let inm = inm.as_deref();
            let res = match (a.as_str(), c.as_str()) {
                ("transactions", "balance-changes") => changes::of_tx(&*r, &p, &b, &q, inm).await,
                ("balances", _) if b == "ft" => balances::ft_one(&*r, &p, &c, inm).await,
                _ => return Err(warp::reject::not_found()),
            };
            reply(res)
        });
    one.or(two).unify().or(three).unify()
}

/// A JSON answer (the common headers are added where the routes are mounted).
pub(crate) fn json<T: serde::Serialize>(body: &T) -> Result<Response, ApiError> {
    Ok(crate::reply::json_with_etag(body, None))
}
