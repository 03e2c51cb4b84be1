//! A `stacks-ledger serve` child process for the tests that run the binary as a user does.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Long enough for a debug build under a loaded machine; never a speed bound.
pub const WAIT: Duration = Duration::from_secs(60);

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A `stacks-ledger serve` child, killed when dropped.
pub struct Server {
    pub child: Child,
    pub port: u16,
    log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// `args` after `serve`; logs go to `log`.
    pub fn start(args: &[String], port: u16, log: &Path) -> Server {
        let mut c = Command::new(env!("CARGO_BIN_EXE_stacks-ledger"));
        c.arg("serve").args(args).args([
            "--network",
            "testnet",
            "--metrics-bind",
            "off",
            "--log-level",
            "info",
        ]);
        for (k, _) in std::env::vars() {
            if k.starts_with("PG_") || k.starts_with("STACKS_") || k == "DATABASE_URL" || k == "RUST_LOG" {
                c.env_remove(k);
            }
        }
        let out = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap();
        c.stdout(Stdio::null()).stderr(out);
        Server { child: c.spawn().expect("the binary starts"), port, log: log.to_owned() }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until the port accepts connections (the process exiting first fails the test).
    pub async fn wait_listening(&mut self) {
        let started = Instant::now();
        loop {
            if tokio::net::TcpStream::connect(("127.0.0.1", self.port)).await.is_ok() {
                return;
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("the server exited ({status}):\n{}", self.log());
            }
            assert!(
                started.elapsed() < WAIT,
                "not listening on {} after {WAIT:?}:\n{}",
                self.port,
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
