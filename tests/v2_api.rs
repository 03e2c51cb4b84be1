//! End to end: `/v2` through the public route table. Ingest a fixture, then the ledger's
//! `/v2/accounts`, `/v2/info` and `/v2/contracts/*` answers equal what the incumbent's ledger
//! recorded after the same fixture (its `/extended` balances, nonces, status and contracts), and
//! the store's own balances and the Rosetta `/account/balance` at the same tip; proof and tip
//! semantics; call-read validation without a node.

mod common;

use ledger_read::TipReader;
use std::sync::Arc;

use common::{replay, shared_file, Db, TestStore};
use serde_json::Value;
use stacks_ledger::ledger::Network;
use stacks_ledger::v2::{PROOF_HEADER, SOURCE_HEADER};

use common::ORACLE_FIXTURES as FIXTURES;

/// The recorded incumbent answers of a fixture, as `(url, status, body)`.
fn oracle(fixture: &str) -> Option<Vec<(String, u16, Value)>> {
    let manifest = shared_file(&format!("oracle/{fixture}/manifest.jsonl"))?;
    let mut out = Vec::new();
    for line in std::fs::read_to_string(manifest).unwrap().lines() {
        let e: Value = serde_json::from_str(line).unwrap();
        if e["method"] != "GET" {
            continue;
        }
        // Only answers that are JSON (some recorded bodies are plain text).
        let file = shared_file(&format!("oracle/{fixture}/{}", e["file"].as_str().unwrap()))?;
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let Ok(body) = serde_json::from_str::<Value>(&text) else { continue };
        out.push((e["url"].as_str().unwrap().to_owned(), e["status"].as_u64().unwrap() as u16, body));
    }
    Some(out)
}

fn hex_u128(v: &Value) -> u128 {
    u128::from_str_radix(v.as_str().unwrap().strip_prefix("0x").unwrap(), 16).unwrap()
}

fn dec(v: &Value) -> i128 {
    v.as_str().unwrap().parse().unwrap()
}

async fn get(
    api: &(impl warp::Filter<Extract = (impl warp::Reply,), Error = std::convert::Infallible> + Clone + 'static),
    path: &str,
) -> (u16, warp::http::HeaderMap, Value) {
    let res = warp::test::request().path(path).reply(api).await;
    let body = serde_json::from_slice(res.body()).unwrap_or(Value::Null);
    (res.status().as_u16(), res.headers().clone(), body)
}

async fn post(
    api: &(impl warp::Filter<Extract = (impl warp::Reply,), Error = std::convert::Infallible> + Clone + 'static),
    path: &str,
    body: &Value,
) -> (u16, Value) {
    let res = warp::test::request().method("POST").path(path).json(body).reply(api).await;
    (res.status().as_u16(), serde_json::from_slice(res.body()).unwrap_or(Value::Null))
}

/// The Rosetta `/account/balance` of `address` (or its `locked` sub-account) at the tip: the
/// amount, the block height it was taken at and the `sequence_number`.
async fn rosetta_balance(
    api: &(impl warp::Filter<Extract = (impl warp::Reply,), Error = std::convert::Infallible> + Clone + 'static),
    network: Network,
    address: &str,
    locked: bool,
) -> (i128, i64, i64) {
    let mut account = serde_json::json!({ "address": address });
    if locked {
        account["sub_account"] = serde_json::json!({ "address": "locked" });
    }
    let request = serde_json::json!({
        "network_identifier": { "blockchain": "stacks", "network": network.as_str() },
        "account_identifier": account,
    });
    let (status, body) = post(api, "/rosetta/v1/account/balance", &request).await;
    assert_eq!(status, 200, "{address}: {body}");
    (
        dec(&body["balances"][0]["value"]),
        body["block_identifier"]["index"].as_i64().unwrap(),
        body["metadata"]["sequence_number"].as_i64().unwrap(),
    )
}

/// Counts of what each fixture compared, so a test that compares nothing fails.
#[derive(Default, Debug)]
struct Compared {
    accounts: usize,
    rosetta: usize,
    negative: usize,
    contracts: usize,
    /// Boot addresses whose /v2 nonce (0) and /extended nonces (the incumbent's) were both held.
    boot: usize,
}

async fn ledger_answers_match(db: Db, fixture: &str, network: Network) -> Option<Compared> {
    let tsv = shared_file(&format!("fixtures/{fixture}.tsv"))?;
    let recorded = oracle(fixture)?;
    let ts = TestStore::new(db, "v2_api", network).await?;
    replay(&ts.store, &tsv, &[]).await;
    let api = common::routes(Arc::clone(&ts.store));
    let mut compared = Compared::default();

    // /v2/info against the incumbent's /extended status and the store's tip.
    let status = recorded.iter().find(|(u, _, _)| u == "/extended").map(|(_, _, b)| b.clone()).unwrap();
    let tip = ts.store.tip().await.unwrap().map(|t| t.block).unwrap();
    let (code, headers, info) = get(&api, "/v2/info").await;
    assert_eq!(code, 200, "{db:?} {fixture}: {info}");
    assert_eq!(headers[SOURCE_HEADER], "ledger");
    assert_eq!(info["stacks_tip_height"], status["chain_tip"]["block_height"], "{db:?} {fixture}");
    assert_eq!(
        format!("0x{}", info["stacks_tip"].as_str().unwrap()),
        status["chain_tip"]["block_hash"].as_str().unwrap(),
        "{db:?} {fixture}"
    );
    assert_eq!(info["stacks_tip_height"], tip.block_height);
    assert!(info["burn_block_height"].as_i64().unwrap() >= tip.burn_block_height, "{db:?} {fixture}");
    assert_eq!(info["network_id"], network.chain_id());
    assert_eq!(info["burn_consensus"], info["pox_consensus"]);
    assert_eq!(info["stable_burn_consensus"], info["stable_pox_consensus"]);
    assert_eq!(info["stacks_tip_burn_block"], info["stacks_tip_consensus_hash"]);
    for field in ["peer_version", "parent_network_id", "server_version", "genesis_chainstate_hash"] {
        assert!(!info[field].is_null(), "{field}");
    }

    for (url, code, body) in &recorded {
        // /v2/accounts against the incumbent's /extended/v1/address/{a}/stx and /nonces, and the
        // store's own balance.
        if let Some(address) = url.strip_prefix("/extended/v1/address/").and_then(|r| r.strip_suffix("/stx"))
        {
            if *code != 200 {
                continue;
            }
            let (status, headers, account) = get(&api, &format!("/v2/accounts/{address}?proof=0")).await;
            assert_eq!(status, 200, "{db:?} {fixture} {address}: {account}");
            assert_eq!(headers[SOURCE_HEADER], "ledger");
            assert!(headers.get(PROOF_HEADER).is_none(), "proof=0 asked for no proof");
            let (locked, total) = (dec(&body["locked"]), dec(&body["balance"]));
            let (liquid, store_locked) = ts.store.balance(address, None).await.unwrap();
            // A u128 cannot be negative: a negative ledger balance (the incumbent and the store
            // agree on one in a reorg fixture) is answered as 0.
            assert_eq!(hex_u128(&account["balance"]), liquid.max(0) as u128);
            assert_eq!(hex_u128(&account["locked"]), store_locked as u128);
            // Rosetta at the same tip: the same liquid and locked amounts and the same nonce.
            let (r_liquid, r_height, r_nonce) = rosetta_balance(&api, network, address, false).await;
            let (r_locked, _, _) = rosetta_balance(&api, network, address, true).await;
            assert_eq!(r_height, tip.block_height, "{db:?} {fixture} {address}");
            assert_eq!(hex_u128(&account["balance"]) as i128, r_liquid.max(0), "{db:?} {fixture} {address}");
            assert_eq!(hex_u128(&account["locked"]) as i128, r_locked, "{db:?} {fixture} {address}");
            let boot = stacks_ledger::ledger::is_boot_address(address);
            if boot {
                // The node never bumps the boot address's nonce (its boot deploys run outside
                // the transaction path); Rosetta and /extended count those deploys.
                assert_eq!(account["nonce"], 0, "{db:?} {fixture} {address}");
                assert!(r_nonce >= 1, "{db:?} {fixture} {address}: {r_nonce}");
            } else {
                assert_eq!(account["nonce"], r_nonce, "{db:?} {fixture} {address}");
            }
            compared.rosetta += 1;
            if total < 0 {
                assert_eq!(
                    i128::from(liquid) + i128::from(store_locked),
                    total,
                    "{db:?} {fixture} {address}"
                );
                println!("{fixture} {address}: negative balance {total} (incumbent and store)");
                compared.negative += 1;
                continue;
            }
            assert_eq!(hex_u128(&account["locked"]) as i128, locked, "{db:?} {fixture} {address}");
            assert_eq!(hex_u128(&account["balance"]) as i128, total - locked, "{db:?} {fixture} {address}");
            let expected_unlock =
                if locked == 0 { 0 } else { body["burnchain_unlock_height"].as_i64().unwrap() };
            assert_eq!(account["unlock_height"], expected_unlock, "{db:?} {fixture} {address}");
            let nonces = recorded
                .iter()
                .find(|(u, c, _)| *c == 200 && *u == format!("/extended/v1/address/{address}/nonces"));
            if let Some((url, _, n)) = nonces {
                let expected = n["last_executed_tx_nonce"].as_i64().map_or(0, |x| x + 1);
                if boot {
                    // /extended keeps the incumbent's count of the boot deploys.
                    let (status, _, ours) = get(&api, url).await;
                    assert_eq!(status, 200, "{db:?} {fixture} {url}");
                    assert_eq!(&ours, n, "{db:?} {fixture} {url}");
                    assert!(expected >= 1, "{db:?} {fixture} {url}: {n}");
                    compared.boot += 1;
                } else {
                    assert_eq!(account["nonce"], expected, "{db:?} {fixture} {address}");
                }
            }
            assert_eq!(account["balance"].as_str().unwrap().len(), 34, "0x + 32 hex digits");
            assert!(account.get("balance_proof").is_none());
            compared.accounts += 1;
        }
        // /v2/contracts/{source,interface} against the incumbent's /extended/v1/contract/{id}.
        if let Some(id) = url.strip_prefix("/extended/v1/contract/").filter(|r| !r.contains('/')) {
            let Some((address, name)) = id.split_once('.') else { continue };
            if *code != 200 {
                continue;
            }
            let (status, headers, source) =
                get(&api, &format!("/v2/contracts/source/{address}/{name}?proof=0")).await;
            assert_eq!(status, 200, "{db:?} {fixture} {id}: {source}");
            assert_eq!(source["source"], body["source_code"], "{db:?} {fixture} {id}");
            assert_eq!(source["publish_height"], body["block_height"], "{db:?} {fixture} {id}");
            assert!(headers.get(PROOF_HEADER).is_none());
            if let Some(abi) = body["abi"].as_str() {
                let (status, _, interface) =
                    get(&api, &format!("/v2/contracts/interface/{address}/{name}")).await;
                assert_eq!(status, 200, "{db:?} {fixture} {id}");
                assert_eq!(interface, serde_json::from_str::<Value>(abi).unwrap(), "{db:?} {fixture} {id}");
            }
            compared.contracts += 1;
        }
    }
    ts.finish().await;
    Some(compared)
}

async fn all_fixtures(db: Db) {
    let mut total = Compared::default();
    for (fixture, network) in FIXTURES {
        if let Some(c) = ledger_answers_match(db, fixture, network).await {
            println!("{db:?} {fixture}: {c:?}");
            total.accounts += c.accounts;
            total.rosetta += c.rosetta;
            total.negative += c.negative;
            total.contracts += c.contracts;
            total.boot += c.boot;
        }
    }
    if shared_file("fixtures/mocknet.tsv").is_some() && (db == Db::Sqlite || common::pg_admin_url().is_some())
    {
        assert!(total.accounts >= 10, "{total:?}");
        assert_eq!(total.rosetta, total.accounts + total.negative, "{total:?}");
        assert!(total.contracts >= 5, "{total:?}");
        assert!(total.boot >= 1, "{total:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_ledger_answers_equal_the_incumbents_ledger() {
    all_fixtures(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_ledger_answers_equal_the_incumbents_ledger() {
    all_fixtures(Db::Postgres).await;
}

/// Proof and tip semantics, the transfer fee, unknown routes and call-read without a node.
async fn no_node_semantics(db: Db) {
    let Some(tsv) = shared_file("fixtures/mocknet.tsv") else { return };
    let Some(ts) = TestStore::new(db, "v2_semantics", Network::Testnet).await else { return };
    replay(&ts.store, &tsv, &[]).await;
    let api = common::routes(Arc::clone(&ts.store));
    let address = "ST000000000000000000002AMW42H";

    // Default: proofs requested, answered without them, and the header says so.
    let (status, headers, body) = get(&api, &format!("/v2/accounts/{address}")).await;
    assert_eq!(status, 200);
    assert!(headers.get(PROOF_HEADER).is_some());
    assert!(body.get("balance_proof").is_none() && body.get("nonce_proof").is_none());
    let (_, _, zero) = get(&api, &format!("/v2/accounts/{address}?proof=0")).await;
    assert_eq!(body, zero);
    // Explicit proof: only a node can.
    let (status, headers, body) = get(&api, &format!("/v2/accounts/{address}?proof=1")).await;
    assert_eq!(status, 503, "{body}");
    assert!(body["message"].as_str().unwrap().contains("proof=1"));
    assert!(headers.get(SOURCE_HEADER).is_none());
    // Another tip: only a node can.
    let (status, _, _) = get(&api, &format!("/v2/accounts/{address}?proof=0&tip=0x1234")).await;
    assert_eq!(status, 503);
    let tip = ts.store.tip().await.unwrap().map(|t| t.block).unwrap();
    let (status, _, _) = get(
        &api,
        &format!("/v2/accounts/{address}?proof=0&tip={}", tip.index_block_hash.trim_start_matches("0x")),
    )
    .await;
    assert_eq!(status, 200);
    // A never-seen account is empty, as the node says.
    let (status, _, body) =
        get(&api, "/v2/accounts/ST1HB1T8WRNBYB0Y3T7WXZS38NKKPTBR3EG9EPJKR.nothing?proof=0").await;
    assert_eq!(status, 200);
    assert_eq!(body["balance"], format!("0x{}", "0".repeat(32)));
    assert_eq!(body["nonce"], 0);
    // Invalid principal: the seed's invalid-input error.
    let (status, _, body) = get(&api, "/v2/accounts/not-an-address").await;
    assert_eq!(status, 500);
    assert!(body["error"].as_str().unwrap().contains("principal"), "{body}");
    assert!(body["errorTag"].is_string() && body["stack"].is_string());

    let res = warp::test::request().path("/v2/fees/transfer").reply(&api).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.body().as_ref(), b"1");

    let (status, _, body) =
        get(&api, "/v2/contracts/source/ST000000000000000000002AMW42H/no-such-contract?proof=0").await;
    assert_eq!(status, 404, "{body}");

    // Routes only a node answers: a 503 naming the request, never the generic 404.
    let (status, _, body) = get(&api, "/v2/map_entry/x/y/z").await;
    assert_eq!(status, 503);
    assert!(body["message"].as_str().unwrap().contains("/v2/map_entry/x/y/z"));
    let res =
        warp::test::request().method("POST").path("/v2/transactions").body(vec![0u8; 10]).reply(&api).await;
    assert_eq!(res.status(), 503);

    // call-read: validated, then 503 (a Clarity VM is needed).
    let call = "/v2/contracts/call-read/ST000000000000000000002AMW42H/pox/get-pox-info";
    let post = |body: String| {
        warp::test::request().method("POST").path(call).header("content-type", "application/json").body(body)
    };
    let res =
        post(format!(r#"{{"sender":"{address}","arguments":["0x0100000000000000000000000000000001"]}}"#))
            .reply(&api)
            .await;
    assert_eq!(res.status(), 503);
    for (body, param) in [
        (r#"{"sender":"nope","arguments":[]}"#.to_string(), "sender"),
        (format!(r#"{{"sender":"{address}","arguments":["0x07"]}}"#), "arguments"),
        (format!(r#"{{"sender":"{address}.pox","arguments":"x"}}"#), "arguments"),
    ] {
        let res = post(body.clone()).reply(&api).await;
        assert_eq!(res.status(), 500, "{body}");
        let err: Value = serde_json::from_slice(res.body()).unwrap();
        assert!(err["error"].as_str().unwrap().contains(param), "{body}: {err}");
    }
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_no_node_semantics() {
    no_node_semantics(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_no_node_semantics() {
    no_node_semantics(Db::Postgres).await;
}
