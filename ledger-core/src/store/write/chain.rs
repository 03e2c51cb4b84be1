//! The stored chain as the write path reads it (blocks, the canonical tip, a stored block
//! re-derived from its raw event) and the log of its canonical changes (`/events/blocks`).

use super::super::conn::Conn;
use super::super::db_row::DbRow;
use super::super::rows::At;
use super::super::sql;
use super::super::sql::{exec, get_bool};
use super::super::{ApplyError, StoreError};
use super::Ctx;
use crate::events::payload::NewBlock;
use crate::events::{EventPath, EventPayload};
use crate::ledger;
use crate::ledger::block::DerivedBlock;

#[derive(Debug, Clone)]
pub(super) struct StoredBlock {
    pub(super) index_block_hash: String,
    pub(super) block_hash: String,
    pub(super) parent_index_block_hash: String,
    pub(super) block_height: i64,
    pub(super) burn_block_height: i64,
    pub(super) canonical: bool,
    pub(super) materialized: bool,
    pub(super) raw_event_id: i64,
}

pub(super) const STORED_BLOCK: &str =
    "SELECT index_block_hash, block_hash, parent_index_block_hash, block_height, \
    burn_block_height, (CASE WHEN canonical THEN 1 ELSE 0 END) AS canonical, \
    (CASE WHEN materialized THEN 1 ELSE 0 END) AS materialized, raw_event_id FROM blocks";

pub(super) fn stored_block_of(r: &DbRow) -> Result<StoredBlock, sqlx::Error> {
    Ok(StoredBlock {
        index_block_hash: r.try_get("index_block_hash")?,
        block_hash: r.try_get("block_hash")?,
        parent_index_block_hash: r.try_get("parent_index_block_hash")?,
        block_height: r.try_get("block_height")?,
        burn_block_height: r.try_get("burn_block_height")?,
        canonical: get_bool(r, "canonical")?,
        materialized: get_bool(r, "materialized")?,
        raw_event_id: r.try_get("raw_event_id")?,
    })
}

pub(super) async fn stored_block(conn: &mut Conn, ibh: &str) -> Result<Option<StoredBlock>, sqlx::Error> {
    let sql = format!("{STORED_BLOCK} WHERE index_block_hash = $1");
    sql::fetch_optional(conn, &sql, vec![ibh.into()]).await?.as_ref().map(stored_block_of).transpose()
}

pub(super) async fn tip(conn: &mut Conn) -> Result<Option<StoredBlock>, sqlx::Error> {
    let sql = format!("{STORED_BLOCK} WHERE canonical = true ORDER BY block_height DESC LIMIT 1");
    sql::fetch_optional(conn, &sql, vec![]).await?.as_ref().map(stored_block_of).transpose()
}

/// What a `/new_block` reads before it writes: the block itself (already stored?), its
/// parent and the canonical tip, by **one** statement instead of three (each statement is a
/// round trip on PostgreSQL).
pub(super) struct BlockReads {
    pub(super) this: Option<StoredBlock>,
    pub(super) parent: Option<StoredBlock>,
    pub(super) tip: Option<StoredBlock>,
}

pub(super) async fn block_reads(conn: &mut Conn, ibh: &str, parent: &str) -> Result<BlockReads, sqlx::Error> {
    let one = |k: i64| STORED_BLOCK.replacen("SELECT ", &format!("SELECT CAST({k} AS BIGINT) AS k, "), 1);
    let sql = format!(
        "{} WHERE index_block_hash = $1 UNION ALL {} WHERE index_block_hash = $2 \
         UNION ALL SELECT * FROM ({} WHERE canonical = true ORDER BY block_height DESC LIMIT 1) t",
        one(0),
        one(1),
        one(2)
    );
    let mut out = BlockReads { this: None, parent: None, tip: None };
    for r in sql::fetch_all(conn, &sql, vec![ibh.into(), parent.into()]).await? {
        let b = Some(stored_block_of(&r)?);
        match r.try_get::<i64, _>("k")? {
            0 => out.this = b,
            1 => out.parent = b,
            _ => out.tip = b,
        }
    }
    Ok(out)
}

/// The canonical tip's height (0 before any block).
/// The canonical tip's height (no row for a store without blocks): [`tip_height`], and the
/// one-statement mempool POST's subquery (`mempool::post_alone`).
pub(super) const TIP_HEIGHT: &str =
    "SELECT block_height FROM blocks WHERE canonical = true ORDER BY block_height DESC LIMIT 1";

pub(super) async fn tip_height(conn: &mut Conn) -> Result<i64, sqlx::Error> {
    let row = sql::fetch_optional(conn, TIP_HEIGHT, vec![]).await?;
    Ok(match row {
        Some(r) => r.try_get("block_height")?,
        None => 0,
    })
}

async fn load_new_block(conn: &mut Conn, raw_event_id: i64) -> Result<NewBlock, ApplyError> {
    let row = sql::fetch_one(conn, "SELECT payload FROM raw_events WHERE id = $1", vec![raw_event_id.into()])
        .await?;
    let payload: String = row.try_get("payload")?;
    match EventPayload::parse(EventPath::NewBlock, &payload) {
        Ok(EventPayload::NewBlock(b)) => Ok(*b),
        _ => Err(StoreError::Corrupt(format!("raw event {raw_event_id} is not a stored /new_block")).into()),
    }
}

/// Re-derives a stored block from its raw event (with block 0 folded into block 1).
pub(super) async fn derive_stored(
    conn: &mut Conn,
    b: &StoredBlock,
    ctx: &Ctx<'_>,
) -> Result<DerivedBlock, ApplyError> {
    let nb = load_new_block(conn, b.raw_event_id).await?;
    let genesis = genesis_of(conn, &b.parent_index_block_hash, b.block_height).await?;
    Ok(ledger::derive_block(&nb, genesis.as_ref(), ctx.network, ctx.render)?)
}

/// Block 0 when `height == 1` and the parent is a stored block at height 0.
pub(super) async fn genesis_of(
    conn: &mut Conn,
    parent: &str,
    height: i64,
) -> Result<Option<NewBlock>, ApplyError> {
    if height != 1 {
        return Ok(None);
    }
    match stored_block(conn, parent).await? {
        Some(p) if p.block_height == 0 => Ok(Some(load_new_block(conn, p.raw_event_id).await?)),
        _ => Ok(None),
    }
}

pub(super) fn at_of(b: &ledger::BlockRow, canonical: bool) -> At<'_> {
    At {
        index_block_hash: &b.index_block_hash,
        block_hash: &b.block_hash,
        block_height: b.block_height,
        burn_block_height: b.burn_block_height,
        canonical,
    }
}

pub(super) const BLOCK_ADDED: &str = "block_added";
pub(super) const BLOCK_REMOVED: &str = "block_removed";

/// [`log_block_event`]'s INSERT (`$1..$4`: kind, index block hash, block hash, height).
pub(super) const LOG_BLOCK_EVENT: &str =
    "INSERT INTO block_events (sequence, kind, index_block_hash, block_hash, block_height) \
     SELECT COALESCE(MAX(sequence), 0) + 1, $1, $2, $3, $4 FROM block_events";

/// Appends one change of the canonical chain to the block event log (`/events/blocks`), with
/// the next sequence. Runs inside the transaction that flips the flags, so the log and the
/// chain never disagree; the write path is the only writer, and the primary key refuses a
/// duplicate sequence rather than reordering the log.
pub(super) async fn log_block_event(
    conn: &mut Conn,
    kind: &str,
    index_block_hash: &str,
    block_hash: &str,
    block_height: i64,
) -> Result<(), sqlx::Error> {
    exec(
        conn,
        LOG_BLOCK_EVENT,
        vec![kind.into(), index_block_hash.into(), block_hash.into(), block_height.into()],
    )
    .await?;
    Ok(())
}
