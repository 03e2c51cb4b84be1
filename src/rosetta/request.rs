//! Request decoding: body → JSON → the typed `rosetta-spec` request, with the incumbent's
//! error codes for missing identifiers, then the network identifier check.

use bytes::Bytes;
use rosetta_spec::NetworkIdentifier;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::{ErrorKind, RosettaError};
use crate::ledger::Network;

/// The blockchain name every network identifier must carry.
pub const BLOCKCHAIN: &str = "stacks";

/// Parses a body that must be a JSON object (an empty body counts as `{}`).
pub fn body_object(body: &Bytes) -> Result<Value, RosettaError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Default::default()));
    }
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        RosettaError::with_message(ErrorKind::MalformedRequest, format!("body is not JSON: {e}"))
    })?;
    match value {
        Value::Object(_) => Ok(value),
        Value::Null => Ok(Value::Object(Default::default())),
        other => Err(RosettaError::with_message(
            ErrorKind::MalformedRequest,
            format!("body must be a JSON object, not {}", kind_of(&other)),
        )),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Decodes a request that carries a `network_identifier`, checks it names our network, and
/// maps each missing identifier in `required` to its own code (613–616 style).
pub fn parse<T: DeserializeOwned>(
    body: &Bytes,
    network: Network,
    required: &[(&str, ErrorKind)],
) -> Result<T, RosettaError> {
    let value = body_object(body)?;
    let net = value.get("network_identifier").filter(|v| !v.is_null());
    let Some(net) = net else {
        return Err(RosettaError::with_message(
            ErrorKind::NetworkIdentifierNull,
            "must have required property 'network_identifier'",
        ));
    };
    if matches!(net.get("blockchain"), None | Some(Value::Null)) {
        return Err(RosettaError::with_message(
            ErrorKind::BlockchainNameNull,
            "network_identifier.blockchain",
        ));
    }
    if matches!(net.get("network"), None | Some(Value::Null)) {
        return Err(RosettaError::with_message(ErrorKind::NetworkNameNull, "network_identifier.network"));
    }
    for (field, kind) in required {
        if matches!(value.get(*field), None | Some(Value::Null)) {
            return Err(RosettaError::with_message(*kind, format!("must have required property '{field}'")));
        }
    }
    let id: NetworkIdentifier = serde_json::from_value(net.clone()).map_err(|e| invalid(&e))?;
    check_network(&id, network)?;
    serde_json::from_value(value).map_err(|e| invalid(&e))
}

fn invalid(e: &serde_json::Error) -> RosettaError {
    RosettaError::with_message(ErrorKind::InvalidParams, e.to_string())
}

/// The network identifier must be `{blockchain: "stacks", network: <ours>}`, without a
/// sub-network (Stacks has none).
pub fn check_network(id: &NetworkIdentifier, network: Network) -> Result<(), RosettaError> {
    if id.blockchain != BLOCKCHAIN {
        return Err(RosettaError::with_details(
            ErrorKind::InvalidBlockchain,
            serde_json::json!({ "blockchain": id.blockchain, "expected": BLOCKCHAIN }),
        ));
    }
    if id.network != network.as_str() || id.sub_network_identifier.is_some() {
        return Err(RosettaError::with_details(
            ErrorKind::InvalidNetwork,
            serde_json::json!({ "network": id.network, "expected": network.as_str() }),
        ));
    }
    Ok(())
}

/// Our network identifier.
pub fn network_identifier(network: Network) -> NetworkIdentifier {
    NetworkIdentifier::new(BLOCKCHAIN, network.as_str())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse_net(body: &str) -> Result<rosetta_spec::NetworkRequest, RosettaError> {
        parse(&Bytes::from(body.to_owned()), Network::Testnet, &[])
    }

    #[test]
    fn network_identifier_errors_have_their_codes() {
        let code = |b: &str| parse_net(b).unwrap_err().kind.code();
        assert_eq!(code("not json"), 652);
        assert_eq!(code("[1]"), 652);
        assert_eq!(code("{}"), 613);
        assert_eq!(code(r#"{"network_identifier":{"network":"testnet"}}"#), 617);
        assert_eq!(code(r#"{"network_identifier":{"blockchain":"stacks"}}"#), 618);
        assert_eq!(code(r#"{"network_identifier":{"blockchain":"bitcoin","network":"testnet"}}"#), 611);
        assert_eq!(code(r#"{"network_identifier":{"blockchain":"stacks","network":"mainnet"}}"#), 610);
        assert_eq!(code(r#"{"network_identifier":{"blockchain":"stacks","network":7}}"#), 609);
        let ok = parse_net(r#"{"network_identifier":{"blockchain":"stacks","network":"testnet"}}"#).unwrap();
        assert_eq!(ok.network_identifier, network_identifier(Network::Testnet));
    }

    #[test]
    fn required_identifiers_map_to_their_codes() {
        let body = Bytes::from(
            json!({"network_identifier": {"blockchain": "stacks", "network": "testnet"}}).to_string(),
        );
        let e = parse::<Value>(
            &body,
            Network::Testnet,
            &[("account_identifier", ErrorKind::AccountIdentifierNull)],
        )
        .unwrap_err();
        assert_eq!(e.kind, ErrorKind::AccountIdentifierNull);
    }
}
