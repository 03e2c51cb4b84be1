//! The generator's own ledger: what every account holds, so each transaction it emits is one a
//! node could have accepted (enough balance, the next nonce, an NFT the sender owns, ...).
//!
//! Conservation law, checked by [`World::check`]:
//!
//! ```text
//! Σ balance (locked included) + pending_fees + burned == minted
//! minted = genesis mints + coinbases of matured miner rewards
//! pending_fees = fees paid by transactions whose miner reward has not matured yet
//! ```
//!
//! Fees leave the payer when the transaction is mined and come back to a miner when that
//! block's reward matures (`matured_miner_rewards`); coinbases are new STX from that moment on.
//! STX are burnt only by BNS preorders (`burned`). Fungible tokens obey `Σ ft == ft_supply`, and every live NFT has exactly
//! one owner.
//!
//! Memory is bounded: the account set is fixed, live NFTs are capped (`NFT_CAP`), pending
//! rewards cover one maturity window and stackers at most one entry per account.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::contracts::DeployCase;

/// Live NFTs never exceed this: mints stop at the cap and transfers/burns take over.
pub const NFT_CAP: usize = 10_000;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Account {
    /// Total µSTX, locked included.
    pub balance: u128,
    pub locked: u128,
    /// Burn height from which `locked` is spendable again.
    pub unlock_height: u64,
    /// Next nonce.
    pub nonce: u64,
    /// `devcoin` balance.
    pub ft: u128,
}

impl Account {
    pub fn spendable(&self) -> u128 {
        self.balance - self.locked
    }
}

/// Whose account: one of the seed's keys (by index), or an address outside them, which only
/// transactions submitted to the devnet node (`node.rs`) reach.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Holder {
    Seed(u32),
    External(String),
}

/// An account's current `stack-stx` lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stacker {
    pub holder: Holder,
    /// The PoX reward address (Bitcoin text form) its reward slots pay.
    pub btc: String,
    /// Reward cycles `first_cycle..end_cycle` are covered.
    pub first_cycle: u64,
    pub end_cycle: u64,
}

/// A block's miner reward, waiting out the maturity window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingReward {
    pub height: u64,
    pub block_hash: [u8; 32],
    pub index_hash: [u8; 32],
    pub miner: u32,
    pub coinbase: u128,
    pub fees_anchored: u128,
    /// 60% of the fees of the parent's microblocks this block confirmed.
    pub streamed_confirmed: u128,
    /// 40% of the fees of this block's own microblocks that its child confirmed.
    pub streamed_produced: u128,
}

impl PendingReward {
    pub fn fees(&self) -> u128 {
        self.fees_anchored + self.streamed_confirmed + self.streamed_produced
    }
}

#[derive(Debug, Clone, Default)]
pub struct World {
    pub accounts: Vec<Account>,
    /// Live tokens as `(token id, owner)`; a Vec (not a map) so random picks are deterministic.
    pub nfts: Vec<(u128, u32)>,
    pub last_nft_id: u128,
    pub ft_supply: u128,
    pub contracts_deployed: bool,
    pub stackers: Vec<Stacker>,
    /// Each account's latest pox-4 delegation (it may have expired; see [`World::delegated`]).
    pub delegations: BTreeMap<Holder, Delegation>,
    /// pox-4's `used-signer-key-authorizations` of the `stack-stx` calls the devnet node ran
    /// (serialized keys; the generator's random auth ids never repeat).
    pub used_signer_authorizations: BTreeSet<Vec<u8>>,
    /// Failed deploys (`DevnetConfig::failed_deploy_per_mille`) whose name the sender may still
    /// deploy, oldest first, at most [`RETRY_CAP`].
    pub retry_deploys: VecDeque<FailedDeploy>,
    /// A deploy that just succeeded: a duplicate of it may have reached the mempool in the
    /// same block or microblock (a node refuses it once the contract exists). Cleared at each
    /// block and microblock.
    pub pending_duplicate: Option<FailedDeploy>,
    pub pending_rewards: VecDeque<PendingReward>,
    /// The reward cycle whose reward set was last computed, and its slot holders (their PoX
    /// reward addresses).
    pub reward_set: Option<(u64, Vec<String>)>,
    pub minted: u128,
    pub pending_fees: u128,
    /// Fees paid in microblocks that no anchor block has confirmed yet (part of `pending_fees`).
    pub unassigned_stream_fees: u128,
    /// Accounts outside the seed's key set, by address: only transactions submitted to the
    /// devnet node (`node.rs`) create them.
    pub external: BTreeMap<String, Account>,
    /// PoX-5 staking so far (`DevnetConfig::pox5_per_mille`).
    pub pox5: super::pox5::Pox5World,
    /// BNS so far (`DevnetConfig::bns_per_mille`).
    pub bns: super::bns::BnsWorld,
    /// µSTX burnt (`stx-burn?` of BNS preorders).
    pub burned: u128,
}

/// A pox-4 `delegate-stx` as the `delegation-state` map holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delegation {
    pub amount: u128,
    /// The principal delegated to (a Clarity principal value).
    pub delegate_to: stacks_codec::clarity::Value,
    /// `until-burn-ht` (`None`: no end).
    pub until: Option<u64>,
    /// The PoX address tuple named, if any.
    pub pox_addr: Option<stacks_codec::clarity::Value>,
}

/// A contract deploy of the failed-deploy cases: who sent it, under which name, which case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedDeploy {
    pub sender: u32,
    pub name: String,
    pub case: DeployCase,
}

/// Failed deploys waiting for a re-deploy never exceed this (the oldest is forgotten).
pub const RETRY_CAP: usize = 256;

/// A broken generator invariant: a bug, never a property of the seed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("devnet ledger invariant broken: {0}")]
pub struct Invariant(pub String);

impl World {
    /// Accounts funded by the genesis mints.
    pub fn genesis(balances: &[u128]) -> World {
        World {
            accounts: balances.iter().map(|&balance| Account { balance, ..Account::default() }).collect(),
            minted: balances.iter().sum(),
            ..World::default()
        }
    }

    pub fn account(&self, i: u32) -> &Account {
        &self.accounts[i as usize]
    }

    fn account_mut(&mut self, i: u32) -> &mut Account {
        &mut self.accounts[i as usize]
    }

    /// The account of `h` (`None`: an external address never seen).
    pub fn holder(&self, h: &Holder) -> Option<&Account> {
        match h {
            Holder::Seed(i) => self.accounts.get(*i as usize),
            Holder::External(a) => self.external.get(a),
        }
    }

    /// The account of `h`, created (empty) for an external address never seen.
    pub fn holder_mut(&mut self, h: &Holder) -> &mut Account {
        holder_in(&mut self.accounts, &mut self.external, h)
    }

    /// Charges a transaction fee to its payer (origin or sponsor).
    pub fn pay_fee(&mut self, payer: u32, fee: u128) -> Result<(), Invariant> {
        let a = self.account_mut(payer);
        if a.spendable() < fee {
            return Err(Invariant(format!("account {payer} cannot pay fee {fee}")));
        }
        a.balance -= fee;
        self.pending_fees += fee;
        Ok(())
    }

    pub fn bump_nonce(&mut self, i: u32) {
        self.account_mut(i).nonce += 1;
    }

    pub fn transfer_stx(&mut self, from: u32, to: u32, amount: u128) -> Result<(), Invariant> {
        if self.account(from).spendable() < amount {
            return Err(Invariant(format!("account {from} cannot send {amount} µSTX")));
        }
        self.account_mut(from).balance -= amount;
        self.account_mut(to).balance += amount;
        Ok(())
    }

    /// `stx-burn?`: the STX leave circulation.
    pub fn burn_stx(&mut self, from: u32, amount: u128) -> Result<(), Invariant> {
        if self.account(from).spendable() < amount {
            return Err(Invariant(format!("account {from} cannot burn {amount} µSTX")));
        }
        self.account_mut(from).balance -= amount;
        self.burned += amount;
        Ok(())
    }

    pub fn transfer_ft(&mut self, from: u32, to: u32, amount: u128) -> Result<(), Invariant> {
        if self.account(from).ft < amount {
            return Err(Invariant(format!("account {from} cannot send {amount} devcoin")));
        }
        self.account_mut(from).ft -= amount;
        self.account_mut(to).ft += amount;
        Ok(())
    }

    pub fn mint_ft(&mut self, to: u32, amount: u128) {
        self.account_mut(to).ft += amount;
        self.ft_supply += amount;
    }

    /// Mints the next token id to `to`.
    pub fn mint_nft(&mut self, to: u32) -> u128 {
        self.last_nft_id += 1;
        self.nfts.push((self.last_nft_id, to));
        self.last_nft_id
    }

    /// Owner of the live token at `slot` of `nfts`.
    pub fn move_nft(&mut self, slot: usize, to: u32) {
        self.nfts[slot].1 = to;
    }

    pub fn burn_nft(&mut self, slot: usize) {
        self.nfts.swap_remove(slot);
    }

    pub fn lock(&mut self, stacker: Stacker, amount: u128, unlock_height: u64) -> Result<(), Invariant> {
        let a = self.holder_mut(&stacker.holder);
        if a.locked != 0 || a.spendable() < amount {
            return Err(Invariant(format!("account {:?} cannot lock {amount}", stacker.holder)));
        }
        a.locked = amount;
        a.unlock_height = unlock_height;
        self.stackers.push(stacker);
        Ok(())
    }

    /// Whether `account` has a delegation in force at `burn_height` (pox-4 refuses both a
    /// second `delegate-stx` and a `stack-stx` then). One burn block short of
    /// [`World::revocable`], so the generator never plans on the edge.
    pub fn delegated(&self, account: &Holder, burn_height: u64) -> bool {
        self.delegations.get(account).is_some_and(|d| d.until.is_none_or(|u| u > burn_height))
    }

    /// The delegation pox-4's `get-check-delegation` returns for `account` at `burn_height`
    /// (what `revoke-delegate-stx` revokes, and what refuses a `stack-stx` or a second
    /// `delegate-stx`): in force while `burn-block-height <= until-burn-ht`.
    pub fn revocable(&self, account: &Holder, burn_height: u64) -> Option<&Delegation> {
        self.delegations.get(account).filter(|d| d.until.is_none_or(|u| u >= burn_height))
    }

    /// Records a failed deploy whose name may be deployed again.
    pub fn remember_failed_deploy(&mut self, d: FailedDeploy) {
        if self.retry_deploys.len() >= RETRY_CAP {
            self.retry_deploys.pop_front();
        }
        self.retry_deploys.push_back(d);
    }

    /// Releases every lock whose unlock height `burn_height` has reached. A node emits no
    /// event for this: the balance simply becomes spendable again.
    pub fn unlock(&mut self, burn_height: u64) {
        let (accounts, external) = (&mut self.accounts, &mut self.external);
        self.stackers.retain(|s| {
            let a = holder_in(accounts, external, &s.holder);
            if a.unlock_height <= burn_height {
                a.locked = 0;
                a.unlock_height = 0;
                false
            } else {
                true
            }
        });
    }

    /// Pays out every pending reward of a block at or below `height`, oldest first.
    pub fn mature(&mut self, height: u64) -> Vec<PendingReward> {
        let mut paid = Vec::new();
        while self.pending_rewards.front().is_some_and(|r| r.height <= height) {
            let Some(r) = self.pending_rewards.pop_front() else { break };
            self.account_mut(r.miner).balance += r.coinbase + r.fees();
            self.minted += r.coinbase;
            self.pending_fees -= r.fees();
            paid.push(r);
        }
        paid
    }

    /// Checks the conservation laws (see the module docs).
    pub fn check(&self) -> Result<(), Invariant> {
        let balances: u128 = self.accounts.iter().chain(self.external.values()).map(|a| a.balance).sum();
        if balances + self.pending_fees + self.burned != self.minted {
            return Err(Invariant(format!(
                "balances {balances} + pending fees {} + burned {} != minted {}",
                self.pending_fees, self.burned, self.minted
            )));
        }
        let owed: u128 = self.pending_rewards.iter().map(PendingReward::fees).sum();
        if owed + self.unassigned_stream_fees != self.pending_fees {
            return Err(Invariant(format!(
                "pending rewards owe {owed} + unconfirmed stream fees {} != pending fees {}",
                self.unassigned_stream_fees, self.pending_fees
            )));
        }
        if let Some(i) = self.accounts.iter().position(|a| a.locked > a.balance) {
            return Err(Invariant(format!("account {i} has more locked than it holds")));
        }
        if let Some((address, _)) = self.external.iter().find(|(_, a)| a.locked > a.balance) {
            return Err(Invariant(format!("{address} has more locked than it holds")));
        }
        let ft: u128 = self.accounts.iter().map(|a| a.ft).sum();
        if ft != self.ft_supply {
            return Err(Invariant(format!("devcoin balances {ft} != supply {}", self.ft_supply)));
        }
        let mut ids: Vec<u128> = self.nfts.iter().map(|n| n.0).collect();
        ids.sort_unstable();
        ids.dedup();
        if ids.len() != self.nfts.len() || self.nfts.iter().any(|n| n.0 > self.last_nft_id) {
            return Err(Invariant("NFT ids are not unique".into()));
        }
        if self.nfts.len() > NFT_CAP {
            return Err(Invariant(format!("{} live NFTs exceed the cap", self.nfts.len())));
        }
        Ok(())
    }
}

fn holder_in<'a>(
    accounts: &'a mut [Account],
    external: &'a mut BTreeMap<String, Account>,
    h: &Holder,
) -> &'a mut Account {
    match h {
        Holder::Seed(i) => &mut accounts[*i as usize],
        Holder::External(a) => external.entry(a.clone()).or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reward(height: u64, miner: u32, fees: u128) -> PendingReward {
        PendingReward {
            height,
            block_hash: [0; 32],
            index_hash: [0; 32],
            miner,
            coinbase: 1000,
            fees_anchored: fees,
            streamed_confirmed: 0,
            streamed_produced: 0,
        }
    }

    #[test]
    fn fees_flow_back_through_matured_rewards() {
        let mut w = World::genesis(&[500, 500, 0]);
        w.pay_fee(0, 30).unwrap();
        w.transfer_stx(0, 1, 100).unwrap();
        w.pending_rewards.push_back(reward(1, 2, 30));
        w.check().unwrap();
        assert!(w.mature(0).is_empty());
        let paid = w.mature(5);
        assert_eq!(paid.len(), 1);
        assert_eq!(w.account(2).balance, 1030);
        assert_eq!((w.minted, w.pending_fees), (2000, 0));
        w.check().unwrap();
        assert!(w.transfer_stx(0, 1, 10_000).is_err());
        assert!(w.pay_fee(2, 10_000).is_err());
    }

    #[test]
    fn locks_release_at_the_unlock_height() {
        let mut w = World::genesis(&[1000]);
        let stacker = Stacker { holder: Holder::Seed(0), btc: String::new(), first_cycle: 1, end_cycle: 2 };
        w.lock(stacker, 600, 40).unwrap();
        assert_eq!(w.account(0).spendable(), 400);
        assert!(w.transfer_stx(0, 0, 500).is_err());
        w.unlock(39);
        assert_eq!(w.account(0).locked, 600);
        w.unlock(40);
        assert_eq!((w.account(0).locked, w.stackers.len()), (0, 0));
        w.check().unwrap();
    }

    #[test]
    fn check_catches_a_leak() {
        let mut w = World::genesis(&[10, 10]);
        w.accounts[0].balance += 1;
        assert!(w.check().is_err());
        let mut w = World::genesis(&[10]);
        w.mint_ft(0, 5);
        w.accounts[0].ft = 4;
        assert!(w.check().is_err());
    }

    #[test]
    fn nfts_mint_move_and_burn() {
        let mut w = World::genesis(&[1, 1]);
        let a = w.mint_nft(0);
        let b = w.mint_nft(1);
        assert_eq!((a, b), (1, 2));
        w.move_nft(0, 1);
        w.burn_nft(1);
        assert_eq!(w.nfts, vec![(1, 1)]);
        w.check().unwrap();
    }
}
