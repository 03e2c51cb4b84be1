//! The Rosetta error table is pinned: codes, messages and `retriable` flags equal the golden
//! file (601–645 are the incumbent's codes and messages), `/network/options` lists every error,
//! and each error path answers HTTP 500 with a listed `Error` body.

mod common;

use std::sync::Arc;

use common::{Db, TestStore};
use rosetta_spec::ErrorCatalog;
use serde_json::{json, Value};
use stacks_ledger::ledger::Network;
use stacks_ledger::rosetta::{ErrorKind, RosettaError};

fn golden() -> Value {
    serde_json::from_str(include_str!("golden/rosetta-errors.json")).unwrap()
}

#[test]
fn error_table_equals_the_golden_file() {
    let table = serde_json::to_value(RosettaError::catalog()).unwrap();
    assert_eq!(table, golden());
    assert_eq!(RosettaError::check_catalog(), Ok(()));
}

#[test]
fn incumbent_codes_keep_their_messages() {
    // The incumbent's table as recorded by the oracle: same codes and messages (its retriable
    // flags differ where they were wrong; see docs/rosetta-deviations.md).
    let Some(options) = test_support::load_json("oracle/rosetta-mocknet/0003.json") else { return };
    let ours = RosettaError::catalog();
    for e in options["allow"]["errors"].as_array().unwrap() {
        let code = e["code"].as_i64().unwrap() as i32;
        let mine = ours.iter().find(|o| o.code == code).unwrap_or_else(|| panic!("code {code} missing"));
        assert_eq!(mine.message, e["message"].as_str().unwrap(), "code {code}");
    }
    let changed: Vec<i32> = options["allow"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            ours.iter().any(|o| o.code as i64 == e["code"].as_i64().unwrap() && o.retriable != e["retriable"])
        })
        .map(|e| e["code"].as_i64().unwrap() as i32)
        .collect();
    assert_eq!(changed, [601, 606, 608, 616], "retriable flags changed on purpose");
}

async fn post(
    api: &(impl warp::Filter<Extract = (impl warp::Reply,), Error = std::convert::Infallible> + Clone + 'static),
    path: &str,
    body: &str,
) -> (u16, Value) {
    let res = warp::test::request().method("POST").path(path).body(body).reply(api).await;
    (res.status().as_u16(), serde_json::from_slice(res.body()).unwrap_or(Value::Null))
}

async fn errors_are_listed_and_500(db: Db) {
    let Some(ts) = TestStore::new(db, "rosetta_errors", Network::Testnet).await else { return };
    let api = common::routes(Arc::clone(&ts.store));
    let net = r#"{"network_identifier":{"blockchain":"stacks","network":"testnet"}}"#;
    let (status, options) = post(&api, "/rosetta/v1/network/options", net).await;
    assert_eq!(status, 200);
    assert_eq!(options["allow"]["errors"], golden(), "allow.errors lists every error, without details");
    assert_eq!(options["version"]["rosetta_version"], "1.4.6");

    let (status, list) = post(&api, "/rosetta/v1/network/list", "").await;
    assert_eq!(
        (status, list),
        (200, json!({"network_identifiers": [{"blockchain": "stacks", "network": "testnet"}]}))
    );

    let acct = |a: &str| {
        format!(
            r#"{{"network_identifier":{{"blockchain":"stacks","network":"testnet"}},"account_identifier":{{"address":"{a}"}}}}"#
        )
    };
    let cases: Vec<(&str, String, ErrorKind)> = vec![
        ("/rosetta/v1/network/status", "not json".into(), ErrorKind::MalformedRequest),
        ("/rosetta/v1/network/status", "{}".into(), ErrorKind::NetworkIdentifierNull),
        ("/rosetta/v1/network/status", r#"{"network_identifier":{"blockchain":"stacks","network":"mainnet"}}"#.into(), ErrorKind::InvalidNetwork),
        ("/rosetta/v1/network/status", r#"{"network_identifier":{"blockchain":"bitcoin","network":"testnet"}}"#.into(), ErrorKind::InvalidBlockchain),
        ("/rosetta/v1/network/status", net.into(), ErrorKind::BlockNotFound),
        ("/rosetta/v1/block", net.into(), ErrorKind::BlockIdentifierNull),
        ("/rosetta/v1/block", r#"{"network_identifier":{"blockchain":"stacks","network":"testnet"},"block_identifier":{"hash":"xyz"}}"#.into(), ErrorKind::InvalidBlockHash),
        ("/rosetta/v1/block", r#"{"network_identifier":{"blockchain":"stacks","network":"testnet"},"block_identifier":{"index":5}}"#.into(), ErrorKind::BlockNotFound),
        ("/rosetta/v1/account/balance", net.into(), ErrorKind::AccountIdentifierNull),
        ("/rosetta/v1/account/balance", acct("INVALID"), ErrorKind::InvalidAccount),
        ("/rosetta/v1/account/coins", r#"{"network_identifier":{"blockchain":"stacks","network":"testnet"},"account_identifier":{"address":"ST16G69GQBDPMRY6308JN0GDTYF265JX3KQ6C0VEH"},"include_mempool":false}"#.to_string(), ErrorKind::CoinsUnsupported),
        ("/rosetta/v1/mempool/transaction", format!(r#"{{"network_identifier":{{"blockchain":"stacks","network":"testnet"}},"transaction_identifier":{{"hash":"0x{}"}}}}"#, "ab".repeat(32)), ErrorKind::TransactionNotFound),
        ("/rosetta/v1/call", r#"{"network_identifier":{"blockchain":"stacks","network":"testnet"},"method":"x","parameters":{}}"#.into(), ErrorKind::UnknownCallMethod),
        ("/rosetta/v1/no-such-endpoint", net.into(), ErrorKind::UnknownEndpoint),
        // Under the construction table's prefix but none of its endpoints: Rosetta's answer.
        ("/rosetta/v1/construction/no-such-endpoint", net.into(), ErrorKind::UnknownEndpoint),
        ("/rosetta/v1/construction/derive/more", net.into(), ErrorKind::UnknownEndpoint),
    ];
    for (path, body, kind) in cases {
        let (status, err) = post(&api, path, &body).await;
        assert_eq!(status, 500, "{path} {body}: {err}");
        assert_eq!(err["code"], kind.code(), "{path} {body}: {err}");
        assert_eq!(err["message"], kind.message());
        assert_eq!(err["retriable"], kind.retriable());
        let listed = golden().as_array().unwrap().iter().any(|g| g["code"] == err["code"]);
        assert!(listed, "{err}");
    }
    // Another method on a Rosetta path is a Rosetta error too, never the /extended 404.
    for path in ["/rosetta/v1/network/list", "/rosetta/v1/construction/derive"] {
        let res = warp::test::request().method("GET").path(path).reply(&api).await;
        assert_eq!(res.status(), 500, "{path}");
        let body: Value = serde_json::from_slice(res.body()).unwrap();
        assert_eq!(body["code"], ErrorKind::UnknownEndpoint.code(), "{path}");
    }
    ts.finish().await;
}

#[tokio::test]
async fn sqlite_errors_are_listed_and_500() {
    errors_are_listed_and_500(Db::Sqlite).await;
}

#[tokio::test]
async fn postgres_errors_are_listed_and_500() {
    errors_are_listed_and_500(Db::Postgres).await;
}
