//! Stacks wire formats, as pure functions: no I/O, no async, no global state.
//!
//! * [`address`]: c32check addresses, principals, addresses derived from public keys.
//! * [`clarity`]: Clarity values: consensus (de)serialization, `repr` text, type names, decoded JSON.
//! * [`tx`]: SIP-005 / Nakamoto transactions: (de)serialization, txid, decoded JSON.
//! * [`sign`]: sighash chain, recoverable secp256k1 signatures, signer recovery.
//!
//! Every decoder returns a typed [`CodecError`] on malformed input and never panics.

#![forbid(unsafe_code)]

pub mod address;
pub mod bech32;
pub mod clarity;
pub mod error;
pub mod hash;
pub mod reader;
pub mod sign;
pub mod tx;

pub use error::CodecError;

/// Decodes hex with or without a `0x` prefix.
pub fn decode_hex(s: &str) -> Result<Vec<u8>, CodecError> {
    let s = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s);
    hex::decode(s).map_err(|e| CodecError::Hex(e.to_string()))
}

/// `0x`-prefixed lower-case hex, the form the API serves.
pub fn to_hex_prefixed(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(2 + bytes.len() * 2);
    s.push_str("0x");
    s.push_str(&hex::encode(bytes));
    s
}
