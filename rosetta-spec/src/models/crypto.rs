//! Keys, signing payloads and signatures used by the Construction API.

use serde::{Deserialize, Serialize};

use super::AccountIdentifier;

/// A public key as hex bytes in the encoding that `curve_type` prescribes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicKey {
    pub hex_bytes: String,
    pub curve_type: CurveType,
}

wire_enum! {
    /// Key encodings: secp256k1/secp256r1 are 33-byte SEC1 compressed, edwards25519 32 bytes, tweedle 64.
    CurveType {
        Secp256k1 = "secp256k1",
        Secp256r1 = "secp256r1",
        Edwards25519 = "edwards25519",
        Tweedle = "tweedle",
    }
}

/// Bytes a signer must sign, returned by `/construction/payloads`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SigningPayload {
    /// Deprecated since 1.4.4 in favour of `account_identifier`; kept so older clients still parse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_identifier: Option<AccountIdentifier>,
    pub hex_bytes: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature_type: Option<SignatureType>,
}

/// A signature over a [`SigningPayload`], as sent to `/construction/combine`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    pub signing_payload: SigningPayload,
    pub public_key: PublicKey,
    pub signature_type: SignatureType,
    pub hex_bytes: String,
}

wire_enum! {
    /// Signature byte layouts: ecdsa r‖s (64), ecdsa_recovery r‖s‖v (65), ed25519 R‖s (64),
    /// schnorr_1 and schnorr_poseidon (64).
    SignatureType {
        Ecdsa = "ecdsa",
        EcdsaRecovery = "ecdsa_recovery",
        Ed25519 = "ed25519",
        Schnorr1 = "schnorr_1",
        SchnorrPoseidon = "schnorr_poseidon",
    }
}
