//! The devnet as a Stacks node (`devnet --serve-node`): what it does with a transaction
//! submitted to `POST /v2/transactions`. Pure: decode with our codec, check it against the
//! generator's own ledger as a node's mempool admission does, run it, and hand back the
//! receipt the next block will carry. The HTTP side is `node_server.rs`.
//!
//! Scope: token transfers and pox-4's `stack-stx`, `delegate-stx` and `revoke-delegate-stx`
//! (`pox4.rs`: what the Rosetta Construction API builds), from single-signature or multisig
//! origins of every hash mode, standard or sponsored by a single-sig or multisig sponsor; other
//! payloads are refused (`NotSupported`). Transaction rules are Epoch 3's: SIP-027's
//! non-sequential multisig modes are accepted (an Epoch 2.5 node refuses them), though the
//! blocks keep the 2.x shape (a coinbase each). Each nonce (the origin's, and the sponsor's)
//! must be the account's next one (a real node would also queue a later nonce). A contract call
//! whose arguments type-check is admitted and run like a node runs it: when pox-4 refuses it
//! (already stacked, a bad signer signature, ...) it is mined as `(err code)`, the fee paid.
//! Accepted transactions take effect at once in the node's view (`/v2/accounts`), executed as
//! the next block will, and are mined into it.

use serde_json::{json, Value as Json};
use stacks_codec::address::Principal;
use stacks_codec::sign::verify_auth;
use stacks_codec::to_hex_prefixed;
use stacks_codec::tx::{Payload, Transaction};

use super::config::Ctx;
use super::pox4;
use super::txbuild::Signed;
use super::txgen::{self, BlockEnv, GenTx};
use super::world::{Account, World};

/// µSTX per byte a transaction must at least pay (stacks-core's minimum fee rate), and what
/// `/v2/fees/transfer` answers.
pub const MIN_FEE_RATE: u64 = 1;

/// A refusal, as a Stacks node's `POST /v2/transactions` answers it (HTTP 400).
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    /// The node's `reason` (`BadNonce`, `NotEnoughFunds`, `SignatureValidation`, ...).
    pub reason: &'static str,
    pub reason_data: Option<Json>,
    pub txid: Option<String>,
    pub message: String,
}

impl Rejection {
    fn new(reason: &'static str, message: impl Into<String>) -> Box<Rejection> {
        Box::new(Rejection { reason, reason_data: None, txid: None, message: message.into() })
    }

    fn with_data(mut self: Box<Self>, data: Json) -> Box<Rejection> {
        self.reason_data = Some(data);
        self
    }

    /// The node's JSON body.
    pub fn to_json(&self) -> Json {
        let mut body =
            json!({ "error": "transaction rejected", "reason": self.reason, "message": self.message });
        if let Some(data) = &self.reason_data {
            body["reason_data"] = data.clone();
        }
        if let Some(txid) = &self.txid {
            body["txid"] = txid.trim_start_matches("0x").into();
        }
        body
    }
}

/// The account an address names: one of the seed's keys, else an external one.
pub fn account<'a>(ctx: &Ctx, world: &'a World, address: &str) -> Option<&'a Account> {
    match ctx.keys.iter().position(|k| k.c32 == address) {
        Some(i) => world.accounts.get(i),
        None => world.external.get(address),
    }
}

fn account_mut<'a>(ctx: &Ctx, world: &'a mut World, address: &str) -> &'a mut Account {
    match ctx.keys.iter().position(|k| k.c32 == address) {
        Some(i) => &mut world.accounts[i],
        None => world.external.entry(address.to_owned()).or_default(),
    }
}

/// Checks `raw` as a node's mempool admission does and, if it passes, runs it on `world` in
/// `env` (the next block's) and returns what that block carries.
pub fn admit(ctx: &Ctx, world: &mut World, env: BlockEnv, raw: &[u8]) -> Result<GenTx, Box<Rejection>> {
    let tx = Transaction::deserialize(raw)
        .map_err(|e| Rejection::new("Deserialization", format!("not a transaction: {e}")))?;
    let txid = tx.txid_hex();
    admit_tx(ctx, world, env, &tx, raw).map_err(|mut r| {
        r.txid = Some(txid);
        r
    })
}

/// What a submitted transaction does, once its payload passed admission.
enum Effect {
    Transfer { recipient: String, amount: u64, memo: [u8; 34] },
    Pox(pox4::PoxCall),
}

fn admit_tx(
    ctx: &Ctx,
    world: &mut World,
    env: BlockEnv,
    tx: &Transaction,
    raw: &[u8],
) -> Result<GenTx, Box<Rejection>> {
    if tx.version != ctx.tx_version || tx.chain_id != ctx.chain_id {
        return Err(Rejection::new(
            "BadTransactionVersion",
            format!("chain id {:#010x} and version {:?} are not this devnet's", tx.chain_id, tx.version),
        ));
    }
    verify_auth(tx).map_err(|e| Rejection::new("SignatureValidation", e.to_string()))?;
    let sender = tx.origin_address().to_c32();
    let effect = match &tx.payload {
        Payload::TokenTransfer { recipient, amount, memo } => {
            let Principal::Standard(to) = recipient else {
                return Err(Rejection::new("NotSupported", "the devnet node pays standard principals only"));
            };
            if to.is_mainnet() != (ctx.tx_version == stacks_codec::tx::TransactionVersion::Mainnet) {
                return Err(Rejection::new(
                    "BadAddressVersionByte",
                    format!("{} is on another network", to.to_c32()),
                ));
            }
            let recipient = to.to_c32();
            if sender == recipient {
                return Err(Rejection::new("TransferRecipientCannotEqualSender", sender)
                    .with_data(json!({ "recipient": recipient })));
            }
            if *amount == 0 {
                return Err(Rejection::new("TransferAmountMustBePositive", "the amount is 0"));
            }
            Effect::Transfer { recipient, amount: *amount, memo: *memo }
        }
        Payload::ContractCall { contract, function_name, function_args } => {
            let call =
                pox4::parse_call(ctx, contract, function_name, function_args).map_err(|(reason, m)| {
                    Rejection::new(reason, m.clone()).with_data(json!({ "message": m }))
                })?;
            Effect::Pox(call)
        }
        _ => {
            return Err(Rejection::new(
                "NotSupported",
                "the devnet node accepts token transfers and pox-4 stacking calls only",
            ))
        }
    };
    // Locks that expire at the next block's burn height are spendable in it.
    world.unlock(env.burn_height);
    // The fee is the payer's: the sponsor's when sponsored, else the origin's.
    let fee = tx.fee();
    let sponsor = tx.sponsor_address().map(|a| a.to_c32());
    let mut nonces = vec![(sender.clone(), tx.nonce(), true)];
    if let (Some(payer), Some(n)) = (&sponsor, tx.sponsor_nonce()) {
        nonces.push((payer.clone(), n, false));
    }
    for (principal, nonce, is_origin) in &nonces {
        let expected = account(ctx, world, principal).map_or(0, |a| a.nonce);
        if *nonce != expected {
            return Err(Rejection::new("BadNonce", format!("nonce {nonce}, expected {expected}")).with_data(
                json!({ "expected": expected, "actual": nonce, "principal": principal, "is_origin": is_origin }),
            ));
        }
    }
    let min_fee = MIN_FEE_RATE * raw.len() as u64;
    if fee < min_fee {
        return Err(Rejection::new("FeeTooLow", format!("fee {fee} below {min_fee}"))
            .with_data(json!({ "expected": min_fee, "actual": fee })));
    }
    // What the node checks is spendable: the fee, and a transfer's amount (a contract call's
    // own spending is the contract's to check).
    let payer = sponsor.clone().unwrap_or_else(|| sender.clone());
    let mut debits = vec![(payer.clone(), u128::from(fee))];
    if let Effect::Transfer { amount, .. } = &effect {
        match debits.iter_mut().find(|(p, _)| *p == sender) {
            Some((_, d)) => *d += u128::from(*amount),
            None => debits.push((sender.clone(), u128::from(*amount))),
        }
    }
    for (principal, needed) in &debits {
        let spendable = account(ctx, world, principal).map_or(0, Account::spendable);
        if spendable < *needed {
            return Err(Rejection::new(
                "NotEnoughFunds",
                format!("{principal} can spend {spendable}, needs {needed}"),
            )
            .with_data(
                json!({ "expected": format!("0x{needed:x}"), "actual": format!("0x{spendable:x}") }),
            ));
        }
    }
    // As a node mines it: the fee (pending until the block's reward matures), the nonces, the
    // payload.
    for (principal, needed) in &debits {
        account_mut(ctx, world, principal).balance -= needed;
    }
    for (principal, _, _) in &nonces {
        account_mut(ctx, world, principal).nonce += 1;
    }
    world.pending_fees += u128::from(fee);
    let signed = Signed { txid: tx.txid_hex(), raw_hex: to_hex_prefixed(raw) };
    match effect {
        Effect::Transfer { recipient, amount, memo } => {
            account_mut(ctx, world, &recipient).balance += u128::from(amount);
            Ok(txgen::submitted_transfer(
                signed,
                u128::from(fee),
                sender,
                recipient,
                u128::from(amount),
                memo,
            ))
        }
        Effect::Pox(call) => {
            let caller = pox4::caller_of(ctx, &tx.origin_address());
            let outcome = pox4::run(ctx, world, &caller, &call, env.burn_height)
                .map_err(|e| Rejection::new("ServerFailureOther", e.to_string()))?;
            Ok(txgen::gen_tx(signed, outcome, u128::from(fee)))
        }
    }
}

/// `GET /v2/accounts/{principal}`'s body for an address (zeros for one never seen).
pub fn account_json(ctx: &Ctx, world: &World, address: &str) -> Json {
    let a = account(ctx, world, address).cloned().unwrap_or_default();
    json!({
        "balance": format!("0x{:032x}", a.balance - a.locked),
        "locked": format!("0x{:032x}", a.locked),
        "unlock_height": a.unlock_height,
        "nonce": a.nonce,
        "balance_proof": "",
        "nonce_proof": "",
    })
}

/// `GET /v2/pox`'s body at `burn_height` (the fields of a node's answer the devnet can state:
/// its PoX timing, contract and stacking minimum).
pub fn pox_json(ctx: &Ctx, burn_height: u64) -> Json {
    use super::config::POX_PREPARE_LENGTH;
    use super::config::{cycle_start, reward_cycle, POX_CYCLE_LENGTH, POX_FIRST_BURN_HEIGHT, POX_MIN_STACK};
    let cycle = reward_cycle(burn_height);
    let next_start = cycle_start(cycle + 1);
    let prepare_start = next_start - POX_PREPARE_LENGTH;
    json!({
        "contract_id": ctx.pox_contract_id,
        "first_burnchain_block_height": POX_FIRST_BURN_HEIGHT,
        "current_burnchain_block_height": burn_height,
        "prepare_phase_block_length": POX_PREPARE_LENGTH,
        "reward_phase_block_length": POX_CYCLE_LENGTH - POX_PREPARE_LENGTH,
        "prepare_cycle_length": POX_PREPARE_LENGTH,
        "reward_cycle_length": POX_CYCLE_LENGTH,
        "reward_cycle_id": cycle,
        "min_amount_ustx": u64::try_from(POX_MIN_STACK).unwrap_or(u64::MAX),
        "next_reward_cycle_in": next_start - burn_height,
        "current_cycle": { "id": cycle, "min_threshold_ustx": u64::try_from(POX_MIN_STACK).unwrap_or(u64::MAX), "is_pox_active": true },
        "next_cycle": {
            "id": cycle + 1,
            "min_threshold_ustx": u64::try_from(POX_MIN_STACK).unwrap_or(u64::MAX),
            "prepare_phase_start_block_height": prepare_start,
            "blocks_until_prepare_phase": prepare_start.saturating_sub(burn_height),
            "reward_phase_start_block_height": next_start,
            "blocks_until_reward_phase": next_start - burn_height,
        },
    })
}

#[cfg(test)]
mod tests {
    use stacks_codec::address::{Principal, StacksAddress};
    use stacks_codec::decode_hex;
    use stacks_codec::tx::{AnchorMode, Payload};

    use std::collections::BTreeMap;

    use stacks_codec::clarity::Value;

    use super::*;
    use crate::config::{reward_cycle, POX_MIN_STACK};
    use crate::txbuild::{pox4_signer_signature, pox_addr, sign, SignerGrant, Signers};
    use crate::world::Holder;
    use crate::{DevnetConfig, Generator};
    use ledger_core::events::EventPath;

    /// A short generated chain, then node mode.
    fn node() -> Generator {
        let cfg = DevnetConfig {
            blocks: 3,
            txs_per_block: 2,
            accounts: 6,
            reward_maturity: 2,
            ..DevnetConfig::default()
        };
        let mut g = Generator::new(cfg).unwrap();
        for e in g.by_ref() {
            e.unwrap();
        }
        g.start_node_mode();
        g
    }

    fn transfer(g: &Generator, from: u32, to: StacksAddress, amount: u64, nonce: u64, fee: u64) -> Vec<u8> {
        let ctx = g.ctx_ref();
        let signers = Signers { origin: ctx.key(from), origin_nonce: nonce, sponsor: None, fee };
        let payload = Payload::TokenTransfer { recipient: Principal::Standard(to), amount, memo: [0; 34] };
        decode_hex(&sign(ctx, &signers, AnchorMode::Any, Vec::new(), payload).unwrap().raw_hex).unwrap()
    }

    fn reason(g: &mut Generator, raw: &[u8]) -> &'static str {
        let env = g.next_env();
        let (ctx, world, _) = g.node_parts();
        admit(ctx, world, env, raw).unwrap_err().reason
    }

    #[test]
    fn admits_checks_and_mines_like_a_node() {
        let mut g = node();
        let ctx = g.ctx_ref();
        let sender = ctx.key(1).c32.clone();
        let outsider = StacksAddress::new(ctx.key(1).address.version, [7; 20]);
        let (nonce, spendable) = {
            let a = account(ctx, g.world_ref(), &sender).unwrap();
            (a.nonce, a.spendable())
        };
        let fee = 500;

        assert_eq!(reason(&mut g, &[0xde, 0xad]), "Deserialization");
        let raw = transfer(&g, 1, outsider, 1_000, nonce + 1, fee);
        assert_eq!(reason(&mut g, &raw), "BadNonce");
        let raw = transfer(&g, 1, outsider, 1_000, nonce, 1);
        assert_eq!(reason(&mut g, &raw), "FeeTooLow");
        let too_much = u64::try_from(spendable).unwrap();
        let raw = transfer(&g, 1, outsider, too_much, nonce, fee);
        assert_eq!(reason(&mut g, &raw), "NotEnoughFunds");
        let mut forged = transfer(&g, 1, outsider, 1_000, nonce, fee);
        forged[60] ^= 1; // inside the signature
        assert_eq!(reason(&mut g, &forged), "SignatureValidation");
        let own = g.ctx_ref().key(1).address;
        let raw = transfer(&g, 1, own, 1_000, nonce, fee);
        assert_eq!(reason(&mut g, &raw), "TransferRecipientCannotEqualSender");
        let nothing_changed = account(g.ctx_ref(), g.world_ref(), &sender).unwrap().clone();
        assert_eq!((nothing_changed.nonce, nothing_changed.spendable()), (nonce, spendable));

        let raw = transfer(&g, 1, outsider, 1_000, nonce, fee);
        let env = g.next_env();
        let (ctx, world, queue) = g.node_parts();
        let tx = admit(ctx, world, env, &raw).unwrap();
        let txid = tx.receipt.txid.clone();
        queue.push(tx);
        let a = account(g.ctx_ref(), g.world_ref(), &sender).unwrap();
        assert_eq!((a.nonce, a.spendable()), (nonce + 1, spendable - 1_000 - u128::from(fee)));
        assert_eq!(reason(&mut g, &raw), "BadNonce", "a replay");
        let tip = g.canonical_tip().height;
        g.mine().unwrap();
        assert_eq!(g.canonical_tip().height, tip + 1);
        assert_eq!(g.pending_submitted(), 0);
        let events = g.take_events();
        let block = events.iter().find(|e| e.path == EventPath::NewBlock).expect("a new block");
        assert!(block.payload.contains(txid.trim_start_matches("0x")), "the block carries the tx");
        assert!(!events.iter().any(|e| e.path == EventPath::NewMempoolTx), "announced on arrival, not again");
        let ext = account_json(g.ctx_ref(), g.world_ref(), &outsider.to_c32());
        assert_eq!(ext["balance"], format!("0x{:032x}", 1_000));
        g.check_ledger().unwrap();
    }

    /// A sponsored transfer: the sponsor's nonce is checked and bumped, the sponsor pays the
    /// fee, the origin only the amount; mined, the ledger still adds up.
    #[test]
    fn admits_sponsored_transfers() {
        let mut g = node();
        let ctx = g.ctx_ref();
        let (origin, sponsor) = (ctx.key(2).c32.clone(), ctx.key(3).c32.clone());
        let outsider = StacksAddress::new(ctx.key(2).address.version, [8; 20]);
        let before = |g: &Generator, a: &str| account(g.ctx_ref(), g.world_ref(), a).unwrap().clone();
        let (o, s) = (before(&g, &origin), before(&g, &sponsor));
        let sponsored = |g: &Generator, sponsor_nonce: u64| {
            let ctx = g.ctx_ref();
            let signers = Signers {
                origin: ctx.key(2),
                origin_nonce: o.nonce,
                sponsor: Some((ctx.key(3), sponsor_nonce)),
                fee: 700,
            };
            let payload = Payload::TokenTransfer {
                recipient: Principal::Standard(outsider),
                amount: 2_000,
                memo: [0; 34],
            };
            decode_hex(&sign(ctx, &signers, AnchorMode::Any, Vec::new(), payload).unwrap().raw_hex).unwrap()
        };
        let raw = sponsored(&g, s.nonce + 1);
        assert_eq!(reason(&mut g, &raw), "BadNonce", "the sponsor's nonce counts");
        let raw = sponsored(&g, s.nonce);
        let env = g.next_env();
        let (ctx, world, queue) = g.node_parts();
        queue.push(admit(ctx, world, env, &raw).unwrap());
        let (o2, s2) = (before(&g, &origin), before(&g, &sponsor));
        assert_eq!((o2.nonce, o2.spendable()), (o.nonce + 1, o.spendable() - 2_000));
        assert_eq!((s2.nonce, s2.spendable()), (s.nonce + 1, s.spendable() - 700));
        g.mine().unwrap();
        g.check_ledger().unwrap();
    }

    /// A pox-4 call by seed account `from`.
    fn pox_call(g: &Generator, from: u32, nonce: u64, function: &str, args: Vec<Value>) -> Vec<u8> {
        let ctx = g.ctx_ref();
        let signers = Signers { origin: ctx.key(from), origin_nonce: nonce, sponsor: None, fee: 5_000 };
        let payload = Payload::ContractCall {
            contract: ctx.pox_contract.clone(),
            function_name: function.into(),
            function_args: args,
        };
        decode_hex(&sign(ctx, &signers, AnchorMode::Any, Vec::new(), payload).unwrap().raw_hex).unwrap()
    }

    /// `stack-stx` of the minimum by `from`, signed by `signer`'s key, from `start`.
    fn stack_args(g: &Generator, from: u32, signer: u32, start: u64) -> Vec<Value> {
        let ctx = g.ctx_ref();
        let addr = pox_addr(ctx.key(from));
        let grant = SignerGrant {
            pox_addr: &addr,
            reward_cycle: reward_cycle(start),
            period: 1,
            max_amount: POX_MIN_STACK,
            auth_id: 9,
        };
        let sig = pox4_signer_signature(ctx, ctx.key(signer), &grant);
        let call = pox4::StackStx {
            amount: POX_MIN_STACK,
            pox_addr: addr.clone(),
            start_burn_height: start,
            period: 1,
            signer_sig: Some(sig.to_vec()),
            signer_key: ctx.key(from).public_key.to_compressed().to_vec(),
            max_amount: POX_MIN_STACK,
            auth_id: 9,
        };
        call.args()
    }

    /// Admits `raw` into the next block.
    fn queue(g: &mut Generator, raw: &[u8]) -> GenTx {
        let env = g.next_env();
        let (ctx, world, queue) = g.node_parts();
        let tx = admit(ctx, world, env, raw).unwrap();
        queue.push(tx.clone());
        tx
    }

    fn err_code(tx: &GenTx) -> Option<i128> {
        match Value::deserialize(&decode_hex(&tx.receipt.raw_result).unwrap()).unwrap() {
            Value::ResponseErr(e) => match *e {
                Value::Int(code) => Some(code),
                _ => None,
            },
            _ => None,
        }
    }

    /// The shape of a Clarity value: tuple keys, leaf kinds (an optional's content left out).
    fn shape(v: &Value) -> serde_json::Value {
        match v {
            Value::Tuple(fields) => fields.iter().map(|(k, v)| (k.clone(), shape(v))).collect(),
            Value::ResponseOk(v) => json!({ "ok": shape(v) }),
            Value::OptionalNone | Value::OptionalSome(_) => json!("optional"),
            Value::UInt(_) => json!("uint"),
            Value::Buffer(_) => json!("buff"),
            Value::Principal(_) => json!("principal"),
            Value::StringAscii(_) => json!("string-ascii"),
            other => json!(other.repr()),
        }
    }

    /// The pox-4 prints of a transaction, by the call's name.
    fn prints(tx: &GenTx) -> Vec<Value> {
        tx.events
            .iter()
            .filter_map(|e| match &e.body {
                crate::json::EventBody::Print { raw_value, .. } => {
                    Some(Value::deserialize(&decode_hex(raw_value).unwrap()).unwrap())
                }
                _ => None,
            })
            .collect()
    }

    /// The pox-4 prints a real node sent (the repository's `tests/realnode/pox`, beside this
    /// crate), by name.
    fn recorded_prints() -> BTreeMap<String, Value> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/realnode/pox/chain.tsv");
        let mut out = BTreeMap::new();
        for line in std::fs::read_to_string(path).unwrap().lines() {
            let cols: Vec<&str> = line.splitn(4, '\t').collect();
            if cols.get(2) != Some(&"/new_block") {
                continue;
            }
            let block: serde_json::Value = serde_json::from_str(cols[3]).unwrap();
            for e in block["events"].as_array().unwrap() {
                let c = &e["contract_event"];
                if c["topic"] != "print" || !c["contract_identifier"].as_str().unwrap().ends_with(".pox-4") {
                    continue;
                }
                let v = Value::deserialize(&decode_hex(c["raw_value"].as_str().unwrap()).unwrap()).unwrap();
                let Value::ResponseOk(inner) = &v else { continue };
                let Value::Tuple(fields) = inner.as_ref() else { continue };
                if let Some((_, Value::StringAscii(name))) = fields.iter().find(|(k, _)| k == "name") {
                    out.insert(String::from_utf8(name.clone()).unwrap(), v.clone());
                }
            }
        }
        out
    }

    /// pox-4 calls: type-checked on admission, run as the contract runs them (a refused one is
    /// mined as `(err code)`, the fee paid), their prints shaped as a real node's, the lock in
    /// `/v2/accounts`; mined, the ledger adds up.
    #[test]
    fn admits_and_runs_pox4_calls_like_a_node() {
        let mut g = node();
        let start = g.burn_height();
        // Two accounts the generated chain left neither stacking nor delegating.
        let free: Vec<u32> = (1..g.ctx_ref().user_accounts())
            .filter(|&i| {
                let w = g.world_ref();
                w.account(i).locked == 0 && w.revocable(&Holder::Seed(i), start + 1).is_none()
            })
            .collect();
        let (s_i, d_i) = (free[0], free[1]);
        let ctx = g.ctx_ref();
        let (stacker, delegator) = (ctx.key(s_i).c32.clone(), ctx.key(d_i).c32.clone());
        let pool =
            Value::Principal(Principal::Standard(StacksAddress::new(ctx.key(1).address.version, [9; 20])));
        let nonce = |g: &Generator, a: &str| account(g.ctx_ref(), g.world_ref(), a).unwrap().nonce;
        let recorded = recorded_prints();

        // Refused at admission, as a node's mempool refuses them.
        let n = nonce(&g, &stacker);
        let raw = pox_call(&g, s_i, n, "stack-stx", vec![Value::UInt(1)]);
        assert_eq!(reason(&mut g, &raw), "BadFunctionArgument");
        let mut wrong = stack_args(&g, s_i, s_i, start);
        wrong[0] = Value::Int(1);
        let raw = pox_call(&g, s_i, n, "stack-stx", wrong);
        assert_eq!(reason(&mut g, &raw), "BadFunctionArgument");
        let raw = pox_call(&g, s_i, n, "stack-more", Vec::new());
        assert_eq!(reason(&mut g, &raw), "NoSuchPublicFunction");
        let raw = pox_call(&g, s_i, n, "stack-extend", Vec::new());
        assert_eq!(reason(&mut g, &raw), "NotSupported");
        let other = {
            let ctx = g.ctx_ref();
            let signers = Signers { origin: ctx.key(s_i), origin_nonce: n, sponsor: None, fee: 5_000 };
            let contract = stacks_codec::address::ContractId::new(ctx.key(3).address, "nothing").unwrap();
            let payload =
                Payload::ContractCall { contract, function_name: "f".into(), function_args: Vec::new() };
            decode_hex(&sign(ctx, &signers, AnchorMode::Any, Vec::new(), payload).unwrap().raw_hex).unwrap()
        };
        assert_eq!(reason(&mut g, &other), "NoSuchContract");
        assert_eq!(nonce(&g, &stacker), n, "nothing was admitted");

        // stack-stx: the print, then the lock; the locked sub-account at once.
        let raw = pox_call(&g, s_i, n, "stack-stx", stack_args(&g, s_i, s_i, start));
        let stack = queue(&mut g, &raw);
        assert_eq!(stack.receipt.status, "success");
        assert!(
            matches!(stack.events[1].body, crate::json::EventBody::StxLock { locked_amount, .. } if locked_amount == POX_MIN_STACK)
        );
        assert_eq!(shape(&prints(&stack)[0]), shape(&recorded["stack-stx"]));
        let v2 = account_json(g.ctx_ref(), g.world_ref(), &stacker);
        assert_eq!(v2["locked"], format!("0x{:032x}", POX_MIN_STACK));
        // Again: already stacked, (err 3), the fee paid and the nonce used.
        let raw = pox_call(&g, s_i, n + 1, "stack-stx", stack_args(&g, s_i, s_i, start));
        let again = queue(&mut g, &raw);
        assert_eq!(
            (again.receipt.status, err_code(&again), again.events.len()),
            ("abort_by_response", Some(3), 0)
        );
        assert_eq!(nonce(&g, &stacker), n + 2);
        // Another account with a signature by someone else's key; a start in another cycle.
        let d = nonce(&g, &delegator);
        let raw = pox_call(&g, d_i, d, "stack-stx", stack_args(&g, d_i, s_i, start));
        let forged = queue(&mut g, &raw);
        assert_eq!(err_code(&forged), Some(pox4::err::INVALID_SIGNATURE_PUBKEY));
        let raw = pox_call(&g, d_i, d + 1, "stack-stx", stack_args(&g, d_i, d_i, start + 100));
        let late = queue(&mut g, &raw);
        assert_eq!(err_code(&late), Some(pox4::err::INVALID_START_BURN_HEIGHT));

        // delegate-stx, a second one refused, revoke, a second revoke refused.
        let delegate = vec![Value::UInt(1_000_000), pool, Value::OptionalNone, Value::OptionalNone];
        let raw = pox_call(&g, d_i, d + 2, "delegate-stx", delegate.clone());
        let first = queue(&mut g, &raw);
        assert_eq!((first.receipt.status, err_code(&first)), ("success", None));
        assert_eq!(shape(&prints(&first)[0]), shape(&recorded["delegate-stx"]));
        let raw = pox_call(&g, d_i, d + 3, "delegate-stx", delegate);
        let second = queue(&mut g, &raw);
        assert_eq!(err_code(&second), Some(pox4::err::ALREADY_DELEGATED));
        let raw = pox_call(&g, d_i, d + 4, "revoke-delegate-stx", Vec::new());
        let revoke = queue(&mut g, &raw);
        assert_eq!((revoke.receipt.status, err_code(&revoke)), ("success", None));
        assert_eq!(shape(&prints(&revoke)[0]), shape(&recorded["revoke-delegate-stx"]));
        let raw = pox_call(&g, d_i, d + 5, "revoke-delegate-stx", Vec::new());
        let revoked = queue(&mut g, &raw);
        assert_eq!(err_code(&revoked), Some(pox4::err::DELEGATION_ALREADY_REVOKED));

        g.mine().unwrap();
        assert_eq!(g.pending_submitted(), 0);
        g.check_ledger().unwrap();
        let a = account(g.ctx_ref(), g.world_ref(), &stacker).unwrap();
        assert_eq!(a.locked, POX_MIN_STACK);
    }
}
