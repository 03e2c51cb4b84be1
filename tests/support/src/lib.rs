//! Where the shared reference data lives, and the one rule for when it is missing: under
//! `CI=true` a missing file fails the test; anywhere else the test says it skips and returns.
//!
//! The data sits beside the repository (`<repo>/../shared`) and is never copied into it.
//! Beside it, [`log_capture`]: a test's own log lines.

#![forbid(unsafe_code)]

use std::path::PathBuf;

pub mod log_capture;
pub mod oracle;

/// Every raw event log in the shared data, relative to `shared/`.
pub const EVENT_LOGS: [&str; 9] = [
    "fixtures/epoch-3-transition.tsv",
    "fixtures/mainnet-block0.tsv",
    "fixtures/mainnet-out-of-order-microblock.tsv",
    "fixtures/mainnet-reorg-scenario1.tsv",
    "fixtures/mainnet-reorg-scenario2.tsv",
    "fixtures/mocknet.tsv",
    "fixtures/poisonmicroblock.tsv",
    "fixtures/regtest-env-pox-4-stack-stx-in-reward-phase-S1.tsv",
    "bench/realnode-2/events.tsv",
];

/// `<repo>/../shared`.
pub fn shared_root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared"))
}

pub fn in_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// A shared file or folder, or `None` (after saying so) when it is absent outside CI.
///
/// # Panics
/// When it is absent and `CI=true`.
pub fn shared_path(rel: &str) -> Option<PathBuf> {
    let path = shared_root().join(rel);
    if path.exists() {
        return Some(path);
    }
    assert!(!in_ci(), "{} not found: CI=true requires the shared reference data", path.display());
    println!("skipping: {} not found", path.display());
    None
}

/// A shared JSON file, parsed.
///
/// # Panics
/// When it is absent under `CI=true`, unreadable, or not JSON.
pub fn load_json(rel: &str) -> Option<serde_json::Value> {
    let path = shared_path(rel)?;
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display())))
}

/// The `.tsv` event logs in `shared/fixtures`, sorted by name.
pub fn fixture_logs() -> Option<Vec<PathBuf>> {
    let dir = shared_path("fixtures")?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("listing {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "tsv"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .tsv files in {}", dir.display());
    Some(files)
}
