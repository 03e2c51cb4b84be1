//! Rules that real nodes' chains exercise and the recorded fixtures do not, each
//! checked end to end on a generated devnet chain against values recomputed here from the
//! generated `/new_block` payloads themselves (decoded with the codec, never read back from the
//! store): a principal's transactions (the sponsor of a sponsored transaction among them),
//! contract rows of failed deploys and ABIs in the incumbent's key order, tenures of the past and
//! burn blocks' integer `avg_block_time`, and the rules of the route-by-route audit
//! (`audited_rules`); on SQLite and PostgreSQL. Pool delegations revoked later:
//! tests/extended_pool_delegations.rs.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;
use std::sync::Arc;

use common::{devnet_events, ingest_all, Db, TestStore};
use serde_json::Value;
use stacks_codec::tx::{Payload, Transaction};
use stacks_devnet::DevnetConfig;
use stacks_ledger::events::RawEvent;
use stacks_ledger::ledger::Network;
use warp::{Filter, Reply};

async fn get<F, R>(api: &F, path: &str) -> (u16, Value)
where
    F: Filter<Extract = (R,), Error = Infallible> + Clone + Send + Sync + 'static,
    R: Reply + Send,
{
    let res = warp::test::request().path(path).reply(api).await;
    (res.status().as_u16(), serde_json::from_slice(res.body()).unwrap_or(Value::Null))
}

/// One mined transaction of the generated chain, as its block's payload and raw bytes say.
#[derive(Debug, Clone)]
struct MinedTx {
    tx_id: String,
    height: u64,
    tx_index: u64,
    tx: Transaction,
    success: bool,
    /// The ABI the node sent with a deploy (`contract_interface`, or the older
    /// `contract_abi`), exactly as it sent it.
    abi: Option<Value>,
    /// Senders and recipients of its STX, FT and NFT events (not locks, not logs).
    asset_parties: BTreeSet<String>,
}

impl MinedTx {
    /// The principals the incumbent's `principal_txs` links the transaction to: sender, fee
    /// payer (the sponsor when sponsored), transfer recipient, called or deployed contract, and
    /// the parties of its asset events (a failed transaction has none).
    fn principals(&self) -> BTreeSet<String> {
        let mut set = self.transfer_principals();
        set.extend(self.tx.sponsor_address().map(|a| a.to_string()));
        set
    }

    /// The principals the incumbent's `transactions_with_transfers` query links the transaction
    /// to: those of [`MinedTx::principals`] but the fee payer.
    fn transfer_principals(&self) -> BTreeSet<String> {
        let sender = self.tx.origin_address().to_string();
        let mut set = BTreeSet::from([sender.clone()]);
        match &self.tx.payload {
            Payload::TokenTransfer { recipient, .. } => {
                set.insert(recipient.to_string());
            }
            Payload::ContractCall { contract, .. } => {
                set.insert(contract.to_string());
            }
            Payload::SmartContract { name, .. } => {
                set.insert(format!("{sender}.{name}"));
            }
            _ => {}
        }
        set.extend(self.asset_parties.iter().cloned());
        set
    }
}

/// Every transaction of a generated chain without forks or microblocks (every block canonical)
/// above the boot block (whose transactions most lists leave out).
fn mined(events: &[RawEvent]) -> Vec<MinedTx> {
    mined_from(events, 1)
}

/// [`mined`] from height `from` on (0: the boot block's transactions too).
fn mined_from(events: &[RawEvent], from: u64) -> Vec<MinedTx> {
    let mut out = Vec::new();
    for ev in events.iter().filter(|e| e.path == "/new_block") {
        let b: Value = serde_json::from_str(&ev.payload).unwrap();
        let height = b["block_height"].as_u64().unwrap();
        if height < from {
            continue;
        }
        let mut parties: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for e in b["events"].as_array().unwrap() {
            let kind = e["type"].as_str().unwrap();
            if kind == "contract_event" || kind == "stx_lock_event" {
                continue;
            }
            let body = &e[kind];
            let p = parties.entry(e["txid"].as_str().unwrap().to_string()).or_default();
            for k in ["sender", "recipient"] {
                p.extend(body[k].as_str().map(String::from));
            }
        }
        for t in b["transactions"].as_array().unwrap() {
            let raw = stacks_codec::decode_hex(t["raw_tx"].as_str().unwrap()).unwrap();
            if raw == [0] {
                continue;
            }
            let tx_id = t["txid"].as_str().unwrap().to_string();
            let success = t["status"] == "success";
            out.push(MinedTx {
                height,
                tx_index: t["tx_index"].as_u64().unwrap(),
                tx: Transaction::deserialize(&raw).unwrap(),
                success,
                abi: [&t["contract_interface"], &t["contract_abi"]]
                    .into_iter()
                    .find(|v| !v.is_null())
                    .cloned(),
                asset_parties: if success {
                    parties.remove(&tx_id).unwrap_or_default()
                } else {
                    Default::default()
                },
                tx_id,
            });
        }
    }
    out
}

/// Every page of a principal's transactions at `base` (v1 or v2: both have `limit`/`offset`
/// paging and a `total`), as tx ids newest first, with the `total` each non-empty page gave.
async fn all_pages<F, R>(
    api: &F,
    base: &str,
    limit: u32,
    tx_of: impl Fn(&Value) -> &Value,
) -> (Vec<String>, BTreeSet<u64>)
where
    F: Filter<Extract = (R,), Error = Infallible> + Clone + Send + Sync + 'static,
    R: Reply + Send,
{
    let (mut ids, mut totals) = (Vec::new(), BTreeSet::new());
    loop {
        let (status, body) = get(api, &format!("{base}?limit={limit}&offset={}", ids.len())).await;
        assert_eq!(status, 200, "{base}");
        let page = body["results"].as_array().cloned().unwrap_or_default();
        if page.is_empty() {
            // Past the end the incumbent's `total` (read from the page's first row) is 0.
            assert_eq!(body["total"].as_u64(), Some(0), "{base} past the end");
            return (ids, totals);
        }
        totals.insert(body["total"].as_u64().unwrap());
        ids.extend(page.iter().map(|r| tx_of(r)["tx_id"].as_str().unwrap().to_string()));
    }
}

/// A sponsored transaction is listed among its sponsor's transactions (v1 and v2) and counted
/// in `total`, as the incumbent's `principal_txs` records the fee payer; v1
/// `transactions_with_transfers` follows its own query instead, which leaves the fee payer out
/// and lists the boot block's transactions, and answers `height=N` with the whole block.
async fn sponsors_list_their_sponsored_transactions(db: Db) {
    let (events, _) = devnet_events(DevnetConfig::real_chain_cases(20));
    let txs = mined(&events);
    let with_boot = mined_from(&events, 0);
    let mut transfers_of: BTreeMap<String, Vec<&MinedTx>> = BTreeMap::new();
    for t in &with_boot {
        for p in t.transfer_principals() {
            transfers_of.entry(p).or_default().push(t);
        }
    }
    // Both kinds the route must tell apart: a sponsored transfer and a sponsored contract call.
    let sponsored = |call: bool| {
        txs.iter()
            .filter(|t| t.tx.sponsor_address().is_some())
            .filter(|t| matches!(t.tx.payload, Payload::ContractCall { .. }) == call)
            .filter(|t| matches!(t.tx.payload, Payload::ContractCall { .. } | Payload::TokenTransfer { .. }))
            .count()
    };
    assert!(sponsored(false) >= 1 && sponsored(true) >= 1, "{} / {}", sponsored(false), sponsored(true));
    let mut by_principal: BTreeMap<String, Vec<&MinedTx>> = BTreeMap::new();
    for t in &txs {
        for p in t.principals() {
            by_principal.entry(p).or_default().push(t);
        }
    }
    // The seed exercises the rule: sponsors that are nothing else to their transaction.
    let sponsor_only = txs
        .iter()
        .filter(|t| {
            let s = t.tx.sponsor_address().map(|a| a.to_string());
            s.is_some_and(|s| s != t.tx.origin_address().to_string() && !t.asset_parties.contains(&s))
        })
        .count();
    assert!(sponsor_only >= 5, "{sponsor_only} sponsored transactions");

    let Some(ts) = TestStore::new(db, "extended_real_chain_sponsor", Network::Testnet).await else { return };
    ingest_all(&ts.store, events, &[], "devnet sponsored").await;
    let api = common::routes(Arc::clone(&ts.store));
    let mut checked = 0;
    for (p, list) in &by_principal {
        if p.contains('.') {
            continue;
        }
        let mut want: Vec<&MinedTx> = list.clone();
        want.sort_by_key(|t| std::cmp::Reverse((t.height, t.tx_index)));
        let want: Vec<String> = want.iter().map(|t| t.tx_id.clone()).collect();
        let total = BTreeSet::from([want.len() as u64]);
        let (v1, v1_totals) =
            all_pages(&api, &format!("/extended/v1/address/{p}/transactions"), 20, |r| r).await;
        assert_eq!((&v1, &v1_totals), (&want, &total), "v1 {p}");
        let (v2, v2_totals) =
            all_pages(&api, &format!("/extended/v2/addresses/{p}/transactions"), 20, |r| &r["tx"]).await;
        assert_eq!((&v2, &v2_totals), (&want, &total), "v2 {p}");
        checked += want.len();
    }
    // transactions_with_transfers, in pages of 3 so that pages start on both sides of the
    // sponsor-only entries they skip: newest first above the boot block, then the boot block's.
    let mut with_transfers = 0;
    for p in
        by_principal.keys().chain(transfers_of.keys()).filter(|p| !p.contains('.')).collect::<BTreeSet<_>>()
    {
        let list = transfers_of.get(p).cloned().unwrap_or_default();
        let (mut above, boot): (Vec<&MinedTx>, Vec<&MinedTx>) = list.iter().partition(|t| t.height > 0);
        above.sort_by_key(|t| std::cmp::Reverse((t.height, t.tx_index)));
        let above: Vec<String> = above.iter().map(|t| t.tx_id.clone()).collect();
        let boot: BTreeSet<String> = boot.iter().map(|t| t.tx_id.clone()).collect();
        let base = format!("/extended/v1/address/{p}/transactions_with_transfers");
        let (got, totals) = all_pages(&api, &base, 3, |r| &r["tx"]).await;
        let total = if list.is_empty() { BTreeSet::new() } else { BTreeSet::from([list.len() as u64]) };
        assert_eq!(totals, total, "{base}");
        let (got_boot, got_above): (Vec<String>, Vec<String>) =
            got.into_iter().partition(|id| boot.contains(id));
        assert_eq!(got_above, above, "{base}");
        assert_eq!(got_boot.into_iter().collect::<BTreeSet<_>>(), boot, "{base}");
        with_transfers += list.len();
    }
    // `height=N`: every transaction of the block, whatever the limit and offset (echoed).
    let mut per_block: BTreeMap<(&str, u64), BTreeSet<&str>> = BTreeMap::new();
    for (p, list) in &transfers_of {
        for t in list.iter().filter(|t| t.height > 0) {
            per_block.entry((p.as_str(), t.height)).or_default().insert(t.tx_id.as_str());
        }
    }
    let ((p, h), ids) =
        per_block.iter().filter(|(k, _)| !k.0.contains('.')).max_by_key(|(_, v)| v.len()).unwrap();
    assert!(ids.len() >= 3, "{p} at {h}: {ids:?}");
    let (status, body) = get(
        &api,
        &format!("/extended/v1/address/{p}/transactions_with_transfers?height={h}&limit=1&offset=1"),
    )
    .await;
    assert_eq!(status, 200);
    let got: BTreeSet<&str> =
        body["results"].as_array().unwrap().iter().map(|r| r["tx"]["tx_id"].as_str().unwrap()).collect();
    assert_eq!(
        (&got, body["total"].as_u64(), body["limit"].as_u64(), body["offset"].as_u64()),
        (ids, Some(ids.len() as u64), Some(1), Some(1)),
        "{p} at {h}"
    );
    println!(
        "{db:?}: {checked} listed rows of {} principals, {sponsor_only} sponsor-only; {with_transfers} \
         rows with transfers",
        by_principal.len()
    );
    ts.finish().await;
}

/// True when every object of `v` lists its keys as PostgreSQL `jsonb` does: shorter keys
/// first, keys of one length bytewise.
fn in_jsonb_order(v: &Value) -> bool {
    match v {
        Value::Object(m) => {
            let keys: Vec<&String> = m.keys().collect();
            keys.windows(2).all(|w| (w[0].len(), w[0].as_bytes()) < (w[1].len(), w[1].as_bytes()))
                && m.values().all(in_jsonb_order)
        }
        Value::Array(a) => a.iter().all(in_jsonb_order),
        _ => true,
    }
}

/// Every deploy keeps a contract row, failed ones too: `/extended/v1/contract/{id}` answers the
/// deploy the incumbent's lookup picks (one with an ABI first, then canonical, then the newest)
/// with the ABI re-serialized in jsonb key order; `/v2/contracts/*` (the node's view) only know
/// a successful deploy, with the ABI exactly as the node sent it.
async fn every_deploy_keeps_a_contract_row(db: Db) {
    let (events, _) = devnet_events(DevnetConfig::real_chain_cases(21));
    let txs = mined(&events);
    let mut deploys: BTreeMap<String, Vec<&MinedTx>> = BTreeMap::new();
    for t in &txs {
        if let Payload::SmartContract { name, .. } = &t.tx.payload {
            deploys.entry(format!("{}.{name}", t.tx.origin_address())).or_default().push(t);
        }
    }
    let failed = |with_abi: bool| {
        deploys.values().flatten().filter(|t| !t.success && t.abi.is_some() == with_abi).count()
    };
    // The seed has the cases: failed deploys with and without an ABI, ids only ever failed, and
    // ids deployed again after a failure; the node's ABI text is not in jsonb order.
    assert!(failed(true) >= 2 && failed(false) >= 2, "{} / {}", failed(true), failed(false));
    assert!(deploys.values().any(|d| d.iter().all(|t| !t.success)));
    assert!(deploys.values().any(|d| d.iter().any(|t| t.success) && d.iter().any(|t| !t.success)));
    assert!(txs.iter().filter_map(|t| t.abi.as_ref()).any(|a| !in_jsonb_order(a)));

    let Some(ts) = TestStore::new(db, "extended_real_chain_contracts", Network::Testnet).await else {
        return;
    };
    ingest_all(&ts.store, events, &[], "devnet deploys").await;
    let api = common::routes(Arc::clone(&ts.store));
    for (id, list) in &deploys {
        let mut order = list.clone();
        order.sort_by_key(|t| (t.abi.is_none(), std::cmp::Reverse(t.height), t.tx_id.clone()));
        let want = order[0];
        let (status, body) = get(&api, &format!("/extended/v1/contract/{id}")).await;
        assert_eq!(status, 200, "{id}: {body}");
        assert_eq!(
            (&body["tx_id"], body["block_height"].as_u64(), &body["canonical"], &body["contract_id"]),
            (
                &Value::from(want.tx_id.clone()),
                Some(want.height),
                &Value::Bool(true),
                &Value::from(id.clone())
            ),
            "{id}"
        );
        let Payload::SmartContract { code_body, .. } = &want.tx.payload else { unreachable!() };
        assert_eq!(body["source_code"], code_body.as_str(), "{id}");
        match &want.abi {
            None => assert!(body["abi"].is_null(), "{id}: {}", body["abi"]),
            Some(node) => {
                let text = body["abi"].as_str().unwrap_or_else(|| panic!("{id}: abi {}", body["abi"]));
                let served: Value = serde_json::from_str(text).unwrap();
                assert_eq!(&served, node, "{id}: the node's ABI");
                assert!(in_jsonb_order(&served), "{id}: keys in jsonb order: {text}");
                assert!(!text.contains(' ') || node.to_string().contains(' '), "{id}: no whitespace");
            }
        }
        // The node's view: the successful deploy only.
        let (addr, name) = id.split_once('.').unwrap();
        let ok = list.iter().find(|t| t.success);
        let (status, source) = get(&api, &format!("/v2/contracts/source/{addr}/{name}?proof=0")).await;
        let (istatus, interface) = get(&api, &format!("/v2/contracts/interface/{addr}/{name}")).await;
        match ok {
            Some(t) => {
                let Payload::SmartContract { code_body, .. } = &t.tx.payload else { unreachable!() };
                assert_eq!((status, source["source"].as_str()), (200, Some(code_body.as_str())), "{id}");
                assert_eq!(source["publish_height"].as_u64(), Some(t.height), "{id}");
                assert_eq!((istatus, Some(&interface)), (200, t.abi.as_ref()), "{id}");
            }
            None => assert_eq!((status, istatus), (404, 404), "{id}: {source} {interface}"),
        }
    }
    println!(
        "{db:?}: {} contract ids, {} failed deploys with an ABI, {} without",
        deploys.len(),
        failed(true),
        failed(false)
    );
    ts.finish().await;
}

/// A tenure of the past lists its blocks (one per tenure before Nakamoto; the incumbent starts
/// from the chain tip and answers an empty page: docs/extended-deviations.md), and every burn
/// block's `avg_block_time` is an integer.
async fn tenures_and_burn_blocks(db: Db) {
    let (events, _) = devnet_events(DevnetConfig::real_chain_cases(22));
    let Some(ts) = TestStore::new(db, "extended_real_chain_tenures", Network::Testnet).await else { return };
    ingest_all(&ts.store, events, &[], "devnet tenures").await;
    let api = common::routes(Arc::clone(&ts.store));
    let (_, tip) = get(&api, "/extended/v2/blocks/latest").await;
    let tip = tip["height"].as_u64().unwrap();
    for h in [1, tip / 2, tip - 1, tip] {
        let (status, body) = get(&api, &format!("/extended/v2/block-tenures/{h}/blocks")).await;
        assert_eq!(status, 200, "tenure {h}");
        let heights: Vec<u64> =
            body["results"].as_array().unwrap().iter().map(|b| b["height"].as_u64().unwrap()).collect();
        assert_eq!((heights, body["total"].as_u64()), (vec![h], Some(1)), "tenure {h}: {body}");
        assert_eq!(body["results"][0]["tenure_height"].as_u64(), Some(h));
    }
    let (status, body) = get(&api, "/extended/v2/burn-blocks?limit=30").await;
    assert_eq!(status, 200);
    let rows = body["results"].as_array().unwrap();
    assert_eq!(rows.len(), 30);
    assert!(rows.iter().all(|b| b["avg_block_time"].is_i64()), "{body}");
    ts.finish().await;
}

/// The rules a route-by-route audit of the incumbent's SQL and handlers found,
/// each on the generated chain: unknown blocks are 404s; `total` is 0 past the end where the
/// incumbent reads it from the page's first row (and an FT's `total_supply` with it); `/tx`
/// applies a non-zero `nonce`; `with_transfers` answers only a principal the transaction names
/// or pays in STX; `event_limit=0` is the default; `by_trait` matches argument types, not names;
/// and the average block times are the incumbent's gaps.
async fn audited_rules(db: Db) {
    let (events, _) = devnet_events(DevnetConfig::real_chain_cases(23));
    let txs = mined(&events);
    let mut times: Vec<(u64, i64)> = Vec::new();
    for ev in events.iter().filter(|e| e.path == "/new_block") {
        let b: Value = serde_json::from_str(&ev.payload).unwrap();
        let t =
            b["block_time"].as_i64().filter(|t| *t != 0).unwrap_or(b["burn_block_time"].as_i64().unwrap());
        times.push((b["block_height"].as_u64().unwrap(), t));
    }
    let Some(ts) = TestStore::new(db, "extended_real_chain_audit", Network::Testnet).await else { return };
    ingest_all(&ts.store, events, &[], "devnet audit").await;
    let api = common::routes(Arc::clone(&ts.store));

    let (status, body) = get(&api, "/extended/v1/tx/block_height/999999").await;
    assert_eq!((status, body["message"].as_str()), (404, Some("no block found at height 999999")));
    // (0x00…00 is the boot block's hash.)
    let (status, body) = get(&api, &format!("/extended/v1/tx/block/0x{}", "ab".repeat(32))).await;
    assert_eq!((status, body["message"].as_str()), (404, Some("no block found by hash")));

    // Past the end.
    let ft = txs.iter().find_map(|t| match &t.tx.payload {
        Payload::ContractCall { contract, function_name, .. }
            if function_name == "mint" && contract.to_string().ends_with(".devnet-token") =>
        {
            Some(format!("{contract}::devcoin"))
        }
        _ => None,
    });
    let ft = ft.expect("an FT mint");
    let (_, body) = get(&api, &format!("/extended/v1/tokens/ft/{ft}/holders")).await;
    assert!(body["total"].as_u64().unwrap() > 0 && body["total_supply"] != "0", "{body}");
    let (_, body) = get(&api, &format!("/extended/v1/tokens/ft/{ft}/holders?offset=100000")).await;
    assert_eq!((body["total"].as_u64(), body["total_supply"].as_str()), (Some(0), Some("0")), "{body}");
    let some = txs[5].tx.origin_address().to_string();
    for route in ["transactions", "transactions_with_transfers", "assets", "stx_inbound", "mempool"] {
        let (_, body) = get(&api, &format!("/extended/v1/address/{some}/{route}?offset=100000")).await;
        assert_eq!(body["total"].as_u64(), Some(0), "{route}: {body}");
    }
    let (_, body) = get(&api, &format!("/extended/v2/addresses/{some}/transactions?offset=100000")).await;
    assert_eq!(body["total"].as_u64(), Some(0), "{body}");

    // `/tx?nonce=N`.
    let n = 3;
    let want = txs.iter().filter(|t| t.tx.nonce() == n).count() as u64;
    let (_, body) = get(&api, &format!("/extended/v1/tx?nonce={n}&limit=50")).await;
    assert_eq!(body["total"].as_u64(), Some(want), "nonce {n}");
    assert!(body["results"].as_array().unwrap().iter().all(|r| r["nonce"] == n), "{body}");
    let (_, all) = get(&api, "/extended/v1/tx").await;
    let (_, zero) = get(&api, "/extended/v1/tx?nonce=0&end_time=0").await;
    assert_eq!(zero["total"], all["total"], "nonce=0 and end_time=0 are no filters");

    // `with_transfers` of a principal the transaction does not name.
    let t = txs.iter().find(|t| matches!(t.tx.payload, Payload::TokenTransfer { .. })).unwrap();
    let stranger =
        txs.iter().map(|o| o.tx.origin_address().to_string()).find(|p| !t.principals().contains(p)).unwrap();
    let (status, body) =
        get(&api, &format!("/extended/v1/address/{stranger}/{}/with_transfers", t.tx_id)).await;
    assert_eq!((status, body["message"].as_str()), (404, Some("No matching transaction found")));
    let sender = t.tx.origin_address().to_string();
    let (status, _) = get(&api, &format!("/extended/v1/address/{sender}/{}/with_transfers", t.tx_id)).await;
    assert_eq!(status, 200);

    // `event_limit=0` is the default (20).
    let busy = txs.iter().rfind(|t| t.success && !t.asset_parties.is_empty()).unwrap();
    let (_, full) = get(&api, &format!("/extended/v1/tx/{}", busy.tx_id)).await;
    let (_, zero) = get(&api, &format!("/extended/v1/tx/{}?event_limit=0", busy.tx_id)).await;
    assert!(!full["events"].as_array().unwrap().is_empty());
    assert_eq!(zero["events"], full["events"]);

    // `by_trait`: argument names do not count; a trait without functions is invalid.
    let token = ft.split("::").next().unwrap().to_string();
    let (_, contract) = get(&api, &format!("/extended/v1/contract/{token}")).await;
    let abi: Value = serde_json::from_str(contract["abi"].as_str().unwrap()).unwrap();
    let mut f =
        abi["functions"].as_array().unwrap().iter().find(|f| f["access"] == "public").unwrap().clone();
    for a in f["args"].as_array_mut().unwrap() {
        a["name"] = "renamed".into();
    }
    let trait_abi = serde_json::json!({ "functions": [f] }).to_string();
    let enc =
        |s: &str| percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string();
    let (status, body) =
        get(&api, &format!("/extended/v1/contract/by_trait?trait_abi={}", enc(&trait_abi))).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["results"].as_array().unwrap().iter().any(|c| c["contract_id"] == token.as_str()), "{body}");
    let (status, _) =
        get(&api, &format!("/extended/v1/contract/by_trait?trait_abi={}", enc("{\"maps\":[]}"))).await;
    assert_eq!(status, 500);

    // Average block times: each canonical block's gap to the one before it in the longest
    // window, averaged over the blocks of each window.
    let now = times.last().unwrap().1 + 100;
    let windows = [600, 3_000, 20_000, 30 * 86_400];
    let got = stacks_extended::ChainReader::average_block_times(&*ts.store, now, windows).await.unwrap();
    let set: Vec<i64> = times.iter().map(|(_, t)| *t).filter(|t| *t >= now - windows[3]).collect();
    for (k, w) in windows.iter().enumerate() {
        let gaps: Vec<i64> = set.windows(2).filter(|p| p[1] >= now - w).map(|p| p[1] - p[0]).collect();
        assert_eq!(got[k], (gaps.iter().sum::<i64>(), gaps.len() as u64), "window {w}");
    }
    assert!(got[0].1 >= 1 && got[3].1 > got[0].1, "{got:?}");
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_sponsors_list_their_sponsored_transactions() {
    sponsors_list_their_sponsored_transactions(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_sponsors_list_their_sponsored_transactions() {
    sponsors_list_their_sponsored_transactions(Db::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_every_deploy_keeps_a_contract_row() {
    every_deploy_keeps_a_contract_row(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_every_deploy_keeps_a_contract_row() {
    every_deploy_keeps_a_contract_row(Db::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_tenures_and_burn_blocks() {
    tenures_and_burn_blocks(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_tenures_and_burn_blocks() {
    tenures_and_burn_blocks(Db::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_audited_rules() {
    audited_rules(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_audited_rules() {
    audited_rules(Db::Postgres).await;
}
