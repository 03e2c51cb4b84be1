//! A YAML rendering of a JSON value, enough for the OpenAPI document: block mappings and
//! sequences, every string double-quoted (JSON's string escapes are valid YAML double-quoted
//! escapes), empty collections in flow style. Written here rather than adding a YAML crate:
//! emitting (never parsing) JSON-shaped data takes a few lines.

use serde_json::Value;

pub fn to_yaml(v: &Value) -> String {
    let mut out = String::new();
    match v {
        Value::Object(m) if !m.is_empty() => mapping(v, 0, &mut out),
        Value::Array(a) if !a.is_empty() => sequence(v, 0, &mut out),
        other => {
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
    out
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
        // JSON text of a scalar is a valid YAML flow scalar.
        other => other.to_string(),
    }
}

fn is_block(v: &Value) -> bool {
    match v {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    }
}

fn mapping(v: &Value, indent: usize, out: &mut String) {
    let Value::Object(m) = v else { return };
    for (k, val) in m {
        out.push_str(&" ".repeat(indent));
        out.push_str(&Value::String(k.clone()).to_string());
        out.push(':');
        block_value(val, indent, out);
    }
}

fn sequence(v: &Value, indent: usize, out: &mut String) {
    let Value::Array(a) = v else { return };
    for item in a {
        out.push_str(&" ".repeat(indent));
        out.push('-');
        block_value(item, indent, out);
    }
}

/// The value after `key:` or `-`: inline when scalar, else on the following lines, indented.
fn block_value(val: &Value, indent: usize, out: &mut String) {
    if is_block(val) {
        out.push('\n');
        if val.is_object() {
            mapping(val, indent + 2, out);
        } else {
            sequence(val, indent + 2, out);
        }
    } else {
        out.push(' ');
        out.push_str(&scalar(val));
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn renders_block_yaml() {
        let v = json!({"a": {"b": [1, "x\"y", {"c": true}], "e": {}, "f": []}, "g": null});
        let expected = "\"a\":\n  \"b\":\n    - 1\n    - \"x\\\"y\"\n    -\n      \"c\": true\n  \"e\": {}\n  \"f\": []\n\"g\": null\n";
        assert_eq!(to_yaml(&v), expected);
    }
}
