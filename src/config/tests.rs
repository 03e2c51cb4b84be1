use std::collections::HashMap;

use super::*;

fn resolve(args: &ConfigArgs, vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let env: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Config::resolve(args, |name| env.get(name).cloned())
}

fn env_only(vars: &[(&str, &str)]) -> Config {
    resolve(&ConfigArgs::default(), vars).unwrap()
}

fn invalid_source(err: ConfigError) -> String {
    match err {
        ConfigError::Invalid { source_name, .. } => source_name,
        other => panic!("{other:?}"),
    }
}

/// The defaults `docs/configuration.md`'s settings table states; `tests/configuration_doc.rs`
/// holds every row of that table to the code.
#[test]
fn defaults() {
    let c = env_only(&[]);
    assert_eq!(c.database_url, "sqlite://./data/stacks-ledger.db");
    assert_eq!(c.network, Network::Testnet);
    assert_eq!(c.events_bind, BindAddr { host: "127.0.0.1".into(), port: 3700 });
    assert_eq!(c.api_bind.to_string(), "127.0.0.1:3999");
    assert_eq!(c.event_body_limit, 500_000_000);
    assert_eq!(c.log_filter, "info");
}

#[test]
fn flags_beat_environment_variables() {
    let args = ConfigArgs {
        db: Some("postgres://u@h/db".into()),
        network: Some(Network::Mainnet),
        events_bind: Some("0.0.0.0:4000".into()),
        api_bind: Some("[::1]:8080".into()),
        event_body_limit: Some(42),
        log_level: Some("warn".into()),
        ..ConfigArgs::default()
    };
    let vars = [
        ("DATABASE_URL", "sqlite://other.db"),
        ("PG_HOST", "db.example"),
        ("STACKS_CHAIN_ID", "0x80000000"),
        ("STACKS_CORE_EVENT_HOST", "10.0.0.1"),
        ("STACKS_CORE_EVENT_PORT", "1"),
        ("STACKS_BLOCKCHAIN_API_PORT", "2"),
        ("STACKS_CORE_EVENT_BODY_LIMIT", "7"),
        ("STACKS_API_LOG_LEVEL", "debug"),
    ];
    let c = resolve(&args, &vars).unwrap();
    assert_eq!(c.database_url, "postgres://u@h/db");
    assert_eq!(c.network, Network::Mainnet);
    assert_eq!(c.events_bind, BindAddr { host: "0.0.0.0".into(), port: 4000 });
    assert_eq!(c.api_bind, BindAddr { host: "::1".into(), port: 8080 });
    assert_eq!(c.api_bind.to_string(), "[::1]:8080");
    assert_eq!(c.event_body_limit, 42);
    assert_eq!(c.log_filter, "warn");
}

#[test]
fn environment_variables_beat_defaults() {
    let c = env_only(&[
        ("DATABASE_URL", "sqlite:///var/lib/ledger.db"),
        ("STACKS_CHAIN_ID", "0x00000001"),
        ("STACKS_CORE_EVENT_HOST", "http://0.0.0.0"),
        ("STACKS_CORE_EVENT_PORT", "3701"),
        ("STACKS_BLOCKCHAIN_API_HOST", "0.0.0.0"),
        ("STACKS_CORE_EVENT_BODY_LIMIT", "1000"),
        ("STACKS_API_LOG_LEVEL", "verbose"),
    ]);
    assert_eq!(c.database_url, "sqlite:///var/lib/ledger.db");
    assert_eq!(c.network, Network::Mainnet);
    assert_eq!(c.events_bind, BindAddr { host: "0.0.0.0".into(), port: 3701 });
    assert_eq!(c.api_bind, BindAddr { host: "0.0.0.0".into(), port: 3999 });
    assert_eq!(c.event_body_limit, 1000);
    assert_eq!(c.log_filter, "debug");
}

#[test]
fn empty_variables_count_as_unset() {
    let c = env_only(&[("DATABASE_URL", ""), ("STACKS_CHAIN_ID", " "), ("PG_HOST", "")]);
    assert_eq!(c.masked_json(), env_only(&[]).masked_json());
}

#[test]
fn postgres_url_from_the_discrete_variables() {
    let c = env_only(&[("PG_HOST", "db.internal"), ("PG_PASSWORD", "p@ss:w/rd %?#é")]);
    assert_eq!(
        c.database_url,
        "postgres://postgres:p%40ss%3Aw%2Frd%20%25%3F%23%C3%A9@db.internal:5490/stacks_blockchain_api"
    );
    let c = env_only(&[
        ("PG_HOST", "::1"),
        ("PG_PORT", "5432"),
        ("PG_USER", "ledger user"),
        ("PG_DATABASE", "ledger"),
        ("PG_SSL", "1"),
    ]);
    assert_eq!(c.database_url, "postgres://ledger%20user:postgres@[::1]:5432/ledger?sslmode=require");
    // DATABASE_URL wins over the PG_* variables.
    assert_eq!(
        env_only(&[("DATABASE_URL", "postgres://x/y"), ("PG_HOST", "h")]).database_url,
        "postgres://x/y"
    );
}

#[test]
fn pg_connection_uri_alone_or_refused_with_discrete_variables() {
    assert_eq!(env_only(&[("PG_CONNECTION_URI", "postgresql://a@b/c")]).database_url, "postgresql://a@b/c");
    let err = resolve(&ConfigArgs::default(), &[("PG_CONNECTION_URI", "postgres://a@b/c"), ("PG_PORT", "1")]);
    assert_eq!(err.unwrap_err(), ConfigError::PgUriWithDiscreteVars("PG_PORT"));
}

#[test]
fn bad_values_name_their_source() {
    let cases: [(&[(&str, &str)], &str); 8] = [
        (&[("STACKS_CHAIN_ID", "0x12345678")], "STACKS_CHAIN_ID"),
        (&[("STACKS_CHAIN_ID", "mainnet")], "STACKS_CHAIN_ID"),
        (&[("PG_PORT", "70000")], "PG_PORT"),
        (&[("PG_SSL", "yes")], "PG_SSL"),
        (&[("STACKS_CORE_EVENT_PORT", "http")], "STACKS_CORE_EVENT_PORT"),
        (&[("STACKS_CORE_EVENT_BODY_LIMIT", "-1")], "STACKS_CORE_EVENT_BODY_LIMIT"),
        (&[("DATABASE_URL", "mysql://x")], "DATABASE_URL"),
        (&[("STACKS_API_LOG_LEVEL", "loud=[")], "STACKS_API_LOG_LEVEL"),
    ];
    for (vars, name) in cases {
        assert_eq!(invalid_source(resolve(&ConfigArgs::default(), vars).unwrap_err()), name, "{vars:?}");
    }
    let err = resolve(&ConfigArgs::default(), &[("STACKS_CHAIN_ID", "0x12345678")]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "STACKS_CHAIN_ID `0x12345678`: neither mainnet (0x00000001) nor testnet (0x80000000); custom chain ids \
         are not supported"
    );
    let flag =
        |events_bind: &str| ConfigArgs { events_bind: Some(events_bind.into()), ..ConfigArgs::default() };
    for bad in ["3700", ":3700", "host:port", "host:70000"] {
        assert_eq!(invalid_source(resolve(&flag(bad), &[]).unwrap_err()), "--events-bind", "{bad}");
    }
    assert_eq!(resolve(&flag("http://localhost:1/"), &[]).unwrap().events_bind.to_string(), "localhost:1");
}

#[test]
fn chain_ids_in_hex_or_decimal() {
    assert_eq!(env_only(&[("STACKS_CHAIN_ID", "0X80000000")]).network, Network::Testnet);
    assert_eq!(env_only(&[("STACKS_CHAIN_ID", "0x1")]).network, Network::Mainnet);
    assert_eq!(env_only(&[("STACKS_CHAIN_ID", "2147483648")]).network, Network::Testnet);
    assert_eq!(Network::Mainnet.chain_id(), 1);
    assert_eq!(Network::from_chain_id(0x8000_0000), Some(Network::Testnet));
}

#[test]
fn log_levels_map_to_tracing_filters() {
    let level = |vars: &[(&str, &str)]| env_only(vars).log_filter;
    assert_eq!(level(&[("STACKS_API_LOG_LEVEL", "silly")]), "trace");
    assert_eq!(level(&[("STACKS_API_LOG_LEVEL", "HTTP")]), "debug");
    assert_eq!(level(&[("STACKS_API_LOG_LEVEL", "fatal")]), "error");
    assert_eq!(level(&[("STACKS_API_LOG_LEVEL", "silent")]), "off");
    assert_eq!(level(&[("STACKS_API_LOG_LEVEL", "warn,stacks_ledger=debug")]), "warn,stacks_ledger=debug");
    assert_eq!(level(&[("RUST_LOG", "stacks_ledger=trace")]), "stacks_ledger=trace");
    assert_eq!(level(&[("RUST_LOG", "trace"), ("STACKS_API_LOG_LEVEL", "error")]), "error");
}

#[test]
fn v2_without_a_node_is_the_ledger() {
    let config = env_only(&[]);
    assert_eq!(config.v2.node, None);
    assert_eq!(config.v2.policy, V2Policy::Ledger);
    assert_eq!(config.v2.transfer_fee, 1);
    let err =
        Config::resolve(&ConfigArgs { v2_policy: Some(V2Policy::Auto), ..ConfigArgs::default() }, |_| None);
    assert_eq!(err.unwrap_err(), ConfigError::PolicyNeedsNode("auto"));
    let env = |name: &str| (name == "STACKS_LEDGER_V2_POLICY").then(|| "proxy".to_string());
    assert_eq!(
        Config::resolve(&ConfigArgs::default(), env).unwrap_err(),
        ConfigError::PolicyNeedsNode("proxy")
    );
}

#[test]
fn v2_node_from_the_incumbents_variables_and_flags() {
    let config = env_only(&[
        ("STACKS_CORE_RPC_HOST", "10.0.0.1"),
        ("STACKS_CORE_RPC_PORT", "20444"),
        ("STACKS_CORE_PROXY_TIMEOUT_MS", "1500"),
        ("STACKS_LEDGER_V2_POLICY", "AUTO"),
        ("STACKS_LEDGER_V2_TRANSFER_FEE", "3"),
    ]);
    let node = config.v2.node.as_ref().unwrap();
    assert_eq!(node.node.as_str(), "http://10.0.0.1:20444/");
    assert_eq!(node.request_timeout, std::time::Duration::from_millis(1500));
    assert_eq!(config.v2.policy, V2Policy::Auto);
    assert_eq!(config.v2.transfer_fee, 3);

    // A node alone means the default, auto (docs/configuration.md); the incumbent's behaviour
    // is asked for.
    assert_eq!(env_only(&[("STACKS_CORE_PROXY_PORT", "1")]).v2.policy, V2Policy::Auto);
    let proxy = env_only(&[("STACKS_CORE_PROXY_PORT", "1"), ("STACKS_LEDGER_V2_POLICY", "proxy")]);
    assert_eq!(proxy.v2.policy, V2Policy::Proxy);

    // Flags win; the variables' ports do not apply to --node-rpc.
    let args = ConfigArgs {
        node_rpc: Some("https://node.example:443/rpc".into()),
        node_timeout_ms: Some(700),
        fee_rewrite: Some(true),
        v2_policy: Some(V2Policy::Ledger),
        ..ConfigArgs::default()
    };
    let env = |name: &str| match name {
        "STACKS_CORE_RPC_PORT" => Some("20444".to_string()),
        "STACKS_CORE_PROXY_TIMEOUT_MS" => Some("9000".to_string()),
        _ => None,
    };
    let config = Config::resolve(&args, env).unwrap();
    let node = config.v2.node.as_ref().unwrap();
    assert_eq!(node.node.host_str(), Some("node.example"));
    assert_eq!(node.node.path(), "/rpc");
    assert_eq!(node.request_timeout, std::time::Duration::from_millis(700));
    assert!(node.min_fee_rewrite.is_some());
    assert_eq!(config.v2.policy, V2Policy::Ledger);

    let bad = ConfigArgs { node_rpc: Some("node.example:20443".into()), ..ConfigArgs::default() };
    assert!(matches!(Config::resolve(&bad, |_| None), Err(ConfigError::Invalid { .. })));
    let bad_timeout = [("STACKS_CORE_RPC_HOST", "h"), ("STACKS_CORE_PROXY_TIMEOUT_MS", "0")];
    let lookup = |name: &str| bad_timeout.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string());
    assert!(matches!(Config::resolve(&ConfigArgs::default(), lookup), Err(ConfigError::Node(_))));
}

#[test]
fn stacks_api_mode_selects_the_mode() {
    assert_eq!(env_only(&[]).mode, Mode::Online);
    assert_eq!(env_only(&[("STACKS_API_MODE", "offline")]).mode, Mode::Offline);
    assert_eq!(env_only(&[("STACKS_API_MODE", "default")]).mode, Mode::Online);
    assert_eq!(env_only(&[("STACKS_API_MODE", "readonly")]).mode, Mode::Readonly);
    assert_eq!(env_only(&[("STACKS_API_MODE", "WriteOnly")]).mode, Mode::Writeonly);
    let err = resolve(&ConfigArgs::default(), &[("STACKS_API_MODE", "read-write")]).unwrap_err();
    assert_eq!(invalid_source(err), "STACKS_API_MODE");
    assert!(Mode::Online.ingests() && Mode::Online.serves_api());
    assert!(!Mode::Readonly.ingests() && Mode::Readonly.serves_api());
    assert!(Mode::Writeonly.ingests() && !Mode::Writeonly.serves_api());
}

#[test]
fn the_event_ack_and_its_queue_come_from_the_environment() {
    let c = env_only(&[]);
    assert_eq!((c.event_ack, c.inbox.queue_bytes), (EventAck::Applied, 256 << 20));
    let c = env_only(&[("STACKS_LEDGER_EVENT_ACK", "Logged"), ("STACKS_LEDGER_EVENT_QUEUE_MB", "16")]);
    assert_eq!((c.event_ack, c.inbox.queue_bytes), (EventAck::Logged, 16 << 20));
    let err = resolve(&ConfigArgs::default(), &[("STACKS_LEDGER_EVENT_ACK", "durable")]).unwrap_err();
    assert_eq!(invalid_source(err), "STACKS_LEDGER_EVENT_ACK");
    let err = resolve(&ConfigArgs::default(), &[("STACKS_LEDGER_EVENT_QUEUE_MB", "0")]).unwrap_err();
    assert_eq!(invalid_source(err), "STACKS_LEDGER_EVENT_QUEUE_MB");
}

#[test]
fn the_primary_comes_from_the_flag_the_uri_or_the_incumbents_variables() {
    assert_eq!(env_only(&[]).db_primary, None);
    let c = env_only(&[("PG_PRIMARY_CONNECTION_URI", "postgres://u:p@primary:5432/db")]);
    assert_eq!(c.db_primary.as_deref(), Some("postgres://u:p@primary:5432/db"));
    // Each PG_PRIMARY_ variable falls back to its PG_ one.
    let c = env_only(&[
        ("PG_HOST", "replica"),
        ("PG_USER", "reader"),
        ("PG_PASSWORD", "pw"),
        ("PG_DATABASE", "ledger"),
        ("PG_PRIMARY_HOST", "primary"),
        ("PG_PRIMARY_PORT", "6543"),
    ]);
    assert_eq!(c.database_url, "postgres://reader:pw@replica:5490/ledger");
    assert_eq!(c.db_primary.as_deref(), Some("postgres://reader:pw@primary:6543/ledger"));
    let args = ConfigArgs { db_primary: Some("postgres://flag@h/db".into()), ..ConfigArgs::default() };
    let c = resolve(&args, &[("PG_PRIMARY_HOST", "ignored")]).unwrap();
    assert_eq!(c.db_primary.as_deref(), Some("postgres://flag@h/db"));
    let args = ConfigArgs { db_primary: Some("sqlite://x.db".into()), ..ConfigArgs::default() };
    assert_eq!(invalid_source(resolve(&args, &[]).unwrap_err()), "--db-primary");
    // Masked like the database URL.
    let c = env_only(&[("PG_PRIMARY_CONNECTION_URI", "postgres://u:secret@primary/db")]);
    assert_eq!(c.masked_json()["db_primary"], "postgres://u:***@primary/db");
}

#[test]
fn operability_settings_defaults_flags_and_environment() {
    let c = env_only(&[]);
    assert_eq!(c.metrics_bind.as_ref().map(ToString::to_string).as_deref(), Some("127.0.0.1:9153"));
    assert_eq!(c.ready_max_lag, DEFAULT_READY_MAX_LAG);
    assert_eq!(c.log_format, LogFormat::Text);
    assert_eq!(c.response_cache_bytes, 64 << 20);
    let c = env_only(&[
        ("STACKS_LEDGER_METRICS_BIND", "off"),
        ("STACKS_LEDGER_READY_MAX_LAG", "10"),
        ("STACKS_LEDGER_LOG_FORMAT", "JSON"),
        ("STACKS_LEDGER_RESPONSE_CACHE_MB", "0"),
        ("STACKS_LIVE_QUEUE", "7"),
    ]);
    assert_eq!((c.metrics_bind, c.ready_max_lag, c.log_format), (None, 10, LogFormat::Json));
    assert_eq!((c.response_cache_bytes, c.live.queue), (0, 7));
    let args = ConfigArgs {
        metrics_bind: Some("0.0.0.0:9999".into()),
        ready_max_lag: Some(0),
        log_format: Some(LogFormat::Text),
        response_cache_mb: Some(1),
        ..ConfigArgs::default()
    };
    let c = resolve(&args, &[("STACKS_LEDGER_METRICS_BIND", "off"), ("STACKS_LEDGER_LOG_FORMAT", "json")])
        .unwrap();
    assert_eq!(c.metrics_bind, Some(BindAddr { host: "0.0.0.0".into(), port: 9999 }));
    assert_eq!((c.ready_max_lag, c.log_format, c.response_cache_bytes), (0, LogFormat::Text, 1 << 20));
}

#[test]
fn load_settings_from_the_environment() {
    assert_eq!(env_only(&[]).load, LoadConfig::default());
    let c = env_only(&[
        ("STACKS_LEDGER_CACHE_STALE_MS", "0"),
        ("STACKS_LEDGER_CACHE_REFRESH", "2"),
        ("STACKS_LEDGER_ADMISSION_LIMIT", "3"),
        ("STACKS_LEDGER_ADMISSION_INGEST_LIMIT", "1"),
        ("STACKS_LEDGER_ADMISSION_QUEUE", "0"),
        ("STACKS_LEDGER_ADMISSION_WAIT_MS", "20"),
        ("STACKS_LEDGER_API_LOOPS", "3"),
    ]);
    let expected =
        AdmissionConfig { limit: Some(3), ingest_limit: Some(1), queue: 0, wait: Duration::from_millis(20) };
    assert_eq!((c.load.cache_stale, c.load.cache_refresh, c.load.admission), (Duration::ZERO, 2, expected));
    assert_eq!((c.load.api_loops, LoadConfig::default().api_loops), (Some(3), None));
}

#[test]
fn every_invalid_setting_is_named() {
    let cases: [(&str, &str); 11] = [
        ("STACKS_LEDGER_ADMISSION_LIMIT", "-1"),
        ("STACKS_LEDGER_API_LOOPS", "0"),
        ("STACKS_LEDGER_CACHE_STALE_MS", "soon"),
        ("STACKS_LEDGER_CACHE_REFRESH", "all"),
        ("STACKS_LEDGER_METRICS_BIND", "9153"),
        ("STACKS_LEDGER_READY_MAX_LAG", "-1"),
        ("STACKS_LEDGER_LOG_FORMAT", "xml"),
        ("STACKS_LEDGER_RESPONSE_CACHE_MB", "lots"),
        ("TESTNET_BTC_FAUCET_ENABLED", "yes"),
        ("STACKS_LIVE_QUEUE", "0"),
        ("STACKS_FAUCET_NODE_PORT", "1"),
    ];
    for (name, value) in cases {
        let err = resolve(&ConfigArgs::default(), &[(name, value)]).unwrap_err();
        assert!(err.to_string().contains(name), "{name}: {err}");
    }
}

/// The one node setting: `/v2` (proxy and `auto`), Rosetta construction (which takes its node
/// from `v2`) and the faucet all get it, whichever way it was given.
#[test]
fn the_node_setting_reaches_the_faucet() {
    let flag = ConfigArgs { node_rpc: Some("http://node.example:30443".into()), ..ConfigArgs::default() };
    let c = resolve(&flag, &[("STACKS_CORE_RPC_HOST", "ignored")]).unwrap();
    assert_eq!(c.v2.node.as_ref().unwrap().node.as_str(), "http://node.example:30443/");
    assert_eq!(c.v2.policy, V2Policy::Auto);
    assert_eq!(c.faucet.node_url.as_deref(), Some("http://node.example:30443"));

    let c = env_only(&[("STACKS_CORE_RPC_HOST", "10.0.0.2"), ("STACKS_CORE_RPC_PORT", "20444")]);
    assert_eq!(c.faucet.node_url.as_deref(), Some("http://10.0.0.2:20444"));
    // The faucet's own variables may still name another node.
    let c = env_only(&[("STACKS_CORE_RPC_HOST", "10.0.0.2"), ("STACKS_FAUCET_NODE_HOST", "faucet-node")]);
    assert_eq!(c.faucet.node_url.as_deref(), Some("http://faucet-node:20443"));
    // No node: the faucet has none either (it answers 503 saying so), as `/v2` answers alone.
    assert_eq!(env_only(&[]).faucet.node_url, None);
}

#[test]
fn config_json_masks_secrets() {
    let key = "11".repeat(32);
    let btc_key = "33".repeat(32);
    let c = env_only(&[
        ("DATABASE_URL", "postgres://ledger:hunter2@db:5432/ledger"),
        ("FAUCET_PRIVATE_KEY", &format!("{key}01")),
        ("BTC_RPC_PW", "btcsecret"),
        ("BTC_FAUCET_PK", &btc_key),
        ("STACKS_CORE_RPC_HOST", "node"),
    ]);
    let text = c.masked_json().to_string();
    for secret in ["hunter2", key.as_str(), "btcsecret", btc_key.as_str()] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    let json = c.masked_json();
    assert_eq!(json["database_url"], "postgres://ledger:***@db:5432/ledger");
    assert_eq!(json["node"]["rpc"], "http://node:20443/");
    assert_eq!(json["faucet"]["node"], "http://node:20443");
    assert_eq!(json["node"]["v2_policy"], "auto");
}
