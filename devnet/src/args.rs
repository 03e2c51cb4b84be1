//! Command-line arguments of `stacks-ledger devnet`.

use std::path::PathBuf;

use super::config::{DevnetConfig, Network};

#[derive(Debug, Clone, clap::Args)]
pub struct DevnetArgs {
    /// Seed: the same seed and flags give byte-identical output.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Height of the final canonical block.
    #[arg(long, default_value_t = 20)]
    pub blocks: u64,
    /// User transactions per anchored block (besides the coinbase).
    #[arg(long, default_value_t = 10)]
    pub txs_per_block: u32,
    /// Occasional forks: a competing branch that overtakes by growing longer.
    #[arg(long)]
    pub forks: bool,
    /// Microblock streams after some blocks, confirmed in full or in part by the next block.
    #[arg(long)]
    pub microblocks: bool,
    #[arg(long, default_value_t = Network::Testnet)]
    pub network: Network,
    /// Funded user accounts.
    #[arg(long, default_value_t = 100)]
    pub accounts: u32,
    /// Blocks until a miner reward matures (stacks-node: 100).
    #[arg(long, default_value_t = 100)]
    pub reward_maturity: u64,
    /// Add the cases real node chains show (`DevnetConfig::with_real_chain_cases`): pox-4
    /// delegations and revocations, sponsored contract calls, failed deploys (runtime and
    /// analysis failures, re-deploys, replaced duplicates), ABIs in a node's key order and a
    /// current node's fields (`contract_interface`, `tenure_height`, `consensus_hash`).
    #[arg(long)]
    pub real_node_cases: bool,
    /// Per mille of user transactions that are PoX-5 staking calls (bonds, allowlists,
    /// registrations, signer keys, STX stakes, rewards and claims); 0 draws none.
    #[arg(long, default_value_t = 0)]
    pub pox5_per_mille: u32,
    /// Per mille of anchored user transactions that are BNS calls (namespaces, name
    /// registrations and imports, updates with subdomains, transfers, renewals, revokes), each
    /// name operation followed by its `/attachments/new`; 0 draws none.
    #[arg(long, default_value_t = 0)]
    pub bns_per_mille: u32,
    #[command(flatten)]
    pub output: Output,
    /// After posting the chain (`--post`), act as the Stacks node on this address: accept
    /// `POST /v2/transactions` (checked against the devnet's ledger), answer `/v2/accounts`,
    /// `/v2/fees/transfer`, `/v2/info`, `/v2/pox`, and mine accepted transactions into new
    /// blocks posted to the same observer, until Ctrl-C. Prints the node URL and some funded
    /// accounts' keys as one JSON line on stdout.
    #[arg(long, value_name = "HOST:PORT", requires = "post")]
    pub serve_node: Option<std::net::SocketAddr>,
    /// With `--serve-node`: how often a block is mined from the accepted transactions (none
    /// while nothing waits).
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub block_time_ms: u64,
}

/// Exactly one destination.
#[derive(Debug, Clone, clap::Args)]
#[group(required = true, multiple = false)]
pub struct Output {
    /// Write the events as a TSV event log (ids from 1), replayable with `import-events`.
    #[arg(long, value_name = "FILE.tsv")]
    pub out: Option<PathBuf>,
    /// POST each event, in order, to this event-observer base URL (e.g. http://127.0.0.1:3700).
    #[arg(long, value_name = "URL")]
    pub post: Option<String>,
}

impl DevnetArgs {
    pub fn config(&self) -> DevnetConfig {
        let cfg = DevnetConfig {
            seed: self.seed,
            blocks: self.blocks,
            txs_per_block: self.txs_per_block,
            forks: self.forks,
            microblocks: self.microblocks,
            network: self.network,
            accounts: self.accounts,
            reward_maturity: self.reward_maturity,
            pox5_per_mille: self.pox5_per_mille,
            bns_per_mille: self.bns_per_mille,
            ..DevnetConfig::default()
        };
        if self.real_node_cases {
            cfg.with_real_chain_cases()
        } else {
            cfg
        }
    }
}
