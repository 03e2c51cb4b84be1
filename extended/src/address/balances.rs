//! Balances, nonces and FT holders.

use serde_json::{json, Map, Value};

use super::{
    block_ref, cached_json, height_of, principal, principal_etag, AddressReader, MempoolDelta, NonceState,
    StxTotals, UntilBlock,
};
use crate::error::ApiError;
use crate::params::{LimitRule, Page, Query};
use crate::status::chain_tip_etag;

pub(crate) const FT_BALANCES: LimitRule = LimitRule::new(100, 200);
pub(crate) const TOKEN_HOLDERS: LimitRule = LimitRule::new(100, 200);

pub(super) async fn tip_etag<R: AddressReader>(r: &R) -> Result<Option<String>, ApiError> {
    let tip = r.tip().await?;
    Ok(chain_tip_etag(tip.as_ref()).map(|e| e.trim_matches('"').to_string()))
}

pub(super) async fn v1_route<R: AddressReader>(
    r: &R,
    raw: &str,
    what: &str,
    q: &Query,
    inm: Option<String>,
) -> Result<warp::reply::Response, ApiError> {
    let p = principal(raw, "principal")?;
    q.bool("unanchored")?;
    let body = match what {
        "nonces" => {
            let at = if q.get("block_height").is_some() {
                q.u64("block_height")?.map(UntilBlock::Height)
            } else {
                q.get("block_hash").map(|h| block_ref(h, "block_hash")).transpose()?
            };
            let height = height_of(r, at).await?;
            nonces_json(&r.nonces(&p, height).await?)
        }
        _ => {
            let until = q.get("until_block").map(|b| block_ref(b, "until_block")).transpose()?;
            let height = height_of(r, until).await?;
            let totals = r.stx_totals(&p, height).await?;
            let delta = match height {
                None => Some(r.mempool_delta(&p).await?),
                Some(_) => None,
            };
            let stx = v1_stx_json(&totals, delta);
            if what == "stx" {
                stx
            } else {
                let (fts, nfts) = r.asset_totals(&p, height).await?;
                let ft: Map<String, Value> = fts
                    .iter()
                    .map(|a| {
                        let v = json!({
                            "balance": a.balance.to_string(),
                            "total_sent": a.total_sent.to_string(),
                            "total_received": a.total_received.to_string(),
                        });
                        (a.asset_identifier.clone(), v)
                    })
                    .collect();
                let nft: Map<String, Value> = nfts
                    .iter()
                    .map(|a| {
                        let v = json!({
                            "count": a.balance.to_string(),
                            "total_sent": a.total_sent.to_string(),
                            "total_received": a.total_received.to_string(),
                        });
                        (a.asset_identifier.clone(), v)
                    })
                    .collect();
                json!({ "stx": stx, "fungible_tokens": ft, "non_fungible_tokens": nft })
            }
        }
    };
    Ok(cached_json(&body, principal_etag(r, &p, true).await?, inm.as_deref()))
}

/// The v2 `StxBalance` fields, then the mempool ones when asked for.
fn stx_base_json(t: &StxTotals, delta: Option<MempoolDelta>) -> Value {
    let locked = t.locked != 0;
    let mut v = json!({
        "balance": t.balance().to_string(),
        "total_miner_rewards_received": t.total_miner_rewards_received.to_string(),
        "lock_tx_id": if locked { t.lock_tx_id.clone().unwrap_or_default() } else { String::new() },
        "locked": t.locked.to_string(),
        "lock_height": if locked { t.lock_height } else { 0 },
        "burnchain_lock_height": if locked { t.burnchain_lock_height } else { 0 },
        "burnchain_unlock_height": if locked { t.burnchain_unlock_height } else { 0 },
    });
    if let Some(d) = delta {
        v["estimated_balance"] = json!((t.balance() + d.inbound - d.outbound).to_string());
        v["pending_balance_inbound"] = json!(d.inbound.to_string());
        v["pending_balance_outbound"] = json!(d.outbound.to_string());
    }
    v
}

/// The v1 STX balance without mempool figures: the live updates' `address_balance_update`.
pub fn stx_balance_json(t: &StxTotals) -> Value {
    v1_stx_json(t, None)
}

fn v1_stx_json(t: &StxTotals, delta: Option<MempoolDelta>) -> Value {
    let mut v = stx_base_json(t, delta);
    v["total_sent"] = json!(t.total_sent.to_string());
    v["total_received"] = json!(t.total_received.to_string());
    v["total_fees_sent"] = json!(t.total_fees_sent.to_string());
    v
}

/// The incumbent's nonce report: missing nonces only between the last executed and the last
/// pending one, both known, highest first.
pub(crate) fn nonces_json(n: &NonceState) -> Value {
    let possible_next = match (n.last_executed, n.last_mempool) {
        (None, None) => 0,
        (a, b) => a.max(b).unwrap_or(0) + 1,
    };
    let (mut missing, mut in_mempool) = (Vec::new(), Vec::new());
    if let (Some(exec), Some(mp)) = (n.last_executed, n.last_mempool) {
        if mp > exec + 1 {
            for nonce in (exec + 1..mp).rev() {
                if n.mempool_nonces.contains(&nonce) {
                    in_mempool.push(nonce);
                } else {
                    missing.push(nonce);
                }
            }
        }
    }
    json!({
        "last_mempool_tx_nonce": n.last_mempool,
        "last_executed_tx_nonce": n.last_executed,
        "possible_next_nonce": possible_next,
        "detected_missing_nonces": missing,
        "detected_mempool_nonces": in_mempool,
    })
}

pub(super) async fn v2_route<R: AddressReader>(
    r: &R,
    raw: &str,
    what: &str,
    q: &Query,
    inm: Option<String>,
) -> Result<warp::reply::Response, ApiError> {
    let p = principal(raw, "principal")?;
    let with_mempool = what == "stx" && q.bool("include_mempool")?.unwrap_or(false);
    let body = if what == "stx" {
        let totals = r.stx_totals(&p, None).await?;
        let delta = if with_mempool { Some(r.mempool_delta(&p).await?) } else { None };
        stx_base_json(&totals, delta)
    } else {
        let paging = q.paging(FT_BALANCES)?;
        let (total, rows) = r.ft_balances(&p, None, paging.limit, paging.offset).await?;
        let results = rows.into_iter().map(|(token, b)| json!({ "token": token, "balance": b.to_string() }));
        serde_json::to_value(Page::first_row_total(paging, total, results.collect())).unwrap_or_default()
    };
    Ok(cached_json(&body, principal_etag(r, &p, with_mempool).await?, inm.as_deref()))
}

pub(super) async fn ft_balance<R: AddressReader>(
    r: &R,
    raw: &str,
    token: &str,
    inm: Option<String>,
) -> Result<warp::reply::Response, ApiError> {
    let p = principal(raw, "principal")?;
    let (_, rows) = r.ft_balances(&p, Some(token), 1, 0).await?;
    let balance = rows.first().map(|(_, b)| *b).unwrap_or(0);
    Ok(cached_json(
        &json!({ "balance": balance.to_string() }),
        principal_etag(r, &p, false).await?,
        inm.as_deref(),
    ))
}

pub(super) async fn ft_holders<R: AddressReader>(
    r: &R,
    token: &str,
    q: &Query,
    inm: Option<String>,
) -> Result<warp::reply::Response, ApiError> {
    let paging = q.paging(TOKEN_HOLDERS)?;
    let (total, supply, holders) = r.ft_holders(token, paging.limit, paging.offset).await?;
    let results: Vec<Value> =
        holders.iter().map(|h| json!({ "address": h.address, "balance": h.balance.to_string() })).collect();
    // The incumbent reads the supply and the count from the page's first row: both are 0 past
    // the end.
    let (supply, total) = if results.is_empty() { (0, 0) } else { (supply, total) };
    let body = json!({
        "total_supply": supply.to_string(),
        "limit": paging.limit,
        "offset": paging.offset,
        "total": total,
        "results": results,
    });
    Ok(cached_json(&body, tip_etag(r).await?, inm.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_nonces_follow_the_incumbents_rules() {
        let n = NonceState { last_executed: Some(3), last_mempool: Some(7), mempool_nonces: vec![5, 7] };
        let v = nonces_json(&n);
        assert_eq!(v["possible_next_nonce"], 8);
        assert_eq!(v["detected_missing_nonces"], json!([6, 4]));
        assert_eq!(v["detected_mempool_nonces"], json!([5]));
        // No executed tx yet: a gap from nonce 0 is never reported.
        let v =
            nonces_json(&NonceState { last_executed: None, last_mempool: Some(4), mempool_nonces: vec![4] });
        assert_eq!(v["possible_next_nonce"], 5);
        assert_eq!(v["detected_missing_nonces"], json!([]));
        assert_eq!(nonces_json(&NonceState::default())["possible_next_nonce"], 0);
    }

    #[test]
    fn lock_fields_are_zero_when_nothing_is_locked() {
        let t = StxTotals {
            total_received: 100,
            total_sent: 10,
            total_fees_sent: 5,
            lock_tx_id: Some("0xab".into()),
            lock_height: 9,
            ..Default::default()
        };
        let v = v1_stx_json(&t, Some(MempoolDelta { inbound: 3, outbound: 8 }));
        assert_eq!(v["balance"], "85");
        assert_eq!(v["estimated_balance"], "80");
        assert_eq!(v["lock_tx_id"], "");
        assert_eq!(v["lock_height"], 0);
        assert!(stx_base_json(&t, None).get("estimated_balance").is_none());
    }
}
