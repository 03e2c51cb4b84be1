//! The incumbent's environment variables that have no effect here, so that a deployment's
//! settings carried over are never dropped without a word: at start-up each one that is set
//! gets one warning naming it, why it is ignored, and what to use instead where there is
//! something. The incumbent's variables are those of its `src/env.ts`; the ones not listed
//! here are read by [`Config`](super::Config) (and `import-bns` reads `BNS_IMPORT_DIR`).

/// Variables ignored for one reason.
pub struct Ignored {
    pub names: &'static [&'static str],
    pub why: &'static str,
}

/// Every incumbent variable with no effect here, grouped by reason.
pub const IGNORED: &[Ignored] = &[
    Ignored {
        names: &["PG_SCHEMA", "PG_PRIMARY_SCHEMA"],
        why: "the ledger's tables are in the database's default schema; give it a database of its own (PG_DATABASE)",
    },
    Ignored {
        names: &["PG_APPLICATION_NAME"],
        why: "name the connections in a database URL instead (`?application_name=NAME` in --db or PG_CONNECTION_URI)",
    },
    Ignored {
        names: &[
            "PG_CONNECTION_POOL_MAX",
            "PG_IDLE_TIMEOUT",
            "PG_MAX_LIFETIME",
            "PG_CLOSE_TIMEOUT",
            "PG_STATEMENT_TIMEOUT",
            "PG_PRIMARY_CONNECTION_POOL_MAX",
            "PG_PRIMARY_IDLE_TIMEOUT",
            "PG_PRIMARY_MAX_LIFETIME",
            "PG_PRIMARY_CLOSE_TIMEOUT",
            "PG_PRIMARY_STATEMENT_TIMEOUT",
        ],
        why: "the store sizes its connection pools and bounds its connections itself",
    },
    Ignored {
        names: &["STACKS_API_STORE_RAW_EVENTS"],
        why: "raw events are always stored: the ledger is derived from them (export-events, replays)",
    },
    Ignored {
        names: &[
            "STACKS_BLOCK_DATA_INSERT_CONCURRENCY",
            "STACKS_ADDRESS_CACHE_SIZE",
            "MEMPOOL_STATS_DEBOUNCE_INTERVAL",
            "MEMPOOL_STATS_DEBOUNCE_MAX_INTERVAL",
        ],
        why: "it tunes the incumbent's internals, which have no counterpart here (a faster sync: --event-ack logged)",
    },
    Ignored {
        names: &["STACKS_API_WS_UPDATE_QUEUE_TIMEOUT"],
        why: "live updates are queued per connection instead (STACKS_LIVE_QUEUE)",
    },
    Ignored {
        names: &["STACKS_PROFILER_HOST", "STACKS_PROFILER_PORT"],
        why: "there is no profiling server; Prometheus metrics are served on --metrics-bind",
    },
    Ignored {
        names: &["CUSTOM_CHAIN_IDS"],
        why: "only the mainnet and testnet chain ids are supported (STACKS_CHAIN_ID)",
    },
    Ignored {
        names: &["SKIP_STACKS_CHAIN_ID_CHECK"],
        why: "the node's network is not asked at start-up; each transaction's chain id is checked as it arrives",
    },
    Ignored {
        names: &["ENABLE_DEPRECATED_ENDPOINTS"],
        why: "deprecated routes always answer, with the incumbent's `Warning` header",
    },
    Ignored {
        names: &["TESTNET_SEND_MANY_CONTRACT_ID", "MAINNET_SEND_MANY_CONTRACT_ID"],
        why: "the send-many-memo contract is fixed per network",
    },
    Ignored {
        names: &["TESTNET_SBTC_FAUCET_ENABLED", "TESTNET_SBTC_FAUCET_ASSET_IDENTIFIER", "TESTNET_SBTC_FAUCET_AMOUNT"],
        why: "there is no sBTC faucet (the STX and BTC faucets are served)",
    },
    Ignored {
        names: &["SNP_EVENT_STREAMING", "SNP_REDIS_URL", "SNP_REDIS_STREAM_KEY_PREFIX", "SNP_BLOCKS_ONLY_STREAMING"],
        why: "events come from the node's event observer only (--events-bind), not from an SNP stream",
    },
    Ignored {
        names: &[
            "REDIS_NOTIFIER_ENABLED",
            "REDIS_QUEUE",
            "REDIS_URL",
            "REDIS_SENTINELS",
            "REDIS_SENTINEL_MASTER",
            "REDIS_SENTINEL_PASSWORD",
            "REDIS_SENTINEL_AUTH_PASSWORD",
            "REDIS_CLUSTER_NODES",
            "REDIS_CLUSTER_PASSWORD",
            "REDIS_CONNECTION_TIMEOUT",
            "REDIS_COMMAND_TIMEOUT",
            "REDIS_MAX_RETRIES",
            "REDIS_QUEUE_MAXLEN",
        ],
        why: "there is no Redis notifier; follow new blocks through the live updates (/extended/v1/ws, Socket.IO)",
    },
    Ignored {
        names: &["BNS_IMPORT_DIR"],
        why: "the Stacks 1.0 BNS names are not imported at start-up: run `stacks-ledger import-bns` (it reads BNS_IMPORT_DIR)",
    },
];

/// The variables that only configure the node the server talks to (the node proxy's, but
/// those naming the node): with no node configured they do nothing (the incumbent always has
/// one, 127.0.0.1:20443 by default).
fn node_only() -> impl Iterator<Item = &'static str> {
    super::PROXY_VARS.into_iter().filter(|name| !super::NODE_VARS.contains(name))
}

/// One message per incumbent variable set (non-empty, as everywhere in the configuration) in
/// `env` that has no effect: the ones of [`IGNORED`], and the node's own settings when
/// `has_node` is false. `except` are read by the command at hand.
pub fn ignored_settings(
    env: impl Fn(&str) -> Option<String>,
    has_node: bool,
    except: &[&str],
) -> Vec<String> {
    let set = |name: &str| !except.contains(&name) && env(name).is_some_and(|v| !v.trim().is_empty());
    let mut out = Vec::new();
    for group in IGNORED {
        for name in group.names.iter().filter(|n| set(n)) {
            out.push(format!("{name} is set and ignored: {}", group.why));
        }
    }
    if !has_node {
        for name in node_only().filter(|n| set(n)) {
            out.push(format!(
                "{name} is set and ignored: it configures the Stacks node, and none is configured \
                 (--node-rpc, or STACKS_CORE_RPC_HOST)"
            ));
        }
    }
    out
}

/// Logs [`ignored_settings`], one `warn` each. Called once at start-up.
pub fn warn_ignored(env: impl Fn(&str) -> Option<String>, has_node: bool, except: &[&str]) {
    for message in ignored_settings(env, has_node, except) {
        tracing::warn!("{message}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, ConfigArgs};
    use test_support::log_capture::Capture;

    fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
    }

    /// The lines [`warn_ignored`] logs for `vars`.
    fn warnings(vars: &'static [(&'static str, &'static str)], has_node: bool) -> Vec<String> {
        let log = Capture::start();
        warn_ignored(env_of(vars), has_node, &[]);
        log.lines()
    }

    #[test]
    fn an_ignored_variable_warns_once_naming_it() {
        let lines = warnings(&[("PG_SCHEMA", "ledger")], false);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("WARN") && lines[0].contains("PG_SCHEMA is set and ignored"), "{lines:?}");
    }

    #[test]
    fn a_mapped_variable_does_not_warn() {
        assert_eq!(
            warnings(&[("PG_HOST", "db"), ("STACKS_CHAIN_ID", "0x00000001")], false),
            [] as [String; 0]
        );
    }

    #[test]
    fn an_unknown_variable_does_not_warn() {
        assert_eq!(warnings(&[("HOME", "/root"), ("MY_OWN_SETTING", "1")], false), [] as [String; 0]);
    }

    #[test]
    fn an_empty_variable_counts_as_unset() {
        assert!(ignored_settings(env_of(&[("REDIS_URL", " ")]), false, &[]).is_empty());
    }

    #[test]
    fn the_node_settings_warn_only_without_a_node() {
        let env = &[("STACKS_CORE_FEE_ESTIMATOR_ENABLED", "true")];
        assert_eq!(ignored_settings(env_of(env), false, &[]).len(), 1);
        assert!(ignored_settings(env_of(env), true, &[]).is_empty());
    }

    #[test]
    fn a_variable_the_command_reads_is_not_reported() {
        let env = env_of(&[("BNS_IMPORT_DIR", "/data/bns")]);
        assert_eq!(ignored_settings(&env, false, &[]).len(), 1);
        assert!(ignored_settings(&env, false, &["BNS_IMPORT_DIR"]).is_empty());
    }

    /// What the list calls ignored is not read: setting any of them to nonsense leaves the
    /// configuration as it is, and no name is listed twice.
    #[test]
    fn ignored_variables_change_nothing() {
        let names: Vec<&str> = IGNORED.iter().flat_map(|g| g.names.iter().copied()).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "a name listed twice");
        let args = ConfigArgs::default();
        let baseline = Config::resolve(&args, |_| None).unwrap().masked_json();
        for name in names.into_iter().chain(node_only()) {
            let config = Config::resolve(&args, |n| (n == name).then(|| "not-a-value".to_owned()))
                .unwrap_or_else(|e| panic!("{name} is read: {e}"));
            assert_eq!(config.masked_json(), baseline, "{name} changes the configuration");
        }
    }
}
