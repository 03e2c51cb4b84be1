//! Migration 0044's backfill, run once by `Store::open`: the whole stored row text
//! (`stacks_extended::tx::row_text`) of every transaction row stored under a block before
//! ingestion wrote it, from the row's materialized parts and fields as the store reads them
//! (`explorer_tx::mined_tx`), which is what ingestion derives (`check_invariants` compares
//! them). Keyset pages of the primary key, one commit each, as `backfill_0032`: memory stays
//! flat and an interrupted backfill resumes where it stopped.

use super::conn::Conn;
use super::explorer_tx::{mined_tx, MINED_TX_COLUMNS};
use super::sql;
use super::sql::exec;

/// Rows per page (and commit).
const PAGE: i64 = 2_000;
const NAME: &str = "tx_row_text";

pub(super) async fn backfill(conn: &mut Conn) -> Result<(), sqlx::Error> {
    let pending =
        sql::fetch_optional(conn, "SELECT name FROM pending_backfills WHERE name = $1", vec![NAME.into()])
            .await?
            .is_some();
    if !pending {
        return Ok(());
    }
    tracing::info!("migration 0044: stored row texts of stored transactions (once)");
    let mut filled = 0u64;
    let mut last = (String::new(), String::new(), String::new());
    loop {
        let mut tx = conn.begin().await?;
        // Streamed rows (no block yet) keep their three parts; so does a row the backfill of
        // 0032 could not decode (empty), which renders its error as before.
        let rows = sql::fetch_all(
            &mut tx,
            &format!(
                "SELECT t.microblock_hash AS key_microblock_hash, {MINED_TX_COLUMNS} FROM txs t \
                 WHERE (t.tx_id, t.index_block_hash, t.microblock_hash) > ($1, $2, $3) \
                 AND t.index_block_hash <> '' ORDER BY t.tx_id, t.index_block_hash, t.microblock_hash LIMIT $4"
            ),
            vec![last.0.clone().into(), last.1.clone().into(), last.2.clone().into(), PAGE.into()],
        )
        .await?;
        if rows.is_empty() {
            exec(&mut tx, "DELETE FROM pending_backfills WHERE name = $1", vec![NAME.into()]).await?;
            tx.commit().await?;
            break;
        }
        for r in &rows {
            let key_micro: String = r.try_get("key_microblock_hash")?;
            let row = mined_tx(r)?;
            let key = (row.tx_id.clone(), row.index_block_hash.clone(), key_micro);
            let text = match &row.api_json {
                Some(parts) if !stacks_extended::tx::is_row_text(parts) => {
                    stacks_extended::tx::row_text(&row).ok()
                }
                _ => None,
            };
            if let Some(text) = text {
                exec(
                    &mut tx,
                    "UPDATE txs SET api_json = $1 WHERE tx_id = $2 AND index_block_hash = $3 AND microblock_hash = $4",
                    vec![text.into(), key.0.clone().into(), key.1.clone().into(), key.2.clone().into()],
                )
                .await?;
                filled += 1;
            }
            last = key;
        }
        tx.commit().await?;
    }
    tracing::info!(filled, "migration 0044: done");
    Ok(())
}
