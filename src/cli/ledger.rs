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
use stacks_ledger::ingest::memory::MemorySink;
use stacks_ledger::ingest::progress::ProgressMode;
use stacks_ledger::ingest::{EventSink, RawEventLog};
use stacks_ledger::observer;

/// The store the binary runs on.
pub type LedgerSink = MemorySink;

/// Opens the store named by the configuration.
///
/// THE SEAM for the ledger store: this branch has no store yet, so events are kept in memory
/// and lost on exit. Replace the body with `Store::open(&config.database_url, config.network)`
/// (and [`LedgerSink`] with `Store`) when the store lands.
pub async fn open_sink(config: &Config) -> anyhow::Result<Arc<LedgerSink>> {
    tracing::warn!(
        "no ledger store in this build: events are kept in memory only and lost on exit (--db {} is not used)",
        config.database_url
    );
    Ok(Arc::new(MemorySink::new()))
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
    /// Accepted for the incumbent's command line; only `archival` (apply every event) exists.
    #[arg(long, value_enum, default_value_t = ImportMode::Archival)]
    pub mode: ImportMode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImportMode {
    Archival,
}

/// Runs the event observer (the only server so far) over `sink` until `shutdown`.
pub async fn serve<S: EventSink>(
    config: &Config,
    sink: Arc<S>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let listener = observer::bind(&config.events_bind)
        .await
        .with_context(|| format!("cannot listen for node events on {}", config.events_bind))?;
    let local = listener.local_addr().context("reading the event observer's address")?;
    tracing::info!(
        "event observer listening on {local} ({}, body limit {} bytes)",
        config.network,
        config.event_body_limit
    );
    tracing::info!("no API server in this build yet: {} is not bound", config.api_bind);
    observer::run(listener, sink, config.event_body_limit, shutdown).await;
    tracing::info!("event observer stopped");
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
    let options = ImportOptions { wipe: args.wipe_db, force: args.force };
    Ok(import_events(sink, &args.file, options, progress).await?)
}
