//! `GET /extended/v3/principals/{p}/transactions`: newest first by chain position, cursor
//! `height:microblock_sequence:tx_index` (inclusive: it names the page's first row).

use warp::reply::Response;

use super::{PrincipalTx, PrincipalsReader, TxPosition};
use crate::error::ApiError;
use crate::params::Query;
use crate::reply::{json_text_with_etag, page_text};
use crate::v3::cursor::{self, TxCursor};
use crate::v3::etag::{self, Kind};
use crate::v3::page::{self, CursorPage, Cursors};
use crate::v3::params;
use crate::v3::tx::render::mined_summary_text;
use crate::ExtendedReader;

fn position(c: TxCursor) -> TxPosition {
    let small = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    TxPosition {
        block_height: c.block_height,
        microblock_sequence: small(c.microblock_sequence),
        tx_index: small(c.tx_index),
    }
}

/// A row of the page as JSON text: the transaction's summary ([`mined_summary_text`]) and
/// the principal's part in it (fixed words, numbers and flags: nothing to escape).
fn row_text(t: &PrincipalTx, principal: &str) -> Result<String, ApiError> {
    let involvement = if t.sender == principal {
        "sender"
    } else if t.sponsor.as_deref() == Some(principal) {
        "sponsor"
    } else {
        "affected"
    };
    let net = t.stx_received as i128 - t.stx_sent as i128;
    let transaction = mined_summary_text(&t.tx).map_err(|e| ApiError::Internal(Box::new(e)))?;
    let [stx, ft, nft] = t.affected;
    Ok(format!(
        "{{\"transaction\":{transaction},\"involvement\":\"{involvement}\",\"balance_changes\":{{\"stx\":\
         {{\"sent\":\"{}\",\"received\":\"{}\",\"net\":\"{net}\"}}}},\
         \"affected_balances\":{{\"stx\":{stx},\"ft\":{ft},\"nft\":{nft}}}}}",
        t.stx_sent, t.stx_received
    ))
}

/// The page starting at `from` (the incumbent's `resolveTransactionCursor`: `H:0:0` names the
/// whole of block H unless a row is at exactly that position).
pub(super) async fn page<R: PrincipalsReader>(
    r: &R,
    principal: &str,
    from: Option<TxCursor>,
    limit: u32,
) -> Result<CursorPage<String>, ApiError> {
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
    let results = rows.iter().map(|t| row_text(t, principal)).collect::<Result<Vec<_>, _>>()?;
    Ok(CursorPage::new(total, limit, cursors, results))
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
    etag::cached(tag, inm, async {
        let p = page(r, &principal, from, limit).await?;
        let envelope = CursorPage::new(p.total, p.limit, p.cursor, Vec::<String>::new());
        Ok(json_text_with_etag(page_text(&envelope, &p.results), None))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tx::MinedTx;
    use serde_json::{json, Value};

    #[test]
    fn rows_are_written_as_the_json_tree_serializes() {
        // mainnet-reorg-scenario1's token transfer (with a memo).
        let raw = "0x0000000001040072cfb3d915ad8971917c58b569ddcb0954d75eaa000000000000000000000000000000b400013b2f058b718e6b3bf27da77dd1446c63b9774f98afa347f4bc3a9d19375df36261f9733f3a511d2e4ea8dd478ae7a5269e80436861973898f959b609bd8e0348030200000000000516b75b6d97912bff72fad3019c18bfb5ce3c8b0b5e00000000000186a055684f68200000000000000000000000000000000000000000000000000000000000";
        let tx_id = format!("0x{}", "01".repeat(32));
        let tx = MinedTx {
            tx_id: tx_id.clone(),
            raw_tx: raw.into(),
            index_block_hash: format!("0x{}", "cd".repeat(32)),
            block_hash: format!("0x{}", "ab".repeat(32)),
            block_height: 16,
            status: "success".into(),
            raw_result: "0x0703".into(),
            api_json: Some(crate::tx::materialized_from_raw(&tx_id, raw, false, "0x0703").unwrap()),
            ..MinedTx::default()
        };
        let row = PrincipalTx {
            tx,
            position: TxPosition { block_height: 16, microblock_sequence: 2147483647, tx_index: 0 },
            sender: "SA".into(),
            sponsor: Some("SB".into()),
            stx_sent: 7,
            stx_received: 100_000,
            affected: [true, false, true],
        };
        for (p, involvement) in [("SA", "sender"), ("SB", "sponsor"), ("SC", "affected")] {
            let summary: Value = serde_json::from_str(&mined_summary_text(&row.tx).unwrap()).unwrap();
            let tree = json!({
                "transaction": summary,
                "involvement": involvement,
                "balance_changes": { "stx": { "sent": "7", "received": "100000", "net": "99993" } },
                "affected_balances": { "stx": true, "ft": false, "nft": true },
            });
            assert_eq!(row_text(&row, p).unwrap(), serde_json::to_string(&tree).unwrap());
        }
    }
}
