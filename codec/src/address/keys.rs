//! Addresses from public keys: the signer hash of a spending condition.
//!
//! Stacks hashes keys the way Bitcoin builds the matching scripts:
//! * P2PKH: `hash160(key)`, the key bytes as given (33 or 65).
//! * P2WPKH: `hash160(0x00 0x14 ‖ hash160(key))`, the P2SH-wrapped witness program; compressed only.
//! * P2SH (and non-sequential 0x05): `hash160(OP_m <keys> OP_n OP_CHECKMULTISIG)`.
//! * P2WSH (and non-sequential 0x07): `hash160(0x00 0x20 ‖ sha256(that script))`; compressed only.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use super::{version, StacksAddress};
use crate::hash::{hash160, sha256};
use crate::tx::{HashMode, KeyEncoding};
use crate::CodecError;

/// Why a public key, or a set of them, cannot make an address.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PublicKeyError {
    #[error("public key must be 33 (compressed) or 65 (uncompressed) bytes, got {0}")]
    Length(usize),
    #[error("public key prefix 0x{0:02x} is not 0x02/0x03 (compressed) or 0x04 (uncompressed)")]
    Prefix(u8),
    #[error("public key is not a point on secp256k1")]
    NotOnCurve,
    #[error("invalid public key hex: {0}")]
    Hex(String),
    #[error("no public keys")]
    NoKeys,
    #[error("a single-sig hash mode takes exactly one key and one signature, got {keys} keys and {signatures} signatures")]
    SingleSigShape { keys: usize, signatures: u16 },
    #[error("a multisig needs 1 to {keys} signatures, got {signatures}")]
    SignatureCount { keys: usize, signatures: u16 },
    /// stacks.js: "Public keys must be compressed for segwit".
    #[error("public keys must be compressed for segwit hash modes")]
    UncompressedSegwit,
    #[error("{0:?} is not a single-sig hash mode")]
    NotSingleSig(HashMode),
    #[error("address version {0} is 32 or more")]
    Version(u8),
}

impl From<PublicKeyError> for CodecError {
    fn from(e: PublicKeyError) -> Self {
        CodecError::PublicKey(e)
    }
}

/// A secp256k1 public key in SEC1 form, kept byte for byte as given because P2PKH hashes the
/// bytes themselves. The constructors check the point; the variants are public for matching.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum PublicKeyBytes {
    Compressed([u8; 33]),
    Uncompressed([u8; 65]),
}

impl PublicKeyBytes {
    /// A 33-byte `02`/`03` or 65-byte `04` key that lies on the curve.
    pub fn from_slice(bytes: &[u8]) -> Result<Self, PublicKeyError> {
        let key = match bytes.len() {
            33 => {
                let mut k = [0u8; 33];
                k.copy_from_slice(bytes);
                PublicKeyBytes::Compressed(k)
            }
            65 => {
                let mut k = [0u8; 65];
                k.copy_from_slice(bytes);
                PublicKeyBytes::Uncompressed(k)
            }
            n => return Err(PublicKeyError::Length(n)),
        };
        let prefix = bytes.first().copied().unwrap_or_default();
        // Hybrid keys (0x06/0x07) parse in libsecp256k1 but hash differently from their 0x04 form.
        let prefix_ok = match key {
            PublicKeyBytes::Compressed(_) => prefix == 0x02 || prefix == 0x03,
            PublicKeyBytes::Uncompressed(_) => prefix == 0x04,
        };
        if !prefix_ok {
            return Err(PublicKeyError::Prefix(prefix));
        }
        secp256k1::PublicKey::from_slice(bytes).map_err(|_| PublicKeyError::NotOnCurve)?;
        Ok(key)
    }

    /// A key from a multisig auth field: always 33 bytes on the wire, with the key encoding saying
    /// whether the signer's address hashes it compressed or uncompressed.
    pub fn from_wire(key: &[u8; 33], encoding: KeyEncoding) -> Result<Self, PublicKeyError> {
        let compressed = Self::from_slice(key)?;
        match encoding {
            KeyEncoding::Compressed => Ok(compressed),
            KeyEncoding::Uncompressed => {
                let point = secp256k1::PublicKey::from_slice(key).map_err(|_| PublicKeyError::NotOnCurve)?;
                Ok(PublicKeyBytes::Uncompressed(point.serialize_uncompressed()))
            }
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        match self {
            PublicKeyBytes::Compressed(k) => k,
            PublicKeyBytes::Uncompressed(k) => k,
        }
    }

    pub fn is_compressed(&self) -> bool {
        matches!(self, PublicKeyBytes::Compressed(_))
    }

    pub fn key_encoding(&self) -> KeyEncoding {
        if self.is_compressed() {
            KeyEncoding::Compressed
        } else {
            KeyEncoding::Uncompressed
        }
    }

    /// The 33-byte form, as carried in multisig auth fields whatever the key encoding.
    pub fn to_compressed(&self) -> [u8; 33] {
        match self {
            PublicKeyBytes::Compressed(k) => *k,
            PublicKeyBytes::Uncompressed(k) => {
                let mut c = [0u8; 33];
                c[0] = 0x02 | (k[64] & 1);
                c[1..].copy_from_slice(&k[1..33]);
                c
            }
        }
    }

    /// `hash160` of the bytes as given: the P2PKH signer hash.
    pub fn hash160(&self) -> [u8; 20] {
        hash160(self.as_bytes())
    }
}

impl fmt::Debug for PublicKeyBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKeyBytes({})", hex::encode(self.as_bytes()))
    }
}

impl fmt::Display for PublicKeyBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex::encode(self.as_bytes()))
    }
}

/// Hex, with or without `0x`.
impl FromStr for PublicKeyBytes {
    type Err = PublicKeyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // 65 bytes is 130 hex digits; refuse longer text before allocating for it.
        let digits = s.strip_prefix("0x").unwrap_or(s);
        if digits.len() > 130 {
            return Err(PublicKeyError::Length(digits.len() / 2));
        }
        let bytes = hex::decode(digits).map_err(|e| PublicKeyError::Hex(e.to_string()))?;
        Self::from_slice(&bytes)
    }
}

fn is_segwit(mode: HashMode) -> bool {
    matches!(mode, HashMode::P2WPKH | HashMode::P2WSH | HashMode::P2WSHNonSequential)
}

/// Bitcoin's `push_int`: OP_0, OP_1..OP_16, else a minimal script number. stacks.js stops at 15
/// keys; stacks-core (which decides what is valid on chain) builds the script this way for any count.
fn push_int(script: &mut Vec<u8>, n: u64) {
    match n {
        0 => script.push(0x00),
        1..=16 => script.push(0x50 + n as u8),
        _ => {
            let mut num: Vec<u8> = n.to_le_bytes().into_iter().collect();
            while num.last() == Some(&0) {
                num.pop();
            }
            // The top bit is the sign, so a positive number with it set takes one more byte.
            if num.last().is_some_and(|b| b & 0x80 != 0) {
                num.push(0);
            }
            script.push(num.len() as u8); // at most 9 bytes: a direct push
            script.extend_from_slice(&num);
        }
    }
}

const OP_CHECKMULTISIG: u8 = 0xae;

fn multisig_script(signatures: u16, keys: &[PublicKeyBytes]) -> Vec<u8> {
    let mut script = Vec::with_capacity(3 + keys.len() * 66);
    push_int(&mut script, u64::from(signatures));
    for k in keys {
        let bytes = k.as_bytes();
        script.push(bytes.len() as u8); // 33 or 65: a direct push
        script.extend_from_slice(bytes);
    }
    push_int(&mut script, keys.len() as u64);
    script.push(OP_CHECKMULTISIG);
    script
}

/// The 20-byte signer hash of a spending condition with these keys, as stacks.js
/// `addressFromPublicKeys` and stacks-core `public_keys_to_address_hash` compute it.
pub fn signer_hash160(
    hash_mode: HashMode,
    signatures_required: u16,
    public_keys: &[PublicKeyBytes],
) -> Result<[u8; 20], PublicKeyError> {
    let keys = public_keys.len();
    if keys == 0 {
        return Err(PublicKeyError::NoKeys);
    }
    let single = matches!(hash_mode, HashMode::P2PKH | HashMode::P2WPKH);
    if single && (keys != 1 || signatures_required != 1) {
        return Err(PublicKeyError::SingleSigShape { keys, signatures: signatures_required });
    }
    if !single && (signatures_required == 0 || usize::from(signatures_required) > keys) {
        return Err(PublicKeyError::SignatureCount { keys, signatures: signatures_required });
    }
    if is_segwit(hash_mode) && !public_keys.iter().all(PublicKeyBytes::is_compressed) {
        return Err(PublicKeyError::UncompressedSegwit);
    }
    Ok(match (hash_mode, public_keys) {
        (HashMode::P2PKH, [key]) => key.hash160(),
        (HashMode::P2WPKH, [key]) => {
            let mut program = [0u8; 22];
            program[0] = 0x00;
            program[1] = 0x14;
            program[2..].copy_from_slice(&key.hash160());
            hash160(&program)
        }
        (HashMode::P2SH | HashMode::P2SHNonSequential, keys) => {
            hash160(&multisig_script(signatures_required, keys))
        }
        (HashMode::P2WSH | HashMode::P2WSHNonSequential, keys) => {
            let mut program = [0u8; 34];
            program[0] = 0x00;
            program[1] = 0x20;
            program[2..].copy_from_slice(&sha256(&multisig_script(signatures_required, keys)));
            hash160(&program)
        }
        // Single-sig modes with other than one key were refused above.
        (HashMode::P2PKH | HashMode::P2WPKH, _) => {
            return Err(PublicKeyError::SingleSigShape { keys, signatures: signatures_required })
        }
    })
}

/// The address for `version` (below 32) whose hash is the signer hash of these keys.
pub fn address_from_public_keys(
    version: u8,
    hash_mode: HashMode,
    signatures_required: u16,
    public_keys: &[PublicKeyBytes],
) -> Result<StacksAddress, CodecError> {
    if version >= 32 {
        return Err(PublicKeyError::Version(version).into());
    }
    let hash = signer_hash160(hash_mode, signatures_required, public_keys)?;
    Ok(StacksAddress::new(version, hash))
}

/// A single-sig address (`P2PKH` or `P2WPKH`) with the network's usual version: single-sig for
/// P2PKH, multi-sig for P2WPKH (a P2SH-wrapped script, as in stacks-core and stacks.js).
pub fn single_sig_address(
    mainnet: bool,
    hash_mode: HashMode,
    public_key: &PublicKeyBytes,
) -> Result<StacksAddress, CodecError> {
    if !matches!(hash_mode, HashMode::P2PKH | HashMode::P2WPKH) {
        return Err(PublicKeyError::NotSingleSig(hash_mode).into());
    }
    address_from_public_keys(
        version::for_hash_mode(hash_mode, mainnet),
        hash_mode,
        1,
        std::slice::from_ref(public_key),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: &str = "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798";

    fn g() -> PublicKeyBytes {
        G.parse().unwrap()
    }

    #[test]
    fn parses_and_checks_keys() {
        assert!(g().is_compressed());
        assert_eq!(g().to_string(), G);
        assert_eq!(PublicKeyBytes::from_slice(&[2; 32]), Err(PublicKeyError::Length(32)));
        let mut bad = g().to_compressed();
        bad[0] = 0x05;
        assert_eq!(PublicKeyBytes::from_slice(&bad), Err(PublicKeyError::Prefix(5)));
        // x = 5 is not on secp256k1 (5^3 + 7 = 132 is not a square mod p).
        let mut off = [0u8; 33];
        off[0] = 2;
        off[32] = 5;
        assert_eq!(PublicKeyBytes::from_slice(&off), Err(PublicKeyError::NotOnCurve));
        assert!("zz".parse::<PublicKeyBytes>().is_err());
        assert!("00".repeat(1000).parse::<PublicKeyBytes>().is_err());
    }

    #[test]
    fn wire_keys_decompress_and_back() {
        let u = PublicKeyBytes::from_wire(&g().to_compressed(), KeyEncoding::Uncompressed).unwrap();
        assert!(!u.is_compressed());
        assert_eq!(u.key_encoding(), KeyEncoding::Uncompressed);
        assert_eq!(u.to_compressed(), g().to_compressed());
        assert_eq!(PublicKeyBytes::from_slice(u.as_bytes()).unwrap(), u);
    }

    #[test]
    fn push_int_matches_bitcoin_script_numbers() {
        let enc = |n| {
            let mut s = vec![];
            push_int(&mut s, n);
            s
        };
        assert_eq!(enc(0), [0x00]);
        assert_eq!(enc(1), [0x51]);
        assert_eq!(enc(16), [0x60]);
        assert_eq!(enc(17), [0x01, 0x11]);
        assert_eq!(enc(127), [0x01, 0x7f]);
        assert_eq!(enc(128), [0x02, 0x80, 0x00]);
        assert_eq!(enc(255), [0x02, 0xff, 0x00]);
        assert_eq!(enc(256), [0x02, 0x00, 0x01]);
    }

    #[test]
    fn refuses_bad_shapes() {
        let k = g();
        let err = |m, sigs, keys: &[PublicKeyBytes]| signer_hash160(m, sigs, keys).unwrap_err();
        assert_eq!(err(HashMode::P2SH, 1, &[]), PublicKeyError::NoKeys);
        assert!(matches!(err(HashMode::P2PKH, 1, &[k, k]), PublicKeyError::SingleSigShape { .. }));
        assert!(matches!(err(HashMode::P2WPKH, 2, &[k]), PublicKeyError::SingleSigShape { .. }));
        assert!(matches!(err(HashMode::P2SH, 0, &[k]), PublicKeyError::SignatureCount { .. }));
        assert!(matches!(err(HashMode::P2WSH, 3, &[k, k]), PublicKeyError::SignatureCount { .. }));
        let u = PublicKeyBytes::from_wire(&k.to_compressed(), KeyEncoding::Uncompressed).unwrap();
        assert_eq!(err(HashMode::P2WPKH, 1, &[u]), PublicKeyError::UncompressedSegwit);
        assert_eq!(err(HashMode::P2WSHNonSequential, 1, &[u, k]), PublicKeyError::UncompressedSegwit);
        assert!(signer_hash160(HashMode::P2SH, 1, &[u, k]).is_ok());
        assert!(single_sig_address(true, HashMode::P2SH, &k).is_err());
        assert!(address_from_public_keys(32, HashMode::P2PKH, 1, &[k]).is_err());
    }

    #[test]
    fn seventeen_keys_use_a_pushed_number() {
        // stacks-core builds OP_17-less scripts with a 1-byte push; just check it hashes and differs.
        let keys = vec![g(); 17];
        let a = signer_hash160(HashMode::P2SH, 17, &keys).unwrap();
        let b = signer_hash160(HashMode::P2SH, 16, &keys[..16]).unwrap();
        assert_ne!(a, b);
    }
}
