//! A principal's STX balance (with its lock and pending mempool movement), FT balances
//! (richest first, cursor `balance:asset`), one FT balance, NFT holdings (by asset and value,
//! cursor `value:asset`) and nonces.

use serde_json::json;
use warp::reply::Response;

use super::json;
use crate::address::balances::nonces_json;
use crate::error::{ApiError, In, Rule};
use crate::params::Query;
use crate::tx::clarity_json;
use crate::v3::cursor::{self, FtBalanceCursor, NftBalanceCursor};
use crate::v3::etag::{self, Kind};
use crate::v3::page::{self, paged, Previous};
use crate::v3::params::{self, ADDRESS_PATTERN};
use crate::{AddressReader, ExtendedReader};

/// `AssetIdentifierSchema`.
const ASSET_PATTERN: &str = "^[0123456789ABCDEFGHJKMNPQRSTVWXYZ]{28,41}\\.[a-zA-Z]([a-zA-Z0-9]|[-_]){0,39}::[a-zA-Z]([a-zA-Z0-9]|[-_!?+<>=/*]){0,127}$";

fn is_asset(raw: &str) -> bool {
    const C32: &str = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let Some((contract, token)) = raw.split_once("::") else { return false };
    let Some((addr, name)) = contract.split_once('.') else { return false };
    let named = |s: &str, max: usize, extra: &str| {
        let mut cs = s.chars();
        cs.next().is_some_and(|c| c.is_ascii_alphabetic())
            && s.len() <= max
            && cs.all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
    };
    (28..=41).contains(&addr.len())
        && addr.chars().all(|c| C32.contains(c))
        && named(name, 40, "-_")
        && named(token, 128, "-_!?+<>=/*")
}

pub(super) async fn stx<R: ExtendedReader>(
    r: &R,
    raw: &str,
    inm: Option<&str>,
) -> Result<Response, ApiError> {
    let principal = params::principal(raw)?;
    let tag = etag::value(r, Kind::PrincipalMempool(&principal)).await?;
    etag::cached(tag, inm, async {
        let balance = AddressReader::stx_totals(r, &principal, None).await?.balance();
        let lock = r.stx_lock(&principal).await?.filter(|l| l.amount > 0);
        let locked = lock.as_ref().map_or(0, |l| l.amount);
        let available = balance - locked;
        let d = r.mempool_delta(&principal).await?;
        let mempool = (d.inbound > 0 || d.outbound > 0).then(|| {
            json!({
                "estimated_balance": (available + d.inbound - d.outbound).to_string(),
                "inbound": d.inbound.to_string(),
                "outbound": d.outbound.to_string(),
            })
        });
        json(&json!({
            "balance": balance.to_string(),
            "available": available.to_string(),
            "locked": lock.map(|l| json!({
                "amount": l.amount.to_string(),
                "pox_version": l.pox_version,
                "lock_tx_id": l.lock_tx_id,
                "stacks_lock_height": l.stacks_lock_height,
                "burn_lock_height": l.burn_lock_height,
                "burn_unlock_height": l.burn_unlock_height,
            })),
            "mempool": mempool,
        }))
    })
    .await
}

pub(super) async fn ft<R: ExtendedReader>(
    r: &R,
    raw: &str,
    q: &Query,
    inm: Option<&str>,
) -> Result<Response, ApiError> {
    let principal = params::principal(raw)?;
    let limit = page::limit(q, page::FT_BALANCE)?;
    let from = cursor::read(q, cursor::FT_BALANCE)?.map(FtBalanceCursor::parse);
    let tag = etag::value(r, Kind::Principal(&principal)).await?;
    etag::cached(tag, inm, async {
        let mut rows = r.ft_positions(&principal).await?;
        rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        // Before the cursor: a larger balance, or the same with an earlier asset.
        let before = |(t, b): &(String, u128)| {
            from.as_ref().is_some_and(|c| {
                *b > c.balance || (*b == c.balance && t.as_str() < c.asset_identifier.as_str())
            })
        };
        let page = paged(rows, limit, Previous::UpToLimit, before, |(t, b)| format!("{b}:{t}"));
        json(&page.map(|(t, b)| json!({ "asset_identifier": t, "balance": b.to_string() })))
    })
    .await
}

pub(super) async fn ft_one<R: ExtendedReader>(
    r: &R,
    raw: &str,
    asset: &str,
    inm: Option<&str>,
) -> Result<Response, ApiError> {
    let principal = params::principal(raw)?;
    if !is_asset(asset) {
        return Err(ApiError::schema(In::Path, "asset_identifier", Rule::Pattern(ASSET_PATTERN)));
    }
    let tag = etag::value(r, Kind::Principal(&principal)).await?;
    etag::cached(tag, inm, async {
        let balance = r.ft_balance(&principal, asset).await?;
        json(&json!({ "asset_identifier": asset, "balance": balance.to_string() }))
    })
    .await
}

pub(super) async fn nft<R: ExtendedReader>(
    r: &R,
    raw: &str,
    q: &Query,
    inm: Option<&str>,
) -> Result<Response, ApiError> {
    let principal = params::principal(raw)?;
    let limit = page::limit(q, page::NFT_BALANCE)?;
    let from = cursor::read(q, cursor::NFT_BALANCE)?.map(NftBalanceCursor::parse);
    let tag = etag::value(r, Kind::Principal(&principal)).await?;
    etag::cached(tag, inm, async {
        let mut rows = r.nft_positions(&principal).await?;
        rows.sort();
        // Before the cursor: an earlier asset, or the same with an earlier value.
        let before = |(a, v): &(String, String)| {
            from.as_ref().is_some_and(|c| {
                a.as_str() < c.asset_identifier.as_str()
                    || (*a == c.asset_identifier && v.as_str() < c.value.as_str())
            })
        };
        let page = paged(rows, limit, Previous::UpToLimit, before, |(a, v)| format!("{v}:{a}"));
        json(&page.map(|(a, v)| json!({ "asset_identifier": a, "value": clarity_json(&v) })))
    })
    .await
}

pub(super) async fn nonces<R: ExtendedReader>(
    r: &R,
    raw: &str,
    inm: Option<&str>,
) -> Result<Response, ApiError> {
    const C32: &str = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    // `AddressSchema`: only standard principals have nonces.
    if !((28..=41).contains(&raw.len()) && raw.chars().all(|c| C32.contains(c))) {
        return Err(ApiError::schema(In::Path, "principal", Rule::Pattern(ADDRESS_PATTERN)));
    }
    let tag = etag::value(r, Kind::PrincipalMempool(raw)).await?;
    etag::cached(tag, inm, async {
        let n = nonces_json(&AddressReader::nonces(r, raw, None).await?);
        json(&json!({
            "next_nonce": n["possible_next_nonce"],
            "last_confirmed_nonce": n["last_executed_tx_nonce"],
            "mempool": {
                "last_nonce": n["last_mempool_tx_nonce"],
                "pending_nonces": n["detected_mempool_nonces"],
                "missing_nonces": n["detected_missing_nonces"],
            },
        }))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asset_identifiers_follow_the_schema() {
        assert!(is_asset("SP466FNC0P7JWTNM2R9T199QRZN1MYEDTAR0KP27.miamicoin-token::miamicoin"));
        assert!(!is_asset("SP466FNC0P7JWTNM2R9T199QRZN1MYEDTAR0KP27.miamicoin-token"));
        assert!(!is_asset("stx"));
    }
}
