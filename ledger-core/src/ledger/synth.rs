//! Burnchain operations (Stacks operations sent as Bitcoin transactions) arrive as receipts with
//! `raw_tx == "0x00"`. Like the incumbent, we synthesize the Stacks transaction they stand for —
//! a token transfer, or a call to the PoX / signers-voting contract — with nonce 0, fee 0 and
//! an empty signature, so that readers can treat every transaction alike. The typed
//! `burnchain_op` is used when the node sends it; older nodes only send the events, which are
//! the fallback (an `stx_transfer` event → transfer, an `stx_lock` event → `stack-stx`).

use stacks_codec::address::{ContractId, Principal, StacksAddress};
use stacks_codec::clarity::Value;
use stacks_codec::decode_hex;
use stacks_codec::tx::{
    AnchorMode, Authorization, HashMode, KeyEncoding, Payload, PostConditionMode, SingleSigSpendingCondition,
    SpendingCondition, Transaction, TransactionVersion,
};

use super::btc::parse_pox_address;
use crate::events::payload::{BurnchainOp, EventBody, OpAddress, TxEvent};

use super::{LedgerError, Network};

/// Synthesizes the transaction for a burnchain-op receipt from its typed operation or, failing
/// that, from its events.
pub fn synthesize(
    txid: &str,
    op: Option<&BurnchainOp>,
    events: &[&TxEvent],
    burn_block_height: u64,
    network: Network,
) -> Result<Transaction, LedgerError> {
    let err = |reason: String| LedgerError::BurnchainOp { txid: txid.to_owned(), reason };
    let lock_contract = events.iter().find_map(|e| match &e.body {
        EventBody::StxLock(l) => l.contract_identifier.clone(),
        _ => None,
    });
    let (sender, payload) = match op {
        Some(BurnchainOp::TransferStx(t)) => {
            let mut memo = [0u8; 34];
            let bytes = decode_hex(&t.memo).map_err(|e| err(format!("memo: {e}")))?;
            let n = bytes.len().min(34);
            memo[..n].copy_from_slice(&bytes[..n]);
            let amount = u64::try_from(t.transfered_ustx).map_err(|_| err("amount exceeds u64".into()))?;
            let recipient = Principal::Standard(op_address(&t.recipient).map_err(err)?);
            (op_address(&t.sender).map_err(err)?, Payload::TokenTransfer { recipient, amount, memo })
        }
        Some(BurnchainOp::StackStx(s)) => {
            let contract = pox_contract(lock_contract.as_deref(), network).map_err(err)?;
            let mut args = vec![
                Value::UInt(s.stacked_ustx),
                pox_addr_value(&s.reward_addr)
                    .ok_or_else(|| err(format!("reward address {}", s.reward_addr)))?,
                Value::UInt(u128::from(s.burn_block_height)),
                Value::UInt(u128::from(s.num_cycles)),
            ];
            if let Some(key) = &s.signer_key {
                let key = decode_hex(key).map_err(|e| err(format!("signer key: {e}")))?;
                args.push(Value::OptionalNone);
                args.push(Value::Buffer(key));
                args.push(Value::UInt(s.max_amount.unwrap_or(0)));
                args.push(Value::UInt(u128::from(s.auth_id.unwrap_or(0))));
            }
            (op_address(&s.sender).map_err(err)?, call(contract, "stack-stx", args))
        }
        Some(BurnchainOp::DelegateStx(d)) => {
            let contract = pox_contract(lock_contract.as_deref(), network).map_err(err)?;
            let delegate_to = Principal::Standard(op_address(&d.delegate_to).map_err(err)?);
            let until = match d.until_burn_height {
                Some(h) => Value::OptionalSome(Box::new(Value::UInt(u128::from(h)))),
                None => Value::OptionalNone,
            };
            let pox_addr = match &d.reward_addr {
                Some((_, addr)) => Value::OptionalSome(Box::new(
                    pox_addr_value(addr).ok_or_else(|| err(format!("reward address {addr}")))?,
                )),
                None => Value::OptionalNone,
            };
            let args = vec![Value::UInt(d.delegated_ustx), Value::Principal(delegate_to), until, pox_addr];
            (op_address(&d.sender).map_err(err)?, call(contract, "delegate-stx", args))
        }
        Some(BurnchainOp::VoteForAggregateKey(v)) => {
            let contract = boot_contract("signers-voting", network).map_err(err)?;
            let key = decode_hex(&v.aggregate_key).map_err(|e| err(format!("aggregate key: {e}")))?;
            let args = vec![
                Value::UInt(u128::from(v.signer_index)),
                Value::Buffer(key),
                Value::UInt(u128::from(v.round)),
                Value::UInt(u128::from(v.reward_cycle)),
            ];
            (op_address(&v.sender).map_err(err)?, call(contract, "vote-for-aggregate-public-key", args))
        }
        _ => from_events(events, burn_block_height, network).map_err(err)?,
    };
    Ok(unsigned(sender, payload, network))
}

/// The pre-`burnchain_op` path: rebuild from the operation's own events.
fn from_events(
    events: &[&TxEvent],
    burn_block_height: u64,
    network: Network,
) -> Result<(StacksAddress, Payload), String> {
    for e in events {
        match &e.body {
            EventBody::StxTransfer(t) => {
                let mut memo = [0u8; 34];
                if let Some(m) = &t.memo {
                    let bytes = decode_hex(m).map_err(|e| format!("memo: {e}"))?;
                    let n = bytes.len().min(34);
                    memo[..n].copy_from_slice(&bytes[..n]);
                }
                let amount = u64::try_from(t.amount).map_err(|_| "amount exceeds u64".to_owned())?;
                let recipient: Principal = t.recipient.parse().map_err(|e| format!("recipient: {e}"))?;
                let sender = standard(&t.sender)?;
                return Ok((sender, Payload::TokenTransfer { recipient, amount, memo }));
            }
            EventBody::StxLock(l) => {
                let contract = pox_contract(l.contract_identifier.as_deref(), network)?;
                let args = vec![
                    Value::UInt(l.locked_amount),
                    Value::OptionalNone,
                    Value::UInt(u128::from(burn_block_height)),
                    Value::UInt(1),
                ];
                return Ok((standard(&l.locked_address)?, call(contract, "stack-stx", args)));
            }
            _ => {}
        }
    }
    Err("no burnchain_op and no stx_transfer or stx_lock event to rebuild it from".into())
}

fn standard(addr: &str) -> Result<StacksAddress, String> {
    addr.parse().map_err(|e| format!("address {addr}: {e}"))
}

fn op_address(a: &OpAddress) -> Result<StacksAddress, String> {
    let bytes = decode_hex(&a.address_hash_bytes).map_err(|e| format!("address hash: {e}"))?;
    let hash: [u8; 20] =
        bytes.as_slice().try_into().map_err(|_| format!("address hash of {} bytes", bytes.len()))?;
    StacksAddress::try_new(a.address_version, hash).map_err(|e| e.to_string())
}

fn boot_contract(name: &str, network: Network) -> Result<ContractId, String> {
    let boot =
        if network.is_mainnet() { "SP000000000000000000002Q6VF78" } else { "ST000000000000000000002AMW42H" };
    format!("{boot}.{name}").parse().map_err(|e: stacks_codec::CodecError| e.to_string())
}

/// The PoX contract named by the lock event, else the current one (pox-4).
fn pox_contract(named: Option<&str>, network: Network) -> Result<ContractId, String> {
    match named {
        Some(id) => id.parse().map_err(|e: stacks_codec::CodecError| format!("contract {id}: {e}")),
        None => boot_contract("pox-4", network),
    }
}

fn call(contract: ContractId, function: &str, function_args: Vec<Value>) -> Payload {
    Payload::ContractCall { contract, function_name: function.to_owned(), function_args }
}

/// `{version: (buff 1), hashbytes: (buff N)}` for a Bitcoin address.
fn pox_addr_value(addr: &str) -> Option<Value> {
    let (version, hashbytes) = parse_pox_address(addr)?;
    Some(Value::Tuple(vec![
        ("hashbytes".to_owned(), Value::Buffer(hashbytes)),
        ("version".to_owned(), Value::Buffer(vec![version])),
    ]))
}

fn unsigned(sender: StacksAddress, payload: Payload, network: Network) -> Transaction {
    let hash_mode = if sender.is_multi_sig() { HashMode::P2SH } else { HashMode::P2PKH };
    Transaction {
        version: if network.is_mainnet() { TransactionVersion::Mainnet } else { TransactionVersion::Testnet },
        chain_id: network.chain_id(),
        auth: Authorization::Standard(SpendingCondition::SingleSig(SingleSigSpendingCondition {
            hash_mode,
            signer: sender.hash160,
            nonce: 0,
            tx_fee: 0,
            key_encoding: KeyEncoding::Compressed,
            signature: [0; 65],
        })),
        anchor_mode: AnchorMode::Any,
        post_condition_mode: PostConditionMode::Allow,
        post_conditions: vec![],
        payload,
    }
}
