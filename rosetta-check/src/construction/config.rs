//! The part of rosetta-cli's configuration `check-construction` reads: `network`,
//! `online_url`, and `construction.{offline_url, prefunded_accounts, end_conditions}` (the same
//! file rosetta-cli takes; other fields are ignored). The `.ros` workflow file is not
//! interpreted: the workflows of `rosetta-cli-configs/stacks.ros` are built in.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::data::config::NetworkConfig;

#[derive(Debug, Clone, Deserialize)]
pub struct ConstructionCliConfig {
    #[serde(default)]
    pub network: Option<NetworkConfig>,
    #[serde(default)]
    pub online_url: Option<String>,
    pub construction: ConstructionConfig,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ConstructionConfig {
    #[serde(default)]
    pub offline_url: Option<String>,
    #[serde(default)]
    pub prefunded_accounts: Vec<PrefundedAccount>,
    /// Workflow name → how many times it must complete (`create_account`, `transfer`).
    #[serde(default)]
    pub end_conditions: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PrefundedAccount {
    /// The 32-byte secret, hex (the key's public key is the compressed one, as for Rosetta's
    /// 33-byte secp256k1 keys).
    pub privkey: String,
    pub account_identifier: rosetta_spec::AccountIdentifier,
    pub curve_type: String,
}

impl ConstructionCliConfig {
    pub fn read(path: &Path) -> anyhow::Result<ConstructionCliConfig> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("reading configuration {}: {e}", path.display()))?;
        serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("configuration {} is not valid: {e}", path.display()))
    }
}

/// rosetta-cli's URLs name the Rosetta base (`…/rosetta/v1`); the checker wants the server.
pub fn server_url(url: &str) -> String {
    let url = url.trim_end_matches('/');
    url.strip_suffix("/rosetta/v1").unwrap_or(url).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_rosetta_cli_files_and_prefunded_accounts() {
        // The repository's rosetta-cli configuration (no prefunded accounts) reads as is.
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rosetta-cli-configs");
        let c = ConstructionCliConfig::read(&dir.join("devnet.json")).unwrap();
        assert_eq!(c.construction.end_conditions.get("transfer"), Some(&10));
        assert_eq!(server_url(c.online_url.as_deref().unwrap()), "http://127.0.0.1:3999");
        let text = r#"{"network": {"blockchain": "stacks", "network": "testnet"},
            "construction": {"offline_url": "http://h:1/rosetta/v1/", "end_conditions": {"create_account": 2},
            "prefunded_accounts": [{"privkey": "11", "account_identifier": {"address": "ST1"},
                "curve_type": "secp256k1", "currency": {"symbol": "STX", "decimals": 6}}]}}"#;
        let c: ConstructionCliConfig = serde_json::from_str(text).unwrap();
        assert_eq!(server_url(c.construction.offline_url.as_deref().unwrap()), "http://h:1");
        assert_eq!(c.construction.prefunded_accounts[0].account_identifier.address, "ST1");
        assert!(
            serde_json::from_str::<ConstructionCliConfig>(r#"{"network": null}"#).is_err(),
            "construction is required"
        );
    }
}
