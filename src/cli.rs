//! Command-line interface: argument parsing, logging set-up, the offline codec commands, and
//! dispatch of the ledger commands (`serve`, `import-events`, `export-events`, in [`ledger`]).

mod check_construction;
mod check_data;
mod demo;
mod ledger;
#[cfg(test)]
mod tests;

use std::io::{IsTerminal, Read, Write};

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use serde_json::{json, Value as Json};
use stacks_codec::clarity::Value;
use stacks_codec::tx::Transaction;
use stacks_codec::{decode_hex, to_hex_prefixed};
use stacks_ledger::config::{self, Config, ConfigArgs};
use stacks_ledger::ingest::progress::{ProgressAwareStderr, ProgressMode};
use tracing_appender::non_blocking::{NonBlocking, NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::EnvFilter;

pub use ledger::{ExportArgs, ImportArgs};

#[derive(Debug, Parser)]
#[command(
    name = "stacks-ledger",
    version,
    about = "Rosetta-first integration server for the Stacks blockchain"
)]
pub struct Cli {
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    #[command(flatten)]
    Ledger(LedgerCommand),
    /// Decode a serialized transaction (hex, `-` for stdin) and print it as JSON.
    DecodeTx {
        hex: String,
        #[arg(long, value_enum, default_value_t = Format::Api)]
        format: Format,
    },
    /// Decode a serialized Clarity value (hex, `-` for stdin) and print it as JSON.
    DecodeClarity {
        hex: String,
        #[arg(long, value_enum, default_value_t = Format::Api)]
        format: Format,
    },
    /// Generate a deterministic devnet chain as node events (a TSV log, or POSTs to an observer).
    Devnet(stacks_devnet::DevnetArgs),
    /// Serve a living devnet chain with nothing but the repository: a temporary SQLite store,
    /// some history at once, then a block every few seconds, on every API.
    Demo(demo::DemoArgs),
    /// Print the effective configuration (flags, then environment, then defaults) as JSON,
    /// secrets masked, and exit; an invalid setting is an error naming it.
    Config,
    /// Check a Rosetta server as rosetta-cli `check:data` does (sync, validate, reconcile).
    CheckData(check_data::CheckDataArgs),
    /// Run rosetta-cli `check:construction`'s workflows (create_account, request_funds,
    /// transfer) against a Rosetta server backed by a node.
    CheckConstruction(check_construction::CheckConstructionArgs),
}

/// The commands that work on the store.
#[derive(Debug, Subcommand)]
pub enum LedgerCommand {
    /// Serve the API and the event observer until Ctrl-C or SIGTERM.
    ///
    /// On --api-bind (default 127.0.0.1:3999): the API: Rosetta (/rosetta/v1), /extended, the
    /// node RPC (/v2), live updates (WebSocket /extended/v1/ws, Socket.IO), the faucets, BNS,
    /// and its reference page (/extended/docs). On --events-bind (default 127.0.0.1:3700): the
    /// event observer a Stacks node POSTs its events to (its `[[events_observer]]`). On
    /// --metrics-bind (default 127.0.0.1:9153): Prometheus metrics (/metrics). --mode runs the
    /// API or the event observer alone.
    Serve(ServeArgs),
    /// Write every stored raw event, in id order, as the incumbent API's TSV.
    ExportEvents(ExportArgs),
    /// Replay a TSV raw event log (the incumbent API's `export-events` format) into the store.
    ImportEvents(ImportArgs),
    /// Import the Stacks 1.0 BNS names, namespaces and subdomains (the incumbent's
    /// `BNS_IMPORT_DIR` files, checked against their `.sha256`); resumable and idempotent.
    ImportBns(ledger::ImportBnsArgs),
}

#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServeArgs {
    /// `online` (alias `default`): event observer and API; `readonly`: the API only, over a
    /// database a writer keeps (a replica: see --db-primary); `writeonly`: the event observer
    /// only; `offline`: no database, no node, no event observer, the Rosetta construction
    /// routes that need neither answer [env: STACKS_API_MODE] [default: online]
    #[arg(long, value_enum, value_name = "MODE")]
    pub mode: Option<config::Mode>,
    /// When the node gets its `200`: `applied` (the event is applied to the ledger and
    /// committed) or `logged` (the event is durably logged, and applied right after, batched
    /// with those that arrive meanwhile: a syncing node goes faster) [env:
    /// STACKS_LEDGER_EVENT_ACK] [default: applied]
    #[arg(long, value_enum, value_name = "WHEN")]
    pub event_ack: Option<config::EventAck>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    /// The shape the extended API serves (`/extended/v1/tx/{id}` fields; `{hex, repr, type}`).
    Api,
    /// The reference decoder's full JSON (`decodeTransaction` / `decodeClarityValue`).
    Native,
}

/// Runs the command; `env_file` is what `main` read from `.env`, logged once logging is set up.
pub fn run(cli: Cli, env_file: &config::env_file::Loaded) -> anyhow::Result<()> {
    let env = |name: &str| std::env::var(name).ok();
    // Held to the end of the command: dropping it writes out the lines still queued.
    let _log_writer =
        init_logging(&config::log_filter(&cli.config, env)?, config::log_format(&cli.config, env)?)?;
    env_file.log();
    let out = match cli.command {
        Command::Config => resolve_config(&cli.config, &[])?.masked_json(),
        Command::Demo(args) => {
            let config = resolve_config(&cli.config, &[])?;
            let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
            return runtime.block_on(demo::run(config, args, ledger::shutdown_signal(), |_| {}));
        }
        Command::DecodeTx { hex, format } => decode_tx(&read_arg(hex)?, format)?,
        Command::DecodeClarity { hex, format } => decode_clarity(&read_arg(hex)?, format)?,
        Command::Devnet(args) => return Ok(stacks_devnet::run(args)?),
        Command::CheckData(args) => return check_data::run(args),
        Command::CheckConstruction(args) => return check_construction::run(args),
        Command::Ledger(command) => {
            let reads =
                if matches!(command, LedgerCommand::ImportBns(_)) { &["BNS_IMPORT_DIR"][..] } else { &[] };
            let mut config = resolve_config(&cli.config, reads)?;
            if let LedgerCommand::Serve(args) = &command {
                if let Some(mode) = args.mode {
                    config.mode = mode;
                }
                if let Some(ack) = args.event_ack {
                    config.event_ack = ack;
                }
            }
            let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
            if matches!(command, LedgerCommand::Serve(_)) && config.mode == config::Mode::Offline {
                return runtime.block_on(ledger::serve_offline(&config, ledger::shutdown_signal()));
            }
            return runtime.block_on(run_ledger_command(command, config));
        }
    };
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

/// The configuration from flags and the process environment, warning once about each of the
/// incumbent's variables that is set and has no effect (`reads`: those the command reads
/// itself).
fn resolve_config(args: &ConfigArgs, reads: &[&str]) -> anyhow::Result<Config> {
    let config = Config::from_process_env(args)?;
    config::incumbent_env::warn_ignored(|name| std::env::var(name).ok(), config.v2.node.is_some(), reads);
    Ok(config)
}

async fn run_ledger_command(command: LedgerCommand, config: Config) -> anyhow::Result<()> {
    let sink = match command {
        LedgerCommand::ImportEvents(_) => ledger::open_replay_sink(&config).await?,
        LedgerCommand::Serve(_) if config.mode == config::Mode::Readonly => {
            ledger::open_readonly_sink(&config).await?
        }
        _ => ledger::open_sink(&config).await?,
    };
    match command {
        LedgerCommand::Serve(_) => ledger::serve(&config, sink, ledger::shutdown_signal()).await,
        LedgerCommand::ExportEvents(args) => {
            println!("{}", ledger::export(&*sink, &args).await?);
            Ok(())
        }
        LedgerCommand::ImportEvents(args) => {
            println!("{}", ledger::import(&*sink, &args, ProgressMode::for_stderr()).await?);
            Ok(())
        }
        LedgerCommand::ImportBns(args) => {
            let summary = ledger::import_bns(&sink, &args.dir, ProgressMode::for_stderr()).await?;
            println!("{}", serde_json::to_string_pretty(&summary)?);
            Ok(())
        }
    }
}

/// Logs go to stderr (stdout carries command output), through the writer that keeps them clear
/// of an import's progress bar; as text, or one JSON object a line with the current span's
/// fields (a request's method, route, status, latency, errorTag; an event's path).
///
/// A line is formatted where it is logged and written by a thread of its own, which writes
/// whatever has queued meanwhile at once: with one line per request, writing each line on the
/// request's thread cost a `write(2)` and the stderr lock per request (up to a quarter of cached
/// answers' throughput when stderr is a pipe). Not lossy: when
/// the queue is full, logging waits. The returned guard writes out what is still queued when
/// dropped.
fn init_logging(filter: &str, format: config::LogFormat) -> anyhow::Result<WorkerGuard> {
    let filter = EnvFilter::try_new(filter)
        .with_context(|| format!("log filter `{filter}`"))?
        // Our own request span logs each answer (api::observe); warp's would repeat it.
        .add_directive("warp::filters::trace=off".parse().expect("a valid directive"));
    let (writer, guard) = log_writer(ProgressAwareStderr);
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(writer);
    let installed = match format {
        config::LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).try_init(),
        config::LogFormat::Json => builder.json().with_current_span(true).with_span_list(false).try_init(),
    };
    installed.map_err(|e| anyhow::anyhow!("cannot set up logging: {e}"))?;
    Ok(guard)
}

/// `out` behind the log's writing thread; the lines of one batch reach `out` as one write.
fn log_writer<W: Write + Send + 'static>(out: W) -> (NonBlocking, WorkerGuard) {
    NonBlockingBuilder::default()
        .lossy(false)
        .thread_name("log-writer")
        .finish(std::io::BufWriter::with_capacity(64 * 1024, out))
}

/// The argument itself, or standard input when it is `-`.
fn read_arg(arg: String) -> anyhow::Result<String> {
    if arg != "-" {
        return Ok(arg);
    }
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).context("reading standard input")?;
    Ok(s.trim().to_string())
}

pub fn decode_tx(hex: &str, format: Format) -> anyhow::Result<Json> {
    let bytes = decode_hex(hex.trim())?;
    let tx = Transaction::deserialize(&bytes).context("decoding transaction")?;
    Ok(match format {
        Format::Native => tx.to_decoded_json(),
        Format::Api => {
            let mut fields = serde_json::Map::new();
            fields.insert("tx_id".into(), json!(to_hex_prefixed(&tx.txid())));
            fields.extend(tx.api_tx_fields());
            Json::Object(fields)
        }
    })
}

pub fn decode_clarity(hex: &str, format: Format) -> anyhow::Result<Json> {
    let bytes = decode_hex(hex.trim())?;
    let value = Value::deserialize(&bytes).context("decoding Clarity value")?;
    Ok(match format {
        Format::Native => value.to_decoded_json(),
        Format::Api => json!({
            "hex": to_hex_prefixed(&bytes),
            "repr": value.repr(),
            "type": value.type_name(),
        }),
    })
}
