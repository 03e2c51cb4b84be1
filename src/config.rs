//! Run-time configuration: command-line flags first, then the incumbent API's environment
//! variables (so an existing deployment's settings carry over), then defaults.
//!
//! The environment is passed in as a lookup function, so tests never touch the process
//! environment. An empty variable counts as unset, as with the incumbent's dotenv files.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use stacks_live::LiveConfig;
use stacks_node_proxy::ProxyConfig;
use thiserror::Error;
use tracing_subscriber::EnvFilter;

pub mod env_file;
pub mod incumbent_env;

pub const DEFAULT_DATABASE_URL: &str = "sqlite://./data/stacks-ledger.db";
pub const DEFAULT_EVENTS_HOST: &str = "127.0.0.1";
pub const DEFAULT_EVENTS_PORT: u16 = 3700;
/// The incumbent listens on 0.0.0.0 by default; we only open to the network when told to.
pub const DEFAULT_API_HOST: &str = "127.0.0.1";
pub const DEFAULT_API_PORT: u16 = 3999;
/// The incumbent's default: 500 MB (the mainnet genesis block is large).
pub const DEFAULT_EVENT_BODY_LIMIT: u64 = 500_000_000;
pub const DEFAULT_LOG_FILTER: &str = "info";
/// The incumbent's Prometheus port.
pub const DEFAULT_METRICS_BIND: &str = "127.0.0.1:9153";
/// Blocks behind the node's tip a ready ledger may be: a node announces a block a moment
/// before its events reach us, so 0 would flap.
pub const DEFAULT_READY_MAX_LAG: u64 = 2;

/// The incumbent's PostgreSQL defaults, for the parts of `PG_*` left unset.
const PG_DEFAULT_HOST: &str = "127.0.0.1";
const PG_DEFAULT_PORT: u16 = 5490;
const PG_DEFAULT_USER: &str = "postgres";
const PG_DEFAULT_PASSWORD: &str = "postgres";
const PG_DEFAULT_DATABASE: &str = "stacks_blockchain_api";
const PG_DISCRETE_VARS: [&str; 6] = ["PG_HOST", "PG_PORT", "PG_USER", "PG_PASSWORD", "PG_DATABASE", "PG_SSL"];

/// Everything but RFC 3986 "unreserved" characters is escaped in URL userinfo and path parts.
const URL_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// The flags that override the environment. They are global: they can be given before or
/// after the subcommand.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Configuration (flag, else environment, else default)")]
pub struct ConfigArgs {
    /// Database URL, `sqlite://PATH` or `postgres://…` [env: DATABASE_URL, else PG_CONNECTION_URI,
    /// else PG_HOST/PG_PORT/PG_USER/PG_PASSWORD/PG_DATABASE/PG_SSL] [default:
    /// sqlite://./data/stacks-ledger.db]
    #[arg(long, global = true, value_name = "URL")]
    pub db: Option<String>,
    /// The PostgreSQL primary when `--db` is a streaming replica (`serve --mode readonly`)
    /// [env: PG_PRIMARY_CONNECTION_URI, else PG_PRIMARY_HOST/PORT/USER/PASSWORD/DATABASE/SSL,
    /// each falling back to its PG_ variable] [default: none]
    #[arg(long, global = true, value_name = "URL")]
    pub db_primary: Option<String>,
    /// Stacks network [env: STACKS_CHAIN_ID, 0x00000001 or 0x80000000] [default: testnet]
    #[arg(long, global = true)]
    pub network: Option<Network>,
    /// Event observer listen address [env: STACKS_CORE_EVENT_HOST, STACKS_CORE_EVENT_PORT]
    /// [default: 127.0.0.1:3700]
    #[arg(long, global = true, value_name = "HOST:PORT")]
    pub events_bind: Option<String>,
    /// API listen address [env: STACKS_BLOCKCHAIN_API_HOST, STACKS_BLOCKCHAIN_API_PORT]
    /// [default: 127.0.0.1:3999]
    #[arg(long, global = true, value_name = "HOST:PORT")]
    pub api_bind: Option<String>,
    /// Largest event body accepted, in bytes [env: STACKS_CORE_EVENT_BODY_LIMIT]
    /// [default: 500000000]
    #[arg(long, global = true, value_name = "BYTES")]
    pub event_body_limit: Option<u64>,
    /// Log level (error, warn, info, debug, trace, or the incumbent's http, verbose, silly,
    /// silent) or a tracing filter such as `info,stacks_ledger=debug` [env:
    /// STACKS_API_LOG_LEVEL, else RUST_LOG] [default: info]
    #[arg(long, global = true, value_name = "LEVEL")]
    pub log_level: Option<String>,
    /// The Stacks node /v2 requests go to, as a URL (`http://127.0.0.1:20443`) [env:
    /// STACKS_CORE_PROXY_HOST/PORT, else STACKS_CORE_RPC_HOST/PORT] [default: none: the ledger
    /// answers /v2]
    #[arg(long, global = true, value_name = "URL")]
    pub node_rpc: Option<String>,
    /// Who answers the /v2 routes the ledger can answer: proxy, ledger or auto [env:
    /// STACKS_LEDGER_V2_POLICY] [default: auto with a node, ledger without]
    #[arg(long, global = true, value_name = "POLICY")]
    pub v2_policy: Option<V2Policy>,
    /// Bound on connecting to the node, in ms [env: STACKS_CORE_PROXY_CONNECT_TIMEOUT_MS]
    /// [default: 5000]
    #[arg(long, global = true, value_name = "MS")]
    pub node_connect_timeout_ms: Option<u64>,
    /// Bound on waiting for the node (response head; pause within a streamed body), in ms [env:
    /// STACKS_CORE_PROXY_TIMEOUT_MS] [default: 30000]
    #[arg(long, global = true, value_name = "MS")]
    pub node_timeout_ms: Option<u64>,
    /// File of extra endpoints every accepted POST /v2/transactions is also sent to [env:
    /// STACKS_API_EXTRA_TX_ENDPOINTS_FILE]
    #[arg(long, global = true, value_name = "FILE")]
    pub extra_tx_endpoints_file: Option<String>,
    /// The incumbent's minimum-fee rewrite of POST /v2/fees/transaction (true/false) [env:
    /// STACKS_CORE_FEE_ESTIMATOR_ENABLED] [default: false]
    #[arg(long, global = true, value_name = "BOOL")]
    pub fee_rewrite: Option<bool>,
    /// The bare integer GET /v2/fees/transfer answers from the ledger [env:
    /// STACKS_LEDGER_V2_TRANSFER_FEE] [default: 1]
    #[arg(long, global = true, value_name = "USTX")]
    pub transfer_fee: Option<u64>,
    /// Where Prometheus metrics are served (`/metrics`), or `off` [env:
    /// STACKS_LEDGER_METRICS_BIND] [default: 127.0.0.1:9153]
    #[arg(long, global = true, value_name = "HOST:PORT")]
    pub metrics_bind: Option<String>,
    /// How many blocks the ledger may be behind the node's tip and still be ready (`GET /ready`,
    /// the `status` of `/extended`) [env: STACKS_LEDGER_READY_MAX_LAG] [default: 2]
    #[arg(long, global = true, value_name = "BLOCKS")]
    pub ready_max_lag: Option<u64>,
    /// Log lines as `text` or `json` (one object a line) [env: STACKS_LEDGER_LOG_FORMAT]
    /// [default: text]
    #[arg(long, global = true, value_name = "FORMAT")]
    pub log_format: Option<LogFormat>,
    /// Size of the /extended response cache in MiB, 0 to disable it [env:
    /// STACKS_LEDGER_RESPONSE_CACHE_MB] [default: 64]
    #[arg(long, global = true, value_name = "MIB")]
    pub response_cache_mb: Option<u64>,
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object a line, with the span fields (for log shippers).
    Json,
}

/// How `serve` runs (the incumbent's `STACKS_API_MODE`, plus `offline`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Mode {
    /// Event observer and the whole API over the store (the incumbent's `default`).
    #[default]
    #[value(alias = "default")]
    Online,
    /// The API only: no event observer, no migrations, never writes the ledger. Reads the
    /// database it is given (a PostgreSQL replica, or the SQLite file a writer process
    /// updates); what the API itself records (faucet requests, accepted broadcasts) goes to the
    /// primary (`--db-primary`) when one is named.
    Readonly,
    /// The event observer and ingestion only: no API.
    Writeonly,
    /// No store, no node, no event observer: Rosetta construction derive, preprocess, payloads,
    /// combine, parse and hash; everything else answers that it is offline.
    Offline,
}

/// When the event observer sends the node its `200` (`STACKS_LEDGER_EVENT_ACK`, `serve
/// --event-ack`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum EventAck {
    /// Once the event is applied to the ledger and committed (the incumbent's behaviour).
    #[default]
    Applied,
    /// Once the event is durably logged; it is applied right after, in order, batched with
    /// the events that arrive meanwhile (`ingest::inbox`): a syncing node goes faster.
    Logged,
}

impl Mode {
    /// Whether this process runs the event observer (and so migrates and writes the ledger).
    pub fn ingests(self) -> bool {
        matches!(self, Mode::Online | Mode::Writeonly)
    }

    /// Whether this process serves the API over a store.
    pub fn serves_api(self) -> bool {
        matches!(self, Mode::Online | Mode::Readonly)
    }
}

pub use crate::faucet::{FaucetConfig, FaucetConfigError};
pub use crate::ingest::inbox::InboxConfig;
pub use crate::ledger::Network;
pub use crate::v2::{V2Policy, V2Settings};

/// A listen address. The host may be a name; it is resolved when bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindAddr {
    pub host: String,
    pub port: u16,
}

impl fmt::Display for BindAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    pub database_url: String,
    pub network: Network,
    pub events_bind: BindAddr,
    pub api_bind: BindAddr,
    pub event_body_limit: u64,
    /// A `tracing_subscriber::EnvFilter` directive, already checked.
    pub log_filter: String,
    /// The `/v2` node RPC: node, policy, ledger answers. Its node is the one node setting:
    /// Rosetta construction, the faucet and readiness use it too.
    pub v2: V2Settings,
    pub mode: Mode,
    /// When the event observer answers the node: once an event is applied, or once it is
    /// logged (`ingest::inbox`).
    pub event_ack: EventAck,
    /// The logged events' queue (`event_ack = logged`).
    pub inbox: InboxConfig,
    /// The PostgreSQL primary, when `database_url` is a read-only replica: a `readonly`
    /// process writes there, and listens there for live updates.
    pub db_primary: Option<String>,
    /// The faucets; their node is `v2.node` unless `STACKS_FAUCET_NODE_HOST`/`PORT` name another.
    pub faucet: FaucetConfig,
    /// Connection limits of the live updates.
    pub live: LiveConfig,
    /// The `/extended` response cache's bound in bytes (0: off).
    pub response_cache_bytes: usize,
    /// Behaviour under load: stale answers, admission control.
    pub load: LoadConfig,
    /// `None`: no metrics listener.
    pub metrics_bind: Option<BindAddr>,
    /// Blocks behind the node a ready ledger may be.
    pub ready_max_lag: u64,
    pub log_format: LogFormat,
}

/// A setting that cannot be used, named as the user gave it.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("{source_name} `{value}`: {reason}")]
    Invalid { source_name: String, value: String, reason: String },
    #[error("PG_CONNECTION_URI cannot be combined with {0} (the incumbent refuses this too)")]
    PgUriWithDiscreteVars(&'static str),
    #[error("Stacks node settings: {0}")]
    Node(String),
    #[error("the /v2 policy `{0}` needs a Stacks node (--node-rpc, or STACKS_CORE_RPC_HOST)")]
    PolicyNeedsNode(&'static str),
    #[error("faucet settings: {0}")]
    Faucet(#[from] FaucetConfigError),
    #[error("live update settings: {0}")]
    Live(String),
}

/// Where a setting came from, for error messages.
#[derive(Clone, Copy)]
enum Source {
    Flag(&'static str),
    Env(&'static str),
}

impl Source {
    fn invalid(self, value: &str, reason: impl Into<String>) -> ConfigError {
        let source_name = match self {
            Source::Flag(name) => format!("--{name}"),
            Source::Env(name) => name.to_owned(),
        };
        ConfigError::Invalid { source_name, value: value.to_owned(), reason: reason.into() }
    }
}

impl Config {
    /// Resolves the configuration with the process environment.
    pub fn from_process_env(args: &ConfigArgs) -> Result<Config, ConfigError> {
        Config::resolve(args, |name| std::env::var(name).ok())
    }

    /// Resolves the configuration: flag, else environment variable, else default.
    pub fn resolve(args: &ConfigArgs, env: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let v2 = v2_settings(args, &env)?;
        let node_url = v2.node.as_ref().map(|n| n.node.as_str().trim_end_matches('/').to_owned());
        Ok(Config {
            database_url: database_url(args, &env)?,
            db_primary: db_primary(args, &env)?,
            network: network(args, &env)?,
            events_bind: bind_addr(
                args.events_bind.as_deref().map(|v| (v, Source::Flag("events-bind"))),
                ("STACKS_CORE_EVENT_HOST", DEFAULT_EVENTS_HOST),
                ("STACKS_CORE_EVENT_PORT", DEFAULT_EVENTS_PORT),
                &env,
            )?,
            api_bind: bind_addr(
                args.api_bind.as_deref().map(|v| (v, Source::Flag("api-bind"))),
                ("STACKS_BLOCKCHAIN_API_HOST", DEFAULT_API_HOST),
                ("STACKS_BLOCKCHAIN_API_PORT", DEFAULT_API_PORT),
                &env,
            )?,
            event_body_limit: match (args.event_body_limit, env("STACKS_CORE_EVENT_BODY_LIMIT")) {
                (Some(limit), _) => limit,
                (None, Some(v)) => parse_number(&v, Source::Env("STACKS_CORE_EVENT_BODY_LIMIT"))?,
                (None, None) => DEFAULT_EVENT_BODY_LIMIT,
            },
            log_filter: log_filter(args, env)?,
            faucet: FaucetConfig::resolve(env, node_url)?,
            v2,
            mode: mode(&env)?,
            event_ack: event_ack(&env)?,
            inbox: inbox_config(&env)?,
            live: LiveConfig::resolve(env).map_err(|e| ConfigError::Live(e.to_string()))?,
            response_cache_bytes: response_cache_bytes(args, &env)?,
            load: LoadConfig::resolve(&env)?,
            metrics_bind: match (&args.metrics_bind, env("STACKS_LEDGER_METRICS_BIND")) {
                (Some(v), _) => optional_bind(v, Source::Flag("metrics-bind"))?,
                (None, Some(v)) => optional_bind(&v, Source::Env("STACKS_LEDGER_METRICS_BIND"))?,
                (None, None) => optional_bind(DEFAULT_METRICS_BIND, Source::Flag("metrics-bind"))?,
            },
            ready_max_lag: match (args.ready_max_lag, env("STACKS_LEDGER_READY_MAX_LAG")) {
                (Some(n), _) => n,
                (None, Some(v)) => parse_number(&v, Source::Env("STACKS_LEDGER_READY_MAX_LAG"))?,
                (None, None) => DEFAULT_READY_MAX_LAG,
            },
            log_format: log_format(args, env)?,
        })
    }

    /// The effective configuration as JSON, secrets masked (`stacks-ledger config`).
    pub fn masked_json(&self) -> serde_json::Value {
        let node = self.v2.node.as_ref();
        let bind = |b: &Option<BindAddr>| b.as_ref().map(|b| b.to_string());
        serde_json::json!({
            "database_url": redact_url(&self.database_url),
            "db_primary": self.db_primary.as_deref().map(redact_url),
            "network": self.network.to_string(),
            "mode": format!("{:?}", self.mode).to_ascii_lowercase(),
            "event_ack": format!("{:?}", self.event_ack).to_ascii_lowercase(),
            "event_queue_bytes": self.inbox.queue_bytes,
            "events_bind": self.events_bind.to_string(),
            "event_body_limit": self.event_body_limit,
            "api_bind": self.api_bind.to_string(),
            "metrics_bind": bind(&self.metrics_bind),
            "log_filter": self.log_filter,
            "log_format": format!("{:?}", self.log_format).to_ascii_lowercase(),
            "node": {
                "rpc": node.map(|n| redact_url(n.node.as_str())),
                "v2_policy": format!("{:?}", self.v2.effective_policy()).to_ascii_lowercase(),
                "connect_timeout_ms": node.map(|n| n.connect_timeout.as_millis() as u64),
                "timeout_ms": node.map(|n| n.request_timeout.as_millis() as u64),
                "body_limit": node.map(|n| n.body_limit),
                "extra_tx_endpoints": node.map(|n| n.extra_broadcast.iter().map(|u| redact_url(u.as_str())).collect::<Vec<_>>()),
                "fee_rewrite": node.map(|n| n.min_fee_rewrite.is_some()),
                "transfer_fee": self.v2.transfer_fee,
            },
            "ready_max_lag": self.ready_max_lag,
            "response_cache_bytes": self.response_cache_bytes,
            "load": {
                "cache_stale_ms": self.load.cache_stale.as_millis() as u64,
                "cache_refresh": self.load.cache_refresh,
                "admission_limit": self.load.admission.limit,
                "admission_ingest_limit": self.load.admission.ingest_limit,
                "admission_queue": self.load.admission.queue,
                "admission_wait_ms": self.load.admission.wait.as_millis() as u64,
                "api_nice": self.load.api_nice,
                "api_loops": self.load.api_loops,
            },
            "live": {
                "ping_interval_s": self.live.ping_interval.as_secs(),
                "ping_timeout_s": self.live.ping_timeout.as_secs(),
                "message_timeout_s": self.live.message_timeout.as_secs(),
                "queue": self.live.queue,
                "replay_window": self.live.replay_window,
                "idle_grace_s": self.live.idle_grace.as_secs(),
            },
            "faucet": {
                "stx_enabled": self.faucet.stx_enabled,
                "btc_enabled": self.faucet.btc_enabled,
                "rate_limit_enabled": self.faucet.rate_limit_enabled,
                "node": self.faucet.node_url.as_deref().map(redact_url),
                "stx_keys": if self.faucet.stx_keys.is_empty() { "none".to_owned() } else { format!("{} (masked)", self.faucet.stx_keys.len()) },
                "btc_rpc": redact_url(&self.faucet.btc_rpc.url),
                "btc_rpc_user": self.faucet.btc_rpc.user,
                "btc_rpc_password": "***",
                "btc_key": if self.faucet.btc_key.is_some() { "(masked)" } else { "none" },
            },
        })
    }
}

/// A URL without the password in its user part, for logs, errors and `stacks-ledger config`.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let creds = &url[scheme + 3..at];
            match creds.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

/// The log format alone, like [`log_filter`]: logging starts first.
pub fn log_format(args: &ConfigArgs, env: impl Fn(&str) -> Option<String>) -> Result<LogFormat, ConfigError> {
    if let Some(format) = args.log_format {
        return Ok(format);
    }
    let Some(v) = env("STACKS_LEDGER_LOG_FORMAT").filter(|v| !v.trim().is_empty()) else {
        return Ok(LogFormat::Text);
    };
    LogFormat::from_str(v.trim(), true)
        .map_err(|_| Source::Env("STACKS_LEDGER_LOG_FORMAT").invalid(&v, "expected text or json"))
}

fn response_cache_bytes(
    args: &ConfigArgs,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<usize, ConfigError> {
    let mb = match (args.response_cache_mb, env(CACHE_MB_ENV)) {
        (Some(mb), _) => mb,
        (None, Some(v)) => parse_number(&v, Source::Env(CACHE_MB_ENV))?,
        (None, None) => DEFAULT_CACHE_MB,
    };
    Ok(usize::try_from(mb.saturating_mul(1 << 20)).unwrap_or(usize::MAX))
}

/// The environment variable sizing the API's response cache, in MiB (0 disables it).
pub const CACHE_MB_ENV: &str = "STACKS_LEDGER_RESPONSE_CACHE_MB";
/// The response cache's default size, in MiB.
pub const DEFAULT_CACHE_MB: u64 = 64;
/// The default bound on a stale answer's age in the response cache (see `api::cache`).
pub const DEFAULT_STALE: Duration = Duration::from_millis(1000);
/// The default number of the response cache's answers recomputed ahead when their generation
/// is left.
pub const DEFAULT_REFRESH: usize = 8;
/// The default niceness added to the API's threads (0–19; 0 keeps the API on the caller's runtime).
pub const DEFAULT_NICE: i32 = 10;

/// Admission control's bounds (see `docs/configuration.md`, "Load"; enforced by `api::admission`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdmissionConfig {
    /// Requests doing database work at once; `None`: the store pool's size; `Some(0)`: no bound.
    pub limit: Option<usize>,
    /// The bound while an event is being applied; `None`: a quarter of `limit`, at least 1.
    pub ingest_limit: Option<usize>,
    /// Requests that may wait for a slot; beyond, they are shed at once.
    pub queue: usize,
    /// How long a request may wait for a slot before it is shed.
    pub wait: Duration,
}

/// Deeper than the connections a busy server sees: a shed client that retries at once (most do)
/// costs more CPU than one that waits, so the wait bound, not the queue, bounds latency.
pub const DEFAULT_QUEUE: usize = 4096;
pub const DEFAULT_WAIT: Duration = Duration::from_millis(500);

impl Default for AdmissionConfig {
    fn default() -> Self {
        AdmissionConfig { limit: None, ingest_limit: None, queue: DEFAULT_QUEUE, wait: DEFAULT_WAIT }
    }
}

/// Behaviour under load (environment only; `docs/configuration.md`, "Under load").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadConfig {
    /// How old a stale answer of the response cache may be (zero: never stale).
    pub cache_stale: Duration,
    /// How many of the response cache's most requested answers are recomputed ahead when
    /// their generation is left (0: none).
    pub cache_refresh: usize,
    pub admission: AdmissionConfig,
    /// Niceness added to the API's own runtime threads where the event observer runs in the
    /// same process (0: the API shares the observer's runtime).
    pub api_nice: i32,
    /// How many event loops serve the API's connections there (the API's own server; `None`:
    /// one per four cores).
    pub api_loops: Option<usize>,
}

impl LoadConfig {
    fn resolve(env: &impl Fn(&str) -> Option<String>) -> Result<LoadConfig, ConfigError> {
        let number =
            |name: &'static str| env(name).map(|v| parse_number::<u64>(&v, Source::Env(name))).transpose();
        let count = |name: &'static str| Ok::<_, ConfigError>(number(name)?.map(|n| n as usize));
        let defaults = AdmissionConfig::default();
        Ok(LoadConfig {
            cache_stale: number("STACKS_LEDGER_CACHE_STALE_MS")?.map_or(DEFAULT_STALE, Duration::from_millis),
            cache_refresh: count("STACKS_LEDGER_CACHE_REFRESH")?.unwrap_or(DEFAULT_REFRESH),
            admission: AdmissionConfig {
                limit: count("STACKS_LEDGER_ADMISSION_LIMIT")?,
                ingest_limit: count("STACKS_LEDGER_ADMISSION_INGEST_LIMIT")?,
                queue: count("STACKS_LEDGER_ADMISSION_QUEUE")?.unwrap_or(defaults.queue),
                wait: number("STACKS_LEDGER_ADMISSION_WAIT_MS")?.map_or(defaults.wait, Duration::from_millis),
            },
            api_nice: match number("STACKS_LEDGER_API_NICE")? {
                None => DEFAULT_NICE,
                Some(n) if n <= 19 => n as i32,
                Some(n) => {
                    return Err(Source::Env("STACKS_LEDGER_API_NICE")
                        .invalid(&n.to_string(), "a nice value is 0 to 19"))
                }
            },
            api_loops: match count("STACKS_LEDGER_API_LOOPS")? {
                Some(0) => {
                    return Err(
                        Source::Env("STACKS_LEDGER_API_LOOPS").invalid("0", "at least one loop serves")
                    )
                }
                loops => loops,
            },
        })
    }
}

impl Default for LoadConfig {
    fn default() -> Self {
        LoadConfig {
            cache_stale: DEFAULT_STALE,
            cache_refresh: DEFAULT_REFRESH,
            admission: AdmissionConfig::default(),
            api_nice: DEFAULT_NICE,
            api_loops: None,
        }
    }
}

/// A listen address, or `off`.
fn optional_bind(value: &str, source: Source) -> Result<Option<BindAddr>, ConfigError> {
    if value.trim().eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    parse_host_port(value, source).map(Some)
}

/// The log filter alone: logging starts before the rest of the configuration is needed (and
/// the offline commands need nothing else).
pub fn log_filter(args: &ConfigArgs, env: impl Fn(&str) -> Option<String>) -> Result<String, ConfigError> {
    let (value, source) = match (&args.log_level, env("STACKS_API_LOG_LEVEL"), env("RUST_LOG")) {
        (Some(v), _, _) => (v.clone(), Source::Flag("log-level")),
        (None, Some(v), _) => (v, Source::Env("STACKS_API_LOG_LEVEL")),
        (None, None, Some(v)) => (v, Source::Env("RUST_LOG")),
        (None, None, None) => return Ok(DEFAULT_LOG_FILTER.to_owned()),
    };
    let value = value.trim();
    // The incumbent's level names (winston/pino), mapped to the nearest tracing level.
    let mapped = match value.to_ascii_lowercase().as_str() {
        "fatal" | "error" => "error",
        "warn" | "warning" => "warn",
        "info" => "info",
        "http" | "verbose" | "debug" => "debug",
        "silly" | "trace" => "trace",
        "silent" | "off" | "none" => "off",
        _ => {
            EnvFilter::try_new(value)
                .map_err(|e| source.invalid(value, format!("not a log level or filter: {e}")))?;
            return Ok(value.to_owned());
        }
    };
    Ok(mapped.to_owned())
}

fn database_url(args: &ConfigArgs, env: &impl Fn(&str) -> Option<String>) -> Result<String, ConfigError> {
    if let Some(url) = &args.db {
        return checked_url(url, Source::Flag("db"));
    }
    if let Some(url) = env("DATABASE_URL") {
        return checked_url(&url, Source::Env("DATABASE_URL"));
    }
    let discrete = PG_DISCRETE_VARS.into_iter().find(|name| env(name).is_some());
    if let Some(uri) = env("PG_CONNECTION_URI") {
        if let Some(name) = discrete {
            return Err(ConfigError::PgUriWithDiscreteVars(name));
        }
        return checked_url(&uri, Source::Env("PG_CONNECTION_URI"));
    }
    if discrete.is_none() {
        return Ok(DEFAULT_DATABASE_URL.to_owned());
    }
    pg_url_from_vars(env)
}

/// The primary: `--db-primary`, else `PG_PRIMARY_CONNECTION_URI`, else the incumbent's
/// `PG_PRIMARY_*` variables when one is set (each falling back to its `PG_*` one, as the
/// incumbent's connection settings do).
fn db_primary(
    args: &ConfigArgs,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Option<String>, ConfigError> {
    let checked_pg = |url: &str, source: Source| {
        let url = checked_url(url, source)?;
        if url.starts_with("sqlite:") {
            return Err(source.invalid(&url, "a primary is a postgres:// URL (SQLite has no replicas)"));
        }
        Ok(Some(url))
    };
    if let Some(url) = &args.db_primary {
        return checked_pg(url, Source::Flag("db-primary"));
    }
    if let Some(uri) = env("PG_PRIMARY_CONNECTION_URI") {
        return checked_pg(&uri, Source::Env("PG_PRIMARY_CONNECTION_URI"));
    }
    let primary_var = |name: &str| format!("PG_PRIMARY_{}", &name[3..]);
    if !PG_DISCRETE_VARS.iter().any(|name| env(&primary_var(name)).is_some()) {
        return Ok(None);
    }
    pg_url_from_vars(|name| env(&primary_var(name)).or_else(|| env(name))).map(Some)
}

/// A PostgreSQL URL from the incumbent's discrete variables, each read through `var` (given
/// the `PG_*` name).
fn pg_url_from_vars(var: impl Fn(&str) -> Option<String>) -> Result<String, ConfigError> {
    let host = var("PG_HOST").unwrap_or_else(|| PG_DEFAULT_HOST.to_owned());
    let port = match var("PG_PORT") {
        Some(p) => parse_number::<u16>(&p, Source::Env("PG_PORT"))?,
        None => PG_DEFAULT_PORT,
    };
    let user = var("PG_USER").unwrap_or_else(|| PG_DEFAULT_USER.to_owned());
    let password = var("PG_PASSWORD").unwrap_or_else(|| PG_DEFAULT_PASSWORD.to_owned());
    let database = var("PG_DATABASE").unwrap_or_else(|| PG_DEFAULT_DATABASE.to_owned());
    let ssl = match var("PG_SSL") {
        Some(v) => parse_bool(&v, Source::Env("PG_SSL"))?,
        None => false,
    };
    let host = if host.contains(':') && !host.starts_with('[') { format!("[{host}]") } else { host };
    let enc = |s: &str| utf8_percent_encode(s, URL_COMPONENT).to_string();
    let mut url = format!("postgres://{}:{}@{host}:{port}/{}", enc(&user), enc(&password), enc(&database));
    if ssl {
        url.push_str("?sslmode=require");
    }
    Ok(url)
}

/// The variables the node proxy reads (`ProxyConfig::from_env`).
const PROXY_VARS: [&str; 14] = [
    "STACKS_CORE_PROXY_HOST",
    "STACKS_CORE_PROXY_PORT",
    "STACKS_CORE_RPC_HOST",
    "STACKS_CORE_RPC_PORT",
    "STACKS_API_EXTRA_TX_ENDPOINTS_FILE",
    "STACKS_CORE_PROXY_BODY_LIMIT",
    "STACKS_CORE_PROXY_CONNECT_TIMEOUT_MS",
    "STACKS_CORE_PROXY_TIMEOUT_MS",
    "STACKS_CORE_FEE_ESTIMATOR_ENABLED",
    "STACKS_CORE_FEE_ESTIMATION_MODIFIER",
    "STACKS_CORE_FEE_PAST_TENURE_FULLNESS_WINDOW",
    "STACKS_CORE_FEE_PAST_DIMENSION_FULLNESS_THRESHOLD",
    "STACKS_CORE_FEE_CURRENT_DIMENSION_FULLNESS_THRESHOLD",
    "STACKS_CORE_FEE_CURRENT_BLOCK_COUNT_MINIMUM",
];
const NODE_VARS: [&str; 4] =
    ["STACKS_CORE_PROXY_HOST", "STACKS_CORE_PROXY_PORT", "STACKS_CORE_RPC_HOST", "STACKS_CORE_RPC_PORT"];

/// The `/v2` settings. A node is configured only when named (flag or one of the incumbent's node
/// variables): the incumbent always proxies, to 127.0.0.1:20443 by default, but without a node
/// named here the ledger answers instead.
fn v2_settings(args: &ConfigArgs, env: &impl Fn(&str) -> Option<String>) -> Result<V2Settings, ConfigError> {
    let has_node = args.node_rpc.is_some() || NODE_VARS.iter().any(|v| env(v).is_some());
    let node = if has_node {
        let mut vars: HashMap<String, String> =
            PROXY_VARS.iter().filter_map(|v| env(v).map(|value| (v.to_string(), value))).collect();
        if let Some(url) = &args.node_rpc {
            let url = url.trim();
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(Source::Flag("node-rpc").invalid(url, "expected an http:// or https:// URL"));
            }
            // The flag names the whole node: the variables' ports do not apply to it.
            vars.insert("STACKS_CORE_PROXY_HOST".into(), url.to_owned());
            vars.remove("STACKS_CORE_PROXY_PORT");
            vars.remove("STACKS_CORE_RPC_PORT");
        }
        let flags = [
            ("STACKS_CORE_PROXY_CONNECT_TIMEOUT_MS", args.node_connect_timeout_ms.map(|v| v.to_string())),
            ("STACKS_CORE_PROXY_TIMEOUT_MS", args.node_timeout_ms.map(|v| v.to_string())),
            ("STACKS_API_EXTRA_TX_ENDPOINTS_FILE", args.extra_tx_endpoints_file.clone()),
            ("STACKS_CORE_FEE_ESTIMATOR_ENABLED", args.fee_rewrite.map(|v| v.to_string())),
        ];
        for (var, value) in flags {
            if let Some(value) = value {
                vars.insert(var.to_owned(), value);
            }
        }
        Some(Arc::new(ProxyConfig::from_env(&vars).map_err(|e| ConfigError::Node(e.to_string()))?))
    } else {
        None
    };
    let policy = match (args.v2_policy, env("STACKS_LEDGER_V2_POLICY")) {
        (Some(p), _) => Some(p),
        (None, Some(v)) => Some(V2Policy::from_str(v.trim(), true).map_err(|_| {
            Source::Env("STACKS_LEDGER_V2_POLICY").invalid(&v, "expected proxy, ledger or auto")
        })?),
        (None, None) => None,
    };
    let policy = match (policy, &node) {
        (Some(p @ (V2Policy::Proxy | V2Policy::Auto)), None) => {
            return Err(ConfigError::PolicyNeedsNode(if p == V2Policy::Proxy { "proxy" } else { "auto" }))
        }
        (Some(p), _) => p,
        // The default (docs/configuration.md): the ledger where it is exact and caught up, else
        // the node.
        (None, Some(_)) => V2Policy::Auto,
        (None, None) => V2Policy::Ledger,
    };
    let transfer_fee = match (args.transfer_fee, env("STACKS_LEDGER_V2_TRANSFER_FEE")) {
        (Some(fee), _) => fee,
        (None, Some(v)) => parse_number(&v, Source::Env("STACKS_LEDGER_V2_TRANSFER_FEE"))?,
        (None, None) => crate::v2::DEFAULT_TRANSFER_FEE,
    };
    Ok(V2Settings { node, policy, transfer_fee })
}

/// `STACKS_LEDGER_EVENT_ACK`; `serve --event-ack` overrides it.
fn event_ack(env: &impl Fn(&str) -> Option<String>) -> Result<EventAck, ConfigError> {
    let Some(value) = env("STACKS_LEDGER_EVENT_ACK") else { return Ok(EventAck::Applied) };
    match value.trim().to_ascii_lowercase().as_str() {
        "applied" => Ok(EventAck::Applied),
        "logged" => Ok(EventAck::Logged),
        _ => Err(Source::Env("STACKS_LEDGER_EVENT_ACK").invalid(&value, "expected applied or logged")),
    }
}

/// `STACKS_LEDGER_EVENT_QUEUE_MB`: the logged events' queue bound.
fn inbox_config(env: &impl Fn(&str) -> Option<String>) -> Result<InboxConfig, ConfigError> {
    const NAME: &str = "STACKS_LEDGER_EVENT_QUEUE_MB";
    let mut config = InboxConfig::default();
    if let Some(v) = env(NAME) {
        let mb: u64 = parse_number(&v, Source::Env(NAME))?;
        if mb == 0 {
            return Err(Source::Env(NAME).invalid(&v, "the queue needs at least 1 MB"));
        }
        config.queue_bytes = usize::try_from(mb.saturating_mul(1 << 20)).unwrap_or(usize::MAX);
    }
    Ok(config)
}

/// `STACKS_API_MODE`; `serve --mode` overrides it.
fn mode(env: &impl Fn(&str) -> Option<String>) -> Result<Mode, ConfigError> {
    let Some(value) = env("STACKS_API_MODE") else { return Ok(Mode::Online) };
    match value.trim().to_ascii_lowercase().as_str() {
        "default" | "online" => Ok(Mode::Online),
        "readonly" => Ok(Mode::Readonly),
        "writeonly" => Ok(Mode::Writeonly),
        "offline" => Ok(Mode::Offline),
        _ => Err(Source::Env("STACKS_API_MODE")
            .invalid(&value, "expected default, readonly, writeonly or offline")),
    }
}

fn checked_url(url: &str, source: Source) -> Result<String, ConfigError> {
    let url = url.trim();
    let known = ["sqlite:", "postgres://", "postgresql://"];
    if known.iter().any(|scheme| url.get(..scheme.len()).is_some_and(|p| p.eq_ignore_ascii_case(scheme))) {
        Ok(url.to_owned())
    } else {
        Err(source.invalid(url, "expected a sqlite: or postgres:// URL"))
    }
}

fn network(args: &ConfigArgs, env: &impl Fn(&str) -> Option<String>) -> Result<Network, ConfigError> {
    if let Some(network) = args.network {
        return Ok(network);
    }
    let Some(value) = env("STACKS_CHAIN_ID") else {
        // The incumbent's default too.
        return Ok(Network::Testnet);
    };
    let source = Source::Env("STACKS_CHAIN_ID");
    let v = value.trim();
    let parsed = match v.get(..2) {
        Some(p) if p.eq_ignore_ascii_case("0x") => u32::from_str_radix(&v[2..], 16),
        _ => v.parse::<u32>(),
    };
    let chain_id =
        parsed.map_err(|_| source.invalid(v, "not a chain id (expected hex such as 0x00000001)"))?;
    Network::from_chain_id(chain_id).ok_or_else(|| {
        source.invalid(
            v,
            "neither mainnet (0x00000001) nor testnet (0x80000000); custom chain ids are not supported",
        )
    })
}

fn bind_addr(
    flag: Option<(&str, Source)>,
    (host_var, default_host): (&'static str, &str),
    (port_var, default_port): (&'static str, u16),
    env: &impl Fn(&str) -> Option<String>,
) -> Result<BindAddr, ConfigError> {
    if let Some((value, source)) = flag {
        return parse_host_port(value, source);
    }
    let host = match env(host_var) {
        Some(h) => {
            let host = strip_http(&h);
            if host.is_empty() {
                return Err(Source::Env(host_var).invalid(&h, "no host name"));
            }
            host
        }
        None => default_host.to_owned(),
    };
    let port = match env(port_var) {
        Some(p) => parse_number(&p, Source::Env(port_var))?,
        None => default_port,
    };
    Ok(BindAddr { host, port })
}

/// `host:port` or `[v6]:port`, with an optional `http://` in front.
fn parse_host_port(value: &str, source: Source) -> Result<BindAddr, ConfigError> {
    let text = strip_http(value);
    let (host, port) = text.rsplit_once(':').ok_or_else(|| source.invalid(value, "expected HOST:PORT"))?;
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    if host.is_empty() {
        return Err(source.invalid(value, "no host name"));
    }
    let port = port.parse().map_err(|_| source.invalid(value, "the port is not a number from 0 to 65535"))?;
    Ok(BindAddr { host: host.to_owned(), port })
}

/// The incumbent accepts hosts written as URLs (`http://127.0.0.1`) and strips the scheme.
fn strip_http(value: &str) -> String {
    let v = value.trim();
    let rest = match v.get(..5) {
        Some(p) if p.eq_ignore_ascii_case("http:") => &v[5..],
        _ => v,
    };
    rest.trim_start_matches('/').trim_end_matches('/').to_owned()
}

fn parse_number<T: std::str::FromStr>(value: &str, source: Source) -> Result<T, ConfigError> {
    value.trim().parse().map_err(|_| source.invalid(value, "not a valid number"))
}

/// The incumbent's booleans, including the legacy `0`/`1`.
fn parse_bool(value: &str, source: Source) -> Result<bool, ConfigError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(source.invalid(value, "expected true or false")),
    }
}

#[cfg(test)]
mod tests;
