//! The chain: genesis, burn blocks, anchored blocks with their rewards, microblock streams,
//! forks and mempool traffic, emitted as node events in the order a node sends them.
//!
//! The generator is an iterator. Each step builds one episode (a block with what precedes it,
//! a microblock stream, or a whole fork) into a small outbox, so memory stays constant however
//! long the chain: only the tip, the ledger (`World`) and, during a fork, one snapshot of both
//! are kept.
//!
//! Per block the order is: `/new_mempool_tx` batches for its transactions (with
//! `/drop_mempool_tx` `ReplaceByFee` after a replaced one), `/new_burn_block`, `/new_block`,
//! then `/drop_mempool_tx` for what the block made obsolete. A fork is a run of blocks on the
//! old tip's parent chain, followed by a longer competing run from the same fork point; the
//! competing run's last block overtakes (its height exceeds the tip), which is how the
//! consumer detects the reorg.

use std::collections::VecDeque;

use ledger_core::events::{EventPath, RawEvent};
use stacks_codec::address::Principal;
use stacks_codec::clarity::Value;
use stacks_codec::hash::{sha256, sha512_256};
use stacks_codec::to_hex_prefixed;
use stacks_codec::tx::Payload;

use super::config::{in_prepare_phase, reward_cycle, Ctx, DevnetConfig, POX_MIN_STACK};
use super::contracts::{GENESIS_NAME, GENESIS_PRINT, GENESIS_SOURCE};
use super::json::{
    self, Cost, DropMempoolTx, EventBody, MaturedReward, MicroblockPos, NewBlock, NewBurnBlock,
    NewMicroblocks, Receipt, RewardRecipient, RewardSet, TxEvent,
};
use super::rng::Rng;
use super::time::Clock;
use super::txbuild::boot_tx;
use super::txgen::{self, BlockEnv, GenTx, Placement, COINBASE_USTX};
use super::world::{Account, Invariant, PendingReward, World};
use super::DevnetError;

/// 2024-01-01 00:00:00 UTC: the first burn block's time and where the receive clock starts.
const GENESIS_TIME: u64 = 1_704_067_200;
/// Index block hash of the boot block, the same on every Stacks chain (regtest, mocknet).
const BOOT_INDEX_BLOCK_HASH: &str = "0x55c9861be5cff984a20ce6d99d4aa65941412889bdc665094136429b84f8c2ee";
const FF32: &str = "0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff";
/// Burn heights at which pox-1..3 locks unlock; pox-4 is active from the start.
const POX_UNLOCK_HEIGHTS: [u64; 3] = [1, 2, 3];
/// Largest `/new_mempool_tx` batch.
const MEMPOOL_BATCH: u64 = 25;
/// Chance (per mille) that a burn block has no Stacks block (a missed sortition).
const MISSED_SORTITION_PER_MILLE: u32 = 30;
/// Chance (per mille) that a user transaction reached the mempool as a cheaper version first.
const RBF_PER_MILLE: u32 = 20;

/// One event as a node sends it, with the id and receive time the TSV log gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevnetEvent {
    pub id: i64,
    pub receive_timestamp: String,
    pub path: EventPath,
    pub payload: String,
}

impl DevnetEvent {
    pub fn into_raw(self) -> RawEvent {
        RawEvent {
            id: self.id,
            receive_timestamp: self.receive_timestamp,
            path: self.path.as_str().to_string(),
            payload: self.payload,
        }
    }
}

/// A block as the generator's canonical chain has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainTip {
    pub height: u64,
    pub block_hash: String,
    pub index_block_hash: String,
}

/// Counts of what was generated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    pub events: u64,
    pub burn_blocks: u64,
    /// `/new_block` events, orphaned ones included.
    pub blocks: u64,
    pub orphaned_blocks: u64,
    pub forks: u64,
    /// Receipts in `/new_block` events (coinbases and confirmed microblock txs included).
    pub block_txs: u64,
    pub microblocks: u64,
    pub microblock_txs: u64,
    pub orphaned_microblock_txs: u64,
    pub mempool_txs: u64,
    pub replaced_by_fee: u64,
    /// BNS attachments posted to `/attachments/new`.
    pub attachments: u64,
    pub canonical_height: u64,
}

#[derive(Debug, Clone, Copy)]
struct BurnRef {
    height: u64,
    hash: [u8; 32],
    time: u64,
}

#[derive(Debug, Clone)]
struct Tip {
    height: u64,
    block_hash: [u8; 32],
    index_hash: [u8; 32],
    burn: BurnRef,
}

/// A microblock stream built on the tip, waiting for the next anchor block.
#[derive(Debug, Clone, Default)]
struct Stream {
    /// The prefix the next block confirms: receipts with their events.
    confirmed: Vec<(Receipt, Vec<TxEvent>)>,
    /// Hash and sequence of the last confirmed microblock.
    tip: Option<([u8; 32], u16)>,
    confirmed_fees: u128,
    confirmed_cost: Cost,
    /// Txids of the microblocks after the confirmed prefix: the next block orphans them.
    orphaned_txids: Vec<String>,
}

/// Everything that differs between competing forks.
#[derive(Debug, Clone)]
struct Branch {
    world: World,
    tip: Tip,
    stream: Option<Stream>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Genesis,
    Running,
    Done,
}

/// The deterministic event generator. Iterate it for the events, in order.
pub struct Generator {
    ctx: Ctx,
    rng: Rng,
    branch: Branch,
    burn: BurnRef,
    out: VecDeque<DevnetEvent>,
    clock: Clock,
    next_id: i64,
    phase: Phase,
    stats: Stats,
    /// Numbers the transactions (memo texts).
    serial: u64,
    /// Node mode (`node.rs`): transactions submitted since the last block, which the next block
    /// carries instead of generated traffic. `None`: generator mode.
    submitted: Option<Vec<GenTx>>,
}

fn hex32(h: &[u8; 32]) -> String {
    to_hex_prefixed(h)
}

fn hex20(h: &[u8; 20]) -> String {
    to_hex_prefixed(h)
}

/// The 20-byte consensus hash of a burn block (our stand-in for the sortition's hash).
fn consensus_hash(burn_hash: &[u8; 32]) -> [u8; 20] {
    let mut pre = b"stacks-ledger devnet consensus".to_vec();
    pre.extend_from_slice(burn_hash);
    let mut out = [0u8; 20];
    out.copy_from_slice(&sha256(&pre)[..20]);
    out
}

/// Sets the block- (or payload-) wide event indexes, starting at `first`.
fn number_events(events: &mut [TxEvent], first: u32) {
    for (i, e) in events.iter_mut().enumerate() {
        e.event_index = first + i as u32;
    }
}

impl Generator {
    pub fn new(cfg: DevnetConfig) -> Result<Generator, DevnetError> {
        let ctx = Ctx::new(cfg)?;
        let burn = BurnRef { height: 0, hash: [0; 32], time: 0 };
        Ok(Generator {
            rng: Rng::new(ctx.cfg.seed),
            branch: Branch {
                world: World::default(),
                tip: Tip { height: 0, block_hash: [0; 32], index_hash: [0; 32], burn },
                stream: None,
            },
            burn,
            out: VecDeque::new(),
            clock: Clock::starting_at(GENESIS_TIME),
            next_id: 1,
            phase: Phase::Genesis,
            stats: Stats::default(),
            serial: 0,
            submitted: None,
            ctx,
        })
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    pub fn config(&self) -> &DevnetConfig {
        &self.ctx.cfg
    }

    /// The canonical tip so far (after the last event iterated): height, block hash and index
    /// block hash, as 0x hex.
    pub fn canonical_tip(&self) -> ChainTip {
        let tip = &self.branch.tip;
        ChainTip {
            height: tip.height,
            block_hash: hex32(&tip.block_hash),
            index_block_hash: hex32(&tip.index_hash),
        }
    }

    /// The generator's own ledger on the canonical branch so far, one entry per account (users
    /// first, then miners): its address and state. Read-only; what a consumer of the events
    /// must end up with.
    pub fn accounts(&self) -> impl Iterator<Item = (&str, &Account)> + '_ {
        self.ctx.keys.iter().map(|k| k.c32.as_str()).zip(&self.branch.world.accounts)
    }

    /// Every live NFT of the canonical branch so far: `(token id, owner address)`.
    pub fn nft_owners(&self) -> impl Iterator<Item = (u128, &str)> + '_ {
        self.branch.world.nfts.iter().map(|&(id, owner)| (id, self.ctx.key(owner).c32.as_str()))
    }

    /// The asset identifiers of the devnet's FT (`devcoin`) and NFT (`devpunk`).
    pub fn asset_identifiers(&self) -> (&str, &str) {
        (&self.ctx.ft_asset, &self.ctx.nft_asset)
    }

    /// The ledger of the current canonical branch.
    #[cfg(test)]
    pub(crate) fn world(&self) -> &World {
        &self.branch.world
    }

    #[cfg(test)]
    pub(crate) fn ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// Checks the ledger's conservation laws.
    pub fn check_ledger(&self) -> Result<(), Invariant> {
        self.branch.world.check()
    }

    fn emit(&mut self, path: EventPath, payload: String, step_micros: u64, not_before_secs: u64) {
        let receive_timestamp = self.clock.advance(step_micros, not_before_secs);
        self.out.push_back(DevnetEvent { id: self.next_id, receive_timestamp, path, payload });
        self.next_id += 1;
        self.stats.events += 1;
    }

    /// One episode into the outbox; false when the chain is complete.
    fn step(&mut self) -> Result<bool, DevnetError> {
        match self.phase {
            Phase::Done => return Ok(false),
            Phase::Genesis => {
                self.genesis()?;
                self.phase = Phase::Running;
            }
            Phase::Running => {
                let cfg = &self.ctx.cfg;
                let height = self.branch.tip.height;
                if height >= cfg.blocks {
                    self.phase = Phase::Done;
                    return Ok(false);
                }
                let remaining = cfg.blocks - height;
                let (forks, microblocks) = (cfg.forks, cfg.microblocks);
                let (fork_pm, micro_pm, final_height) =
                    (cfg.fork_per_mille, cfg.microblock_per_mille, cfg.blocks);
                if forks
                    && height >= 2
                    && remaining >= 2
                    && self.branch.stream.is_none()
                    && self.rng.chance(fork_pm)
                {
                    let depth = if remaining >= 3 { self.rng.range(1, 2) } else { 1 };
                    self.fork(depth)?;
                } else {
                    if self.rng.chance(MISSED_SORTITION_PER_MILLE) {
                        let (burn, payload) = self.burn_block();
                        let step = self.rng.range(1_000, 50_000);
                        self.emit(EventPath::NewBurnBlock, payload, step, burn.time);
                    }
                    let miner = self.pick_miner(None);
                    self.block(miner)?;
                    // Never after the final block: its stream would stay unconfirmed, and the
                    // ledger would then hold effects no block carries.
                    if microblocks && self.branch.tip.height < final_height && self.rng.chance(micro_pm) {
                        self.stream()?;
                    }
                }
            }
        }
        self.stats.canonical_height = self.branch.tip.height;
        Ok(true)
    }

    fn pick_miner(&mut self, not: Option<u32>) -> u32 {
        let miners = &self.ctx.miners;
        match not.and_then(|m| miners.iter().position(|&x| x == m)) {
            Some(pos) => miners[(pos + 1 + self.rng.index(miners.len() - 1)) % miners.len()],
            None => miners[self.rng.index(miners.len())],
        }
    }

    /// Block 0: the boot block, funding every account with `stx_mint_event`s (as the
    /// recorded regtest and mocknet genesis blocks do, with a zero-amount boot token transfer
    /// carrying the mints).
    fn genesis(&mut self) -> Result<(), DevnetError> {
        let ctx = &self.ctx;
        let stx = 1_000_000u128;
        let balances: Vec<u128> =
            ctx.keys.iter().map(|_| u128::from(self.rng.range(100_000, 10_000_000)) * stx).collect();
        let deploy = boot_tx(
            ctx,
            Payload::SmartContract {
                name: GENESIS_NAME.into(),
                code_body: GENESIS_SOURCE.into(),
                clarity_version: None,
            },
        );
        let carrier = boot_tx(
            ctx,
            Payload::TokenTransfer { recipient: Principal::Standard(ctx.boot), amount: 0, memo: [0; 34] },
        );
        let mut events = vec![TxEvent {
            txid: deploy.txid.clone(),
            event_index: 0,
            committed: true,
            body: EventBody::Print {
                contract_identifier: format!("{}.{GENESIS_NAME}", ctx.boot),
                raw_value: to_hex_prefixed(
                    &Value::StringAscii(GENESIS_PRINT.as_bytes().to_vec()).serialize(),
                ),
            },
        }];
        for (key, amount) in ctx.keys.iter().zip(&balances) {
            events.push(TxEvent {
                txid: carrier.txid.clone(),
                event_index: 0,
                committed: true,
                body: EventBody::StxMint { recipient: key.c32.clone(), amount: *amount },
            });
        }
        number_events(&mut events, 0);
        let receipt = |tx_index, signed: super::txbuild::Signed, abi| Receipt {
            txid: signed.txid,
            tx_index,
            raw_tx: signed.raw_hex,
            status: "success",
            raw_result: "0x0703".into(),
            execution_cost: Cost::default(),
            contract_abi: abi,
            vm_error: None,
            contract_interface_key: ctx.cfg.current_node_fields,
            microblock: None,
        };
        let receipts = [receipt(0, deploy, Some(ctx.genesis_abi.clone())), receipt(1, carrier, None)];
        let burn = BurnRef { height: 0, hash: self.rng.bytes32(), time: 0 };
        let zero = hex32(&[0; 32]);
        let block = NewBlock {
            block_hash: zero.clone(),
            block_height: 0,
            index_block_hash: BOOT_INDEX_BLOCK_HASH.into(),
            parent_index_block_hash: FF32.into(),
            parent_block_hash: FF32.into(),
            parent_microblock: zero.clone(),
            parent_microblock_sequence: 0,
            burn_block_hash: hex32(&burn.hash),
            burn_block_height: 0,
            burn_block_time: 0,
            miner_txid: zero,
            parent_burn_block_hash: hex32(&burn.hash),
            parent_burn_block_height: 0,
            parent_burn_block_timestamp: 0,
            anchored_cost: Cost::default(),
            confirmed_microblocks_cost: Cost::default(),
            pox_v1_unlock_height: POX_UNLOCK_HEIGHTS[0],
            pox_v2_unlock_height: POX_UNLOCK_HEIGHTS[1],
            pox_v3_unlock_height: POX_UNLOCK_HEIGHTS[2],
            reward_set: None,
            cycle_number: None,
            matured_miner_rewards: &[],
            transactions: &receipts,
            events: &events,
            // A node reports the boot block with a zero consensus hash.
            tenure_height: ctx.cfg.current_node_fields.then_some(0),
            consensus_hash: ctx.cfg.current_node_fields.then(|| to_hex_prefixed(&[0u8; 20])),
        };
        let payload = json::to_json(&block);
        self.emit(EventPath::NewBlock, payload, 0, GENESIS_TIME);
        self.stats.blocks += 1;
        self.stats.block_txs += receipts.len() as u64;
        let index_hash = stacks_codec::decode_hex(BOOT_INDEX_BLOCK_HASH)
            .ok()
            .and_then(|b| <[u8; 32]>::try_from(b).ok())
            .ok_or_else(|| Invariant("boot index block hash".into()))?;
        self.branch = Branch {
            world: World::genesis(&balances),
            tip: Tip { height: 0, block_hash: [0; 32], index_hash, burn },
            stream: None,
        };
        self.burn = burn;
        Ok(())
    }

    /// The next burn block, with the PoX payouts of the current branch's reward set. Returns
    /// its payload; the caller emits it where it belongs in the event order.
    fn burn_block(&mut self) -> (BurnRef, String) {
        let height = self.burn.height + 1;
        let time = if self.burn.time == 0 { GENESIS_TIME } else { self.burn.time + self.rng.range(540, 660) };
        let hash = self.rng.bytes32();
        let holders: Vec<String> = match &self.branch.world.reward_set {
            Some((cycle, holders)) if *cycle == reward_cycle(height) && !in_prepare_phase(height) => {
                holders.clone()
            }
            _ => Vec::new(),
        };
        let spend = self.rng.range(10_000, 30_000);
        let mut recipients = Vec::new();
        if !holders.is_empty() {
            // A block commit pays two reward slots (the same holder may fill both).
            for _ in 0..2 {
                let recipient = holders[self.rng.index(holders.len())].clone();
                recipients.push(RewardRecipient { recipient, amt: spend / 2 });
            }
        }
        let paid: u64 = recipients.iter().map(|r| r.amt).sum();
        let payload = json::to_json(&NewBurnBlock {
            burn_block_hash: hex32(&hash),
            burn_block_height: height,
            burn_amount: spend - paid,
            reward_recipients: &recipients,
            reward_slot_holders: &holders,
            consensus_hash: to_hex_prefixed(&consensus_hash(&hash)),
            parent_burn_block_hash: hex32(&self.burn.hash),
        });
        self.burn = BurnRef { height, hash, time };
        self.stats.burn_blocks += 1;
        (self.burn, payload)
    }

    /// Computes the next cycle's reward set when `burn_height` is in its prepare phase and it
    /// has not been computed yet on this branch.
    fn reward_set(&mut self, burn_height: u64) -> Option<(u64, RewardSet)> {
        if !in_prepare_phase(burn_height) {
            return None;
        }
        let cycle = reward_cycle(burn_height) + 1;
        let world = &mut self.branch.world;
        if world.reward_set.as_ref().is_some_and(|(c, _)| *c >= cycle) {
            return None;
        }
        let rewarded_addresses: Vec<String> = world
            .stackers
            .iter()
            .filter(|s| s.first_cycle <= cycle && cycle < s.end_cycle)
            .map(|s| s.btc.clone())
            .collect();
        let signers =
            (self.ctx.cfg.pox5_per_mille > 0).then(|| super::pox5::signer_set(&self.ctx, &world.pox5));
        world.reward_set = Some((cycle, rewarded_addresses.clone()));
        Some((cycle, RewardSet { rewarded_addresses, signers, pox_ustx_threshold: POX_MIN_STACK }))
    }

    /// An anchored block on the branch tip by `miner`, confirming the tip's microblock stream
    /// (its confirmed prefix), with its mempool traffic before it. Returns the user txids it
    /// mined (what a reorg would orphan).
    fn block(&mut self, miner: u32) -> Result<Vec<String>, DevnetError> {
        let (burn, burn_payload) = self.burn_block();
        let parent = self.branch.tip.clone();
        let height = parent.height + 1;
        self.branch.world.unlock(burn.height);
        let reward_set = self.reward_set(burn.height);
        let env = BlockEnv { burn_height: burn.height, height };

        let ctx = &self.ctx;
        let world = &mut self.branch.world;
        // A duplicate deploy can only have reached the mempool before its original was mined.
        world.pending_duplicate = None;
        let mut anchored: Vec<GenTx> = vec![txgen::coinbase(ctx, &mut self.rng, world, miner)?];
        if height == 1 {
            anchored.extend(txgen::deploys(ctx, &mut self.rng, world)?);
        }
        let submitted = self.submitted.as_mut().map(std::mem::take);
        let generated = if submitted.is_some() { 0 } else { ctx.cfg.txs_per_block };
        anchored.extend(submitted.unwrap_or_default());
        for _ in 0..generated {
            self.serial += 1;
            let rbf = self.rng.chance(RBF_PER_MILLE);
            anchored.push(txgen::user_tx(
                ctx,
                &mut self.rng,
                world,
                env,
                Placement::Anchored,
                rbf,
                self.serial,
            )?);
        }

        // Microblock fees: 40% to the stream's producer (the parent), 60% to this block.
        let stream = self.branch.stream.take().unwrap_or_default();
        let produced = stream.confirmed_fees * 2 / 5;
        let streamed_confirmed = stream.confirmed_fees - produced;
        let world = &mut self.branch.world;
        world.unassigned_stream_fees -= stream.confirmed_fees;
        if stream.confirmed_fees > 0 {
            match world.pending_rewards.back_mut() {
                Some(r) if r.height == parent.height => r.streamed_produced += produced,
                _ => {
                    return Err(
                        Invariant(format!("no pending reward for stream producer {}", parent.height)).into()
                    )
                }
            }
        }
        let matured = match height.checked_sub(self.ctx.cfg.reward_maturity) {
            Some(h) if h > 0 => world.mature(h),
            _ => Vec::new(),
        };

        let mut receipts = Vec::with_capacity(anchored.len() + stream.confirmed.len());
        let mut events = Vec::new();
        let mut anchored_cost = Cost::default();
        let current = self.ctx.cfg.current_node_fields;
        for (i, tx) in anchored.iter().enumerate() {
            let mut r = tx.receipt.clone();
            r.tx_index = i as u32;
            r.contract_interface_key = current;
            anchored_cost += r.execution_cost;
            receipts.push(r);
            events.extend(tx.events.iter().cloned());
        }
        for (r, evs) in &stream.confirmed {
            let mut r = r.clone();
            r.tx_index = receipts.len() as u32;
            receipts.push(r);
            events.extend(evs.iter().cloned());
        }
        number_events(&mut events, 0);

        let mut pre = b"stacks-ledger devnet block".to_vec();
        pre.extend_from_slice(&parent.block_hash);
        pre.extend_from_slice(&height.to_be_bytes());
        pre.extend_from_slice(&burn.hash);
        pre.extend_from_slice(&miner.to_be_bytes());
        for r in &receipts {
            pre.extend_from_slice(r.txid.as_bytes());
        }
        let block_hash = sha512_256(&pre);
        let mut pre = block_hash.to_vec();
        pre.extend_from_slice(&consensus_hash(&burn.hash));
        let index_hash = sha512_256(&pre);

        let fees_anchored: u128 = anchored.iter().map(|t| t.fee).sum();
        world.pending_rewards.push_back(PendingReward {
            height,
            block_hash,
            index_hash,
            miner,
            coinbase: COINBASE_USTX,
            fees_anchored,
            streamed_confirmed,
            streamed_produced: 0,
        });
        let matured: Vec<MaturedReward> = matured
            .iter()
            .map(|r| {
                let miner = self.ctx.key(r.miner).c32.clone();
                MaturedReward {
                    from_index_consensus_hash: hex32(&r.index_hash),
                    from_stacks_block_hash: hex32(&r.block_hash),
                    recipient: miner.clone(),
                    miner_address: miner,
                    coinbase_amount: r.coinbase,
                    tx_fees_anchored: r.fees_anchored,
                    tx_fees_streamed_confirmed: r.streamed_confirmed,
                    tx_fees_streamed_produced: r.streamed_produced,
                }
            })
            .collect();
        let (parent_microblock, parent_microblock_sequence) = match stream.tip {
            Some((hash, seq)) => (hex32(&hash), seq),
            None => (hex32(&[0; 32]), 0),
        };
        let (cycle_number, reward_set) = match &reward_set {
            Some((c, set)) => (Some(*c), Some(set)),
            None => (None, None),
        };
        let block = NewBlock {
            block_hash: hex32(&block_hash),
            block_height: height,
            index_block_hash: hex32(&index_hash),
            parent_index_block_hash: hex32(&parent.index_hash),
            parent_block_hash: hex32(&parent.block_hash),
            parent_microblock,
            parent_microblock_sequence,
            burn_block_hash: hex32(&burn.hash),
            burn_block_height: burn.height,
            burn_block_time: burn.time,
            miner_txid: hex32(&self.rng.bytes32()),
            parent_burn_block_hash: hex32(&parent.burn.hash),
            parent_burn_block_height: parent.burn.height,
            parent_burn_block_timestamp: parent.burn.time,
            anchored_cost,
            confirmed_microblocks_cost: stream.confirmed_cost,
            pox_v1_unlock_height: POX_UNLOCK_HEIGHTS[0],
            pox_v2_unlock_height: POX_UNLOCK_HEIGHTS[1],
            pox_v3_unlock_height: POX_UNLOCK_HEIGHTS[2],
            reward_set,
            cycle_number,
            matured_miner_rewards: &matured,
            transactions: &receipts,
            events: &events,
            // Before Nakamoto every block has a coinbase, so each is a tenure of its own.
            tenure_height: current.then_some(height),
            consensus_hash: current.then(|| to_hex_prefixed(&consensus_hash(&burn.hash))),
        };
        let block_payload = json::to_json(&block);

        // The coinbase never goes through the mempool; submitted txs were announced on arrival.
        if self.submitted.is_none() {
            self.mempool(&anchored[1..]);
        }
        let step = self.rng.range(1_000, 50_000);
        self.emit(EventPath::NewBurnBlock, burn_payload, step, burn.time);
        let step = self.rng.range(100_000, 1_500_000);
        self.emit(EventPath::NewBlock, block_payload, step, 0);
        self.attachments(&anchored, height, &index_hash);
        if !stream.orphaned_txids.is_empty() {
            // The orphaned microblocks' txs conflict with what was mined instead.
            self.drop_txs(&stream.orphaned_txids, "StaleGarbageCollect", None);
        }

        self.stats.blocks += 1;
        self.stats.block_txs += receipts.len() as u64;
        self.branch.tip = Tip { height, block_hash, index_hash, burn };
        Ok(anchored[1..].iter().map(|t| t.receipt.txid.clone()).collect())
    }

    /// `/attachments/new` for the BNS attachments of a block's transactions, posted once the
    /// node has processed the block (none: nothing is posted).
    fn attachments(&mut self, txs: &[GenTx], height: u64, index_hash: &[u8; 32]) {
        let list: Vec<json::NewAttachment> = txs
            .iter()
            .filter_map(|t| {
                let a = t.attachment.as_ref()?;
                Some(json::NewAttachment {
                    attachment_index: a.attachment_index,
                    block_height: height,
                    content: to_hex_prefixed(&a.content),
                    content_hash: hex20(&a.content_hash),
                    contract_id: self.ctx.bns_contract_id.clone(),
                    index_block_hash: hex32(index_hash),
                    metadata: a.metadata.clone(),
                    tx_id: t.receipt.txid.clone(),
                })
            })
            .collect();
        if list.is_empty() {
            return;
        }
        self.stats.attachments += list.len() as u64;
        let step = self.rng.range(50_000, 2_000_000);
        self.emit(EventPath::AttachmentsNew, json::to_json(&list), step, 0);
    }

    /// `/new_mempool_tx` batches for `txs`, a replaced cheaper version first where there is one.
    fn mempool(&mut self, txs: &[GenTx]) {
        let mut batch: Vec<&str> = Vec::new();
        let mut target = self.rng.range(1, MEMPOOL_BATCH);
        for tx in txs {
            if let Some(original) = &tx.rbf_original {
                self.flush_mempool(&mut batch);
                self.flush_mempool(&mut vec![original.raw_hex.as_str()]);
                self.flush_mempool(&mut vec![tx.receipt.raw_tx.as_str()]);
                self.drop_txs(std::slice::from_ref(&original.txid), "ReplaceByFee", Some(&tx.receipt.txid));
                self.stats.replaced_by_fee += 1;
                continue;
            }
            batch.push(&tx.receipt.raw_tx);
            if batch.len() as u64 >= target {
                self.flush_mempool(&mut batch);
                target = self.rng.range(1, MEMPOOL_BATCH);
            }
        }
        self.flush_mempool(&mut batch);
    }

    fn flush_mempool(&mut self, batch: &mut Vec<&str>) {
        if batch.is_empty() {
            return;
        }
        self.stats.mempool_txs += batch.len() as u64;
        let payload = json::to_json(&batch);
        batch.clear();
        let step = self.rng.range(2_000, 800_000);
        self.emit(EventPath::NewMempoolTx, payload, step, 0);
    }

    fn drop_txs(&mut self, txids: &[String], reason: &'static str, new_txid: Option<&str>) {
        let payload = json::to_json(&DropMempoolTx { dropped_txids: txids, reason, new_txid });
        let step = self.rng.range(2_000, 200_000);
        self.emit(EventPath::DropMempoolTx, payload, step, 0);
    }

    /// The tip's miner streams 1 to 3 microblocks. A prefix (usually all of them) will be
    /// confirmed by the next block; the rest are built on a throwaway copy of the ledger, since
    /// the next block orphans them and their effects never happen.
    fn stream(&mut self) -> Result<(), DevnetError> {
        let anchor = self.branch.tip.clone();
        let count = self.rng.range(1, 3) as u16;
        let confirmed = if self.rng.chance(600) { count } else { self.rng.below(u64::from(count)) as u16 };
        let env = BlockEnv { burn_height: anchor.burn.height, height: anchor.height + 1 };
        let mut orphan_world: Option<World> = None;
        let mut stream = Stream::default();
        let mut parent_hash = anchor.block_hash;
        for seq in 0..count {
            if seq == confirmed {
                orphan_world = Some(self.branch.world.clone());
            }
            let n = self.rng.range(1, 3);
            let mut txs = Vec::new();
            self.branch.world.pending_duplicate = None;
            if let Some(w) = orphan_world.as_mut() {
                w.pending_duplicate = None;
            }
            for _ in 0..n {
                self.serial += 1;
                let world = match orphan_world.as_mut() {
                    Some(w) => w,
                    None => &mut self.branch.world,
                };
                txs.push(txgen::user_tx(
                    &self.ctx,
                    &mut self.rng,
                    world,
                    env,
                    Placement::Microblock,
                    false,
                    self.serial,
                )?);
            }
            let mut pre = b"stacks-ledger devnet microblock".to_vec();
            pre.extend_from_slice(&anchor.index_hash);
            pre.extend_from_slice(&parent_hash);
            pre.extend_from_slice(&seq.to_be_bytes());
            for t in &txs {
                pre.extend_from_slice(t.receipt.txid.as_bytes());
            }
            let hash = sha512_256(&pre);
            let pos = MicroblockPos { sequence: seq, hash: hex32(&hash), parent_hash: hex32(&parent_hash) };
            let mut receipts = Vec::new();
            let mut events = Vec::new();
            for (i, t) in txs.iter().enumerate() {
                let mut r = t.receipt.clone();
                r.tx_index = i as u32;
                r.contract_interface_key = self.ctx.cfg.current_node_fields;
                r.microblock = Some(pos.clone());
                receipts.push(r);
                events.extend(t.events.iter().cloned());
            }
            number_events(&mut events, 0);
            let payload = json::to_json(&NewMicroblocks {
                parent_index_block_hash: hex32(&anchor.index_hash),
                burn_block_hash: hex32(&anchor.burn.hash),
                burn_block_height: anchor.burn.height,
                burn_block_timestamp: anchor.burn.time,
                transactions: &receipts,
                events: &events,
            });
            self.mempool(&txs);
            let step = self.rng.range(500_000, 30_000_000);
            self.emit(EventPath::NewMicroblocks, payload, step, 0);
            self.stats.microblocks += 1;
            self.stats.microblock_txs += n;
            if seq < confirmed {
                let fees: u128 = txs.iter().map(|t| t.fee).sum();
                stream.confirmed_fees += fees;
                self.branch.world.unassigned_stream_fees += fees;
                for (r, t) in receipts.into_iter().zip(txs) {
                    stream.confirmed_cost += r.execution_cost;
                    stream.confirmed.push((r, t.events));
                }
                stream.tip = Some((hash, seq));
            } else {
                stream.orphaned_txids.extend(receipts.into_iter().map(|r| r.txid));
                self.stats.orphaned_microblock_txs += n;
            }
            parent_hash = hash;
        }
        self.branch.stream = Some(stream);
        Ok(())
    }

    /// A fork at the tip: `depth` blocks by one miner, then `depth + 1` competing blocks by
    /// another from the same parent. The first run is orphaned when the second overtakes it;
    /// its transactions are then dropped from the mempool (`ReplaceAcrossFork`), since their
    /// nonces were used again on the winning branch.
    fn fork(&mut self, depth: u64) -> Result<(), DevnetError> {
        let snapshot = self.branch.clone();
        let loser = self.pick_miner(None);
        let winner = self.pick_miner(Some(loser));
        let mut orphaned = Vec::new();
        for _ in 0..depth {
            orphaned.extend(self.block(loser)?);
        }
        self.branch = snapshot;
        for _ in 0..=depth {
            self.block(winner)?;
        }
        if !orphaned.is_empty() {
            self.drop_txs(&orphaned, "ReplaceAcrossFork", None);
        }
        self.stats.forks += 1;
        self.stats.orphaned_blocks += depth;
        Ok(())
    }
}

/// Node mode (see `node.rs`): the generated chain is done; the chain grows by the blocks
/// [`Generator::mine`] builds from submitted transactions.
impl Generator {
    /// Switches to node mode: later blocks carry only submitted transactions.
    pub(super) fn start_node_mode(&mut self) {
        self.submitted.get_or_insert_with(Vec::new);
    }

    /// What a submitted transaction is checked against and applied to, and the queue it joins.
    pub(super) fn node_parts(&mut self) -> (&Ctx, &mut World, &mut Vec<GenTx>) {
        (&self.ctx, &mut self.branch.world, self.submitted.get_or_insert_with(Vec::new))
    }

    pub(super) fn ctx_ref(&self) -> &Ctx {
        &self.ctx
    }

    pub(super) fn world_ref(&self) -> &World {
        &self.branch.world
    }

    pub(super) fn burn_height(&self) -> u64 {
        self.burn.height
    }

    /// What the next mined block's transactions execute in: the devnet node runs a submitted
    /// transaction on arrival, as that block will.
    pub(super) fn next_env(&self) -> BlockEnv {
        BlockEnv { burn_height: self.burn.height + 1, height: self.branch.tip.height + 1 }
    }

    pub(super) fn pending_submitted(&self) -> usize {
        self.submitted.as_ref().map_or(0, Vec::len)
    }

    /// Announces an accepted transaction: `/new_mempool_tx`, as a node does on arrival.
    pub(super) fn announce(&mut self, raw_hex: &str) {
        self.flush_mempool(&mut vec![raw_hex]);
    }

    /// Mines the next block on the canonical tip with the submitted transactions.
    pub(super) fn mine(&mut self) -> Result<(), DevnetError> {
        self.start_node_mode();
        let miner = self.pick_miner(None);
        self.block(miner)?;
        self.stats.canonical_height = self.branch.tip.height;
        Ok(())
    }

    /// The events built so far and not yet taken, in order.
    pub(super) fn take_events(&mut self) -> Vec<DevnetEvent> {
        self.out.drain(..).collect()
    }
}

impl Iterator for Generator {
    type Item = Result<DevnetEvent, DevnetError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(event) = self.out.pop_front() {
                return Some(Ok(event));
            }
            match self.step() {
                Ok(true) => continue,
                Ok(false) => return None,
                Err(e) => {
                    self.phase = Phase::Done;
                    return Some(Err(e));
                }
            }
        }
    }
}
