//! v1 `/block/*`, v2 `/blocks/*` and `/block-tenures/{h}/blocks`.

use serde_json::json;
use warp::reply::Response;

use super::reader::{BlockRecord, BlockRef, ChainReader};
use super::render::{block_v1, block_v1_text, block_v2, block_v2_text};
use super::{
    block_cached, cursor_offset, hash_param, int_param, json, redirect, tip_cached, tip_cached_with, Req,
};
use crate::error::{ApiError, In, Rule};
use crate::params::{non_negative, LimitRule, Page, Paging};
use crate::reader::TipReader;
use crate::reply::{deprecated, json_bytes, page_bytes};
use crate::tx::{mined_tx_json, BlockRef as TxBlock, RenderOptions, TxReader};

pub(crate) const BLOCK_LIMIT: LimitRule = LimitRule::new(20, 30);
pub(crate) const TX_LIMIT: LimitRule = LimitRule::new(20, 50);
pub(crate) const SIGNATURE_LIMIT: LimitRule = LimitRule::new(500, 1000);
/// v2 cursor offsets go ±(max limit × 10).
const CURSOR_OFFSET_BOUND: i64 = 300;

type Answer = Result<Response, ApiError>;

async fn v1_block<R: ChainReader>(r: &R, by: BlockRef, missing: &str) -> Answer {
    let block = r.block(by).await?.ok_or_else(|| ApiError::NotFound(missing.into()))?;
    let contents = r.block_contents(&block).await?;
    Ok(json(&block_v1(&block, &contents)))
}

/// `/extended/v1/block/...`; `None` for a path this family does not serve.
pub(crate) async fn v1<R: TipReader + ChainReader>(r: &R, req: &Req, rest: &[&str]) -> Option<Answer> {
    Some(match rest {
        [] => {
            tip_cached_with(r, req, |tip| async move {
                let paging = req.query.paging(BLOCK_LIMIT)?;
                // The canonical blocks from `offset` below the tip (the total is its height).
                let (total, blocks) = match tip.map(|t| t.height()) {
                    None => (0, Vec::new()),
                    Some(tip) => match tip.checked_sub(paging.offset) {
                        None => (tip, Vec::new()),
                        Some(start) => (tip, r.block_list(start, paging.limit).await?),
                    },
                };
                // Written as text into one buffer (no `Value` tree per block, nor of the page).
                let envelope = Page::new(paging, total, Vec::<()>::new());
                let body = page_bytes(&envelope, &blocks, |(b, c), out| block_v1_text(b, c, out));
                Ok(json_bytes(body))
            })
            .await
        }
        ["by_height", h] => match int_param("height", h) {
            Ok(h) => {
                tip_cached(r, req, v1_block(r, BlockRef::Height(h), "cannot find block by height")).await
            }
            Err(e) => Err(e),
        },
        ["by_burn_block_height", h] => match int_param("burn_block_height", h) {
            Ok(h) => {
                tip_cached(
                    r,
                    req,
                    v1_block(r, BlockRef::BurnHeight(h), "cannot find block by burn block height"),
                )
                .await
            }
            Err(e) => Err(e),
        },
        ["by_burn_block_hash", hash] if !hash.starts_with("0x") => {
            Ok(redirect(req, format!("/extended/v1/block/by_burn_block_hash/0x{hash}")))
        }
        ["by_burn_block_hash", hash] => {
            let by = BlockRef::BurnHash(hash.to_lowercase());
            tip_cached(r, req, v1_block(r, by, "cannot find block by burn block hash")).await
        }
        [hash] if !hash.starts_with("0x") => Ok(redirect(req, format!("/extended/v1/block/0x{hash}"))),
        [hash] => {
            tip_cached(r, req, v1_block(r, BlockRef::Hash(hash.to_lowercase()), "cannot find block by hash"))
                .await
        }
        _ => return None,
    })
}

/// `latest`, a (`0x`-optional) 64-hex hash, or a height.
fn height_or_hash(v: &str) -> Result<BlockRef, ApiError> {
    if v == "latest" {
        return Ok(BlockRef::Latest);
    }
    if let Some(hash) = hash_param(v) {
        return Ok(BlockRef::AnyHash(hash));
    }
    v.parse::<u64>()
        .map(BlockRef::Height)
        .map_err(|_| ApiError::schema(In::Path, "height_or_hash", Rule::HeightOrHash))
}

async fn v2_block<R: ChainReader>(r: &R, by: BlockRef) -> Result<BlockRecord, ApiError> {
    r.block(by).await?.ok_or_else(|| ApiError::NotFound("Block not found".into()))
}

/// `/extended/v2/blocks/...`.
pub(crate) async fn v2<R: TipReader + ChainReader + TxReader>(
    r: &R,
    req: &Req,
    rest: &[&str],
) -> Option<Answer> {
    Some(match rest {
        [] => tip_cached_with(r, req, |tip| list(r, req, tip.map(|t| t.height()))).await,
        ["average-times"] => tip_cached(r, req, average_times(r)).await,
        ["by-block-time", ts] => by_block_time(r, req, ts).await,
        [id] => match height_or_hash(id) {
            Ok(by) => v2_block(r, by).await.map(|b| block_cached(req, &b, || json(&block_v2(&b)))),
            Err(e) => Err(e),
        },
        [id, "signer-signatures"] => signer_signatures(r, req, id).await,
        [id, "transactions"] => block_transactions(r, req, id).await,
        _ => return None,
    })
}

/// `/extended/v2/blocks/{height_or_hash}/transactions`: the block's transactions through the
/// shared Transaction renderer, cached by the block (the incumbent marks it deprecated).
async fn block_transactions<R: ChainReader + TxReader>(r: &R, req: &Req, id: &str) -> Answer {
    let by = height_or_hash(id)?;
    let paging = req.query.paging(TX_LIMIT)?;
    let block = v2_block(r, by).await?;
    // The reader pages newest first; the incumbent lists by microblock sequence then tx index,
    // oldest first: read the mirrored page and reverse it.
    let at = TxBlock::Height(block.block_height);
    let (total, _) = r.block_txs(&at, Paging { limit: 0, offset: 0 }).await?;
    let end = total.saturating_sub(paging.offset);
    let start = end.saturating_sub(u64::from(paging.limit));
    // Oldest-first rows [offset, offset + limit) are newest-first rows [start, end).
    let mirrored = Paging { limit: (end - start) as u32, offset: start };
    let (_, mut txs) = r.block_txs(&at, mirrored).await?;
    txs.reverse();
    // The incumbent's v2 query selects the transaction columns without the called contract's
    // ABI: every contract call here has `function_signature` "" and unnamed arguments (as
    // recorded on every fixture), unlike v1 `/tx/block*` and `/tx/{id}`.
    for t in &mut txs {
        t.contract_abi = None;
    }
    // The incumbent answers "Block not found" when its page query returns no row: a block
    // without transactions (mainnet-reorg-scenario1's block 1) or an offset past the end.
    if txs.is_empty() {
        return Err(ApiError::NotFound("Block not found".into()));
    }
    // The incumbent's total is the block's own count (block 1 leaves out the boot block's
    // transactions it lists, `BlockRecord::tx_count`).
    let total = if block.block_height == 1 { total.min(block.tx_count) } else { total };
    let results = txs
        .iter()
        .map(|t| mined_tx_json(t, None, RenderOptions::default()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(block_cached(req, &block, || deprecated(json(&json!(Page::new(paging, total, results))))))
}

async fn by_block_time<R: ChainReader>(r: &R, req: &Req, ts: &str) -> Answer {
    let ts = int_param("timestamp", ts)?;
    let time = i64::try_from(ts).unwrap_or(i64::MAX);
    let block = r
        .block_by_time(time)
        .await?
        .ok_or_else(|| ApiError::NotFound("No block found at or before the given timestamp".into()))?;
    Ok(block_cached(req, &block, || json(&block_v2(&block))))
}

async fn signer_signatures<R: ChainReader>(r: &R, req: &Req, id: &str) -> Answer {
    let by = height_or_hash(id)?;
    let paging = req.query.paging(SIGNATURE_LIMIT)?;
    let block = v2_block(r, by).await?;
    let all = r.block_signer_signatures(&block).await?;
    let total = all.len() as u64;
    let results: Vec<String> = all
        .into_iter()
        .skip(usize::try_from(paging.offset).unwrap_or(usize::MAX))
        .take(paging.limit as usize)
        .collect();
    Ok(block_cached(req, &block, || json(&json!(Page::new(paging, total, results)))))
}

/// The v2 cursor envelope without its rows (`results` last, for [`page_bytes`]).
#[derive(serde::Serialize)]
struct CursorEnvelope<'a> {
    limit: u32,
    offset: i64,
    total: u64,
    next_cursor: Option<String>,
    prev_cursor: Option<String>,
    cursor: Option<&'a str>,
    results: Vec<()>,
}

/// The v2 cursor envelope over contiguous heights: `cursor` is the first result, `next_cursor`
/// the first block of the newer page, `prev_cursor` the first block of the older one. Written
/// as text (the bytes `json!` of the same members would serialize to).
fn cursor_page(
    limit: u32,
    offset: i64,
    total: u64,
    results: &[BlockRecord],
    next: Option<String>,
    prev: Option<String>,
) -> Response {
    let envelope = CursorEnvelope {
        limit,
        offset,
        total,
        next_cursor: next,
        prev_cursor: prev,
        cursor: results.first().map(|b| b.index_block_hash.as_str()),
        results: Vec::new(),
    };
    json_bytes(page_bytes(&envelope, results, block_v2_text))
}

fn cursor_param(req: &Req) -> Result<Option<String>, ApiError> {
    req.query
        .get("cursor")
        .map(|c| {
            hash_param(c)
                .ok_or_else(|| ApiError::schema(In::Query, "cursor", Rule::Pattern("^0x[a-fA-F0-9]{64}$")))
        })
        .transpose()
}

/// The v2 block list below the canonical tip at height `tip`.
async fn list<R: ChainReader>(r: &R, req: &Req, tip: Option<u64>) -> Answer {
    let limit = req.query.paging(BLOCK_LIMIT)?.limit;
    let offset = cursor_offset(&req.query, CURSOR_OFFSET_BOUND)?;
    let cursor = cursor_param(req)?;
    let Some(tip) = tip else {
        return Ok(cursor_page(limit, offset, 0, &[], None, None));
    };
    let from = match cursor {
        Some(c) => match r.block(BlockRef::AnyHash(c)).await? {
            Some(b) if b.canonical => b.block_height,
            _ => return Err(ApiError::NotFound("Cursor not found".into())),
        },
        None => tip,
    };
    let start = from as i64 - offset;
    if start < 0 {
        return Ok(cursor_page(limit, offset, 0, &[], None, None));
    }
    let start = start as u64;
    let (results, next, prev) = r.blocks_page(start, limit).await?;
    // The incumbent's total comes with the rows: none, no total.
    let total = if results.is_empty() { 0 } else { tip };
    Ok(cursor_page(limit, offset, total, &results, next, prev))
}

async fn average_times<R: ChainReader>(r: &R) -> Answer {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default();
    let [h1, h24, d7, d30] = r.average_block_times(now, [3600, 86_400, 7 * 86_400, 30 * 86_400]).await?;
    // The mean gap, `parseFloat(mean.toFixed(2))` as the incumbent rounds it: half up on the
    // exact value (computed exactly from the sum and count); 0 without gaps.
    let round = |(sum, n): (i64, u64)| {
        let n = i128::from(n.max(1));
        let (sum, sign) = (i128::from(sum).abs(), if sum < 0 { -1.0 } else { 1.0 });
        let hundredths = (200 * sum + n) / (2 * n);
        super::js_number(sign * hundredths as f64 / 100.0)
    };
    Ok(json(&json!({
        "last_1h": round(h1),
        "last_24h": round(h24),
        "last_7d": round(d7),
        "last_30d": round(d30),
    })))
}

/// `/extended/v2/block-tenures/{tenure_height}/blocks`.
pub(crate) async fn tenure_blocks<R: ChainReader>(r: &R, req: &Req, tenure: &str) -> Answer {
    let tenure = non_negative(In::Path, "tenure_height", tenure)?;
    let limit = req.query.paging(BLOCK_LIMIT)?.limit;
    let offset = cursor_offset(&req.query, CURSOR_OFFSET_BOUND)?;
    let cursor = cursor_param(req)?;
    let from = match cursor {
        Some(c) => match r.block(BlockRef::AnyHash(c)).await? {
            Some(b) if b.canonical && b.tenure_height == Some(tenure as i64) => Some(b.block_height),
            _ => return Err(ApiError::NotFound("Cursor not found".into())),
        },
        None => None,
    };
    let (total, newest) = r.tenure_blocks(tenure, from, 1).await?;
    let Some(from) = newest.first().map(|b| b.block_height) else {
        return Ok(cursor_page(limit, offset, total, &[], None, None));
    };
    let start = (from as i64 - offset).max(0) as u64;
    let (_, results) = r.tenure_blocks(tenure, Some(start), limit).await?;
    let at = |h: u64| async move {
        let (_, b) = r.tenure_blocks(tenure, Some(h), 1).await?;
        Ok::<_, ApiError>(b.into_iter().find(|b| b.block_height == h).map(|b| b.index_block_hash))
    };
    let next = at(start + u64::from(limit)).await?;
    let prev = match start.checked_sub(u64::from(limit)) {
        Some(h) => at(h).await?,
        None => None,
    };
    Ok(cursor_page(limit, offset, total, &results, next, prev))
}

#[cfg(test)]
mod text_tests {
    use super::*;

    use warp::Filter;

    /// The response's headers and body as a client gets them.
    async fn served(res: Response) -> (warp::http::HeaderMap, String) {
        let once = std::sync::Arc::new(std::sync::Mutex::new(Some(res)));
        let f = warp::any().map(move || once.lock().unwrap().take().unwrap());
        let got = warp::test::request().reply(&f).await;
        (got.headers().clone(), String::from_utf8(got.body().to_vec()).unwrap())
    }

    #[tokio::test]
    async fn cursor_pages_are_the_serialized_trees() {
        let block = |h: u64| BlockRecord {
            block_height: h,
            index_block_hash: format!("0x{h:064x}"),
            block_time: 1_700_000_000 + h as i64,
            ..Default::default()
        };
        let blocks: Vec<BlockRecord> = (1..=3).rev().map(block).collect();
        let cases = [
            (20, 0, 3, blocks.clone(), Some("0xaa".to_string()), Some("0xbb".to_string())),
            (2, -4, 0, vec![], None, None),
            (1, 7, 9, blocks[..1].to_vec(), None, Some("0x\"".to_string())),
        ];
        for (limit, offset, total, results, next, prev) in cases {
            let tree = json!({
                "limit": limit,
                "offset": offset,
                "total": total,
                "next_cursor": next,
                "prev_cursor": prev,
                "cursor": results.first().map(|b| b.index_block_hash.clone()),
                "results": results.iter().map(block_v2).collect::<Vec<_>>(),
            });
            let res = cursor_page(limit, offset, total, &results, next.clone(), prev.clone());
            let (headers, body) = served(res).await;
            let (want_headers, want) = served(json(&tree)).await;
            assert_eq!(headers, want_headers);
            assert_eq!(body, want);
        }
    }
}
