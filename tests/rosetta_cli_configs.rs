//! The rosetta-cli configurations parse, use only rosetta-cli v0.10 field names (it rejects
//! unknown ones), point at our Rosetta routes, and name account files that exist and parse.

use std::path::PathBuf;

use rosetta_check::data::config::CliConfig;
use rosetta_check::data::{read_accounts, read_bootstrap};
use serde_json::Value;

const TOP: &[&str] = &[
    "network",
    "online_url",
    "data_directory",
    "http_timeout",
    "max_retries",
    "retry_elapsed_time",
    "max_online_connections",
    "max_sync_concurrency",
    "tip_delay",
    "max_reorg_depth",
    "log_configuration",
    "compression_disabled",
    "memory_limit_disabled",
    "construction",
    "data",
];
const DATA: &[&str] = &[
    "active_reconciliation_concurrency",
    "inactive_reconciliation_concurrency",
    "inactive_reconciliation_frequency",
    "log_blocks",
    "log_transactions",
    "log_balance_changes",
    "log_reconciliations",
    "ignore_reconciliation_error",
    "exempt_accounts",
    "bootstrap_balances",
    "interesting_accounts",
    "reconciliation_disabled",
    "reconciliation_drain_disabled",
    "inactive_discrepancy_search_disabled",
    "balance_tracking_disabled",
    "coin_tracking_disabled",
    "status_port",
    "results_output_file",
    "pruning_block_disabled",
    "pruning_balance_disabled",
    "initial_balance_fetch_disabled",
    "historical_balance_disabled",
    "start_index",
    "end_conditions",
];

#[test]
fn configs_parse_and_point_at_our_routes() {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/rosetta-cli-configs"));
    for (file, network) in
        [("mainnet.json", "mainnet"), ("testnet.json", "testnet"), ("devnet.json", "testnet")]
    {
        let path = dir.join(file);
        let raw: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for k in raw.as_object().unwrap().keys() {
            assert!(TOP.contains(&k.as_str()), "{file}: unknown field {k}");
        }
        for k in raw["data"].as_object().unwrap().keys() {
            assert!(DATA.contains(&k.as_str()), "{file}: unknown data field {k}");
        }
        assert!(raw["online_url"].as_str().unwrap().ends_with(":3999/rosetta/v1"), "{file}");
        assert_eq!(raw["network"]["blockchain"], "stacks");
        assert_eq!(raw["network"]["network"], network);
        let c = CliConfig::read(&path).unwrap();
        let data = c.data.unwrap();
        read_bootstrap(data.bootstrap_balances.as_ref().unwrap()).unwrap();
        read_accounts(data.exempt_accounts.as_ref().unwrap()).unwrap();
        let interesting = read_accounts(data.interesting_accounts.as_ref().unwrap()).unwrap();
        assert!(!interesting.is_empty(), "{file}");
        assert_eq!(
            data.historical_balance_disabled,
            Some(false),
            "{file}: active reconciliation needs history"
        );
        if let Some(dsl) = raw["construction"]["constructor_dsl_file"].as_str() {
            let ros = std::fs::read_to_string(dir.join(dsl)).unwrap();
            for op in ["\"fee\"", "\"token_transfer\""] {
                assert!(ros.contains(op), "{dsl} uses {op}");
                let ty = op.trim_matches('"');
                assert!(stacks_ledger::rosetta::network::OPERATION_TYPES.contains(&ty));
            }
        }
    }
}
