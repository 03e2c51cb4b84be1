//! PoX events: `/extended/v1/{pox2,pox3,pox4}/events`, `/{pox}/tx/{tx_id}` and
//! `/{pox}/stacker/{principal}`, the decoded `print` events of the boot PoX contracts, in the
//! incumbent's `PoxEvent` shape (its `data` members differ per event name).

pub(crate) mod cycles;
mod legacy;
use ledger_read::pox as reader;

pub use reader::{
    CycleSigner, CycleStacker, PoolDelegation, PoxCycleReader, PoxCycleRecord, PoxEventRecord, PoxReader,
};

use std::str::FromStr;
use std::sync::Arc;

use serde_json::{json, Map, Value as Json};
use stacks_codec::address::Principal;
use warp::reply::Response;
use warp::{Filter, Rejection, Reply};

use crate::error::{ApiError, In, Rule};
use crate::handler::{get, if_none_match, reply, Get};
use crate::params::{LimitRule, Query};
use crate::reader::TipReader;
use crate::reply::json_with_etag;
use crate::tx::{parse_tx_id, tip_etag};

/// The incumbent's `Pox2Event` limits.
pub const POX_EVENT_LIMIT: LimitRule = LimitRule::new(96, 200);

/// The incumbent's `Stacker` limits (pool delegations).
pub const STACKER_LIMIT: LimitRule = LimitRule::new(100, 200);

/// How the incumbent fills one `data` member when the print lacks it.
#[derive(Clone, Copy)]
enum Missing {
    /// Omitted from the JSON (an `undefined` member).
    Omit,
    /// `null` (the cycle ids: `?.toString() ?? null`).
    Null,
}

use Missing::{Null, Omit};

/// Per event name, the `data` members the incumbent serves, in its order, with the print key
/// each comes from.
fn data_members(name: &str) -> &'static [(&'static str, &'static str, Missing)] {
    const CYCLES: [(&str, &str, Missing); 2] =
        [("end_cycle_id", "end-cycle-id", Null), ("start_cycle_id", "start-cycle-id", Null)];
    match name {
        "handle-unlock" => &[
            ("first_cycle_locked", "first-cycle-locked", Omit),
            ("first_unlocked_cycle", "first-unlocked-cycle", Omit),
        ],
        "stack-stx" => &[
            ("lock_amount", "lock-amount", Omit),
            ("lock_period", "lock-period", Omit),
            ("start_burn_height", "start-burn-height", Omit),
            ("unlock_burn_height", "unlock-burn-height", Omit),
            ("signer_key", "signer-key", Omit),
            CYCLES[0],
            CYCLES[1],
        ],
        "stack-increase" => &[
            ("increase_by", "increase-by", Omit),
            ("total_locked", "total-locked", Omit),
            ("signer_key", "signer-key", Omit),
            CYCLES[0],
            CYCLES[1],
        ],
        "stack-extend" => &[
            ("extend_count", "extend-count", Omit),
            ("unlock_burn_height", "unlock-burn-height", Omit),
            ("signer_key", "signer-key", Omit),
            CYCLES[0],
            CYCLES[1],
        ],
        "delegate-stx" => &[
            ("amount_ustx", "amount-ustx", Omit),
            ("delegate_to", "delegate-to", Omit),
            ("unlock_burn_height", "unlock-burn-height", Omit),
            CYCLES[0],
            CYCLES[1],
        ],
        "delegate-stack-stx" => &[
            ("lock_amount", "lock-amount", Omit),
            ("unlock_burn_height", "unlock-burn-height", Omit),
            ("start_burn_height", "start-burn-height", Omit),
            ("lock_period", "lock-period", Omit),
            ("delegator", "delegator", Omit),
            CYCLES[0],
            CYCLES[1],
        ],
        "delegate-stack-increase" => &[
            ("increase_by", "increase-by", Omit),
            ("total_locked", "total-locked", Omit),
            ("delegator", "delegator", Omit),
            CYCLES[0],
            CYCLES[1],
        ],
        "delegate-stack-extend" => &[
            ("unlock_burn_height", "unlock-burn-height", Omit),
            ("extend_count", "extend-count", Omit),
            ("delegator", "delegator", Omit),
            CYCLES[0],
            CYCLES[1],
        ],
        "stack-aggregation-commit" | "stack-aggregation-commit-indexed" => &[
            ("reward_cycle", "reward-cycle", Omit),
            ("amount_ustx", "amount-ustx", Omit),
            ("signer_key", "signer-key", Omit),
            CYCLES[0],
            CYCLES[1],
        ],
        "stack-aggregation-increase" => &[
            ("reward_cycle", "reward-cycle", Omit),
            ("amount_ustx", "amount-ustx", Omit),
            CYCLES[0],
            CYCLES[1],
        ],
        "revoke-delegate-stx" => &[("delegate_to", "delegate-to", Omit), CYCLES[0], CYCLES[1]],
        _ => &[],
    }
}

/// A Clarity repr as the incumbent serves the decoded value: uints as decimal text, principals
/// without the quote, buffers as hex, `(some x)` as x and `none` as absent.
fn repr_value(repr: &str) -> Option<String> {
    let r = repr.trim();
    if r == "none" {
        return None;
    }
    if let Some(inner) = r.strip_prefix("(some ").and_then(|s| s.strip_suffix(')')) {
        return repr_value(inner);
    }
    if let Some(n) = r.strip_prefix('u').filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) {
        return Some(n.to_string());
    }
    Some(r.strip_prefix('\'').unwrap_or(r).to_string())
}

/// `0x` + version byte + hash bytes of a stored `(tuple (hashbytes ..) (version ..))` PoX
/// address, as the incumbent serves `pox_addr_raw`.
fn pox_addr_raw(tuple_hex: &str) -> String {
    use stacks_codec::clarity::Value;
    let tuple = stacks_codec::decode_hex(tuple_hex).ok().and_then(|b| Value::deserialize(&b).ok());
    let Some(Value::Tuple(fields)) = tuple else { return tuple_hex.to_string() };
    let field = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v);
    match (field("version"), field("hashbytes")) {
        (Some(Value::Buffer(v)), Some(Value::Buffer(h))) => format!("0x{}{}", hex::encode(v), hex::encode(h)),
        _ => tuple_hex.to_string(),
    }
}

/// The print carries the stacker's state *before* the operation; the incumbent serves it
/// after: `(locked, balance, burnchain_unlock_height)` patched per event name.
fn state_after(e: &PoxEventRecord, stored: &Map<String, Json>) -> (String, String, u64) {
    let num = |k: &str| {
        stored.get(k).and_then(Json::as_str).and_then(repr_value).and_then(|v| v.parse::<u128>().ok())
    };
    let locked = e.locked.parse::<u128>().unwrap_or_default();
    let balance = e.balance.parse::<u128>().unwrap_or_default();
    let unlock =
        |default: u64| num("unlock-burn-height").and_then(|v| u64::try_from(v).ok()).unwrap_or(default);
    let (locked, balance, height) = match e.name.as_str() {
        "stack-stx" | "delegate-stack-stx" => {
            let amount = num("lock-amount").unwrap_or_default();
            (amount, balance.saturating_sub(amount), unlock(e.burnchain_unlock_height))
        }
        "stack-increase" | "delegate-stack-increase" => {
            let by = num("increase-by").unwrap_or_default();
            (locked.saturating_add(by), balance.saturating_sub(by), e.burnchain_unlock_height)
        }
        "stack-extend" | "delegate-stack-extend" => (locked, balance, unlock(e.burnchain_unlock_height)),
        _ => (locked, balance, e.burnchain_unlock_height),
    };
    (locked.to_string(), balance.to_string(), height)
}

/// The incumbent's `PoxEvent` JSON.
pub fn pox_event_json(e: &PoxEventRecord) -> Json {
    let stored: Map<String, Json> = serde_json::from_str(&e.data).unwrap_or_default();
    let (locked, balance, unlock_height) = state_after(e, &stored);
    let mut data = Map::new();
    for (member, key, missing) in data_members(&e.name) {
        match stored.get(*key).and_then(Json::as_str).and_then(repr_value) {
            Some(v) => {
                data.insert((*member).into(), v.into());
            }
            None => {
                if let Null = missing {
                    data.insert((*member).into(), Json::Null);
                }
            }
        }
    }
    json!({
        "block_height": e.block_height,
        "tx_id": e.tx_id,
        "tx_index": e.tx_index,
        "event_index": e.event_index,
        "stacker": e.stacker,
        "locked": locked,
        "balance": balance,
        "burnchain_unlock_height": unlock_height.to_string(),
        "pox_addr": e.pox_addr,
        "pox_addr_raw": e.pox_addr_raw.as_deref().map(pox_addr_raw),
        "name": e.name,
        "data": data,
    })
}

/// `pox2` → `pox-2`; other names are the invalid-parameter error.
fn contract(pox: &str) -> Result<&'static str, ApiError> {
    match pox {
        "pox2" => Ok("pox-2"),
        "pox3" => Ok("pox-3"),
        "pox4" => Ok("pox-4"),
        _ => Err(ApiError::schema(In::Path, "pox", Rule::Constants { n: 3, item: None })),
    }
}

fn results(events: &[PoxEventRecord]) -> Json {
    json!({ "results": events.iter().map(pox_event_json).collect::<Vec<_>>() })
}

enum Route {
    Events(Query),
    Tx(String),
    Stacker(String),
    Delegations(String, Query),
}

/// The incumbent's `PoolDelegation` JSON: `pox_addr` and `burn_block_unlock_height` are left
/// out when absent.
fn delegation_json(d: &PoolDelegation) -> Json {
    let mut m = Map::new();
    m.insert("stacker".into(), d.stacker.clone().into());
    if let Some(a) = &d.pox_addr {
        m.insert("pox_addr".into(), a.clone().into());
    }
    m.insert("amount_ustx".into(), d.amount_ustx.clone().into());
    if let Some(h) = d.burn_block_unlock_height {
        m.insert("burn_block_unlock_height".into(), h.into());
    }
    m.insert("block_height".into(), d.block_height.into());
    m.insert("tx_id".into(), d.tx_id.clone().into());
    Json::Object(m)
}

async fn delegations<R: PoxReader>(r: &R, contract: &str, pool: &str, q: &Query) -> Result<Json, ApiError> {
    Principal::from_str(pool)
        .map_err(|_| ApiError::invalid("pool_principal", format!("invalid STX address \"{pool}\"")))?;
    let paging = q.paging(STACKER_LIMIT)?;
    let at_least_one = |name: &'static str| -> Result<Option<u64>, ApiError> {
        match q.u64(name)? {
            Some(0) => Err(ApiError::schema(In::Query, name, Rule::Min(1))),
            v => Ok(v),
        }
    };
    let after_block = at_least_one("after_block")?.unwrap_or(0);
    let height = at_least_one("height")?;
    // `unanchored` only moves the incumbent's tip to the microblock stream's height, where it
    // finds no block: we answer from the anchored tip (docs/extended-api.md).
    q.bool("unanchored")?;
    let (total, page) = r
        .pool_delegations(contract, pool, height, after_block, paging)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no block at height: {}", height.unwrap_or(0))))?;
    // The incumbent reads `total` from the page's first row: a page past the end has 0.
    let total = if page.is_empty() { 0 } else { total };
    Ok(json!({
        "limit": paging.limit,
        "offset": paging.offset,
        "total": total,
        "results": page.iter().map(delegation_json).collect::<Vec<_>>(),
    }))
}

async fn answer<R: PoxReader>(
    r: &R,
    pox: &str,
    route: Route,
    etag: Option<String>,
) -> Result<Response, ApiError> {
    let contract = contract(pox)?;
    let body = match route {
        Route::Events(q) => {
            let paging = q.paging(POX_EVENT_LIMIT)?;
            let events = r.pox_events(contract, paging).await?;
            json!({
                "limit": paging.limit,
                "offset": paging.offset,
                "results": events.iter().map(pox_event_json).collect::<Vec<_>>(),
            })
        }
        Route::Tx(raw) => {
            let id = parse_tx_id("tx_id", &raw)?.unwrap_or_else(|| format!("0x{}", raw.to_ascii_lowercase()));
            let events = r
                .pox_events_of_tx(contract, &id)
                .await?
                .ok_or_else(|| ApiError::NotFound("could not find transaction by ID".into()))?;
            results(&events)
        }
        Route::Stacker(p) => {
            Principal::from_str(&p)
                .map_err(|_| ApiError::invalid("principal", format!("invalid STX address \"{p}\"")))?;
            results(&r.pox_events_of_stacker(contract, &p).await?)
        }
        Route::Delegations(pool, q) => delegations(r, contract, &pool, &q).await?,
    };
    Ok(json_with_etag(&body, etag.as_deref()))
}

async fn handle<R: TipReader + PoxReader>(
    r: Arc<R>,
    pox: String,
    route: Route,
    inm: Option<String>,
) -> Result<Response, Rejection> {
    let res = async {
        match tip_etag(r.as_ref(), inm.as_deref()).await? {
            Err(not_modified) => Ok(not_modified),
            Ok(etag) => answer(r.as_ref(), &pox, route, etag).await,
        }
    }
    .await;
    reply(res)
}

pub fn routes<R: TipReader + PoxReader + PoxCycleReader>(
    reader: Arc<R>,
) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    let reader_for_cycles = reader.clone();
    let with_reader = crate::handler::with_reader(reader.clone());
    let inm = if_none_match;
    let events = warp::get()
        .and(warp::path!("extended" / "v1" / String / "events"))
        .and(get(reader.clone()))
        .and_then(|pox: String, Get { reader: r, query: q, inm }: Get<R>| async move {
            // The incumbent's router tries the static `/extended/v1/tx/events` first, so its
            // errors are that route's, never an invalid `pox`.
            if pox == "tx" {
                return Err(warp::reject::not_found());
            }
            handle(r, pox, Route::Events(q), inm).await
        });
    let tx = warp::get()
        .and(warp::path!("extended" / "v1" / String / "tx" / String))
        .and(with_reader.clone())
        .and(inm())
        .and_then(|pox: String, id: String, r: Arc<R>, inm: Option<String>| {
            handle(r, pox, Route::Tx(id), inm)
        });
    let stacker = warp::get()
        .and(warp::path!("extended" / "v1" / String / "stacker" / String))
        .and(with_reader.clone())
        .and(inm())
        .and_then(|pox: String, p: String, r: Arc<R>, inm: Option<String>| {
            handle(r, pox, Route::Stacker(p), inm)
        });
    let delegations = warp::get()
        .and(warp::path!("extended" / "v1" / String / String / "delegations"))
        .and(get(reader.clone()))
        .and_then(|pox: String, pool: String, Get { reader: r, query: q, inm }: Get<R>| {
            handle(r, pox, Route::Delegations(pool, q), inm)
        });
    events.or(tx).or(stacker).or(delegations).or(cycles::routes(reader_for_cycles)).or(legacy::routes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Paging;
    use crate::reader::ReadError;

    #[test]
    fn data_follows_the_incumbents_members_per_name() {
        let e = PoxEventRecord {
            name: "stack-extend".into(),
            burnchain_unlock_height: 150,
            data: json!({
                "extend-count": "u1", "unlock-burn-height": "u150", "pox-addr": "(tuple)",
                "signer-key": "(some 0x02aa)", "end-cycle-id": "(some u15)", "start-cycle-id": "u14",
            })
            .to_string(),
            ..Default::default()
        };
        let j = pox_event_json(&e);
        assert_eq!(
            j["data"],
            json!({"extend_count": "1", "unlock_burn_height": "150", "signer_key": "0x02aa", "end_cycle_id": "15", "start_cycle_id": "14"})
        );
        assert_eq!(j["burnchain_unlock_height"], "150");
        let d = PoxEventRecord { name: "delegate-stx".into(), data: json!({"amount-ustx": "u5", "delegate-to": "'SP000000000000000000002Q6VF78", "unlock-burn-height": "none"}).to_string(), ..Default::default() };
        assert_eq!(
            pox_event_json(&d)["data"],
            json!({"amount_ustx": "5", "delegate_to": "SP000000000000000000002Q6VF78", "end_cycle_id": null, "start_cycle_id": null})
        );
    }

    /// A pool with `n` delegations, paged as the store pages them.
    struct Pool(u64);

    impl PoxReader for Pool {
        async fn pox_events(&self, _: &str, _: Paging) -> Result<Vec<PoxEventRecord>, ReadError> {
            Ok(vec![])
        }
        async fn pox_events_of_tx(&self, _: &str, _: &str) -> Result<Option<Vec<PoxEventRecord>>, ReadError> {
            Ok(None)
        }
        async fn pox_events_of_stacker(&self, _: &str, _: &str) -> Result<Vec<PoxEventRecord>, ReadError> {
            Ok(vec![])
        }
        async fn pool_delegations(
            &self,
            _: &str,
            _: &str,
            _: Option<u64>,
            _: u64,
            paging: Paging,
        ) -> Result<Option<(u64, Vec<PoolDelegation>)>, ReadError> {
            let rows = (paging.offset..self.0)
                .take(paging.limit as usize)
                .map(|i| PoolDelegation { stacker: format!("ST{i}"), ..Default::default() })
                .collect();
            Ok(Some((self.0, rows)))
        }
    }

    #[tokio::test]
    async fn a_delegations_page_past_the_end_has_total_0() {
        let pool = "ST000000000000000000002AMW42H";
        let page = |q: &str| {
            let q = Query::parse(q);
            async move { delegations(&Pool(3), "pox-4", pool, &q).await.unwrap() }
        };
        let last = page("offset=2").await;
        assert_eq!((last["total"].as_u64(), last["results"].as_array().map(Vec::len)), (Some(3), Some(1)));
        // The incumbent reads `total` from the page's first row.
        let past = page("offset=3").await;
        assert_eq!((past["total"].as_u64(), past["results"].as_array().map(Vec::len)), (Some(0), Some(0)));
    }

    #[test]
    fn only_known_pox_versions() {
        assert_eq!(contract("pox4").unwrap(), "pox-4");
        assert!(matches!(contract("pox9"), Err(ApiError::InvalidParam { param: "pox", .. })));
    }
}
