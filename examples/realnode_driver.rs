//! Drives a real mocknet `stacks-node` (`../shared/tools/realnode/`) with transactions built and
//! signed by the project's own codec, broadcast through our `serve`'s `/v2/transactions` (which
//! proxies them to the node), and followed into blocks through our `/extended` API. At the end it
//! records the node's own answers (`/v2/accounts` of every principal touched, `/v2/contracts/
//! source` and `/interface` of every contract deployed, `/v2/info`) at one tip, for
//! tests/realnode_chains.rs. `tests/realnode/make-chain.sh` runs it; see tests/realnode/README.md.
//!
//! usage: realnode_driver SCENARIO NODE_URL API_URL OUT_DIR   (SCENARIO: contracts | pox | bns)

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value as Json};
use stacks_codec::address::{version, ContractId, PublicKeyBytes, StacksAddress};
use stacks_codec::clarity::Value;
use stacks_codec::hash::{hash160, sha256};
use stacks_codec::sign::{
    append_origin_signature, append_public_key, multisig_condition, sign_origin, sign_presign, sign_sponsor,
    single_sig_condition, vrs_to_rsv, PrivateKey,
};
use stacks_codec::tx::{
    AnchorMode, Authorization, ClarityVersion, HashMode, Payload, PostConditionMode, Transaction,
    TransactionVersion,
};

const CHAIN_ID: u32 = 0x8000_0000;
/// The mocknet's funded keys (tools/realnode/README.md): A, B, C, D.
const KEYS: [&str; 4] = [
    "539e35c740079b79f931036651ad01f76d8fe1496dbd840ba9e62c7e7b355db001",
    "075754fb099a55e351fe87c68a73951836343865cd52c78ae4c0f6f48e234f3601",
    "374b6734eaff979818c5f1367331c685459b03b1a2053310906d1408dc928a0001",
    "26f235698d02803955b7418842affbee600fc308936a7ca48bf5778d1ceef9df01",
];
const FEE: u64 = 3_000;
const DEPLOY_FEE: u64 = 100_000;

struct Key {
    private: PrivateKey,
    public: PublicKeyBytes,
    address: StacksAddress,
}

impl Key {
    fn new(hex: &str) -> Result<Key> {
        let private = PrivateKey::from_hex(hex)?;
        let public = private.public_key();
        let address = StacksAddress::new(version::TESTNET_SINGLE_SIG, public.hash160());
        Ok(Key { private, public, address })
    }
}

/// A 2-of-3 sequential multisig sender (P2SH or P2WSH) over three of the funded keys.
struct Multisig<'a> {
    mode: HashMode,
    keys: [&'a Key; 3],
    address: StacksAddress,
}

impl<'a> Multisig<'a> {
    fn new(mode: HashMode, keys: [&'a Key; 3]) -> Result<Self> {
        let publics: Vec<_> = keys.iter().map(|k| k.public).collect();
        let cond = multisig_condition(mode, 2, &publics, 0, 0)?;
        let address = StacksAddress::new(version::TESTNET_MULTI_SIG, cond.signer());
        Ok(Multisig { mode, keys, address })
    }
}

/// Who signs a transaction.
enum Origin<'a> {
    Single(&'a Key),
    Multi(&'a Multisig<'a>),
}

impl Origin<'_> {
    fn address(&self) -> StacksAddress {
        match self {
            Origin::Single(k) => k.address,
            Origin::Multi(m) => m.address,
        }
    }
}

struct Driver {
    http: reqwest::Client,
    node: String,
    api: String,
    nonces: BTreeMap<String, u64>,
    /// Every principal a transaction touched, for the recorded `/v2/accounts` answers.
    principals: BTreeSet<String>,
    contracts: BTreeSet<String>,
    /// `(label, txid)` of everything broadcast, in order.
    sent: Vec<(String, String)>,
    /// Broadcast but not yet followed into a block.
    pending: Vec<(String, String)>,
    /// What our ledger says of each followed transaction.
    results: Vec<Json>,
}

fn uint(n: u128) -> Value {
    Value::UInt(n)
}
fn buf(b: &[u8]) -> Value {
    Value::Buffer(b.to_vec())
}
fn principal(p: &str) -> Value {
    Value::Principal(p.parse().expect("a principal"))
}
fn some(v: Value) -> Value {
    Value::OptionalSome(Box::new(v))
}
fn tuple(fields: Vec<(&str, Value)>) -> Value {
    Value::Tuple(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()).canonical()
}
fn ascii(s: &str) -> Value {
    Value::StringAscii(s.as_bytes().to_vec())
}

impl Driver {
    async fn get(&self, url: &str) -> Result<Json> {
        let res = self.http.get(url).send().await.with_context(|| url.to_owned())?;
        let status = res.status();
        let body = res.text().await?;
        if !status.is_success() {
            bail!("GET {url}: {status} {body}");
        }
        Ok(serde_json::from_str(&body)?)
    }

    async fn next_nonce(&mut self, addr: &StacksAddress) -> Result<u64> {
        let a = addr.to_string();
        if let Some(n) = self.nonces.get_mut(&a) {
            *n += 1;
            return Ok(*n - 1);
        }
        let n = self.get(&format!("{}/v2/accounts/{a}?proof=0", self.node)).await?["nonce"].as_u64().unwrap();
        self.nonces.insert(a, n + 1);
        Ok(n)
    }

    /// Builds, signs and broadcasts; a sponsor pays the fee when given.
    async fn send(
        &mut self,
        label: &str,
        origin: Origin<'_>,
        sponsor: Option<&Key>,
        payload: Payload,
    ) -> Result<()> {
        let fee = if matches!(payload, Payload::SmartContract { .. }) { DEPLOY_FEE } else { FEE };
        let origin_nonce = self.next_nonce(&origin.address()).await?;
        let origin_fee = if sponsor.is_some() { 0 } else { fee };
        let origin_cond = match &origin {
            Origin::Single(k) => single_sig_condition(HashMode::P2PKH, &k.public, origin_nonce, origin_fee)?,
            Origin::Multi(m) => {
                let publics: Vec<_> = m.keys.iter().map(|k| k.public).collect();
                multisig_condition(m.mode, 2, &publics, origin_nonce, origin_fee)?
            }
        };
        let auth = match sponsor {
            None => Authorization::Standard(origin_cond),
            Some(s) => {
                let n = self.next_nonce(&s.address).await?;
                Authorization::Sponsored(
                    origin_cond,
                    single_sig_condition(HashMode::P2PKH, &s.public, n, fee)?,
                )
            }
        };
        let mut tx = Transaction {
            version: TransactionVersion::Testnet,
            chain_id: CHAIN_ID,
            auth,
            anchor_mode: AnchorMode::Any,
            post_condition_mode: PostConditionMode::Allow,
            post_conditions: vec![],
            payload,
        };
        match &origin {
            Origin::Single(k) => {
                sign_origin(&mut tx, &k.private)?;
            }
            Origin::Multi(m) => {
                // Sequential: the first two keys sign in address order, the third is a public key.
                append_origin_signature(&mut tx, &m.keys[0].private)?;
                append_origin_signature(&mut tx, &m.keys[1].private)?;
                append_public_key(&mut tx, &m.keys[2].public)?;
            }
        }
        if let Some(s) = sponsor {
            sign_sponsor(&mut tx, &s.private)?;
            self.principals.insert(s.address.to_string());
        }
        self.principals.insert(origin.address().to_string());
        self.touch_payload(&origin.address(), &tx.payload);
        let raw = tx.serialize();
        let res = self
            .http
            .post(format!("{}/v2/transactions", self.api))
            .header("content-type", "application/octet-stream")
            .body(raw)
            .send()
            .await?;
        let status = res.status();
        let body = res.text().await?;
        println!("{label}: {status} {body}");
        if !status.is_success() {
            // The node refused it (nothing was mined): the nonce was not used.
            *self.nonces.get_mut(&origin.address().to_string()).unwrap() -= 1;
            if let Some(s) = sponsor {
                *self.nonces.get_mut(&s.address.to_string()).unwrap() -= 1;
            }
            self.results.push(json!({"label": label, "refused_by_node": serde_json::from_str::<Json>(&body).unwrap_or(Json::String(body))}));
            return Ok(());
        }
        let txid: String = serde_json::from_str(&body)?;
        let txid = format!("0x{}", txid.trim_start_matches("0x"));
        self.sent.push((label.to_owned(), txid.clone()));
        self.pending.push((label.to_owned(), txid));
        Ok(())
    }

    fn touch_payload(&mut self, sender: &StacksAddress, payload: &Payload) {
        match payload {
            Payload::TokenTransfer { recipient, .. } => {
                self.principals.insert(recipient.to_string());
            }
            Payload::SmartContract { name, .. } => {
                let id = format!("{sender}.{name}");
                self.principals.insert(id.clone());
                self.contracts.insert(id);
            }
            Payload::ContractCall { contract, function_args, .. } => {
                self.principals.insert(contract.to_string());
                for a in function_args {
                    if let Value::Principal(p) = a {
                        self.principals.insert(p.to_string());
                    }
                }
            }
            _ => {}
        }
    }

    async fn call(
        &mut self,
        label: &str,
        origin: Origin<'_>,
        sponsor: Option<&Key>,
        contract: &str,
        function: &str,
        args: Vec<Value>,
    ) -> Result<()> {
        let contract: ContractId = contract.parse()?;
        let payload = Payload::ContractCall { contract, function_name: function.into(), function_args: args };
        self.send(label, origin, sponsor, payload).await
    }

    async fn deploy(&mut self, label: &str, key: &Key, name: &str, source: &str) -> Result<()> {
        let payload = Payload::SmartContract {
            name: name.into(),
            code_body: source.into(),
            clarity_version: Some(ClarityVersion::Clarity2),
        };
        self.send(label, Origin::Single(key), None, payload).await
    }

    async fn transfer(
        &mut self,
        label: &str,
        origin: Origin<'_>,
        sponsor: Option<&Key>,
        to: &str,
        amount: u64,
        memo: &str,
    ) -> Result<()> {
        let mut m = [0u8; 34];
        m[..memo.len()].copy_from_slice(memo.as_bytes());
        let payload = Payload::TokenTransfer { recipient: to.parse()?, amount, memo: m };
        self.send(label, origin, sponsor, payload).await
    }

    /// Waits until every pending transaction is in a canonical block on our ledger.
    async fn confirm(&mut self) -> Result<()> {
        let start = Instant::now();
        for (label, txid) in std::mem::take(&mut self.pending) {
            loop {
                let url = format!("{}/extended/v1/tx/{txid}", self.api);
                if let Ok(tx) = self.get(&url).await {
                    let status = tx["tx_status"].as_str().unwrap_or("").to_owned();
                    if status != "pending" && !status.is_empty() {
                        let result = tx["tx_result"]["repr"].clone();
                        println!("  {label} {txid}: {status} {result} (block {})", tx["block_height"]);
                        self.results.push(
                            json!({"label": label, "txid": txid, "tx_status": status, "tx_result": result}),
                        );
                        break;
                    }
                }
                if start.elapsed() > Duration::from_secs(300) {
                    bail!("{label} {txid} not mined after 300 s");
                }
                tokio::time::sleep(Duration::from_millis(1000)).await;
            }
        }
        Ok(())
    }

    async fn burn_height(&self) -> Result<u64> {
        Ok(self.get(&format!("{}/v2/info", self.node)).await?["burn_block_height"].as_u64().unwrap())
    }

    async fn pox(&self) -> Result<Json> {
        self.get(&format!("{}/v2/pox", self.node)).await
    }

    /// Waits until the node's burn height is at least `h`.
    async fn wait_burn_height(&self, h: u64) -> Result<()> {
        while self.burn_height().await? < h {
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
        Ok(())
    }

    /// The node's answers at one tip (asked again until the tip held still while asking).
    async fn record(&self, out: &std::path::Path) -> Result<u64> {
        loop {
            let before = self.get(&format!("{}/v2/info", self.node)).await?;
            let mut accounts = serde_json::Map::new();
            for p in &self.principals {
                let a = self.get(&format!("{}/v2/accounts/{p}?proof=0", self.node)).await?;
                accounts.insert(p.clone(), a);
            }
            let mut contracts = serde_json::Map::new();
            for c in &self.contracts {
                let (addr, name) = c.split_once('.').unwrap();
                let source =
                    self.get(&format!("{}/v2/contracts/source/{addr}/{name}?proof=0", self.node)).await;
                let interface =
                    self.get(&format!("{}/v2/contracts/interface/{addr}/{name}", self.node)).await;
                // A deploy that failed created nothing: the node answers 404 for it.
                contracts.insert(c.clone(), json!({"source": source.ok(), "interface": interface.ok()}));
            }
            let after = self.get(&format!("{}/v2/info", self.node)).await?;
            if before["stacks_tip"] != after["stacks_tip"] {
                continue;
            }
            let write = |name: &str, v: &Json| {
                std::fs::write(out.join(name), serde_json::to_string_pretty(v).unwrap() + "\n")
            };
            write("node-info.json", &after)?;
            write("node-accounts.json", &Json::Object(accounts))?;
            write("node-contracts.json", &Json::Object(contracts))?;
            write("txs.json", &Json::Array(self.results.clone()))?;
            return Ok(after["stacks_tip_height"].as_u64().unwrap());
        }
    }
}

const FT: &str = r#"(define-fungible-token rn-coin)
(define-public (mint (amount uint) (recipient principal))
  (begin (print { event: "mint", amount: amount, recipient: recipient })
         (ft-mint? rn-coin amount recipient)))
(define-public (transfer (amount uint) (sender principal) (recipient principal) (memo (optional (buff 34))))
  (begin (asserts! (is-eq tx-sender sender) (err u4))
         (match memo m (print m) 0x)
         (ft-transfer? rn-coin amount sender recipient)))
(define-public (burn (amount uint))
  (begin (print { event: "burn", amount: amount }) (ft-burn? rn-coin amount tx-sender)))
(define-read-only (get-balance (who principal)) (ok (ft-get-balance rn-coin who)))
"#;

const NFT: &str = r#"(define-non-fungible-token rn-nft uint)
(define-public (mint (id uint) (recipient principal)) (nft-mint? rn-nft id recipient))
(define-public (transfer (id uint) (sender principal) (recipient principal))
  (begin (asserts! (is-eq tx-sender sender) (err u4)) (nft-transfer? rn-nft id sender recipient)))
(define-public (burn (id uint)) (nft-burn? rn-nft id tx-sender))
"#;

/// Calls the FT contract (contract to contract) and prints.
const CALLER: &str = r#"(define-public (mint-via (amount uint) (recipient principal))
  (begin (print { event: "mint-via", caller: contract-caller, sender: tx-sender })
         (contract-call? .ft-token mint amount recipient)))
(define-public (shout (msg (string-ascii 40))) (begin (print msg) (ok true)))
"#;

/// Passes type-checking, fails at runtime (a division by zero at the top level).
const RUNTIME_FAIL: &str = "(define-constant boom (/ u1 u0))\n(define-read-only (get-boom) boom)\n";
/// Fails type-checking (uint plus int).
const TYPECHECK_FAIL: &str = "(define-public (bad) (ok (+ u1 1)))\n";

async fn contracts(d: &mut Driver, k: &[Key]) -> Result<()> {
    let (a, b, c, dd) = (&k[0], &k[1], &k[2], &k[3]);
    let (sa, sb, sc, sd) =
        (a.address.to_string(), b.address.to_string(), c.address.to_string(), dd.address.to_string());
    let ft = format!("{sa}.ft-token");
    let nft = format!("{sa}.nft-token");
    let caller = format!("{sa}.caller");
    d.deploy("deploy ft-token", a, "ft-token", FT).await?;
    d.deploy("deploy nft-token", a, "nft-token", NFT).await?;
    d.deploy("deploy caller (contract-call? to ft-token)", a, "caller", CALLER).await?;
    d.deploy("deploy runtime-fail (division by zero at the top level)", a, "runtime-fail", RUNTIME_FAIL)
        .await?;
    d.deploy("deploy typecheck-fail (uint + int)", a, "typecheck-fail", TYPECHECK_FAIL).await?;
    d.transfer("STX transfer B->C, no memo", Origin::Single(b), None, &sc, 1_000_000, "").await?;
    d.transfer("STX transfer B->D, memo", Origin::Single(b), None, &sd, 2_000_000, "realnode memo").await?;
    d.confirm().await?;

    d.call("ft mint 1000 to B", Origin::Single(a), None, &ft, "mint", vec![uint(1000), principal(&sb)])
        .await?;
    d.call("nft mint u1 to B", Origin::Single(a), None, &nft, "mint", vec![uint(1), principal(&sb)]).await?;
    d.call("nft mint u2 to C", Origin::Single(a), None, &nft, "mint", vec![uint(2), principal(&sc)]).await?;
    d.confirm().await?;
    let memo = some(buf(b"ft memo"));
    d.call(
        "ft transfer 100 B->C with memo",
        Origin::Single(b),
        None,
        &ft,
        "transfer",
        vec![uint(100), principal(&sb), principal(&sc), memo],
    )
    .await?;
    d.call("ft burn 50 by B", Origin::Single(b), None, &ft, "burn", vec![uint(50)]).await?;
    d.call(
        "ft transfer 10^6 B->C (insufficient: aborts)",
        Origin::Single(b),
        None,
        &ft,
        "transfer",
        vec![uint(1_000_000), principal(&sb), principal(&sc), Value::OptionalNone],
    )
    .await?;
    d.call(
        "nft transfer u1 B->C",
        Origin::Single(b),
        None,
        &nft,
        "transfer",
        vec![uint(1), principal(&sb), principal(&sc)],
    )
    .await?;
    d.call("nft burn u2 by C", Origin::Single(c), None, &nft, "burn", vec![uint(2)]).await?;
    d.call(
        "caller mint-via 77 to D by C",
        Origin::Single(c),
        None,
        &caller,
        "mint-via",
        vec![uint(77), principal(&sd)],
    )
    .await?;
    d.call(
        "caller shout (print)",
        Origin::Single(c),
        None,
        &caller,
        "shout",
        vec![ascii("hello from the real node")],
    )
    .await?;
    d.transfer(
        "sponsored STX transfer D->A, sponsor C",
        Origin::Single(dd),
        Some(c),
        &sa,
        5_000,
        "sponsored",
    )
    .await?;
    d.call(
        "sponsored contract call D mint-via, sponsor B",
        Origin::Single(dd),
        Some(b),
        &caller,
        "mint-via",
        vec![uint(5), principal(&sd)],
    )
    .await?;
    let p2sh = Multisig::new(HashMode::P2SH, [b, c, dd])?;
    let p2wsh = Multisig::new(HashMode::P2WSH, [c, dd, b])?;
    d.transfer("fund 2-of-3 P2SH", Origin::Single(a), None, &p2sh.address.to_string(), 50_000_000, "")
        .await?;
    d.transfer("fund 2-of-3 P2WSH", Origin::Single(a), None, &p2wsh.address.to_string(), 50_000_000, "")
        .await?;
    d.confirm().await?;

    for (name, m) in [("P2SH", &p2sh), ("P2WSH", &p2wsh)] {
        d.transfer(
            &format!("{name} 2-of-3 sends STX to A"),
            Origin::Multi(m),
            None,
            &sa,
            1_234_567,
            "multisig",
        )
        .await?;
        d.call(
            &format!("{name} 2-of-3 calls caller shout"),
            Origin::Multi(m),
            None,
            &caller,
            "shout",
            vec![ascii(name)],
        )
        .await?;
        d.transfer(
            &format!("{name} 2-of-3 sponsored by A sends STX to C"),
            Origin::Multi(m),
            Some(a),
            &sc,
            1_000,
            "",
        )
        .await?;
    }
    d.confirm().await
}

/// A P2PKH PoX reward address.
fn pox_addr(k: &Key) -> Value {
    tuple(vec![("version", buf(&[0])), ("hashbytes", buf(&k.address.hash160))])
}

/// The pox-4 signer-key signature over a SIP-018 message (`verify-signer-key-sig`).
fn signer_sig(
    signer: &Key,
    pox_addr: &Value,
    reward_cycle: u64,
    topic: &str,
    period: u64,
    max_amount: u128,
    auth_id: u128,
) -> Value {
    let domain = tuple(vec![
        ("name", ascii("pox-4-signer")),
        ("version", ascii("1.0.0")),
        ("chain-id", uint(CHAIN_ID.into())),
    ]);
    let message = tuple(vec![
        ("pox-addr", pox_addr.clone()),
        ("reward-cycle", uint(reward_cycle.into())),
        ("topic", ascii(topic)),
        ("period", uint(period.into())),
        ("max-amount", uint(max_amount)),
        ("auth-id", uint(auth_id)),
    ]);
    let mut pre = b"SIP018".to_vec();
    pre.extend_from_slice(&sha256(&domain.serialize()));
    pre.extend_from_slice(&sha256(&message.serialize()));
    let (vrs, _) = sign_presign(sha256(&pre), &signer.private);
    some(buf(&vrs_to_rsv(&vrs)))
}

async fn pox(d: &mut Driver, k: &[Key]) -> Result<()> {
    let (a, c, dd) = (&k[0], &k[2], &k[3]);
    let pox4 = "ST000000000000000000002AMW42H.pox-4";
    d.principals.insert(pox4.into());
    let info = d.pox().await?;
    let min = u128::from(info["min_amount_ustx"].as_u64().unwrap());
    let len = info["reward_cycle_length"].as_u64().unwrap();
    let first = info["first_burnchain_block_height"].as_u64().unwrap();
    println!("pox: min {min} cycle length {len}, first burn height {first}");
    // Start in a cycle's first block so everything lands in the same cycle.
    let cycle_start = |h: u64| first + ((h - first) / len + 1) * len;
    d.wait_burn_height(cycle_start(d.burn_height().await?)).await?;
    let h = d.burn_height().await?;
    let cycle = d.pox().await?["current_cycle"]["id"].as_u64().unwrap();
    let max = u128::MAX >> 1;
    let (pa, pd) = (pox_addr(a), pox_addr(dd));
    let sig = signer_sig(a, &pa, cycle, "stack-stx", 2, max, 1);
    d.call(
        "A stack-stx 2 cycles",
        Origin::Single(a),
        None,
        pox4,
        "stack-stx",
        vec![
            uint(min * 2),
            pa.clone(),
            uint(h.into()),
            uint(2),
            sig,
            buf(&a.public.to_compressed()),
            uint(max),
            uint(1),
        ],
    )
    .await?;
    d.call(
        "C delegate-stx to D",
        Origin::Single(c),
        None,
        pox4,
        "delegate-stx",
        vec![uint(min * 3), principal(&dd.address.to_string()), Value::OptionalNone, Value::OptionalNone],
    )
    .await?;
    d.confirm().await?;
    let h = d.burn_height().await?;
    d.call(
        "D delegate-stack-stx C 2 cycles",
        Origin::Single(dd),
        None,
        pox4,
        "delegate-stack-stx",
        vec![principal(&c.address.to_string()), uint(min * 2), pd.clone(), uint(h.into()), uint(2)],
    )
    .await?;
    d.confirm().await?;
    let cycle = d.pox().await?["current_cycle"]["id"].as_u64().unwrap();
    let sig = signer_sig(dd, &pd, cycle + 1, "agg-commit", 1, max, 2);
    d.call(
        "D stack-aggregation-commit next cycle",
        Origin::Single(dd),
        None,
        pox4,
        "stack-aggregation-commit",
        vec![pd.clone(), uint((cycle + 1).into()), sig, buf(&dd.public.to_compressed()), uint(max), uint(2)],
    )
    .await?;
    d.call("C revoke-delegate-stx", Origin::Single(c), None, pox4, "revoke-delegate-stx", vec![]).await?;
    d.call(
        "C revoke-delegate-stx again (already revoked: err)",
        Origin::Single(c),
        None,
        pox4,
        "revoke-delegate-stx",
        vec![],
    )
    .await?;
    d.confirm().await?;
    // The next cycle: A's lock is active; increase, then extend it.
    d.wait_burn_height(cycle_start(d.burn_height().await?)).await?;
    let cycle = d.pox().await?["current_cycle"]["id"].as_u64().unwrap();
    let sig = signer_sig(a, &pa, cycle, "stack-increase", 2, max, 3);
    d.call(
        "A stack-increase",
        Origin::Single(a),
        None,
        pox4,
        "stack-increase",
        vec![uint(min), sig, buf(&a.public.to_compressed()), uint(max), uint(3)],
    )
    .await?;
    let sig = signer_sig(a, &pa, cycle, "stack-extend", 2, max, 4);
    d.call(
        "A stack-extend 2 cycles",
        Origin::Single(a),
        None,
        pox4,
        "stack-extend",
        vec![uint(2), pa.clone(), sig, buf(&a.public.to_compressed()), uint(max), uint(4)],
    )
    .await?;
    d.confirm().await?;
    // Past C's unlock height (its delegated lock ends), with A still locked.
    let c_unlock = d.get(&format!("{}/v2/accounts/{}?proof=0", d.node, c.address)).await?["unlock_height"]
        .as_u64()
        .unwrap();
    println!("C unlocks at burn height {c_unlock}");
    d.wait_burn_height(c_unlock + 1).await?;
    // A transfer from C after its unlock spends what was locked.
    d.transfer("C transfer after unlock", Origin::Single(c), None, &a.address.to_string(), 1_000_000, "")
        .await?;
    d.confirm().await
}

async fn bns(d: &mut Driver, k: &[Key]) -> Result<()> {
    let (a, b, c) = (&k[0], &k[1], &k[2]);
    let bns = "ST000000000000000000002AMW42H.bns";
    d.principals.insert(bns.into());
    let ns = b"realnode";
    let salt = b"salt";
    let hashed = |parts: &[&[u8]]| hash160(&parts.concat());
    d.call(
        "namespace-preorder",
        Origin::Single(a),
        None,
        bns,
        "namespace-preorder",
        vec![buf(&hashed(&[ns, salt])), uint(1_000_000_000)],
    )
    .await?;
    d.confirm().await?;
    let mut reveal = vec![buf(ns), buf(salt), uint(1), uint(1)];
    reveal.extend((0..16).map(|_| uint(1)));
    reveal.extend([uint(1), uint(1), uint(5000), principal(&a.address.to_string())]);
    d.call("namespace-reveal", Origin::Single(a), None, bns, "namespace-reveal", reveal).await?;
    d.confirm().await?;
    d.call("namespace-ready", Origin::Single(a), None, bns, "namespace-ready", vec![buf(ns)]).await?;
    d.confirm().await?;
    d.call(
        "name-preorder alice by B",
        Origin::Single(b),
        None,
        bns,
        "name-preorder",
        vec![buf(&hashed(&[b"alice.", ns, salt])), uint(1_000_000)],
    )
    .await?;
    d.call(
        "name-preorder carol by C",
        Origin::Single(c),
        None,
        bns,
        "name-preorder",
        vec![buf(&hashed(&[b"carol.", ns, salt])), uint(1_000_000)],
    )
    .await?;
    d.confirm().await?;
    let zonefile = |s: &[u8]| buf(&hash160(s));
    d.call(
        "name-register alice",
        Origin::Single(b),
        None,
        bns,
        "name-register",
        vec![buf(ns), buf(b"alice"), buf(salt), zonefile(b"alice zonefile")],
    )
    .await?;
    d.call(
        "name-register carol",
        Origin::Single(c),
        None,
        bns,
        "name-register",
        vec![buf(ns), buf(b"carol"), buf(salt), zonefile(b"carol zonefile")],
    )
    .await?;
    d.confirm().await?;
    d.call(
        "name-update alice",
        Origin::Single(b),
        None,
        bns,
        "name-update",
        vec![buf(ns), buf(b"alice"), zonefile(b"alice zonefile 2")],
    )
    .await?;
    d.call(
        "name-renewal carol",
        Origin::Single(c),
        None,
        bns,
        "name-renewal",
        vec![buf(ns), buf(b"carol"), uint(1_000_000), Value::OptionalNone, Value::OptionalNone],
    )
    .await?;
    d.confirm().await?;
    d.call(
        "name-transfer alice B->A",
        Origin::Single(b),
        None,
        bns,
        "name-transfer",
        vec![buf(ns), buf(b"alice"), principal(&a.address.to_string()), some(zonefile(b"alice zonefile 3"))],
    )
    .await?;
    d.call("name-revoke carol", Origin::Single(c), None, bns, "name-revoke", vec![buf(ns), buf(b"carol")])
        .await?;
    d.confirm().await
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, scenario, node, api, out] = args.as_slice() else {
        bail!("usage: realnode_driver contracts|pox|bns NODE_URL API_URL OUT_DIR");
    };
    let keys = KEYS.iter().map(|h| Key::new(h)).collect::<Result<Vec<_>>>()?;
    let mut d = Driver {
        http: reqwest::Client::new(),
        node: node.clone(),
        api: api.clone(),
        nonces: BTreeMap::new(),
        principals: keys
            .iter()
            .map(|k| k.address.to_string())
            .chain(["ST000000000000000000002AMW42H".into()])
            .collect(),
        contracts: BTreeSet::new(),
        sent: vec![],
        pending: vec![],
        results: vec![],
    };
    match scenario.as_str() {
        "contracts" => contracts(&mut d, &keys).await?,
        "pox" => pox(&mut d, &keys).await?,
        "bns" => bns(&mut d, &keys).await?,
        other => bail!("unknown scenario {other}"),
    }
    let out = std::path::Path::new(out);
    std::fs::create_dir_all(out)?;
    let tip = d.record(out).await?;
    println!("sent {} transactions; recorded the node's answers at tip {tip}", d.sent.len());
    println!("tip {tip}");
    Ok(())
}
