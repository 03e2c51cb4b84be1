//! THE list of answer fields allowed to differ from the incumbent's recordings, each with its
//! reason (mirrored in docs/extended-deviations.md, "Allowed differences"). Everything else the
//! parity tests compare: status always (modulo the spec's error rules in `parity::compare`), the
//! JSON body of every answer, errors included (the spec's additions to the incumbent's error
//! fields: `reference` on the unknown-URL 404; on invalid input `stack`, `errorTag`, our
//! `error` and `statusCode`), the `Location` of redirects.
//!
//! Not listed because the harness never compares them: header values (ETags are hashes of our
//! own cache keys; `x-api-version` names our server).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;
use test_support::oracle::OracleEntry;

/// Object keys (at any depth) ignored in the answers of the route whose path template is
/// `route` (`""`: every route).
pub struct Allowed {
    pub route: &'static str,
    pub keys: &'static [&'static str],
    pub reason: &'static str,
}

pub const ALLOWED: &[Allowed] = &[
    Allowed {
        route: "/extended",
        keys: &["server_version"],
        reason: "names the server that answers (the incumbent's release tag and commit, ours)",
    },
    Allowed {
        route: "",
        keys: &["receipt_time", "receipt_time_iso"],
        reason: "when this server's mempool first saw the transaction: the wall clock of the ingest run",
    },
    Allowed {
        route: "/extended/v1/microblock/unanchored/txs",
        keys: &["block_time", "block_time_iso"],
        reason: "a streamed, not yet anchored transaction's time is when the /new_microblocks event was \
                 received: by the incumbent at its TSV import (the recording day), by us the receipt time \
                 the TSV carries (for a live node both are the receipt time)",
    },
];

/// The keys ignored for answers of the route template `template`.
pub fn ignored_keys(template: &str) -> Vec<&'static str> {
    ALLOWED
        .iter()
        .filter(|a| a.route.is_empty() || a.route == template)
        .flat_map(|a| a.keys.iter().copied())
        .collect()
}

/// Row orders the incumbent leaves undefined, sorted on both sides by the documented key before
/// comparing (docs/extended-deviations.md, ext-addr): v1 `address/{p}/transactions` and
/// `transactions_with_transfers` (the incumbent's default page comes back in join order on the
/// reorg and microblock fixtures), `stx_inbound` (a token transfer with a memo is listed twice,
/// as `stx-transfer` and `stx-transfer-memo`, in either order) and the FT holders of equal
/// balance ([`sort_tied_holders`]).
pub fn normalize_order(template: &str, body: &mut Value) {
    if template == "/extended/v1/tokens/ft/{token}/holders" {
        sort_tied_holders(body);
        return;
    }
    let Some(results) = body.get_mut("results").and_then(Value::as_array_mut) else { return };
    match template {
        "/extended/v1/tx" => {
            mask_unanchored_times(results);
            sort_shown_index_ties(results);
        }
        "/extended/v1/tx/block/{block_hash}"
        | "/extended/v1/tx/block_height/{height}"
        | "/extended/v2/blocks/{height_or_hash}/transactions" => sort_shown_index_ties(results),
        "/extended/v1/address/{principal}/stx_inbound" => results.sort_by_key(|r| {
            let n = |k: &str| r[k].as_i64().unwrap_or(0);
            (std::cmp::Reverse((n("block_height"), n("tx_index"))), r["transfer_type"].to_string())
        }),
        _ => {}
    }
}

/// FT holders with equal balances: the incumbent sorts by balance only and PostgreSQL returns
/// ties in plan order, so the same recording lists them differently in the full list and in an
/// offset page (mocknet `stx`: the full list's rows 2 and 3 are STF9B75A… and ST1HB1T8…, all six
/// first holders at 10^16, while `?limit=2&offset=1` answers ST11NJTT… and STRYYQQ9…; the pox-4
/// regtest likewise). Consecutive rows of equal balance are compared sorted by address, so which
/// addresses hold, every balance and their order are compared. Where the page's edge cuts such
/// a group (its first rows when `offset` > 0, its last ones when rows remain past the page),
/// which of the tied holders fall inside is plan order too: only their addresses are not
/// compared.
fn sort_tied_holders(body: &mut Value) {
    let n = |k: &str| body[k].as_u64().unwrap_or(0);
    let (offset, total) = (n("offset"), n("total"));
    let Some(results) = body.get_mut("results").and_then(Value::as_array_mut) else { return };
    let len = results.len();
    let mut start = 0;
    while start < len {
        let b = results[start]["balance"].clone();
        let end = start + results[start..].iter().take_while(|r| r["balance"] == b).count();
        let group = &mut results[start..end];
        group.sort_by_key(|r| r["address"].as_str().unwrap_or_default().to_string());
        let cut = (start == 0 && offset > 0) || (end == len && offset + (len as u64) < total);
        if cut {
            group.iter_mut().for_each(|r| r["address"] = Value::String("(tie cut by the page)".into()));
        }
        start = end;
    }
}

/// A streamed, not yet anchored transaction listed by `/tx?unanchored=true` (`is_unanchored`):
/// its `block_time` is when its `/new_microblocks` event was received: the incumbent's TSV import
/// day in the recordings, the TSV's own receipt time here (as on `/microblock/unanchored/txs`,
/// [`ALLOWED`]). Anchored rows are compared in full.
fn mask_unanchored_times(results: &mut [Value]) {
    for r in results.iter_mut().filter(|r| r["is_unanchored"] == Value::Bool(true)) {
        r["block_time"] = Value::Null;
        r["block_time_iso"] = Value::Null;
    }
}

/// Block 1's transactions that share a shown `tx_index` (one of block 1's own and a boot
/// transaction of block 0 shown at its block-0 index + 1: epoch-3-transition, pox-4 regtest).
/// The incumbent orders by `tx_index` only and returns such pairs in plan order, inconsistently
/// within one answer (regtest `/tx/block_height/1`, newest first: at index 3 the block's own
/// coinbase before the boot `costs`, at index 2 the boot `lockup` before the block's own
/// `costs-3`). Consecutive rows of the same block and index are compared sorted by tx id; which
/// rows, and the order between indexes, are compared.
fn sort_shown_index_ties(results: &mut [Value]) {
    let key = |r: &Value| (r["block_height"].clone(), r["tx_index"].clone());
    let mut start = 0;
    while start < results.len() {
        let k = key(&results[start]);
        let end = start + results[start..].iter().take_while(|r| key(r) == k).count();
        results[start..end].sort_by_key(|r| r["tx_id"].as_str().unwrap_or_default().to_string());
        start = end;
    }
}

/// `/tx/mempool` in arrival order (no `order_by`, or `age`): the incumbent sorts by its own
/// receipt second only, and transactions received in the same second come back in plan order,
/// inconsistently (pox-4 regtest: the full list starts d446…, e9fd…, 54d4…, while
/// `?limit=2&offset=1` answers d446…, 54d4…). Rows sharing a receipt second (each side's own)
/// are compared sorted by tx id; which rows, and the order between seconds, are compared.
fn sort_same_second_mempool(e: &OracleEntry, body: &mut Value) {
    let by_age = !e.query.contains("order_by=") || e.query.contains("order_by=age");
    let Some(results) = body.get_mut("results").and_then(Value::as_array_mut).filter(|_| by_age) else {
        return;
    };
    let mut start = 0;
    while start < results.len() {
        let t = results[start]["receipt_time"].clone();
        let end = start + results[start..].iter().take_while(|r| r["receipt_time"] == t).count();
        results[start..end].sort_by_key(|r| r["tx_id"].as_str().unwrap_or_default().to_string());
        start = end;
    }
}

/// The v1 Block's `txs` (tx ids only), listed by the incumbent with
/// `ORDER BY microblock_sequence DESC, tx_index DESC` and nothing else, so block 1's pairs that
/// share a shown `tx_index` (see [`sort_shown_index_ties`]) come back in plan order, and the
/// same recording proves it inconsistent (pox-4 regtest, block 1: `/block/by_height/1` and
/// `/block/{hash}` list the block's own coinbase `0x9f9b…` before the boot `costs` `0xe079…` at
/// index 3 and the boot `lockup` `0x6c7d…` before the own `costs-3` `0x156c…` at index 2; the
/// `/block` list, sorting the rows of a whole page of blocks, has both pairs the other way
/// round). Which ids tie is read from the incumbent's own `/tx/{id}` recordings of the fixture
/// (block height and `tx_index`); consecutive tied ids are compared sorted, everything else
/// (which ids, the order between indexes) is compared.
fn sort_block_tx_ties(e: &OracleEntry, body: &mut Value) {
    let index = recorded_tx_index(e);
    let sort = |txs: &mut Value| {
        let Some(ids) = txs.as_array_mut() else { return };
        let key = |v: &Value| v.as_str().and_then(|id| index.get(id)).copied();
        let mut start = 0;
        while start < ids.len() {
            let k = key(&ids[start]);
            let end = start + ids[start..].iter().take_while(|v| k.is_some() && key(v) == k).count().max(1);
            ids[start..end].sort_by_key(|v| v.as_str().unwrap_or_default().to_string());
            start = end;
        }
    };
    match body.get_mut("results").and_then(Value::as_array_mut) {
        Some(blocks) => blocks.iter_mut().for_each(|b| sort(&mut b["txs"])),
        None => {
            if body.get("txs").is_some() {
                sort(&mut body["txs"]);
            }
        }
    }
}

type TxIndex = HashMap<String, (i64, i64)>;

/// tx id → (block height, `tx_index`) of every transaction the fixture's recording answered at
/// `/extended/v1/tx/{id}` (read once per fixture).
fn recorded_tx_index(e: &OracleEntry) -> Arc<TxIndex> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Arc<TxIndex>>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    let fixture = e.dir.file_name().and_then(|f| f.to_str()).unwrap_or_default().to_string();
    Arc::clone(cache.entry(e.dir.clone()).or_insert_with(|| {
        let entries = test_support::oracle::manifest(&fixture).unwrap_or_default();
        let tx_answers = entries.iter().filter(|t| {
            t.status == 200
                && t.query.is_empty()
                && t.path.starts_with("/extended/v1/tx/0x")
                && t.path.len() == 82
        });
        Arc::new(
            tx_answers
                .filter_map(|t| {
                    let v = t.json()?;
                    let n = |k: &str| v[k].as_i64();
                    Some((v["tx_id"].as_str()?.to_string(), (n("block_height")?, n("tx_index")?)))
                })
                .collect(),
        )
    }))
}

/// `tokens/nft/holdings?tx_metadata=true`: the incumbent's query has no `ORDER BY` on this
/// variant (its holdings CTE joined to `txs`), so rows come back in join order, which differs
/// from its plain answer over the same rows and page (mainnet-out-of-order-microblock,
/// `principal=SPJW1XE….stacks-punks-market`: u9048 then u5674 plain, u5674 then u9048 with
/// `tx_metadata=true`). Such answers are compared sorted by asset identifier and value; which
/// rows, and every field of each, are compared. The plain answers (ordered) are compared as is.
fn sort_tx_metadata_holdings(e: &OracleEntry, body: &mut Value) {
    if !e.query.contains("tx_metadata=true") {
        return;
    }
    let Some(results) = body.get_mut("results").and_then(Value::as_array_mut) else { return };
    results.sort_by_key(|r| (r["asset_identifier"].to_string(), r["value"]["hex"].to_string()));
}

/// `search/{id}?include_metadata=true` of a streamed, not yet anchored transaction
/// (`metadata.is_unanchored`): as on `/microblock/unanchored/txs` ([`ALLOWED`]), its
/// `block_time` is when the `/new_microblocks` event was received (the incumbent's import day,
/// the TSV's receipt time here). Every other field is compared.
fn mask_unanchored_metadata_time(body: &mut Value) {
    let Some(m) = body.get_mut("result").and_then(|r| r.get_mut("metadata")) else { return };
    if m["is_unanchored"] == Value::Bool(true) {
        m["block_time"] = Value::Null;
        m["block_time_iso"] = Value::Null;
    }
}

/// v3 transactions streamed, not yet anchored (`block.hash` `0x`): as on
/// `/microblock/unanchored/txs` ([`ALLOWED`]), their `block.time` is when the `/new_microblocks`
/// event was received (the incumbent's import day, mocknet `0xc3f1…` and `0x6123…` at
/// 1795319244; the TSV's receipt time here). Every other field is compared.
fn mask_v3_streamed_time(body: &mut Value) {
    let mask = |t: &mut Value| {
        if t["block"]["hash"] == "0x" {
            t["block"]["time"] = Value::Null;
        }
    };
    if body.get("block").is_some() {
        mask(body);
    } else if let Some(rows) = body.get_mut("results").and_then(Value::as_array_mut) {
        rows.iter_mut().for_each(mask);
    }
}

/// v3 transaction lists: rows sharing a position (block 1's own transaction and a boot
/// transaction shown at the same `tx_index`) come back in the incumbent's plan order
/// (`ORDER BY block_height, microblock_sequence, tx_index` only), which the v3 recordings prove
/// inconsistent: `/extended/v3/blocks/1/transactions` lists the own `costs-3` `0x156c…` before
/// the boot `lockup` `0x6c7d…` at index 2 on epoch-3-transition, the other way round on the
/// pox-4 regtest. Consecutive rows of one position are compared sorted by tx id; which rows,
/// the order between positions and the cursors (a position) are compared.
fn sort_v3_position_ties(body: &mut Value) {
    let Some(rows) = body.get_mut("results").and_then(Value::as_array_mut) else { return };
    let key = |r: &Value| (r["block"]["height"].clone(), r["block"]["tx_index"].clone());
    let mut start = 0;
    while start < rows.len() {
        let k = key(&rows[start]);
        let end = start + rows[start..].iter().take_while(|r| key(r) == k).count();
        rows[start..end].sort_by_key(|r| r["tx_id"].as_str().unwrap_or_default().to_string());
        start = end;
    }
}

/// The v3 mempool lists' cursors (all pending transactions, a principal's) are
/// `receipt_time:tx_id`: their receipt time is the allowed `receipt_time` ([`ALLOWED`]: this
/// server's mempool clock), so only the tx id part is compared.
fn mask_v3_mempool_cursor_times(body: &mut Value) {
    let Some(cursor) = body.get_mut("cursor").and_then(Value::as_object_mut) else { return };
    for v in cursor.values_mut() {
        if let Some((_, id)) = v.as_str().and_then(|c| c.split_once(':')) {
            *v = Value::String(format!("(receipt_time):{id}"));
        }
    }
}

/// [`normalize_order`] for a recorded request (its route template from the OpenAPI registry).
pub fn normalize_entry(e: &OracleEntry, body: &mut Value) {
    if let Some(route) = stacks_extended::openapi::route_for(&e.method, &e.path) {
        normalize_order(route.path, body);
        match route.path {
            "/extended/v1/tx/mempool" => sort_same_second_mempool(e, body),
            "/extended/v1/block"
            | "/extended/v1/block/{hash}"
            | "/extended/v1/block/by_height/{height}"
            | "/extended/v1/block/by_burn_block_hash/{burn_block_hash}"
            | "/extended/v1/block/by_burn_block_height/{burn_block_height}" => sort_block_tx_ties(e, body),
            "/extended/v1/tokens/nft/holdings" => sort_tx_metadata_holdings(e, body),
            "/extended/v1/search/{id}" => mask_unanchored_metadata_time(body),
            "/extended/v3/transactions" => {
                mask_v3_streamed_time(body);
                sort_v3_position_ties(body);
            }
            "/extended/v3/transactions/{tx_id}" => mask_v3_streamed_time(body),
            "/extended/v3/blocks/{height_or_hash}/transactions" => sort_v3_position_ties(body),
            "/extended/v3/mempool/transactions"
            | "/extended/v3/principals/{principal}/mempool/transactions" => {
                mask_v3_mempool_cursor_times(body)
            }
            _ => {}
        }
    }
}

/// The order a recorded answer is compared in where the incumbent's query defines which rows a
/// page has but not their order in the answer; our answer is compared as it is, so it must be
/// in that defined order.
///
/// v1 `address/{p}/transactions`: the incumbent picks the page in a CTE ordered by
/// `block_height DESC, microblock_sequence DESC, tx_index DESC` and returns it joined to `txs`
/// with no outer `ORDER BY`, so in the plan's join order. The recordings show both: mocknet,
/// epoch-3-transition, pox-4 regtest, mainnet-block0, mainnet-reorg-scenario2 and
/// poisonmicroblock answer all their 40 multi-row pages in the CTE's order;
/// mainnet-out-of-order-microblock (4 of its 7 multi-row pages, e.g. `SP3D5EH…` lists its
/// microblock transfer `(1, mb 0, 16)` before the anchored call `(1, 4)`) and
/// mainnet-reorg-scenario1 (5 of 11, e.g. `SP105AR…`'s coinbases at heights 2 to 11, oldest
/// first) answer others in the `txs` table's storage order. The recorded page is compared in the
/// CTE's order (which rows, and every field of each, are compared as recorded).
pub fn order_recorded(e: &OracleEntry, body: &mut Value) {
    let route = stacks_extended::openapi::route_for(&e.method, &e.path).map(|r| r.path);
    if route != Some("/extended/v1/address/{principal}/transactions") {
        return;
    }
    if let Some(results) = body.get_mut("results").and_then(Value::as_array_mut) {
        results.sort_by_key(|r| std::cmp::Reverse(tx_key(r)));
    }
}

fn tx_key(tx: &Value) -> (i64, i64, i64) {
    let n = |k: &str, d: i64| tx[k].as_i64().unwrap_or(d);
    (n("block_height", 0), n("microblock_sequence", i64::from(i32::MAX)), n("tx_index", 0))
}
