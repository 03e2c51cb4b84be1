//! Migration 0031's backfills of `smart_contracts`, run once by `Store::open` before anything
//! else uses the store: the jsonb-ordered ABI text of rows stored before it, and the rows of
//! failed deploys, which were not kept before it (re-derived from the raw `/new_block` event
//! that carried each one, as ingestion derives them).

use futures_util::TryStreamExt;
use sqlx::{AnyConnection, Connection, Row};

use super::rows::{contract_vals, At, CONTRACT_COLS};
use super::sql::{exec, get_bool, insert_rows, query};
use crate::events::payload::EventPayload;
use crate::events::EventPath;
use crate::ledger::{abi, block::deploy_row_from_block, Network};

async fn pending(conn: &mut AnyConnection, name: &str) -> Result<bool, sqlx::Error> {
    Ok(query("SELECT name FROM pending_backfills WHERE name = $1", vec![name.into()])
        .fetch_optional(&mut *conn)
        .await?
        .is_some())
}

pub(super) async fn backfill(conn: &mut AnyConnection, network: Network) -> Result<(), sqlx::Error> {
    if pending(conn, "contract_abi_jsonb").await? {
        tracing::info!("migration 0031: contract ABIs in the incumbent's key order (once)");
        let mut tx = conn.begin().await?;
        let rows = query(
            "SELECT contract_id, index_block_hash, tx_id, abi FROM smart_contracts WHERE abi IS NOT NULL",
            vec![],
        )
        .fetch_all(&mut *tx)
        .await?;
        for r in rows {
            let text: String = r.try_get("abi")?;
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else { continue };
            exec(
                &mut tx,
                "UPDATE smart_contracts SET abi_jsonb = $1 WHERE contract_id = $2 AND index_block_hash = $3 AND tx_id = $4",
                vec![
                    abi::jsonb_text(&v).into(),
                    r.try_get::<String, _>("contract_id")?.into(),
                    r.try_get::<String, _>("index_block_hash")?.into(),
                    r.try_get::<String, _>("tx_id")?.into(),
                ],
            )
            .await?;
        }
        exec(&mut tx, "DELETE FROM pending_backfills WHERE name = 'contract_abi_jsonb'", vec![]).await?;
        tx.commit().await?;
    }
    if pending(conn, "failed_deploys").await? {
        tracing::info!("migration 0031: rows of failed contract deploys (once)");
        let mut tx = conn.begin().await?;
        let failed = query(
            "SELECT tx_id, index_block_hash, block_hash, block_height, burn_block_height, \
             (CASE WHEN canonical THEN 1 ELSE 0 END) AS canonical FROM txs \
             WHERE tx_type = 'smart_contract' AND status <> 'success' AND index_block_hash <> ''",
            vec![],
        )
        .fetch_all(&mut *tx)
        .await?;
        let mut rows = Vec::new();
        for f in &failed {
            let (txid, ibh): (String, String) = (f.try_get("tx_id")?, f.try_get("index_block_hash")?);
            // The block's own event: it names its index block hash and carries the receipt.
            let like = |s: &str| format!("%{}%", s.trim_start_matches("0x"));
            let mut events = query(
                "SELECT payload FROM raw_events WHERE event_path = '/new_block' AND payload LIKE $1 AND payload LIKE $2",
                vec![like(&ibh).into(), like(&txid).into()],
            )
            .fetch(&mut *tx);
            let mut found = None;
            while let Some(e) = events.try_next().await? {
                let payload: String = e.try_get("payload")?;
                let Ok(EventPayload::NewBlock(b)) = EventPayload::parse(EventPath::NewBlock, &payload) else {
                    continue;
                };
                if crate::ledger::normalize_hex(&b.index_block_hash) == ibh {
                    found = deploy_row_from_block(&b, &txid, network);
                    break;
                }
            }
            drop(events);
            let Some(c) = found else {
                tracing::warn!(%txid, index_block_hash = %ibh, "failed deploy without its /new_block event: no contract row");
                continue;
            };
            let at = At {
                index_block_hash: &ibh,
                block_hash: "",
                block_height: f.try_get("block_height")?,
                burn_block_height: f.try_get("burn_block_height")?,
                canonical: get_bool(f, "canonical")?,
            };
            rows.push(contract_vals(&c, &at));
        }
        // New rows change answers: readers' caches learn it (the ABI order above changes no
        // value, and runs before this process serves anything).
        if !rows.is_empty() {
            insert_rows(&mut tx, "smart_contracts", CONTRACT_COLS, rows, "").await?;
            super::write::note_change(&mut tx).await?;
        }
        exec(&mut tx, "DELETE FROM pending_backfills WHERE name = 'failed_deploys'", vec![]).await?;
        tx.commit().await?;
    }
    Ok(())
}
