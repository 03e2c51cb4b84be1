//! The principal's transaction lists: `/extended/v1/address/{p}/transactions`.

use serde_json::Value;
use warp::reply::Response;

use super::balances::{height_of, tip_etag};
use super::{block_ref, cached_json, principal, AddressReader, UntilBlock};
use crate::error::ApiError;
use crate::params::{LimitRule, Page, Query};
use crate::reply::deprecated;
use crate::tx::{mined_tx_json, RenderOptions};

const ADDRESS_TXS: LimitRule = LimitRule::new(20, 50);

/// The block bound of a list: `height` wins over `until_block`, as with the incumbent.
fn bound(q: &Query) -> Result<Option<UntilBlock>, ApiError> {
    if q.get("height").is_some() {
        return Ok(q.u64("height")?.map(UntilBlock::Height));
    }
    q.get("until_block").map(|b| block_ref(b, "until_block")).transpose()
}

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
    let opts = RenderOptions { exclude_function_args: q.bool("exclude_function_args")?.unwrap_or(false) };
    let height = height_of(r, bound(q)?).await?;
    let (total, txs) = r.address_txs(&p, height, paging).await?;
    let results = txs.iter().map(|t| mined_tx_json(t, None, opts)).collect::<Result<Vec<_>, _>>()?;
    let body = serde_json::to_value(Page::new(paging, total, results)).unwrap_or(Value::Null);
    Ok(deprecated(cached_json(&body, tip_etag(r).await?, inm.as_deref())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn height_wins_over_until_block() {
        let q = Query::parse(&format!("height=3&until_block=0x{}", "ab".repeat(32)));
        assert_eq!(bound(&q).unwrap(), Some(UntilBlock::Height(3)));
        assert!(bound(&Query::parse("until_block=nope")).is_err());
        assert!(bound(&Query::parse("height=-1")).is_err());
        assert_eq!(bound(&Query::parse("")).unwrap(), None);
    }
}
