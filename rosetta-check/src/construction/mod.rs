//! `stacks-ledger check-construction`: what rosetta-cli `check:construction` runs with
//! `rosetta-cli-configs/stacks.ros`, end to end against a Rosetta server backed by a node:
//!
//! * `create_account`: a fresh secp256k1 key, its address from `/construction/derive`;
//! * `request_funds`: a transfer from a prefunded account (key in the configuration) to it;
//! * `transfer`: a transfer from a funded account to another created one;
//! * `multisig_transfer`: a 2-of-3 multisig account (modes in turn) funded, then sending;
//! * `sponsored_transfer`: a transfer whose fee the prefunded account pays;
//! * `stack_stx`, `delegate_stx`, `revoke_delegate_stx` (pox-4 calls, which the devnet node
//!   runs as a real node does, e.g. the mocknet one of `../shared/tools/realnode`): the prefunded
//!   account stacks the minimum for one cycle (its own key the signer, the SIP-018 signature made
//!   here) and its locked sub-account must hold it; the first account delegates to the second and
//!   revokes; each confirmed in a block with its operation and the liquid balance reconciled.
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
use stacks_codec::clarity::Value as ClarityValue;
use stacks_codec::hash::{hash160, sha256};
use stacks_codec::sign::{sign_presign, vrs_to_rsv, PrivateKey};

use crate::data::{Checker, Options};

/// The Stacks Rosetta operation types the stacking workflows send, as the API names them.
const STACK_STX: &str = "stack_stx";
const DELEGATE_STX: &str = "delegate_stx";
const REVOKE_DELEGATE_STX: &str = "revoke_delegate_stx";

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

/// Who sends a transfer: one wallet, or a multisig account of member wallets.
#[derive(Clone)]
struct Sender {
    address: String,
    members: Vec<Wallet>,
    /// `(hash_mode, signatures_required)` of a multisig account.
    multisig: Option<(&'static str, usize)>,
}

impl Sender {
    fn single(w: &Wallet) -> Sender {
        Sender { address: w.address.clone(), members: vec![w.clone()], multisig: None }
    }
}

/// One transfer as the workflows build it; `sponsor` pays the fee of a sponsored one.
struct Transfer<'a> {
    from: Sender,
    to: &'a str,
    amount: u64,
    sponsor: Option<&'a Wallet>,
}

/// The multisig modes the `multisig_transfer` workflow cycles through (2-of-3 each).
const MULTISIG_MODES: [&str; 4] = ["p2sh", "p2wsh-non-sequential", "p2sh-non-sequential", "p2wsh"];

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

/// What a pox-4 signer key authorises (`verify-signer-key-sig`).
struct SignerGrant {
    /// `(version, hashbytes)`.
    pox_addr: (u8, Vec<u8>),
    reward_cycle: u64,
    topic: &'static str,
    period: u64,
    max_amount: u128,
    auth_id: u128,
    chain_id: u32,
}

/// The signer key's RSV signature over the SIP-018 hash of `grant`, in the domain
/// `{name: "pox-4-signer", version: "1.0.0", chain-id}`.
/// The `/construction/combine` signature of `wallet` over one signing payload.
fn sign_payload(payload: &Value, wallet: &Wallet) -> anyhow::Result<Value> {
    let presign: [u8; 32] = hex::decode(payload["hex_bytes"].as_str().unwrap_or_default())?
        .try_into()
        .map_err(|_| anyhow!("payloads: the signing payload is not 32 bytes"))?;
    let (vrs, _) = sign_presign(presign, &wallet.key);
    Ok(
        json!({"signing_payload": payload, "public_key": wallet.public_key(), "signature_type": "ecdsa_recovery", "hex_bytes": hex::encode(vrs_to_rsv(&vrs))}),
    )
}

fn signer_signature(key: &PrivateKey, grant: &SignerGrant) -> [u8; 65] {
    let ascii = |s: &str| ClarityValue::StringAscii(s.as_bytes().to_vec());
    let tuple = |fields: Vec<(&str, ClarityValue)>| {
        ClarityValue::Tuple(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()).canonical()
    };
    let domain = tuple(vec![
        ("name", ascii("pox-4-signer")),
        ("version", ascii("1.0.0")),
        ("chain-id", ClarityValue::UInt(grant.chain_id.into())),
    ]);
    let pox_addr = tuple(vec![
        ("version", ClarityValue::Buffer(vec![grant.pox_addr.0])),
        ("hashbytes", ClarityValue::Buffer(grant.pox_addr.1.clone())),
    ]);
    let message = tuple(vec![
        ("pox-addr", pox_addr),
        ("reward-cycle", ClarityValue::UInt(grant.reward_cycle.into())),
        ("topic", ascii(grant.topic)),
        ("period", ClarityValue::UInt(grant.period.into())),
        ("max-amount", ClarityValue::UInt(grant.max_amount)),
        ("auth-id", ClarityValue::UInt(grant.auth_id)),
    ]);
    let mut preimage = b"SIP018".to_vec();
    preimage.extend_from_slice(&sha256(&domain.serialize()));
    preimage.extend_from_slice(&sha256(&message.serialize()));
    let (vrs, _) = sign_presign(sha256(&preimage), key);
    vrs_to_rsv(&vrs)
}

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
        let conditions = self.opts.end_conditions.clone();
        let need = |w: &str| conditions.get(w).copied().unwrap_or(0);
        let (accounts, transfers) = (need("create_account").max(2), need("transfer"));
        // create_account
        let mut wallets = Vec::new();
        for _ in 0..accounts {
            wallets.push(self.create_account().await?);
            *self.done.entry("create_account".into()).or_default() += 1;
        }
        // request_funds: the first created account gets the funding
        let funding = self.opts.funding;
        let first = wallets[0].address.clone();
        self.transfer(Transfer { from: Sender::single(&funder), to: &first, amount: funding, sponsor: None })
            .await?;
        *self.done.entry("request_funds".into()).or_default() += 1;
        // transfer: from the funded account to the others, round robin
        for i in 0..transfers {
            let to = wallets[1 + (i as usize) % (wallets.len() - 1)].address.clone();
            let amount =
                1 + (sha256(&[self.opts.seed.to_be_bytes(), i.to_be_bytes()].concat())[0] as u64) * 37;
            let from = Sender::single(&wallets[0]);
            self.transfer(Transfer { from, to: &to, amount, sponsor: None }).await?;
            *self.done.entry("transfer".into()).or_default() += 1;
        }
        // multisig_transfer: a 2-of-3 account of three new keys, funded by the first account,
        // sends to the second; the modes take turns.
        let multisig = need("multisig_transfer");
        if multisig > 0 {
            let mut members = Vec::new();
            for _ in 0..3 {
                members.push(self.create_account().await?);
            }
            for i in 0..multisig {
                let mode = MULTISIG_MODES[i as usize % MULTISIG_MODES.len()];
                let address = self.derive_multisig(&members, mode, 2).await?;
                let from =
                    Sender { address: address.clone(), members: members.clone(), multisig: Some((mode, 2)) };
                let fund = Sender::single(&wallets[0]);
                self.transfer(Transfer { from: fund, to: &address, amount: 100_000, sponsor: None }).await?;
                let to = wallets[1].address.clone();
                self.transfer(Transfer { from, to: &to, amount: 1_000 + i, sponsor: None }).await?;
                *self.done.entry("multisig_transfer".into()).or_default() += 1;
            }
        }
        // sponsored_transfer: the first account sends, the prefunded one pays the fee.
        for i in 0..need("sponsored_transfer") {
            let (from, to) = (Sender::single(&wallets[0]), wallets[1].address.clone());
            self.transfer(Transfer { from, to: &to, amount: 500 + i, sponsor: Some(&funder) }).await?;
            *self.done.entry("sponsored_transfer".into()).or_default() += 1;
        }
        // Stacking (pox-4 calls): the prefunded account stacks the
        // minimum for one cycle, its own key the signer; the first account delegates to the
        // second, then revokes.
        if need("stack_stx") > 0 {
            self.stack_stx(&funder).await?;
            *self.done.entry("stack_stx".into()).or_default() += 1;
        }
        let delegations = need("delegate_stx").max(need("revoke_delegate_stx"));
        for i in 0..delegations {
            let meta = json!({ "delegate_to": wallets[1].address });
            self.stacking(DELEGATE_STX, &wallets[0], Some(1_000_000 + u128::from(i)), meta).await?;
            *self.done.entry("delegate_stx".into()).or_default() += 1;
            if i < need("revoke_delegate_stx") {
                self.stacking(REVOKE_DELEGATE_STX, &wallets[0], None, json!({})).await?;
                *self.done.entry("revoke_delegate_stx".into()).or_default() += 1;
            }
        }
        Ok(())
    }

    /// `/v2/pox` of the node behind the online server (ours proxies `/v2`).
    async fn pox_info(&self) -> anyhow::Result<Value> {
        let base = self.opts.online_url.trim_end_matches('/').trim_end_matches("/rosetta/v1");
        Ok(reqwest::get(format!("{base}/v2/pox")).await?.error_for_status()?.json().await?)
    }

    /// `stack_stx` of the minimum for one cycle, then the locked sub-account must hold it.
    async fn stack_stx(&mut self, w: &Wallet) -> anyhow::Result<()> {
        // Not in a cycle's last two burn blocks: the signer grant names the cycle of the start
        // burn height, and the call fails if it is mined in the next one.
        let deadline = Instant::now() + self.opts.confirmation_timeout;
        let pox = loop {
            let pox = self.pox_info().await?;
            let h = pox["current_burnchain_block_height"].as_u64().unwrap_or(0);
            let first = pox["first_burnchain_block_height"].as_u64().unwrap_or(0);
            let len = pox["reward_cycle_length"].as_u64().unwrap_or(1).max(3);
            if h.saturating_sub(first) % len < len - 2 || Instant::now() > deadline {
                break pox;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        let min = pox["min_amount_ustx"].as_u64().ok_or_else(|| anyhow!("/v2/pox: no min_amount_ustx"))?;
        let hashbytes = hex::encode(hash160(w.key.public_key().as_bytes()));
        let meta = json!({
            "number_of_cycles": 1,
            "pox_addr": { "version": "0x00", "hashbytes": hashbytes },
            "signer_key": w.public_key_hex,
            // A placeholder of the signature's size, so /metadata's fee covers it; the real one
            // needs /metadata's start burn height.
            "signer_signature": hex::encode([0u8; 65]),
        });
        let locked_before = self.balance_of(&w.address, true).await?;
        let hash = self.stacking(STACK_STX, w, Some(u128::from(min)), meta).await?;
        let locked = self.balance_of(&w.address, true).await?;
        if locked == locked_before + i128::from(min) {
            self.stats.balances_reconciled += 1;
        } else {
            self.fail(
                "reconciliation",
                format!("{hash}: stack_stx locked {locked} (was {locked_before}), expected + {min}"),
            );
        }
        Ok(())
    }

    /// One pox-4 call from a single-sig wallet through the whole flow (preprocess … submit),
    /// confirmed in a block with its operation, the wallet's liquid balance down by amount
    /// locked (stack_stx) plus the fee; returns the transaction hash.
    async fn stacking(
        &mut self,
        kind: &str,
        w: &Wallet,
        amount: Option<u128>,
        mut op_meta: Value,
    ) -> anyhow::Result<String> {
        let net = self.net.clone();
        let cur = json!({ "symbol": "STX", "decimals": 6 });
        let addr = w.address.clone();
        let intent = |fee: &str, meta: &Value| {
            let mut op = json!({"operation_identifier": {"index": 1}, "type": kind, "account": {"address": addr}, "metadata": meta});
            if let Some(a) = amount {
                op["amount"] = json!({"value": format!("-{a}"), "currency": cur});
            }
            json!([{"operation_identifier": {"index": 0}, "type": "fee", "account": {"address": addr}, "amount": {"value": format!("-{fee}"), "currency": cur}}, op])
        };
        let pre = self
            .offline_ok(
                "/construction/preprocess",
                json!({"network_identifier": net, "operations": intent("180", &op_meta)}),
            )
            .await?;
        let meta = self
            .online_ok(
                "/construction/metadata",
                json!({"network_identifier": net, "options": pre["options"], "public_keys": [w.public_key()]}),
            )
            .await?;
        let fee = meta["suggested_fee"][0]["value"]
            .as_str()
            .ok_or_else(|| anyhow!("metadata: no suggested_fee in {meta}"))?
            .to_owned();
        if kind == STACK_STX {
            // The signer key's grant (SIP-018) for the cycle of the start burn height.
            let pox = self.pox_info().await?;
            let start = meta["metadata"]["start_burn_height"]
                .as_u64()
                .ok_or_else(|| anyhow!("metadata: no start_burn_height"))?;
            let first = pox["first_burnchain_block_height"].as_u64().unwrap_or(0);
            let len = pox["reward_cycle_length"]
                .as_u64()
                .filter(|l| *l > 0)
                .ok_or_else(|| anyhow!("/v2/pox: no cycle length"))?;
            let chain_id = if self.net["network"] == "mainnet" { 1 } else { 0x8000_0000 };
            let hashbytes = hex::decode(op_meta["pox_addr"]["hashbytes"].as_str().unwrap_or_default())?;
            let grant = SignerGrant {
                pox_addr: (0x00, hashbytes),
                reward_cycle: (start - first) / len,
                topic: "stack-stx",
                period: 1,
                max_amount: amount.unwrap_or(0),
                auth_id: 0,
                chain_id,
            };
            op_meta["signer_signature"] = json!(hex::encode(signer_signature(&w.key, &grant)));
        }
        let ops = intent(&fee, &op_meta);
        let request = json!({"network_identifier": net, "operations": ops, "metadata": meta["metadata"], "public_keys": [w.public_key()]});
        let (round, unsigned, _) = self.payloads(request, &ops).await?;
        let signature = sign_payload(&round["payloads"][0], w)?;
        let combined = self
            .offline_ok(
                "/construction/combine",
                json!({"network_identifier": net, "unsigned_transaction": unsigned, "signatures": [signature]}),
            )
            .await?;
        let signed =
            combined["signed_transaction"].as_str().ok_or_else(|| anyhow!("combine: no tx"))?.to_owned();
        let (_, hash) = self.parse_signed(&signed, &ops).await?;
        let before = self.balance(&addr).await?;
        let tip = self.tip_index().await?;
        let submitted = self
            .online_ok(
                "/construction/submit",
                json!({"network_identifier": net, "signed_transaction": signed}),
            )
            .await?;
        self.stats.transactions_broadcast += 1;
        if submitted["transaction_identifier"]["hash"] != json!(hash) {
            self.fail(CONSTRUCTION, format!("submit answered {submitted}, hash said {hash}"));
        }
        self.wait_mempool(&hash).await?;
        self.stats.transactions_in_mempool += 1;
        let block_ops = self.wait_block(&hash, tip + 1).await?;
        self.stats.transactions_confirmed += 1;
        // On chain the call is an operation of its type from the wallet (its amounts are the
        // lock events'), and the fee.
        let has = |t: &str| {
            block_ops.as_array().is_some_and(|a| {
                a.iter().any(|o| {
                    o["type"] == t && o["account"]["address"] == json!(addr) && o["status"] == "success"
                })
            })
        };
        if has(kind) && has("fee") {
            self.stats.intents_checked += 1;
        } else {
            self.fail(
                CONSTRUCTION,
                format!("on chain: {hash} has no successful {kind} and fee from {addr}: {block_ops}"),
            );
        }
        let after = self.balance(&addr).await?;
        let locked = if kind == STACK_STX { amount.map_or(0, |a| a as i128) } else { 0 };
        let expected = before - locked - fee.parse::<i128>()?;
        if after == expected {
            self.stats.balances_reconciled += 1;
        } else {
            self.fail(
                "reconciliation",
                format!("{hash}: {kind} liquid balance {before} -> {after}, expected {expected}"),
            );
        }
        Ok(hash)
    }

    async fn derive_multisig(
        &mut self,
        members: &[Wallet],
        mode: &str,
        required: usize,
    ) -> anyhow::Result<String> {
        let keys: Vec<&str> = members.iter().map(|w| w.public_key_hex.as_str()).collect();
        let body = json!({
            "network_identifier": self.net,
            "public_key": members[0].public_key(),
            "metadata": {"hash_mode": mode, "signatures_required": required, "public_keys": keys},
        });
        let v = self.offline_ok("/construction/derive", body).await?;
        v["account_identifier"]["address"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| anyhow!("derive (multisig): no address in {v}"))
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
        self.balance_of(address, false).await
    }

    /// The liquid balance, or the `locked` sub-account's.
    async fn balance_of(&mut self, address: &str, locked: bool) -> anyhow::Result<i128> {
        let mut account = json!({ "address": address });
        if locked {
            account["sub_account"] = json!({ "address": "locked" });
        }
        let body = json!({ "network_identifier": self.net, "account_identifier": account });
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

    /// One transfer through the whole construction flow (every signing round), confirmed and
    /// reconciled.
    async fn transfer(&mut self, t: Transfer<'_>) -> anyhow::Result<()> {
        let net = self.net.clone();
        let cur = json!({ "symbol": "STX", "decimals": 6 });
        let payer = t.sponsor.map_or(t.from.address.clone(), |s| s.address.clone());
        let from = t.from.address.clone();
        let intent = |fee: &str| {
            json!([
                {"operation_identifier": {"index": 0}, "type": "fee", "account": {"address": payer}, "amount": {"value": format!("-{fee}"), "currency": cur}},
                {"operation_identifier": {"index": 1}, "type": "token_transfer", "account": {"address": from}, "amount": {"value": format!("-{}", t.amount), "currency": cur}},
                {"operation_identifier": {"index": 2}, "type": "token_transfer", "account": {"address": t.to}, "amount": {"value": t.amount.to_string(), "currency": cur}},
            ])
        };
        let mut auth = json!({});
        let mut required_accounts: Vec<Value> = Vec::new();
        if let Some((mode, m)) = t.from.multisig {
            let keys: Vec<&str> = t.from.members.iter().map(|w| w.public_key_hex.as_str()).collect();
            auth = json!({"hash_mode": mode, "signatures_required": m, "public_keys": keys});
            required_accounts.extend(t.from.members.iter().map(|w| json!({ "address": w.address })));
        } else {
            required_accounts.push(json!({ "address": from }));
        }
        let mut public_keys: Vec<Value> = t.from.members.iter().map(Wallet::public_key).collect();
        if let Some(s) = t.sponsor {
            auth["sponsored"] = true.into();
            required_accounts.push(json!({ "address": s.address }));
            public_keys.push(s.public_key());
        }
        // The fee operation's value is what metadata suggests: preprocess with a placeholder.
        let pre = self
            .offline_ok(
                "/construction/preprocess",
                json!({"network_identifier": net, "operations": intent("180"), "metadata": auth}),
            )
            .await?;
        let required = pre["required_public_keys"].clone();
        if required != json!(required_accounts) {
            self.fail(
                CONSTRUCTION,
                format!("preprocess: required_public_keys {required}, expected {}", json!(required_accounts)),
            );
        }
        let options = pre["options"].clone();
        let meta = self
            .online_ok(
                "/construction/metadata",
                json!({"network_identifier": net, "options": options, "public_keys": public_keys}),
            )
            .await?;
        let fee = meta["suggested_fee"][0]["value"]
            .as_str()
            .ok_or_else(|| anyhow!("metadata: no suggested_fee in {meta}"))?
            .to_owned();
        let ops = intent(&fee);
        let request = json!({"network_identifier": net, "operations": ops, "metadata": meta["metadata"], "public_keys": public_keys});
        let (mut round, unsigned, parsed) = self.payloads(request.clone(), &ops).await?;
        let signers = parsed.get("account_identifier_signers").filter(|s| !s.is_null());
        if let Some(s) = signers.filter(|s| s.as_array().is_some_and(|a| !a.is_empty())) {
            self.fail(CONSTRUCTION, format!("parse(unsigned): signers {s}, expected none"));
        }

        // Rounds: a sequential multisig origin signs one member per round; single-sig and
        // non-sequential origins in one round; a sponsor in a round of its own after them.
        let (origin_rounds, per_round) = match t.from.multisig {
            Some((mode, m)) if mode.ends_with("non-sequential") => (1, m),
            Some((_, m)) => (m, 1),
            None => (1, 1),
        };
        let rounds = origin_rounds + usize::from(t.sponsor.is_some());
        let mut tx = unsigned;
        let mut expected_signers = Vec::new();
        for r in 0..rounds {
            if r > 0 {
                let mut next = request.clone();
                next["metadata"]["partially_signed_transaction"] = json!(tx);
                round = self.offline_ok("/construction/payloads", next).await?;
            }
            let listed = round["payloads"].as_array().cloned().unwrap_or_default();
            let take = if r < origin_rounds { per_round } else { 1 };
            let mut signatures = Vec::new();
            for payload in listed.iter().take(take) {
                let account = payload["account_identifier"]["address"].as_str().unwrap_or_default();
                let wallet =
                    t.from.members.iter().chain(t.sponsor).find(|w| w.address == account).ok_or_else(
                        || anyhow!("payloads: a payload for {account}, whose key we do not hold"),
                    )?;
                signatures.push(sign_payload(payload, wallet)?);
                expected_signers.push(json!({ "address": account }));
            }
            let combined = self
                .offline_ok(
                    "/construction/combine",
                    json!({"network_identifier": net, "unsigned_transaction": tx, "signatures": signatures}),
                )
                .await?;
            tx = combined["signed_transaction"].as_str().ok_or_else(|| anyhow!("combine: no tx"))?.to_owned();
        }
        let signed = tx;
        if t.from.multisig.is_none() {
            // a single-sig origin is its own signer
            expected_signers[0] = json!({ "address": from });
        }
        let (parsed, hash) = self.parse_signed(&signed, &ops).await?;
        if parsed["account_identifier_signers"] != json!(expected_signers) {
            self.fail(
                CONSTRUCTION,
                format!(
                    "parse(signed): signers {}, expected {}",
                    parsed["account_identifier_signers"],
                    json!(expected_signers)
                ),
            );
        }

        let sponsor_address = t.sponsor.map(|s| s.address.clone());
        let before = (self.balance(&from).await?, self.balance(t.to).await?);
        let sponsor_before = match &sponsor_address {
            Some(a) => Some(self.balance(a).await?),
            None => None,
        };
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

        let after = (self.balance(&from).await?, self.balance(t.to).await?);
        let fee: i128 = fee.parse()?;
        let amount = i128::from(t.amount);
        let sender_fee = if sponsor_address.is_some() { 0 } else { fee };
        let expected = (before.0 - amount - sender_fee, before.1 + amount);
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
        if let (Some(a), Some(b)) = (&sponsor_address, sponsor_before) {
            let now = self.balance(a).await?;
            if now == b - fee {
                self.stats.balances_reconciled += 1;
            } else {
                self.fail(
                    "reconciliation",
                    format!("{hash}: the sponsor {a} went from {b} to {now}, expected {}", b - fee),
                );
            }
        }
        Ok(())
    }

    /// The operations carry the intent: same (type, account, amount) as built, ignoring order,
    /// status and indexes.
    /// `/construction/payloads` for `request`, then `parse(unsigned)` checked against the
    /// intent `ops`: the first round of every workflow. Returns the round, its unsigned
    /// transaction and the parse answer.
    async fn payloads(&mut self, request: Value, ops: &Value) -> anyhow::Result<(Value, String, Value)> {
        let net = self.net.clone();
        let round = self.offline_ok("/construction/payloads", request).await?;
        let unsigned =
            round["unsigned_transaction"].as_str().ok_or_else(|| anyhow!("payloads: no tx"))?.to_owned();
        self.stats.transactions_created += 1;
        let parsed = self
            .offline_ok(
                "/construction/parse",
                json!({"network_identifier": net, "signed": false, "transaction": unsigned}),
            )
            .await?;
        self.check_intent("parse(unsigned)", ops, &parsed["operations"]);
        Ok((round, unsigned, parsed))
    }

    /// `parse(signed)` checked against the intent `ops`, then `/construction/hash`: the last
    /// offline steps of every workflow. Returns the parse answer and the hash.
    async fn parse_signed(&mut self, signed: &str, ops: &Value) -> anyhow::Result<(Value, String)> {
        let net = self.net.clone();
        let parsed = self
            .offline_ok(
                "/construction/parse",
                json!({"network_identifier": net, "signed": true, "transaction": signed}),
            )
            .await?;
        self.check_intent("parse(signed)", ops, &parsed["operations"]);
        let hash = self
            .offline_ok(
                "/construction/hash",
                json!({"network_identifier": net, "signed_transaction": signed}),
            )
            .await?["transaction_identifier"]["hash"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        Ok((parsed, hash))
    }

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
