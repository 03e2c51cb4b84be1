//! A principal's balance changes: per transaction (`…/transactions/{tx_id}/balance-changes`,
//! cursor `asset_type:asset_identifier`) and across a list of transactions
//! (`…/balance-changes?tx_id=…`, cursor `height:microblock_sequence:tx_index:asset_type:asset`,
//! newest transaction first, then by asset). Both cursors name the page's first row; the
//! previous page's cursor exists only when a whole page precedes ([`Previous::WholePage`]): the
//! incumbent's two balance-change queries look it up with `OFFSET limit - 1 LIMIT 1`, unlike its
//! balance lists' `LIMIT limit` (no recording pages with a cursor, so its source decides).

use std::cmp::Ordering;

use serde_json::{json, Value};
use warp::reply::Response;

use super::{json, AssetKind, BalanceChange, PrincipalsReader, TxPosition};
use crate::error::{ApiError, In, Rule};
use crate::params::Query;
use crate::v3::cursor::{self, number};
use crate::v3::etag::{self, Kind};
use crate::v3::page::{self, paged, Previous};
use crate::v3::params;
use crate::ExtendedReader;

/// `(asset_type, asset_identifier)` as the incumbent's key orders them.
fn asset_key(c: &BalanceChange) -> (u64, &str) {
    (u64::from(c.kind.code()), c.asset_identifier.as_str())
}

fn tx_cursor(c: &BalanceChange) -> String {
    format!("{}:{}", c.kind.code(), c.asset_identifier)
}

fn list_cursor(c: &BalanceChange) -> String {
    format!("{}:{}", c.position, tx_cursor(c))
}

fn change_json(c: &BalanceChange, with_tx: bool) -> Value {
    let asset = match c.kind {
        AssetKind::Stx => json!({ "type": "stx" }),
        k => json!({ "type": k.name(), "identifier": c.asset_identifier }),
    };
    let net = c.received as i128 - c.sent as i128;
    let change =
        json!({ "sent": c.sent.to_string(), "received": c.received.to_string(), "net": net.to_string() });
    if with_tx {
        json!({ "tx_id": c.tx_id, "asset": asset, "balance_change": change })
    } else {
        json!({ "asset": asset, "balance_change": change })
    }
}

pub(super) async fn of_tx<R: ExtendedReader>(
    r: &R,
    raw: &str,
    raw_tx: &str,
    q: &Query,
    inm: Option<&str>,
) -> Result<Response, ApiError> {
    let principal = params::principal(raw)?;
    let tx_id = params::tx_id(raw_tx)?;
    let limit = page::limit(q, page::TX)?;
    let from = cursor::read(q, cursor::TX_BALANCE_CHANGE)?.map(|c| {
        let (t, a) = c.split_once(':').unwrap_or((c, ""));
        (number(t), a.to_string())
    });
    let tag = etag::value(r, Kind::Transaction(&tx_id)).await?;
    etag::cached(tag, inm, async {
        let rows = PrincipalsReader::balance_changes(r, &principal, std::slice::from_ref(&tx_id)).await?;
        let before = |c: &BalanceChange| from.as_ref().is_some_and(|(t, a)| asset_key(c) < (*t, a.as_str()));
        json(&paged(rows, limit, Previous::WholePage, before, tx_cursor).map(|c| change_json(&c, false)))
    })
    .await
}

/// The list cursor's parts: the position and the asset key.
fn parse_list_cursor(raw: &str) -> (TxPosition, u64, String) {
    let mut p = raw.splitn(5, ':');
    let mut n = || number(p.next().unwrap_or("0"));
    let small = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    let (h, m, i, t) = (n(), n(), n(), n());
    let asset = raw.splitn(5, ':').nth(4).unwrap_or_default().to_string();
    (TxPosition { block_height: h, microblock_sequence: small(m), tx_index: small(i) }, t, asset)
}

pub(super) async fn by_tx_ids<R: ExtendedReader>(
    r: &R,
    raw: &str,
    q: &Query,
    inm: Option<&str>,
) -> Result<Response, ApiError> {
    let principal = params::principal(raw)?;
    let ids = q.all("tx_id");
    if ids.is_empty() {
        return Err(ApiError::schema(In::Query, "tx_id", Rule::Required));
    }
    let limit = page::limit(q, page::TX)?;
    let from = cursor::read(q, cursor::BALANCE_CHANGE)?.map(parse_list_cursor);
    if ids.len() > page::TX.max as usize {
        return Err(ApiError::schema(In::Query, "tx_id", Rule::MaxItems(u64::from(page::TX.max))));
    }
    let ids = ids.iter().map(|t| params::hash_named(t, "tx_id")).collect::<Result<Vec<_>, _>>()?;
    let tag = etag::value(r, Kind::Principal(&principal)).await?;
    etag::cached(tag, inm, async {
        let rows = PrincipalsReader::balance_changes(r, &principal, &ids).await?;
        let before = |c: &BalanceChange| {
            from.as_ref().is_some_and(|(pos, t, a)| match c.position.cmp(pos) {
                Ordering::Greater => true,
                Ordering::Less => false,
                Ordering::Equal => asset_key(c) < (*t, a.as_str()),
            })
        };
        json(&paged(rows, limit, Previous::WholePage, before, list_cursor).map(|c| change_json(&c, true)))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(h: u64, kind: AssetKind, asset: &str) -> BalanceChange {
        BalanceChange {
            tx_id: format!("0x{h:064x}"),
            position: TxPosition { block_height: h, microblock_sequence: 2147483647, tx_index: 0 },
            kind,
            asset_identifier: asset.into(),
            sent: 1,
            received: 3,
        }
    }

    #[test]
    fn pages_name_their_first_rows_and_a_whole_previous_page() {
        let rows = vec![
            change(9, AssetKind::Stx, "stx"),
            change(9, AssetKind::Ft, "SP1.a::b"),
            change(5, AssetKind::Nft, "SP1.n::m"),
        ];
        let p = paged(rows.clone(), 2, Previous::WholePage, |_| false, list_cursor);
        assert_eq!(p.total, 3);
        assert_eq!(p.cursor.current.as_deref(), Some("9:2147483647:0:1:stx"));
        assert_eq!(p.cursor.next.as_deref(), Some("5:2147483647:0:3:SP1.n::m"));
        assert_eq!(p.cursor.previous, None);
        let (pos, t, a) = parse_list_cursor("5:2147483647:0:3:SP1.n::m");
        let p = paged(
            rows,
            2,
            Previous::WholePage,
            |c| c.position > pos || (c.position == pos && asset_key(c) < (t, a.as_str())),
            list_cursor,
        );
        assert_eq!(p.results.len(), 1);
        assert_eq!(p.cursor.previous.as_deref(), Some("9:2147483647:0:1:stx"));
        assert_eq!(change_json(&p.results[0], true)["balance_change"]["net"], "2");
    }
}
