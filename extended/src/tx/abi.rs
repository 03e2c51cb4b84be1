//! Contract-call arguments rendered from the called contract's ABI, as the incumbent does:
//! each argument gets its ABI name and type, and the call its `define-…` signature.

use serde_json::{Map, Value as Json};

/// The ABI type as Clarity source (`uint`, `(buff 32)`, `(tuple (a int) (b bool))`).
pub fn type_string(t: &Json) -> Option<String> {
    if let Some(s) = t.as_str() {
        return Some(
            match s {
                "int128" => "int",
                "uint128" => "uint",
                other => other,
            }
            .to_string(),
        );
    }
    let o = t.as_object()?;
    let (key, inner) = o.iter().next()?;
    Some(match key.as_str() {
        "buffer" => format!("(buff {})", inner["length"]),
        "string-ascii" => format!("(string-ascii {})", inner["length"]),
        "string-utf8" => format!("(string-utf8 {})", inner["length"]),
        "response" => format!("(response {} {})", type_string(&inner["ok"])?, type_string(&inner["error"])?),
        "optional" => format!("(optional {})", type_string(inner)?),
        "list" => format!("(list {} {})", inner["length"], type_string(&inner["type"])?),
        "tuple" => {
            let fields = inner
                .as_array()?
                .iter()
                .map(|f| Some(format!("({} {})", f["name"].as_str()?, type_string(&f["type"])?)))
                .collect::<Option<Vec<_>>>()?;
            format!("(tuple {})", fields.join(" "))
        }
        _ => return None,
    })
}

/// Fills `function_signature` and each argument's `name`/`type` of a `contract_call` payload
/// from `abi` (the contract's ABI JSON). Leaves the payload as it is when the ABI does not
/// describe the function.
pub fn apply_abi(call: &mut Map<String, Json>, abi: &str) {
    let Ok(abi) = serde_json::from_str::<Json>(abi) else { return };
    let Some(name) = call.get("function_name").and_then(Json::as_str).map(str::to_owned) else { return };
    let Some(func) =
        abi["functions"].as_array().and_then(|fs| fs.iter().find(|f| f["name"].as_str() == Some(&name)))
    else {
        return;
    };
    let Some(params) = func["args"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| Some((p["name"].as_str()?.to_string(), type_string(&p["type"])?)))
                .collect::<Option<Vec<_>>>()
        })
        .and_then(|v| v)
    else {
        return;
    };
    let access = func["access"].as_str().unwrap_or("public").replace('_', "-");
    let args = params.iter().map(|(n, t)| format!("({n} {t})")).collect::<Vec<_>>().join(" ");
    call.insert("function_signature".into(), format!("(define-{access} ({name} {args}))").into());
    if let Some(Json::Array(values)) = call.get_mut("function_args") {
        for (value, (n, t)) in values.iter_mut().zip(&params) {
            value["name"] = n.clone().into();
            value["type"] = t.clone().into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn abi_types_render_as_clarity_source() {
        let t = json!({"tuple": [{"name": "hashbytes", "type": {"buffer": {"length": 32}}},
                                  {"name": "version", "type": {"buffer": {"length": 1}}}]});
        assert_eq!(type_string(&t).unwrap(), "(tuple (hashbytes (buff 32)) (version (buff 1)))");
        assert_eq!(
            type_string(&json!({"optional": {"buffer": {"length": 65}}})).unwrap(),
            "(optional (buff 65))"
        );
        assert_eq!(
            type_string(&json!({"response": {"ok": "bool", "error": "int128"}})).unwrap(),
            "(response bool int)"
        );
        assert_eq!(
            type_string(&json!({"list": {"type": "principal", "length": 200}})).unwrap(),
            "(list 200 principal)"
        );
        assert_eq!(type_string(&json!({"string-utf8": {"length": 40}})).unwrap(), "(string-utf8 40)");
        assert!(type_string(&json!({"mystery": 1})).is_none());
    }

    #[test]
    fn a_call_gets_names_types_and_signature() {
        let abi = r#"{"functions":[{"name":"stack","access":"public","args":[
            {"name":"amount-ustx","type":"uint128"},{"name":"who","type":"principal"}],
            "outputs":{"type":"bool"}}]}"#;
        let mut call = json!({"function_name": "stack", "function_signature": "",
            "function_args": [{"hex":"0x01","repr":"u1","name":"","type":"uint"},
                              {"hex":"0x05","repr":"'SP1","name":"","type":"principal"}]});
        apply_abi(call.as_object_mut().unwrap(), abi);
        assert_eq!(call["function_signature"], "(define-public (stack (amount-ustx uint) (who principal)))");
        assert_eq!(call["function_args"][0]["name"], "amount-ustx");
        assert_eq!(call["function_args"][1]["type"], "principal");
        // An unknown function keeps the ABI-less rendering.
        let mut other = json!({"function_name": "nope", "function_signature": ""});
        apply_abi(other.as_object_mut().unwrap(), abi);
        assert_eq!(other["function_signature"], "");
    }
}
