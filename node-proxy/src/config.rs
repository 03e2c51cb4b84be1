//! Proxy configuration, read from the incumbent API's environment variable names so that an
//! existing deployment's settings carry over unchanged.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::Url;

/// Where the proxy sends `/v2/*` requests and how it treats them.
#[derive(Debug, Clone, PartialEq)]
pub struct ProxyConfig {
    /// Base URL of the Stacks node's RPC interface (`http` or `https`). A path here is kept as a
    /// prefix: `http://h:20443/rpc` sends `/v2/info` to `http://h:20443/rpc/v2/info`.
    pub node: Url,
    /// Extra `POST /v2/transactions` targets. Each entry is the full URL to POST to (the
    /// incumbent's file lists complete endpoints, not node bases).
    pub extra_broadcast: Vec<Url>,
    /// Bound on establishing a TCP (and TLS) connection to the node.
    pub connect_timeout: Duration,
    /// Bound on everything that is not a long response stream: from sending the request until
    /// the response headers arrive, the whole exchange for the buffered routes, and also the
    /// longest pause allowed between two chunks of a streamed response body.
    pub request_timeout: Duration,
    /// Largest request body the proxy buffers (`POST /v2/transactions`, the fee-estimate rewrite,
    /// and request bodies sent without a `Content-Length`), in bytes.
    pub body_limit: usize,
    /// The incumbent's fee-estimate rewrite for `POST /v2/fees/transaction`; `None` when off.
    pub min_fee_rewrite: Option<FeeRewriteConfig>,
}

/// Settings of the `POST /v2/fees/transaction` rewrite (the incumbent's
/// `STACKS_CORE_FEE_*` variables). When there is no fee market, every estimate becomes the
/// minimum fee; otherwise each estimate is scaled by `estimation_modifier` and floored at it.
#[derive(Debug, Clone, PartialEq)]
pub struct FeeRewriteConfig {
    /// Multiplier applied to the node's estimates when there is a fee market.
    pub estimation_modifier: f64,
    /// How many past tenures the fee-market test averages over.
    pub past_tenure_fullness_window: u32,
    /// Fraction of a block limit above which a past-tenure dimension counts as full.
    pub past_dimension_fullness_threshold: f64,
    /// Fraction of a block limit above which a current-tenure dimension counts as busy.
    pub current_dimension_fullness_threshold: f64,
    /// Blocks the current tenure needs before its own fullness is trusted.
    pub current_block_count_minimum: u64,
    /// Minimum fee rate in µSTX per byte; the node's consensus minimum is 1.
    pub min_fee_rate_per_byte: u64,
}

impl Default for FeeRewriteConfig {
    fn default() -> Self {
        FeeRewriteConfig {
            estimation_modifier: 1.0,
            past_tenure_fullness_window: 5,
            past_dimension_fullness_threshold: 0.9,
            current_dimension_fullness_threshold: 0.5,
            current_block_count_minimum: 5,
            min_fee_rate_per_byte: 1,
        }
    }
}

/// Why a configuration could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{var}: {reason} (got {value:?})")]
    InvalidVar { var: &'static str, value: String, reason: &'static str },
    #[error("the Stacks node URL {url:?} is invalid: {reason}")]
    InvalidNodeUrl { url: String, reason: String },
    #[error("cannot read the extra broadcast endpoints file {path}: {source}")]
    EndpointsFileUnreadable { path: PathBuf, source: std::io::Error },
    #[error("{path} line {line}: {value:?} is not an http(s) URL")]
    InvalidEndpoint { path: PathBuf, line: usize, value: String },
}

pub const DEFAULT_RPC_HOST: &str = "127.0.0.1";
pub const DEFAULT_RPC_PORT: u16 = 20443;
/// The incumbent's STACKS_CORE_PROXY_BODY_LIMIT default (10 MB, decimal).
pub const DEFAULT_BODY_LIMIT: usize = 10_000_000;
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

impl ProxyConfig {
    /// A configuration for `node` with every other setting at its default.
    pub fn new(node: Url) -> Self {
        ProxyConfig {
            node,
            extra_broadcast: Vec::new(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            body_limit: DEFAULT_BODY_LIMIT,
            min_fee_rewrite: None,
        }
    }

    /// Builds the configuration from the incumbent's variables (pass `std::env::vars().collect()`
    /// in production; tests pass a literal map):
    ///
    /// * `STACKS_CORE_PROXY_HOST`/`_PORT`, each falling back to `STACKS_CORE_RPC_HOST`/`_PORT`
    ///   (127.0.0.1:20443). A host written with a scheme (`https://node.example`) is taken as a
    ///   base URL, which is how an https node is configured; the port then applies only if the
    ///   URL has none.
    /// * `STACKS_API_EXTRA_TX_ENDPOINTS_FILE`: loaded now with [`load_extra_endpoints`].
    /// * `STACKS_CORE_PROXY_BODY_LIMIT` (bytes).
    /// * `STACKS_CORE_FEE_ESTIMATOR_ENABLED` and the `STACKS_CORE_FEE_*` tuning variables.
    /// * Ours (the incumbent has no timeouts): `STACKS_CORE_PROXY_CONNECT_TIMEOUT_MS`,
    ///   `STACKS_CORE_PROXY_TIMEOUT_MS`.
    ///
    /// Empty values count as unset, as they do for the incumbent's dotenv loader.
    pub fn from_env(env: &HashMap<String, String>) -> Result<Self, ConfigError> {
        let get = |name: &str| env.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());

        let host =
            get("STACKS_CORE_PROXY_HOST").or_else(|| get("STACKS_CORE_RPC_HOST")).unwrap_or(DEFAULT_RPC_HOST);
        let port = match get("STACKS_CORE_PROXY_PORT") {
            Some(v) => Some(parse_port("STACKS_CORE_PROXY_PORT", v)?),
            None => get("STACKS_CORE_RPC_PORT").map(|v| parse_port("STACKS_CORE_RPC_PORT", v)).transpose()?,
        };
        let node = node_url(host, port)?;

        let mut config = ProxyConfig::new(node);
        if let Some(file) = get("STACKS_API_EXTRA_TX_ENDPOINTS_FILE") {
            config.extra_broadcast = load_extra_endpoints(Path::new(file))?;
        }
        if let Some(v) = get("STACKS_CORE_PROXY_BODY_LIMIT") {
            config.body_limit = parse_num("STACKS_CORE_PROXY_BODY_LIMIT", v)?;
        }
        if let Some(v) = get("STACKS_CORE_PROXY_CONNECT_TIMEOUT_MS") {
            config.connect_timeout = parse_millis("STACKS_CORE_PROXY_CONNECT_TIMEOUT_MS", v)?;
        }
        if let Some(v) = get("STACKS_CORE_PROXY_TIMEOUT_MS") {
            config.request_timeout = parse_millis("STACKS_CORE_PROXY_TIMEOUT_MS", v)?;
        }

        let fee_enabled = get("STACKS_CORE_FEE_ESTIMATOR_ENABLED")
            .map(|v| parse_bool("STACKS_CORE_FEE_ESTIMATOR_ENABLED", v))
            .transpose()?
            .unwrap_or(false);
        if fee_enabled {
            let mut fee = FeeRewriteConfig::default();
            if let Some(v) = get("STACKS_CORE_FEE_ESTIMATION_MODIFIER") {
                fee.estimation_modifier = parse_fraction("STACKS_CORE_FEE_ESTIMATION_MODIFIER", v)?;
            }
            if let Some(v) = get("STACKS_CORE_FEE_PAST_TENURE_FULLNESS_WINDOW") {
                fee.past_tenure_fullness_window =
                    parse_num("STACKS_CORE_FEE_PAST_TENURE_FULLNESS_WINDOW", v)?;
            }
            if let Some(v) = get("STACKS_CORE_FEE_PAST_DIMENSION_FULLNESS_THRESHOLD") {
                fee.past_dimension_fullness_threshold =
                    parse_fraction("STACKS_CORE_FEE_PAST_DIMENSION_FULLNESS_THRESHOLD", v)?;
            }
            if let Some(v) = get("STACKS_CORE_FEE_CURRENT_DIMENSION_FULLNESS_THRESHOLD") {
                fee.current_dimension_fullness_threshold =
                    parse_fraction("STACKS_CORE_FEE_CURRENT_DIMENSION_FULLNESS_THRESHOLD", v)?;
            }
            if let Some(v) = get("STACKS_CORE_FEE_CURRENT_BLOCK_COUNT_MINIMUM") {
                fee.current_block_count_minimum =
                    parse_num("STACKS_CORE_FEE_CURRENT_BLOCK_COUNT_MINIMUM", v)?;
            }
            config.min_fee_rewrite = Some(fee);
        }
        Ok(config)
    }
}

/// Reads the incumbent's `STACKS_API_EXTRA_TX_ENDPOINTS_FILE`: one URL per line, surrounding
/// blanks ignored, empty lines and lines starting with `#` skipped. Unlike the incumbent (which
/// re-reads the file on every broadcast and silently skips it when unreadable), the file is read
/// once and a bad file is a start-up error, so a typo cannot quietly disable the multicast.
pub fn load_extra_endpoints(path: &Path) -> Result<Vec<Url>, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|source| ConfigError::EndpointsFileUnreadable { path: path.to_path_buf(), source })?;
    parse_extra_endpoints(&text, path)
}

/// The parsing half of [`load_extra_endpoints`]; `path` only labels errors.
pub fn parse_extra_endpoints(text: &str, path: &Path) -> Result<Vec<Url>, ConfigError> {
    let mut urls = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let invalid = || ConfigError::InvalidEndpoint {
            path: path.to_path_buf(),
            line: index + 1,
            value: line.to_string(),
        };
        let url = Url::parse(line).map_err(|_| invalid())?;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err(invalid());
        }
        urls.push(url);
    }
    Ok(urls)
}

fn node_url(host: &str, port: Option<u16>) -> Result<Url, ConfigError> {
    let invalid = |reason: String| ConfigError::InvalidNodeUrl { url: host.to_string(), reason };
    let mut url = if host.contains("://") {
        let mut url = Url::parse(host).map_err(|e| invalid(e.to_string()))?;
        if url.port().is_none() {
            if let Some(port) = port {
                url.set_port(Some(port)).map_err(|()| invalid("cannot carry a port".into()))?;
            }
        }
        url
    } else {
        // A bare IPv6 address needs brackets to be a URL authority.
        let host =
            if host.contains(':') && !host.starts_with('[') { format!("[{host}]") } else { host.to_string() };
        let port = port.unwrap_or(DEFAULT_RPC_PORT);
        Url::parse(&format!("http://{host}:{port}")).map_err(|e| invalid(e.to_string()))?
    };
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(invalid("needs an http or https scheme and a host".into()));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid("must not have a query or fragment".into()));
    }
    // The request path is appended to the base path, so the base must not end with '/'.
    let trimmed = url.path().trim_end_matches('/').to_string();
    url.set_path(&trimmed);
    Ok(url)
}

fn parse_port(var: &'static str, value: &str) -> Result<u16, ConfigError> {
    value.parse().map_err(|_| ConfigError::InvalidVar {
        var,
        value: value.to_string(),
        reason: "expected a port number (0-65535)",
    })
}

fn parse_num<T: std::str::FromStr>(var: &'static str, value: &str) -> Result<T, ConfigError> {
    value.parse().map_err(|_| ConfigError::InvalidVar {
        var,
        value: value.to_string(),
        reason: "expected a non-negative integer",
    })
}

fn parse_millis(var: &'static str, value: &str) -> Result<Duration, ConfigError> {
    let ms: u64 = parse_num(var, value)?;
    if ms == 0 {
        return Err(ConfigError::InvalidVar {
            var,
            value: value.to_string(),
            reason: "a zero timeout would fail every request",
        });
    }
    Ok(Duration::from_millis(ms))
}

fn parse_fraction(var: &'static str, value: &str) -> Result<f64, ConfigError> {
    match value.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(ConfigError::InvalidVar {
            var,
            value: value.to_string(),
            reason: "expected a non-negative number",
        }),
    }
}

/// The incumbent's env-schema coerces booleans, accepting the legacy `1`/`0` too.
fn parse_bool(var: &'static str, value: &str) -> Result<bool, ConfigError> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => {
            Err(ConfigError::InvalidVar { var, value: value.to_string(), reason: "expected true/false/1/0" })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn defaults() {
        let c = ProxyConfig::from_env(&env(&[])).unwrap();
        assert_eq!(c.node.as_str(), "http://127.0.0.1:20443/");
        assert!(c.extra_broadcast.is_empty());
        assert_eq!(c.body_limit, DEFAULT_BODY_LIMIT);
        assert_eq!(c.min_fee_rewrite, None);
    }

    #[test]
    fn proxy_vars_fall_back_to_rpc_vars_independently() {
        let c = ProxyConfig::from_env(&env(&[
            ("STACKS_CORE_RPC_HOST", "node.internal"),
            ("STACKS_CORE_RPC_PORT", "1234"),
            ("STACKS_CORE_PROXY_PORT", "4321"),
        ]))
        .unwrap();
        assert_eq!(c.node.as_str(), "http://node.internal:4321/");
        let c = ProxyConfig::from_env(&env(&[
            ("STACKS_CORE_RPC_HOST", "a"),
            ("STACKS_CORE_PROXY_HOST", "b"),
            ("STACKS_CORE_RPC_PORT", "1"),
        ]))
        .unwrap();
        assert_eq!(c.node.as_str(), "http://b:1/");
    }

    #[test]
    fn host_with_scheme_and_ipv6() {
        let c = ProxyConfig::from_env(&env(&[
            ("STACKS_CORE_RPC_HOST", "https://node.example/rpc/"),
            ("STACKS_CORE_RPC_PORT", "443"),
        ]))
        .unwrap();
        assert_eq!(c.node.as_str(), "https://node.example/rpc");
        let c = ProxyConfig::from_env(&env(&[("STACKS_CORE_RPC_HOST", "::1")])).unwrap();
        assert_eq!(c.node.as_str(), "http://[::1]:20443/");
        assert!(ProxyConfig::from_env(&env(&[("STACKS_CORE_RPC_HOST", "ftp://x")])).is_err());
        assert!(ProxyConfig::from_env(&env(&[("STACKS_CORE_RPC_PORT", "70000")])).is_err());
    }

    #[test]
    fn fee_rewrite_settings() {
        let c = ProxyConfig::from_env(&env(&[
            ("STACKS_CORE_FEE_ESTIMATOR_ENABLED", "1"),
            ("STACKS_CORE_FEE_ESTIMATION_MODIFIER", "0.5"),
            ("STACKS_CORE_FEE_PAST_TENURE_FULLNESS_WINDOW", "7"),
            ("STACKS_CORE_FEE_CURRENT_BLOCK_COUNT_MINIMUM", "3"),
        ]))
        .unwrap();
        let fee = c.min_fee_rewrite.unwrap();
        assert_eq!(fee.estimation_modifier, 0.5);
        assert_eq!(fee.past_tenure_fullness_window, 7);
        assert_eq!(fee.current_block_count_minimum, 3);
        assert_eq!(fee.past_dimension_fullness_threshold, 0.9);
        // Tuning variables alone do not switch the rewrite on.
        let c = ProxyConfig::from_env(&env(&[
            ("STACKS_CORE_FEE_ESTIMATOR_ENABLED", "false"),
            ("STACKS_CORE_FEE_ESTIMATION_MODIFIER", "0.5"),
        ]))
        .unwrap();
        assert_eq!(c.min_fee_rewrite, None);
        assert!(ProxyConfig::from_env(&env(&[("STACKS_CORE_FEE_ESTIMATOR_ENABLED", "yes")])).is_err());
    }

    #[test]
    fn timeouts_and_body_limit() {
        let c = ProxyConfig::from_env(&env(&[
            ("STACKS_CORE_PROXY_CONNECT_TIMEOUT_MS", "250"),
            ("STACKS_CORE_PROXY_TIMEOUT_MS", "1500"),
            ("STACKS_CORE_PROXY_BODY_LIMIT", "1024"),
        ]))
        .unwrap();
        assert_eq!(c.connect_timeout, Duration::from_millis(250));
        assert_eq!(c.request_timeout, Duration::from_millis(1500));
        assert_eq!(c.body_limit, 1024);
        assert!(ProxyConfig::from_env(&env(&[("STACKS_CORE_PROXY_TIMEOUT_MS", "0")])).is_err());
    }

    #[test]
    fn endpoints_file_format() {
        let text = "# primary mirrors\n\n  http://10.0.0.1:20443/v2/transactions  \r\n#http://skipped\nhttps://relay.example/v2/transactions\n";
        let urls = parse_extra_endpoints(text, Path::new("f")).unwrap();
        let urls: Vec<&str> = urls.iter().map(Url::as_str).collect();
        assert_eq!(urls, ["http://10.0.0.1:20443/v2/transactions", "https://relay.example/v2/transactions"]);
        let err = parse_extra_endpoints("http://ok/\nnot a url\n", Path::new("f")).unwrap_err();
        assert!(matches!(err, ConfigError::InvalidEndpoint { line: 2, .. }));
    }

    #[test]
    fn endpoints_file_is_read_from_env() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("extra.txt");
        std::fs::write(&path, "http://127.0.0.1:1/v2/transactions\n").unwrap();
        let c =
            ProxyConfig::from_env(&env(&[("STACKS_API_EXTRA_TX_ENDPOINTS_FILE", path.to_str().unwrap())]))
                .unwrap();
        assert_eq!(c.extra_broadcast.len(), 1);
        let missing = dir.path().join("missing.txt");
        let err =
            ProxyConfig::from_env(&env(&[("STACKS_API_EXTRA_TX_ENDPOINTS_FILE", missing.to_str().unwrap())]))
                .unwrap_err();
        assert!(matches!(err, ConfigError::EndpointsFileUnreadable { .. }));
    }
}
