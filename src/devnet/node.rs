//! The devnet as a Stacks node (`devnet --serve-node`): what it does with a transaction
//! submitted to `POST /v2/transactions`. Pure: decode with our codec, check it against the
//! generator's own ledger as a node's mempool admission does, apply it, and hand back the
//! receipt the next block will carry. The HTTP side is `node_server.rs`.
//!
//! Scope: token transfers from single-signature or multisig origins, standard or sponsored by a
//! single-sig sponsor (what the Rosetta Construction API builds); other payloads are refused.
//! Each nonce (the origin's, and the sponsor's) must be the account's next one (a real node
//! would also queue a later nonce). Accepted transactions take
//! effect at once in the node's view (`/v2/accounts`) and are mined into the next block.

use serde_json::{json, Value as Json};
use stacks_codec::address::Principal;
use stacks_codec::sign::verify_auth;
use stacks_codec::to_hex_prefixed;
use stacks_codec::tx::{Payload, Transaction};

use super::config::Ctx;
use super::txbuild::Signed;
use super::txgen::{self, GenTx};
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

/// Checks `raw` as a node's mempool admission does and, if it passes, applies it to `world`
/// and returns what the next block carries.
pub fn admit(ctx: &Ctx, world: &mut World, raw: &[u8]) -> Result<GenTx, Box<Rejection>> {
    let tx = Transaction::deserialize(raw)
        .map_err(|e| Rejection::new("Deserialization", format!("not a transaction: {e}")))?;
    let txid = tx.txid_hex();
    admit_tx(ctx, world, &tx, raw).map_err(|mut r| {
        r.txid = Some(txid);
        r
    })
}

fn admit_tx(ctx: &Ctx, world: &mut World, tx: &Transaction, raw: &[u8]) -> Result<GenTx, Box<Rejection>> {
    if tx.version != ctx.tx_version || tx.chain_id != ctx.chain_id {
        return Err(Rejection::new(
            "BadTransactionVersion",
            format!("chain id {:#010x} and version {:?} are not this devnet's", tx.chain_id, tx.version),
        ));
    }
    verify_auth(tx).map_err(|e| Rejection::new("SignatureValidation", e.to_string()))?;
    let Payload::TokenTransfer { recipient, amount, memo } = &tx.payload else {
        return Err(Rejection::new("NotSupported", "the devnet node accepts token transfers only"));
    };
    let Principal::Standard(to) = recipient else {
        return Err(Rejection::new("NotSupported", "the devnet node pays standard principals only"));
    };
    if to.is_mainnet() != (ctx.tx_version == stacks_codec::tx::TransactionVersion::Mainnet) {
        return Err(Rejection::new(
            "BadAddressVersionByte",
            format!("{} is on another network", to.to_c32()),
        ));
    }
    let sender = tx.origin_address().to_c32();
    let recipient = to.to_c32();
    if sender == recipient {
        return Err(Rejection::new("TransferRecipientCannotEqualSender", sender));
    }
    if *amount == 0 {
        return Err(Rejection::new("TransferAmountMustBePositive", "the amount is 0"));
    }
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
    let payer = sponsor.clone().unwrap_or_else(|| sender.clone());
    let mut debits = vec![(payer.clone(), u128::from(fee))];
    match debits.iter_mut().find(|(p, _)| *p == sender) {
        Some((_, d)) => *d += u128::from(*amount),
        None => debits.push((sender.clone(), u128::from(*amount))),
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
    // transfer.
    for (principal, needed) in &debits {
        account_mut(ctx, world, principal).balance -= needed;
    }
    for (principal, _, _) in &nonces {
        account_mut(ctx, world, principal).nonce += 1;
    }
    world.pending_fees += u128::from(fee);
    account_mut(ctx, world, &recipient).balance += u128::from(*amount);
    let signed = Signed { txid: tx.txid_hex(), raw_hex: to_hex_prefixed(raw) };
    Ok(txgen::submitted_transfer(signed, u128::from(fee), sender, recipient, u128::from(*amount), *memo))
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

#[cfg(test)]
mod tests {
    use stacks_codec::address::{Principal, StacksAddress};
    use stacks_codec::decode_hex;
    use stacks_codec::tx::{AnchorMode, Payload};

    use super::*;
    use crate::devnet::txbuild::{sign, Signers};
    use crate::devnet::{DevnetConfig, Generator};
    use crate::events::EventPath;

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
        let (ctx, world, _) = g.node_parts();
        admit(ctx, world, raw).unwrap_err().reason
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
        let (ctx, world, queue) = g.node_parts();
        let tx = admit(ctx, world, &raw).unwrap();
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
        let (ctx, world, queue) = g.node_parts();
        queue.push(admit(ctx, world, &raw).unwrap());
        let (o2, s2) = (before(&g, &origin), before(&g, &sponsor));
        assert_eq!((o2.nonce, o2.spendable()), (o.nonce + 1, o.spendable() - 2_000));
        assert_eq!((s2.nonce, s2.spendable()), (s.nonce + 1, s.spendable() - 700));
        g.mine().unwrap();
        g.check_ledger().unwrap();
    }
}
