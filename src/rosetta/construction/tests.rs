//! The pure construction path against the reference vectors, and the intent round trips.

use rosetta_spec::models::Operation;
use serde_json::{json, Value as Json};
use stacks_codec::address::{Principal, PublicKeyBytes, StacksAddress};
use stacks_codec::sign::{sign_presign, vrs_to_rsv, PrivateKey};
use stacks_codec::{decode_hex, to_hex_prefixed};

use super::build::{self, GivenSignature, Signers};
use super::error::ConstructionError as E;
use super::intent::*;
use super::ops::{self, Completion};
use super::parse;
use crate::ledger::Network;

fn network_of(v: &Json) -> Network {
    if v["network"] == "mainnet" {
        Network::Mainnet
    } else {
        Network::Testnet
    }
}

fn ops_json(v: Json) -> Vec<Operation> {
    serde_json::from_value(v).unwrap()
}

fn transfer_ops(
    sender: &str,
    recipient: &str,
    amount: &str,
    fee: &str,
    memo: Option<&str>,
) -> Vec<Operation> {
    let cur = json!({"symbol": "STX", "decimals": 6});
    let meta = memo.map_or(json!(null), |m| json!({ "memo": m }));
    let mut v = json!([
        {"operation_identifier": {"index": 0}, "type": "fee", "account": {"address": sender}, "amount": {"value": format!("-{fee}"), "currency": cur}},
        {"operation_identifier": {"index": 1}, "type": "token_transfer", "account": {"address": sender}, "amount": {"value": format!("-{amount}"), "currency": cur}},
        {"operation_identifier": {"index": 2}, "type": "token_transfer", "account": {"address": recipient}, "amount": {"value": amount, "currency": cur}},
    ]);
    if !meta.is_null() {
        v[1]["metadata"] = meta.clone();
        v[2]["metadata"] = meta;
    }
    ops_json(v)
}

fn vectors() -> Option<Vec<Json>> {
    let all = test_support::load_json("vectors/signing.json")?;
    Some(all["vectors"].as_array().unwrap().clone())
}

/// Every single-sig vector: the intent (from operations for transfers, from the reference
/// unsigned tx for the PoX calls) builds the reference's unsigned bytes and signing payload;
/// combining the reference's r‖s‖v signature gives its signed bytes and txid.
#[test]
fn single_sig_vectors_byte_for_byte() {
    let Some(vectors) = vectors() else { return };
    let mut checked = 0;
    for v in vectors.iter().filter(|v| v["kind"] == "transfer" || v["kind"] == "call") {
        let name = v["name"].as_str().unwrap();
        let network = network_of(v);
        let s = |k: &str| v[k].as_str().unwrap().to_owned();
        let intent = if v["kind"] == "transfer" {
            let memo = s("memo");
            let ops =
                transfer_ops(&s("sender_address"), &s("recipient"), &s("amount"), &s("fee"), Some(&memo));
            let completion = Completion { nonce: Some(s("nonce").parse().unwrap()), ..Completion::default() };
            ops::to_intent(&ops, &completion, network).unwrap_or_else(|e| panic!("{name}: {e}"))
        } else {
            let tx = parse::decode(&s("unsigned_tx_hex"), network).unwrap();
            let parsed = parse::parse(&tx, false, network).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(parsed.signers, None);
            let intent = parsed.intent;
            // and through operations: what parse shows, read back, is the same intent
            let ops = ops::from_intent(&intent, network);
            let completion = Completion { nonce: Some(intent.origin().nonce), ..Completion::default() };
            assert_eq!(ops::to_intent(&ops, &completion, network).unwrap(), intent, "{name}");
            intent
        };
        let key = PublicKeyBytes::from_slice(&decode_hex(&s("public_key")).unwrap()).unwrap();
        let unsigned = build::unsigned(&intent, &Signers::single(key), network)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(to_hex_prefixed(&unsigned.tx.serialize()), s("unsigned_tx_hex"), "{name}: unsigned tx");
        assert_eq!(
            hex::encode(unsigned.payloads[0].presign),
            s("signing_payload_hex"),
            "{name}: signing payload"
        );
        let rsv: [u8; 65] = decode_hex(&s("signature_rsv")).unwrap().try_into().unwrap();
        let given = GivenSignature {
            signing_payload: &unsigned.payloads[0].presign,
            public_key: key,
            signature_rsv: rsv,
        };
        let signed =
            build::combine(unsigned.tx.clone(), &[given], network).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(to_hex_prefixed(&signed.serialize()), s("signed_tx_hex"), "{name}: signed tx");
        assert_eq!(to_hex_prefixed(&signed.txid()), s("txid"), "{name}: txid");
        let parsed = parse::parse(&signed, true, network).unwrap();
        assert_eq!(parsed.intent, intent, "{name}: parse(signed) = intent");
        assert_eq!(parsed.signers.map(|a| a[0].to_c32()), Some(s("sender_address")));
        checked += 1;
    }
    assert_eq!(checked, 14, "12 transfers and 2 PoX calls");
}

fn key(seed: u8) -> PrivateKey {
    let mut bytes = [seed; 33];
    bytes[32] = 1;
    PrivateKey::from_slice(&bytes).unwrap()
}

fn origin(k: &PrivateKey, network: Network, nonce: u64) -> Origin {
    Origin {
        sender: build::address_of(&k.public_key(), network).unwrap(),
        fee: 180 + nonce,
        nonce,
        sponsor: None,
    }
}

/// One intent of every kind and every PoX address version, on both networks.
pub fn sample_intents(k: &PrivateKey, network: Network) -> Vec<Intent> {
    let contract = default_pox_contract(network);
    let other: StacksAddress = build::address_of(&key(9).public_key(), network).unwrap();
    let mut out = vec![
        Intent::TokenTransfer {
            origin: origin(k, network, 0),
            recipient: Principal::Standard(other),
            amount: 1,
            memo: None,
        },
        Intent::TokenTransfer {
            origin: origin(k, network, 7),
            recipient: format!("{other}.some-contract").parse().unwrap(),
            amount: u64::MAX,
            memo: Some("exactly thirty-four bytes of memo!".into()),
        },
        Intent::RevokeDelegateStx { origin: origin(k, network, 3), contract: contract.clone() },
    ];
    for version in 0u8..=6 {
        let hashbytes = vec![version + 1; if version >= 5 { 32 } else { 20 }];
        let pox_addr = PoxAddr { version, hashbytes };
        out.push(Intent::StackStx {
            origin: origin(k, network, u64::from(version)),
            args: StackStx {
                contract: contract.clone(),
                amount_ustx: 125_000_000_000 + u128::from(version),
                pox_addr: pox_addr.clone(),
                start_burn_height: 812,
                lock_period: 1 + u128::from(version),
                signer_sig: (version % 2 == 0).then(|| vec![version; 65]),
                signer_key: k.public_key().to_compressed().to_vec(),
                max_amount: u128::MAX,
                auth_id: 77,
            },
        });
        out.push(Intent::DelegateStx {
            origin: origin(k, network, 10 + u64::from(version)),
            args: DelegateStx {
                contract: contract.clone(),
                amount_ustx: 5,
                delegate_to: Principal::Standard(other),
                until_burn_height: (version % 2 == 1).then_some(900_000),
                pox_addr: (version % 3 != 0).then_some(pox_addr),
            },
        });
    }
    out
}

/// operations → intent → operations, and intent → unsigned tx → intent, for every kind; a
/// local signature then combines into a transaction that parses to the intent with its signer.
#[test]
fn every_intent_round_trips_through_operations_and_transactions() {
    for network in [Network::Mainnet, Network::Testnet] {
        let k = key(3);
        for intent in sample_intents(&k, network) {
            let ops = ops::from_intent(&intent, network);
            assert!(ops.iter().all(|o| o.status.is_empty()));
            let completion = Completion { nonce: Some(intent.origin().nonce), ..Completion::default() };
            assert_eq!(ops::to_intent(&ops, &completion, network).unwrap(), intent, "ops round trip");
            let signers = Signers::single(k.public_key());
            let unsigned = build::unsigned(&intent, &signers, network).unwrap();
            let bytes = unsigned.tx.serialize();
            let decoded = parse::decode(&to_hex_prefixed(&bytes), network).unwrap();
            let parsed = parse::parse(&decoded, false, network).unwrap();
            assert_eq!((parsed.intent, parsed.signers), (intent.clone(), None));
            assert_eq!(build::unsigned(&intent, &signers, network).unwrap(), unsigned, "deterministic");
            let presign = unsigned.payloads[0].presign;
            let (vrs, _) = sign_presign(presign, &k);
            let given = GivenSignature {
                signing_payload: &presign,
                public_key: k.public_key(),
                signature_rsv: vrs_to_rsv(&vrs),
            };
            let signed = build::combine(decoded, &[given], network).unwrap();
            let parsed = parse::parse(&signed, true, network).unwrap();
            assert_eq!(parsed.intent, intent);
            assert_eq!(parsed.signers, Some(vec![intent.origin().sender]));
            assert_eq!(
                parse::parse(&signed, false, network).unwrap_err(),
                E::SignedMismatch { claimed: "unsigned", actual: "signed" }
            );
        }
    }
}

#[test]
fn combine_refuses_what_does_not_verify() {
    let network = Network::Testnet;
    let k = key(4);
    let intent = sample_intents(&k, network).remove(0);
    let unsigned = build::unsigned(&intent, &Signers::single(k.public_key()), network).unwrap();
    let presign = unsigned.payloads[0].presign;
    let (vrs, _) = sign_presign(presign, &k);
    let rsv = vrs_to_rsv(&vrs);
    let combine = |payload: &[u8], key: PublicKeyBytes, rsv: [u8; 65]| {
        build::combine(
            unsigned.tx.clone(),
            &[GivenSignature { signing_payload: payload, public_key: key, signature_rsv: rsv }],
            network,
        )
    };
    let mut flipped = rsv;
    flipped[10] ^= 1;
    assert!(matches!(combine(&presign, k.public_key(), flipped), Err(E::SignatureNotVerified(_))));
    let other = key(5).public_key();
    assert!(matches!(combine(&presign, other, rsv), Err(E::SignatureNotVerified(_))));
    assert!(matches!(combine(&[0; 32], k.public_key(), rsv), Err(E::SignatureNotVerified(_))));
    let mut bad_v = rsv;
    bad_v[64] = 9;
    assert!(matches!(combine(&presign, k.public_key(), bad_v), Err(E::InvalidSignature(_))));
    // the key must be the sender's
    assert!(matches!(
        build::unsigned(&intent, &Signers::single(other), network),
        Err(E::PublicKeyNotSender { .. })
    ));
}

#[test]
fn operations_that_are_not_an_intent_are_refused() {
    let network = Network::Testnet;
    let a = build::address_of(&key(1).public_key(), network).unwrap().to_c32();
    let b = build::address_of(&key(2).public_key(), network).unwrap().to_c32();
    let c = Completion { nonce: Some(0), ..Completion::default() };
    let mut ops = transfer_ops(&a, &b, "10", "180", None);
    assert!(ops::to_intent(&ops, &c, network).is_ok());
    assert_eq!(ops::to_intent(&ops, &Completion::default(), network).unwrap_err(), E::MissingNonce);
    ops[2].amount.as_mut().unwrap().value = "11".into();
    assert!(matches!(ops::to_intent(&ops, &c, network), Err(E::InvalidAmount(_))));
    let mut ops = transfer_ops(&a, &b, "10", "180", None);
    ops[1].amount.as_mut().unwrap().currency.symbol = "BTC".into();
    assert_eq!(ops::to_intent(&ops, &c, network).unwrap_err(), E::InvalidSymbol("BTC".into()));
    let mut ops = transfer_ops(&a, &b, "10", "180", None);
    ops[0].status = "success".into();
    assert!(matches!(ops::to_intent(&ops, &c, network), Err(E::InvalidOperation(_))));
    let mainnet_b = build::address_of(&key(2).public_key(), Network::Mainnet).unwrap().to_c32();
    let ops = transfer_ops(&a, &mainnet_b, "10", "180", None);
    assert!(matches!(ops::to_intent(&ops, &c, network), Err(E::InvalidRecipient(_))));
    let ops = transfer_ops(&a, &b, "10", "180", Some("a memo that is longer than thirty-four bytes"));
    let intent = ops::to_intent(&ops, &c, network).unwrap();
    assert!(matches!(
        build::unsigned(&intent, &Signers::single(key(1).public_key()), network),
        Err(E::InvalidOperation(_))
    ));
    let mut ops = transfer_ops(&a, &b, "10", "180", None);
    ops[1].r#type = "coinbase".into();
    assert!(matches!(ops::to_intent(&ops, &c, network), Err(E::InvalidOperation(_))));
}

#[test]
fn pox_addresses_of_every_version_read_back() {
    for (version, len) in [(0u8, 20usize), (1, 20), (2, 20), (3, 20), (4, 20), (5, 32), (6, 32)] {
        let addr = PoxAddr { version, hashbytes: vec![0xab; len] };
        for network in [Network::Mainnet, Network::Testnet] {
            let shown = ops::pox_addr_json(&addr, network);
            assert_eq!(ops::pox_addr_of(&shown).unwrap(), addr, "{shown}");
        }
    }
    assert!(ops::pox_addr_of(&json!({"version": 7, "hashbytes": "0x00"})).is_err());
    assert!(ops::pox_addr_of(&json!({"version": 5, "hashbytes": format!("0x{}", "00".repeat(20))})).is_err());
    assert!(ops::pox_addr_of(&json!("not an address")).is_err());
}

/// A sponsored transfer from a 2-of-3 multisig origin, for every multisig mode: operations and
/// transactions round-trip at every stage, the rounds go origin members then sponsor, and the
/// signed transaction parses with each signer (members in member order, then the sponsor).
#[test]
fn sponsored_multisig_rounds_for_every_mode() {
    use super::intent::{Multisig, Sponsor, HASH_MODES};
    use super::signers::{self, next_signatures};
    use stacks_codec::tx::Transaction;

    let network = Network::Testnet;
    let members: Vec<PrivateKey> = (11..14).map(key).collect();
    let public: Vec<PublicKeyBytes> = members.iter().map(PrivateKey::public_key).collect();
    let sponsor_key = key(20);
    let sponsor = build::address_of(&sponsor_key.public_key(), network).unwrap();
    for (name, hash_mode) in HASH_MODES {
        let shape = Multisig { hash_mode, signatures_required: 2 };
        let sender = build::multisig_address(&shape, &public, network).unwrap();
        let intent = Intent::TokenTransfer {
            origin: Origin {
                sender,
                fee: 0,
                nonce: 4,
                sponsor: Some(Sponsor { address: sponsor, fee: 900, nonce: 31 }),
            },
            recipient: Principal::Standard(build::address_of(&key(9).public_key(), network).unwrap()),
            amount: 55,
            memo: Some("custody".into()),
        };
        let completion = Completion {
            nonce: Some(4),
            sponsored: true,
            sponsor_nonce: Some(31),
            multisig: Some(shape),
            ..Completion::default()
        };
        let ops = ops::from_intent(&intent, network);
        assert_eq!(ops[0].account.as_ref().unwrap().address, sponsor.to_c32(), "{name}: the sponsor pays");
        assert_eq!(ops::to_intent(&ops, &completion, network).unwrap(), intent, "{name}: ops round trip");
        let signers_keys = build::Signers {
            origin: build::OriginKeys::Multi { shape, keys: public.clone() },
            sponsor: Some(sponsor_key.public_key()),
        };
        let unsigned = build::unsigned(&intent, &signers_keys, network).unwrap();
        assert_eq!(unsigned.payloads.len(), if hash_mode.is_non_sequential() { 3 } else { 2 }, "{name}");
        let mut tx = unsigned.tx.clone();
        let mut rounds = 0;
        loop {
            let reread = Transaction::deserialize_partially_signed(&tx.serialize()).unwrap();
            assert_eq!(reread, tx, "{name}: the round's transaction survives the wire");
            assert_eq!(signers::unsigned_of(&tx).unwrap(), unsigned.tx, "{name}: unsigned again");
            let signed = build::is_signed(&tx);
            let parsed = parse::parse(&tx, signed, network).unwrap();
            assert_eq!(parsed.intent, intent, "{name}: parse after {rounds} rounds");
            assert_eq!(parsed.multisig, Some(shape));
            let wanted = next_signatures(&tx, network).unwrap();
            if wanted.is_empty() {
                assert!(signed);
                let accounts: Vec<StacksAddress> = public[..2]
                    .iter()
                    .map(|k| build::address_of(k, network).unwrap())
                    .chain([sponsor])
                    .collect();
                assert_eq!(parsed.signers, Some(accounts), "{name}: each signer");
                break;
            }
            // the first eligible signer signs: members 0 and 1, then the sponsor
            let w = &wanted[0];
            let private = if w.account == sponsor {
                &sponsor_key
            } else {
                members
                    .iter()
                    .find(|k| build::address_of(&k.public_key(), network).unwrap() == w.account)
                    .unwrap()
            };
            let (vrs, _) = sign_presign(w.presign, private);
            let given = GivenSignature {
                signing_payload: &w.presign,
                public_key: private.public_key(),
                signature_rsv: vrs_to_rsv(&vrs),
            };
            tx = build::combine(tx, &[given], network).unwrap();
            rounds += 1;
        }
        assert_eq!(rounds, 3, "{name}: two members and the sponsor");
        assert!(stacks_codec::sign::verify_auth(&Transaction::deserialize(&tx.serialize()).unwrap()).is_ok());
        // a signed transaction takes no more signatures; the sponsor cannot sign before the origin
        let (vrs, _) = sign_presign(unsigned.payloads[0].presign, &sponsor_key);
        let early = GivenSignature {
            signing_payload: &unsigned.payloads[0].presign,
            public_key: sponsor_key.public_key(),
            signature_rsv: vrs_to_rsv(&vrs),
        };
        assert!(matches!(
            build::combine(unsigned.tx.clone(), &[early], network),
            Err(E::SignatureNotVerified(_))
        ));
    }
}
