//! Transactions: the shared `Transaction` / `MempoolTransaction` / `TransactionEvent` renderer
//! ([`entity`]), the rows it renders ([`model`]), the reads behind them ([`TxReader`]) and the
//! `/extended/v1/tx/*` routes.

mod abi;
pub mod entity;
mod lists;
pub mod model;
mod reader;
mod routes;

pub use entity::{
    any_tx_json, clarity_json, event_json, mempool_tx_json, mined_tx_json, RenderError, RenderOptions,
};
pub use model::{AnyTx, MempoolTx, MinedTx, TxEvent};
pub use reader::{BlockRef, MempoolFilter, MempoolSort, TxListFilter, TxReader, TxSort};
pub use routes::{parse_tx_id, raw_query, routes, tx_etag};
