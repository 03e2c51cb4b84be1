//! Migration 0044's backfill, run once by `Store::open`: the whole stored row text
//! ([`TxRender::row_text`]) of every transaction row stored under a block before
//! ingestion wrote it, from the row's materialized parts and fields as the store reads them
//! (`explorer_tx::mined_tx`), which is what ingestion derives (`check_invariants` compares
//! them). `backfill_txs`: keyset pages, one commit each.

use ledger_read::TxRender;

use super::backfill_txs::rewrite_api_json;
use super::conn::Conn;
use super::explorer_tx::{mined_tx, MINED_TX_COLUMNS};

pub(super) async fn backfill(conn: &mut Conn, render: &dyn TxRender) -> Result<(), sqlx::Error> {
    let log = ("tx_row_text", "migration 0044", "stored row texts of stored transactions");
    // Streamed rows (no block yet) keep their three parts; so does a row the backfill of 0032
    // could not decode (empty), which renders its error as before.
    rewrite_api_json(conn, log, MINED_TX_COLUMNS, "t.index_block_hash <> ''", |r| {
        let row = mined_tx(r)?;
        Ok(match &row.api_json {
            Some(parts) if !render.is_row_text(parts) => render.row_text(&row),
            _ => None,
        })
    })
    .await
}
