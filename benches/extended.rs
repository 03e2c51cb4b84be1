//! The `/extended` read benchmark: the public route table served over HTTP on
//! loopback from an existing store, and each route loaded for a fixed time by N keep-alive
//! connections — with `wrk -t2 -cN -dS --latency` when `wrk` is on the PATH (the incumbent's
//! figures in `../shared/bench/realnode-2/wrk.txt` were taken that way), else (or with
//! `--builtin`) with the equivalent generator below. Prints req/s and latency percentiles.
//!
//! ```sh
//! cargo bench --bench extended -- --db sqlite:///path/ledger.db              # wrk if installed
//! cargo bench --bench extended -- --db sqlite:///path/ledger.db --builtin --connections 32 --seconds 20
//! cargo bench --bench extended -- --db sqlite:///path/ledger.db --no-cache   # the response cache off
//!
//! # realnode-2 imported into a temporary store, the nine URLs of its wrk.txt, each
//! # compared with the incumbent's req/s there (cache off, 10 s per URL unless --seconds)
//! cargo bench --bench extended -- --realnode-2 --no-cache
//!
//! # the same store, the v3 list routes instead (target p99 < 10 ms):
//! # /extended/v3/transactions, the hot address's v3 transactions on page 1 and at a cursor
//! # half-way through its list (found by following `cursor.next` from page 1)
//! cargo bench --bench extended -- --realnode-2 --v3 --no-cache
//! ```
//!
//! The URLs are picked from the store through the API itself: a mid-chain transaction (the
//! one at offset half the canonical count of `/extended/v1/tx`), the busiest principal of a
//! sample of 50 mid-chain transactions (the most called contract; `--busy` overrides) and the
//! hottest sender of that sample (for balances and nonces).
//!
//! Target: ≥ 10× the incumbent's req/s on the same routes, p99 < 10 ms at 32
//! connections.
//!
//! With `--realnode-2` the store is `../shared/bench/realnode-2/events.tsv` imported (as
//! `import-events` does) into a fresh SQLite store under `$TMPDIR` (or into the empty store
//! `--db` names), the URLs and the incumbent's req/s are read from that directory's `wrk.txt`,
//! and a closing table gives each URL's req/s, p99 and ratio to the incumbent, and their
//! geometric mean (target: every read ≥ 5×, geometric mean ≥ 20×, p99 < 10 ms). Current
//! figures: `docs/benchmarks.md`.

use std::collections::HashMap;
use std::path::PathBuf;
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
    realnode2: bool,
    v3: bool,
    keep: bool,
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
        realnode2: false,
        v3: false,
        keep: false,
    };
    let mut seconds_given = false;
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    while let Some(a) = args.next() {
        let mut val = || args.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--db" => o.db = val()?,
            "--network" => o.network = val()?.parse().map_err(anyhow::Error::msg)?,
            "--connections" => o.connections = val()?.parse()?,
            "--seconds" => {
                o.seconds = val()?.parse()?;
                seconds_given = true;
            }
            "--builtin" => o.builtin = true,
            "--busy" => o.busy = Some(val()?),
            "--offset" => o.offset = val()?.parse()?,
            // Only the URLs containing this string.
            "--only" => o.only = Some(val()?),
            // The /extended response cache off (it is on by default, as in `serve`).
            "--no-cache" => o.no_cache = true,
            // Import ../shared/bench/realnode-2 first and load the nine URLs of its wrk.txt.
            "--realnode-2" => o.realnode2 = true,
            // With --realnode-2: the v3 list routes instead of wrk.txt's nine.
            "--v3" => o.v3 = true,
            // With --realnode-2: keep the imported store.
            "--keep" => o.keep = true,
            other => bail!("unknown option {other}"),
        }
    }
    if o.realnode2 && !seconds_given {
        o.seconds = 10; // `wrk -d10s`: nine URLs in under two minutes
    }
    if o.v3 && !o.realnode2 {
        bail!("--v3 needs --realnode-2 (its hot address)");
    }
    if o.db.is_empty() && !o.realnode2 {
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
         Requests/sec: {:.2}\n latency p50 {:?} p75 {:?} p90 {:?} p99 {:?} max {:?}\n 99% {:.2}ms",
        all.len(),
        bytes as f64 / 1e6,
        all.len() as f64 / wall,
        percentile(&all, 0.50),
        percentile(&all, 0.75),
        percentile(&all, 0.90),
        percentile(&all, 0.99),
        all.last().copied().unwrap_or_default(),
        percentile(&all, 0.99).as_secs_f64() * 1000.0,
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

/// `../shared/bench/realnode-2`, beside the checkout.
fn realnode2_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/bench/realnode-2")
}

/// The incumbent's reads in a `wrk.txt`: each `### path` header with the `Requests/sec` below it.
fn incumbent_reads(wrk_txt: &str) -> Vec<(String, f64)> {
    let mut reads = Vec::new();
    let mut path = None;
    for line in wrk_txt.lines() {
        if let Some(p) = line.strip_prefix("### ") {
            path = Some(p.trim().to_string());
        } else if let Some(r) = line.trim().strip_prefix("Requests/sec:") {
            if let (Some(p), Ok(r)) = (path.take(), r.trim().parse()) {
                reads.push((p, r));
            }
        }
    }
    reads
}

/// `Requests/sec` of a load report (wrk's and the builtin's).
fn report_rps(report: &str) -> Option<f64> {
    report.lines().find_map(|l| l.trim().strip_prefix("Requests/sec:")).and_then(|r| r.trim().parse().ok())
}

/// The 99th percentile latency in ms of a load report (wrk's `99%  12.34ms` line, also written
/// by the builtin generator).
fn report_p99_ms(report: &str) -> Option<f64> {
    let v = report.lines().find_map(|l| l.trim().strip_prefix("99%"))?.trim();
    let split = v.find(|c: char| c.is_ascii_alphabetic())?;
    let (n, unit) = v.split_at(split);
    let n: f64 = n.parse().ok()?;
    Some(match unit {
        "us" => n / 1000.0,
        "ms" => n,
        "s" => n * 1000.0,
        "m" => n * 60_000.0,
        _ => return None,
    })
}

/// With `--realnode-2`: the store to serve (realnode-2 imported into `--db`, else into a fresh
/// SQLite store under `$TMPDIR`) and the directory to remove afterwards.
async fn import_realnode2(o: &Opts) -> anyhow::Result<(Store, Option<PathBuf>)> {
    use stacks_ledger::ingest::import::{import_events, ImportOptions};
    use stacks_ledger::ingest::progress::ProgressMode;
    let (url, dir) = if o.db.is_empty() {
        let dir = std::env::temp_dir().join(format!("stacks-ledger-bench-rn2-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        (format!("sqlite://{}/ledger.db", dir.display()), Some(dir))
    } else {
        (o.db.clone(), None)
    };
    // As `import-events` opens it (a new file gets the replay's page size).
    let store = Store::open_for_replay(&url, o.network, stacks_ledger::compose::tx_render()).await?;
    let file = realnode2_dir().join("events.tsv");
    let started = Instant::now();
    let cpu = support::cpu_seconds();
    let summary = import_events(&store, &file, ImportOptions::default(), ProgressMode::Hidden).await?;
    println!(
        "imported {} ({} lines) into {url} in {:.1} s ({:.1} CPU s, load average {})",
        file.display(),
        summary.lines,
        started.elapsed().as_secs_f64(),
        support::cpu_seconds() - cpu,
        support::load_average()
    );
    Ok((store, dir))
}

/// The benchmark's routes with their ids picked from the store through the API (module docs).
async fn picked_urls(o: &Opts, client: &reqwest::Client, base: &str) -> anyhow::Result<Vec<String>> {
    let total = get_json(client, &format!("{base}/extended/v1/tx?limit=1")).await?["total"]
        .as_u64()
        .context("no total in /extended/v1/tx")?;
    let sample = get_json(client, &format!("{base}/extended/v1/tx?limit=50&offset={}", total / 2)).await?;
    let sample = sample["results"].as_array().cloned().unwrap_or_default();
    let mid_tx = sample.first().and_then(|t| t["tx_id"].as_str()).context("empty store")?.to_string();
    let hot_sender = most_frequent(&sample, |t| t["sender_address"].as_str()).context("no sender")?;
    let busy = match o.busy.clone() {
        Some(b) => b,
        None => most_frequent(&sample, |t| t["contract_call"]["contract_id"].as_str())
            .unwrap_or(hot_sender.clone()),
    };
    let busy_total = get_json(client, &format!("{base}/extended/v1/address/{busy}/transactions?limit=1"))
        .await?["total"]
        .as_u64()
        .unwrap_or(0);
    println!("store: {total} txs; mid-chain tx {mid_tx}; busy principal {busy} ({busy_total} txs); hot sender {hot_sender}");
    Ok(vec![
        "/extended/v1/tx?limit=50".to_string(),
        format!("/extended/v1/tx/{mid_tx}"),
        format!("/extended/v1/address/{busy}/transactions?limit=50"),
        format!("/extended/v1/address/{busy}/transactions?limit=50&offset={}", o.offset),
        format!("/extended/v1/address/{hot_sender}/balances"),
        format!("/extended/v1/address/{hot_sender}/nonces"),
        "/extended/v1/block?limit=20".to_string(),
        "/extended/v2/blocks?limit=20".to_string(),
        format!("/extended/v1/tokens/nft/holdings?principal={hot_sender}"),
    ])
}

/// realnode-2's hot address (`../shared/bench/realnode-2/README.md`).
const REALNODE2_HOT: &str = "STVWDNCRXAYZ7SAJ3B2PACPP29D5JDY549YGZNSM";

/// The v3 list reads: `/transactions`, and the hot address's
/// transactions on page 1 and at the cursor half-way through its list.
async fn v3_urls(client: &reqwest::Client, base: &str) -> anyhow::Result<Vec<String>> {
    let first = format!("/extended/v3/principals/{REALNODE2_HOT}/transactions");
    let page = get_json(client, &format!("{base}{first}")).await?;
    let (total, limit) = (page["total"].as_u64().unwrap_or(0), page["limit"].as_u64().unwrap_or(1).max(1));
    let mut cursor = page["cursor"]["next"].as_str().map(str::to_owned);
    for _ in 1..(total / limit / 2) {
        let Some(c) = &cursor else { break };
        let next = get_json(client, &format!("{base}{first}?cursor={c}")).await?;
        cursor = next["cursor"]["next"].as_str().map(str::to_owned);
    }
    let deep = cursor.context("the hot address's v3 transactions have no second page")?;
    Ok(vec!["/extended/v3/transactions".to_owned(), first.clone(), format!("{first}?cursor={deep}")])
}

async fn run(o: Opts) -> anyhow::Result<()> {
    let (store, tmp_dir) = if o.realnode2 {
        import_realnode2(&o).await?
    } else {
        (Store::open(&o.db, o.network, stacks_ledger::compose::tx_render()).await?, None)
    };
    let store = Arc::new(store);
    let listener = stacks_ledger::observer::listen(([127, 0, 0, 1], 0).into())?;
    let addr = listener.local_addr()?;
    tokio::spawn(warp::serve(support::routes(Arc::clone(&store))).incoming(listener).run());
    let base = format!("http://{addr}");
    let client = reqwest::Client::new();

    let cache = std::env::var(stacks_ledger::api::cache::CACHE_MB_ENV)
        .unwrap_or_else(|_| stacks_ledger::api::cache::DEFAULT_CACHE_MB.to_string());
    println!("response cache: {cache} MiB (0 = off; cached figures are for one repeated URL)");
    // (path, the incumbent's req/s where known)
    let urls: Vec<(String, Option<f64>)> = if o.v3 {
        v3_urls(&client, &base).await?.into_iter().map(|p| (p, None)).collect()
    } else if o.realnode2 {
        let wrk = std::fs::read_to_string(realnode2_dir().join("wrk.txt"))?;
        incumbent_reads(&wrk).into_iter().map(|(p, r)| (p, Some(r))).collect()
    } else {
        picked_urls(&o, &client, &base).await?.into_iter().map(|p| (p, None)).collect()
    };
    let use_wrk = !o.builtin && wrk_available();
    let mut rows = Vec::new();
    for (path, incumbent) in
        urls.iter().filter(|(u, _)| o.only.as_ref().is_none_or(|s| u.contains(s.as_str())))
    {
        let url = format!("{base}{path}");
        // One request first: a broken route fails the run instead of measuring error pages.
        get_json(&client, &url).await?;
        let load = support::load_average();
        println!("== GET {path} (load average {load})");
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
        let cpu_ms = (served > 0).then(|| cpu * 1000.0 / served as f64);
        if let Some(ms) = cpu_ms {
            println!("CPU per request: {ms:.3} ms ({served} requests)");
        }
        rows.push((path.clone(), report_rps(&out), report_p99_ms(&out), cpu_ms, *incumbent, load));
    }
    if o.realnode2 {
        println!("\n| read | req/s | p99 ms | CPU ms/req | incumbent req/s | ratio | load average |");
        println!("|---|---:|---:|---:|---:|---:|---|");
        let mut logs = Vec::new();
        for (path, rps, p99, cpu, inc, load) in &rows {
            let ratio = rps.zip(*inc).map(|(r, i)| r / i);
            if let Some(x) = ratio {
                logs.push(x.ln());
            }
            let f = |v: Option<f64>, d: usize| v.map_or("–".to_string(), |v| format!("{v:.d$}"));
            println!(
                "| `{path}` | {} | {} | {} | {} | {}× | {load} |",
                f(*rps, 0),
                f(*p99, 2),
                f(*cpu, 3),
                f(*inc, 2),
                f(ratio, 2)
            );
        }
        if !logs.is_empty() {
            let geo = (logs.iter().sum::<f64>() / logs.len() as f64).exp();
            println!("geometric mean of the ratios: {geo:.2}× ({} reads)", logs.len());
        }
    }
    drop(store);
    if let Some(dir) = tmp_dir {
        if o.keep {
            println!("kept {}", dir.display());
        } else {
            let _ = std::fs::remove_dir_all(dir);
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
