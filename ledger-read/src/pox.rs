//! What the PoX routes need from storage.

use std::future::Future;

use crate::Paging;
use crate::ReadError;

/// One decoded pox-2/3/4 `print` event, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PoxEventRecord {
    pub block_height: u64,
    pub tx_id: String,
    pub tx_index: u32,
    pub event_index: u32,
    pub stacker: String,
    pub locked: String,
    pub balance: String,
    pub burnchain_unlock_height: u64,
    pub pox_addr: Option<String>,
    pub pox_addr_raw: Option<String>,
    /// `stack-stx`, `delegate-stx`, `handle-unlock`, ...
    pub name: String,
    /// The print's `data` tuple as a JSON object of `{key: Clarity repr}`.
    pub data: String,
}

/// One stacker delegating to a pool, as `/{pox}/{pool}/delegations` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PoolDelegation {
    pub stacker: String,
    pub pox_addr: Option<String>,
    pub amount_ustx: String,
    pub burn_block_unlock_height: Option<u64>,
    pub block_height: u64,
    pub tx_id: String,
}

pub trait PoxReader: Send + Sync + 'static {
    /// A page of the canonical events of `contract` (`pox-2`, `pox-3`, `pox-4`), newest first.
    fn pox_events(
        &self,
        contract: &str,
        paging: Paging,
    ) -> impl Future<Output = Result<Vec<PoxEventRecord>, ReadError>> + Send;

    /// The canonical events of `contract` emitted by transaction `tx_id`; `None` when no
    /// transaction has that id.
    fn pox_events_of_tx(
        &self,
        contract: &str,
        tx_id: &str,
    ) -> impl Future<Output = Result<Option<Vec<PoxEventRecord>>, ReadError>> + Send;

    /// The canonical events of `contract` whose stacker is `stacker`.
    fn pox_events_of_stacker(
        &self,
        contract: &str,
        stacker: &str,
    ) -> impl Future<Output = Result<Vec<PoxEventRecord>, ReadError>> + Send;

    /// The stackers whose latest canonical `delegate-stx` of `contract` to `pool`, in a block
    /// after `after_block` and at or below `height` (`None`: the tip), is still in force at
    /// that block's burn height: a page newest first, and how many there are. `None` when no
    /// canonical block has that height.
    fn pool_delegations(
        &self,
        contract: &str,
        pool: &str,
        height: Option<u64>,
        after_block: u64,
        paging: Paging,
    ) -> impl Future<Output = Result<Option<(u64, Vec<PoolDelegation>)>, ReadError>> + Send;
}

/// A reward cycle's signer set, from the first canonical block that announced it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PoxCycleRecord {
    pub block_height: u64,
    pub index_block_hash: String,
    pub cycle_number: u64,
    pub signers: Vec<CycleSigner>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CycleSigner {
    /// `0x` hex compressed public key.
    pub signing_key: String,
    /// The network's single-sig address of the signing key.
    pub signer_address: String,
    pub weight: u64,
    pub stacked_amount: u128,
}

/// A stacker locked for a cycle, from its latest pox-4 event that covers the cycle.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CycleStacker {
    pub stacker: String,
    /// The signer key it stacks under (for a pooled stacker, its delegator's aggregation commit).
    pub signer_key: Option<String>,
    pub locked: u128,
    pub pox_addr: Option<String>,
    /// Delegated through a pool (else solo).
    pub pooled: bool,
}

/// The reads behind `/extended/v2/pox/cycles/*`.
pub trait PoxCycleReader: Send + Sync + 'static {
    /// A page of reward cycles, newest first, and how many there are.
    fn pox_cycles(
        &self,
        paging: Paging,
    ) -> impl Future<Output = Result<(u64, Vec<PoxCycleRecord>), ReadError>> + Send;

    fn pox_cycle(&self, cycle: u64)
        -> impl Future<Output = Result<Option<PoxCycleRecord>, ReadError>> + Send;

    /// The solo and pooled stackers locked for `cycle`.
    fn cycle_stackers(&self, cycle: u64)
        -> impl Future<Output = Result<Vec<CycleStacker>, ReadError>> + Send;
}
