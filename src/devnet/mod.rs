//! `stacks-ledger devnet`: a deterministic generator of Stacks node events, for demos, reorg
//! tests, the Rosetta checker and ingest benchmarks.
//!
//! A seed fixes the whole output byte for byte. The generator keeps its own ledger so every
//! event is one a node could have sent: transactions are really signed (by the codec) with keys
//! derived from the seed, nonces and balances add up, contracts exist before they are called,
//! stacked STX stay locked until their unlock height, forks and microblock streams follow the
//! node's rules. See `docs/devnet.md`.
//!
//! Layout: pure generation (`chain`, `txgen`, `txbuild`, `world`, `json`, `keys`, `rng`,
//! `time`, `contracts`, `config`) is separate from the output sinks (`sink`) and the CLI entry
//! point ([`run`]).

mod args;
mod chain;
mod config;
mod contracts;
mod json;
mod keys;
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

/// The `devnet` subcommand: generate, write or post, and report what was generated.
pub fn run(args: DevnetArgs) -> Result<(), DevnetError> {
    let mut generator = Generator::new(args.config())?;
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
