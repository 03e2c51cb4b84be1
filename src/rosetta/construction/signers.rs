//! Who signs a transaction the Construction API builds, in which rounds, and splicing their
//! signatures in. Pure functions of the transaction: every round's state is the transaction
//! itself (a partially signed one between rounds), so nothing is remembered between calls.
//!
//! - Single-sig origin: one signature over the initial sighash.
//! - Multisig origin: the unsigned transaction holds every member's public key as a field, in
//!   member order; a signature replaces its member's field. Non-sequential modes (SIP-027): every
//!   member signs the same hash, any order. Sequential modes (SIP-005): a member signs the hash
//!   the chain reaches after the signatures before it, so a member may sign only after the last
//!   signature so far, and one round gives one signature (the members still eligible all get the
//!   same signing payload; whoever signs first moves the chain).
//! - Sponsor: signs after the origin is complete, from where the origin's chain ends.

use stacks_codec::address::{signer_hash160, PublicKeyBytes, StacksAddress};
use stacks_codec::sign::{
    initial_sighash, next_presign_sighash, postsign_sighash, presign_sighash, recover_public_key, rsv_to_vrs,
    verify_auth, verify_origin, Role,
};
use stacks_codec::tx::{AuthField, Authorization, KeyEncoding, SpendingCondition, Transaction};

use super::build::address_of;
use super::error::{ConstructionError as E, Result};
use crate::ledger::Network;

/// Where one awaited signature goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// The single-sig condition of the role.
    Single(Role),
    /// A public-key field of the multisig origin, by position.
    OriginField(usize),
}

/// A signature the transaction waits for: what `/construction/payloads` hands out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    pub slot: Slot,
    /// The signer's account: the single-sig condition's address, or the member's P2PKH address.
    pub account: StacksAddress,
    /// The member's key, when the transaction names it (multisig fields).
    pub key: Option<PublicKeyBytes>,
    /// The hash to sign (the SigningPayload's `hex_bytes`).
    pub presign: [u8; 32],
}

/// One signature from the caller, already decoded from the Rosetta request.
pub struct GivenSignature<'a> {
    /// The payload the caller says it signed.
    pub signing_payload: &'a [u8],
    pub public_key: PublicKeyBytes,
    /// Rosetta `ecdsa_recovery` order, r‖s‖v.
    pub signature_rsv: [u8; 65],
}

/// Whether a condition holds all the signatures it needs.
pub fn is_complete(condition: &SpendingCondition) -> bool {
    match condition {
        SpendingCondition::SingleSig(s) => s.signature != [0; 65],
        SpendingCondition::MultiSig(m) => signature_count(&m.fields) >= usize::from(m.signatures_required),
    }
}

/// Whether every condition of the transaction is complete (what `/hash` and `/submit` need).
pub fn is_signed(tx: &Transaction) -> bool {
    is_complete(tx.origin()) && tx.sponsor().is_none_or(is_complete)
}

fn signature_count(fields: &[AuthField]) -> usize {
    fields.iter().filter(|f| matches!(f, AuthField::Signature { .. })).count()
}

/// The signatures the transaction waits for next: the origin's while it is incomplete, then the
/// sponsor's. Empty when it is signed.
pub fn next_signatures(tx: &Transaction, network: Network) -> Result<Vec<Wanted>> {
    let open = open_slots(tx, network)?;
    let origin_done = is_complete(tx.origin());
    Ok(open
        .into_iter()
        .filter(|w| match w.slot {
            Slot::Single(Role::Origin) | Slot::OriginField(_) => !origin_done,
            Slot::Single(Role::Sponsor) => origin_done,
        })
        .collect())
}

/// Every slot a signature may go into now. A non-sequential origin takes signatures past the
/// required count (a node accepts them) until the sponsor signs.
fn open_slots(tx: &Transaction, network: Network) -> Result<Vec<Wanted>> {
    let mut out = Vec::new();
    let sponsor_signed = tx.sponsor().is_some_and(is_complete);
    if !sponsor_signed {
        origin_slots(tx, network, &mut out)?;
    }
    if let Some(sponsor) = tx.sponsor() {
        match sponsor {
            SpendingCondition::SingleSig(s) if is_complete(tx.origin()) && s.signature == [0; 65] => {
                out.push(Wanted {
                    slot: Slot::Single(Role::Sponsor),
                    account: tx.sponsor_address().expect("sponsored"),
                    key: None,
                    presign: next_presign_sighash(tx, Role::Sponsor)
                        .map_err(|e| E::InvalidTransaction(e.to_string()))?,
                });
            }
            SpendingCondition::SingleSig(_) => {}
            SpendingCondition::MultiSig(_) => {
                return Err(E::UnsupportedTransaction("a multisig sponsor".into()));
            }
        }
    }
    Ok(out)
}

fn origin_slots(tx: &Transaction, network: Network, out: &mut Vec<Wanted>) -> Result<()> {
    let initial = initial_sighash(tx);
    let auth_type = Role::Origin.auth_type();
    match tx.origin() {
        SpendingCondition::SingleSig(s) => {
            if s.signature == [0; 65] {
                out.push(Wanted {
                    slot: Slot::Single(Role::Origin),
                    account: tx.origin_address(),
                    key: None,
                    presign: presign_sighash(initial, auth_type, s.tx_fee, s.nonce),
                });
            }
        }
        SpendingCondition::MultiSig(m) => {
            let required = usize::from(m.signatures_required);
            let signed = signature_count(&m.fields);
            let sequential = !m.hash_mode.is_non_sequential();
            if sequential && signed >= required {
                return Ok(());
            }
            // Sequential: only after the last signature, and only where enough members remain.
            let first =
                match (sequential, m.fields.iter().rposition(|f| matches!(f, AuthField::Signature { .. }))) {
                    (true, Some(last)) => last + 1,
                    _ => 0,
                };
            let cur = chain_before(m, m.fields.len(), initial, auth_type, sequential);
            let presign = presign_sighash(cur, auth_type, m.tx_fee, m.nonce);
            for (index, field) in m.fields.iter().enumerate().skip(first) {
                if sequential && m.fields.len() - index < required - signed {
                    break;
                }
                if let AuthField::PublicKey { key_encoding, key } = field {
                    let key = member_key(key, *key_encoding)?;
                    out.push(Wanted {
                        slot: Slot::OriginField(index),
                        account: address_of(&key, network)?,
                        key: Some(key),
                        presign,
                    });
                }
            }
        }
    }
    Ok(())
}

fn member_key(key: &[u8; 33], encoding: KeyEncoding) -> Result<PublicKeyBytes> {
    PublicKeyBytes::from_wire(key, encoding).map_err(|e| E::InvalidTransaction(format!("a member key: {e}")))
}

/// The sighash the origin's chain has reached before field `end` (sequential); the initial
/// sighash for non-sequential modes.
fn chain_before(
    m: &stacks_codec::tx::MultiSigSpendingCondition,
    end: usize,
    initial: [u8; 32],
    auth_type: u8,
    sequential: bool,
) -> [u8; 32] {
    if !sequential {
        return initial;
    }
    m.fields[..end].iter().fold(initial, |cur, field| match field {
        AuthField::Signature { key_encoding, signature } => {
            postsign_sighash(presign_sighash(cur, auth_type, m.tx_fee, m.nonce), *key_encoding, signature)
        }
        AuthField::PublicKey { .. } => cur,
    })
}

/// How many more signatures the transaction takes.
fn capacity(tx: &Transaction) -> usize {
    let origin = match tx.origin() {
        SpendingCondition::SingleSig(s) => usize::from(s.signature == [0; 65]),
        SpendingCondition::MultiSig(m) if m.hash_mode.is_non_sequential() => {
            m.fields.len() - signature_count(&m.fields)
        }
        SpendingCondition::MultiSig(m) => {
            usize::from(m.signatures_required).saturating_sub(signature_count(&m.fields))
        }
    };
    origin + tx.sponsor().map_or(0, |s| usize::from(!is_complete(s)))
}

impl Wanted {
    fn takes(&self, tx: &Transaction, key: &PublicKeyBytes) -> bool {
        match (self.slot, self.key) {
            (_, Some(member)) => member == *key,
            (Slot::Single(role), None) => {
                let condition = match role {
                    Role::Origin => Some(tx.origin()),
                    Role::Sponsor => tx.sponsor(),
                };
                matches!(condition, Some(SpendingCondition::SingleSig(c))
                    if c.key_encoding == key.key_encoding()
                        && signer_hash160(c.hash_mode, 1, std::slice::from_ref(key)).ok() == Some(c.signer))
            }
            (Slot::OriginField(_), None) => false,
        }
    }
}

/// `/construction/combine`: splices the signatures in, in whatever order they come (each goes
/// where its key is awaited with the payload it signed), checking each recovers its key. The
/// result may still wait for signatures (a later round); when complete it verifies as a node
/// would verify it.
pub fn combine(
    mut tx: Transaction,
    signatures: &[GivenSignature<'_>],
    network: Network,
) -> Result<Transaction> {
    if signatures.is_empty() {
        return Err(E::NoSignature);
    }
    if is_signed(&tx) && capacity(&tx) == 0 {
        return Err(E::InvalidTransaction("the transaction is already signed".into()));
    }
    let room = capacity(&tx);
    if signatures.len() > room {
        return Err(E::SignatureCount { given: signatures.len(), room });
    }
    let mut pending: Vec<&GivenSignature<'_>> = signatures.iter().collect();
    loop {
        let open = open_slots(&tx, network)?;
        let found = pending.iter().enumerate().find_map(|(i, sig)| {
            open.iter()
                .find(|w| w.takes(&tx, &sig.public_key) && sig.signing_payload == w.presign)
                .map(|w| (i, w.clone()))
        });
        let Some((i, wanted)) = found else { break };
        splice(&mut tx, &wanted, pending.remove(i))?;
    }
    if let Some(sig) = pending.first() {
        let open = open_slots(&tx, network)?;
        return Err(match open.iter().find(|w| w.takes(&tx, &sig.public_key)) {
            Some(w) => E::SignatureNotVerified(format!(
                "the signing payload {} is not what {} signs next ({})",
                hex::encode(sig.signing_payload),
                sig.public_key,
                hex::encode(w.presign)
            )),
            None => E::SignatureNotVerified(format!(
                "the transaction awaits no signature from {} now",
                sig.public_key
            )),
        });
    }
    if is_complete(tx.origin()) {
        verify_origin(&tx).map_err(|e| E::SignatureNotVerified(e.to_string()))?;
    }
    if is_signed(&tx) {
        verify_auth(&tx).map_err(|e| E::SignatureNotVerified(e.to_string()))?;
    }
    Ok(tx)
}

fn splice(tx: &mut Transaction, wanted: &Wanted, sig: &GivenSignature<'_>) -> Result<()> {
    let vrs = rsv_to_vrs(&sig.signature_rsv);
    if vrs[0] > 3 {
        return Err(E::InvalidSignature(format!("recovery id {} is not 0..=3", vrs[0])));
    }
    let encoding = sig.public_key.key_encoding();
    let recovered = recover_public_key(wanted.presign, &vrs, encoding)
        .map_err(|e| E::SignatureNotVerified(e.to_string()))?;
    if recovered != sig.public_key {
        return Err(E::SignatureNotVerified(format!(
            "the signature recovers {recovered}, not the public key {}",
            sig.public_key
        )));
    }
    let (origin, sponsor) = match &mut tx.auth {
        Authorization::Standard(o) => (o, None),
        Authorization::Sponsored(o, s) => (o, Some(s)),
    };
    match (wanted.slot, origin, sponsor) {
        (Slot::Single(Role::Origin), SpendingCondition::SingleSig(c), _)
        | (Slot::Single(Role::Sponsor), _, Some(SpendingCondition::SingleSig(c))) => c.signature = vrs,
        (Slot::OriginField(i), SpendingCondition::MultiSig(m), _) => {
            m.fields[i] = AuthField::Signature { key_encoding: encoding, signature: vrs }
        }
        _ => return Err(E::InvalidTransaction("the signature's slot is gone".into())),
    }
    Ok(())
}

/// The transaction with every signature taken out again (each multisig signature back to the key
/// it recovers): what `/construction/payloads` built. A partially signed transaction handed back
/// to `/payloads` must come from the same operations.
pub fn unsigned_of(tx: &Transaction) -> Result<Transaction> {
    let mut out = tx.clone();
    let initial = initial_sighash(tx);
    let auth_type = Role::Origin.auth_type();
    let (origin, sponsor) = match &mut out.auth {
        Authorization::Standard(o) => (o, None),
        Authorization::Sponsored(o, s) => (o, Some(s)),
    };
    match origin {
        SpendingCondition::SingleSig(c) => c.signature = [0; 65],
        SpendingCondition::MultiSig(m) => {
            let signed = m.clone();
            let sequential = !m.hash_mode.is_non_sequential();
            for (i, field) in signed.fields.iter().enumerate() {
                if let AuthField::Signature { key_encoding, signature } = field {
                    let cur = chain_before(&signed, i, initial, auth_type, sequential);
                    let presign = presign_sighash(cur, auth_type, m.tx_fee, m.nonce);
                    let key = recover_public_key(presign, signature, *key_encoding)
                        .map_err(|e| E::SignatureNotVerified(format!("field {i}: {e}")))?;
                    m.fields[i] =
                        AuthField::PublicKey { key_encoding: *key_encoding, key: key.to_compressed() };
                }
            }
        }
    }
    if let Some(SpendingCondition::SingleSig(c)) = sponsor {
        c.signature = [0; 65];
    }
    Ok(out)
}

/// The accounts that signed a signed transaction, verified: the origin (or each multisig member
/// that signed, by its P2PKH address), then the sponsor.
pub fn signer_accounts(tx: &Transaction, network: Network) -> Result<Vec<StacksAddress>> {
    let verified = verify_auth(tx).map_err(|e| E::SignatureNotVerified(e.to_string()))?;
    let mut out = match tx.origin() {
        SpendingCondition::SingleSig(_) => vec![tx.origin_address()],
        SpendingCondition::MultiSig(_) => {
            verified.origin.signers.iter().map(|k| address_of(k, network)).collect::<Result<Vec<_>>>()?
        }
    };
    out.extend(tx.sponsor_address());
    Ok(out)
}
