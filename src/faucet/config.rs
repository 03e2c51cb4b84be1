//! The faucets' settings, from the incumbent's environment variables (so a deployment's
//! settings carry over). The environment is passed in as a lookup, so tests never touch the
//! process environment; an empty variable counts as unset.

use stacks_codec::sign::PrivateKey;
use thiserror::Error;

/// The port of a faucet node named by `STACKS_FAUCET_NODE_HOST` alone (the node RPC's).
pub const DEFAULT_NODE_PORT: u16 = 20443;
/// The incumbent's bitcoind RPC defaults (regtest).
pub const DEFAULT_BTC_RPC_URL: &str = "http://127.0.0.1:18443";
pub const DEFAULT_BTC_RPC_USER: &str = "btc";
pub const DEFAULT_BTC_RPC_PASSWORD: &str = "btc";
/// The fee when the node has no estimate (the incumbent's fallback).
pub const DEFAULT_STX_FALLBACK_FEE: u64 = 200;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum FaucetConfigError {
    #[error("{name} `{value}`: {reason}")]
    Invalid { name: &'static str, value: String, reason: String },
}

/// Where bitcoind's JSON-RPC listens, and its credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BtcRpc {
    pub url: String,
    pub user: String,
    pub password: String,
}

#[derive(Debug, Clone)]
pub struct FaucetConfig {
    /// TESTNET_STX_FAUCET_ENABLED (true).
    pub stx_enabled: bool,
    /// TESTNET_BTC_FAUCET_ENABLED (true).
    pub btc_enabled: bool,
    /// TESTNET_FAUCETS_RATE_LIMIT_ENABLED (true).
    pub rate_limit_enabled: bool,
    /// FAUCET_PRIVATE_KEY, comma-separated hex keys. None: the STX faucet answers 503, as the
    /// incumbent does without a key.
    pub stx_keys: Vec<PrivateKey>,
    /// The node the faucet reads `/v2/info`, `/v2/pox`, fees from and broadcasts to:
    /// STACKS_FAUCET_NODE_HOST/PORT, else the server's one node setting (`--node-rpc`, the
    /// `STACKS_CORE_*` node variables). None: no node, the STX faucet answers 503.
    pub node_url: Option<String>,
    pub stx_fallback_fee: u64,
    /// BTC_RPC_HOST (a URL or a host), BTC_RPC_PORT, BTC_RPC_USER, BTC_RPC_PW.
    pub btc_rpc: BtcRpc,
    /// BTC_FAUCET_PK: the 32-byte hex secret of the BTC faucet's P2PKH address. None: the BTC
    /// faucet is not configured (500, as the incumbent).
    pub btc_key: Option<[u8; 32]>,
}

impl FaucetConfig {
    /// From the environment lookup `env`; `node` is the server's node (`Config::v2`), used unless
    /// the faucet's own node variables name another. `Config::resolve` is the one caller in the
    /// server, so the faucet and the rest share one node setting.
    pub fn resolve(
        env: impl Fn(&str) -> Option<String>,
        node: Option<String>,
    ) -> Result<FaucetConfig, FaucetConfigError> {
        let env = |name: &str| env(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        let flag = |name: &'static str, default: bool| match env(name) {
            None => Ok(default),
            Some(v) => parse_bool(&v).ok_or_else(|| invalid(name, &v, "expected true/false (or 1/0)")),
        };
        let stx_keys = match env("FAUCET_PRIVATE_KEY") {
            None => Vec::new(),
            Some(list) => list
                .split(',')
                .map(str::trim)
                .filter(|k| !k.is_empty())
                .map(|k| {
                    // Never echo a secret back into a log or an error.
                    PrivateKey::from_hex(k)
                        .map_err(|e| invalid("FAUCET_PRIVATE_KEY", "<redacted>", &e.to_string()))
                })
                .collect::<Result<_, _>>()?,
        };
        let node_url = match (env("STACKS_FAUCET_NODE_HOST"), env("STACKS_FAUCET_NODE_PORT")) {
            (None, None) => node,
            (Some(host), p) => {
                Some(host_port_url(&host, port(p, "STACKS_FAUCET_NODE_PORT", DEFAULT_NODE_PORT)?))
            }
            (None, Some(p)) => {
                return Err(invalid("STACKS_FAUCET_NODE_PORT", &p, "needs STACKS_FAUCET_NODE_HOST"))
            }
        };
        let btc_url = match (env("BTC_RPC_HOST"), env("BTC_RPC_PORT")) {
            (None, None) => DEFAULT_BTC_RPC_URL.to_owned(),
            (host, p) => {
                host_port_url(host.as_deref().unwrap_or("127.0.0.1"), port(p, "BTC_RPC_PORT", 18443)?)
            }
        };
        let btc_key = env("BTC_FAUCET_PK")
            .map(|k| {
                let bytes = hex::decode(k.trim_start_matches("0x"))
                    .map_err(|e| invalid("BTC_FAUCET_PK", "<redacted>", &e.to_string()))?;
                let key: [u8; 32] = bytes.try_into().map_err(|b: Vec<u8>| {
                    invalid("BTC_FAUCET_PK", "<redacted>", &format!("expected 32 bytes, got {}", b.len()))
                })?;
                btc_private_key(&key)
                    .map_err(|_| invalid("BTC_FAUCET_PK", "<redacted>", "not a valid secp256k1 secret"))?;
                Ok(key)
            })
            .transpose()?;
        Ok(FaucetConfig {
            stx_enabled: flag("TESTNET_STX_FAUCET_ENABLED", true)?,
            btc_enabled: flag("TESTNET_BTC_FAUCET_ENABLED", true)?,
            rate_limit_enabled: flag("TESTNET_FAUCETS_RATE_LIMIT_ENABLED", true)?,
            stx_keys,
            node_url,
            stx_fallback_fee: DEFAULT_STX_FALLBACK_FEE,
            btc_rpc: BtcRpc {
                url: btc_url,
                user: env("BTC_RPC_USER").unwrap_or_else(|| DEFAULT_BTC_RPC_USER.to_owned()),
                password: env("BTC_RPC_PW").unwrap_or_else(|| DEFAULT_BTC_RPC_PASSWORD.to_owned()),
            },
            btc_key,
        })
    }
}

/// The BTC faucet's key as the codec's private key (compressed public key, as bitcoinjs'
/// `ECPair.fromPrivateKey` makes by default).
pub fn btc_private_key(secret: &[u8; 32]) -> Result<PrivateKey, stacks_codec::sign::SignError> {
    let mut bytes = secret.to_vec();
    bytes.push(0x01);
    PrivateKey::from_slice(&bytes)
}

fn invalid(name: &'static str, value: &str, reason: &str) -> FaucetConfigError {
    FaucetConfigError::Invalid { name, value: value.to_owned(), reason: reason.to_owned() }
}

/// The incumbent's booleans, legacy "1"/"0" included.
fn parse_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

fn port(v: Option<String>, name: &'static str, default: u16) -> Result<u16, FaucetConfigError> {
    match v {
        None => Ok(default),
        Some(v) => v.parse().map_err(|_| invalid(name, &v, "expected a port number")),
    }
}

/// `http://host:port`; a host given as a URL (the incumbent's BTC_RPC_HOST is one) keeps its
/// scheme.
fn host_port_url(host: &str, port: u16) -> String {
    let host = host.trim_end_matches('/');
    if host.starts_with("http://") || host.starts_with("https://") {
        format!("{host}:{port}")
    } else if host.contains(':') {
        format!("http://[{host}]:{port}")
    } else {
        format!("http://{host}:{port}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn resolve(vars: &[(&str, &str)]) -> Result<FaucetConfig, FaucetConfigError> {
        let map: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        FaucetConfig::resolve(|name| map.get(name).cloned(), Some("http://node:20443".into()))
    }

    #[test]
    fn defaults_are_the_incumbents() {
        let c = resolve(&[]).unwrap();
        assert!(c.stx_enabled && c.btc_enabled && c.rate_limit_enabled);
        assert!(c.stx_keys.is_empty() && c.btc_key.is_none());
        assert_eq!(c.node_url.as_deref(), Some("http://node:20443"), "the server's node");
        assert_eq!(FaucetConfig::resolve(|_| None, None).unwrap().node_url, None);
        assert_eq!(
            c.btc_rpc,
            BtcRpc { url: "http://127.0.0.1:18443".into(), user: "btc".into(), password: "btc".into() }
        );
    }

    #[test]
    fn node_and_keys_and_switches() {
        let k1 = format!("{}01", "11".repeat(32));
        let k2 = "22".repeat(32);
        let c = resolve(&[
            ("STACKS_FAUCET_NODE_HOST", "faucet-node"),
            ("STACKS_FAUCET_NODE_PORT", "30443"),
            ("FAUCET_PRIVATE_KEY", &format!("{k1}, {k2}")),
            ("TESTNET_STX_FAUCET_ENABLED", "0"),
            ("TESTNET_FAUCETS_RATE_LIMIT_ENABLED", "false"),
            ("BTC_RPC_HOST", "http://btc"),
            ("BTC_RPC_PORT", "1"),
            ("BTC_FAUCET_PK", &"33".repeat(32)),
        ])
        .unwrap();
        assert_eq!(c.node_url.as_deref(), Some("http://faucet-node:30443"));
        assert_eq!(c.stx_keys.len(), 2);
        assert!(!c.stx_enabled && !c.rate_limit_enabled && c.btc_enabled);
        assert_eq!(c.btc_rpc.url, "http://btc:1");
        assert_eq!(c.btc_key, Some([0x33; 32]));
        // The core RPC variables are the server's node setting (`Config`), not read here.
        let c = resolve(&[("STACKS_CORE_RPC_HOST", "other")]).unwrap();
        assert_eq!(c.node_url.as_deref(), Some("http://node:20443"));
    }

    #[test]
    fn bad_values_are_named_and_secrets_are_not_echoed() {
        let e = resolve(&[("TESTNET_BTC_FAUCET_ENABLED", "yes")]).unwrap_err();
        assert!(e.to_string().contains("TESTNET_BTC_FAUCET_ENABLED"), "{e}");
        let secret = "ab".repeat(31);
        let e = resolve(&[("FAUCET_PRIVATE_KEY", &secret)]).unwrap_err();
        assert!(e.to_string().contains("FAUCET_PRIVATE_KEY") && !e.to_string().contains(&secret), "{e}");
        assert!(resolve(&[("BTC_FAUCET_PK", "00")]).is_err());
        assert!(resolve(&[("STACKS_FAUCET_NODE_HOST", "h"), ("STACKS_FAUCET_NODE_PORT", "x")]).is_err());
        assert!(resolve(&[("STACKS_FAUCET_NODE_PORT", "1")]).is_err());
    }
}
