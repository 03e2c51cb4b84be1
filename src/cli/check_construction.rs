//! `stacks-ledger check-construction`: runs the in-project equivalent of rosetta-cli
//! `check:construction` (`rosetta_check::construction`) and prints its report; exits
//! non-zero on any failure or unmet end condition.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use rosetta_check::construction::config::{server_url, ConstructionCliConfig};
use rosetta_check::construction::{ConstructionChecker, ConstructionOptions};

#[derive(Debug, Args)]
pub struct CheckConstructionArgs {
    /// A rosetta-cli configuration file: `network`, `online_url`,
    /// `construction.{offline_url, prefunded_accounts, end_conditions}` are read.
    #[arg(long = "configuration-file")]
    pub configuration_file: PathBuf,
    /// µSTX the `request_funds` workflow moves to the first created account.
    #[arg(long, default_value_t = 1_000_000_000)]
    pub funding: u64,
    /// Seconds a transaction may take to reach the mempool, then a block.
    #[arg(long, default_value_t = 120)]
    pub timeout_secs: u64,
    /// Seeds the created keys [default: the current time].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Print the whole report as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: CheckConstructionArgs) -> anyhow::Result<()> {
    let c = ConstructionCliConfig::read(&args.configuration_file)?;
    let online_url = server_url(c.online_url.as_deref().unwrap_or("http://127.0.0.1:3999"));
    let offline_url =
        c.construction.offline_url.as_deref().map(server_url).unwrap_or_else(|| online_url.clone());
    let mut prefunded = Vec::new();
    for a in &c.construction.prefunded_accounts {
        anyhow::ensure!(
            a.curve_type == "secp256k1",
            "prefunded account {}: curve {} is not secp256k1",
            a.account_identifier.address,
            a.curve_type
        );
        prefunded.push((a.account_identifier.address.clone(), a.privkey.clone()));
    }
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
    });
    let opts = ConstructionOptions {
        online_url,
        offline_url,
        network: c.network.map(|n| n.network),
        prefunded,
        end_conditions: c.construction.end_conditions,
        funding: args.funding,
        confirmation_timeout: Duration::from_secs(args.timeout_secs),
        seed,
    };
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let report = runtime.block_on(async { anyhow::Ok(ConstructionChecker::new(opts)?.run().await) })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for (test, failures) in &report.failures {
            for f in failures {
                println!("FAIL [{test}] {f}");
            }
        }
        println!("{}", serde_json::to_string(&report.stats)?);
        println!("{}", serde_json::to_string(&report.end_conditions)?);
    }
    println!("{}", report.summary());
    if !report.ok() {
        anyhow::bail!("check-construction failed: {}", report.summary());
    }
    Ok(())
}
