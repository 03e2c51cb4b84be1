//! `GET /extended/v1/search/{id}`: exact, complete identifiers only (the user's spec): a block
//! hash, a transaction id (mined or pending), a contract id or an address. Partial ids and
//! wildcards match nothing.

use ledger_read::search as reader;

use std::sync::Arc;

use serde_json::{json, Value};
use warp::http::StatusCode;
use warp::{Filter, Rejection, Reply};

pub use reader::{ContractHit, HashHit, MinedAt, SearchReader};

use crate::address::principal;
use crate::chain::{block_v1, BlockRef, ChainReader};
use crate::error::ApiError;
use crate::handler::reject;
use crate::headers::with_common_headers;
use crate::params::{query, Query};
use crate::tx::{any_tx_json, RenderOptions, TxReader};

pub fn routes<R: SearchReader + TxReader + ChainReader>(
    reader: Arc<R>,
) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    warp::get()
        .and(warp::path!("extended" / "v1" / "search" / String))
        .and(query())
        .and(warp::any().map(move || reader.clone()))
        .and_then(|term: String, q: Query, r: Arc<R>| async move {
            let metadata = q.bool("include_metadata").map_err(reject)?.unwrap_or(false);
            let term = percent_decode(&term);
            search(&*r, term.trim(), metadata).await.map_err(reject)
        })
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A 32-byte hash: 64 hex digits, `0x` optional.
fn as_hash(term: &str) -> Option<String> {
    let hex = term.strip_prefix("0x").unwrap_or(term);
    (hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit()))
        .then(|| format!("0x{}", hex.to_ascii_lowercase()))
}

fn mined_json(at: &MinedAt, tx_type: &str) -> Value {
    json!({
        "canonical": at.canonical,
        "block_hash": at.block_hash,
        "burn_block_time": at.burn_block_time,
        "block_height": at.block_height,
        "tx_type": tx_type,
    })
}

fn reply(status: StatusCode, body: Value) -> warp::reply::Response {
    with_common_headers(warp::reply::with_status(warp::reply::json(&body), status))
}

fn not_found(entity_type: &str, error: String) -> warp::reply::Response {
    reply(
        StatusCode::NOT_FOUND,
        json!({ "found": false, "result": { "entity_type": entity_type }, "error": error }),
    )
}

/// `include_metadata=true` for a transaction or a contract: the (deploy) transaction entity,
/// with `events: []` as the incumbent sends it.
async fn tx_metadata<R: TxReader>(r: &R, tx_id: &str) -> Result<Value, ApiError> {
    let tx = r
        .tx(tx_id, true)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("could not find transaction by ID {tx_id}")))?;
    Ok(any_tx_json(&tx, None, RenderOptions::default())?)
}

/// `include_metadata=true` for a block: the v1 Block entity.
async fn block_metadata<R: ChainReader>(r: &R, hash: &str) -> Result<Value, ApiError> {
    let block = r
        .block(BlockRef::Hash(hash.to_string()))
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("cannot find block by hash {hash}")))?;
    let contents = r.block_contents(&block).await?;
    Ok(block_v1(&block, &contents))
}

async fn search<R: SearchReader + TxReader + ChainReader>(
    r: &R,
    term: &str,
    metadata: bool,
) -> Result<warp::reply::Response, ApiError> {
    if let Some(hash) = as_hash(term) {
        let result = match r.search_hash(&hash).await? {
            None => {
                let error = format!("No block or transaction found with hash \"{hash}\"");
                return Ok(not_found("unknown_hash", error));
            }
            Some(HashHit::Tx { tx_type, at }) => {
                json!({ "entity_id": hash, "entity_type": "tx_id", "tx_data": mined_json(&at, &tx_type) })
            }
            Some(HashHit::MempoolTx { tx_type }) => {
                json!({ "entity_id": hash, "entity_type": "mempool_tx_id", "tx_data": { "tx_type": tx_type } })
            }
            Some(HashHit::Block { canonical, hash: h, parent_block_hash, burn_block_time, height }) => {
                json!({
                    "entity_id": hash,
                    "entity_type": "block_hash",
                    "block_data": {
                        "canonical": canonical,
                        "hash": h,
                        "parent_block_hash": parent_block_hash,
                        "burn_block_time": burn_block_time,
                        "height": height,
                    },
                })
            }
        };
        let mut result = result;
        if metadata {
            result["metadata"] = match result["entity_type"].as_str() {
                Some("block_hash") => block_metadata(r, &hash).await?,
                _ => tx_metadata(r, &hash).await?,
            };
        }
        return Ok(reply(StatusCode::OK, json!({ "found": true, "result": result })));
    }
    if principal(term, "id").is_err() {
        let error = format!(
            "The term \"{term}\" is not a valid block hash, transaction ID, contract principal, or account address principal"
        );
        return Ok(not_found("invalid_term", error));
    }
    let missing = |kind: &str| not_found(kind, format!("No principal found with address \"{term}\""));
    if term.contains('.') {
        let Some(hit) = r.search_contract(term).await? else { return Ok(missing("contract_address")) };
        let tx_data = match &hit.at {
            Some(at) => {
                let mut v = json!({ "tx_type": hit.tx_type, "tx_id": hit.tx_id });
                if let (Value::Object(m), Value::Object(extra)) = (&mut v, mined_json(at, &hit.tx_type)) {
                    m.extend(extra);
                }
                v
            }
            None => json!({ "tx_type": hit.tx_type, "tx_id": hit.tx_id }),
        };
        let mut result = json!({ "entity_id": term, "entity_type": "contract_address", "tx_data": tx_data });
        if metadata {
            result["metadata"] = tx_metadata(r, &hit.tx_id).await?;
        }
        return Ok(reply(StatusCode::OK, json!({ "found": true, "result": result })));
    }
    if !r.address_seen(term).await? {
        return Ok(missing("standard_address"));
    }
    let mut result = json!({ "entity_id": term, "entity_type": "standard_address" });
    if metadata {
        let t = r.stx_totals(term, None).await?;
        let locked = t.locked != 0;
        result["metadata"] = json!({
            "balance": t.balance().to_string(),
            "total_miner_rewards_received": t.total_miner_rewards_received.to_string(),
            "lock_tx_id": if locked { t.lock_tx_id.clone().unwrap_or_default() } else { String::new() },
            "locked": t.locked.to_string(),
            "lock_height": if locked { t.lock_height } else { 0 },
            "burnchain_lock_height": if locked { t.burnchain_lock_height } else { 0 },
            "burnchain_unlock_height": if locked { t.burnchain_unlock_height } else { 0 },
            "total_sent": t.total_sent.to_string(),
            "total_received": t.total_received.to_string(),
            "total_fees_sent": t.total_fees_sent.to_string(),
        });
    }
    Ok(reply(StatusCode::OK, json!({ "found": true, "result": result })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_complete_hashes_are_hashes() {
        let h = "5705546ec6741f77957bb3e73bf795dcf120c0a869c1d408396e7e30a3b2f94f";
        assert_eq!(as_hash(h).unwrap(), format!("0x{h}"));
        assert_eq!(as_hash(&format!("0x{}", h.to_uppercase())).unwrap(), format!("0x{h}"));
        // Partial ids and wildcards are not hashes (and not principals either).
        for t in ["0x5705546e", &h[..63], "0x5705546e%", "0x5705546e*", ""] {
            assert!(as_hash(t).is_none(), "{t}");
        }
        assert!(principal("0x5705546e*", "id").is_err());
    }

    #[test]
    fn percent_escapes_are_decoded() {
        assert_eq!(percent_decode("%20abc%2A"), " abc*");
        assert_eq!(percent_decode("abc%2"), "abc%2");
    }
}
