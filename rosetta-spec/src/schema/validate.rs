//! Instance validation against OpenAPI 3.0 schemas, covering what the Rosetta documents and the
//! generated `/extended` document use: `$ref`, `type`, `nullable`, `format` (int32/int64
//! ranges), `enum`, `minimum`/`maximum`, `required`, `properties`, `additionalProperties` (a
//! schema for the undeclared properties), `items`, `anyOf` and `oneOf`. Undeclared properties are
//! allowed unless `additionalProperties` says otherwise. The other composition keywords (`allOf`,
//! `not`) are reported as unsupported rather than silently passed.

use serde_json::{Number, Value};

use super::{component, resolve};

/// Guards against `$ref` cycles that consume no instance data.
const MAX_REF_HOPS: usize = 32;

/// Validates `instance` against the component schema `schema_name` of `doc`.
/// Each error names the offending location as a path such as `$.block.transactions[0].operations`.
pub fn validate(doc: &Value, schema_name: &str, instance: &Value) -> Result<(), Vec<String>> {
    match component(doc, schema_name) {
        Some(schema) => validate_against(doc, schema, instance),
        None => Err(vec![format!("unknown schema `{schema_name}`")]),
    }
}

/// Validates `instance` against an arbitrary (possibly inline) `schema`, resolving refs in `doc`.
pub fn validate_against(doc: &Value, schema: &Value, instance: &Value) -> Result<(), Vec<String>> {
    let mut v = Validator { doc, errors: Vec::new() };
    v.check(schema, instance, "$", 0);
    if v.errors.is_empty() {
        Ok(())
    } else {
        Err(v.errors)
    }
}

struct Validator<'a> {
    doc: &'a Value,
    errors: Vec<String>,
}

impl Validator<'_> {
    fn check(&mut self, schema: &Value, instance: &Value, path: &str, hops: usize) {
        if let Some(reference) = schema.get("$ref") {
            // OpenAPI 3.0: keywords next to `$ref` are ignored.
            let target = reference.as_str().and_then(|r| resolve(self.doc, r));
            match target {
                _ if hops >= MAX_REF_HOPS => {
                    self.fail(path, format!("$ref chain longer than {MAX_REF_HOPS}"))
                }
                Some(target) => self.check(target, instance, path, hops + 1),
                None => self.fail(path, format!("unresolvable $ref {reference}")),
            }
            return;
        }
        for keyword in ["allOf", "not"] {
            if schema.get(keyword).is_some() {
                self.fail(path, format!("unsupported schema keyword `{keyword}`"));
            }
        }
        if instance.is_null() && schema.get("nullable").and_then(Value::as_bool) == Some(true) {
            return;
        }
        for (keyword, exactly_one) in [("anyOf", false), ("oneOf", true)] {
            if let Some(branches) = schema.get(keyword).and_then(Value::as_array) {
                self.check_branches(keyword, branches, exactly_one, instance, path, hops);
            }
        }
        if let Some(ty) = schema.get("type").and_then(Value::as_str) {
            match type_matches(ty, instance) {
                Some(true) => {}
                Some(false) => return self.fail(path, format!("expected {ty}, got {}", kind(instance))),
                None => return self.fail(path, format!("unsupported type `{ty}` in schema")),
            }
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            if !values.contains(instance) {
                let allowed: Vec<String> = values.iter().map(Value::to_string).collect();
                self.fail(path, format!("{instance} is not one of [{}]", allowed.join(", ")));
            }
        }
        match instance {
            Value::Number(n) => self.check_number(schema, n, path),
            Value::Object(map) => {
                for name in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
                    let name = name.as_str().unwrap_or_default();
                    if !map.contains_key(name) {
                        self.fail(path, format!("missing required field `{name}`"));
                    }
                }
                let props = schema.get("properties").and_then(Value::as_object);
                for (name, sub) in props.into_iter().flatten() {
                    if let Some(value) = map.get(name) {
                        self.check(sub, value, &format!("{path}.{name}"), 0);
                    }
                }
                match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        for name in map.keys().filter(|k| !props.is_some_and(|p| p.contains_key(*k))) {
                            self.fail(path, format!("undeclared property `{name}`"));
                        }
                    }
                    Some(extra) if extra.is_object() => {
                        for (name, value) in
                            map.iter().filter(|(k, _)| !props.is_some_and(|p| p.contains_key(*k)))
                        {
                            self.check(extra, value, &format!("{path}.{name}"), 0);
                        }
                    }
                    _ => {}
                }
            }
            Value::Array(items) => {
                if let Some(item_schema) = schema.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        self.check(item_schema, item, &format!("{path}[{i}]"), 0);
                    }
                }
            }
            _ => {}
        }
    }

    /// `anyOf` (at least one branch) or `oneOf` (exactly one); a failure names each branch's
    /// first error.
    fn check_branches(
        &mut self,
        keyword: &str,
        branches: &[Value],
        exactly_one: bool,
        instance: &Value,
        path: &str,
        hops: usize,
    ) {
        let mut passed = 0;
        let mut firsts = Vec::new();
        for branch in branches {
            let mut sub = Validator { doc: self.doc, errors: Vec::new() };
            sub.check(branch, instance, path, hops + 1);
            match sub.errors.into_iter().next() {
                None => passed += 1,
                Some(first) => firsts.push(first),
            }
        }
        if passed == 0 {
            self.fail(path, format!("matches no `{keyword}` branch ({})", firsts.join("; ")));
        } else if exactly_one && passed > 1 {
            self.fail(path, format!("matches {passed} `oneOf` branches"));
        }
    }

    fn check_number(&mut self, schema: &Value, n: &Number, path: &str) {
        let fits = match schema.get("format").and_then(Value::as_str) {
            Some("int32") => n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()),
            Some("int64") => n.is_i64(),
            _ => true,
        };
        if !fits {
            self.fail(path, format!("{n} does not fit {}", schema["format"].as_str().unwrap_or_default()));
        }
        if let Some(min) = schema.get("minimum").and_then(Value::as_number) {
            if compare(n, min).is_lt() {
                self.fail(path, format!("{n} is below minimum {min}"));
            }
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_number) {
            if compare(n, max).is_gt() {
                self.fail(path, format!("{n} is above maximum {max}"));
            }
        }
    }

    fn fail(&mut self, path: &str, message: String) {
        self.errors.push(format!("{path}: {message}"));
    }
}

/// `None` for a type name OpenAPI 3.0 does not define.
fn type_matches(ty: &str, instance: &Value) -> Option<bool> {
    Some(match ty {
        "string" => instance.is_string(),
        // A JSON number written with a fraction or exponent is not an integer for our clients.
        "integer" => instance.is_i64() || instance.is_u64(),
        "number" => instance.is_number(),
        "boolean" => instance.is_boolean(),
        "array" => instance.is_array(),
        "object" => instance.is_object(),
        _ => return None,
    })
}

fn kind(instance: &Value) -> &'static str {
    match instance {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Exact for integers, `f64` otherwise.
fn compare(a: &Number, b: &Number) -> std::cmp::Ordering {
    match (a.as_i64(), b.as_i64()) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ if a.is_u64() && b.is_i64() => std::cmp::Ordering::Greater,
        _ => {
            let (x, y) = (a.as_f64().unwrap_or(f64::NAN), b.as_f64().unwrap_or(f64::NAN));
            x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal)
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn doc() -> Value {
        json!({"components": {"schemas": {
            "Block": {
                "type": "object",
                "required": ["block_identifier", "timestamp", "transactions"],
                "properties": {
                    "block_identifier": {"$ref": "#/components/schemas/BlockIdentifier"},
                    "timestamp": {"$ref": "#/components/schemas/Timestamp"},
                    "transactions": {"type": "array", "items": {"$ref": "#/components/schemas/Tx"}},
                    "metadata": {"type": "object"}
                }
            },
            "BlockIdentifier": {
                "type": "object",
                "required": ["index", "hash"],
                "properties": {"index": {"type": "integer", "format": "int64"}, "hash": {"type": "string"}}
            },
            "Timestamp": {"type": "integer", "format": "int64", "minimum": 0},
            "Tx": {
                "type": "object",
                "required": ["curve"],
                "properties": {
                    "curve": {"$ref": "#/components/schemas/Curve"},
                    "decimals": {"type": "integer", "format": "int32", "minimum": 0},
                    "multiplier": {"type": "number", "minimum": 0, "maximum": 10},
                    "ok": {"type": "boolean"}
                }
            },
            "Curve": {"type": "string", "enum": ["secp256k1", "edwards25519"]},
            "Loop": {"$ref": "#/components/schemas/Loop"},
            "Dangling": {"$ref": "#/components/schemas/Missing"},
            "Composed": {"allOf": [{"type": "string"}]},
            "Either": {"anyOf": [{"type": "string"}, {"$ref": "#/components/schemas/BlockIdentifier"}]},
            "Exactly": {"oneOf": [{"type": "integer"}, {"type": "number"}]},
            "Maybe": {"type": "string", "nullable": true},
            "Map": {"type": "object", "properties": {"n": {"type": "string"}}, "additionalProperties": {"type": "integer"}},
            "Closed": {"type": "object", "properties": {"n": {"type": "string"}}, "additionalProperties": false},
            "Odd": {"type": "date"}
        }}})
    }

    fn valid_block() -> Value {
        json!({
            "block_identifier": {"index": 3, "hash": "0xab"},
            "timestamp": 1_600_000_000_000_i64,
            "transactions": [
                {"curve": "secp256k1", "decimals": 6, "multiplier": 1.5, "ok": true},
                {"curve": "edwards25519", "extra": ["undeclared properties are allowed"]}
            ],
            "metadata": {}
        })
    }

    fn errors(name: &str, instance: Value) -> Vec<String> {
        validate(&doc(), name, &instance).expect_err("instance should be rejected")
    }

    #[test]
    fn valid_instances_pass() {
        assert_eq!(validate(&doc(), "Block", &valid_block()), Ok(()));
        assert_eq!(validate(&doc(), "Timestamp", &json!(0)), Ok(()));
        assert_eq!(validate(&doc(), "Curve", &json!("edwards25519")), Ok(()));
    }

    #[test]
    fn missing_required_field_is_reported_with_path() {
        let mut b = valid_block();
        b["block_identifier"].as_object_mut().unwrap().remove("hash");
        b.as_object_mut().unwrap().remove("timestamp");
        assert_eq!(
            errors("Block", b),
            ["$: missing required field `timestamp`", "$.block_identifier: missing required field `hash`"]
        );
    }

    #[test]
    fn wrong_types_are_reported_with_path() {
        let mut b = valid_block();
        b["block_identifier"]["index"] = json!("3");
        b["transactions"][1]["ok"] = json!(null);
        b["transactions"][0]["decimals"] = json!(6.0);
        b["metadata"] = json!([]);
        assert_eq!(
            errors("Block", b),
            [
                "$.block_identifier.index: expected integer, got string",
                "$.transactions[0].decimals: expected integer, got number",
                "$.transactions[1].ok: expected boolean, got null",
                "$.metadata: expected object, got array",
            ]
        );
        assert_eq!(errors("Block", json!("block")), ["$: expected object, got string"]);
    }

    #[test]
    fn bad_enum_value_is_reported() {
        let mut b = valid_block();
        b["transactions"][1]["curve"] = json!("tweedle");
        assert_eq!(
            errors("Block", b),
            ["$.transactions[1].curve: \"tweedle\" is not one of [\"secp256k1\", \"edwards25519\"]"]
        );
    }

    #[test]
    fn numeric_bounds_and_formats_are_checked() {
        assert_eq!(errors("Timestamp", json!(-1)), ["$: -1 is below minimum 0"]);
        assert_eq!(errors("Timestamp", json!(u64::MAX)), ["$: 18446744073709551615 does not fit int64"]);
        let mut b = valid_block();
        b["transactions"][0]["decimals"] = json!(1_i64 << 40);
        b["transactions"][0]["multiplier"] = json!(10.5);
        b["transactions"][1]["multiplier"] = json!(-0.5);
        assert_eq!(
            errors("Block", b),
            [
                "$.transactions[0].decimals: 1099511627776 does not fit int32",
                "$.transactions[0].multiplier: 10.5 is above maximum 10",
                "$.transactions[1].multiplier: -0.5 is below minimum 0",
            ]
        );
    }

    #[test]
    fn broken_schemas_fail_instead_of_passing() {
        assert_eq!(errors("Nope", json!({})), ["unknown schema `Nope`"]);
        assert_eq!(errors("Loop", json!({})), ["$: $ref chain longer than 32"]);
        assert_eq!(errors("Dangling", json!({})), ["$: unresolvable $ref \"#/components/schemas/Missing\""]);
        assert_eq!(errors("Composed", json!("x")), ["$: unsupported schema keyword `allOf`"]);
        assert_eq!(errors("Odd", json!("x")), ["$: unsupported type `date` in schema"]);
    }

    #[test]
    fn composition_nullable_and_additional_properties() {
        assert_eq!(validate(&doc(), "Either", &json!("x")), Ok(()));
        assert_eq!(validate(&doc(), "Either", &json!({"index": 1, "hash": "h"})), Ok(()));
        assert_eq!(
            errors("Either", json!({"index": 1})),
            ["$: matches no `anyOf` branch ($: expected string, got object; $: missing required field `hash`)"]
        );
        assert_eq!(validate(&doc(), "Exactly", &json!(1.5)), Ok(()));
        assert_eq!(errors("Exactly", json!(1)), ["$: matches 2 `oneOf` branches"]);
        assert_eq!(validate(&doc(), "Maybe", &json!(null)), Ok(()));
        assert_eq!(errors("Curve", json!(null)), ["$: expected string, got null"]);
        assert_eq!(validate(&doc(), "Map", &json!({"n": "x", "a": 1, "b": 2})), Ok(()));
        assert_eq!(errors("Map", json!({"n": "x", "a": "1"})), ["$.a: expected integer, got string"]);
        assert_eq!(errors("Closed", json!({"n": "x", "a": 1})), ["$: undeclared property `a`"]);
    }

    #[test]
    fn inline_schemas_resolve_refs_in_the_document() {
        let schema = json!({"type": "array", "items": {"$ref": "#/components/schemas/Curve"}});
        assert_eq!(validate_against(&doc(), &schema, &json!(["secp256k1"])), Ok(()));
        assert!(validate_against(&doc(), &schema, &json!(["x"])).is_err());
    }
}
