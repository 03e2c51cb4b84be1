//! What the contract routes need from storage.

use std::future::Future;

use crate::tip::TipReader;
use crate::ReadError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmartContract {
    pub tx_id: String,
    pub canonical: bool,
    pub contract_id: String,
    pub block_height: u64,
    pub clarity_version: Option<i64>,
    pub source_code: String,
    /// The ABI as the JSON text the node sent.
    pub abi: Option<String>,
}

/// A `print` event of a contract, with where it sits in the chain (the logs cursor).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractLog {
    pub tx_id: String,
    pub event_index: u64,
    pub block_height: u64,
    /// `None` for a transaction in the anchored block itself.
    pub microblock_sequence: Option<u64>,
    pub tx_index: u64,
    pub contract_id: String,
    pub topic: String,
    pub hex: String,
    pub repr: String,
}

/// Position of a log in the chain's order: height, microblock sequence (`i32::MAX` for the
/// anchored block), tx index, event index.
pub type LogKey = (u64, u64, u64, u64);

/// Where a contract's deployment stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeployStatus {
    pub status: String,
    pub tx_id: String,
    /// `None` while pending in the mempool.
    pub block_height: Option<u64>,
}

pub trait ContractReader: TipReader {
    /// The canonical deployment of `contract_id` (or the latest one if none is canonical).
    fn contract(
        &self,
        contract_id: &str,
    ) -> impl Future<Output = Result<Option<SmartContract>, ReadError>> + Send;
    /// Canonical logs of a contract, newest first, from `below` (inclusive) when given; the
    /// total count of its canonical logs.
    fn contract_logs(
        &self,
        contract_id: &str,
        below: Option<LogKey>,
        limit: u32,
        offset: u64,
    ) -> impl Future<Output = Result<(u64, Vec<ContractLog>), ReadError>> + Send;
    /// The up to `limit` logs just newer than `key`, oldest first (for `prev_cursor`).
    fn contract_logs_above(
        &self,
        contract_id: &str,
        key: LogKey,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<ContractLog>, ReadError>> + Send;
    fn deploy_status(
        &self,
        contract_id: &str,
    ) -> impl Future<Output = Result<Option<DeployStatus>, ReadError>> + Send;
    /// Canonical contracts whose ABI's `functions` contain every one of `functions` (JSON
    /// containment, as PostgreSQL's `@>`), newest first.
    fn contracts_by_trait(
        &self,
        functions: &serde_json::Value,
        limit: u32,
        offset: u64,
    ) -> impl Future<Output = Result<Vec<SmartContract>, ReadError>> + Send;
}
