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
    let path = format!("{}/../shared/fixtures/mainnet-block0.tsv", env!("CARGO_MANIFEST_DIR"));
    if !std::path::Path::new(&path).is_file() {
        assert_ne!(std::env::var("CI").as_deref(), Ok("true"), "{path} missing in CI");
        return;
    }
    let (ok, stdout, stderr) = cli(&["import-events", "--file", &path], &[]);
    assert!(ok, "{stderr}");
    assert!(stdout.starts_with("10 events applied, 0 skipped, 3 blocks in "), "{stdout}");
    assert!(stderr.contains("events are kept in memory only"), "the stand-in store says so: {stderr}");
}

#[test]
fn errors_are_one_line_and_a_failure_exit() {
    let (ok, stdout, stderr) =
        cli(&["import-events", "--file", "/nonexistent.tsv", "--log-level", "off"], &[]);
    assert!(!ok);
    assert_eq!(stdout, "");
    assert_eq!(stderr, "error: cannot open /nonexistent.tsv: No such file or directory (os error 2)\n");

    let (ok, _, stderr) = cli(&["serve"], &[("STACKS_CHAIN_ID", "0x42")]);
    assert!(!ok);
    assert!(stderr.starts_with("error: STACKS_CHAIN_ID `0x42`: neither mainnet"), "{stderr}");
}
