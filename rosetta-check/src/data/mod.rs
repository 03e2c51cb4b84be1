//! `stacks-ledger check-data`: what rosetta-cli `check:data` verifies, against any Rosetta
//! server (ours in the test suite).
//!
//! * every response is validated against the Rosetta OpenAPI document, every error must be in
//!   `allow.errors` and served with HTTP 500;
//! * blocks are synced from the start index to the tip: indexes consecutive, parent links
//!   followed, orphans handled (a parent mismatch drops the last synced block, undoing its
//!   balance changes, and syncing resumes from its parent), answers for a hash stable, no
//!   duplicate transaction, operation indexes contiguous, types and statuses allowed;
//! * balances are tracked from successful operations, per account and sub-account;
//! * active reconciliation: every account (and its `locked` sub-account) touched by a block is
//!   compared with `/account/balance` at that block, by index and by hash;
//!   `metadata.sequence_number` never decreases;
//! * inactive reconciliation: at the end every account seen is reconciled at the tip;
//! * indexer extras: `/events/blocks`, applied in order (removals at the tip), replays the
//!   synced chain, `/search/transactions` finds each sampled transaction as `/block` shows it,
//!   mempool answers validate.
//!
//! [`Checker::sync`] can be called repeatedly while the server's chain grows (or reorgs).

pub mod config;
mod report;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use anyhow::{anyhow, Context};
use rosetta_spec::{
    AccountIdentifier, Block, BlockIdentifier, NetworkIdentifier, NetworkOptionsResponse,
    NetworkStatusResponse,
};
use serde_json::{json, Value};

pub use report::{Report, Stats, Tests};

/// What to check and against which server.
#[derive(Debug, Clone)]
pub struct Options {
    /// Base URL of the server (without `/rosetta/v1`).
    pub url: String,
    pub network: Option<String>,
    pub start: Option<i64>,
    pub end: Option<i64>,
    /// The Rosetta OpenAPI documents responses are validated against, in order: the first that
    /// declares an endpoint is used (`api.json` 1.4.6, then `api-v1.4.7.json` for the indexer
    /// endpoints 1.4.6 lacks).
    pub specs: Vec<Value>,
    /// Balances before the start block (rosetta-cli `bootstrap_balances`): (address, sub-account) → value.
    pub bootstrap: BTreeMap<(String, Option<String>), i128>,
    pub exempt: BTreeSet<(String, Option<String>)>,
    /// Inactive reconciliation of every account at the end.
    pub inactive: bool,
    /// Required fraction of seen accounts reconciled (rosetta-cli `reconciliation_coverage`).
    pub coverage: Option<f64>,
}

impl Options {
    pub fn new(url: impl Into<String>) -> Self {
        Options {
            url: url.into(),
            network: None,
            start: None,
            end: None,
            specs: Vec::new(),
            bootstrap: BTreeMap::new(),
            exempt: BTreeSet::new(),
            inactive: true,
            coverage: None,
        }
    }
}

type Key = (String, Option<String>);

fn key_of(a: &AccountIdentifier) -> Key {
    (a.address.clone(), a.sub_account.as_ref().map(|s| s.address.clone()))
}

fn account_of(k: &Key) -> Value {
    match &k.1 {
        None => json!({ "address": k.0 }),
        Some(s) => json!({ "address": k.0, "sub_account": { "address": s } }),
    }
}

/// A synced block and what it changed, to undo it when orphaned.
struct Synced {
    id: BlockIdentifier,
    deltas: HashMap<Key, i128>,
    tx_ids: Vec<String>,
}

pub struct Checker {
    opts: Options,
    client: reqwest::Client,
    network: NetworkIdentifier,
    allow: Option<NetworkOptionsResponse>,
    chain: Vec<Synced>,
    balances: HashMap<Key, i128>,
    sequence: HashMap<String, i64>,
    seen: BTreeSet<Key>,
    reconciled: BTreeSet<Key>,
    /// The block below the first one synced, when the check starts above genesis: an account
    /// first touched after it starts from its balance there (rosetta-cli does the same with a
    /// start index and historical balances), unless the bootstrap file gives it.
    base: Option<BlockIdentifier>,
    pub report: Report,
}

impl Checker {
    pub fn new(opts: Options) -> anyhow::Result<Self> {
        let client = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(30))
            .build()
            .context("building the HTTP client")?;
        let network = NetworkIdentifier::new("stacks", opts.network.clone().unwrap_or_default());
        let balances = opts.bootstrap.iter().map(|(k, v)| (k.clone(), *v)).collect();
        Ok(Checker {
            opts,
            client,
            network,
            allow: None,
            chain: Vec::new(),
            balances,
            sequence: HashMap::new(),
            seen: BTreeSet::new(),
            reconciled: BTreeSet::new(),
            base: None,
            report: Report::default(),
        })
    }

    pub fn fail(&mut self, test: &str, message: String) {
        tracing::warn!(test, "{message}");
        self.report.fail(test, message);
    }

    /// POSTs `body` to `path` and validates the answer: 200 against the endpoint's response
    /// schema, anything else must be HTTP 500 with an `Error` listed in `allow.errors`.
    pub async fn post(
        &mut self,
        path: &str,
        body: Value,
    ) -> anyhow::Result<Result<Value, rosetta_spec::Error>> {
        let url = format!("{}/rosetta/v1{path}", self.opts.url.trim_end_matches('/'));
        let res = self.client.post(&url).json(&body).send().await.with_context(|| format!("POST {url}"))?;
        let status = res.status().as_u16();
        let text = res.text().await.with_context(|| format!("reading the answer of {url}"))?;
        self.report.stats.requests += 1;
        let value: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                self.fail("request_response", format!("{path}: HTTP {status}, body is not JSON: {e}"));
                return Err(anyhow!("{path}: answer is not JSON"));
            }
        };
        if status == 200 {
            self.validate(path, false, &value);
            return Ok(Ok(value));
        }
        self.validate(path, true, &value);
        if status != 500 {
            self.fail("request_response", format!("{path}: error served with HTTP {status}, not 500"));
        }
        let err: rosetta_spec::Error = match serde_json::from_value(value.clone()) {
            Ok(e) => e,
            Err(e) => {
                self.fail("request_response", format!("{path}: HTTP {status} without a Rosetta Error: {e}"));
                return Err(anyhow!("{path}: HTTP {status}: {value}"));
            }
        };
        if let Some(allow) = &self.allow {
            let listed = allow
                .allow
                .errors
                .iter()
                .any(|e| e.code == err.code && e.message == err.message && e.retriable == err.retriable);
            if !listed {
                self.fail(
                    "response_assertion",
                    format!("{path}: error {} {:?} not in allow.errors", err.code, err.message),
                );
            }
        }
        Ok(Err(err))
    }

    fn validate(&mut self, path: &str, error: bool, value: &Value) {
        if self.opts.specs.is_empty() {
            return;
        }
        let found = self
            .opts
            .specs
            .iter()
            .find_map(|doc| rosetta_spec::schema::endpoint(doc, path).map(|e| (doc, e)));
        let Some((doc, endpoint)) = found else {
            self.fail("response_assertion", format!("{path}: not an endpoint of the spec"));
            return;
        };
        let schema = if error { endpoint.error } else { endpoint.response };
        let Some(schema) = schema else { return };
        if let Err(problems) = rosetta_spec::schema::validate(doc, &schema, value) {
            self.fail(
                "response_assertion",
                format!("{path}: answer is not a valid {schema}: {}", problems.join("; ")),
            );
        }
    }

    /// A request that must succeed; `None` (after recording the failure) otherwise.
    pub async fn ok(&mut self, test: &str, path: &str, body: Value) -> Option<Value> {
        match self.post(path, body.clone()).await {
            Ok(Ok(v)) => Some(v),
            Ok(Err(e)) => {
                self.fail(test, format!("{path} {body}: error {} {}: {:?}", e.code, e.message, e.details));
                None
            }
            Err(e) => {
                self.fail(test, format!("{e:#}"));
                None
            }
        }
    }

    /// `/network/list`, `/network/options`, `/network/status`, and what the options promise.
    pub async fn start(&mut self) -> anyhow::Result<NetworkStatusResponse> {
        self.load_network().await?;
        let net = json!({ "network_identifier": self.network });
        // A wrong network must be refused with a listed error.
        let wrong = json!({ "network_identifier": { "blockchain": "stacks", "network": "no-such-network" } });
        if let Ok(Ok(_)) = self.post("/network/status", wrong).await {
            self.fail("response_assertion", "/network/status accepted an unknown network".into());
        }
        let status = self
            .ok("request_response", "/network/status", net)
            .await
            .ok_or_else(|| anyhow!("/network/status failed"))?;
        Ok(serde_json::from_value(status)?)
    }

    /// The network served and `/network/options` (what errors are listed): all an offline
    /// server answers besides construction.
    pub async fn load_network(&mut self) -> anyhow::Result<()> {
        let list = self
            .ok("request_response", "/network/list", json!({}))
            .await
            .ok_or_else(|| anyhow!("/network/list failed"))?;
        let ids: Vec<NetworkIdentifier> = serde_json::from_value(list["network_identifiers"].clone())?;
        self.network = match &self.opts.network {
            Some(n) => ids
                .into_iter()
                .find(|i| &i.network == n)
                .ok_or_else(|| anyhow!("the server does not serve network {n}"))?,
            None => ids.into_iter().next().ok_or_else(|| anyhow!("/network/list is empty"))?,
        };
        let net = json!({ "network_identifier": self.network });
        let options = self
            .ok("request_response", "/network/options", net)
            .await
            .ok_or_else(|| anyhow!("/network/options failed"))?;
        let options: NetworkOptionsResponse = serde_json::from_value(options)?;
        let mut codes = HashSet::new();
        for e in &options.allow.errors {
            if !codes.insert(e.code) {
                self.fail("response_assertion", format!("allow.errors lists code {} twice", e.code));
            }
        }
        if !options.allow.historical_balance_lookup {
            self.fail(
                "reconciliation",
                "historical_balance_lookup is false: active reconciliation needs it".into(),
            );
        }
        self.allow = Some(options);
        Ok(())
    }

    /// The network identifier requests name (after [`Checker::load_network`]).
    pub fn network(&self) -> &NetworkIdentifier {
        &self.network
    }

    /// Syncs (and reconciles) from where the last call stopped up to the tip or `--end`.
    pub async fn sync(&mut self) -> anyhow::Result<()> {
        if self.allow.is_none() {
            self.start().await?;
        }
        let net = json!({ "network_identifier": self.network });
        let status: NetworkStatusResponse = serde_json::from_value(
            self.ok("request_response", "/network/status", net)
                .await
                .ok_or_else(|| anyhow!("/network/status failed"))?,
        )?;
        let first = self.opts.start.unwrap_or(status.genesis_block_identifier.index);
        let end = self
            .opts
            .end
            .map_or(status.current_block_identifier.index, |e| e.min(status.current_block_identifier.index));
        // Blocks above a shorter new tip, or replaced at our tip, are orphans.
        while let Some(last) = self.chain.last().map(|b| b.id.clone()) {
            let body =
                json!({ "network_identifier": self.network, "block_identifier": { "index": last.index } });
            let current = match self.post("/block", body).await? {
                Ok(v) => {
                    serde_json::from_value::<BlockIdentifier>(v["block"]["block_identifier"].clone()).ok()
                }
                Err(_) => None,
            };
            if current.as_ref() == Some(&last) {
                break;
            }
            let orphan = self.chain.pop().expect("last exists");
            self.undo(&orphan);
            self.report.stats.orphans += 1;
        }
        let mut height = self.chain.last().map_or(first, |b| b.id.index + 1);
        let mut orphaned: Option<(BlockIdentifier, BlockIdentifier)> = None;
        while height <= end {
            let Some(block) = self.fetch_block(json!({ "index": height })).await else { break };
            // A block orphaned because its child named another parent, served again as
            // canonical: the parent link itself is wrong, not a reorg.
            if let Some((orphan, child_parent)) = &orphaned {
                if block.block_identifier == *orphan {
                    self.fail(
                        "block_syncing",
                        format!(
                            "block {} is {} but block {}'s parent is {child_parent:?}",
                            orphan.index,
                            orphan.hash,
                            orphan.index + 1
                        ),
                    );
                    break;
                }
            }
            // Parent link: a mismatch means the chain reorganised under us.
            if let Some(last) = self.chain.last() {
                if block.parent_block_identifier != last.id {
                    let orphan = self.chain.pop().expect("last exists");
                    self.undo(&orphan);
                    self.report.stats.orphans += 1;
                    height = orphan.id.index;
                    orphaned = Some((orphan.id, block.parent_block_identifier.clone()));
                    continue;
                }
            }
            if orphaned.as_ref().is_some_and(|(o, _)| o.index < block.block_identifier.index) {
                orphaned = None;
            }
            if block.block_identifier.index != height {
                self.fail(
                    "block_syncing",
                    format!("asked block {height}, got index {}", block.block_identifier.index),
                );
                break;
            }
            if self.chain.is_empty()
                && height == status.genesis_block_identifier.index
                && block.parent_block_identifier.index > height
            {
                self.fail("block_syncing", format!("genesis {height} has a parent above it"));
            }
            if self.chain.is_empty() && self.base.is_none() && height > status.genesis_block_identifier.index
            {
                self.base = Some(block.parent_block_identifier.clone());
            }
            self.apply(&block).await;
            height += 1;
        }
        Ok(())
    }

    async fn fetch_block(&mut self, id: Value) -> Option<Block> {
        let body = json!({ "network_identifier": self.network, "block_identifier": id });
        let v = self.ok("block_syncing", "/block", body).await?;
        match serde_json::from_value::<Option<Block>>(v["block"].clone()) {
            Ok(Some(b)) => Some(b),
            Ok(None) => {
                self.fail("block_syncing", format!("/block {id}: no block in the answer"));
                None
            }
            Err(e) => {
                self.fail("response_assertion", format!("/block {id}: {e}"));
                None
            }
        }
    }

    fn undo(&mut self, orphan: &Synced) {
        for (k, d) in &orphan.deltas {
            *self.balances.entry(k.clone()).or_default() -= d;
        }
        // Orphaned transactions give their nonces back: the monotonic check starts over.
        self.sequence.clear();
    }

    /// Checks one block, tracks its balance changes and reconciles what it touched.
    async fn apply(&mut self, block: &Block) {
        let allow = self.allow.clone().expect("started");
        let statuses: HashMap<&str, bool> =
            allow.allow.operation_statuses.iter().map(|s| (s.status.as_str(), s.successful)).collect();
        let types: HashSet<&str> = allow.allow.operation_types.iter().map(String::as_str).collect();
        let id = block.block_identifier.clone();
        // The same hash must always give the same answer.
        let again = self.fetch_block(json!({ "hash": id.hash })).await;
        if again.as_ref() != Some(block) {
            self.fail(
                "block_syncing",
                format!("block {} {}: answer by hash differs from answer by index", id.index, id.hash),
            );
        }
        if block.timestamp <= 0 {
            self.fail("response_assertion", format!("block {}: timestamp {}", id.index, block.timestamp));
        }
        let mut deltas: HashMap<Key, i128> = HashMap::new();
        let mut tx_ids = Vec::new();
        let mut seen_tx = HashSet::new();
        for tx in &block.transactions {
            let h = &tx.transaction_identifier.hash;
            if !seen_tx.insert(h.clone()) {
                self.fail("response_assertion", format!("block {}: transaction {h} listed twice", id.index));
            }
            tx_ids.push(h.clone());
            self.report.stats.transactions += 1;
            for (i, op) in tx.operations.iter().enumerate() {
                self.report.stats.operations += 1;
                let at = format!("block {} tx {h} op {i}", id.index);
                if op.operation_identifier.index != i as i64 {
                    self.fail(
                        "response_assertion",
                        format!(
                            "{at}: operation index {} (indexes must be 0..n)",
                            op.operation_identifier.index
                        ),
                    );
                }
                for r in op.related_operations.iter().flatten() {
                    if r.index >= op.operation_identifier.index {
                        self.fail(
                            "response_assertion",
                            format!("{at}: related operation {} is not an earlier one", r.index),
                        );
                    }
                }
                if !types.contains(op.r#type.as_str()) {
                    self.fail(
                        "response_assertion",
                        format!("{at}: type {:?} not in allow.operation_types", op.r#type),
                    );
                }
                let Some(successful) = statuses.get(op.status.as_str()).copied() else {
                    self.fail(
                        "response_assertion",
                        format!("{at}: status {:?} not in allow.operation_statuses", op.status),
                    );
                    continue;
                };
                let (Some(account), Some(amount)) = (&op.account, &op.amount) else { continue };
                if amount.currency.symbol != "STX" || amount.currency.decimals != 6 {
                    self.fail("response_assertion", format!("{at}: currency {:?}", amount.currency));
                    continue;
                }
                let Ok(value) = amount.value.parse::<i128>() else {
                    self.fail(
                        "response_assertion",
                        format!("{at}: amount {:?} is not an integer", amount.value),
                    );
                    continue;
                };
                let k = key_of(account);
                self.seen.insert(k.clone());
                // Both balances of a touched address are reconciled.
                self.seen.insert((k.0.clone(), None));
                self.seen.insert((k.0.clone(), Some("locked".into())));
                deltas.entry((k.0.clone(), None)).or_default();
                deltas.entry((k.0.clone(), Some("locked".into()))).or_default();
                if successful {
                    *deltas.entry(k).or_default() += value;
                }
            }
        }
        if let Some(base) = self.base.clone() {
            let mut new: Vec<Key> =
                deltas.keys().filter(|k| !self.balances.contains_key(*k)).cloned().collect();
            new.sort();
            for k in new {
                if let Some(v) = self.balance_at(&k, &base).await {
                    self.balances.insert(k, v);
                }
            }
        }
        for (k, d) in &deltas {
            *self.balances.entry(k.clone()).or_default() += d;
        }
        self.report.stats.blocks += 1;
        let mut touched: Vec<Key> = deltas.keys().cloned().collect();
        touched.sort();
        for k in &touched {
            if self.opts.exempt.contains(k) {
                self.report.stats.exempt_reconciliations += 1;
                continue;
            }
            let use_hash = self.report.stats.active_reconciliations % 2 == 1;
            self.reconcile(k, &id, use_hash, true).await;
        }
        self.chain.push(Synced { id, deltas, tx_ids });
    }

    /// The server's STX balance of `k` at block `at`, the starting point of an account first
    /// touched after a check that starts above genesis.
    async fn balance_at(&mut self, k: &Key, at: &BlockIdentifier) -> Option<i128> {
        let body = json!({ "network_identifier": self.network, "account_identifier": account_of(k), "block_identifier": { "index": at.index } });
        let v = self.ok("reconciliation", "/account/balance", body).await?;
        let value = stx_balance(&v);
        if value.is_none() {
            self.fail("reconciliation", format!("{k:?} at {} (start): no STX balance in {v}", at.index));
        }
        value
    }

    /// Compares the computed balance of `k` with the server's at block `at`.
    async fn reconcile(&mut self, k: &Key, at: &BlockIdentifier, by_hash: bool, active: bool) {
        let block = if by_hash { json!({ "hash": at.hash }) } else { json!({ "index": at.index }) };
        let body = json!({ "network_identifier": self.network, "account_identifier": account_of(k), "block_identifier": block });
        let Some(v) = self.ok("reconciliation", "/account/balance", body).await else {
            self.report.stats.failed_reconciliations += 1;
            return;
        };
        if active {
            self.report.stats.active_reconciliations += 1;
        } else {
            self.report.stats.inactive_reconciliations += 1;
        }
        self.reconciled.insert(k.clone());
        let live_block: Option<BlockIdentifier> = serde_json::from_value(v["block_identifier"].clone()).ok();
        if live_block.as_ref() != Some(at) {
            self.fail("reconciliation", format!("{k:?}: balance answered at {live_block:?}, asked {at:?}"));
        }
        let live = stx_balance(&v);
        let computed = self.balances.get(k).copied().unwrap_or(0);
        match live {
            Some(live) if live == computed => {}
            Some(live) => {
                self.report.stats.failed_reconciliations += 1;
                self.fail(
                    "reconciliation",
                    format!(
                        "{} {:?} at block {} ({}): computed {computed}, live {live} (difference {})",
                        k.0,
                        k.1,
                        at.index,
                        at.hash,
                        live - computed
                    ),
                );
            }
            None => {
                self.report.stats.failed_reconciliations += 1;
                self.fail("reconciliation", format!("{k:?} at {}: no STX balance in {v}", at.index));
            }
        }
        if k.1.is_none() {
            match v["metadata"]["sequence_number"].as_i64() {
                Some(seq) if seq >= 0 => {
                    let prev = self.sequence.insert(k.0.clone(), seq);
                    if active && prev.is_some_and(|p| p > seq) {
                        self.fail(
                            "reconciliation",
                            format!(
                                "{}: sequence_number went from {prev:?} to {seq} at block {}",
                                k.0, at.index
                            ),
                        );
                    }
                }
                other => {
                    self.fail("reconciliation", format!("{}: metadata.sequence_number is {other:?}", k.0))
                }
            }
        }
    }

    /// Inactive reconciliation at the tip, the indexer extras and the mempool; then the report.
    pub async fn finish(mut self) -> Report {
        if let Some(tip) = self.chain.last().map(|b| b.id.clone()) {
            if self.opts.inactive {
                let keys: Vec<Key> =
                    self.seen.iter().filter(|k| !self.opts.exempt.contains(*k)).cloned().collect();
                for k in keys {
                    self.reconcile(&k, &tip, false, false).await;
                }
            }
            self.check_events().await;
            self.check_search().await;
        }
        self.check_mempool().await;
        let seen = self.seen.len().max(1) as f64;
        self.report.stats.accounts = self.seen.len() as u64;
        self.report.stats.reconciliation_coverage = self.reconciled.len() as f64 / seen;
        if let Some(c) = self.opts.coverage {
            if self.report.stats.reconciliation_coverage < c {
                let got = self.report.stats.reconciliation_coverage;
                self.fail(
                    "reconciliation",
                    format!("reconciliation coverage {got:.3} below the required {c}"),
                );
            }
        }
        if self.report.stats.blocks == 0 {
            self.fail("block_syncing", "no block synced".into());
        }
        self.report.finish();
        self.report
    }

    /// Follows `/events/blocks` from the start as an indexer would: each `block_added` extends
    /// a chain view, each `block_removed` must remove its tip. Sequences must follow each other
    /// without gaps, and the view must end as the synced chain.
    async fn check_events(&mut self) {
        let mut offset = 0;
        let mut last_sequence: Option<i64> = None;
        let mut view: Vec<BlockIdentifier> = Vec::new();
        loop {
            let body = json!({ "network_identifier": self.network, "offset": offset, "limit": 100 });
            let Some(v) = self.ok("indexer", "/events/blocks", body).await else { return };
            let events = v["events"].as_array().cloned().unwrap_or_default();
            if events.is_empty() {
                break;
            }
            for e in &events {
                let Some(sequence) = e["sequence"].as_i64() else {
                    return self.fail("indexer", format!("/events/blocks: event without a sequence: {e}"));
                };
                if last_sequence.is_some_and(|l| sequence != l + 1) {
                    return self.fail(
                        "indexer",
                        format!("/events/blocks: sequence {sequence} after {last_sequence:?}"),
                    );
                }
                last_sequence = Some(sequence);
                offset = sequence + 1;
                let Ok(id) = serde_json::from_value::<BlockIdentifier>(e["block_identifier"].clone()) else {
                    return self.fail("indexer", format!("/events/blocks: bad block_identifier in {e}"));
                };
                match e["type"].as_str() {
                    Some("block_added") => view.push(id),
                    Some("block_removed") if view.last() == Some(&id) => {
                        view.pop();
                    }
                    _ => {
                        return self.fail(
                            "indexer",
                            format!("/events/blocks: event {e} does not apply to the tip {:?}", view.last()),
                        )
                    }
                }
            }
        }
        let synced: Vec<BlockIdentifier> = self.chain.iter().map(|b| b.id.clone()).collect();
        let (bottom, top) = (synced.first().map_or(0, |s| s.index), synced.last().map_or(0, |s| s.index));
        let replayed: Vec<BlockIdentifier> =
            view.into_iter().filter(|b| b.index >= bottom && b.index <= top).collect();
        if replayed != synced {
            self.fail(
                "indexer",
                format!(
                    "/events/blocks replays {} blocks, the synced chain has {}",
                    replayed.len(),
                    synced.len()
                ),
            );
        }
    }

    async fn check_search(&mut self) {
        // A sample: the first transaction of every 10th synced block.
        let sample: Vec<(BlockIdentifier, String)> = self
            .chain
            .iter()
            .step_by(10)
            .filter_map(|b| b.tx_ids.first().map(|t| (b.id.clone(), t.clone())))
            .collect();
        for (block, tx) in sample {
            let body = json!({ "network_identifier": self.network, "operator": "and", "transaction_identifier": { "hash": tx } });
            let Some(v) = self.ok("indexer", "/search/transactions", body).await else { continue };
            let found = v["transactions"].as_array().map(|t| {
                t.iter().any(|bt| {
                    bt["block_identifier"] == json!(block)
                        && bt["transaction"]["transaction_identifier"]["hash"] == json!(tx)
                })
            });
            if found != Some(true) {
                self.fail(
                    "indexer",
                    format!("/search/transactions does not find {tx} in block {}", block.index),
                );
            }
        }
    }

    async fn check_mempool(&mut self) {
        let net = json!({ "network_identifier": self.network });
        let Some(v) = self.ok("request_response", "/mempool", net).await else { return };
        let ids: Vec<String> = v["transaction_identifiers"]
            .as_array()
            .map(|a| a.iter().filter_map(|t| t["hash"].as_str().map(str::to_owned)).collect())
            .unwrap_or_default();
        for id in ids.into_iter().take(50) {
            let body =
                json!({ "network_identifier": self.network, "transaction_identifier": { "hash": id } });
            // A transaction may be mined meanwhile: a listed error is acceptable.
            let _ = self.post("/mempool/transaction", body).await;
        }
    }
}

/// The STX value of an `/account/balance` answer.
fn stx_balance(v: &Value) -> Option<i128> {
    v["balances"]
        .as_array()
        .and_then(|b| b.iter().find(|a| a["currency"]["symbol"] == "STX"))
        .and_then(|a| a["value"].as_str())
        .and_then(|s| s.parse().ok())
}

/// Reads rosetta-cli's `[{account_identifier, currency, value}]` bootstrap file.
pub fn read_bootstrap(path: &std::path::Path) -> anyhow::Result<BTreeMap<Key, i128>> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let mut out = BTreeMap::new();
    for e in v.as_array().ok_or_else(|| anyhow!("{} is not a JSON array", path.display()))? {
        let a: AccountIdentifier = serde_json::from_value(e["account_identifier"].clone())?;
        let value: i128 = e["value"].as_str().ok_or_else(|| anyhow!("value must be a string"))?.parse()?;
        out.insert(key_of(&a), value);
    }
    Ok(out)
}

/// Reads rosetta-cli's `[{account_identifier, currency}]` account files (exempt, interesting).
pub fn read_accounts(path: &std::path::Path) -> anyhow::Result<BTreeSet<Key>> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let mut out = BTreeSet::new();
    for e in v.as_array().ok_or_else(|| anyhow!("{} is not a JSON array", path.display()))? {
        let a: AccountIdentifier = serde_json::from_value(e["account_identifier"].clone())?;
        out.insert(key_of(&a));
    }
    Ok(out)
}
