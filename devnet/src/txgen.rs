//! One transaction at a time: pick something the current ledger allows, sign it, then execute
//! it against the ledger the way the Clarity VM would, producing the receipt and events a node
//! reports. The function bodies here mirror the sources in `contracts`.

use stacks_codec::address::Principal;
use stacks_codec::clarity::Value;
use stacks_codec::to_hex_prefixed;
use stacks_codec::tx::{
    AnchorMode, AssetInfo, ClarityVersion, FungibleConditionCode, NonfungibleConditionCode, Payload,
    PostCondition, PostConditionPrincipal,
};

use super::config::{reward_cycle, Ctx, DELEGATION_POOLS, POX_MIN_STACK};
use super::contracts::{DeployCase, FT_SOURCE, NFT_SOURCE};
use super::json::{Cost, EventBody, Receipt, TxEvent};
use super::pox4::{self, StackStx};
use super::rng::Rng;
use super::txbuild::{pox4_signer_signature, pox_addr, sign, Signed, SignerGrant, Signers};
use super::world::{Delegation, FailedDeploy, Holder, Invariant, World, NFT_CAP};
use super::DevnetError;

/// µSTX in one STX.
const STX: u128 = 1_000_000;
/// What a block's coinbase mints when its reward matures (1000 STX, the epoch 2.x amount).
pub const COINBASE_USTX: u128 = 1_000 * STX;

/// Where a transaction is mined; it decides the anchor modes a node would accept there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    Anchored,
    Microblock,
}

/// The chain context a transaction executes in.
#[derive(Debug, Clone, Copy)]
pub struct BlockEnv {
    pub burn_height: u64,
    /// The Stacks height the transaction executes at (Clarity's `block-height`).
    pub height: u64,
}

/// A generated transaction: its receipt and events (indexes to be set by the block), the fee
/// it paid, and, for a replace-by-fee, the cheaper version it replaced in the mempool.
#[derive(Debug, Clone)]
pub struct GenTx {
    pub receipt: Receipt,
    pub events: Vec<TxEvent>,
    pub fee: u128,
    pub rbf_original: Option<Signed>,
    /// The Atlas attachment a BNS name operation makes the node post after the block.
    pub attachment: Option<super::bns::Attachment>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FtPostCondition {
    None,
    /// Deny mode, "origin sends exactly `amount`": passes.
    Exact,
    /// Deny mode, "origin sends exactly `amount + 1`": the transfer aborts by post-condition.
    Wrong,
}

#[derive(Debug, Clone)]
enum Action {
    StxTransfer { to: u32, amount: u64, memo: Option<[u8; 34]> },
    FtMint { to: u32, amount: u128 },
    FtTransfer { to: u32, amount: u128, memo: Option<[u8; 34]>, pc: FtPostCondition },
    NftMint,
    NftTransfer { slot: usize, token: u128, to: u32, with_pc: bool },
    NftBurn { slot: usize, token: u128 },
    StackStx(Box<StackStx>),
    DelegateStx(Delegation),
    RevokeDelegateStx,
    Deploy(Box<DeployPlan>),
    Pox5(Box<super::pox5::Pox5Call>),
    Bns(Box<super::bns::BnsCall>),
}

/// A deploy of the failed-deploy cases: the failing version of `case` under a new name, or
/// the fixed version under the name of an earlier failure (`retry`, its index in
/// `World::retry_deploys`), then perhaps followed by a duplicate in the mempool.
#[derive(Debug, Clone)]
struct DeployPlan {
    case: DeployCase,
    name: String,
    retry: Option<usize>,
    duplicate: bool,
}

#[derive(Debug, Clone)]
struct Plan {
    origin: u32,
    /// Pays the fee when set.
    sponsor: Option<u32>,
    fee: u64,
    action: Action,
}

/// What executing a transaction produced.
pub(super) struct Outcome {
    status: &'static str,
    result: Value,
    /// `(committed, body)`.
    events: Vec<(bool, EventBody)>,
    cost: Cost,
    /// The contract interface of a deploy whose analysis passed.
    abi: Option<serde_json::Value>,
    vm_error: Option<String>,
}

impl Outcome {
    pub(super) fn new(
        status: &'static str,
        result: Value,
        events: Vec<(bool, EventBody)>,
        cost: Cost,
    ) -> Outcome {
        Outcome { status, result, events, cost, abi: None, vm_error: None }
    }
}

const COST_FT_TRANSFER: Cost =
    Cost { read_count: 5, read_length: 2_413, runtime: 43_519, write_count: 2, write_length: 146 };
const COST_FT_MINT: Cost =
    Cost { read_count: 3, read_length: 1_870, runtime: 18_214, write_count: 2, write_length: 98 };
const COST_NFT_MINT: Cost =
    Cost { read_count: 5, read_length: 1_703, runtime: 27_331, write_count: 3, write_length: 177 };
const COST_NFT_TRANSFER: Cost =
    Cost { read_count: 4, read_length: 1_602, runtime: 21_843, write_count: 1, write_length: 90 };
const COST_NFT_BURN: Cost =
    Cost { read_count: 4, read_length: 1_598, runtime: 19_204, write_count: 1, write_length: 90 };
/// A bns call's cost, of the order of a mainnet `name-register`'s.
const COST_BNS_CALL: Cost =
    Cost { read_count: 19, read_length: 45_820, runtime: 201_050, write_count: 4, write_length: 1_386 };
/// A pox-5 call's cost, of the order of pox-4's (no recording carries one).
const COST_POX5_CALL: Cost =
    Cost { read_count: 9, read_length: 31_020, runtime: 240_311, write_count: 2, write_length: 212 };

pub(super) fn ok(v: Value) -> Value {
    Value::ResponseOk(Box::new(v))
}

pub(super) fn uint(v: impl Into<u128>) -> Value {
    Value::UInt(v.into())
}

pub(super) fn ascii(s: &str) -> Value {
    Value::StringAscii(s.as_bytes().to_vec())
}

pub(super) fn hex(v: &Value) -> String {
    to_hex_prefixed(&v.serialize())
}

/// A random user account other than `not`.
fn other_account(rng: &mut Rng, users: u32, not: u32) -> u32 {
    let pick = rng.below(u64::from(users - 1)) as u32;
    if pick >= not {
        pick + 1
    } else {
        pick
    }
}

/// A user account that satisfies `ok`: a few random tries, then a scan from a random start so
/// the choice stays deterministic and cheap. `None` when no account qualifies.
fn find_account(rng: &mut Rng, world: &World, users: u32, ok: impl Fn(u32, &World) -> bool) -> Option<u32> {
    for _ in 0..8 {
        let i = rng.below(u64::from(users)) as u32;
        if ok(i, world) {
            return Some(i);
        }
    }
    let start = rng.below(u64::from(users)) as u32;
    (0..users).map(|k| (start + k) % users).find(|&i| ok(i, world))
}

fn memo(rng: &mut Rng, serial: u64, per_mille: u32) -> Option<[u8; 34]> {
    if !rng.chance(per_mille) {
        return None;
    }
    let text = format!("devnet #{serial}");
    let mut m = [0u8; 34];
    m[..text.len()].copy_from_slice(text.as_bytes());
    Some(m)
}

fn choose(
    ctx: &Ctx,
    rng: &mut Rng,
    world: &World,
    env: BlockEnv,
    placement: Placement,
    serial: u64,
) -> Result<Plan, Invariant> {
    // Drawn only when delegations are on, so other chains keep their bytes.
    if ctx.cfg.delegate_per_mille > 0 && rng.chance(ctx.cfg.delegate_per_mille) {
        if let Some(p) = plan_delegate(ctx, rng, world, env) {
            return Ok(p);
        }
    }
    // Likewise for the later real-chain cases: each draws only when switched on.
    let cfg = &ctx.cfg;
    if cfg.revoke_per_mille > 0 && rng.chance(cfg.revoke_per_mille) {
        if let Some(p) = plan_revoke(ctx, rng, world, env) {
            return Ok(p);
        }
    }
    if cfg.failed_deploy_per_mille > 0 && rng.chance(cfg.failed_deploy_per_mille) {
        if let Some(p) = plan_deploy(ctx, rng, world, serial) {
            return Ok(p);
        }
    }
    if cfg.pox5_per_mille > 0 && rng.chance(cfg.pox5_per_mille) {
        let fee = rng.range(1_000, 20_000);
        if let Some(c) = super::pox5::plan(ctx, rng, world, env.burn_height, u128::from(fee)) {
            return Ok(Plan { origin: c.origin, sponsor: None, fee, action: Action::Pox5(Box::new(c)) });
        }
    }
    if cfg.bns_per_mille > 0 && placement == Placement::Anchored && rng.chance(cfg.bns_per_mille) {
        let fee = rng.range(1_000, 20_000);
        if let Some(c) = super::bns::plan(ctx, rng, world, env.height, u128::from(fee)) {
            return Ok(Plan { origin: c.origin, sponsor: None, fee, action: Action::Bns(Box::new(c)) });
        }
    }
    let deployed = world.contracts_deployed;
    let plan = match rng.below(100) {
        40..=57 if deployed => plan_ft_transfer(ctx, rng, world, serial),
        58..=62 if deployed => plan_ft_mint(ctx, rng, world),
        63..=72 if deployed => plan_nft_mint(ctx, rng, world),
        73..=84 if deployed => plan_nft_move(ctx, rng, world, false),
        85..=87 if deployed => plan_nft_move(ctx, rng, world, true),
        88..=89 => plan_stack(ctx, rng, world, env),
        _ => None,
    };
    match plan {
        Some(p) if cfg.sponsored_call_per_mille > 0 => Ok(sponsor_call(ctx, rng, world, p)),
        Some(p) => Ok(p),
        None => plan_stx_transfer(ctx, rng, world, serial),
    }
}

/// Gives an FT or NFT call a sponsor (another account that can pay the fee), at the
/// configured rate. Other plans are returned as they are.
fn sponsor_call(ctx: &Ctx, rng: &mut Rng, world: &World, mut plan: Plan) -> Plan {
    let is_token_call = matches!(
        plan.action,
        Action::FtMint { .. }
            | Action::FtTransfer { .. }
            | Action::NftMint
            | Action::NftTransfer { .. }
            | Action::NftBurn { .. }
    );
    if is_token_call && rng.chance(ctx.cfg.sponsored_call_per_mille) {
        let s = other_account(rng, ctx.user_accounts(), plan.origin);
        if world.account(s).spendable() >= u128::from(plan.fee) {
            plan.sponsor = Some(s);
        }
    }
    plan
}

/// A pox-4 `revoke-delegate-stx` by an account whose delegation pox-4 still holds.
fn plan_revoke(ctx: &Ctx, rng: &mut Rng, world: &World, env: BlockEnv) -> Option<Plan> {
    let fee = rng.range(1_000, 20_000);
    let origin = find_account(rng, world, ctx.user_accounts(), |i, w| {
        w.revocable(&Holder::Seed(i), env.burn_height).is_some()
            && w.account(i).spendable() >= u128::from(fee)
    })?;
    Some(Plan { origin, sponsor: None, fee, action: Action::RevokeDelegateStx })
}

/// One of the failed-deploy cases: usually a new deploy that fails (at runtime or in
/// analysis), sometimes the fixed version under the name of an earlier failure, which may be
/// followed by a duplicate in the mempool.
fn plan_deploy(ctx: &Ctx, rng: &mut Rng, world: &World, serial: u64) -> Option<Plan> {
    let fee = rng.range(20_000, 120_000);
    let affords = |i: u32, w: &World| w.account(i).spendable() >= u128::from(fee);
    if !world.retry_deploys.is_empty() && rng.chance(400) {
        let slot = rng.index(world.retry_deploys.len());
        let failed = &world.retry_deploys[slot];
        if affords(failed.sender, world) {
            let duplicate = rng.chance(500);
            let action = Action::Deploy(Box::new(DeployPlan {
                case: failed.case,
                name: failed.name.clone(),
                retry: Some(slot),
                duplicate,
            }));
            return Some(Plan { origin: failed.sender, sponsor: None, fee, action });
        }
    }
    let origin = find_account(rng, world, ctx.user_accounts(), affords)?;
    let case = if rng.chance(500) { DeployCase::Runtime } else { DeployCase::Analysis };
    let name = format!("{}-{serial}", case.family());
    let action = Action::Deploy(Box::new(DeployPlan { case, name, retry: None, duplicate: false }));
    Some(Plan { origin, sponsor: None, fee, action })
}

fn plan_stx_transfer(ctx: &Ctx, rng: &mut Rng, world: &World, serial: u64) -> Result<Plan, Invariant> {
    let users = ctx.user_accounts();
    let fee = rng.range(180, 3_000);
    let min = u128::from(fee) + 100 * STX;
    let origin = find_account(rng, world, users, |i, w| w.account(i).spendable() >= min)
        .ok_or_else(|| Invariant("no account can send STX".into()))?;
    let to = other_account(rng, users, origin);
    // At most 1% of what the sender can spend, so balances drift but never run dry.
    let cap = (world.account(origin).spendable() / 100).min(50_000 * STX);
    let amount = rng.range(1, u64::try_from(cap).unwrap_or(u64::MAX));
    let memo = memo(rng, serial, 250);
    // A sponsor (another account paying the fee) for some transfers.
    let sponsor = if rng.chance(150) {
        let s = other_account(rng, users, origin);
        (world.account(s).spendable() >= u128::from(fee)).then_some(s)
    } else {
        None
    };
    Ok(Plan { origin, sponsor, fee, action: Action::StxTransfer { to, amount, memo } })
}

fn plan_ft_transfer(ctx: &Ctx, rng: &mut Rng, world: &World, serial: u64) -> Option<Plan> {
    let users = ctx.user_accounts();
    let fee = rng.range(1_000, 20_000);
    let origin = find_account(rng, world, users, |i, w| {
        w.account(i).ft > 0 && w.account(i).spendable() >= u128::from(fee)
    })?;
    let held = world.account(origin).ft;
    let to = other_account(rng, users, origin);
    let (amount, pc) = match rng.below(100) {
        // More than the sender holds: `ft-transfer?` returns (err u1).
        0..=9 => (held + u128::from(rng.range(1, 1_000)), FtPostCondition::None),
        10..=14 => (rng_u128(rng, 1, held), FtPostCondition::Wrong),
        _ => {
            let pc = if rng.chance(500) { FtPostCondition::Exact } else { FtPostCondition::None };
            (rng_u128(rng, 1, held.min(u128::from(u64::MAX / 2))), pc)
        }
    };
    let memo = memo(rng, serial, 200);
    Some(Plan { origin, sponsor: None, fee, action: Action::FtTransfer { to, amount, memo, pc } })
}

fn rng_u128(rng: &mut Rng, lo: u128, hi: u128) -> u128 {
    let hi = u64::try_from(hi).unwrap_or(u64::MAX);
    u128::from(rng.range(u64::try_from(lo).unwrap_or(u64::MAX), hi))
}

fn plan_ft_mint(ctx: &Ctx, rng: &mut Rng, world: &World) -> Option<Plan> {
    let fee = rng.range(1_000, 20_000);
    if world.account(ctx.deployer).spendable() < u128::from(fee) {
        return None;
    }
    let to = rng.below(u64::from(ctx.user_accounts())) as u32;
    let amount = u128::from(rng.range(1_000_000, 1_000_000_000));
    Some(Plan { origin: ctx.deployer, sponsor: None, fee, action: Action::FtMint { to, amount } })
}

fn plan_nft_mint(ctx: &Ctx, rng: &mut Rng, world: &World) -> Option<Plan> {
    if world.nfts.len() >= NFT_CAP {
        return None;
    }
    let fee = rng.range(1_000, 20_000);
    let origin =
        find_account(rng, world, ctx.user_accounts(), |i, w| w.account(i).spendable() >= u128::from(fee))?;
    Some(Plan { origin, sponsor: None, fee, action: Action::NftMint })
}

fn plan_nft_move(ctx: &Ctx, rng: &mut Rng, world: &World, burn: bool) -> Option<Plan> {
    if world.nfts.is_empty() {
        return None;
    }
    let slot = rng.index(world.nfts.len());
    let (token, owner) = world.nfts[slot];
    let fee = rng.range(1_000, 20_000);
    if world.account(owner).spendable() < u128::from(fee) {
        return None;
    }
    let action = if burn {
        Action::NftBurn { slot, token }
    } else {
        let to = other_account(rng, ctx.user_accounts(), owner);
        Action::NftTransfer { slot, token, to, with_pc: rng.chance(500) }
    };
    Some(Plan { origin: owner, sponsor: None, fee, action })
}

fn plan_stack(ctx: &Ctx, rng: &mut Rng, world: &World, env: BlockEnv) -> Option<Plan> {
    let fee = rng.range(5_000, 50_000);
    let need = 2 * POX_MIN_STACK + u128::from(fee);
    let origin = find_account(rng, world, ctx.user_accounts(), |i, w| {
        w.account(i).locked == 0
            && w.account(i).spendable() >= need
            && !w.delegated(&Holder::Seed(i), env.burn_height)
    })?;
    // Half of what it can spend, in whole STX.
    let amount = (world.account(origin).spendable() - u128::from(fee)) / 2 / STX * STX;
    let period = rng.range(1, 3);
    let auth_id = u128::from(rng.next_u64());
    let key = ctx.key(origin);
    let addr = pox_addr(key);
    let grant = SignerGrant {
        pox_addr: &addr,
        reward_cycle: reward_cycle(env.burn_height),
        period,
        max_amount: amount,
        auth_id,
    };
    let signer_sig = pox4_signer_signature(ctx, key, &grant);
    let stacking = StackStx {
        amount,
        pox_addr: addr.clone(),
        start_burn_height: env.burn_height,
        period,
        signer_sig: Some(signer_sig.to_vec()),
        signer_key: key.public_key.to_compressed().to_vec(),
        max_amount: amount,
        auth_id,
    };
    Some(Plan { origin, sponsor: None, fee, action: Action::StackStx(Box::new(stacking)) })
}

/// A `delegate-stx` by an account that neither stacks nor has a delegation in force (pox-4
/// refuses both), to one of the pools: some without an end, some ending a few burn blocks
/// later (so delegations expire within a short chain), some naming a PoX address.
fn plan_delegate(ctx: &Ctx, rng: &mut Rng, world: &World, env: BlockEnv) -> Option<Plan> {
    let fee = rng.range(1_000, 20_000);
    let pools = DELEGATION_POOLS;
    let origin = find_account(rng, world, ctx.user_accounts(), |i, w| {
        !pools.contains(&i)
            && w.account(i).locked == 0
            && w.account(i).spendable() > u128::from(fee) + STX
            && !w.delegated(&Holder::Seed(i), env.burn_height)
    })?;
    let pool = pools[rng.index(pools.len())];
    let amount = u128::from(rng.range(1, 1_000_000)) * STX;
    let until = rng.chance(500).then(|| env.burn_height + rng.range(2, 20));
    let pox_addr = rng.chance(500).then(|| pox_addr(ctx.key(origin)));
    let delegate_to = ctx.key(pool).principal.clone();
    let action = Action::DelegateStx(Delegation { amount, delegate_to, until, pox_addr });
    Some(Plan { origin, sponsor: None, fee, action })
}

pub(super) fn optional(v: Option<Value>) -> Value {
    match v {
        Some(v) => Value::OptionalSome(Box::new(v)),
        None => Value::OptionalNone,
    }
}

/// The payload and post-conditions of a plan.
fn payload(ctx: &Ctx, plan: &Plan) -> (Payload, Vec<PostCondition>) {
    let key = |i: u32| ctx.key(i);
    let call =
        |contract: &stacks_codec::address::ContractId, f: &str, args: Vec<Value>| Payload::ContractCall {
            contract: contract.clone(),
            function_name: f.to_string(),
            function_args: args,
        };
    let origin = key(plan.origin);
    match &plan.action {
        Action::StxTransfer { to, amount, memo } => (
            Payload::TokenTransfer {
                recipient: Principal::Standard(key(*to).address),
                amount: *amount,
                memo: memo.unwrap_or([0; 34]),
            },
            Vec::new(),
        ),
        Action::FtMint { to, amount } => {
            (call(&ctx.ft_contract, "mint", vec![uint(*amount), key(*to).principal.clone()]), Vec::new())
        }
        Action::FtTransfer { to, amount, memo, pc } => {
            let memo_arg = match memo {
                Some(m) => Value::OptionalSome(Box::new(Value::Buffer(m.to_vec()))),
                None => Value::OptionalNone,
            };
            let args = vec![uint(*amount), origin.principal.clone(), key(*to).principal.clone(), memo_arg];
            let stated = match pc {
                FtPostCondition::None => None,
                FtPostCondition::Exact => Some(*amount),
                FtPostCondition::Wrong => Some(*amount + 1),
            };
            let pcs = stated
                .map(|amount| PostCondition::Fungible {
                    principal: PostConditionPrincipal::Origin,
                    asset: AssetInfo {
                        contract: ctx.ft_contract.clone(),
                        asset_name: super::contracts::FT_ASSET.into(),
                    },
                    code: FungibleConditionCode::SentEq,
                    amount: u64::try_from(amount).unwrap_or(u64::MAX),
                })
                .into_iter()
                .collect();
            (call(&ctx.ft_contract, "transfer", args), pcs)
        }
        Action::NftMint => (call(&ctx.nft_contract, "mint", vec![origin.principal.clone()]), Vec::new()),
        Action::NftTransfer { token, to, with_pc, .. } => {
            let args = vec![uint(*token), origin.principal.clone(), key(*to).principal.clone()];
            let pcs = with_pc
                .then(|| PostCondition::Nonfungible {
                    principal: PostConditionPrincipal::Origin,
                    asset: AssetInfo {
                        contract: ctx.nft_contract.clone(),
                        asset_name: super::contracts::NFT_ASSET.into(),
                    },
                    value: uint(*token),
                    code: NonfungibleConditionCode::Sent,
                })
                .into_iter()
                .collect();
            (call(&ctx.nft_contract, "transfer", args), pcs)
        }
        Action::NftBurn { token, .. } => (call(&ctx.nft_contract, "burn", vec![uint(*token)]), Vec::new()),
        Action::StackStx(s) => (call(&ctx.pox_contract, "stack-stx", s.args()), Vec::new()),
        Action::RevokeDelegateStx => (call(&ctx.pox_contract, "revoke-delegate-stx", Vec::new()), Vec::new()),
        Action::Deploy(d) => (deploy_payload(&d.name, d.case, d.retry.is_some()), Vec::new()),
        Action::Pox5(c) => (call(&ctx.pox5_contract, c.name, super::pox5::args(c)), Vec::new()),
        Action::Bns(c) => (call(&ctx.bns_contract, c.function, c.args.clone()), Vec::new()),
        Action::DelegateStx(d) => {
            let args = vec![
                uint(d.amount),
                d.delegate_to.clone(),
                optional(d.until.map(uint)),
                optional(d.pox_addr.clone()),
            ];
            (call(&ctx.pox_contract, "delegate-stx", args), Vec::new())
        }
    }
}

fn deploy_payload(name: &str, case: DeployCase, fixed: bool) -> Payload {
    Payload::SmartContract {
        name: name.into(),
        code_body: case.source(fixed).into(),
        clarity_version: Some(ClarityVersion::Clarity2),
    }
}

/// Runs a plan against the ledger: the fee and nonces first (as a node does), then the
/// payload's effects and events.
fn execute(ctx: &Ctx, world: &mut World, plan: &Plan, env: BlockEnv) -> Result<Outcome, Invariant> {
    let fee = u128::from(plan.fee);
    world.pay_fee(plan.sponsor.unwrap_or(plan.origin), fee)?;
    world.bump_nonce(plan.origin);
    if let Some(s) = plan.sponsor {
        world.bump_nonce(s);
    }
    let c32 = |i: u32| ctx.key(i).c32.clone();
    let success = |events, result, cost| Outcome::new("success", result, events, cost);
    let origin = plan.origin;
    Ok(match &plan.action {
        Action::StxTransfer { to, amount, memo } => {
            world.transfer_stx(origin, *to, u128::from(*amount))?;
            let body = EventBody::StxTransfer {
                sender: c32(origin),
                recipient: c32(*to),
                amount: u128::from(*amount),
                memo: memo.map(hex::encode),
            };
            success(vec![(true, body)], ok(Value::Bool(true)), Cost::default())
        }
        Action::FtMint { to, amount } => {
            world.mint_ft(*to, *amount);
            let body =
                EventBody::FtMint { asset: ctx.ft_asset.clone(), recipient: c32(*to), amount: *amount };
            success(vec![(true, body)], ok(Value::Bool(true)), COST_FT_MINT)
        }
        Action::FtTransfer { to, amount, memo, pc } => {
            if *amount > world.account(origin).ft {
                // `try!` hands back ft-transfer?'s (err u1); the VM rolls the call back.
                return Ok(Outcome::new(
                    "abort_by_response",
                    Value::ResponseErr(Box::new(uint(1u8))),
                    Vec::new(),
                    COST_FT_TRANSFER,
                ));
            }
            let committed = *pc != FtPostCondition::Wrong;
            let mut events = vec![EventBody::FtTransfer {
                asset: ctx.ft_asset.clone(),
                sender: c32(origin),
                recipient: c32(*to),
                amount: *amount,
            }];
            if let Some(m) = memo {
                events.push(EventBody::Print {
                    contract_identifier: ctx.ft_contract_id.clone(),
                    raw_value: hex(&Value::Buffer(m.to_vec())),
                });
            }
            let print = Value::Tuple(vec![
                ("action".into(), ascii("transfer")),
                ("amount".into(), uint(*amount)),
                ("recipient".into(), ctx.key(*to).principal.clone()),
                ("sender".into(), ctx.key(origin).principal.clone()),
            ]);
            events.push(EventBody::Print {
                contract_identifier: ctx.ft_contract_id.clone(),
                raw_value: hex(&print),
            });
            if committed {
                world.transfer_ft(origin, *to, *amount)?;
            }
            // The call itself returned (ok true); the post-condition check then failed and the
            // node reports the rolled-back events as uncommitted.
            Outcome::new(
                if committed { "success" } else { "abort_by_post_condition" },
                ok(Value::Bool(true)),
                events.into_iter().map(|e| (committed, e)).collect(),
                COST_FT_TRANSFER,
            )
        }
        Action::NftMint => {
            let id = world.mint_nft(origin);
            let print = Value::Tuple(vec![
                ("action".into(), ascii("mint")),
                ("recipient".into(), ctx.key(origin).principal.clone()),
                ("token-id".into(), uint(id)),
            ]);
            let events = vec![
                (
                    true,
                    EventBody::NftMint {
                        asset: ctx.nft_asset.clone(),
                        recipient: c32(origin),
                        raw_value: hex(&uint(id)),
                    },
                ),
                (
                    true,
                    EventBody::Print {
                        contract_identifier: ctx.nft_contract_id.clone(),
                        raw_value: hex(&print),
                    },
                ),
            ];
            success(events, ok(uint(id)), COST_NFT_MINT)
        }
        Action::NftTransfer { slot, token, to, .. } => {
            world.move_nft(*slot, *to);
            let body = EventBody::NftTransfer {
                asset: ctx.nft_asset.clone(),
                sender: c32(origin),
                recipient: c32(*to),
                raw_value: hex(&uint(*token)),
            };
            success(vec![(true, body)], ok(Value::Bool(true)), COST_NFT_TRANSFER)
        }
        Action::NftBurn { slot, token } => {
            world.burn_nft(*slot);
            let body = EventBody::NftBurn {
                asset: ctx.nft_asset.clone(),
                sender: c32(origin),
                raw_value: hex(&uint(*token)),
            };
            success(vec![(true, body)], ok(Value::Bool(true)), COST_NFT_BURN)
        }
        Action::StackStx(s) => {
            pox4::stack_stx(ctx, world, &pox4::seed_caller(ctx, origin), s, ctx.key(origin).btc.clone())?
        }
        Action::DelegateStx(d) => {
            pox4::delegate_stx(ctx, world, &pox4::seed_caller(ctx, origin), d, env.burn_height)
        }
        Action::RevokeDelegateStx => {
            pox4::revoke_delegate_stx(ctx, world, &pox4::seed_caller(ctx, origin), env.burn_height)?
        }
        Action::Deploy(d) => execute_deploy(ctx, world, origin, d),
        Action::Pox5(c) => {
            world.pox5 = c.after.clone();
            let print = super::pox5::print(c);
            let body = EventBody::Print {
                contract_identifier: ctx.pox5_contract_id.clone(),
                raw_value: hex(&print),
            };
            Outcome::new("success", ok(Value::Bool(true)), vec![(true, body)], COST_POX5_CALL)
        }
        Action::Bns(c) => {
            if c.status == "success" {
                world.burn_stx(origin, c.burn)?;
                world.bns = c.after.clone();
            }
            let events = c.events.iter().map(|e| (true, e.clone())).collect();
            Outcome::new(c.status, c.result.clone(), events, COST_BNS_CALL)
        }
    })
}

/// A deploy of the failed-deploy cases, as `StacksChainState::process_transaction_payload`
/// reports it: a failure is `abort_by_response` with `(err none)`, no events, the fee paid and
/// the name left free; the interface is there only when the analysis passed.
fn execute_deploy(ctx: &Ctx, world: &mut World, origin: u32, d: &DeployPlan) -> Outcome {
    let fixed = d.retry.is_some();
    let abi = ctx.deploy_case_abi(d.case, fixed).cloned();
    let len = d.case.source(fixed).len() as u64;
    let deployed = FailedDeploy { sender: origin, name: d.name.clone(), case: d.case };
    if let Some(slot) = d.retry {
        world.retry_deploys.remove(slot);
        if d.duplicate {
            world.pending_duplicate = Some(deployed);
        }
        let cost = Cost {
            read_count: 6,
            read_length: len,
            runtime: len * 130,
            write_count: 5,
            write_length: len + 400,
        };
        return Outcome { abi, ..Outcome::new("success", ok(Value::Bool(true)), Vec::new(), cost) };
    }
    world.remember_failed_deploy(deployed);
    let cost = match d.case {
        // Analysis, then the top-level code up to the abort; nothing is written.
        DeployCase::Runtime => {
            Cost { read_count: 3, read_length: len, runtime: len * 110, write_count: 0, write_length: 0 }
        }
        // The analysis only.
        DeployCase::Analysis => Cost { runtime: len * 60, ..Cost::default() },
    };
    Outcome {
        abi,
        vm_error: Some(d.case.vm_error().to_string()),
        ..Outcome::new(
            "abort_by_response",
            Value::ResponseErr(Box::new(Value::OptionalNone)),
            Vec::new(),
            cost,
        )
    }
}

fn anchor_mode(rng: &mut Rng, placement: Placement) -> AnchorMode {
    match (placement, rng.chance(200)) {
        (Placement::Anchored, true) => AnchorMode::OnChainOnly,
        (Placement::Microblock, true) => AnchorMode::OffChainOnly,
        _ => AnchorMode::Any,
    }
}

pub(super) fn gen_tx(signed: Signed, outcome: Outcome, fee: u128) -> GenTx {
    let events = outcome
        .events
        .into_iter()
        .map(|(committed, body)| TxEvent { txid: signed.txid.clone(), event_index: 0, committed, body })
        .collect();
    GenTx {
        receipt: Receipt {
            txid: signed.txid,
            tx_index: 0,
            raw_tx: signed.raw_hex,
            status: outcome.status,
            raw_result: hex(&outcome.result),
            execution_cost: outcome.cost,
            contract_abi: outcome.abi,
            vm_error: outcome.vm_error,
            contract_interface_key: false,
            microblock: None,
        },
        events,
        fee,
        rbf_original: None,
        attachment: None,
    }
}

/// A token transfer submitted to the devnet node (`node.rs`), already applied to the ledger:
/// its receipt and event as a block carries them.
pub fn submitted_transfer(
    signed: Signed,
    fee: u128,
    sender: String,
    recipient: String,
    amount: u128,
    memo: [u8; 34],
) -> GenTx {
    let memo = memo.iter().any(|b| *b != 0).then(|| hex::encode(memo));
    let body = EventBody::StxTransfer { sender, recipient, amount, memo };
    let outcome = Outcome::new("success", ok(Value::Bool(true)), vec![(true, body)], Cost::default());
    gen_tx(signed, outcome, fee)
}

/// A user transaction. With `rbf`, a cheaper copy (same nonce) is signed too: it went into the
/// mempool first and this one replaced it.
pub fn user_tx(
    ctx: &Ctx,
    rng: &mut Rng,
    world: &mut World,
    env: BlockEnv,
    placement: Placement,
    rbf: bool,
    serial: u64,
) -> Result<GenTx, DevnetError> {
    // A deploy that just succeeded may have had a duplicate submitted (a node's mempool admits
    // it until the contract exists, the miner cannot include it): the sender then replaces it
    // by fee with its next transaction, which this one is.
    let duplicate = world.pending_duplicate.take().and_then(|d| plan_after_duplicate(ctx, rng, world, d));
    let (plan, duplicate) = match duplicate {
        Some((plan, dup)) => (plan, Some(dup)),
        None => (choose(ctx, rng, world, env, placement, serial)?, None),
    };
    let anchor = anchor_mode(rng, placement);
    let (payload, pcs) = payload(ctx, &plan);
    let signers = |fee| Signers {
        origin: ctx.key(plan.origin),
        origin_nonce: world.account(plan.origin).nonce,
        sponsor: plan.sponsor.map(|s| (ctx.key(s), world.account(s).nonce)),
        fee,
    };
    let rbf_original = match duplicate {
        Some((d, fee)) => {
            Some(sign(ctx, &signers(fee), anchor, Vec::new(), deploy_payload(&d.name, d.case, true))?)
        }
        None if rbf && plan.fee > 1 => {
            let cheaper = rng.range(plan.fee / 2, plan.fee - 1).max(1);
            Some(sign(ctx, &signers(cheaper), anchor, pcs.clone(), payload.clone())?)
        }
        None => None,
    };
    let signed = sign(ctx, &signers(plan.fee), anchor, pcs, payload)?;
    let outcome = execute(ctx, world, &plan, env)?;
    let mut tx = gen_tx(signed, outcome, u128::from(plan.fee));
    tx.rbf_original = rbf_original;
    if let Action::Bns(c) = &plan.action {
        tx.attachment = c.attachment.clone().filter(|_| c.status == "success");
    }
    Ok(tx)
}

/// The transaction that replaces the duplicate of a deploy `d` in the mempool: a transfer from
/// the same sender with the same nonce and a higher fee. Returns it with the duplicate's fee;
/// `None` when the sender cannot afford it.
fn plan_after_duplicate(
    ctx: &Ctx,
    rng: &mut Rng,
    world: &World,
    d: FailedDeploy,
) -> Option<(Plan, (FailedDeploy, u64))> {
    let fee = rng.range(150_000, 300_000);
    let duplicate_fee = rng.range(20_000, 120_000);
    let amount = rng.range(1, 100) * 1_000;
    if world.account(d.sender).spendable() < u128::from(fee + amount) {
        return None;
    }
    let to = other_account(rng, ctx.user_accounts(), d.sender);
    let action = Action::StxTransfer { to, amount, memo: None };
    Some((Plan { origin: d.sender, sponsor: None, fee, action }, (d, duplicate_fee)))
}

/// The block's coinbase, from its miner (fee 0; the reward arrives when it matures).
pub fn coinbase(ctx: &Ctx, rng: &mut Rng, world: &mut World, miner: u32) -> Result<GenTx, DevnetError> {
    let signers =
        Signers { origin: ctx.key(miner), origin_nonce: world.account(miner).nonce, sponsor: None, fee: 0 };
    let payload = Payload::Coinbase { data: rng.bytes32(), alt_recipient: None, vrf_proof: None };
    let signed = sign(ctx, &signers, AnchorMode::OnChainOnly, Vec::new(), payload)?;
    world.bump_nonce(miner);
    let outcome = Outcome::new("success", ok(Value::Bool(true)), Vec::new(), Cost::default());
    Ok(gen_tx(signed, outcome, 0))
}

/// Deploys the FT and NFT contracts from the deployer account, one transaction each.
pub fn deploys(ctx: &Ctx, rng: &mut Rng, world: &mut World) -> Result<Vec<GenTx>, DevnetError> {
    let contracts = [
        (super::contracts::FT_CONTRACT, FT_SOURCE, &ctx.ft_abi),
        (super::contracts::NFT_CONTRACT, NFT_SOURCE, &ctx.nft_abi),
    ];
    let mut out = Vec::new();
    for (name, source, abi) in contracts {
        let fee = rng.range(50_000, 150_000);
        let deployer = ctx.deployer;
        let signers = Signers {
            origin: ctx.key(deployer),
            origin_nonce: world.account(deployer).nonce,
            sponsor: None,
            fee,
        };
        let payload = Payload::SmartContract {
            name: name.into(),
            code_body: source.into(),
            clarity_version: Some(ClarityVersion::Clarity2),
        };
        let signed = sign(ctx, &signers, AnchorMode::Any, Vec::new(), payload)?;
        world.pay_fee(deployer, u128::from(fee))?;
        world.bump_nonce(deployer);
        let len = source.len() as u64;
        let cost = Cost {
            read_count: 8,
            read_length: len,
            runtime: len * 130,
            write_count: 9,
            write_length: len + 1_000,
        };
        let outcome = Outcome {
            abi: Some(abi.clone()),
            ..Outcome::new("success", ok(Value::Bool(true)), Vec::new(), cost)
        };
        out.push(gen_tx(signed, outcome, u128::from(fee)));
    }
    world.contracts_deployed = true;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DevnetConfig;

    #[test]
    fn generated_tuples_are_canonical() {
        // Every tuple above is written in sorted key order, which is what the chain stores.
        let ctx = Ctx::new(DevnetConfig { accounts: 4, miners: 2, ..DevnetConfig::default() }).unwrap();
        let mut world = World::genesis(&[u128::from(u64::MAX); 6]);
        let mut rng = Rng::new(3);
        let env = BlockEnv { burn_height: 33, height: 40 };
        deploys(&ctx, &mut rng, &mut world).unwrap();
        let mut kinds = std::collections::BTreeSet::new();
        for serial in 0..400 {
            let tx = user_tx(&ctx, &mut rng, &mut world, env, Placement::Anchored, false, serial).unwrap();
            kinds.insert(tx.receipt.status);
            assert_tuples_canonical(&tx);
            // No blocks here, so no reward owes the fees yet: count them as unassigned.
            world.unassigned_stream_fees = world.pending_fees;
            world.check().unwrap();
        }
        assert_eq!(kinds.len(), 3, "{kinds:?}");
    }

    /// The transaction's print values and result are canonical Clarity (tuple keys sorted).
    fn assert_tuples_canonical(tx: &GenTx) {
        for e in &tx.events {
            if let EventBody::Print { raw_value, .. } = &e.body {
                let v = Value::deserialize(&stacks_codec::decode_hex(raw_value).unwrap()).unwrap();
                assert_eq!(v, v.canonical(), "{}", v.repr());
            }
        }
        let r = Value::deserialize(&stacks_codec::decode_hex(&tx.receipt.raw_result).unwrap()).unwrap();
        assert_eq!(r, r.canonical());
    }

    #[test]
    fn real_chain_cases_keep_the_ledger_and_tuples_canonical() {
        let cfg = DevnetConfig { accounts: 6, miners: 2, ..DevnetConfig::default() }.with_real_chain_cases();
        let ctx =
            Ctx::new(DevnetConfig { revoke_per_mille: 200, failed_deploy_per_mille: 100, ..cfg }).unwrap();
        let mut world = World::genesis(&[u128::from(u64::MAX); 8]);
        let mut rng = Rng::new(5);
        deploys(&ctx, &mut rng, &mut world).unwrap();
        let (mut revokes, mut sponsored, mut failed_deploys) = (0, 0, 0);
        for serial in 0..600 {
            let env = BlockEnv { burn_height: 30 + serial / 20, height: 30 + serial / 20 };
            let tx = user_tx(&ctx, &mut rng, &mut world, env, Placement::Anchored, false, serial).unwrap();
            let raw = stacks_codec::decode_hex(&tx.receipt.raw_tx).unwrap();
            let decoded = stacks_codec::tx::Transaction::deserialize(&raw).unwrap();
            sponsored += usize::from(decoded.is_sponsored());
            revokes += usize::from(tx.receipt.raw_tx.contains(&hex::encode("revoke-delegate-stx")));
            failed_deploys += usize::from(tx.receipt.vm_error.is_some());
            assert_tuples_canonical(&tx);
            world.unassigned_stream_fees = world.pending_fees;
            world.check().unwrap();
        }
        assert!(
            revokes > 5 && sponsored > 20 && failed_deploys > 10,
            "{revokes} {sponsored} {failed_deploys}"
        );
    }
}
