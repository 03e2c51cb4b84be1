//! Migration 0032's backfill, run once by `Store::open`: the materialized JSON parts
//! (`txs.api_json`) of transactions stored before the column existed, derived from each row's
//! stored bytes as ingestion derives them. Keyset pages of the primary key, one commit each,
//! so memory stays flat on a large store and an interrupted backfill resumes where it stopped.

use super::conn::Conn;
use super::sql;
use super::sql::{exec, get_bool};

/// Rows per page (and commit).
const PAGE: i64 = 2_000;

async fn pending(conn: &mut Conn) -> Result<bool, sqlx::Error> {
    Ok(sql::fetch_optional(conn, "SELECT name FROM pending_backfills WHERE name = 'tx_api_json'", vec![])
        .await?
        .is_some())
}

pub(super) async fn backfill(conn: &mut Conn) -> Result<(), sqlx::Error> {
    if !pending(conn).await? {
        return Ok(());
    }
    tracing::info!("migration 0032: materialized transaction JSON of stored transactions (once)");
    let mut filled = 0u64;
    // The last key done: each page seeks past it instead of skipping the filled rows again.
    let mut last = (String::new(), String::new(), String::new());
    loop {
        let mut tx = conn.begin().await?;
        let rows = sql::fetch_all(
            &mut tx,
            "SELECT tx_id, index_block_hash, microblock_hash, raw_tx, synthetic_tx, raw_result, \
             (CASE WHEN is_burnchain_op THEN 1 ELSE 0 END) AS is_burnchain_op FROM txs \
             WHERE (tx_id, index_block_hash, microblock_hash) > ($1, $2, $3) AND api_json IS NULL \
             ORDER BY tx_id, index_block_hash, microblock_hash LIMIT $4",
            vec![last.0.clone().into(), last.1.clone().into(), last.2.clone().into(), PAGE.into()],
        )
        .await?;
        if rows.is_empty() {
            exec(&mut tx, "DELETE FROM pending_backfills WHERE name = 'tx_api_json'", vec![]).await?;
            tx.commit().await?;
            break;
        }
        for r in &rows {
            let tx_id: String = r.try_get("tx_id")?;
            let raw: String = match r.try_get::<Option<String>, _>("synthetic_tx")? {
                Some(s) => s,
                None => r.try_get("raw_tx")?,
            };
            let raw_result: String = r.try_get("raw_result")?;
            let (ibh, mbh): (String, String) =
                (r.try_get("index_block_hash")?, r.try_get("microblock_hash")?);
            let json = stacks_extended::tx::materialized_from_raw(
                &tx_id,
                &raw,
                get_bool(r, "is_burnchain_op")?,
                &raw_result,
            )
            // Every stored transaction was decoded when it was stored; one that no longer
            // does keeps an empty value, which the renderer reports as it did before.
            .unwrap_or_default();
            exec(
                &mut tx,
                "UPDATE txs SET api_json = $1 WHERE tx_id = $2 AND index_block_hash = $3 AND microblock_hash = $4",
                vec![
                    json.into(),
                    tx_id.clone().into(),
                    ibh.clone().into(),
                    mbh.clone().into(),
                ],
            )
            .await?;
            last = (tx_id, ibh, mbh);
        }
        filled += rows.len() as u64;
        tx.commit().await?;
    }
    tracing::info!(filled, "migration 0032: done");
    Ok(())
}
