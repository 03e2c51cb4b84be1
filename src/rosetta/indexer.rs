//! The indexer endpoints (Rosetta 1.4.7): `/events/blocks` and `/search/transactions`.
//!
//! `/events/blocks` pages over the store's block event log: every block that became canonical
//! (`block_added`) and every block a reorg orphaned (`block_removed`, tip first), in order, so
//! applying the events from sequence 1 rebuilds today's canonical chain. `/search/transactions` needs a transaction hash or an account
//! to start from; type, status, success and currency then filter the candidates.

use bytes::Bytes;
use rosetta_spec::{
    BlockEvent, BlockEventType, BlockIdentifier, BlockTransaction, EventsBlocksRequest, EventsBlocksResponse,
    Operator, SearchTransactionsRequest, SearchTransactionsResponse, Transaction,
};
use serde_json::json;

use super::block::{identifier, parse_hash};
use super::error::{ErrorKind, RosettaError};
use super::network::OPERATION_STATUSES;
use super::ops::{stx, transactions};
use super::request::parse;
use super::{Rosetta, RosettaResult};

/// Default and largest page.
pub const MAX_LIMIT: i64 = 100;

fn limit_of(limit: Option<i64>) -> RosettaResult<i64> {
    match limit {
        None => Ok(MAX_LIMIT),
        Some(l) if (1..=MAX_LIMIT).contains(&l) => Ok(l),
        Some(l) => Err(RosettaError::with_message(
            ErrorKind::InvalidParams,
            format!("limit {l} not in 1..={MAX_LIMIT}"),
        )),
    }
}

pub async fn events_blocks(ctx: &Rosetta, body: &Bytes) -> RosettaResult<EventsBlocksResponse> {
    let req: EventsBlocksRequest = parse(body, ctx.network, &[])?;
    let limit = limit_of(req.limit)?;
    let max_sequence = ctx.reader.max_sequence().await?;
    let from = match req.offset {
        Some(o) if o < 0 => {
            return Err(RosettaError::with_message(
                ErrorKind::InvalidParams,
                format!("offset {o} is negative"),
            ))
        }
        Some(o) => o,
        // Without an offset: the last `limit` events.
        None => (max_sequence - limit + 1).max(0),
    };
    let events = ctx.reader.block_events(from, limit).await?;
    Ok(EventsBlocksResponse {
        max_sequence,
        events: events
            .into_iter()
            .map(|e| BlockEvent {
                sequence: e.sequence,
                block_identifier: BlockIdentifier::new(e.block_height, e.block_hash),
                r#type: if e.added { BlockEventType::BlockAdded } else { BlockEventType::BlockRemoved },
            })
            .collect(),
    })
}

fn successful(status: &str) -> bool {
    OPERATION_STATUSES.iter().any(|(s, ok)| *s == status && *ok)
}

pub async fn search_transactions(ctx: &Rosetta, body: &Bytes) -> RosettaResult<SearchTransactionsResponse> {
    let req: SearchTransactionsRequest = parse(body, ctx.network, &[])?;
    let limit = limit_of(req.limit)?;
    let offset = req.offset.unwrap_or(0);
    if offset < 0 {
        return Err(RosettaError::with_message(
            ErrorKind::InvalidParams,
            format!("offset {offset} is negative"),
        ));
    }
    if let Some(c) = req.currency.as_ref().filter(|c| **c != stx()) {
        return Err(RosettaError::with_details(ErrorKind::UnsupportedCurrency, json!({ "currency": c })));
    }
    if req.coin_identifier.is_some() {
        return Err(RosettaError::new(ErrorKind::CoinsUnsupported));
    }
    let address = req.account_identifier.as_ref().map(|a| a.address.clone()).or(req.address.clone());
    let tx_hash = req
        .transaction_identifier
        .as_ref()
        .map(|t| parse_hash(&t.hash, ErrorKind::InvalidTransactionHash))
        .transpose()?;
    if address.is_none() && tx_hash.is_none() {
        return Err(RosettaError::with_message(
            ErrorKind::InvalidParams,
            "search needs transaction_identifier, account_identifier or address",
        ));
    }
    let max_block = match req.max_block {
        Some(m) => m,
        None => ctx.reader.tip().await?.map_or(0, |t| t.block.block_height),
    };
    // Candidates, newest first: (index_block_hash, tx_id).
    let mut candidates: Vec<(String, String)> = Vec::new();
    if let Some(a) = &address {
        candidates = ctx
            .reader
            .account_txs(a, max_block)
            .await?
            .into_iter()
            .map(|t| (t.index_block_hash, t.tx_id))
            .collect();
    }
    if let Some(h) = &tx_hash {
        let by_hash: Vec<(String, String)> =
            ctx.reader.tx_block(h).await?.map(|b| (b, h.clone())).into_iter().collect();
        candidates = match (req.operator, address.is_some()) {
            (Operator::And, true) => candidates.into_iter().filter(|(_, t)| t == h).collect(),
            (Operator::Or, true) => {
                let mut all = by_hash;
                all.extend(candidates.into_iter().filter(|(_, t)| t != h));
                all
            }
            (_, false) => by_hash,
        };
    }
    let mut matched: Vec<BlockTransaction> = Vec::new();
    let mut cache: Option<(String, BlockIdentifier, Vec<Transaction>)> = None;
    for (ibh, tx_id) in candidates {
        if cache.as_ref().is_none_or(|(h, _, _)| *h != ibh) {
            let Some(b) = ctx.reader.block_by_index_hash(&ibh).await? else { continue };
            if b.block_height > max_block {
                continue;
            }
            let contents = ctx.reader.block_contents(&ibh).await?;
            cache = Some((ibh.clone(), identifier(&b), transactions(&contents, &ibh)));
        }
        let Some((_, block_id, txs)) = &cache else { continue };
        let Some(tx) = txs.iter().find(|t| t.transaction_identifier.hash == tx_id) else { continue };
        let op_matches = tx.operations.iter().any(|o| {
            any_or_eq(req.r#type.as_ref(), &o.r#type)
                && any_or_eq(req.status.as_ref(), &o.status)
                && any_or_eq(req.success.as_ref(), &successful(&o.status))
        });
        let filtered = req.r#type.is_some() || req.status.is_some() || req.success.is_some();
        if !filtered || op_matches {
            matched.push(BlockTransaction { block_identifier: block_id.clone(), transaction: tx.clone() });
        }
    }
    let start = usize::try_from(offset).unwrap_or(usize::MAX).min(matched.len());
    let end = start.saturating_add(usize::try_from(limit).unwrap_or(0)).min(matched.len());
    let next_offset = (end < matched.len()).then_some(end as i64);
    Ok(SearchTransactionsResponse { next_offset, transactions: matched[start..end].to_vec() })
}

/// `None` matches anything (keeps the crate's MSRV, below `Option::is_none_or`).
fn any_or_eq<T: PartialEq>(want: Option<&T>, v: &T) -> bool {
    want.is_none_or(|w| w == v)
}
