//! Bitcoin reward addresses ↔ the PoX `{version, hashbytes}` tuple: base58check for the legacy
//! versions, bech32 (v0) and bech32m (v1, taproot) for the segwit ones.

use stacks_codec::address::StacksAddress;
use stacks_codec::bech32::{decode_segwit, encode_segwit};

/// PoX address versions (pox-2+).
pub mod pox_version {
    pub const P2PKH: u8 = 0x00;
    pub const P2SH: u8 = 0x01;
    pub const P2SH_P2WPKH: u8 = 0x02;
    pub const P2SH_P2WSH: u8 = 0x03;
    pub const P2WPKH: u8 = 0x04;
    pub const P2WSH: u8 = 0x05;
    pub const P2TR: u8 = 0x06;
}

/// The Bitcoin address text of a PoX address, or `None` for an unknown version or a hash of
/// the wrong length. Non-mainnet segwit addresses use the `bcrt` prefix, as the reference
/// decoder does for every non-mainnet network.
pub fn pox_address_text(version: u8, hashbytes: &[u8], mainnet: bool) -> Option<String> {
    use pox_version::*;
    match version {
        P2PKH | P2SH | P2SH_P2WPKH | P2SH_P2WSH => {
            let hash: [u8; 20] = hashbytes.try_into().ok()?;
            let btc = match (version == P2PKH, mainnet) {
                (true, true) => 0,
                (true, false) => 111,
                (false, true) => 5,
                (false, false) => 196,
            };
            let mut data = [0u8; 21];
            data[0] = btc;
            data[1..].copy_from_slice(&hash);
            Some(bs58_check(&data))
        }
        P2WPKH if hashbytes.len() == 20 => encode_segwit(hrp(mainnet), 0, hashbytes),
        P2WSH if hashbytes.len() == 32 => encode_segwit(hrp(mainnet), 0, hashbytes),
        P2TR if hashbytes.len() == 32 => encode_segwit(hrp(mainnet), 1, hashbytes),
        _ => None,
    }
}

fn hrp(mainnet: bool) -> &'static str {
    if mainnet {
        "bc"
    } else {
        "bcrt"
    }
}

fn bs58_check(data: &[u8; 21]) -> String {
    // Reuse the codec's base58check (same bytes as a Stacks address of that version).
    let version = stacks_codec::address::btc_to_stacks_version(data[0]);
    let hash: [u8; 20] = data[1..].try_into().unwrap_or([0; 20]);
    // 0/111/5/196 map to Stacks 22/26/20/21, which `to_b58` maps back.
    StacksAddress::new(version, hash).to_b58()
}

/// Parses a Bitcoin address into a PoX `(version, hashbytes)`.
pub fn parse_pox_address(addr: &str) -> Option<(u8, Vec<u8>)> {
    if let Ok(s) = decode_segwit(addr) {
        return match (s.witness_version, s.program.len()) {
            (0, 20) => Some((pox_version::P2WPKH, s.program)),
            (0, 32) => Some((pox_version::P2WSH, s.program)),
            (1, 32) => Some((pox_version::P2TR, s.program)),
            _ => None,
        };
    }
    let a = StacksAddress::from_b58(addr).ok()?;
    let version = if a.is_multi_sig() { pox_version::P2SH } else { pox_version::P2PKH };
    Some((version, a.hash160.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segwit_round_trips() {
        // BIP-173 / BIP-350 vectors.
        let (v, p) = parse_pox_address("BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4").unwrap();
        assert_eq!(
            (v, hex::encode(&p)),
            (pox_version::P2WPKH, "751e76e8199196d454941c45d1b3a323f1433bd6".into())
        );
        assert_eq!(pox_address_text(v, &p, true).unwrap(), "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4");
        let taproot = "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0";
        let (v, p) = parse_pox_address(taproot).unwrap();
        assert_eq!(v, pox_version::P2TR);
        assert_eq!(pox_address_text(v, &p, true).unwrap(), taproot);
    }

    #[test]
    fn base58_round_trips() {
        let (v, p) = parse_pox_address("1111111111111111111114oLvT2").unwrap();
        assert_eq!((v, p), (pox_version::P2PKH, vec![0; 20]));
        assert_eq!(pox_address_text(0, &[0; 20], true).unwrap(), "1111111111111111111114oLvT2");
        let t = pox_address_text(1, &[7; 20], false).unwrap();
        assert_eq!(parse_pox_address(&t).unwrap(), (pox_version::P2SH, vec![7; 20]));
        assert!(pox_address_text(9, &[0; 20], true).is_none());
    }
}
