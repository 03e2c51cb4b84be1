//! The sighash chain: the initial sighash, pre-sign and post-sign hashes.

use crate::hash::sha512_256;
use crate::tx::{
    AuthField, Authorization, HashMode, KeyEncoding, SingleSigSpendingCondition, SpendingCondition,
    Transaction,
};

/// Auth type byte the origin signs with, in standard *and* sponsored transactions.
pub const AUTH_TYPE_STANDARD: u8 = 0x04;
/// Auth type byte the sponsor signs with.
pub const AUTH_TYPE_SPONSORED: u8 = 0x05;

/// The txid of `tx` with its origin cleared (nonce 0, fee 0, signature zeroed or multisig fields
/// emptied; hash mode, signer, key encoding and signature count kept) and, when sponsored, the
/// sponsor replaced by the signing sentinel: P2PKH, all-zero signer, nonce and fee 0, compressed,
/// zero signature. stacks-core `into_initial_sighash_auth`; the sentinel's signer is zero there,
/// not the hash of a zero key that stacks.js puts into an unsigned sponsored transaction.
pub fn initial_sighash(tx: &Transaction) -> [u8; 32] {
    let origin = cleared(tx.auth.origin());
    let auth = match &tx.auth {
        Authorization::Standard(_) => Authorization::Standard(origin),
        Authorization::Sponsored(..) => Authorization::Sponsored(origin, sponsor_sentinel()),
    };
    // Cloning the payload is the simple way to reuse the one serializer; transactions are small.
    let cleared_tx = Transaction { auth, ..tx.clone() };
    cleared_tx.txid()
}

fn cleared(condition: &SpendingCondition) -> SpendingCondition {
    match condition {
        SpendingCondition::SingleSig(c) => SpendingCondition::SingleSig(SingleSigSpendingCondition {
            nonce: 0,
            tx_fee: 0,
            signature: [0; 65],
            ..c.clone()
        }),
        SpendingCondition::MultiSig(c) => SpendingCondition::MultiSig(crate::tx::MultiSigSpendingCondition {
            nonce: 0,
            tx_fee: 0,
            fields: Vec::new(),
            ..c.clone()
        }),
    }
}

fn sponsor_sentinel() -> SpendingCondition {
    SpendingCondition::SingleSig(SingleSigSpendingCondition {
        hash_mode: HashMode::P2PKH,
        signer: [0; 20],
        nonce: 0,
        tx_fee: 0,
        key_encoding: KeyEncoding::Compressed,
        signature: [0; 65],
    })
}

/// `H(cur ‖ auth_type ‖ fee ‖ nonce)`, big-endian: the hash a signer actually signs.
pub fn presign_sighash(cur: [u8; 32], auth_type: u8, fee: u64, nonce: u64) -> [u8; 32] {
    let mut buf = [0u8; 32 + 1 + 8 + 8];
    buf[..32].copy_from_slice(&cur);
    buf[32] = auth_type;
    buf[33..41].copy_from_slice(&fee.to_be_bytes());
    buf[41..].copy_from_slice(&nonce.to_be_bytes());
    sha512_256(&buf)
}

/// `H(presign ‖ key_encoding ‖ signature)`: where the chain goes after one signature.
pub fn postsign_sighash(presign: [u8; 32], key_encoding: KeyEncoding, signature_vrs: &[u8; 65]) -> [u8; 32] {
    let mut buf = [0u8; 32 + 1 + 65];
    buf[..32].copy_from_slice(&presign);
    buf[32] = key_encoding as u8;
    buf[33..].copy_from_slice(signature_vrs);
    sha512_256(&buf)
}

/// The sighash the chain reaches after `condition`'s signatures, starting from `cur`, without
/// recovering any key (only signature bytes and key encodings go into the chain). This is where
/// a sponsor starts, and where the next multisig signer picks up. Public-key fields do not move
/// the chain; non-sequential modes leave it where it was.
pub fn sighash_after(condition: &SpendingCondition, cur: [u8; 32], auth_type: u8) -> [u8; 32] {
    match condition {
        SpendingCondition::SingleSig(c) => {
            postsign_sighash(presign_sighash(cur, auth_type, c.tx_fee, c.nonce), c.key_encoding, &c.signature)
        }
        SpendingCondition::MultiSig(c) if c.hash_mode.is_non_sequential() => cur,
        SpendingCondition::MultiSig(c) => c.fields.iter().fold(cur, |cur, field| match field {
            AuthField::Signature { key_encoding, signature } => {
                postsign_sighash(presign_sighash(cur, auth_type, c.tx_fee, c.nonce), *key_encoding, signature)
            }
            AuthField::PublicKey { .. } => cur,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Vector "transfer #0" of signing.json.
    #[test]
    fn presign_and_postsign_match_a_vector() {
        let h = |s: &str| -> [u8; 32] { hex::decode(s).unwrap().try_into().unwrap() };
        let initial = h("0b6a33b511c6d59c53c8f90d715e244eca242b46d52126cdd00885202094a834");
        let presign = presign_sighash(initial, AUTH_TYPE_STANDARD, 609530, 41617);
        assert_eq!(presign, h("083b9bc9b1175a02e2444daf211c02eccac7d7bfb2b82eedb4a2fe5d7e819c28"));
        let sig: [u8; 65] = hex::decode(
            "00d782364caa5f97c834eb7a9681ff6052421adda7da45ee0e577302b1efb3869825fd8a4bdcd18145f928ce9fb7c7b01a4d0125edc0f4f90810030f3252ec8aef",
        )
        .unwrap()
        .try_into()
        .unwrap();
        assert_eq!(
            postsign_sighash(presign, KeyEncoding::Compressed, &sig),
            h("8b9cd199578a5c06de54754ad91e17baee300c3deb6a3da758facbb29c8f4eb2")
        );
    }
}
