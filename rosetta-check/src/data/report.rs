//! The check report, in rosetta-cli's `check:data` results shape, plus the failures found.

use std::collections::BTreeMap;

use serde::Serialize;

/// Which groups of checks passed (rosetta-cli's `tests` object, plus `indexer`).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Tests {
    pub request_response: bool,
    pub response_assertion: bool,
    pub block_syncing: bool,
    pub balance_tracking: bool,
    pub reconciliation: bool,
    pub indexer: bool,
}

impl Default for Tests {
    fn default() -> Self {
        Tests {
            request_response: true,
            response_assertion: true,
            block_syncing: true,
            balance_tracking: true,
            reconciliation: true,
            indexer: true,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Stats {
    pub requests: u64,
    pub blocks: u64,
    pub orphans: u64,
    pub transactions: u64,
    pub operations: u64,
    pub accounts: u64,
    pub active_reconciliations: u64,
    pub inactive_reconciliations: u64,
    pub exempt_reconciliations: u64,
    pub failed_reconciliations: u64,
    pub skipped_reconciliations: u64,
    pub reconciliation_coverage: f64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Report {
    pub tests: Tests,
    pub stats: Stats,
    /// Failure messages by test group (at most 100 kept per group, `failure_counts` has all).
    pub failures: BTreeMap<String, Vec<String>>,
    pub failure_counts: BTreeMap<String, u64>,
    pub passed: u64,
    pub failed: u64,
}

impl Report {
    pub fn fail(&mut self, test: &str, message: String) {
        let list = self.failures.entry(test.to_owned()).or_default();
        if list.len() < 100 {
            list.push(message);
        }
        *self.failure_counts.entry(test.to_owned()).or_default() += 1;
        let t = &mut self.tests;
        match test {
            "request_response" => t.request_response = false,
            "response_assertion" => t.response_assertion = false,
            "block_syncing" => t.block_syncing = false,
            "balance_tracking" => t.balance_tracking = false,
            "indexer" => t.indexer = false,
            _ => t.reconciliation = false,
        }
    }

    /// Counts passed and failed checks (each request, block and reconciliation is one check).
    pub fn finish(&mut self) {
        self.failed = self.failure_counts.values().sum();
        let s = &self.stats;
        let checks = s.requests + s.blocks + s.active_reconciliations + s.inactive_reconciliations;
        self.passed = checks.saturating_sub(self.failed);
    }

    pub fn ok(&self) -> bool {
        self.failed == 0
    }

    /// The final line: `N passed, N failed`.
    pub fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed, self.failed)
    }
}
