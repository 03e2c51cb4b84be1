//! The principal's transaction lists: `/extended/v1/address/{p}/transactions`.

use warp::reply::Response;

use super::balances::height_of;
use super::{block_ref, cached_json_text, principal, principal_etag, AddressReader, UntilBlock};
use crate::error::ApiError;
use crate::params::{LimitRule, Page, Query};
use crate::reply::{deprecated, page_text};
use crate::tx::mined_tx_text;

pub(crate) const ADDRESS_TXS: LimitRule = LimitRule::new(20, 50);

/// The block bound of a list and whether it names a single block, as the incumbent reads them:
/// `height` (that block only; 0 is no height) or `until_block` (up to that block), not both.
pub(super) fn bound(q: &Query) -> Result<(Option<UntilBlock>, bool), ApiError> {
    let until = q.get("until_block").map(|b| block_ref(b, "until_block")).transpose()?;
    match q.u64("height")?.filter(|h| *h != 0) {
        Some(_) if until.is_some() => {
            Err(ApiError::invalid("height", "can't handle until_block and block_height in the same request"))
        }
        Some(h) => Ok((Some(UntilBlock::Height(h)), true)),
        None => Ok((until, false)),
    }
}

/// The `(from, to)` heights of a list's block bound (`to` = `None`: the tip).
pub(super) async fn heights<R: AddressReader>(r: &R, q: &Query) -> Result<(u64, Option<u64>), ApiError> {
    let (at, single) = bound(q)?;
    let to = height_of(r, at).await?;
    Ok((if single { to.unwrap_or(0) } else { 0 }, to))
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
    let opts = crate::tx::render_options(q)?;
    let (from, to) = heights(r, q).await?;
    let (total, txs) = r.address_txs(&p, from, to, paging).await?;
    let results = txs.iter().map(|t| mined_tx_text(t, None, opts)).collect::<Result<Vec<_>, _>>()?;
    // The total as `Page::first_row_total` reads it: 0 on an empty page.
    let total = if results.is_empty() { 0 } else { total };
    let body = page_text(&Page::<String>::new(paging, total, vec![]), &results);
    Ok(deprecated(cached_json_text(body, principal_etag(r, &p, false).await?, inm.as_deref())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn height_and_until_block_are_read_as_the_incumbent_reads_them() {
        let q = Query::parse(&format!("height=3&until_block=0x{}", "ab".repeat(32)));
        let e = bound(&q).unwrap_err();
        assert!(e.to_string().contains("can't handle until_block and block_height"), "{e}");
        assert_eq!(bound(&Query::parse("height=3")).unwrap(), (Some(UntilBlock::Height(3)), true));
        // `height=0` is no height: the whole list (up to `until_block`, if any).
        assert_eq!(bound(&Query::parse("height=0")).unwrap(), (None, false));
        assert_eq!(
            bound(&Query::parse("height=0&until_block=3")).unwrap(),
            (Some(UntilBlock::Height(3)), false)
        );
        assert_eq!(bound(&Query::parse("until_block=3")).unwrap(), (Some(UntilBlock::Height(3)), false));
        assert!(bound(&Query::parse("until_block=nope")).is_err());
        assert!(bound(&Query::parse("height=-1")).is_err());
        assert_eq!(bound(&Query::parse("")).unwrap(), (None, false));
    }
}
