//! The transaction family of v3: transactions, a block's transactions, the mempool and the
//! STX supply.

pub use ledger_read::tx::v3 as reader;
pub mod render;
pub(crate) mod routes;

pub use reader::{MempoolScope, TxScope, V3AnyTx, V3Block, V3MempoolTx, V3Tx, V3TxReader};
pub use routes::{mempool_page, tx_page};
