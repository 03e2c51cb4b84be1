//! The part of the Hiro API's transaction entity (`/extended/v1/tx/{id}`) that comes from the
//! raw transaction alone. Block, status, result and event fields are added by the caller.
//! Key order follows the API's response schema.

use serde_json::{json, Map, Value as Json};

use super::json::{fungible_code_name, nonfungible_code_name};
use super::*;
use crate::to_hex_prefixed as hex;

impl PostConditionMode {
    /// `allow`, `deny` or `originator`.
    pub fn api_name(self) -> &'static str {
        match self {
            PostConditionMode::Allow => "allow",
            PostConditionMode::Deny => "deny",
            PostConditionMode::Originator => "originator",
        }
    }
}

impl AnchorMode {
    /// `on_chain_only`, `off_chain_only` or `any`.
    pub fn api_name(self) -> &'static str {
        match self {
            AnchorMode::OnChainOnly => "on_chain_only",
            AnchorMode::OffChainOnly => "off_chain_only",
            AnchorMode::Any => "any",
        }
    }
}

impl TenureChangeCause {
    pub fn api_name(self) -> &'static str {
        match self {
            TenureChangeCause::BlockFound => "block_found",
            TenureChangeCause::Extended => "extended",
            TenureChangeCause::ExtendedRuntime => "extended_runtime",
            TenureChangeCause::ExtendedReadCount => "extended_read_count",
            TenureChangeCause::ExtendedReadLength => "extended_read_length",
            TenureChangeCause::ExtendedWriteCount => "extended_write_count",
            TenureChangeCause::ExtendedWriteLength => "extended_write_length",
        }
    }
}

impl Transaction {
    /// `tx_id`, `nonce`, `fee_rate`, `sender_address`, `sponsor_nonce` (sponsored only),
    /// `sponsored`, `sponsor_address` (sponsored only), `post_condition_mode`,
    /// `post_conditions`, `anchor_mode`, `tx_type` and the payload object. Contract-call
    /// arguments are rendered without an ABI (`name: ""`, `type` from the value,
    /// `function_signature: ""`); the caller replaces them when it has the contract's ABI.
    pub fn api_tx_fields(&self) -> Map<String, Json> {
        let mut m = Map::new();
        m.insert("tx_id".into(), self.txid_hex().into());
        m.insert("nonce".into(), self.nonce().into());
        m.insert("fee_rate".into(), self.fee().to_string().into());
        m.insert("sender_address".into(), self.origin_address().to_c32().into());
        if let Some(n) = self.sponsor_nonce() {
            m.insert("sponsor_nonce".into(), n.into());
        }
        m.insert("sponsored".into(), self.is_sponsored().into());
        if let Some(a) = self.sponsor_address() {
            m.insert("sponsor_address".into(), a.to_c32().into());
        }
        m.insert("post_condition_mode".into(), self.post_condition_mode.api_name().into());
        m.insert(
            "post_conditions".into(),
            self.post_conditions.iter().map(api_post_condition).collect::<Vec<_>>().into(),
        );
        m.insert("anchor_mode".into(), self.anchor_mode.api_name().into());
        m.insert("tx_type".into(), self.tx_type_name().into());
        let (key, payload) = self.api_payload();
        m.insert(key.into(), payload);
        m
    }

    /// The payload object and the key the API serves it under.
    pub fn api_payload(&self) -> (&'static str, Json) {
        match &self.payload {
            Payload::TokenTransfer { recipient, amount, memo } => (
                "token_transfer",
                json!({
                    "recipient_address": recipient.to_string(),
                    "amount": amount.to_string(),
                    "memo": hex(memo),
                }),
            ),
            Payload::SmartContract { name, code_body, clarity_version } => (
                "smart_contract",
                json!({
                    "clarity_version": clarity_version.map(|v| v as u8),
                    "contract_id": format!("{}.{}", self.origin_address(), name),
                    "source_code": code_body,
                }),
            ),
            Payload::ContractCall { contract, function_name, function_args } => (
                "contract_call",
                json!({
                    "contract_id": contract.to_string(),
                    "function_name": function_name,
                    "function_signature": "",
                    "function_args": function_args.iter().map(api_function_arg).collect::<Vec<_>>(),
                }),
            ),
            Payload::PoisonMicroblock(first, second) => (
                "poison_microblock",
                json!({
                    "microblock_header_1": hex(&first.serialize()),
                    "microblock_header_2": hex(&second.serialize()),
                }),
            ),
            Payload::Coinbase { data, alt_recipient, vrf_proof } => {
                let mut m = Map::new();
                m.insert("data".into(), hex(data).into());
                m.insert("alt_recipient".into(), alt_recipient.as_ref().map(|p| p.to_string()).into());
                if let Some(proof) = vrf_proof {
                    m.insert("vrf_proof".into(), hex(proof).into());
                }
                ("coinbase_payload", Json::Object(m))
            }
            Payload::TenureChange(tc) => (
                "tenure_change_payload",
                json!({
                    "tenure_consensus_hash": hex(&tc.tenure_consensus_hash),
                    "prev_tenure_consensus_hash": hex(&tc.prev_tenure_consensus_hash),
                    "burn_view_consensus_hash": hex(&tc.burn_view_consensus_hash),
                    "previous_tenure_end": hex(&tc.previous_tenure_end),
                    "previous_tenure_blocks": tc.previous_tenure_blocks,
                    "cause": tc.cause.api_name(),
                    "pubkey_hash": hex(&tc.pubkey_hash),
                }),
            ),
        }
    }
}

/// `{hex, repr, name, type}` without an ABI: no name, the type taken from the value.
fn api_function_arg(v: &crate::clarity::Value) -> Json {
    json!({
        "hex": hex(&v.serialize()),
        "repr": v.repr(),
        "name": "",
        "type": v.type_name(),
    })
}

fn api_pc_principal(p: &PostConditionPrincipal) -> Json {
    match p {
        PostConditionPrincipal::Origin => json!({"type_id": "principal_origin"}),
        PostConditionPrincipal::Standard(a) => {
            json!({"type_id": "principal_standard", "address": a.to_c32()})
        }
        PostConditionPrincipal::Contract(c) => json!({
            "type_id": "principal_contract",
            "address": c.address.to_c32(),
            "contract_name": c.name,
        }),
    }
}

fn api_asset(a: &AssetInfo) -> Json {
    json!({
        "asset_name": a.asset_name,
        "contract_address": a.contract.address.to_c32(),
        "contract_name": a.contract.name,
    })
}

fn api_post_condition(pc: &PostCondition) -> Json {
    match pc {
        PostCondition::Stx { principal, code, amount } => json!({
            "principal": api_pc_principal(principal),
            "condition_code": fungible_code_name(*code),
            "amount": amount.to_string(),
            "type": "stx",
        }),
        PostCondition::Fungible { principal, asset, code, amount } => json!({
            "principal": api_pc_principal(principal),
            "condition_code": fungible_code_name(*code),
            "amount": amount.to_string(),
            "type": "fungible",
            "asset": api_asset(asset),
        }),
        PostCondition::Nonfungible { principal, asset, value, code } => json!({
            "principal": api_pc_principal(principal),
            "condition_code": nonfungible_code_name(*code),
            "type": "non_fungible",
            "asset_value": {"hex": hex(&value.serialize()), "repr": value.repr()},
            "asset": api_asset(asset),
        }),
    }
}

#[cfg(test)]
mod tests {
    use crate::tx::accessors::tests::sponsored;

    #[test]
    fn sponsored_fields_in_schema_order() {
        let tx = sponsored();
        let m = tx.api_tx_fields();
        let keys: Vec<&str> = m.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "tx_id",
                "nonce",
                "fee_rate",
                "sender_address",
                "sponsor_nonce",
                "sponsored",
                "sponsor_address",
                "post_condition_mode",
                "post_conditions",
                "anchor_mode",
                "tx_type",
                "token_transfer"
            ]
        );
        assert_eq!(m["nonce"], 7);
        assert_eq!(m["sponsor_nonce"], 9);
        assert_eq!(m["fee_rate"], "180");
        assert_eq!(m["sender_address"], tx.origin_address().to_c32());
        assert_eq!(m["sponsor_address"], tx.sponsor_address().map(|a| a.to_c32()).unwrap_or_default());
        assert_eq!(m["token_transfer"]["amount"], "5");
    }
}
