//! The Construction API over HTTP, in offline mode (no node, no database): every reference
//! vector (single-sig, sponsored, multisig) byte for byte through payloads → combine → hash,
//! the parse round trips, and the listed errors for bad input.

use serde_json::{json, Value};
use stacks_codec::address::{PublicKeyBytes, StacksAddress};
use stacks_codec::sign::{sign_presign, verify_auth, vrs_to_rsv, PrivateKey};
use stacks_codec::tx::Transaction;
use stacks_ledger::ledger::Network;
use stacks_ledger::rosetta::construction::{routes, Context};

async fn post(network: Network, endpoint: &str, body: Value) -> (u16, Value) {
    let resp = warp::test::request()
        .method("POST")
        .path(&format!("/rosetta/v1/construction/{endpoint}"))
        .json(&body)
        .reply(&routes(Context::offline(network)))
        .await;
    (resp.status().as_u16(), serde_json::from_slice(resp.body()).unwrap())
}

fn net(network: Network) -> Value {
    json!({"blockchain": "stacks", "network": network.as_str()})
}

fn transfer_ops(sender: &str, recipient: &str, amount: &str, fee: &str, memo: &str) -> Value {
    let cur = json!({"symbol": "STX", "decimals": 6});
    json!([
        {"operation_identifier": {"index": 0}, "type": "fee", "account": {"address": sender}, "amount": {"value": format!("-{fee}"), "currency": cur}},
        {"operation_identifier": {"index": 1}, "type": "token_transfer", "account": {"address": sender}, "amount": {"value": format!("-{amount}"), "currency": cur}, "metadata": {"memo": memo}},
        {"operation_identifier": {"index": 2}, "type": "token_transfer", "account": {"address": recipient}, "amount": {"value": amount, "currency": cur}, "metadata": {"memo": memo}},
    ])
}

/// Only type, account and amount: what rosetta-cli compares.
fn essence(ops: &Value) -> Vec<(String, String, Option<String>)> {
    ops.as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["type"].as_str().unwrap().to_owned(),
                o["account"]["address"].as_str().unwrap().to_owned(),
                o["amount"]["value"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

#[tokio::test]
async fn signing_vectors_through_the_routes() {
    let Some(all) = test_support::load_json("vectors/signing.json") else { return };
    let mut checked = 0;
    for v in all["vectors"].as_array().unwrap() {
        let kind = v["kind"].as_str().unwrap();
        let s = |k: &str| v[k].as_str().unwrap().to_owned();
        let name = s("name");
        let network = if v["network"] == "mainnet" { Network::Mainnet } else { Network::Testnet };
        if kind != "transfer" && kind != "call" {
            // sponsored and multisig: not built here, but hash must still name them
            let (status, body) = post(
                network,
                "hash",
                json!({"network_identifier": net(network), "signed_transaction": s("signed_tx_hex")}),
            )
            .await;
            assert_eq!(
                (status, body["transaction_identifier"]["hash"].clone()),
                (200, json!(s("txid"))),
                "{name}"
            );
            continue;
        }
        let pk = json!({"hex_bytes": s("public_key"), "curve_type": "secp256k1"});
        let (_, derived) =
            post(network, "derive", json!({"network_identifier": net(network), "public_key": pk})).await;
        assert_eq!(derived["account_identifier"]["address"], json!(s("sender_address")), "{name}: derive");
        let ops = if kind == "transfer" {
            transfer_ops(&s("sender_address"), &s("recipient"), &s("amount"), &s("fee"), &s("memo"))
        } else {
            // the PoX calls' operations are what parse says about the reference tx
            let (status, parsed) = post(network, "parse", json!({"network_identifier": net(network), "signed": false, "transaction": s("unsigned_tx_hex")})).await;
            assert_eq!(status, 200, "{name}: {parsed}");
            parsed["operations"].clone()
        };
        let (status, pre) =
            post(network, "preprocess", json!({"network_identifier": net(network), "operations": ops})).await;
        assert_eq!(status, 200, "{name}: {pre}");
        assert_eq!(pre["required_public_keys"], json!([{"address": s("sender_address")}]));
        let payloads_req = json!({"network_identifier": net(network), "operations": ops, "public_keys": [pk], "metadata": {"account_sequence": s("nonce").parse::<u64>().unwrap()}});
        let (status, payloads) = post(network, "payloads", payloads_req.clone()).await;
        assert_eq!(status, 200, "{name}: {payloads}");
        assert_eq!(payloads["unsigned_transaction"], json!(s("unsigned_tx_hex")), "{name}: unsigned");
        assert_eq!(payloads["payloads"][0]["hex_bytes"], json!(s("signing_payload_hex")), "{name}: payload");
        assert_eq!(payloads["payloads"][0]["signature_type"], "ecdsa_recovery");
        assert_eq!(post(network, "payloads", payloads_req).await.1, payloads, "{name}: deterministic");
        let (status, unsigned_parse) = post(
            network,
            "parse",
            json!({"network_identifier": net(network), "signed": false, "transaction": s("unsigned_tx_hex")}),
        )
        .await;
        assert_eq!(status, 200);
        assert_eq!(essence(&unsigned_parse["operations"]), essence(&ops), "{name}: parse(unsigned) = intent");
        assert!(unsigned_parse.get("account_identifier_signers").is_none(), "{name}: no signers");
        let sig = json!({"signing_payload": payloads["payloads"][0], "public_key": pk, "signature_type": "ecdsa_recovery", "hex_bytes": s("signature_rsv")});
        let combine = json!({"network_identifier": net(network), "unsigned_transaction": s("unsigned_tx_hex"), "signatures": [sig]});
        let (status, combined) = post(network, "combine", combine.clone()).await;
        assert_eq!(status, 200, "{name}: {combined}");
        assert_eq!(combined["signed_transaction"], json!(s("signed_tx_hex")), "{name}: signed");
        let (_, signed_parse) = post(
            network,
            "parse",
            json!({"network_identifier": net(network), "signed": true, "transaction": s("signed_tx_hex")}),
        )
        .await;
        assert_eq!(essence(&signed_parse["operations"]), essence(&ops), "{name}: parse(signed) = intent");
        assert_eq!(signed_parse["account_identifier_signers"], json!([{"address": s("sender_address")}]));
        let (_, hash) = post(
            network,
            "hash",
            json!({"network_identifier": net(network), "signed_transaction": s("signed_tx_hex")}),
        )
        .await;
        assert_eq!(hash["transaction_identifier"]["hash"], json!(s("txid")), "{name}: hash");

        // negative cases, each a listed error (HTTP 500 with the Rosetta body)
        let code = |body: &Value| body["code"].as_i64().unwrap();
        let mut bad = combine.clone();
        let mut rsv = hex::decode(s("signature_rsv")).unwrap();
        rsv[5] ^= 1;
        bad["signatures"][0]["hex_bytes"] = json!(hex::encode(&rsv));
        let (st, b) = post(network, "combine", bad).await;
        assert!(st == 500 && [634, 635].contains(&code(&b)), "{name}: wrong signature {b}");
        let mut bad = combine.clone();
        bad["signatures"][0]["signature_type"] = json!("ecdsa");
        assert_eq!(code(&post(network, "combine", bad).await.1), 638, "{name}: wrong signature type");
        let mut bad = combine.clone();
        bad["signatures"] = json!([]);
        assert_eq!(code(&post(network, "combine", bad).await.1), 633);
        let mut bad = combine.clone();
        bad["signatures"] = json!([sig, sig]);
        assert_eq!(code(&post(network, "combine", bad).await.1), 637, "{name}: wrong count");
        let mut bad = combine.clone();
        bad["signatures"][0]["public_key"]["curve_type"] = json!("edwards25519");
        assert_eq!(code(&post(network, "combine", bad).await.1), 619, "{name}: wrong curve");
        let other = if network == Network::Mainnet { Network::Testnet } else { Network::Mainnet };
        let mut bad = combine.clone();
        bad["network_identifier"] = net(other);
        assert_eq!(code(&post(network, "combine", bad).await.1), 610, "{name}: wrong network");
        let (_, b) = post(
            network,
            "hash",
            json!({"network_identifier": net(network), "signed_transaction": s("unsigned_tx_hex")}),
        )
        .await;
        assert_eq!(code(&b), 629, "{name}: hash of an unsigned tx");
        checked += 1;
    }
    assert_eq!(checked, 14);
}

fn pk(hex: &str) -> Value {
    json!({"hex_bytes": hex, "curve_type": "secp256k1"})
}

fn signature(payload: &Value, public_key: &str, rsv: &str) -> Value {
    json!({"signing_payload": payload, "public_key": pk(public_key), "signature_type": "ecdsa_recovery", "hex_bytes": rsv})
}

async fn derive(network: Network, key: &str, metadata: Value) -> String {
    let (status, body) = post(
        network,
        "derive",
        json!({"network_identifier": net(network), "public_key": pk(key), "metadata": metadata}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["account_identifier"]["address"].as_str().unwrap().to_owned()
}

/// The continuation round: `/payloads` with the same request and the partially signed
/// transaction in metadata.
async fn next_round(network: Network, request: &Value, partial: &Value) -> Value {
    let mut req = request.clone();
    req["metadata"]["partially_signed_transaction"] = partial.clone();
    let (status, body) = post(network, "payloads", req).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["unsigned_transaction"], *partial, "the round hands the same transaction on");
    body
}

/// The sponsored vector over HTTP: the origin signs in the first round, the sponsor in the
/// second (a `/payloads` continuation); the result, its txid and what parse says are the reference's.
#[tokio::test]
async fn sponsored_vector_through_the_routes() {
    let Some(all) = test_support::load_json("vectors/signing.json") else { return };
    let v = all["vectors"].as_array().unwrap().iter().find(|v| v["kind"] == "sponsored-transfer").unwrap();
    let s = |k: &str| v[k].as_str().unwrap().to_owned();
    let network = Network::Testnet;
    let sender = derive(network, &s("origin_public_key"), json!(null)).await;
    let sponsor = derive(network, &s("sponsor_public_key"), json!(null)).await;
    let mut ops = transfer_ops(&sender, &s("recipient"), &s("amount"), &s("sponsor_fee"), &s("memo"));
    ops[0]["account"]["address"] = json!(sponsor);

    let (status, pre) = post(
        network,
        "preprocess",
        json!({"network_identifier": net(network), "operations": ops, "metadata": {"sponsored": true}}),
    )
    .await;
    assert_eq!(status, 200, "{pre}");
    assert_eq!(pre["required_public_keys"], json!([{"address": sender}, {"address": sponsor}]));
    assert_eq!(
        (pre["options"]["sponsored"].clone(), pre["options"]["sponsor_address"].clone()),
        (json!(true), json!(sponsor))
    );

    let metadata = json!({"account_sequence": s("origin_nonce").parse::<u64>().unwrap(), "sponsored": true, "sponsor_account_sequence": s("sponsor_nonce").parse::<u64>().unwrap()});
    let request = json!({"network_identifier": net(network), "operations": ops, "metadata": metadata, "public_keys": [pk(&s("origin_public_key")), pk(&s("sponsor_public_key"))]});
    let (status, round1) = post(network, "payloads", request.clone()).await;
    assert_eq!(status, 200, "{round1}");
    assert_eq!(round1["payloads"].as_array().unwrap().len(), 1);
    let payload = &round1["payloads"][0];
    assert_eq!(payload["hex_bytes"], v["origin"]["signing_payload_hex"]);
    assert_eq!(payload["account_identifier"]["address"], json!(sender));
    let (status, unsigned_parse) = post(network, "parse", json!({"network_identifier": net(network), "signed": false, "transaction": round1["unsigned_transaction"]})).await;
    assert_eq!(status, 200, "{unsigned_parse}");
    assert_eq!(essence(&unsigned_parse["operations"]), essence(&ops), "the sponsor pays the fee");
    assert_eq!(unsigned_parse["metadata"]["sponsored"], json!(true));

    let origin_sig =
        signature(payload, &s("origin_public_key"), v["origin"]["signature_rsv"].as_str().unwrap());
    let (status, combined) = post(network, "combine", json!({"network_identifier": net(network), "unsigned_transaction": round1["unsigned_transaction"], "signatures": [origin_sig]})).await;
    assert_eq!(status, 200, "{combined}");
    let partial = combined["signed_transaction"].clone();
    let (_, b) =
        post(network, "hash", json!({"network_identifier": net(network), "signed_transaction": partial}))
            .await;
    assert_eq!(b["code"], 629, "the sponsor has not signed yet");

    let round2 = next_round(network, &request, &partial).await;
    let payload = &round2["payloads"][0];
    assert_eq!(round2["payloads"].as_array().unwrap().len(), 1);
    assert_eq!(payload["hex_bytes"], v["sponsor"]["signing_payload_hex"]);
    assert_eq!(payload["account_identifier"]["address"], json!(sponsor));
    let sponsor_sig =
        signature(payload, &s("sponsor_public_key"), v["sponsor"]["signature_rsv"].as_str().unwrap());
    let (status, combined) = post(network, "combine", json!({"network_identifier": net(network), "unsigned_transaction": partial, "signatures": [sponsor_sig]})).await;
    assert_eq!(status, 200, "{combined}");
    assert_eq!(combined["signed_transaction"], v["signed_tx_hex"], "byte for byte");
    let (_, hash) = post(
        network,
        "hash",
        json!({"network_identifier": net(network), "signed_transaction": combined["signed_transaction"]}),
    )
    .await;
    assert_eq!(hash["transaction_identifier"]["hash"], v["txid"]);
    let (status, parsed) = post(
        network,
        "parse",
        json!({"network_identifier": net(network), "signed": true, "transaction": v["signed_tx_hex"]}),
    )
    .await;
    assert_eq!(status, 200, "{parsed}");
    assert_eq!(essence(&parsed["operations"]), essence(&ops));
    assert_eq!(parsed["account_identifier_signers"], json!([{"address": sender}, {"address": sponsor}]));

    // A continuation of another transaction is refused; so is the sponsor signing first.
    let mut other = request.clone();
    other["metadata"]["sponsor_account_sequence"] = json!(100);
    other["metadata"]["partially_signed_transaction"] = partial.clone();
    assert_eq!(post(network, "payloads", other).await.1["code"], 628);
    let early_payload =
        json!({"hex_bytes": v["sponsor"]["signing_payload_hex"], "signature_type": "ecdsa_recovery"});
    let early =
        signature(&early_payload, &s("sponsor_public_key"), v["sponsor"]["signature_rsv"].as_str().unwrap());
    let (_, b) = post(network, "combine", json!({"network_identifier": net(network), "unsigned_transaction": round1["unsigned_transaction"], "signatures": [early]})).await;
    assert_eq!(b["code"], 635, "{b}");
}

/// The two multisig vectors over HTTP: derive, preprocess (member accounts), payloads (one per
/// eligible member), combine (non-sequential: both signatures at once, in reverse order;
/// sequential: one round per signature), hash, parse — byte for byte.
#[tokio::test]
async fn multisig_vectors_through_the_routes() {
    let Some(all) = test_support::load_json("vectors/signing.json") else { return };
    let mut checked = 0;
    for v in all["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["kind"].as_str().unwrap().starts_with("multisig"))
    {
        let s = |k: &str| v[k].as_str().unwrap().to_owned();
        let name = s("name");
        let network = if v["network"] == "mainnet" { Network::Mainnet } else { Network::Testnet };
        let mode = if v["hash_mode"] == 5 { "p2sh-non-sequential" } else { "p2sh" };
        let keys: Vec<String> =
            v["public_keys"].as_array().unwrap().iter().map(|k| k.as_str().unwrap().to_owned()).collect();
        let shape =
            json!({"hash_mode": mode, "signatures_required": v["signatures_required"], "public_keys": keys});
        let sender = derive(network, &keys[1], shape.clone()).await;
        assert_eq!(sender, s("sender_address"), "{name}: derive");
        let ops = transfer_ops(&sender, &s("recipient"), &s("amount"), &s("fee"), "");
        let (status, pre) = post(
            network,
            "preprocess",
            json!({"network_identifier": net(network), "operations": ops, "metadata": shape}),
        )
        .await;
        assert_eq!(status, 200, "{name}: {pre}");
        let mut members = Vec::new();
        for k in &keys {
            members.push(json!({"address": derive(network, k, json!(null)).await}));
        }
        assert_eq!(pre["required_public_keys"], json!(members), "{name}: the members sign");
        assert_eq!(pre["options"]["hash_mode"], json!(mode));

        let metadata = json!({"account_sequence": s("nonce").parse::<u64>().unwrap(), "hash_mode": mode, "signatures_required": v["signatures_required"]});
        let request = json!({"network_identifier": net(network), "operations": ops, "metadata": metadata, "public_keys": keys.iter().map(|k| pk(k)).collect::<Vec<_>>()});
        let (status, round1) = post(network, "payloads", request.clone()).await;
        assert_eq!(status, 200, "{name}: {round1}");
        let unsigned = round1["unsigned_transaction"].clone();
        let (status, unsigned_parse) = post(
            network,
            "parse",
            json!({"network_identifier": net(network), "signed": false, "transaction": unsigned}),
        )
        .await;
        assert_eq!(status, 200, "{name}: {unsigned_parse}");
        assert_eq!(essence(&unsigned_parse["operations"]), essence(&ops), "{name}: parse(unsigned)");
        let signs: Vec<&Value> =
            v["steps"].as_array().unwrap().iter().filter(|st| st["action"] == "sign").collect();
        let sig_of = |step: &Value, payload: &Value| {
            signature(payload, step["public_key"].as_str().unwrap(), step["signature_rsv"].as_str().unwrap())
        };
        let payload_for = |round: &Value, step: &Value| -> Value {
            let index = step["key_index"].as_u64().unwrap() as usize;
            round["payloads"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["account_identifier"] == members[index])
                .cloned()
                .unwrap_or_else(|| panic!("{name}: no payload for member {index} in {round}"))
        };
        let signed = if mode == "p2sh-non-sequential" {
            // one round: every member gets the same payload; any two combine, in any order
            assert_eq!(round1["payloads"].as_array().unwrap().len(), 3, "{name}");
            for p in round1["payloads"].as_array().unwrap() {
                assert_eq!(p["hex_bytes"], signs[0]["signing_payload_hex"], "{name}");
            }
            let sigs: Vec<Value> =
                signs.iter().rev().map(|st| sig_of(st, &payload_for(&round1, st))).collect();
            let (status, combined) = post(network, "combine", json!({"network_identifier": net(network), "unsigned_transaction": unsigned, "signatures": sigs})).await;
            assert_eq!(status, 200, "{name}: {combined}");
            combined["signed_transaction"].clone()
        } else {
            // the first round: members 0 and 1 may sign first (2 of 3 must remain possible)
            assert_eq!(round1["payloads"].as_array().unwrap().len(), 2, "{name}: {round1}");
            let first = sig_of(signs[0], &payload_for(&round1, signs[0]));
            assert_eq!(first["signing_payload"]["hex_bytes"], signs[0]["signing_payload_hex"]);
            let (status, combined) = post(network, "combine", json!({"network_identifier": net(network), "unsigned_transaction": unsigned, "signatures": [first]})).await;
            assert_eq!(status, 200, "{name}: {combined}");
            let partial = combined["signed_transaction"].clone();
            let (_, b) = post(
                network,
                "hash",
                json!({"network_identifier": net(network), "signed_transaction": partial}),
            )
            .await;
            assert_eq!(b["code"], 629, "{name}: one of two signatures");
            let (status, partial_parse) = post(
                network,
                "parse",
                json!({"network_identifier": net(network), "signed": false, "transaction": partial}),
            )
            .await;
            assert_eq!(status, 200, "{name}: {partial_parse}");
            let round2 = next_round(network, &request, &partial).await;
            assert_eq!(round2["payloads"].as_array().unwrap().len(), 2, "{name}: members 1 and 2 remain");
            let second = sig_of(signs[1], &payload_for(&round2, signs[1]));
            assert_eq!(second["signing_payload"]["hex_bytes"], signs[1]["signing_payload_hex"]);
            // the second signature over the first round's payload does not verify
            let stale = sig_of(signs[1], &payload_for(&round1, signs[1]));
            let (_, b) = post(network, "combine", json!({"network_identifier": net(network), "unsigned_transaction": partial, "signatures": [stale]})).await;
            assert_eq!(b["code"], 635, "{name}: {b}");
            let (status, combined) = post(network, "combine", json!({"network_identifier": net(network), "unsigned_transaction": partial, "signatures": [second.clone()]})).await;
            assert_eq!(status, 200, "{name}: {combined}");
            // both rounds' signatures in one call, in either order, give the same transaction
            let (_, at_once) = post(network, "combine", json!({"network_identifier": net(network), "unsigned_transaction": unsigned, "signatures": [second, first]})).await;
            assert_eq!(at_once["signed_transaction"], combined["signed_transaction"], "{name}");
            combined["signed_transaction"].clone()
        };
        assert_eq!(signed, v["signed_tx_hex"], "{name}: byte for byte");
        let (_, hash) =
            post(network, "hash", json!({"network_identifier": net(network), "signed_transaction": signed}))
                .await;
        assert_eq!(hash["transaction_identifier"]["hash"], v["txid"], "{name}: txid");
        let (status, parsed) = post(
            network,
            "parse",
            json!({"network_identifier": net(network), "signed": true, "transaction": signed}),
        )
        .await;
        assert_eq!(status, 200, "{name}: {parsed}");
        assert_eq!(essence(&parsed["operations"]), essence(&ops), "{name}: parse(signed)");
        let signers: Vec<Value> =
            signs.iter().map(|st| members[st["key_index"].as_u64().unwrap() as usize].clone()).collect();
        assert_eq!(parsed["account_identifier_signers"], json!(signers), "{name}: each signer");
        assert_eq!(parsed["metadata"]["hash_mode"], json!(mode));

        // the sender must be the keys' address
        let mut wrong = request.clone();
        wrong["public_keys"] = json!([pk(&keys[1]), pk(&keys[0]), pk(&keys[2])]);
        assert_eq!(post(network, "payloads", wrong).await.1["code"], 620, "{name}: keys out of member order");
        checked += 1;
    }
    assert_eq!(checked, 2);
}

/// One random M-of-N multisig transfer through the routes: derive, payloads, then rounds of
/// combine (a random eligible member per sequential round; a random M-subset in random order,
/// all at once, for non-sequential) until /hash accepts it. Returns the signed bytes and the
/// private keys of the members that signed.
async fn random_multisig(
    mode: &str,
    keys: &[PrivateKey],
    required: usize,
    picks: &[usize],
) -> (Vec<u8>, Vec<PublicKeyBytes>, String) {
    let network = Network::Testnet;
    let public: Vec<String> = keys.iter().map(|k| k.public_key().to_string()).collect();
    let shape = json!({"hash_mode": mode, "signatures_required": required, "public_keys": public});
    let sender = derive(network, &public[0], shape.clone()).await;
    let recipient =
        derive(network, &PrivateKey::from_slice(&[0x77; 32]).unwrap().public_key().to_string(), json!(null))
            .await;
    let ops = transfer_ops(&sender, &recipient, "1000", "300", "");
    let metadata = json!({"account_sequence": 3, "hash_mode": mode, "signatures_required": required});
    let request = json!({"network_identifier": net(network), "operations": ops, "metadata": metadata, "public_keys": public.iter().map(|k| pk(k)).collect::<Vec<_>>()});
    let (status, round) = post(network, "payloads", request.clone()).await;
    assert_eq!(status, 200, "{round}");
    let mut tx = round["unsigned_transaction"].clone();
    let mut payloads = round["payloads"].as_array().unwrap().clone();
    let member_of = |payload: &Value| -> usize {
        let account = payload["account_identifier"]["address"].as_str().unwrap();
        keys.iter()
            .position(|k| {
                let key = k.public_key();
                StacksAddress::new(26, key.hash160()).to_c32() == account
            })
            .unwrap()
    };
    let sign = |payload: &Value| {
        let member = member_of(payload);
        let presign: [u8; 32] =
            hex::decode(payload["hex_bytes"].as_str().unwrap()).unwrap().try_into().unwrap();
        let (vrs, _) = sign_presign(presign, &keys[member]);
        (member, signature(payload, &public[member], &hex::encode(vrs_to_rsv(&vrs))))
    };
    let mut signed_by = Vec::new();
    let mut pick = picks.iter().cycle();
    loop {
        let sigs: Vec<Value> = if mode.ends_with("non-sequential") {
            // any `required` members, in a random order
            let mut pool = payloads.clone();
            let mut chosen = Vec::new();
            while chosen.len() < required {
                chosen.push(pool.remove(pick.next().unwrap() % pool.len()));
            }
            chosen
                .iter()
                .map(|p| {
                    let (m, s) = sign(p);
                    signed_by.push(m);
                    s
                })
                .collect()
        } else {
            let (m, s) = sign(&payloads[pick.next().unwrap() % payloads.len()]);
            signed_by.push(m);
            vec![s]
        };
        let (status, combined) = post(
            network,
            "combine",
            json!({"network_identifier": net(network), "unsigned_transaction": tx, "signatures": sigs}),
        )
        .await;
        assert_eq!(status, 200, "{combined}");
        tx = combined["signed_transaction"].clone();
        let (status, _) =
            post(network, "hash", json!({"network_identifier": net(network), "signed_transaction": tx}))
                .await;
        if status == 200 {
            break;
        }
        let next = next_round(network, &request, &tx).await;
        payloads = next["payloads"].as_array().unwrap().clone();
    }
    signed_by.sort_unstable();
    let signers = signed_by.iter().map(|m| keys[*m].public_key()).collect();
    (stacks_codec::decode_hex(tx.as_str().unwrap()).unwrap(), signers, sender)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 40, ..Default::default() })]

    /// Random M-of-N multisig transfers for every hash mode, built and signed through the routes,
    /// verify with the codec's verifier (as a node would) and recover exactly the members that
    /// signed, in member order.
    #[test]
    fn random_multisig_transactions_verify(
        mode in 0usize..4,
        n in 1usize..=5,
        m_seed in 0usize..5,
        seeds in proptest::collection::vec(1u8..=250, 5),
        uncompressed in proptest::collection::vec(proptest::bool::ANY, 5),
        picks in proptest::collection::vec(0usize..1000, 1..8),
    ) {
        let modes = ["p2sh", "p2wsh", "p2sh-non-sequential", "p2wsh-non-sequential"];
        let segwit = modes[mode].starts_with("p2wsh");
        let required = 1 + m_seed % n;
        let keys: Vec<PrivateKey> = (0..n)
            .map(|i| {
                let mut secret = vec![seeds[i].wrapping_add(i as u8 * 50); 32];
                secret[0] = i as u8 + 1; // distinct members
                if segwit || !uncompressed[i] {
                    secret.push(0x01);
                }
                PrivateKey::from_slice(&secret).unwrap()
            })
            .collect();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (bytes, signers, sender) = rt.block_on(random_multisig(modes[mode], &keys, required, &picks));
        let tx = Transaction::deserialize(&bytes).unwrap();
        let verified = verify_auth(&tx).unwrap();
        proptest::prop_assert_eq!(verified.origin.signers.len(), required);
        proptest::prop_assert_eq!(verified.origin.signers, signers);
        let members: Vec<PublicKeyBytes> = keys.iter().map(PrivateKey::public_key).collect();
        proptest::prop_assert_eq!(verified.origin.public_keys, members);
        proptest::prop_assert_eq!(tx.origin_address().to_c32(), sender);
    }
}

#[tokio::test]
async fn garbage_and_offline_calls_are_listed_errors() {
    let n = Network::Testnet;
    let code = |b: &Value| b["code"].as_i64().unwrap();
    for garbage in ["zz", "0xdeadbeef", ""] {
        let (st, b) =
            post(n, "parse", json!({"network_identifier": net(n), "signed": false, "transaction": garbage}))
                .await;
        assert_eq!((st, code(&b)), (500, 628), "{garbage}");
        let (_, b) =
            post(n, "hash", json!({"network_identifier": net(n), "signed_transaction": garbage})).await;
        assert_eq!(code(&b), 628);
    }
    let (_, b) = post(n, "derive", json!({"network_identifier": net(n), "public_key": {"hex_bytes": "02abcd", "curve_type": "secp256k1"}})).await;
    assert_eq!(code(&b), 620);
    let (_, b) = post(n, "derive", json!({"network_identifier": {"blockchain": "bitcoin", "network": "testnet"}, "public_key": {"hex_bytes": "02abcd", "curve_type": "secp256k1"}})).await;
    assert_eq!(code(&b), 611);
    let (_, b) = post(n, "metadata", json!({"network_identifier": net(n), "options": {}})).await;
    assert_eq!(code(&b), 646, "metadata is online-only");
    let (_, b) = post(n, "submit", json!({"network_identifier": net(n), "signed_transaction": "0x00"})).await;
    assert_eq!(code(&b), 646, "submit is online-only");
}
