//! The decoded-transaction JSON of `stacks-encoding-native-js` (`decodeTransaction`), which the
//! Hiro API stores and serves from. Keys are emitted in the reference's order.
//!
//! Beyond the reference: post-condition mode 3 and NFT condition code 0x12, which the 1.2.0
//! decoder rejects, render as the numbers plus the name `maybe_sent` (see `wire.rs`).

use serde_json::{json, Map, Value as Json};

use super::clarity_text::clarity_json;
use super::*;
use crate::to_hex_prefixed as hex;

impl Transaction {
    /// The reference decoder's JSON for this transaction.
    pub fn to_decoded_json(&self) -> Json {
        json!({
            "tx_id": self.txid_hex(),
            "version": self.version as u8,
            "chain_id": self.chain_id,
            "auth": auth_json(&self.auth, self.version),
            "anchor_mode": self.anchor_mode as u8,
            "post_condition_mode": self.post_condition_mode as u8,
            "post_conditions": self.post_conditions.iter().map(post_condition_json).collect::<Vec<_>>(),
            "post_conditions_buffer": hex(&self.post_conditions_bytes()),
            "payload": payload_json(&self.payload),
        })
    }
}

/// `{address_version, address_hash_bytes, address}`.
fn address_fields(out: &mut Map<String, Json>, a: &StacksAddress) {
    out.insert("address_version".into(), a.version.into());
    out.insert("address_hash_bytes".into(), hex(&a.hash160).into());
    out.insert("address".into(), a.to_c32().into());
}

fn address_json(a: &StacksAddress) -> Json {
    let mut m = Map::new();
    address_fields(&mut m, a);
    Json::Object(m)
}

fn auth_json(auth: &Authorization, version: TransactionVersion) -> Json {
    let mut m = Map::new();
    m.insert("type_id".into(), auth.type_id().into());
    m.insert("origin_condition".into(), condition_json(auth.origin(), version));
    if let Some(sponsor) = auth.sponsor() {
        m.insert("sponsor_condition".into(), condition_json(sponsor, version));
    }
    Json::Object(m)
}

fn condition_json(c: &SpendingCondition, version: TransactionVersion) -> Json {
    let mut m = Map::new();
    m.insert("hash_mode".into(), (c.hash_mode() as u8).into());
    m.insert("signer".into(), address_json(&c.address(version)));
    m.insert("nonce".into(), c.nonce().to_string().into());
    m.insert("tx_fee".into(), c.tx_fee().to_string().into());
    match c {
        SpendingCondition::SingleSig(s) => {
            m.insert("key_encoding".into(), (s.key_encoding as u8).into());
            m.insert("signature".into(), hex(&s.signature).into());
        }
        SpendingCondition::MultiSig(ms) => {
            let fields: Vec<Json> = ms
                .fields
                .iter()
                .map(|f| match f {
                    AuthField::PublicKey { key, .. } => {
                        json!({"type_id": f.type_id(), "public_key": hex(key)})
                    }
                    AuthField::Signature { signature, .. } => {
                        json!({"type_id": f.type_id(), "signature": hex(signature)})
                    }
                })
                .collect();
            m.insert("fields".into(), fields.into());
            m.insert("signatures_required".into(), ms.signatures_required.into());
        }
    }
    Json::Object(m)
}

pub(super) fn fungible_code_name(code: FungibleConditionCode) -> &'static str {
    match code {
        FungibleConditionCode::SentEq => "sent_equal_to",
        FungibleConditionCode::SentGt => "sent_greater_than",
        FungibleConditionCode::SentGe => "sent_greater_than_or_equal_to",
        FungibleConditionCode::SentLt => "sent_less_than",
        FungibleConditionCode::SentLe => "sent_less_than_or_equal_to",
    }
}

pub(super) fn nonfungible_code_name(code: NonfungibleConditionCode) -> &'static str {
    match code {
        NonfungibleConditionCode::Sent => "sent",
        NonfungibleConditionCode::NotSent => "not_sent",
        NonfungibleConditionCode::MaybeSent => "maybe_sent",
    }
}

fn pc_principal_json(p: &PostConditionPrincipal) -> Json {
    let mut m = Map::new();
    m.insert("type_id".into(), p.type_id().into());
    match p {
        PostConditionPrincipal::Origin => {}
        PostConditionPrincipal::Standard(a) => address_fields(&mut m, a),
        PostConditionPrincipal::Contract(c) => {
            address_fields(&mut m, &c.address);
            m.insert("contract_name".into(), c.name.clone().into());
        }
    }
    Json::Object(m)
}

fn asset_json(a: &AssetInfo) -> Json {
    json!({
        "contract_address": a.contract.address.to_c32(),
        "contract_name": a.contract.name,
        "asset_name": a.asset_name,
    })
}

fn post_condition_json(pc: &PostCondition) -> Json {
    let mut m = Map::new();
    m.insert("asset_info_id".into(), pc.asset_info_id().into());
    match pc {
        PostCondition::Stx { principal, code, amount } => {
            m.insert("principal".into(), pc_principal_json(principal));
            m.insert("condition_code".into(), (*code as u8).into());
            m.insert("condition_name".into(), fungible_code_name(*code).into());
            m.insert("amount".into(), amount.to_string().into());
        }
        PostCondition::Fungible { principal, asset, code, amount } => {
            m.insert("principal".into(), pc_principal_json(principal));
            m.insert("asset".into(), asset_json(asset));
            m.insert("condition_code".into(), (*code as u8).into());
            m.insert("condition_name".into(), fungible_code_name(*code).into());
            m.insert("amount".into(), amount.to_string().into());
        }
        PostCondition::Nonfungible { principal, asset, value, code } => {
            m.insert("principal".into(), pc_principal_json(principal));
            m.insert("asset".into(), asset_json(asset));
            m.insert("asset_value".into(), clarity_json(value));
            m.insert("condition_code".into(), (*code as u8).into());
            m.insert("condition_name".into(), nonfungible_code_name(*code).into());
        }
    }
    Json::Object(m)
}

/// A principal with its Clarity type id (5 standard, 6 contract) and address fields.
fn principal_json(p: &Principal) -> Json {
    let mut m = Map::new();
    match p {
        Principal::Standard(a) => {
            m.insert("type_id".into(), crate::clarity::type_id::PRINCIPAL_STANDARD.into());
            address_fields(&mut m, a);
        }
        Principal::Contract(c) => {
            m.insert("type_id".into(), crate::clarity::type_id::PRINCIPAL_CONTRACT.into());
            m.insert("contract_name".into(), c.name.clone().into());
            address_fields(&mut m, &c.address);
        }
    }
    Json::Object(m)
}

fn microblock_header_json(h: &MicroblockHeader) -> Json {
    json!({
        "buffer": hex(&h.serialize()),
        "version": h.version,
        "sequence": h.sequence,
        "prev_block": hex(&h.prev_block),
        "tx_merkle_root": hex(&h.tx_merkle_root),
        "signature": hex(&h.signature),
    })
}

fn payload_json(p: &Payload) -> Json {
    let mut m = Map::new();
    m.insert("type_id".into(), p.type_id().into());
    match p {
        Payload::TokenTransfer { recipient, amount, memo } => {
            m.insert("recipient".into(), principal_json(recipient));
            m.insert("amount".into(), amount.to_string().into());
            m.insert("memo_hex".into(), hex(memo).into());
        }
        Payload::SmartContract { name, code_body, clarity_version } => {
            if let Some(v) = clarity_version {
                m.insert("clarity_version".into(), (*v as u8).into());
            }
            m.insert("contract_name".into(), name.clone().into());
            m.insert("code_body".into(), code_body.clone().into());
        }
        Payload::ContractCall { contract, function_name, function_args } => {
            address_fields(&mut m, &contract.address);
            m.insert("contract_name".into(), contract.name.clone().into());
            m.insert("function_name".into(), function_name.clone().into());
            m.insert(
                "function_args".into(),
                function_args.iter().map(clarity_json).collect::<Vec<_>>().into(),
            );
            let mut buf = (function_args.len() as u32).to_be_bytes().to_vec();
            function_args.iter().for_each(|v| v.write(&mut buf));
            m.insert("function_args_buffer".into(), hex(&buf).into());
        }
        Payload::PoisonMicroblock(first, second) => {
            m.insert("microblock_header_1".into(), microblock_header_json(first));
            m.insert("microblock_header_2".into(), microblock_header_json(second));
        }
        Payload::Coinbase { data, alt_recipient, vrf_proof } => {
            m.insert("payload_buffer".into(), hex(data).into());
            match vrf_proof {
                // Nakamoto coinbase: the recipient key is always there, `null` when absent.
                Some(proof) => {
                    m.insert("recipient".into(), alt_recipient.as_ref().map_or(Json::Null, principal_json));
                    m.insert("vrf_proof".into(), hex(proof).into());
                }
                None => {
                    if let Some(r) = alt_recipient {
                        m.insert("recipient".into(), principal_json(r));
                    }
                }
            }
        }
        Payload::TenureChange(tc) => {
            m.insert("tenure_consensus_hash".into(), hex(&tc.tenure_consensus_hash).into());
            m.insert("prev_tenure_consensus_hash".into(), hex(&tc.prev_tenure_consensus_hash).into());
            m.insert("burn_view_consensus_hash".into(), hex(&tc.burn_view_consensus_hash).into());
            m.insert("previous_tenure_end".into(), hex(&tc.previous_tenure_end).into());
            m.insert("previous_tenure_blocks".into(), tc.previous_tenure_blocks.into());
            m.insert("cause".into(), (tc.cause as u8).into());
            m.insert("pubkey_hash".into(), hex(&tc.pubkey_hash).into());
        }
    }
    Json::Object(m)
}
