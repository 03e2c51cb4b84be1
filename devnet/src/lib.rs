//! stacks-devnet: a deterministic generator of Stacks node events, for demos, reorg tests, the
//! Rosetta checker and ingest benchmarks. The server's `devnet` command is [`run`]; its `demo`
//! command posts a [`Generator`]'s chain to its own observer.
//!
//! A seed fixes the whole output byte for byte. The generator keeps its own ledger so every
//! event is one a node could have sent: transactions are really signed (by the codec) with keys
//! derived from the seed, nonces and balances add up, contracts exist before they are called,
//! stacked STX stay locked until their unlock height, forks and microblock streams follow the
//! node's rules. See `docs/devnet.md`.
//!
//! Layout: pure generation (`chain`, `txgen`, `txbuild`, `world`, `json`, `keys`, `rng`,
//! `time`, `contracts`, `config`) is separate from the output sinks (`sink`), the node's RPC
//! (`node`, `node_server`) and the command's entry point ([`run`]).

#![forbid(unsafe_code)]

mod args;
mod bns;
mod chain;
mod config;
mod contracts;
mod json;
mod keys;
pub mod node;
mod node_server;
mod pox4;
mod pox5;
mod rng;
mod sink;
mod time;
mod txbuild;
mod txgen;
mod world;

#[cfg(test)]
mod tests;

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::time::Instant;

use thiserror::Error;

pub use args::{DevnetArgs, Output};
pub use chain::{ChainTip, DevnetEvent, Generator, Stats};
pub use config::{DevnetConfig, Network};
pub use node_server::serve as serve_as_node;
pub use sink::{post_events, write_tsv};
pub use world::{Account, Invariant};

#[derive(Debug, Error)]
pub enum DevnetError {
    #[error("invalid devnet configuration: {0}")]
    Config(String),
    /// Building or signing a transaction failed: a generator bug.
    #[error("building a transaction: {0}")]
    Codec(#[from] stacks_codec::CodecError),
    #[error(transparent)]
    Invariant(#[from] Invariant),
    #[error("cannot create {path}: {source}")]
    Create {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("writing the event log: {0}")]
    Write(#[source] std::io::Error),
    #[error("starting the HTTP client runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("POST {url}: {source}")]
    Http {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("POST {url} (event {id}) returned {status}: {body}")]
    Rejected { url: String, id: i64, status: u16, body: String },
}

/// `devnet --post URL --serve-node ADDR`: see [`node_server`].
fn serve_node(
    generator: Generator,
    observer: String,
    bind: std::net::SocketAddr,
    block_ms: u64,
) -> Result<(), DevnetError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(DevnetError::Runtime)?;
    let ready = |addr: std::net::SocketAddr, accounts: Vec<serde_json::Value>| {
        let line = serde_json::json!({ "node": format!("http://{addr}"), "accounts": accounts });
        println!("{line}");
        eprintln!("devnet node: chain posted; serving on http://{addr} (Ctrl-C to stop)");
    };
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    runtime.block_on(node_server::serve(
        generator,
        observer,
        bind,
        std::time::Duration::from_millis(block_ms.max(1)),
        ready,
        shutdown,
    ))
}

/// The first `n` user accounts with a spendable balance: address and private key (32 bytes,
/// hex), the prefunded accounts a construction check draws on.
pub fn funded_accounts(generator: &Generator, n: usize) -> Vec<serde_json::Value> {
    let ctx = generator.ctx_ref();
    generator
        .accounts()
        .zip(&ctx.keys)
        .take(ctx.user_accounts() as usize)
        .filter(|((_, a), _)| a.spendable() > 1_000_000)
        .take(n)
        .map(|((address, a), key)| {
            serde_json::json!({
                "address": address,
                "private_key": hex::encode(&key.private_key.to_bytes()[..32]),
                "spendable": a.spendable().to_string(),
            })
        })
        .collect()
}

/// The `devnet` subcommand: generate, write or post, and report what was generated.
pub fn run(args: DevnetArgs) -> Result<(), DevnetError> {
    let mut generator = Generator::new(args.config())?;
    if let (Some(bind), Some(observer)) = (args.serve_node, &args.output.post) {
        return serve_node(generator, observer.clone(), bind, args.block_time_ms);
    }
    let started = Instant::now();
    let (written, target) = match (&args.output.out, &args.output.post) {
        (Some(path), _) => {
            let file =
                File::create(path).map_err(|source| DevnetError::Create { path: path.clone(), source })?;
            (write_tsv(&mut generator, BufWriter::with_capacity(1 << 20, file))?, path.display().to_string())
        }
        (None, Some(url)) => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(DevnetError::Runtime)?;
            (runtime.block_on(post_events(&mut generator, url))?, url.clone())
        }
        (None, None) => return Err(DevnetError::Config("one of --out or --post is required".into())),
    };
    let secs = started.elapsed().as_secs_f64();
    let s = generator.stats();
    let txs = s.block_txs + s.microblock_txs;
    eprintln!(
        "devnet: {written} events to {target} in {secs:.1}s: height {}, {} blocks ({} orphaned, {} forks), \
         {} burn blocks, {} block txs, {} microblocks ({} txs, {} orphaned), {} mempool txs, {} replaced by fee ({:.0} tx/s)",
        s.canonical_height,
        s.blocks,
        s.orphaned_blocks,
        s.forks,
        s.burn_blocks,
        s.block_txs,
        s.microblocks,
        s.microblock_txs,
        s.orphaned_microblock_txs,
        s.mempool_txs,
        s.replaced_by_fee,
        txs as f64 / secs.max(1e-9),
    );
    Ok(())
}
