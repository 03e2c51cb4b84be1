//! The devnet's accounts: private keys derived from the seed, and everything the generator
//! prints about each account, computed once (deriving a public key is an elliptic-curve
//! multiplication; formatting a c32 address is not free either, and both are needed per tx).

use stacks_codec::address::{single_sig_address, PublicKeyBytes, StacksAddress};
use stacks_codec::clarity::Value;
use stacks_codec::hash::sha256;
use stacks_codec::sign::PrivateKey;
use stacks_codec::tx::HashMode;

use super::DevnetError;

/// One account's keys and names.
#[derive(Debug, Clone)]
pub struct DevKey {
    pub private_key: PrivateKey,
    pub public_key: PublicKeyBytes,
    pub address: StacksAddress,
    /// c32 text (`ST...` / `SP...`).
    pub c32: String,
    /// The Bitcoin P2PKH address with the same hash: the account's PoX reward address.
    pub btc: String,
    /// The address as a Clarity principal value.
    pub principal: Value,
}

/// Derives `count` accounts. Account `i`'s secret is `sha256(domain ‖ seed ‖ i ‖ attempt)`, the
/// first attempt that is a valid secp256k1 scalar (all but about 2^-128 of them are).
pub fn derive_accounts(seed: u64, count: u32, mainnet: bool) -> Result<Vec<DevKey>, DevnetError> {
    (0..count).map(|i| derive_account(seed, i, mainnet)).collect()
}

fn derive_account(seed: u64, index: u32, mainnet: bool) -> Result<DevKey, DevnetError> {
    let mut attempt = 0u32;
    let private_key = loop {
        let mut material = Vec::with_capacity(64);
        material.extend_from_slice(b"stacks-ledger devnet account key");
        material.extend_from_slice(&seed.to_be_bytes());
        material.extend_from_slice(&index.to_be_bytes());
        material.extend_from_slice(&attempt.to_be_bytes());
        let mut secret = sha256(&material).to_vec();
        // The trailing 0x01 marks a compressed-public-key private key, the usual kind.
        secret.push(0x01);
        match PrivateKey::from_slice(&secret) {
            Ok(key) => break key,
            Err(_) => attempt += 1,
        }
    };
    let public_key = private_key.public_key();
    let address = single_sig_address(mainnet, HashMode::P2PKH, &public_key)?;
    Ok(DevKey {
        c32: address.to_c32(),
        btc: address.to_b58(),
        principal: Value::Principal(stacks_codec::address::Principal::Standard(address)),
        private_key,
        public_key,
        address,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounts_depend_on_seed_index_and_network() {
        let a = derive_accounts(1, 3, false).unwrap();
        let b = derive_accounts(1, 3, false).unwrap();
        let c = derive_accounts(2, 3, false).unwrap();
        let m = derive_accounts(1, 3, true).unwrap();
        assert_eq!(
            a.iter().map(|k| &k.c32).collect::<Vec<_>>(),
            b.iter().map(|k| &k.c32).collect::<Vec<_>>()
        );
        assert_ne!(a[0].c32, a[1].c32);
        assert_ne!(a[0].c32, c[0].c32);
        assert!(a[0].c32.starts_with("ST") && m[0].c32.starts_with("SP"));
        assert_eq!(a[0].address.hash160, m[0].address.hash160);
        // Testnet P2PKH Bitcoin addresses start with m or n, mainnet ones with 1.
        assert!(a[0].btc.starts_with('m') || a[0].btc.starts_with('n'), "{}", a[0].btc);
        assert!(m[0].btc.starts_with('1'), "{}", m[0].btc);
    }
}
