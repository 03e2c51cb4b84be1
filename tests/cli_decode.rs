//! End to end: the `stacks-ledger` binary decodes the reference vectors into the JSON the
//! reference decoder gives, and fails cleanly on garbage.

use std::process::Command;

use serde_json::Value as Json;

fn cli(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_stacks-ledger")).args(args).output().expect("binary runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn json_out(args: &[&str]) -> Json {
    let (ok, stdout, stderr) = cli(args);
    assert!(ok, "{args:?} failed: {stderr}");
    serde_json::from_str(&stdout).expect("stdout is JSON")
}

#[test]
fn decode_tx_matches_the_reference_decoder() {
    let Some(doc) = test_support::load_json("vectors/transactions.json") else { return };
    let mut checked = 0;
    for t in doc["transactions"].as_array().unwrap().iter().filter(|t| t["native"]["ok"] == true).take(12) {
        let hex = t["hex"].as_str().unwrap();
        assert_eq!(
            json_out(&["decode-tx", "--format", "native", hex]),
            t["native"]["decoded"],
            "{}",
            t["name"]
        );
        let api = json_out(&["decode-tx", hex]);
        assert_eq!(api["tx_id"], t["txid"], "{}", t["name"]);
        assert!(api["tx_type"].is_string(), "{}: api shape has tx_type", t["name"]);
        checked += 1;
    }
    assert_eq!(checked, 12);
}

#[test]
fn decode_clarity_matches_the_reference_decoder() {
    let Some(doc) = test_support::load_json("vectors/clarity.json") else { return };
    for v in doc["vectors"].as_array().unwrap().iter().step_by(16) {
        let hex = v["hex"].as_str().unwrap();
        let api = json_out(&["decode-clarity", hex]);
        assert_eq!(api["repr"], v["repr"], "{}", v["name"]);
        assert_eq!(api["type"], v["type"], "{}", v["name"]);
        assert_eq!(api["hex"], v["hex"], "{}", v["name"]);
        assert_eq!(json_out(&["decode-clarity", "--format", "native", hex]), v["decoded"], "{}", v["name"]);
    }
}

#[test]
fn garbage_is_a_clear_error_not_a_panic() {
    for args in [
        ["decode-tx", "0x00"],
        ["decode-tx", "zz"],
        ["decode-clarity", "0x0bffffffff"],
        ["decode-clarity", "0x0f"],
    ] {
        let (ok, stdout, stderr) = cli(&args);
        assert!(!ok, "{args:?} must fail");
        assert!(stdout.is_empty(), "{args:?} printed {stdout}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
