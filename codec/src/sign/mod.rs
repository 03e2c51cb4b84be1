//! Sighash chain, recoverable secp256k1 signatures, signer recovery (SIP-005, SIP-027).
//!
//! A transaction is signed in a chain of hashes, each SHA-512/256:
//!
//! 1. [`initial_sighash`]: the txid of the transaction with its origin cleared and its sponsor
//!    (if any) replaced by an all-zero P2PKH sentinel.
//! 2. Each signer signs a *pre-sign* hash, `H(cur ‖ auth type ‖ fee ‖ nonce)`
//!    ([`presign_sighash`]), and the chain moves on to the *post-sign* hash
//!    `H(presign ‖ key encoding ‖ signature)` ([`postsign_sighash`]).
//! 3. The origin always signs with auth type 0x04, even in a sponsored transaction. The sponsor
//!    starts from the sighash the origin's chain ends on and signs with 0x05.
//! 4. Sequential multisig (0x01, 0x03) chains through every signature field in order;
//!    non-sequential multisig (0x05, 0x07) signs the same pre-sign hash every time and hands the
//!    unchanged initial sighash on to a sponsor (stacks-core `OrderIndependentMultisig::verify`).
//!
//! Submodules: [`sighash`] (the hashes), [`secp`] (keys, signing, recovery), [`verify`]
//! (walking a condition and checking its signers), [`builder`] (filling signatures in).

pub mod builder;
pub mod secp;
pub mod sighash;
pub mod verify;

use std::fmt;

use thiserror::Error;

use crate::address::PublicKeyError;
use crate::CodecError;

pub use builder::{
    append_origin_signature, append_public_key, multisig_condition, next_presign_sighash, set_sponsor,
    sign_origin, sign_sponsor, single_sig_condition, splice_single_sig_signature, SignatureStep,
};
pub use secp::{recover_public_key, rsv_to_vrs, sign_presign, vrs_to_rsv, PrivateKey};
pub use sighash::{
    initial_sighash, postsign_sighash, presign_sighash, sighash_after, AUTH_TYPE_SPONSORED,
    AUTH_TYPE_STANDARD,
};
pub use verify::{
    verify_auth, verify_condition, verify_origin, verify_sponsor, VerifiedAuth, VerifiedCondition,
};

/// Which spending condition of a transaction: the origin's or the sponsor's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    Origin,
    Sponsor,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Origin => "origin",
            Role::Sponsor => "sponsor",
        })
    }
}

/// Why a key could not sign, or a signature did not verify.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SignError {
    /// Private keys are 32 bytes, or 33 with a trailing 0x01 meaning "compressed public key".
    #[error("private key must be 32 bytes, or 33 ending in 0x01; got {0} bytes")]
    PrivateKeyLength(usize),
    #[error("a 33-byte private key must end in 0x01, got 0x{0:02x}")]
    PrivateKeySuffix(u8),
    #[error("private key is zero or not below the curve order")]
    PrivateKeyRange,
    /// The first byte of a VRS signature must be a recovery id 0..=3.
    #[error("recovery id {0} is not 0..=3")]
    RecoveryId(u8),
    /// r or s out of range, or no public key recovers from the signature.
    #[error("the signature does not recover a public key")]
    BadSignature,
    /// [`SignError::BadSignature`] or [`SignError::RecoveryId`] at a known place in a condition:
    /// `index` is the auth field's position (0 for single-sig).
    #[error("{role} signature (auth field {index}) does not recover a public key")]
    Unrecoverable { role: Role, index: usize },
    /// The recovered (and given) public keys do not hash to the condition's signer.
    #[error(
        "{role}: public keys hash to {}, but the signer is {}",
        hex::encode(recovered),
        hex::encode(expected)
    )]
    WrongSigner { role: Role, expected: [u8; 20], recovered: [u8; 20] },
    #[error("{role}: {found} signatures, at least {required} required")]
    TooFewSignatures { role: Role, required: u16, found: usize },
    /// Sequential multisig needs exactly `signatures_required` signatures.
    #[error("{role}: {found} signatures, exactly {required} allowed")]
    TooManySignatures { role: Role, required: u16, found: usize },
    /// The keys cannot form the condition's address at all (e.g. an uncompressed key in a segwit mode).
    #[error("{role}: {source}")]
    Keys { role: Role, source: PublicKeyError },
    #[error("the transaction is not sponsored")]
    NotSponsored,
    #[error("the {0} spending condition is multisig; use the multisig helpers")]
    NotSingleSig(Role),
    #[error("the {0} spending condition is single-sig")]
    NotMultiSig(Role),
    /// Segwit hash modes (P2WPKH, P2WSH, 0x07) take compressed keys only.
    #[error("{0}: segwit hash modes take compressed keys only")]
    UncompressedSegwit(Role),
    /// A single-sig condition's key encoding says how its signer hash was made; a key of the other
    /// encoding could only make an invalid transaction.
    #[error("{role}: the key is {given:?} but the spending condition says {condition:?}")]
    KeyEncodingMismatch { role: Role, given: crate::tx::KeyEncoding, condition: crate::tx::KeyEncoding },
}

impl From<SignError> for CodecError {
    fn from(e: SignError) -> Self {
        CodecError::Signature(e)
    }
}
