//! Rosetta read latency under concurrent load: `/block` (random canonical heights) and
//! historical `/account/balance` (random accounts at random heights), over HTTP against the
//! public route table, on an existing store. Prints p50/p90/p99/max per endpoint and the CPU
//! time per request, of the whole process and of the server alone (client threads left out).
//! `--warmup N` untimed requests (default 1000) go first; `--endpoint block` runs one endpoint.
//!
//! ```sh
//! # a ~1M-tx devnet chain, kept by the ingest bench, then:
//! cargo bench --bench ingest -- --db sqlite --keep          # prints the database path
//! cargo bench --bench rosetta -- --db sqlite:///tmp/…/bench.db --requests 2000 --concurrency 4
//! ```
//!
//! Target: p99 under 10 ms on a 1M-transaction chain.

mod support;

use ledger_read::TipReader;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::json;
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;

struct Opts {
    db: String,
    network: Network,
    requests: usize,
    concurrency: usize,
    /// Untimed requests per endpoint before the timed ones.
    warmup: usize,
    /// Only this endpoint (`block` or `account/balance`); both when empty.
    endpoint: String,
}

fn parse_opts() -> anyhow::Result<Opts> {
    let mut o = Opts {
        db: String::new(),
        network: Network::Testnet,
        requests: 10_000,
        concurrency: 16,
        warmup: 1_000,
        endpoint: String::new(),
    };
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    while let Some(a) = args.next() {
        let mut val = || args.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--db" => o.db = val()?,
            "--network" => o.network = val()?.parse().map_err(anyhow::Error::msg)?,
            "--requests" => o.requests = val()?.parse()?,
            "--concurrency" => o.concurrency = val()?.parse()?,
            "--endpoint" => o.endpoint = val()?,
            "--warmup" => o.warmup = val()?.parse()?,
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

/// A small deterministic generator (no dependency for a bench).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

/// The server's threads (tokio workers here) and the load
/// generator's are told apart by name, so the CPU time per request is reported for the server
/// alone as well as for the whole process.
const CLIENT_THREADS: &str = "bench-client";

/// `requests` requests to `endpoint` from `concurrency` workers (random canonical heights,
/// random accounts; worker `w` draws from seed `seed + w + 1`); returns their latencies.
#[allow(clippy::too_many_arguments)]
async fn load(
    client: &reqwest::Client,
    addr: std::net::SocketAddr,
    net: &serde_json::Value,
    accounts: &[String],
    tip: i64,
    endpoint: &'static str,
    requests: usize,
    concurrency: usize,
    seed: u64,
) -> anyhow::Result<Vec<Duration>> {
    let per_worker = requests / concurrency;
    let accounts = Arc::new(accounts.to_vec());
    let mut workers = Vec::new();
    for w in 0..concurrency {
        let (client, net, accounts) = (client.clone(), net.clone(), Arc::clone(&accounts));
        let url = format!("http://{addr}/rosetta/v1/{endpoint}");
        workers.push(tokio::spawn(async move {
            let mut rng = Lcg(seed + w as u64 + 1);
            let mut times = Vec::with_capacity(per_worker);
            for _ in 0..per_worker {
                let height = 1 + rng.next(tip as u64) as i64;
                let body = if endpoint == "block" {
                    json!({ "network_identifier": net, "block_identifier": { "index": height } })
                } else {
                    let a = &accounts[rng.next(accounts.len() as u64) as usize];
                    json!({ "network_identifier": net, "account_identifier": { "address": a }, "block_identifier": { "index": height } })
                };
                let t = Instant::now();
                let res = client.post(&url).json(&body).send().await?;
                let status = res.status();
                // Read and check the JSON without building a tree: the load generator shares
                // the 2 cores with the server, so it should cost as little as it can.
                let _: serde::de::IgnoredAny = serde_json::from_slice(&res.bytes().await?)?;
                times.push(t.elapsed());
                if !status.is_success() {
                    bail!("{endpoint} at {height}: HTTP {status}");
                }
            }
            anyhow::Ok(times)
        }));
    }
    let mut all = Vec::new();
    for w in workers {
        all.extend(w.await??);
    }
    Ok(all)
}

async fn run(o: Opts, server: tokio::runtime::Handle) -> anyhow::Result<()> {
    let (db, network) = (o.db.clone(), o.network);
    let (store, addr) = server
        .spawn(async move {
            let store = Arc::new(Store::open(&db, network, stacks_ledger::compose::tx_render()).await?);
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            let addr = listener.local_addr()?;
            tokio::spawn(warp::serve(support::routes(Arc::clone(&store))).incoming(listener).run());
            anyhow::Ok((store, addr))
        })
        .await??;
    let tip = store.tip().await?.context("the store is empty")?.block.block_height;
    let accounts: Vec<String> = store.accounts().await?.into_iter().map(|(a, _, _)| a).take(10_000).collect();
    let tx_count: i64 = store.canonical_tx_count().await?;
    println!("store: tip {tip}, {tx_count} canonical txs, {} accounts sampled", accounts.len());
    let client = reqwest::Client::new();
    let net = json!({ "blockchain": "stacks", "network": o.network.as_str() });
    for endpoint in ["block", "account/balance"] {
        if !o.endpoint.is_empty() && o.endpoint != endpoint {
            continue;
        }
        if o.warmup > 0 {
            // Untimed: fills SQLite's page caches and the allocator's arenas as a server that
            // has been running for a while has them (other blocks than the timed ones).
            load(&client, addr, &net, &accounts, tip, endpoint, o.warmup, o.concurrency, 1_000).await?;
        }
        let started = Instant::now();
        let cpu_before = support::cpu_seconds();
        let client_cpu_before = support::thread_cpu_seconds(CLIENT_THREADS);
        let mut all =
            load(&client, addr, &net, &accounts, tip, endpoint, o.requests, o.concurrency, 0).await?;
        let wall = started.elapsed();
        let cpu = support::cpu_seconds() - cpu_before;
        let client_cpu = support::thread_cpu_seconds(CLIENT_THREADS) - client_cpu_before;
        all.sort();
        println!(
            "/{endpoint}: {} requests, concurrency {}, {:.0} req/s; p50 {:?} p90 {:?} p99 {:?} max {:?}; \
             CPU {cpu:.1} s = {:.2} ms per request (server + client), server alone {:.2} ms",
            all.len(),
            o.concurrency,
            all.len() as f64 / wall.as_secs_f64(),
            percentile(&all, 0.50),
            percentile(&all, 0.90),
            percentile(&all, 0.99),
            all.last().copied().unwrap_or_default(),
            cpu * 1000.0 / all.len().max(1) as f64,
            (cpu - client_cpu) * 1000.0 / all.len().max(1) as f64,
        );
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    if !std::env::args().any(|a| a == "--bench") {
        println!("rosetta benchmark: not run under `cargo test`; use `cargo bench --bench rosetta`");
        return Ok(());
    }
    let o = parse_opts()?;
    // The server gets 2 worker threads, as on the 2-core target machine.
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("server")
        .enable_all()
        .build()?;
    let client = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(CLIENT_THREADS)
        .enable_all()
        .build()?;
    client.block_on(run(o, server.handle().clone()))
}
