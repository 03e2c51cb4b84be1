//! The ETag kinds of the incumbent's cache controller as the v3 routes use them, and the one
//! helper that applies one: after the parameters are validated (the incumbent computes the ETag
//! in a pre-handler, after validation), `If-None-Match` naming it is a 304 before any other work;
//! otherwise the answer carries it with revalidation caching. No ETag (nothing found, no chain
//! yet) leaves the answer uncached, as the incumbent's empty ETag does.

use std::future::Future;

use warp::reply::Response;

use crate::address::principal_etag;
use crate::chain::{BlockRef, ChainReader};
use crate::error::ApiError;
use crate::reader::TipReader;
use crate::reply::{etag_matches, not_modified, with_cache, MUST_REVALIDATE};
use crate::status::chain_tip_etag;
use crate::tx::{tx_etag, TxReader};
use crate::v3::params::HeightOrHash;
use crate::AddressReader;

/// Which state an answer depends on (the incumbent's `ETagType`, minus `mempool`, which the
/// mempool routes compute from their own reads).
#[derive(Debug, Clone, Copy)]
pub enum Kind<'a> {
    /// The chain tip: its microblock hash, else its index block hash.
    Tip,
    /// One transaction's status: `sha256(tx_id:index_block_hash:microblock_hash:status)`.
    Transaction(&'a str),
    /// One block: `index_block_hash:canonical` (a hash names an index block hash).
    Block(&'a HeightOrHash),
    /// A principal's confirmed activity: `sha256(last_tx:last_mempool_tx:pox_state)` without
    /// the mempool part.
    Principal(&'a str),
    /// The same with its mempool transactions.
    PrincipalMempool(&'a str),
}

/// The ETag value (unquoted) of `kind`, none when the incumbent's would be empty.
pub async fn value<R>(r: &R, kind: Kind<'_>) -> Result<Option<String>, ApiError>
where
    R: TipReader + TxReader + ChainReader + AddressReader,
{
    Ok(match kind {
        Kind::Tip => {
            let tip = TipReader::tip(r).await?;
            chain_tip_etag(tip.as_ref()).map(|e| e.trim_matches('"').to_string())
        }
        Kind::Transaction(tx_id) => r.tx(tx_id, true).await?.as_ref().and_then(tx_etag),
        Kind::Block(at) => {
            let by = match at {
                HeightOrHash::Latest => BlockRef::Latest,
                HeightOrHash::Hash(h) => BlockRef::AnyHash(h.clone()),
                HeightOrHash::Height(h) => BlockRef::Height(*h),
            };
            let block = r.block(by).await?;
            // The incumbent looks a hash up as an index block hash only.
            block
                .filter(|b| !matches!(at, HeightOrHash::Hash(h) if *h != b.index_block_hash))
                .map(|b| format!("{}:{}", b.index_block_hash, b.canonical))
        }
        Kind::Principal(p) => principal_etag(r, p, false).await?,
        Kind::PrincipalMempool(p) => principal_etag(r, p, true).await?,
    })
}

/// The 304 when `if_none_match` names `etag`, else `answer` with it (on success only: errors
/// keep their own headers).
pub async fn cached<F>(
    etag: Option<String>,
    if_none_match: Option<&str>,
    answer: F,
) -> Result<Response, ApiError>
where
    F: Future<Output = Result<Response, ApiError>>,
{
    if let Some(e) = &etag {
        if etag_matches(if_none_match, e) {
            return Ok(not_modified());
        }
    }
    let mut res = answer.await?;
    if let Some(e) = etag.filter(|_| res.status().is_success()) {
        if let Ok(v) = warp::http::HeaderValue::from_str(&format!("\"{e}\"")) {
            res.headers_mut().insert(warp::http::header::ETAG, v);
            res = with_cache(res, MUST_REVALIDATE);
        }
    }
    Ok(res)
}
