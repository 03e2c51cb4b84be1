//! pox-4's direct stacking calls (`stack-stx`, `delegate-stx`, `revoke-delegate-stx`) as the
//! boot contract runs them: the state they change in the generator's ledger, and the result and
//! events a node reports (the synthetic print of stacks-core's pox-locking, first, then the STX
//! lock of a `stack-stx`), in the shapes of the real-node recording `tests/realnode/pox`.
//!
//! Shared by the generator (`txgen.rs`), whose plans always pass the contract's checks, and the
//! devnet node (`node.rs`), which is sent anything: it type-checks the arguments ([`parse_call`],
//! as a node's mempool admission does) and runs the contract's own checks ([`run`]); a call
//! the contract refuses is mined as `abort_by_response` with pox-4's `(err code)` and no
//! events, the fee paid, as a node mines it.

use stacks_codec::address::{ContractId, Principal};
use stacks_codec::clarity::Value;
use stacks_codec::sign::{recover_public_key, rsv_to_vrs};
use stacks_codec::tx::KeyEncoding;

use super::config::{cycle_start, reward_cycle, Ctx, POX_MIN_STACK};
use super::json::{Cost, EventBody};
use super::txbuild::{signer_message_hash, SignerGrant};
use super::txgen::{ascii, hex, ok, optional, uint, Outcome};
use super::world::{Delegation, Holder, Invariant, Stacker, World};

/// The `stack-stx` cost recorded in the pox-4 regtest fixture.
pub const COST_STACK_STX: Cost =
    Cost { read_count: 23, read_length: 80_849, runtime: 714_292, write_count: 6, write_length: 838 };
/// A `delegate-stx` cost of the same order as `stack-stx`'s (no recording carries one).
pub const COST_DELEGATE_STX: Cost =
    Cost { read_count: 8, read_length: 28_136, runtime: 210_117, write_count: 1, write_length: 161 };
/// A `revoke-delegate-stx` cost of the same order as `delegate-stx`'s.
pub const COST_REVOKE_DELEGATE_STX: Cost =
    Cost { read_count: 7, read_length: 27_904, runtime: 183_562, write_count: 1, write_length: 1 };
/// A refused call: the reads up to the failed check (the `(err 34)` revoke of
/// `tests/realnode/pox`).
const COST_REFUSED: Cost =
    Cost { read_count: 4, read_length: 77_011, runtime: 82_946, write_count: 0, write_length: 0 };

/// pox-4's error codes the three calls return.
pub mod err {
    pub const INSUFFICIENT_FUNDS: i128 = 1;
    pub const INVALID_LOCK_PERIOD: i128 = 2;
    pub const ALREADY_STACKED: i128 = 3;
    pub const THRESHOLD_NOT_MET: i128 = 11;
    pub const INVALID_POX_ADDRESS: i128 = 13;
    pub const INVALID_AMOUNT: i128 = 18;
    pub const NOT_ALLOWED: i128 = 19;
    pub const ALREADY_DELEGATED: i128 = 20;
    pub const INVALID_START_BURN_HEIGHT: i128 = 24;
    pub const DELEGATION_ALREADY_REVOKED: i128 = 34;
    pub const INVALID_SIGNATURE_PUBKEY: i128 = 35;
    pub const INVALID_SIGNATURE_RECOVER: i128 = 36;
    pub const SIGNER_AUTH_AMOUNT_TOO_HIGH: i128 = 38;
    pub const SIGNER_AUTH_USED: i128 = 39;
}

/// pox-4's public functions: the three modelled here, and the others (which a node would run
/// and the devnet node refuses as not supported).
const MODELLED: [&str; 3] = ["stack-stx", "delegate-stx", "revoke-delegate-stx"];
const OTHER_PUBLIC: [&str; 12] = [
    "allow-contract-caller",
    "delegate-stack-extend",
    "delegate-stack-increase",
    "delegate-stack-stx",
    "disallow-contract-caller",
    "set-burnchain-parameters",
    "set-signer-key-authorization",
    "stack-aggregation-commit",
    "stack-aggregation-commit-indexed",
    "stack-aggregation-increase",
    "stack-extend",
    "stack-increase",
];

/// Who calls (`tx-sender`): the account, its principal and its address.
pub struct Caller {
    pub holder: Holder,
    pub principal: Value,
    pub address: String,
}

/// `stack-stx`'s arguments.
#[derive(Debug, Clone)]
pub struct StackStx {
    pub amount: u128,
    /// `{hashbytes, version}`.
    pub pox_addr: Value,
    pub start_burn_height: u64,
    pub period: u64,
    pub signer_sig: Option<Vec<u8>>,
    pub signer_key: Vec<u8>,
    pub max_amount: u128,
    pub auth_id: u128,
}

impl StackStx {
    /// The stacker's first reward cycle: the one after `start-burn-ht`'s.
    pub fn first_cycle(&self) -> u64 {
        reward_cycle(self.start_burn_height) + 1
    }

    /// `(reward-cycle-to-burn-height (+ first-reward-cycle lock-period))`.
    pub fn unlock_height(&self) -> u64 {
        cycle_start(self.first_cycle().saturating_add(self.period))
    }

    pub fn args(&self) -> Vec<Value> {
        vec![
            uint(self.amount),
            self.pox_addr.clone(),
            uint(self.start_burn_height),
            uint(self.period),
            optional(self.signer_sig.clone().map(Value::Buffer)),
            Value::Buffer(self.signer_key.clone()),
            uint(self.max_amount),
            uint(self.auth_id),
        ]
    }
}

/// A call to one of the modelled functions.
#[derive(Debug, Clone)]
// The variants are the pox-4 functions' own names (`stack-stx`, `delegate-stx`, ...).
#[allow(clippy::enum_variant_names)]
pub enum PoxCall {
    StackStx(Box<StackStx>),
    DelegateStx(Delegation),
    RevokeDelegateStx,
}

/// Why a node's mempool admission refuses a contract call: the node's reason and a message.
pub type Refusal = (&'static str, String);

/// Checks a contract call against pox-4's interface as a node's mempool admission does: the
/// contract exists (`NoSuchContract`), the function is public (`NoSuchPublicFunction`), the
/// arguments have its types (`BadFunctionArgument`). Contracts and functions the devnet does not
/// run are `NotSupported`.
pub fn parse_call(
    ctx: &Ctx,
    contract: &ContractId,
    function: &str,
    args: &[Value],
) -> Result<PoxCall, Refusal> {
    let known = [&ctx.ft_contract, &ctx.nft_contract, &ctx.bns_contract, &ctx.pox5_contract];
    if *contract != ctx.pox_contract {
        return Err(if known.contains(&contract) {
            ("NotSupported", format!("the devnet node runs only {}'s stacking calls", ctx.pox_contract_id))
        } else {
            ("NoSuchContract", format!("no contract {contract}"))
        });
    }
    if !MODELLED.contains(&function) {
        return Err(if OTHER_PUBLIC.contains(&function) {
            ("NotSupported", format!("the devnet node does not run {contract}::{function}"))
        } else {
            ("NoSuchPublicFunction", format!("{contract} has no public function {function}"))
        });
    }
    let bad = |m: String| ("BadFunctionArgument", format!("{function}: {m}"));
    let expected = match function {
        "stack-stx" => 8,
        "delegate-stx" => 4,
        _ => 0,
    };
    if args.len() != expected {
        return Err(bad(format!("expecting {expected} arguments, got {}", args.len())));
    }
    let arg = |i: usize, name: &str, v: Option<&Value>| {
        v.cloned().ok_or_else(|| bad(format!("argument {i} ({name}) has the wrong type: {}", args[i].repr())))
    };
    let uint_arg = |i: usize, name: &str| match &args[i] {
        Value::UInt(n) => Ok(*n),
        v => Err(bad(format!("argument {i} ({name}) is not a uint: {}", v.repr()))),
    };
    let height = |n: u128| u64::try_from(n).unwrap_or(u64::MAX);
    match function {
        "stack-stx" => {
            let pox_addr = arg(1, "pox-addr", pox_addr_type(&args[1]).then_some(&args[1]))?.canonical();
            let signer_sig = match &args[4] {
                Value::OptionalNone => None,
                Value::OptionalSome(v) => match v.as_ref() {
                    Value::Buffer(b) if b.len() <= 65 => Some(b.clone()),
                    _ => {
                        return Err(bad(format!("argument 4 (signer-sig) is not a (buff 65): {}", v.repr())))
                    }
                },
                v => return Err(bad(format!("argument 4 (signer-sig) is not optional: {}", v.repr()))),
            };
            let signer_key = match &args[5] {
                Value::Buffer(b) if b.len() <= 33 => b.clone(),
                v => return Err(bad(format!("argument 5 (signer-key) is not a (buff 33): {}", v.repr()))),
            };
            Ok(PoxCall::StackStx(Box::new(StackStx {
                amount: uint_arg(0, "amount-ustx")?,
                pox_addr,
                start_burn_height: height(uint_arg(2, "start-burn-ht")?),
                period: height(uint_arg(3, "lock-period")?),
                signer_sig,
                signer_key,
                max_amount: uint_arg(6, "max-amount")?,
                auth_id: uint_arg(7, "auth-id")?,
            })))
        }
        "delegate-stx" => {
            let delegate_to =
                arg(1, "delegate-to", matches!(args[1], Value::Principal(_)).then_some(&args[1]))?;
            let until = match &args[2] {
                Value::OptionalNone => None,
                Value::OptionalSome(v) => match v.as_ref() {
                    Value::UInt(n) => Some(height(*n)),
                    v => return Err(bad(format!("argument 2 (until-burn-ht) is not a uint: {}", v.repr()))),
                },
                v => return Err(bad(format!("argument 2 (until-burn-ht) is not optional: {}", v.repr()))),
            };
            let pox_addr = match &args[3] {
                Value::OptionalNone => None,
                Value::OptionalSome(v) if pox_addr_type(v) => Some(v.canonical()),
                v => return Err(bad(format!("argument 3 (pox-addr) has the wrong type: {}", v.repr()))),
            };
            Ok(PoxCall::DelegateStx(Delegation {
                amount: uint_arg(0, "amount-ustx")?,
                delegate_to,
                until,
                pox_addr,
            }))
        }
        _ => Ok(PoxCall::RevokeDelegateStx),
    }
}

/// Whether `v` has the type `{version: (buff 1), hashbytes: (buff 32)}` (exactly those fields).
fn pox_addr_type(v: &Value) -> bool {
    let Value::Tuple(fields) = v else { return false };
    let buf = |name: &str, max: usize| {
        fields.iter().any(|(k, v)| k == name && matches!(v, Value::Buffer(b) if b.len() <= max))
    };
    fields.len() == 2 && buf("version", 1) && buf("hashbytes", 32)
}

/// `check-pox-addr-version` and `check-pox-addr-hashbytes`; the version and hashbytes.
fn valid_pox_addr(v: &Value) -> Option<(u8, Vec<u8>)> {
    let Value::Tuple(fields) = v else { return None };
    let get = |name: &str| match fields.iter().find(|(k, _)| k == name) {
        Some((_, Value::Buffer(b))) => Some(b.clone()),
        _ => None,
    };
    let version = *get("version")?.first()?;
    let hashbytes = get("hashbytes")?;
    let ok = match version {
        0..=4 => hashbytes.len() == 20,
        5 | 6 => hashbytes.len() == 32,
        _ => false,
    };
    ok.then_some((version, hashbytes))
}

/// Runs `call` by `who` at `burn_height` as pox-4 does: its checks, then its effects. The fee
/// and nonces are already paid. A refused call changes nothing and is `(err code)`.
pub fn run(
    ctx: &Ctx,
    world: &mut World,
    who: &Caller,
    call: &PoxCall,
    burn_height: u64,
) -> Result<Outcome, Invariant> {
    let checked = match call {
        PoxCall::StackStx(s) => check_stack_stx(ctx, world, who, s, burn_height),
        PoxCall::DelegateStx(d) => check_delegate_stx(world, who, d, burn_height),
        PoxCall::RevokeDelegateStx => match world.revocable(&who.holder, burn_height) {
            Some(_) => Ok(()),
            None => Err(err::DELEGATION_ALREADY_REVOKED),
        },
    };
    if let Err(code) = checked {
        let result = Value::ResponseErr(Box::new(Value::Int(code)));
        return Ok(Outcome::new("abort_by_response", result, Vec::new(), COST_REFUSED));
    }
    match call {
        PoxCall::StackStx(s) => {
            let btc = valid_pox_addr(&s.pox_addr)
                .and_then(|(v, h)| {
                    ledger_core::ledger::btc::pox_address_text(v, &h, ctx.cfg.network.is_mainnet())
                })
                .unwrap_or_default();
            stack_stx(ctx, world, who, s, btc)
        }
        PoxCall::DelegateStx(d) => Ok(delegate_stx(ctx, world, who, d, burn_height)),
        PoxCall::RevokeDelegateStx => revoke_delegate_stx(ctx, world, who, burn_height),
    }
}

/// `stack-stx`'s checks in the contract's order, and `consume-signer-key-authorization`'s.
fn check_stack_stx(
    ctx: &Ctx,
    world: &mut World,
    who: &Caller,
    s: &StackStx,
    burn_height: u64,
) -> Result<(), i128> {
    let first = reward_cycle(burn_height) + 1;
    if first != s.first_cycle() {
        return Err(err::INVALID_START_BURN_HEIGHT);
    }
    let account = world.holder(&who.holder).cloned().unwrap_or_default();
    // `get-stacker-info`: a lock that has not expired (expired ones are released before a
    // block's transactions run).
    if account.locked > 0 && account.unlock_height > burn_height {
        return Err(err::ALREADY_STACKED);
    }
    if world.revocable(&who.holder, burn_height).is_some() {
        return Err(err::ALREADY_DELEGATED);
    }
    if account.spendable() < s.amount {
        return Err(err::INSUFFICIENT_FUNDS);
    }
    // verify-signer-key-sig, then the authorization is used up.
    if s.max_amount < s.amount {
        return Err(err::SIGNER_AUTH_AMOUNT_TOO_HIGH);
    }
    let grant = SignerGrant {
        pox_addr: &s.pox_addr,
        reward_cycle: first - 1,
        period: s.period,
        max_amount: s.max_amount,
        auth_id: s.auth_id,
    };
    let used = authorization_key(&s.signer_key, &grant);
    if world.used_signer_authorizations.contains(&used) {
        return Err(err::SIGNER_AUTH_USED);
    }
    let Some(sig) = &s.signer_sig else {
        // No `set-signer-key-authorization` is modelled, so no prior authorization exists.
        return Err(err::NOT_ALLOWED);
    };
    let hash = signer_message_hash(ctx.chain_id, "stack-stx", &grant);
    let recovered = <[u8; 65]>::try_from(sig.as_slice())
        .ok()
        .and_then(|rsv| recover_public_key(hash, &rsv_to_vrs(&rsv), KeyEncoding::Compressed).ok())
        .ok_or(err::INVALID_SIGNATURE_RECOVER)?;
    if recovered.as_bytes() != s.signer_key.as_slice() {
        return Err(err::INVALID_SIGNATURE_PUBKEY);
    }
    // can-stack-stx, minimal-can-stack-stx.
    if s.amount < POX_MIN_STACK {
        return Err(err::THRESHOLD_NOT_MET);
    }
    if s.amount == 0 {
        return Err(err::INVALID_AMOUNT);
    }
    if !(1..=12).contains(&s.period) {
        return Err(err::INVALID_LOCK_PERIOD);
    }
    if valid_pox_addr(&s.pox_addr).is_none() {
        return Err(err::INVALID_POX_ADDRESS);
    }
    world.used_signer_authorizations.insert(used);
    Ok(())
}

/// The key of `used-signer-key-authorizations`: the signer key and the grant, serialized.
fn authorization_key(signer_key: &[u8], grant: &SignerGrant<'_>) -> Vec<u8> {
    Value::Tuple(vec![
        ("auth-id".into(), uint(grant.auth_id)),
        ("max-amount".into(), uint(grant.max_amount)),
        ("period".into(), uint(grant.period)),
        ("pox-addr".into(), grant.pox_addr.clone()),
        ("reward-cycle".into(), uint(grant.reward_cycle)),
        ("signer-key".into(), Value::Buffer(signer_key.to_vec())),
        ("topic".into(), ascii("stack-stx")),
    ])
    .serialize()
}

/// `delegate-stx`'s checks: a valid PoX address if one is named, no delegation in force.
fn check_delegate_stx(world: &World, who: &Caller, d: &Delegation, burn_height: u64) -> Result<(), i128> {
    if d.pox_addr.as_ref().is_some_and(|a| valid_pox_addr(a).is_none()) {
        return Err(err::INVALID_POX_ADDRESS);
    }
    if world.revocable(&who.holder, burn_height).is_some() {
        return Err(err::ALREADY_DELEGATED);
    }
    Ok(())
}

/// pox-4's synthetic print of a call by `who`: `(ok {balance, burnchain-unlock-height, data,
/// locked, name, stacker})`, with the account as it stands (`balance` liquid, unlock height,
/// locked).
fn print(
    ctx: &Ctx,
    name: &str,
    who: &Caller,
    (balance, unlock_height, locked): (u128, u64, u128),
    data: Value,
) -> (bool, EventBody) {
    let print = ok(Value::Tuple(vec![
        ("balance".into(), uint(balance)),
        ("burnchain-unlock-height".into(), uint(unlock_height)),
        ("data".into(), data),
        ("locked".into(), uint(locked)),
        ("name".into(), ascii(name)),
        ("stacker".into(), who.principal.clone()),
    ]));
    (true, EventBody::Print { contract_identifier: ctx.pox_contract_id.clone(), raw_value: hex(&print) })
}

fn standing(world: &World, who: &Caller) -> (u128, u64, u128) {
    let a = world.holder(&who.holder).cloned().unwrap_or_default();
    (a.spendable(), a.unlock_height, a.locked)
}

/// `stack-stx`: the print (the account as it stood before the lock), then the lock, whose
/// reward slots pay `btc`.
pub fn stack_stx(
    ctx: &Ctx,
    world: &mut World,
    who: &Caller,
    s: &StackStx,
    btc: String,
) -> Result<Outcome, Invariant> {
    let before = standing(world, who).0;
    let (first, unlock) = (s.first_cycle(), s.unlock_height());
    let stacker =
        Stacker { holder: who.holder.clone(), btc, first_cycle: first, end_cycle: first + s.period };
    world.lock(stacker, s.amount, unlock)?;
    let signer_key = Value::Buffer(s.signer_key.clone());
    let data = Value::Tuple(vec![
        ("auth-id".into(), uint(s.auth_id)),
        ("end-cycle-id".into(), Value::OptionalSome(Box::new(uint(first + s.period)))),
        ("lock-amount".into(), uint(s.amount)),
        ("lock-period".into(), uint(s.period)),
        ("max-amount".into(), uint(s.max_amount)),
        ("pox-addr".into(), s.pox_addr.clone()),
        ("signer-key".into(), signer_key.clone()),
        ("signer-sig".into(), optional(s.signer_sig.clone().map(Value::Buffer))),
        ("start-burn-height".into(), uint(s.start_burn_height)),
        ("start-cycle-id".into(), uint(first)),
        ("unlock-burn-height".into(), uint(unlock)),
    ]);
    let print = print(ctx, "stack-stx", who, (before, 0, 0), data);
    let result = ok(Value::Tuple(vec![
        ("lock-amount".into(), uint(s.amount)),
        ("signer-key".into(), signer_key),
        ("stacker".into(), who.principal.clone()),
        ("unlock-burn-height".into(), uint(unlock)),
    ]));
    let lock = EventBody::StxLock {
        locked_amount: s.amount,
        unlock_height: unlock,
        locked_address: who.address.clone(),
        contract_identifier: ctx.pox_contract_id.clone(),
    };
    Ok(Outcome::new("success", result, vec![print, (true, lock)], COST_STACK_STX))
}

/// `delegate-stx`: records the delegation (nothing is locked); the print carries the account as
/// it stands and the call's arguments.
pub fn delegate_stx(ctx: &Ctx, world: &mut World, who: &Caller, d: &Delegation, burn_height: u64) -> Outcome {
    world.delegations.insert(who.holder.clone(), d.clone());
    let data = Value::Tuple(vec![
        ("amount-ustx".into(), uint(d.amount)),
        ("delegate-to".into(), d.delegate_to.clone()),
        ("end-cycle-id".into(), optional(d.until.map(|u| uint(reward_cycle(u))))),
        ("pox-addr".into(), optional(d.pox_addr.clone())),
        ("start-cycle-id".into(), uint(reward_cycle(burn_height) + 1)),
        ("unlock-burn-height".into(), optional(d.until.map(uint))),
    ]);
    let events = vec![print(ctx, "delegate-stx", who, standing(world, who), data)];
    Outcome::new("success", ok(Value::Bool(true)), events, COST_DELEGATE_STX)
}

/// `revoke-delegate-stx`: deletes the delegation and returns it, `(ok (some {...}))`; the print
/// names the delegate and the next cycle.
pub fn revoke_delegate_stx(
    ctx: &Ctx,
    world: &mut World,
    who: &Caller,
    burn_height: u64,
) -> Result<Outcome, Invariant> {
    let d = world
        .revocable(&who.holder, burn_height)
        .cloned()
        .ok_or_else(|| Invariant(format!("{} has no delegation to revoke", who.address)))?;
    world.delegations.remove(&who.holder);
    let result = ok(optional(Some(Value::Tuple(vec![
        ("amount-ustx".into(), uint(d.amount)),
        ("delegated-to".into(), d.delegate_to.clone()),
        ("pox-addr".into(), optional(d.pox_addr.clone())),
        ("until-burn-ht".into(), optional(d.until.map(uint))),
    ]))));
    let data = Value::Tuple(vec![
        ("delegate-to".into(), d.delegate_to),
        ("end-cycle-id".into(), Value::OptionalNone),
        ("start-cycle-id".into(), uint(reward_cycle(burn_height) + 1)),
    ]);
    let events = vec![print(ctx, "revoke-delegate-stx", who, standing(world, who), data)];
    Ok(Outcome::new("success", result, events, COST_REVOKE_DELEGATE_STX))
}

/// The caller of a seed account.
pub fn seed_caller(ctx: &Ctx, i: u32) -> Caller {
    let key = ctx.key(i);
    Caller { holder: Holder::Seed(i), principal: key.principal.clone(), address: key.c32.clone() }
}

/// The caller of any standard address: a seed account if it is one of the seed's keys.
pub fn caller_of(ctx: &Ctx, address: &stacks_codec::address::StacksAddress) -> Caller {
    let c32 = address.to_c32();
    match ctx.keys.iter().position(|k| k.c32 == c32) {
        Some(i) => seed_caller(ctx, i as u32),
        None => Caller {
            holder: Holder::External(c32.clone()),
            principal: Value::Principal(Principal::Standard(*address)),
            address: c32,
        },
    }
}
