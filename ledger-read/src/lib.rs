//! The ledger's model and read interface: what the API surfaces read, as plain rows, behind
//! traits the store implements. No SQL and no database types here, so a surface can be served
//! (and tested) from any implementation, the in-memory fakes of the tests included; and nothing
//! of any surface, which all depend on this crate and none of which it knows.
//!
//! The rows are the ledger's own model (blocks, their transactions and operations, account
//! state at a height); each surface translates them into its wire format. One [`Tip`] and one
//! [`AccountState`] serve every surface ([`TipReader`], [`AccountReader`]); [`LedgerReader`] is
//! what Rosetta reads besides, [`V2Reader`] what the `/v2` answers read, and the modules [`tip`],
//! [`chain`], [`tx`], [`address`], [`contract`], [`tokens`], [`search`], [`microblock`],
//! [`pox`], [`staking`], [`principals`] and [`bns`] what the explorer routes read (paged by
//! [`Paging`] or by the positions of [`cursor`]). [`LocalTxSink`] and [`FaucetBook`] are the writes a surface
//! makes (a transaction it put into the node's mempool; the faucets' request records); [`Change`] what an applied event
//! changed, as ingestion announces it; [`TxRender`] how a surface's text of a transaction is
//! rendered at ingest and kept by a store that does not know its shape.

#![forbid(unsafe_code)]

pub mod address;
pub mod bns;
pub mod chain;
mod change;
pub mod contract;
pub mod cursor;
mod error;
pub mod faucet;
mod ledger;
mod local_tx;
pub mod microblock;
mod node;
mod paging;
pub mod pox;
pub mod principals;
mod rendered;
mod rows;
pub mod search;
pub mod staking;
pub mod tip;
pub mod tokens;
pub mod tx;

pub use change::Change;
pub use error::ReadError;
pub use faucet::{FaucetBook, FaucetRequest, RateLimit, Reservation};
pub use ledger::{AccountReader, LedgerReader, ReadFuture};
pub use local_tx::{LocalSource, LocalTxError, LocalTxOutcome, LocalTxSink, RecordFuture};
pub use node::{V2BurnBlock, V2Contract, V2InfoState, V2Reader};
pub use paging::Paging;
pub use rendered::TxRender;
pub use rows::{
    is_boot_address, AccountState, BlockContents, BlockEventRow, EventRow, LedgerBlock, LedgerTx, OpRow,
    TxRef, BOOT_ADDRESSES,
};
pub use tip::{MicroblockTip, Tip, TipReader};
