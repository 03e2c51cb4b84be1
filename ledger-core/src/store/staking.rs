//! PoX-5 staking rows (`pox5_events`): written by ingestion from what `ledger::pox5` decodes,
//! read back (canonical rows, chain order) and folded into the staking state by
//! `ledger::pox5::fold`. Rows follow their block's `canonical` flag (`write::BLOCK_TABLES`).

use ledger_read::staking::model::{StakingState, TxPlace};
use ledger_read::staking::StakingReader;
use ledger_read::ReadError;

use super::bns::ANCHORED_SEQ;
use super::conn::Conn;
use super::sql::{insert_rows, select, Val};
use super::{Store, StoreError};
use crate::ledger::block::DerivedBlock;
use crate::ledger::pox5::{self, PlacedEvent};

const COLS: &[&str] = &[
    "index_block_hash",
    "block_height",
    "tx_id",
    "tx_index",
    "event_index",
    "microblock_sequence",
    "name",
    "data",
    "canonical",
];

/// Stores the block's `pox-5` prints with its `canonical` flag.
pub async fn write_block(conn: &mut Conn, d: &DerivedBlock, canonical: bool) -> Result<(), sqlx::Error> {
    let rows = pox5::derive(d);
    if rows.is_empty() {
        return Ok(());
    }
    let b = &d.block;
    let seq = |tx_id: &str| {
        d.txs.iter().find(|t| t.tx_id == tx_id).and_then(|t| t.microblock_sequence).unwrap_or(ANCHORED_SEQ)
    };
    let vals: Vec<Vec<Val>> = rows
        .iter()
        .map(|r| {
            vec![
                (&b.index_block_hash).into(),
                b.block_height.into(),
                (&r.tx_id).into(),
                r.tx_index.into(),
                r.event_index.into(),
                seq(&r.tx_id).into(),
                (&r.name).into(),
                (&r.data).into(),
                canonical.into(),
            ]
        })
        .collect();
    insert_rows(conn, "pox5_events", COLS, vals, "ON CONFLICT DO NOTHING").await
}

impl Store {
    async fn staking_events(&self) -> Result<(Vec<PlacedEvent>, i64), StoreError> {
        let tip = select(
            "SELECT burn_block_height FROM blocks WHERE canonical = true ORDER BY block_height DESC LIMIT 1",
            vec![],
        )
        .fetch_optional(self)
        .await?;
        let burn_tip: i64 = tip.map(|r| r.try_get("burn_block_height")).transpose()?.unwrap_or(0);
        let rows = select(
            "SELECT e.tx_id, e.tx_index, e.event_index, e.block_height, e.microblock_sequence, e.name, e.data, \
             e.index_block_hash, b.block_hash, b.block_time, b.burn_block_height, b.burn_block_time \
             FROM pox5_events e JOIN blocks b ON b.index_block_hash = e.index_block_hash \
             WHERE e.canonical = true \
             ORDER BY e.block_height, e.microblock_sequence, e.tx_index, e.event_index",
            vec![],
        )
        .fetch_all(self)
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let data: String = r.try_get("data")?;
            out.push(PlacedEvent {
                at: TxPlace {
                    tx_id: r.try_get("tx_id")?,
                    tx_index: r.try_get("tx_index")?,
                    event_index: r.try_get("event_index")?,
                    block_height: r.try_get("block_height")?,
                    block_hash: r.try_get("block_hash")?,
                    index_block_hash: r.try_get("index_block_hash")?,
                    block_time: r.try_get("block_time")?,
                    microblock_sequence: r.try_get("microblock_sequence")?,
                    burn_block_height: r.try_get("burn_block_height")?,
                    burn_block_time: r.try_get("burn_block_time")?,
                },
                name: r.try_get("name")?,
                data: serde_json::from_str(&data).unwrap_or_default(),
            });
        }
        Ok((out, burn_tip))
    }
}

impl StakingReader for Store {
    async fn staking_state(&self) -> Result<StakingState, ReadError> {
        let (events, burn_tip) = self.staking_events().await?;
        Ok(pox5::fold(&events, burn_tip))
    }
}
