//! Filling signatures into a transaction: signing with a private key (a `TransactionSigner`),
//! and splicing in a signature made elsewhere (the Construction API's `combine`).
//!
//! Single-sig signing refuses a key that could only produce an invalid transaction (wrong
//! encoding, or not the condition's signer). Multisig signing cannot check the signer until every
//! key is in, so it only refuses what is never valid: an uncompressed key in a segwit mode, or a
//! sequential signature past `signatures_required`.

use super::secp::{sign_presign, PrivateKey};
use super::sighash::{initial_sighash, postsign_sighash, presign_sighash, sighash_after};
use super::{Role, SignError};
use crate::address::{signer_hash160, PublicKeyBytes, PublicKeyError};
use crate::tx::{
    AuthField, Authorization, HashMode, KeyEncoding, MultiSigSpendingCondition, SingleSigSpendingCondition,
    SpendingCondition, Transaction,
};
use crate::CodecError;

/// One signature added to a condition, with the hashes around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignatureStep {
    /// The chain's sighash before this signature.
    pub cur_sighash: [u8; 32],
    /// What was signed: the Construction API's signing payload.
    pub presign_sighash: [u8; 32],
    /// v‖r‖s.
    pub signature_vrs: [u8; 65],
    pub key_encoding: KeyEncoding,
    /// The chain's sighash after it (unchanged for non-sequential multisig).
    pub next_sighash: [u8; 32],
}

/// An unsigned single-sig condition (P2PKH or P2WPKH) for `public_key`: the key's encoding
/// goes into the condition, its hash into the signer.
pub fn single_sig_condition(
    hash_mode: HashMode,
    public_key: &PublicKeyBytes,
    nonce: u64,
    tx_fee: u64,
) -> Result<SpendingCondition, CodecError> {
    if !hash_mode.is_single_sig() {
        return Err(PublicKeyError::NotSingleSig(hash_mode).into());
    }
    Ok(SpendingCondition::SingleSig(SingleSigSpendingCondition {
        hash_mode,
        signer: signer_hash160(hash_mode, 1, std::slice::from_ref(public_key))?,
        nonce,
        tx_fee,
        key_encoding: public_key.key_encoding(),
        signature: [0; 65],
    }))
}

/// An unsigned multisig condition (no fields yet) for these keys, in address order.
pub fn multisig_condition(
    hash_mode: HashMode,
    signatures_required: u16,
    public_keys: &[PublicKeyBytes],
    nonce: u64,
    tx_fee: u64,
) -> Result<SpendingCondition, CodecError> {
    if hash_mode.is_single_sig() {
        return Err(CodecError::invalid("multisig hash mode", format!("{hash_mode:?} is single-sig")));
    }
    Ok(SpendingCondition::MultiSig(MultiSigSpendingCondition {
        hash_mode,
        signer: signer_hash160(hash_mode, signatures_required, public_keys)?,
        nonce,
        tx_fee,
        fields: Vec::new(),
        signatures_required,
    }))
}

/// Replaces the sponsor of a sponsored transaction (stacks.js `sponsorTransaction` puts the real
/// sponsor over the placeholder an unsigned sponsored transaction carries). The origin's
/// signatures stay valid: the origin signed over the sentinel, not over any sponsor.
pub fn set_sponsor(tx: &mut Transaction, sponsor: SpendingCondition) -> Result<(), CodecError> {
    match &mut tx.auth {
        Authorization::Sponsored(_, slot) => {
            *slot = sponsor;
            Ok(())
        }
        Authorization::Standard(_) => Err(SignError::NotSponsored.into()),
    }
}

/// Signs a single-sig origin (P2PKH, P2WPKH) in place. In a sponsored transaction the origin
/// signs first, with auth type 0x04.
pub fn sign_origin(tx: &mut Transaction, private_key: &PrivateKey) -> Result<SignatureStep, CodecError> {
    sign_single(tx, Role::Origin, private_key)
}

/// Signs a single-sig sponsor in place, over the origin's signatures as they stand.
pub fn sign_sponsor(tx: &mut Transaction, private_key: &PrivateKey) -> Result<SignatureStep, CodecError> {
    sign_single(tx, Role::Sponsor, private_key)
}

/// Signs a multisig origin with the next key and appends the signature field. Keys go in the
/// order the address was made with: call this or [`append_public_key`] once per key, in order.
pub fn append_origin_signature(
    tx: &mut Transaction,
    private_key: &PrivateKey,
) -> Result<SignatureStep, CodecError> {
    let start = start_sighash(tx, Role::Origin)?;
    // Taken before the mutable borrow; for a single-sig origin `multisig_mut` fails below.
    let cur = cursor(tx.origin(), start, Role::Origin);
    let condition = multisig_mut(tx, Role::Origin)?;
    let key_encoding = private_key.key_encoding();
    if condition.hash_mode.is_segwit() && key_encoding == KeyEncoding::Uncompressed {
        return Err(SignError::UncompressedSegwit(Role::Origin).into());
    }
    let sequential = !condition.hash_mode.is_non_sequential();
    let found = signature_count(condition) + 1;
    if sequential && found > usize::from(condition.signatures_required) {
        return Err(SignError::TooManySignatures {
            role: Role::Origin,
            required: condition.signatures_required,
            found,
        }
        .into());
    }
    let presign = presign_sighash(cur, Role::Origin.auth_type(), condition.tx_fee, condition.nonce);
    let (signature, key_encoding) = sign_presign(presign, private_key);
    condition.fields.push(AuthField::Signature { key_encoding, signature });
    let next = if sequential { postsign_sighash(presign, key_encoding, &signature) } else { cur };
    Ok(SignatureStep {
        cur_sighash: cur,
        presign_sighash: presign,
        signature_vrs: signature,
        key_encoding,
        next_sighash: next,
    })
}

/// Appends a non-signing key to a multisig origin (33 bytes on the wire, the field id saying
/// how the address hashes it).
pub fn append_public_key(tx: &mut Transaction, public_key: &PublicKeyBytes) -> Result<(), CodecError> {
    let condition = multisig_mut(tx, Role::Origin)?;
    let key_encoding = public_key.key_encoding();
    if condition.hash_mode.is_segwit() && key_encoding == KeyEncoding::Uncompressed {
        return Err(SignError::UncompressedSegwit(Role::Origin).into());
    }
    condition.fields.push(AuthField::PublicKey { key_encoding, key: public_key.to_compressed() });
    Ok(())
}

/// The hash the next signature of `role`'s condition must sign: for a single-sig condition the
/// one pre-sign hash (whatever signature it holds now), for multisig the next one in the chain.
/// This is what the Construction API's `payloads` hands out.
pub fn next_presign_sighash(tx: &Transaction, role: Role) -> Result<[u8; 32], CodecError> {
    let start = start_sighash(tx, role)?;
    let condition = condition(tx, role)?;
    let cur = cursor(condition, start, role);
    Ok(presign_sighash(cur, role.auth_type(), condition.tx_fee(), condition.nonce()))
}

/// Puts a signature made elsewhere into a single-sig condition (the Construction API's
/// `combine`). Nothing is checked cryptographically here: call
/// [`verify_origin`](super::verify_origin) / [`verify_sponsor`](super::verify_sponsor) after.
/// `key_encoding` must be the condition's: it decided the signer hash, so another one could only
/// make an invalid transaction.
pub fn splice_single_sig_signature(
    tx: &mut Transaction,
    role: Role,
    signature_vrs: [u8; 65],
    key_encoding: KeyEncoding,
) -> Result<(), CodecError> {
    let condition = single_sig_mut(tx, role)?;
    if condition.key_encoding != key_encoding {
        return Err(SignError::KeyEncodingMismatch {
            role,
            given: key_encoding,
            condition: condition.key_encoding,
        }
        .into());
    }
    condition.signature = signature_vrs;
    Ok(())
}

fn sign_single(
    tx: &mut Transaction,
    role: Role,
    private_key: &PrivateKey,
) -> Result<SignatureStep, CodecError> {
    let start = start_sighash(tx, role)?;
    let condition = single_sig_mut(tx, role)?;
    let key_encoding = private_key.key_encoding();
    if condition.key_encoding != key_encoding {
        return Err(SignError::KeyEncodingMismatch {
            role,
            given: key_encoding,
            condition: condition.key_encoding,
        }
        .into());
    }
    let public_key = private_key.public_key();
    let hash = signer_hash160(condition.hash_mode, 1, std::slice::from_ref(&public_key))
        .map_err(|source| SignError::Keys { role, source })?;
    if hash != condition.signer {
        return Err(SignError::WrongSigner { role, expected: condition.signer, recovered: hash }.into());
    }
    let presign = presign_sighash(start, role.auth_type(), condition.tx_fee, condition.nonce);
    let (signature, key_encoding) = sign_presign(presign, private_key);
    condition.signature = signature;
    Ok(SignatureStep {
        cur_sighash: start,
        presign_sighash: presign,
        signature_vrs: signature,
        key_encoding,
        next_sighash: postsign_sighash(presign, key_encoding, &signature),
    })
}

/// Where `role`'s chain starts: the initial sighash for the origin, the end of the origin's
/// chain for the sponsor.
fn start_sighash(tx: &Transaction, role: Role) -> Result<[u8; 32], SignError> {
    let initial = initial_sighash(tx);
    match role {
        Role::Origin => Ok(initial),
        Role::Sponsor if tx.is_sponsored() => {
            Ok(sighash_after(tx.origin(), initial, Role::Origin.auth_type()))
        }
        Role::Sponsor => Err(SignError::NotSponsored),
    }
}

/// The sighash the next signature of `condition` builds its pre-sign hash on. A single-sig
/// condition has one slot, so whatever it holds now does not count.
fn cursor(condition: &SpendingCondition, start: [u8; 32], role: Role) -> [u8; 32] {
    match condition {
        SpendingCondition::SingleSig(_) => start,
        SpendingCondition::MultiSig(_) => sighash_after(condition, start, role.auth_type()),
    }
}

fn signature_count(condition: &MultiSigSpendingCondition) -> usize {
    condition.fields.iter().filter(|f| matches!(f, AuthField::Signature { .. })).count()
}

fn condition(tx: &Transaction, role: Role) -> Result<&SpendingCondition, SignError> {
    match role {
        Role::Origin => Ok(tx.origin()),
        Role::Sponsor => tx.sponsor().ok_or(SignError::NotSponsored),
    }
}

fn condition_mut(tx: &mut Transaction, role: Role) -> Result<&mut SpendingCondition, SignError> {
    match (&mut tx.auth, role) {
        (Authorization::Standard(origin) | Authorization::Sponsored(origin, _), Role::Origin) => Ok(origin),
        (Authorization::Sponsored(_, sponsor), Role::Sponsor) => Ok(sponsor),
        (Authorization::Standard(_), Role::Sponsor) => Err(SignError::NotSponsored),
    }
}

fn single_sig_mut(tx: &mut Transaction, role: Role) -> Result<&mut SingleSigSpendingCondition, SignError> {
    match condition_mut(tx, role)? {
        SpendingCondition::SingleSig(c) => Ok(c),
        SpendingCondition::MultiSig(_) => Err(SignError::NotSingleSig(role)),
    }
}

fn multisig_mut(tx: &mut Transaction, role: Role) -> Result<&mut MultiSigSpendingCondition, SignError> {
    match condition_mut(tx, role)? {
        SpendingCondition::MultiSig(c) => Ok(c),
        SpendingCondition::SingleSig(_) => Err(SignError::NotMultiSig(role)),
    }
}
