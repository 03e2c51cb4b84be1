//! Clarity values: the in-memory model. Serialization, `repr`, type names and the decoded
//! JSON live in the submodules, one concern each.

mod json;
mod repr;
mod type_name;
mod wire;

pub use json::decode_clarity_hex;
pub use wire::{
    read_address, read_clarity_name, read_contract_name, read_principal, write_address, write_principal,
    MAX_DEPTH, MAX_VALUE_SIZE,
};

use std::collections::BTreeMap;

use crate::address::Principal;

/// Consensus type ids (the first byte of a serialized value).
pub mod type_id {
    pub const INT: u8 = 0x00;
    pub const UINT: u8 = 0x01;
    pub const BUFFER: u8 = 0x02;
    pub const TRUE: u8 = 0x03;
    pub const FALSE: u8 = 0x04;
    pub const PRINCIPAL_STANDARD: u8 = 0x05;
    pub const PRINCIPAL_CONTRACT: u8 = 0x06;
    pub const RESPONSE_OK: u8 = 0x07;
    pub const RESPONSE_ERR: u8 = 0x08;
    pub const OPTIONAL_NONE: u8 = 0x09;
    pub const OPTIONAL_SOME: u8 = 0x0a;
    pub const LIST: u8 = 0x0b;
    pub const TUPLE: u8 = 0x0c;
    pub const STRING_ASCII: u8 = 0x0d;
    pub const STRING_UTF8: u8 = 0x0e;
}

/// A Clarity value. Tuples keep the entries in the order they were decoded; `repr` and the
/// canonical encoder sort them by key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Int(i128),
    UInt(u128),
    Bool(bool),
    Buffer(Vec<u8>),
    Principal(Principal),
    ResponseOk(Box<Value>),
    ResponseErr(Box<Value>),
    OptionalNone,
    OptionalSome(Box<Value>),
    List(Vec<Value>),
    Tuple(Vec<(String, Value)>),
    /// Raw bytes: the wire does not guarantee ASCII.
    StringAscii(Vec<u8>),
    /// Raw bytes: the wire does not guarantee valid UTF-8.
    StringUtf8(Vec<u8>),
}

impl Value {
    /// The consensus type id: the first byte of the serialized value.
    pub fn type_id(&self) -> u8 {
        use type_id as t;
        match self {
            Value::Int(_) => t::INT,
            Value::UInt(_) => t::UINT,
            Value::Buffer(_) => t::BUFFER,
            Value::Bool(true) => t::TRUE,
            Value::Bool(false) => t::FALSE,
            Value::Principal(Principal::Standard(_)) => t::PRINCIPAL_STANDARD,
            Value::Principal(Principal::Contract(_)) => t::PRINCIPAL_CONTRACT,
            Value::ResponseOk(_) => t::RESPONSE_OK,
            Value::ResponseErr(_) => t::RESPONSE_ERR,
            Value::OptionalNone => t::OPTIONAL_NONE,
            Value::OptionalSome(_) => t::OPTIONAL_SOME,
            Value::List(_) => t::LIST,
            Value::Tuple(_) => t::TUPLE,
            Value::StringAscii(_) => t::STRING_ASCII,
            Value::StringUtf8(_) => t::STRING_UTF8,
        }
    }
}

/// Tuple entries the way Clarity sees them: sorted byte-wise by key, and a repeated key keeps
/// its last value (what the native decoder's `BTreeMap::insert` does).
pub fn sorted_tuple_entries(entries: &[(String, Value)]) -> Vec<(&str, &Value)> {
    let mut map = BTreeMap::new();
    for (k, v) in entries {
        map.insert(k.as_str(), v);
    }
    map.into_iter().collect()
}
