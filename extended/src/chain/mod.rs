//! The chain family of `/extended`: v1 `/block`, v2 `/blocks`, `/burn-blocks`, `/block-tenures`,
//! v1 `/burnchain`, `/stx_supply` and `/info/network_block_time(s)`.
//!
//! One filter per request parses the path itself: the incumbent answers malformed segments
//! (`/block-tenures//blocks`, `/by_height/-1`) with a validation error, which warp's typed
//! path params would turn into an unknown route.

pub(crate) mod blocks;
pub(crate) mod burn;
use ledger_read::chain as reader;
mod render;
mod supply;

/// The v1 `Block` renderer, for the live updates' `block` notifications.
pub use render::block_v1;

pub use reader::{
    BlockContents, BlockRecord, BlockRef, BlocksPage, BurnBlockRecord, BurnPoxTx, BurnRef, BurnchainReward,
    ChainReader, PoxTxsOf, RewardSlotHolder, SupplyRecord, TxIds,
};

use std::sync::Arc;

use warp::http::header::ETAG;
use warp::http::{HeaderValue, StatusCode};
use warp::path::FullPath;
use warp::reply::Response;
use warp::{Filter, Rejection, Reply};

use crate::error::{ApiError, In, Rule};
use crate::headers::with_common_headers;
use crate::params::{non_negative, query, Query};
use crate::reader::TipReader;
use crate::status::{chain_tip_etag, with_cache};
use crate::tx::TxReader;

const REVALIDATE: &str = "public, no-cache, must-revalidate";

/// One request as the handlers see it.
pub(crate) struct Req {
    /// Path segments after `/extended`, without a trailing empty one.
    pub segs: Vec<String>,
    pub query: Query,
    pub raw_query: String,
    pub if_none_match: Option<String>,
}

pub fn routes<R: TipReader + ChainReader + TxReader>(
    reader: Arc<R>,
) -> impl Filter<Extract = (Response,), Error = Rejection> + Clone {
    warp::get()
        .and(warp::path("extended"))
        .and(warp::path::full())
        .and(query())
        .and(warp::query::raw().or(warp::any().map(String::new)).unify())
        .and(warp::header::optional::<String>("if-none-match"))
        .and_then(move |path: FullPath, query: Query, raw_query: String, inm: Option<String>| {
            let reader = reader.clone();
            async move {
                let mut segs: Vec<String> = path.as_str().split('/').skip(2).map(String::from).collect();
                if segs.len() > 1 && segs.last().is_some_and(String::is_empty) {
                    segs.pop();
                }
                let req = Req { segs, query, raw_query, if_none_match: inm };
                match dispatch(&*reader, &req).await {
                    Some(Ok(res)) => Ok(res),
                    Some(Err(e)) => Err(warp::reject::custom(e)),
                    None => Err(warp::reject::not_found()),
                }
            }
        })
}

async fn dispatch<R: TipReader + ChainReader + TxReader>(
    r: &R,
    req: &Req,
) -> Option<Result<Response, ApiError>> {
    let s: Vec<&str> = req.segs.iter().map(String::as_str).collect();
    Some(match s.as_slice() {
        ["v1", "block", ..] => blocks::v1(r, req, &s[2..]).await?,
        ["v2", "blocks", ..] => blocks::v2(r, req, &s[2..]).await?,
        ["v2", "block-tenures", tenure, "blocks"] => blocks::tenure_blocks(r, req, tenure).await,
        ["v2", "burn-blocks", ..] => burn::burn_blocks(r, req, &s[2..]).await?,
        ["v2", "addresses", address, "pox-transactions"] => burn::address_pox_txs(r, req, address).await,
        ["v1", "burnchain", ..] => burn::burnchain(r, req, &s[2..]).await?,
        ["v1", "stx_supply", ..] => supply::stx_supply(r, req, &s[2..]).await?,
        ["v1", "info", ..] => supply::info(r, req, &s[2..]).await?,
        _ => return None,
    })
}

/// A JSON answer with the common headers.
pub(crate) fn json(value: &serde_json::Value) -> Response {
    with_common_headers(warp::reply::json(value))
}

fn not_modified() -> Response {
    with_cache(
        with_common_headers(warp::reply::with_status(warp::reply(), StatusCode::NOT_MODIFIED)),
        REVALIDATE,
    )
}

fn matches(inm: Option<&str>, etag: &str) -> bool {
    inm.is_some_and(|inm| inm.split(',').any(|v| v.trim() == etag))
}

fn with_etag(mut res: Response, etag: &str) -> Response {
    if let Ok(v) = HeaderValue::from_str(etag) {
        res.headers_mut().insert(ETAG, v);
        res = with_cache(res, REVALIDATE);
    }
    res
}

/// The incumbent's chain-tip cache: 304 when `If-None-Match` names the tip, else the answer
/// with the tip's ETag (only on success, as the incumbent).
pub(crate) async fn tip_cached<R, F>(r: &R, req: &Req, answer: F) -> Result<Response, ApiError>
where
    R: TipReader,
    F: std::future::Future<Output = Result<Response, ApiError>>,
{
    tip_cached_with(r, req, |_| answer).await
}

/// [`tip_cached`] for an answer that needs the chain tip too: the one tip read serves both.
pub(crate) async fn tip_cached_with<R, F, A>(r: &R, req: &Req, answer: A) -> Result<Response, ApiError>
where
    R: TipReader,
    A: FnOnce(Option<crate::reader::Tip>) -> F,
    F: std::future::Future<Output = Result<Response, ApiError>>,
{
    let tip = r.tip().await?;
    let etag = chain_tip_etag(tip.as_ref());
    if let Some(etag) = &etag {
        if matches(req.if_none_match.as_deref(), etag) {
            return Ok(not_modified());
        }
    }
    let res = answer(tip).await?;
    Ok(match etag {
        Some(etag) if res.status().is_success() => with_etag(res, &etag),
        _ => res,
    })
}

/// The incumbent's block cache: the ETag is `index_block_hash:canonical` of the block.
pub(crate) fn block_cached(req: &Req, block: &BlockRecord, answer: impl FnOnce() -> Response) -> Response {
    let etag = format!("\"{}:{}\"", block.index_block_hash, block.canonical);
    if matches(req.if_none_match.as_deref(), &etag) {
        return not_modified();
    }
    with_etag(answer(), &etag)
}

/// A redirect keeping the query string (the incumbent's 302 for `0x`-less ids).
pub(crate) fn redirect(req: &Req, path: String) -> Response {
    let location = if req.raw_query.is_empty() { path } else { format!("{path}?{}", req.raw_query) };
    let mut res = warp::reply::with_status(warp::reply(), StatusCode::FOUND).into_response();
    if let Ok(v) = HeaderValue::from_str(&location) {
        res.headers_mut().insert(warp::http::header::LOCATION, v);
    }
    with_common_headers(res)
}

/// A JSON number as JavaScript prints it: whole values without a fraction.
pub(crate) fn js_number(v: f64) -> serde_json::Value {
    if v.fract() == 0.0 && v.abs() < 9e15 {
        serde_json::json!(v as i64)
    } else {
        serde_json::json!(v)
    }
}

/// A signed cursor offset bounded by ±`bound` (the incumbent's `CursorOffsetParam`).
pub(crate) fn cursor_offset(q: &Query, bound: i64) -> Result<i64, ApiError> {
    let Some(v) = q.get("offset") else { return Ok(0) };
    let n: i64 = v.trim().parse().map_err(|_| ApiError::schema(In::Query, "offset", Rule::Integer))?;
    if n > bound {
        return Err(ApiError::schema(In::Query, "offset", Rule::Max(bound.unsigned_abs())));
    }
    if n < -bound {
        return Err(ApiError::schema(In::Query, "offset", Rule::Min(-bound)));
    }
    Ok(n)
}

/// A non-negative integer path parameter.
pub(crate) fn int_param(name: &'static str, v: &str) -> Result<u64, ApiError> {
    non_negative(In::Path, name, v)
}

/// `0x` + 64 hex digits, or the same without `0x`: the normalized `0x` form.
pub(crate) fn hash_param(v: &str) -> Option<String> {
    let hex = v.strip_prefix("0x").unwrap_or(v);
    (hex.len() == 64 && hex.bytes().all(|c| c.is_ascii_hexdigit()))
        .then(|| format!("0x{}", hex.to_lowercase()))
}

#[cfg(test)]
mod tests;
