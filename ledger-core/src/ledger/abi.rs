//! A contract ABI as the incumbent serves it. It stores the node's ABI in a PostgreSQL `jsonb`
//! column and re-serializes it on the way out, so objects come back in jsonb's key order:
//! shorter keys first, keys of one length bytewise (`JSON.stringify` of the parsed column, no
//! whitespace). The node's own text keeps its serializer's field order, which real nodes send
//! and `/v2/contracts/interface` serves.

use serde_json::Value;

/// `abi` re-serialized in jsonb's key order.
pub fn jsonb_text(abi: &Value) -> String {
    let mut out = String::new();
    write(abi, &mut out);
    out
}

fn write(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.as_bytes().cmp(b.as_bytes())));
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write(&m[k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_out_shorter_first_then_bytewise() {
        // A real node's order (serde field order of ContractInterface and its members).
        let node: Value = serde_json::from_str(
            r#"{"functions":[{"name":"get","access":"read_only","args":[{"name":"k","type":"uint128"}],
                "outputs":{"type":{"optional":"uint128"}}}],"variables":[],"maps":[],
                "fungible_tokens":[{"name":"t"}],"non_fungible_tokens":[],"epoch":"Epoch25",
                "clarity_version":"Clarity2"}"#,
        )
        .unwrap();
        assert_eq!(
            jsonb_text(&node),
            r#"{"maps":[],"epoch":"Epoch25","functions":[{"args":[{"name":"k","type":"uint128"}],"name":"get","access":"read_only","outputs":{"type":{"optional":"uint128"}}}],"variables":[],"clarity_version":"Clarity2","fungible_tokens":[{"name":"t"}],"non_fungible_tokens":[]}"#
        );
    }

    #[test]
    fn text_already_in_jsonb_order_is_unchanged() {
        let t = r#"{"a":1,"bb":{"x":"\"q\"","yy":[true,null]},"ccc":-2}"#;
        assert_eq!(jsonb_text(&serde_json::from_str(t).unwrap()), t);
    }
}
