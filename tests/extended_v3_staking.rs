//! `/extended/v3` PoX-5 staking end to end: no recorded chain has a `pox-5` event, so a devnet
//! chain with PoX-5 calls of every kind the incumbent handles (`--pox5-per-mille`), with forks,
//! is ingested one event at a time, and at every reorg and at the end each route's answer is
//! compared with the state recomputed here from the generated `/new_block` payloads of the
//! canonical chain (not from anything the store derived): every page of every list with its
//! cursors, every detail, the 404s, and the current cycle's signers from the reward set the
//! chain announced. Orphaned PoX-5 events must drop out and come back with
//! their fork. On SQLite and PostgreSQL. The recorded empty, 404 and 400 shapes of the oracle
//! fixtures are checked by tests/extended_parity.rs.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::convert::Infallible;
use std::sync::Arc;

use common::{devnet_events, Db, TestStore};
use serde_json::{json, Value};
use stacks_codec::clarity::Value as Clarity;
use stacks_devnet::DevnetConfig;
use stacks_ledger::events::RawEvent;
use stacks_ledger::ledger::Network;
use warp::{Filter, Reply};

async fn get<F, R>(api: &F, path: &str) -> (u16, Value)
where
    F: Filter<Extract = (R,), Error = Infallible> + Clone + Send + Sync + 'static,
    R: Reply + Send,
{
    let res = warp::test::request().path(path).reply(api).await;
    (res.status().as_u16(), serde_json::from_slice(res.body()).unwrap_or(Value::Null))
}

/// One `pox-5` print of a canonical block, in chain order.
#[derive(Debug, Clone)]
struct Print {
    height: u64,
    tx_index: u64,
    event_index: u64,
    tx_id: String,
    block_hash: String,
    index_block_hash: String,
    burn_height: u64,
    burn_time: u64,
    name: String,
    data: Vec<(String, Clarity)>,
}

impl Print {
    fn f(&self, k: &str) -> &Clarity {
        &self.data.iter().find(|(n, _)| n == k).unwrap_or_else(|| panic!("{} has no {k}", self.name)).1
    }
    fn u(&self, k: &str) -> u128 {
        match self.f(k) {
            Clarity::UInt(n) => *n,
            Clarity::OptionalSome(v) => match **v {
                Clarity::UInt(n) => n,
                _ => panic!("{k}"),
            },
            other => panic!("{k} is not a uint: {other:?}"),
        }
    }
    fn p(&self, k: &str) -> String {
        match self.f(k) {
            Clarity::Principal(p) => p.to_string(),
            other => panic!("{k} is not a principal: {other:?}"),
        }
    }
    fn key(&self, k: &str) -> String {
        match self.f(k) {
            Clarity::Buffer(b) => format!("0x{}", hex::encode(b)),
            other => panic!("{k} is not a buffer: {other:?}"),
        }
    }
    fn cursor(&self) -> String {
        format!("{}:2147483647:{}", self.height, self.tx_index)
    }
    fn transaction(&self, block_time: u64) -> Value {
        json!({
            "tx_id": self.tx_id,
            "block": {
                "height": self.height,
                "hash": self.block_hash,
                "index_hash": self.index_block_hash,
                "time": block_time,
                "tx_index": self.tx_index,
            },
            "bitcoin_block": { "height": self.burn_height, "time": self.burn_time },
        })
    }
}

/// The blocks seen so far: the canonical chain is the first block to reach the greatest
/// height and its ancestors (the store's rule).
#[derive(Default)]
struct Chain {
    blocks: HashMap<String, Value>,
    tip: Option<(u64, String)>,
}

impl Chain {
    /// Adds a `/new_block`; true when it reorganizes (its parent is not the previous tip).
    fn add(&mut self, b: Value) -> bool {
        let ibh = b["index_block_hash"].as_str().unwrap().to_string();
        let height = b["block_height"].as_u64().unwrap();
        let parent = b["parent_index_block_hash"].as_str().unwrap().to_string();
        self.blocks.insert(ibh.clone(), b);
        match &self.tip {
            Some((h, _)) if height <= *h => false,
            Some((_, t)) => {
                let reorg = *t != parent;
                self.tip = Some((height, ibh));
                reorg
            }
            None => {
                self.tip = Some((height, ibh));
                false
            }
        }
    }

    fn canonical(&self) -> Vec<&Value> {
        let mut out = Vec::new();
        let mut at = self.tip.as_ref().map(|t| t.1.clone());
        while let Some(b) = at.and_then(|h| self.blocks.get(&h)) {
            out.push(b);
            at = b["parent_index_block_hash"].as_str().map(String::from);
        }
        out.reverse();
        out
    }

    fn burn_tip(&self) -> u64 {
        self.tip.as_ref().map_or(0, |t| self.blocks[&t.1]["burn_block_height"].as_u64().unwrap())
    }
}

fn prints(blocks: &[&Value]) -> Vec<Print> {
    let mut out = Vec::new();
    for b in blocks {
        let txs = b["transactions"].as_array().unwrap();
        let tx = |id: &str| txs.iter().find(|t| t["txid"] == id).unwrap();
        let mut evs: Vec<&Value> = b["events"].as_array().unwrap().iter().collect();
        evs.sort_by_key(|e| {
            (tx(e["txid"].as_str().unwrap())["tx_index"].as_u64(), e["event_index"].as_u64())
        });
        for e in evs {
            let c = &e["contract_event"];
            if e["type"] != "contract_event"
                || c["contract_identifier"] != "ST000000000000000000002AMW42H.pox-5"
            {
                continue;
            }
            let t = tx(e["txid"].as_str().unwrap());
            if t["status"] != "success" {
                continue;
            }
            let raw = stacks_codec::decode_hex(c["raw_value"].as_str().unwrap()).unwrap();
            let Clarity::ResponseOk(top) = Clarity::deserialize(&raw).unwrap() else { panic!("print") };
            let Clarity::Tuple(top) = *top else { panic!("tuple") };
            let get = |k: &str| top.iter().find(|(n, _)| n == k).unwrap().1.clone();
            let Clarity::StringAscii(name) = get("name") else { panic!("name") };
            let Clarity::Tuple(data) = get("data") else { panic!("data") };
            out.push(Print {
                height: b["block_height"].as_u64().unwrap(),
                tx_index: t["tx_index"].as_u64().unwrap(),
                event_index: e["event_index"].as_u64().unwrap(),
                tx_id: t["txid"].as_str().unwrap().to_string(),
                block_hash: b["block_hash"].as_str().unwrap().to_string(),
                index_block_hash: b["index_block_hash"].as_str().unwrap().to_string(),
                burn_height: b["burn_block_height"].as_u64().unwrap(),
                burn_time: b["burn_block_time"].as_u64().unwrap(),
                name: String::from_utf8(name).unwrap(),
                data,
            });
        }
    }
    out
}

#[derive(Default, Clone)]
struct Bond {
    setup: Option<Print>,
    capacity: u128,
    allowed: i64,
    registered: i64,
    btc: i128,
    stx: i128,
}

#[derive(Default, Clone)]
struct Position {
    early_exit: bool,
    /// `announce-l1-early-exit` turns a position inactive; a (re-)registration active again.
    inactive: bool,
    tx_id: String,
    btc: u128,
    stx: u128,
    accrued: u128,
    claimed: u128,
}

#[derive(Default, Clone)]
struct Totals {
    stx_accrued: u128,
    stx_claimed: u128,
    count: i64,
    btc: i128,
    stx: i128,
    accrued: u128,
    claimed: u128,
}

/// The state the incumbent's write rules give after `prints`.
#[derive(Default)]
struct Expected {
    bonds: BTreeMap<u128, Bond>,
    /// (bond, staker, max_sats, print), chain order.
    allowlist: Vec<(u128, String, u128, Print)>,
    /// (bond, signer, staker, sats, ustx, print), chain order.
    registrations: Vec<(u128, String, String, u128, u128, Print)>,
    positions: BTreeMap<(String, u128), Position>,
    /// staker → (amount, unlock height, signer)
    stakes: BTreeMap<String, (u128, u64, String)>,
    signers: BTreeMap<String, (String, Print)>,
    totals: BTreeMap<String, Totals>,
}

const E18: u128 = 1_000_000_000_000_000_000;

fn expected(prints: &[Print]) -> Expected {
    let mut x = Expected::default();
    for p in prints {
        match p.name.as_str() {
            "setup-bond" => {
                x.bonds.entry(p.u("bond-index")).or_default().setup.get_or_insert(p.clone());
            }
            "add-to-allowlist" => {
                let b = x.bonds.entry(p.u("bond-index")).or_default();
                b.capacity += p.u("max-sats");
                b.allowed += 1;
                x.allowlist.push((p.u("bond-index"), p.p("staker"), p.u("max-sats"), p.clone()));
            }
            "register-for-bond" | "update-bond-registration" => {
                let (bond, staker, signer) = (p.u("bond-index"), p.p("staker"), p.p("signer"));
                let sats = p.u(if p.name == "register-for-bond" { "sats-total" } else { "amount-sats" });
                let ustx = p.u("amount-ustx");
                if p.name == "register-for-bond" {
                    x.registrations.push((bond, signer, staker.clone(), sats, ustx, p.clone()));
                    x.bonds.entry(bond).or_default().registered += 1;
                } else {
                    for r in x.registrations.iter_mut().filter(|r| r.0 == bond && r.2 == staker) {
                        (r.1, r.3, r.4) = (signer.clone(), sats, ustx);
                    }
                }
                let fresh = !x.positions.contains_key(&(staker.clone(), bond));
                let pos = x.positions.entry((staker.clone(), bond)).or_default();
                let (db, ds) = (sats as i128 - pos.btc as i128, ustx as i128 - pos.stx as i128);
                (pos.early_exit, pos.inactive) = (false, false);
                (pos.tx_id, pos.btc, pos.stx) = (p.tx_id.clone(), sats, ustx);
                let b = x.bonds.entry(bond).or_default();
                (b.btc, b.stx) = (b.btc + db, b.stx + ds);
                let t = x.totals.entry(staker).or_default();
                (t.count, t.btc, t.stx) = (t.count + i64::from(fresh), t.btc + db, t.stx + ds);
            }
            "announce-l1-early-exit" => {
                if let Some(pos) = x.positions.get_mut(&(p.p("staker"), p.u("bond-index"))) {
                    (pos.early_exit, pos.inactive) = (true, true);
                }
            }
            "unstake-sbtc" => {
                let (staker, bond, new) = (p.p("staker"), p.u("bond-index"), p.u("new-amount-sats"));
                if let Some(pos) = x.positions.get_mut(&(staker.clone(), bond)) {
                    let d = new as i128 - pos.btc as i128;
                    pos.btc = new;
                    pos.early_exit |= new == 0;
                    x.bonds.entry(bond).or_default().btc += d;
                    x.totals.entry(staker).or_default().btc += d;
                }
            }
            "bond-distribution" => {
                let rate = p.u("accrued-rewards-per-sat");
                for ((who, bond), pos) in x.positions.iter_mut() {
                    let r = pos.btc * rate / E18;
                    if *bond == p.u("bond-index") && r > 0 {
                        pos.accrued += r;
                        x.totals.entry(who.clone()).or_default().accrued += r;
                    }
                }
            }
            "calculate-rewards" => {
                let rate = p.u("accrued-rewards-per-ustx");
                for (who, s) in &x.stakes {
                    let r = s.0 * rate / E18;
                    if r > 0 {
                        x.totals.entry(who.clone()).or_default().stx_accrued += r;
                    }
                }
            }
            "claim-staker-rewards-for-signer" => {
                let (staker, claimed) = (p.p("staker"), p.u("rewards-claimed"));
                if matches!(p.f("bond-index"), Clarity::OptionalNone) {
                    x.totals.entry(staker).or_default().stx_claimed += claimed;
                } else {
                    if let Some(pos) = x.positions.get_mut(&(staker.clone(), p.u("bond-index"))) {
                        pos.claimed += claimed;
                    }
                    x.totals.entry(staker).or_default().claimed += claimed;
                }
            }
            "stake" | "stake-update" | "unstake" => {
                let unlock = u64::try_from(p.u("unlock-burn-height")).unwrap();
                x.stakes.insert(p.p("staker"), (p.u("amount-ustx"), unlock, p.p("signer")));
            }
            "register-signer" => {
                x.signers.insert(p.p("signer"), (p.key("signer-key"), p.clone()));
            }
            _ => {}
        }
    }
    x.bonds.retain(|_, b| b.setup.is_some());
    x
}

/// Every page of `base` at `limit` rows, compared with `rows` (`(cursor, row)` in page order)
/// and `total`; each page's `previous` cursor is checked to open the page before it.
async fn walk<F, R>(api: &F, base: &str, limit: usize, rows: &[(String, Value)], total: i64) -> usize
where
    F: Filter<Extract = (R,), Error = Infallible> + Clone + Send + Sync + 'static,
    R: Reply + Send,
{
    let sep = if base.contains('?') { '&' } else { '?' };
    let mut start = 0;
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let url = match &cursor {
            Some(c) => format!("{base}{sep}limit={limit}&cursor={c}"),
            None => format!("{base}{sep}limit={limit}"),
        };
        let (status, body) = get(api, &url).await;
        assert_eq!(status, 200, "{url}: {body}");
        let end = (start + limit).min(rows.len());
        let want: Vec<&Value> = rows[start..end].iter().map(|r| &r.1).collect();
        let got: Vec<&Value> = body["results"].as_array().unwrap().iter().collect();
        assert_eq!(got, want, "{url}");
        let key = |i: usize| rows.get(i).map(|r| r.0.clone());
        let cursors = json!({
            "next": if end > start { key(end) } else { None },
            "previous": if start > 0 && end > start { key(start.saturating_sub(limit)) } else { None },
            "current": if end > start { key(start) } else { None },
        });
        assert_eq!(body["cursor"], cursors, "{url}");
        assert_eq!(
            (body["total"].as_i64(), body["limit"].as_u64()),
            (Some(total), Some(limit as u64)),
            "{url}"
        );
        if let Some(prev) = body["cursor"]["previous"].as_str() {
            let (_, before) = get(api, &format!("{base}{sep}limit={limit}&cursor={prev}")).await;
            let s = start.saturating_sub(limit);
            let want: Vec<&Value> = rows[s..(s + limit).min(rows.len())].iter().map(|r| &r.1).collect();
            assert_eq!(
                before["results"].as_array().unwrap().iter().collect::<Vec<_>>(),
                want,
                "previous of {url}"
            );
        }
        pages += 1;
        match body["cursor"]["next"].as_str() {
            Some(n) => {
                cursor = Some(n.to_string());
                start = end;
            }
            None => return pages,
        }
    }
}

fn rewards(accrued: u128, claimed: u128) -> Value {
    json!({
        "accrued": accrued.to_string(),
        "claimed": claimed.to_string(),
        "claimable": (accrued as i128 - claimed as i128).to_string(),
    })
}

fn bond_summary(i: u128, b: &Bond, burn_tip: u64) -> Value {
    let s = b.setup.as_ref().unwrap();
    let (start, unlock) = (s.u("bond-start-height"), s.u("unlock-burn-height"));
    let tip = u128::from(burn_tip);
    json!({
        "index": i,
        "pox_version": "pox5",
        "status": if tip < start { "upcoming" } else if tip < unlock { "active" } else { "unlocked" },
        "parameters": {
            "target_rate_bps": s.u("target-rate"),
            "stx_value_ratio": s.u("stx-value-ratio"),
            "minimum_stx_ratio": s.u("min-ustx-ratio"),
            "btc_capacity": b.capacity.to_string(),
        },
        "registrations": { "allowed_count": b.allowed, "registered_count": b.registered },
        "schedule": {
            "activation": { "bitcoin_height": start, "pox_cycle": s.u("first-reward-cycle") },
            "unlock": { "bitcoin_height": unlock, "pox_cycle": s.u("unlock-cycle") },
        },
        "balances": {
            "locked": { "btc": b.btc.to_string(), "stx": b.stx.to_string() },
            "paid_out": { "btc": "0" },
        },
    })
}

fn registration_summary(r: &(u128, String, String, u128, u128, Print)) -> Value {
    let Clarity::Tuple(lockup) = r.5.f("btc-lockup") else { panic!("btc-lockup") };
    let l1 =
        matches!(&lockup.iter().find(|(k, _)| k == "type").unwrap().1, Clarity::StringAscii(t) if t == b"l1");
    json!({
        "signer": r.1,
        "staker": r.2,
        "type": if l1 { "l1" } else { "l2" },
        "balances": { "btc": r.3.to_string(), "stx": r.4.to_string() },
    })
}

fn registration_detail(r: &(u128, String, String, u128, u128, Print)) -> Value {
    let mut v = registration_summary(r);
    let Clarity::Tuple(lockup) = r.5.f("btc-lockup") else { panic!("btc-lockup") };
    if v["type"] == "l1" {
        let Clarity::List(txs) = &lockup.iter().find(|(k, _)| k == "txs").unwrap().1 else { panic!("txs") };
        let txs: Vec<Value> = txs
            .iter()
            .map(|t| {
                let Clarity::Tuple(t) = t else { panic!("tx") };
                let f = |k: &str| t.iter().find(|(n, _)| n == k).unwrap().1.clone();
                let (Clarity::Buffer(id), Clarity::UInt(out)) = (f("txid"), f("output-index")) else {
                    panic!("tx")
                };
                json!({ "tx_id": format!("0x{}", hex::encode(id)), "output_index": out })
            })
            .collect();
        v["l1_lockup"] = json!({ "transactions": txs });
    } else {
        v["l2_lockup"] = json!({ "tx_id": r.5.tx_id });
    }
    v
}

/// Newest transaction first (within one transaction, the later event first).
fn newest_first<T: Clone>(rows: Vec<(T, &Print)>) -> Vec<T> {
    let mut v = rows;
    v.sort_by_key(|(_, p)| std::cmp::Reverse((p.height, p.tx_index, p.event_index)));
    v.into_iter().map(|(t, _)| t).collect()
}

/// A percentage as the incumbent's JSON has it (integral values without a fraction), read back
/// from its text as the answers are (serde_json's default float parsing may land one ulp away).
fn js_percent(v: f64) -> Value {
    let v = if v.fract() == 0.0 { json!(v as i64) } else { json!(v) };
    serde_json::from_str(&v.to_string()).unwrap()
}

/// `/staking/cycles/current/signers` recomputed: the newest cycle's reward set as the first
/// canonical block announcing it carried it, signers by weight (descending) then key, each with
/// the managers whose latest `register-signer` before that block bound its key, their live
/// grants (latest grant or revoke per manager and key) and a later registration (pending).
/// `None` when no canonical block announced a reward set.
fn current_signers(canonical: &[&Value], ps: &[Print]) -> Option<Vec<(String, Value)>> {
    let announced = canonical.iter().filter(|b| !b["reward_set"].is_null() && b["cycle_number"].is_u64());
    let cycle = announced.clone().map(|b| b["cycle_number"].as_u64().unwrap()).max()?;
    let anchor = announced
        .filter(|b| b["cycle_number"] == cycle)
        .min_by_key(|b| b["block_height"].as_u64().unwrap())
        .unwrap();
    let anchor_height = anchor["block_height"].as_u64().unwrap();
    let signers: Vec<(String, u64, u128)> = anchor["reward_set"]["signers"]
        .as_array()
        .map(|a| a.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|s| {
            let key = format!("0x{}", s["signing_key"].as_str().unwrap());
            (key, s["weight"].as_u64().unwrap(), s["stacked_amt"].as_str().unwrap().parse().unwrap())
        })
        .collect();
    let total_weight: u64 = signers.iter().map(|s| s.1).sum();
    let total_stacked: u128 = signers.iter().map(|s| s.2).sum();
    let (mut effective, mut pending) = (BTreeMap::new(), BTreeMap::new());
    let mut grants: BTreeMap<(String, String), (bool, &Print)> = BTreeMap::new();
    for p in ps {
        match p.name.as_str() {
            "register-signer" if p.height < anchor_height => {
                effective.insert(p.p("signer"), (p.key("signer-key"), p));
            }
            "register-signer" => {
                pending.insert(p.p("signer"), (p.key("signer-key"), p));
            }
            "grant-signer-key" | "revoke-signer-grant" => {
                let live = p.name == "grant-signer-key";
                grants.insert((p.p("signer-manager"), p.key("signer-key")), (live, p));
            }
            _ => {}
        }
    }
    let mut rows: Vec<(String, u64, u128)> = signers;
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    Some(
        rows.into_iter()
            .map(|(key, weight, stacked)| {
                let managers: Vec<Value> = effective
                    .iter()
                    .filter(|(_, (k, _))| *k == key)
                    .map(|(manager, (_, reg))| {
                        let granted: Vec<Value> = grants
                            .iter()
                            .filter(|((m, _), (live, _))| m == manager && *live)
                            .map(|((_, k), (_, g))| {
                                json!({"signer_key": k, "auth_id": g.u("auth-id").to_string(), "tx_id": g.tx_id})
                            })
                            .collect();
                        let grant_active = granted.iter().any(|g| g["signer_key"] == key.as_str());
                        let pending = pending.get(manager).filter(|(k, _)| *k != key).map(|(k, p)| {
                            json!({"signer_key": k, "effective_cycle": cycle + 1, "tx_id": p.tx_id})
                        });
                        json!({
                            "signer_manager": manager,
                            "registered_at": {
                                "block_height": reg.height,
                                "bitcoin_block_height": reg.burn_height,
                                "tx_id": reg.tx_id,
                            },
                            "grant_active": grant_active,
                            "granted_keys": granted,
                            "pending_key_update": pending,
                        })
                    })
                    .collect();
                let weight_percent =
                    if total_weight == 0 { json!(0) } else { js_percent(weight as f64 / total_weight as f64 * 100.0) };
                let stacked_percent = if total_stacked == 0 {
                    json!(0)
                } else {
                    js_percent(stacked as f64 * 100.0 / total_stacked as f64)
                };
                let row = json!({
                    "signing_key": key,
                    "weight": { "amount": weight, "percent": weight_percent },
                    "staked_stx": { "amount": stacked.to_string(), "percent": stacked_percent },
                    "signer_managers": managers,
                });
                (key, row)
            })
            .collect(),
    )
}

/// What the current cycle's signers showed: signers, their managers, managers with live grants
/// and managers with a pending key update.
#[derive(Debug, Default, Clone, Copy)]
struct Seen {
    signers: usize,
    managers: usize,
    granted: usize,
    pending: usize,
}

/// The current cycle's signers, every page.
async fn check_current_signers<F, R>(api: &F, canonical: &[&Value], ps: &[Print], label: &str) -> Seen
where
    F: Filter<Extract = (R,), Error = Infallible> + Clone + Send + Sync + 'static,
    R: Reply + Send,
{
    let base = "/extended/v3/staking/cycles/current/signers";
    let Some(rows) = current_signers(canonical, ps) else {
        let (status, body) = get(api, base).await;
        assert_eq!((status, body["message"].as_str()), (404, Some("No PoX cycles found")), "{label}");
        return Seen::default();
    };
    let total = if rows.is_empty() { 0 } else { rows.len() as i64 };
    for limit in [1, 3, 250] {
        walk(api, base, limit, &rows, total).await;
    }
    let (status, body) = get(api, &format!("{base}?cursor=0x{}", "00".repeat(33))).await;
    assert_eq!((status, body["message"].as_str()), (404, Some("Cursor not found")), "{label}");
    let managers: Vec<&Value> =
        rows.iter().flat_map(|r| r.1["signer_managers"].as_array().unwrap()).collect();
    Seen {
        signers: rows.len(),
        managers: managers.len(),
        granted: managers.iter().filter(|m| m["granted_keys"] != json!([])).count(),
        pending: managers.iter().filter(|m| !m["pending_key_update"].is_null()).count(),
    }
}

/// Every staking route against the state recomputed from the canonical chain; returns the
/// number of rows compared, and the current cycle's signers and their managers.
async fn check_routes<F, R>(api: &F, chain: &Chain, label: &str) -> (usize, Seen)
where
    F: Filter<Extract = (R,), Error = Infallible> + Clone + Send + Sync + 'static,
    R: Reply + Send,
{
    let canonical = chain.canonical();
    let ps = prints(&canonical);
    let x = expected(&ps);
    let tip = chain.burn_tip();
    let mut block_times = HashMap::new();
    for b in canonical.iter().filter(|b| b["block_height"] != 0) {
        let h = b["block_height"].as_u64().unwrap();
        let (_, v2) = get(api, &format!("/extended/v2/blocks/{h}")).await;
        block_times.insert(h, v2["block_time"].as_u64().unwrap());
    }
    let mut rows = 0;

    // Bonds, newest index first.
    let bonds: Vec<(String, Value)> =
        x.bonds.iter().rev().map(|(i, b)| (i.to_string(), bond_summary(*i, b, tip))).collect();
    for limit in [1, 2, 20] {
        walk(api, "/extended/v3/staking/bonds", limit, &bonds, bonds.len() as i64).await;
    }
    rows += bonds.len();
    for (i, b) in &x.bonds {
        let s = b.setup.as_ref().unwrap();
        let mut want = bond_summary(*i, b, tip);
        want["transaction"] = s.transaction(block_times[&s.height]);
        assert_eq!(
            get(api, &format!("/extended/v3/staking/bonds/{i}")).await,
            (200, want),
            "{label} bond {i}"
        );

        let allow: Vec<(String, Value)> = newest_first(
            x.allowlist
                .iter()
                .filter(|a| a.0 == *i)
                .map(|a| ((a.3.cursor(), json!({"staker": a.1, "max_sats": a.2.to_string()})), &a.3))
                .collect(),
        );
        for limit in [1, 3] {
            walk(api, &format!("/extended/v3/staking/bonds/{i}/allowlist"), limit, &allow, b.allowed).await;
        }
        for a in x.allowlist.iter().filter(|a| a.0 == *i) {
            let first = x.allowlist.iter().find(|e| e.0 == *i && e.1 == a.1).unwrap();
            let (status, body) = get(api, &format!("/extended/v3/staking/bonds/{i}/allowlist/{}", a.1)).await;
            assert_eq!((status, body), (200, json!({"staker": a.1, "max_sats": first.2.to_string()})));
        }
        let regs: Vec<(String, Value)> = newest_first(
            x.registrations
                .iter()
                .filter(|r| r.0 == *i)
                .map(|r| ((r.5.cursor(), registration_summary(r)), &r.5))
                .collect(),
        );
        for limit in [1, 3] {
            walk(api, &format!("/extended/v3/staking/bonds/{i}/registrations"), limit, &regs, b.registered)
                .await;
        }
        for r in x.registrations.iter().filter(|r| r.0 == *i) {
            let first = x.registrations.iter().find(|e| e.0 == *i && e.2 == r.2).unwrap();
            let got = get(api, &format!("/extended/v3/staking/bonds/{i}/registrations/{}", r.2)).await;
            assert_eq!(got, (200, registration_detail(first)), "{label} registration {i} {}", r.2);
        }
        rows += allow.len() + regs.len();
    }
    let missing = x.bonds.len();
    assert_eq!(
        get(api, &format!("/extended/v3/staking/bonds/{missing}")).await,
        (404, json!({"statusCode": 404, "error": "Not Found", "message": "Bond not found"}))
    );

    // Signers by principal, each with its stakers.
    let signers: Vec<(String, Value)> =
        x.signers.iter().map(|(s, (k, _))| (s.clone(), json!({"signer": s, "signer_key": k}))).collect();
    for limit in [1, 4] {
        walk(api, "/extended/v3/staking/signers", limit, &signers, signers.len() as i64).await;
    }
    for (s, (k, p)) in &x.signers {
        let want =
            json!({"signer": s, "signer_key": k, "transaction": p.transaction(block_times[&p.height])});
        assert_eq!(get(api, &format!("/extended/v3/staking/signers/{s}")).await, (200, want));
        let mut set: BTreeMap<&str, (bool, bool)> = BTreeMap::new();
        for (who, st) in &x.stakes {
            if st.2 == *s && st.0 > 0 && st.1 >= tip {
                set.entry(who).or_default().0 = true;
            }
        }
        for r in x.registrations.iter().filter(|r| r.1 == *s) {
            set.entry(&r.2).or_default().1 = true;
        }
        let stakers: Vec<(String, Value)> = set
            .iter()
            .map(|(who, (stx, btc))| {
                let types: Vec<&str> =
                    [(stx, "stx"), (btc, "btc")].iter().filter(|t| *t.0).map(|t| t.1).collect();
                (who.to_string(), json!({"staker": who, "types": types}))
            })
            .collect();
        let total = if stakers.is_empty() { 0 } else { stakers.len() as i64 };
        walk(api, &format!("/extended/v3/staking/signers/{s}/stakers"), 2, &stakers, total).await;
        rows += stakers.len() + 1;
    }

    // Every principal that staked, registered or signed, and one that did nothing.
    let mut principals: BTreeSet<String> = x.totals.keys().cloned().collect();
    principals.extend(x.stakes.keys().cloned());
    principals.extend(x.signers.keys().cloned());
    principals.insert("ST1HB1T8WRNBYB0Y3T7WXZS38NKKPTBR3EG9EPJKR".into());
    for who in &principals {
        let t = x.totals.get(who).cloned().unwrap_or_default();
        let locked = x.stakes.get(who).filter(|s| s.0 > 0 && s.1 >= tip).map_or(0, |s| s.0);
        let want = json!({
            "stx": { "locked": locked.to_string(), "rewards": { "btc": rewards(t.stx_accrued, t.stx_claimed) } },
            "bonds": {
                "count": t.count,
                "locked": { "btc": t.btc.to_string(), "stx": t.stx.to_string() },
                "rewards": { "btc": rewards(t.accrued, t.claimed) },
            },
        });
        assert_eq!(
            get(api, &format!("/extended/v3/principals/{who}/staking")).await,
            (200, want),
            "{label} {who}"
        );
        let positions: Vec<(String, Value)> = x
            .positions
            .iter()
            .filter(|((p, _), _)| p == who)
            .map(|((_, i), p)| {
                let row = json!({
                    "bond_index": i,
                    "status": if p.early_exit { "early_exit" } else { "enrolled" },
                    "active": !p.inactive,
                    "enrollment": { "tx_id": p.tx_id, "btc_lockup": { "amount": p.btc.to_string() } },
                    "locked": { "btc": p.btc.to_string(), "stx": p.stx.to_string() },
                    "rewards": { "btc": rewards(p.accrued, p.claimed) },
                });
                (i.to_string(), row)
            })
            .collect();
        walk(api, &format!("/extended/v3/principals/{who}/staking/bonds"), 1, &positions, t.count).await;
        rows += positions.len() + 1;
    }
    (rows, check_current_signers(api, &canonical, &ps, label).await)
}

async fn staking_routes_follow_the_chain(db: Db) {
    let cfg = DevnetConfig {
        seed: 6,
        blocks: 120,
        txs_per_block: 8,
        accounts: 24,
        reward_maturity: 10,
        forks: true,
        pox5_per_mille: 400,
        ..DevnetConfig::default()
    };
    let (events, _) = devnet_events(cfg);
    let Some(ts) = TestStore::new(db, "extended_v3_staking", Network::Testnet).await else { return };
    let api = common::routes(Arc::clone(&ts.store));
    let mut chain = Chain::default();
    let (mut reorgs_with_pox5, mut checked, mut cycle_signers) = (0, 0, 0);
    let kinds: BTreeSet<String> = events
        .iter()
        .filter(|e| e.path == "/new_block")
        .flat_map(|e| {
            let b: Value = serde_json::from_str(&e.payload).unwrap();
            prints(&[&b]).into_iter().map(|p| p.name).collect::<Vec<_>>()
        })
        .collect();
    for ev in &events {
        ingest(&ts, ev).await;
        if ev.path != "/new_block" {
            continue;
        }
        let hashes = |c: &Chain| -> BTreeSet<String> {
            c.canonical().iter().map(|b| b["index_block_hash"].as_str().unwrap().to_string()).collect()
        };
        let before = hashes(&chain);
        if chain.add(serde_json::from_str(&ev.payload).unwrap()) {
            let after = hashes(&chain);
            let orphaned: Vec<&Value> = before.difference(&after).map(|h| &chain.blocks[h]).collect();
            if !prints(&orphaned).is_empty() {
                reorgs_with_pox5 += 1;
            }
            let (rows, seen) = check_routes(&api, &chain, "after a reorg").await;
            checked += rows;
            cycle_signers += seen.signers;
        }
    }
    let (rows, seen) = check_routes(&api, &chain, "at the tip").await;
    checked += rows;
    cycle_signers += seen.signers;
    assert!(
        seen.signers > 1 && seen.managers > 0 && seen.granted > 0 && seen.pending > 0,
        "at the tip the current cycle has signers, managers, live grants and a pending key: {seen:?}"
    );
    let all: Vec<&str> = stacks_ledger::ledger::pox5::EVENT_KINDS.to_vec();
    let missing: Vec<&&str> = all.iter().filter(|k| !kinds.contains(**k)).collect();
    assert!(missing.is_empty(), "the chain draws every pox-5 event kind; missing {missing:?}");
    assert!(reorgs_with_pox5 > 0, "a reorg orphaned pox-5 events");
    println!(
        "{db:?}: {checked} staking rows and {cycle_signers} current-cycle signers match; \
         {reorgs_with_pox5} reorgs flipped pox-5 events"
    );
    ts.finish().await;
}

async fn ingest(ts: &TestStore, ev: &RawEvent) {
    common::ingest_all(&ts.store, [ev.clone()], &[], "devnet").await;
}

async fn bad_input_is_the_specs_error(db: Db) {
    let Some(ts) = TestStore::new(db, "extended_v3_staking_bad", Network::Testnet).await else { return };
    let api = common::routes(Arc::clone(&ts.store));
    for (path, message) in [
        ("/extended/v3/staking/bonds/x", "params/bond_index must be integer"),
        ("/extended/v3/staking/bonds?limit=51", "querystring/limit must be <= 50"),
        ("/extended/v3/staking/bonds?limit=0", "querystring/limit must be >= 1"),
        ("/extended/v3/staking/bonds?cursor=a", "querystring/cursor must match pattern \"^\\d+$\""),
        ("/extended/v3/staking/bonds/1/allowlist?cursor=1:2", "querystring/cursor must match pattern"),
        ("/extended/v3/staking/signers?limit=251", "querystring/limit must be <= 250"),
        ("/extended/v3/staking/signers/x/stakers?limit=201", "params/principal must match"),
        ("/extended/v3/staking/cycles/11/signers", "params/cycle_number must be equal to constant"),
        ("/extended/v3/principals/nope/staking", "params/principal must match"),
    ] {
        let (status, body) = get(&api, path).await;
        assert_eq!(status, 500, "{path}: {body}");
        assert!(body["message"].as_str().unwrap_or_default().starts_with(message), "{path}: {body}");
    }
    // An empty chain: the recorded empty shapes.
    let empty = json!({"total": 0, "limit": 100, "cursor": {"next": null, "previous": null, "current": null}, "results": []});
    assert_eq!(get(&api, "/extended/v3/staking/signers").await, (200, empty));
    let (status, body) = get(&api, "/extended/v3/staking/cycles/current/signers").await;
    assert_eq!((status, body["message"].as_str()), (404, Some("No PoX cycles found")));
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_staking_routes_follow_the_chain() {
    staking_routes_follow_the_chain(Db::Sqlite).await;
    bad_input_is_the_specs_error(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_staking_routes_follow_the_chain() {
    staking_routes_follow_the_chain(Db::Postgres).await;
    bad_input_is_the_specs_error(Db::Postgres).await;
}
