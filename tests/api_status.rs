//! End to end: ingest a fixture, then `GET /extended` through the public route table answers
//! what the incumbent answered after the same fixture (but for the server version), with the
//! same chain-tip ETag; unknown URLs get the spec's 404.

mod common;

use std::sync::Arc;

use common::{replay, shared_file, Db, TestStore};
use serde_json::Value;
use stacks_ledger::ledger::Network;

async fn status_matches_oracle(db: Db, fixture: &str, network: Network) {
    let Some(tsv) = shared_file(&format!("fixtures/{fixture}.tsv")) else { return };
    let Some(oracle) = test_support::load_json(&format!("oracle/{fixture}/0002.json")) else { return };
    let Some(manifest) = shared_file(&format!("oracle/{fixture}/manifest.jsonl")) else { return };
    let recorded: Value = std::fs::read_to_string(manifest)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["path"] == "/extended")
        .expect("the manifest records GET /extended");
    let Some(ts) = TestStore::new(db, "api_status", network).await else { return };
    replay(&ts.store, &tsv, &[]).await;
    let api = common::routes(Arc::clone(&ts.store));

    let res = warp::test::request().path("/extended").reply(&api).await;
    assert_eq!(res.status(), 200);
    let mut body: Value = serde_json::from_slice(res.body()).unwrap();
    assert_eq!(body["server_version"], stacks_extended::SERVER_VERSION);
    body["server_version"] = oracle["server_version"].clone();
    assert_eq!(body, oracle, "{db:?} {fixture}");
    assert_eq!(res.headers()["etag"], recorded["headers"]["etag"].as_str().unwrap(), "{db:?} {fixture}");

    let etag = res.headers()["etag"].clone();
    let res = warp::test::request().path("/extended").header("if-none-match", etag).reply(&api).await;
    assert_eq!(res.status(), 304);

    let res = warp::test::request().path("/extended/v1/nothing-here?limit=3").reply(&api).await;
    assert_eq!(res.status(), 404);
    let body: Value = serde_json::from_slice(res.body()).unwrap();
    assert_eq!(body["reference"], "/extended/v1/nothing-here?limit=3");
    assert_eq!(body["statusCode"], 404);
    // Every recorded status request, redirect and unknown URL answers as the incumbent did.
    let select = |e: &test_support::oracle::OracleEntry| {
        matches!(e.path.as_str(), "/" | "/extended" | "/extended/" | "/extended/v1/status")
            || e.path.contains("does-not-exist")
            || e.path.contains("/nope")
    };
    let report =
        common::parity::check_parity(&api, fixture, select, &common::parity_allow::ignored_keys("/extended"))
            .await
            .unwrap();
    report.assert_all_match();
    ts.finish().await;
}

use common::ORACLE_FIXTURES as FIXTURES;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_status_matches_the_oracle_on_every_fixture() {
    for (fixture, network) in FIXTURES {
        status_matches_oracle(Db::Sqlite, fixture, network).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_status_matches_the_oracle_on_every_fixture() {
    for (fixture, network) in FIXTURES {
        status_matches_oracle(Db::Postgres, fixture, network).await;
    }
}
