//! Any bytes: decoding returns Ok or a typed error, never panics or hangs; whatever decodes
//! re-encodes to the same bytes and renders (repr, type name, JSON).
#![no_main]

use libfuzzer_sys::fuzz_target;
use stacks_codec::clarity::Value;

fuzz_target!(|data: &[u8]| {
    if let Ok(v) = Value::deserialize(data) {
        assert_eq!(v.serialize(), data, "a decoded value re-encodes to its own bytes");
        let _ = (v.repr(), v.type_name(), v.to_decoded_json());
    }
});
