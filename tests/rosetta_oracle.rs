//! Our Rosetta answers against the incumbent's, recorded after the same fixture
//! (`../shared/oracle/rosetta-*`): network list, blocks (identifiers, parents, timestamps,
//! metadata, transactions and their balance-moving operations), block transactions, account
//! balances (current and historical, with the next nonce) and the mempool. The intended
//! differences (docs/rosetta-deviations.md) are normalised here, each named.

mod common;

use std::sync::Arc;

use common::{replay, shared_file, Db, TestStore};
use serde_json::{json, Value};
use stacks_ledger::ledger::Network;

/// Calls whose lock event re-sends the stacker's whole locked amount, which the incumbent served
/// as the `stx_lock` amount where ours is the change of the locked balance: 0 for an extend
/// (it moves only the unlock height), the increase for an increase.
const EXTENDS: &[&str] = &["stack-extend", "delegate-stack-extend"];
const INCREASES: &[&str] = &["stack-increase", "delegate-stack-increase"];

/// How a transaction's `stx_lock` amount is compared.
#[derive(Clone, Copy, Default, PartialEq)]
enum Lock {
    /// As recorded (a stack-stx locks what its event says).
    #[default]
    AsRecorded,
    /// The recorded total is read as the change, 0 (extends).
    Unchanged,
    /// Not compared: the change is the increase, which no recording shows (increases).
    NotCompared,
}

/// Which documented deviations apply to one transaction, read from the incumbent's recording.
#[derive(Clone, Copy, Default)]
struct Deviations {
    lock: Lock,
    /// It failed: its fee is charged, so our `fee` operation is `success`; the incumbent gave it
    /// the transaction's failure status (uncounted by rosetta-cli).
    failed: bool,
}

fn deviations(recorded_tx: &Value) -> Deviations {
    let ops = recorded_tx["operations"].as_array().map(Vec::as_slice).unwrap_or_default();
    let calls = |names: &[&str]| {
        ops.iter().any(|o| {
            o["type"] == "contract_call" && names.iter().any(|f| o["metadata"]["function_name"] == *f)
        })
    };
    let lock = if calls(EXTENDS) {
        Lock::Unchanged
    } else if calls(INCREASES) {
        Lock::NotCompared
    } else {
        Lock::AsRecorded
    };
    let failed = ops
        .iter()
        .any(|o| o["type"] == "fee" && !matches!(o["status"].as_str(), Some("success" | "") | None));
    Deviations { lock, failed }
}

/// An operation as compared: type, status, account (with sub-account), amount, and the
/// metadata parsed from the payload (stacking calls, tenure changes). `recorded` marks the
/// incumbent's side, where the deviations are read as what we serve instead.
fn op_key(op: &Value, d: Deviations, recorded: bool) -> Value {
    let ty = op["type"].as_str().unwrap_or_default();
    let amount = match (ty, d.lock) {
        ("stx_lock", Lock::Unchanged) if recorded => json!("0"),
        ("stx_lock", Lock::NotCompared) => Value::Null,
        _ => op["amount"]["value"].clone(),
    };
    let status = if ty == "fee" && d.failed && recorded { json!("success") } else { op["status"].clone() };
    // Deviation: tenure_change has the sender as account here (the incumbent had none).
    let account = if ty == "tenure_change" { Value::Null } else { op["account"].clone() };
    let parsed = matches!(ty, "stack_stx" | "delegate_stx" | "revoke_delegate_stx" | "tenure_change");
    let metadata = if parsed { op["metadata"].clone() } else { Value::Null };
    json!([op["type"], status, account, amount, metadata])
}

/// The incumbent's operations, less what it got wrong on purpose-listed points.
fn their_ops(tx: &Value) -> Vec<Value> {
    let d = deviations(tx);
    tx["operations"].as_array().unwrap().iter().map(|o| op_key(o, d, true)).collect()
}

/// Our operations of the transaction the incumbent recorded as `recorded`.
fn our_ops(tx: &Value, recorded: &Value) -> Vec<Value> {
    let d = deviations(recorded);
    tx["operations"]
        .as_array()
        .unwrap()
        .iter()
        // Deviation: locks and unlocks also move the `locked` sub-account.
        .filter(|o| o["account"]["sub_account"].is_null())
        .map(|o| op_key(o, d, false))
        .collect()
}

fn tx_ids(block: &Value) -> Vec<Value> {
    block["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["transaction_identifier"]["hash"].clone())
        .collect()
}

async fn compare(db: Db, fixture: &str) {
    let Some(tsv) = shared_file(&format!("fixtures/{fixture}.tsv")) else { return };
    let Some(manifest) = shared_file(&format!("oracle/rosetta-{fixture}/manifest.jsonl")) else { return };
    let Some(ts) = TestStore::new(db, "rosetta_oracle", Network::Testnet).await else { return };
    replay(&ts.store, &tsv, &[]).await;
    let api = common::routes(Arc::clone(&ts.store));
    let (mut compared, mut blocks, mut balances) = (0, 0, 0);
    for line in std::fs::read_to_string(manifest).unwrap().lines() {
        let m: Value = serde_json::from_str(line).unwrap();
        let path = m["path"].as_str().unwrap();
        let tag = m["tag"].as_str().unwrap_or("");
        if m["status"] != 200 || path.contains("/construction/") || path.ends_with("/network/options") {
            continue;
        }
        // Deviations: index 0 is not the tip; index + hash of different blocks is an error.
        if tag == "genesis_index0" || tag == "mismatch" {
            continue;
        }
        let Some(want) =
            test_support::load_json(&format!("oracle/rosetta-{fixture}/{}", m["file"].as_str().unwrap()))
        else {
            return;
        };
        // Deviation: the boot block (block 0, merged into block 1) is not served on its own.
        if want["block"]["block_identifier"]["index"] == 0 {
            continue;
        }
        let body = if m["body"].is_null() { String::new() } else { m["body"].to_string() };
        let res = warp::test::request().method("POST").path(path).body(body).reply(&api).await;
        let got: Value = serde_json::from_slice(res.body()).unwrap();
        let label = format!("{db:?} {fixture} {path} {} {}", m["file"], m["body"]);
        assert_eq!(res.status(), 200, "{label}: {got}");
        compared += 1;
        match path {
            "/rosetta/v1/block" => {
                blocks += 1;
                let (w, g) = (&want["block"], &got["block"]);
                for f in ["block_identifier", "parent_block_identifier", "timestamp", "metadata"] {
                    assert_eq!(g[f], w[f], "{label}: {f}");
                }
                let (mut ours, mut theirs) = (tx_ids(g), tx_ids(w));
                if w["block_identifier"]["index"] == 1 {
                    // Deviation: block 1 (with the boot block's transactions merged in) may list
                    // them in another order than the incumbent; the same set.
                    let key = |v: &Value| v.as_str().unwrap().to_owned();
                    ours.sort_by_key(key);
                    theirs.sort_by_key(key);
                }
                assert_eq!(ours, theirs, "{label}: transactions");
                // Deviation: the incumbent skipped block 1's (genesis) events.
                if w["block_identifier"]["index"].as_i64() > Some(1) {
                    for (gt, wt) in g["transactions"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .zip(w["transactions"].as_array().unwrap())
                    {
                        assert_eq!(
                            our_ops(gt, wt),
                            their_ops(wt),
                            "{label}: tx {}",
                            wt["transaction_identifier"]
                        );
                    }
                }
            }
            "/rosetta/v1/block/transaction" => {
                // Deviation: ours is wrapped in `{transaction}` as the spec says.
                let g = &got["transaction"];
                assert_eq!(g["transaction_identifier"], want["transaction_identifier"], "{label}");
                if m["body"]["block_identifier"]["index"].as_i64() > Some(1) {
                    assert_eq!(our_ops(g, &want), their_ops(&want), "{label}");
                }
            }
            "/rosetta/v1/account/balance" => {
                balances += 1;
                assert_eq!(got, want, "{label}");
            }
            "/rosetta/v1/mempool/transaction" => {
                // Deviation: pending operations are `pending` (the incumbent sent an empty,
                // unlisted status) and carry no coin_change.
                let strip = |ops: Vec<Value>| -> Vec<Value> {
                    ops.into_iter()
                        .map(|mut k| {
                            k[1] = Value::Null;
                            k
                        })
                        .collect()
                };
                let (g, w) = (&got["transaction"], &want["transaction"]);
                assert_eq!(g["transaction_identifier"], w["transaction_identifier"], "{label}");
                assert_eq!(strip(our_ops(g, w)), strip(their_ops(w)), "{label}");
                assert!(
                    g["operations"].as_array().unwrap().iter().all(|o| o["status"] == "pending"),
                    "{label}"
                );
            }
            _ => assert_eq!(got, want, "{label}"),
        }
    }
    println!("{db:?} {fixture}: {compared} answers compared ({blocks} blocks, {balances} balances)");
    assert!(blocks > 0 && balances > 0, "{fixture}: nothing compared");
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_rosetta_matches_the_incumbent() {
    compare(Db::Sqlite, "mocknet").await;
    compare(Db::Sqlite, "epoch-3-transition").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_rosetta_matches_the_incumbent() {
    compare(Db::Postgres, "mocknet").await;
    compare(Db::Postgres, "epoch-3-transition").await;
}
