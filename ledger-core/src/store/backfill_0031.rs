//! Migration 0031's backfills, run once by `Store::open` before anything else uses the store:
//! the jsonb-ordered ABI text of contract rows stored before it; the rows of failed deploys,
//! which were not kept before it (re-derived from the raw `/new_block` event that carried each
//! one, as ingestion derives them); and streamed microblocks' receipt times (from the raw
//! `/new_microblocks` events' own timestamps, as ingestion takes them).

use std::collections::HashMap;

use super::conn::Conn;
use super::parse_pg_timestamp;
use super::rows::{contract_vals, At, CONTRACT_COLS};
use super::sql;
use super::sql::{exec, get_bool, insert_rows};
use crate::events::payload::EventPayload;
use crate::events::EventPath;
use crate::ledger::{abi, block::deploy_row_from_block, normalize_hex, Network};

async fn pending(conn: &mut Conn, name: &str) -> Result<bool, sqlx::Error> {
    Ok(sql::fetch_optional(conn, "SELECT name FROM pending_backfills WHERE name = $1", vec![name.into()])
        .await?
        .is_some())
}

pub(super) async fn backfill(conn: &mut Conn, network: Network) -> Result<(), sqlx::Error> {
    if pending(conn, "contract_abi_jsonb").await? {
        tracing::info!("migration 0031: contract ABIs in the incumbent's key order (once)");
        let mut tx = conn.begin().await?;
        let rows = sql::fetch_all(
            &mut tx,
            "SELECT contract_id, index_block_hash, tx_id, abi FROM smart_contracts WHERE abi IS NOT NULL",
            vec![],
        )
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
        let failed = sql::fetch_all(
            &mut tx,
            "SELECT tx_id, index_block_hash, block_height, burn_block_height, \
             (CASE WHEN canonical THEN 1 ELSE 0 END) AS canonical FROM txs \
             WHERE tx_type = 'smart_contract' AND status <> 'success' AND index_block_hash <> ''",
            vec![],
        )
        .await?;
        // The failed deploys each block's `/new_block` event has to give rows for; one pass
        // over the raw events (a payload is parsed in full only for such a block).
        let mut by_block: HashMap<String, Vec<(String, i64, i64, bool)>> = HashMap::new();
        for f in &failed {
            by_block.entry(f.try_get("index_block_hash")?).or_default().push((
                f.try_get("tx_id")?,
                f.try_get("block_height")?,
                f.try_get("burn_block_height")?,
                get_bool(f, "canonical")?,
            ));
        }
        let mut derived = Vec::new();
        if !by_block.is_empty() {
            #[derive(serde::Deserialize)]
            struct Head {
                index_block_hash: String,
            }
            // Until every such block is found; only those are parsed in full.
            sql::for_each(
                &mut tx,
                "SELECT payload FROM raw_events WHERE event_path = '/new_block' ORDER BY id",
                vec![],
                |e| {
                    let payload: String = e.try_get("payload")?;
                    let Ok(head) = serde_json::from_str::<Head>(&payload) else { return Ok(true) };
                    let ibh = normalize_hex(&head.index_block_hash);
                    let Some(deploys) = by_block.remove(&ibh) else { return Ok(true) };
                    let Ok(EventPayload::NewBlock(b)) = EventPayload::parse(EventPath::NewBlock, &payload)
                    else {
                        return Ok(true);
                    };
                    for (txid, height, burn_height, canonical) in deploys {
                        match deploy_row_from_block(&b, &txid, network) {
                            Some(c) => derived.push((c, ibh.clone(), height, burn_height, canonical)),
                            None => {
                                tracing::warn!(%txid, "failed deploy not in its block's event: no contract row")
                            }
                        }
                    }
                    Ok(!by_block.is_empty())
                },
            )
            .await?;
        }
        for (ibh, deploys) in &by_block {
            tracing::warn!(index_block_hash = %ibh, deploys = deploys.len(), "failed deploys without their /new_block event: no contract row");
        }
        let rows: Vec<_> = derived
            .iter()
            .map(|(c, ibh, height, burn_height, canonical)| {
                let at = At {
                    index_block_hash: ibh,
                    block_hash: "",
                    block_height: *height,
                    burn_block_height: *burn_height,
                    canonical: *canonical,
                };
                contract_vals(c, &at)
            })
            .collect();
        // New rows change answers: readers' caches learn it (the ABI order above changes no
        // value, and runs before this process serves anything).
        if !rows.is_empty() {
            insert_rows(&mut tx, "smart_contracts", CONTRACT_COLS, rows, "").await?;
            super::sql::note_change(&mut tx).await?;
        }
        exec(&mut tx, "DELETE FROM pending_backfills WHERE name = 'failed_deploys'", vec![]).await?;
        tx.commit().await?;
    }
    if pending(conn, "stream_receipt_times").await? {
        tracing::info!("migration 0031: receipt times of streamed microblocks (once)");
        let mut tx = conn.begin().await?;
        let mut times: Vec<(String, i64)> = Vec::new();
        sql::for_each(
            &mut tx,
            "SELECT receive_timestamp, payload FROM raw_events WHERE event_path = '/new_microblocks' ORDER BY id",
            vec![],
            |e| {
                let (ts, payload): (String, String) = (e.try_get("receive_timestamp")?, e.try_get("payload")?);
                let Ok(EventPayload::NewMicroblocks(m)) = EventPayload::parse(EventPath::NewMicroblocks, &payload)
                else {
                    return Ok(true);
                };
                let Some(at) = parse_pg_timestamp(&ts) else { return Ok(true) };
                for t in &m.transactions {
                    if let Some(h) = &t.microblock_hash {
                        times.push((normalize_hex(h), at));
                    }
                }
                Ok(true)
            },
        )
        .await?;
        // The first event that streamed a microblock gave its row, as ingestion keeps it.
        for (hash, at) in times {
            exec(
                &mut tx,
                "UPDATE microblocks SET stream_receipt_time = $1 \
                 WHERE microblock_hash = $2 AND index_block_hash = '' AND stream_receipt_time IS NULL",
                vec![at.into(), hash.into()],
            )
            .await?;
        }
        exec(&mut tx, "DELETE FROM pending_backfills WHERE name = 'stream_receipt_times'", vec![]).await?;
        tx.commit().await?;
    }
    Ok(())
}
