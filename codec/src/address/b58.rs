//! Bitcoin base58check addresses for the same hash (`c32ToB58` / `b58ToC32`,
//! `stacksToBitcoinAddress` / `bitcoinToStacksAddress`).

use super::{version, StacksAddress};
use crate::CodecError;

/// Bitcoin version bytes.
pub mod btc_version {
    pub const MAINNET_P2PKH: u8 = 0;
    pub const MAINNET_P2SH: u8 = 5;
    pub const TESTNET_P2PKH: u8 = 111;
    pub const TESTNET_P2SH: u8 = 196;
}

/// A base58check address is 25 bytes, at most 35 characters; anything much longer is refused
/// before decoding, whose cost grows with the square of the length.
const MAX_B58_LEN: usize = 64;

/// The Bitcoin version for a Stacks version. Other versions map to themselves, as in c32check.
pub const fn stacks_to_btc_version(v: u8) -> u8 {
    match v {
        version::MAINNET_SINGLE_SIG => btc_version::MAINNET_P2PKH,
        version::MAINNET_MULTI_SIG => btc_version::MAINNET_P2SH,
        version::TESTNET_SINGLE_SIG => btc_version::TESTNET_P2PKH,
        version::TESTNET_MULTI_SIG => btc_version::TESTNET_P2SH,
        other => other,
    }
}

/// The Stacks version for a Bitcoin version. Other versions map to themselves, as in c32check;
/// the result may then be 32 or more, which `from_b58` rejects.
pub const fn btc_to_stacks_version(v: u8) -> u8 {
    match v {
        btc_version::MAINNET_P2PKH => version::MAINNET_SINGLE_SIG,
        btc_version::MAINNET_P2SH => version::MAINNET_MULTI_SIG,
        btc_version::TESTNET_P2PKH => version::TESTNET_SINGLE_SIG,
        btc_version::TESTNET_P2SH => version::TESTNET_MULTI_SIG,
        other => other,
    }
}

impl StacksAddress {
    /// The Bitcoin base58check address of the same hash, e.g. `SP000000000000000000002Q6VF78` →
    /// `1111111111111111111114oLvT2`.
    pub fn to_b58(&self) -> String {
        let mut data = [0u8; 21];
        data[0] = stacks_to_btc_version(self.version);
        data[1..].copy_from_slice(&self.hash160);
        bs58::encode(data).with_check().into_string()
    }

    /// Parses a Bitcoin base58check address (version byte + 20-byte hash) into the Stacks address
    /// of the same hash. Note that versions are not a bijection: Stacks version 0 and 22 both
    /// become Bitcoin version 0, which comes back as 22.
    pub fn from_b58(s: &str) -> Result<StacksAddress, CodecError> {
        if s.len() > MAX_B58_LEN {
            return Err(CodecError::Address(format!("{} characters is too long for base58check", s.len())));
        }
        let data = bs58::decode(s)
            .with_check(None)
            .into_vec()
            .map_err(|e| CodecError::Address(format!("{s}: base58check: {e}")))?;
        let (&btc, hash) = data.split_first().ok_or_else(|| CodecError::Address(format!("{s}: empty")))?;
        let hash160: [u8; 20] = hash.try_into().map_err(|_| {
            CodecError::Address(format!("{s}: expected a 20-byte hash, got {} bytes", hash.len()))
        })?;
        StacksAddress::try_new(btc_to_stacks_version(btc), hash160)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_map_both_ways() {
        for v in [22, 20, 26, 21, 1, 31] {
            assert_eq!(btc_to_stacks_version(stacks_to_btc_version(v)), v);
        }
        // Stacks 0 shares Bitcoin 0 with mainnet single-sig.
        assert_eq!(btc_to_stacks_version(stacks_to_btc_version(0)), 22);
    }

    #[test]
    fn rejects_bad_input() {
        let a = StacksAddress::new(22, [7; 20]);
        let good = a.to_b58();
        assert_eq!(StacksAddress::from_b58(&good).unwrap(), a);
        let mut bad = good.clone();
        bad.pop();
        assert!(StacksAddress::from_b58(&bad).is_err());
        assert!(StacksAddress::from_b58("").is_err());
        assert!(StacksAddress::from_b58("0OIl").is_err());
        assert!(StacksAddress::from_b58(&"1".repeat(10_000)).is_err());
        // Version 0x80 has no Stacks counterpart below 32.
        let v128 = bs58::encode([[0x80u8].as_slice(), &[1u8; 20]].concat()).with_check().into_string();
        assert!(StacksAddress::from_b58(&v128).is_err());
        // A 21-byte hash.
        let long = bs58::encode([0u8; 22]).with_check().into_string();
        assert!(StacksAddress::from_b58(&long).is_err());
    }
}
