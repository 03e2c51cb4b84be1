//! `/extended/v1/contract/*` and `/extended/v2/smart-contracts/*`: contracts, their logs and
//! deployment status.

use ledger_read::contract as reader;

use std::sync::Arc;

use serde_json::{json, Map, Value};
use warp::{Filter, Rejection, Reply};

pub use reader::{ContractLog, ContractReader, DeployStatus, LogKey, SmartContract};

use crate::address::{cached_json, principal, principal_in};
use crate::error::{ApiError, In, Rule};
use crate::handler::{get, reject, Get};
use crate::params::{LimitRule, Query};
use crate::status::chain_tip_etag;

pub(crate) const CONTRACTS: LimitRule = LimitRule::new(20, 50);
pub(crate) const CONTRACT_EVENTS: LimitRule = LimitRule::new(20, 50);
pub(crate) const LOGS: LimitRule = LimitRule::new(20, 100);
/// The incumbent's microblock sequence for anchored-block transactions, in cursors.
const ANCHORED: u64 = i32::MAX as u64;

pub fn routes<R: ContractReader>(
    reader: Arc<R>,
) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    // `by_trait` is a contract id position too: one route, so that its own errors win.
    let by_id = warp::get()
        .and(warp::path!("extended" / "v1" / "contract" / String))
        .and(get(reader.clone()))
        .and_then(|id: String, Get { reader: r, query: q, inm }: Get<R>| async move {
            if id == "by_trait" {
                by_trait(&*r, &q, inm).await.map_err(reject)
            } else {
                contract(&*r, &id, inm).await.map_err(reject)
            }
        });
    let events = warp::get()
        .and(warp::path!("extended" / "v1" / "contract" / String / "events"))
        .and(get(reader.clone()))
        .and_then(|id: String, Get { reader: r, query: q, inm }: Get<R>| async move {
            v1_events(&*r, &id, &q, inm).await.map_err(reject)
        });
    let status = warp::get()
        .and(warp::path!("extended" / "v2" / "smart-contracts" / "status"))
        .and(get(reader.clone()))
        .and_then(|Get { reader: r, query: q, inm }: Get<R>| async move {
            deploy_status(&*r, &q, inm).await.map_err(reject)
        });
    let logs = warp::get()
        .and(warp::path!("extended" / "v2" / "smart-contracts" / String / "logs"))
        .and(get(reader.clone()))
        .and_then(|id: String, Get { reader: r, query: q, inm }: Get<R>| async move {
            v2_logs(&*r, &id, &q, inm).await.map_err(reject)
        });
    by_id.or(events).or(status).or(logs)
}

async fn tip_etag<R: ContractReader>(r: &R) -> Result<Option<String>, ApiError> {
    let tip = r.tip().await?;
    Ok(chain_tip_etag(tip.as_ref()).map(|e| e.trim_matches('"').to_string()))
}

fn contract_json(c: &SmartContract) -> Value {
    json!({
        "tx_id": c.tx_id,
        "canonical": c.canonical,
        "contract_id": c.contract_id,
        "block_height": c.block_height,
        "clarity_version": c.clarity_version,
        "source_code": c.source_code,
        "abi": c.abi,
    })
}

fn log_json(l: &ContractLog) -> Value {
    json!({
        "event_index": l.event_index,
        "event_type": "smart_contract_log",
        "tx_id": l.tx_id,
        "contract_log": {
            "contract_id": l.contract_id,
            "topic": l.topic,
            "value": { "hex": l.hex, "repr": l.repr },
        },
    })
}

fn key_of(l: &ContractLog) -> LogKey {
    (l.block_height, l.microblock_sequence.unwrap_or(ANCHORED), l.tx_index, l.event_index)
}

fn cursor_text(k: LogKey) -> String {
    format!("{}:{}:{}:{}", k.0, k.1, k.2, k.3)
}

/// `block_height:microblock_sequence:tx_index:event_index`.
fn parse_cursor(raw: &str) -> Result<LogKey, ApiError> {
    let bad = || ApiError::schema(In::Query, "cursor", Rule::Pattern("^[0-9]+:[0-9]+:[0-9]+:[0-9]+$"));
    let parts: Vec<u64> =
        raw.split(':').map(|p| p.parse::<u64>().map_err(|_| bad())).collect::<Result<_, _>>()?;
    match parts.as_slice() {
        [a, b, c, d] => Ok((*a, *b, *c, *d)),
        _ => Err(bad()),
    }
}

async fn contract<R: ContractReader>(
    r: &R,
    id: &str,
    inm: Option<String>,
) -> Result<warp::reply::Response, ApiError> {
    let Some(c) = r.contract(id).await? else {
        return Err(ApiError::NotFound("cannot find contract by ID".into()));
    };
    Ok(cached_json(&contract_json(&c), tip_etag(r).await?, inm.as_deref()))
}

async fn v1_events<R: ContractReader>(
    r: &R,
    id: &str,
    q: &Query,
    inm: Option<String>,
) -> Result<warp::reply::Response, ApiError> {
    let id = principal(id, "contract_id")?;
    let paging = q.paging(CONTRACT_EVENTS)?;
    let (_, logs) = r.contract_logs(&id, None, paging.limit, paging.offset).await?;
    let body = json!({
        "limit": paging.limit,
        "offset": paging.offset,
        "results": logs.iter().map(log_json).collect::<Vec<_>>(),
    });
    Ok(cached_json(&body, tip_etag(r).await?, inm.as_deref()))
}

async fn v2_logs<R: ContractReader>(
    r: &R,
    id: &str,
    q: &Query,
    inm: Option<String>,
) -> Result<warp::reply::Response, ApiError> {
    let id = principal(id, "contract_id")?;
    let paging = q.paging(LOGS)?;
    let cursor = q.get("cursor").map(parse_cursor).transpose()?;
    // One more row than asked tells whether there is a next page.
    let (total, mut logs) = r.contract_logs(&id, cursor, paging.limit + 1, paging.offset).await?;
    let next =
        (logs.len() > paging.limit as usize).then(|| logs.pop().map(|l| cursor_text(key_of(&l)))).flatten();
    let current = logs.first().map(key_of);
    let prev = match current {
        Some(k) => r.contract_logs_above(&id, k, paging.limit).await?.last().map(|l| cursor_text(key_of(l))),
        None => None,
    };
    let body = json!({
        "limit": paging.limit,
        "offset": paging.offset,
        "total": total,
        "next_cursor": next,
        "prev_cursor": prev,
        "cursor": current.map(cursor_text),
        "results": logs.iter().map(log_json).collect::<Vec<_>>(),
    });
    Ok(cached_json(&body, tip_etag(r).await?, inm.as_deref()))
}

async fn deploy_status<R: ContractReader>(
    r: &R,
    q: &Query,
    inm: Option<String>,
) -> Result<warp::reply::Response, ApiError> {
    let ids = q.all("contract_id");
    if ids.is_empty() {
        return Err(ApiError::schema(In::Query, "contract_id", Rule::Required));
    }
    let mut out = Map::new();
    for id in ids {
        let id = principal_in(&id, In::Query, "contract_id")?;
        let v = match r.deploy_status(&id).await? {
            Some(s) => {
                let mut result = json!({ "status": s.status, "tx_id": s.tx_id, "contract_id": id });
                if let Some(h) = s.block_height {
                    result["block_height"] = json!(h);
                }
                json!({ "found": true, "result": result })
            }
            None => json!({ "found": false }),
        };
        out.insert(id, v);
    }
    Ok(cached_json(&Value::Object(out), tip_etag(r).await?, inm.as_deref()))
}

/// The trait's functions as the incumbent matches them: name, access, argument types (not
/// their names) and outputs; a trait without `functions` is invalid.
fn trait_functions(abi: &Value) -> Result<Value, ApiError> {
    let invalid = || ApiError::invalid("trait_abi", "Invalid 'trait_abi'");
    let functions = abi.get("functions").and_then(Value::as_array).ok_or_else(invalid)?;
    Ok(Value::Array(
        functions
            .iter()
            .map(|f| {
                let args: Vec<Value> = f["args"]
                    .as_array()
                    .map(|a| a.iter().map(|arg| json!({ "type": arg["type"] })).collect())
                    .unwrap_or_default();
                json!({ "name": f["name"], "access": f["access"], "args": args, "outputs": f["outputs"] })
            })
            .collect(),
    ))
}

async fn by_trait<R: ContractReader>(
    r: &R,
    q: &Query,
    inm: Option<String>,
) -> Result<warp::reply::Response, ApiError> {
    let raw = q.get("trait_abi").ok_or(ApiError::schema(In::Query, "trait_abi", Rule::Required))?;
    let abi: Value = serde_json::from_str(raw)
        .map_err(|_| ApiError::invalid("trait_abi", "invalid json for trait_abi"))?;
    let functions = trait_functions(&abi)?;
    let paging = q.paging(CONTRACTS)?;
    let found = r.contracts_by_trait(&functions, paging.limit, paging.offset).await?;
    if found.is_empty() {
        return Err(ApiError::NotFound("cannot find contract for this trait".into()));
    }
    let body = json!({
        "limit": paging.limit,
        "offset": paging.offset,
        "results": found.iter().map(contract_json).collect::<Vec<_>>(),
    });
    Ok(cached_json(&body, tip_etag(r).await?, inm.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_bad_ones_name_the_parameter() {
        assert_eq!(parse_cursor("32:1:2:0").unwrap(), (32, 1, 2, 0));
        assert_eq!(cursor_text((1, ANCHORED, 6, 0)), "1:2147483647:6:0");
        for bad in ["", "1:2:3", "1:2:3:x", "1:2:3:4:5", "-1:0:0:0"] {
            let e = parse_cursor(bad).unwrap_err();
            assert!(matches!(e, ApiError::InvalidParam { param: "cursor", .. }), "{bad}");
        }
    }
}
