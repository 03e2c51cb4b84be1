//! The incumbent's own generated client (`@stacks/blockchain-api-client`, driven by
//! `../shared/tools/client-smoke/client-smoke.mjs`, then by `tests/node/client-smoke-v3.mjs` for
//! the `/extended/v3` routes) against our real binary: import the mocknet fixture, `serve` it,
//! and every call the scripts make must pass.
//!
//! The client is installed with npm into the target directory (never into `../shared`); the
//! script is run through a symlink with `--preserve-symlinks-main` so its import resolves there.
//! Without node/npm this skips outside CI and fails under `CI=true`.

mod common;

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CLIENT: &str = "@stacks/blockchain-api-client@9.0.2";

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_for(port: u16, server: &mut Server) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = server.0.try_wait() {
            panic!("serve exited early: {status}");
        }
        assert!(Instant::now() < deadline, "serve did not listen on {port} within 60 s");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_incumbents_generated_client_passes_against_our_server() {
    let Some(script) = test_support::shared_path("tools/client-smoke/client-smoke.mjs") else { return };
    let Some(tsv) = test_support::shared_path("fixtures/mocknet.tsv") else { return };
    let Some(link) =
        common::npm::script_with_packages("client-smoke", &[CLIENT], &script, "the client smoke test")
    else {
        return;
    };
    let v3_script =
        std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/node/client-smoke-v3.mjs"));
    let v3_link =
        common::npm::script_with_packages("client-smoke", &[CLIENT], &v3_script, "the client smoke test")
            .expect("node and npm were found a moment ago");
    let tmp = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", tmp.path().join("smoke.db").display());
    let bin = env!("CARGO_BIN_EXE_stacks-ledger");
    let import = Command::new(bin)
        .args(["import-events", "--file", tsv.to_str().unwrap(), "--db", &db, "--network", "testnet"])
        .output()
        .unwrap();
    assert!(import.status.success(), "import failed: {}", String::from_utf8_lossy(&import.stderr));

    let (api, events) = (free_port(), free_port());
    let mut server = Server(
        Command::new(bin)
            .args(["serve", "--db", &db, "--network", "testnet"])
            .args([
                "--api-bind",
                &format!("127.0.0.1:{api}"),
                "--events-bind",
                &format!("127.0.0.1:{events}"),
            ])
            .env_remove("STACKS_CORE_RPC_HOST")
            .env_remove("STACKS_CORE_RPC_PORT")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for(api, &mut server);

    // A principal the mocknet chain funded, so balance and transaction calls return data.
    for script in [&link, &v3_link] {
        let out = Command::new("node")
            .args(["--preserve-symlinks", "--preserve-symlinks-main"])
            .arg(script)
            .arg(format!("http://127.0.0.1:{api}"))
            .args(["--principal", "ST16G69GQBDPMRY6308JN0GDTYF265JX3KQ6C0VEH"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        println!("{stdout}");
        assert!(
            out.status.success(),
            "client smoke failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains(" passed") && !stdout.contains("FAIL"), "{stdout}");
    }
}
