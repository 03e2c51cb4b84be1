//! The mempool: posted and dropped transactions, runs of them applied together, transactions
//! going back to it (reorgs, orphaned microblocks) and its garbage collection.

use std::collections::{BTreeMap, BTreeSet};

use super::super::conn::Conn;
use super::super::rows::*;
use super::super::sql;
use super::super::sql::Val;
use super::super::sql::{
    bool_col, exec, exec_in, fetch_in, get_bool, insert_rows, insert_rows_returning, text_list_table,
};
use super::super::ApplyError;
use super::chain::tip_height;
use super::{arrival, Ctx, Receipt};
use crate::events::payload::{DropMempoolTx, NewMempoolTx};
use crate::ledger::{self, MempoolTxRow, Network};

/// A pending mempool transaction received on a tip at height r is garbage-collected when a
/// canonical block arrives on a tip at r + this or above (the incumbent's default
/// `STACKS_MEMPOOL_TX_GARBAGE_COLLECTION_THRESHOLD`).
const MEMPOOL_GC_BLOCKS: i64 = 256;

/// "Still pending", in the mempool UPDATEs that go by txid: written so that no index can
/// serve it, leaving the primary key. PostgreSQL planned `pruned = false AND tx_id = ANY(…)`
/// on a `(pruned, …)` index, whose `pruned = false` entries include every row pruned since
/// the last vacuum (a replay prunes ~100 per block, all in one transaction): 4.7 ms per block
/// instead of one primary-key probe per txid.
const STILL_PENDING: &str = "CAST(pruned AS INTEGER) = 0";

/// The incumbent's mempool garbage collection, run for every canonical block before it becomes
/// the tip: pending transactions received on a tip at `tip - 256` or below are pruned as
/// `dropped_stale_garbage_collect` (its status −14, "API garbage collect", shown under that
/// name). They stay pruned if a reorg later brings their block back; a node that still has
/// them re-announces them.
pub(super) async fn gc_mempool(conn: &mut Conn, tip: i64) -> Result<(), sqlx::Error> {
    let sql = if conn.is_postgres() { GC_MEMPOOL } else { GC_MEMPOOL_PLAIN };
    let n = exec(conn, sql, vec![(tip - MEMPOOL_GC_BLOCKS).into()]).await?;
    log_gc(n, tip);
    Ok(())
}

/// [`gc_mempool`]'s UPDATE (`$1`: the highest receipt height collected). The guard on the
/// lowest collectable receipt height changes nothing (a collected row is at or above it; no
/// such row, nothing to collect), but on PostgreSQL it is read by a plain index scan of
/// `mempool_gc`, which marks the entries of rows pruned since the last vacuum dead in the
/// index (a bitmap scan, which the UPDATE's own range gets, visits their heap pages on every
/// call and marks nothing): every transaction enters the mempool as pending and is pruned
/// later, so without it each block's collection visited every row pruned since the last
/// vacuum, 2.5 ms a block at the end of the realnode-2 POST benchmark. The guard stops at `$1`
/// too: the rows pruned by the running transaction cannot be marked until it commits, and
/// they were received on recent tips, above `$1`; a guard without that bound walked all of
/// them at every block of an import batch. SQLite has no dead entries: it runs
/// [`GC_MEMPOOL_PLAIN`].
const GC_MEMPOOL: &str = "UPDATE mempool_txs SET pruned = true, status = 'dropped_stale_garbage_collect' \
     WHERE pruned = false AND receipt_block_height <= $1 \
     AND receipt_block_height >= (SELECT MIN(m.receipt_block_height) FROM mempool_txs m \
     WHERE m.pruned = false AND m.receipt_block_height <= $1)";

/// [`GC_MEMPOOL`] without the guard (SQLite).
const GC_MEMPOOL_PLAIN: &str =
    "UPDATE mempool_txs SET pruned = true, status = 'dropped_stale_garbage_collect' \
     WHERE pruned = false AND receipt_block_height <= $1";

fn log_gc(n: u64, tip: i64) {
    if n > 0 {
        tracing::debug!(count = n, tip, "garbage-collected stale mempool transactions");
    }
}

/// A new canonical block's last two writes, [`super::chain::log_block_event`] (`block_added`)
/// then [`gc_mempool`] on a tip at `tip`: on PostgreSQL **one** statement (two data-modifying
/// `WITH` parts on different tables, so neither sees or needs the other's rows), one round
/// trip fewer per block; on SQLite the two statements.
pub(super) async fn log_added_and_gc(
    conn: &mut Conn,
    block: &ledger::BlockRow,
    tip: i64,
) -> Result<(), sqlx::Error> {
    let added = super::chain::BLOCK_ADDED;
    if !conn.is_postgres() {
        super::chain::log_block_event(
            conn,
            added,
            &block.index_block_hash,
            &block.block_hash,
            block.block_height,
        )
        .await?;
        return gc_mempool(conn, tip).await;
    }
    let sql = format!(
        "WITH g AS ({} RETURNING 1), e AS ({}) SELECT COUNT(*) AS n FROM g",
        GC_MEMPOOL.replace("$1", "$5"),
        super::chain::LOG_BLOCK_EVENT
    );
    let vals = vec![
        added.into(),
        (&block.index_block_hash).into(),
        (&block.block_hash).into(),
        block.block_height.into(),
        (tip - MEMPOOL_GC_BLOCKS).into(),
    ];
    let row = sql::fetch_one(conn, &sql, vals).await?;
    log_gc(row.try_get::<i64, _>("n")? as u64, tip);
    Ok(())
}

pub(super) async fn mempool_rows_where(
    conn: &mut Conn,
    cond: &str,
    items: &[String],
) -> Result<Vec<MempoolTxRow>, sqlx::Error> {
    let sql = format!(
        "SELECT tx_id, raw_tx, tx_type, sender_address, nonce, {}, sponsor_address, sponsor_nonce, fee, \
         contract_id, function_name, token_transfer_recipient, raw_size FROM txs WHERE is_burnchain_op = false AND {cond}",
        bool_col("sponsored")
    );
    let rows = fetch_in(conn, &sql, vec![], items).await?;
    rows.iter()
        .map(|r| {
            Ok(MempoolTxRow {
                tx_id: r.try_get("tx_id")?,
                raw_tx: r.try_get("raw_tx")?,
                tx_type: r.try_get("tx_type")?,
                sender_address: r.try_get("sender_address")?,
                nonce: r.try_get("nonce")?,
                sponsored: get_bool(r, "sponsored")?,
                sponsor_address: r.try_get("sponsor_address")?,
                sponsor_nonce: r.try_get("sponsor_nonce")?,
                fee: r.try_get("fee")?,
                contract_id: r.try_get("contract_id")?,
                function_name: r.try_get("function_name")?,
                token_transfer_recipient: r.try_get("token_transfer_recipient")?,
                raw_size: r.try_get("raw_size")?,
            })
        })
        .collect()
}

/// Puts transactions back into the mempool as pending. One already there keeps its receipt
/// (time and tip height), as the incumbent's restore only flips it back to pending.
pub(super) async fn restore_mempool(
    conn: &mut Conn,
    rows: Vec<MempoolTxRow>,
    receipt: Receipt,
) -> Result<(), sqlx::Error> {
    // One by tx id: the rows come in the engine's scan order, and `arrival` must not depend
    // on it (one restoring event, so their order among themselves is the tx id's).
    let rows: BTreeMap<&str, &MempoolTxRow> =
        rows.iter().filter(|r| r.raw_tx != "0x00").map(|r| (r.tx_id.as_str(), r)).rev().collect();
    let vals = rows
        .into_values()
        .enumerate()
        .map(|(k, r)| {
            mempool_vals(r, receipt.time, receipt.block_height, false, arrival(receipt.raw_event_id, k))
        })
        .collect();
    insert_rows(
        conn,
        "mempool_txs",
        MEMPOOL_COLS,
        vals,
        "ON CONFLICT (tx_id) DO UPDATE SET pruned = false, status = 'pending', replaced_by_tx_id = NULL",
    )
    .await
}

pub(super) async fn apply_mempool(
    conn: &mut Conn,
    ctx: &Ctx<'_>,
    m: &NewMempoolTx,
) -> Result<(), ApplyError> {
    let rows = posted_txs(m, ctx.network, ctx.raw_event_id, ctx.receipt_time)?;
    let mined = mined_of(conn, rows.iter().map(|p| &p.row.tx_id)).await?;
    let height = tip_height(conn).await?;
    insert_mempool(conn, rows, &mined, height).await?;
    Ok(())
}

/// A `/new_mempool_tx` stored whole by **one** statement on PostgreSQL, outside any
/// transaction (a single statement is its own transaction, committed before it returns): the
/// raw event, then its transactions with the "already mined?" and tip checks inside the
/// INSERT. The general path takes 7 round trips (BEGIN, the raw event, `mined_of` (2: sent
/// unprepared), the tip, the insert, COMMIT); a live node posts three mempool events per
/// block, and on loopback each round trip is ~100 µs of client and server CPU plus two
/// context switches. The rows are those [`apply_mempool`] writes: a raw event id taken writes
/// nothing (`Some(None)`), the first receipt of a txid wins, and `arrival` is computed from
/// the id the raw event gets. `None` when it does not apply (SQLite, whose writer is
/// in-process; a transaction open; a body the ledger refuses, or one without transactions): the
/// caller takes the general path.
pub async fn post_alone(
    conn: &mut Conn,
    network: Network,
    raw: &super::RawInsert<'_>,
    receipt_time: i64,
    m: &NewMempoolTx,
) -> Result<Option<Option<i64>>, sqlx::Error> {
    if !conn.is_postgres() || conn.in_transaction() {
        return Ok(None);
    }
    // No rows: the statement's arrays would have no element to type their columns by.
    let Some(rows) = posted_txs(m, network, 0, receipt_time).ok().filter(|r| !r.is_empty()) else {
        return Ok(None);
    };
    let (raw_sql, mut vals) = super::raw_event_insert(raw.id, raw.timestamp, raw.path, raw.payload);
    // The columns sent per row: all but the last three, computed in the statement.
    let sent = &MEMPOOL_COLS[..MEMPOOL_COLS.len() - 3];
    let mut seen = BTreeSet::new();
    let rows: Vec<Vec<Val>> = rows
        .iter()
        .filter(|p| seen.insert(p.row.tx_id.as_str()))
        .map(|p| {
            let mut v = mempool_vals(&p.row, p.time, 0, false, 0);
            v.truncate(sent.len());
            v.push(p.arrival.into()); // the position (raw event id 0)
            v
        })
        .collect();
    // One transaction (nearly every post): its values as a one-row table, so the prepared
    // statement keeps one generic plan instead of being planned at every post (`sql::pg_row`).
    let (unnest, arrays) = match <[Vec<Val>; 1]>::try_from(rows) {
        Ok([row]) => sql::pg_row(row, vals.len() + 1),
        Err(rows) => sql::pg_unnest(sent.len() + 1, rows, vals.len() + 1),
    };
    vals.extend(arrays);
    let text = format!(
        "WITH r AS ({raw_sql} RETURNING id), m AS (INSERT INTO mempool_txs ({all}) \
         SELECT {sent_u}, \
         COALESCE((SELECT bool_or(canonical) FROM txs WHERE txs.tx_id = u.tx_id), false), \
         COALESCE(({tip}), 0), \
         r.id * {span} + u.pos \
         FROM r, {unnest} AS u({sent}, pos) ON CONFLICT (tx_id) DO NOTHING) \
         SELECT id FROM r",
        all = MEMPOOL_COLS.join(", "),
        sent_u = sent.iter().map(|c| format!("u.{c}")).collect::<Vec<_>>().join(", "),
        tip = super::chain::TIP_HEIGHT,
        span = arrival(1, 0),
        sent = sent.join(", "),
    );
    let row = sql::fetch_optional(conn, &text, vals).await?;
    Ok(Some(match row {
        Some(r) => Some(r.try_get("id")?),
        None => None,
    }))
}

/// The transactions among `rows` already mined on the canonical chain (they are recorded as
/// pruned). The canonical flag is checked here, not in the WHERE clause: with `canonical =
/// true` there, SQLite's planner picked the `(canonical, …)` index over the primary key and
/// scanned every canonical transaction, once per mempool post.
async fn mined_of(
    conn: &mut Conn,
    tx_ids: impl Iterator<Item = &String>,
) -> Result<BTreeSet<String>, sqlx::Error> {
    let mut seen = BTreeSet::new();
    let ids: Vec<String> = tx_ids.filter(|id| seen.insert(id.as_str())).cloned().collect();
    let mut mined = BTreeSet::new();
    if ids.is_empty() {
        return Ok(mined);
    }
    let rows = if conn.is_postgres() {
        // One primary-key probe per txid, driven from the list: with `tx_id = ANY(list)`,
        // PostgreSQL scanned all of `txs` for the ~100 txids of a mempool run (its estimates
        // are stale inside a long import transaction), 66 ms a call on a 58,000-tx store.
        // A txid has one row per block that includes it (forks): mined if any is canonical.
        let (list, val) = text_list_table(conn, 1, &ids);
        let sql = format!(
            "SELECT l.item AS tx_id, COALESCE((SELECT MAX(CASE WHEN canonical THEN 1 ELSE 0 END) FROM txs \
             WHERE tx_id = l.item), 0) AS canonical FROM {list}"
        );
        sql::fetch_unprepared(conn, &sql, vec![val]).await?
    } else {
        let sql = format!("SELECT tx_id, {} FROM txs WHERE tx_id IN ({{in}})", bool_col("canonical"));
        fetch_in(conn, &sql, vec![], &ids).await?
    };
    for r in rows {
        if get_bool(&r, "canonical")? {
            mined.insert(r.try_get::<String, _>("tx_id")?);
        }
    }
    Ok(mined)
}

/// A posted mempool transaction with its receipt time and [`arrival`].
struct Posted {
    row: MempoolTxRow,
    time: i64,
    arrival: i64,
}

/// The transactions of a `/new_mempool_tx` event (raw event `raw_event_id`, received at Unix
/// second `time`), in the order the event lists them.
fn posted_txs(
    m: &NewMempoolTx,
    network: Network,
    raw_event_id: i64,
    time: i64,
) -> Result<Vec<Posted>, ledger::LedgerError> {
    Ok(ledger::mempool::mempool_rows(m, network)?
        .into_iter()
        .enumerate()
        .map(|(k, row)| Posted { row, time, arrival: arrival(raw_event_id, k) })
        .collect())
}

/// Adds `rows` to the mempool, received on a tip at `height`: the first receipt of a txid
/// wins, within `rows` (in order) and against rows stored before.
async fn insert_mempool(
    conn: &mut Conn,
    rows: Vec<Posted>,
    mined: &BTreeSet<String>,
    height: i64,
) -> Result<(), sqlx::Error> {
    let mut seen = BTreeSet::new();
    let vals = rows
        .iter()
        .filter(|p| seen.insert(p.row.tx_id.as_str()))
        .map(|p| mempool_vals(&p.row, p.time, height, mined.contains(&p.row.tx_id), p.arrival))
        .collect();
    insert_rows(conn, "mempool_txs", MEMPOOL_COLS, vals, "ON CONFLICT (tx_id) DO NOTHING").await
}

pub(super) async fn apply_drop(conn: &mut Conn, d: &DropMempoolTx) -> Result<(), ApplyError> {
    let (ids, status, replaced_by) = ledger::mempool::drops(d);
    drop_mempool(conn, &ids, status, replaced_by).await?;
    Ok(())
}

async fn drop_mempool(
    conn: &mut Conn,
    ids: &[String],
    status: &str,
    replaced_by: Option<String>,
) -> Result<(), sqlx::Error> {
    exec_in(
        conn,
        &format!(
            "UPDATE mempool_txs SET pruned = true, status = $1, replaced_by_tx_id = $2 \
             WHERE {STILL_PENDING} AND tx_id IN ({{in}})"
        ),
        vec![status.into(), replaced_by.into()],
        ids,
    )
    .await?;
    Ok(())
}

/// Prunes the pending rows of transactions now mined (in a block or a streamed microblock).
pub(super) async fn prune_mined(conn: &mut Conn, ids: &[String]) -> Result<(), sqlx::Error> {
    exec_in(
        conn,
        &format!("UPDATE mempool_txs SET pruned = true WHERE {STILL_PENDING} AND tx_id IN ({{in}})"),
        vec![],
        ids,
    )
    .await?;
    Ok(())
}

/// One event of a run of mempool events applied together by [`apply_mempool_run`].
pub struct RunEvent<'a> {
    pub id: i64,
    pub timestamp: std::borrow::Cow<'a, str>,
    /// Unix seconds of `timestamp` (the mempool receipt time).
    pub receipt_time: i64,
    pub path: &'a str,
    pub body: &'a str,
    pub effect: MempoolEvent<'a>,
}

pub enum MempoolEvent<'a> {
    Post(&'a NewMempoolTx),
    Drop(&'a DropMempoolTx),
}

/// A run of consecutive `/new_mempool_tx` and `/drop_mempool_tx` events with ids, applied
/// with the statements of about one event instead of 2–4 per event (a replay's events are
/// three quarters mempool posts, and every statement is a round trip): one multi-row insert
/// of the raw events, one "already mined?" lookup and one tip read for all posts (no block
/// comes in between, so both are what each post would see), then the effects in event order:
/// one multi-row mempool insert per stretch of posts, one UPDATE per drop. The store ends as
/// after applying the events one by one: an id already stored, or repeated in the run, is
/// `AlreadyStored` and writes nothing; the first receipt of a txid wins, with its own receipt
/// time. Returns per event whether it was applied; on a refused event, its index in `run`
/// and the error, after which the caller rolls the transaction back (as for one event).
pub async fn apply_mempool_run(
    conn: &mut Conn,
    network: Network,
    run: &[RunEvent<'_>],
) -> Result<Vec<bool>, (usize, ApplyError)> {
    let store = |e: sqlx::Error| (0, ApplyError::from(e));
    let mut ids = BTreeSet::new();
    let mut raw = Vec::with_capacity(run.len());
    for e in run {
        if ids.insert(e.id) {
            raw.push(vec![e.id.into(), e.timestamp.as_ref().into(), e.path.into(), e.body.into()]);
        }
    }
    let cols = &["id", "receive_timestamp", "event_path", "payload"];
    let stored =
        insert_rows_returning(conn, "raw_events", cols, raw, "ON CONFLICT (id) DO NOTHING RETURNING id")
            .await
            .map_err(store)?;
    let mut new_ids = BTreeSet::new();
    for r in &stored {
        new_ids.insert(r.try_get::<i64, _>("id").map_err(store)?);
    }
    // An id stored by this insert is applied by its first event in the run only.
    let applied: Vec<bool> = run.iter().map(|e| new_ids.remove(&e.id)).collect();

    enum Step {
        Posts(Vec<Posted>),
        Drop(Vec<String>, &'static str, Option<String>),
    }
    let mut steps: Vec<Step> = Vec::new();
    let mut posted: Vec<String> = Vec::new();
    for (k, e) in run.iter().enumerate().filter(|(k, _)| applied[*k]) {
        match e.effect {
            MempoolEvent::Post(m) => {
                let rows =
                    posted_txs(m, network, e.id, e.receipt_time).map_err(|err| (k, ApplyError::from(err)))?;
                posted.extend(rows.iter().map(|p| p.row.tx_id.clone()));
                match steps.last_mut() {
                    Some(Step::Posts(p)) => p.extend(rows),
                    _ => steps.push(Step::Posts(rows)),
                }
            }
            MempoolEvent::Drop(d) => {
                let (ids, status, replaced_by) = ledger::mempool::drops(d);
                steps.push(Step::Drop(ids, status, replaced_by));
            }
        }
    }
    let (mined, height) = if posted.is_empty() {
        (BTreeSet::new(), 0)
    } else {
        (mined_of(conn, posted.iter()).await.map_err(store)?, tip_height(conn).await.map_err(store)?)
    };
    for step in steps {
        match step {
            Step::Posts(rows) => insert_mempool(conn, rows, &mined, height).await.map_err(store)?,
            Step::Drop(ids, status, replaced_by) => {
                drop_mempool(conn, &ids, status, replaced_by).await.map_err(store)?
            }
        }
    }
    Ok(applied)
}
