//! `stacks-ledger demo`: a living chain with nothing but the repository. It runs `serve` over a
//! fresh SQLite database in a temporary directory and POSTs a generated devnet chain
//! (`src/devnet`: transfers, contract calls, mempool traffic, microblock streams, forks) to its
//! own event observer, the way a node would: some history at once, then one block every
//! `--block-time-ms`, so `curl`, the WebSocket and Rosetta all show the chain moving.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use stacks_devnet::{DevnetConfig, Generator};
use stacks_ledger::config::Config;
use stacks_ledger::events::EventPath;
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;

use super::ledger::{self, Bound};

#[derive(Debug, Clone, clap::Args)]
pub struct DemoArgs {
    /// Seed of the generated chain (the same seed gives the same chain).
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Blocks posted at once on start, so the APIs have some history to show.
    #[arg(long, default_value_t = 20)]
    pub history_blocks: u64,
    /// Time between two blocks after the history, in ms.
    #[arg(long, default_value_t = 3000, value_name = "MS")]
    pub block_time_ms: u64,
    /// User transactions per block (besides the coinbase).
    #[arg(long, default_value_t = 8)]
    pub txs_per_block: u32,
}

/// The generated chain: long enough never to end in a demo, with forks and microblocks.
pub fn chain_config(args: &DemoArgs) -> DevnetConfig {
    DevnetConfig {
        seed: args.seed,
        blocks: 1_000_000,
        txs_per_block: args.txs_per_block,
        forks: true,
        microblocks: true,
        network: Network::Testnet,
        accounts: 24,
        // Short, so miner rewards show up within a few minutes.
        reward_maturity: 6,
        ..DevnetConfig::default()
    }
}

/// Runs the demo until `shutdown`. `config` gives the listen addresses and everything else but
/// the database and the network: a new testnet SQLite database in a temporary directory,
/// removed at the end.
pub async fn run(
    mut config: Config,
    args: DemoArgs,
    shutdown: impl Future<Output = ()> + Send + 'static,
    on_bound: impl FnOnce(Bound),
) -> anyhow::Result<()> {
    let dir = TempDir::new().context("creating the demo's database directory")?;
    config.database_url = format!("sqlite://{}", dir.0.join("demo.db").display());
    config.network = Network::Testnet;
    // The demo is one process: its observer feeds its API.
    config.mode = stacks_ledger::config::Mode::Online;
    let generator = Generator::new(chain_config(&args)).context("the devnet generator")?;
    let store = Arc::new(
        Store::open(&config.database_url, config.network, stacks_ledger::compose::tx_render())
            .await
            .context("opening the demo store")?,
    );
    let (stop_feed, feed_stopped) = tokio::sync::watch::channel(false);
    let history = args.history_blocks;
    let block_time = Duration::from_millis(args.block_time_ms.max(1));
    let result = ledger::serve_with(&config, store, shutdown, move |bound| {
        tracing::info!(
            "demo: a devnet chain ({history} blocks now, then one every {} ms); try \
             curl http://{}/extended/v1/block?limit=1",
            block_time.as_millis(),
            bound.api
        );
        for line in urls(bound.api) {
            tracing::info!("demo: {line}");
        }
        tokio::spawn(async move {
            if let Err(e) = feed(generator, bound.events, history, block_time, feed_stopped).await {
                tracing::error!("demo chain stopped: {e:#}");
            }
        });
        on_bound(bound);
    })
    .await;
    let _ = stop_feed.send(true);
    result
}

/// Where the demo's other APIs answer, as lines to print.
pub(super) fn urls(api: std::net::SocketAddr) -> [String; 4] {
    [
        format!(
            "Rosetta: http://{api}/rosetta/v1 (try curl -s -X POST -H 'content-type: application/json' \
             -d '{{}}' http://{api}/rosetta/v1/network/list)"
        ),
        format!("WebSocket (JSON-RPC subscriptions): ws://{api}/extended/v1/ws"),
        format!("Socket.IO: http://{api}/socket.io/"),
        format!("API reference: http://{api}/extended/docs"),
    ]
}

/// POSTs the chain's events to the observer at `events`, pausing after each block once
/// `history` blocks are in.
async fn feed(
    generator: Generator,
    events: std::net::SocketAddr,
    history: u64,
    block_time: Duration,
    mut stopped: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let client = reqwest::Client::new();
    let mut blocks = 0u64;
    for event in generator {
        if *stopped.borrow() {
            return Ok(());
        }
        let event = event?;
        let url = format!("http://{events}{}", event.path);
        let res = client
            .post(&url)
            .header("content-type", "application/json")
            .body(event.payload)
            .send()
            .await
            .with_context(|| format!("POST {url}"))?;
        if !res.status().is_success() {
            let status = res.status();
            anyhow::bail!(
                "POST {url} (event {}): {status}: {}",
                event.id,
                res.text().await.unwrap_or_default()
            );
        }
        if event.path == EventPath::NewBlock {
            blocks += 1;
            if blocks > history {
                tokio::select! {
                    () = tokio::time::sleep(block_time) => {}
                    _ = stopped.wait_for(|s| *s) => return Ok(()),
                }
            }
        }
    }
    Ok(())
}

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> std::io::Result<TempDir> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = std::env::temp_dir().join(format!("stacks-ledger-demo-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        Ok(TempDir(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
