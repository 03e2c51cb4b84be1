//! Generator settings, and the per-network constants derived from them once.

use stacks_codec::address::{version, ContractId, StacksAddress};
use stacks_codec::tx::TransactionVersion;

use super::contracts::{
    FT_ABI, FT_ASSET, FT_CONTRACT, GENESIS_ABI, NFT_ABI, NFT_ASSET, NFT_CONTRACT, POX_CONTRACT,
};
use super::keys::{derive_accounts, DevKey};
use super::DevnetError;

pub use crate::ledger::Network;

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
        }
    }
}

impl DevnetConfig {
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
        if self.fork_per_mille > 1000 || self.microblock_per_mille > 1000 || self.delegate_per_mille > 1000 {
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
    pub ft_abi: serde_json::Value,
    pub nft_abi: serde_json::Value,
    pub genesis_abi: serde_json::Value,
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
        let abi =
            |s: &str| serde_json::from_str(s).map_err(|e| DevnetError::Config(format!("contract ABI: {e}")));
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
            ft_contract,
            nft_contract,
            pox_contract,
            ft_abi: abi(FT_ABI)?,
            nft_abi: abi(NFT_ABI)?,
            genesis_abi: abi(GENESIS_ABI)?,
            keys,
            cfg,
        })
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
