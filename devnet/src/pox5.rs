//! PoX-5 staking traffic (`DevnetConfig::pox5_per_mille`): contract calls to the `pox-5` boot
//! contract, each answered by the contract's print `(ok {name, data})` in the shapes the
//! incumbent's pox-5 tests use. Every event kind the incumbent handles is drawn; the calls
//! follow the contract's order (a bond before its allowlist, an allowlisted staker before its
//! registration, a registered signer before stakes under it). The state lives in the branch's
//! `World`, so a fork replays its own history. STX stays liquid: the generator's ledger does
//! not model pox-5 locks (no `stx_lock` event is emitted for a stake).

use std::collections::{BTreeMap, BTreeSet};

use stacks_codec::clarity::Value;

use super::config::{cycle_start, reward_cycle, Ctx};
use super::json::RewardSetSigner;
use super::rng::Rng;
use super::world::World;

/// The fixed-point precision of the contract's reward rates.
const PRECISION: u128 = 1_000_000_000_000_000_000;

/// What the branch has done on pox-5 so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pox5World {
    pub bonds: u32,
    /// `(bond, account)` pairs on an allowlist, with their `max-sats`.
    pub allowed: BTreeMap<(u32, u32), u128>,
    /// `(bond, account)` registrations and their sats.
    pub registered: BTreeMap<(u32, u32), u128>,
    /// Registered signers (accounts) and the account whose public key they use.
    pub signers: BTreeMap<u32, u32>,
    /// Live `(manager, key account)` grants, with their auth id.
    pub grants: BTreeMap<(u32, u32), u128>,
    /// STX stakes: account → (signer, amount).
    pub stakes: BTreeMap<u32, (u32, u128)>,
    pub next_auth_id: u128,
    /// Accounts that allowed a contract caller.
    pub callers: BTreeSet<u32>,
}

/// The signers of the next cycle's reward set, as the node reports them in the prepare phase:
/// each registered signer's key with the STX staked under it. A real node weighs signers in
/// reward slots (stacked / threshold); the generator's stakes (1–120 STX) are far below any
/// threshold, so it weighs them in whole STX. Signers without stakes are left out, as a node
/// leaves out those below the threshold; two signers sharing a key count as one.
pub fn signer_set(ctx: &Ctx, p: &Pox5World) -> Vec<RewardSetSigner> {
    let mut by_key: BTreeMap<String, u128> = BTreeMap::new();
    for (signer, amount) in p.stakes.values() {
        if let Some(&key_of) = p.signers.get(signer) {
            *by_key.entry(hex::encode(ctx.key(key_of).public_key.to_compressed())).or_default() += amount;
        }
    }
    by_key
        .into_iter()
        .filter(|(_, stacked)| *stacked > 0)
        .map(|(signing_key, stacked_amt)| RewardSetSigner {
            signing_key,
            weight: u64::try_from(stacked_amt / 1_000_000).unwrap_or(u64::MAX),
            stacked_amt,
        })
        .collect()
}

/// One `pox-5` call: its function (also the event name), arguments and print data.
#[derive(Debug, Clone)]
pub struct Pox5Call {
    pub origin: u32,
    pub name: &'static str,
    pub data: Vec<(String, Value)>,
    /// The state after the call.
    pub after: Pox5World,
}

fn uint(v: impl Into<u128>) -> Value {
    Value::UInt(v.into())
}

fn ascii(s: &str) -> Value {
    Value::StringAscii(s.as_bytes().to_vec())
}

fn tuple(fields: Vec<(&str, Value)>) -> Vec<(String, Value)> {
    // Clarity tuples are sorted by key.
    let mut v: Vec<(String, Value)> = fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// The print the contract emits for `call`.
pub fn print(call: &Pox5Call) -> Value {
    Value::ResponseOk(Box::new(Value::Tuple(vec![
        ("data".into(), Value::Tuple(call.data.clone())),
        ("name".into(), ascii(call.name)),
    ])))
}

/// The contract-call arguments: the print's data values in key order (the generator's
/// stand-in for each function's signature).
pub fn args(call: &Pox5Call) -> Vec<Value> {
    call.data.iter().map(|(_, v)| v.clone()).collect()
}

/// Draws the next pox-5 call the branch's state allows, by an account that can pay `fee`.
pub fn plan(ctx: &Ctx, rng: &mut Rng, world: &World, burn_height: u64, fee: u128) -> Option<Pox5Call> {
    let users = ctx.user_accounts();
    let can_pay = |i: u32| world.account(i).spendable() > fee;
    let p = &world.pox5;
    let mut after = p.clone();
    let key = |i: u32| ctx.key(i).principal.clone();
    let signer_key = |i: u32| Value::Buffer(ctx.key(i).public_key.to_compressed().to_vec());
    let cycle = reward_cycle(burn_height);
    let pick = |rng: &mut Rng, n: usize| rng.index(n);
    // The kinds in the contract's order; an early kind stands in while a later one has nothing
    // to act on yet.
    let kind = rng.below(100);
    let call = |origin: u32, name: &'static str, fields: Vec<(&str, Value)>, after: Pox5World| {
        can_pay(origin).then(|| Pox5Call { origin, name, data: tuple(fields), after })
    };
    let any = |rng: &mut Rng| (0..8).map(|_| rng.below(u64::from(users)) as u32).find(|&i| can_pay(i));
    match kind {
        _ if p.bonds == 0 || (kind < 6 && p.bonds < 6) => {
            let index = p.bonds;
            after.bonds += 1;
            let start = burn_height + rng.range(0, 20);
            let unlock = start + rng.range(5, 120);
            call(
                ctx.deployer,
                "setup-bond",
                vec![
                    ("bond-index", uint(index)),
                    ("target-rate", uint(rng.range(100, 900))),
                    ("stx-value-ratio", uint(rng.range(1, 20) * 1_000_000)),
                    ("min-ustx-ratio", uint(rng.range(1, 10) * 100)),
                    ("early-unlock-bytes", Value::Buffer(Vec::new())),
                    ("first-reward-cycle", uint(reward_cycle(start))),
                    ("bond-start-height", uint(start)),
                    ("unlock-cycle", uint(reward_cycle(unlock) + 1)),
                    ("unlock-burn-height", uint(unlock)),
                ],
                after,
            )
        }
        0..=17 => {
            let bond = rng.below(u64::from(p.bonds)) as u32;
            let staker = any(rng)?;
            if p.allowed.contains_key(&(bond, staker)) {
                return None;
            }
            let max = u128::from(rng.range(1, 100)) * 1_000_000;
            after.allowed.insert((bond, staker), max);
            call(
                ctx.deployer,
                "add-to-allowlist",
                vec![("bond-index", uint(bond)), ("staker", key(staker)), ("max-sats", uint(max))],
                after,
            )
        }
        18..=29 => {
            let open: Vec<&(u32, u32)> = p.allowed.keys().filter(|k| !p.registered.contains_key(k)).collect();
            if open.is_empty() || p.signers.is_empty() {
                return None;
            }
            let &(bond, staker) = open[pick(rng, open.len())];
            let signers: Vec<u32> = p.signers.keys().copied().collect();
            let signer = signers[pick(rng, signers.len())];
            let sats = u128::from(rng.range(1, p.allowed[&(bond, staker)] as u64 / 1_000)) * 1_000;
            after.registered.insert((bond, staker), sats);
            let l1 = rng.chance(400);
            let txs: Vec<Value> = if l1 {
                (0..rng.range(1, 2))
                    .map(|_| {
                        Value::Tuple(tuple(vec![
                            ("output-index", uint(rng.below(4))),
                            ("txid", Value::Buffer(rng.bytes32().to_vec())),
                        ]))
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let unlock = burn_height + rng.range(10, 150);
            call(
                staker,
                "register-for-bond",
                vec![
                    ("bond-index", uint(bond)),
                    ("signer", key(signer)),
                    ("staker", key(staker)),
                    ("amount-ustx", uint(u128::from(rng.range(1, 50)) * 1_000_000)),
                    ("sats-total", uint(sats)),
                    ("first-reward-cycle", uint(cycle + 1)),
                    ("unlock-burn-height", uint(unlock)),
                    ("unlock-cycle", uint(reward_cycle(unlock) + 1)),
                    ("is-l1-lock", Value::Bool(l1)),
                    (
                        "btc-lockup",
                        Value::Tuple(tuple(vec![
                            ("type", ascii(if l1 { "l1" } else { "l2" })),
                            ("txs", Value::List(txs)),
                        ])),
                    ),
                ],
                after,
            )
        }
        30..=43 => {
            let regs: Vec<(&(u32, u32), &u128)> = p.registered.iter().collect();
            if regs.is_empty() {
                return None;
            }
            let (&(bond, staker), &sats) = regs[pick(rng, regs.len())];
            let common = vec![("bond-index", uint(bond)), ("staker", key(staker))];
            match kind {
                30..=35 => {
                    let signers: Vec<u32> = p.signers.keys().copied().collect();
                    let signer = signers[pick(rng, signers.len())];
                    let new_sats =
                        u128::from(rng.range(1, p.allowed[&(bond, staker)] as u64 / 1_000)) * 1_000;
                    after.registered.insert((bond, staker), new_sats);
                    let mut f = common;
                    f.extend([
                        ("signer", key(signer)),
                        ("amount-ustx", uint(u128::from(rng.range(1, 80)) * 1_000_000)),
                        ("amount-sats", uint(new_sats)),
                    ]);
                    call(staker, "update-bond-registration", f, after)
                }
                36..=39 => call(staker, "announce-l1-early-exit", common, after),
                _ => {
                    let new_sats = if rng.chance(300) { 0 } else { sats / 2 };
                    after.registered.insert((bond, staker), new_sats);
                    let mut f = common;
                    f.push(("new-amount-sats", uint(new_sats)));
                    call(staker, "unstake-sbtc", f, after)
                }
            }
        }
        44..=51 => {
            // `calculate-rewards` (cycle aggregate) or one bond's `bond-distribution`.
            if rng.chance(500) {
                let per_ustx = u128::from(rng.range(1, 100)) * 1_000_000_000;
                let staked: u128 = p.stakes.values().map(|s| s.1).sum();
                let stx_rewards = staked * per_ustx / PRECISION;
                let gross = stx_rewards + u128::from(rng.range(0, 10_000));
                call(
                    ctx.deployer,
                    "calculate-rewards",
                    vec![
                        ("calculation-height", uint(burn_height)),
                        ("gross-accrued-rewards", uint(gross)),
                        ("total-bond-rewards", uint(gross - stx_rewards)),
                        ("reserve-deposit", uint(0u8)),
                        ("reserve-balance", uint(0u8)),
                        ("stx-cycle", uint(cycle)),
                        ("total-stx-staker-rewards", uint(stx_rewards)),
                        ("cycle-staked-ustx", uint(staked)),
                        ("accrued-rewards-per-ustx", uint(per_ustx)),
                        ("cumulative-rewards-per-ustx", uint(per_ustx)),
                    ],
                    after,
                )
            } else {
                let bond = rng.below(u64::from(p.bonds)) as u32;
                let per_sat = u128::from(rng.range(1, 50)) * 10_000_000_000_000_000;
                let staked: u128 = p.registered.iter().filter(|(k, _)| k.0 == bond).map(|(_, s)| s).sum();
                call(
                    ctx.deployer,
                    "bond-distribution",
                    vec![
                        ("bond-index", uint(bond)),
                        ("target-yield", uint(rng.range(100, 900))),
                        ("bond-rewards", uint(staked * per_sat / PRECISION)),
                        ("bond-staked-sats", uint(staked)),
                        ("accrued-rewards-per-sat", uint(per_sat)),
                        ("cumulative-rewards-per-sat", uint(per_sat)),
                    ],
                    after,
                )
            }
        }
        52..=59 => {
            // A claim by a signer manager for one of its stakers: bond or STX rewards.
            let signers: Vec<u32> = p.signers.keys().copied().collect();
            if signers.is_empty() {
                return None;
            }
            let manager = signers[pick(rng, signers.len())];
            if rng.chance(300) {
                return call(
                    manager,
                    "claim-rewards",
                    vec![
                        ("signer-manager", key(manager)),
                        ("reward-cycle", uint(cycle)),
                        (
                            "stx-rewards",
                            Value::Tuple(tuple(vec![
                                ("earned", uint(rng.range(0, 5_000))),
                                ("rewards-per-token", uint(rng.range(0, 5_000))),
                            ])),
                        ),
                        ("bond-rewards", Value::List(Vec::new())),
                        ("bond-totals", uint(0u8)),
                        ("total-rewards", uint(rng.range(0, 5_000))),
                    ],
                    after,
                );
            }
            let regs: Vec<&(u32, u32)> = p.registered.keys().collect();
            let stx: Vec<&u32> = p.stakes.keys().collect();
            let (staker, bond) = if !regs.is_empty() && (stx.is_empty() || rng.chance(600)) {
                let &(b, s) = regs[pick(rng, regs.len())];
                (s, Some(b))
            } else if !stx.is_empty() {
                (*stx[pick(rng, stx.len())], None)
            } else {
                return None;
            };
            call(
                manager,
                "claim-staker-rewards-for-signer",
                vec![
                    ("signer-manager", key(manager)),
                    ("staker", key(staker)),
                    ("reward-cycle", uint(cycle)),
                    (
                        "bond-index",
                        bond.map_or(Value::OptionalNone, |b| Value::OptionalSome(Box::new(uint(b)))),
                    ),
                    ("rewards-claimed", uint(rng.range(0, 2_000))),
                ],
                after,
            )
        }
        60..=75 => {
            // STX staking under a registered signer.
            let signers: Vec<u32> = p.signers.keys().copied().collect();
            if signers.is_empty() {
                return None;
            }
            let signer = signers[pick(rng, signers.len())];
            let staker = any(rng)?;
            let unlock = cycle_start(cycle + rng.range(1, 4));
            match p.stakes.get(&staker).copied() {
                None => {
                    let amount = u128::from(rng.range(1, 100)) * 1_000_000;
                    after.stakes.insert(staker, (signer, amount));
                    call(
                        staker,
                        "stake",
                        vec![
                            ("signer", key(signer)),
                            ("staker", key(staker)),
                            ("amount-ustx", uint(amount)),
                            ("num-cycles", uint(rng.range(1, 4))),
                            ("first-reward-cycle", uint(cycle + 1)),
                            ("unlock-burn-height", uint(unlock)),
                            ("unlock-cycle", uint(reward_cycle(unlock))),
                        ],
                        after,
                    )
                }
                Some((old_signer, amount)) if rng.chance(700) => {
                    let more = u128::from(rng.range(0, 20)) * 1_000_000;
                    after.stakes.insert(staker, (signer, amount + more));
                    call(
                        staker,
                        "stake-update",
                        vec![
                            ("staker", key(staker)),
                            ("signer", key(signer)),
                            ("old-signer", key(old_signer)),
                            ("prev-unlock-height", uint(burn_height)),
                            ("unlock-burn-height", uint(unlock)),
                            ("unlock-cycle", uint(reward_cycle(unlock))),
                            ("num-cycles", uint(rng.range(1, 4))),
                            ("amount-ustx", uint(amount + more)),
                            ("amount-increase", uint(more)),
                            ("cycles-to-extend", uint(rng.range(0, 2))),
                        ],
                        after,
                    )
                }
                Some((old_signer, amount)) => {
                    after.stakes.remove(&staker);
                    // The lock ends with the current cycle.
                    let end = cycle_start(cycle + 1);
                    call(
                        staker,
                        "unstake",
                        vec![
                            ("staker", key(staker)),
                            ("signer", key(old_signer)),
                            ("amount-ustx", uint(amount)),
                            ("first-reward-cycle", uint(cycle)),
                            ("unlock-cycle", uint(cycle + 1)),
                            ("unlock-burn-height", uint(end)),
                        ],
                        after,
                    )
                }
            }
        }
        76..=87 => {
            // Signer keys: a registration (the key of some account, perhaps a granted one),
            // a grant or a revoke.
            let manager = any(rng)?;
            match rng.below(3) {
                0 | 1 if p.signers.len() < 12 || p.signers.contains_key(&manager) => {
                    let granted: Vec<u32> = p.grants.keys().filter(|g| g.0 == manager).map(|g| g.1).collect();
                    // A registered manager sometimes rotates to another account's key (authorized
                    // by that key's signature, which the print does not show): after a cycle's
                    // reward set, that is its pending key update.
                    let key_of = if !granted.is_empty() && rng.chance(500) {
                        granted[pick(rng, granted.len())]
                    } else if p.signers.contains_key(&manager) && rng.chance(400) {
                        any(rng)?
                    } else {
                        manager
                    };
                    after.signers.insert(manager, key_of);
                    call(
                        manager,
                        "register-signer",
                        vec![("signer", key(manager)), ("signer-key", signer_key(key_of))],
                        after,
                    )
                }
                2 if !p.grants.is_empty() && rng.chance(400) => {
                    let gs: Vec<(&(u32, u32), &u128)> = p.grants.iter().collect();
                    let (&(m, k), &auth) = gs[pick(rng, gs.len())];
                    after.grants.remove(&(m, k));
                    call(
                        m,
                        "revoke-signer-grant",
                        vec![
                            ("signer-manager", key(m)),
                            ("signer-key", signer_key(k)),
                            ("auth-id", uint(auth)),
                        ],
                        after,
                    )
                }
                _ => {
                    let k = any(rng)?;
                    let auth = p.next_auth_id;
                    after.next_auth_id += 1;
                    after.grants.insert((manager, k), auth);
                    call(
                        k,
                        "grant-signer-key",
                        vec![
                            ("signer-manager", key(manager)),
                            ("signer-key", signer_key(k)),
                            ("auth-id", uint(auth)),
                        ],
                        after,
                    )
                }
            }
        }
        88..=93 => {
            let allowed: Vec<u32> = p.callers.iter().copied().filter(|&c| can_pay(c)).collect();
            let sender = if !allowed.is_empty() && rng.chance(500) {
                allowed[pick(rng, allowed.len())]
            } else {
                any(rng)?
            };
            let caller =
                Value::Principal(stacks_codec::address::Principal::Contract(ctx.ft_contract.clone()));
            if after.callers.remove(&sender) {
                call(
                    sender,
                    "disallow-contract-caller",
                    vec![("sender", key(sender)), ("caller", caller)],
                    after,
                )
            } else {
                after.callers.insert(sender);
                call(
                    sender,
                    "allow-contract-caller",
                    vec![("sender", key(sender)), ("caller", caller), ("until-burn-ht", Value::OptionalNone)],
                    after,
                )
            }
        }
        _ => {
            let bond = rng.below(u64::from(p.bonds)) as u32;
            call(
                ctx.deployer,
                "set-bond-admin",
                vec![("bond-index", uint(bond)), ("admin", key(ctx.deployer))],
                after,
            )
        }
    }
}
