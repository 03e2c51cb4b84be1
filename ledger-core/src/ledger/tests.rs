//! Operations derived from hand-made payloads.

use std::collections::HashMap;

use super::ops::tx_operations;
use super::rows::{EventRow, OpRow, TxRow};
use super::state::{materialize, BlockContext};
use super::*;
use crate::events::payload::{BurnchainOp, EventBody, StxLockEvent, TransferStxOp, TxEvent};

const A: &str = "SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EJ7";
const B: &str = "SP3FBR2AGK5H9QBDH3EEN6DF8EK8JY7RX8QJ5SVTE";
const S: &str = "SP1P72Z3704VMT3DMHPP2CB8TGQWGDBHD3RPR9GZS";

fn tx(tx_type: &str, status: &str, fee: i64) -> TxRow {
    TxRow {
        tx_id: "0x01".into(),
        tx_type: tx_type.into(),
        status: status.into(),
        fee,
        sender_address: A.into(),
        ..TxRow::default()
    }
}

fn ev(kind: &str, sender: Option<&str>, recipient: Option<&str>, amount: i64) -> EventRow {
    EventRow {
        tx_id: "0x01".into(),
        kind: kind.into(),
        sender: sender.map(Into::into),
        recipient: recipient.map(Into::into),
        amount: Some(amount.to_string()),
        ..EventRow::default()
    }
}

/// Σ of applied operations per account.
fn sums(ops: &[OpRow]) -> HashMap<String, (i64, i64)> {
    let mut m: HashMap<String, (i64, i64)> = HashMap::new();
    for o in ops.iter().filter(|o| o.applies()) {
        let e = m.entry(o.account.clone()).or_default();
        e.0 += o.amount.unwrap_or(0);
        e.1 += o.locked_delta;
    }
    m
}

fn ctx(burn: i64) -> BlockContext {
    BlockContext { block_height: 10, burn_block_height: burn, pox_unlock_heights: [None; 4] }
}

#[test]
fn transfer_with_fee() {
    let mut t = tx("token_transfer", "success", 180);
    t.token_transfer_recipient = Some(B.into());
    t.token_transfer_amount = Some(500);
    let (ops, locks) = tx_operations(&t, None, &[ev("stx_transfer", Some(A), Some(B), 500)]);
    assert!(locks.is_empty());
    let kinds: Vec<_> = ops.iter().map(|o| (o.op_type.as_str(), o.op_index, o.amount)).collect();
    assert_eq!(
        kinds,
        [("fee", 0, Some(-180)), ("token_transfer", 1, Some(-500)), ("token_transfer", 2, Some(500))]
    );
    assert_eq!(ops[2].related_op_index, Some(1));
    let s = sums(&ops);
    assert_eq!((s[A], s[B]), ((-680, 0), (500, 0)));
}

#[test]
fn sponsor_pays_the_fee() {
    let mut t = tx("contract_call", "success", 300);
    t.sponsored = true;
    t.sponsor_address = Some(S.into());
    let (ops, _) = tx_operations(&t, None, &[]);
    assert_eq!((ops[0].op_type.as_str(), ops[0].account.as_str(), ops[0].amount), ("fee", S, Some(-300)));
    // The call itself is a zero-amount marker for the origin.
    assert_eq!((ops[1].op_type.as_str(), ops[1].account.as_str(), ops[1].amount), ("contract_call", A, None));
    assert_eq!(sums(&ops).get(A), None);
}

#[test]
fn failed_transaction_still_pays_its_fee() {
    let mut t = tx("token_transfer", "abort_by_post_condition", 200);
    t.token_transfer_recipient = Some(B.into());
    t.token_transfer_amount = Some(1_000);
    let (ops, _) = tx_operations(&t, None, &[]);
    assert_eq!(ops.len(), 3);
    assert_eq!(ops[0].status, "success");
    assert!(ops[1..].iter().all(|o| o.status == "abort_by_post_condition" && !o.applies()));
    assert_eq!(sums(&ops)[A], (-200, 0));
    assert!(!sums(&ops).contains_key(B));
}

#[test]
fn mint_and_burn() {
    let t = tx("contract_call", "success", 0);
    let (ops, _) =
        tx_operations(&t, None, &[ev("stx_mint", None, Some(B), 70), ev("stx_burn", Some(B), None, 20)]);
    let types: Vec<_> = ops.iter().map(|o| o.op_type.as_str()).collect();
    assert_eq!(types, ["fee", "contract_call", "mint", "burn"]);
    assert_eq!(sums(&ops)[B], (50, 0));
}

#[test]
fn locks_move_the_delta_and_unlock_at_the_unlock_height() {
    let t = tx("contract_call", "success", 0);
    let mut lock = ev("stx_lock", Some(A), None, 600);
    lock.unlock_height = Some(140);
    lock.contract_identifier = Some("SP000000000000000000002Q6VF78.pox-4".into());
    let (ops, locks) = tx_operations(&t, None, &[lock.clone()]);
    assert_eq!((locks.len(), locks[0].op_index), (1, 2));
    let prior = HashMap::from([(A.to_owned(), AccountState { liquid: 1_000, ..AccountState::default() })]);
    let m = materialize(&ctx(100), &ops, &locks, &prior, 0).unwrap();
    assert_eq!(
        (m.ops[0].op_type.as_str(), m.ops[0].amount, m.ops[0].locked_delta),
        ("stx_lock", Some(-600), 600)
    );
    let s = &m.balances[0].state;
    assert_eq!((s.liquid, s.locked, s.unlock_burn_height, s.pox_version), (400, 600, 140, 4));

    // stack-increase re-sends the total: only the increase moves.
    let mut inc = lock.clone();
    inc.amount = Some("900".into());
    let (ops2, locks2) = tx_operations(&t, None, &[inc]);
    let prior2 = HashMap::from([(A.to_owned(), s.clone())]);
    let m2 = materialize(&ctx(120), &ops2, &locks2, &prior2, 0).unwrap();
    assert_eq!((m2.ops[0].amount, m2.ops[0].locked_delta), (Some(-300), 300));
    let s2 = &m2.balances[0].state;
    assert_eq!((s2.liquid, s2.locked), (100, 900));

    // The first block at or past the unlock height releases it, before its transactions.
    let prior3 = HashMap::from([(A.to_owned(), s2.clone())]);
    let m3 = materialize(&ctx(139), &[], &[], &prior3, 0).unwrap();
    assert!(m3.ops.is_empty());
    let m3 = materialize(&ctx(140), &[], &[], &prior3, 2).unwrap();
    let u = &m3.ops[0];
    assert_eq!(
        (u.op_type.as_str(), u.tx_index, u.op_index, u.amount, u.locked_delta),
        ("stx_unlock", -1, 2, Some(900), -900)
    );
    assert_eq!((m3.balances[0].state.liquid, m3.balances[0].state.locked), (1_000, 0));

    // A PoX version's forced unlock height applies when it comes first.
    let mut c = ctx(130);
    c.pox_unlock_heights[3] = Some(125);
    assert_eq!(materialize(&c, &[], &[], &prior3, 0).unwrap().ops.len(), 1);
}

#[test]
fn miner_rewards_are_block_level_operations() {
    let json = r#"{"block_hash":"0xaa","block_height":5,"index_block_hash":"0xbb","parent_index_block_hash":"0xcc",
        "parent_block_hash":"0xdd","parent_microblock":"0x00","parent_microblock_sequence":0,"burn_block_time":1,
        "burn_block_hash":"0xee","burn_block_height":7,"miner_txid":"0x11","parent_burn_block_hash":"0x22",
        "parent_burn_block_height":6,"parent_burn_block_timestamp":0,"transactions":[],"events":[],
        "matured_miner_rewards":[{"from_index_consensus_hash":"0x33","from_stacks_block_hash":"0x44",
        "recipient":"SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EJ7","miner_address":null,"coinbase_amount":"1000",
        "tx_fees_anchored":"10","tx_fees_streamed_confirmed":"20","tx_fees_streamed_produced":"30"}]}"#;
    let b: crate::events::payload::NewBlock = serde_json::from_str(json).unwrap();
    let d = derive_block(&b, None, Network::Mainnet, &crate::test_render::Marked).unwrap();
    assert_eq!(d.miner_rewards[0].miner_address, A);
    let o = &d.ops[0];
    assert_eq!(
        (o.op_type.as_str(), o.tx_index, o.account.as_str(), o.amount),
        ("miner_reward", -1, A, Some(1_060))
    );
    assert_eq!(d.next_block_op_index(), 1);
    assert_eq!((d.block.parent_microblock_hash.as_str(), d.block.parent_microblock_sequence), ("", -1));
}

#[test]
fn burnchain_transfer_is_synthesized_like_the_incumbent() {
    let addr = |a: &str| {
        let s: stacks_codec::address::StacksAddress = a.parse().unwrap();
        crate::events::payload::OpAddress {
            address: a.into(),
            address_hash_bytes: stacks_codec::to_hex_prefixed(&s.hash160),
            address_version: s.version,
        }
    };
    let op = BurnchainOp::TransferStx(TransferStxOp {
        sender: addr(A),
        recipient: addr(B),
        transfered_ustx: 42,
        memo: "0x6869".into(),
        burn_block_height: 700,
        burn_header_hash: "0x00".into(),
        burn_txid: "0x01".into(),
        vtxindex: 3,
    });
    let tx = synth::synthesize("0x99", Some(&op), &[], 700, Network::Mainnet).unwrap();
    assert_eq!((tx.nonce(), tx.fee(), tx.chain_id), (0, 0, 1));
    assert_eq!(tx.origin_address().to_string(), A);
    let stacks_codec::tx::Payload::TokenTransfer { recipient, amount, memo } = &tx.payload else { panic!() };
    assert_eq!((recipient.to_string(), *amount, &memo[..3]), (B.to_owned(), 42, &b"hi\0"[..]));
    // It round-trips through the codec, so readers can decode it like any transaction.
    assert_eq!(stacks_codec::tx::Transaction::deserialize(&tx.serialize()).unwrap(), tx);

    // Without a typed operation, a lock event rebuilds a stack-stx call.
    let lock = TxEvent {
        txid: "0x99".into(),
        event_index: 0,
        committed: true,
        body: EventBody::StxLock(StxLockEvent {
            locked_amount: 5_000,
            unlock_height: 900,
            locked_address: A.into(),
            contract_identifier: None,
        }),
    };
    let tx = synth::synthesize("0x99", None, &[&lock], 700, Network::Mainnet).unwrap();
    let stacks_codec::tx::Payload::ContractCall { contract, function_name, .. } = &tx.payload else {
        panic!()
    };
    assert_eq!(
        (contract.to_string(), function_name.as_str()),
        ("SP000000000000000000002Q6VF78.pox-4".into(), "stack-stx")
    );
    assert!(synth::synthesize("0x99", None, &[], 700, Network::Mainnet).is_err());
}

#[test]
fn pox_versions_and_networks() {
    assert_eq!(pox_version("SP000000000000000000002Q6VF78.pox"), Some(1));
    assert_eq!(pox_version("ST000000000000000000002AMW42H.pox-4"), Some(4));
    assert_eq!(pox_version("SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EJ7.pox-4"), None);
    assert_eq!((Network::Mainnet.chain_id(), Network::Testnet.chain_id()), (1, 0x8000_0000));
    assert_eq!("testnet".parse::<Network>(), Ok(Network::Testnet));
    assert_eq!(normalize_hex("0XAB"), "0xab");
}
