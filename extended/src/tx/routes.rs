//! `/extended/v1/tx/*` handlers: parameters in, the reader's rows through the renderer out.

use std::sync::Arc;

use serde_json::json;
use warp::reply::Response;
use warp::{Filter, Rejection, Reply};

use super::entity::any_tx_json;
use super::lists;
use super::model::AnyTx;
use super::params::{parse_tx_id, raw_query, EVENT_LIMIT};
use super::reader::{TxReader, TxStatsReader};
use super::{events, stats};
use crate::error::ApiError;
use crate::handler::{get, if_none_match, reply, Get};
use crate::headers::with_common_headers;
use crate::params::{query, Query};
use crate::reader::TipReader;
use crate::reply::{deprecated, etag_matches, found, json_with_etag, not_modified, sha256_hex};
use crate::status::chain_tip_etag;

/// The incumbent's DB status code, part of the transaction ETag.
fn status_code(status: &str) -> i32 {
    match status {
        "pending" => 0,
        "success" => 1,
        "abort_by_response" => -1,
        "abort_by_post_condition" => -2,
        "problematic_skipped" => -3,
        "dropped_replace_by_fee" => -10,
        "dropped_replace_across_fork" => -11,
        "dropped_too_expensive" => -12,
        "dropped_stale_garbage_collect" => -13,
        "dropped_problematic" => -15,
        _ => -14,
    }
}

/// The transaction ETag: sha256 of `tx_id:index_block_hash:microblock_hash:status` of the
/// canonical or mempool row; none for a transaction only on another fork.
pub fn tx_etag(tx: &AnyTx) -> Option<String> {
    let text = match tx {
        AnyTx::Mined(t) if t.canonical => {
            let micro = if t.microblock_hash.is_empty() { "0x" } else { &t.microblock_hash };
            format!("{}:{}:{}:{}", t.tx_id, t.index_block_hash, micro, status_code(&t.status))
        }
        AnyTx::Mined(_) => return None,
        AnyTx::Mempool(t) => format!("{}:::{}", t.tx_id, status_code(&t.status)),
    };
    Some(sha256_hex(&text))
}

/// The static routes beside `/extended/v1/tx/{tx_id}`.
const STATIC_SIBLINGS: &[&str] = &["multiple", "mempool", "events"];

fn not_found() -> ApiError {
    ApiError::NotFound("could not find transaction by ID".into())
}

fn not_found_raw() -> ApiError {
    ApiError::NotFound("could not find raw transaction by ID".into())
}

async fn tx_by_id<R: TxReader>(
    reader: Arc<R>,
    raw_id: String,
    raw: bool,
    q: Query,
    raw_q: String,
    inm: Option<String>,
) -> Result<Response, ApiError> {
    let Some(tx_id) = parse_tx_id("tx_id", &raw_id)? else {
        let suffix = if raw { "/raw" } else { "" };
        let query = if raw_q.is_empty() { String::new() } else { format!("?{raw_q}") };
        return Ok(deprecated(found(&format!("/extended/v1/tx/0x{raw_id}{suffix}{query}"))));
    };
    let paging = q.paging_named(EVENT_LIMIT, "event_limit", "event_offset")?;
    let unanchored = q.bool("unanchored")?.unwrap_or(false);
    let opts = lists::options(&q)?;
    // `/raw` finds any stored row, unanchored microblock previews included, as the incumbent's does.
    let tx = if raw { reader.tx_any_row(&tx_id).await? } else { reader.tx(&tx_id, unanchored).await? };
    // The incumbent's `/raw` names what it looked for.
    let tx = tx.ok_or_else(|| if raw { not_found_raw() } else { not_found() })?;
    let etag = tx_etag(&tx);
    if let Some(e) = &etag {
        if etag_matches(inm.as_deref(), e) {
            return Ok(deprecated(not_modified()));
        }
    }
    let body = if raw {
        let raw_tx = match &tx {
            AnyTx::Mined(t) => &t.raw_tx,
            AnyTx::Mempool(t) => &t.raw_tx,
        };
        json!({ "raw_tx": raw_tx })
    } else {
        let events = match &tx {
            AnyTx::Mined(t) => Some(reader.tx_events(t, paging).await?),
            AnyTx::Mempool(_) => None,
        };
        any_tx_json(&tx, events.as_deref(), opts)?
    };
    Ok(deprecated(json_with_etag(&body, etag.as_deref())))
}

/// The chain-tip ETag, or the 304 when `If-None-Match` names it.
pub(crate) async fn tip_etag<R: TipReader>(
    reader: &R,
    inm: Option<&str>,
) -> Result<Result<Option<String>, Response>, ApiError> {
    let tip = reader.tip().await?;
    let etag = chain_tip_etag(tip.as_ref()).map(|e| e.trim_matches('"').to_string());
    if let Some(e) = &etag {
        if etag_matches(inm, e) {
            return Ok(Err(deprecated(not_modified())));
        }
    }
    Ok(Ok(etag))
}

pub fn routes<R: TipReader + TxReader + TxStatsReader>(
    reader: Arc<R>,
) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    let with_reader = crate::handler::with_reader(reader.clone());
    let inm = if_none_match;
    let list = warp::get().and(warp::path!("extended" / "v1" / "tx")).and(get(reader.clone())).and_then(
        |Get { reader: r, query: q, inm }: Get<R>| async move {
            reply(
                async {
                    match tip_etag(r.as_ref(), inm.as_deref()).await? {
                        Err(res) => Ok(res),
                        Ok(etag) => lists::tx_list(r, q, etag).await,
                    }
                }
                .await,
            )
        },
    );
    let multiple = warp::get()
        .and(warp::path!("extended" / "v1" / "tx" / "multiple"))
        .and(with_reader.clone())
        .and(query())
        .and_then(|r: Arc<R>, q: Query| async move { reply(lists::multiple(r, q, None).await) });
    let mempool = warp::get()
        .and(warp::path!("extended" / "v1" / "tx" / "mempool"))
        .and(with_reader.clone())
        .and(query())
        .and_then(|r: Arc<R>, q: Query| async move { reply(lists::mempool(r, q, None).await) });
    let fees = warp::get()
        .and(warp::path!("extended" / "v2" / "mempool" / "fees"))
        .and(with_reader.clone())
        .and_then(|r: Arc<R>| async move { reply(lists::mempool_fees(r, None).await) });
    let fee_rate = warp::post().and(warp::path!("extended" / "v1" / "fee_rate")).map(|| {
        // The incumbent's constant answer (a stub it never replaced).
        deprecated(with_common_headers(warp::reply::json(&json!({ "fee_rate": 400 }))))
    });
    let block = |by_hash: bool| {
        let path = if by_hash { "block" } else { "block_height" };
        warp::get()
            .and(warp::path("extended"))
            .and(warp::path("v1"))
            .and(warp::path("tx"))
            .and(warp::path(path))
            .and(warp::path::param::<String>())
            .and(warp::path::end())
            .and(get(reader.clone()))
            .and_then(move |id: String, Get { reader: r, query: q, inm }: Get<R>| async move {
                let block = if by_hash { lists::block_hash(&id) } else { lists::block_height(&id) };
                reply(
                    async {
                        match tip_etag(r.as_ref(), inm.as_deref()).await? {
                            Err(res) => Ok(res),
                            Ok(etag) => lists::block_txs(r, block, q, etag).await,
                        }
                    }
                    .await,
                )
            })
    };
    let stats = warp::get()
        .and(warp::path!("extended" / "v1" / "tx" / "mempool" / "stats"))
        .and(with_reader.clone())
        .and_then(|r: Arc<R>| async move { reply(stats::mempool_stats(r).await) });
    let events = warp::get()
        .and(warp::path!("extended" / "v1" / "tx" / "events"))
        .and(get(reader.clone()))
        .and_then(|Get { reader: r, query: q, inm }: Get<R>| async move {
            reply(
                async {
                    match tip_etag(r.as_ref(), inm.as_deref()).await? {
                        Err(res) => Ok(res),
                        Ok(etag) => events::tx_events(r, q, etag).await,
                    }
                }
                .await,
            )
        });
    let by_id = warp::get()
        .and(warp::path!("extended" / "v1" / "tx" / String))
        .and(with_reader.clone())
        .and(query())
        .and(raw_query())
        .and(inm())
        .and_then(|id: String, r: Arc<R>, q: Query, raw_q: String, inm: Option<String>| async move {
            // The incumbent's router tries the static siblings first: `/tx/multiple` without
            // its `tx_id` is that route's error, never this one's.
            if STATIC_SIBLINGS.contains(&id.as_str()) {
                return Err(warp::reject::not_found());
            }
            reply(tx_by_id(r, id, false, q, raw_q, inm).await)
        });
    let raw = warp::get()
        .and(warp::path!("extended" / "v1" / "tx" / String / "raw"))
        .and(with_reader.clone())
        .and(query())
        .and(raw_query())
        .and(inm())
        .and_then(|id: String, r: Arc<R>, q: Query, raw_q: String, inm: Option<String>| async move {
            reply(tx_by_id(r, id, true, q, raw_q, inm).await)
        });
    list.or(multiple)
        .or(stats)
        .or(events)
        .or(mempool)
        .or(fees)
        .or(fee_rate)
        .or(block(true))
        .or(block(false))
        .or(by_id)
        .or(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_ids_are_validated_normalized_or_redirected() {
        let id = "EF13FB69AD25F49400FAD61D82FB678CB59F8E584ACD70450ACD84B3E49EF706";
        assert_eq!(
            parse_tx_id("tx_id", &format!("0x{id}")).unwrap().unwrap(),
            format!("0x{}", id.to_lowercase())
        );
        assert_eq!(parse_tx_id("tx_id", id).unwrap(), None);
        for bad in ["0xZZZ", "notatxid", "0x", &format!("0x{id}0")] {
            let e = parse_tx_id("tx_id", bad).unwrap_err();
            assert!(matches!(e, ApiError::InvalidParam { param: "tx_id", .. }), "{bad}");
        }
    }

    #[test]
    fn tx_etag_is_the_incumbents() {
        // The mocknet oracle's ETag for this transaction.
        let tx = AnyTx::Mined(crate::tx::MinedTx {
            tx_id: "0x217a12f7f738eddc1473874e7c4d7bd985470c877e2828e11ad2d2415aa41a17".into(),
            index_block_hash: "0x07a570acd34466cabac8b81b24b6e0ab135b7aa90750506f9d0d9196e2af44ee".into(),
            status: "success".into(),
            canonical: true,
            ..Default::default()
        });
        assert_eq!(tx_etag(&tx).unwrap(), "40d64b9fd6fa4d569839b798ebc751e5a9fde42328bafbfda96f908cd510245d");
        let pending = AnyTx::Mempool(crate::tx::MempoolTx {
            tx_id: "0xd446b2e4f50ac319b8589e2da0f057bc62a253cf164cd0b9e00d0a7a6fffbf2b".into(),
            status: "pending".into(),
            ..Default::default()
        });
        assert_eq!(
            tx_etag(&pending).unwrap(),
            "447dced53121893d519e8b44a81794437e274d68b562f466b36e09f949bb6252"
        );
    }
}
