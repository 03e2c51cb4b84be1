//! A principal's transactions with what they moved for it, its asset events, inbound STX and
//! pending transactions: v1 `transactions_with_transfers`, `{tx_id}/with_transfers`, `assets`,
//! `stx_inbound`, `mempool`, and v2 `/addresses/{p}/transactions` (+ `/{tx_id}/events`).

use serde_json::{json, Map, Value};
use warp::reply::Response;

use super::{
    block_ref, bound, cached_json, height_of, heights, principal, principal_etag, AddressReader, StxInbound,
};
use crate::error::ApiError;
use crate::params::{LimitRule, Page, Paging, Query};
use crate::reply::deprecated;
use crate::tx::{
    clarity_json, event_json, mempool_tx_json, mined_tx_json, parse_tx_id, tx_etag, AnyTx, MempoolFilter,
    MempoolSort, MinedTx, TxEvent, TxReader,
};

pub(crate) const TXS: LimitRule = LimitRule::new(20, 50);
pub(crate) const EVENTS: LimitRule = LimitRule::new(20, 100);
pub(crate) const INBOUND: LimitRule = LimitRule::new(20, 50);
pub(crate) const MEMPOOL: LimitRule = LimitRule::new(20, 50);
pub(crate) const TX_EVENTS: LimitRule = LimitRule::new(20, 50);
/// The incumbent's `microblock_sequence` of an anchored transaction in its cursors.
const ANCHORED_SEQ: u32 = 2_147_483_647;

/// Every list of this module takes the incumbent's `total` from the page's first row.
fn page_json<T: serde::Serialize>(paging: Paging, total: u64, results: Vec<T>) -> Value {
    serde_json::to_value(Page::first_row_total(paging, total, results)).unwrap_or(Value::Null)
}

fn amount(e: &TxEvent) -> i128 {
    e.amount.as_deref().and_then(|a| a.parse().ok()).unwrap_or(0)
}

fn is_stx(e: &TxEvent) -> bool {
    e.kind.starts_with("stx_") && e.kind != "stx_lock"
}

/// STX the principal sent and received in a transaction: its STX events, plus the fee when
/// `pays_fee`.
fn stx_moved(p: &str, events: &[TxEvent], fee: i128, pays_fee: bool) -> (i128, i128) {
    let mut sent = if pays_fee { fee } else { 0 };
    let mut received = 0;
    for e in events.iter().filter(|e| is_stx(e)) {
        if e.sender.as_deref() == Some(p) {
            sent += amount(e);
        }
        if e.recipient.as_deref() == Some(p) {
            received += amount(e);
        }
    }
    (sent, received)
}

fn fee_of(tx: &Value) -> i128 {
    tx["fee_rate"].as_str().and_then(|f| f.parse().ok()).unwrap_or(0)
}

/// A transfer entry of v1 `*with_transfers`: `{amount|value, sender, recipient}` (+ asset).
fn transfer_json(e: &TxEvent, with_asset: bool) -> Value {
    let mut m = Map::new();
    if with_asset {
        m.insert("asset_identifier".into(), e.asset_identifier.clone().unwrap_or_default().into());
    }
    if e.kind.starts_with("nft_") {
        m.insert("value".into(), clarity_json(e.value_hex.as_deref().unwrap_or("0x")));
    } else {
        m.insert("amount".into(), e.amount.clone().unwrap_or_default().into());
    }
    m.insert("sender".into(), e.sender.clone().unwrap_or_default().into());
    m.insert("recipient".into(), e.recipient.clone().unwrap_or_default().into());
    Value::Object(m)
}

/// One v1 `transactions_with_transfers` item (`full`) or the `{tx_id}/with_transfers` answer.
fn with_transfers_json(p: &str, tx: Value, events: &[TxEvent], full: bool) -> Value {
    let pays = tx["sender_address"].as_str() == Some(p);
    let (sent, received) = stx_moved(p, events, fee_of(&tx), pays);
    let of = |family: &str| -> Vec<Value> {
        events
            .iter()
            .filter(|e| e.kind.starts_with(family) && e.kind != "stx_lock")
            .map(|e| transfer_json(e, family != "stx_"))
            .collect()
    };
    let mut m = Map::new();
    m.insert("tx".into(), tx);
    m.insert("stx_sent".into(), sent.to_string().into());
    m.insert("stx_received".into(), received.to_string().into());
    m.insert("stx_transfers".into(), of("stx_").into());
    if full {
        m.insert("ft_transfers".into(), of("ft_").into());
        m.insert("nft_transfers".into(), of("nft_").into());
    }
    Value::Object(m)
}

/// `GET /extended/v1/address/{p}/transactions_with_transfers`.
pub(super) async fn v1_transactions_with_transfers<R: AddressReader>(
    r: &R,
    raw: &str,
    q: &Query,
    inm: Option<String>,
) -> Result<Response, ApiError> {
    let p = principal(raw, "principal")?;
    let paging = q.paging(TXS)?;
    q.bool("unanchored")?;
    let opts = crate::tx::render_options(q)?;
    let (from, to) = heights(r, q).await?;
    let single = bound(q)?.1;
    // With `height=N` the incumbent answers every transaction of that block, whatever the
    // limit and offset (which it still echoes).
    let (total, txs) = r.address_txs_with_transfers(&p, from, to, (!single).then_some(paging)).await?;
    let events = r.principal_tx_events(&p, &txs).await?;
    let mut results = Vec::with_capacity(txs.len());
    for (tx, evs) in txs.iter().zip(&events) {
        results.push(with_transfers_json(&p, mined_tx_json(tx, None, opts)?, evs, true));
    }
    // The incumbent picks the page by block, microblock sequence and index, then sorts it by
    // block and shown index only (newest first, stable): a block's microblock transactions,
    // indexed after its own, come first.
    results.sort_by_key(|t| {
        let n = |k: &str| t["tx"][k].as_u64().unwrap_or(0);
        std::cmp::Reverse((n("block_height"), n("tx_index")))
    });
    let etag = principal_etag(r, &p, false).await?;
    Ok(deprecated(cached_json(&page_json(paging, total, results), etag, inm.as_deref())))
}

/// The canonical mined transaction `raw_id`, or the incumbent's 404.
async fn mined<R: TxReader>(r: &R, raw_id: &str) -> Result<MinedTx, ApiError> {
    let id = parse_tx_id("tx_id", raw_id)?.unwrap_or_else(|| format!("0x{}", raw_id.to_ascii_lowercase()));
    match r.tx(&id, false).await? {
        Some(AnyTx::Mined(t)) if t.canonical => Ok(t),
        _ => Err(ApiError::NotFound("could not find transaction by ID".into())),
    }
}

/// `GET /extended/v1/address/{p}/{tx_id}/with_transfers`.
pub(super) async fn v1_tx_with_transfers<R: AddressReader + TxReader>(
    r: &R,
    raw: &str,
    raw_id: &str,
    q: &Query,
    inm: Option<String>,
) -> Result<Response, ApiError> {
    let p = principal(raw, "principal")?;
    let opts = crate::tx::render_options(q)?;
    let tx = mined(r, raw_id).await?;
    let events = r.principal_tx_events(&p, std::slice::from_ref(&tx)).await?;
    let rendered = mined_tx_json(&tx, None, opts)?;
    // The incumbent answers only for the transaction's sender, token-transfer recipient, called
    // or deployed contract, or a party of one of its STX events (not a sponsor, not FT/NFT).
    let named = [
        &rendered["sender_address"],
        &rendered["token_transfer"]["recipient_address"],
        &rendered["contract_call"]["contract_id"],
        &rendered["smart_contract"]["contract_id"],
    ]
    .iter()
    .any(|v| v.as_str() == Some(p.as_str()));
    if !named && !events[0].iter().any(|e| e.kind.starts_with("stx_") && e.kind != "stx_lock") {
        return Err(ApiError::NotFound("No matching transaction found".into()));
    }
    let body = with_transfers_json(&p, rendered, &events[0], false);
    Ok(deprecated(cached_json(&body, tx_etag(&AnyTx::Mined(tx)), inm.as_deref())))
}

/// `GET /extended/v1/address/{p}/assets`: `TransactionEvent`s, newest first.
pub(super) async fn v1_assets<R: AddressReader>(
    r: &R,
    raw: &str,
    q: &Query,
    inm: Option<String>,
) -> Result<Response, ApiError> {
    let p = principal(raw, "principal")?;
    let paging = q.paging(EVENTS)?;
    q.bool("unanchored")?;
    let until = q.get("until_block").map(|b| block_ref(b, "until_block")).transpose()?;
    let height = height_of(r, until).await?;
    let (total, events) = r.address_assets(&p, height, paging).await?;
    let results: Vec<Value> = events.iter().map(asset_event_json).collect();
    let etag = principal_etag(r, &p, false).await?;
    Ok(deprecated(cached_json(&page_json(paging, total, results), etag, inm.as_deref())))
}

/// A `TransactionEvent` as the incumbent's `/assets` serves it: its lock events carry
/// `locked_amount` "1" and `unlock_height` 1 in every recording (its asset query does not select
/// the lock's columns), reproduced here.
fn asset_event_json(e: &TxEvent) -> Value {
    if e.kind != "stx_lock" {
        return event_json(e);
    }
    let quirk = TxEvent { amount: Some("1".into()), unlock_height: Some(1), ..e.clone() };
    event_json(&quirk)
}

fn inbound_json(t: &StxInbound) -> Value {
    json!({
        "sender": t.sender,
        "amount": t.amount,
        "memo": t.memo,
        "block_height": t.block_height,
        "tx_id": t.tx_id,
        "transfer_type": t.transfer_type,
        "tx_index": t.tx_index,
    })
}

/// `GET /extended/v1/address/{p}/stx_inbound`.
pub(super) async fn v1_stx_inbound<R: AddressReader>(
    r: &R,
    raw: &str,
    q: &Query,
    inm: Option<String>,
) -> Result<Response, ApiError> {
    let p = principal(raw, "principal")?;
    let paging = q.paging(INBOUND)?;
    q.bool("unanchored")?;
    let (from, to) = heights(r, q).await?;
    let (total, rows) = r.stx_inbound(&p, from, to, paging).await?;
    let results: Vec<Value> = rows.iter().map(inbound_json).collect();
    let etag = principal_etag(r, &p, false).await?;
    Ok(deprecated(cached_json(&page_json(paging, total, results), etag, inm.as_deref())))
}

/// `GET /extended/v1/address/{p}/mempool`: its pending transactions, newest first.
pub(super) async fn v1_mempool<R: AddressReader + TxReader>(
    r: &R,
    raw: &str,
    q: &Query,
    inm: Option<String>,
) -> Result<Response, ApiError> {
    let p = principal(raw, "principal")?;
    let paging = q.paging(MEMPOOL)?;
    q.bool("unanchored")?;
    let opts = crate::tx::render_options(q)?;
    let filter = MempoolFilter {
        address: Some(p.clone()),
        sort: MempoolSort::Age,
        ascending: false,
        ..Default::default()
    };
    let (total, txs) = r.mempool_list(&filter, paging).await?;
    let results = txs.iter().map(|t| mempool_tx_json(t, opts)).collect::<Result<Vec<_>, _>>()?;
    let etag = principal_etag(r, &p, true).await?;
    Ok(deprecated(cached_json(&page_json(paging, total, results), etag, inm.as_deref())))
}

/// The incumbent's v2 cursor of a transaction: `index_block_hash:microblock_sequence:tx_index`.
fn cursor(t: &MinedTx) -> String {
    format!("{}:{}:{}", t.index_block_hash, t.microblock_sequence.unwrap_or(ANCHORED_SEQ), t.tx_index)
}

/// `{transfer, mint, burn}` counts of one asset family's events.
fn counts(events: &[TxEvent], family: &str) -> Value {
    let n = |action: &str| events.iter().filter(|e| e.kind == format!("{family}_{action}")).count();
    json!({ "transfer": n("transfer"), "mint": n("mint"), "burn": n("burn") })
}

/// One v2 `AddressTransaction`.
fn address_tx_json(p: &str, tx: Value, events: &[TxEvent]) -> Value {
    let pays = if tx["sponsored"].as_bool() == Some(true) {
        tx["sponsor_address"].as_str() == Some(p)
    } else {
        tx["sender_address"].as_str() == Some(p)
    };
    let (sent, received) = stx_moved(p, events, fee_of(&tx), pays);
    json!({
        "tx": tx,
        "stx_sent": sent.to_string(),
        "stx_received": received.to_string(),
        "events": { "stx": counts(events, "stx"), "ft": counts(events, "ft"), "nft": counts(events, "nft") },
    })
}

/// `GET /extended/v2/addresses/{p}/transactions`, with the incumbent's cursors: `cursor` names
/// the page's first row, `prev_cursor` the next (older) page's, `next_cursor` the newer one's.
pub(super) async fn v2_transactions<R: AddressReader>(
    r: &R,
    raw: &str,
    q: &Query,
    inm: Option<String>,
) -> Result<Response, ApiError> {
    let p = principal(raw, "address")?;
    let paging = q.paging(TXS)?;
    let opts = crate::tx::render_options(q)?;
    // One row past the page gives the older page's cursor.
    let (total, mut txs) = r.address_txs(&p, 0, None, Paging { limit: paging.limit + 1, ..paging }).await?;
    let prev = (txs.len() > paging.limit as usize).then(|| txs.pop().map(|t| cursor(&t))).flatten();
    let newer_offset = paging.offset.checked_sub(u64::from(paging.limit));
    let next = match newer_offset {
        Some(offset) => r.address_txs(&p, 0, None, Paging { limit: 1, offset }).await?.1.first().map(cursor),
        None => None,
    };
    let events = r.principal_tx_events(&p, &txs).await?;
    let mut results = Vec::with_capacity(txs.len());
    for (tx, evs) in txs.iter().zip(&events) {
        // The incumbent's v2 list does not join the called contract's ABI: arguments are typed
        // from their values and unnamed.
        let tx = MinedTx { contract_abi: None, ..tx.clone() };
        results.push(address_tx_json(&p, mined_tx_json(&tx, None, opts)?, evs));
    }
    let body = json!({
        "limit": paging.limit,
        "offset": paging.offset,
        // The incumbent's `total` comes with the page's rows (0 past the end).
        "total": if results.is_empty() { 0 } else { total },
        "next_cursor": next,
        "prev_cursor": prev,
        "cursor": txs.first().map(cursor),
        "results": results,
    });
    Ok(cached_json(&body, principal_etag(r, &p, false).await?, inm.as_deref()))
}

/// One v2 `AddressTransactionEvent`.
fn address_event_json(e: &TxEvent) -> Value {
    let (family, action) = e.kind.split_once('_').unwrap_or((e.kind.as_str(), ""));
    let mut data = Map::new();
    data.insert("type".into(), action.into());
    if family == "nft" {
        data.insert("asset_identifier".into(), e.asset_identifier.clone().unwrap_or_default().into());
        data.insert("value".into(), clarity_json(e.value_hex.as_deref().unwrap_or("0x")));
    } else {
        data.insert("amount".into(), e.amount.clone().unwrap_or_default().into());
        if family == "ft" {
            data.insert("asset_identifier".into(), e.asset_identifier.clone().unwrap_or_default().into());
        }
    }
    for (k, v) in [("sender", &e.sender), ("recipient", &e.recipient)] {
        if let Some(v) = v {
            data.insert(k.into(), v.clone().into());
        }
    }
    json!({ "type": family, "event_index": e.event_index, "data": data })
}

/// `GET /extended/v2/addresses/{p}/transactions/{tx_id}/events`: the transaction's asset events
/// that the principal sends or receives.
pub(super) async fn v2_tx_events<R: AddressReader + TxReader>(
    r: &R,
    raw: &str,
    raw_id: &str,
    q: &Query,
    inm: Option<String>,
) -> Result<Response, ApiError> {
    let p = principal(raw, "address")?;
    let paging = q.paging(TX_EVENTS)?;
    let tx = mined(r, raw_id).await?;
    let mut events = r.principal_tx_events(&p, std::slice::from_ref(&tx)).await?.pop().unwrap_or_default();
    // Oldest event first here (the v1 transfer lists are newest first).
    events.reverse();
    let results: Vec<Value> = events
        .iter()
        .skip(usize::try_from(paging.offset).unwrap_or(usize::MAX))
        .take(paging.limit as usize)
        .map(address_event_json)
        .collect();
    let body = page_json(paging, events.len() as u64, results);
    Ok(cached_json(&body, tx_etag(&AnyTx::Mined(tx)), inm.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: &str, sender: Option<&str>, recipient: Option<&str>, amount: &str) -> TxEvent {
        TxEvent {
            kind: kind.into(),
            sender: sender.map(Into::into),
            recipient: recipient.map(Into::into),
            amount: Some(amount.into()),
            ..Default::default()
        }
    }

    #[test]
    fn stx_moved_counts_stx_events_and_the_fee_payer() {
        let evs = [
            ev("stx_transfer", Some("A"), Some("B"), "1000"),
            ev("stx_mint", None, Some("A"), "7"),
            ev("ft_transfer", Some("A"), Some("B"), "50"),
            ev("stx_lock", Some("A"), None, "99"),
        ];
        assert_eq!(stx_moved("A", &evs, 300, true), (1300, 7));
        assert_eq!(stx_moved("A", &evs, 300, false), (1000, 7));
        assert_eq!(stx_moved("B", &evs, 300, false), (0, 1000));
    }

    #[test]
    fn v2_events_name_family_and_action() {
        let e = ev("stx_mint", None, Some("A"), "5");
        assert_eq!(
            address_event_json(&e),
            json!({"type": "stx", "event_index": 0, "data": {"type": "mint", "amount": "5", "recipient": "A"}})
        );
        let c = counts(&[e.clone(), e, ev("stx_transfer", Some("A"), Some("B"), "1")], "stx");
        assert_eq!(c, json!({"transfer": 1, "mint": 2, "burn": 0}));
    }
}
