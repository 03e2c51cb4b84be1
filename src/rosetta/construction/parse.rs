//! Stacks transaction → [`Intent`] (and its signer): `/construction/parse`. Only the shapes
//! `build` makes are read back; anything else is refused rather than half-described.

use stacks_codec::address::StacksAddress;
use stacks_codec::clarity::Value;
use stacks_codec::tx::{
    Authorization, HashMode, Payload, SpendingCondition, Transaction, TransactionVersion,
};

use super::error::{ConstructionError as E, Result};
use super::intent::*;
use super::signers::{is_signed, signer_accounts};
use crate::ledger::Network;

/// A decoded, complete transaction of `network` (what a node would take).
pub fn decode(hex_text: &str, network: Network) -> Result<Transaction> {
    decode_with(hex_text, network, Transaction::deserialize)
}

/// A decoded transaction of `network` that may still wait for multisig signatures (what the
/// signing rounds pass around).
pub fn decode_partially_signed(hex_text: &str, network: Network) -> Result<Transaction> {
    decode_with(hex_text, network, Transaction::deserialize_partially_signed)
}

fn decode_with(
    hex_text: &str,
    network: Network,
    deserialize: fn(&[u8]) -> std::result::Result<Transaction, stacks_codec::CodecError>,
) -> Result<Transaction> {
    let bytes =
        stacks_codec::decode_hex(hex_text.trim()).map_err(|e| E::InvalidTransaction(e.to_string()))?;
    let tx = deserialize(&bytes).map_err(|e| E::InvalidTransaction(e.to_string()))?;
    let version_ok = (tx.version == TransactionVersion::Mainnet) == network.is_mainnet();
    if !version_ok || tx.chain_id != network.chain_id() {
        return Err(E::InvalidTransaction(format!("the transaction is not for {network}")));
    }
    Ok(tx)
}

/// What `/construction/parse` tells about a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    pub intent: Intent,
    /// The accounts that signed, verified (only for a signed transaction): the origin or each
    /// multisig member that signed, then the sponsor.
    pub signers: Option<Vec<StacksAddress>>,
    /// The origin's multisig shape.
    pub multisig: Option<Multisig>,
}

/// The intent of a transaction `build` could have made (any auth it builds: a P2PKH or multisig
/// origin, a P2PKH sponsor), plus its signers when it is signed. `signed` is what the caller
/// claims; it must match the transaction (a partially signed one is not signed).
pub fn parse(tx: &Transaction, signed: bool, network: Network) -> Result<Parsed> {
    let actual = is_signed(tx);
    if actual != signed {
        let word = |s: bool| if s { "signed" } else { "unsigned" };
        return Err(E::SignedMismatch { claimed: word(signed), actual: word(actual) });
    }
    let multisig = match tx.origin() {
        SpendingCondition::SingleSig(c) if c.hash_mode == HashMode::P2PKH => None,
        SpendingCondition::SingleSig(_) => {
            return Err(E::UnsupportedTransaction("a single-sig origin other than P2PKH".into()))
        }
        SpendingCondition::MultiSig(m) => {
            Some(Multisig { hash_mode: m.hash_mode, signatures_required: m.signatures_required })
        }
    };
    let sponsor = match &tx.auth {
        Authorization::Standard(_) => None,
        Authorization::Sponsored(origin, SpendingCondition::SingleSig(s))
            if s.hash_mode == HashMode::P2PKH =>
        {
            if origin.tx_fee() != 0 {
                return Err(E::UnsupportedTransaction("a sponsored origin paying a fee of its own".into()));
            }
            Some(Sponsor { address: tx.sponsor_address().expect("sponsored"), fee: s.tx_fee, nonce: s.nonce })
        }
        Authorization::Sponsored(..) => {
            return Err(E::UnsupportedTransaction("a sponsor other than single-sig P2PKH".into()))
        }
    };
    if !tx.post_conditions.is_empty() {
        return Err(E::UnsupportedTransaction("post-conditions have no operation form".into()));
    }
    let condition = tx.origin();
    let origin =
        Origin { sender: tx.origin_address(), fee: condition.tx_fee(), nonce: condition.nonce(), sponsor };
    let intent = intent_of(&tx.payload, origin, network)?;
    let signers = if signed { Some(signer_accounts(tx, network)?) } else { None };
    Ok(Parsed { intent, signers, multisig })
}

fn intent_of(payload: &Payload, origin: Origin, network: Network) -> Result<Intent> {
    let unsupported = |what: String| E::UnsupportedTransaction(what);
    match payload {
        Payload::TokenTransfer { recipient, amount, memo } => {
            let end = memo.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
            let memo = match &memo[..end] {
                [] => None,
                bytes => Some(
                    String::from_utf8(bytes.to_vec())
                        .map_err(|_| unsupported("a memo that is not UTF-8 text".into()))?,
                ),
            };
            let _ = network;
            Ok(Intent::TokenTransfer { origin, recipient: recipient.clone(), amount: *amount, memo })
        }
        Payload::ContractCall { contract, function_name, function_args } if is_boot_pox(contract) => {
            let contract = contract.clone();
            match (function_name.as_str(), function_args.as_slice()) {
                (
                    "stack-stx",
                    [Value::UInt(amount_ustx), pox, Value::UInt(start), Value::UInt(period), sig, Value::Buffer(key), Value::UInt(max), Value::UInt(auth)],
                ) => Ok(Intent::StackStx {
                    origin,
                    args: StackStx {
                        contract,
                        amount_ustx: *amount_ustx,
                        pox_addr: pox_addr(pox)?,
                        start_burn_height: *start,
                        lock_period: *period,
                        signer_sig: match sig {
                            Value::OptionalNone => None,
                            Value::OptionalSome(b) => match b.as_ref() {
                                Value::Buffer(b) => Some(b.clone()),
                                _ => return Err(unsupported("signer-sig is not a buffer".into())),
                            },
                            _ => return Err(unsupported("signer-sig is not optional".into())),
                        },
                        signer_key: key.clone(),
                        max_amount: *max,
                        auth_id: *auth,
                    },
                }),
                ("delegate-stx", [Value::UInt(amount_ustx), Value::Principal(delegate_to), until, pox]) => {
                    Ok(Intent::DelegateStx {
                        origin,
                        args: DelegateStx {
                            contract,
                            amount_ustx: *amount_ustx,
                            delegate_to: delegate_to.clone(),
                            until_burn_height: match until {
                                Value::OptionalNone => None,
                                Value::OptionalSome(v) => match v.as_ref() {
                                    Value::UInt(h) => Some(*h),
                                    _ => return Err(unsupported("until-burn-ht is not a uint".into())),
                                },
                                _ => return Err(unsupported("until-burn-ht is not optional".into())),
                            },
                            pox_addr: match pox {
                                Value::OptionalNone => None,
                                Value::OptionalSome(v) => Some(pox_addr(v)?),
                                _ => return Err(unsupported("pox-addr is not optional".into())),
                            },
                        },
                    })
                }
                ("revoke-delegate-stx", []) => Ok(Intent::RevokeDelegateStx { origin, contract }),
                (name, args) => Err(unsupported(format!("{contract}::{name} with {} arguments", args.len()))),
            }
        }
        Payload::ContractCall { contract, function_name, .. } => {
            Err(unsupported(format!("a call to {contract}::{function_name}")))
        }
        _ => Err(unsupported("only token transfers and PoX calls are constructed".into())),
    }
}

fn pox_addr(v: &Value) -> Result<PoxAddr> {
    let bad = || E::UnsupportedTransaction("pox-addr is not {version, hashbytes}".into());
    let Value::Tuple(entries) = v else { return Err(bad()) };
    let get = |k: &str| entries.iter().find(|(n, _)| n == k).map(|(_, v)| v);
    match (entries.len(), get("version"), get("hashbytes")) {
        (2, Some(Value::Buffer(version)), Some(Value::Buffer(hashbytes))) if version.len() == 1 => {
            Ok(PoxAddr { version: version[0], hashbytes: hashbytes.clone() })
        }
        _ => Err(bad()),
    }
}
