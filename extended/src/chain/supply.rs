//! `/stx_supply` (all four forms) and `/info/network_block_time(s)`.

use serde_json::json;
use warp::http::header::{HeaderValue, CONTENT_TYPE};
use warp::reply::Response;

use super::reader::{ChainReader, SupplyRecord};
use super::render::{percent, stx, stx_formatted};
use super::{json, tip_cached, Req};
use crate::error::{ApiError, In, Rule};
use crate::headers::with_common_headers;
use crate::reader::TipReader;

/// The supply the protocol reaches in 2050 (µSTX), a constant in the incumbent.
const TOTAL_STX_YEAR_2050_USTX: i128 = 2_318_000_000 * 1_000_000;
/// Target block times (seconds), hard-coded in the incumbent.
const MAINNET_BLOCK_TIME: u64 = 600;
const TESTNET_BLOCK_TIME: u64 = 120;

type Answer = Result<Response, ApiError>;

fn plain(body: String) -> Response {
    let mut res = warp::reply::Reply::into_response(body);
    res.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    with_common_headers(res)
}

async fn supply_at<R: ChainReader>(r: &R, req: &Req) -> Result<SupplyRecord, ApiError> {
    let height = req.query.u64("height")?;
    req.query.bool("unanchored")?;
    r.supply(height).await?.ok_or_else(|| match height {
        Some(_) => ApiError::NotFound("Block not found".into()),
        None => ApiError::NotFound("no chain tip".into()),
    })
}

/// `/extended/v1/stx_supply/...`.
pub(crate) async fn stx_supply<R: TipReader + ChainReader>(
    r: &R,
    req: &Req,
    rest: &[&str],
) -> Option<Answer> {
    Some(match rest {
        [] | [""] => {
            tip_cached(r, req, async {
                let s = supply_at(r, req).await?;
                let unlocked = s.total_ustx;
                Ok(json(&json!({
                    "unlocked_percent": percent(unlocked, s.total_ustx),
                    "total_stx": stx(s.total_ustx),
                    "total_stx_year_2050": stx(TOTAL_STX_YEAR_2050_USTX),
                    "unlocked_stx": stx(unlocked),
                    "block_height": s.block_height,
                })))
            })
            .await
        }
        ["total", "plain"] => {
            tip_cached(r, req, async {
                let s = r.supply(None).await?.unwrap_or_default();
                Ok(plain(stx(s.total_ustx)))
            })
            .await
        }
        ["circulating", "plain"] => {
            tip_cached(r, req, async {
                let s = r.supply(None).await?.unwrap_or_default();
                Ok(plain(stx(s.total_ustx)))
            })
            .await
        }
        ["legacy_format"] => {
            tip_cached(r, req, async {
                let s = supply_at(r, req).await?;
                let unlocked = s.total_ustx;
                Ok(json(&json!({
                    "unlockedPercent": percent(unlocked, s.total_ustx),
                    "totalStacks": stx(s.total_ustx),
                    "totalStacksFormatted": stx_formatted(s.total_ustx),
                    "totalStacksYear2050": stx(TOTAL_STX_YEAR_2050_USTX),
                    "totalStacksYear2050Formatted": stx_formatted(TOTAL_STX_YEAR_2050_USTX),
                    "unlockedSupply": stx(unlocked),
                    "unlockedSupplyFormatted": stx_formatted(unlocked),
                    "blockHeight": s.block_height.to_string(),
                })))
            })
            .await
        }
        _ => return None,
    })
}

/// `/extended/v1/info/...`.
pub(crate) async fn info<R: TipReader>(r: &R, req: &Req, rest: &[&str]) -> Option<Answer> {
    Some(match rest {
        ["network_block_times"] => {
            tip_cached(r, req, async {
                Ok(json(&json!({
                    "mainnet": { "target_block_time": MAINNET_BLOCK_TIME },
                    "testnet": { "target_block_time": TESTNET_BLOCK_TIME },
                })))
            })
            .await
        }
        ["network_block_time", network] => {
            let time = match *network {
                "mainnet" => MAINNET_BLOCK_TIME,
                "testnet" => TESTNET_BLOCK_TIME,
                _ => {
                    let rule = Rule::Constants { n: 2, item: None };
                    return Some(Err(ApiError::schema(In::Path, "network", rule)));
                }
            };
            tip_cached(r, req, async { Ok(json(&json!({ "target_block_time": time }))) }).await
        }
        _ => return None,
    })
}
