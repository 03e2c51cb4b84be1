//! Bitcoin reward addresses ↔ the PoX `{version, hashbytes}` tuple: base58check for the legacy
//! versions, bech32 (v0) and bech32m (v1, taproot) for the segwit ones.

use stacks_codec::address::StacksAddress;

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

const CHARSET: &[u8; 32] = b"qpzry9x8gf2tvdw0s3jn54khce6mua7l";
const BECH32_CONST: u32 = 1;
const BECH32M_CONST: u32 = 0x2bc8_30a3;

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
        P2WPKH if hashbytes.len() == 20 => segwit_encode(hrp(mainnet), 0, hashbytes),
        P2WSH if hashbytes.len() == 32 => segwit_encode(hrp(mainnet), 0, hashbytes),
        P2TR if hashbytes.len() == 32 => segwit_encode(hrp(mainnet), 1, hashbytes),
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
    if let Some((witver, prog)) = segwit_decode(addr) {
        return match (witver, prog.len()) {
            (0, 20) => Some((pox_version::P2WPKH, prog)),
            (0, 32) => Some((pox_version::P2WSH, prog)),
            (1, 32) => Some((pox_version::P2TR, prog)),
            _ => None,
        };
    }
    let a = StacksAddress::from_b58(addr).ok()?;
    let version = if a.is_multi_sig() { pox_version::P2SH } else { pox_version::P2PKH };
    Some((version, a.hash160.to_vec()))
}

fn polymod(values: &[u8]) -> u32 {
    const GEN: [u32; 5] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3];
    let mut chk: u32 = 1;
    for &v in values {
        let top = chk >> 25;
        chk = ((chk & 0x01ff_ffff) << 5) ^ u32::from(v);
        for (i, g) in GEN.iter().enumerate() {
            if (top >> i) & 1 == 1 {
                chk ^= g;
            }
        }
    }
    chk
}

fn hrp_expand(hrp: &str) -> Vec<u8> {
    let mut v: Vec<u8> = hrp.bytes().map(|b| b >> 5).collect();
    v.push(0);
    v.extend(hrp.bytes().map(|b| b & 31));
    v
}

fn convert_bits(data: &[u8], from: u32, to: u32, pad: bool) -> Option<Vec<u8>> {
    let (mut acc, mut bits, maxv) = (0u32, 0u32, (1u32 << to) - 1);
    let mut out = Vec::new();
    for &v in data {
        if u32::from(v) >> from != 0 {
            return None;
        }
        acc = (acc << from) | u32::from(v);
        bits += from;
        while bits >= to {
            bits -= to;
            out.push(((acc >> bits) & maxv) as u8);
        }
    }
    if pad {
        if bits > 0 {
            out.push(((acc << (to - bits)) & maxv) as u8);
        }
    } else if bits >= from || ((acc << (to - bits)) & maxv) != 0 {
        return None;
    }
    Some(out)
}

fn segwit_encode(hrp: &str, witver: u8, program: &[u8]) -> Option<String> {
    let mut data = vec![witver];
    data.extend(convert_bits(program, 8, 5, true)?);
    let constant = if witver == 0 { BECH32_CONST } else { BECH32M_CONST };
    let mut values = hrp_expand(hrp);
    values.extend(&data);
    values.extend([0u8; 6]);
    let pm = polymod(&values) ^ constant;
    let mut s = String::from(hrp);
    s.push('1');
    for d in data.iter().copied().chain((0..6).map(|i| ((pm >> (5 * (5 - i))) & 31) as u8)) {
        s.push(CHARSET[d as usize] as char);
    }
    Some(s)
}

fn segwit_decode(addr: &str) -> Option<(u8, Vec<u8>)> {
    let lower = addr.to_ascii_lowercase();
    let pos = lower.rfind('1')?;
    let (hrp, rest) = (&lower[..pos], &lower[pos + 1..]);
    if hrp.is_empty() || rest.len() < 7 {
        return None;
    }
    let data: Vec<u8> =
        rest.bytes().map(|c| CHARSET.iter().position(|&x| x == c).map(|p| p as u8)).collect::<Option<_>>()?;
    let mut values = hrp_expand(hrp);
    values.extend(&data);
    let check = polymod(&values);
    let (payload, _) = data.split_at(data.len() - 6);
    let (&witver, prog5) = payload.split_first()?;
    let expected = if witver == 0 { BECH32_CONST } else { BECH32M_CONST };
    if check != expected || witver > 16 {
        return None;
    }
    Some((witver, convert_bits(prog5, 5, 8, false)?))
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
