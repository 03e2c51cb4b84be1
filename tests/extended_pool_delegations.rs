//! `/extended/v1/{pox}/{pool}/delegations` end to end (no recording of the incumbent has it):
//! ingest the oracle fixtures, then check every pool's answer against
//! the list recomputed here from the `delegate-stx` events the `/{pox}/events` route serves
//! (that route is checked against the recordings by tests/extended_pox.rs), applying the
//! incumbent's rule: per stacker, its latest canonical `delegate-stx` to the pool or
//! `revoke-delegate-stx` of it made at or below the block asked for (and above `after_block`),
//! delegations whose unlock height is at or below that block's burn height left out, listed when
//! it is a delegation; newest first. On SQLite and PostgreSQL.
//!
//! The oracle fixtures carry no `delegate-stx` in force, so a devnet chain with real pox-4
//! `delegate-stx` calls (signed transactions and the node's synthetic prints, two pools, some
//! delegations ending a few burn blocks later, some naming a PoX address, some revoked later by
//! `revoke-delegate-stx`, which drops the stacker from the pool's list) is checked too,
//! against lists recomputed from the generated `/new_block` payloads themselves (not from
//! anything the store derived).

mod common;

use std::collections::{BTreeSet, HashSet};
use std::convert::Infallible;
use std::sync::Arc;

use common::{devnet_events, ingest_all, replay, shared_file, Db, TestStore, ORACLE_FIXTURES};
use serde_json::{json, Value};
use stacks_codec::clarity::Value as Clarity;
use stacks_devnet::DevnetConfig;
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

/// Every event of `pox` (`pox2`...), newest first.
async fn all_events<F, R>(api: &F, pox: &str) -> Vec<Value>
where
    F: Filter<Extract = (R,), Error = Infallible> + Clone + Send + Sync + 'static,
    R: Reply + Send,
{
    let mut out = Vec::new();
    loop {
        let (status, body) =
            get(api, &format!("/extended/v1/{pox}/events?limit=200&offset={}", out.len())).await;
        assert_eq!(status, 200, "{pox} events");
        let page = body["results"].as_array().cloned().unwrap_or_default();
        if page.is_empty() {
            return out;
        }
        out.extend(page);
    }
}

/// The incumbent's answer recomputed from the events, as of block `height` at `burn_height`.
fn expected(events: &[Value], pool: &str, height: u64, burn_height: u64, after: u64) -> Vec<Value> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for e in events {
        let d = &e["data"];
        let block = e["block_height"].as_u64().unwrap();
        let unlock = d["unlock_burn_height"].as_str().map(|u| u.parse::<u64>().unwrap());
        let revoke = e["name"] == "revoke-delegate-stx";
        if !(revoke || e["name"] == "delegate-stx")
            || d["delegate_to"] != pool
            || block > height
            || block <= after
            || unlock.is_some_and(|u| u <= burn_height)
            || !seen.insert(e["stacker"].as_str().unwrap().to_string())
            || revoke
        {
            continue;
        }
        let mut row = json!({
            "stacker": e["stacker"],
            "amount_ustx": d["amount_ustx"],
            "block_height": block,
            "tx_id": e["tx_id"],
        });
        if let Some(a) = e["pox_addr"].as_str() {
            row["pox_addr"] = a.into();
        }
        if let Some(u) = unlock.filter(|u| *u != 0) {
            row["burn_block_unlock_height"] = u.into();
        }
        out.push(row);
    }
    out
}

fn page(body: &Value) -> Vec<Value> {
    body["results"].as_array().cloned().unwrap_or_default()
}

async fn delegations_match_the_events(db: Db) {
    let mut checked = 0;
    for (fixture, network) in ORACLE_FIXTURES {
        let Some(tsv) = shared_file(&format!("fixtures/{fixture}.tsv")) else { return };
        let Some(ts) = TestStore::new(db, "extended_pool_delegations", network).await else { return };
        replay(&ts.store, &tsv, &[]).await;
        let api = common::routes(Arc::clone(&ts.store));
        let (_, tip) = get(&api, "/extended/v2/blocks/latest").await;
        let tip_height = tip["height"].as_u64().unwrap();
        for pox in ["pox2", "pox3", "pox4"] {
            let events = all_events(&api, pox).await;
            let pools: BTreeSet<String> = events
                .iter()
                .filter(|e| e["name"] == "delegate-stx")
                .filter_map(|e| e["data"]["delegate_to"].as_str().map(String::from))
                .collect();
            for pool in pools {
                let base = format!("/extended/v1/{pox}/{pool}/delegations");
                // As of the tip and as of every block that delegated to the pool.
                let mut heights: BTreeSet<u64> = events
                    .iter()
                    .filter(|e| e["name"] == "delegate-stx" && e["data"]["delegate_to"] == pool.as_str())
                    .filter_map(|e| e["block_height"].as_u64())
                    .collect();
                heights.insert(tip_height);
                for h in heights {
                    let (_, at) = get(&api, &format!("/extended/v2/blocks/{h}")).await;
                    let burn = at["burn_block_height"].as_u64().unwrap();
                    let want = expected(&events, &pool, h, burn, 0);
                    let url = if h == tip_height { base.clone() } else { format!("{base}?height={h}") };
                    let (status, body) = get(&api, &url).await;
                    assert_eq!(status, 200, "{fixture} {url}");
                    assert_eq!((body["limit"].as_u64(), body["offset"].as_u64()), (Some(100), Some(0)));
                    assert_eq!(body["total"].as_u64(), Some(want.len() as u64), "{fixture} {url}");
                    assert_eq!(page(&body), want, "{fixture} {url}");
                    checked += want.len();

                    // Paging and `after_block` slice the same list.
                    let sep = if url.contains('?') { '&' } else { '?' };
                    let (_, body) = get(&api, &format!("{url}{sep}limit=1&offset=1")).await;
                    assert_eq!(
                        page(&body),
                        want.iter().skip(1).take(1).cloned().collect::<Vec<_>>(),
                        "{url}"
                    );
                    if let Some(oldest) = want.last().and_then(|w| w["block_height"].as_u64()) {
                        let (_, body) = get(&api, &format!("{url}{sep}after_block={oldest}")).await;
                        assert_eq!(
                            page(&body),
                            expected(&events, &pool, h, burn, oldest),
                            "{url} after {oldest}"
                        );
                    }
                }
                let (status, body) = get(&api, &format!("{base}?height=99999999")).await;
                assert_eq!((status, body["message"].as_str()), (404, Some("no block at height: 99999999")));
            }
        }
        ts.finish().await;
    }
    // No oracle fixture carries a `delegate-stx` print in force (their pool stacking goes through
    // other calls), so on them this checks empty pools, paging and the errors; the rows
    // themselves are compared whenever a fixture has some.
    println!("{db:?}: {checked} pool delegations match the recomputed lists");
}

async fn bad_input_is_the_specs_error(db: Db) {
    let Some(tsv) = shared_file("fixtures/mocknet.tsv") else { return };
    let Some(ts) = TestStore::new(db, "extended_pool_delegations_bad", ORACLE_FIXTURES[0].1).await else {
        return;
    };
    replay(&ts.store, &tsv, &[]).await;
    let api = common::routes(Arc::clone(&ts.store));
    let pool = "ST000000000000000000002AMW42H";
    for (path, param) in [
        (format!("/extended/v1/pox9/{pool}/delegations"), "pox"),
        ("/extended/v1/pox4/notaprincipal/delegations".to_string(), "pool_principal"),
        (format!("/extended/v1/pox4/{pool}/delegations?limit=201"), "limit"),
        (format!("/extended/v1/pox4/{pool}/delegations?height=0"), "height"),
        (format!("/extended/v1/pox4/{pool}/delegations?after_block=x"), "after_block"),
    ] {
        let (status, body) = get(&api, &path).await;
        assert_eq!(status, 500, "{path}");
        assert!(body["error"].as_str().unwrap_or_default().contains(param), "{path}: {body}");
    }
    // A pool nobody delegates to is an empty page.
    let (status, body) = get(&api, &format!("/extended/v1/pox4/{pool}/delegations")).await;
    assert_eq!((status, body["total"].as_u64(), page(&body).len()), (200, Some(0), 0));
    ts.finish().await;
}

/// One `delegate-stx` or `revoke-delegate-stx` print of the generated chain, read straight from
/// its `/new_block`.
#[derive(Debug, Clone)]
struct Delegation {
    /// A `revoke-delegate-stx` (of the delegation to `pool`): no amount, unlock or address.
    revoke: bool,
    block_height: u64,
    tx_index: u64,
    event_index: u64,
    tx_id: String,
    stacker: String,
    pool: String,
    amount_ustx: String,
    unlock: Option<u64>,
    pox_addr: Option<String>,
}

fn field<'a>(t: &'a [(String, Clarity)], k: &str) -> &'a Clarity {
    &t.iter().find(|(n, _)| n == k).unwrap_or_else(|| panic!("no {k}")).1
}

fn optional(v: &Clarity) -> Option<&Clarity> {
    match v {
        Clarity::OptionalSome(inner) => Some(inner),
        Clarity::OptionalNone => None,
        other => panic!("not an optional: {other:?}"),
    }
}

fn uint(v: &Clarity) -> u128 {
    match v {
        Clarity::UInt(n) => *n,
        other => panic!("not a uint: {other:?}"),
    }
}

/// Every `delegate-stx` print of `events` (a chain without forks or microblocks: every block is
/// canonical), and each block's `(height, burn height)`.
fn devnet_delegations(events: &[stacks_ledger::events::RawEvent]) -> (Vec<Delegation>, Vec<(u64, u64)>) {
    let mut out = Vec::new();
    let mut blocks = Vec::new();
    for ev in events.iter().filter(|e| e.path == "/new_block") {
        let b: Value = serde_json::from_str(&ev.payload).unwrap();
        let height = b["block_height"].as_u64().unwrap();
        blocks.push((height, b["burn_block_height"].as_u64().unwrap()));
        let tx_index = |txid: &str| {
            b["transactions"].as_array().unwrap().iter().find(|t| t["txid"] == txid).unwrap()["tx_index"]
                .as_u64()
                .unwrap()
        };
        for e in b["events"].as_array().unwrap() {
            let c = &e["contract_event"];
            if e["type"] != "contract_event"
                || !c["contract_identifier"].as_str().unwrap().ends_with(".pox-4")
            {
                continue;
            }
            let raw = stacks_codec::decode_hex(c["raw_value"].as_str().unwrap()).unwrap();
            let Clarity::ResponseOk(top) = Clarity::deserialize(&raw).unwrap() else { continue };
            let Clarity::Tuple(top) = *top else { continue };
            let revoke = match field(&top, "name") {
                Clarity::StringAscii(n) if n == b"delegate-stx" => false,
                Clarity::StringAscii(n) if n == b"revoke-delegate-stx" => true,
                _ => continue,
            };
            let Clarity::Tuple(data) = field(&top, "data") else { panic!("data") };
            let principal = |v: &Clarity| match v {
                Clarity::Principal(p) => p.to_string(),
                other => panic!("not a principal: {other:?}"),
            };
            let pox_addr = (!revoke).then(|| optional(field(data, "pox-addr"))).flatten().map(|t| {
                let Clarity::Tuple(t) = t else { panic!("pox-addr") };
                let (Clarity::Buffer(version), Clarity::Buffer(hash)) =
                    (field(t, "version"), field(t, "hashbytes"))
                else {
                    panic!("pox-addr fields")
                };
                stacks_ledger::ledger::btc::pox_address_text(version[0], hash, false).unwrap()
            });
            let txid = e["txid"].as_str().unwrap();
            out.push(Delegation {
                revoke,
                block_height: height,
                tx_index: tx_index(txid),
                event_index: e["event_index"].as_u64().unwrap(),
                tx_id: txid.to_string(),
                stacker: principal(field(&top, "stacker")),
                pool: principal(field(data, "delegate-to")),
                amount_ustx: if revoke {
                    String::new()
                } else {
                    uint(field(data, "amount-ustx")).to_string()
                },
                unlock: (!revoke)
                    .then(|| optional(field(data, "unlock-burn-height")))
                    .flatten()
                    .map(|u| u64::try_from(uint(u)).unwrap()),
                pox_addr,
            });
        }
    }
    (out, blocks)
}

/// The pool's list as of block `height` at `burn_height`: each stacker whose latest delegation
/// to the pool or revocation of it in `(after, height]` (delegations that ended at or before
/// `burn_height` left out) is a delegation; newest first.
fn devnet_expected(all: &[Delegation], pool: &str, height: u64, burn_height: u64, after: u64) -> Vec<Value> {
    let mut newest_first: Vec<&Delegation> = all.iter().collect();
    newest_first.sort_by_key(|d| std::cmp::Reverse((d.block_height, d.tx_index, d.event_index)));
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for d in newest_first {
        if d.pool != pool
            || d.block_height > height
            || d.block_height <= after
            || d.unlock.is_some_and(|u| u <= burn_height)
            || !seen.insert(d.stacker.clone())
            || d.revoke
        {
            continue;
        }
        let mut row = json!({
            "stacker": d.stacker,
            "amount_ustx": d.amount_ustx,
            "block_height": d.block_height,
            "tx_id": d.tx_id,
        });
        if let Some(a) = &d.pox_addr {
            row["pox_addr"] = a.clone().into();
        }
        if let Some(u) = d.unlock {
            row["burn_block_unlock_height"] = u.into();
        }
        out.push(row);
    }
    out
}

async fn devnet_delegations_match(db: Db) {
    let cfg = DevnetConfig {
        seed: 11,
        blocks: 60,
        txs_per_block: 6,
        accounts: 12,
        reward_maturity: 6,
        delegate_per_mille: 250,
        revoke_per_mille: 120,
        ..DevnetConfig::default()
    };
    let (events, _) = devnet_events(cfg);
    let (all, blocks) = devnet_delegations(&events);
    let pools: BTreeSet<String> = all.iter().map(|d| d.pool.clone()).collect();
    // Revocations, some of a delegation that would otherwise still be listed at the tip.
    let revoked = all.iter().filter(|d| d.revoke).count();
    assert!(revoked >= 3, "{revoked} revocations");
    let (tip, tip_burn) = *blocks.last().unwrap();
    // The seed exercises what this test is about.
    assert!(all.len() >= 10, "{} delegations", all.len());
    assert_eq!(pools.len(), 2, "{pools:?}");
    let delegations: Vec<&Delegation> = all.iter().filter(|d| !d.revoke).collect();
    assert!(
        delegations.iter().any(|d| d.pox_addr.is_some()) && delegations.iter().any(|d| d.pox_addr.is_none())
    );
    assert!(all.iter().any(|d| d.unlock.is_some_and(|u| u <= tip_burn)), "no delegation ends in the chain");
    assert!(delegations.iter().any(|d| d.unlock.is_none()));

    let Some(ts) = TestStore::new(db, "extended_pool_delegations_devnet", Network::Testnet).await else {
        return;
    };
    ingest_all(&ts.store, events, &[], "devnet delegations").await;
    let api = common::routes(Arc::clone(&ts.store));
    let (mut rows, mut hidden) = (0, 0);
    for pool in &pools {
        let base = format!("/extended/v1/pox4/{pool}/delegations");
        let mut heights: BTreeSet<u64> =
            all.iter().filter(|d| &d.pool == pool).map(|d| d.block_height).collect();
        heights.insert(tip);
        for h in heights {
            let burn = blocks.iter().find(|b| b.0 == h).unwrap().1;
            // A revocation at this height hides a delegation the list had the block before.
            if all.iter().any(|d| d.revoke && &d.pool == pool && d.block_height == h) {
                let before = devnet_expected(&all, pool, h - 1, burn, 0);
                let now = devnet_expected(&all, pool, h, burn, 0);
                hidden += usize::from(before.len() > now.len());
            }
            let want = devnet_expected(&all, pool, h, burn, 0);
            let url = if h == tip { base.clone() } else { format!("{base}?height={h}") };
            let (status, body) = get(&api, &url).await;
            assert_eq!(status, 200, "{url}");
            assert_eq!(body["total"].as_u64(), Some(want.len() as u64), "{url}");
            assert_eq!(page(&body), want, "{url}");
            rows += want.len();
            // Every page of two, and every `after_block` cut.
            let sep = if url.contains('?') { '&' } else { '?' };
            for offset in (0..want.len()).step_by(2) {
                let (_, body) = get(&api, &format!("{url}{sep}limit=2&offset={offset}")).await;
                assert_eq!(body["total"].as_u64(), Some(want.len() as u64), "{url} offset {offset}");
                assert_eq!(
                    page(&body),
                    want[offset..want.len().min(offset + 2)].to_vec(),
                    "{url} offset {offset}"
                );
            }
            for after in want.iter().filter_map(|w| w["block_height"].as_u64()) {
                let (_, body) = get(&api, &format!("{url}{sep}after_block={after}")).await;
                assert_eq!(page(&body), devnet_expected(&all, pool, h, burn, after), "{url} after {after}");
            }
        }
    }
    assert!(rows > 0);
    assert!(hidden > 0, "no revocation hid a listed delegation");
    println!(
        "{db:?}: {} devnet delegate-stx, {revoked} revocations ({hidden} hiding a listed one), \
         {rows} listed rows match the recomputed lists",
        all.len() - revoked
    );
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_pool_delegations_match_the_events() {
    delegations_match_the_events(Db::Sqlite).await;
    bad_input_is_the_specs_error(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_pool_delegations_match_the_events() {
    delegations_match_the_events(Db::Postgres).await;
    bad_input_is_the_specs_error(Db::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_devnet_delegate_stx_calls_are_listed() {
    devnet_delegations_match(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_devnet_delegate_stx_calls_are_listed() {
    devnet_delegations_match(Db::Postgres).await;
}
