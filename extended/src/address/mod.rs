//! `/extended/v1/address/*`, `/extended/v2/addresses/*` (balances, nonces) and
//! `/extended/v1/tokens/ft/{token}/holders`: the incumbent's principal-centred routes.

pub(crate) mod balances;
use ledger_read::address as reader;
pub(crate) mod transfers;
pub(crate) mod txs;

use std::sync::Arc;

use warp::http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG};
use warp::http::{HeaderValue, StatusCode};
use warp::reply::Response;
use warp::{Filter, Rejection, Reply};

pub use balances::stx_balance_json;
pub use reader::{
    AddressReader, AssetTotals, FtHolder, MempoolDelta, NonceState, PrincipalActivity, StxInbound, StxTotals,
    UntilBlock,
};

use crate::error::{ApiError, In, Rule};
use crate::handler::{get, if_none_match, reject, with_reader, Get};
use crate::headers::with_common_headers;
use crate::params::{query, Query};
use crate::reply::sha256_hex;
use crate::tx::TxReader;

pub fn routes<R: AddressReader + TxReader>(
    reader: Arc<R>,
) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    let r = with_reader(reader.clone());
    let inm = if_none_match();
    let v1 = warp::get()
        .and(warp::path!("extended" / "v1" / "address" / String / String))
        .and(get(reader.clone()));
    let v1 = v1.and_then(|p: String, what: String, Get { reader: r, query: q, inm }: Get<R>| async move {
        match what.as_str() {
            "stx" | "balances" | "nonces" => {
                balances::v1_route(&*r, &p, &what, &q, inm).await.map_err(reject)
            }
            "transactions" => txs::v1_transactions(&*r, &p, &q, inm).await.map_err(reject),
            "transactions_with_transfers" => {
                transfers::v1_transactions_with_transfers(&*r, &p, &q, inm).await.map_err(reject)
            }
            "assets" => transfers::v1_assets(&*r, &p, &q, inm).await.map_err(reject),
            "stx_inbound" => transfers::v1_stx_inbound(&*r, &p, &q, inm).await.map_err(reject),
            "mempool" => transfers::v1_mempool(&*r, &p, &q, inm).await.map_err(reject),
            _ => Err(warp::reject::not_found()),
        }
    });
    let v2 = warp::get()
        .and(warp::path!("extended" / "v2" / "addresses" / String / "balances" / String))
        .and(query())
        .and(inm)
        .and(r.clone())
        .and_then(|p: String, what: String, q, inm, r: Arc<R>| async move {
            match what.as_str() {
                "stx" | "ft" => balances::v2_route(&*r, &p, &what, &q, inm).await.map_err(reject),
                _ => Err(warp::reject::not_found()),
            }
        });
    let v2_token = warp::get()
        .and(warp::path!("extended" / "v2" / "addresses" / String / "balances" / "ft" / String))
        .and(inm)
        .and(r.clone())
        .and_then(|p: String, token: String, inm: Option<String>, r: Arc<R>| async move {
            balances::ft_balance(&*r, &p, &token, inm).await.map_err(reject)
        });
    let holders = warp::get()
        .and(warp::path!("extended" / "v1" / "tokens" / "ft" / String / "holders"))
        .and(get(reader.clone()))
        .and_then(|token: String, Get { reader: r, query: q, inm }: Get<R>| async move {
            balances::ft_holders(&*r, &token, &q, inm).await.map_err(reject)
        });
    let v1_tx = warp::get()
        .and(warp::path!("extended" / "v1" / "address" / String / String / "with_transfers"))
        .and(get(reader.clone()))
        .and_then(|p: String, tx: String, Get { reader: r, query: q, inm }: Get<R>| async move {
            transfers::v1_tx_with_transfers(&*r, &p, &tx, &q, inm).await.map_err(reject)
        });
    let v2_txs = warp::get()
        .and(warp::path!("extended" / "v2" / "addresses" / String / "transactions"))
        .and(get(reader.clone()))
        .and_then(|p: String, Get { reader: r, query: q, inm }: Get<R>| async move {
            transfers::v2_transactions(&*r, &p, &q, inm).await.map_err(reject)
        });
    let v2_events = warp::get()
        .and(warp::path!("extended" / "v2" / "addresses" / String / "transactions" / String / "events"))
        .and(get(reader.clone()))
        .and_then(|p: String, tx: String, Get { reader: r, query: q, inm }: Get<R>| async move {
            transfers::v2_tx_events(&*r, &p, &tx, &q, inm).await.map_err(reject)
        });
    v1.or(v2).or(v2_token).or(holders).or(v1_tx).or(v2_txs).or(v2_events)
}

/// A path principal as the incumbent's schema accepts it: a C32 address or a contract id.
pub(crate) fn principal(raw: &str, param: &'static str) -> Result<String, ApiError> {
    principal_in(raw, In::Path, param)
}

/// [`principal`] read from `place` (the incumbent's message names where it looked).
pub(crate) fn principal_in(raw: &str, place: In, param: &'static str) -> Result<String, ApiError> {
    const C32: &str = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let (addr, name) = match raw.split_once('.') {
        Some((a, n)) => (a, Some(n)),
        None => (raw, None),
    };
    let addr_ok = (28..=41).contains(&addr.len()) && addr.chars().all(|c| C32.contains(c));
    let name_ok = match name {
        None => true,
        Some(n) => {
            let mut cs = n.chars();
            cs.next().is_some_and(|c| c.is_ascii_alphabetic())
                && n.len() <= 40
                && cs.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        }
    };
    if addr_ok && name_ok {
        Ok(raw.to_string())
    } else {
        Err(ApiError::schema(place, param, Rule::Principal))
    }
}

/// A block named by height or by (`0x`-optional) 64-hex hash.
pub(crate) fn block_ref(raw: &str, param: &'static str) -> Result<UntilBlock, ApiError> {
    let hex = raw.strip_prefix("0x").unwrap_or(raw);
    if let Ok(h) = raw.parse::<u64>() {
        Ok(UntilBlock::Height(h))
    } else if hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(UntilBlock::Hash(format!("0x{}", hex.to_ascii_lowercase())))
    } else {
        Err(ApiError::invalid(param, format!("`{raw}` is not a block height or hash")))
    }
}

/// The height a request's block parameter names; an unknown block is a 404.
pub(super) async fn height_of<R: AddressReader>(
    r: &R,
    at: Option<UntilBlock>,
) -> Result<Option<u64>, ApiError> {
    let Some(at) = at else { return Ok(None) };
    match r.resolve_block(&at).await? {
        Some(h) => Ok(Some(h)),
        None => Err(ApiError::NotFound("block not found".into())),
    }
}

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

/// A JSON reply with the incumbent's ETag (`Cache-Control` revalidation) or its 304.
pub(crate) fn cached_json<T: serde::Serialize>(
    body: &T,
    etag: Option<String>,
    if_none_match: Option<&str>,
) -> Response {
    cached_reply(|| warp::reply::json(body).into_response(), etag, if_none_match)
}

/// [`cached_json`] of a body already written as JSON text (the same bytes and headers).
pub(crate) fn cached_json_text(
    body: impl Into<Vec<u8>>,
    etag: Option<String>,
    if_none_match: Option<&str>,
) -> Response {
    cached_reply(
        || {
            let mut res = Response::new(body.into().into());
            res.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            res
        },
        etag,
        if_none_match,
    )
}

fn cached_reply(
    body: impl FnOnce() -> Response,
    etag: Option<String>,
    if_none_match: Option<&str>,
) -> Response {
    let Some(etag) = etag.and_then(|e| HeaderValue::from_str(&format!("\"{e}\"")).ok()) else {
        return with_common_headers(body());
    };
    let revalidate = HeaderValue::from_static("public, no-cache, must-revalidate");
    let hit = if_none_match.is_some_and(|inm| inm.split(',').any(|v| v.trim().as_bytes() == etag.as_bytes()));
    let mut res = if hit {
        warp::reply::with_status(warp::reply(), StatusCode::NOT_MODIFIED).into_response()
    } else {
        body()
    };
    res.headers_mut().insert(ETAG, etag);
    res.headers_mut().insert(CACHE_CONTROL, revalidate);
    with_common_headers(res)
}

/// The incumbent's principal ETag: sha256 of `last_tx_id:last_mempool_tx_id:pox_state` (empty
/// parts for none); `mempool` for the routes whose answer includes pending transactions.
pub(crate) async fn principal_etag<R: AddressReader>(
    r: &R,
    principal: &str,
    mempool: bool,
) -> Result<Option<String>, ApiError> {
    let a = r.principal_activity(principal, mempool).await?;
    Ok(Some(activity_etag(&a)))
}

fn activity_etag(a: &PrincipalActivity) -> String {
    let part = |v: &Option<String>| v.clone().unwrap_or_default();
    sha256_hex(&format!("{}:{}:{}", part(&a.last_tx_id), part(&a.last_mempool_tx_id), part(&a.pox_state)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principals_follow_the_incumbents_pattern() {
        assert!(principal("ST1HB1T8WRNBYB0Y3T7WXZS38NKKPTBR3EG9EPJKR", "principal").is_ok());
        assert!(principal("SP3K8BC0PPEVCV7NZ6QSRWPQ2JE9E5B6N3PA0KBR9.fwp-wstx-alex_64", "principal").is_ok());
        for bad in [
            "INVALID",
            "",
            "ST1HB1T8WRNBYB0Y3T7WXZS38NKKPTBR3EG9EPJKR.1abc",
            "st1hb1t8wrnbyb0y3t7wxzs38nkkptbr3eg9epjkr",
        ] {
            let e = principal(bad, "principal").unwrap_err();
            assert!(matches!(e, ApiError::InvalidParam { param: "principal", .. }), "{bad}");
        }
    }

    #[test]
    fn principal_etag_is_the_incumbents_formula() {
        // Recorded: mocknet, `/extended/v1/address/ST16G69GQBDPMRY6308JN0GDTYF265JX3KQ6C0VEH/balances`.
        let a = PrincipalActivity {
            last_tx_id: Some("0x8ba559335b84ed9bc57494e888ae53f0121a8ca7c91977ef84b122a1739c268d".into()),
            ..Default::default()
        };
        assert_eq!(activity_etag(&a), "c987b9cf538577797c9cadbb014ce4f068993f3c10100310169f5f13ec121ebd");
    }

    #[test]
    fn blocks_are_named_by_height_or_hash() {
        assert_eq!(block_ref("26", "until_block").unwrap(), UntilBlock::Height(26));
        let h = "DD5B34DF6D5F0DDEA225F3CD126B4D6C7A6B403EA38CDC4AB808836777F49F3F";
        assert_eq!(block_ref(h, "b").unwrap(), UntilBlock::Hash(format!("0x{}", h.to_lowercase())));
        assert!(block_ref("0x12", "until_block").is_err());
        assert!(block_ref("-1", "until_block").is_err());
    }

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
