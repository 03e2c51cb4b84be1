//! End to end: `stacks-ledger devnet` writes a replayable, deterministic TSV event log, and
//! refuses to run without a destination.

use std::process::Command;

use stacks_ledger::events::{EventPath, EventPayload, TsvReader};

fn devnet(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_stacks-ledger")).arg("devnet").args(args).output().expect("binary runs")
}

#[test]
fn writes_a_deterministic_parseable_log() {
    let dir = std::env::temp_dir().join(format!("stacks-ledger-devnet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |name: &str| {
        let path = dir.join(name);
        let out = devnet(&[
            "--seed",
            "11",
            "--blocks",
            "12",
            "--txs-per-block",
            "4",
            "--accounts",
            "6",
            "--forks",
            "--microblocks",
            "--out",
            path.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stderr).contains("height 12"));
        std::fs::read(path).unwrap()
    };
    let (a, b) = (run("a.tsv"), run("b.tsv"));
    assert_eq!(a, b);
    let mut blocks = 0;
    for (i, event) in TsvReader::new(&a[..]).enumerate() {
        let event = event.unwrap();
        assert_eq!(event.id, i as i64 + 1);
        let path = EventPath::from_path(&event.path).unwrap();
        if let EventPayload::NewBlock(_) = EventPayload::parse(path, &event.payload).unwrap() {
            blocks += 1;
        }
    }
    assert!(blocks >= 13, "{blocks}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn needs_exactly_one_destination() {
    let out = devnet(&["--blocks", "1"]);
    assert!(!out.status.success());
    let out = devnet(&["--blocks", "1", "--out", "/dev/null", "--post", "http://127.0.0.1:1"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
}
