//! What the search route needs from storage.

use std::future::Future;

use crate::address::AddressReader;
use crate::ReadError;

/// A mined transaction's place in the chain, as search reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MinedAt {
    pub canonical: bool,
    pub block_hash: String,
    pub burn_block_time: i64,
    pub block_height: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HashHit {
    Tx { tx_type: String, at: MinedAt },
    MempoolTx { tx_type: String },
    Block { canonical: bool, hash: String, parent_block_hash: String, burn_block_time: i64, height: u64 },
}

/// A contract's deploy transaction, mined (`at`) or pending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractHit {
    pub tx_id: String,
    pub tx_type: String,
    pub at: Option<MinedAt>,
}

pub trait SearchReader: AddressReader {
    /// A transaction (mined, then pending) or a block with exactly this `0x` hash.
    fn search_hash(&self, hash: &str) -> impl Future<Output = Result<Option<HashHit>, ReadError>> + Send;
    fn search_contract(
        &self,
        contract_id: &str,
    ) -> impl Future<Output = Result<Option<ContractHit>, ReadError>> + Send;
    /// Whether any stored transaction or asset event involves `address`.
    fn address_seen(&self, address: &str) -> impl Future<Output = Result<bool, ReadError>> + Send;
}
