//! Segwit addresses: BIP-173 bech32 (witness v0) and BIP-350 bech32m (v1+). Used for PoX reward
//! addresses and the BTC faucet's regtest addresses; one copy of the checksum code for both.

use std::fmt;

const CHARSET: &[u8; 32] = b"qpzry9x8gf2tvdw0s3jn54khce6mua7l";
const BECH32_CONST: u32 = 1;
const BECH32M_CONST: u32 = 0x2bc8_30a3;

/// A decoded segwit address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segwit {
    /// Human-readable part, lowercase (`bc`, `tb`, `bcrt`).
    pub hrp: String,
    pub witness_version: u8,
    pub program: Vec<u8>,
}

/// Why a string is not a segwit address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SegwitError {
    TooLong(usize),
    MixedCase,
    NoSeparator,
    InvalidCharacter,
    TooShort,
    BadChecksum,
    WitnessVersion(u8),
    BadPadding,
    ProgramLength { witness_version: u8, len: usize },
}

impl fmt::Display for SegwitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLong(n) => write!(f, "{n} characters is too long for a bech32 address"),
            Self::MixedCase => f.write_str("mixed-case bech32"),
            Self::NoSeparator => f.write_str("no bech32 separator"),
            Self::InvalidCharacter => f.write_str("invalid bech32 character"),
            Self::TooShort => f.write_str("bech32 data too short"),
            Self::BadChecksum => f.write_str("bad bech32 checksum"),
            Self::WitnessVersion(v) => write!(f, "witness version {v}"),
            Self::BadPadding => f.write_str("bad bech32 padding"),
            Self::ProgramLength { witness_version, len } => {
                write!(f, "a v{witness_version} witness program of {len} bytes")
            }
        }
    }
}

impl std::error::Error for SegwitError {}

/// Decodes a segwit address, with the checksum its witness version requires (bech32 for v0,
/// bech32m above) and BIP-141's program lengths.
pub fn decode_segwit(addr: &str) -> Result<Segwit, SegwitError> {
    if addr.len() > 90 {
        return Err(SegwitError::TooLong(addr.len()));
    }
    let has_lower = addr.bytes().any(|b| b.is_ascii_lowercase());
    let has_upper = addr.bytes().any(|b| b.is_ascii_uppercase());
    if has_lower && has_upper {
        return Err(SegwitError::MixedCase);
    }
    let lower = addr.to_ascii_lowercase();
    let (hrp, rest) = lower.rsplit_once('1').ok_or(SegwitError::NoSeparator)?;
    if hrp.is_empty() {
        return Err(SegwitError::NoSeparator);
    }
    let data: Vec<u8> = rest
        .bytes()
        .map(|c| CHARSET.iter().position(|&x| x == c).map(|p| p as u8))
        .collect::<Option<_>>()
        .ok_or(SegwitError::InvalidCharacter)?;
    if data.len() < 7 {
        return Err(SegwitError::TooShort);
    }
    let mut values = hrp_expand(hrp);
    values.extend(&data);
    let check = polymod(&values);
    let (&witness_version, body) = data[..data.len() - 6].split_first().ok_or(SegwitError::TooShort)?;
    if witness_version > 16 {
        return Err(SegwitError::WitnessVersion(witness_version));
    }
    if check != checksum_constant(witness_version) {
        return Err(SegwitError::BadChecksum);
    }
    let program = convert_bits(body, 5, 8, false).ok_or(SegwitError::BadPadding)?;
    let len = program.len();
    match (witness_version, len) {
        (0, 20 | 32) | (1..=16, 2..=40) => Ok(Segwit { hrp: hrp.to_string(), witness_version, program }),
        _ => Err(SegwitError::ProgramLength { witness_version, len }),
    }
}

/// Encodes a segwit address (lowercase), or `None` for a witness version above 16.
pub fn encode_segwit(hrp: &str, witness_version: u8, program: &[u8]) -> Option<String> {
    if witness_version > 16 {
        return None;
    }
    let mut data = vec![witness_version];
    data.extend(convert_bits(program, 8, 5, true)?);
    let mut values = hrp_expand(hrp);
    values.extend(&data);
    values.extend([0u8; 6]);
    let pm = polymod(&values) ^ checksum_constant(witness_version);
    let mut s = String::with_capacity(hrp.len() + 1 + data.len() + 6);
    s.push_str(hrp);
    s.push('1');
    for d in data.iter().copied().chain((0..6).map(|i| ((pm >> (5 * (5 - i))) & 31) as u8)) {
        s.push(CHARSET[usize::from(d)] as char);
    }
    Some(s)
}

fn checksum_constant(witness_version: u8) -> u32 {
    if witness_version == 0 {
        BECH32_CONST
    } else {
        BECH32M_CONST
    }
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

/// Regroups bits (8 → 5 with padding to encode, 5 → 8 without to decode; then at most 4 bits
/// of zero padding may be left over).
fn convert_bits(data: &[u8], from: u32, to: u32, pad: bool) -> Option<Vec<u8>> {
    let (mut acc, mut bits, maxv) = (0u32, 0u32, (1u32 << to) - 1);
    let mut out = Vec::with_capacity(data.len() * from as usize / to as usize + 1);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bip173_and_bip350_vectors() {
        let a = decode_segwit("BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4").unwrap();
        assert_eq!((a.hrp.as_str(), a.witness_version), ("bc", 0));
        assert_eq!(hex::encode(&a.program), "751e76e8199196d454941c45d1b3a323f1433bd6");
        assert_eq!(encode_segwit("bc", 0, &a.program).unwrap(), "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4");
        let taproot = "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0";
        let t = decode_segwit(taproot).unwrap();
        assert_eq!((t.witness_version, t.program.len()), (1, 32));
        assert_eq!(encode_segwit("bc", 1, &t.program).unwrap(), taproot);
    }

    #[test]
    fn invalid_addresses_say_why() {
        use SegwitError::*;
        for (addr, why) in [
            ("BCRT1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080", MixedCase),
            ("bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt082", BadChecksum),
            ("bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3tb", InvalidCharacter),
            ("nosep", NoSeparator),
            ("bc1qqqqq", TooShort),
        ] {
            assert_eq!(decode_segwit(addr), Err(why), "{addr}");
        }
    }
}
