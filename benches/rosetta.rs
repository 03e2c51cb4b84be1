//! Rosetta read latency under concurrent load: `/block` (random canonical heights) and
//! historical `/account/balance` (random accounts at random heights), over HTTP against the
//! public route table, on an existing store. Prints p50/p90/p99/max per endpoint.
//!
//! ```sh
//! # a ~1M-tx devnet chain, kept by the ingest bench, then:
//! cargo bench --bench ingest -- --db sqlite --keep          # prints the database path
//! cargo bench --bench rosetta -- --db sqlite:///tmp/…/bench.db --requests 20000 --concurrency 16
//! ```
//!
//! Target: p99 under 10 ms on a 1M-transaction chain.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::{json, Value};
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;

struct Opts {
    db: String,
    network: Network,
    requests: usize,
    concurrency: usize,
}

fn parse_opts() -> anyhow::Result<Opts> {
    let mut o = Opts { db: String::new(), network: Network::Testnet, requests: 10_000, concurrency: 16 };
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    while let Some(a) = args.next() {
        let mut val = || args.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--db" => o.db = val()?,
            "--network" => o.network = val()?.parse().map_err(anyhow::Error::msg)?,
            "--requests" => o.requests = val()?.parse()?,
            "--concurrency" => o.concurrency = val()?.parse()?,
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

async fn run(o: Opts) -> anyhow::Result<()> {
    let store = Arc::new(Store::open(&o.db, o.network).await?);
    let tip = store.chain_tip().await?.context("the store is empty")?.block_height;
    let accounts: Vec<String> = store.accounts().await?.into_iter().map(|(a, _, _)| a).take(10_000).collect();
    let tx_count: i64 = store.canonical_counts().await?.get("txs").copied().unwrap_or(0);
    println!("store: tip {tip}, {tx_count} canonical txs, {} accounts sampled", accounts.len());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(warp::serve(stacks_ledger::api::routes(Arc::clone(&store))).incoming(listener).run());
    let client = reqwest::Client::new();
    let net = json!({ "blockchain": "stacks", "network": o.network.as_str() });
    for endpoint in ["block", "account/balance"] {
        let per_worker = o.requests / o.concurrency;
        let started = Instant::now();
        let cpu_before = support::cpu_seconds();
        let mut workers = Vec::new();
        for w in 0..o.concurrency {
            let (client, net, accounts) = (client.clone(), net.clone(), accounts.clone());
            let url = format!("http://{addr}/rosetta/v1/{endpoint}");
            workers.push(tokio::spawn(async move {
                let mut rng = Lcg(w as u64 + 1);
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
                    let _: Value = res.json().await?;
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
        let wall = started.elapsed();
        let cpu = support::cpu_seconds() - cpu_before;
        all.sort();
        println!(
            "/{endpoint}: {} requests, concurrency {}, {:.0} req/s; p50 {:?} p90 {:?} p99 {:?} max {:?}; \
             CPU {cpu:.1} s = {:.2} ms per request (server + client)",
            all.len(),
            o.concurrency,
            all.len() as f64 / wall.as_secs_f64(),
            percentile(&all, 0.50),
            percentile(&all, 0.90),
            percentile(&all, 0.99),
            all.last().copied().unwrap_or_default(),
            cpu * 1000.0 / all.len().max(1) as f64,
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
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    rt.block_on(run(o))
}
