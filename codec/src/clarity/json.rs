//! The decoded JSON of a value, as the native `decodeClarityValue` builds it: every node has
//! `repr`, `hex` (that node's own serialization) and `type_id`, plus one payload field that
//! depends on the type (`value`, `buffer`, `data`, `list`, or the principal fields).

use serde_json::{json, Map, Value as Json};

use super::{sorted_tuple_entries, Value};
use crate::address::{Principal, StacksAddress};
use crate::{decode_hex, to_hex_prefixed, CodecError};

/// Decodes consensus hex (with or without `0x`) into the decoded JSON: what the CLI
/// `decode-clarity` prints.
pub fn decode_clarity_hex(hex: &str) -> Result<Json, CodecError> {
    let bytes = decode_hex(hex)?;
    Ok(Value::deserialize(&bytes)?.to_decoded_json())
}

impl Value {
    /// `hex` is the value re-encoded as held. For a decoded value this is exactly the bytes it
    /// came from, unsorted or repeated tuple keys included, because decoding keeps entries as
    /// read; `data` and `repr` show tuples sorted with the last of a repeated key.
    pub fn to_decoded_json(&self) -> Json {
        let mut m = Map::new();
        m.insert("repr".into(), Json::String(self.repr()));
        m.insert("hex".into(), Json::String(to_hex_prefixed(&self.serialize())));
        m.insert("type_id".into(), json!(self.type_id()));
        match self {
            Value::Int(i) => {
                m.insert("value".into(), Json::String(i.to_string()));
            }
            Value::UInt(u) => {
                m.insert("value".into(), Json::String(u.to_string()));
            }
            Value::Bool(b) => {
                m.insert("value".into(), Json::Bool(*b));
            }
            Value::Buffer(b) => {
                m.insert("buffer".into(), Json::String(to_hex_prefixed(b)));
            }
            // Both string kinds: lossy UTF-8, so a stray byte shows as U+FFFD.
            Value::StringAscii(s) | Value::StringUtf8(s) => {
                m.insert("data".into(), Json::String(String::from_utf8_lossy(s).into_owned()));
            }
            Value::Principal(Principal::Standard(a)) => address_fields(&mut m, a),
            Value::Principal(Principal::Contract(c)) => {
                address_fields(&mut m, &c.address);
                m.insert("contract_name".into(), Json::String(c.name.clone()));
            }
            Value::OptionalNone => {
                m.insert("value".into(), Json::Null);
            }
            Value::OptionalSome(v) | Value::ResponseOk(v) | Value::ResponseErr(v) => {
                m.insert("value".into(), v.to_decoded_json());
            }
            Value::List(items) => {
                m.insert("list".into(), items.iter().map(Value::to_decoded_json).collect());
            }
            Value::Tuple(entries) => {
                let data: Map<String, Json> = sorted_tuple_entries(entries)
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.to_decoded_json()))
                    .collect();
                m.insert("data".into(), Json::Object(data));
            }
        }
        Json::Object(m)
    }
}

fn address_fields(m: &mut Map<String, Json>, a: &StacksAddress) {
    m.insert("address_version".into(), json!(a.version));
    m.insert("address_hash_bytes".into(), Json::String(to_hex_prefixed(&a.hash160)));
    m.insert("address".into(), Json::String(a.to_c32()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_hex_is_each_values_own_bytes() {
        // (tuple (b u1) (a true)): unsorted on the wire.
        let hex = "0x0c00000002016201000000000000000000000000000000010161 03".replace(' ', "");
        let j = decode_clarity_hex(&hex).unwrap();
        assert_eq!(j["hex"], hex.as_str());
        assert_eq!(j["repr"], "(tuple (a true) (b u1))");
        assert_eq!(j["data"]["a"], json!({"repr": "true", "hex": "0x03", "type_id": 3, "value": true}));
        assert_eq!(j["data"]["b"]["hex"], "0x0100000000000000000000000000000001");
    }

    #[test]
    fn rejects_bad_hex_and_trailing_bytes() {
        assert!(matches!(decode_clarity_hex("0xzz"), Err(CodecError::Hex(_))));
        assert_eq!(decode_clarity_hex("0300"), Err(CodecError::TrailingBytes(1)));
        assert_eq!(
            decode_clarity_hex("09").unwrap(),
            json!({"repr": "none", "hex": "0x09", "type_id": 9, "value": null})
        );
    }
}
