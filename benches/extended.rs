//! The `/extended` read benchmark of issue 6: the public route table served over HTTP on
//! loopback from an existing store, and each route loaded for a fixed time by N keep-alive
//! connections — with `wrk -t2 -cN -dS --latency` when `wrk` is on the PATH (the incumbent's
//! figures in `../shared/bench/realnode-2/wrk.txt` were taken that way), else (or with
//! `--builtin`) with the equivalent generator below. Prints req/s and latency percentiles.
//!
//! ```sh
//! cargo bench --bench extended -- --db sqlite:///path/ledger.db              # wrk if installed
//! cargo bench --bench extended -- --db sqlite:///path/ledger.db --builtin --connections 32 --seconds 20
//! cargo bench --bench extended -- --db sqlite:///path/ledger.db --no-cache   # the response cache off
//! ```
//!
//! The URLs are picked from the store through the API itself: a mid-chain transaction (the
//! one at offset half the canonical count of `/extended/v1/tx`), the busiest principal of a
//! sample of 50 mid-chain transactions (the most called contract; `--busy` overrides) and the
//! hottest sender of that sample (for balances and nonces).
//!
//! Target (issue 6): ≥ 10× the incumbent's req/s on the same routes, p99 < 10 ms at 32
//! connections.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::Value;
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;

mod support;

struct Opts {
    db: String,
    network: Network,
    connections: usize,
    seconds: u64,
    builtin: bool,
    busy: Option<String>,
    offset: u64,
    only: Option<String>,
    no_cache: bool,
}

fn parse_opts() -> anyhow::Result<Opts> {
    let mut o = Opts {
        db: String::new(),
        network: Network::Testnet,
        connections: 32,
        seconds: 20,
        builtin: false,
        busy: None,
        offset: 100_000,
        only: None,
        no_cache: false,
    };
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    while let Some(a) = args.next() {
        let mut val = || args.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--db" => o.db = val()?,
            "--network" => o.network = val()?.parse().map_err(anyhow::Error::msg)?,
            "--connections" => o.connections = val()?.parse()?,
            "--seconds" => o.seconds = val()?.parse()?,
            "--builtin" => o.builtin = true,
            "--busy" => o.busy = Some(val()?),
            "--offset" => o.offset = val()?.parse()?,
            // Only the URLs containing this string.
            "--only" => o.only = Some(val()?),
            // The /extended response cache off (it is on by default, as in `serve`).
            "--no-cache" => o.no_cache = true,
            other => bail!("unknown option {other}"),
        }
    }
    if o.db.is_empty() {
        bail!("--db URL (sqlite://… or postgres://…) of an ingested store is required");
    }
    Ok(o)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

async fn get_json(client: &reqwest::Client, url: &str) -> anyhow::Result<Value> {
    let res = client.get(url).send().await?;
    let status = res.status();
    if !status.is_success() {
        bail!("GET {url}: HTTP {status}");
    }
    Ok(res.json().await?)
}

/// The most frequent value of `key` among the sample's transactions.
fn most_frequent<'a>(txs: &'a [Value], key: impl Fn(&'a Value) -> Option<&'a str>) -> Option<String> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for t in txs {
        if let Some(k) = key(t) {
            *counts.entry(k).or_default() += 1;
        }
    }
    counts.into_iter().max_by_key(|(k, n)| (*n, *k)).map(|(k, _)| k.to_string())
}

/// `N` keep-alive connections (one HTTP/1.1 client each) GET `url` in a loop for `seconds`.
async fn builtin_load(url: &str, connections: usize, seconds: u64) -> anyhow::Result<String> {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..connections {
        let client = reqwest::Client::builder().pool_max_idle_per_host(1).http1_only().build()?;
        let url = url.to_string();
        workers.push(tokio::spawn(async move {
            let (mut times, mut bytes, mut errors) = (Vec::new(), 0usize, 0usize);
            while Instant::now() < deadline {
                let t = Instant::now();
                let res = client.get(&url).send().await?;
                let ok = res.status().is_success();
                bytes += res.bytes().await?.len();
                times.push(t.elapsed());
                errors += usize::from(!ok);
            }
            anyhow::Ok((times, bytes, errors))
        }));
    }
    let (mut all, mut bytes, mut errors) = (Vec::new(), 0, 0);
    for w in workers {
        let (t, b, e) = w.await??;
        all.extend(t);
        bytes += b;
        errors += e;
    }
    let wall = started.elapsed().as_secs_f64();
    all.sort();
    Ok(format!(
        "{} requests in {wall:.1}s ({connections} connections), {:.1} MB read, {errors} non-2xx\n\
         Requests/sec: {:.2}\n latency p50 {:?} p75 {:?} p90 {:?} p99 {:?} max {:?}",
        all.len(),
        bytes as f64 / 1e6,
        all.len() as f64 / wall,
        percentile(&all, 0.50),
        percentile(&all, 0.75),
        percentile(&all, 0.90),
        percentile(&all, 0.99),
        all.last().copied().unwrap_or_default(),
    ))
}

/// The request count of a load report (`N requests in …`, wrk's and the builtin's).
fn requests_in(report: &str) -> u64 {
    let words: Vec<&str> = report.split_whitespace().collect();
    words.windows(2).find(|w| w[1] == "requests").and_then(|w| w[0].parse().ok()).unwrap_or(0)
}

fn wrk_available() -> bool {
    std::process::Command::new("wrk").arg("--version").output().is_ok()
}

async fn run(o: Opts) -> anyhow::Result<()> {
    let store = Arc::new(Store::open(&o.db, o.network).await?);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(warp::serve(stacks_ledger::api::routes(Arc::clone(&store))).incoming(listener).run());
    let base = format!("http://{addr}");
    let client = reqwest::Client::new();

    let total = get_json(&client, &format!("{base}/extended/v1/tx?limit=1")).await?["total"]
        .as_u64()
        .context("no total in /extended/v1/tx")?;
    let sample = get_json(&client, &format!("{base}/extended/v1/tx?limit=50&offset={}", total / 2)).await?;
    let sample = sample["results"].as_array().cloned().unwrap_or_default();
    let mid_tx = sample.first().and_then(|t| t["tx_id"].as_str()).context("empty store")?.to_string();
    let hot_sender = most_frequent(&sample, |t| t["sender_address"].as_str()).context("no sender")?;
    let busy = match o.busy.clone() {
        Some(b) => b,
        None => most_frequent(&sample, |t| t["contract_call"]["contract_id"].as_str())
            .unwrap_or(hot_sender.clone()),
    };
    let busy_total = get_json(&client, &format!("{base}/extended/v1/address/{busy}/transactions?limit=1"))
        .await?["total"]
        .as_u64()
        .unwrap_or(0);
    let cache = std::env::var(stacks_ledger::api::cache::CACHE_MB_ENV)
        .unwrap_or_else(|_| stacks_ledger::api::cache::DEFAULT_CACHE_MB.to_string());
    println!("response cache: {cache} MiB (0 = off; cached figures are for one repeated URL)");
    println!("store: {total} txs; mid-chain tx {mid_tx}; busy principal {busy} ({busy_total} txs); hot sender {hot_sender}");
    let urls = [
        "/extended/v1/tx?limit=50".to_string(),
        format!("/extended/v1/tx/{mid_tx}"),
        format!("/extended/v1/address/{busy}/transactions?limit=50"),
        format!("/extended/v1/address/{busy}/transactions?limit=50&offset={}", o.offset),
        format!("/extended/v1/address/{hot_sender}/balances"),
        format!("/extended/v1/address/{hot_sender}/nonces"),
        "/extended/v1/block?limit=20".to_string(),
        "/extended/v2/blocks?limit=20".to_string(),
        format!("/extended/v1/tokens/nft/holdings?principal={hot_sender}"),
    ];
    let use_wrk = !o.builtin && wrk_available();
    for path in urls.iter().filter(|u| o.only.as_ref().map_or(true, |s| u.contains(s.as_str()))) {
        let url = format!("{base}{path}");
        // One request first: a broken route fails the run instead of measuring error pages.
        get_json(&client, &url).await?;
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        println!(
            "== GET {path} (load average {})",
            load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
        );
        // The server's CPU (this process; wrk is another) per request: load-independent.
        // (With the builtin generator the client shares the process: an upper bound.)
        let cpu_before = support::cpu_seconds();
        let out = if use_wrk {
            let out = tokio::process::Command::new("wrk")
                .args([
                    "-t2",
                    &format!("-c{}", o.connections),
                    &format!("-d{}s", o.seconds),
                    "--latency",
                    &url,
                ])
                .output()
                .await?;
            String::from_utf8_lossy(&out.stdout).into_owned()
        } else {
            format!("{}\n", builtin_load(&url, o.connections, o.seconds).await?)
        };
        let cpu = support::cpu_seconds() - cpu_before;
        print!("{out}");
        let served = requests_in(&out);
        if served > 0 {
            println!("CPU per request: {:.3} ms ({served} requests)", cpu * 1000.0 / served as f64);
        }
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    if !std::env::args().any(|a| a == "--bench") {
        println!("extended benchmark: not run under `cargo test`; use `cargo bench --bench extended`");
        return Ok(());
    }
    let o = parse_opts()?;
    if o.no_cache {
        // Before any thread starts: the routes read it when built.
        std::env::set_var(stacks_ledger::api::cache::CACHE_MB_ENV, "0");
    }
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    rt.block_on(run(o))
}
