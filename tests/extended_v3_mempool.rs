//! `/extended/v3/principals/{p}/mempool/transactions` end to end, on SQLite and
//! PostgreSQL: a devnet chain is ingested up to a block, then only the mempool announcements and
//! drops of the blocks after it, so their transactions stay pending. Every principal's list
//! holds exactly the pending transactions involving it as the incumbent counts it (sender, token
//! transfer recipient, deployed contract, called contract; not the sponsor), recomputed here
//! from the raw transactions, newest receipt first, each row as the v3 mempool list renders
//! it; pages are walked with their cursors; empty pages, a bad cursor or limit, the ETag.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;
use std::sync::Arc;

use common::{devnet_config, devnet_events, ingest_all, Db, TestStore};
use serde_json::Value;
use stacks_codec::tx::{Payload, Transaction};
use stacks_ledger::events::tsv::RawEvent;
use stacks_ledger::ledger::Network;
use warp::{Filter, Reply};

async fn get<F, R>(api: &F, path: &str, inm: Option<&str>) -> (u16, Option<String>, Value)
where
    F: Filter<Extract = (R,), Error = Infallible> + Clone + Send + Sync + 'static,
    R: Reply + Send,
{
    let mut req = warp::test::request().path(path);
    if let Some(tag) = inm {
        req = req.header("if-none-match", tag);
    }
    let res = req.reply(api).await;
    let etag = res.headers().get("etag").map(|v| v.to_str().unwrap().to_string());
    (res.status().as_u16(), etag, serde_json::from_slice(res.body()).unwrap_or(Value::Null))
}

/// A pending transaction's principals by role.
#[derive(Debug, Default)]
struct Involved {
    sender: String,
    sponsor: Option<String>,
    recipient: Option<String>,
    contract: Option<String>,
    deploy: bool,
}

impl Involved {
    fn of(raw_hex: &str) -> Involved {
        let tx = Transaction::deserialize(&stacks_codec::decode_hex(raw_hex).unwrap()).unwrap();
        let sender = tx.origin_address().to_c32();
        let mut out = Involved { sponsor: tx.sponsor_address().map(|a| a.to_c32()), ..Involved::default() };
        match &tx.payload {
            Payload::TokenTransfer { recipient, .. } => out.recipient = Some(recipient.to_string()),
            Payload::SmartContract { name, .. } => {
                out.contract = Some(format!("{sender}.{name}"));
                out.deploy = true;
            }
            Payload::ContractCall { contract, .. } => out.contract = Some(contract.to_string()),
            _ => {}
        }
        out.sender = sender;
        out
    }

    /// The principals whose list shows it.
    fn listed(&self) -> BTreeSet<&str> {
        [Some(&self.sender), self.recipient.as_ref(), self.contract.as_ref()]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect()
    }
}

/// The pending transactions after `events` (txid → raw tx): announced, neither mined nor dropped.
fn pending_after(events: &[RawEvent]) -> BTreeMap<String, String> {
    let mut pending = BTreeMap::new();
    for e in events {
        let payload: Value = serde_json::from_str(&e.payload).unwrap();
        match e.path.as_str() {
            "/new_mempool_tx" => {
                for raw in payload.as_array().unwrap() {
                    let raw = raw.as_str().unwrap();
                    let tx = Transaction::deserialize(&stacks_codec::decode_hex(raw).unwrap()).unwrap();
                    pending.entry(tx.txid_hex()).or_insert_with(|| raw.to_string());
                }
            }
            "/new_block" => {
                for t in payload["transactions"].as_array().unwrap() {
                    pending.remove(t["txid"].as_str().unwrap());
                }
            }
            "/drop_mempool_tx" => {
                for t in payload["dropped_txids"].as_array().unwrap() {
                    pending.remove(t.as_str().unwrap());
                }
            }
            _ => {}
        }
    }
    pending
}

fn position(row: &Value) -> String {
    format!("{}:{}", row["receipt_time"], row["tx_id"].as_str().unwrap())
}

/// Every row of `url` (with its `?limit=`), following `next`: each page's `current` names its
/// first row, `previous` the page before's first row (whole pages here), `total` stays.
async fn walk<F, R>(api: &F, url: &str) -> (u64, Vec<Value>)
where
    F: Filter<Extract = (R,), Error = Infallible> + Clone + Send + Sync + 'static,
    R: Reply + Send,
{
    let (mut rows, mut currents, mut total) = (Vec::new(), Vec::<String>::new(), None);
    let mut next: Option<String> = None;
    loop {
        let page_url = next.as_ref().map_or(url.to_string(), |c| format!("{url}&cursor={c}"));
        let (status, _, page) = get(api, &page_url, None).await;
        assert_eq!(status, 200, "{page_url}: {page}");
        let results = page["results"].as_array().unwrap();
        assert!(!results.is_empty(), "{page_url}: {page}");
        let current = position(&results[0]);
        assert_eq!(page["cursor"]["current"].as_str(), Some(current.as_str()), "{page_url}");
        assert_eq!(page["cursor"]["previous"].as_str(), currents.last().map(String::as_str), "{page_url}");
        let t = page["total"].as_u64().unwrap();
        assert_eq!(*total.get_or_insert(t), t, "{page_url}");
        currents.push(current);
        rows.extend(results.iter().cloned());
        next = page["cursor"]["next"].as_str().map(String::from);
        if let Some(c) = &next {
            let last = rows.last().map(position).unwrap();
            assert!(c.as_str() != last, "{page_url}: next is the row after the page");
        } else {
            return (total.unwrap(), rows);
        }
    }
}

async fn check(db: Db) {
    let mut cfg = devnet_config(41, 30, 8).with_real_chain_cases();
    (cfg.forks, cfg.microblocks) = (false, false);
    let (events, _) = devnet_events(cfg);
    let Some(ts) = TestStore::new(db, "extended_v3_mempool", Network::Testnet).await else { return };
    let api = common::routes(Arc::clone(&ts.store));
    let base = |p: &str| format!("/extended/v3/principals/{p}/mempool/transactions");

    // The chain to block 18, then the later blocks' mempool traffic without the blocks.
    let cut = events
        .iter()
        .position(|e| {
            e.path == "/new_block"
                && serde_json::from_str::<Value>(&e.payload).unwrap()["block_height"].as_u64() > Some(18)
        })
        .unwrap();
    let mempool_only = |e: &&RawEvent| matches!(e.path.as_str(), "/new_mempool_tx" | "/drop_mempool_tx");
    let mut ingested: Vec<RawEvent> = events[..cut].to_vec();
    ingested.extend(events[cut..].iter().filter(mempool_only).cloned());
    // Half the later traffic first: the ETag moves with a principal's new pending transaction.
    let half = cut + (ingested.len() - cut) / 2;
    ingest_all(&ts.store, ingested[..half].iter().cloned(), &[], "prefix").await;
    let early = pending_after(&ingested[..half]);
    let pending = pending_after(&ingested);
    let involved: BTreeMap<&str, Involved> =
        pending.iter().map(|(id, raw)| (id.as_str(), Involved::of(raw))).collect();
    let later = involved.iter().find(|(id, _)| !early.contains_key(**id)).map(|(_, i)| i.sender.clone());
    let later = later.expect("a transaction announced in the second half");
    let (_, tag_before, _) = get(&api, &base(&later), None).await;
    ingest_all(&ts.store, ingested[half..].iter().cloned(), &[], "mempool").await;

    // The expected lists, and the roles this chain covers.
    let mut expected: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (id, inv) in &involved {
        for p in inv.listed() {
            expected.entry(p).or_default().insert(id);
        }
    }
    let transfer = involved.values().find(|i| i.recipient.as_ref().is_some_and(|r| *r != i.sender));
    let called =
        involved.values().find(|i| !i.deploy && i.contract.is_some()).and_then(|i| i.contract.clone());
    let deployed = involved.values().find(|i| i.deploy).and_then(|i| i.contract.clone());
    let sponsor = involved.values().find_map(|i| i.sponsor.clone());
    println!(
        "{db:?}: {} pending, {} principals; transfer {:?}, called {called:?}, deployed {deployed:?}, \
         sponsor {sponsor:?}",
        pending.len(),
        expected.len(),
        transfer.map(|t| (&t.sender, &t.recipient)),
    );
    assert!(pending.len() > 20, "{db:?}: {} pending", pending.len());
    // Each role is in the chain: a transfer to another principal, a called and a deployed
    // contract, a sponsored transaction (every list below is then checked whole).
    assert!(transfer.is_some() && called.is_some() && deployed.is_some() && sponsor.is_some(), "{db:?}");

    // The whole mempool, rendered once: each principal's rows are these rows.
    let (total, all) = walk(&api, "/extended/v3/mempool/transactions?limit=50").await;
    assert_eq!(total as usize, pending.len(), "{db:?}: the mempool");
    let by_id: BTreeMap<&str, &Value> = all.iter().map(|r| (r["tx_id"].as_str().unwrap(), r)).collect();
    assert_eq!(by_id.keys().copied().collect::<BTreeSet<_>>(), pending.keys().map(String::as_str).collect());

    for (p, ids) in &expected {
        let (total, rows) = walk(&api, &format!("{}?limit=2", base(p))).await;
        assert_eq!(total as usize, ids.len(), "{db:?} {p}: total");
        let got: BTreeSet<&str> = rows.iter().map(|r| r["tx_id"].as_str().unwrap()).collect();
        assert_eq!(&got, ids, "{db:?} {p}: the transactions involving it");
        assert_eq!(got.len(), rows.len(), "{db:?} {p}: a row repeated");
        for r in &rows {
            assert_eq!(&r, by_id.get(r["tx_id"].as_str().unwrap()).unwrap(), "{db:?} {p}: rendered");
        }
        // Newest receipt first, then tx id descending.
        let keys: Vec<(u64, &str)> = rows
            .iter()
            .map(|r| (r["receipt_time"].as_u64().unwrap(), r["tx_id"].as_str().unwrap()))
            .collect();
        assert!(keys.windows(2).all(|w| w[0] > w[1]), "{db:?} {p}: order {keys:?}");
    }
    // A sponsor sees no transaction it only sponsors.
    let sponsor = sponsor.unwrap();
    let (_, _, page) = get(&api, &base(&sponsor), None).await;
    let listed = expected.get(sponsor.as_str()).cloned().unwrap_or_default();
    assert_eq!(page["total"].as_u64(), Some(listed.len() as u64), "{db:?} sponsor {sponsor}");
    assert!(
        involved.iter().any(|(id, i)| i.sponsor.as_ref() == Some(&sponsor) && !listed.contains(id)),
        "{db:?}: {sponsor} only sponsors one"
    );

    // A middle page starts at its cursor; its previous page points back `limit` rows.
    let p = *expected.iter().max_by_key(|(_, ids)| ids.len()).unwrap().0;
    let (_, rows) = walk(&api, &format!("{}?limit=50", base(p))).await;
    assert!(rows.len() >= 4, "{db:?} {p}: {} rows", rows.len());
    let (status, _, page) =
        get(&api, &format!("{}?limit=3&cursor={}", base(p), position(&rows[1])), None).await;
    assert_eq!(status, 200);
    assert_eq!(page["cursor"]["previous"].as_str(), Some(position(&rows[0]).as_str()), "{db:?}: back");
    assert_eq!(page["results"][0], rows[1]);

    // Empty pages: a principal with nothing pending, a cursor before every receipt.
    let empty = serde_json::json!({"total": 0, "limit": 20, "cursor": {"next": null, "previous": null,
        "current": null}, "results": []});
    let idle = "ST2CY5V39NHDPWSXMW9QDT3HC3GD6Q6XX4CFRK9AG";
    assert!(!expected.contains_key(idle));
    assert_eq!(get(&api, &base(idle), None).await.2, empty, "{db:?}: nothing pending");
    let (_, _, page) = get(&api, &format!("{}?cursor=0:0x{}", base(p), "00".repeat(32)), None).await;
    assert_eq!(page, empty, "{db:?}: past the end");

    // Invalid input: the validator's messages (the incumbent's 400, the spec's 500 here).
    for (q, msg) in [
        ("limit=0", "querystring/limit must be >= 1"),
        ("limit=51", "querystring/limit must be <= 50"),
        ("limit=x", "querystring/limit must be integer"),
        ("cursor=12:0xab", r#"querystring/cursor must match pattern "^\d+:(0x)?[a-fA-F0-9]{64}$""#),
        ("cursor=3:0:1", r#"querystring/cursor must match pattern "^\d+:(0x)?[a-fA-F0-9]{64}$""#),
    ] {
        let (status, _, body) = get(&api, &format!("{}?{q}", base(p)), None).await;
        assert_eq!((status, body["message"].as_str()), (500, Some(msg)), "{q}: {body}");
    }
    let (status, _, body) = get(&api, &base("not-a-principal"), None).await;
    assert_eq!(status, 500, "{body}");

    // The principal's mempool ETag: a 304 when named, moved by its new pending transaction.
    let (status, tag, _) = get(&api, &base(&later), None).await;
    assert_eq!(status, 200);
    let tag = tag.expect("an ETag");
    assert_ne!(Some(&tag), tag_before.as_ref(), "{db:?}: the ETag follows the mempool");
    let (status, _, _) = get(&api, &base(&later), Some(&tag)).await;
    assert_eq!(status, 304);
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_principal_mempool_transactions() {
    check(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_principal_mempool_transactions() {
    check(Db::Postgres).await;
}
