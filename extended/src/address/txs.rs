//! The principal's transaction lists: `/extended/v1/address/{p}/transactions`.

use warp::reply::Response;

use super::heights;
use super::{cached_json_text, principal, principal_etag, AddressReader};
use crate::error::ApiError;
use crate::params::{LimitRule, Page, Query};
use crate::reply::{deprecated, page_text};
use crate::tx::page_tx_text;

pub(crate) const ADDRESS_TXS: LimitRule = LimitRule::new(20, 50);

/// `GET /extended/v1/address/{principal}/transactions`: paged `Transaction`s, newest first.
pub(super) async fn v1_transactions<R: AddressReader>(
    r: &R,
    raw: &str,
    q: &Query,
    inm: Option<String>,
) -> Result<Response, ApiError> {
    let p = principal(raw, "principal")?;
    let paging = q.paging(ADDRESS_TXS)?;
    q.bool("unanchored")?;
    let opts = crate::tx::render_options(q)?;
    let (from, to) = heights(r, q).await?;
    let (total, txs) = r.address_txs_listed(&p, from, to, paging).await?;
    let results = txs.iter().map(|t| page_tx_text(t, opts)).collect::<Result<Vec<_>, _>>()?;
    // The total as `Page::first_row_total` reads it: 0 on an empty page.
    let total = if results.is_empty() { 0 } else { total };
    let body = page_text(&Page::<String>::new(paging, total, vec![]), &results);
    Ok(deprecated(cached_json_text(body, principal_etag(r, &p, false).await?, inm.as_deref())))
}
