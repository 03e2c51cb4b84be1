//! Bitcoin regtest addresses, as the incumbent's BTC faucet accepts them (bitcoinjs
//! `address.toOutputScript(address, regtest)`): base58check P2PKH (version 0x6f) and P2SH
//! (0xc4), and segwit (BIP-173 bech32 for v0, BIP-350 bech32m for v1+) with the `bcrt` prefix.
//! Also the faucet's own P2PKH address and WIF, for bitcoind.

use stacks_codec::address::{version, StacksAddress};
use stacks_codec::bech32::decode_segwit;
use stacks_codec::sign::PrivateKey;

/// The regtest segwit prefix.
pub const REGTEST_HRP: &str = "bcrt";

/// Why an address is not a regtest address (for the invalid-input error).
pub fn validate_regtest(address: &str) -> Result<(), String> {
    if address.is_empty() || address.len() > 90 {
        return Err(format!("{} characters is not a Bitcoin address", address.len()));
    }
    if address.to_ascii_lowercase().starts_with(&format!("{REGTEST_HRP}1")) {
        return segwit(address);
    }
    // Base58check: the codec reads the version into the Stacks version of the same hash.
    let parsed = StacksAddress::from_b58(address).map_err(|e| e.to_string())?;
    match parsed.version {
        version::TESTNET_SINGLE_SIG | version::TESTNET_MULTI_SIG => Ok(()),
        _ => Err(format!("{address} is not a regtest address (wrong network version)")),
    }
}

fn segwit(address: &str) -> Result<(), String> {
    let decoded = decode_segwit(address).map_err(|e| e.to_string())?;
    if decoded.hrp != REGTEST_HRP {
        return Err(format!("{address} is not a regtest address (prefix {})", decoded.hrp));
    }
    Ok(())
}

/// The faucet key's regtest P2PKH address (compressed public key).
pub fn p2pkh_address(key: &PrivateKey) -> String {
    StacksAddress::new(version::TESTNET_SINGLE_SIG, key.public_key().hash160()).to_b58()
}

/// The key in wallet import format for testnet/regtest (0xef, compressed), as bitcoind's
/// `signrawtransactionwithkey` takes it.
pub fn wif(secret: &[u8; 32]) -> String {
    let mut data = Vec::with_capacity(34);
    data.push(0xef);
    data.extend_from_slice(secret);
    data.push(0x01);
    bs58::encode(data).with_check().into_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regtest_addresses_are_accepted() {
        // Regtest P2PKH, P2SH, and BIP-173/350 style regtest addresses.
        for a in [
            "mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8r",
            "2N3vVYSK5XRgVSGWy21PnsRmBUywSQNdCsf",
            "bcrt1pqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqm3usuw",
            "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080",
            "BCRT1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KYGT080",
        ] {
            assert_eq!(validate_regtest(a), Ok(()), "{a}");
        }
    }

    #[test]
    fn other_networks_and_bad_checksums_are_refused() {
        for a in [
            // Mainnet P2PKH and bech32, testnet bech32 (not regtest).
            "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2",
            "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
            "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx",
            // One character changed.
            "mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8s",
            // The address the oracle asked about: its checksum is wrong.
            "mvtMXL9MYH8HYMY6xqgSbwk3cNYCsY6q7D",
            "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt081",
            "BCRT1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080",
            "",
            "INVALID",
        ] {
            assert!(validate_regtest(a).is_err(), "{a}");
        }
    }

    #[test]
    fn faucet_address_and_wif() {
        // Secret 1: the well-known compressed-key regtest address and WIF.
        let mut secret = [0u8; 32];
        secret[31] = 1;
        let key = crate::faucet::config::btc_private_key(&secret).unwrap();
        assert_eq!(p2pkh_address(&key), "mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8r");
        assert_eq!(wif(&secret), "cMahea7zqjxrtgAbB7LSGbcQUr1uX1ojuat9jZodMN87JcbXMTcA");
    }
}
