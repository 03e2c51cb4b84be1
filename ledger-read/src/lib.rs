//! The ledger's read interface: what the API surfaces read, as plain rows, behind traits the
//! store implements. No SQL and no database types here, so a surface can be served (and tested)
//! from any implementation, the in-memory fakes of the tests included.
//!
//! The rows are the ledger's own model (blocks, their transactions and operations, account
//! state at a height); each surface translates them into its wire format. [`LedgerReader`] is
//! what Rosetta reads, [`V2Reader`] what the `/v2` answers read; [`LocalTxSink`] is the one
//! write a surface makes (a transaction it put into the node's mempool).

#![forbid(unsafe_code)]

mod error;
mod ledger;
mod local_tx;
mod node;
mod rows;

pub use error::ReadError;
pub use ledger::{LedgerReader, ReadFuture, TipReader};
pub use local_tx::{LocalSource, LocalTxError, LocalTxOutcome, LocalTxSink, RecordFuture};
pub use node::{V2Account, V2BurnBlock, V2Contract, V2InfoState, V2Microblock, V2Reader, V2Tip};
pub use rows::{AccountAt, BlockContents, BlockEventRow, EventRow, LedgerBlock, LedgerTx, OpRow, TxRef};
