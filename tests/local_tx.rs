//! One write path for the transactions we put into the mempool ourselves, end
//! to end over HTTP with a fake Stacks node, on SQLite and PostgreSQL: a `/v2/transactions`
//! broadcast, a Rosetta `/construction/submit` and an STX faucet transfer each reach a
//! WebSocket subscriber (`mempool`, `tx_update`) at once, before any node event; they leave the
//! raw event log as the node sent it (an export is unchanged); the node's own
//! `/new_mempool_tx` for the same transactions afterwards changes no mempool row and announces
//! nothing again; a transaction already in the mempool is not recorded twice.

mod common;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use common::ws::WsClient;
use common::{read_tsv, serve, shared_file, Db, TestStore};
use serde_json::{json, Value};
use stacks_ledger::events::EventPath;
use stacks_ledger::faucet::{FaucetConfig, Faucets};
use stacks_ledger::ingest::{EventSink, IncomingEvent, RawEventLog};
use stacks_ledger::ledger::Network;
use stacks_ledger::live::{Live, LiveSink};
use stacks_ledger::store::{LocalSource, LocalTxOutcome, Store};
use stacks_ledger::v2::{V2Policy, V2Settings};
use stacks_live::LiveConfig;
use stacks_node_proxy::{ProxyConfig, Url};
use warp::Filter;

/// Long enough for a debug build on a loaded machine; never a speed bound.
const WAIT: Duration = Duration::from_secs(20);
/// How long a subscriber hears nothing more before we call it quiet.
const QUIET: Duration = Duration::from_millis(800);
/// A funded-looking faucet key (the fake node accepts everything).
const FAUCET_KEY: &str = "0000000000000000000000000000000000000000000000000000000000000a0a";

/// A node that accepts every broadcast, answering its txid, on testnet.
async fn fake_node() -> SocketAddr {
    let info = warp::path!("v2" / "info")
        .map(|| warp::reply::json(&json!({"network_id": 0x8000_0000u32, "stacks_tip_height": 0})));
    let pox = warp::path!("v2" / "pox").map(|| warp::reply::json(&json!({"min_amount_ustx": 1000})));
    let fees = warp::path!("v2" / "fees" / "transfer").map(|| warp::reply::json(&json!(1)));
    let txs = warp::post()
        .and(warp::path!("v2" / "transactions"))
        .and(warp::body::bytes())
        .map(|body: bytes::Bytes| warp::reply::json(&hex::encode(stacks_codec::hash::sha512_256(&body))));
    serve(info.or(pox).or(fees).or(txs)).await
}

/// Two distinct testnet transactions the node once had in its mempool.
fn fixture_txs() -> Option<Vec<Vec<u8>>> {
    let tsv = shared_file("fixtures/epoch-3-transition.tsv")?;
    let mut out: Vec<Vec<u8>> = Vec::new();
    for ev in read_tsv(&tsv).into_iter().filter(|e| e.path == EventPath::NewMempoolTx.as_str()) {
        let txs: Vec<String> = serde_json::from_str(&ev.payload).unwrap();
        for tx in txs {
            let raw = stacks_codec::decode_hex(&tx).unwrap();
            if !out.contains(&raw) {
                out.push(raw);
            }
        }
        if out.len() >= 2 {
            return Some(out);
        }
    }
    None
}

fn txid(raw: &[u8]) -> String {
    format!("0x{}", hex::encode(stacks_codec::hash::sha512_256(raw)))
}

struct Server {
    addr: SocketAddr,
    sink: LiveSink<Store>,
    http: reqwest::Client,
    _live: Live,
}

async fn start(store: &Arc<Store>, node: SocketAddr) -> Server {
    let config = LiveConfig {
        ping_interval: Duration::from_secs(30),
        ping_timeout: Duration::from_secs(30),
        message_timeout: Duration::from_secs(20),
        queue: 4096,
        replay_window: 4096,
        ..LiveConfig::default()
    };
    let live = Live::start(Arc::clone(store), config).await.unwrap();
    let node_url = format!("http://{node}");
    let proxy = ProxyConfig::new(Url::parse(&node_url).unwrap());
    let v2 = V2Settings { node: Some(Arc::new(proxy)), policy: V2Policy::Proxy, transfer_fee: 1 };
    let vars = HashMap::from([("FAUCET_PRIVATE_KEY", format!("{FAUCET_KEY}01"))]);
    let faucet = FaucetConfig::resolve(|n| vars.get(n).cloned(), Some(node_url)).unwrap();
    let faucets = Arc::new(
        Faucets::new(Arc::clone(store) as _, Arc::clone(store) as _, store.network(), faucet).unwrap(),
    );
    let routes =
        stacks_ledger::api::routes_live(Arc::clone(store), v2, faucets, &common::env_config(), &live);
    let addr = serve(routes).await;
    let sink = LiveSink::new(Arc::clone(store), live.feed());
    Server { addr, sink, http: reqwest::Client::new(), _live: live }
}

impl Server {
    async fn post(&self, path: &str, body: reqwest::Body, content_type: Option<&str>) -> Value {
        let mut req = self.http.post(format!("http://{}{path}", self.addr)).body(body);
        if let Some(content_type) = content_type {
            req = req.header("content-type", content_type);
        }
        let res = req.send().await.unwrap();
        let status = res.status();
        let body: Value = res.json().await.unwrap_or(Value::Null);
        assert_eq!(status, 200, "{path}: {body}");
        body
    }

    async fn tx(&self, tx_id: &str) -> Value {
        let res = self.http.get(format!("http://{}/extended/v1/tx/{tx_id}", self.addr)).send().await.unwrap();
        assert_eq!(res.status(), 200, "{tx_id}");
        res.json().await.unwrap()
    }
}

async fn raw_log(store: &Store) -> Vec<(i64, String, String)> {
    store
        .raw_events_after(None, 10_000)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.id, e.path, e.payload))
        .collect()
}

async fn one_write_path(db: Db) {
    let Some(fixture) = fixture_txs() else { return };
    let Some(ts) = TestStore::new(db, "local_tx", Network::Testnet).await else { return };
    let store = &ts.store;
    let server = start(store, fake_node().await).await;
    let (broadcast_raw, submit_raw) = (fixture[0].clone(), fixture[1].clone());
    let (broadcast_id, submit_id) = (txid(&broadcast_raw), txid(&submit_raw));

    let mut mempool = WsClient::connect(server.addr).await;
    mempool.subscribe(json!({"event": "mempool"})).await;
    let mut updates = WsClient::connect(server.addr).await;
    updates.subscribe(json!({"event": "tx_update", "tx_id": broadcast_id})).await;
    updates.subscribe(json!({"event": "tx_update", "tx_id": submit_id})).await;
    let log_before = raw_log(store).await;

    // A `/v2/transactions` broadcast the node accepts.
    server.post("/v2/transactions", broadcast_raw.clone().into(), Some("application/octet-stream")).await;
    mempool.wait_for("mempool", &broadcast_id, WAIT).await;
    updates.wait_for("tx_update", &broadcast_id, WAIT).await;

    // A Rosetta submit.
    let submit = json!({
        "network_identifier": {"blockchain": "stacks", "network": "testnet"},
        "signed_transaction": format!("0x{}", hex::encode(&submit_raw)),
    });
    let answer = server
        .post("/rosetta/v1/construction/submit", submit.to_string().into(), Some("application/json"))
        .await;
    assert_eq!(answer["transaction_identifier"]["hash"], submit_id, "{answer}");
    mempool.wait_for("mempool", &submit_id, WAIT).await;
    updates.wait_for("tx_update", &submit_id, WAIT).await;

    // An STX faucet transfer.
    let recipient = "ST2ZRX0K27GW0SP3GJCEMHD95TQGJMKB7G9Y0X1MH";
    let sent = server
        .post(&format!("/extended/v1/faucets/stx?address={recipient}"), reqwest::Body::from(""), None)
        .await;
    let faucet_id = sent["txId"].as_str().expect("a txId").to_owned();
    let faucet_raw = hex::decode(sent["txRaw"].as_str().unwrap().trim_start_matches("0x")).unwrap();
    assert_eq!(txid(&faucet_raw), faucet_id);
    mempool.wait_for("mempool", &faucet_id, WAIT).await;

    // The raw event log is what the node sent (nothing yet): an export is unchanged.
    assert_eq!(raw_log(store).await, log_before, "{db:?}: local submissions wrote raw events");
    let ids = [broadcast_id.clone(), submit_id.clone(), faucet_id.clone()];
    let mut pending = store.mempool_tx_ids().await.unwrap();
    pending.sort();
    let mut expected = ids.to_vec();
    expected.sort();
    assert_eq!(pending, expected, "{db:?}");
    let sources: Vec<(String, String)> =
        store.local_txs_after(None, 10).await.unwrap().into_iter().map(|t| (t.tx_id, t.source)).collect();
    assert_eq!(
        sources,
        vec![
            (broadcast_id.clone(), "v2_broadcast".to_owned()),
            (submit_id.clone(), "rosetta_submit".to_owned()),
            (faucet_id.clone(), "faucet".to_owned()),
        ],
        "{db:?}"
    );
    let mut rows = Vec::new();
    for id in &ids {
        let tx = server.tx(id).await;
        assert_eq!(tx["tx_status"], "pending", "{tx}");
        rows.push(tx);
    }

    // Submitted again (the same bytes): nothing is written, nothing announced.
    server.post("/v2/transactions", broadcast_raw.clone().into(), Some("application/octet-stream")).await;
    assert_eq!(
        store.record_local_tx(&submit_raw, LocalSource::RosettaSubmit).await.unwrap(),
        LocalTxOutcome::Known { tx_id: submit_id.clone() }
    );
    assert_eq!(store.local_txs_after(None, 10).await.unwrap().len(), 3, "{db:?}");

    // The node's own `/new_mempool_tx` for all three: in the raw log, and nothing else changes.
    let raw_txs: Vec<String> =
        [&broadcast_raw, &submit_raw, &faucet_raw].iter().map(|r| format!("0x{}", hex::encode(r))).collect();
    let payload = serde_json::to_string(&raw_txs).unwrap();
    let event = IncomingEvent { id: None, receive_timestamp: None, path: EventPath::NewMempoolTx, payload };
    server.sink.ingest(event).await.unwrap();
    let log_after = raw_log(store).await;
    assert_eq!(log_after.len(), log_before.len() + 1, "{db:?}: only the node's event is logged");
    assert_eq!(log_after.last().unwrap().1, "/new_mempool_tx");
    for (id, before) in ids.iter().zip(&rows) {
        assert_eq!(&server.tx(id).await, before, "{db:?}: the node's event changed {id}");
    }

    // Each was announced once in all: at the submission, not again for the node's event.
    mempool.drain(QUIET).await;
    updates.drain(QUIET).await;
    for id in &ids {
        assert_eq!(mempool.count("mempool", id), 1, "{db:?} {id}: {:?}", mempool.notes);
    }
    for id in [&broadcast_id, &submit_id] {
        assert_eq!(updates.count("tx_update", id), 1, "{db:?} {id}: {:?}", updates.notes);
    }
    // Every mempool notice is one of ours.
    assert_eq!(mempool.notes.len(), 3, "{db:?}: {:?}", mempool.notes);
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_local_txs_take_one_write_path() {
    one_write_path(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_local_txs_take_one_write_path() {
    one_write_path(Db::Postgres).await;
}

/// A node transaction first, then our submission of it: recorded once (the node's), announced
/// once, and the submission writes nothing.
async fn node_first(db: Db) {
    let Some(fixture) = fixture_txs() else { return };
    let Some(ts) = TestStore::new(db, "local_tx_node_first", Network::Testnet).await else { return };
    let store = &ts.store;
    let server = start(store, fake_node().await).await;
    let raw = fixture[0].clone();
    let id = txid(&raw);
    let mut mempool = WsClient::connect(server.addr).await;
    mempool.subscribe(json!({"event": "mempool"})).await;
    let payload = serde_json::to_string(&[format!("0x{}", hex::encode(&raw))]).unwrap();
    let event = IncomingEvent { id: None, receive_timestamp: None, path: EventPath::NewMempoolTx, payload };
    server.sink.ingest(event).await.unwrap();
    mempool.wait_for("mempool", &id, WAIT).await;
    let before = server.tx(&id).await;
    server.post("/v2/transactions", raw.into(), Some("application/octet-stream")).await;
    mempool.drain(QUIET).await;
    assert_eq!(mempool.count("mempool", &id), 1, "{db:?}: {:?}", mempool.notes);
    assert_eq!(server.tx(&id).await, before, "{db:?}");
    assert!(store.local_txs_after(None, 10).await.unwrap().is_empty(), "{db:?}");
    assert_eq!(raw_log(store).await.len(), 1, "{db:?}");
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_node_first_then_local() {
    node_first(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_node_first_then_local() {
    node_first(Db::Postgres).await;
}
