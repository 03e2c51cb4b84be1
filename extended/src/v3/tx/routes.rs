//! `/extended/v3/transactions…`, `/blocks/{height_or_hash}/transactions`,
//! `/mempool/transactions` and `/tokens/stx/supply`: parameters in, the reader's rows through
//! the v3 renderer out. [`tx_page`] and [`mempool_page`] are the pagers other families reuse.

use std::sync::Arc;

use serde_json::{json, Value as Json};
use warp::reply::Response;
use warp::{Filter, Rejection, Reply};

use super::reader::{MempoolScope, TxScope, V3AnyTx, V3MempoolTx, V3Tx, V3TxReader};
use super::render::{
    event_json, mempool_summary_json, mempool_transaction_json, mined_summary_text, transaction_json, Include,
};
use crate::error::{ApiError, In, Rule};
use crate::handler::{get, if_none_match, reply, with_reader, Get};
use crate::headers::with_common_headers;
use crate::params::{query, Query};
use crate::reply::{json_text_with_etag, page_text};
use crate::tx::RenderError;
use crate::v3::cursor::{self, MempoolCursor, TxCursor};
use crate::v3::etag::{self, Kind};
use crate::v3::page::{self, CursorPage, Cursors};
use crate::v3::params;
use crate::ExtendedReader;

/// The supply the protocol reaches in 2050 (µSTX), a constant in the incumbent.
const TOTAL_USTX_YEAR_2050: i128 = 2_318_000_000 * 1_000_000;

fn render_error(e: RenderError) -> ApiError {
    ApiError::Internal(Box::new(e))
}

fn not_found() -> ApiError {
    ApiError::NotFound("Transaction not found".into())
}

/// The raw `include` values: a single one is a comma-separated list, repeated ones are taken
/// as sent (the incumbent's pre-validation hook splits only the single form).
fn include(raw_query: &str) -> Result<Include, ApiError> {
    let values: Vec<String> = serde_urlencoded::from_str::<Vec<(String, String)>>(raw_query)
        .unwrap_or_default()
        .into_iter()
        .filter(|(k, _)| k == "include")
        .map(|(_, v)| v)
        .collect();
    let items: Vec<String> = match values.as_slice() {
        [] => return Ok(Include::default()),
        [one] => one.split(',').map(String::from).collect(),
        many => many.to_vec(),
    };
    let mut out = Include::default();
    for (i, item) in items.iter().enumerate() {
        let flag = match item.as_str() {
            "function_args" => &mut out.function_args,
            "source_code" => &mut out.source_code,
            "post_conditions" => &mut out.post_conditions,
            "result" => &mut out.result,
            _ => {
                return Err(ApiError::schema(
                    In::Query,
                    "include",
                    Rule::Constants { n: Include::FIELDS.len(), item: Some(i) },
                ))
            }
        };
        *flag = true;
    }
    // `uniqueItems`, worded as AJV words it (the later item of the first duplicate pair first).
    for (j, b) in items.iter().enumerate() {
        if let Some(i) = items[..j].iter().position(|a| a == b) {
            return Err(ApiError::InvalidParam {
                param: "include",
                message: format!(
                    "querystring/include must NOT have duplicate items (items ## {j} and {i} are identical)"
                ),
                validation: true,
            });
        }
    }
    Ok(out)
}

/// A page of transactions of `scope` from the request's cursor, as the incumbent pages them:
/// `limit + 1` rows tell whether a next page exists (its cursor is that extra row's position),
/// the previous page is found by an ascending query from the first row, and `H:0:0` with no
/// transaction exactly there names the whole of block H.
pub async fn tx_page<R: V3TxReader>(
    r: &R,
    scope: TxScope<'_>,
    limit: u32,
    cursor: Option<&str>,
) -> Result<(Cursors, Vec<V3Tx>), ApiError> {
    let from = match cursor.map(TxCursor::parse) {
        Some(c) if c.may_name_block() && !r.v3_tx_at(scope, c).await? => {
            Some(TxCursor::block_end(c.block_height))
        }
        other => other,
    };
    let mut rows = r.v3_txs(scope, from, limit + 1).await?;
    let next = (rows.len() > limit as usize).then(|| rows[limit as usize].position().to_string());
    rows.truncate(limit as usize);
    let Some(first) = rows.first().map(V3Tx::position) else {
        return Ok((Cursors::default(), rows));
    };
    let previous = r.v3_positions_after(scope, first, limit).await?.last().map(ToString::to_string);
    Ok((Cursors { next, previous, current: Some(first.to_string()) }, rows))
}

/// A page of mined transactions as JSON text: their summaries written as text
/// ([`mined_summary_text`]) in the envelope.
fn summaries_page(total: u64, limit: u32, cursors: Cursors, rows: &[V3Tx]) -> Result<Response, ApiError> {
    let rows = rows
        .iter()
        .map(|t| mined_summary_text(&t.tx))
        .collect::<Result<Vec<_>, _>>()
        .map_err(render_error)?;
    let envelope = CursorPage::new(total, limit, cursors, Vec::<String>::new());
    Ok(json_text_with_etag(page_text(&envelope, &rows), None))
}

fn json_reply(body: &impl serde::Serialize) -> Response {
    with_common_headers(warp::reply::json(body))
}

async fn transactions<R: ExtendedReader>(r: &R, q: &Query, inm: Option<&str>) -> Result<Response, ApiError> {
    let limit = page::limit(q, page::TX)?;
    let cursor = cursor::read(q, cursor::TX)?;
    let tag = etag::value(r, Kind::Tip).await?;
    etag::cached(tag, inm, async {
        let (cursors, rows) = tx_page(r, TxScope::All, limit, cursor).await?;
        // The incumbent's total is read with the page's rows: 0 on an empty page.
        let total = if rows.is_empty() { 0 } else { r.v3_tx_total().await? };
        summaries_page(total, limit, cursors, &rows)
    })
    .await
}

async fn transaction<R: ExtendedReader>(
    r: &R,
    raw_id: &str,
    raw_query: &str,
    inm: Option<&str>,
) -> Result<Response, ApiError> {
    params::tx_id(raw_id)?;
    let include = include(raw_query)?;
    // The incumbent looks the id up as sent (a valid id not in the stored `0x` lower-case form
    // is not found), its ETag from the normalized one.
    let tag = etag::value(r, Kind::Transaction(&params::tx_id(raw_id)?)).await?;
    etag::cached(tag, inm, async {
        let body = match r.v3_tx(raw_id).await?.ok_or_else(not_found)? {
            V3AnyTx::Mined(t) => transaction_json(&t, include),
            V3AnyTx::Mempool(t) => mempool_transaction_json(&t, include),
        }
        .map_err(render_error)?;
        Ok(json_reply(&body))
    })
    .await
}

async fn events<R: ExtendedReader>(
    r: &R,
    raw_id: &str,
    q: &Query,
    inm: Option<&str>,
) -> Result<Response, ApiError> {
    params::tx_id(raw_id)?;
    let limit = page::limit(q, page::EVENT)?;
    let from = cursor::read(q, cursor::EVENT)?.map(cursor::number);
    let tag = etag::value(r, Kind::Transaction(&params::tx_id(raw_id)?)).await?;
    etag::cached(tag, inm, async {
        let (total, mut rows) = r
            .v3_tx_events(raw_id, from.unwrap_or(0), limit + 1)
            .await?
            .ok_or_else(|| ApiError::invalid("tx_id", "Transaction not found"))?;
        let next = (rows.len() > limit as usize).then(|| rows[limit as usize].event_index.to_string());
        rows.truncate(limit as usize);
        let cursors = match rows.first() {
            None => Cursors { next, ..Cursors::default() },
            Some(first) => Cursors {
                next,
                previous: (first.event_index > 0)
                    .then(|| first.event_index.saturating_sub(i64::from(limit)).max(0).to_string()),
                current: Some(first.event_index.to_string()),
            },
        };
        let results: Vec<Json> = rows.iter().map(event_json).collect();
        Ok(json_reply(&CursorPage::new(total, limit, cursors, results)))
    })
    .await
}

async fn block_transactions<R: ExtendedReader>(
    r: &R,
    raw_block: &str,
    q: &Query,
    inm: Option<&str>,
) -> Result<Response, ApiError> {
    let at = params::height_or_hash(raw_block)?;
    let limit = page::limit(q, page::TX)?;
    let cursor = cursor::read(q, cursor::TX)?;
    let tag = etag::value(r, Kind::Block(&at)).await?;
    etag::cached(tag, inm, async {
        let block = r.v3_block(&at).await?.ok_or_else(|| ApiError::NotFound("Block not found".into()))?;
        let (cursors, rows) = tx_page(r, TxScope::Block(&block.index_block_hash), limit, cursor).await?;
        summaries_page(block.tx_count, limit, cursors, &rows)
    })
    .await
}

/// A page of the pending transactions of `scope` from the request's cursor, rendered as the
/// incumbent's mempool summaries: `limit + 1` rows tell whether a next page exists, the previous
/// page is found by an ascending read from the first row, and `total` (the scope's pending
/// count) is 0 on an empty page, as the incumbent reads it with the page's rows.
pub async fn mempool_page<R: V3TxReader>(
    r: &R,
    scope: MempoolScope<'_>,
    limit: u32,
    cursor: Option<&str>,
) -> Result<CursorPage<Json>, ApiError> {
    let from = cursor.map(MempoolCursor::parse);
    let (total, mut rows) = r.v3_mempool(scope, from.as_ref(), limit + 1).await?;
    let next = (rows.len() > limit as usize).then(|| rows[limit as usize].position().to_string());
    rows.truncate(limit as usize);
    let Some(first) = rows.first().map(V3MempoolTx::position) else {
        return Ok(CursorPage::new(0, limit, Cursors::default(), vec![]));
    };
    let previous = r.v3_mempool_before(scope, &first, limit).await?.last().map(ToString::to_string);
    let cursors = Cursors { next, previous, current: Some(first.to_string()) };
    let results: Vec<Json> =
        rows.iter().map(mempool_summary_json).collect::<Result<_, _>>().map_err(render_error)?;
    Ok(CursorPage::new(total, limit, cursors, results))
}

async fn mempool<R: ExtendedReader>(r: &R, q: &Query) -> Result<Response, ApiError> {
    let limit = page::limit(q, page::TX)?;
    let cursor = cursor::read(q, cursor::MEMPOOL)?;
    Ok(json_reply(&mempool_page(r, MempoolScope::All, limit, cursor).await?))
}

async fn supply<R: ExtendedReader>(r: &R, inm: Option<&str>) -> Result<Response, ApiError> {
    let tag = etag::value(r, Kind::Tip).await?;
    etag::cached(tag, inm, async {
        // mints − burns + matured coinbase rewards at the tip: the v1 supply's own rule.
        let total = r.supply(None).await?.map_or(0, |s| s.total_ustx);
        Ok(json_reply(&json!({
            "total": total.to_string(),
            "projected_total_2050": TOTAL_USTX_YEAR_2050.to_string(),
        })))
    })
    .await
}

pub(crate) fn routes<R: ExtendedReader>(
    reader: Arc<R>,
) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    let r = with_reader(reader.clone());
    let inm = if_none_match;
    let raw = || warp::query::raw().or(warp::any().map(String::new)).unify();
    let list =
        warp::path!("extended" / "v3" / "transactions").and(r.clone()).and(query()).and(inm()).and_then(
            |r: Arc<R>, q: Query, inm: Option<String>| async move {
                reply(transactions(&*r, &q, inm.as_deref()).await)
            },
        );
    let one = warp::path!("extended" / "v3" / "transactions" / String)
        .and(r.clone())
        .and(raw())
        .and(inm())
        .and_then(|id: String, r: Arc<R>, raw: String, inm: Option<String>| async move {
            reply(transaction(&*r, &id, &raw, inm.as_deref()).await)
        });
    let events = warp::path!("extended" / "v3" / "transactions" / String / "events")
        .and(get(reader.clone()))
        .and_then(|id: String, Get { reader: r, query: q, inm }: Get<R>| async move {
            reply(events(&*r, &id, &q, inm.as_deref()).await)
        });
    let block = warp::path!("extended" / "v3" / "blocks" / String / "transactions")
        .and(get(reader.clone()))
        .and_then(|b: String, Get { reader: r, query: q, inm }: Get<R>| async move {
            reply(block_transactions(&*r, &b, &q, inm.as_deref()).await)
        });
    let mempool = warp::path!("extended" / "v3" / "mempool" / "transactions")
        .and(r.clone())
        .and(query())
        .and_then(|r: Arc<R>, q: Query| async move { reply(mempool(&*r, &q).await) });
    let supply = warp::path!("extended" / "v3" / "tokens" / "stx" / "supply")
        .and(r)
        .and(inm())
        .and_then(|r: Arc<R>, inm: Option<String>| async move { reply(supply(&*r, inm.as_deref()).await) });
    warp::get().and(list.or(one).or(events).or(block).or(mempool).or(supply))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn include_of(raw: &str) -> Result<Include, String> {
        include(raw).map_err(|e| match e {
            ApiError::InvalidParam { message, .. } => message,
            e => e.to_string(),
        })
    }

    #[test]
    fn include_is_repeated_or_comma_separated() {
        let all = Include { function_args: true, source_code: true, post_conditions: true, result: true };
        assert_eq!(include_of("include=function_args,source_code,post_conditions,result").unwrap(), all);
        assert_eq!(
            include_of("include=function_args&include=source_code&include=post_conditions&include=result")
                .unwrap(),
            all
        );
        assert_eq!(include_of("").unwrap(), Include::default());
        assert!(include_of("include=nope")
            .unwrap_err()
            .starts_with("querystring/include/0 must be equal to constant"));
        // Repeated values are not split again.
        assert!(include_of("include=result,source_code&include=result")
            .unwrap_err()
            .starts_with("querystring/include/0"));
        assert_eq!(
            include_of("include=result,result").unwrap_err(),
            "querystring/include must NOT have duplicate items (items ## 1 and 0 are identical)"
        );
    }
}
