//! The mixed-load benchmark: reads and ingestion at once, as `serve` runs them
//! (the event observer over `IngestFirst`, the public API with its response cache and
//! admission gate, both in this process on real TCP; release build), on SQLite.
//!
//! ```sh
//! ulimit -n 8192   # 1,200 connections on each side
//! cargo bench --bench mixed                       # every phase below
//! cargo bench --bench mixed -- --hot 1000 --addr 200 --seconds 20
//! ```
//!
//! 1. The first half of `../shared/bench/realnode-2/events.tsv` is imported into a template
//!    store (the import's batch path).
//! 2. *Alone*: a copy of it serves, and the second half is POSTed to its event observer one
//!    event after the other, each as soon as the previous one was answered (as a node does,
//!    as fast as accepted): events/s and the POSTs' latency.
//! 3. *Mixed*: another copy, the same POSTs while `wrk` reads with `--hot` connections
//!    `/extended/v1/tx?limit=50` and `--addr` connections the hot address's transactions
//!    (from 1 s before the first POST until the last is answered; wrk's own report).
//!    Afterwards the two stores' tables must hold the same row counts (nothing lost) and the
//!    maintained totals must match the balances.
//!    The API runs as `serve` runs it beside the observer: its connections on event loops
//!    (`STACKS_LEDGER_API_LOOPS`, default one here) and its computations on a runtime of its
//!    own, at `STACKS_LEDGER_API_NICE` (default 10); `STACKS_LEDGER_API_NICE=0` measures
//!    `warp::serve` on the observer's runtime.
//!    With `STACKS_LEDGER_EVENT_ACK=logged` the observer acknowledges each event once it is
//!    logged, as `serve --event-ack logged` does, and the time of both ingestion phases runs
//!    until the last event is applied, not to its `200`.
//! 4. *Cache off*: the mixed store served with the response cache off, `/extended/v1/tx?limit=50`
//!    with 32 then `--hot` connections for `--seconds` each.
//!
//! `--hot-url URL` points the hot readers at another server (a static file server holding the
//! same answer, say): what any server gets of the two cores while the same events are applied.
//!
//! Under `cargo test` (no `--bench`) it does nothing. Needs `wrk` on the PATH.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use stacks_ledger::api::runtime::ApiRuntime;
use stacks_ledger::api::{self, Admission, IngestFirst, ResponseCache};
use stacks_ledger::config::{Config, ConfigArgs, EventAck};
use stacks_ledger::events::{EventPath, RawEvent, TsvReader};
use stacks_ledger::ingest::inbox::Logged;
use stacks_ledger::ingest::{EventSink, IncomingEvent};
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;
use stacks_ledger::v2::V2Settings;

mod support;

const HOT_ADDRESS: &str = "STVWDNCRXAYZ7SAJ3B2PACPP29D5JDY549YGZNSM";
const HOT_ROUTE: &str = "/extended/v1/tx?limit=50";

struct Opts {
    hot: usize,
    addr: usize,
    seconds: u64,
    skip_cache_off: bool,
    /// Where the hot readers read instead of this process's `HOT_ROUTE`.
    hot_url: Option<String>,
}

fn parse_opts() -> anyhow::Result<Opts> {
    let mut o = Opts { hot: 1000, addr: 200, seconds: 20, skip_cache_off: false, hot_url: None };
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    while let Some(a) = args.next() {
        let mut val = || args.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--hot" => o.hot = val()?.parse()?,
            "--addr" => o.addr = val()?.parse()?,
            "--seconds" => o.seconds = val()?.parse()?,
            "--skip-cache-off" => o.skip_cache_off = true,
            "--hot-url" => o.hot_url = Some(val()?),
            other => bail!("unknown option {other}"),
        }
    }
    Ok(o)
}

/// One API process over `db`: observer and public API, as `serve` wires them.
struct Server {
    store: Arc<Store>,
    admission: Arc<Admission>,
    cache: Arc<ResponseCache>,
    events: SocketAddr,
    api: SocketAddr,
    /// The inbox's queue, with `STACKS_LEDGER_EVENT_ACK=logged`.
    logged: Option<Arc<Logged<Store>>>,
    /// The API's own runtime, as `serve` runs it (none with `STACKS_LEDGER_API_NICE=0`).
    _api_runtime: Option<ApiRuntime>,
}

async fn start(db: &Path, cache_bytes: Option<usize>) -> anyhow::Result<Server> {
    let store = Arc::new(
        Store::open(
            &format!("sqlite://{}", db.display()),
            Network::Testnet,
            stacks_ledger::compose::tx_render(),
        )
        .await?,
    );
    let mut config = Config::from_process_env(&ConfigArgs::default())?;
    let admission = Admission::new(&config.load.admission, store.pool_stats().max as usize);
    if let Some(bytes) = cache_bytes {
        config.response_cache_bytes = bytes;
    }
    let cache = Arc::new(ResponseCache::configured(&config));
    let routes = api::observe::observed(api::routes_with_parts(
        Arc::clone(&store),
        V2Settings::ledger_only(),
        api::faucets(&store, &config)?,
        Arc::clone(&cache),
        Arc::clone(&admission),
    ));
    let listener = stacks_ledger::observer::listen(([127, 0, 0, 1], 0).into())?;
    let api = listener.local_addr()?;
    let api_runtime = match config.load.api_nice {
        0 => {
            tokio::spawn(warp::serve(routes).incoming(listener).run());
            None
        }
        nice => {
            let rt = ApiRuntime::new(2, nice)?;
            let loops = config.load.api_loops.unwrap_or_else(|| api::server::default_loops(2));
            tokio::spawn(api::server::serve(
                listener,
                routes,
                Arc::clone(&cache),
                &rt,
                loops,
                std::future::pending(),
            )?);
            Some(rt)
        }
    };
    let listener = stacks_ledger::observer::listen(([127, 0, 0, 1], 0).into())?;
    let events = listener.local_addr()?;
    let sink = Arc::new(IngestFirst::new(Arc::clone(&store), Arc::clone(&admission)));
    let limit = config.event_body_limit;
    let logged = match config.event_ack {
        EventAck::Applied => {
            tokio::spawn(stacks_ledger::observer::run(listener, sink, limit, std::future::pending()));
            None
        }
        EventAck::Logged => {
            let logged = Arc::new(Logged::start(sink, Arc::clone(&store), config.inbox).await?);
            let observer = Arc::clone(&logged);
            tokio::spawn(stacks_ledger::observer::run(listener, observer, limit, std::future::pending()));
            Some(logged)
        }
    };
    Ok(Server { store, admission, cache, events, api, logged, _api_runtime: api_runtime })
}

impl Server {
    /// Waits until every event acknowledged is applied (at once unless they are logged first).
    async fn applied(&self) {
        if let Some(logged) = &self.logged {
            while logged.pending() > 0 {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
    }
}

/// POSTs `events` one after the other to `server`: (events/s until the last is applied, and
/// the POSTs' p50, p99, max latency).
async fn post_all(
    events: &[RawEvent],
    server: &Server,
) -> anyhow::Result<(f64, Duration, Duration, Duration)> {
    let to = server.events;
    let client = reqwest::Client::builder().pool_max_idle_per_host(1).build()?;
    let started = Instant::now();
    let mut times = Vec::with_capacity(events.len());
    for ev in events {
        let t = Instant::now();
        let res = client
            .post(format!("http://{to}{}", ev.path))
            .header("content-type", "application/json")
            .body(ev.payload.clone())
            .send()
            .await?;
        if !res.status().is_success() {
            bail!("POST {} (event {}): HTTP {}: {}", ev.path, ev.id, res.status(), res.text().await?);
        }
        times.push(t.elapsed());
    }
    server.applied().await;
    let rate = events.len() as f64 / started.elapsed().as_secs_f64();
    times.sort();
    let p = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    Ok((rate, p(0.5), p(0.99), *times.last().unwrap()))
}

/// `wrk` on `url` with `connections` until stopped (SIGINT: it then prints its report).
fn wrk(url: &str, connections: usize, threads: usize, seconds: u64) -> anyhow::Result<std::process::Child> {
    std::process::Command::new("wrk")
        .args([
            &format!("-t{threads}"),
            &format!("-c{connections}"),
            &format!("-d{seconds}s"),
            "--timeout",
            "10s",
            "--latency",
            url,
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .context("running wrk (is it installed?)")
}

fn stop(child: &std::process::Child) {
    let _ = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status();
}

fn report(child: std::process::Child) -> anyhow::Result<String> {
    Ok(String::from_utf8_lossy(&child.wait_with_output()?.stdout).into_owned())
}

/// Row counts per table.
async fn counts(store: &Store) -> anyhow::Result<BTreeMap<String, u64>> {
    Ok(store.ledger_digest().await?.into_iter().map(|(t, (n, _))| (t, n)).collect())
}

fn copy_db(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::copy(from, to)?;
    Ok(())
}

fn incoming(ev: &RawEvent) -> anyhow::Result<IncomingEvent> {
    Ok(IncomingEvent {
        id: Some(ev.id),
        receive_timestamp: Some(ev.receive_timestamp.clone()),
        path: EventPath::from_path(&ev.path).context("event path")?,
        payload: ev.payload.clone(),
    })
}

async fn run(o: Opts) -> anyhow::Result<()> {
    let tsv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/bench/realnode-2/events.tsv");
    let file = std::fs::File::open(&tsv).with_context(|| format!("{}", tsv.display()))?;
    let events: Vec<RawEvent> = TsvReader::new(std::io::BufReader::new(file)).collect::<Result<_, _>>()?;
    let half = events.len() / 2;
    let (first, second) = events.split_at(half);
    let dir = std::env::temp_dir().join(format!("stacks-ledger-mixed-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    println!(
        "realnode-2: {} events; {} imported, {} POSTed live; store in {}",
        events.len(),
        half,
        second.len(),
        dir.display()
    );
    let config = Config::from_process_env(&ConfigArgs::default())?;
    println!(
        "load average before: {}; events acknowledged once {:?}; API nice {}",
        support::load_average(),
        config.event_ack,
        config.load.api_nice
    );

    let template = dir.join("template.db");
    {
        // Imported as `import-events` does (its page size), then served and POSTed to.
        let store = Store::open_for_replay(
            &format!("sqlite://{}", template.display()),
            Network::Testnet,
            stacks_ledger::compose::tx_render(),
        )
        .await?;
        let t = Instant::now();
        for chunk in first.chunks(1000) {
            let batch = chunk.iter().map(incoming).collect::<anyhow::Result<Vec<_>>>()?;
            for r in store.ingest_many(batch).await? {
                r?;
            }
        }
        println!("imported the first half in {:.1} s", t.elapsed().as_secs_f64());
        store.close().await;
    }

    // Alone.
    let alone_db = dir.join("alone.db");
    copy_db(&template, &alone_db)?;
    let alone = start(&alone_db, None).await?;
    let (rate_alone, p50, p99, max) = post_all(second, &alone).await?;
    println!(
        "== ingestion alone: {rate_alone:.1} events/s; POST latency p50 {p50:?} p99 {p99:?} max {max:?} (load {})",
        support::load_average()
    );
    let alone_counts = counts(&alone.store).await?;

    // Mixed.
    let mixed_db = dir.join("mixed.db");
    copy_db(&template, &mixed_db)?;
    let mixed = start(&mixed_db, None).await?;
    let hot = o.hot_url.clone().unwrap_or_else(|| format!("http://{}{HOT_ROUTE}", mixed.api));
    let addr = format!("http://{}/extended/v1/address/{HOT_ADDRESS}/transactions?limit=50", mixed.api);
    let cpu_before = support::cpu_seconds();
    let readers = [wrk(&hot, o.hot, 2, 3600)?, wrk(&addr, o.addr, 1, 3600)?];
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (rate, p50, p99, max) = post_all(second, &mixed).await?;
    let load = support::load_average();
    readers.iter().for_each(stop);
    let [hot_report, addr_report] = readers.map(|r| report(r).unwrap_or_else(|e| e.to_string()));
    let cpu = support::cpu_seconds() - cpu_before;
    println!(
        "== ingestion with {} + {} readers: {rate:.1} events/s ({:.0}% of alone); POST latency p50 {p50:?} \
         p99 {p99:?} max {max:?} (load {load}; server process CPU {cpu:.1} s)",
        o.hot,
        o.addr,
        100.0 * rate / rate_alone
    );
    println!("-- {} connections on {}:\n{hot_report}", o.hot, o.hot_url.as_deref().unwrap_or(HOT_ROUTE));
    println!("-- {} connections on the hot address's transactions:\n{addr_report}", o.addr);
    println!(
        "admission: {} shed (503); response cache: {} hits, {} computed by requests, {} recomputed ahead, {} waits for them in place",
        mixed.admission.shed(),
        mixed.cache.hits(),
        mixed.cache.computed(),
        mixed.cache.refreshed(),
        mixed.cache.waited_in_place()
    );
    let mixed_counts = counts(&mixed.store).await?;
    let lost: Vec<_> = alone_counts
        .iter()
        .filter(|(t, n)| mixed_counts.get(*t) != Some(n))
        .map(|(t, n)| format!("{t}: {n} alone, {:?} mixed", mixed_counts.get(t)))
        .collect();
    let totals = mixed.store.account_totals_mismatches().await?;
    println!(
        "nothing lost: {} ({} tables, {} rows; raw_events {:?}); maintained totals mismatches: {}",
        lost.is_empty(),
        mixed_counts.len(),
        mixed_counts.values().sum::<u64>(),
        mixed_counts.get("raw_events"),
        totals.len()
    );
    if !lost.is_empty() || !totals.is_empty() {
        bail!("data differs after the mixed run: {lost:?} {totals:?}");
    }

    if !o.skip_cache_off {
        let off = start(&mixed_db, Some(0)).await?;
        let url = format!("http://{}{HOT_ROUTE}", off.api);
        for c in [32, o.hot] {
            let out = report(wrk(&url, c, 2, o.seconds)?)?;
            println!(
                "== cache off, {c} connections on {HOT_ROUTE} (load {}; {} shed so far):\n{out}",
                support::load_average(),
                off.admission.shed()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn main() -> anyhow::Result<()> {
    if !std::env::args().any(|a| a == "--bench") {
        println!("mixed benchmark: not run under `cargo test`; use `cargo bench --bench mixed`");
        return Ok(());
    }
    let o = parse_opts()?;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    rt.block_on(run(o))
}
