//! `/extended/v2/pox/cycles`, `/cycles/{n}`, `/cycles/{n}/signers`, `/cycles/{n}/signers/{key}`
//! and `/cycles/{n}/signers/{key}/stackers`: a cycle's signer set (from the block that announced
//! its reward set) joined with the pox-4 stackers that stack under each key.

use std::sync::Arc;

use serde_json::{json, Value as Json};
use warp::reply::Response;
use warp::{Filter, Rejection, Reply};

use super::reader::{CycleSigner, CycleStacker, PoxCycleReader, PoxCycleRecord};
use crate::error::{ApiError, In, Rule};
use crate::params::{query, LimitRule, Page, Paging, Query};
use crate::reader::TipReader;
use crate::reply::json_with_etag;
use crate::tx::{js_number, tip_etag};

pub const CYCLE_LIMIT: LimitRule = LimitRule::new(20, 60);
pub const SIGNER_LIMIT: LimitRule = LimitRule::new(100, 250);
pub const STACKER_LIMIT: LimitRule = LimitRule::new(100, 200);

pub(crate) fn total_stacked(c: &PoxCycleRecord) -> u128 {
    c.signers.iter().map(|s| s.stacked_amount).sum()
}

fn cycle_json(c: &PoxCycleRecord) -> Json {
    json!({
        "block_height": c.block_height,
        "index_block_hash": c.index_block_hash,
        "cycle_number": c.cycle_number,
        "total_weight": c.signers.iter().map(|s| s.weight).sum::<u64>(),
        "total_stacked_amount": total_stacked(c).to_string(),
        "total_signers": c.signers.len(),
    })
}

/// `part / whole * 100` in JavaScript numbers, as the incumbent stores the percentages.
pub(crate) fn percent(part: f64, whole: f64) -> Json {
    if whole == 0.0 {
        return json!(0);
    }
    js_number(part / whole * 100.0)
}

pub(crate) fn percent_of_scaled(scaled: f64, whole: f64) -> Json {
    if whole == 0.0 {
        return json!(0);
    }
    js_number(scaled / whole)
}

fn signer_json(c: &PoxCycleRecord, s: &CycleSigner, stackers: &[CycleStacker]) -> Json {
    let total_weight: u64 = c.signers.iter().map(|s| s.weight).sum();
    let under = |pooled: bool| {
        stackers
            .iter()
            .filter(|k| k.pooled == pooled && k.signer_key.as_deref() == Some(&s.signing_key))
            .count()
    };
    json!({
        "signing_key": s.signing_key,
        "signer_address": s.signer_address,
        "weight": s.weight,
        "stacked_amount": s.stacked_amount.to_string(),
        "weight_percent": percent(s.weight as f64, total_weight as f64),
        // The incumbent multiplies the amount first (`amount * 100 / total`), the weight after.
        "stacked_amount_percent": percent_of_scaled(s.stacked_amount as f64 * 100.0, total_stacked(c) as f64),
        "solo_stacker_count": under(false),
        "pooled_stacker_count": under(true),
    })
}

/// The incumbent's signer order: weight, then stacked amount (both descending), then key.
fn sorted_signers(c: &PoxCycleRecord) -> Vec<&CycleSigner> {
    let mut v: Vec<&CycleSigner> = c.signers.iter().collect();
    v.sort_by(|a, b| {
        b.weight
            .cmp(&a.weight)
            .then(b.stacked_amount.cmp(&a.stacked_amount))
            .then(a.signing_key.cmp(&b.signing_key))
    });
    v
}

fn page(paging: Paging, total: u64, results: Vec<Json>) -> Json {
    serde_json::to_value(Page::new(paging, total, results)).unwrap_or_default()
}

fn cycle_param(raw: &str) -> Result<u64, ApiError> {
    raw.parse::<u64>().map_err(|_| ApiError::schema(In::Path, "cycle_number", Rule::Integer))
}

fn signer_key(raw: &str) -> String {
    let hex = raw.strip_prefix("0x").unwrap_or(raw);
    format!("0x{}", hex.to_ascii_lowercase())
}

/// The cycle `raw` names; missing, the incumbent's 404 `message`: its generic "Not found" for
/// the cycle itself, "PoX cycle not found" under it (signers, a signer, stackers).
async fn cycle_or_404<R: PoxCycleReader>(
    r: &R,
    raw: &str,
    missing: &str,
) -> Result<PoxCycleRecord, ApiError> {
    let n = cycle_param(raw)?;
    r.pox_cycle(n).await?.ok_or_else(|| ApiError::NotFound(missing.into()))
}

const CYCLE_MISSING: &str = "PoX cycle not found";

/// A page's `total`: the incumbent reads it from the page's first row, so a page past the end
/// has 0.
fn page_total(total: u64, results: &[Json]) -> u64 {
    if results.is_empty() {
        0
    } else {
        total
    }
}

async fn answer<R: PoxCycleReader>(r: &R, segs: &[String], q: &Query) -> Option<Result<Json, ApiError>> {
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    let res = async {
        Ok(match s.as_slice() {
            [] => {
                let paging = q.paging(CYCLE_LIMIT)?;
                let (total, cycles) = r.pox_cycles(paging).await?;
                let results: Vec<Json> = cycles.iter().map(cycle_json).collect();
                page(paging, page_total(total, &results), results)
            }
            [n] => cycle_json(&cycle_or_404(r, n, "Not found").await?),
            [n, "signers"] => {
                let paging = q.paging(SIGNER_LIMIT)?;
                let c = cycle_or_404(r, n, CYCLE_MISSING).await?;
                let stackers = r.cycle_stackers(c.cycle_number).await?;
                let all = sorted_signers(&c);
                let results: Vec<Json> = all
                    .iter()
                    .skip(usize::try_from(paging.offset).unwrap_or(usize::MAX))
                    .take(paging.limit as usize)
                    .map(|s| signer_json(&c, s, &stackers))
                    .collect();
                page(paging, page_total(all.len() as u64, &results), results)
            }
            [n, "signers", key] => {
                let c = cycle_or_404(r, n, CYCLE_MISSING).await?;
                let key = signer_key(key);
                let s = c
                    .signers
                    .iter()
                    .find(|s| s.signing_key == key)
                    .ok_or_else(|| ApiError::NotFound("Not found".into()))?;
                let stackers = r.cycle_stackers(c.cycle_number).await?;
                signer_json(&c, s, &stackers)
            }
            [n, "signers", key, "stackers"] => {
                let paging = q.paging(STACKER_LIMIT)?;
                let c = cycle_or_404(r, n, CYCLE_MISSING).await?;
                let key = signer_key(key);
                if !c.signers.iter().any(|s| s.signing_key == key) {
                    return Err(ApiError::NotFound("PoX cycle signer not found".into()));
                }
                let mut under: Vec<CycleStacker> = r
                    .cycle_stackers(c.cycle_number)
                    .await?
                    .into_iter()
                    .filter(|k| k.signer_key.as_deref() == Some(&key))
                    .collect();
                under.sort_by_key(|s| std::cmp::Reverse(s.locked));
                let results: Vec<Json> = under
                    .iter()
                    .skip(usize::try_from(paging.offset).unwrap_or(usize::MAX))
                    .take(paging.limit as usize)
                    .map(|k| {
                        json!({
                            "stacker_address": k.stacker,
                            "stacked_amount": k.locked.to_string(),
                            "pox_address": k.pox_addr,
                            "stacker_type": if k.pooled { "pooled" } else { "solo" },
                        })
                    })
                    .collect();
                page(paging, page_total(under.len() as u64, &results), results)
            }
            _ => return Err(ApiError::NotFound(String::new())),
        })
    }
    .await;
    match res {
        Err(ApiError::NotFound(m)) if m.is_empty() => None,
        other => Some(other),
    }
}

pub fn routes<R: TipReader + PoxCycleReader>(
    reader: Arc<R>,
) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    warp::get()
        .and(warp::path!("extended" / "v2" / "pox" / "cycles" / ..))
        .and(warp::path::tail())
        .and(query())
        .and(warp::header::optional::<String>("if-none-match"))
        .and_then(move |tail: warp::path::Tail, q: Query, inm: Option<String>| {
            let r = reader.clone();
            async move {
                let segs: Vec<String> =
                    tail.as_str().split('/').filter(|s| !s.is_empty()).map(String::from).collect();
                let etag = match tip_etag(r.as_ref(), inm.as_deref()).await {
                    Ok(Err(not_modified)) => return Ok::<Response, Rejection>(not_modified),
                    Ok(Ok(etag)) => etag,
                    Err(e) => return Err(warp::reject::custom(e)),
                };
                match answer(r.as_ref(), &segs, &q).await {
                    None => Err(warp::reject::not_found()),
                    Some(Ok(body)) => Ok(json_with_etag(&body, etag.as_deref())),
                    Some(Err(e)) => Err(warp::reject::custom(e)),
                }
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signer(key: &str, weight: u64, amount: u128) -> CycleSigner {
        CycleSigner { signing_key: key.into(), signer_address: "ST1".into(), weight, stacked_amount: amount }
    }

    #[test]
    fn signers_have_the_incumbents_percentages_and_order() {
        // The epoch-3-transition oracle's cycle 12.
        let c = PoxCycleRecord {
            cycle_number: 12,
            signers: vec![
                signer("0x02aa", 3, 457500900000000000),
                signer("0x02bb", 1, 228750450000000000),
                signer("0x03cc", 5, 686251350000000000),
            ],
            ..Default::default()
        };
        let order: Vec<&str> = sorted_signers(&c).iter().map(|s| s.signing_key.as_str()).collect();
        assert_eq!(order, ["0x03cc", "0x02aa", "0x02bb"]);
        let stackers =
            [CycleStacker { stacker: "ST2".into(), signer_key: Some("0x03cc".into()), ..Default::default() }];
        let j = signer_json(&c, &c.signers[2], &stackers);
        assert_eq!(j["weight_percent"], json!(55.55555555555556));
        assert_eq!(j["stacked_amount_percent"], json!(50));
        assert_eq!(j["solo_stacker_count"], 1);
        assert_eq!(
            signer_json(&c, &c.signers[0], &stackers)["stacked_amount_percent"],
            json!(33.333333333333336)
        );
        assert_eq!(cycle_json(&c)["total_stacked_amount"], "1372502700000000000");
        assert!(cycle_param("abc").is_err());
    }
}
