//! Operability end to end, over real TCP: the one node setting reaching the `/v2` proxy, the
//! `auto` policy, Rosetta construction and the faucet; `/health`, `/ready` and the `status` of
//! `/extended` against a fake node that lags or catches up (both engines) and against a
//! PostgreSQL cluster that is stopped; `/metrics` in the Prometheus text format, moving as
//! events are fed to the observer and requests are answered.

mod common;

use ledger_read::TipReader;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{devnet_config, devnet_events, Db, TestStore};
use serde_json::{json, Value};
use stacks_codec::sign::PrivateKey;
use stacks_codec::tx::Transaction;
use stacks_ledger::api::Sampled;
use stacks_ledger::config::{Config, ConfigArgs};
use stacks_ledger::ledger::Network;
use stacks_ledger::live::{Live, LiveSink};
use stacks_ledger::store::Store;
use warp::http::StatusCode;
use warp::Filter;

/// A Stacks node that records what it is asked and answers the calls our users make.
struct FakeNode {
    url: String,
    seen: Arc<Mutex<Vec<String>>>,
    height: Arc<AtomicU64>,
    down: Arc<AtomicBool>,
}

impl FakeNode {
    async fn start(height: u64) -> FakeNode {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let height = Arc::new(AtomicU64::new(height));
        let down = Arc::new(AtomicBool::new(false));
        let (s, h, d) = (Arc::clone(&seen), Arc::clone(&height), Arc::clone(&down));
        let routes = warp::method().and(warp::path::full()).and(warp::body::bytes()).map(
            move |method: warp::http::Method, path: warp::path::FullPath, body: bytes::Bytes| {
                let path = path.as_str().to_owned();
                s.lock().unwrap().push(format!("{method} {path}"));
                if d.load(Ordering::SeqCst) {
                    return warp::reply::with_status(
                        warp::reply::json(&json!("down")),
                        StatusCode::BAD_GATEWAY,
                    );
                }
                let ok = |v: Value| warp::reply::with_status(warp::reply::json(&v), StatusCode::OK);
                match path.as_str() {
                    "/v2/info" => ok(json!({
                        "network_id": 0x8000_0000u32,
                        "stacks_tip_height": h.load(Ordering::SeqCst),
                        "stacks_tip": "ab".repeat(32),
                    })),
                    "/v2/fees/transfer" => ok(json!(2)),
                    "/v2/pox" => ok(json!({"min_amount_ustx": 1_000_000})),
                    "/v2/transactions" => {
                        let tx = Transaction::deserialize(&body).expect("a transaction");
                        ok(json!(hex::encode(tx.txid())))
                    }
                    p if p.starts_with("/v2/accounts/") => {
                        ok(json!({"balance": "0x0", "locked": "0x0", "unlock_height": 0, "nonce": 0}))
                    }
                    _ => warp::reply::with_status(
                        warp::reply::json(&json!("no such route")),
                        StatusCode::NOT_FOUND,
                    ),
                }
            },
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(warp::serve(routes).incoming(listener).run());
        FakeNode { url, seen, height, down }
    }

    /// What the node was asked since the last call.
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

/// The configuration as `serve` builds it, from flags and an environment.
fn config(args: ConfigArgs, vars: &[(&str, &str)]) -> Config {
    let env: BTreeMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Config::resolve(&args, |name| env.get(name).cloned()).unwrap()
}

/// The public API as `serve` runs it (`api::app`), on real TCP.
async fn serve_app(store: &Arc<Store>, config: &Config) -> (String, Live, Arc<Sampled>) {
    let live = Live::start(Arc::clone(store), config.live.clone()).await.unwrap();
    let app = stacks_ledger::api::app(Arc::clone(store), config, &live).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let sampled = app.sampled();
    tokio::spawn(warp::serve(app.routes).incoming(listener).run());
    (base, live, sampled)
}

async fn get(http: &reqwest::Client, url: &str) -> (u16, Value) {
    let r = http.get(url).send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// `serve --node-rpc URL` and nothing else: the `/v2` proxy, the `auto` policy, Rosetta
/// construction and the faucet all ask that node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_node_setting_reaches_all_four_users() {
    let Some(ts) = TestStore::new(Db::Sqlite, "operability_node", Network::Testnet).await else { return };
    let node = FakeNode::start(1000).await;
    let key = format!("{}01", "07".repeat(32));
    let args = ConfigArgs { node_rpc: Some(node.url.clone()), ..ConfigArgs::default() };
    let config =
        config(args, &[("FAUCET_PRIVATE_KEY", &key), ("TESTNET_FAUCETS_RATE_LIMIT_ENABLED", "false")]);
    let (base, _live, _) = serve_app(&ts.store, &config).await;
    let http = reqwest::Client::new();
    let recipient = "ST2ZRX0K27GW0SP3GJCEMHD95TQGJMKB7G9Y0X1MH";

    // 1. The /v2 proxy: a route only a node answers.
    let (status, _) = get(&http, &format!("{base}/v2/pox")).await;
    assert_eq!(status, 200);
    assert!(node.take().contains(&"GET /v2/pox".to_owned()));

    // 2. `auto`: the ledger (empty) is behind the node's tip, so the node answers the account.
    let r = http.get(format!("{base}/v2/accounts/{recipient}?proof=0")).send().await.unwrap();
    assert_eq!(r.headers()["x-stacks-ledger-source"], "node");
    let seen = node.take();
    assert!(seen.contains(&"GET /v2/info".to_owned()), "auto asks the node's tip: {seen:?}");
    assert!(seen.contains(&format!("GET /v2/accounts/{recipient}")), "{seen:?}");

    // 3. Rosetta construction: metadata asks the node for the nonce and the fee rate.
    let net = json!({"blockchain": "stacks", "network": "testnet"});
    let pk = PrivateKey::from_slice(&[7u8; 32]).unwrap();
    let pk = json!({"hex_bytes": hex::encode(pk.public_key().as_bytes()), "curve_type": "secp256k1"});
    let post = |path: &str, body: Value| {
        let (http, url) = (http.clone(), format!("{base}/rosetta/v1/construction/{path}"));
        async move {
            let r = http.post(url).json(&body).send().await.unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    let (_, derived) = post("derive", json!({"network_identifier": net, "public_key": pk})).await;
    let sender = derived["account_identifier"]["address"].as_str().unwrap().to_owned();
    let cur = json!({"symbol": "STX", "decimals": 6});
    let ops = json!([
        {"operation_identifier": {"index": 0}, "type": "token_transfer", "account": {"address": sender}, "amount": {"value": "-500", "currency": cur}},
        {"operation_identifier": {"index": 1}, "type": "token_transfer", "account": {"address": recipient}, "amount": {"value": "500", "currency": cur}},
    ]);
    let (_, pre) = post("preprocess", json!({"network_identifier": net, "operations": ops})).await;
    node.take();
    let (status, meta) =
        post("metadata", json!({"network_identifier": net, "options": pre["options"], "public_keys": [pk]}))
            .await;
    assert_eq!(status, 200, "{meta}");
    let seen = node.take();
    assert!(seen.iter().any(|s| s.starts_with(&format!("GET /v2/accounts/{sender}"))), "{seen:?}");
    assert!(seen.contains(&"GET /v2/fees/transfer".to_owned()), "{seen:?}");

    // 4. The faucet: signs for the node's chain id and broadcasts to it.
    let r = http.post(format!("{base}/extended/v1/faucets/stx?address={recipient}")).send().await.unwrap();
    let (status, body) = (r.status().as_u16(), r.json::<Value>().await.unwrap());
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["success"], true, "{body}");
    let seen = node.take();
    assert!(seen.contains(&"GET /v2/info".to_owned()), "{seen:?}");
    assert!(seen.contains(&"POST /v2/transactions".to_owned()), "{seen:?}");
    ts.finish().await;
}

async fn ready_follows_the_node(db: Db) {
    let Some(ts) = TestStore::new(db, "operability_ready", Network::Testnet).await else { return };
    let (events, _) = devnet_events(devnet_config(5, 8, 2));
    common::ingest_all(&ts.store, events, &[], "devnet").await;
    let tip = ts.store.tip().await.unwrap().map(|t| t.block).unwrap().block_height as u64;
    let node = FakeNode::start(tip + 10).await;
    let args =
        ConfigArgs { node_rpc: Some(node.url.clone()), ready_max_lag: Some(2), ..ConfigArgs::default() };
    let (base, _live, _) = serve_app(&ts.store, &config(args, &[])).await;
    let http = reqwest::Client::new();

    assert_eq!(get(&http, &format!("{base}/health")).await, (200, json!({"status": "ok"})));
    let (status, body) = get(&http, &format!("{base}/ready")).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["reason"], "lagging", "{body}");
    assert_eq!(
        (body["lag"].as_u64(), body["node_tip_height"].as_u64()),
        (Some(10), Some(tip + 10)),
        "{body}"
    );
    let (status, body) = get(&http, &format!("{base}/extended")).await;
    assert_eq!(status, 200);
    assert_eq!(body["status"], "syncing", "{body}");
    assert_eq!(body["sync"], json!({"node_tip_height": tip + 10, "lag": 10}));
    assert_eq!(body["chain_tip"]["block_height"], tip, "the incumbent's fields stay: {body}");
    // /extended/v1/status is the incumbent's redirect to the same answer.
    let r = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let r = r.get(format!("{base}/extended/v1/status")).send().await.unwrap();
    assert_eq!((r.status().as_u16(), r.headers()["location"].to_str().unwrap()), (301, "/extended"));

    // Within the distance: ready (the node's tip is asked at most once a second).
    node.height.store(tip + 2, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(get(&http, &format!("{base}/ready")).await, (200, json!({"status": "ready"})));
    let (_, body) = get(&http, &format!("{base}/extended")).await;
    assert_eq!(body["status"], "ready", "{body}");
    assert!(body.get("sync").is_none(), "{body}");

    // A node that cannot say where its tip is: not ready; the status stays `ready`.
    node.down.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (status, body) = get(&http, &format!("{base}/ready")).await;
    assert_eq!((status, body["reason"].as_str()), (503, Some("node")), "{body}");
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_ready_follows_the_node() {
    ready_follows_the_node(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_ready_follows_the_node() {
    ready_follows_the_node(Db::Postgres).await;
}

/// A PostgreSQL cluster of the test's own, on a free port, that the test can stop.
struct Cluster {
    dir: std::path::PathBuf,
    bin: std::path::PathBuf,
    port: u16,
    as_postgres: bool,
}

impl Cluster {
    /// `None` when PostgreSQL is not installed (outside CI; in CI it must be there).
    fn start() -> Option<Cluster> {
        let bin = std::fs::read_dir("/usr/lib/postgresql").ok().and_then(|d| {
            d.filter_map(|e| e.ok()).map(|e| e.path().join("bin")).filter(|p| p.join("pg_ctl").exists()).max()
        });
        let Some(bin) = bin else {
            assert!(std::env::var("CI").as_deref() != Ok("true"), "PostgreSQL is not installed");
            eprintln!("skipped: PostgreSQL is not installed");
            return None;
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = tempfile::Builder::new().prefix("stacks-ledger-ready-pg").tempdir().unwrap().keep();
        // PostgreSQL refuses to run as root.
        let as_postgres =
            std::process::Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"));
        let cluster = Cluster { dir, bin, port, as_postgres };
        if as_postgres {
            assert!(std::process::Command::new("chown")
                .args(["-R", "postgres"])
                .arg(&cluster.dir)
                .status()
                .unwrap()
                .success());
        }
        let data = cluster.dir.join("data");
        cluster.run("initdb", &["-D", data.to_str().unwrap(), "-A", "trust", "-U", "postgres"]);
        let opts =
            format!("-c listen_addresses=127.0.0.1 -p {port} -k {} -c fsync=off", cluster.dir.display());
        let log = cluster.dir.join("log");
        cluster.run(
            "pg_ctl",
            &["-D", data.to_str().unwrap(), "-l", log.to_str().unwrap(), "-w", "-o", &opts, "start"],
        );
        Some(cluster)
    }

    fn run(&self, tool: &str, args: &[&str]) {
        let out = self.command(tool, args).output().unwrap();
        assert!(out.status.success(), "{tool} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    fn command(&self, tool: &str, args: &[&str]) -> std::process::Command {
        let tool = self.bin.join(tool);
        let mut cmd = if self.as_postgres {
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&tool);
            c
        } else {
            std::process::Command::new(&tool)
        };
        cmd.args(args);
        cmd
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn stop(&self) {
        self.run("pg_ctl", &["-D", self.dir.join("data").to_str().unwrap(), "-m", "immediate", "-w", "stop"]);
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let _ = self.command("pg_ctl", &["-D", data.to_str().unwrap(), "-m", "immediate", "stop"]).output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// PostgreSQL stopped under a running server: `/ready` is a 503 naming the database, within
/// the probe's bound; `/health` still answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_is_503_when_postgres_stops() {
    if common::pg_admin_url().is_none() {
        return;
    }
    let Some(cluster) = Cluster::start() else { return };
    let store = Arc::new(
        Store::open(&cluster.url(), Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap(),
    );
    let (events, _) = devnet_events(devnet_config(6, 3, 1));
    common::ingest_all(&store, events, &[], "devnet").await;
    let (base, _live, _) = serve_app(&store, &config(ConfigArgs::default(), &[])).await;
    let http = reqwest::Client::new();
    assert_eq!(get(&http, &format!("{base}/ready")).await, (200, json!({"status": "ready"})));

    cluster.stop();
    let started = std::time::Instant::now();
    let (status, body) = get(&http, &format!("{base}/ready")).await;
    assert_eq!((status, body["reason"].as_str()), (503, Some("database")), "{body}");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert_eq!(get(&http, &format!("{base}/health")).await.0, 200);
}

/// One sample line of the Prometheus text format: `name{k="v",...} value`.
fn parse_prometheus(text: &str) -> Vec<(String, BTreeMap<String, String>, f64)> {
    let mut samples = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(comment) = line.strip_prefix('#') {
            let words: Vec<&str> = comment.split_whitespace().collect();
            if words.first() == Some(&"TYPE") {
                assert!(
                    matches!(
                        words.get(2),
                        Some(&("counter" | "gauge" | "histogram" | "summary" | "untyped"))
                    ),
                    "{line}"
                );
            }
            continue;
        }
        let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("no value: {line}"));
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("bad value: {line}"));
        let (name, labels) = match series.split_once('{') {
            Some((name, rest)) => {
                let body = rest.strip_suffix('}').unwrap_or_else(|| panic!("unclosed labels: {line}"));
                let mut labels = BTreeMap::new();
                // Label values here never contain `",`.
                for pair in body.split("\",").filter(|p| !p.is_empty()) {
                    let (k, v) = pair.split_once("=\"").unwrap_or_else(|| panic!("bad label: {line}"));
                    labels.insert(k.to_owned(), v.trim_end_matches('"').to_owned());
                }
                (name, labels)
            }
            None => (series, BTreeMap::new()),
        };
        assert!(
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':'),
            "bad metric name: {line}"
        );
        samples.push((name.to_owned(), labels, value));
    }
    samples
}

fn sum(samples: &[(String, BTreeMap<String, String>, f64)], name: &str, labels: &[(&str, &str)]) -> f64 {
    samples
        .iter()
        .filter(|(n, l, _)| {
            n == name && labels.iter().all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|(_, _, v)| v)
        .sum()
}

/// Events fed to the observer and requests answered move the ingestion and HTTP metrics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_move_with_events_and_requests() {
    let Some(ts) = TestStore::new(Db::Sqlite, "operability_metrics", Network::Testnet).await else { return };
    let handle = stacks_ledger::metrics::install();
    let config = config(ConfigArgs::default(), &[]);
    let (base, live, sampled) = serve_app(&ts.store, &config).await;
    let metrics = stacks_ledger::api::scrape::routes(handle, sampled);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let metrics_url = format!("http://{}/metrics", listener.local_addr().unwrap());
    tokio::spawn(warp::serve(metrics).incoming(listener).run());
    let observer = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let events_addr: SocketAddr = observer.local_addr().unwrap();
    let sink = Arc::new(LiveSink::new(Arc::clone(&ts.store), live.feed()));
    tokio::spawn(stacks_ledger::observer::run(observer, sink, 1 << 30, std::future::pending()));
    let http = reqwest::Client::new();
    let scrape = || {
        let (http, url) = (http.clone(), metrics_url.clone());
        async move {
            let r = http.get(url).send().await.unwrap();
            assert_eq!(r.status(), 200);
            assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
            parse_prometheus(&r.text().await.unwrap())
        }
    };
    let before = scrape().await;

    let (events, _) = devnet_events(devnet_config(9, 6, 2));
    let blocks = events.iter().filter(|e| e.path == "/new_block").count() as f64;
    for e in &events {
        let r = http
            .post(format!("http://{events_addr}{}", e.path))
            .body(e.payload.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    for _ in 0..3 {
        assert_eq!(get(&http, &format!("{base}/extended/v1/block?limit=2")).await.0, 200);
    }
    assert_eq!(get(&http, &format!("{base}/extended/v1/tx/0x{}", "00".repeat(32))).await.0, 404);
    assert_eq!(get(&http, &format!("{base}/wp-admin/setup-config.php")).await.0, 404);
    let after = scrape().await;

    let moved = |name: &str, labels: &[(&str, &str)]| sum(&after, name, labels) - sum(&before, name, labels);
    assert_eq!(
        moved("stacks_ledger_events_total", &[("path", "/new_block"), ("outcome", "applied")]),
        blocks
    );
    assert!(moved("stacks_ledger_event_apply_seconds_count", &[("path", "/new_block")]) >= blocks);
    assert!(after
        .iter()
        .any(|(n, l, _)| n == "stacks_ledger_event_apply_seconds_bucket" && l.contains_key("le")));
    let tip = ts.store.tip().await.unwrap().map(|t| t.block).unwrap().block_height as f64;
    assert_eq!(sum(&after, "stacks_ledger_tip_height", &[]), tip);
    let blocks_route = [("surface", "extended"), ("route", "/extended/v1/block"), ("status", "200")];
    assert_eq!(moved("stacks_ledger_http_requests_total", &blocks_route), 3.0);
    assert_eq!(moved("stacks_ledger_http_request_duration_seconds_count", &blocks_route), 3.0);
    let not_found = [("route", "/extended/v1/tx/{}"), ("status", "404")];
    assert_eq!(moved("stacks_ledger_http_requests_total", &not_found), 1.0);
    let outside = [("surface", "other"), ("route", "(other)"), ("status", "404")];
    assert_eq!(moved("stacks_ledger_http_requests_total", &outside), 1.0);
    // The cache answered two of the three block lists.
    assert!(moved("stacks_ledger_response_cache_hits_total", &[]) >= 2.0);
    assert!(sum(&after, "stacks_ledger_response_cache_bytes", &[]) > 0.0);
    assert!(sum(&after, "stacks_ledger_db_pool_connections", &[]) >= 1.0);
    assert!(after.iter().any(|(n, l, _)| n == "stacks_ledger_live_subscribers"
        && l.get("transport").map(String::as_str) == Some("ws")
        && l.get("topic").map(String::as_str) == Some("block")));
    ts.finish().await;
}
