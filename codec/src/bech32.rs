//! Segwit addresses: BIP-173 bech32 (witness v0) and BIP-350 bech32m (v1+), through the
//! `bech32` crate. Used for PoX reward addresses and the BTC faucet's regtest addresses; this
//! module only keeps the codec's own address type and reasons for a refusal.

use std::fmt;

use bech32::primitives::decode::{
    CharError, ChecksumError, SegwitHrpstringError, UncheckedHrpstring, UncheckedHrpstringError,
};
use bech32::primitives::hrp;
use bech32::primitives::segwit::MAX_STRING_LENGTH;
use bech32::{segwit, Fe32, Hrp};

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
    // The string's shape first, so its reason is the one a reader looks for first.
    if addr.len() > MAX_STRING_LENGTH {
        return Err(SegwitError::TooLong(addr.len()));
    }
    if addr.bytes().any(|b| b.is_ascii_lowercase()) && addr.bytes().any(|b| b.is_ascii_uppercase()) {
        return Err(SegwitError::MixedCase);
    }
    let Some((_, data)) = addr.rsplit_once('1').filter(|(hrp, _)| !hrp.is_empty()) else {
        return Err(SegwitError::NoSeparator);
    };
    let (hrp, version, program) =
        segwit::decode(addr).map_err(|e| match SegwitError::from_crate(e.0, addr) {
            // A witness version and a checksum need seven characters.
            SegwitError::BadChecksum if data.len() < 7 => SegwitError::TooShort,
            why => why,
        })?;
    Ok(Segwit { hrp: hrp.to_lowercase(), witness_version: version.to_u8(), program })
}

/// Encodes a segwit address (lowercase), or `None` for a witness version above 16, a program
/// length BIP-141 does not allow, or an invalid human-readable part.
pub fn encode_segwit(hrp: &str, witness_version: u8, program: &[u8]) -> Option<String> {
    let hrp = Hrp::parse(hrp).ok()?;
    let version = Fe32::try_from(witness_version).ok()?;
    segwit::encode(hrp, version, program).ok()
}

impl SegwitError {
    /// The crate's nested error, flattened into this module's reasons.
    fn from_crate(e: SegwitHrpstringError, addr: &str) -> SegwitError {
        match e {
            SegwitHrpstringError::Unchecked(UncheckedHrpstringError::Char(c)) => match c {
                CharError::MissingSeparator => SegwitError::NoSeparator,
                CharError::MixedCase => SegwitError::MixedCase,
                CharError::NothingAfterSeparator => SegwitError::TooShort,
                _ => SegwitError::InvalidCharacter,
            },
            SegwitHrpstringError::Unchecked(UncheckedHrpstringError::Hrp(h)) => match h {
                hrp::Error::MixedCase => SegwitError::MixedCase,
                hrp::Error::Empty => SegwitError::NoSeparator,
                hrp::Error::TooLong(_) => SegwitError::TooLong(addr.len()),
                _ => SegwitError::InvalidCharacter,
            },
            SegwitHrpstringError::TooLong(len) => SegwitError::TooLong(len),
            SegwitHrpstringError::NoData => SegwitError::TooShort,
            SegwitHrpstringError::InvalidWitnessVersion(v) => SegwitError::WitnessVersion(v.to_u8()),
            SegwitHrpstringError::Padding(_) => SegwitError::BadPadding,
            SegwitHrpstringError::WitnessLength(_) => {
                let (witness_version, len) = program_shape(addr);
                SegwitError::ProgramLength { witness_version, len }
            }
            SegwitHrpstringError::Checksum(ChecksumError::InvalidResidue(_)) => SegwitError::BadChecksum,
            SegwitHrpstringError::Checksum(_) => SegwitError::TooShort,
            _ => SegwitError::BadChecksum,
        }
    }
}

/// The witness version and program length of an address whose checksum and padding were
/// accepted (the crate's length error does not carry them).
fn program_shape(addr: &str) -> (u8, usize) {
    let Ok(mut s) = UncheckedHrpstring::new(addr) else { return (0, 0) };
    let version = s.remove_witness_version().map_or(0, Fe32::to_u8);
    // Data characters after the version, less the six of the checksum, as whole bytes.
    (version, s.data_part_ascii().len().saturating_sub(6) * 5 / 8)
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

    #[test]
    fn checksum_follows_the_witness_version() {
        use SegwitError::*;
        // BIP-350's invalid vectors: a v1+ address with a bech32 checksum, a v0 with bech32m.
        for (addr, why) in [
            ("tb1z0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqglt2jd", BadChecksum),
            ("bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh", BadChecksum),
            ("BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R", WitnessVersion(17)),
            ("bc1pw5dgrnzv", ProgramLength { witness_version: 1, len: 1 }),
            ("BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P", ProgramLength { witness_version: 0, len: 16 }),
            ("tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47Zagq", MixedCase),
            ("bc1gmk9yu", TooShort),
            ("tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vpggkg4j", BadPadding),
        ] {
            assert_eq!(decode_segwit(addr), Err(why), "{addr}");
        }
        assert_eq!(encode_segwit("bc", 17, &[0; 20]), None);
        assert_eq!(encode_segwit("bc", 0, &[0; 21]), None);
        let v16 = decode_segwit("BC1SW50QGDZ25J").unwrap();
        assert_eq!((v16.hrp.as_str(), v16.witness_version, v16.program.len()), ("bc", 16, 2));
        assert_eq!(encode_segwit("bc", 16, &v16.program).unwrap(), "bc1sw50qgdz25j");
    }
}
