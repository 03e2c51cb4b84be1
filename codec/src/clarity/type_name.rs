//! The type signature the native decoder derives from a value alone (`function_args[].type`
//! when there is no ABI). It is not Clarity's type inference: a list takes its first element's
//! type, the side of a response or optional that holds nothing is `UnknownType`, and
//! string-utf8 counts four bytes per character.

use super::{sorted_tuple_entries, Value};

impl Value {
    pub fn type_name(&self) -> String {
        let mut out = String::new();
        self.write_type_name(&mut out);
        out
    }

    fn write_type_name(&self, out: &mut String) {
        match self {
            Value::Int(_) => out.push_str("int"),
            Value::UInt(_) => out.push_str("uint"),
            Value::Bool(_) => out.push_str("bool"),
            Value::Principal(_) => out.push_str("principal"),
            Value::Buffer(b) => out.push_str(&format!("(buff {})", b.len())),
            Value::StringAscii(s) => out.push_str(&format!("(string-ascii {})", s.len())),
            Value::StringUtf8(s) => {
                // Characters after U+FFFD replacement, as the native decoder stores them.
                let chars = String::from_utf8_lossy(s).chars().count();
                out.push_str(&format!("(string-utf8 {})", chars.saturating_mul(4)));
            }
            Value::OptionalNone => out.push_str("(optional UnknownType)"),
            Value::OptionalSome(v) => {
                out.push_str("(optional ");
                v.write_type_name(out);
                out.push(')');
            }
            Value::ResponseOk(v) => {
                out.push_str("(response ");
                v.write_type_name(out);
                out.push_str(" UnknownType)");
            }
            Value::ResponseErr(v) => {
                out.push_str("(response UnknownType ");
                v.write_type_name(out);
                out.push(')');
            }
            Value::List(items) => {
                out.push_str(&format!("(list {} ", items.len()));
                match items.first() {
                    Some(first) => first.write_type_name(out),
                    None => out.push_str("UnknownType"),
                }
                out.push(')');
            }
            Value::Tuple(entries) => {
                out.push_str("(tuple");
                for (k, v) in sorted_tuple_entries(entries) {
                    out.push_str(" (");
                    out.push_str(k);
                    out.push(' ');
                    v.write_type_name(out);
                    out.push(')');
                }
                out.push(')');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_the_native_rules() {
        let list = Value::List(vec![Value::Buffer(vec![1]), Value::Buffer(vec![2, 3])]);
        assert_eq!(list.type_name(), "(list 2 (buff 1))");
        assert_eq!(Value::List(vec![]).type_name(), "(list 0 UnknownType)");
        assert_eq!(Value::StringUtf8("é".as_bytes().to_vec()).type_name(), "(string-utf8 4)");
        assert_eq!(Value::StringUtf8(vec![0xed, 0xa0, 0x80]).type_name(), "(string-utf8 12)");
        assert_eq!(
            Value::ResponseErr(Box::new(Value::OptionalNone)).type_name(),
            "(response UnknownType (optional UnknownType))"
        );
        let tuple = Value::Tuple(vec![("z".into(), Value::Bool(true)), ("a".into(), Value::Int(0))]);
        assert_eq!(tuple.type_name(), "(tuple (a int) (z bool))");
        assert_eq!(Value::Tuple(vec![]).type_name(), "(tuple)");
    }
}
