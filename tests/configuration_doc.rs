//! `docs/configuration.md`'s settings table states a default for every flag and variable. This
//! test reads that table and holds each row's default cell to the value `Config::resolve` gives
//! when nothing is set, written the way the table writes it: a default changed in the code, or
//! in the doc, fails here until the other says the same. (The unit tests in
//! `src/config/tests.rs` check how flags, variables and defaults combine.)

use std::time::Duration;

use stacks_ledger::config::{Config, ConfigArgs};

fn doc() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/configuration.md");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The settings table's rows, each as its cells (`\|` inside a cell is a literal `|`).
fn rows(doc: &str) -> Vec<Vec<String>> {
    let section =
        doc.split("\n## Settings").nth(1).expect("docs/configuration.md has a `## Settings` section");
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---") && !l.starts_with("| Flag"))
        .map(|l| {
            let cells = l.trim().trim_matches('|').replace("\\|", "\u{0}");
            cells.split('|').map(|c| c.trim().replace('\u{0}', "|")).collect()
        })
        .collect()
}

fn resolve(vars: &[(&str, &str)]) -> Config {
    Config::resolve(&ConfigArgs::default(), |name| {
        vars.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
    })
    .expect("the defaults resolve")
}

fn code(value: impl std::fmt::Display) -> String {
    format!("`{value}`")
}

fn millis(d: Duration) -> String {
    code(d.as_millis())
}

#[test]
fn the_settings_table_states_the_defaults_the_code_has() {
    let none = resolve(&[]);
    // The node settings' defaults apply once a node is named.
    let with_node = resolve(&[("STACKS_CORE_RPC_HOST", "127.0.0.1")]);
    let node = with_node.v2.node.as_ref().expect("a node");
    let lower = |v: &dyn std::fmt::Debug| format!("{v:?}").to_ascii_lowercase();
    let admission = &none.load.admission;
    let admission_limits = match (admission.limit, admission.ingest_limit) {
        (None, None) => "the pool's size (SQLite 4, PostgreSQL 8), a quarter of that (at least 1)".to_owned(),
        other => format!("{other:?}"),
    };
    let loops = match none.load.api_loops {
        None if stacks_ledger::api::server::default_loops(4) == 1
            && stacks_ledger::api::server::default_loops(2) == 1
            && stacks_ledger::api::server::default_loops(8) == 2 =>
        {
            "one per four cores, at least 1".to_owned()
        }
        other => format!("{other:?}"),
    };
    let live = &none.live;
    // (what identifies the row: its first cell, else the variable in its second; the default
    // the code has, written as the table writes it)
    let expected: Vec<(&str, String)> = vec![
        ("`--db URL`", code(&none.database_url)),
        ("`--db-primary URL`", none.db_primary.clone().unwrap_or_else(|| "none".into())),
        ("`serve --mode", code(lower(&none.mode))),
        ("`serve --event-ack", code(lower(&none.event_ack))),
        ("`STACKS_LEDGER_EVENT_QUEUE_MB`", code(none.inbox.queue_bytes >> 20)),
        ("`--network", none.network.to_string()),
        ("`--events-bind", code(&none.events_bind)),
        ("`--api-bind", code(&none.api_bind)),
        ("`--event-body-limit", code(none.event_body_limit)),
        ("`--log-level", code(&none.log_filter)),
        (
            "`--node-rpc",
            if none.v2.node.is_none() { "none: the ledger answers `/v2`".into() } else { "a node".into() },
        ),
        (
            "`--v2-policy",
            format!(
                "{} with a node, {} without",
                code(lower(&with_node.v2.policy)),
                code(lower(&none.v2.policy))
            ),
        ),
        ("`--node-connect-timeout-ms", millis(node.connect_timeout)),
        ("`--node-timeout-ms", millis(node.request_timeout)),
        (
            "`--extra-tx-endpoints-file",
            if node.extra_broadcast.is_empty() { "none".into() } else { "some".into() },
        ),
        ("`--fee-rewrite", code(node.min_fee_rewrite.is_some())),
        ("`--transfer-fee", code(none.v2.transfer_fee)),
        ("`--response-cache-mb", code(none.response_cache_bytes >> 20)),
        ("`--metrics-bind", code(none.metrics_bind.as_ref().map_or("off".into(), ToString::to_string))),
        ("`--ready-max-lag", code(none.ready_max_lag)),
        ("`--log-format", code(lower(&none.log_format))),
        ("`STACKS_LEDGER_CACHE_STALE_MS`", millis(none.load.cache_stale)),
        ("`STACKS_LEDGER_CACHE_REFRESH`", code(none.load.cache_refresh)),
        (
            "`STACKS_LEDGER_ADMISSION_LIMIT`",
            format!("{admission_limits}, {}, {}", code(admission.queue), millis(admission.wait)),
        ),
        ("`STACKS_LEDGER_API_NICE`", code(none.load.api_nice)),
        ("`STACKS_LEDGER_API_LOOPS`", loops),
        (
            "`STACKS_API_WS_PING_INTERVAL`",
            [
                code(live.ping_interval.as_secs()),
                code(live.ping_timeout.as_secs()),
                code(live.message_timeout.as_secs()),
                code(live.queue),
                code(live.replay_window),
                code(live.idle_grace.as_secs()),
            ]
            .join(", "),
        ),
    ];
    let rows = rows(&doc());
    let mut wrong = Vec::new();
    for (key, default) in &expected {
        let row = rows.iter().find(|r| {
            r[0].starts_with(key) || (r[0] == "(no flag)" && r.get(1).is_some_and(|c| c.starts_with(key)))
        });
        match row {
            None => wrong.push(format!("no row for {key}")),
            Some(row) if row.last() != Some(default) => wrong
                .push(format!("{key}: the table says {:?}, the code's default is {default:?}", row.last())),
            Some(_) => {}
        }
    }
    assert_eq!(
        rows.len(),
        expected.len(),
        "a row of the settings table has no default checked here: {rows:?}"
    );
    assert!(
        wrong.is_empty(),
        "docs/configuration.md, Settings, disagrees with the code:\n{}",
        wrong.join("\n")
    );
}
