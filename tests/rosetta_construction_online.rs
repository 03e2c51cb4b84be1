//! `/construction/metadata` and `/construction/submit` against a fake node on loopback (it
//! checks the signature and the nonce as a node does) and the store on SQLite and PostgreSQL:
//! the nonce counts our mempool, submit returns the hash and records the tx in the mempool,
//! and a node rejection is a listed error.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use common::{Db, TestStore};
use serde_json::{json, Value};
use stacks_codec::sign::{sign_presign, verify_origin, vrs_to_rsv, PrivateKey};
use stacks_codec::tx::Transaction;
use stacks_ledger::ledger::Network;
use stacks_ledger::rosetta::construction::{routes, Context};
use stacks_node_proxy::NodeClient;
use warp::Filter;

/// A node that accepts a transaction only if it verifies and carries the next nonce.
async fn fake_node() -> (String, Arc<AtomicU64>) {
    let next = Arc::new(AtomicU64::new(0));
    let n = Arc::clone(&next);
    let accounts = warp::path!("v2" / "accounts" / String)
        .map(|_addr: String| warp::reply::json(&json!({"nonce": 0, "balance": "0x0"})));
    let fees = warp::path!("v2" / "fees" / "transfer").map(|| warp::reply::json(&json!(2)));
    let broadcast = warp::path!("v2" / "transactions").and(warp::post()).and(warp::body::bytes()).map(
        move |body: bytes::Bytes| {
            let tx = Transaction::deserialize(&body).expect("a transaction");
            let txid = hex::encode(tx.txid());
            let reject = |reason: &str| {
                warp::reply::with_status(
                    warp::reply::json(
                        &json!({"error": "transaction rejected", "reason": reason, "txid": txid}),
                    ),
                    warp::http::StatusCode::BAD_REQUEST,
                )
            };
            if verify_origin(&tx).is_err() {
                return reject("SignatureValidation");
            }
            if tx.nonce() != n.load(Ordering::SeqCst) {
                return reject("BadNonce");
            }
            n.fetch_add(1, Ordering::SeqCst);
            warp::reply::with_status(warp::reply::json(&json!(txid)), warp::http::StatusCode::OK)
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(warp::serve(accounts.or(fees).or(broadcast)).incoming(listener).run());
    (url, next)
}

async fn flow(db: Db) {
    let network = Network::Testnet;
    let Some(ts) = TestStore::new(db, "construction_online", network).await else { return };
    let (node_url, accepted) = fake_node().await;
    let api = routes(Context::online(
        network,
        Arc::clone(&ts.store) as _,
        Arc::clone(&ts.store) as _,
        Some(NodeClient::new(node_url.parse().unwrap())),
    ));
    let post = |endpoint: &str, body: Value| {
        let api = api.clone();
        let path = format!("/rosetta/v1/construction/{endpoint}");
        async move {
            let r = warp::test::request().method("POST").path(&path).json(&body).reply(&api).await;
            (r.status().as_u16(), serde_json::from_slice::<Value>(r.body()).unwrap())
        }
    };
    let net = json!({"blockchain": "stacks", "network": "testnet"});
    let key = PrivateKey::from_slice(&[7u8; 32]).unwrap();
    let pk = json!({"hex_bytes": hex::encode(key.public_key().as_bytes()), "curve_type": "secp256k1"});
    let sender = post("derive", json!({"network_identifier": net, "public_key": pk})).await.1
        ["account_identifier"]["address"]
        .as_str()
        .unwrap()
        .to_owned();
    let recipient = "ST2ZRX0K27GW0SP3GJCEMHD95TQGJMKB7G9Y0X1MH";
    let cur = json!({"symbol": "STX", "decimals": 6});
    let ops = json!([
        {"operation_identifier": {"index": 0}, "type": "token_transfer", "account": {"address": sender}, "amount": {"value": "-500", "currency": cur}},
        {"operation_identifier": {"index": 1}, "type": "token_transfer", "account": {"address": recipient}, "amount": {"value": "500", "currency": cur}},
    ]);
    let mut txids = Vec::new();
    for round in 0..2u64 {
        let (_, pre) = post("preprocess", json!({"network_identifier": net, "operations": ops})).await;
        let (st, meta) = post(
            "metadata",
            json!({"network_identifier": net, "options": pre["options"], "public_keys": [pk]}),
        )
        .await;
        assert_eq!(st, 200, "{meta}");
        // the node still says 0: the second nonce comes from our mempool
        assert_eq!(meta["metadata"]["account_sequence"], json!(round), "{db:?}");
        let size = pre["options"]["size"].as_u64().unwrap();
        assert_eq!(
            meta["suggested_fee"][0]["value"],
            json!((2 * size).to_string()),
            "fee = node rate × size"
        );
        let (st, payloads) = post("payloads", json!({"network_identifier": net, "operations": ops, "public_keys": [pk], "metadata": meta["metadata"]})).await;
        assert_eq!(st, 200, "{payloads}");
        let digest: [u8; 32] =
            hex::decode(payloads["payloads"][0]["hex_bytes"].as_str().unwrap()).unwrap().try_into().unwrap();
        let (vrs, _) = sign_presign(digest, &key);
        let sig = json!({"signing_payload": payloads["payloads"][0], "public_key": pk, "signature_type": "ecdsa_recovery", "hex_bytes": hex::encode(vrs_to_rsv(&vrs))});
        let (_, combined) = post("combine", json!({"network_identifier": net, "unsigned_transaction": payloads["unsigned_transaction"], "signatures": [sig]})).await;
        let signed = combined["signed_transaction"].clone();
        let (_, hash) = post("hash", json!({"network_identifier": net, "signed_transaction": signed})).await;
        let (st, submitted) =
            post("submit", json!({"network_identifier": net, "signed_transaction": signed})).await;
        assert_eq!(st, 200, "{submitted}");
        assert_eq!(submitted["transaction_identifier"], hash["transaction_identifier"], "hash = submit");
        txids.push(hash["transaction_identifier"]["hash"].as_str().unwrap().to_owned());
        // a second broadcast of the same tx: the node refuses its nonce
        let (st, again) =
            post("submit", json!({"network_identifier": net, "signed_transaction": signed})).await;
        assert_eq!((st, again["code"].clone()), (500, json!(660)), "{again}");
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
    let mut mempool = ts.store.mempool_tx_ids().await.unwrap();
    mempool.sort();
    txids.sort();
    assert_eq!(mempool, txids, "{db:?}: submitted txs are in our mempool");
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_metadata_and_submit() {
    flow(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_metadata_and_submit() {
    flow(Db::Postgres).await;
}
