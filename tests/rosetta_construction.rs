//! The Construction API over HTTP, in offline mode (no node, no database): every single-sig
//! reference vector byte for byte through payloads → combine → hash, the parse round trips,
//! and the listed errors for bad input.

use serde_json::{json, Value};
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
