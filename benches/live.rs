//! Live-update delivery latency with many concurrent subscribers: a devnet chain is ingested
//! block by block through the live sink into a running server (SQLite store, real TCP) while
//! `--subscribers` JSON-RPC WebSocket clients in a CHILD process (so neither process needs more
//! than ~10,100 file descriptors) follow `block`. Latency = client receipt time − the time the
//! block's event committed (ingest returned), both `SystemTime` on this machine. Prints
//! p50/p90/p99/max, how many notifications were delivered, and the CPU seconds per block of the
//! server process (ingest + notifier + fan-out + WebSocket writes) and of the client process,
//! which do not depend on the machine's load as the latency does.
//!
//! ```sh
//! cargo bench --bench live -- --subscribers 10000 --blocks 20 --interval-ms 1000 --txs-per-block 20
//! ```
//!
//! Target: p99 under 50 ms with 10,000 subscribers. Under `cargo test` (no `--bench`) it runs
//! a small smoke configuration (50 subscribers, 3 blocks) and checks every one was delivered.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
use futures_util::{SinkExt, StreamExt};
use stacks_devnet::{DevnetConfig, Generator};
use stacks_ledger::events::EventPath;
use stacks_ledger::ingest::{EventSink, IncomingEvent};
use stacks_ledger::ledger::Network;
use stacks_ledger::live::{Live, LiveSink};
use stacks_ledger::store::Store;
use stacks_live::{LiveConfig, Topic};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

mod support;

struct Opts {
    subscribers: usize,
    /// Transactions per block: each adds tx, address and balance notifications that the
    /// `block` subscribers do not follow (the hub must not wake them for those).
    txs_per_block: u32,
    blocks: u64,
    interval: Duration,
    /// Internal: run as the client process against this address.
    clients_of: Option<String>,
}

fn parse_opts(args: &[String]) -> anyhow::Result<Opts> {
    let mut o = Opts {
        subscribers: 10_000,
        txs_per_block: 20,
        blocks: 30,
        interval: Duration::from_millis(1000),
        clients_of: None,
    };
    let mut it = args.iter().filter(|a| *a != "--bench");
    while let Some(a) = it.next() {
        let mut val = || it.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--subscribers" => o.subscribers = val()?.parse()?,
            "--blocks" => o.blocks = val()?.parse()?,
            "--txs-per-block" => o.txs_per_block = val()?.parse()?,
            "--interval-ms" => o.interval = Duration::from_millis(val()?.parse()?),
            "--clients-of" => o.clients_of = Some(val()?.clone()),
            other => bail!("unknown option {other}"),
        }
    }
    Ok(o)
}

fn now_us() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

/// The client process: connects and subscribes everyone, prints `ready`, records
/// `(seq, receipt time)` per notification until stdin closes, then prints them as `seq t` lines.
async fn clients(addr: &str, n: usize) -> anyhow::Result<()> {
    let url = format!("ws://{addr}/extended/v1/ws");
    let receipts: Arc<Mutex<Vec<(u64, u64)>>> = Arc::default();
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::unbounded_channel::<anyhow::Result<()>>();
    let gate = Arc::new(tokio::sync::Semaphore::new(200));
    for _ in 0..n {
        let (url, receipts, ready_tx, gate) =
            (url.clone(), Arc::clone(&receipts), ready_tx.clone(), Arc::clone(&gate));
        tokio::spawn(async move {
            let permit = gate.acquire_owned().await;
            let connected = async {
                // tungstenite zeroes `read_buffer_size` bytes (128 KiB by default) for every read;
                // 10,000 clients doing that per notification would make this process, not the
                // server, the bottleneck on a 2-core machine. Frames here are a few KiB.
                let config = WebSocketConfig::default().read_buffer_size(8 * 1024);
                let (mut ws, _) =
                    tokio_tungstenite::connect_async_with_config(&url, Some(config), true).await?;
                let req = r#"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"event":"block"}}"#;
                ws.send(Message::text(req)).await?;
                loop {
                    match ws.next().await {
                        Some(Ok(Message::Text(t))) if t.contains("\"result\"") => break,
                        Some(Ok(_)) => continue,
                        _ => bail!("closed before the ack"),
                    }
                }
                anyhow::Ok(ws)
            }
            .await;
            drop(permit);
            let mut ws = match connected {
                Ok(ws) => {
                    let _ = ready_tx.send(Ok(()));
                    ws
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return;
                }
            };
            let mut mine = Vec::new();
            while let Some(Ok(msg)) = ws.next().await {
                if let Message::Text(t) = msg {
                    let at = now_us();
                    // Keys are serialised in order: `seq` is last.
                    if let Some(i) = t.rfind("\"seq\":") {
                        let digits: String = t[i + 6..].chars().take_while(char::is_ascii_digit).collect();
                        if let Ok(seq) = digits.parse() {
                            mine.push((seq, at));
                            let mut all = receipts.lock().unwrap();
                            all.extend(mine.drain(..));
                        }
                    }
                }
            }
        });
    }
    drop(ready_tx);
    let mut failed = 0;
    for _ in 0..n {
        match ready_rx.recv().await {
            Some(Ok(())) => {}
            Some(Err(e)) => {
                failed += 1;
                eprintln!("client: {e}");
            }
            None => break,
        }
    }
    println!("ready {failed}");
    // Until the server process closes our stdin.
    tokio::task::spawn_blocking(|| std::io::stdin().lines().count()).await?;
    let all = std::mem::take(&mut *receipts.lock().unwrap());
    let mut out = std::io::stdout().lock();
    for (seq, t) in all {
        writeln!(out, "{seq} {t}")?;
    }
    Ok(())
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// What the server measured.
struct Measured {
    blocks: usize,
    latencies_us: Vec<u64>,
    /// CPU seconds over the measured window: this process, the client process.
    server_cpu: f64,
    client_cpu: f64,
}

async fn server(o: &Opts) -> anyhow::Result<Measured> {
    let dir = tempfile::tempdir()?;
    let store = Arc::new(
        Store::open(
            &format!("sqlite://{}", dir.path().join("live.db").display()),
            Network::Testnet,
            stacks_ledger::compose::tx_render(),
        )
        .await?,
    );
    // No pings in the measurement window; the default queue.
    let config = LiveConfig {
        ping_interval: Duration::from_secs(300),
        ping_timeout: Duration::from_secs(300),
        ..LiveConfig::default()
    };
    let live = Live::start(Arc::clone(&store), config).await?;
    let api_config = support::env_config();
    let routes = stacks_ledger::api::routes_live(
        Arc::clone(&store),
        stacks_ledger::v2::V2Settings::ledger_only(),
        stacks_ledger::api::faucets(&store, &api_config)?,
        &api_config,
        &live,
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(warp::serve(routes).incoming(listener).run());
    let sink = LiveSink::new(Arc::clone(&store), live.feed());
    let cfg = DevnetConfig {
        seed: 7,
        blocks: o.blocks + 2,
        txs_per_block: o.txs_per_block,
        forks: false,
        microblocks: false,
        ..DevnetConfig::default()
    };
    let events: Vec<_> = Generator::new(cfg)?.collect::<Result<_, _>>()?;
    let ingest = |e: &stacks_devnet::DevnetEvent| IncomingEvent {
        id: Some(e.id),
        receive_timestamp: Some(e.receive_timestamp.clone()),
        path: e.path,
        payload: e.payload.clone(),
    };
    // Genesis and a first block before anyone subscribes.
    let warm = events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.path == EventPath::NewBlock)
        .nth(1)
        .map_or(0, |(i, _)| i + 1);
    for e in &events[..warm] {
        sink.ingest(ingest(e)).await?;
    }

    // Which block each sequence number announced.
    let rx = live.hub.connect();
    live.hub.subscribe(&rx, Topic::Block, None)?;
    let announced: Arc<Mutex<HashMap<u64, String>>> = Arc::default();
    let record = Arc::clone(&announced);
    tokio::spawn(async move {
        while let Ok(batch) = rx.recv().await {
            for n in batch {
                let hash = n.payload["hash"].as_str().unwrap_or_default().to_owned();
                record.lock().unwrap().insert(n.seq, hash);
            }
        }
    });

    let mut child = Command::new(std::env::current_exe()?)
        .args(["--clients-of", &addr.to_string(), "--subscribers", &o.subscribers.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut child_out = BufReader::new(child.stdout.take().context("child stdout")?);
    let ready = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        child_out.read_line(&mut line).map(|_| (line, child_out))
    })
    .await??;
    let (line, child_out) = ready;
    eprintln!("clients: {}", line.trim());
    anyhow::ensure!(line.trim() == "ready 0", "clients failed to subscribe: {line}");
    anyhow::ensure!(live.hub.receiver_count() > o.subscribers, "not every client is connected");

    let child_pid = child.id().to_string();
    let (server_cpu0, client_cpu0) = (support::cpu_seconds(), support::cpu_seconds_of(&child_pid));
    let mut committed: HashMap<String, u64> = HashMap::new();
    for e in &events[warm..] {
        let block_hash = (e.path == EventPath::NewBlock)
            .then(|| serde_json::from_str::<serde_json::Value>(&e.payload).ok())
            .flatten()
            .and_then(|v| v["block_hash"].as_str().map(str::to_owned));
        sink.ingest(ingest(e)).await?;
        if let Some(h) = block_hash {
            committed.insert(h, now_us());
            tokio::time::sleep(o.interval).await;
        }
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    // Idle since the last block was delivered, apart from the trailing sleeps.
    let server_cpu = support::cpu_seconds() - server_cpu0;
    let client_cpu = support::cpu_seconds_of(&child_pid) - client_cpu0;
    drop(child.stdin.take());
    let lines =
        tokio::task::spawn_blocking(move || child_out.lines().collect::<Result<Vec<_>, _>>()).await??;
    child.wait()?;
    let announced = announced.lock().unwrap().clone();
    let mut latencies = Vec::with_capacity(lines.len());
    for l in lines {
        let Some((seq, t)) = l.split_once(' ') else { continue };
        let (seq, t): (u64, u64) = (seq.parse()?, t.parse()?);
        let hash = announced.get(&seq).context("a receipt of an unknown notification")?;
        // The warm-up blocks' notifications can still be on their way when the clients
        // subscribe: they were committed before the measured window, so they are not counted.
        let Some(c) = committed.get(hash) else { continue };
        latencies.push(t.saturating_sub(*c));
    }
    latencies.sort_unstable();
    Ok(Measured { blocks: committed.len(), latencies_us: latencies, server_cpu, client_cpu })
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let bench = args.iter().any(|a| a == "--bench");
    let mut o = parse_opts(&args).or_else(|e| if bench { Err(e) } else { parse_opts(&[]) })?;
    if !bench && o.clients_of.is_none() {
        // `cargo test --all-targets`: a smoke run.
        (o.subscribers, o.blocks, o.interval) = (50, 3, Duration::from_millis(200));
    }
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    if let Some(addr) = &o.clients_of {
        return rt.block_on(clients(addr, o.subscribers));
    }
    let load_before = support::load_average();
    let m = rt.block_on(server(&o))?;
    let (blocks, lat) = (m.blocks, m.latencies_us);
    let expected = blocks * o.subscribers;
    println!(
        "live: {} subscribers, {} txs/block, {blocks} blocks, {} of {expected} notifications delivered",
        o.subscribers,
        o.txs_per_block,
        lat.len()
    );
    println!(
        "cpu per block: server {:.1} ms (ingest + notify + fan-out + writes), clients {:.1} ms; load average {load_before} before, {} after",
        m.server_cpu * 1000.0 / blocks.max(1) as f64,
        m.client_cpu * 1000.0 / blocks.max(1) as f64,
        support::load_average()
    );
    anyhow::ensure!(!lat.is_empty(), "nothing delivered");
    let ms = |us: u64| us as f64 / 1000.0;
    println!(
        "block commit -> client receipt: p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        ms(percentile(&lat, 0.5)),
        ms(percentile(&lat, 0.9)),
        ms(percentile(&lat, 0.99)),
        ms(*lat.last().unwrap_or(&0))
    );
    anyhow::ensure!(lat.len() == expected, "{} of {expected} notifications delivered", lat.len());
    Ok(())
}
