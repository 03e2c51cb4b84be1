//! The transaction lists: `/tx`, `/tx/block/{hash}`, `/tx/block_height/{h}`, `/tx/multiple`,
//! `/tx/mempool`, and the mempool fee routes.

use std::str::FromStr;
use std::sync::Arc;

use serde_json::{json, Map, Value as Json};
use stacks_codec::address::{Principal, StacksAddress};
use warp::reply::Response;

use super::entity::{any_tx_json, mempool_tx_json, mined_tx_text, page_tx_text, RenderOptions};
use super::params::{parse_tx_id_in, EVENT_LIMIT};
use super::reader::{BlockRef, MempoolFilter, MempoolSort, TxListFilter, TxReader, TxSort};
use crate::error::{ApiError, In, Rule, HASH_PATTERN};
use crate::params::{non_negative, LimitRule, Page, Query};
use crate::reply::{deprecated, json_text_with_etag, json_with_etag, page_text};

pub const TX_LIMIT: LimitRule = LimitRule::new(20, 50);
/// `/tx/block/{hash}` allows up to 200, unlike its height twin.
pub const BLOCK_TX_LIMIT: LimitRule = LimitRule::new(20, 200);
const TX_TYPES: [&str; 6] =
    ["coinbase", "token_transfer", "smart_contract", "contract_call", "poison_microblock", "tenure_change"];

fn invalid(param: &'static str, message: impl Into<String>) -> ApiError {
    ApiError::invalid(param, message)
}

/// `param` is none of the route's `n` allowed values.
fn not_one_of(param: &'static str, n: usize) -> ApiError {
    ApiError::schema(In::Query, param, Rule::Constants { n, item: None })
}

pub(crate) fn options(q: &Query) -> Result<RenderOptions, ApiError> {
    Ok(RenderOptions { exclude_function_args: q.bool("exclude_function_args")?.unwrap_or(false) })
}

/// `asc` / `desc` (default `desc`).
fn ascending(q: &Query) -> Result<bool, ApiError> {
    match q.get("order") {
        None | Some("desc") => Ok(false),
        Some("asc") => Ok(true),
        Some(_) => Err(not_one_of("order", 2)),
    }
}

/// `from_address` (a standard address) or `to_address` (`principal`: a contract id too), with
/// the incumbent's message for an invalid one.
fn address(q: &Query, name: &'static str, principal: bool) -> Result<Option<String>, ApiError> {
    q.get(name)
        .map(|a| {
            let valid =
                if principal { Principal::from_str(a).is_ok() } else { StacksAddress::from_str(a).is_ok() };
            if valid {
                Ok(a.to_string())
            } else {
                let message =
                    format!("Invalid query parameter for \"{name}\": \"{a}\" is not a valid STX address");
                Err(invalid(name, message))
            }
        })
        .transpose()
}

/// A principal filter of `/tx/mempool`, with the incumbent's message (its caught `Error`'s text).
fn principal(q: &Query, name: &'static str) -> Result<Option<String>, ApiError> {
    q.get(name)
        .map(|a| {
            Principal::from_str(a).map(|_| a.to_string()).map_err(|_| {
                let message = format!(
                    "Error: Invalid query parameter: \"{a}\" is not a valid STX address or principal"
                );
                invalid(name, message)
            })
        })
        .transpose()
}

pub(super) fn tx_list_filter(q: &Query) -> Result<TxListFilter, ApiError> {
    let types = q.all("type");
    if let Some(bad) = types.iter().position(|t| !TX_TYPES.contains(&t.as_str())) {
        let rule = Rule::Constants { n: TX_TYPES.len(), item: Some(bad) };
        return Err(ApiError::schema(In::Query, "type", rule));
    }
    let sort = match q.get("sort_by") {
        None | Some("block_height") => TxSort::BlockHeight,
        Some("burn_block_time") => TxSort::BurnBlockTime,
        Some("fee") => TxSort::Fee,
        Some(_) => return Err(not_one_of("sort_by", 3)),
    };
    let nonce = q.u64("nonce")?;
    if nonce.is_some_and(|n| n > (1 << 53) - 1) {
        return Err(ApiError::schema(In::Query, "nonce", Rule::Max((1 << 53) - 1)));
    }
    // The incumbent tests each filter for truth: 0 is no filter.
    let set = |v: Option<u64>| v.filter(|n| *n != 0);
    Ok(TxListFilter {
        types,
        ascending: ascending(q)?,
        sort,
        from_address: address(q, "from_address", false)?,
        to_address: address(q, "to_address", true)?,
        start_time: set(q.u64("start_time")?),
        end_time: set(q.u64("end_time")?),
        contract_id: q
            .get("contract_id")
            .map(|c| match Principal::from_str(c) {
                Ok(_) => Ok(c.to_string()),
                Err(_) => Err(invalid(
                    "contract_id",
                    format!("Invalid query parameter for \"contract_id\": \"{c}\" is not a valid principal"),
                )),
            })
            .transpose()?,
        function_name: q.get("function_name").map(String::from),
        nonce: set(nonce),
        unanchored: q.bool("unanchored")?.unwrap_or(false),
    })
}

fn page_json(paging: crate::Paging, total: u64, results: Vec<Json>) -> Json {
    serde_json::to_value(Page::new(paging, total, results)).unwrap_or_default()
}

/// `GET /extended/v1/tx`.
pub(super) async fn tx_list<R: TxReader>(
    reader: Arc<R>,
    q: Query,
    etag: Option<String>,
) -> Result<Response, ApiError> {
    let paging = q.paging(TX_LIMIT)?;
    let filter = tx_list_filter(&q)?;
    let opts = options(&q)?;
    let (total, txs) = reader.tx_list(&filter, paging).await?;
    let results = txs.iter().map(|t| page_tx_text(t, opts)).collect::<Result<Vec<_>, _>>()?;
    let body = page_text(&Page::<String>::new(paging, total, vec![]), &results);
    Ok(deprecated(json_text_with_etag(body, etag.as_deref())))
}

/// `GET /extended/v1/tx/block/{hash}` and `/tx/block_height/{height}`.
pub(super) async fn block_txs<R: TxReader>(
    reader: Arc<R>,
    block: Result<BlockRef, ApiError>,
    q: Query,
    etag: Option<String>,
) -> Result<Response, ApiError> {
    let block = block?;
    let rule = if matches!(block, BlockRef::Hash(_)) { BLOCK_TX_LIMIT } else { TX_LIMIT };
    let paging = q.paging(rule)?;
    let opts = options(&q)?;
    let (total, txs) = reader.block_txs(&block, paging).await?;
    // An unknown block is a 404; an orphaned one (any fork counts) an empty page.
    if txs.is_empty() && !reader.block_known(&block).await? {
        return Err(ApiError::NotFound(match block {
            BlockRef::Hash(_) => "no block found by hash".into(),
            BlockRef::Height(h) => format!("no block found at height {h}"),
        }));
    }
    let results = txs.iter().map(|t| mined_tx_text(t, None, opts)).collect::<Result<Vec<_>, _>>()?;
    let body = page_text(&Page::<String>::new(paging, total, vec![]), &results);
    Ok(deprecated(json_text_with_etag(body, etag.as_deref())))
}

/// A block hash path parameter (`0x` optional), lower-cased with `0x`.
pub(super) fn block_hash(raw: &str) -> Result<BlockRef, ApiError> {
    let hex = raw.strip_prefix("0x").unwrap_or(raw);
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ApiError::schema(In::Path, "block_hash", Rule::Pattern(HASH_PATTERN)));
    }
    Ok(BlockRef::Hash(format!("0x{}", hex.to_ascii_lowercase())))
}

pub(super) fn block_height(raw: &str) -> Result<BlockRef, ApiError> {
    non_negative(In::Path, "height", raw).map(BlockRef::Height)
}

/// `GET /extended/v1/tx/multiple`: a map of id to `{found, result}`, found ones first.
pub(super) async fn multiple<R: TxReader>(
    reader: Arc<R>,
    q: Query,
    etag: Option<String>,
) -> Result<Response, ApiError> {
    let raw_ids = q.all("tx_id");
    if raw_ids.is_empty() {
        return Err(ApiError::schema(In::Query, "tx_id", Rule::Required));
    }
    let mut ids = Vec::new();
    for raw in &raw_ids {
        let id = match parse_tx_id_in(In::Query, "tx_id", raw)? {
            Some(id) => id,
            None => format!("0x{}", raw.to_ascii_lowercase()),
        };
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let paging = q.paging_named(EVENT_LIMIT, "event_limit", "event_offset")?;
    let unanchored = q.bool("unanchored")?.unwrap_or(false);
    let opts = options(&q)?;
    let (mut found, mut missing) = (Map::new(), Map::new());
    for id in ids {
        match reader.tx(&id, unanchored).await? {
            Some(tx) => {
                let events = match &tx {
                    super::AnyTx::Mined(t) => Some(reader.tx_events(t, paging).await?),
                    super::AnyTx::Mempool(_) => None,
                };
                let result = any_tx_json(&tx, events.as_deref(), opts)?;
                found.insert(id, json!({ "found": true, "result": result }));
            }
            None => {
                missing.insert(id.clone(), json!({ "found": false, "result": { "tx_id": id } }));
            }
        }
    }
    found.extend(missing);
    Ok(json_with_etag(&Json::Object(found), etag.as_deref()))
}

/// `GET /extended/v1/tx/mempool`.
pub(super) async fn mempool<R: TxReader>(
    reader: Arc<R>,
    q: Query,
    etag: Option<String>,
) -> Result<Response, ApiError> {
    let paging = q.paging(TX_LIMIT)?;
    let filter = MempoolFilter {
        sender_address: principal(&q, "sender_address")?,
        recipient_address: principal(&q, "recipient_address")?,
        address: principal(&q, "address")?,
        sort: match q.get("order_by") {
            None | Some("age") => MempoolSort::Age,
            Some("size") => MempoolSort::Size,
            Some("fee") => MempoolSort::Fee,
            Some(_) => return Err(not_one_of("order_by", 3)),
        },
        ascending: ascending(&q)?,
    };
    if filter.address.is_some() && (filter.sender_address.is_some() || filter.recipient_address.is_some()) {
        return Err(invalid(
            "address",
            "The \"address\" filter cannot be specified with other address filters",
        ));
    }
    q.bool("unanchored")?;
    let opts = options(&q)?;
    let (total, txs) = reader.mempool_list(&filter, paging).await?;
    // The incumbent counts with `COUNT(*) OVER()` on the page's own rows: a page past the end
    // has total 0 (recorded: `?limit=2&offset=1` over a one-transaction mempool).
    let total = if txs.is_empty() { 0 } else { total };
    let results = txs.iter().map(|t| mempool_tx_json(t, opts)).collect::<Result<Vec<_>, _>>()?;
    Ok(deprecated(json_with_etag(&page_json(paging, total, results), etag.as_deref())))
}

/// The incumbent's `ROUND(PERCENTILE_CONT(p))`: linear interpolation between the ranks around
/// `p`, rounded half to even (PostgreSQL's `round` of a double); 0 for no value.
fn percentile_rounded(sorted: &[u64], p: f64) -> u64 {
    let Some(last) = sorted.len().checked_sub(1) else { return 0 };
    let pos = p * last as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    let v = sorted[lo] as f64 + (sorted[hi] as f64 - sorted[lo] as f64) * (pos - lo as f64);
    v.round_ties_even() as u64
}

fn priorities(mut fees: Vec<u64>) -> Json {
    fees.sort_unstable();
    json!({
        "no_priority": percentile_rounded(&fees, 0.25),
        "low_priority": percentile_rounded(&fees, 0.5),
        "medium_priority": percentile_rounded(&fees, 0.75),
        "high_priority": percentile_rounded(&fees, 0.95),
    })
}

/// `GET /extended/v2/mempool/fees`: fee percentiles of pending transfers, calls and deploys.
pub(super) async fn mempool_fees<R: TxReader>(
    reader: Arc<R>,
    etag: Option<String>,
) -> Result<Response, ApiError> {
    let fees = reader.mempool_fees().await?;
    let kinds = ["token_transfer", "contract_call", "smart_contract"];
    let mut body = Map::new();
    // `all` is every pending transaction, whatever its type (the incumbent's query has no filter).
    body.insert("all".into(), priorities(fees.iter().map(|(_, f)| *f).collect()));
    for kind in kinds {
        let of_kind: Vec<u64> = fees.iter().filter(|(t, _)| t == kind).map(|(_, f)| *f).collect();
        if !of_kind.is_empty() {
            body.insert(kind.into(), priorities(of_kind));
        }
    }
    Ok(json_with_etag(&Json::Object(body), etag.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fee_priorities_are_rounded_continuous_percentiles() {
        // The regtest oracle: three pending calls paying 1000, 1001 and 1002 (1001.5 and
        // 1001.9 round to 1002).
        let p = priorities(vec![1002, 1000, 1001]);
        assert_eq!(
            p,
            json!({"no_priority": 1000, "low_priority": 1001, "medium_priority": 1002, "high_priority": 1002})
        );
        // Two fees, 100 and 200: interpolated, as PostgreSQL's percentile_cont.
        assert_eq!(
            priorities(vec![200, 100]),
            json!({"no_priority": 125, "low_priority": 150, "medium_priority": 175, "high_priority": 195})
        );
        // Halves round to even: 1 and 2 at the median is 1.5 → 2; 2 and 3 → 2.5 → 2.
        assert_eq!(priorities(vec![1, 2])["low_priority"], 2);
        assert_eq!(priorities(vec![2, 3])["low_priority"], 2);
        assert_eq!(priorities(vec![])["high_priority"], 0);
    }

    #[test]
    fn list_filters_are_validated() {
        let f =
            tx_list_filter(&Query::parse("type=contract_call,smart_contract&order=asc&sort_by=fee&nonce=3"))
                .unwrap();
        assert_eq!(f.types, ["contract_call", "smart_contract"]);
        assert!(f.ascending);
        assert_eq!(f.sort, TxSort::Fee);
        assert_eq!(f.nonce, Some(3));
        for (q, param) in [
            ("type=not_a_type", "type"),
            ("sort_by=bogus", "sort_by"),
            ("order=up", "order"),
            ("from_address=nope", "from_address"),
            ("nonce=9007199254740992", "nonce"),
            ("start_time=x", "start_time"),
        ] {
            let e = tx_list_filter(&Query::parse(q)).unwrap_err();
            assert!(matches!(e, ApiError::InvalidParam { param: p, .. } if p == param), "{q}: {e}");
        }
        assert!(block_hash("0xZZ").is_err());
        assert_eq!(block_hash(&"AB".repeat(32)).unwrap(), BlockRef::Hash(format!("0x{}", "ab".repeat(32))));
        assert!(block_height("-1").is_err());
    }
}
