//! Transactions: the shared `Transaction` / `MempoolTransaction` / `TransactionEvent` renderer
//! ([`entity`]), the rows it renders ([`model`]), the reads behind them ([`TxReader`]) and the
//! `/extended/v1/tx/*` routes.

mod abi;
pub mod entity;
pub(crate) mod events;
pub(crate) mod lists;
pub use ledger_read::tx::model;
pub(crate) mod params;
use ledger_read::tx as reader;
pub(crate) mod routes;
mod stats;
mod stored;

pub use entity::{
    any_tx_json, clarity_json, event_json, is_row_text, listed_tx_text, materialized_from_raw,
    materialized_json, materialized_parts, mempool_tx_json, mined_tx_json, mined_tx_text, page_tx_text,
    row_text, RenderError, RenderOptions,
};
/// `exclude_function_args` of a request, for every route that renders transactions.
pub(crate) use lists::options as render_options;
pub use model::{AnyTx, ListedTx, MempoolTx, MinedTx, PageTx, TxEvent};
pub use params::{parse_tx_id, parse_tx_id_in, raw_query};
pub use reader::{
    BlockRef, EventFilter, EventOwner, MempoolFilter, MempoolSort, MempoolStatRow, TxListFilter, TxReader,
    TxSort, TxStatsReader,
};
pub(crate) use routes::tip_etag;
pub use routes::{routes, tx_etag};
pub(crate) use stats::js_number;
pub use stored::StoredText;
