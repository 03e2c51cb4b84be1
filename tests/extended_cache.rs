//! End to end, on both engines: the `/extended` response cache (`src/api/cache.rs`) never
//! serves a stale body. A devnet chain with forks, microblocks, mempool adds and drops and
//! burn blocks is ingested event by event; after every event each route's answer through a
//! cached route table equals (status, headers, body) the answer of the same table with the
//! cache off — both for a cache in the ingesting process's table and for one over a second
//! `Store` opened on the same database (another API process: its own pool and cache, seeing
//! the first one's ingest only through the database). Every kind of change is checked to have
//! changed some answer the cache held just before. The routes whose answers are kept across
//! mempool events (`api::cache::chain_only`) are among them, and the first cache recomputes
//! its most asked answers ahead when the generation moves.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::{devnet_config, devnet_events, ingest_all, Db, TestStore};
use serde_json::Value;
use stacks_ledger::api::runtime::ApiRuntime;
use stacks_ledger::api::{self, ResponseCache};
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;
use stacks_ledger::v2::V2Settings;

struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

async fn get(
    api: &(impl warp::Filter<Extract = (impl warp::Reply,)> + Clone + 'static),
    path: &str,
) -> Answer {
    let res = warp::test::request().path(path).reply(api).await;
    let mut headers: Vec<(String, String)> = res
        .headers()
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or_default().to_string()))
        .collect();
    headers.sort();
    Answer { status: res.status().as_u16(), headers, body: res.body().to_vec() }
}

/// `got` is `want` (status, headers, body); `who` answered `GET {request}`.
fn assert_same(got: &Answer, want: &Answer, who: &str, request: &str) {
    assert_eq!(got.status, want.status, "{who}: GET {request}");
    assert_eq!(
        String::from_utf8_lossy(&got.body),
        String::from_utf8_lossy(&want.body),
        "{who}: stale GET {request}"
    );
    assert_eq!(got.headers, want.headers, "{who}: GET {request}");
}

/// `path` over HTTP from the server at `base`, with the headers a route sets (not those hyper
/// adds on the wire).
async fn get_http(client: &reqwest::Client, base: &str, path: &str) -> Answer {
    let res = client.get(format!("{base}{path}")).send().await.unwrap();
    let status = res.status().as_u16();
    let mut headers: Vec<(String, String)> = res
        .headers()
        .iter()
        .filter(|(n, _)| !matches!(n.as_str(), "date" | "content-length"))
        .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or_default().to_string()))
        .collect();
    headers.sort();
    Answer { status, headers, body: res.bytes().await.unwrap().to_vec() }
}

/// The public route table over `store` with `cache` (another API process when `store` is a
/// second `Store` on the same database).
fn table(
    store: &Arc<Store>,
    cache: &Arc<ResponseCache>,
) -> impl warp::Filter<Extract = (impl warp::Reply,), Error = std::convert::Infallible> + Clone + 'static {
    api::routes_with_cache(
        Arc::clone(store),
        V2Settings::ledger_only(),
        common::faucets(store),
        Arc::clone(cache),
        &common::env_config(),
    )
}

fn json(a: &Answer) -> Value {
    serde_json::from_slice(&a.body).unwrap_or(Value::Null)
}

/// The tip's hash and its parent's, from the v1 block list.
fn tip(list: &Answer) -> Option<(String, String)> {
    let b = &json(list)["results"][0];
    Some((b["hash"].as_str()?.to_string(), b["parent_block_hash"].as_str()?.to_string()))
}

async fn never_stale(db: Db) {
    let Some(ts) = TestStore::new(db, "extended_cache", Network::Testnet).await else { return };
    let store = Arc::clone(&ts.store);
    let other = Arc::new(
        Store::open(&ts.db.url, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap(),
    );
    // The ingesting process's cache also recomputes its most asked answers ahead, on a
    // runtime of their own as in `serve` (the observer's), so that requests wait for them in
    // place.
    let (here_cache, other_cache) =
        (Arc::new(ResponseCache::new(8 << 20).refreshing(8)), Arc::new(ResponseCache::new(8 << 20)));
    // (`ApiRuntime` at nice 0: a runtime of its own, shut down without waiting when dropped,
    // which a test's async body may do.)
    let observer = ApiRuntime::new(1, 0).unwrap();
    let here = {
        let _on = observer.handle().enter();
        table(&store, &here_cache)
    };
    let there = table(&other, &other_cache);
    let plain = table(&store, &Arc::new(ResponseCache::new(0)));
    // The same table served as `serve` serves it beside ingestion: kept answers from the event
    // loop (`api::server`), the rest through the table on the API's runtime.
    let loops_cache = Arc::new(ResponseCache::new(8 << 20));
    let api_runtime = ApiRuntime::new(2, 0).unwrap();
    let listener = stacks_ledger::observer::listen(([127, 0, 0, 1], 0).into()).unwrap();
    let served = format!("http://{}", listener.local_addr().unwrap());
    let server = api::server::serve(
        listener,
        table(&store, &loops_cache),
        Arc::clone(&loops_cache),
        &api_runtime,
        1,
        std::future::pending(),
    )
    .unwrap();
    tokio::spawn(server);
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();

    let (events, _) = devnet_events(devnet_config(17, 36, 8));
    let mut urls: Vec<String> = [
        "/extended",
        "/extended/v1/status",
        "/extended/v1/tx?limit=50",
        "/extended/v1/tx/mempool?limit=50",
        "/extended/v1/tx/mempool/stats",
        "/extended/v1/block?limit=20",
        "/extended/v2/blocks?limit=5",
        "/extended/v1/microblock?limit=20",
        "/extended/v1/microblock/unanchored/txs",
        "/extended/v2/burn-blocks?limit=5",
        "/extended/v3/transactions?limit=20",
    ]
    .map(String::from)
    .to_vec();
    let mut address_added = false;
    // Per event kind: how many times it changed an answer that the caches held.
    let mut changed: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut before: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut last_tip = None;
    for ev in events {
        let path = ev.path.clone();
        ingest_all(&store, [ev], &[], "devnet").await;
        let mut any_change = false;
        for url in &urls {
            let want = get(&plain, url).await;
            for (name, api, times) in [("same process", &here, 4), ("second store", &there, 2)] {
                // The first may compute and keep it, the others are served from the cache (or
                // wait for its recomputation ahead); 4 times makes an answer worth recomputing.
                for _ in 0..times {
                    let got = get(api, url).await;
                    assert_same(&got, &want, &format!("{db:?} {name}"), &format!("{url} after {path}"));
                }
            }
            for _ in 0..2 {
                let got = get_http(&http, &served, url).await;
                assert_same(&got, &want, &format!("{db:?} event loop"), &format!("{url} after {path}"));
            }
            if want.status == 200 {
                any_change |= before.insert(url.clone(), want.body.clone()).is_some_and(|b| b != want.body);
            }
        }
        // A reorg: the new canonical tip does not build on the previous one.
        let now_tip = tip(&get(&plain, "/extended/v1/block?limit=20").await);
        let kind = match path.as_str() {
            "/new_block"
                if last_tip.as_ref().is_some_and(|(h, _): &(String, String)| {
                    now_tip.as_ref().is_some_and(|(nh, np)| nh != h && np != h)
                }) =>
            {
                "reorg"
            }
            "/new_block" => "block",
            "/new_microblocks" => "microblock",
            "/new_mempool_tx" => "mempool tx",
            "/drop_mempool_tx" => "mempool drop",
            "/new_burn_block" => "burn block",
            _ => "other",
        };
        if any_change {
            *changed.entry(kind).or_default() += 1;
        }
        last_tip = now_tip;
        // An address with transactions, once there is one.
        if !address_added {
            let list = json(&get(&plain, "/extended/v1/tx?limit=1").await);
            if let Some(a) = list["results"][0]["sender_address"].as_str() {
                for route in [
                    "balances",
                    "stx",
                    "nonces",
                    "transactions?limit=20",
                    "transactions_with_transfers?limit=20",
                    "stx_inbound",
                    "assets",
                    "mempool",
                ] {
                    urls.push(format!("/extended/v1/address/{a}/{route}"));
                }
                urls.push(format!("/extended/v2/addresses/{a}/transactions?limit=20"));
                urls.push(format!("/extended/v3/principals/{a}/transactions?limit=20"));
                urls.push(format!("/extended/v1/tokens/nft/holdings?principal={a}"));
                address_added = true;
            }
        }
    }
    for kind in ["block", "reorg", "microblock", "mempool tx", "mempool drop", "burn block"] {
        assert!(
            changed.get(kind).copied().unwrap_or(0) > 0,
            "{db:?}: no {kind} changed a cached answer: {changed:?}"
        );
    }
    assert!(
        here_cache.hits() > 100 && other_cache.hits() > 100 && loops_cache.hits() > 100,
        "{db:?}: the caches were not used"
    );
    assert!(here_cache.refreshed() > 10, "{db:?}: only {} answers recomputed ahead", here_cache.refreshed());
    assert!(here_cache.waited_in_place() > 10, "{db:?}: {} waits in place", here_cache.waited_in_place());
    println!(
        "{db:?}: changes per kind {changed:?}; hits {} / {}; recomputed ahead {}, waited for in place {}",
        here_cache.hits(),
        other_cache.hits(),
        here_cache.refreshed(),
        here_cache.waited_in_place()
    );
    other.close().await;
    ts.finish().await;
}

#[tokio::test]
async fn cached_answers_are_never_stale_sqlite() {
    never_stale(Db::Sqlite).await;
}

#[tokio::test]
async fn cached_answers_are_never_stale_postgres() {
    never_stale(Db::Postgres).await;
}

/// `If-None-Match` still gets the uncached answer (`304` when it matches), and a disabled
/// cache keeps nothing.
#[tokio::test]
async fn revalidation_and_disabled_cache() {
    let Some(ts) = TestStore::new(Db::Sqlite, "extended_cache_etag", Network::Testnet).await else { return };
    let (events, _) = devnet_events(devnet_config(3, 6, 2));
    ingest_all(&ts.store, events, &[], "devnet").await;
    let cache = Arc::new(ResponseCache::new(1 << 20));
    let api = table(&ts.store, &cache);
    let first = warp::test::request().path("/extended").reply(&api).await;
    let etag = first.headers()["etag"].to_str().unwrap().to_string();
    let again = warp::test::request().path("/extended").header("if-none-match", &etag).reply(&api).await;
    assert_eq!(again.status(), 304);
    assert_eq!(cache.hits(), 0);
    let third = warp::test::request().path("/extended").reply(&api).await;
    assert_eq!((third.status(), third.body()), (first.status(), first.body()));
    assert_eq!(cache.hits(), 1);
    assert!(cache.bytes() > 0);

    let off = Arc::new(ResponseCache::new(0));
    let api = table(&ts.store, &off);
    for _ in 0..3 {
        assert_eq!(warp::test::request().path("/extended").reply(&api).await.status(), 200);
    }
    assert_eq!((off.hits(), off.bytes()), (0, 0));
    ts.finish().await;
}

/// A change written without a raw event (a transaction we put into the mempool ourselves, by
/// the faucet, a Rosetta submit or a `/v2` broadcast: `Store::record_local_tx`) moves the generation in its commit: both the
/// ingesting process's cache and a second store's drop the mempool answers it made stale.
async fn change_without_raw_event(db: Db) {
    let Some(ts) = TestStore::new(db, "extended_cache_faucet", Network::Testnet).await else { return };
    let other = Arc::new(
        Store::open(&ts.db.url, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap(),
    );
    let (events, _) = devnet_events(devnet_config(5, 8, 4));
    // Everything before the first mempool event; its transaction is then recorded as a local
    // submission, without a raw event.
    let first_mempool = events.iter().position(|e| e.path == "/new_mempool_tx").expect("a mempool event");
    let raw_tx = serde_json::from_str::<Value>(&events[first_mempool].payload).unwrap()[0]
        .as_str()
        .expect("a raw transaction")
        .to_string();
    ingest_all(&ts.store, events[..first_mempool].iter().cloned(), &[], "devnet").await;

    let here = table(&ts.store, &Arc::new(ResponseCache::new(1 << 20)));
    let there = table(&other, &Arc::new(ResponseCache::new(1 << 20)));
    let url = "/extended/v1/tx/mempool?limit=50";
    for api in [&here, &there] {
        assert_eq!(json(&get(api, url).await)["total"], 0, "{db:?}: mempool before");
    }
    let before = ts.store.generation().await.unwrap();
    let raw_tx = stacks_codec::decode_hex(&raw_tx).unwrap();
    ts.store.record_local_tx(&raw_tx, stacks_ledger::store::LocalSource::Faucet).await.unwrap();
    assert_ne!(ts.store.generation().await.unwrap(), before, "{db:?}: generation did not move");
    for (name, api) in [("same process", &here), ("second store", &there)] {
        assert_eq!(json(&get(api, url).await)["total"], 1, "{db:?} {name}: stale mempool answer");
    }
    other.close().await;
    ts.finish().await;
}

#[tokio::test]
async fn change_without_raw_event_sqlite() {
    change_without_raw_event(Db::Sqlite).await;
}

#[tokio::test]
async fn change_without_raw_event_postgres() {
    change_without_raw_event(Db::Postgres).await;
}
