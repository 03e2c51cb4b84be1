//! c32check addresses and principals.
//!
//! A Stacks address is a version byte plus a 20-byte hash; its text form is `S` followed by
//! the c32check encoding (version char, then data + checksum).

use std::fmt;
use std::str::FromStr;

use crate::CodecError;

/// Address versions.
pub mod version {
    pub const MAINNET_SINGLE_SIG: u8 = 22; // SP
    pub const MAINNET_MULTI_SIG: u8 = 20; // SM
    pub const TESTNET_SINGLE_SIG: u8 = 26; // ST
    pub const TESTNET_MULTI_SIG: u8 = 21; // SN
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StacksAddress {
    pub version: u8,
    pub hash160: [u8; 20],
}

impl StacksAddress {
    pub fn new(version: u8, hash160: [u8; 20]) -> Self {
        StacksAddress { version, hash160 }
    }

    /// c32check text, e.g. `SP000000000000000000002Q6VF78`. Versions must be < 32; any
    /// version byte read off the wire is masked by the decoders before it gets here.
    pub fn to_c32(&self) -> String {
        c32::encode_check_prefixed(self.hash160, 'S', self.version)
            .expect("a 20-byte hash with a version below 32 always encodes")
    }
}

impl fmt::Display for StacksAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_c32())
    }
}

impl FromStr for StacksAddress {
    type Err = CodecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (data, version) =
            c32::decode_check_prefixed(s, 'S').map_err(|e| CodecError::Address(format!("{s}: {e}")))?;
        let hash160: [u8; 20] = data
            .as_slice()
            .try_into()
            .map_err(|_| CodecError::Address(format!("{s}: expected a 20-byte hash, got {}", data.len())))?;
        Ok(StacksAddress { version, hash160 })
    }
}

/// A contract name: 1 to 128 bytes on the wire (length-prefixed by one byte).
pub const MAX_CONTRACT_NAME_LEN: usize = 128;

/// `address.name`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContractId {
    pub address: StacksAddress,
    pub name: String,
}

impl fmt::Display for ContractId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.address, self.name)
    }
}

/// A Clarity principal: a standard address or a contract.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Principal {
    Standard(StacksAddress),
    Contract(ContractId),
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Principal::Standard(a) => a.fmt(f),
            Principal::Contract(c) => c.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c32_round_trip() {
        let a = StacksAddress::new(22, [0; 20]);
        assert_eq!(a.to_c32(), "SP000000000000000000002Q6VF78");
        assert_eq!("SP000000000000000000002Q6VF78".parse::<StacksAddress>().unwrap(), a);
    }
}
