//! The ledger's read interface: what the API surfaces read, as plain rows, behind a trait the
//! store implements. No SQL and no database types here, so a surface can be served (and tested)
//! from any implementation, the in-memory fakes of the tests included.
//!
//! The rows are the ledger's own model (blocks, their transactions and operations, account
//! state at a height); each surface translates them into its wire format.

mod error;
mod ledger;
mod rows;

pub use error::ReadError;
pub use ledger::{LedgerReader, ReadFuture};
pub use rows::{AccountAt, BlockContents, BlockEventRow, LedgerBlock, LedgerTx, OpRow, TxRef};
