//! Intent + signers' keys → unsigned Stacks transaction and its first signing payloads (the
//! rounds after that, and `combine`, are in `signers`). All through the codec; no I/O.

use stacks_codec::address::{signer_hash160, Principal, PublicKeyBytes, StacksAddress};
use stacks_codec::clarity::Value;
use stacks_codec::sign::{multisig_condition, single_sig_condition};
use stacks_codec::tx::{
    AnchorMode, AuthField, Authorization, HashMode, KeyEncoding, MultiSigSpendingCondition, Payload,
    PostConditionMode, SingleSigSpendingCondition, SpendingCondition, Transaction, TransactionVersion,
};

use super::error::{ConstructionError as E, Result};
use super::intent::{Intent, Multisig, PoxAddr, MEMO_LEN};
use super::signers::next_signatures;
pub use super::signers::{combine, is_signed, GivenSignature, Wanted};
use crate::ledger::Network;

/// The keys that sign: the origin's (one, or a multisig account's members in member order)
/// and the sponsor's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signers {
    pub origin: OriginKeys,
    pub sponsor: Option<PublicKeyBytes>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OriginKeys {
    Single(PublicKeyBytes),
    Multi { shape: Multisig, keys: Vec<PublicKeyBytes> },
}

impl Signers {
    pub fn single(key: PublicKeyBytes) -> Signers {
        Signers { origin: OriginKeys::Single(key), sponsor: None }
    }
}

/// What `/construction/payloads` hands out: the unsigned transaction and the hashes its first
/// round signs (one for a single-sig origin, one per member for multisig).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsigned {
    pub tx: Transaction,
    pub payloads: Vec<Wanted>,
}

/// The unsigned transaction for `intent`, signed later by `signers`, whose keys must make the
/// sender's address (and the sponsor's). A multisig origin holds every member's key as a
/// public-key field, which its signature replaces.
pub fn unsigned(intent: &Intent, signers: &Signers, network: Network) -> Result<Unsigned> {
    let origin = intent.origin();
    let not_sender = |key_address: StacksAddress, sender: StacksAddress| E::PublicKeyNotSender {
        key_address: key_address.to_c32(),
        sender: sender.to_c32(),
    };
    let condition = match &signers.origin {
        OriginKeys::Single(key) => {
            let key_address = address_of(key, network)?;
            if key_address != origin.sender {
                return Err(not_sender(key_address, origin.sender));
            }
            single_sig_condition(HashMode::P2PKH, key, origin.nonce, origin.fee)
                .map_err(|e| E::InvalidPublicKey(e.to_string()))?
        }
        OriginKeys::Multi { shape, keys } => {
            let key_address = multisig_address(shape, keys, network)?;
            if key_address != origin.sender {
                return Err(not_sender(key_address, origin.sender));
            }
            let mut condition = multisig_condition(
                shape.hash_mode,
                shape.signatures_required,
                keys,
                origin.nonce,
                origin.fee,
            )
            .map_err(|e| E::InvalidPublicKey(e.to_string()))?;
            if let SpendingCondition::MultiSig(m) = &mut condition {
                m.fields = keys
                    .iter()
                    .map(|k| AuthField::PublicKey { key_encoding: k.key_encoding(), key: k.to_compressed() })
                    .collect();
            }
            condition
        }
    };
    let sponsor = match (&origin.sponsor, &signers.sponsor) {
        (Some(s), Some(key)) => {
            let key_address = address_of(key, network)?;
            if key_address != s.address {
                return Err(not_sender(key_address, s.address));
            }
            Some(
                single_sig_condition(HashMode::P2PKH, key, s.nonce, s.fee)
                    .map_err(|e| E::InvalidPublicKey(e.to_string()))?,
            )
        }
        (Some(_), None) => {
            return Err(E::PublicKeyCount { expected: signers.count() + 1, got: signers.count() })
        }
        (None, Some(_)) => {
            return Err(E::PublicKeyCount { expected: signers.count() - 1, got: signers.count() })
        }
        (None, None) => None,
    };
    let tx = assemble(intent, condition, sponsor, network)?;
    let payloads = next_signatures(&tx, network)?;
    Ok(Unsigned { tx, payloads })
}

impl Signers {
    fn count(&self) -> usize {
        let origin = match &self.origin {
            OriginKeys::Single(_) => 1,
            OriginKeys::Multi { keys, .. } => keys.len(),
        };
        origin + usize::from(self.sponsor.is_some())
    }
}

/// The address of a multisig account on `network` (what `/construction/derive` returns for
/// `public_keys` + `signatures_required`).
pub fn multisig_address(
    shape: &Multisig,
    keys: &[PublicKeyBytes],
    network: Network,
) -> Result<StacksAddress> {
    let hash = signer_hash160(shape.hash_mode, shape.signatures_required, keys)
        .map_err(|e| E::InvalidPublicKey(e.to_string()))?;
    Ok(StacksAddress::new(shape.hash_mode.address_version(tx_version(network)), hash))
}

fn tx_version(network: Network) -> TransactionVersion {
    if network.is_mainnet() {
        TransactionVersion::Mainnet
    } else {
        TransactionVersion::Testnet
    }
}

/// The serialized size of the signed transaction, without knowing the keys: a compressed
/// P2PKH signer takes the same bytes whatever the key, a multisig origin one signature field
/// per required signature and one key field per other member (`members` of them in all; the
/// required count when unknown). What the fee is estimated from.
pub fn estimated_size(
    intent: &Intent,
    multisig: Option<(Multisig, usize)>,
    network: Network,
) -> Result<usize> {
    let origin = intent.origin();
    let single = |signer, nonce, tx_fee| {
        SpendingCondition::SingleSig(SingleSigSpendingCondition {
            hash_mode: HashMode::P2PKH,
            signer,
            nonce,
            tx_fee,
            key_encoding: KeyEncoding::Compressed,
            signature: [0; 65],
        })
    };
    let condition = match multisig {
        None => single(origin.sender.hash160, origin.nonce, origin.fee),
        Some((shape, members)) => {
            let required = usize::from(shape.signatures_required);
            let sig = AuthField::Signature { key_encoding: KeyEncoding::Compressed, signature: [0; 65] };
            let key = AuthField::PublicKey { key_encoding: KeyEncoding::Compressed, key: [0; 33] };
            let mut fields = vec![sig; required];
            fields.extend(std::iter::repeat_n(key, members.max(required) - required));
            SpendingCondition::MultiSig(MultiSigSpendingCondition {
                hash_mode: shape.hash_mode,
                signer: origin.sender.hash160,
                nonce: origin.nonce,
                tx_fee: origin.fee,
                fields,
                signatures_required: shape.signatures_required,
            })
        }
    };
    let sponsor = origin.sponsor.as_ref().map(|s| single(s.address.hash160, s.nonce, s.fee));
    Ok(assemble(intent, condition, sponsor, network)?.serialize().len())
}

fn assemble(
    intent: &Intent,
    condition: SpendingCondition,
    sponsor: Option<SpendingCondition>,
    network: Network,
) -> Result<Transaction> {
    Ok(Transaction {
        version: tx_version(network),
        chain_id: network.chain_id(),
        auth: match sponsor {
            Some(sponsor) => Authorization::Sponsored(condition, sponsor),
            None => Authorization::Standard(condition),
        },
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

/// A recipient principal as the intent keeps it, checked against the network.
pub fn check_network(principal: &Principal, network: Network) -> bool {
    let address = principal.address();
    if network.is_mainnet() {
        address.is_mainnet()
    } else {
        address.is_testnet()
    }
}
