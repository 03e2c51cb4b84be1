//! The Clarity text the transaction JSON embeds: the native decoder's `repr`, its type names,
//! and the `{repr, hex, type_id}` object.
//!
//! Interim copy: `Value::repr()` / `Value::type_name()` are being written in `clarity/`; once
//! they land, [`repr`] and [`type_name`] should forward to them and this module shrinks to
//! [`clarity_json`]. The rules follow `stacks-encoding-native-js` 1.2.0 (see
//! `vectors/README.md`): principals get a leading `'`, strings are `escape_default`-escaped,
//! multi-byte UTF-8 characters print as `\u{<hex of their bytes>}`, tuples print sorted by key
//! with duplicate keys collapsed (last one wins).

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::json;

use crate::clarity::{type_id as t, Value};

/// `{repr, hex, type_id}`: how the decoded transaction JSON shows a nested Clarity value.
pub fn clarity_json(v: &Value) -> serde_json::Value {
    json!({
        "repr": repr(v),
        "hex": crate::to_hex_prefixed(&v.serialize()),
        "type_id": type_id(v),
    })
}

/// The consensus type byte a value serializes with.
pub fn type_id(v: &Value) -> u8 {
    match v {
        Value::Int(_) => t::INT,
        Value::UInt(_) => t::UINT,
        Value::Bool(true) => t::TRUE,
        Value::Bool(false) => t::FALSE,
        Value::Buffer(_) => t::BUFFER,
        Value::Principal(crate::address::Principal::Standard(_)) => t::PRINCIPAL_STANDARD,
        Value::Principal(crate::address::Principal::Contract(_)) => t::PRINCIPAL_CONTRACT,
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

/// The native decoder's `repr` string.
pub fn repr(v: &Value) -> String {
    let mut out = String::new();
    write_repr(&mut out, v);
    out
}

/// The native decoder's type signature, e.g. `(list 22 uint)`.
pub fn type_name(v: &Value) -> String {
    let mut out = String::new();
    write_type(&mut out, v);
    out
}

/// Tuple entries sorted by key, the last of duplicate keys winning, as the native decoder's
/// `BTreeMap` holds them.
fn sorted_entries(entries: &[(String, Value)]) -> BTreeMap<&str, &Value> {
    entries.iter().map(|(k, v)| (k.as_str(), v)).collect()
}

fn write_repr(out: &mut String, v: &Value) {
    match v {
        Value::Int(i) => push_display(out, i),
        Value::UInt(u) => {
            out.push('u');
            push_display(out, u);
        }
        Value::Bool(b) => push_display(out, b),
        Value::Buffer(b) => out.push_str(&crate::to_hex_prefixed(b)),
        Value::Principal(p) => {
            out.push('\'');
            push_display(out, p);
        }
        Value::ResponseOk(inner) => wrapped(out, "(ok ", inner),
        Value::ResponseErr(inner) => wrapped(out, "(err ", inner),
        Value::OptionalNone => out.push_str("none"),
        Value::OptionalSome(inner) => wrapped(out, "(some ", inner),
        Value::List(items) => {
            out.push_str("(list");
            for item in items {
                out.push(' ');
                write_repr(out, item);
            }
            out.push(')');
        }
        Value::Tuple(entries) => {
            out.push_str("(tuple");
            for (k, item) in sorted_entries(entries) {
                out.push_str(" (");
                out.push_str(k);
                out.push(' ');
                write_repr(out, item);
                out.push(')');
            }
            out.push(')');
        }
        Value::StringAscii(bytes) => {
            out.push('"');
            bytes.iter().for_each(|b| push_escaped(out, *b));
            out.push('"');
        }
        Value::StringUtf8(bytes) => {
            out.push_str("u\"");
            // Invalid UTF-8 becomes U+FFFD, as in the native decoder.
            for c in String::from_utf8_lossy(bytes).chars() {
                let mut buf = [0u8; 4];
                let encoded = c.encode_utf8(&mut buf).as_bytes();
                match encoded {
                    [single] => push_escaped(out, *single),
                    multi => {
                        out.push_str("\\u{");
                        out.push_str(&hex::encode(multi));
                        out.push('}');
                    }
                }
            }
            out.push('"');
        }
    }
}

fn wrapped(out: &mut String, open: &str, inner: &Value) {
    out.push_str(open);
    write_repr(out, inner);
    out.push(')');
}

fn push_display(out: &mut String, x: impl std::fmt::Display) {
    // Writing to a String cannot fail.
    let _ = write!(out, "{x}");
}

/// Rust's `u8::escape_ascii` is `std::ascii::escape_default`, which the native decoder uses.
fn push_escaped(out: &mut String, b: u8) {
    for e in b.escape_ascii() {
        out.push(e as char);
    }
}

fn write_type(out: &mut String, v: &Value) {
    match v {
        Value::Int(_) => out.push_str("int"),
        Value::UInt(_) => out.push_str("uint"),
        Value::Bool(_) => out.push_str("bool"),
        Value::Principal(_) => out.push_str("principal"),
        Value::Buffer(b) => push_display(out, format_args!("(buff {})", b.len())),
        Value::StringAscii(s) => push_display(out, format_args!("(string-ascii {})", s.len())),
        Value::StringUtf8(s) => {
            let chars = String::from_utf8_lossy(s).chars().count();
            push_display(out, format_args!("(string-utf8 {})", chars * 4))
        }
        Value::OptionalNone => out.push_str("(optional UnknownType)"),
        Value::OptionalSome(inner) => {
            out.push_str("(optional ");
            write_type(out, inner);
            out.push(')');
        }
        Value::ResponseOk(inner) => {
            out.push_str("(response ");
            write_type(out, inner);
            out.push_str(" UnknownType)");
        }
        Value::ResponseErr(inner) => {
            out.push_str("(response UnknownType ");
            write_type(out, inner);
            out.push(')');
        }
        Value::List(items) => {
            push_display(out, format_args!("(list {} ", items.len()));
            // The native decoder takes the first element's type, not the common supertype.
            match items.first() {
                Some(first) => write_type(out, first),
                None => out.push_str("UnknownType"),
            }
            out.push(')');
        }
        Value::Tuple(entries) => {
            out.push_str("(tuple");
            for (k, item) in sorted_entries(entries) {
                out.push_str(" (");
                out.push_str(k);
                out.push(' ');
                write_type(out, item);
                out.push(')');
            }
            out.push(')');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::{Principal, StacksAddress};

    #[test]
    fn repr_follows_the_native_rules() {
        let v = Value::Tuple(vec![
            ("b".into(), Value::StringUtf8("é!".as_bytes().to_vec())),
            ("a".into(), Value::StringAscii(b"q\"\n\x01".to_vec())),
            ("b".into(), Value::List(vec![])),
        ]);
        assert_eq!(repr(&v), r#"(tuple (a "q\"\n\x01") (b (list)))"#);
        assert_eq!(type_name(&v), "(tuple (a (string-ascii 4)) (b (list 0 UnknownType)))");
        let p = Value::Principal(Principal::Standard(StacksAddress::new(22, [0; 20])));
        assert_eq!(repr(&p), "'SP000000000000000000002Q6VF78");
        let u = Value::StringUtf8("é😀a".as_bytes().to_vec());
        assert_eq!(repr(&u), r#"u"\u{c3a9}\u{f09f9880}a""#);
        assert_eq!(type_name(&u), "(string-utf8 12)");
        let r = Value::ResponseErr(Box::new(Value::OptionalSome(Box::new(Value::Buffer(vec![0xab])))));
        assert_eq!(repr(&r), "(err (some 0xab))");
        assert_eq!(type_name(&r), "(response UnknownType (optional (buff 1)))");
    }
}
