//! The `/extended` API: warp routes that translate what the `ledger-read` readers return into the
//! incumbent's JSON. No SQL lives here; the store implements the reader.

#![forbid(unsafe_code)]

mod address;
pub mod bns;
mod chain;
mod contract;
mod cors;
mod error;
mod handler;
mod head;
mod headers;
mod microblock;
pub mod openapi;
mod params;
mod pox;
mod reader;
pub mod reply;
mod search;
mod status;
mod text;
mod time;
mod tokens;
pub mod tx;
pub mod v3;

pub use address::stx_balance_json;
pub use address::{
    AddressReader, AssetTotals, FtHolder, MempoolDelta, NonceState, PrincipalActivity, StxInbound, StxTotals,
    UntilBlock,
};
pub use bns::{BnsName, BnsReader, BnsSubdomain};
pub use chain::block_v1;
pub use chain::{
    BlockContents, BlockRecord, BlockRef, BlocksPage, BurnBlockRecord, BurnPoxTx, BurnRef, BurnchainReward,
    ChainReader, PoxTxsOf, RewardSlotHolder, SupplyRecord, TxIds,
};
pub use contract::{ContractLog, ContractReader, DeployStatus, LogKey, SmartContract};
pub use error::{not_found_fallback, recover, ApiError, ErrorBody};
pub use headers::{with_common_headers, API_VERSION, SERVER_VERSION};
pub use microblock::{microblock_json, MicroblockReader, MicroblockRecord};
pub use params::{query, LimitRule, Page, Paging, Query};
pub use pox::{
    CycleSigner, CycleStacker, PoolDelegation, PoxCycleReader, PoxCycleRecord, PoxEventRecord, PoxReader,
};
pub use reader::{ReadError, Tip, TipReader};
pub use search::{ContractHit, HashHit, MinedAt, SearchReader};
pub use status::{AlwaysReady, SyncProbe, SyncState};
pub use time::iso8601;
pub use tokens::{NftEvent, NftHolding, TokenReader};
pub use tx::{TxReader, TxStatsReader};
pub use v3::tx::V3TxReader;

use std::sync::Arc;

use warp::{Filter, Rejection, Reply};

/// Declares `ExtendedReader` as the sum of the listed reader traits, with the blanket impl for
/// every type that has them all: the list is written once.
macro_rules! extended_reader {
    ($($reader:path),+ $(,)?) => {
        /// Every reader the `/extended` routes translate (one bound for the route builders).
        pub trait ExtendedReader: $($reader +)+ {}

        impl<R> ExtendedReader for R where R: $($reader +)+ {}
    };
}

extended_reader!(
    TipReader,
    TxReader,
    ChainReader,
    AddressReader,
    ContractReader,
    TokenReader,
    SearchReader,
    MicroblockReader,
    TxStatsReader,
    PoxReader,
    PoxCycleReader,
    BnsReader,
    V3TxReader,
    v3::staking::StakingReader,
    v3::principals::PrincipalsReader,
);

/// Every `/extended` route (and the root redirects), with the incumbent's common headers.
/// Unmatched requests are left for the caller's fallback, so other APIs can be mounted beside.
pub fn routes<R: ExtendedReader>(
    reader: Arc<R>,
) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    routes_with_sync(reader, Arc::new(AlwaysReady))
}

/// [`routes`] with the `status` of `GET /extended` from `sync`.
pub fn routes_with_sync<R: ExtendedReader>(
    reader: Arc<R>,
    sync: Arc<dyn SyncProbe>,
) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    let get = status::routes(reader.clone(), sync)
        .or(tx::routes(reader.clone()))
        .or(chain::routes(reader.clone()))
        .or(address::routes(reader.clone()))
        .or(contract::routes(reader.clone()))
        .or(tokens::routes(reader.clone()))
        .or(search::routes(reader.clone()))
        .or(microblock::routes(reader.clone()))
        .or(pox::routes(reader.clone()))
        .or(bns::routes(reader.clone()))
        .or(v3::routes(reader))
        .or(openapi::routes());
    head::head_as_get(get.clone()).or(get).or(cors::preflight())
}
