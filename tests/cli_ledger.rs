//! End to end: the `stacks-ledger` binary's ledger commands print their summary on stdout and
//! fail with one `error: …` line and a non-zero exit.

use std::process::Command;

fn cli(args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_stacks-ledger"))
        .args(args)
        .env_remove("DATABASE_URL")
        .env_remove("STACKS_CHAIN_ID")
        .envs(env.iter().copied())
        .output()
        .expect("binary runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn import_prints_a_summary() {
    let Some(path) = test_support::shared_path("fixtures/mainnet-block0.tsv") else { return };
    let path = path.display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("ledger.db").display());
    let import = ["import-events", "--file", &path, "--db", &db, "--network", "mainnet"];
    let (ok, stdout, stderr) = cli(&import, &[]);
    assert!(ok, "{stderr}");
    assert!(stdout.starts_with("10 events applied, 0 skipped, 3 blocks in "), "{stdout}");
    // The same file again resumes past its end: nothing is applied twice.
    let (ok, stdout, stderr) = cli(&import, &[]);
    assert!(ok, "{stderr}");
    assert!(stdout.starts_with("0 events applied, 10 skipped"), "{stdout}");
    // And on the wrong network the first block is refused with the reason.
    let other = format!("sqlite://{}", dir.path().join("other.db").display());
    let (ok, _, stderr) = cli(&["import-events", "--file", &path, "--db", &other, "--log-level", "off"], &[]);
    assert!(!ok);
    assert!(stderr.contains("is not the configured testnet chain id"), "{stderr}");
}

#[test]
fn errors_are_one_line_and_a_failure_exit() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("ledger.db").display());
    let (ok, stdout, stderr) =
        cli(&["import-events", "--file", "/nonexistent.tsv", "--db", &db, "--log-level", "off"], &[]);
    assert!(!ok);
    assert_eq!(stdout, "");
    assert_eq!(stderr, "error: cannot open /nonexistent.tsv: No such file or directory (os error 2)\n");

    let (ok, _, stderr) = cli(&["serve"], &[("STACKS_CHAIN_ID", "0x42")]);
    assert!(!ok);
    assert!(stderr.starts_with("error: STACKS_CHAIN_ID `0x42`: neither mainnet"), "{stderr}");
}
