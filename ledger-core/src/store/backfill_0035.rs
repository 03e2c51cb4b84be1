//! Migration 0035's backfill, run once by `Store::open`: the FT/NFT operations of transactions
//! stored before token operations existed, derived from their stored events by the function
//! ingestion uses (`ledger::ops::token_operations`), so a backfilled store holds the same rows
//! as one that ingested the chain afresh. Pages of whole transactions (keyset on the events'
//! `(index_block_hash, tx_id)`), one commit each; rows already there are left alone, so an
//! interrupted backfill just runs again.

use super::conn::Conn;
use super::rows::{op_vals, At, OP_COLS};
use super::sql;
use super::sql::{exec, get_bool, insert_rows};
use crate::ledger::ops::token_operations;
use crate::ledger::EventRow;

/// Transactions per page (and commit).
const PAGE: i64 = 500;

const TOKEN_KINDS: &str = "('ft_transfer', 'ft_mint', 'ft_burn', 'nft_transfer', 'nft_mint', 'nft_burn')";

pub(super) async fn backfill(conn: &mut Conn) -> Result<(), sqlx::Error> {
    let pending = sql::fetch_optional(
        conn,
        "SELECT name FROM pending_backfills WHERE name = 'token_operations'",
        vec![],
    )
    .await?;
    if pending.is_none() {
        return Ok(());
    }
    tracing::info!("migration 0035: token operations of stored FT/NFT events (once)");
    let mut filled = 0u64;
    let mut last = (String::new(), String::new());
    loop {
        let mut tx = conn.begin().await?;
        // Streamed (not yet anchored) microblock rows have no operations, as at ingest.
        let sql = format!(
            "SELECT e.index_block_hash, e.tx_id, e.block_height, e.tx_index, e.event_index, e.kind, e.sender, \
             e.recipient, e.amount, e.asset_identifier, e.value_hex, \
             (CASE WHEN e.canonical THEN 1 ELSE 0 END) AS canonical FROM events e \
             JOIN (SELECT DISTINCT index_block_hash, tx_id FROM events WHERE kind IN {TOKEN_KINDS} \
             AND index_block_hash <> '' AND (index_block_hash, tx_id) > ($1, $2) \
             ORDER BY index_block_hash, tx_id LIMIT $3) k \
             ON k.index_block_hash = e.index_block_hash AND k.tx_id = e.tx_id \
             WHERE e.kind IN {TOKEN_KINDS} ORDER BY e.index_block_hash, e.tx_id, e.event_index"
        );
        let rows =
            sql::fetch_all(&mut tx, &sql, vec![last.0.clone().into(), last.1.clone().into(), PAGE.into()])
                .await?;
        if rows.is_empty() {
            exec(&mut tx, "DELETE FROM pending_backfills WHERE name = 'token_operations'", vec![]).await?;
            tx.commit().await?;
            break;
        }
        // One transaction's events at a time: token operations are numbered per transaction.
        let mut group: Vec<EventRow> = Vec::new();
        let mut key: Option<(String, String, i64, bool)> = None;
        let mut vals = Vec::new();
        let mut flush = |key: &Option<(String, String, i64, bool)>, group: &mut Vec<EventRow>| {
            if let Some((ibh, tx_id, height, canonical)) = key {
                let at = At {
                    index_block_hash: ibh,
                    block_hash: "",
                    block_height: *height,
                    burn_block_height: 0,
                    canonical: *canonical,
                };
                let tx_index = group.first().map(|e| e.tx_index).unwrap_or(0);
                for o in token_operations(tx_id, tx_index, group) {
                    vals.push(op_vals(&o, &at));
                }
            }
            group.clear();
        };
        for r in &rows {
            let ibh: String = r.try_get("index_block_hash")?;
            let tx_id: String = r.try_get("tx_id")?;
            if key.as_ref().map(|k| (&k.0, &k.1)) != Some((&ibh, &tx_id)) {
                flush(&key, &mut group);
                key =
                    Some((ibh.clone(), tx_id.clone(), r.try_get("block_height")?, get_bool(r, "canonical")?));
                filled += 1;
            }
            group.push(EventRow {
                tx_id,
                tx_index: r.try_get("tx_index")?,
                event_index: r.try_get("event_index")?,
                kind: r.try_get("kind")?,
                sender: r.try_get("sender")?,
                recipient: r.try_get("recipient")?,
                amount: r.try_get("amount")?,
                asset_identifier: r.try_get("asset_identifier")?,
                value_hex: r.try_get("value_hex")?,
                ..EventRow::default()
            });
        }
        flush(&key, &mut group);
        if let Some((ibh, tx_id, _, _)) = key {
            last = (ibh, tx_id);
        }
        insert_rows(
            &mut tx,
            "operations",
            OP_COLS,
            vals,
            "ON CONFLICT (index_block_hash, tx_index, op_index) DO NOTHING",
        )
        .await?;
        tx.commit().await?;
    }
    tracing::info!(filled, "migration 0035: done");
    Ok(())
}
