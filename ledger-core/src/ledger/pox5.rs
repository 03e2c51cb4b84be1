//! PoX-5 staking: the `pox-5` boot contract's `print` events, decoded to the incumbent's
//! `{name, data}` form (data keys in snake_case, integers as decimal strings, principals as
//! text, buffers as 0x hex, `none` as null), and folded in chain order into the staking state
//! the `/extended/v3/staking` routes serve ([`fold`]).
//!
//! The print is `(ok (tuple (name "setup-bond") (data (tuple ..))))` (a bare tuple is accepted
//! too). The store keeps only the decoded events with their block's `canonical` flag; the
//! state is always re-derived from the canonical ones, so a reorg needs nothing but the flip.

use ledger_read::staking::model::*;
use serde_json::{Map, Value as Json};
use stacks_codec::clarity::Value;
use stacks_codec::{decode_hex, to_hex_prefixed};

use super::block::DerivedBlock;
use super::is_boot_address;

/// Every event kind the incumbent handles (the last three change no state it serves).
pub const EVENT_KINDS: &[&str] = &[
    "setup-bond",
    "add-to-allowlist",
    "register-for-bond",
    "update-bond-registration",
    "announce-l1-early-exit",
    "unstake-sbtc",
    "calculate-rewards",
    "bond-distribution",
    "claim-staker-rewards-for-signer",
    "claim-rewards",
    "stake",
    "stake-update",
    "unstake",
    "register-signer",
    "grant-signer-key",
    "revoke-signer-grant",
    "allow-contract-caller",
    "disallow-contract-caller",
    "set-bond-admin",
];

/// Reward rates are fixed point with this precision (the contract's `PRECISION`).
const PRECISION: u128 = 1_000_000_000_000_000_000;

/// One decoded `pox-5` print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pox5EventRow {
    pub tx_id: String,
    pub tx_index: i64,
    pub event_index: i64,
    pub name: String,
    /// The `data` object as JSON text.
    pub data: String,
}

/// `Some((name, data))` when the log is a `pox-5` print of a known kind.
pub fn decode(contract_identifier: &str, topic: &str, raw_value: &str) -> Option<(String, Json)> {
    let (addr, contract) = contract_identifier.split_once('.')?;
    if topic != "print" || contract != "pox-5" || !is_boot_address(addr) {
        return None;
    }
    let value = Value::deserialize(&decode_hex(raw_value).ok()?).ok()?;
    let top = match value {
        Value::ResponseOk(inner) => *inner,
        v => v,
    };
    let Value::Tuple(fields) = top else { return None };
    let name = fields.iter().find(|(k, _)| k == "name").and_then(|(_, v)| match v {
        Value::StringAscii(b) | Value::StringUtf8(b) => Some(String::from_utf8_lossy(b).into_owned()),
        _ => None,
    })?;
    if !EVENT_KINDS.contains(&name.as_str()) {
        return None;
    }
    let data = match fields.iter().find(|(k, _)| k == "data") {
        Some((_, v @ Value::Tuple(_))) => to_json(v),
        _ => to_json(&Value::Tuple(fields.iter().filter(|(k, _)| k != "name").cloned().collect())),
    };
    Some((name, data))
}

/// The `pox-5` prints among a block's (successful) contract logs.
pub fn derive(d: &DerivedBlock) -> Vec<Pox5EventRow> {
    d.events
        .iter()
        .filter(|e| e.kind == "contract_log")
        .filter_map(|e| {
            let (name, data) =
                decode(e.contract_identifier.as_deref()?, e.topic.as_deref()?, e.value_hex.as_deref()?)?;
            Some(Pox5EventRow {
                tx_id: e.tx_id.clone(),
                tx_index: e.tx_index,
                event_index: e.event_index,
                name,
                data: data.to_string(),
            })
        })
        .collect()
}

/// A Clarity value as the incumbent's decoded JSON.
pub fn to_json(v: &Value) -> Json {
    match v {
        Value::Int(n) => Json::String(n.to_string()),
        Value::UInt(n) => Json::String(n.to_string()),
        Value::Bool(b) => Json::Bool(*b),
        Value::Buffer(b) => Json::String(to_hex_prefixed(b)),
        Value::Principal(p) => Json::String(p.to_string()),
        Value::ResponseOk(i) | Value::ResponseErr(i) | Value::OptionalSome(i) => to_json(i),
        Value::OptionalNone => Json::Null,
        Value::List(items) => Json::Array(items.iter().map(to_json).collect()),
        Value::Tuple(fields) => {
            Json::Object(fields.iter().map(|(k, v)| (k.replace('-', "_"), to_json(v))).collect::<Map<_, _>>())
        }
        Value::StringAscii(b) | Value::StringUtf8(b) => Json::String(String::from_utf8_lossy(b).into_owned()),
    }
}

/// One canonical event with its transaction's place, in chain order.
#[derive(Debug, Clone)]
pub struct PlacedEvent {
    pub at: TxPlace,
    pub name: String,
    pub data: Json,
}

fn text(d: &Json, k: &str) -> Option<String> {
    match d.get(k)? {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn amount(d: &Json, k: &str) -> u128 {
    text(d, k).and_then(|s| s.parse().ok()).unwrap_or(0)
}

fn small(d: &Json, k: &str) -> i64 {
    text(d, k).and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// `floor(weight * rate / PRECISION)` (0 if the product overflows u128).
fn share(weight: u128, rate: u128) -> u128 {
    weight.checked_mul(rate).map_or(0, |p| p / PRECISION)
}

/// The staking state after `events` (canonical, in chain order) at burn tip `burn_block_height`,
/// with the incumbent's write rules: counters move only for a bond that exists, an update
/// touches only what is there, positions are keyed by (principal, bond).
pub fn fold(events: &[PlacedEvent], burn_block_height: i64) -> StakingState {
    let mut s = StakingState { burn_block_height, ..StakingState::default() };
    for e in events {
        let d = &e.data;
        let bond_index = small(d, "bond_index");
        let staker = text(d, "staker").unwrap_or_default();
        match e.name.as_str() {
            "setup-bond" => {
                s.bonds.entry(bond_index).or_insert_with(|| Bond {
                    index: bond_index,
                    target_rate: small(d, "target_rate"),
                    stx_value_ratio: small(d, "stx_value_ratio"),
                    min_ustx_ratio: small(d, "min_ustx_ratio"),
                    first_reward_cycle: small(d, "first_reward_cycle"),
                    bond_start_height: small(d, "bond_start_height"),
                    unlock_cycle: small(d, "unlock_cycle"),
                    unlock_burn_height: small(d, "unlock_burn_height"),
                    at: e.at.clone(),
                    ..Bond::default()
                });
            }
            "add-to-allowlist" => {
                let max_sats = amount(d, "max_sats");
                if let Some(b) = s.bonds.get_mut(&bond_index) {
                    b.btc_capacity += max_sats;
                    b.allowed_count += 1;
                }
                s.allowlist.push(AllowlistEntry { bond_index, staker, max_sats, at: e.at.clone() });
            }
            "register-for-bond" | "update-bond-registration" => {
                let new = e.name == "register-for-bond";
                let sats = amount(d, if new { "sats_total" } else { "amount_sats" });
                let ustx = amount(d, "amount_ustx");
                let signer = text(d, "signer").unwrap_or_default();
                if new {
                    s.registrations.push(Registration {
                        bond_index,
                        signer,
                        staker: staker.clone(),
                        amount_ustx: ustx,
                        sats_total: sats,
                        lockup: lockup(d),
                        at: e.at.clone(),
                    });
                    if let Some(b) = s.bonds.get_mut(&bond_index) {
                        b.registered_count += 1;
                    }
                } else {
                    for r in s
                        .registrations
                        .iter_mut()
                        .filter(|r| r.bond_index == bond_index && r.staker == staker)
                    {
                        r.signer = signer.clone();
                        r.sats_total = sats;
                        r.amount_ustx = ustx;
                    }
                }
                enroll(&mut s, &staker, bond_index, sats, ustx, &e.at.tx_id);
            }
            "announce-l1-early-exit" => {
                if let Some(p) = s.positions.get_mut(&(staker, bond_index)) {
                    p.status = PositionStatus::EarlyExit;
                    p.active = false;
                }
            }
            "unstake-sbtc" => {
                let new_sats = amount(d, "new_amount_sats");
                if let Some(p) = s.positions.get_mut(&(staker.clone(), bond_index)) {
                    let delta = new_sats as i128 - p.btc_locked as i128;
                    p.btc_locked = new_sats;
                    if new_sats == 0 {
                        p.status = PositionStatus::EarlyExit;
                    }
                    if let Some(b) = s.bonds.get_mut(&bond_index) {
                        b.btc_locked += delta;
                    }
                    s.totals.entry(staker).or_default().bond_btc_locked += delta;
                }
            }
            "bond-distribution" => {
                let rate = amount(d, "accrued_rewards_per_sat");
                for p in s.positions.values_mut().filter(|p| p.bond_index == bond_index) {
                    let r = share(p.btc_locked, rate);
                    if r > 0 {
                        p.accrued += r;
                        s.totals.entry(p.principal.clone()).or_default().bond_accrued += r;
                    }
                }
            }
            "calculate-rewards" => {
                // Shared among every pox-5 STX stake on record, expired or not (the incumbent's
                // `stx_locked_balances` rows of version 5).
                let rate = amount(d, "accrued_rewards_per_ustx");
                for (principal, stake) in &s.stakes {
                    let r = share(stake.amount_ustx, rate);
                    if r > 0 {
                        s.totals.entry(principal.clone()).or_default().stx_accrued += r;
                    }
                }
            }
            "claim-staker-rewards-for-signer" => {
                let claimed = amount(d, "rewards_claimed");
                match d.get("bond_index").filter(|v| !v.is_null()) {
                    None => s.totals.entry(staker).or_default().stx_claimed += claimed,
                    Some(_) => {
                        if let Some(p) = s.positions.get_mut(&(staker.clone(), bond_index)) {
                            p.claimed += claimed;
                        }
                        s.totals.entry(staker).or_default().bond_claimed += claimed;
                    }
                }
            }
            "stake" | "stake-update" | "unstake" => {
                s.stakes.insert(
                    staker,
                    StxStake {
                        amount_ustx: amount(d, "amount_ustx"),
                        unlock_burn_height: small(d, "unlock_burn_height"),
                        signer: text(d, "signer").unwrap_or_default(),
                    },
                );
            }
            "register-signer" => {
                let signer = text(d, "signer").unwrap_or_default();
                let signer_key = text(d, "signer_key").unwrap_or_default();
                s.key_events.push(KeyEvent {
                    kind: KeyEventKind::Register,
                    manager: signer.clone(),
                    signer_key: signer_key.clone(),
                    auth_id: None,
                    at: e.at.clone(),
                });
                s.signers.insert(signer.clone(), StakingSigner { signer, signer_key, at: e.at.clone() });
            }
            "grant-signer-key" | "revoke-signer-grant" => s.key_events.push(KeyEvent {
                kind: if e.name == "grant-signer-key" { KeyEventKind::Grant } else { KeyEventKind::Revoke },
                manager: text(d, "signer_manager").unwrap_or_default(),
                signer_key: text(d, "signer_key").unwrap_or_default(),
                auth_id: text(d, "auth_id"),
                at: e.at.clone(),
            }),
            // Audit-only or caller bookkeeping: nothing the routes serve.
            _ => {}
        }
    }
    s
}

/// `register-for-bond` / `update-bond-registration`: the position becomes enrolled with the
/// event's amounts; the bond's and the principal's locked totals move by the difference.
fn enroll(s: &mut StakingState, staker: &str, bond_index: i64, sats: u128, ustx: u128, tx_id: &str) {
    let key = (staker.to_string(), bond_index);
    let (old_btc, old_stx, fresh) = match s.positions.get(&key) {
        Some(p) => (p.btc_locked, p.stx_locked, false),
        None => (0, 0, true),
    };
    let p = s.positions.entry(key).or_insert_with(|| Position {
        principal: staker.to_string(),
        bond_index,
        status: PositionStatus::Enrolled,
        active: true,
        tx_id: tx_id.to_string(),
        btc_locked: 0,
        stx_locked: 0,
        accrued: 0,
        claimed: 0,
    });
    p.status = PositionStatus::Enrolled;
    p.active = true;
    p.tx_id = tx_id.to_string();
    p.btc_locked = sats;
    p.stx_locked = ustx;
    let (db, ds) = (sats as i128 - old_btc as i128, ustx as i128 - old_stx as i128);
    if let Some(b) = s.bonds.get_mut(&bond_index) {
        b.btc_locked += db;
        b.stx_locked += ds;
    }
    let t = s.totals.entry(staker.to_string()).or_default();
    t.bond_count += i64::from(fresh);
    t.bond_btc_locked += db;
    t.bond_stx_locked += ds;
}

fn lockup(d: &Json) -> Lockup {
    let l = d.get("btc_lockup");
    if l.and_then(|l| l.get("type")).and_then(Json::as_str) == Some("l1") {
        let txs = l.and_then(|l| l.get("txs")).and_then(Json::as_array).cloned().unwrap_or_default();
        Lockup::L1(
            txs.iter().map(|t| (text(t, "txid").unwrap_or_default(), small(t, "output_index"))).collect(),
        )
    } else {
        Lockup::L2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn print(name: &str, data: Vec<(&str, Value)>) -> String {
        let data = Value::Tuple(data.into_iter().map(|(k, v)| (k.to_string(), v)).collect());
        let v = Value::ResponseOk(Box::new(Value::Tuple(vec![
            ("data".into(), data),
            ("name".into(), Value::StringAscii(name.as_bytes().to_vec())),
        ])));
        to_hex_prefixed(&v.serialize())
    }

    fn placed(height: i64, name: &str, data: Json) -> PlacedEvent {
        let at = TxPlace { tx_id: format!("0x{height:064x}"), block_height: height, ..TxPlace::default() };
        PlacedEvent { at, name: name.into(), data }
    }

    const BOOT: &str = "ST000000000000000000002AMW42H.pox-5";
    const ALICE: &str = "STB44HYPYAT2BB2QE513NSP81HTMYWBJP02HPGK6";

    #[test]
    fn prints_decode_to_the_incumbents_json() {
        let alice: Value = Value::Principal(ALICE.parse().unwrap());
        let hex = print(
            "register-for-bond",
            vec![
                ("bond-index", Value::UInt(0)),
                ("is-l1-lock", Value::Bool(false)),
                ("staker", alice),
                ("btc-lockup", Value::Tuple(vec![("type".into(), Value::StringAscii(b"l2".to_vec()))])),
                ("end", Value::OptionalNone),
            ],
        );
        let (name, data) = decode(BOOT, "print", &hex).unwrap();
        assert_eq!(name, "register-for-bond");
        assert_eq!(
            data,
            serde_json::json!({"bond_index": "0", "is_l1_lock": false, "staker": ALICE,
                "btc_lockup": {"type": "l2"}, "end": null})
        );
        // Other contracts, topics and unknown kinds are plain logs.
        assert!(decode("ST000000000000000000002AMW42H.pox-4", "print", &hex).is_none());
        assert!(decode("ST1HB1T8WRNBYB0Y3T7WXZS38NKKPTBR3EG9EPJKR.pox-5", "print", &hex).is_none());
        assert!(decode(BOOT, "print", &print("no-such-kind", vec![])).is_none());
    }

    #[test]
    fn the_fold_keeps_the_incumbents_write_rules() {
        use serde_json::json;
        let events = vec![
            // A registration before its bond exists moves no bond counter.
            placed(1, "add-to-allowlist", json!({"bond_index": "0", "staker": ALICE, "max_sats": "7"})),
            placed(
                2,
                "setup-bond",
                json!({"bond_index": "0", "bond_start_height": "10", "unlock_burn_height": "20"}),
            ),
            placed(3, "add-to-allowlist", json!({"bond_index": "0", "staker": ALICE, "max_sats": "100"})),
            placed(
                4,
                "register-for-bond",
                json!({"bond_index": "0", "staker": ALICE, "signer": "S",
                "sats_total": "1000", "amount_ustx": "5", "btc_lockup": {"type": "l1",
                "txs": [{"txid": "0xab", "output_index": "1"}]}}),
            ),
            placed(
                5,
                "bond-distribution",
                json!({"bond_index": "0", "accrued_rewards_per_sat": "3000000000000000000"}),
            ),
            placed(
                6,
                "update-bond-registration",
                json!({"bond_index": "0", "staker": ALICE, "signer": "T",
                "amount_sats": "400", "amount_ustx": "9"}),
            ),
            placed(7, "unstake-sbtc", json!({"bond_index": "0", "staker": ALICE, "new_amount_sats": "0"})),
            placed(
                8,
                "claim-staker-rewards-for-signer",
                json!({"staker": ALICE, "bond_index": "0", "rewards_claimed": "1000"}),
            ),
            placed(
                9,
                "stake",
                json!({"staker": ALICE, "signer": "T", "amount_ustx": "2000000", "unlock_burn_height": "15"}),
            ),
            placed(10, "calculate-rewards", json!({"accrued_rewards_per_ustx": "500000000000000"})),
            placed(
                11,
                "claim-staker-rewards-for-signer",
                json!({"staker": ALICE, "bond_index": null, "rewards_claimed": "4"}),
            ),
            placed(12, "register-signer", json!({"signer": "T", "signer_key": "0x02"})),
        ];
        let s = fold(&events, 15);
        let b = &s.bonds[&0];
        assert_eq!((b.allowed_count, b.btc_capacity, b.registered_count), (1, 100, 1));
        assert_eq!((b.btc_locked, b.stx_locked), (0, 9));
        let r = &s.registrations[0];
        assert_eq!((r.signer.as_str(), r.sats_total, r.amount_ustx), ("T", 400, 9));
        assert_eq!(r.lockup, Lockup::L1(vec![("0xab".into(), 1)]));
        let p = &s.positions[&(ALICE.to_string(), 0)];
        assert_eq!(
            (p.status, p.active, p.btc_locked, p.accrued, p.claimed),
            (PositionStatus::EarlyExit, true, 0, 3000, 1000)
        );
        let t = &s.totals[ALICE];
        assert_eq!((t.bond_count, t.bond_btc_locked, t.bond_stx_locked), (1, 0, 9));
        assert_eq!((t.stx_accrued, t.stx_claimed, t.bond_accrued, t.bond_claimed), (1000, 4, 3000, 1000));
        // The stake counts until its unlock height passes the burn tip.
        assert!(s.active_stake(ALICE).is_some());
        assert!(fold(&events, 16).active_stake(ALICE).is_none());
        assert_eq!(s.signers["T"].signer_key, "0x02");
        assert_eq!(s.key_events.len(), 1);
    }
}
