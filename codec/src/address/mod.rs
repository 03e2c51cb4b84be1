//! c32check addresses and principals.
//!
//! A Stacks address is a version byte plus a 20-byte hash; its text form is `S` followed by
//! the c32check encoding (version char, then data + checksum).
//!
//! Parsing is strict: a leading uppercase `S`, uppercase c32 characters only, a valid checksum,
//! a 20-byte hash. `O` is read as `0` and `I`/`L` as `1`, as c32check, the native decoder and
//! stacks.js all do; the address then prints in canonical form. We reject what the references
//! disagree on: lowercase and other first letters (native accepts), 19/21-byte hashes (c32check
//! and stacks.js accept).

mod b58;
mod c32;
mod keys;

use std::fmt;
use std::str::FromStr;

use crate::CodecError;

pub use b58::{btc_to_stacks_version, btc_version, stacks_to_btc_version};
pub use keys::{
    address_from_public_keys, signer_hash160, single_sig_address, PublicKeyBytes, PublicKeyError,
};

/// Address versions.
pub mod version {
    use crate::tx::HashMode;

    pub const MAINNET_SINGLE_SIG: u8 = 22; // SP
    pub const MAINNET_MULTI_SIG: u8 = 20; // SM
    pub const TESTNET_SINGLE_SIG: u8 = 26; // ST
    pub const TESTNET_MULTI_SIG: u8 = 21; // SN

    pub const fn single_sig(mainnet: bool) -> u8 {
        if mainnet {
            MAINNET_SINGLE_SIG
        } else {
            TESTNET_SINGLE_SIG
        }
    }

    pub const fn multi_sig(mainnet: bool) -> u8 {
        if mainnet {
            MAINNET_MULTI_SIG
        } else {
            TESTNET_MULTI_SIG
        }
    }

    /// The version of a spending condition's address: only P2PKH is single-sig; P2WPKH is a
    /// P2SH-wrapped script and takes the multi-sig version (stacks-core `to_address`).
    pub const fn for_hash_mode(hash_mode: HashMode, mainnet: bool) -> u8 {
        match hash_mode {
            HashMode::P2PKH => single_sig(mainnet),
            _ => multi_sig(mainnet),
        }
    }

    pub const fn is_mainnet(version: u8) -> bool {
        version == MAINNET_SINGLE_SIG || version == MAINNET_MULTI_SIG
    }

    pub const fn is_testnet(version: u8) -> bool {
        version == TESTNET_SINGLE_SIG || version == TESTNET_MULTI_SIG
    }
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

    /// Like `new`, but refuses versions of 32 or more, which c32 cannot write.
    pub fn try_new(version: u8, hash160: [u8; 20]) -> Result<Self, CodecError> {
        if version >= 32 {
            return Err(CodecError::Address(format!("version {version} is 32 or more")));
        }
        Ok(StacksAddress { version, hash160 })
    }

    /// c32check text, e.g. `SP000000000000000000002Q6VF78`. Versions are 5 bits; one of 32 or
    /// more (only possible through `new` or the public fields) is masked to its low 5 bits rather
    /// than panicking, so keep versions below 32 (`try_new`, the parsers and wire decoders do).
    pub fn to_c32(&self) -> String {
        c32::encode(self.version, &self.hash160)
    }

    /// Mainnet versions: 22 (`SP`) and 20 (`SM`).
    pub fn is_mainnet(&self) -> bool {
        version::is_mainnet(self.version)
    }

    /// Testnet versions: 26 (`ST`) and 21 (`SN`).
    pub fn is_testnet(&self) -> bool {
        version::is_testnet(self.version)
    }

    /// Multi-sig versions: 20 (`SM`) and 21 (`SN`).
    pub fn is_multi_sig(&self) -> bool {
        self.version == version::MAINNET_MULTI_SIG || self.version == version::TESTNET_MULTI_SIG
    }

    /// The same hash on the other network, keeping single-sig/multi-sig; `None` for a version
    /// that is neither a mainnet nor a testnet one.
    pub fn to_network(&self, mainnet: bool) -> Option<StacksAddress> {
        if !self.is_mainnet() && !self.is_testnet() {
            return None;
        }
        let v = if self.is_multi_sig() { version::multi_sig(mainnet) } else { version::single_sig(mainnet) };
        Some(StacksAddress::new(v, self.hash160))
    }
}

impl fmt::Display for StacksAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_c32())
    }
}

/// Strict c32check parsing; see the module docs.
impl FromStr for StacksAddress {
    type Err = CodecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (version, hash160) = c32::decode(s)?;
        Ok(StacksAddress { version, hash160 })
    }
}

/// A contract name: 1 to 128 bytes on the wire (length-prefixed by one byte).
pub const MAX_CONTRACT_NAME_LEN: usize = 128;

/// Clarity's contract-name rule, `^[a-zA-Z]([a-zA-Z0-9]|[-_])*$`, 1 to 128 characters. (Clarity
/// also admits the internal name `__transient`, which never names a deployed contract.)
pub fn validate_contract_name(name: &str) -> Result<(), CodecError> {
    let bad = |reason: &str| CodecError::invalid("contract name", format!("{name:?}: {reason}"));
    if name.len() > MAX_CONTRACT_NAME_LEN {
        return Err(CodecError::TooLong {
            what: "contract name",
            len: name.len() as u64,
            max: MAX_CONTRACT_NAME_LEN as u64,
        });
    }
    let mut chars = name.bytes();
    match chars.next() {
        None => return Err(bad("empty")),
        Some(c) if !c.is_ascii_alphabetic() => return Err(bad("must start with a letter")),
        Some(_) => {}
    }
    if !chars.all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_') {
        return Err(bad("only letters, digits, '-' and '_' are allowed"));
    }
    Ok(())
}

/// `address.name`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContractId {
    pub address: StacksAddress,
    pub name: String,
}

impl ContractId {
    /// Checks the name against the Clarity rule.
    pub fn new(address: StacksAddress, name: impl Into<String>) -> Result<Self, CodecError> {
        let name = name.into();
        validate_contract_name(&name)?;
        Ok(ContractId { address, name })
    }
}

impl fmt::Display for ContractId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.address, self.name)
    }
}

/// `ADDR.name`, both parts strict.
impl FromStr for ContractId {
    type Err = CodecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (address, name) = s
            .split_once('.')
            .ok_or_else(|| CodecError::Address(format!("{s}: expected ADDRESS.contract-name")))?;
        ContractId::new(address.parse()?, name)
    }
}

/// A Clarity principal: a standard address or a contract.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Principal {
    Standard(StacksAddress),
    Contract(ContractId),
}

impl Principal {
    /// The standard address, or the contract's deployer.
    pub fn address(&self) -> &StacksAddress {
        match self {
            Principal::Standard(a) => a,
            Principal::Contract(c) => &c.address,
        }
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Principal::Standard(a) => a.fmt(f),
            Principal::Contract(c) => c.fmt(f),
        }
    }
}

/// An address, or `ADDR.name` when there is a dot.
impl FromStr for Principal {
    type Err = CodecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.contains('.') {
            s.parse().map(Principal::Contract)
        } else {
            s.parse().map(Principal::Standard)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tx::HashMode;

    #[test]
    fn c32_round_trip() {
        let a = StacksAddress::new(22, [0; 20]);
        assert_eq!(a.to_c32(), "SP000000000000000000002Q6VF78");
        assert_eq!("SP000000000000000000002Q6VF78".parse::<StacksAddress>().unwrap(), a);
    }

    #[test]
    fn out_of_range_version_does_not_panic() {
        assert_eq!(StacksAddress::new(22 + 32, [0; 20]).to_c32(), "SP000000000000000000002Q6VF78");
        assert!(StacksAddress::try_new(32, [0; 20]).is_err());
    }

    #[test]
    fn networks() {
        let a: StacksAddress = "SP000000000000000000002Q6VF78".parse().unwrap();
        assert!(a.is_mainnet() && !a.is_testnet() && !a.is_multi_sig());
        assert_eq!(a.to_network(false).unwrap().to_c32(), "ST000000000000000000002AMW42H");
        let m = StacksAddress::new(version::TESTNET_MULTI_SIG, [0; 20]);
        assert_eq!(m.to_network(true).unwrap().version, version::MAINNET_MULTI_SIG);
        assert_eq!(StacksAddress::new(0, [0; 20]).to_network(true), None);
        assert_eq!(version::for_hash_mode(HashMode::P2PKH, false), 26);
        assert_eq!(version::for_hash_mode(HashMode::P2WPKH, true), 20);
        assert_eq!(version::for_hash_mode(HashMode::P2WSHNonSequential, false), 21);
    }

    #[test]
    fn contract_names() {
        for ok in ["a", "pox-4", "Token_V2", "a1-_", &"x".repeat(128)] {
            assert!(validate_contract_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "1a", "-a", "_a", "a.b", "a b", "é", "__transient", &"x".repeat(129)] {
            assert!(validate_contract_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn principals() {
        let c: Principal = "SP000000000000000000002Q6VF78.pox-4".parse().unwrap();
        assert_eq!(c.to_string(), "SP000000000000000000002Q6VF78.pox-4");
        assert_eq!(c.address(), &StacksAddress::new(22, [0; 20]));
        assert!(matches!("SP000000000000000000002Q6VF78".parse(), Ok(Principal::Standard(_))));
        for bad in ["SP000000000000000000002Q6VF78.", ".a", "SP000000000000000000002Q6VF78.a.b", "x.a"] {
            assert!(bad.parse::<Principal>().is_err(), "{bad}");
        }
    }
}
