//! Consensus serialization of Clarity values, both ways.
//!
//! What the decoder accepts, compared with the native decoder the Hiro API uses
//! (`stacks-encoding-native-js`) and with the chain (`stacks-core`):
//!
//! * **Unknown type bytes** (0x0f..=0xff) fail at once. The native decoder spins on them.
//! * **Length prefixes** above 1 MiB ([`MAX_VALUE_SIZE`], the chain's own bound), or longer
//!   than the bytes left, fail before anything is allocated. The native decoder hangs on some.
//! * **Nesting** is bounded like the chain's deserializer since epoch 2.4: a value may sit
//!   inside at most `MAX_DEPTH - 1` composites (type depth [`MAX_DEPTH`] = 32). The native
//!   decoder stops at 16, so it cannot decode some values the chain holds; we must.
//! * **Trailing bytes** after the value are an error in [`Value::deserialize`]. The native
//!   decoder ignores them (and reports them in the top-level `hex`); no chain value has them.
//! * **Lenient, like the native decoder**, so the same bytes give the same JSON as the Hiro
//!   API, and because none of it can harm us (every accepted input re-encodes to itself):
//!   tuples with unsorted or repeated keys (kept as read; shown sorted, last value wins), empty
//!   tuples, heterogeneous lists, string-ascii bytes outside printable ASCII, invalid UTF-8 in
//!   string-utf8 (kept raw; shown as U+FFFD), contract names and tuple keys that break the
//!   Clarity name rules (empty, leading digit, spaces). Some of these the chain itself never
//!   produces, but user-supplied hex (contract-call arguments, read-only calls) can carry them.
//! * **Names must be ASCII** (contract names up to 128 bytes, tuple keys up to 128). The native
//!   decoder also takes any valid UTF-8; the chain only ever writes ASCII names.
//! * **Address versions** from 32 up are rejected, as the native decoder and the chain do.

use super::{type_id as t, Value};
use crate::address::{ContractId, Principal, StacksAddress, MAX_CONTRACT_NAME_LEN};
use crate::reader::Reader;
use crate::CodecError;

/// Largest serialized value the chain accepts (1 MiB); no length prefix can exceed it.
pub const MAX_VALUE_SIZE: u64 = 1024 * 1024;
/// Deepest type nesting the chain accepts (`MAX_TYPE_DEPTH` in stacks-core): the top-level
/// value is level 1, so a value may sit inside at most `MAX_DEPTH - 1` composites.
pub const MAX_DEPTH: usize = 32;
/// Longest tuple key / Clarity name.
pub const MAX_CLARITY_NAME_LEN: u64 = 128;

impl Value {
    /// Decodes exactly one value that fills `bytes`.
    pub fn deserialize(bytes: &[u8]) -> Result<Value, CodecError> {
        let mut r = Reader::new(bytes);
        let v = Value::read(&mut r)?;
        r.finish()?;
        Ok(v)
    }

    /// Decodes one value from the reader, leaving the rest.
    pub fn read(r: &mut Reader<'_>) -> Result<Value, CodecError> {
        read_value(r, 0)
    }

    pub fn serialize(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write(&mut out);
        out
    }

    /// Appends the consensus encoding. Tuples are written as held; [`Value::canonical`]
    /// sorts them first where the canonical (sorted) form is wanted.
    pub fn write(&self, out: &mut Vec<u8>) {
        match self {
            Value::Int(i) => {
                out.push(t::INT);
                out.extend_from_slice(&i.to_be_bytes());
            }
            Value::UInt(u) => {
                out.push(t::UINT);
                out.extend_from_slice(&u.to_be_bytes());
            }
            Value::Bool(true) => out.push(t::TRUE),
            Value::Bool(false) => out.push(t::FALSE),
            Value::Buffer(b) => write_bytes(out, t::BUFFER, b),
            Value::Principal(p) => write_principal(out, p),
            Value::ResponseOk(v) => {
                out.push(t::RESPONSE_OK);
                v.write(out);
            }
            Value::ResponseErr(v) => {
                out.push(t::RESPONSE_ERR);
                v.write(out);
            }
            Value::OptionalNone => out.push(t::OPTIONAL_NONE),
            Value::OptionalSome(v) => {
                out.push(t::OPTIONAL_SOME);
                v.write(out);
            }
            Value::List(items) => {
                out.push(t::LIST);
                out.extend_from_slice(&(items.len() as u32).to_be_bytes());
                items.iter().for_each(|v| v.write(out));
            }
            Value::Tuple(entries) => {
                out.push(t::TUPLE);
                out.extend_from_slice(&(entries.len() as u32).to_be_bytes());
                for (k, v) in entries {
                    out.push(k.len() as u8);
                    out.extend_from_slice(k.as_bytes());
                    v.write(out);
                }
            }
            Value::StringAscii(s) => write_bytes(out, t::STRING_ASCII, s),
            Value::StringUtf8(s) => write_bytes(out, t::STRING_UTF8, s),
        }
    }

    /// The same value with every tuple sorted by key and de-duplicated (last one wins),
    /// which is how the chain stores tuples.
    pub fn canonical(&self) -> Value {
        match self {
            Value::ResponseOk(v) => Value::ResponseOk(Box::new(v.canonical())),
            Value::ResponseErr(v) => Value::ResponseErr(Box::new(v.canonical())),
            Value::OptionalSome(v) => Value::OptionalSome(Box::new(v.canonical())),
            Value::List(items) => Value::List(items.iter().map(Value::canonical).collect()),
            Value::Tuple(entries) => {
                let map: std::collections::BTreeMap<&str, Value> =
                    entries.iter().map(|(k, v)| (k.as_str(), v.canonical())).collect();
                Value::Tuple(map.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            }
            other => other.clone(),
        }
    }
}

fn write_bytes(out: &mut Vec<u8>, tag: u8, b: &[u8]) {
    out.push(tag);
    out.extend_from_slice(&(b.len() as u32).to_be_bytes());
    out.extend_from_slice(b);
}

/// Writes a principal with its Clarity type byte (0x05 / 0x06).
pub fn write_principal(out: &mut Vec<u8>, p: &Principal) {
    match p {
        Principal::Standard(a) => {
            out.push(t::PRINCIPAL_STANDARD);
            write_address(out, a);
        }
        Principal::Contract(c) => {
            out.push(t::PRINCIPAL_CONTRACT);
            write_address(out, &c.address);
            out.push(c.name.len() as u8);
            out.extend_from_slice(c.name.as_bytes());
        }
    }
}

pub fn write_address(out: &mut Vec<u8>, a: &StacksAddress) {
    out.push(a.version);
    out.extend_from_slice(&a.hash160);
}

/// Reads `version ‖ hash160`. Versions are 5-bit; anything from 32 up is rejected.
pub fn read_address(r: &mut Reader<'_>) -> Result<StacksAddress, CodecError> {
    let version = r.u8()?;
    if version >= 32 {
        return Err(CodecError::InvalidByte { what: "address version", value: version });
    }
    Ok(StacksAddress::new(version, r.array()?))
}

/// Reads a one-byte-length-prefixed contract name (1..=128 bytes of text).
pub fn read_contract_name(r: &mut Reader<'_>) -> Result<String, CodecError> {
    read_name(r, "contract name", MAX_CONTRACT_NAME_LEN as u64)
}

/// Reads a one-byte-length-prefixed Clarity name (tuple key, function, asset).
pub fn read_clarity_name(r: &mut Reader<'_>) -> Result<String, CodecError> {
    read_name(r, "clarity name", MAX_CLARITY_NAME_LEN)
}

fn read_name(r: &mut Reader<'_>, what: &'static str, max: u64) -> Result<String, CodecError> {
    let n = r.count_u8(what, max)?;
    let bytes = r.bytes(n)?;
    if !bytes.is_ascii() {
        return Err(CodecError::invalid(what, "not ASCII"));
    }
    Ok(bytes.iter().copied().map(char::from).collect())
}

/// Reads a principal with its type byte (0x05 / 0x06).
pub fn read_principal(r: &mut Reader<'_>) -> Result<Principal, CodecError> {
    match r.u8()? {
        t::PRINCIPAL_STANDARD => Ok(Principal::Standard(read_address(r)?)),
        t::PRINCIPAL_CONTRACT => read_contract_body(r).map(Principal::Contract),
        other => Err(CodecError::InvalidByte { what: "principal type", value: other }),
    }
}

fn read_contract_body(r: &mut Reader<'_>) -> Result<ContractId, CodecError> {
    let address = read_address(r)?;
    let name = read_contract_name(r)?;
    Ok(ContractId { address, name })
}

fn read_len_prefixed<'a>(r: &mut Reader<'a>, what: &'static str) -> Result<&'a [u8], CodecError> {
    let n = r.count_u32(what, MAX_VALUE_SIZE, 1)?;
    r.bytes(n)
}

/// `depth` counts the composites around the value being read (0 at the top), the way
/// stacks-core's deserializer counts its stack.
fn read_value(r: &mut Reader<'_>, depth: usize) -> Result<Value, CodecError> {
    if depth >= MAX_DEPTH {
        return Err(CodecError::TooDeep(MAX_DEPTH));
    }
    let tag = r.u8()?;
    let nested = |r: &mut Reader<'_>| read_value(r, depth + 1).map(Box::new);
    Ok(match tag {
        t::INT => Value::Int(r.i128()?),
        t::UINT => Value::UInt(r.u128()?),
        t::BUFFER => Value::Buffer(read_len_prefixed(r, "buffer")?.to_vec()),
        t::TRUE => Value::Bool(true),
        t::FALSE => Value::Bool(false),
        t::PRINCIPAL_STANDARD => Value::Principal(Principal::Standard(read_address(r)?)),
        t::PRINCIPAL_CONTRACT => Value::Principal(Principal::Contract(read_contract_body(r)?)),
        t::RESPONSE_OK => Value::ResponseOk(nested(r)?),
        t::RESPONSE_ERR => Value::ResponseErr(nested(r)?),
        t::OPTIONAL_NONE => Value::OptionalNone,
        t::OPTIONAL_SOME => Value::OptionalSome(nested(r)?),
        t::LIST => {
            // Every element takes at least one byte, which bounds the count by the input.
            let n = r.count_u32("list", MAX_VALUE_SIZE, 1)?;
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                items.push(*nested(r)?);
            }
            Value::List(items)
        }
        t::TUPLE => {
            // A key takes at least its length byte and a value at least its type byte.
            let n = r.count_u32("tuple", MAX_VALUE_SIZE, 2)?;
            let mut entries = Vec::with_capacity(n);
            for _ in 0..n {
                let key = read_clarity_name(r)?;
                entries.push((key, *nested(r)?));
            }
            Value::Tuple(entries)
        }
        t::STRING_ASCII => Value::StringAscii(read_len_prefixed(r, "string-ascii")?.to_vec()),
        t::STRING_UTF8 => Value::StringUtf8(read_len_prefixed(r, "string-utf8")?.to_vec()),
        other => return Err(CodecError::InvalidByte { what: "Clarity type", value: other }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(hex: &str) -> Value {
        let bytes = crate::decode_hex(hex).unwrap();
        let v = Value::deserialize(&bytes).unwrap();
        assert_eq!(v.serialize(), bytes, "re-encoding {hex}");
        v
    }

    #[test]
    fn round_trips() {
        assert_eq!(rt("0x0100000000000000000000000000000002"), Value::UInt(2));
        assert_eq!(
            rt("0x05160000000000000000000000000000000000000000"),
            Value::Principal(Principal::Standard(StacksAddress::new(22, [0; 20])))
        );
        rt("0x0b000000020c00000001016101000000000000000000000000000000010c0000000101610100000000000000000000000000000002");
    }

    #[test]
    fn hostile_input_fails_fast() {
        for hex in
            ["0x", "0x0f", "0xff", "0x0bffffffff", "0x0200100001", "0x0d00000002aa", "0x0101", "0x030a"]
        {
            let bytes = crate::decode_hex(hex).unwrap();
            assert!(Value::deserialize(&bytes).is_err(), "{hex} must not decode");
        }
    }

    /// Wrappers around `true`: the chain takes 31 (type depth 32), not 32.
    fn nested(tag: u8, n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for _ in 0..n {
            out.push(tag);
            if tag == t::LIST {
                out.extend_from_slice(&1u32.to_be_bytes());
            }
        }
        out.push(t::TRUE);
        out
    }

    #[test]
    fn depth_limit_is_the_chains() {
        for tag in [t::OPTIONAL_SOME, t::RESPONSE_OK, t::LIST] {
            let ok = nested(tag, MAX_DEPTH - 1);
            assert_eq!(Value::deserialize(&ok).unwrap().serialize(), ok);
            assert_eq!(Value::deserialize(&nested(tag, MAX_DEPTH)), Err(CodecError::TooDeep(MAX_DEPTH)));
        }
        // The native decoder's "TypeSignatureTooDeep" cases: 70 optionals and 40 lists.
        let some70 = [vec![t::OPTIONAL_SOME; 70], vec![t::OPTIONAL_NONE]].concat();
        assert_eq!(Value::deserialize(&some70), Err(CodecError::TooDeep(MAX_DEPTH)));
        assert_eq!(Value::deserialize(&nested(t::LIST, 40)), Err(CodecError::TooDeep(MAX_DEPTH)));
        // Deeper than the native decoder's 16, which the chain allows since epoch 2.4.
        assert!(Value::deserialize(&nested(t::OPTIONAL_SOME, 20)).is_ok());
    }

    proptest::proptest! {
        /// Any input either fails or round-trips, and rendering what decodes never panics.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(0u8..=0x0f, 0..64)) {
            if let Ok(v) = Value::deserialize(&bytes) {
                proptest::prop_assert_eq!(v.serialize(), bytes);
                let json = v.to_decoded_json();
                proptest::prop_assert_eq!(&json["repr"], &serde_json::Value::String(v.repr()));
                proptest::prop_assert!(!v.type_name().is_empty());
            }
        }
    }
}
