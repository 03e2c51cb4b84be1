//! The subset of rosetta-cli's configuration file that `check-data` reads (same field names,
//! so one file serves both tools). Unknown fields are ignored, as rosetta-cli ignores fields of
//! features we do not implement.

use std::path::{Path, PathBuf};

use serde::Deserialize;

#[derive(Debug, Clone, Default, Deserialize)]
pub struct CliConfig {
    #[serde(default)]
    pub network: Option<NetworkConfig>,
    #[serde(default)]
    pub online_url: Option<String>,
    #[serde(default)]
    pub data: Option<DataConfig>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct NetworkConfig {
    pub blockchain: String,
    pub network: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct DataConfig {
    #[serde(default)]
    pub start_index: Option<i64>,
    #[serde(default)]
    pub end_conditions: Option<EndConditions>,
    /// A JSON file of `[{account_identifier, currency, value}]` balances before the start block.
    #[serde(default)]
    pub bootstrap_balances: Option<PathBuf>,
    /// A JSON file of `[{account_identifier, currency}]` never reconciled.
    #[serde(default)]
    pub exempt_accounts: Option<PathBuf>,
    /// A JSON file of `[{account_identifier, currency}]` reconciled at every block.
    #[serde(default)]
    pub interesting_accounts: Option<PathBuf>,
    #[serde(default)]
    pub historical_balance_disabled: Option<bool>,
    #[serde(default)]
    pub reconciliation_disabled: bool,
    #[serde(default)]
    pub inactive_discrepancy_search_disabled: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct EndConditions {
    #[serde(default)]
    pub index: Option<i64>,
    #[serde(default)]
    pub tip: Option<bool>,
    #[serde(default)]
    pub reconciliation_coverage: Option<CoverageCondition>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct CoverageCondition {
    pub coverage: f64,
    #[serde(default)]
    pub from_tip: bool,
}

impl CliConfig {
    /// Reads a rosetta-cli configuration file; relative account-file paths are resolved
    /// against the file's folder, as rosetta-cli does.
    pub fn read(path: &Path) -> anyhow::Result<CliConfig> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("reading configuration {}: {e}", path.display()))?;
        let mut c: CliConfig = serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("configuration {} is not valid: {e}", path.display()))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        if let Some(d) = c.data.as_mut() {
            for p in [&mut d.bootstrap_balances, &mut d.exempt_accounts, &mut d.interesting_accounts]
                .into_iter()
                .flatten()
            {
                if p.is_relative() {
                    *p = dir.join(&*p);
                }
            }
        }
        Ok(c)
    }
}
