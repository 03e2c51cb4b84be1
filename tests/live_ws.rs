//! Live updates end to end: a generated devnet chain (forks, microblocks, mempool, NFTs) or a
//! recorded reorg fixture ingested through the live sink into a running server (real TCP), raw
//! WebSocket JSON-RPC clients on `/extended/v1/ws`, on SQLite and PostgreSQL. Checks every topic
//! against the HTTP API, cross-talk, resume, reorg notices, slow-consumer and dead-peer drops, a
//! soak at accelerated speed, and two API processes on one PostgreSQL database.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use common::ws::WsClient;
use common::{devnet_config, devnet_events, incoming, read_tsv, shared_file, Db, TestDb, TestStore};
use futures_util::StreamExt;
use serde_json::{json, Value};
use stacks_ledger::events::RawEvent;
use stacks_ledger::ingest::EventSink;
use stacks_ledger::ledger::Network;
use stacks_ledger::live::{change_of, Live, LiveSink};
use stacks_ledger::store::Store;
use stacks_live::{Change, LiveConfig, Topic};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::MaybeTlsStream;

struct Server {
    addr: SocketAddr,
    live: Live,
    sink: LiveSink<Store>,
    http: reqwest::Client,
}

async fn start(store: Arc<Store>, config: LiveConfig) -> Server {
    let live = Live::start(Arc::clone(&store), config).await.unwrap();
    let routes = stacks_ledger::api::routes_live(
        Arc::clone(&store),
        stacks_ledger::v2::V2Settings::ledger_only(),
        common::faucets(&store),
        &common::env_config(),
        &live,
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(warp::serve(routes).incoming(listener).run());
    let sink = LiveSink::new(store, live.feed());
    Server { addr, live, sink, http: reqwest::Client::new() }
}

impl Server {
    async fn ingest(&self, events: &[RawEvent]) {
        for ev in events {
            self.sink.ingest(incoming(ev)).await.unwrap_or_else(|e| panic!("event {}: {e}", ev.id));
        }
    }

    /// Waits until the notifier has published everything (no new sequence number for a
    /// second). On PostgreSQL the notes come back through LISTEN, asynchronously: with 400 ms
    /// a CI run under load once ended the wait before the last notes (a reorg) arrived.
    async fn settle(&self) {
        let mut last = u64::MAX;
        let mut still = 0;
        while still < 10 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let now = self.live.hub.latest_seq();
            still = if now == last { still + 1 } else { 0 };
            last = now;
        }
    }

    async fn get(&self, path: &str) -> Value {
        let r = self.http.get(format!("http://{}{path}", self.addr)).send().await.unwrap();
        assert_eq!(r.status(), 200, "{path}");
        r.json().await.unwrap()
    }
}

const QUIET: Duration = Duration::from_millis(400);

/// Test clients answer pings only while they read, and most read only at the end: long ping
/// intervals here; the liveness tests set short ones.
fn fast_config() -> LiveConfig {
    LiveConfig {
        ping_interval: Duration::from_secs(30),
        ping_timeout: Duration::from_secs(30),
        message_timeout: Duration::from_secs(20),
        queue: 65_536,
        replay_window: 100_000,
        ..LiveConfig::default()
    }
}

/// A devnet chain with forks, microblocks, mempool traffic and NFTs.
fn chain(blocks: u64) -> Vec<RawEvent> {
    let (events, generator) = devnet_events(devnet_config(3, blocks, 5));
    let stats = generator.stats();
    assert!(stats.forks > 0, "the chain must fork: {stats:?}");
    events
}

fn is_new_block(ev: &RawEvent) -> bool {
    ev.path == "/new_block"
}

/// The events up to and including the `n`-th `/new_block`.
fn split_at_block(events: &[RawEvent], n: usize) -> usize {
    events.iter().enumerate().filter(|(_, e)| is_new_block(e)).nth(n - 1).map(|(i, _)| i + 1).unwrap()
}

async fn every_topic(db: Db) {
    let Some(ts) = TestStore::new(db, "live_topics", Network::Testnet).await else { return };
    let server = start(Arc::clone(&ts.store), fast_config()).await;
    let events = chain(40);
    let half = split_at_block(&events, 20);
    server.ingest(&events[..half]).await;
    server.settle().await;

    // Subjects taken from the chain so far: a busy sender and an NFT asset it has seen.
    let recent = server.get("/extended/v1/tx?limit=50").await;
    let address = recent["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["tx_type"] == "token_transfer" || t["tx_type"] == "contract_call")
        .map(|t| t["sender_address"].as_str().unwrap().to_owned())
        .next()
        .expect("a sender");
    // The first mempool transaction of the second half, to follow from mempool to block.
    let watched_tx = events[half..]
        .iter()
        .find_map(|e| match change_of(&incoming(e)) {
            Some(Change::MempoolAdded { tx_ids }) => tx_ids.first().cloned(),
            _ => None,
        })
        .expect("a mempool tx in the second half");

    let mut blocks = WsClient::connect(server.addr).await;
    blocks.subscribe(json!({"event": "block"})).await;
    let mut mempool = WsClient::connect(server.addr).await;
    mempool.subscribe(json!({"event": "mempool"})).await;
    let mut tx = WsClient::connect(server.addr).await;
    let ack = tx.subscribe(json!({"event": "tx_update", "tx_id": watched_tx.trim_start_matches("0x")})).await;
    assert_eq!(ack, json!({"tx_id": watched_tx}));
    let mut addr_tx = WsClient::connect(server.addr).await;
    assert_eq!(
        addr_tx.subscribe(json!({"event": "address_tx_update", "address": address})).await["address"],
        address
    );
    let mut balance = WsClient::connect(server.addr).await;
    balance.subscribe(json!({"event": "address_balance_update", "address": address})).await;
    let mut nft = WsClient::connect(server.addr).await;
    nft.subscribe(json!({"event": "nft_event"})).await;
    // Nobody's topics: this one must hear nothing but reorg notices.
    let mut other = WsClient::connect(server.addr).await;
    other.subscribe(json!({"event": "tx_update", "tx_id": format!("0x{}", "ee".repeat(32))})).await;
    other.subscribe(json!({"event": "address_tx_update", "address": "ST000000000000000000002AMW42H"})).await;

    let subscribed_at = server.live.hub.latest_seq();
    let tip_before = server.get("/extended/v1/block?limit=1").await["results"][0]["height"].as_u64().unwrap();
    // In lockstep, so that the notifier sees (and announces) the forks of the second half.
    let refused = common::live::ingest_in_lockstep(&server.live, &server.sink, &events[half..]).await;
    assert_eq!(refused, Vec::<i64>::new(), "the devnet's events all apply");
    server.settle().await;
    for c in [&mut blocks, &mut mempool, &mut tx, &mut addr_tx, &mut balance, &mut nft, &mut other] {
        c.drain(QUIET).await;
        // Sequence numbers strictly increase on every connection.
        let seqs: Vec<u64> = c.notes.iter().map(|n| n["seq"].as_u64().unwrap()).collect();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    }

    // block: every canonical height after the subscription, and the tip's payload is the API's.
    assert_eq!(blocks.methods(), ["block", "reorg"].map(String::from).into());
    let tip = server.get("/extended/v1/block?limit=1").await["results"][0].clone();
    let heights: BTreeSet<u64> =
        blocks.of("block").iter().map(|n| n["params"]["height"].as_u64().unwrap()).collect();
    let expected: BTreeSet<u64> = (tip_before + 1..=tip["height"].as_u64().unwrap()).collect();
    assert!(expected.is_subset(&heights), "missing heights: {:?}", expected.difference(&heights));
    assert_eq!(blocks.of("block").last().unwrap()["params"]["hash"], tip["hash"]);
    for n in blocks.of("block") {
        let hash = n["params"]["hash"].as_str().unwrap();
        let now = server.get(&format!("/extended/v1/block/{hash}")).await;
        if now["canonical"] == true {
            // Microblocks streamed on top of a block come after its announcement.
            let (mut announced, mut now) = (n["params"].clone(), now);
            announced["microblocks_streamed"] = json!(null);
            now["microblocks_streamed"] = json!(null);
            assert_eq!(announced, now, "block {hash}");
        }
    }

    // reorg: announced, and what it names is off the canonical chain now.
    let reorgs = blocks.of("reorg");
    assert!(!reorgs.is_empty(), "the chain forked but no reorg was announced");
    for r in &reorgs {
        for b in r["params"]["orphaned_blocks"].as_array().unwrap() {
            let hash = b["block_hash"].as_str().unwrap();
            let now = server.get(&format!("/extended/v1/block/{hash}")).await;
            assert_eq!(now["canonical"], false, "{r}");
        }
    }
    assert_eq!(other.methods(), BTreeSet::from(["reorg".to_string()]), "nothing else for unrelated topics");
    assert_eq!(other.of("reorg").len(), reorgs.len());

    // mempool: mempool transactions, each as the API showed it pending.
    assert!(!mempool.of("mempool").is_empty());
    // Mempool entities (computed right after the event; a later event may have replaced them).
    for n in mempool.of("mempool") {
        let p = &n["params"];
        assert!(p["receipt_time"].is_u64() && p.get("block_height").is_none(), "{p}");
        let status = p["tx_status"].as_str().unwrap();
        assert!(status == "pending" || status.starts_with("dropped_"), "{status}");
    }
    assert!(mempool.of("mempool").iter().any(|n| n["params"]["tx_id"] == watched_tx));

    // tx_update: only the watched tx, pending first, then mined; the last is the API's view.
    let updates = tx.of("tx_update");
    assert!(updates.len() >= 2, "{updates:?}");
    assert!(updates.iter().all(|n| n["params"]["tx_id"] == watched_tx));
    assert_eq!(updates[0]["params"]["tx_status"], "pending");
    let now = server.get(&format!("/extended/v1/tx/{watched_tx}")).await;
    if now["tx_status"] != "pending" {
        let mined: Vec<_> = updates.iter().filter(|n| n["params"]["block_height"].is_u64()).collect();
        assert!(!mined.is_empty(), "{updates:?}");
    }

    // address_tx_update: every canonical tx of the address after the subscription, and only its.
    let notes = addr_tx.of("address_tx_update");
    assert!(notes.iter().all(|n| n["params"]["address"] == address));
    let got: BTreeSet<String> =
        notes.iter().map(|n| n["params"]["tx_id"].as_str().unwrap().to_owned()).collect();
    let history = server.get(&format!("/extended/v1/address/{address}/transactions?limit=50")).await;
    let want: BTreeSet<String> = history["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["block_height"].as_u64().unwrap() > tip_before)
        .map(|t| t["tx_id"].as_str().unwrap().to_owned())
        .collect();
    assert!(!want.is_empty(), "the address was active");
    assert!(want.is_subset(&got), "missing: {:?}", want.difference(&got));
    for n in &notes {
        let p = &n["params"];
        assert_eq!(p["tx"]["tx_id"], p["tx_id"]);
        assert!(p["stx_sent"].is_string() && p["stx_received"].is_string() && p["stx_transfers"].is_array());
    }

    // address_balance_update: the last one is the API's balance.
    let last = balance.of("address_balance_update").last().expect("a balance update")["params"].clone();
    let api = server.get(&format!("/extended/v1/address/{address}/stx")).await;
    assert_eq!(last["address"], address);
    for key in [
        "balance",
        "total_sent",
        "total_received",
        "total_fees_sent",
        "total_miner_rewards_received",
        "locked",
    ] {
        assert_eq!(last[key], api[key], "{key}");
    }

    // nft_event: NFT events of the chain's transactions, with the entity's fields.
    let nfts = nft.of("nft_event");
    assert!(!nfts.is_empty(), "the devnet mints and moves NFTs");
    for n in &nfts {
        let p = &n["params"];
        assert!(p["asset_identifier"].as_str().unwrap().contains("::"), "{p}");
        assert!(p["value"]["hex"].as_str().unwrap().starts_with("0x"));
    }
    // nft_asset_event / nft_collection_event: subscribe with resume and get exactly the matching ones.
    let sample = nfts[0]["params"].clone();
    let asset = sample["asset_identifier"].as_str().unwrap();
    let mut coll = WsClient::connect(server.addr).await;
    coll.subscribe(
        json!({"event": "nft_collection_event", "asset_identifier": asset, "since_seq": subscribed_at}),
    )
    .await;
    coll.subscribe(
        json!({"event": "nft_asset_event", "asset_identifier": asset, "value": sample["value"]["hex"], "since_seq": subscribed_at}),
    )
        .await;
    coll.drain(QUIET).await;
    let same_asset = nfts.iter().filter(|n| n["params"]["asset_identifier"] == asset).count();
    let since_subscribed = |n: &&&Value| n["seq"].as_u64().unwrap() > subscribed_at;
    assert_eq!(coll.of("nft_collection_event").iter().filter(since_subscribed).count(), same_asset);
    assert!(coll.of("nft_collection_event").iter().all(|n| n["params"]["asset_identifier"] == asset));
    assert!(coll.of("nft_asset_event").iter().all(|n| n["params"]["value"] == sample["value"]));
    assert!(!coll.of("nft_asset_event").is_empty());
    ts.finish().await;
}

#[tokio::test]
async fn every_topic_sqlite() {
    every_topic(Db::Sqlite).await;
}

#[tokio::test]
async fn every_topic_postgres() {
    every_topic(Db::Postgres).await;
}

/// A client that disconnects and resumes with the last sequence it saw gets exactly what an
/// uninterrupted client got in between; a sequence outside the window is refused.
async fn resume(db: Db) {
    let Some(ts) = TestStore::new(db, "live_resume", Network::Testnet).await else { return };
    let server = start(Arc::clone(&ts.store), fast_config()).await;
    let events = chain(40);
    let (a, b) = (split_at_block(&events, 13), split_at_block(&events, 26));
    let mut steady = WsClient::connect(server.addr).await;
    steady.subscribe(json!({"event": "block"})).await;
    steady.subscribe(json!({"event": "mempool"})).await;
    let mut flaky = WsClient::connect(server.addr).await;
    flaky.subscribe(json!({"event": "block"})).await;
    flaky.subscribe(json!({"event": "mempool"})).await;
    server.ingest(&events[..a]).await;
    server.settle().await;
    flaky.drain(QUIET).await;
    let last_seen = flaky.notes.last().unwrap()["seq"].as_u64().unwrap();
    // The server may already have dropped it (its pongs stopped with its reads).
    let _ = flaky.ws.close(None).await;

    server.ingest(&events[a..b]).await;
    server.settle().await;
    let mut back = WsClient::connect(server.addr).await;
    back.subscribe(json!({"event": "block", "since_seq": last_seen})).await;
    back.subscribe(json!({"event": "mempool", "since_seq": last_seen})).await;
    server.ingest(&events[b..]).await;
    server.settle().await;
    back.drain(QUIET).await;
    steady.drain(QUIET).await;
    let key = |n: &Value| (n["seq"].as_u64().unwrap(), n["method"].clone(), n["params"].clone());
    let mut got: Vec<_> = back.notes.iter().map(key).collect();
    got.sort_by_key(|k| k.0);
    let want: Vec<_> =
        steady.notes.iter().filter(|n| n["seq"].as_u64().unwrap() > last_seen).map(key).collect();
    assert!(want.iter().any(|k| k.1 == "block") && want.iter().any(|k| k.1 == "mempool"));
    assert_eq!(got.len(), want.len(), "replayed + live must equal what was missed and after");
    assert_eq!(got, want);

    // Outside the window: a server with a tiny window refuses, saying why.
    let small = start(Arc::clone(&ts.store), LiveConfig { replay_window: 2, ..fast_config() }).await;
    for _ in 0..5 {
        small.live.hub.publish(Topic::Block, json!({}));
    }
    let mut c = WsClient::connect(small.addr).await;
    let r = c.call("subscribe", json!({"event": "block", "since_seq": 1})).await;
    assert_eq!(r["error"]["code"], stacks_live::jsonrpc::RESUME_FAILED, "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("replay window"));
    ts.finish().await;
}

#[tokio::test]
async fn resume_sqlite() {
    resume(Db::Sqlite).await;
}

#[tokio::test]
async fn resume_postgres() {
    resume(Db::Postgres).await;
}

/// With no connection the notifier renders nothing (`Hub::skip_if_idle`, grace 0 here): a
/// client that resumes across such a period is told to refetch, and one that connects
/// afterwards is announced what follows it, not what was skipped.
async fn idle(db: Db) {
    let Some(ts) = TestStore::new(db, "live_idle", Network::Testnet).await else { return };
    let server =
        start(Arc::clone(&ts.store), LiveConfig { idle_grace: Duration::ZERO, ..fast_config() }).await;
    let events = chain(40);
    let (a, b, c) = (split_at_block(&events, 10), split_at_block(&events, 20), split_at_block(&events, 30));
    // In lockstep (each change handled before the next event): a skipped change moves no
    // sequence number that a settle could wait on.
    common::live::ingest_in_lockstep(&server.live, &server.sink, &events[..a]).await;
    assert_eq!(server.live.hub.latest_seq(), 1, "nobody connected: one gap, nothing rendered");

    // While a client is connected, every change is rendered.
    let mut gone = WsClient::connect(server.addr).await;
    gone.subscribe(json!({"event": "block"})).await;
    common::live::ingest_in_lockstep(&server.live, &server.sink, &events[a..b]).await;
    server.settle().await;
    gone.drain(QUIET).await;
    assert!(!gone.of("block").is_empty());
    let last_seen = gone.notes.last().unwrap()["seq"].as_u64().unwrap();
    let _ = gone.ws.close(None).await;
    let waited = tokio::time::Instant::now();
    while server.live.hub.receiver_count() > 0 {
        assert!(waited.elapsed() < Duration::from_secs(30), "the server kept the closed connection");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Nobody again: skipped behind a new gap.
    let rendered = server.live.hub.latest_seq();
    common::live::ingest_in_lockstep(&server.live, &server.sink, &events[b..c]).await;
    assert_eq!(server.live.hub.latest_seq(), rendered + 1);
    let mut back = WsClient::connect(server.addr).await;
    let r = back.call("subscribe", json!({"event": "block", "since_seq": last_seen})).await;
    assert_eq!(r["error"]["code"], stacks_live::jsonrpc::RESUME_FAILED, "{r}");

    let mut fresh = WsClient::connect(server.addr).await;
    fresh.subscribe(json!({"event": "block"})).await;
    let tip_before = server.get("/extended/v1/block?limit=1").await["results"][0]["height"].as_u64().unwrap();
    common::live::ingest_in_lockstep(&server.live, &server.sink, &events[c..]).await;
    server.settle().await;
    fresh.drain(QUIET).await;
    let tip = server.get("/extended/v1/block?limit=1").await["results"][0]["height"].as_u64().unwrap();
    let heights: BTreeSet<u64> =
        fresh.of("block").iter().map(|n| n["params"]["height"].as_u64().unwrap()).collect();
    let expected: BTreeSet<u64> = (tip_before + 1..=tip).collect();
    assert!(
        !expected.is_empty() && expected.is_subset(&heights),
        "missing: {:?}",
        expected.difference(&heights)
    );
    // A height at or below the tip it could read is announced again only after a reorg notice.
    let mut reorged = false;
    for n in &fresh.notes {
        match n["method"].as_str() {
            Some("reorg") => reorged = true,
            Some("block") => {
                assert!(reorged || n["params"]["height"].as_u64().unwrap() > tip_before, "{n}")
            }
            _ => {}
        }
    }
    ts.finish().await;
}

#[tokio::test]
async fn idle_sqlite() {
    idle(Db::Sqlite).await;
}

#[tokio::test]
async fn idle_postgres() {
    idle(Db::Postgres).await;
}

/// A recorded mainnet reorg: subscribers are told which blocks left the canonical chain.
async fn fixture_reorg(db: Db, fixture: &str) {
    let Some(path) = shared_file(&format!("fixtures/{fixture}")) else { return };
    let Some(ts) = TestStore::new(db, "live_reorg", Network::Mainnet).await else { return };
    let server = start(Arc::clone(&ts.store), fast_config()).await;
    let mut c = WsClient::connect(server.addr).await;
    c.subscribe(json!({"event": "block"})).await;
    // Fixtures hold events the store refuses on purpose; those change nothing.
    common::live::ingest_in_lockstep(&server.live, &server.sink, &read_tsv(&path)).await;
    server.settle().await;
    c.drain(QUIET).await;
    let reorgs = c.of("reorg");
    assert!(!reorgs.is_empty(), "{fixture}: no reorg announced");
    for r in reorgs {
        let orphaned = r["params"]["orphaned_blocks"].as_array().unwrap();
        assert!(!orphaned.is_empty());
        for b in orphaned {
            let now = server.get(&format!("/extended/v1/block/{}", b["block_hash"].as_str().unwrap())).await;
            assert_eq!(now["canonical"], false, "{fixture}: {r}");
        }
        assert!(
            r["params"]["fork_height"].as_u64().unwrap()
                < r["params"]["new_tip"]["block_height"].as_u64().unwrap()
        );
    }
    ts.finish().await;
}

#[tokio::test]
async fn fixture_reorgs_sqlite() {
    fixture_reorg(Db::Sqlite, "mainnet-reorg-scenario1.tsv").await;
    fixture_reorg(Db::Sqlite, "mainnet-reorg-scenario2.tsv").await;
}

#[tokio::test]
async fn fixture_reorgs_postgres() {
    fixture_reorg(Db::Postgres, "mainnet-reorg-scenario1.tsv").await;
    fixture_reorg(Db::Postgres, "mainnet-reorg-scenario2.tsv").await;
}

/// Events committed before the notifier hears of them, in [`behind`].
const BEHIND_BY: usize = 15;

/// However far the notifier runs behind ingestion, a block subscriber's view adds up to the
/// canonical chain: at every height the last block announced is the canonical one, every
/// announced block that left the chain is named in a later reorg, and a reorg names only
/// blocks that were announced. Here it hears of the changes only after each run of
/// [`BEHIND_BY`] events is committed, so forks within a run are folded (never announced) and
/// forks across runs are announced as reorgs.
async fn behind(db: Db) {
    let Some(ts) = TestStore::new(db, "live_behind", Network::Testnet).await else { return };
    let server = start(Arc::clone(&ts.store), fast_config()).await;
    let (held, mut changes) = tokio::sync::mpsc::unbounded_channel();
    let sink = LiveSink::new(Arc::clone(&ts.store), stacks_ledger::live::Feed::Local(held));
    // Read back from the replay ring below; with no connection the hub would skip rendering.
    let _present = server.live.hub.connect();
    let events = chain(40);
    for run in events.chunks(BEHIND_BY) {
        for ev in run {
            sink.ingest(incoming(ev)).await.unwrap_or_else(|e| panic!("event {}: {e}", ev.id));
        }
        let mut announced = server.live.processed();
        while let Ok(change) = changes.try_recv() {
            server.live.feed().announce(change).await;
            announced += 1;
        }
        common::live::until_handled(&server.live, announced).await;
    }
    let notes = server.live.hub.replay(0, server.live.hub.latest_seq()).unwrap();
    let (mut view, mut announced, mut retracted) = (BTreeMap::new(), BTreeSet::new(), BTreeSet::new());
    for n in &notes {
        match n.topic {
            Topic::Block => {
                let hash = n.payload["hash"].as_str().unwrap().to_owned();
                view.insert(n.payload["height"].as_u64().unwrap(), hash.clone());
                announced.insert(hash);
            }
            Topic::Reorg => {
                for b in n.payload["orphaned_blocks"].as_array().unwrap() {
                    let hash = b["block_hash"].as_str().unwrap().to_owned();
                    assert!(announced.contains(&hash), "a reorg names {hash}, never announced");
                    let height = b["block_height"].as_u64().unwrap();
                    if view.get(&height) == Some(&hash) {
                        view.remove(&height);
                    }
                    retracted.insert(hash);
                }
            }
            _ => {}
        }
    }
    let tip = server.get("/extended/v1/block?limit=1").await["results"][0]["height"].as_u64().unwrap();
    assert_eq!(view.keys().copied().collect::<Vec<_>>(), (1..=tip).collect::<Vec<_>>(), "every height once");
    for (height, hash) in &view {
        let canonical = server.get(&format!("/extended/v1/block/by_height/{height}")).await;
        assert_eq!(canonical["hash"].as_str(), Some(hash.as_str()), "height {height}");
    }
    let canonical: BTreeSet<&String> = view.values().collect();
    for hash in announced.iter().filter(|h| !canonical.contains(h)) {
        assert!(retracted.contains(hash), "{hash} left the chain without a reorg notice");
    }
    // The blocks off the chain now (some never were on it). In lockstep two of them are
    // announced and retracted; in runs of this length one is folded into its run.
    let orphans: BTreeSet<String> = events
        .iter()
        .filter(|e| is_new_block(e))
        .map(|e| {
            serde_json::from_str::<Value>(&e.payload).unwrap()["block_hash"].as_str().unwrap().to_owned()
        })
        .filter(|h| !canonical.contains(h))
        .collect();
    println!(
        "behind: {} blocks announced, {} orphaned, {} retracted",
        announced.len(),
        orphans.len(),
        retracted.len()
    );
    assert!(retracted.is_subset(&orphans));
    assert_eq!(retracted.len(), 1, "one fork announced as a reorg, one folded");
    ts.finish().await;
}

#[tokio::test]
async fn behind_sqlite() {
    behind(Db::Sqlite).await;
}

#[tokio::test]
async fn behind_postgres() {
    behind(Db::Postgres).await;
}

/// A client that stops reading falls behind, is disconnected with a reason, and does not slow a
/// reading client down; a peer that stops answering pings is dropped, a live one is not.
async fn slow_and_dead(db: Db) {
    let Some(ts) = TestStore::new(db, "live_slow", Network::Testnet).await else { return };
    // Long pings here: a client that does not read does not answer them either.
    let server = start(Arc::clone(&ts.store), LiveConfig { queue: 64, ..fast_config() }).await;
    // A small receive buffer so the kernel cannot absorb everything for the slow client.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let stream = socket.connect(server.addr).await.unwrap();
    let url = format!("ws://{}/extended/v1/ws", server.addr);
    let (ws, _) = tokio_tungstenite::client_async(url, MaybeTlsStream::Plain(stream)).await.unwrap();
    let mut slow = WsClient::from_stream(ws);
    slow.subscribe(json!({"event": "block"})).await;
    let mut fast = WsClient::connect(server.addr).await;
    fast.subscribe(json!({"event": "block"})).await;

    let big = json!({"filler": "x".repeat(16 * 1024)});
    let reader = tokio::spawn(async move {
        let mut n = 0;
        while n < 2_000 {
            match fast.next_json(Duration::from_secs(10)).await {
                Some(v) if v["method"] == "block" => n += 1,
                Some(_) => {}
                None => break,
            }
        }
        n
    });
    for _ in 0..2_000 {
        server.live.hub.publish(Topic::Block, big.clone());
        tokio::task::yield_now().await;
    }
    assert_eq!(reader.await.unwrap(), 2_000, "the reading client got everything");
    // Now the slow one reads: what it had buffered, then a close frame saying why.
    let mut close = None;
    while let Ok(Some(msg)) = tokio::time::timeout(Duration::from_secs(10), slow.ws.next()).await {
        match msg {
            Ok(Message::Close(frame)) => {
                close = frame;
                break;
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    let frame = close.expect("a close frame");
    assert_eq!(u16::from(frame.code), 1008);
    assert!(frame.reason.as_str().starts_with("slow consumer"), "{}", frame.reason);

    // Liveness: a reading client stays (pings answered by its reads), a silent one is dropped.
    let config = LiveConfig {
        ping_interval: Duration::from_millis(200),
        ping_timeout: Duration::from_millis(400),
        ..fast_config()
    };
    let server = start(Arc::clone(&ts.store), config).await;
    let before = server.live.hub.receiver_count();
    let mut alive = WsClient::connect(server.addr).await;
    alive.subscribe(json!({"event": "block"})).await;
    let mut silent = WsClient::connect(server.addr).await;
    silent.subscribe(json!({"event": "block"})).await;
    assert_eq!(server.live.hub.receiver_count(), before + 2);
    let keep = tokio::spawn(async move {
        let mut pings = 0;
        let until = tokio::time::Instant::now() + Duration::from_secs(2);
        while tokio::time::Instant::now() < until {
            if let Ok(Some(Ok(Message::Ping(_)))) =
                tokio::time::timeout(Duration::from_millis(50), alive.ws.next()).await
            {
                pings += 1;
            }
        }
        (alive, pings)
    });
    let (mut alive, pings) = keep.await.unwrap();
    assert!(pings >= 5, "server pings every 200 ms: {pings}");
    assert_eq!(server.live.hub.receiver_count(), before + 1, "the silent peer was dropped");
    let r = alive.call("unsubscribe", json!({"event": "block"})).await;
    assert_eq!(r["result"], json!({}));
    drop(silent);
    ts.finish().await;
}

#[tokio::test]
async fn slow_and_dead_peers_sqlite() {
    slow_and_dead(Db::Sqlite).await;
}

#[tokio::test]
async fn slow_and_dead_peers_postgres() {
    slow_and_dead(Db::Postgres).await;
}

/// Many simulated hours of blocks (devnet blocks are minutes apart) at accelerated speed, with
/// pings every 50 ms: the connection stays healthy and misses nothing.
async fn soak(db: Db) {
    let Some(ts) = TestStore::new(db, "live_soak", Network::Testnet).await else { return };
    let config = LiveConfig {
        ping_interval: Duration::from_millis(50),
        ping_timeout: Duration::from_millis(150),
        ..fast_config()
    };
    let server = start(Arc::clone(&ts.store), config).await;
    let (events, _) = devnet_events(devnet_config(7, 150, 1));
    let mut c = WsClient::connect(server.addr).await;
    c.subscribe(json!({"event": "block"})).await;
    let reader = tokio::spawn(async move {
        // Reading answers the pings; stop once quiet after the last block.
        c.drain(Duration::from_secs(5)).await;
        c
    });
    server.ingest(&events).await;
    server.settle().await;
    let mut c = reader.await.unwrap();
    let heights: BTreeSet<u64> =
        c.of("block").iter().map(|n| n["params"]["height"].as_u64().unwrap()).collect();
    let tip = server.get("/extended/v1/block?limit=1").await["results"][0].clone();
    let first = c.of("block").first().unwrap()["params"]["burn_block_time"].as_i64().unwrap();
    let span_hours = (tip["burn_block_time"].as_i64().unwrap() - first) / 3600;
    assert!(span_hours >= 10, "simulated span {span_hours} h");
    assert!((1..=tip["height"].as_u64().unwrap()).all(|h| heights.contains(&h)), "every height announced");
    // Still healthy: it answers a request.
    assert_eq!(c.call("subscribe", json!({"event": "mempool"})).await["result"], json!({}));
    println!("soak: {} blocks over {span_hours} simulated hours", heights.len());
    ts.finish().await;
}

#[tokio::test]
async fn soak_sqlite() {
    soak(Db::Sqlite).await;
}

#[tokio::test]
async fn soak_postgres() {
    soak(Db::Postgres).await;
}

/// Two API processes on one PostgreSQL database, one ingesting: both deliver (LISTEN/NOTIFY).
#[tokio::test]
async fn two_processes_share_updates_postgres() {
    let Some(db) = TestDb::new(Db::Postgres, "live_two").await else { return };
    let writer =
        Arc::new(Store::open(&db.url, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap());
    let reader =
        Arc::new(Store::open(&db.url, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap());
    let a = start(Arc::clone(&writer), fast_config()).await;
    let b = start(Arc::clone(&reader), fast_config()).await;
    let mut on_a = WsClient::connect(a.addr).await;
    on_a.subscribe(json!({"event": "block"})).await;
    let mut on_b = WsClient::connect(b.addr).await;
    on_b.subscribe(json!({"event": "block"})).await;
    let (events, _) = devnet_events(devnet_config(5, 12, 2));
    a.ingest(&events).await;
    a.settle().await;
    b.settle().await;
    on_a.drain(QUIET).await;
    on_b.drain(QUIET).await;
    // `microblocks_streamed` grows after a block is announced (the stream that builds on it
    // comes later), so each process shows what it had read when it rendered the block.
    let blocks = |c: &WsClient| {
        c.of("block")
            .iter()
            .map(|n| {
                let mut p = n["params"].clone();
                p.as_object_mut().map(|o| o.remove("microblocks_streamed"));
                p
            })
            .collect::<Vec<_>>()
    };
    assert!(blocks(&on_b).len() >= 12, "{}", blocks(&on_b).len());
    assert_eq!(blocks(&on_a), blocks(&on_b), "both processes deliver the same updates");
    writer.close().await;
    reader.close().await;
    db.drop_db().await;
}

/// A writer's NOTIFYs leave the node's POST (a task sends them); at shutdown `Feed::flush` sends
/// what is queued before the writer's store closes, and a listening process gets every one.
#[tokio::test]
async fn a_writer_flushes_its_notifies_before_closing_postgres() {
    let Some(db) = TestDb::new(Db::Postgres, "live_flush").await else { return };
    let writer =
        Arc::new(Store::open(&db.url, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap());
    let reader =
        Arc::new(Store::open(&db.url, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap());
    let listening = start(Arc::clone(&reader), fast_config()).await;
    let feed = stacks_ledger::live::Feed::announcing_only(&writer);
    let before = listening.live.processed();
    const N: u64 = 200;
    for i in 0..N {
        feed.announce(Change::MempoolDropped { tx_ids: vec![format!("0x{i:064x}")] }).await;
    }
    feed.flush(Duration::from_secs(30)).await;
    writer.close().await;
    common::live::until_handled(&listening.live, before + N).await;
    reader.close().await;
    db.drop_db().await;
}

/// Every microblock the store accepts is announced once, as the `/extended/v1/microblock/{hash}`
/// entity at that moment, to `microblock` subscribers only.
async fn microblocks(db: Db, network: Network, events: Vec<RawEvent>, label: &str, at_least: usize) {
    let Some(ts) = TestStore::new(db, "live_micro", network).await else { return };
    let server = start(Arc::clone(&ts.store), fast_config()).await;
    let mut micro = WsClient::connect(server.addr).await;
    micro.subscribe(json!({"event": "microblock"})).await;
    let mut blocks = WsClient::connect(server.addr).await;
    blocks.subscribe(json!({"event": "block"})).await;
    let mut expected = Vec::new();
    let mut announced = server.live.processed();
    for ev in &events {
        let change = change_of(&incoming(ev));
        let applied = matches!(
            server.sink.ingest(incoming(ev)).await,
            Ok(stacks_ledger::ingest::IngestOutcome::Applied { .. })
        );
        let Some(change) = change.filter(|_| applied) else { continue };
        // In lockstep with the notifier, so the entity read here is the one it rendered.
        announced += 1;
        common::live::until_handled(&server.live, announced).await;
        let Change::Microblocks { microblock_hashes, .. } = change else { continue };
        for hash in microblock_hashes {
            let url = format!("http://{}/extended/v1/microblock/{hash}", server.addr);
            let r = server.http.get(url).send().await.unwrap();
            if r.status() == 404 {
                continue;
            }
            assert_eq!(r.status(), 200, "{label}: {hash}");
            let m: Value = r.json().await.unwrap();
            if m["canonical"] == true && m["microblock_canonical"] == true {
                expected.push(m);
            }
        }
    }
    server.settle().await;
    micro.drain(QUIET).await;
    blocks.drain(QUIET).await;
    assert!(expected.len() >= at_least, "{label}: {} microblocks accepted", expected.len());
    let got: Vec<Value> = micro.of("microblock").into_iter().map(|n| n["params"].clone()).collect();
    assert_eq!(got.len(), expected.len(), "{label}: one notification per accepted microblock");
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g, e, "{label}: microblock #{i}");
    }
    // Reorg notices go to every subscribed connection; nothing else may arrive.
    assert!(
        micro.methods().iter().all(|m| m == "microblock" || m == "reorg"),
        "{label}: {:?}",
        micro.methods()
    );
    assert!(blocks.of("microblock").is_empty(), "{label}: a block subscriber got microblocks");
    assert!(!blocks.of("block").is_empty() || events.iter().all(|e| !is_new_block(e)), "{label}");
    println!("{label}: {} microblocks announced", got.len());
    ts.finish().await;
}

async fn microblocks_all(db: Db) {
    microblocks(db, Network::Testnet, chain(40), "devnet", 5).await;
    // A stream that arrives before its parent block is refused; the poison fixture has a
    // poison-microblock transaction and no stream: neither announces anything.
    for fixture in
        ["mainnet-out-of-order-microblock.tsv", "poisonmicroblock.tsv", "mainnet-reorg-scenario1.tsv"]
    {
        let Some(path) = shared_file(&format!("fixtures/{fixture}")) else { return };
        microblocks(db, Network::Mainnet, read_tsv(&path), fixture, 0).await;
    }
}

#[tokio::test]
async fn microblocks_sqlite() {
    microblocks_all(Db::Sqlite).await;
}

#[tokio::test]
async fn microblocks_postgres() {
    microblocks_all(Db::Postgres).await;
}
