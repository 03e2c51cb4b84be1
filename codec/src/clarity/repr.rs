//! The `repr` text of a value, byte for byte as the native decoder prints it (the form the
//! API serves in `repr` fields). It differs from stacks.js `cvToString`: principals get a
//! leading `'`, strings are escaped per byte, tuples print sorted, `(list)` has no space.

use super::{sorted_tuple_entries, Value};

impl Value {
    pub fn repr(&self) -> String {
        let mut out = String::new();
        self.write_repr(&mut out);
        out
    }

    fn write_repr(&self, out: &mut String) {
        match self {
            Value::Int(i) => out.push_str(&i.to_string()),
            Value::UInt(u) => {
                out.push('u');
                out.push_str(&u.to_string());
            }
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Buffer(b) => {
                out.push_str("0x");
                out.push_str(&hex::encode(b));
            }
            Value::Principal(p) => {
                out.push('\'');
                out.push_str(&p.to_string());
            }
            Value::ResponseOk(v) => wrapped(out, "ok", v),
            Value::ResponseErr(v) => wrapped(out, "err", v),
            Value::OptionalNone => out.push_str("none"),
            Value::OptionalSome(v) => wrapped(out, "some", v),
            Value::List(items) => {
                out.push_str("(list");
                for v in items {
                    out.push(' ');
                    v.write_repr(out);
                }
                out.push(')');
            }
            Value::Tuple(entries) => {
                out.push_str("(tuple");
                for (k, v) in sorted_tuple_entries(entries) {
                    out.push_str(" (");
                    out.push_str(k);
                    out.push(' ');
                    v.write_repr(out);
                    out.push(')');
                }
                out.push(')');
            }
            Value::StringAscii(bytes) => {
                out.push('"');
                bytes.iter().for_each(|&b| escape_byte(out, b));
                out.push('"');
            }
            Value::StringUtf8(bytes) => {
                out.push_str("u\"");
                // Invalid sequences become U+FFFD first, as in the native decoder.
                for ch in String::from_utf8_lossy(bytes).chars() {
                    let mut buf = [0u8; 4];
                    let encoded = ch.encode_utf8(&mut buf).as_bytes();
                    match encoded {
                        [b] => escape_byte(out, *b),
                        // Not the code point: the hex of the character's UTF-8 bytes.
                        _ => {
                            out.push_str("\\u{");
                            out.push_str(&hex::encode(encoded));
                            out.push('}');
                        }
                    }
                }
                out.push('"');
            }
        }
    }
}

fn wrapped(out: &mut String, name: &str, inner: &Value) {
    out.push('(');
    out.push_str(name);
    out.push(' ');
    inner.write_repr(out);
    out.push(')');
}

/// Rust's `ascii::escape_default`: `\t \r \n \\ \' \"`, printable ASCII as is, else `\xNN`.
fn escape_byte(out: &mut String, b: u8) {
    out.extend(std::ascii::escape_default(b).map(char::from));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::{ContractId, Principal, StacksAddress};

    #[test]
    fn escapes_like_the_native_decoder() {
        assert_eq!(
            Value::StringAscii(b"a\"\\\n\t\r'\x00\x7f\x80".to_vec()).repr(),
            r#""a\"\\\n\t\r\'\x00\x7f\x80""#
        );
        assert_eq!(Value::StringUtf8("é😀x\n".as_bytes().to_vec()).repr(), r#"u"\u{c3a9}\u{f09f9880}x\n""#);
        assert_eq!(Value::StringUtf8(vec![0xc0, 0xaf]).repr(), r#"u"\u{efbfbd}\u{efbfbd}""#);
    }

    #[test]
    fn composites() {
        let tuple = Value::Tuple(vec![
            ("b".into(), Value::UInt(1)),
            ("a".into(), Value::Int(-2)),
            ("b".into(), Value::List(vec![])),
        ]);
        assert_eq!(tuple.repr(), "(tuple (a -2) (b (list)))");
        assert_eq!(Value::Tuple(vec![]).repr(), "(tuple)");
        let c = ContractId { address: StacksAddress::new(22, [0; 20]), name: "c".into() };
        let v = Value::ResponseOk(Box::new(Value::OptionalSome(Box::new(Value::Principal(
            Principal::Contract(c),
        )))));
        assert_eq!(v.repr(), "(ok (some 'SP000000000000000000002Q6VF78.c))");
        assert_eq!(Value::Buffer(vec![]).repr(), "0x");
    }
}
