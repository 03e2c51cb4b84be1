//! Microblocks: `/extended/v1/microblock`, `/microblock/{hash}` and
//! `/microblock/unanchored/txs` (all deprecated routes of the incumbent, cached on the chain tip).

use ledger_read::microblock as reader;

pub use reader::{MicroblockReader, MicroblockRecord};

use std::sync::Arc;

use serde_json::{json, Value as Json};
use warp::reply::Response;
use warp::{Filter, Rejection, Reply};

use crate::error::ApiError;
use crate::handler::{get, if_none_match, reply, Get};
use crate::params::{LimitRule, Page, Query};
use crate::reader::TipReader;
use crate::reply::{deprecated, found, json_with_etag};
use crate::time::iso8601;
use crate::tx::{mined_tx_json, tip_etag, RenderOptions};

pub const MICROBLOCK_LIMIT: LimitRule = LimitRule::new(20, 200);

/// The incumbent's `Microblock` entity.
pub fn microblock_json(m: &MicroblockRecord) -> Json {
    json!({
        "canonical": m.canonical,
        "microblock_canonical": m.microblock_canonical,
        "microblock_hash": m.microblock_hash,
        "microblock_sequence": m.microblock_sequence,
        "microblock_parent_hash": m.microblock_parent_hash,
        "block_height": m.block_height,
        "parent_block_height": m.parent_block_height,
        "parent_block_hash": m.parent_block_hash,
        "parent_burn_block_hash": m.parent_burn_block_hash,
        "parent_burn_block_time": m.parent_burn_block_time,
        "parent_burn_block_time_iso": if m.parent_burn_block_time > 0 {
            iso8601(i64::try_from(m.parent_burn_block_time).unwrap_or(i64::MAX))
        } else {
            String::new()
        },
        "parent_burn_block_height": m.parent_burn_block_height,
        "block_hash": m.block_hash,
        "txs": m.txs,
    })
}

/// A `hash` path parameter: `Ok(Some(hash))` for the lower-case `0x` form, `Ok(None)` for one
/// without `0x` (the incumbent redirects those, valid or not), else the invalid-parameter error.
fn parse_hash(raw: &str) -> Result<Option<String>, ApiError> {
    let Some(hex) = raw.strip_prefix("0x") else { return Ok(None) };
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        // The incumbent's hex check (`validateRequestHexInput`) words it so.
        return Err(ApiError::invalid("hash", "Invalid hash characters"));
    }
    Ok(Some(format!("0x{}", hex.to_ascii_lowercase())))
}

async fn list<R: MicroblockReader>(r: &R, q: &Query, etag: Option<String>) -> Result<Response, ApiError> {
    let paging = q.paging(MICROBLOCK_LIMIT)?;
    let (total, rows) = r.microblocks(paging).await?;
    let page = Page::new(paging, total, rows.iter().map(microblock_json).collect());
    let body = serde_json::to_value(page).unwrap_or_default();
    Ok(deprecated(json_with_etag(&body, etag.as_deref())))
}

async fn by_hash<R: MicroblockReader>(r: &R, raw: &str, etag: Option<String>) -> Result<Response, ApiError> {
    let Some(hash) = parse_hash(raw)? else {
        return Ok(deprecated(found(&format!("/extended/v1/microblock/0x{raw}"))));
    };
    let m = r
        .microblock(&hash)
        .await?
        .ok_or_else(|| ApiError::NotFound("cannot find microblock by hash".into()))?;
    Ok(deprecated(json_with_etag(&microblock_json(&m), etag.as_deref())))
}

async fn unanchored<R: MicroblockReader>(r: &R, etag: Option<String>) -> Result<Response, ApiError> {
    let txs = r.unanchored_txs().await?;
    let results = txs
        .iter()
        .map(|t| mined_tx_json(t, None, RenderOptions::default()))
        .collect::<Result<Vec<_>, _>>()?;
    let body = json!({ "total": results.len(), "results": results });
    Ok(deprecated(json_with_etag(&body, etag.as_deref())))
}

enum Route {
    List(Query),
    ByHash(String),
    Unanchored,
}

async fn handle<R: TipReader + MicroblockReader>(
    r: Arc<R>,
    route: Route,
    inm: Option<String>,
) -> Result<Response, Rejection> {
    let res = async {
        let etag = match tip_etag(r.as_ref(), inm.as_deref()).await? {
            Err(not_modified) => return Ok(not_modified),
            Ok(etag) => etag,
        };
        match route {
            Route::List(q) => list(r.as_ref(), &q, etag).await,
            Route::ByHash(h) => by_hash(r.as_ref(), &h, etag).await,
            Route::Unanchored => unanchored(r.as_ref(), etag).await,
        }
    }
    .await;
    reply(res)
}

pub fn routes<R: TipReader + MicroblockReader>(
    reader: Arc<R>,
) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    let with_reader = crate::handler::with_reader(reader.clone());
    let inm = if_none_match;
    let list = warp::get()
        .and(warp::path!("extended" / "v1" / "microblock"))
        .and(get(reader.clone()))
        .and_then(|Get { reader: r, query: q, inm }: Get<R>| handle(r, Route::List(q), inm));
    let unanchored = warp::get()
        .and(warp::path!("extended" / "v1" / "microblock" / "unanchored" / "txs"))
        .and(with_reader.clone())
        .and(inm())
        .and_then(|r: Arc<R>, inm: Option<String>| handle(r, Route::Unanchored, inm));
    let by_hash = warp::get()
        .and(warp::path!("extended" / "v1" / "microblock" / String))
        .and(with_reader)
        .and(inm())
        .and_then(|h: String, r: Arc<R>, inm: Option<String>| handle(r, Route::ByHash(h), inm));
    list.or(unanchored).or(by_hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_validated_normalized_or_redirected() {
        let h = "AB".repeat(32);
        assert_eq!(parse_hash(&format!("0x{h}")).unwrap().unwrap(), format!("0x{}", h.to_lowercase()));
        assert_eq!(parse_hash("xyz").unwrap(), None);
        assert!(matches!(parse_hash("0x12"), Err(ApiError::InvalidParam { param: "hash", .. })));
    }

    #[test]
    fn the_entity_has_the_incumbents_fields_in_order() {
        let m = MicroblockRecord {
            canonical: true,
            microblock_canonical: true,
            microblock_hash: "0xaa".into(),
            parent_burn_block_time: 1627663020,
            block_hash: "0x".into(),
            ..Default::default()
        };
        let j = microblock_json(&m);
        assert_eq!(j["parent_burn_block_time_iso"], "2021-07-30T16:37:00.000Z");
        assert_eq!(j["block_hash"], "0x");
        assert_eq!(j["txs"], json!([]));
    }
}
