//! Generator settings, and the per-network constants derived from them once.

use stacks_codec::address::{version, ContractId, StacksAddress};
use stacks_codec::tx::TransactionVersion;

use super::contracts::{
    order_keys, AbiKeyOrder, DeployCase, FT_ABI, FT_ASSET, FT_CONTRACT, GENESIS_ABI, GENESIS_ABI_NODE,
    NFT_ABI, NFT_ASSET, NFT_CONTRACT, POX_CONTRACT,
};
use super::keys::{derive_accounts, DevKey};
use super::DevnetError;

pub use ledger_core::ledger::Network;

/// What to generate. Probabilities are per mille.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevnetConfig {
    pub seed: u64,
    /// Height of the final canonical block (block 0 is the boot block).
    pub blocks: u64,
    /// User transactions per anchored block (besides the coinbase).
    pub txs_per_block: u32,
    pub forks: bool,
    pub microblocks: bool,
    pub network: Network,
    /// Funded user accounts (account 0 deploys the contracts).
    pub accounts: u32,
    /// Miner accounts, funded too, on top of `accounts`.
    pub miners: u32,
    /// A block's miner reward is paid in the block this many heights later.
    pub reward_maturity: u64,
    /// Chance that a block starts a fork episode (with `forks`).
    pub fork_per_mille: u32,
    /// Chance that a block's miner streams microblocks after it (with `microblocks`).
    pub microblock_per_mille: u32,
    /// Chance that a user transaction is a pox-4 `delegate-stx` to one of the devnet pools
    /// ([`DELEGATION_POOLS`]). 0 (the default) draws nothing, so chains generated before this
    /// setting existed stay byte for byte the same.
    pub delegate_per_mille: u32,
    /// Chance that a user transaction is a pox-4 `revoke-delegate-stx` by an account whose
    /// delegation is in force (then it may delegate again). 0 draws nothing.
    pub revoke_per_mille: u32,
    /// Chance that an FT or NFT contract call is sponsored: another account signs after the
    /// origin and pays the fee with its own nonce. 0 draws nothing.
    pub sponsored_call_per_mille: u32,
    /// Chance that a user transaction is one of the failed-deploy cases: a deploy that fails
    /// at runtime (interface kept) or in analysis (no interface), or the sender's later
    /// successful deploy under a name whose deploy failed, sometimes with a duplicate of it
    /// that reached the mempool and was replaced (a node never mines a duplicate). 0 draws
    /// nothing.
    pub failed_deploy_per_mille: u32,
    /// ABIs with their keys sorted at every level, as a real stacks-node sends them (the
    /// default is the incumbent's `jsonb` order of the shared fixtures).
    pub node_abi_order: bool,
    /// Fields of a current (4.x, epoch 2.5) stacks-node: the receipt's ABI under
    /// `contract_interface` (instead of `contract_abi`), and each block's `tenure_height` (its
    /// coinbase height: the block height before Nakamoto) and `consensus_hash`.
    pub current_node_fields: bool,
    /// Chance that a user transaction is a PoX-5 staking call (`pox5.rs`): bonds, allowlists,
    /// registrations, signer keys, STX stakes, reward distributions and claims. 0 (the
    /// default) draws nothing.
    pub pox5_per_mille: u32,
    /// Chance that a user transaction of an anchored block is a call to the `bns` boot contract
    /// (`bns.rs`): namespaces, name registrations, imports, updates (some listing subdomains),
    /// transfers, renewals and revokes, each followed by the `/attachments/new` a node posts.
    /// 0 (the default) draws nothing.
    pub bns_per_mille: u32,
}

/// Accounts that `delegate-stx` delegates to (the first user accounts after the deployer).
pub const DELEGATION_POOLS: [u32; 2] = [1, 2];

impl Default for DevnetConfig {
    fn default() -> Self {
        DevnetConfig {
            seed: 0,
            blocks: 20,
            txs_per_block: 10,
            forks: false,
            microblocks: false,
            network: Network::Testnet,
            accounts: 100,
            miners: 3,
            reward_maturity: 100,
            fork_per_mille: 50,
            microblock_per_mille: 400,
            delegate_per_mille: 0,
            revoke_per_mille: 0,
            sponsored_call_per_mille: 0,
            failed_deploy_per_mille: 0,
            node_abi_order: false,
            current_node_fields: false,
            pox5_per_mille: 0,
            bns_per_mille: 0,
        }
    }
}

impl DevnetConfig {
    /// A chain with the cases real node chains show and the default chain does not:
    /// delegations and their revocations, sponsored contract calls, failed deploys (runtime and
    /// analysis failures, re-deploys, replaced duplicates), ABIs in a node's key order and the
    /// fields of a current node (`tenure_height`). 60 blocks of 10 transactions have several of
    /// each; memo and plain transfers are there as in every chain.
    pub fn real_chain_cases(seed: u64) -> DevnetConfig {
        DevnetConfig {
            seed,
            blocks: 60,
            txs_per_block: 10,
            accounts: 30,
            reward_maturity: 10,
            ..DevnetConfig::default()
        }
        .with_real_chain_cases()
    }

    /// Turns on the real-chain cases of [`DevnetConfig::real_chain_cases`] on this configuration
    /// (its size, forks and microblocks are kept).
    pub fn with_real_chain_cases(self) -> DevnetConfig {
        DevnetConfig {
            delegate_per_mille: 60,
            revoke_per_mille: 40,
            sponsored_call_per_mille: 250,
            failed_deploy_per_mille: 50,
            node_abi_order: true,
            current_node_fields: true,
            ..self
        }
    }

    pub fn validate(&self) -> Result<(), DevnetError> {
        let bad = |m: &str| Err(DevnetError::Config(m.to_string()));
        if self.accounts < 2 {
            return bad("at least 2 accounts are needed");
        }
        if self.miners < 2 {
            return bad("at least 2 miners are needed (forks need competing miners)");
        }
        if self.reward_maturity == 0 {
            return bad("the reward maturity must be at least 1 block");
        }
        let rates = [
            self.fork_per_mille,
            self.microblock_per_mille,
            self.delegate_per_mille,
            self.revoke_per_mille,
            self.sponsored_call_per_mille,
            self.failed_deploy_per_mille,
            self.pox5_per_mille,
            self.bns_per_mille,
        ];
        if rates.iter().any(|&r| r > 1000) {
            return bad("probabilities are per mille (0 to 1000)");
        }
        Ok(())
    }
}

/// PoX timing: short cycles so that stacking, reward slots and unlocks all happen in a small
/// devnet (the same scale as the regtest environments).
pub const POX_FIRST_BURN_HEIGHT: u64 = 0;
pub const POX_CYCLE_LENGTH: u64 = 20;
pub const POX_PREPARE_LENGTH: u64 = 5;
/// The smallest `stack-stx` amount the generator uses (also reported as the reward-set threshold).
pub const POX_MIN_STACK: u128 = 10_000_000_000;

pub fn reward_cycle(burn_height: u64) -> u64 {
    burn_height.saturating_sub(POX_FIRST_BURN_HEIGHT) / POX_CYCLE_LENGTH
}

pub fn cycle_start(cycle: u64) -> u64 {
    POX_FIRST_BURN_HEIGHT + cycle * POX_CYCLE_LENGTH
}

/// In the prepare phase of the cycle after `reward_cycle(burn_height)`.
pub fn in_prepare_phase(burn_height: u64) -> bool {
    burn_height + POX_PREPARE_LENGTH >= cycle_start(reward_cycle(burn_height) + 1)
}

/// Per-run constants: keys, addresses, contract ids and their text forms.
pub struct Ctx {
    pub cfg: DevnetConfig,
    pub keys: Vec<DevKey>,
    pub chain_id: u32,
    pub tx_version: TransactionVersion,
    /// `SP000000000000000000002Q6VF78` / `ST000000000000000000002AMW42H`.
    pub boot: StacksAddress,
    pub deployer: u32,
    /// Account indexes of the miners.
    pub miners: Vec<u32>,
    pub ft_contract: ContractId,
    pub ft_contract_id: String,
    pub ft_asset: String,
    pub nft_contract: ContractId,
    pub nft_contract_id: String,
    pub nft_asset: String,
    pub pox_contract: ContractId,
    pub pox_contract_id: String,
    /// The `pox-5` boot contract (PoX-5 staking calls).
    pub pox5_contract: ContractId,
    pub pox5_contract_id: String,
    /// The `bns` boot contract, and its names' asset identifier (`bns::names`).
    pub bns_contract: ContractId,
    pub bns_contract_id: String,
    pub bns_asset: String,
    pub ft_abi: serde_json::Value,
    pub nft_abi: serde_json::Value,
    pub genesis_abi: serde_json::Value,
    /// The ABIs of the failed-deploy cases, `[case][fixed]` (`None`: analysis fails).
    deploy_case_abis: [[Option<serde_json::Value>; 2]; 2],
}

impl Ctx {
    pub fn new(cfg: DevnetConfig) -> Result<Ctx, DevnetError> {
        cfg.validate()?;
        let mainnet = cfg.network.is_mainnet();
        let keys = derive_accounts(cfg.seed, cfg.accounts + cfg.miners, mainnet)?;
        let boot = StacksAddress::new(version::single_sig(mainnet), [0; 20]);
        let deployer = 0;
        let ft_contract = ContractId::new(keys[deployer as usize].address, FT_CONTRACT)?;
        let nft_contract = ContractId::new(keys[deployer as usize].address, NFT_CONTRACT)?;
        let pox_contract = ContractId::new(boot, POX_CONTRACT)?;
        let pox5_contract = ContractId::new(boot, "pox-5")?;
        let bns_contract = ContractId::new(boot, "bns")?;
        let abi = |s: &str| {
            serde_json::from_str::<serde_json::Value>(s)
                .map_err(|e| DevnetError::Config(format!("contract ABI: {e}")))
        };
        // The FT and NFT ABIs are written as the fixtures have them; a node sorts their keys.
        let node_order =
            |v: serde_json::Value| if cfg.node_abi_order { order_keys(&v, AbiKeyOrder::Node) } else { v };
        // The failed-deploy cases' ABIs are written in a node's order; by default they follow
        // the fixtures' jsonb order like everything else.
        let case_order = if cfg.node_abi_order { AbiKeyOrder::Node } else { AbiKeyOrder::Jsonb };
        let case_abi = |case: DeployCase, fixed: bool| {
            case.abi(fixed).map(|text| abi(text).map(|v| order_keys(&v, case_order))).transpose()
        };
        Ok(Ctx {
            chain_id: cfg.network.chain_id(),
            tx_version: if mainnet { TransactionVersion::Mainnet } else { TransactionVersion::Testnet },
            boot,
            deployer,
            miners: (cfg.accounts..cfg.accounts + cfg.miners).collect(),
            ft_contract_id: ft_contract.to_string(),
            ft_asset: format!("{ft_contract}::{FT_ASSET}"),
            nft_contract_id: nft_contract.to_string(),
            nft_asset: format!("{nft_contract}::{NFT_ASSET}"),
            pox_contract_id: pox_contract.to_string(),
            pox5_contract_id: pox5_contract.to_string(),
            pox5_contract,
            bns_contract_id: bns_contract.to_string(),
            bns_asset: format!("{bns_contract}::names"),
            bns_contract,
            ft_contract,
            nft_contract,
            pox_contract,
            ft_abi: node_order(abi(FT_ABI)?),
            nft_abi: node_order(abi(NFT_ABI)?),
            genesis_abi: if cfg.node_abi_order { abi(GENESIS_ABI_NODE)? } else { abi(GENESIS_ABI)? },
            deploy_case_abis: [
                [case_abi(DeployCase::Runtime, false)?, case_abi(DeployCase::Runtime, true)?],
                [case_abi(DeployCase::Analysis, false)?, case_abi(DeployCase::Analysis, true)?],
            ],
            keys,
            cfg,
        })
    }

    /// The ABI a receipt carries for a deploy of `case` (its fixed version when `fixed`).
    pub fn deploy_case_abi(&self, case: DeployCase, fixed: bool) -> Option<&serde_json::Value> {
        self.deploy_case_abis[case as usize][usize::from(fixed)].as_ref()
    }

    pub fn key(&self, i: u32) -> &DevKey {
        &self.keys[i as usize]
    }

    /// User accounts (miners excluded): the senders of ordinary traffic.
    pub fn user_accounts(&self) -> u32 {
        self.cfg.accounts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pox_phases() {
        assert_eq!((reward_cycle(0), reward_cycle(19), reward_cycle(20)), (0, 0, 1));
        assert_eq!(cycle_start(7), 140);
        assert!(!in_prepare_phase(14) && in_prepare_phase(15) && in_prepare_phase(19));
        assert!(!in_prepare_phase(20));
    }

    #[test]
    fn network_constants() {
        let ctx = Ctx::new(DevnetConfig { accounts: 2, miners: 2, ..DevnetConfig::default() }).unwrap();
        assert_eq!(ctx.pox_contract_id, "ST000000000000000000002AMW42H.pox-4");
        assert!(ctx.ft_asset.ends_with(".devnet-token::devcoin"));
        assert_eq!(ctx.miners, vec![2, 3]);
        let m = Ctx::new(DevnetConfig { network: Network::Mainnet, ..DevnetConfig::default() }).unwrap();
        assert_eq!(m.pox_contract_id, "SP000000000000000000002Q6VF78.pox-4");
        assert!(Ctx::new(DevnetConfig { miners: 1, ..DevnetConfig::default() }).is_err());
    }
}
