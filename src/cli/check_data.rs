//! `stacks-ledger check-data`: runs the in-project equivalent of rosetta-cli `check:data`
//! (`rosetta_check::data`) and prints its report; exits non-zero on any failure.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use rosetta_check::data::config::CliConfig;
use rosetta_check::data::{read_accounts, read_bootstrap, Checker, Options};

#[derive(Debug, Args)]
pub struct CheckDataArgs {
    /// Base URL of the Rosetta server (without `/rosetta/v1`).
    #[arg(long, default_value = "http://127.0.0.1:3999")]
    pub url: String,
    /// A rosetta-cli configuration file (`online_url`, `network`, `data.*` are read).
    #[arg(long = "configuration-file")]
    pub configuration_file: Option<PathBuf>,
    /// The network to check (default: the first `/network/list` names).
    #[arg(long)]
    pub network: Option<String>,
    /// First block index (default: the genesis block).
    #[arg(long)]
    pub start: Option<i64>,
    /// Last block index (default: the tip).
    #[arg(long)]
    pub end: Option<i64>,
    /// The Rosetta OpenAPI document(s) every response is validated against: `api.json`
    /// (1.4.6), then `api-v1.4.7.json` for the indexer endpoints (repeat the option).
    #[arg(long)]
    pub spec: Vec<PathBuf>,
    /// Print the whole report as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: CheckDataArgs) -> anyhow::Result<()> {
    let mut opts = Options::new(args.url.clone());
    if let Some(path) = &args.configuration_file {
        let c = CliConfig::read(path)?;
        if let Some(url) = c.online_url {
            // rosetta-cli's online_url is the Rosetta base (`…/rosetta/v1`); ours is the server.
            let url = url.trim_end_matches('/');
            opts.url = url.strip_suffix("/rosetta/v1").unwrap_or(url).to_owned();
        }
        opts.network = c.network.map(|n| n.network);
        if let Some(d) = c.data {
            opts.start = d.start_index;
            if let Some(p) = &d.bootstrap_balances {
                opts.bootstrap =
                    read_bootstrap(p).with_context(|| format!("bootstrap balances {}", p.display()))?;
            }
            if let Some(p) = &d.exempt_accounts {
                opts.exempt = read_accounts(p).with_context(|| format!("exempt accounts {}", p.display()))?;
            }
            opts.inactive = !d.inactive_discrepancy_search_disabled;
            if let Some(e) = d.end_conditions {
                opts.end = e.index;
                opts.coverage = e.reconciliation_coverage.map(|c| c.coverage);
            }
        }
    }
    opts.network = args.network.or(opts.network);
    opts.start = args.start.or(opts.start);
    opts.end = args.end.or(opts.end);
    for p in &args.spec {
        let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
        let doc: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("{} is not JSON", p.display()))?;
        opts.specs.push(doc);
    }
    if args.spec.is_empty() {
        tracing::warn!("no --spec given: responses are not validated against the Rosetta OpenAPI document");
    }
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let report = runtime.block_on(async {
        let mut checker = Checker::new(opts)?;
        checker.sync().await?;
        anyhow::Ok(checker.finish().await)
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for (test, failures) in &report.failures {
            for f in failures {
                println!("FAIL [{test}] {f}");
            }
        }
        println!("{}", serde_json::to_string(&report.stats)?);
    }
    println!("{}", report.summary());
    if !report.ok() {
        anyhow::bail!("check-data found {} failure(s)", report.failed);
    }
    Ok(())
}
