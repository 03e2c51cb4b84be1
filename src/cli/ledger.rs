//! The commands over the store: `serve`, `export-events`, `import-events`. Each is generic over
//! the sink, so the tests run them on a `MemorySink`; [`open_sink`] is the one place that says
//! which store the binary uses.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, ValueEnum};
use stacks_ledger::config::Config;
use stacks_ledger::ingest::export::{export_events, ExportSummary};
use stacks_ledger::ingest::import::{import_events, ImportOptions, ImportSummary};
use stacks_ledger::ingest::progress::ProgressMode;
use stacks_ledger::ingest::{EventSink, RawEventLog};
use stacks_ledger::observer;
use stacks_ledger::store::Store;

/// The store the binary runs on.
pub type LedgerSink = Store;

/// Opens (creating and migrating if needed) the store named by the configuration: the
/// primary when one is named (what writes goes there), else the database URL.
pub async fn open_sink(config: &Config) -> anyhow::Result<Arc<LedgerSink>> {
    let url = writer_url(config);
    opened(config, url, Store::open(url, config.network, stacks_ledger::compose::tx_render()).await)
}

/// [`open_sink`] for `import-events`: indexes an interrupted import set aside stay so, for
/// this one to build at its end (`Store::open_for_replay`).
pub async fn open_replay_sink(config: &Config) -> anyhow::Result<Arc<LedgerSink>> {
    let url = writer_url(config);
    opened(
        config,
        url,
        Store::open_for_replay(url, config.network, stacks_ledger::compose::tx_render()).await,
    )
}

/// The store of a `serve --mode readonly` process: reads the database URL (a replica, or the
/// file or database a writer process keeps), never migrates; writes go to the primary.
pub async fn open_readonly_sink(config: &Config) -> anyhow::Result<Arc<LedgerSink>> {
    let url = &config.database_url;
    let store = Store::open_readonly(
        url,
        config.db_primary.as_deref(),
        config.network,
        stacks_ledger::compose::tx_render(),
    )
    .await;
    let store = opened(config, url, store)?;
    if let Some(primary) = &config.db_primary {
        tracing::info!("readonly: writes and live updates through the primary {}", redact(primary));
    }
    Ok(store)
}

fn writer_url(config: &Config) -> &str {
    config.db_primary.as_deref().unwrap_or(&config.database_url)
}

fn opened(
    config: &Config,
    url: &str,
    store: Result<Store, stacks_ledger::store::StoreError>,
) -> anyhow::Result<Arc<LedgerSink>> {
    let store = store.with_context(|| format!("opening the store at {}", redact(url)))?;
    tracing::info!("store: {} ({:?}, {})", redact(url), store.engine(), config.network);
    Ok(Arc::new(store))
}

/// The URL without its password, for logs and errors.
fn redact(url: &str) -> String {
    stacks_ledger::config::redact_url(url)
}

#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// The TSV file to write.
    #[arg(long, value_name = "FILE")]
    pub file: PathBuf,
    /// Replace the file if it exists.
    #[arg(long)]
    pub overwrite_file: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    /// The TSV file to read.
    #[arg(long, value_name = "FILE")]
    pub file: PathBuf,
    /// Empty a non-empty store first.
    #[arg(long)]
    pub wipe_db: bool,
    /// Import into a non-empty store even when its last event is not found in the file (the
    /// lines up to its last event id are still skipped).
    #[arg(long)]
    pub force: bool,
    /// Events per database transaction: larger batches replay faster, smaller ones lose less
    /// work when the import is interrupted (it resumes after the last committed batch).
    #[arg(long, value_name = "N", default_value_t = stacks_ledger::ingest::import::BATCH_EVENTS,
          value_parser = clap::value_parser!(usize))]
    pub batch_events: usize,
    /// Accepted for the incumbent's command line; only `archival` (apply every event) exists.
    #[arg(long, value_enum, default_value_t = ImportMode::Archival)]
    pub mode: ImportMode,
}

#[derive(Debug, Clone, Args)]
pub struct ImportBnsArgs {
    /// The directory of `chainstate.txt`, `name_zonefiles.txt`, `subdomains.csv`,
    /// `subdomain_zonefiles.txt` and their `.sha256` files.
    #[arg(long, value_name = "DIR", env = "BNS_IMPORT_DIR")]
    pub dir: PathBuf,
}

/// `import-bns`: shows the subdomains' progress toward the files' total (a bar on a terminal,
/// a line every few seconds otherwise), logs the totals at the end, and stops after the batch
/// in progress on Ctrl-C (a later run resumes there).
pub async fn import_bns(
    store: &Store,
    dir: &std::path::Path,
    progress: ProgressMode,
) -> anyhow::Result<stacks_ledger::store::bns_genesis::BnsImportSummary> {
    use stacks_ledger::ingest::progress::CountProgress;
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            tracing::warn!("import-bns: stopping after the batch in progress");
            flag.store(true, Ordering::SeqCst);
        }
    });
    let started = std::time::Instant::now();
    let batch = stacks_ledger::store::bns_genesis::BATCH;
    // Started with the first batch, which brings the total.
    let mut bar: Option<CountProgress> = None;
    let summary = stacks_ledger::store::bns_genesis::import_bns_with(store, dir, batch, |rows, total| {
        bar.get_or_insert_with(|| CountProgress::start(progress, "import-bns: subdomains", total)).set(rows);
        if stop.load(Ordering::SeqCst) {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    })
    .await;
    drop(bar);
    ctrl_c.abort();
    let summary = summary?;
    tracing::info!(
        "import-bns: {} in {:.1} s: this run imported {} namespaces, {} names and {} subdomains; \
         the files hold {} subdomains{}",
        if summary.complete { "done" } else { "stopped (run it again to resume)" },
        started.elapsed().as_secs_f64(),
        summary.namespaces,
        summary.names,
        summary.subdomains,
        summary.subdomains_total,
        if summary.already_done.is_empty() {
            String::new()
        } else {
            format!("; imported by an earlier run: {}", summary.already_done.join(", "))
        },
    );
    Ok(summary)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImportMode {
    Archival,
}

/// Runs the event observer and the public API over one store until `shutdown`; both stop
/// together and let requests in flight finish.
pub async fn serve(
    config: &Config,
    store: Arc<Store>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    serve_with(config, store, shutdown, |_| {}).await
}

/// The addresses `serve` listens on, once bound.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    pub events: std::net::SocketAddr,
    pub api: std::net::SocketAddr,
}

/// The listener on `addr` for `what`, when this mode runs it.
async fn bind_if(
    runs: bool,
    addr: &stacks_ledger::config::BindAddr,
    what: &str,
) -> anyhow::Result<Option<tokio::net::TcpListener>> {
    if !runs {
        return Ok(None);
    }
    let listener =
        observer::bind(addr).await.with_context(|| format!("cannot listen for {what} on {addr}"))?;
    Ok(Some(listener))
}

/// How long a stopping `serve` keeps applying the events it logged (`--event-ack logged`)
/// before it leaves the rest to the next start.
const INBOX_DRAIN: std::time::Duration = std::time::Duration::from_secs(60);

/// The event observer over `sink`, once what the inbox kept from before this start is
/// applied; with `--event-ack logged`, behind the inbox's queue (`ingest::inbox`).
async fn observer_task<S: stacks_ledger::ingest::EventSink>(
    listener: tokio::net::TcpListener,
    sink: Arc<S>,
    store: &Arc<Store>,
    config: &Config,
    stopped: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<std::pin::Pin<Box<dyn Future<Output = ()> + Send>>> {
    use stacks_ledger::ingest::inbox;
    inbox::recover(&*sink, &**store, config.inbox.batch)
        .await
        .context("applying the events logged before this start (table event_inbox)")?;
    let limit = config.event_body_limit;
    Ok(match config.event_ack {
        stacks_ledger::config::EventAck::Applied => Box::pin(observer::run(listener, sink, limit, stopped)),
        stacks_ledger::config::EventAck::Logged => {
            let logged = Arc::new(inbox::Logged::start(sink, Arc::clone(store), config.inbox).await?);
            tracing::info!(queue_bytes = config.inbox.queue_bytes, "events are acknowledged once logged");
            Box::pin(async move {
                observer::run(listener, Arc::clone(&logged), limit, stopped).await;
                logged.close(INBOX_DRAIN).await;
            })
        }
    })
}

/// [`serve`], calling `on_bound` with the bound addresses before serving (the demo starts its
/// chain there; called in the default mode only, where both are bound). `config.mode` says
/// what runs: the event observer (default, `writeonly`), the API (default, `readonly`).
pub async fn serve_with(
    config: &Config,
    store: Arc<Store>,
    shutdown: impl Future<Output = ()> + Send + 'static,
    on_bound: impl FnOnce(Bound),
) -> anyhow::Result<()> {
    let mode = config.mode;
    let events = bind_if(mode.ingests(), &config.events_bind, "node events").await?;
    let api = bind_if(mode.serves_api(), &config.api_bind, "API requests").await?;
    let events_addr = events
        .as_ref()
        .map(|l| l.local_addr())
        .transpose()
        .context("reading the event observer's address")?;
    let api_addr =
        api.as_ref().map(|l| l.local_addr()).transpose().context("reading the API server's address")?;
    tracing::info!("mode: {mode:?}");
    if let Some(addr) = events_addr {
        tracing::info!(
            "event observer listening on {addr} ({}, body limit {} bytes)",
            config.network,
            config.event_body_limit
        );
    }
    if let Some(addr) = api_addr {
        tracing::info!("API listening on http://{addr}/extended");
        match &config.v2.node {
            Some(node) => tracing::info!("/v2: policy {:?}, Stacks node {}", config.v2.policy, node.node),
            None => tracing::info!("/v2: no Stacks node configured; the ledger answers what it can"),
        }
    }

    let (stop, stopped) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop.send(true);
    });
    let until_stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|stopped| *stopped).await;
    };
    // Live updates where the API runs; a `writeonly` process only announces (NOTIFY on
    // PostgreSQL; on SQLite `readonly` processes follow the file).
    let live = if mode.serves_api() {
        Some(
            stacks_ledger::live::Live::start(Arc::clone(&store), config.live.clone())
                .await
                .context("live updates")?,
        )
    } else {
        None
    };
    let feed = match &live {
        Some(live) => live.feed(),
        None => stacks_ledger::live::Feed::announcing_only(&store),
    };
    let (routes, sampled, admission) = match &live {
        Some(live) => {
            let app = stacks_ledger::api::app(Arc::clone(&store), config, live).context("faucets")?;
            let (sampled, admission, cache) = (app.sampled(), app.admission(), app.cache());
            (Some((app.routes, cache)), sampled, Some(admission))
        }
        None => (None, stacks_ledger::api::sampled_without_api(Arc::clone(&store), config), None),
    };
    let flush = feed.clone();
    let observer_stopped = until_stopped(stopped.clone());
    let observer = match events {
        Some(listener) => {
            // A line per block applied: the running server's life sign.
            store.log_blocks(true);
            let sink = Arc::new(stacks_ledger::live::LiveSink::new(Arc::clone(&store), feed));
            Some(match admission {
                // Ingestion first: while the observer applies events, readers get a smaller bound.
                Some(admission) => {
                    let sink = Arc::new(stacks_ledger::api::IngestFirst::new(sink, admission));
                    observer_task(listener, sink, &store, config, observer_stopped).await?
                }
                None => observer_task(listener, sink, &store, config, observer_stopped).await?,
            })
        }
        None => None,
    };
    let observer = async move {
        if let Some(observer) = observer {
            observer.await
        }
    };
    let metrics = match &config.metrics_bind {
        Some(bind) => {
            let listener = observer::bind(bind)
                .await
                .with_context(|| format!("cannot listen for metrics scrapes on {bind}"))?;
            let addr = listener.local_addr().context("reading the metrics server's address")?;
            tracing::info!("metrics on http://{addr}/metrics");
            let routes = stacks_ledger::api::scrape::routes(stacks_ledger::metrics::install(), sampled);
            Some(warp::serve(routes).incoming(listener).graceful(until_stopped(stopped.clone())).run())
        }
        None => None,
    };
    let metrics = async move {
        if let Some(server) = metrics {
            server.await;
        }
    };
    if let (Some(events), Some(api)) = (events_addr, api_addr) {
        on_bound(Bound { events, api });
    }
    // Where this process also ingests, the API runs at a lower CPU priority, so the node's
    // POSTs never queue behind readers (src/api/runtime.rs): its connections on event loops of
    // their own, its computations on a runtime of its own (src/api/server.rs).
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let api_runtime = match (&events_addr, config.load.api_nice) {
        (Some(_), nice) if nice > 0 => {
            Some(stacks_ledger::api::runtime::ApiRuntime::new(cores, nice).context("the API's runtime")?)
        }
        _ => None,
    };
    let api: std::pin::Pin<Box<dyn Future<Output = ()> + Send>> = match (api, routes, api_runtime) {
        (Some(listener), Some((routes, cache)), Some(rt)) => {
            let loops =
                config.load.api_loops.unwrap_or_else(|| stacks_ledger::api::server::default_loops(cores));
            let server = stacks_ledger::api::server::serve(
                listener,
                routes,
                cache,
                &rt,
                loops,
                until_stopped(stopped),
            )
            .context("the API's event loops")?;
            Box::pin(async move {
                server.await;
                drop(rt);
            })
        }
        (Some(listener), Some((routes, _)), None) => {
            Box::pin(warp::serve(routes).incoming(listener).graceful(until_stopped(stopped)).run())
        }
        _ => Box::pin(async {}),
    };
    tokio::join!(observer, api, metrics);
    tracing::info!("stopped serving");
    // The last events' NOTIFYs (PostgreSQL) go out before the pool closes.
    flush.flush(std::time::Duration::from_secs(5)).await;
    // Checkpoints SQLite's WAL and closes the writer's connection and the pool.
    store.close().await;
    tracing::info!("store closed");
    Ok(())
}

/// The public API in offline mode until `shutdown`: no store, no node, no event observer.
pub async fn serve_offline(
    config: &Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let api = observer::bind(&config.api_bind)
        .await
        .with_context(|| format!("cannot listen for API requests on {}", config.api_bind))?;
    let api_addr = api.local_addr().context("reading the API server's address")?;
    tracing::info!(
        "offline mode ({}): Rosetta construction on http://{api_addr}/rosetta/v1/construction",
        config.network
    );
    let routes = stacks_ledger::api::routes_offline(config.network);
    warp::serve(routes).incoming(api).graceful(shutdown).run().await;
    tracing::info!("API stopped");
    Ok(())
}

/// Ctrl-C or (on Unix) SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!("cannot listen for Ctrl-C: {e}");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(e) => {
                tracing::warn!("cannot listen for SIGTERM: {e}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("Ctrl-C: shutting down"),
        () = terminate => tracing::info!("SIGTERM: shutting down"),
    }
}

pub async fn export<L: RawEventLog>(log: &L, args: &ExportArgs) -> anyhow::Result<ExportSummary> {
    Ok(export_events(log, &args.file, args.overwrite_file).await?)
}

pub async fn import<S: EventSink + RawEventLog>(
    sink: &S,
    args: &ImportArgs,
    progress: ProgressMode,
) -> anyhow::Result<ImportSummary> {
    match args.mode {
        // The incumbent's `pruned` (skipping old mempool events) is a no-op at its HEAD too.
        ImportMode::Archival => {}
    }
    let options = ImportOptions { wipe: args.wipe_db, force: args.force, batch_events: args.batch_events };
    Ok(import_events(sink, &args.file, options, progress).await?)
}
