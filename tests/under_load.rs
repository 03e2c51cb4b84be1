//! End to end, on both engines: the public API under concurrent load. Concurrent
//! misses of one URL compute it once; a list route answers the previous generation's body,
//! marked stale, while its new answer is computed; past the admission bound requests queue,
//! then are shed with `503`, `Retry-After` and a counted metric; cache hits and event POSTs
//! never wait for a reader's slot. Every "meanwhile" is made deterministic by the admission
//! gate's test hook, which holds admitted requests until the test lets them go: nothing here
//! depends on timing.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{devnet_config, devnet_events, incoming, ingest_all, Db, TestStore};
use serde_json::Value;
use stacks_ledger::api::admission::{Admission, AdmissionConfig, Hook};
use stacks_ledger::api::cache::{STALE_AGE_HEADER, STALE_HEADER};
use stacks_ledger::api::{self, IngestFirst, ResponseCache};
use stacks_ledger::events::RawEvent;
use stacks_ledger::ingest::EventSink;
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;
use stacks_ledger::v2::V2Settings;
use tokio::sync::Semaphore;
use warp::http::Response;

type Table = warp::filters::BoxedFilter<(warp::reply::Response,)>;

fn table(store: &Arc<Store>, cache: &Arc<ResponseCache>, admission: &Arc<Admission>) -> Table {
    use warp::{Filter, Reply};
    api::routes_with_parts(
        Arc::clone(store),
        V2Settings::ledger_only(),
        common::faucets(store),
        Arc::clone(cache),
        Arc::clone(admission),
    )
    .map(Reply::into_response)
    .boxed()
}

/// A hook holding every admitted request until `release` gives it a permit.
fn holding() -> (Hook, Arc<Semaphore>) {
    let release = Arc::new(Semaphore::new(0));
    let r = Arc::clone(&release);
    let hook: Hook = Arc::new(move || {
        let r = Arc::clone(&r);
        Box::pin(async move { r.acquire().await.expect("open").forget() })
    });
    (hook, release)
}

fn gate(limit: usize, queue: usize, wait: Duration) -> Arc<Admission> {
    Admission::new(&AdmissionConfig { limit: Some(limit), ingest_limit: Some(1), queue, wait }, 0)
}

async fn get(api: &Table, path: &str) -> Response<bytes::Bytes> {
    warp::test::request().path(path).reply(api).await
}

fn spawn_get(api: &Table, path: &str) -> tokio::task::JoinHandle<Response<bytes::Bytes>> {
    let (api, path) = (api.clone(), path.to_string());
    tokio::spawn(async move { get(&api, &path).await })
}

/// Lets the runtime run until `cond` holds (the spawned requests reach where the test waits
/// for them).
async fn until(cond: impl Fn() -> bool) {
    while !cond() {
        tokio::task::yield_now().await;
    }
}

/// A small devnet chain, all but its last event ingested; the last returned.
async fn chain(ts: &TestStore) -> (RawEvent, String) {
    let (mut events, _) = devnet_events(devnet_config(11, 8, 4));
    let last = events.pop().expect("events");
    ingest_all(&ts.store, events, &[], "devnet").await;
    let api = table(&ts.store, &Arc::new(ResponseCache::new(0)), &Admission::unbounded());
    let txs: Value = serde_json::from_slice(get(&api, "/extended/v1/tx?limit=1").await.body()).unwrap();
    let sender = txs["results"][0]["sender_address"].as_str().expect("a transaction").to_string();
    (last, sender)
}

async fn coalescing_and_stale(db: Db) {
    let Some(ts) = TestStore::new(db, "under_load_coalesce", Network::Testnet).await else { return };
    let (last, sender) = chain(&ts).await;
    // Stale answers up to an hour old: however slow the machine, the one below qualifies.
    let cache = Arc::new(ResponseCache::with_stale(8 << 20, Duration::from_secs(3600)));
    let admission = gate(4, 64, Duration::from_secs(600));
    let api = table(&ts.store, &cache, &admission);

    // N concurrent misses of an address's transactions: one computes, all get its answer.
    let url = format!("/extended/v1/address/{sender}/transactions?limit=50");
    let (hook, release) = holding();
    admission.set_hook(Some(hook));
    const N: usize = 16;
    let requests: Vec<_> = (0..N).map(|_| spawn_get(&api, &url)).collect();
    until(|| cache.waiting() == N - 1 && admission.load().0 == 1).await;
    assert_eq!(cache.computed(), 1, "{db:?}: one computation for {N} misses");
    release.add_permits(1);
    let mut bodies = Vec::new();
    for r in requests {
        let res = r.await.unwrap();
        assert_eq!(res.status(), 200, "{db:?}");
        assert!(res.headers().get(STALE_HEADER).is_none());
        bodies.push(res.into_body());
    }
    assert!(bodies.windows(2).all(|w| w[0] == w[1]), "{db:?}: every waiter got the leader's answer");
    assert_eq!(cache.computed(), 1, "{db:?}");
    admission.set_hook(None);
    let plain = table(&ts.store, &Arc::new(ResponseCache::new(0)), &Admission::unbounded());
    assert_eq!(get(&plain, &url).await.body(), &bodies[0], "{db:?}: the shared answer is the uncached one");

    // A list route: answered at this generation, then the last event moves the generation.
    let list = "/extended/v1/tx?limit=50";
    let old = get(&api, list).await;
    assert_eq!(old.status(), 200);
    ts.store.ingest(incoming(&last)).await.unwrap();
    let (hook, release) = holding();
    admission.set_hook(Some(hook));
    let computed = cache.computed();
    let leader = spawn_get(&api, list);
    until(|| admission.load().0 == 1).await;
    // While the new answer is computed: the previous one, marked stale.
    let stale = get(&api, list).await;
    assert_eq!((stale.status(), stale.body()), (old.status(), old.body()), "{db:?}");
    assert_eq!(stale.headers()[STALE_HEADER], "stale");
    assert!(stale.headers()[STALE_AGE_HEADER].to_str().unwrap().parse::<u64>().is_ok());
    // ... unless the client asks for a fresh one: it waits for the computation.
    let fresh = {
        let api = api.clone();
        tokio::spawn(async move {
            warp::test::request().path(list).header("cache-control", "no-cache").reply(&api).await
        })
    };
    until(|| cache.waiting() == 1).await;
    release.add_permits(1);
    let new = leader.await.unwrap();
    assert!(new.headers().get(STALE_HEADER).is_none());
    let fresh = fresh.await.unwrap();
    assert_eq!(fresh.body(), new.body());
    assert!(fresh.headers().get(STALE_HEADER).is_none());
    assert_eq!(cache.computed(), computed + 1, "{db:?}");
    assert_eq!(get(&plain, list).await.body(), new.body(), "{db:?}: the new answer is the uncached one");
    // Once computed, the new answer is served fresh.
    let again = get(&api, list).await;
    assert!(again.headers().get(STALE_HEADER).is_none());
    assert_eq!(again.body(), new.body());
    admission.set_hook(None);
    ts.finish().await;
}

#[tokio::test]
async fn coalescing_and_stale_sqlite() {
    coalescing_and_stale(Db::Sqlite).await;
}

#[tokio::test]
async fn coalescing_and_stale_postgres() {
    coalescing_and_stale(Db::Postgres).await;
}

fn shed_count(handle: &metrics_exporter_prometheus::PrometheusHandle, reason: &str) -> f64 {
    let needle = format!("stacks_ledger_admission_shed_total{{reason=\"{reason}\"}} ");
    handle.render().lines().find_map(|l| l.strip_prefix(&needle)?.trim().parse().ok()).unwrap_or(0.0)
}

async fn overload_sheds(db: Db) {
    let Some(ts) = TestStore::new(db, "under_load_shed", Network::Testnet).await else { return };
    let (last, _) = chain(&ts).await;
    let handle = stacks_ledger::metrics::install();
    let cache = Arc::new(ResponseCache::new(8 << 20));
    // One request at a time, one waiting at most, for at most 1 ms.
    let admission = gate(1, 1, Duration::from_millis(1));
    let api = table(&ts.store, &cache, &admission);
    let hit = "/extended/v2/blocks?limit=5";
    assert_eq!(get(&api, hit).await.status(), 200);

    let (hook, release) = holding();
    admission.set_hook(Some(hook));
    let (full_before, timeout_before) = (shed_count(&handle, "queue_full"), shed_count(&handle, "timeout"));
    let held = spawn_get(&api, "/extended/v1/block?limit=3");
    until(|| admission.load() == (1, 0)).await;
    // The slot is taken: a second request waits its 1 ms in the queue and is shed.
    let timed_out = get(&api, "/extended/v1/tx?limit=3").await;
    // With the queue full, a request is shed at once (another gate, whose waiter stays).
    let waiting = {
        let admission = gate(1, 1, Duration::from_secs(600));
        let api = table(&ts.store, &Arc::new(ResponseCache::new(0)), &admission);
        admission.set_hook(Some(holding().0));
        let first = spawn_get(&api, "/extended/v1/block?limit=1");
        until(|| admission.load() == (1, 0)).await;
        let second = spawn_get(&api, "/extended/v1/block?limit=2");
        until(|| admission.load() == (1, 1)).await;
        let full = get(&api, "/extended/v1/block?limit=4").await;
        first.abort();
        second.abort();
        full
    };
    for (res, reason) in [(&timed_out, "timeout"), (&waiting, "queue_full")] {
        assert_eq!(res.status(), 503, "{db:?} {reason}");
        assert_eq!(res.headers()["retry-after"], "1");
        let body: Value = serde_json::from_slice(res.body()).unwrap();
        assert_eq!(body["statusCode"], 503);
        assert_eq!(body["error"], "The server is busy");
        assert!(body["message"].as_str().unwrap().contains(reason), "{body}");
    }
    assert!(shed_count(&handle, "timeout") > timeout_before, "{db:?}: the shed is counted");
    assert!(shed_count(&handle, "queue_full") > full_before, "{db:?}: the shed is counted");

    // A cache hit needs no slot: answered while the slot is still held.
    let res = get(&api, hit).await;
    assert_eq!(res.status(), 200);
    assert!(cache.hits() >= 1);
    // Neither does an event POST: applied while readers are held.
    let sink = IngestFirst::new(Arc::clone(&ts.store), Arc::clone(&admission));
    sink.ingest(incoming(&last)).await.unwrap();
    assert_eq!(admission.load(), (1, 0));
    release.add_permits(1);
    assert_eq!(held.await.unwrap().status(), 200);
    admission.set_hook(None);
    assert_eq!(get(&api, "/extended/v1/tx?limit=3").await.status(), 200);
    assert_eq!(admission.load(), (0, 0));
    ts.finish().await;
}

#[tokio::test]
async fn overload_sheds_with_503_and_a_counted_metric_sqlite() {
    overload_sheds(Db::Sqlite).await;
}

#[tokio::test]
async fn overload_sheds_with_503_and_a_counted_metric_postgres() {
    overload_sheds(Db::Postgres).await;
}
