//! `GET /extended/v3/principals/{p}/mempool/transactions`: the pending transactions involving
//! the principal (sender, token transfer recipient, deployed or called contract), newest receipt
//! first, cursor `receipt_time:tx_id`; the v3 mempool list's pager and renderer, scoped.

use warp::reply::Response;

use super::json;
use crate::error::ApiError;
use crate::params::Query;
use crate::v3::cursor;
use crate::v3::etag::{self, Kind};
use crate::v3::page;
use crate::v3::params;
use crate::v3::tx::{mempool_page, MempoolScope};
use crate::ExtendedReader;

pub(super) async fn transactions<R: ExtendedReader>(
    r: &R,
    raw: &str,
    q: &Query,
    inm: Option<&str>,
) -> Result<Response, ApiError> {
    let principal = params::principal(raw)?;
    let limit = page::limit(q, page::TX)?;
    let from = cursor::read(q, cursor::MEMPOOL)?;
    // The incumbent's `handlePrincipalMempoolCache`: the principal's last confirmed and pending
    // activity.
    let tag = etag::value(r, Kind::PrincipalMempool(&principal)).await?;
    etag::cached(tag, inm, async {
        json(&mempool_page(r, MempoolScope::Principal(&principal), limit, from).await?)
    })
    .await
}
