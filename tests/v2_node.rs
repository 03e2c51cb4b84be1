//! End to end with an in-test fake Stacks node on loopback: the public API mounts the proxy;
//! a broadcast the node accepts is in our mempool when the client gets its answer; the policy
//! picks ledger or node (and says which); a node that is down or slow gives 502/504, never a
//! hang; a multi-megabyte body passes through intact; call-read input is validated before the
//! node sees it; Rosetta's `sync_status` measures ingestion against the node.

mod common;

use ledger_read::TipReader;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{read_tsv, replay, serve, shared_file, Db, TestStore};
use serde_json::{json, Value};
use stacks_ledger::events::EventPath;
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;
use stacks_ledger::v2::{V2Policy, V2Settings, SOURCE_HEADER};
use stacks_node_proxy::{ProxyConfig, Url};
use tokio::net::TcpListener;
use warp::http::StatusCode;
use warp::Filter;

/// The fake node's state: its tip height, whether it accepts broadcasts, and what it was asked.
#[derive(Default)]
struct Node {
    tip_height: AtomicU64,
    /// The `stacks_tip` the node states (left out when `None`).
    tip_hash: std::sync::Mutex<Option<String>>,
    call_reads: AtomicUsize,
    rejects: std::sync::atomic::AtomicBool,
    requests: AtomicUsize,
    broadcasts: AtomicUsize,
}

const BIG: usize = 8 * 1024 * 1024;

async fn fake_node(node: Arc<Node>) -> SocketAddr {
    let count = {
        let node = Arc::clone(&node);
        warp::any().map(move || {
            node.requests.fetch_add(1, Ordering::SeqCst);
        })
    };
    let n = Arc::clone(&node);
    let info = warp::path!("v2" / "info").map(move || {
        let mut info =
            json!({ "stacks_tip_height": n.tip_height.load(Ordering::SeqCst), "server_version": "fake" });
        if let Some(hash) = n.tip_hash.lock().unwrap().clone() {
            info["stacks_tip"] = json!(hash);
        }
        warp::reply::json(&info)
    });
    let n = Arc::clone(&node);
    let call_read = warp::post()
        .and(warp::path!("v2" / "contracts" / "call-read" / String / String / String))
        .and(warp::body::json())
        .map(move |_: String, _: String, _: String, body: Value| {
            n.call_reads.fetch_add(1, Ordering::SeqCst);
            warp::reply::json(&json!({ "okay": true, "result": "0x03", "echo": body }))
        });
    let accounts = warp::path!("v2" / "accounts" / String).map(|_principal: String| {
        warp::reply::with_header(
            warp::reply::json(&json!({
                "balance": "0x000000000000000000000000000004d2", "locked": "0x00000000000000000000000000000000",
                "unlock_height": 0, "nonce": 99, "balance_proof": "", "nonce_proof": ""
            })),
            "x-node-header",
            "kept",
        )
    });
    let n = Arc::clone(&node);
    let transactions = warp::post().and(warp::path!("v2" / "transactions")).and(warp::body::bytes()).map(
        move |body: bytes::Bytes| {
            n.broadcasts.fetch_add(1, Ordering::SeqCst);
            if n.rejects.load(Ordering::SeqCst) {
                let reply =
                    warp::reply::json(&json!({ "error": "transaction rejected", "reason": "BadNonce" }));
                return warp::reply::with_status(reply, StatusCode::BAD_REQUEST);
            }
            let txid = hex::encode(stacks_codec::hash::sha512_256(&body));
            warp::reply::with_status(warp::reply::json(&txid), StatusCode::OK)
        },
    );
    let big = warp::path!("v2" / "big").map(|| {
        let chunks = (0..BIG / 65536)
            .map(|i| Ok::<_, std::io::Error>(bytes::Bytes::from(vec![(i % 251) as u8; 65536])));
        warp::reply::stream(futures_util::stream::iter(chunks))
    });
    let slow = warp::path!("v2" / "slow").then(|| async {
        tokio::time::sleep(Duration::from_secs(5)).await;
        "late"
    });
    let routes = count.untuple_one().and(
        info.map(warp::Reply::into_response)
            .or(accounts.map(warp::Reply::into_response))
            .unify()
            .or(transactions.map(warp::Reply::into_response))
            .unify()
            .or(big.map(warp::Reply::into_response))
            .unify()
            .or(slow.map(warp::Reply::into_response))
            .unify()
            .or(call_read.map(warp::Reply::into_response))
            .unify(),
    );
    serve(routes).await
}

fn settings(node: SocketAddr, policy: V2Policy, timeout: Duration) -> V2Settings {
    let mut config = ProxyConfig::new(Url::parse(&format!("http://{node}")).unwrap());
    config.request_timeout = timeout;
    config.connect_timeout = timeout;
    V2Settings { node: Some(Arc::new(config)), policy, transfer_fee: 1 }
}

async fn api(store: &Arc<Store>, settings: V2Settings) -> String {
    let addr = serve(stacks_ledger::api::routes_with(
        Arc::clone(store),
        settings,
        common::faucets(store),
        &common::env_config(),
    ))
    .await;
    format!("http://{addr}")
}

/// A testnet transaction the node once had in its mempool.
fn mempool_tx() -> Option<Vec<u8>> {
    let tsv = shared_file("fixtures/epoch-3-transition.tsv")?;
    let ev = read_tsv(&tsv).into_iter().find(|e| e.path == EventPath::NewMempoolTx.as_str())?;
    let txs: Vec<String> = serde_json::from_str(&ev.payload).unwrap();
    Some(stacks_codec::decode_hex(&txs[0]).unwrap())
}

/// The node accepts a broadcast: the client gets the node's answer and the transaction is in
/// our mempool already (`Store::record_local_tx`, no raw event). A rejected one is not.
async fn broadcast_enters_the_mempool(db: Db) {
    let Some(raw) = mempool_tx() else { return };
    let Some(ts) = TestStore::new(db, "v2_broadcast", Network::Testnet).await else { return };
    let node = Arc::new(Node::default());
    let base =
        api(&ts.store, settings(fake_node(Arc::clone(&node)).await, V2Policy::Proxy, Duration::from_secs(5)))
            .await;
    let client = reqwest::Client::new();
    let txid = format!("0x{}", hex::encode(stacks_codec::hash::sha512_256(&raw)));

    node.rejects.store(true, Ordering::SeqCst);
    let res = client
        .post(format!("{base}/v2/transactions"))
        .header("content-type", "application/octet-stream")
        .body(raw.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    assert_eq!(res.headers()[SOURCE_HEADER], "node");
    assert!(ts.store.mempool_tx_ids().await.unwrap().is_empty(), "a rejected tx stays out");

    node.rejects.store(false, Ordering::SeqCst);
    let res = client
        .post(format!("{base}/v2/transactions"))
        .header("content-type", "application/octet-stream")
        .body(raw.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let answered: String = res.json().await.unwrap();
    assert_eq!(format!("0x{answered}"), txid);
    // In the mempool the moment the client has its answer.
    assert_eq!(ts.store.mempool_tx_ids().await.unwrap(), vec![txid.clone()]);
    let (status, replaced, pruned) = ts.store.mempool_status(&txid).await.unwrap().unwrap();
    assert_eq!((status.as_str(), replaced, pruned), ("pending", None, false));
    assert_eq!(node.broadcasts.load(Ordering::SeqCst), 2);

    // The JSON form too; the same tx again changes nothing.
    let res = client
        .post(format!("{base}/v2/transactions"))
        .json(&json!({ "tx": hex::encode(&raw) }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(ts.store.mempool_tx_ids().await.unwrap(), vec![txid.clone()]);

    // Visible through /extended: the mempool transaction, and its nonce in the sender's nonces.
    let (status, _, tx) = get_json(&client, &format!("{base}/extended/v1/tx/{txid}")).await;
    assert_eq!(status, 200, "{tx}");
    assert_eq!(
        (tx["tx_id"].as_str(), tx["tx_status"].as_str()),
        (Some(txid.as_str()), Some("pending")),
        "{tx}"
    );
    let sender = tx["sender_address"].as_str().unwrap();
    let nonce = tx["nonce"].as_i64().unwrap();
    let (status, _, nonces) = get_json(&client, &format!("{base}/extended/v1/address/{sender}/nonces")).await;
    assert_eq!(status, 200, "{nonces}");
    assert_eq!(nonces["last_mempool_tx_nonce"].as_i64(), Some(nonce), "{nonces}");
    assert_eq!(nonces["possible_next_nonce"].as_i64(), Some(nonce + 1), "{nonces}");
    let (_, _, mempool) =
        get_json(&client, &format!("{base}/extended/v1/tx/mempool?sender_address={sender}")).await;
    assert_eq!(mempool["results"][0]["tx_id"].as_str(), Some(txid.as_str()), "{mempool}");
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_broadcast_enters_the_mempool() {
    broadcast_enters_the_mempool(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_broadcast_enters_the_mempool() {
    broadcast_enters_the_mempool(Db::Postgres).await;
}

async fn get_json(client: &reqwest::Client, url: &str) -> (u16, Option<String>, Value) {
    let res = client.get(url).send().await.unwrap();
    let status = res.status().as_u16();
    let source = res.headers().get(SOURCE_HEADER).map(|v| v.to_str().unwrap().to_owned());
    (status, source, res.json().await.unwrap_or(Value::Null))
}

/// The policies: `proxy` always asks the node, `ledger` never does, `auto` answers from the
/// ledger when it is caught up with the node (or the node cannot tell) and asks the node when
/// the node is ahead or a proof is wanted.
async fn policies(db: Db) {
    let Some(tsv) = shared_file("fixtures/mocknet.tsv") else { return };
    let Some(ts) = TestStore::new(db, "v2_policy", Network::Testnet).await else { return };
    replay(&ts.store, &tsv, &[]).await;
    let ours = ts.store.tip().await.unwrap().map(|t| t.block).unwrap().block_height as u64;
    let node = Arc::new(Node::default());
    let node_addr = fake_node(Arc::clone(&node)).await;
    let client = reqwest::Client::new();
    let address = "ST000000000000000000002AMW42H";
    // The boot address has mined transactions, but its boot deploys never bump its nonce: the
    // ledger answers 0 as the node does (tests/v2_api.rs holds that on every fixture).
    assert!(ts.store.next_nonce(address).await.unwrap() > 0);
    let ledger_nonce = 0;

    let proxy = api(&ts.store, settings(node_addr, V2Policy::Proxy, Duration::from_secs(5))).await;
    let (status, source, body) = get_json(&client, &format!("{proxy}/v2/accounts/{address}?proof=0")).await;
    assert_eq!((status, source.as_deref(), body["nonce"].as_i64()), (200, Some("node"), Some(99)));

    let ledger = api(&ts.store, settings(node_addr, V2Policy::Ledger, Duration::from_secs(5))).await;
    let before = node.requests.load(Ordering::SeqCst);
    let (status, source, body) = get_json(&client, &format!("{ledger}/v2/accounts/{address}?proof=0")).await;
    assert_eq!(
        (status, source.as_deref(), body["nonce"].as_i64()),
        (200, Some("ledger"), Some(ledger_nonce))
    );
    let (status, _, _) = get_json(&client, &format!("{ledger}/v2/accounts/{address}?proof=1")).await;
    assert_eq!(status, 503);
    let (status, _, _) = get_json(&client, &format!("{ledger}/v2/pox")).await;
    assert_eq!(status, 503);
    assert_eq!(node.requests.load(Ordering::SeqCst), before, "the ledger policy never asks the node");

    let auto = api(&ts.store, settings(node_addr, V2Policy::Auto, Duration::from_secs(5))).await;
    node.tip_height.store(ours, Ordering::SeqCst);
    let our_hash = ts.store.tip().await.unwrap().map(|t| t.block).unwrap().block_hash;
    *node.tip_hash.lock().unwrap() = Some(our_hash.trim_start_matches("0x").to_owned());
    let (status, source, info) = get_json(&client, &format!("{auto}/v2/info")).await;
    assert_eq!((status, source.as_deref()), (200, Some("ledger")), "{info}");
    assert_eq!(info["stacks_tip_height"].as_u64(), Some(ours));
    let (_, source, _) = get_json(&client, &format!("{auto}/v2/accounts/{address}?proof=0")).await;
    assert_eq!(source.as_deref(), Some("ledger"));
    // Proofs wanted (the default): only the node has them.
    let (_, source, body) = get_json(&client, &format!("{auto}/v2/accounts/{address}")).await;
    assert_eq!(source.as_deref(), Some("node"));
    assert!(body.get("balance_proof").is_some());
    // Rosetta's sync_status, against the same node: caught up.
    let status_request = json!({ "network_identifier": { "blockchain": "stacks", "network": "testnet" } });
    let sync = |base: String| {
        let client = client.clone();
        let request = status_request.clone();
        async move {
            let res =
                client.post(format!("{base}/rosetta/v1/network/status")).json(&request).send().await.unwrap();
            assert_eq!(res.status(), 200);
            res.json::<Value>().await.unwrap()["sync_status"].clone()
        }
    };
    let synced = sync(auto.clone()).await;
    assert_eq!(
        synced,
        json!({ "current_index": ours, "target_index": ours, "stage": "synced", "synced": true })
    );

    // Same height, another block: the node is on another fork, so it answers.
    *node.tip_hash.lock().unwrap() = Some("ab".repeat(32));
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (_, source, _) = get_json(&client, &format!("{auto}/v2/accounts/{address}?proof=0")).await;
    assert_eq!(source.as_deref(), Some("node"), "another fork at our height");

    // The node pulls ahead: it answers (after the cached tip height expires).
    node.tip_height.store(ours + 5, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let behind = sync(auto.clone()).await;
    assert_eq!(
        behind,
        json!({ "current_index": ours, "target_index": ours + 5, "stage": "syncing", "synced": false })
    );
    let (_, source, info) = get_json(&client, &format!("{auto}/v2/info")).await;
    assert_eq!(source.as_deref(), Some("node"));
    assert_eq!(info["stacks_tip_height"].as_u64(), Some(ours + 5));
    // The fee is the node's when there is one.
    let res = client.get(format!("{auto}/v2/fees/transfer")).send().await.unwrap();
    assert_eq!(res.headers()[SOURCE_HEADER], "node");

    // A node that is down: auto answers from the ledger; what needs the node is a 502.
    let down = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap();
    let auto_down = api(&ts.store, settings(down, V2Policy::Auto, Duration::from_secs(2))).await;
    let (status, source, _) = get_json(&client, &format!("{auto_down}/v2/info")).await;
    assert_eq!((status, source.as_deref()), (200, Some("ledger")));
    let (status, source, body) = get_json(&client, &format!("{auto_down}/v2/map_entry/a/b/c")).await;
    assert_eq!((status, source), (502, None), "{body}");
    assert!(body["message"].as_str().unwrap().contains("unreachable"), "{body}");
    // Rosetta without an answering node: what ingestion has seen, no target.
    let alone = sync(auto_down.clone()).await;
    assert_eq!(alone, json!({ "current_index": ours, "stage": "ingested" }));
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_policies() {
    policies(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_policies() {
    policies(Db::Postgres).await;
}

/// `call-read` with a node: invalid input is refused with the invalid-input error (500 naming the
/// parameter) and never reaches the node; valid input is relayed with its body intact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_read_is_validated_before_the_node() {
    let Some(ts) = TestStore::new(Db::Sqlite, "v2_call_read", Network::Testnet).await else { return };
    let node = Arc::new(Node::default());
    let node_addr = fake_node(Arc::clone(&node)).await;
    let client = reqwest::Client::new();
    let address = "ST000000000000000000002AMW42H";
    let valid =
        json!({ "sender": format!("{address}.pox"), "arguments": ["0x0100000000000000000000000000000001"] });
    for policy in [V2Policy::Proxy, V2Policy::Auto] {
        let base = api(&ts.store, settings(node_addr, policy, Duration::from_secs(5))).await;
        let url = format!("{base}/v2/contracts/call-read/{address}/pox/get-pox-info");
        let before = node.call_reads.load(Ordering::SeqCst);
        for (body, param) in [
            (json!({ "sender": "nope", "arguments": [] }), "sender"),
            (json!({ "sender": address, "arguments": ["0x07"] }), "arguments"),
            (json!({ "sender": address, "arguments": ["zz"] }), "arguments"),
            (json!({ "sender": address }), "arguments"),
        ] {
            let res = client.post(&url).json(&body).send().await.unwrap();
            assert_eq!(res.status(), 500, "{policy:?} {body}");
            assert_eq!(res.headers()[SOURCE_HEADER], "ledger");
            let err: Value = res.json().await.unwrap();
            assert!(err["error"].as_str().unwrap().contains(param), "{body}: {err}");
            assert!(err["errorTag"].is_string() && err["stack"].is_string(), "{err}");
        }
        let res = client
            .post(format!("{base}/v2/contracts/call-read/{address}/pox/1bad"))
            .json(&valid)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 500);
        assert_eq!(
            node.call_reads.load(Ordering::SeqCst),
            before,
            "{policy:?}: invalid input never reaches the node"
        );

        let res = client.post(&url).json(&valid).send().await.unwrap();
        assert_eq!(res.status(), 200);
        assert_eq!(res.headers()[SOURCE_HEADER], "node");
        let answer: Value = res.json().await.unwrap();
        assert_eq!(answer["echo"], valid, "the body reaches the node intact");
        assert_eq!(node.call_reads.load(Ordering::SeqCst), before + 1);
    }
    ts.finish().await;
}

/// Through the public route table: status, headers and a multi-megabyte body pass through
/// intact; a slow node is a 504 after the timeout; a node that is down is a 502 at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pass_through_timeouts_and_node_down() {
    let Some(ts) = TestStore::new(Db::Sqlite, "v2_proxy", Network::Testnet).await else { return };
    let node = Arc::new(Node::default());
    let node_addr = fake_node(Arc::clone(&node)).await;
    let base = api(&ts.store, settings(node_addr, V2Policy::Proxy, Duration::from_millis(500))).await;
    let client = reqwest::Client::new();

    let res = client.get(format!("{base}/v2/accounts/ST000000000000000000002AMW42H")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["x-node-header"], "kept");
    assert_eq!(res.headers()[SOURCE_HEADER], "node");

    let res = client.get(format!("{base}/v2/big")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let body = res.bytes().await.unwrap();
    assert_eq!(body.len(), BIG);
    assert!(body.chunks(65536).enumerate().all(|(i, c)| c.iter().all(|b| *b == (i % 251) as u8)));

    let started = Instant::now();
    let res = client.get(format!("{base}/v2/slow")).send().await.unwrap();
    assert_eq!(res.status(), 504);
    assert!(started.elapsed() < Duration::from_secs(4), "answered after {:?}", started.elapsed());

    let down = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap();
    let base = api(&ts.store, settings(down, V2Policy::Proxy, Duration::from_millis(500))).await;
    let res = client.get(format!("{base}/v2/info")).send().await.unwrap();
    assert_eq!(res.status(), 502);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"], "Bad Gateway");
    ts.finish().await;
}
