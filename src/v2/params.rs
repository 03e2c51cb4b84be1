//! Checking `/v2` inputs: principals, contract ids, `proof`/`tip` query parameters and the
//! `call-read` body. Bad input is a [`V2Error::Invalid`] naming the parameter.

use std::collections::HashMap;

use serde_json::Value as Json;
use stacks_codec::address::{validate_contract_name, StacksAddress};
use stacks_codec::clarity::Value;
use stacks_codec::decode_hex;

use super::error::V2Error;

/// `ADDR` or `ADDR.name`, checked (c32check and the Clarity name rule).
pub fn principal(param: &'static str, text: &str) -> Result<String, V2Error> {
    let invalid = |reason: String| V2Error::Invalid { param, reason };
    let (address, name) = match text.split_once('.') {
        Some((a, n)) => (a, Some(n)),
        None => (text, None),
    };
    address
        .parse::<StacksAddress>()
        .map_err(|e| invalid(format!("{text:?} is not a Stacks address: {e}")))?;
    if let Some(name) = name {
        validate_contract_name(name).map_err(|e| invalid(format!("{text:?}: {e}")))?;
    }
    Ok(text.to_owned())
}

/// `ADDR.name` from the two path segments.
pub fn contract_id(address: &str, name: &str) -> Result<String, V2Error> {
    address.parse::<StacksAddress>().map_err(|e| V2Error::Invalid {
        param: "contract_address",
        reason: format!("{address:?} is not a Stacks address: {e}"),
    })?;
    validate_contract_name(name)
        .map_err(|e| V2Error::Invalid { param: "contract_name", reason: e.to_string() })?;
    Ok(format!("{address}.{name}"))
}

/// Clarity's name rule for functions: a letter, then letters, digits or `-_!?+<>=/*`, at most
/// 128 characters.
pub fn clarity_name(name: &str) -> Result<(), String> {
    let mut bytes = name.bytes();
    let first_ok = bytes.next().is_some_and(|c| c.is_ascii_alphabetic());
    if !first_ok
        || name.len() > 128
        || !bytes.all(|c| c.is_ascii_alphanumeric() || b"-_!?+<>=/*".contains(&c))
    {
        return Err(format!("{name:?} is not a Clarity function name"));
    }
    Ok(())
}

/// Whether the client wants proofs: the node's default is yes; `proof=0` turns them off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proof {
    /// `proof=0`.
    Off,
    /// No `proof` parameter: the node would include proofs.
    Default,
    /// `proof=` anything but 0, which the node reads as "include proofs".
    Explicit,
}

pub fn proof(query: &HashMap<String, String>) -> Proof {
    match query.get("proof").map(String::as_str) {
        Some("0") => Proof::Off,
        Some(_) => Proof::Explicit,
        None => Proof::Default,
    }
}

/// The node's `tip` parameter: the ledger answers only at its own tip (`latest`, empty, or the
/// tip's index block hash). Any other tip asks for state the ledger does not serve.
pub fn at_tip(query: &HashMap<String, String>, tip_index_block_hash: Option<&str>) -> bool {
    match query.get("tip").map(|t| t.trim()) {
        None | Some("") | Some("latest") => true,
        Some(t) => tip_index_block_hash.is_some_and(|ours| {
            ours.trim_start_matches("0x").eq_ignore_ascii_case(t.trim_start_matches("0x"))
        }),
    }
}

/// A whole `call-read` request: the contract, the function name and the body.
pub fn call_read(address: &str, name: &str, function: &str, body: &[u8]) -> Result<(), V2Error> {
    contract_id(address, name)?;
    clarity_name(function).map_err(|reason| V2Error::Invalid { param: "function_name", reason })?;
    call_read_body(body)
}

/// [`call_read`] for a request path `/v2/contracts/call-read/{address}/{name}/{function}` (as
/// the proxy sees it, percent-encoded).
pub fn call_read_path(path: &str, body: &[u8]) -> Result<(), V2Error> {
    let rest = path.strip_prefix("/v2/contracts/call-read/").unwrap_or(path);
    let decoded: Vec<String> = rest
        .split('/')
        .map(|s| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned())
        .collect();
    match decoded.as_slice() {
        [address, name, function] => call_read(address, name, function, body),
        _ => Err(V2Error::Invalid {
            param: "path",
            reason: "expected /v2/contracts/call-read/{address}/{contract}/{function}".into(),
        }),
    }
}

/// The `call-read` body, `{sender, arguments: [hex]}`: the sender a principal, each argument one
/// whole serialized Clarity value.
pub fn call_read_body(body: &[u8]) -> Result<(), V2Error> {
    let json: Json = serde_json::from_slice(body)
        .map_err(|e| V2Error::Invalid { param: "body", reason: format!("not JSON: {e}") })?;
    let sender = json
        .get("sender")
        .and_then(Json::as_str)
        .ok_or_else(|| V2Error::Invalid { param: "sender", reason: "missing, or not a string".into() })?;
    principal("sender", sender)?;
    let arguments = json.get("arguments").and_then(Json::as_array).ok_or_else(|| V2Error::Invalid {
        param: "arguments",
        reason: "missing, or not an array of hex strings".into(),
    })?;
    for (i, arg) in arguments.iter().enumerate() {
        let invalid =
            |reason: String| V2Error::Invalid { param: "arguments", reason: format!("[{i}]: {reason}") };
        let hex = arg.as_str().ok_or_else(|| invalid("not a string".into()))?;
        let bytes = decode_hex(hex).map_err(|e| invalid(format!("not hex: {e}")))?;
        Value::deserialize(&bytes).map_err(|e| invalid(format!("not a serialized Clarity value: {e}")))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADDR: &str = "ST1HB1T8WRNBYB0Y3T7WXZS38NKKPTBR3EG9EPJKR";

    #[test]
    fn principals() {
        assert!(principal("principal", ADDR).is_ok());
        assert!(principal("principal", &format!("{ADDR}.my-contract_1")).is_ok());
        assert!(principal("principal", "ST1HB1T8WRNBYB0Y3T7WXZS38NKKPTBR3EG9EPJKX").is_err());
        assert!(principal("principal", &format!("{ADDR}.1bad")).is_err());
        assert!(principal("principal", &format!("{ADDR}.")).is_err());
        assert!(principal("principal", "hello").is_err());
        assert!(contract_id(ADDR, "pox-4").is_ok());
        assert!(matches!(
            contract_id("nope", "pox-4"),
            Err(V2Error::Invalid { param: "contract_address", .. })
        ));
        assert!(matches!(contract_id(ADDR, "a b"), Err(V2Error::Invalid { param: "contract_name", .. })));
        assert!(clarity_name("get-balance?").is_ok());
        assert!(clarity_name("transfer!").is_ok());
        assert!(clarity_name("-x").is_err());
        assert!(clarity_name("").is_err());
        assert!(clarity_name("a b").is_err());
    }

    #[test]
    fn proof_and_tip() {
        let q = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        assert_eq!(proof(&q(&[])), Proof::Default);
        assert_eq!(proof(&q(&[("proof", "0")])), Proof::Off);
        assert_eq!(proof(&q(&[("proof", "1")])), Proof::Explicit);
        assert!(at_tip(&q(&[]), None));
        assert!(at_tip(&q(&[("tip", "latest")]), None));
        assert!(at_tip(&q(&[("tip", "AB12")]), Some("0xab12")));
        assert!(!at_tip(&q(&[("tip", "cd34")]), Some("0xab12")));
    }

    #[test]
    fn call_read_bodies() {
        // u1 and a standard principal, serialized.
        let ok = format!(r#"{{"sender":"{ADDR}","arguments":["0x0100000000000000000000000000000001"]}}"#);
        assert!(call_read_body(ok.as_bytes()).is_ok());
        let cases = [
            ("not json", "body"),
            (r#"{"arguments":[]}"#, "sender"),
            (r#"{"sender":"bad","arguments":[]}"#, "sender"),
        ];
        for (body, param) in cases {
            match call_read_body(body.as_bytes()) {
                Err(V2Error::Invalid { param: p, .. }) => assert_eq!(p, param, "{body}"),
                other => panic!("{body}: {other:?}"),
            }
        }
        for args in [r#""0x01""#, r#""zz""#, "7", r#""0x010000000000000000000000000000000100""#] {
            let body = format!(r#"{{"sender":"{ADDR}","arguments":[{args}]}}"#);
            assert!(
                matches!(call_read_body(body.as_bytes()), Err(V2Error::Invalid { param: "arguments", .. })),
                "{args}"
            );
        }
        let no_args = format!(r#"{{"sender":"{ADDR}"}}"#);
        assert!(matches!(
            call_read_body(no_args.as_bytes()),
            Err(V2Error::Invalid { param: "arguments", .. })
        ));
    }
}
