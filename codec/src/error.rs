use thiserror::Error;

/// Everything that can go wrong decoding or encoding Stacks wire data.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CodecError {
    #[error("invalid hex: {0}")]
    Hex(String),
    #[error("unexpected end of input: needed {needed} more bytes at offset {offset}")]
    UnexpectedEof { offset: usize, needed: usize },
    #[error("{0} trailing bytes after the value")]
    TrailingBytes(usize),
    #[error("invalid {what}: {value}")]
    InvalidByte { what: &'static str, value: u8 },
    #[error("{what} length {len} exceeds the limit of {max}")]
    TooLong { what: &'static str, len: u64, max: u64 },
    #[error("Clarity value nested deeper than {0}")]
    TooDeep(usize),
    #[error("invalid {what}: {reason}")]
    Invalid { what: &'static str, reason: String },
    #[error("invalid address: {0}")]
    Address(String),
    /// Signing or signature verification failed.
    #[error("signature error: {0}")]
    Signature(crate::sign::SignError),
    /// A public key, or a set of them, that cannot make an address.
    #[error("public key error: {0}")]
    PublicKey(crate::address::PublicKeyError),
}

impl CodecError {
    pub fn invalid(what: &'static str, reason: impl Into<String>) -> Self {
        CodecError::Invalid { what, reason: reason.into() }
    }
}
