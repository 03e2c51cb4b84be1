//! `/extended/v1/tokens/nft/*`: NFT holdings, a token's history and an asset's mints.
//! (`/tokens/ft/{token}/holders` lives with the balances in `address`.)

use ledger_read::tokens as reader;

use std::sync::Arc;

use serde_json::{json, Value};
use warp::{Filter, Rejection, Reply};

pub use reader::{NftEvent, NftHolding, TokenReader};

use crate::address::{cached_json_text, principal_in};
use crate::error::{ApiError, In, Rule};
use crate::handler::reject;
use crate::params::{query, LimitRule, Page, Query};
use crate::reply::page_bytes;
use crate::status::chain_tip_etag;
use crate::text::Obj;
use crate::tx::{any_tx_json, RenderOptions, TxReader};

pub(crate) const TOKENS: LimitRule = LimitRule::new(50, 200);

pub fn routes<R: TokenReader + TxReader>(
    reader: Arc<R>,
) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    warp::get()
        .and(warp::path!("extended" / "v1" / "tokens" / "nft" / String))
        .and(query())
        .and(warp::header::optional::<String>("if-none-match"))
        .and(warp::any().map(move || reader.clone()))
        .and_then(|what: String, q: Query, inm: Option<String>, r: Arc<R>| async move {
            if !matches!(what.as_str(), "holdings" | "history" | "mints") {
                return Err(warp::reject::not_found());
            }
            nft(&*r, &what, &q, inm).await.map_err(reject)
        })
}

fn required<'q>(q: &'q Query, param: &'static str) -> Result<&'q str, ApiError> {
    q.get(param).ok_or(ApiError::schema(In::Query, param, Rule::Required))
}

/// A Clarity value as hex, `0x` optional.
fn clarity_hex(raw: &str, param: &'static str) -> Result<String, ApiError> {
    let hex = raw.strip_prefix("0x").unwrap_or(raw);
    if hex.is_empty() || !hex.len().is_multiple_of(2) || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(ApiError::invalid(param, format!("`{raw}` is not a hex Clarity value")));
    }
    Ok(format!("0x{}", hex.to_ascii_lowercase()))
}

/// A page as `warp::reply::json` serializes it (a page of numbers, strings and trees cannot
/// fail to serialize).
fn to_body(page: &impl serde::Serialize) -> Vec<u8> {
    serde_json::to_vec(page).unwrap_or_default()
}

fn holding_json(h: &NftHolding) -> Value {
    json!({
        "asset_identifier": h.asset_identifier,
        "value": { "hex": h.hex, "repr": h.repr },
        "block_height": h.block_height,
        "tx_id": h.tx_id,
    })
}

/// [`holding_json`] written as text into a page's buffer.
fn holding_text(h: &NftHolding, out: &mut Vec<u8>) {
    let mut o = Obj::open(out);
    o.member("asset_identifier", &h.asset_identifier);
    let mut value = o.object("value");
    value.member("hex", &h.hex);
    value.member("repr", &h.repr);
    value.close();
    o.member("block_height", h.block_height);
    o.member("tx_id", &h.tx_id);
    o.close();
}

fn event_json(e: &NftEvent, with_value: bool) -> Value {
    let mut v = json!({ "event_index": e.event_index });
    if with_value {
        v["value"] = json!({ "hex": e.hex, "repr": e.repr });
    } else {
        v["asset_event_type"] = json!(e.asset_event_type);
    }
    v["tx_id"] = json!(e.tx_id);
    if !with_value {
        // The incumbent sends `sender: null` for mints in a token's history.
        v["sender"] = json!(e.sender);
    }
    if let Some(r) = &e.recipient {
        v["recipient"] = json!(r);
    }
    v
}

/// `tx_metadata=true`: each row's `tx_id` becomes `tx`, the transaction entity (shared
/// renderer, without its events, as the incumbent sends it).
async fn with_tx_metadata<R: TxReader>(r: &R, rows: &mut [Value], unanchored: bool) -> Result<(), ApiError> {
    for row in rows.iter_mut() {
        let Some(obj) = row.as_object_mut() else { continue };
        let Some(id) = obj.get("tx_id").and_then(Value::as_str).map(str::to_string) else { continue };
        let tx = r
            .tx(&id, unanchored)
            .await?
            .ok_or_else(|| ApiError::NotFound(format!("could not find transaction by ID {id}")))?;
        let rendered = any_tx_json(&tx, None, RenderOptions::default())?;
        // Same position as `tx_id` (serde_json keeps insertion order).
        *obj = std::mem::take(obj)
            .into_iter()
            .map(|(k, v)| if k == "tx_id" { ("tx".to_string(), rendered.clone()) } else { (k, v) })
            .collect();
    }
    Ok(())
}

async fn nft<R: TokenReader + TxReader>(
    r: &R,
    what: &str,
    q: &Query,
    inm: Option<String>,
) -> Result<warp::reply::Response, ApiError> {
    let unanchored = q.bool("unanchored")?.unwrap_or(false);
    let tx_metadata = q.bool("tx_metadata")?.unwrap_or(false);
    // Each page serialized once into its body (not built as a tree first).
    let body: Vec<u8> = match what {
        "holdings" => {
            let p = principal_in(required(q, "principal")?, In::Query, "principal")?;
            let paging = q.paging(TOKENS)?;
            let assets = q.all("asset_identifiers");
            let (total, rows) = r.nft_holdings(&p, &assets, paging.limit, paging.offset).await?;
            if tx_metadata {
                let mut results: Vec<Value> = rows.iter().map(holding_json).collect();
                with_tx_metadata(r, &mut results, unanchored).await?;
                to_body(&Page::first_row_total(paging, total, results))
            } else {
                // The rows written as text into one buffer (`first_row_total`'s total).
                let total = if rows.is_empty() { 0 } else { total };
                page_bytes(&Page::new(paging, total, Vec::<()>::new()), &rows, holding_text)
            }
        }
        "history" => {
            let asset = required(q, "asset_identifier")?.to_string();
            let value = clarity_hex(required(q, "value")?, "value")?;
            let paging = q.paging(TOKENS)?;
            let (total, rows) = r.nft_history(&asset, &value, paging.limit, paging.offset).await?;
            let mut results: Vec<Value> = rows.iter().map(|e| event_json(e, false)).collect();
            if tx_metadata {
                with_tx_metadata(r, &mut results, unanchored).await?;
            }
            to_body(&Page::first_row_total(paging, total, results))
        }
        _ => {
            let asset = required(q, "asset_identifier")?.to_string();
            let paging = q.paging(TOKENS)?;
            let (total, rows) = r.nft_mints(&asset, paging.limit, paging.offset).await?;
            let mut results: Vec<Value> = rows.iter().map(|e| event_json(e, true)).collect();
            if tx_metadata {
                with_tx_metadata(r, &mut results, unanchored).await?;
            }
            to_body(&Page::first_row_total(paging, total, results))
        }
    };
    let tip = r.tip().await?;
    let etag = chain_tip_etag(tip.as_ref()).map(|e| e.trim_matches('"').to_string());
    Ok(cached_json_text(body, etag, inm.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_hex_and_required_params_are_named() {
        assert_eq!(clarity_hex("0x0100", "value").unwrap(), "0x0100");
        assert_eq!(clarity_hex("01AB", "value").unwrap(), "0x01ab");
        for bad in ["", "0x", "0x123", "zz"] {
            assert!(matches!(clarity_hex(bad, "value"), Err(ApiError::InvalidParam { param: "value", .. })));
        }
        let e = required(&Query::parse(""), "principal").unwrap_err();
        assert!(matches!(e, ApiError::InvalidParam { param: "principal", .. }));
    }

    #[test]
    fn holdings_written_as_text_are_the_serialized_trees() {
        let rows = vec![
            NftHolding {
                asset_identifier: "ST1.nft::token".into(),
                hex: "0x0100".into(),
                repr: "(tuple (name \"a\\\"b\u{1}\"))".into(),
                block_height: 12,
                tx_id: "0x01".into(),
            },
            NftHolding {
                asset_identifier: "ST2.é::x".into(),
                hex: "0x".into(),
                repr: String::new(),
                block_height: 0,
                tx_id: "0x02".into(),
            },
        ];
        let paging = crate::params::Paging { limit: 50, offset: 3 };
        for rows in [rows.clone(), vec![]] {
            let results: Vec<Value> = rows.iter().map(holding_json).collect();
            let tree = serde_json::to_vec(&Page::first_row_total(paging, 9, results)).unwrap();
            let total = if rows.is_empty() { 0 } else { 9 };
            let text = page_bytes(&Page::new(paging, total, Vec::<()>::new()), &rows, holding_text);
            assert_eq!(String::from_utf8(text).unwrap(), String::from_utf8(tree).unwrap());
        }
    }

    #[test]
    fn mints_carry_the_value_and_history_the_sender() {
        let e = NftEvent {
            tx_id: "0x01".into(),
            event_index: 2,
            asset_event_type: "mint".into(),
            sender: None,
            recipient: Some("SP1".into()),
            hex: "0x0100".into(),
            repr: "u0".into(),
        };
        let mint = event_json(&e, true);
        assert_eq!(mint["value"]["repr"], "u0");
        assert!(mint.get("asset_event_type").is_none() && mint.get("sender").is_none());
        assert_eq!(event_json(&e, false)["sender"], Value::Null);
        let hist = event_json(&NftEvent { sender: Some("SP2".into()), ..e }, false);
        assert_eq!(hist["asset_event_type"], "mint");
        assert_eq!(hist["sender"], "SP2");
    }
}
