//! Verifying a transaction's signatures: walk each condition's sighash chain, recover every
//! signer and check the keys hash to the condition's signer, as stacks-core's
//! `TransactionSpendingCondition::verify` does.

use super::secp::recover_public_key;
use super::sighash::{initial_sighash, postsign_sighash, presign_sighash, sighash_after};
use super::{Role, SignError};
use crate::address::{signer_hash160, PublicKeyBytes};
use crate::tx::{AuthField, HashMode, KeyEncoding, SpendingCondition, Transaction};
use crate::CodecError;

/// What a valid spending condition tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedCondition {
    /// The keys recovered from the signatures, in field order.
    pub signers: Vec<PublicKeyBytes>,
    /// Every key of the condition in field order, recovered or given as a public-key field: the
    /// keys the signer hash is made of.
    pub public_keys: Vec<PublicKeyBytes>,
    /// The sighash the chain ends on: where a sponsor starts.
    pub next_sighash: [u8; 32],
}

/// Both conditions of a transaction, verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedAuth {
    pub origin: VerifiedCondition,
    pub sponsor: Option<VerifiedCondition>,
}

impl Role {
    /// The auth type byte this role signs with: the origin signs with 0x04 even when sponsored.
    pub fn auth_type(self) -> u8 {
        match self {
            Role::Origin => super::AUTH_TYPE_STANDARD,
            Role::Sponsor => super::AUTH_TYPE_SPONSORED,
        }
    }
}

/// Verifies the origin against the transaction's initial sighash.
pub fn verify_origin(tx: &Transaction) -> Result<VerifiedCondition, CodecError> {
    verify_condition(tx.origin(), Role::Origin, initial_sighash(tx))
}

/// Verifies the sponsor, starting where the origin's chain ends. The origin's signatures are
/// only hashed here, not checked: use [`verify_auth`] to check both.
pub fn verify_sponsor(tx: &Transaction) -> Result<VerifiedCondition, CodecError> {
    let sponsor = tx.sponsor().ok_or(SignError::NotSponsored)?;
    let start = sighash_after(tx.origin(), initial_sighash(tx), Role::Origin.auth_type());
    verify_condition(sponsor, Role::Sponsor, start)
}

/// Verifies the origin and, when sponsored, the sponsor: what a node checks before accepting
/// the transaction.
pub fn verify_auth(tx: &Transaction) -> Result<VerifiedAuth, CodecError> {
    let origin = verify_condition(tx.origin(), Role::Origin, initial_sighash(tx))?;
    let sponsor = match tx.sponsor() {
        Some(sponsor) => Some(verify_condition(sponsor, Role::Sponsor, origin.next_sighash)?),
        None => None,
    };
    Ok(VerifiedAuth { origin, sponsor })
}

/// Verifies one condition whose chain starts at `start` (the initial sighash for the origin).
pub fn verify_condition(
    condition: &SpendingCondition,
    role: Role,
    start: [u8; 32],
) -> Result<VerifiedCondition, CodecError> {
    let auth_type = role.auth_type();
    match condition {
        SpendingCondition::SingleSig(c) => {
            let presign = presign_sighash(start, auth_type, c.tx_fee, c.nonce);
            let key = recover(presign, &c.signature, c.key_encoding, role, 0)?;
            check_signer(role, c.hash_mode, 1, std::slice::from_ref(&key), c.signer)?;
            Ok(VerifiedCondition {
                signers: vec![key],
                public_keys: vec![key],
                next_sighash: postsign_sighash(presign, c.key_encoding, &c.signature),
            })
        }
        SpendingCondition::MultiSig(c) => {
            let sequential = !c.hash_mode.is_non_sequential();
            // Non-sequential signers all sign this one hash; sequential ones move `cur` along.
            let shared_presign = presign_sighash(start, auth_type, c.tx_fee, c.nonce);
            let mut cur = start;
            let mut signers = Vec::new();
            let mut public_keys = Vec::with_capacity(c.fields.len());
            for (index, field) in c.fields.iter().enumerate() {
                match field {
                    AuthField::PublicKey { key_encoding, key } => {
                        let key = PublicKeyBytes::from_wire(key, *key_encoding)
                            .map_err(|source| SignError::Keys { role, source })?;
                        public_keys.push(key);
                    }
                    AuthField::Signature { key_encoding, signature } => {
                        let presign = if sequential {
                            presign_sighash(cur, auth_type, c.tx_fee, c.nonce)
                        } else {
                            shared_presign
                        };
                        let key = recover(presign, signature, *key_encoding, role, index)?;
                        if sequential {
                            cur = postsign_sighash(presign, *key_encoding, signature);
                        }
                        signers.push(key);
                        public_keys.push(key);
                    }
                }
            }
            let (required, found) = (c.signatures_required, signers.len());
            if found < usize::from(required) {
                return Err(SignError::TooFewSignatures { role, required, found }.into());
            }
            if sequential && found > usize::from(required) {
                return Err(SignError::TooManySignatures { role, required, found }.into());
            }
            check_signer(role, c.hash_mode, required, &public_keys, c.signer)?;
            Ok(VerifiedCondition { signers, public_keys, next_sighash: cur })
        }
    }
}

fn recover(
    presign: [u8; 32],
    signature: &[u8; 65],
    key_encoding: KeyEncoding,
    role: Role,
    index: usize,
) -> Result<PublicKeyBytes, SignError> {
    recover_public_key(presign, signature, key_encoding).map_err(|_| SignError::Unrecoverable { role, index })
}

fn check_signer(
    role: Role,
    hash_mode: HashMode,
    signatures_required: u16,
    keys: &[PublicKeyBytes],
    expected: [u8; 20],
) -> Result<(), SignError> {
    let recovered = signer_hash160(hash_mode, signatures_required, keys)
        .map_err(|source| SignError::Keys { role, source })?;
    if recovered != expected {
        return Err(SignError::WrongSigner { role, expected, recovered });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::tx::{MultiSigSpendingCondition, SingleSigSpendingCondition};

    fn encoding(b: bool) -> KeyEncoding {
        if b {
            KeyEncoding::Compressed
        } else {
            KeyEncoding::Uncompressed
        }
    }

    fn field() -> impl Strategy<Value = AuthField> {
        (any::<bool>(), any::<bool>(), prop::collection::vec(any::<u8>(), 65)).prop_map(
            |(is_sig, enc, bytes)| {
                if is_sig {
                    AuthField::Signature { key_encoding: encoding(enc), signature: bytes.try_into().unwrap() }
                } else {
                    // Mostly off-curve keys; a valid prefix now and then.
                    let mut key: [u8; 33] = bytes[..33].try_into().unwrap();
                    key[0] = 2 + (key[0] & 1);
                    AuthField::PublicKey { key_encoding: encoding(enc), key }
                }
            },
        )
    }

    proptest! {
        /// Arbitrary signatures, keys and counts give an error (or, vanishingly rarely, a result),
        /// never a panic.
        #[test]
        fn verification_never_panics(
            sig in prop::collection::vec(any::<u8>(), 65),
            enc in any::<bool>(),
            fee in any::<u64>(),
            fields in prop::collection::vec(field(), 0..6),
            required in 0u16..6,
            mode in 0usize..6,
            start in any::<[u8; 32]>(),
        ) {
            let single = SpendingCondition::SingleSig(SingleSigSpendingCondition {
                hash_mode: if mode % 2 == 0 { HashMode::P2PKH } else { HashMode::P2WPKH },
                signer: [0; 20],
                nonce: 1,
                tx_fee: fee,
                key_encoding: encoding(enc),
                signature: sig.try_into().unwrap(),
            });
            prop_assert!(verify_condition(&single, Role::Origin, start).is_err());
            let modes = [
                HashMode::P2SH,
                HashMode::P2WSH,
                HashMode::P2SHNonSequential,
                HashMode::P2WSHNonSequential,
                HashMode::P2PKH,
                HashMode::P2WPKH,
            ];
            let multi = SpendingCondition::MultiSig(MultiSigSpendingCondition {
                hash_mode: modes[mode],
                signer: [0; 20],
                nonce: 1,
                tx_fee: fee,
                fields,
                signatures_required: required,
            });
            let _ = verify_condition(&multi, Role::Sponsor, start);
        }
    }
}
