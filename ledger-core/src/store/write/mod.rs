//! Applying events: every function runs inside the ingest transaction. One file per concern:
//! [`blocks`] stores a `/new_block`, [`canonical`] makes a block's effects canonical and flips
//! forks (reorgs), [`assets`] keeps FT balances and NFT custody, [`mempool`] and
//! [`microblocks`] the pending transactions and streams, [`burn`] the burn chain; [`chain`]
//! reads the stored chain and logs its changes. Dependencies between them go one way:
//! blocks → canonical → {assets, microblocks, mempool} → chain.

mod assets;
mod blocks;
mod burn;
mod canonical;
mod chain;
mod mempool;
mod microblocks;

use super::conn::Conn;
use super::sql;
use super::sql::{exec, Val};
use super::totals::Pending;
use super::{ApplyError, StoreError};
use ledger_read::TxRender;

use crate::events::EventPayload;
use crate::ledger::block::DerivedBlock;
use crate::ledger::Network;

/// Kept here for the callers that count a change this way (`faucet`).
pub(super) use super::sql::note_change;
pub use mempool::{apply_mempool_run, post_alone, MempoolEvent, RunEvent};

/// A raw event as it is stored (see [`insert_raw_event`]).
pub struct RawInsert<'a> {
    /// `None`: the next id.
    pub id: Option<i64>,
    pub timestamp: &'a str,
    pub path: &'a str,
    pub payload: &'a str,
}

pub struct Ctx<'a> {
    pub network: Network,
    /// Writes each derived transaction's stored text (`Store::render`).
    pub render: &'a dyn TxRender,
    pub raw_event_id: i64,
    /// Unix seconds the event was received (mempool receipt time).
    pub receipt_time: i64,
}

/// When transactions (re-)enter the mempool: the event's receipt time and the canonical tip's
/// height then (the mempool garbage collection counts blocks from it).
#[derive(Debug, Clone, Copy)]
struct Receipt {
    time: i64,
    block_height: i64,
    /// The raw event that (re-)entered them (see [`arrival`]).
    raw_event_id: i64,
}

/// A mempool transaction's place in the order of arrival: the raw event that brought it in,
/// then its position among that event's transactions. Derived from stored ids only, so a
/// replay, a batch and one event at a time all give the same value.
pub(super) fn arrival(raw_event_id: i64, position: usize) -> i64 {
    raw_event_id.saturating_mul(1 << 16).saturating_add(position.min(0xFFFF) as i64)
}

/// Tables whose rows belong to one block and follow its `canonical` flag.
const BLOCK_TABLES: &[&str] = &[
    "blocks",
    "txs",
    "events",
    "operations",
    "stx_balances",
    "account_txs",
    "smart_contracts",
    "miner_rewards",
    "pox_events",
    "microblocks",
    "bns_namespaces",
    "bns_names",
    "bns_subdomains",
    "pox5_events",
];

/// Stores a raw event under `id` (or `max(id) + 1` when `None`) and returns its id, or `None`
/// when `id` is already taken (then nothing is written). One statement: this runs once per
/// event, and every statement is a round trip to the database.
pub async fn insert_raw_event(
    conn: &mut Conn,
    id: Option<i64>,
    timestamp: &str,
    path: &str,
    payload: &str,
) -> Result<Option<i64>, sqlx::Error> {
    let (sql, vals) = raw_event_insert(id, timestamp, path, payload);
    match id {
        Some(id) => Ok((exec(conn, sql, vals).await? > 0).then_some(id)),
        None => Ok(Some(sql::fetch_one(conn, &format!("{sql} RETURNING id"), vals).await?.try_get("id")?)),
    }
}

/// The INSERT of a raw event under `id` (or `max(id) + 1`), and its values (`$1..`): nothing
/// written when `id` is taken. Shared by [`insert_raw_event`] and the PostgreSQL statement
/// that stores a mempool post whole (`mempool::post_alone`).
fn raw_event_insert(id: Option<i64>, timestamp: &str, path: &str, payload: &str) -> (&'static str, Vec<Val>) {
    match id {
        Some(id) => (
            "INSERT INTO raw_events (id, receive_timestamp, event_path, payload) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (id) DO NOTHING",
            vec![id.into(), timestamp.into(), path.into(), payload.into()],
        ),
        None => (
            "INSERT INTO raw_events (id, receive_timestamp, event_path, payload) \
             SELECT CAST(COALESCE(MAX(id), 0) + 1 AS BIGINT), $1, $2, $3 FROM raw_events",
            vec![timestamp.into(), path.into(), payload.into()],
        ),
    }
}

/// Multi-row inserts into several tables, sent together: on PostgreSQL as **one** statement
/// (each insert a data-modifying `WITH` part; all run to completion, and see none of each
/// other's rows, so the parts must not depend on each other), on SQLite one after the other
/// ([`sql::insert_rows`]). A block's rows go to up to nine tables, and on PostgreSQL every
/// statement is a round trip. The statement's text follows the set of non-empty tables: a few
/// shapes, each prepared once per connection.
#[derive(Default)]
pub(super) struct Inserts<'a> {
    parts: Vec<InsertPart<'a>>,
}

/// One table's rows of an [`Inserts`].
struct InsertPart<'a> {
    table: &'a str,
    columns: &'a [&'a str],
    rows: Vec<Vec<Val>>,
    /// An `ON CONFLICT` clause, or empty.
    suffix: &'a str,
}

impl<'a> Inserts<'a> {
    pub(super) fn add(&mut self, table: &'a str, columns: &'a [&'a str], rows: Vec<Vec<Val>>) {
        self.add_with(table, columns, rows, "");
    }

    /// [`Inserts::add`] with a `suffix` (an `ON CONFLICT` clause; one part per table then,
    /// as a row cannot be upserted twice by one statement).
    pub(super) fn add_with(
        &mut self,
        table: &'a str,
        columns: &'a [&'a str],
        rows: Vec<Vec<Val>>,
        suffix: &'a str,
    ) {
        if !rows.is_empty() {
            self.parts.push(InsertPart { table, columns, rows, suffix });
        }
    }

    pub(super) async fn send(self, conn: &mut Conn) -> Result<(), sqlx::Error> {
        if !conn.is_postgres() || self.parts.len() < 2 {
            for InsertPart { table, columns, rows, suffix } in self.parts {
                sql::insert_rows(conn, table, columns, rows, suffix).await?;
            }
            return Ok(());
        }
        let mut text = String::from("WITH ");
        let mut vals = Vec::new();
        for (k, InsertPart { table, columns, rows, suffix }) in self.parts.into_iter().enumerate() {
            let (unnest, arrays) = sql::pg_unnest(columns.len(), rows, vals.len() + 1);
            vals.extend(arrays);
            let sep = if k > 0 { ", " } else { "" };
            let cols = columns.join(", ");
            text.push_str(&format!(
                "{sep}w{k} AS (INSERT INTO {table} ({cols}) SELECT * FROM {unnest} {suffix})"
            ));
        }
        text.push_str(" SELECT 1");
        exec(conn, &text, vals).await?;
        Ok(())
    }
}

pub async fn wipe(conn: &mut Conn) -> Result<(), StoreError> {
    let mut tx = conn.begin().await?;
    for t in BLOCK_TABLES.iter().chain(&[
        "raw_events",
        "event_inbox",
        "stx_accounts",
        "stx_holders",
        "ft_balances",
        "nft_custody",
        "mempool_txs",
        "burn_blocks",
        "burnchain_rewards",
        "reward_slot_holders",
        "block_events",
        "burn_block_pox_txs",
        "account_stx_totals",
        "account_asset_totals",
        "account_block_txs",
        "bns_zonefiles",
        "bns_import_progress",
    ]) {
        exec(&mut tx, &format!("DELETE FROM {t}"), vec![]).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// `derived`: a `/new_block`'s rows derived ahead by `store::prepare` (pure, so the same as
/// deriving them here). `totals` gathers the maintained totals' changes: the caller flushes it
/// ([`Pending::flush`]) before committing.
pub async fn apply(
    conn: &mut Conn,
    ctx: &Ctx<'_>,
    payload: &EventPayload,
    derived: Option<&DerivedBlock>,
    totals: &mut Pending,
) -> Result<(), ApplyError> {
    match payload {
        EventPayload::NewBlock(b) => blocks::apply_block(conn, ctx, b, derived, totals).await,
        EventPayload::NewBurnBlock(b) => burn::apply_burn_block(conn, ctx, b).await,
        EventPayload::NewMempoolTx(m) => mempool::apply_mempool(conn, ctx, m).await,
        EventPayload::DropMempoolTx(d) => mempool::apply_drop(conn, d).await,
        EventPayload::NewMicroblocks(m) => microblocks::apply_microblocks(conn, ctx, m).await,
        EventPayload::AttachmentsNew(a) => {
            for z in a.attachments.iter().filter_map(crate::ledger::bns::attachment) {
                super::bns::write_attachment(conn, &z).await?;
            }
            Ok(())
        }
        // Kept in the raw log only.
        EventPayload::Unmodelled(_) => Ok(()),
    }
}
