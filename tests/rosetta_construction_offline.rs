//! `serve --mode offline` (and `STACKS_API_MODE=offline`) as a real process: it starts with no
//! database and no node, walks a reference transfer through derive → preprocess → payloads →
//! combine → parse → hash over HTTP byte for byte, and answers the online-only calls with the
//! listed 646 (Rosetta) or a 503 JSON (everything else).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Starts the binary offline; the database URL points where no database can be created, so
/// the server answering at all proves it never opens one.
async fn start(args: &[&str], env: &[(&str, &str)], network: &str) -> Server {
    let port = free_port();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_stacks-ledger"));
    cmd.args(["serve", "--network", network, "--api-bind", &format!("127.0.0.1:{port}")])
        .args(["--db", "sqlite:///nonexistent-dir/none.db", "--log-level", "warn"])
        .args(args)
        .env_remove("STACKS_API_MODE")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut server =
        Server { child: cmd.spawn().expect("binary runs"), base: format!("http://127.0.0.1:{port}") };
    // Ready when it answers HTTP (a listening socket alone could be another process's on a
    // port reused since `free_port`); a server that exits says so instead of a later refusal.
    let deadline = Instant::now() + Duration::from_secs(30);
    let client = reqwest::Client::new();
    loop {
        if let Some(status) = server.child.try_wait().expect("the server's status") {
            panic!("the offline server exited: {status}");
        }
        let list = json!({});
        if client.post(format!("{}/rosetta/v1/network/list", server.base)).json(&list).send().await.is_ok() {
            return server;
        }
        assert!(Instant::now() < deadline, "the offline server did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn post(server: &Server, path: &str, body: Value) -> (u16, Value) {
    let resp =
        reqwest::Client::new().post(format!("{}{path}", server.base)).json(&body).send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap())
}

async fn walk_reference_transfer(server: &Server, v: &Value) {
    let s = |k: &str| v[k].as_str().unwrap().to_owned();
    let net = json!({"blockchain": "stacks", "network": s("network")});
    let c = |e: &str| format!("/rosetta/v1/construction/{e}");
    let cur = json!({"symbol": "STX", "decimals": 6});
    let (sender, recipient, amount) = (s("sender_address"), s("recipient"), s("amount"));
    let ops = json!([
        {"operation_identifier": {"index": 0}, "type": "fee", "account": {"address": sender}, "amount": {"value": format!("-{}", s("fee")), "currency": cur}},
        {"operation_identifier": {"index": 1}, "type": "token_transfer", "account": {"address": sender}, "amount": {"value": format!("-{amount}"), "currency": cur}, "metadata": {"memo": s("memo")}},
        {"operation_identifier": {"index": 2}, "type": "token_transfer", "account": {"address": recipient}, "amount": {"value": amount, "currency": cur}, "metadata": {"memo": s("memo")}},
    ]);
    let pk = json!({"hex_bytes": s("public_key"), "curve_type": "secp256k1"});

    let (st, derived) =
        post(server, &c("derive"), json!({"network_identifier": net, "public_key": pk})).await;
    assert_eq!((st, derived["account_identifier"]["address"].clone()), (200, json!(sender)));
    let (st, pre) =
        post(server, &c("preprocess"), json!({"network_identifier": net, "operations": ops})).await;
    assert_eq!(st, 200, "{pre}");
    assert_eq!(pre["options"]["sender_address"], json!(sender));
    let (st, payloads) = post(
        server,
        &c("payloads"),
        json!({"network_identifier": net, "operations": ops, "public_keys": [pk],
               "metadata": {"account_sequence": s("nonce").parse::<u64>().unwrap()}}),
    )
    .await;
    assert_eq!(st, 200, "{payloads}");
    assert_eq!(payloads["unsigned_transaction"], json!(s("unsigned_tx_hex")));
    assert_eq!(payloads["payloads"][0]["hex_bytes"], json!(s("signing_payload_hex")));
    let (st, parsed) = post(
        server,
        &c("parse"),
        json!({"network_identifier": net, "signed": false, "transaction": s("unsigned_tx_hex")}),
    )
    .await;
    assert_eq!(st, 200);
    assert_eq!(parsed["operations"].as_array().unwrap().len(), 3);
    assert!(parsed.get("account_identifier_signers").is_none());
    let sig = json!({"signing_payload": payloads["payloads"][0], "public_key": pk,
                     "signature_type": "ecdsa_recovery", "hex_bytes": s("signature_rsv")});
    let (st, combined) = post(
        server,
        &c("combine"),
        json!({"network_identifier": net, "unsigned_transaction": s("unsigned_tx_hex"), "signatures": [sig]}),
    )
    .await;
    assert_eq!((st, combined["signed_transaction"].clone()), (200, json!(s("signed_tx_hex"))));
    let (_, parsed) = post(
        server,
        &c("parse"),
        json!({"network_identifier": net, "signed": true, "transaction": s("signed_tx_hex")}),
    )
    .await;
    assert_eq!(parsed["account_identifier_signers"], json!([{"address": sender}]));
    let (st, hash) = post(
        server,
        &c("hash"),
        json!({"network_identifier": net, "signed_transaction": s("signed_tx_hex")}),
    )
    .await;
    assert_eq!((st, hash["transaction_identifier"]["hash"].clone()), (200, json!(s("txid"))));

    // online-only: listed errors, never a crash or a hang
    let (st, b) = post(
        server,
        &c("metadata"),
        json!({"network_identifier": net, "options": {"sender_address": sender, "size": 180}}),
    )
    .await;
    assert_eq!((st, b["code"].clone(), b["retriable"].clone()), (500, json!(646), json!(false)), "metadata");
    let (st, b) = post(
        server,
        &c("submit"),
        json!({"network_identifier": net, "signed_transaction": s("signed_tx_hex")}),
    )
    .await;
    assert_eq!((st, b["code"].clone()), (500, json!(646)), "submit");
    for data in [
        "/rosetta/v1/network/status",
        "/rosetta/v1/block",
        "/rosetta/v1/account/balance",
        "/rosetta/v1/mempool",
    ] {
        let (st, b) = post(server, data, json!({"network_identifier": net})).await;
        assert_eq!((st, b["code"].clone()), (500, json!(646)), "{data}");
    }
    let (st, b) = post(server, "/rosetta/v1/network/list", json!({})).await;
    assert_eq!((st, b["network_identifiers"][0]["network"].clone()), (200, json!(s("network"))));
    let (st, b) = post(server, "/rosetta/v1/network/options", json!({"network_identifier": net})).await;
    assert_eq!(st, 200, "{b}");
    assert!(b["allow"]["errors"].as_array().unwrap().iter().any(|e| e["code"] == 646));
    for url in ["/extended/v1/tx/mempool", "/v2/info", "/extended"] {
        let resp = reqwest::get(format!("{}{url}", server.base)).await.unwrap();
        assert_eq!(resp.status().as_u16(), 503, "{url}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["statusCode"], 503, "{url}");
    }
}

fn reference_transfer(network: &str) -> Option<Value> {
    let all = test_support::load_json("vectors/signing.json")?;
    all["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["kind"] == "transfer" && v["network"] == network)
        .cloned()
}

#[tokio::test]
async fn serve_mode_offline_walks_the_construction_flow_with_no_database_or_node() {
    let Some(v) = reference_transfer("testnet") else { return };
    let server = start(&["--mode", "offline"], &[], "testnet").await;
    walk_reference_transfer(&server, &v).await;
}

#[tokio::test]
async fn stacks_api_mode_offline_is_the_incumbents_switch() {
    let Some(v) = reference_transfer("mainnet") else { return };
    let server = start(&[], &[("STACKS_API_MODE", "offline")], "mainnet").await;
    walk_reference_transfer(&server, &v).await;
}
