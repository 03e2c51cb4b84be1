//! Socket.IO (`/socket.io/`) end to end with the real npm clients under Node: `socket.io-client`
//! v4 (WebSocket, long-polling, polling upgraded to WebSocket) and `@stacks/blockchain-api-client`
//! (`StacksApiSocketClient`, and the JSON-RPC `connectWebSocketClient` for the same blocks),
//! driven by `tests/node/socketio-smoke.mjs` against a running server fed a devnet with forks,
//! microblocks, mempool traffic and NFTs, on SQLite and PostgreSQL. Every client must receive
//! exactly the hub's notifications of its topics (plus reorg notices), in order, and nothing
//! else; resume replays exactly the missed ones. The npm packages are installed into the target
//! directory; without node/npm this skips outside CI and fails under `CI=true`.

mod common;

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use common::{devnet_config, devnet_events, incoming, Db, TestStore};
use serde_json::{json, Value};
use stacks_ledger::events::RawEvent;
use stacks_ledger::ingest::EventSink;
use stacks_ledger::ledger::Network;
use stacks_ledger::live::{change_of, Live, LiveSink};
use stacks_ledger::store::Store;
use stacks_live::socketio::packet::notification_event;
use stacks_live::{Change, LiveConfig, Notification, Topic};

const PACKAGES: [&str; 2] = ["socket.io-client@4.8.1", "@stacks/blockchain-api-client@9.0.2"];

/// The clients installed and the script linked in beside them (resolved there by Node).
fn client_dir() -> Option<PathBuf> {
    let script = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/node/socketio-smoke.mjs"));
    common::npm::script_with_packages("socketio-smoke", &PACKAGES, &script, "the Socket.IO client test")
}

/// The Node script: JSON lines out, commands in.
struct Script {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
}

impl Script {
    fn start(link: &PathBuf, base: &str, subjects: &Value) -> Script {
        let mut child = Command::new("node")
            .arg("--preserve-symlinks-main")
            .arg(link)
            .arg(base)
            .arg(subjects.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting node");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Script { child, stdin, lines }
    }

    /// The next JSON line (other output is the clients' logging).
    async fn next(&mut self) -> Value {
        let deadline = std::time::Instant::now() + Duration::from_secs(90);
        loop {
            match self.lines.try_recv() {
                Ok(l) => match serde_json::from_str::<Value>(&l) {
                    Ok(v) if v.is_object() => return v,
                    _ => println!("node: {l}"),
                },
                Err(mpsc::TryRecvError::Empty) => {
                    assert!(std::time::Instant::now() < deadline, "the node script went silent");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(mpsc::TryRecvError::Disconnected) => {
                    panic!("the node script exited: {:?}", self.child.wait())
                }
            }
        }
    }

    async fn command(&mut self, cmd: &str) -> Value {
        writeln!(self.stdin, "{cmd}").unwrap();
        self.next().await
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        std::thread::sleep(Duration::from_millis(200));
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Settles when the hub has issued nothing new for a while.
async fn settle(live: &Live) {
    let (mut last, mut still) = (u64::MAX, 0);
    while still < 4 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = live.hub.latest_seq();
        still = if now == last { still + 1 } else { 0 };
        last = now;
    }
}

/// What a client subscribed to `topics` must have received of `notes`: the incumbent's event
/// and arguments (plus our `{seq}`), reorg notices included.
fn expected(notes: &[Arc<Notification>], topics: &HashSet<Topic>) -> Vec<Value> {
    notes
        .iter()
        .filter(|n| n.topic == Topic::Reorg || topics.contains(&n.topic))
        .map(|n| {
            let (event, args) = notification_event(n);
            json!({"event": event, "args": args})
        })
        .collect()
}

fn events_named<'a>(got: &'a [Value], name: &str) -> Vec<&'a Value> {
    got.iter().filter(|e| e["event"] == name).collect()
}

async fn ingest(sink: &LiveSink<Store>, events: &[RawEvent]) {
    for ev in events {
        sink.ingest(incoming(ev)).await.unwrap_or_else(|e| panic!("event {}: {e}", ev.id));
    }
}

async fn npm_clients(db: Db) {
    let Some(link) = client_dir() else { return };
    let Some(ts) = TestStore::new(db, "live_sio", Network::Testnet).await else { return };
    let config = LiveConfig {
        ping_interval: Duration::from_secs(2),
        ping_timeout: Duration::from_secs(5),
        message_timeout: Duration::from_secs(10),
        queue: 65_536,
        replay_window: 100_000,
        ..LiveConfig::default()
    };
    let live = Live::start(Arc::clone(&ts.store), config).await.unwrap();
    let routes = stacks_ledger::api::routes_live(
        Arc::clone(&ts.store),
        stacks_ledger::v2::V2Settings::ledger_only(),
        common::faucets(&ts.store),
        &common::env_config(),
        &live,
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(warp::serve(routes).incoming(listener).run());
    let sink = LiveSink::new(Arc::clone(&ts.store), live.feed());
    // A connection from the start: with none, the hub skips rendering (`Hub::skip_if_idle`),
    // and the subjects below are read from its replay ring.
    let _present = live.hub.connect();

    let (events, generator) = devnet_events(devnet_config(3, 40, 5));
    assert!(generator.stats().forks > 0);
    let half = events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.path == "/new_block")
        .nth(19)
        .map(|(i, _)| i + 1)
        .unwrap();
    ingest(&sink, &events[..half]).await;
    settle(&live).await;

    // Subjects seen so far: the busiest address, an NFT asset and value.
    let first = live.hub.replay(0, live.hub.latest_seq()).unwrap();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut nft = None;
    for n in &first {
        match &n.topic {
            Topic::AddressTx(a) if !a.contains('.') => *counts.entry(a.as_str()).or_default() += 1,
            Topic::NftAsset(a, v) => nft = Some((a.clone(), v.clone())),
            _ => {}
        }
    }
    let address = counts.iter().max_by_key(|(_, n)| **n).map(|(a, _)| a.to_string()).expect("an address");
    let (asset, value) = nft.expect("an NFT event in the first half");
    let tx_id = events[half..]
        .iter()
        .find_map(|e| match change_of(&incoming(e)) {
            Some(Change::MempoolAdded { tx_ids }) => tx_ids.first().cloned(),
            _ => None,
        })
        .expect("a mempool tx in the second half");
    let subjects = json!({"address": address, "tx_id": tx_id, "asset": asset, "value": value});

    let mut script = Script::start(&link, &format!("http://{addr}"), &subjects);
    let ready = script.next().await;
    assert_eq!(ready["ready"], true, "{ready}");
    let acks = &ready["acks"];
    assert_eq!(acks["polling"], Value::Null, "{acks}");
    assert_eq!(acks["upgraded_subscribe"], Value::Null, "{acks}");
    assert_eq!(acks["upgraded_unsubscribe"], Value::Null, "{acks}");
    assert_eq!(acks["invalid_topic"], "Invalid topic: blocks-of-nothing", "{acks}");
    assert_eq!(acks["invalid_handshake"], "Invalid topic: nope", "{acks}");
    let from = live.hub.latest_seq();

    // In lockstep, so that the notifier sees (and announces) the forks of the second half.
    let refused = common::live::ingest_in_lockstep(&live, &sink, &events[half..]).await;
    assert_eq!(refused, Vec::<i64>::new(), "the devnet's events all apply");
    settle(&live).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let dump = script.command("dump").await;
    assert_eq!(
        dump["transports"],
        json!({"handshake_ws": "websocket", "polling": "polling", "upgraded": "websocket"})
    );
    let notes = live.hub.replay(from, live.hub.latest_seq()).unwrap();
    let clients = &dump["clients"];
    let got = |name: &str| clients[name].as_array().cloned().unwrap_or_default();

    let handshake: HashSet<Topic> = [Topic::Block, Topic::Microblock, Topic::Mempool].into();
    let want = expected(&notes, &handshake);
    let have = got("handshake_ws");
    assert_eq!(have.len(), want.len(), "handshake_ws: count");
    assert_eq!(have, want, "handshake_ws");
    for name in ["block", "microblock", "mempool", "reorg"] {
        assert!(!events_named(&have, name).is_empty(), "handshake_ws: no {name}");
    }

    let polling: HashSet<Topic> = [
        Topic::AddressTx(address.clone()),
        Topic::AddressBalance(address.clone()),
        Topic::Tx(tx_id.clone()),
        Topic::NftEvent,
        Topic::NftAsset(asset.clone(), value.clone()),
        Topic::NftCollection(asset.clone()),
    ]
    .into();
    let have = got("polling");
    assert_eq!(have, expected(&notes, &polling), "polling");
    for name in [
        format!("address-transaction:{address}"),
        format!("address-stx-balance:{address}"),
        format!("transaction:{tx_id}"),
        "nft-event".to_owned(),
        format!("nft-collection-event:{asset}"),
    ] {
        assert!(!events_named(&have, &name).is_empty(), "polling: no {name}");
    }
    // The incumbent's argument shapes.
    let a = events_named(&have, &format!("address-transaction:{address}"))[0];
    assert_eq!(a["args"][0], address.as_str());
    assert_eq!(a["args"][1]["address"], address.as_str());
    let b = events_named(&have, &format!("address-stx-balance:{address}"))[0];
    assert!(b["args"][1]["balance"].is_string() && b["args"][1].get("address").is_none(), "{b}");

    // Subscribed to block and mempool, then unsubscribed from mempool: blocks only.
    let have = got("upgraded");
    assert_eq!(have, expected(&notes, &[Topic::Block].into()), "upgraded");
    // JSON-RPC through the incumbent's client: the same block payloads.
    let rpc: Vec<Value> = got("jsonrpc_blocks").iter().map(|e| e["args"][0].clone()).collect();
    let sio: Vec<Value> =
        events_named(&got("handshake_ws"), "block").iter().map(|e| e["args"][0].clone()).collect();
    assert_eq!(rpc, sio, "JSON-RPC and Socket.IO blocks differ");

    // Resume from the middle: exactly the blocks and reorg notices after that sequence number.
    let blocks: Vec<u64> = notes.iter().filter(|n| n.topic == Topic::Block).map(|n| n.seq).collect();
    let since = blocks[blocks.len() / 2];
    let resumed = script.command(&format!("resume {since}")).await;
    let later: Vec<Arc<Notification>> = notes.iter().filter(|n| n.seq > since).cloned().collect();
    let want = expected(&later, &[Topic::Block].into());
    assert!(!want.is_empty());
    assert_eq!(resumed["resumed"].as_array().cloned().unwrap_or_default(), want, "resume from {since}");
    println!("socket.io: {} notifications checked over 3 transports, {} resumed", notes.len(), want.len());
    drop(script);
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn npm_clients_sqlite() {
    npm_clients(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn npm_clients_postgres() {
    npm_clients(Db::Postgres).await;
}
