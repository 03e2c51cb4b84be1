//! `stacks-ledger check-construction`: what rosetta-cli `check:construction` runs with
//! `rosetta-cli-configs/stacks.ros`, end to end against a Rosetta server backed by a node:
//!
//! * `create_account`: a fresh secp256k1 key, its address from `/construction/derive`;
//! * `request_funds`: a transfer from a prefunded account (key in the configuration) to it;
//! * `transfer`: a transfer from a funded account to another created one.
//!
//! Every transfer walks the whole flow: preprocess → metadata → payloads → `parse(unsigned)`
//! (the operations are the intent, no signer) → sign locally (our codec) → combine →
//! `parse(signed)` (the intent, signer = sender) → hash → submit (txid = hash); then waits for
//! it in `/mempool`, then in a `/block` whose operations contain the intent, and reconciles
//! `/account/balance` of sender (−amount − fee) and recipient (+amount). Offline calls go to
//! `offline_url`, online ones to `online_url`. Requests go through the `check-data` client
//! ([`Checker`]): every answer is validated and every error must be listed.

pub mod config;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use serde::Serialize;
use serde_json::{json, Value};
use stacks_codec::hash::sha256;
use stacks_codec::sign::{sign_presign, vrs_to_rsv, PrivateKey};

use crate::checkdata::{Checker, Options};

/// What to run.
#[derive(Debug, Clone)]
pub struct ConstructionOptions {
    pub online_url: String,
    pub offline_url: String,
    pub network: Option<String>,
    /// `(address, 32-byte secret hex)` of funded accounts.
    pub prefunded: Vec<(String, String)>,
    /// Workflow → completions required (`create_account`, `transfer`).
    pub end_conditions: BTreeMap<String, u64>,
    /// µSTX each created account is funded with.
    pub funding: u64,
    /// How long a transaction may take to reach the mempool, then a block.
    pub confirmation_timeout: Duration,
    /// Seeds the created keys (distinct runs must not reuse keys on one chain).
    pub seed: u64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct ConstructionStats {
    pub addresses_created: u64,
    pub transactions_created: u64,
    pub transactions_broadcast: u64,
    pub transactions_in_mempool: u64,
    pub transactions_confirmed: u64,
    pub intents_checked: u64,
    pub balances_reconciled: u64,
    pub requests: u64,
}

/// rosetta-cli's check:construction results, plus the failures.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ConstructionReport {
    pub stats: ConstructionStats,
    /// Workflow → `[required, completed]`.
    pub end_conditions: BTreeMap<String, [u64; 2]>,
    pub failures: BTreeMap<String, Vec<String>>,
    pub passed: u64,
    pub failed: u64,
}

impl ConstructionReport {
    pub fn ok(&self) -> bool {
        self.failed == 0 && self.end_conditions.values().all(|[need, done]| done >= need)
    }

    pub fn summary(&self) -> String {
        let unmet: Vec<String> = self
            .end_conditions
            .iter()
            .filter(|(_, [need, done])| done < need)
            .map(|(w, [need, done])| format!("{w} {done}/{need}"))
            .collect();
        let mut s = format!("{} passed, {} failed", self.passed, self.failed);
        if !unmet.is_empty() {
            s.push_str(&format!(", end conditions not met: {}", unmet.join(", ")));
        }
        s
    }
}

/// An account the checker holds the key of.
#[derive(Clone)]
struct Wallet {
    address: String,
    key: PrivateKey,
    public_key_hex: String,
}

impl Wallet {
    fn from_secret(secret: &[u8]) -> anyhow::Result<Wallet> {
        let mut bytes = secret.to_vec();
        if bytes.len() == 32 {
            // Rosetta's secp256k1 keys are the 33-byte compressed ones.
            bytes.push(0x01);
        }
        let key = PrivateKey::from_slice(&bytes).map_err(|e| anyhow!("private key: {e}"))?;
        let public_key_hex = hex::encode(key.public_key().as_bytes());
        Ok(Wallet { address: String::new(), key, public_key_hex })
    }

    fn public_key(&self) -> Value {
        json!({ "hex_bytes": self.public_key_hex, "curve_type": "secp256k1" })
    }
}

/// One transfer as the workflows build it.
struct Transfer<'a> {
    from: &'a Wallet,
    to: &'a str,
    amount: u64,
}

pub struct ConstructionChecker {
    opts: ConstructionOptions,
    online: Checker,
    offline: Checker,
    net: Value,
    stats: ConstructionStats,
    done: BTreeMap<String, u64>,
    key_serial: u64,
}

const CONSTRUCTION: &str = "construction";

impl ConstructionChecker {
    pub fn new(opts: ConstructionOptions) -> anyhow::Result<Self> {
        let checker = |url: &str| {
            let mut o = Options::new(url);
            o.network = opts.network.clone();
            Checker::new(o)
        };
        Ok(ConstructionChecker {
            online: checker(&opts.online_url)?,
            offline: checker(&opts.offline_url)?,
            net: Value::Null,
            stats: ConstructionStats::default(),
            done: BTreeMap::new(),
            key_serial: 0,
            opts,
        })
    }

    fn fail(&mut self, test: &str, message: String) {
        self.online.fail(test, message);
    }

    /// Runs the workflows until the end conditions are met (or one fails), then reports.
    pub async fn run(mut self) -> ConstructionReport {
        if let Err(e) = self.workflows().await {
            self.fail(CONSTRUCTION, format!("{e:#}"));
        }
        self.finish()
    }

    async fn workflows(&mut self) -> anyhow::Result<()> {
        self.online.start().await?;
        self.offline.load_network().await?;
        self.net = json!(self.online.network());
        let prefunded =
            self.opts.prefunded.first().cloned().ok_or_else(|| anyhow!("no prefunded account"))?;
        let mut funder = Wallet::from_secret(&hex::decode(prefunded.1.trim_start_matches("0x"))?)?;
        funder.address = self.derive(&funder).await?;
        if funder.address != prefunded.0 {
            bail!("the prefunded key derives {}, not {}", funder.address, prefunded.0);
        }
        let need = |w: &str| self.opts.end_conditions.get(w).copied().unwrap_or(0);
        let (accounts, transfers) = (need("create_account").max(2), need("transfer"));
        // create_account
        let mut wallets = Vec::new();
        for _ in 0..accounts {
            wallets.push(self.create_account().await?);
            *self.done.entry("create_account".into()).or_default() += 1;
        }
        // request_funds: the first created account gets the funding
        let funding = self.opts.funding;
        self.transfer(Transfer { from: &funder, to: &wallets[0].address.clone(), amount: funding }).await?;
        *self.done.entry("request_funds".into()).or_default() += 1;
        // transfer: from the funded account to the others, round robin
        for i in 0..transfers {
            let to = wallets[1 + (i as usize) % (wallets.len() - 1)].address.clone();
            let amount =
                1 + (sha256(&[self.opts.seed.to_be_bytes(), i.to_be_bytes()].concat())[0] as u64) * 37;
            let from = wallets[0].clone();
            self.transfer(Transfer { from: &from, to: &to, amount }).await?;
            *self.done.entry("transfer".into()).or_default() += 1;
        }
        Ok(())
    }

    async fn create_account(&mut self) -> anyhow::Result<Wallet> {
        let mut wallet = loop {
            self.key_serial += 1;
            let material = [
                b"stacks-ledger check-construction".as_slice(),
                &self.opts.seed.to_be_bytes(),
                &self.key_serial.to_be_bytes(),
            ]
            .concat();
            if let Ok(w) = Wallet::from_secret(&sha256(&material)) {
                break w;
            }
        };
        wallet.address = self.derive(&wallet).await?;
        self.stats.addresses_created += 1;
        Ok(wallet)
    }

    async fn derive(&mut self, wallet: &Wallet) -> anyhow::Result<String> {
        let body = json!({ "network_identifier": self.net, "public_key": wallet.public_key() });
        let v = self.offline_ok("/construction/derive", body).await?;
        v["account_identifier"]["address"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| anyhow!("derive: no address in {v}"))
    }

    async fn offline_ok(&mut self, path: &str, body: Value) -> anyhow::Result<Value> {
        self.offline.ok(CONSTRUCTION, path, body).await.ok_or_else(|| anyhow!("{path} failed"))
    }

    async fn online_ok(&mut self, path: &str, body: Value) -> anyhow::Result<Value> {
        self.online.ok(CONSTRUCTION, path, body).await.ok_or_else(|| anyhow!("{path} failed"))
    }

    async fn balance(&mut self, address: &str) -> anyhow::Result<i128> {
        let body = json!({ "network_identifier": self.net, "account_identifier": { "address": address } });
        let v = self.online_ok("/account/balance", body).await?;
        let stx = v["balances"]
            .as_array()
            .and_then(|b| b.iter().find(|b| b["currency"]["symbol"] == "STX"))
            .and_then(|b| b["value"].as_str())
            .ok_or_else(|| anyhow!("/account/balance of {address}: no STX balance in {v}"))?;
        Ok(stx.parse()?)
    }

    async fn tip_index(&mut self) -> anyhow::Result<i64> {
        let v = self.online_ok("/network/status", json!({ "network_identifier": self.net })).await?;
        v["current_block_identifier"]["index"]
            .as_i64()
            .ok_or_else(|| anyhow!("/network/status: no tip in {v}"))
    }

    /// One transfer through the whole construction flow, confirmed and reconciled.
    async fn transfer(&mut self, t: Transfer<'_>) -> anyhow::Result<()> {
        let net = self.net.clone();
        let cur = json!({ "symbol": "STX", "decimals": 6 });
        let intent = |fee: &str| {
            json!([
                {"operation_identifier": {"index": 0}, "type": "fee", "account": {"address": t.from.address}, "amount": {"value": format!("-{fee}"), "currency": cur}},
                {"operation_identifier": {"index": 1}, "type": "token_transfer", "account": {"address": t.from.address}, "amount": {"value": format!("-{}", t.amount), "currency": cur}},
                {"operation_identifier": {"index": 2}, "type": "token_transfer", "account": {"address": t.to}, "amount": {"value": t.amount.to_string(), "currency": cur}},
            ])
        };
        // The fee operation's value is what metadata suggests: preprocess with a placeholder.
        let pre = self
            .offline_ok(
                "/construction/preprocess",
                json!({"network_identifier": net, "operations": intent("180")}),
            )
            .await?;
        let required = pre["required_public_keys"].clone();
        if required != json!([{ "address": t.from.address }]) {
            self.fail(
                CONSTRUCTION,
                format!("preprocess: required_public_keys {required}, expected the sender"),
            );
        }
        let options = pre["options"].clone();
        let meta = self
            .online_ok(
                "/construction/metadata",
                json!({"network_identifier": net, "options": options, "public_keys": [t.from.public_key()]}),
            )
            .await?;
        let fee = meta["suggested_fee"][0]["value"]
            .as_str()
            .ok_or_else(|| anyhow!("metadata: no suggested_fee in {meta}"))?
            .to_owned();
        let ops = intent(&fee);
        let payloads = self
            .offline_ok(
                "/construction/payloads",
                json!({"network_identifier": net, "operations": ops, "metadata": meta["metadata"], "public_keys": [t.from.public_key()]}),
            )
            .await?;
        let unsigned =
            payloads["unsigned_transaction"].as_str().ok_or_else(|| anyhow!("payloads: no tx"))?.to_owned();
        let payload = payloads["payloads"][0].clone();
        self.stats.transactions_created += 1;

        let parsed = self
            .offline_ok(
                "/construction/parse",
                json!({"network_identifier": net, "signed": false, "transaction": unsigned}),
            )
            .await?;
        self.check_intent("parse(unsigned)", &ops, &parsed["operations"]);
        let signers = parsed.get("account_identifier_signers").filter(|s| !s.is_null());
        if let Some(s) = signers.filter(|s| s.as_array().is_some_and(|a| !a.is_empty())) {
            self.fail(CONSTRUCTION, format!("parse(unsigned): signers {s}, expected none"));
        }

        let presign: [u8; 32] = hex::decode(payload["hex_bytes"].as_str().unwrap_or_default())?
            .try_into()
            .map_err(|_| anyhow!("payloads: the signing payload is not 32 bytes"))?;
        let (vrs, _) = sign_presign(presign, &t.from.key);
        let signature = json!({"signing_payload": payload, "public_key": t.from.public_key(), "signature_type": "ecdsa_recovery", "hex_bytes": hex::encode(vrs_to_rsv(&vrs))});
        let combined = self
            .offline_ok(
                "/construction/combine",
                json!({"network_identifier": net, "unsigned_transaction": unsigned, "signatures": [signature]}),
            )
            .await?;
        let signed =
            combined["signed_transaction"].as_str().ok_or_else(|| anyhow!("combine: no tx"))?.to_owned();
        let parsed = self
            .offline_ok(
                "/construction/parse",
                json!({"network_identifier": net, "signed": true, "transaction": signed}),
            )
            .await?;
        self.check_intent("parse(signed)", &ops, &parsed["operations"]);
        if parsed["account_identifier_signers"] != json!([{ "address": t.from.address }]) {
            self.fail(
                CONSTRUCTION,
                format!(
                    "parse(signed): signers {}, expected {}",
                    parsed["account_identifier_signers"], t.from.address
                ),
            );
        }
        let hash = self
            .offline_ok(
                "/construction/hash",
                json!({"network_identifier": net, "signed_transaction": signed}),
            )
            .await?["transaction_identifier"]["hash"]
            .as_str()
            .unwrap_or_default()
            .to_owned();

        let before = (self.balance(&t.from.address).await?, self.balance(t.to).await?);
        let tip = self.tip_index().await?;
        let submitted = self
            .online_ok(
                "/construction/submit",
                json!({"network_identifier": net, "signed_transaction": signed}),
            )
            .await?;
        self.stats.transactions_broadcast += 1;
        let txid = submitted["transaction_identifier"]["hash"].as_str().unwrap_or_default().to_owned();
        if txid != hash {
            self.fail(CONSTRUCTION, format!("submit answered {txid}, hash said {hash}"));
        }
        self.wait_mempool(&hash).await?;
        self.stats.transactions_in_mempool += 1;
        let block_ops = self.wait_block(&hash, tip + 1).await?;
        self.stats.transactions_confirmed += 1;
        self.check_intent("on chain", &ops, &block_ops);

        let after = (self.balance(&t.from.address).await?, self.balance(t.to).await?);
        let fee: i128 = fee.parse()?;
        let amount = i128::from(t.amount);
        let expected = (before.0 - amount - fee, before.1 + amount);
        if after == expected {
            self.stats.balances_reconciled += 2;
        } else {
            self.fail(
                "reconciliation",
                format!(
                    "{hash}: balances (sender, recipient) went from {before:?} to {after:?}, expected {expected:?} (amount {amount}, fee {fee})"
                ),
            );
        }
        Ok(())
    }

    /// The operations carry the intent: same (type, account, amount) as built, ignoring order,
    /// status and indexes.
    fn check_intent(&mut self, step: &str, intent: &Value, ops: &Value) {
        let essence = |ops: &Value| {
            let mut v: Vec<(String, String, String)> = ops
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|o| {
                            (
                                o["type"].as_str().unwrap_or_default().to_owned(),
                                o["account"]["address"].as_str().unwrap_or_default().to_owned(),
                                o["amount"]["value"].as_str().unwrap_or_default().to_owned(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            v.sort();
            v
        };
        let (want, got) = (essence(intent), essence(ops));
        if got.is_empty() || !want.iter().all(|w| got.contains(w)) {
            self.fail(CONSTRUCTION, format!("{step}: operations {got:?} do not carry the intent {want:?}"));
        } else {
            self.stats.intents_checked += 1;
        }
    }

    async fn wait_mempool(&mut self, hash: &str) -> anyhow::Result<()> {
        let deadline = Instant::now() + self.opts.confirmation_timeout;
        loop {
            let v = self.online_ok("/mempool", json!({ "network_identifier": self.net })).await?;
            let ids = v["transaction_identifiers"].as_array().cloned().unwrap_or_default();
            if ids.iter().any(|t| t["hash"] == hash) {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("{hash} never appeared in /mempool");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits for `hash` in a block from index `from` on; its operations.
    async fn wait_block(&mut self, hash: &str, from: i64) -> anyhow::Result<Value> {
        let deadline = Instant::now() + self.opts.confirmation_timeout;
        let mut next = from;
        loop {
            let tip = self.tip_index().await?;
            while next <= tip {
                let body = json!({ "network_identifier": self.net, "block_identifier": { "index": next } });
                let block = self.online_ok("/block", body).await?;
                let txs = block["block"]["transactions"].as_array().cloned().unwrap_or_default();
                if let Some(tx) = txs.iter().find(|t| t["transaction_identifier"]["hash"] == hash) {
                    return Ok(tx["operations"].clone());
                }
                next += 1;
            }
            if Instant::now() > deadline {
                bail!("{hash} was not mined (checked blocks {from}..={tip})");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn finish(self) -> ConstructionReport {
        let mut report = ConstructionReport { stats: self.stats, ..ConstructionReport::default() };
        for checker in [&self.online, &self.offline] {
            for (test, failures) in &checker.report.failures {
                report.failures.entry(test.clone()).or_default().extend(failures.iter().cloned());
            }
            report.failed += checker.report.failure_counts.values().sum::<u64>();
        }
        for (w, need) in &self.opts.end_conditions {
            report.end_conditions.insert(w.clone(), [*need, self.done.get(w).copied().unwrap_or(0)]);
        }
        report.stats.requests = self.online.report.stats.requests + self.offline.report.stats.requests;
        report.passed = report.stats.requests.saturating_sub(report.failed);
        report
    }
}
