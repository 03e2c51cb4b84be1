//! The loop of the backfills that rewrite `txs.api_json` when the store opens (migrations
//! 0032 and 0044): keyset pages of the primary key, one commit each, so memory stays flat on a
//! large store and an interrupted backfill resumes where it stopped.

use super::conn::Conn;
use super::db_row::DbRow;
use super::sql;
use super::sql::exec;

/// Rows per page (and commit).
const PAGE: i64 = 2_000;

/// Runs pending backfill `name` once (`label` and `what` for the log): for each `txs t` row
/// matching `filter`, `derive` gives its new `api_json` (`None` leaves the row as it is).
/// `columns` are what `derive` reads.
pub(super) async fn rewrite_api_json(
    conn: &mut Conn,
    (name, label, what): (&str, &str, &str),
    columns: &str,
    filter: &str,
    derive: impl Fn(&DbRow) -> Result<Option<String>, sqlx::Error>,
) -> Result<(), sqlx::Error> {
    let pending =
        sql::fetch_optional(conn, "SELECT name FROM pending_backfills WHERE name = $1", vec![name.into()])
            .await?
            .is_some();
    if !pending {
        return Ok(());
    }
    tracing::info!("{label}: {what} (once)");
    let select = format!(
        "SELECT t.tx_id AS key_tx_id, t.index_block_hash AS key_index_block_hash, \
         t.microblock_hash AS key_microblock_hash, {columns} FROM txs t \
         WHERE (t.tx_id, t.index_block_hash, t.microblock_hash) > ($1, $2, $3) AND ({filter}) \
         ORDER BY t.tx_id, t.index_block_hash, t.microblock_hash LIMIT $4"
    );
    let mut written = 0u64;
    // The last key done: each page seeks past it instead of skipping the done rows again.
    let mut last = (String::new(), String::new(), String::new());
    loop {
        let mut tx = conn.begin().await?;
        let vals = vec![last.0.clone().into(), last.1.clone().into(), last.2.clone().into(), PAGE.into()];
        let rows = sql::fetch_all(&mut tx, &select, vals).await?;
        if rows.is_empty() {
            exec(&mut tx, "DELETE FROM pending_backfills WHERE name = $1", vec![name.into()]).await?;
            tx.commit().await?;
            tracing::info!(filled = written, "{label}: done");
            return Ok(());
        }
        for r in &rows {
            let key: (String, String, String) = (
                r.try_get("key_tx_id")?,
                r.try_get("key_index_block_hash")?,
                r.try_get("key_microblock_hash")?,
            );
            if let Some(json) = derive(r)? {
                exec(
                    &mut tx,
                    "UPDATE txs SET api_json = $1 WHERE tx_id = $2 AND index_block_hash = $3 AND microblock_hash = $4",
                    vec![json.into(), key.0.clone().into(), key.1.clone().into(), key.2.clone().into()],
                )
                .await?;
                written += 1;
            }
            last = key;
        }
        tx.commit().await?;
    }
}
