//! `GET /extended/v3/principals/{p}/transactions`: newest first by chain position, cursor
//! `height:microblock_sequence:tx_index` (inclusive: it names the page's first row).

use serde_json::{json, Value};
use warp::reply::Response;

use super::summary::summary_json;
use super::{json, PrincipalTx, PrincipalsReader, TxPosition};
use crate::error::ApiError;
use crate::params::Query;
use crate::v3::cursor::{self, TxCursor};
use crate::v3::etag::{self, Kind};
use crate::v3::page::{self, CursorPage, Cursors};
use crate::v3::params;
use crate::ExtendedReader;

fn position(c: TxCursor) -> TxPosition {
    let small = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    TxPosition {
        block_height: c.block_height,
        microblock_sequence: small(c.microblock_sequence),
        tx_index: small(c.tx_index),
    }
}

fn row_json(t: &PrincipalTx, principal: &str) -> Value {
    let involvement = if t.sender == principal {
        "sender"
    } else if t.sponsor.as_deref() == Some(principal) {
        "sponsor"
    } else {
        "affected"
    };
    let net = t.stx_received as i128 - t.stx_sent as i128;
    json!({
        "transaction": summary_json(&t.tx),
        "involvement": involvement,
        "balance_changes": { "stx": {
            "sent": t.stx_sent.to_string(),
            "received": t.stx_received.to_string(),
            "net": net.to_string(),
        }},
        "affected_balances": { "stx": t.affected[0], "ft": t.affected[1], "nft": t.affected[2] },
    })
}

/// The page starting at `from` (the incumbent's `resolveTransactionCursor`: `H:0:0` names the
/// whole of block H unless a row is at exactly that position).
pub(super) async fn page<R: PrincipalsReader>(
    r: &R,
    principal: &str,
    from: Option<TxCursor>,
    limit: u32,
) -> Result<CursorPage<Value>, ApiError> {
    let from = match from {
        Some(c) if c.may_name_block() && !r.principal_tx_at(principal, position(c)).await? => {
            Some(TxCursor::block_end(c.block_height))
        }
        other => other,
    };
    let mut rows = r.principal_txs(principal, from.map(position), limit.saturating_add(1)).await?;
    let next = (rows.len() > limit as usize).then(|| rows[limit as usize].position.to_string());
    rows.truncate(limit as usize);
    let Some(first) = rows.first() else { return Ok(CursorPage::new(0, limit, Cursors::default(), vec![])) };
    let previous =
        r.principal_txs_after(principal, first.position, limit).await?.last().map(ToString::to_string);
    let cursors = Cursors { next, previous, current: Some(first.position.to_string()) };
    let total = r.principal_tx_count(principal).await?;
    Ok(CursorPage::new(total, limit, cursors, rows).map(|t| row_json(&t, principal)))
}

pub(super) async fn transactions<R: ExtendedReader>(
    r: &R,
    raw: &str,
    q: &Query,
    inm: Option<&str>,
) -> Result<Response, ApiError> {
    let principal = params::principal(raw)?;
    let limit = page::limit(q, page::TX)?;
    let from = cursor::read(q, cursor::TX)?.map(TxCursor::parse);
    let tag = etag::value(r, Kind::Principal(&principal)).await?;
    etag::cached(tag, inm, async { json(&page(r, &principal, from, limit).await?) }).await
}
