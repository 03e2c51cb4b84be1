//! secp256k1 keys, recoverable signatures and public-key recovery, in Stacks' conventions.
//!
//! Stacks stores a recoverable signature as 65 bytes **v‖r‖s** (recovery id first); Rosetta's
//! `ecdsa_recovery` uses r‖s‖v. Signing is libsecp256k1's: RFC 6979 deterministic nonces and
//! low-S, the same bytes stacks.js (noble) and stacks-core produce.

use std::fmt;

use secp256k1::ecdsa::{RecoverableSignature, RecoveryId};
use secp256k1::{Message, PublicKey, SecretKey, SECP256K1};

use super::SignError;
use crate::address::PublicKeyBytes;
use crate::tx::KeyEncoding;

/// A private key plus the public-key encoding it signs for. Stacks writes a compressed-key
/// private key as 33 bytes ending in 0x01, an uncompressed-key one as the bare 32 bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct PrivateKey {
    secret: SecretKey,
    encoding: KeyEncoding,
}

impl PrivateKey {
    /// 32 bytes (uncompressed public key) or 33 bytes ending in 0x01 (compressed).
    pub fn from_slice(bytes: &[u8]) -> Result<Self, SignError> {
        let (secret, encoding) = match bytes {
            [secret @ .., 0x01] if bytes.len() == 33 => (secret, KeyEncoding::Compressed),
            [.., other] if bytes.len() == 33 => return Err(SignError::PrivateKeySuffix(*other)),
            secret if secret.len() == 32 => (secret, KeyEncoding::Uncompressed),
            other => return Err(SignError::PrivateKeyLength(other.len())),
        };
        let secret = SecretKey::from_slice(secret).map_err(|_| SignError::PrivateKeyRange)?;
        Ok(PrivateKey { secret, encoding })
    }

    /// Hex, with or without `0x`.
    pub fn from_hex(s: &str) -> Result<Self, crate::CodecError> {
        // 33 bytes is 66 digits (68 with `0x`); refuse anything far longer before decoding it.
        if s.len() > 68 {
            return Err(SignError::PrivateKeyLength(s.len() / 2).into());
        }
        Ok(Self::from_slice(&crate::decode_hex(s)?)?)
    }

    pub fn key_encoding(&self) -> KeyEncoding {
        self.encoding
    }

    /// The public key in the encoding this private key signs for.
    pub fn public_key(&self) -> PublicKeyBytes {
        encode_public_key(&PublicKey::from_secret_key_global(&self.secret), self.encoding)
    }

    /// The 32 secret bytes plus 0x01 when compressed: the form [`PrivateKey::from_slice`] reads.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.secret.secret_bytes().to_vec();
        if self.encoding == KeyEncoding::Compressed {
            out.push(0x01);
        }
        out
    }
}

/// Never prints the secret.
impl fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PrivateKey({:?}, public {})", self.encoding, self.public_key())
    }
}

fn encode_public_key(key: &PublicKey, encoding: KeyEncoding) -> PublicKeyBytes {
    match encoding {
        KeyEncoding::Compressed => PublicKeyBytes::Compressed(key.serialize()),
        KeyEncoding::Uncompressed => PublicKeyBytes::Uncompressed(key.serialize_uncompressed()),
    }
}

/// Signs a pre-sign sighash. Returns the signature as v‖r‖s and the key encoding that goes with
/// it (into the post-sign hash and, for multisig, the auth field id).
pub fn sign_presign(presign: [u8; 32], private_key: &PrivateKey) -> ([u8; 65], KeyEncoding) {
    let msg = Message::from_digest(presign);
    let sig = SECP256K1.sign_ecdsa_recoverable(&msg, &private_key.secret);
    let (recovery_id, rs) = sig.serialize_compact();
    let mut vrs = [0u8; 65];
    // Recovery ids are 0..=3, so the byte cannot truncate.
    vrs[0] = recovery_id.to_i32() as u8;
    vrs[1..].copy_from_slice(&rs);
    (vrs, private_key.encoding)
}

/// The public key that made `signature_vrs` over `presign`, encoded as `key_encoding` says (33
/// or 65 bytes). Like stacks-core, a high-S signature still recovers; the chain accepts it.
pub fn recover_public_key(
    presign: [u8; 32],
    signature_vrs: &[u8; 65],
    key_encoding: KeyEncoding,
) -> Result<PublicKeyBytes, SignError> {
    let v = signature_vrs[0];
    let recovery_id = RecoveryId::from_i32(i32::from(v)).map_err(|_| SignError::RecoveryId(v))?;
    let sig = RecoverableSignature::from_compact(&signature_vrs[1..], recovery_id)
        .map_err(|_| SignError::BadSignature)?;
    let key =
        SECP256K1.recover_ecdsa(&Message::from_digest(presign), &sig).map_err(|_| SignError::BadSignature)?;
    Ok(encode_public_key(&key, key_encoding))
}

/// v‖r‖s (Stacks wire order) to r‖s‖v (Rosetta `ecdsa_recovery`).
pub fn vrs_to_rsv(vrs: &[u8; 65]) -> [u8; 65] {
    let mut rsv = [0u8; 65];
    rsv[..64].copy_from_slice(&vrs[1..]);
    rsv[64] = vrs[0];
    rsv
}

/// r‖s‖v (Rosetta `ecdsa_recovery`) to v‖r‖s (Stacks wire order).
pub fn rsv_to_vrs(rsv: &[u8; 65]) -> [u8; 65] {
    let mut vrs = [0u8; 65];
    vrs[0] = rsv[64];
    vrs[1..].copy_from_slice(&rsv[..64]);
    vrs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_key_forms() {
        let mut bytes = [7u8; 33];
        bytes[32] = 0x01;
        assert_eq!(PrivateKey::from_slice(&bytes).unwrap().key_encoding(), KeyEncoding::Compressed);
        assert_eq!(PrivateKey::from_slice(&bytes[..32]).unwrap().key_encoding(), KeyEncoding::Uncompressed);
        assert_eq!(PrivateKey::from_slice(&bytes).unwrap().to_bytes(), bytes);
        bytes[32] = 0x02;
        assert_eq!(PrivateKey::from_slice(&bytes), Err(SignError::PrivateKeySuffix(2)));
        assert_eq!(PrivateKey::from_slice(&[1; 31]), Err(SignError::PrivateKeyLength(31)));
        assert_eq!(PrivateKey::from_slice(&[0; 32]), Err(SignError::PrivateKeyRange));
        assert_eq!(PrivateKey::from_slice(&[0xff; 32]), Err(SignError::PrivateKeyRange));
        assert!(PrivateKey::from_hex(&"ab".repeat(1000)).is_err());
        assert!(PrivateKey::from_hex("zz").is_err());
        // Debug must not leak the secret.
        assert!(!format!("{:?}", PrivateKey::from_slice(&[7; 32]).unwrap()).contains("0707"));
    }

    #[test]
    fn sign_then_recover_round_trips() {
        let key = PrivateKey::from_slice(&[9; 32]).unwrap();
        let presign = [0x42; 32];
        let (sig, enc) = sign_presign(presign, &key);
        assert_eq!(enc, KeyEncoding::Uncompressed);
        assert_eq!(recover_public_key(presign, &sig, enc).unwrap(), key.public_key());
        assert_eq!(rsv_to_vrs(&vrs_to_rsv(&sig)), sig);
        assert_eq!(vrs_to_rsv(&sig)[64], sig[0]);

        let mut bad = sig;
        bad[0] = 4;
        assert_eq!(recover_public_key(presign, &bad, enc), Err(SignError::RecoveryId(4)));
        // r = 0 is out of range.
        let mut zero = [0u8; 65];
        zero[33..].copy_from_slice(&sig[33..]);
        assert_eq!(recover_public_key(presign, &zero, enc), Err(SignError::BadSignature));
        // Every r/s byte pattern either fails or recovers some key; it never panics.
        assert!(recover_public_key(presign, &[0xff; 65], enc).is_err());
    }
}
