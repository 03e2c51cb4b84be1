//! Scale-out: one `writeonly` process ingests, two `readonly` processes serve the API, as
//! separate `stacks-ledger serve` processes. On PostgreSQL the writer uses the primary and the
//! readers a streaming replica (`STACKS_LEDGER_TEST_PG_REPLICA_URL`, which `.ci/run` starts with
//! `pg_basebackup -R`); on SQLite all three share one file. Both readers must serve every
//! block; a WebSocket subscriber on each gets every block once and in order; a broadcast
//! through a reader lands in the writer's mempool (with no raw event) and a mempool subscriber
//! on each reader is told of it once; a reader killed and restarted while the writer goes on
//! loses nothing.

mod common;

use ledger_read::TipReader;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::server::{free_port, Server, WAIT};
use common::{pg_admin_url, read_tsv, shared_file, Db, TestDb};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use stacks_ledger::events::{EventPath, RawEvent};
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;
use tokio_tungstenite::tungstenite::Message;

/// The writer: `writeonly` on `db`, its observer on `port`.
fn writer(db: &str, port: u16, dir: &Path) -> Server {
    let args = vec![
        "--mode".into(),
        "writeonly".into(),
        "--db".into(),
        db.into(),
        "--events-bind".into(),
        format!("127.0.0.1:{port}"),
    ];
    Server::start(&args, port, &dir.join("writer.log"))
}

/// A reader: `readonly` on `db` (with its `primary`), its API on `port`, broadcasting to `node`.
fn reader(name: &str, db: &str, primary: Option<&str>, port: u16, node: SocketAddr, dir: &Path) -> Server {
    let mut args = vec![
        "--mode".into(),
        "readonly".into(),
        "--db".into(),
        db.into(),
        "--api-bind".into(),
        format!("127.0.0.1:{port}"),
        "--node-rpc".into(),
        format!("http://{node}"),
    ];
    if let Some(primary) = primary {
        args.extend(["--db-primary".into(), primary.into()]);
    }
    Server::start(&args, port, &dir.join(format!("{name}.log")))
}

/// A node that accepts every broadcast (answering its txid) and says its tip is height 0.
async fn fake_node(broadcasts: Arc<AtomicUsize>) -> SocketAddr {
    use warp::Filter;
    let info = warp::path!("v2" / "info").map(|| warp::reply::json(&json!({ "stacks_tip_height": 0 })));
    let transactions = warp::post().and(warp::path!("v2" / "transactions")).and(warp::body::bytes()).map(
        move |body: bytes::Bytes| {
            broadcasts.fetch_add(1, Ordering::SeqCst);
            warp::reply::json(&hex::encode(stacks_codec::hash::sha512_256(&body)))
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(warp::serve(info.or(transactions)).incoming(listener).run());
    addr
}

/// A WebSocket client subscribed to `block` and `mempool`, collecting notifications in a task.
struct BlockSubscriber {
    blocks: Arc<std::sync::Mutex<Vec<Value>>>,
    mempool: Arc<std::sync::Mutex<Vec<Value>>>,
    task: tokio::task::JoinHandle<()>,
}

impl BlockSubscriber {
    async fn connect(port: u16) -> BlockSubscriber {
        let (mut ws, _) =
            tokio_tungstenite::connect_async(format!("ws://127.0.0.1:{port}/extended/v1/ws")).await.unwrap();
        for (id, event) in [(1, "block"), (2, "mempool")] {
            let req = json!({"jsonrpc": "2.0", "id": id, "method": "subscribe", "params": {"event": event}});
            ws.send(Message::text(req.to_string())).await.unwrap();
            loop {
                let Some(Ok(Message::Text(t))) = ws.next().await else { panic!("no subscribe reply") };
                let v: Value = serde_json::from_str(t.as_str()).unwrap();
                if v["id"] == id {
                    assert!(v.get("result").is_some(), "{v}");
                    break;
                }
            }
        }
        let blocks = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mempool = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (kept, kept_mempool) = (Arc::clone(&blocks), Arc::clone(&mempool));
        let task = tokio::spawn(async move {
            while let Some(Ok(msg)) = ws.next().await {
                if let Message::Text(t) = msg {
                    let v: Value = serde_json::from_str(t.as_str()).unwrap();
                    if v["method"] == "block" {
                        kept.lock().unwrap().push(v["params"].clone());
                    } else if v["method"] == "mempool" {
                        kept_mempool.lock().unwrap().push(v["params"].clone());
                    }
                }
            }
        });
        BlockSubscriber { blocks, mempool, task }
    }

    /// How many `mempool` notices of `tx_id` came.
    fn mempool_notices(&self, tx_id: &str) -> usize {
        self.mempool.lock().unwrap().iter().filter(|t| t["tx_id"] == tx_id).count()
    }

    fn heights_and_hashes(&self) -> Vec<(i64, String)> {
        let blocks = self.blocks.lock().unwrap();
        blocks
            .iter()
            .map(|b| (b["height"].as_i64().unwrap(), b["hash"].as_str().unwrap().to_owned()))
            .collect()
    }
}

async fn get(client: &reqwest::Client, url: &str) -> (u16, Value) {
    let res = client.get(url).send().await.unwrap_or_else(|e| panic!("{url}: {e}"));
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// Waits until the reader on `port` serves a chain tip at `height`.
async fn wait_tip(client: &reqwest::Client, server: &Server, height: i64) {
    let started = Instant::now();
    loop {
        let (_, status) = get(client, &format!("http://127.0.0.1:{}/extended", server.port)).await;
        if status["chain_tip"]["block_height"].as_i64() == Some(height) {
            return;
        }
        assert!(started.elapsed() < WAIT, "tip {status} never reached {height}:\n{}", server.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Every canonical block by height, as `/extended/v1/block/by_height/{h}` answers.
async fn blocks(client: &reqwest::Client, port: u16, tip: i64) -> BTreeMap<i64, Value> {
    let mut out = BTreeMap::new();
    for h in 1..=tip {
        let (status, block) =
            get(client, &format!("http://127.0.0.1:{port}/extended/v1/block/by_height/{h}")).await;
        assert_eq!(status, 200, "block {h}: {block}");
        out.insert(h, block);
    }
    out
}

async fn post_events(client: &reqwest::Client, port: u16, events: &[RawEvent]) {
    for event in events {
        let res = client
            .post(format!("http://127.0.0.1:{port}{}", event.path))
            .header("content-type", "application/json")
            .body(event.payload.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200, "event {} refused: {}", event.id, res.text().await.unwrap());
    }
}

/// The canonical tip height after `events`, as a default-mode store at `file` computes it.
async fn tip_after(events: &[RawEvent], file: &Path) -> i64 {
    let store = Store::open(
        &format!("sqlite://{}", file.display()),
        Network::Testnet,
        stacks_ledger::compose::tx_render(),
    )
    .await
    .unwrap();
    for event in events {
        let path = EventPath::from_path(&event.path).unwrap();
        let incoming = stacks_ledger::ingest::IncomingEvent {
            id: None,
            receive_timestamp: None,
            path,
            payload: event.payload.clone(),
        };
        stacks_ledger::ingest::EventSink::ingest(&store, incoming).await.unwrap();
    }
    let tip = store.tip().await.unwrap().map(|t| t.block).expect("a tip").block_height;
    store.close().await;
    tip
}

/// A testnet transaction the mocknet chain does not have.
fn foreign_tx() -> Option<Vec<u8>> {
    let tsv = shared_file("fixtures/epoch-3-transition.tsv")?;
    let ev = read_tsv(&tsv).into_iter().find(|e| e.path == EventPath::NewMempoolTx.as_str())?;
    let txs: Vec<String> = serde_json::from_str(&ev.payload).unwrap();
    Some(stacks_codec::decode_hex(&txs[0]).unwrap())
}

/// Pauses or resumes (`what`) WAL replay on the replica at `admin`.
async fn replay(admin: &str, what: &str) {
    use sqlx::{Connection, Executor};
    let mut c = sqlx::PgConnection::connect(admin).await.unwrap();
    c.execute(format!("SELECT pg_wal_replay_{what}()").as_str()).await.unwrap();
    c.close().await.unwrap();
}

/// Waits until the replica at `replica_admin` has replayed the primary's WAL as of now.
async fn wait_replayed(primary: &str, replica_admin: &str) {
    use sqlx::Connection;
    let mut p = sqlx::PgConnection::connect(primary).await.unwrap();
    let target: String =
        sqlx::query_scalar("SELECT pg_current_wal_lsn()::text").fetch_one(&mut p).await.unwrap();
    p.close().await.unwrap();
    let mut r = sqlx::PgConnection::connect(replica_admin).await.unwrap();
    let started = Instant::now();
    loop {
        let behind: bool = sqlx::query_scalar("SELECT pg_last_wal_replay_lsn() < $1::pg_lsn")
            .bind(&target)
            .fetch_one(&mut r)
            .await
            .unwrap();
        if !behind {
            break;
        }
        assert!(started.elapsed() < WAIT, "the replica has not replayed {target} after {WAIT:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    r.close().await.unwrap();
}

/// The scenario over a writer on `writer_db` and readers on `reader_db` (with `primary`; the
/// replica's admin URL `replica_admin` pauses its replay).
async fn topology(writer_db: &str, reader_db: &str, primary: Option<&str>, replica_admin: Option<&str>) {
    let Some(fixture) = shared_file("fixtures/mocknet.tsv") else { return };
    let Some(raw_tx) = foreign_tx() else { return };
    let events = read_tsv(&fixture);
    let (first, second) = events.split_at(events.len() / 2);
    let dir = tempfile::tempdir().unwrap();
    let client = reqwest::Client::new();
    let half_tip = tip_after(first, &dir.path().join("half.db")).await;
    let full_tip = tip_after(&events, &dir.path().join("full.db")).await;
    assert!(half_tip > 1 && full_tip > half_tip, "{half_tip} {full_tip}");

    let broadcasts = Arc::new(AtomicUsize::new(0));
    let node = fake_node(Arc::clone(&broadcasts)).await;
    let (events_port, port1, port2) = (free_port(), free_port(), free_port());
    let mut w = writer(writer_db, events_port, dir.path());
    w.wait_listening().await;
    if let (Some(primary), Some(replica)) = (primary, replica_admin) {
        // The writer created the database and its schema on the primary; a reader opening the
        // replica before it has replayed them would find no database.
        wait_replayed(primary, replica).await;
    }
    let mut r1 = reader("reader1", reader_db, primary, port1, node, dir.path());
    let mut r2 = reader("reader2", reader_db, primary, port2, node, dir.path());
    r1.wait_listening().await;
    r2.wait_listening().await;
    let sub1 = BlockSubscriber::connect(port1).await;
    let sub2 = BlockSubscriber::connect(port2).await;

    // The first half; both readers serve every block.
    post_events(&client, events_port, first).await;
    wait_tip(&client, &r1, half_tip).await;
    wait_tip(&client, &r2, half_tip).await;
    let half1 = blocks(&client, port1, half_tip).await;
    assert_eq!(half1, blocks(&client, port2, half_tip).await, "the two readers differ");

    // A broadcast through reader 1 is in the writer's mempool when the client has its answer,
    // and reader 2 (another process on the replica) serves it.
    let txid = format!("0x{}", hex::encode(stacks_codec::hash::sha512_256(&raw_tx)));
    let res = client
        .post(format!("http://127.0.0.1:{port1}/v2/transactions"))
        .header("content-type", "application/octet-stream")
        .body(raw_tx)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    assert_eq!(broadcasts.load(Ordering::SeqCst), 1);
    let primary_store =
        Store::open(writer_db, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap();
    assert!(primary_store.mempool_tx_ids().await.unwrap().contains(&txid), "not in the writer's mempool");
    // Without a raw event: the writer's log is the node's (the first half) only.
    let logged =
        stacks_ledger::ingest::RawEventLog::raw_events_after(&primary_store, None, events.len() + 10)
            .await
            .unwrap();
    assert_eq!(logged.len(), first.len(), "the broadcast wrote a raw event");
    primary_store.close().await;
    // A mempool subscriber on each reader is told of it once: the reader that recorded it, and
    // the other one (NOTIFY on PostgreSQL; following `local_txs` on SQLite).
    let started = Instant::now();
    while (sub1.mempool_notices(&txid) == 0 || sub2.mempool_notices(&txid) == 0) && started.elapsed() < WAIT {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(sub1.mempool_notices(&txid), 1, "reader 1's mempool subscriber:\n{}", r1.log());
    assert_eq!(sub2.mempool_notices(&txid), 1, "reader 2's mempool subscriber:\n{}", r2.log());
    let started = Instant::now();
    loop {
        let (status, tx) = get(&client, &format!("http://127.0.0.1:{port2}/extended/v1/tx/{txid}")).await;
        if status == 200 {
            assert_eq!(tx["tx_status"], "pending", "{tx}");
            break;
        }
        assert!(started.elapsed() < WAIT, "reader 2 never served the broadcast: {status} {tx}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Reader 1 is killed; the writer goes on; reader 1 comes back and has everything. On
    // PostgreSQL the replica's replay is paused meanwhile: reader 2 says how far behind it is.
    drop(r1);
    sub1.task.abort();
    if let Some(replica) = replica_admin {
        replay(replica, "pause").await;
    }
    post_events(&client, events_port, second).await;
    if let Some(replica) = replica_admin {
        let base = format!("http://127.0.0.1:{port2}");
        let (status, ready) = get(&client, &format!("{base}/ready")).await;
        assert_eq!(status, 503, "{ready}");
        assert_eq!(ready["reason"], "replica_lagging", "{ready}");
        assert_eq!(ready["primary_tip_height"], full_tip, "{ready}");
        assert_eq!(ready["replica_tip_height"], half_tip, "{ready}");
        assert_eq!(ready["lag"], full_tip - half_tip, "{ready}");
        assert!(ready["replay_lag_bytes"].as_u64().unwrap() > 0, "{ready}");
        let (_, status) = get(&client, &format!("{base}/extended")).await;
        assert_eq!(status["status"], "syncing", "{status}");
        assert_eq!(status["replica"]["lag"], full_tip - half_tip, "{status}");
        assert_eq!(status["chain_tip"]["block_height"], half_tip, "{status}");
        replay(replica, "resume").await;
    }
    wait_tip(&client, &r2, full_tip).await;
    let (status, ready) = get(&client, &format!("http://127.0.0.1:{port2}/ready")).await;
    assert_eq!((status, &ready["status"]), (200, &json!("ready")), "{ready}");
    let mut r1 = reader("reader1", reader_db, primary, port1, node, dir.path());
    r1.wait_listening().await;
    wait_tip(&client, &r1, full_tip).await;
    let all = blocks(&client, port1, full_tip).await;
    assert_eq!(all, blocks(&client, port2, full_tip).await, "the restarted reader differs");
    assert_eq!(&all.range(..=half_tip).map(|(h, b)| (*h, b.clone())).collect::<BTreeMap<_, _>>(), &half1);

    // Each subscriber got every block it was connected for, once and in order, as served.
    let expected = |upto: i64| -> Vec<(i64, String)> {
        all.range(..=upto).map(|(h, b)| (*h, b["hash"].as_str().unwrap().to_owned())).collect()
    };
    let started = Instant::now();
    while sub2.heights_and_hashes().len() < full_tip as usize && started.elapsed() < WAIT {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(sub2.heights_and_hashes(), expected(full_tip), "reader 2's subscriber");
    assert_eq!(sub1.heights_and_hashes(), expected(half_tip), "reader 1's subscriber before the kill");
    sub2.task.abort();
    drop((r1, r2, w));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_readers_follow_the_writers_file() {
    let Some(db) = TestDb::new(Db::Sqlite, "scale_out").await else { return };
    topology(&db.url, &db.url, None, None).await;
    db.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_readers_on_a_streaming_replica() {
    if pg_admin_url().is_none() {
        return;
    }
    let replica_admin = match std::env::var("STACKS_LEDGER_TEST_PG_REPLICA_URL") {
        Ok(u) if !u.is_empty() => u,
        _ if common::in_ci() => panic!("STACKS_LEDGER_TEST_PG_REPLICA_URL must be set in CI"),
        _ => {
            println!("skipping: STACKS_LEDGER_TEST_PG_REPLICA_URL not set (a streaming replica of STACKS_LEDGER_TEST_PG_URL)");
            return;
        }
    };
    // A run that failed with replay paused must not leave it so.
    replay(&replica_admin, "resume").await;
    let Some(db) = TestDb::new(Db::Postgres, "scale_out").await else { return };
    let replica = common::with_database(&replica_admin, db.database_name().unwrap());
    topology(&db.url, &replica, Some(&db.url), Some(&replica_admin)).await;
    db.drop_db().await;
}
