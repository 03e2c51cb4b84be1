//! Bounded property tests: decoders never panic, and whatever decodes re-encodes stably.
//!
//! Seeds are generated Clarity values (any shape, bounded depth) and the reference vectors'
//! transactions; each is decoded whole, then mutated (bytes flipped, cut, inserted, removed).

use proptest::prelude::*;
use stacks_codec::address::{ContractId, Principal, StacksAddress};
use stacks_codec::clarity::Value;
use stacks_codec::tx::Transaction;

fn arb_address() -> impl Strategy<Value = StacksAddress> {
    (0u8..32, any::<[u8; 20]>()).prop_map(|(v, h)| StacksAddress::new(v, h))
}

fn arb_name() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9-]{0,20}"
}

fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<i128>().prop_map(Value::Int),
        any::<u128>().prop_map(Value::UInt),
        any::<bool>().prop_map(Value::Bool),
        proptest::collection::vec(any::<u8>(), 0..40).prop_map(Value::Buffer),
        arb_address().prop_map(|a| Value::Principal(Principal::Standard(a))),
        (arb_address(), arb_name())
            .prop_map(|(address, name)| Value::Principal(Principal::Contract(ContractId { address, name }))),
        Just(Value::OptionalNone),
        "[ -~]{0,30}".prop_map(|s| Value::StringAscii(s.into_bytes())),
        "\\PC{0,10}".prop_map(|s| Value::StringUtf8(s.into_bytes())),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            inner.clone().prop_map(|v| Value::OptionalSome(Box::new(v))),
            inner.clone().prop_map(|v| Value::ResponseOk(Box::new(v))),
            inner.clone().prop_map(|v| Value::ResponseErr(Box::new(v))),
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::List),
            proptest::collection::btree_map(arb_name(), inner, 0..5)
                .prop_map(|m| Value::Tuple(m.into_iter().collect())),
        ]
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Truncate(usize),
    Insert(usize, u8),
    Remove(usize),
}

fn arb_mutations() -> impl Strategy<Value = Vec<Mutation>> {
    let m = prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(i, x)| Mutation::Flip(i, x)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Remove),
    ];
    proptest::collection::vec(m, 1..4)
}

fn mutate(mut bytes: Vec<u8>, muts: &[Mutation]) -> Vec<u8> {
    for m in muts {
        let len = bytes.len();
        match *m {
            Mutation::Flip(i, x) if len > 0 => bytes[i % len] ^= x,
            Mutation::Truncate(i) => bytes.truncate(i % (len + 1)),
            Mutation::Insert(i, b) => bytes.insert(i % (len + 1), b),
            Mutation::Remove(i) if len > 0 => {
                bytes.remove(i % len);
            }
            _ => {}
        }
    }
    bytes
}

/// Whatever decodes must re-encode to bytes that decode to the same value, and render.
fn check_clarity(bytes: &[u8]) {
    if let Ok(v) = Value::deserialize(bytes) {
        let again = Value::deserialize(&v.serialize()).expect("a decoded value re-encodes to valid bytes");
        assert_eq!(again, v);
        let _ = (v.repr(), v.type_name(), v.to_decoded_json());
    }
}

fn check_tx(bytes: &[u8]) {
    if let Ok(tx) = Transaction::deserialize(bytes) {
        let again =
            Transaction::deserialize(&tx.serialize()).expect("a decoded tx re-encodes to valid bytes");
        assert_eq!(again, tx);
        let _ = (tx.txid(), tx.to_decoded_json(), tx.api_tx_fields());
    }
}

fn vector_txs() -> Vec<Vec<u8>> {
    let Some(doc) = test_support::load_json("vectors/transactions.json") else { return Vec::new() };
    doc["transactions"]
        .as_array()
        .expect("transactions[]")
        .iter()
        .map(|t| stacks_codec::decode_hex(t["hex"].as_str().expect("hex")).expect("valid hex"))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn generated_values_round_trip(v in arb_value()) {
        let v = v.canonical();
        let bytes = v.serialize();
        prop_assert_eq!(Value::deserialize(&bytes).unwrap(), v);
    }

    #[test]
    fn mutated_values_never_panic(v in arb_value(), muts in arb_mutations()) {
        check_clarity(&mutate(v.serialize(), &muts));
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        check_clarity(&bytes);
        check_tx(&bytes);
    }
}

#[test]
fn mutated_vector_transactions_never_panic() {
    let seeds = vector_txs();
    if seeds.is_empty() {
        return;
    }
    const CASES: u32 = 2048;
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: CASES,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let n = seeds.len();
    runner
        .run(&(0..n, arb_mutations()), |(i, muts)| {
            check_tx(&mutate(seeds[i].clone(), &muts));
            Ok(())
        })
        .unwrap();
    println!("mutated {CASES} variants of {n} vector transactions without a panic");
}
