//! Intent → unsigned Stacks transaction, its signing payload, and `combine` (a signature made
//! elsewhere spliced in and verified). All through the codec; nothing here does I/O.

use stacks_codec::address::{signer_hash160, Principal, PublicKeyBytes, StacksAddress};
use stacks_codec::clarity::Value;
use stacks_codec::sign::{
    next_presign_sighash, rsv_to_vrs, single_sig_condition, splice_single_sig_signature, verify_origin, Role,
};
use stacks_codec::tx::{
    AnchorMode, Authorization, HashMode, KeyEncoding, Payload, PostConditionMode, SingleSigSpendingCondition,
    SpendingCondition, Transaction, TransactionVersion,
};

use super::error::{ConstructionError as E, Result};
use super::intent::{Intent, PoxAddr, MEMO_LEN};
use crate::ledger::Network;

/// What `/construction/payloads` hands out: the unsigned transaction and the one hash its
/// origin signs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsigned {
    pub tx: Transaction,
    pub signing_payload: [u8; 32],
}

/// The unsigned transaction for `intent`, signed later by `public_key`, which must be the
/// sender's: its hash (with its own encoding) is the P2PKH signer.
pub fn unsigned(intent: &Intent, public_key: &PublicKeyBytes, network: Network) -> Result<Unsigned> {
    let origin = intent.origin();
    let key_address = address_of(public_key, network)?;
    if key_address != origin.sender {
        return Err(E::PublicKeyNotSender {
            key_address: key_address.to_c32(),
            sender: origin.sender.to_c32(),
        });
    }
    let condition = single_sig_condition(HashMode::P2PKH, public_key, origin.nonce, origin.fee)
        .map_err(|e| E::InvalidPublicKey(e.to_string()))?;
    let tx = assemble(intent, condition, network)?;
    let signing_payload =
        next_presign_sighash(&tx, Role::Origin).map_err(|e| E::InvalidTransaction(e.to_string()))?;
    Ok(Unsigned { tx, signing_payload })
}

/// The serialized size of the signed transaction, without knowing the key: a compressed
/// P2PKH signer takes the same bytes whatever the key (what the fee is estimated from).
pub fn estimated_size(intent: &Intent, network: Network) -> Result<usize> {
    let origin = intent.origin();
    let condition = SpendingCondition::SingleSig(SingleSigSpendingCondition {
        hash_mode: HashMode::P2PKH,
        signer: origin.sender.hash160,
        nonce: origin.nonce,
        tx_fee: origin.fee,
        key_encoding: KeyEncoding::Compressed,
        signature: [0; 65],
    });
    Ok(assemble(intent, condition, network)?.serialize().len())
}

fn assemble(intent: &Intent, condition: SpendingCondition, network: Network) -> Result<Transaction> {
    Ok(Transaction {
        version: if network.is_mainnet() { TransactionVersion::Mainnet } else { TransactionVersion::Testnet },
        chain_id: network.chain_id(),
        auth: Authorization::Standard(condition),
        // What stacks.js builds (and the reference vectors hold): any anchor mode, deny mode
        // with no post-conditions (a transfer or a stacking call moves no other asset).
        anchor_mode: AnchorMode::Any,
        post_condition_mode: PostConditionMode::Deny,
        post_conditions: Vec::new(),
        payload: payload(intent)?,
    })
}

/// The P2PKH address of a key on `network` (what `/construction/derive` returns).
pub fn address_of(public_key: &PublicKeyBytes, network: Network) -> Result<StacksAddress> {
    let hash = signer_hash160(HashMode::P2PKH, 1, std::slice::from_ref(public_key))
        .map_err(|e| E::InvalidPublicKey(e.to_string()))?;
    Ok(StacksAddress::new(stacks_codec::address::version::single_sig(network.is_mainnet()), hash))
}

/// The Stacks payload of an intent.
pub fn payload(intent: &Intent) -> Result<Payload> {
    Ok(match intent {
        Intent::TokenTransfer { recipient, amount, memo, .. } => Payload::TokenTransfer {
            recipient: recipient.clone(),
            amount: *amount,
            memo: memo_bytes(memo.as_deref())?,
        },
        Intent::StackStx { args, .. } => Payload::ContractCall {
            contract: args.contract.clone(),
            function_name: "stack-stx".to_owned(),
            function_args: vec![
                Value::UInt(args.amount_ustx),
                pox_addr_value(&args.pox_addr),
                Value::UInt(args.start_burn_height),
                Value::UInt(args.lock_period),
                match &args.signer_sig {
                    Some(sig) => Value::OptionalSome(Box::new(Value::Buffer(sig.clone()))),
                    None => Value::OptionalNone,
                },
                Value::Buffer(args.signer_key.clone()),
                Value::UInt(args.max_amount),
                Value::UInt(args.auth_id),
            ],
        },
        Intent::DelegateStx { args, .. } => Payload::ContractCall {
            contract: args.contract.clone(),
            function_name: "delegate-stx".to_owned(),
            function_args: vec![
                Value::UInt(args.amount_ustx),
                Value::Principal(args.delegate_to.clone()),
                optional(args.until_burn_height.map(Value::UInt)),
                optional(args.pox_addr.as_ref().map(pox_addr_value)),
            ],
        },
        Intent::RevokeDelegateStx { contract, .. } => Payload::ContractCall {
            contract: contract.clone(),
            function_name: "revoke-delegate-stx".to_owned(),
            function_args: Vec::new(),
        },
    })
}

fn optional(v: Option<Value>) -> Value {
    match v {
        Some(v) => Value::OptionalSome(Box::new(v)),
        None => Value::OptionalNone,
    }
}

/// The tuple with its keys in canonical (sorted) order.
pub fn pox_addr_value(addr: &PoxAddr) -> Value {
    Value::Tuple(vec![
        ("hashbytes".to_owned(), Value::Buffer(addr.hashbytes.clone())),
        ("version".to_owned(), Value::Buffer(vec![addr.version])),
    ])
}

fn memo_bytes(memo: Option<&str>) -> Result<[u8; MEMO_LEN]> {
    let text = memo.unwrap_or("").as_bytes();
    if text.len() > MEMO_LEN {
        return Err(E::InvalidOperation(format!("memo is {} bytes, at most {MEMO_LEN} fit", text.len())));
    }
    if text.last() == Some(&0) {
        return Err(E::InvalidOperation("memo ends with a NUL byte".into()));
    }
    let mut out = [0u8; MEMO_LEN];
    out[..text.len()].copy_from_slice(text);
    Ok(out)
}

/// One signature from the caller, already decoded from the Rosetta request.
pub struct GivenSignature<'a> {
    /// The payload the caller says it signed.
    pub signing_payload: &'a [u8],
    pub public_key: PublicKeyBytes,
    /// Rosetta `ecdsa_recovery` order, r‖s‖v.
    pub signature_rsv: [u8; 65],
}

/// `/construction/combine`: puts the one origin signature into an unsigned single-sig
/// transaction and verifies it recovers the condition's signer.
pub fn combine(mut tx: Transaction, signature: &GivenSignature<'_>) -> Result<Transaction> {
    let condition = match &tx.auth {
        Authorization::Standard(SpendingCondition::SingleSig(c)) => c.clone(),
        Authorization::Standard(SpendingCondition::MultiSig(_)) => {
            return Err(E::UnsupportedTransaction("multisig origins are not supported".into()))
        }
        Authorization::Sponsored(..) => {
            return Err(E::UnsupportedTransaction("sponsored transactions are not supported".into()))
        }
    };
    if condition.signature != [0; 65] {
        return Err(E::InvalidTransaction("the transaction is already signed".into()));
    }
    let expected =
        next_presign_sighash(&tx, Role::Origin).map_err(|e| E::InvalidTransaction(e.to_string()))?;
    if signature.signing_payload != expected {
        return Err(E::SignatureNotVerified(format!(
            "the signing payload is not this transaction's ({})",
            hex::encode(expected)
        )));
    }
    let key_hash = signer_hash160(condition.hash_mode, 1, std::slice::from_ref(&signature.public_key))
        .map_err(|e| E::InvalidPublicKey(e.to_string()))?;
    if key_hash != condition.signer {
        return Err(E::SignatureNotVerified("the public key is not the transaction's signer".into()));
    }
    let vrs = rsv_to_vrs(&signature.signature_rsv);
    if vrs[0] > 3 {
        return Err(E::InvalidSignature(format!("recovery id {} is not 0..=3", vrs[0])));
    }
    splice_single_sig_signature(&mut tx, Role::Origin, vrs, signature.public_key.key_encoding())
        .map_err(|e| E::SignatureNotVerified(e.to_string()))?;
    verify_origin(&tx).map_err(|e| E::SignatureNotVerified(e.to_string()))?;
    Ok(tx)
}

/// Whether every signature slot of the transaction is filled (an unsigned single-sig
/// condition holds 65 zero bytes; an unsigned multisig one has no signature field).
pub fn is_signed(tx: &Transaction) -> bool {
    let filled = |c: &SpendingCondition| match c {
        SpendingCondition::SingleSig(s) => s.signature != [0; 65],
        SpendingCondition::MultiSig(m) => {
            m.fields.iter().any(|f| matches!(f, stacks_codec::tx::AuthField::Signature { .. }))
        }
    };
    filled(tx.origin()) && tx.sponsor().map_or(true, filled)
}

/// A recipient principal as the intent keeps it, checked against the network.
pub fn check_network(principal: &Principal, network: Network) -> bool {
    let address = principal.address();
    if network.is_mainnet() {
        address.is_mainnet()
    } else {
        address.is_testnet()
    }
}
