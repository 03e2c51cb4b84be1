//! Applying events: every function runs inside the ingest transaction.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::conn::Conn;
use super::db_row::DbRow;
use super::rows::*;
use super::sql;
use super::sql::{
    bool_col, exec, exec_in, fetch_in, get_bool, insert_rows, insert_rows_returning, text_list_table, Val,
};
use super::totals::Pending;
use super::{ApplyError, StoreError};
use crate::events::payload::{DropMempoolTx, NewBlock, NewBurnBlock, NewMempoolTx, NewMicroblocks};
use crate::events::{EventPath, EventPayload};
use crate::ledger::block::DerivedBlock;
use crate::ledger::state::{touched_accounts, BlockContext};
use crate::ledger::{self, int, normalize_hex, AccountState, MempoolTxRow, Network};

pub struct Ctx {
    pub network: Network,
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

/// A pending mempool transaction received on a tip at height r is garbage-collected when a
/// canonical block arrives on a tip at r + this or above (the incumbent's default
/// `STACKS_MEMPOOL_TX_GARBAGE_COLLECTION_THRESHOLD`).
pub const MEMPOOL_GC_BLOCKS: i64 = 256;

/// "Still pending", in the mempool UPDATEs that go by txid: written so that no index can
/// serve it, leaving the primary key. PostgreSQL planned `pruned = false AND tx_id = ANY(…)`
/// on a `(pruned, …)` index, whose `pruned = false` entries include every row pruned since
/// the last vacuum (a replay prunes ~100 per block, all in one transaction): 4.7 ms per block
/// instead of one primary-key probe per txid.
const STILL_PENDING: &str = "CAST(pruned AS INTEGER) = 0";

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
    match id {
        Some(id) => {
            let n = exec(
                conn,
                "INSERT INTO raw_events (id, receive_timestamp, event_path, payload) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (id) DO NOTHING",
                vec![id.into(), timestamp.into(), path.into(), payload.into()],
            )
            .await?;
            Ok((n > 0).then_some(id))
        }
        None => {
            let row = sql::fetch_one(
                conn,
                "INSERT INTO raw_events (id, receive_timestamp, event_path, payload) \
                 SELECT CAST(COALESCE(MAX(id), 0) + 1 AS BIGINT), $1, $2, $3 FROM raw_events RETURNING id",
                vec![timestamp.into(), path.into(), payload.into()],
            )
            .await?;
            Ok(Some(row.try_get("id")?))
        }
    }
}

pub async fn wipe(conn: &mut Conn) -> Result<(), StoreError> {
    let mut tx = conn.begin().await?;
    for t in BLOCK_TABLES.iter().chain(&[
        "raw_events",
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
    ctx: &Ctx,
    payload: &EventPayload,
    derived: Option<&DerivedBlock>,
    totals: &mut Pending,
) -> Result<(), ApplyError> {
    match payload {
        EventPayload::NewBlock(b) => apply_block(conn, ctx, b, derived, totals).await,
        EventPayload::NewBurnBlock(b) => apply_burn_block(conn, ctx, b).await,
        EventPayload::NewMempoolTx(m) => apply_mempool(conn, ctx, m).await,
        EventPayload::DropMempoolTx(d) => apply_drop(conn, d).await,
        EventPayload::NewMicroblocks(m) => apply_microblocks(conn, ctx, m).await,
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

#[derive(Debug, Clone)]
struct StoredBlock {
    index_block_hash: String,
    block_hash: String,
    parent_index_block_hash: String,
    block_height: i64,
    burn_block_height: i64,
    canonical: bool,
    materialized: bool,
    raw_event_id: i64,
}

const STORED_BLOCK: &str = "SELECT index_block_hash, block_hash, parent_index_block_hash, block_height, \
    burn_block_height, (CASE WHEN canonical THEN 1 ELSE 0 END) AS canonical, \
    (CASE WHEN materialized THEN 1 ELSE 0 END) AS materialized, raw_event_id FROM blocks";

fn stored_block_of(r: &DbRow) -> Result<StoredBlock, sqlx::Error> {
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

async fn stored_block(conn: &mut Conn, ibh: &str) -> Result<Option<StoredBlock>, sqlx::Error> {
    let sql = format!("{STORED_BLOCK} WHERE index_block_hash = $1");
    sql::fetch_optional(conn, &sql, vec![ibh.into()]).await?.as_ref().map(stored_block_of).transpose()
}

async fn tip(conn: &mut Conn) -> Result<Option<StoredBlock>, sqlx::Error> {
    let sql = format!("{STORED_BLOCK} WHERE canonical = true ORDER BY block_height DESC LIMIT 1");
    sql::fetch_optional(conn, &sql, vec![]).await?.as_ref().map(stored_block_of).transpose()
}

/// The canonical tip's height (0 before any block).
async fn tip_height(conn: &mut Conn) -> Result<i64, sqlx::Error> {
    let row = sql::fetch_optional(
        conn,
        "SELECT block_height FROM blocks WHERE canonical = true ORDER BY block_height DESC LIMIT 1",
        vec![],
    )
    .await?;
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
async fn derive_stored(
    conn: &mut Conn,
    b: &StoredBlock,
    network: Network,
) -> Result<DerivedBlock, ApplyError> {
    let nb = load_new_block(conn, b.raw_event_id).await?;
    let genesis = genesis_of(conn, &b.parent_index_block_hash, b.block_height).await?;
    Ok(ledger::derive_block(&nb, genesis.as_ref(), network)?)
}

/// Block 0 when `height == 1` and the parent is a stored block at height 0.
async fn genesis_of(conn: &mut Conn, parent: &str, height: i64) -> Result<Option<NewBlock>, ApplyError> {
    if height != 1 {
        return Ok(None);
    }
    match stored_block(conn, parent).await? {
        Some(p) if p.block_height == 0 => Ok(Some(load_new_block(conn, p.raw_event_id).await?)),
        _ => Ok(None),
    }
}

async fn apply_block(
    conn: &mut Conn,
    ctx: &Ctx,
    b: &NewBlock,
    pre: Option<&DerivedBlock>,
    totals: &mut Pending,
) -> Result<(), ApplyError> {
    let ibh = normalize_hex(&b.index_block_hash);
    if stored_block(conn, &ibh).await?.is_some() {
        tracing::info!(index_block_hash = %ibh, "block already stored; event kept in the raw log only");
        return Ok(());
    }
    let height = int(b.block_height);
    let parent_ibh = normalize_hex(&b.parent_index_block_hash);
    let parent = stored_block(conn, &parent_ibh).await?.filter(|p| p.block_height == height - 1);
    if height > 1 && parent.is_none() {
        return Err(ApplyError::Rejected(format!(
            "DB does not contain a parent block at height {} with index_block_hash {parent_ibh}",
            height - 1
        )));
    }
    let genesis = genesis_of(conn, &parent_ibh, height).await?;
    let derived_here;
    let derived = match pre.filter(|_| genesis.is_none()) {
        Some(d) => d,
        None => {
            derived_here = ledger::derive_block(b, genesis.as_ref(), ctx.network)?;
            &derived_here
        }
    };
    if height == 0 {
        // The boot block stays non-canonical; its transactions join block 1 (incumbent rule).
        insert_rows(
            conn,
            "blocks",
            BLOCK_COLS,
            vec![block_vals(&derived.block, false, ctx.raw_event_id)],
            "",
        )
        .await?;
        return Ok(());
    }
    let tip = tip(conn).await?;
    let canonical = tip.as_ref().map_or(true, |t| height > t.block_height);
    // For a canonical block the tip is its parent's height (one canonical block per height).
    let receipt =
        Receipt { time: ctx.receipt_time, block_height: height - 1, raw_event_id: ctx.raw_event_id };
    if let Some(p) = parent.as_ref().filter(|p| canonical && !p.canonical && p.block_height >= 1) {
        restore_chain(conn, ctx, p, receipt, totals).await?;
    }
    insert_static(conn, derived, canonical, ctx.raw_event_id).await?;
    super::bns::write_block(conn, derived, ctx.network, canonical).await?;
    super::staking::write_block(conn, derived, canonical).await?;
    if canonical {
        canonicalize(conn, derived, false, true, receipt, totals).await?;
        let d = &derived.block;
        log_block_event(conn, BLOCK_ADDED, &d.index_block_hash, &d.block_hash, d.block_height).await?;
        gc_mempool(conn, tip.map_or(0, |t| t.block_height)).await?;
    }
    Ok(())
}

/// The incumbent's mempool garbage collection, run for every canonical block before it becomes
/// the tip: pending transactions received on a tip at `tip - 256` or below are pruned as
/// `dropped_stale_garbage_collect` (its status −14, "API garbage collect", shown under that
/// name). They stay pruned if a reorg later brings their block back; a node that still has
/// them re-announces them.
async fn gc_mempool(conn: &mut Conn, tip: i64) -> Result<(), sqlx::Error> {
    let n = exec(
        conn,
        "UPDATE mempool_txs SET pruned = true, status = 'dropped_stale_garbage_collect' \
         WHERE pruned = false AND receipt_block_height <= $1",
        vec![(tip - MEMPOOL_GC_BLOCKS).into()],
    )
    .await?;
    if n > 0 {
        tracing::debug!(count = n, tip, "garbage-collected stale mempool transactions");
    }
    Ok(())
}

fn at_of(b: &ledger::BlockRow, canonical: bool) -> At<'_> {
    At {
        index_block_hash: &b.index_block_hash,
        block_hash: &b.block_hash,
        block_height: b.block_height,
        burn_block_height: b.burn_block_height,
        canonical,
    }
}

/// The rows that do not depend on chain state.
async fn insert_static(
    conn: &mut Conn,
    d: &DerivedBlock,
    canonical: bool,
    raw_event_id: i64,
) -> Result<(), sqlx::Error> {
    let at = at_of(&d.block, canonical);
    insert_rows(conn, "blocks", BLOCK_COLS, vec![block_vals(&d.block, canonical, raw_event_id)], "").await?;
    insert_rows(conn, "txs", TX_COLS, d.txs.iter().map(|t| tx_vals(t, &at)).collect(), "").await?;
    let micro_of: HashMap<&str, &str> =
        d.txs.iter().map(|t| (t.tx_id.as_str(), t.microblock_hash.as_str())).collect();
    let events =
        d.events.iter().map(|e| event_vals(e, micro_of.get(e.tx_id.as_str()).copied().unwrap_or(""), &at));
    insert_rows(conn, "events", EVENT_COLS, events.collect(), "").await?;
    let ops = d.ops.iter().chain(&d.token_ops).map(|o| op_vals(o, &at));
    insert_rows(conn, "operations", OP_COLS, ops.collect(), "").await?;
    insert_rows(
        conn,
        "account_txs",
        ACCOUNT_TX_COLS,
        d.account_txs.iter().map(|a| account_tx_vals(a, &at)).collect(),
        "",
    )
    .await?;
    insert_rows(
        conn,
        "smart_contracts",
        CONTRACT_COLS,
        d.contracts.iter().map(|c| contract_vals(c, &at)).collect(),
        "",
    )
    .await?;
    let rewards = d.miner_rewards.iter().enumerate().map(|(i, r)| miner_reward_vals(i, r, &at));
    insert_rows(conn, "miner_rewards", MINER_REWARD_COLS, rewards.collect(), "").await?;
    insert_rows(conn, "pox_events", POX_COLS, d.pox_events.iter().map(|p| pox_vals(p, &at)).collect(), "")
        .await?;
    let micro = d.microblocks.iter().map(|m| microblock_vals(m, &at, true));
    insert_rows(conn, "microblocks", MICROBLOCK_COLS, micro.collect(), "").await?;
    Ok(())
}

/// Makes a block's effects part of the canonical state: computes its lock/unlock operations
/// and balance rows the first time, then updates the tip caches (accounts, FT balances, NFT
/// custody), prunes its transactions from the mempool and settles the microblock stream it
/// builds on. Its parent must be the canonical tip.
async fn canonicalize(
    conn: &mut Conn,
    d: &DerivedBlock,
    materialized: bool,
    nft_direct: bool,
    receipt: Receipt,
    totals: &mut Pending,
) -> Result<(), ApplyError> {
    let b = &d.block;
    let at = at_of(b, true);
    if materialized {
        let sql = format!(
            "INSERT INTO stx_accounts ({cols}) SELECT {cols} FROM stx_balances WHERE index_block_hash = $1 {ACCOUNT_UPSERT}",
            cols = ACCOUNT_COLS.join(", ")
        );
        exec(conn, &sql, vec![(&b.index_block_hash).into()]).await?;
    } else {
        let bctx = BlockContext {
            block_height: b.block_height,
            burn_block_height: b.burn_block_height,
            pox_unlock_heights: [
                b.pox_v1_unlock_height,
                b.pox_v2_unlock_height,
                b.pox_v3_unlock_height,
                b.pox_v4_unlock_height,
            ],
        };
        let prior = load_prior(conn, &touched_accounts(&d.ops, &d.locks), &bctx).await?;
        let m = ledger::materialize(&bctx, &d.ops, &d.locks, &prior, d.next_block_op_index())?;
        insert_rows(conn, "operations", OP_COLS, m.ops.iter().map(|o| op_vals(o, &at)).collect(), "").await?;
        let bal = m.balances.iter().map(|r| balance_vals(&r.account, &r.state, &at));
        insert_rows(conn, "stx_balances", BALANCE_COLS, bal.collect(), "").await?;
        let acc = m.balances.iter().map(|r| account_vals(&r.account, &r.state, b.block_height));
        insert_rows(conn, "stx_accounts", ACCOUNT_COLS, acc.collect(), ACCOUNT_UPSERT).await?;
        exec(
            conn,
            "UPDATE blocks SET materialized = true WHERE index_block_hash = $1",
            vec![(&b.index_block_hash).into()],
        )
        .await?;
    }
    apply_ft(conn, &ft_deltas(&d.token_ops), 1).await?;
    note_stx_holders(totals, d);
    totals.apply(d, 1);
    totals.add_tx_lists(d);
    if nft_direct {
        nft_upsert_from_events(conn, d).await?;
    }
    let ids: Vec<String> = d.txs.iter().map(|t| t.tx_id.clone()).collect();
    exec_in(
        conn,
        &format!("UPDATE mempool_txs SET pruned = true WHERE {STILL_PENDING} AND tx_id IN ({{in}})"),
        vec![],
        &ids,
    )
    .await?;
    settle_stream(conn, d, receipt).await?;
    Ok(())
}

/// The state before the block of the accounts it touches and of the locked accounts whose
/// lock may end at its burn height.
async fn load_prior(
    conn: &mut Conn,
    touched: &[String],
    bctx: &BlockContext,
) -> Result<HashMap<String, AccountState>, sqlx::Error> {
    const COLS: &str =
        "account, liquid, locked, unlock_burn_height, lock_tx_id, lock_height, lock_burn_height, pox_version";
    let mut rows = fetch_in(
        conn,
        &format!("SELECT {COLS} FROM stx_accounts WHERE account IN ({{in}})"),
        vec![],
        touched,
    )
    .await?;
    // Per PoX version, the burn height up to which a lock has ended: its own unlock height,
    // or every lock of the version once the node's forced unlock height is reached.
    let h = bctx.burn_block_height;
    let mut limits = vec![Val::I(h)];
    for forced in bctx.pox_unlock_heights {
        limits.push(Val::I(if forced.is_some_and(|f| f <= h) { i64::MAX } else { h }));
    }
    let sql = format!(
        "SELECT {COLS} FROM stx_accounts WHERE locked <> 0 AND ((pox_version = 0 AND unlock_burn_height <= $1) \
         OR (pox_version = 1 AND unlock_burn_height <= $2) OR (pox_version = 2 AND unlock_burn_height <= $3) \
         OR (pox_version = 3 AND unlock_burn_height <= $4) OR (pox_version = 4 AND unlock_burn_height <= $5))"
    );
    rows.extend(sql::fetch_all(conn, &sql, limits).await?);
    let mut out = HashMap::new();
    for r in rows {
        out.insert(
            r.try_get::<String, _>("account")?,
            AccountState {
                liquid: r.try_get("liquid")?,
                locked: r.try_get("locked")?,
                unlock_burn_height: r.try_get("unlock_burn_height")?,
                lock_tx_id: r.try_get("lock_tx_id")?,
                lock_height: r.try_get("lock_height")?,
                lock_burn_height: r.try_get("lock_burn_height")?,
                pox_version: r.try_get("pox_version")?,
            },
        );
    }
    Ok(out)
}

type FtDeltas = BTreeMap<(String, String), i128>;

/// Each (asset, account)'s FT balance change in a block: its FT operations' effects.
fn ft_deltas(token_ops: &[ledger::OpRow]) -> FtDeltas {
    let mut out = FtDeltas::new();
    for o in token_ops {
        let (Some(asset), ledger::effect::AssetClass::Ft) =
            (&o.asset_identifier, ledger::effect::asset_class(&o.op_type))
        else {
            continue;
        };
        *out.entry((asset.clone(), o.account.clone())).or_default() += ledger::effect::of(o).balance();
    }
    out
}

/// Counts a change committed without a raw event (in the caller's transaction), so readers'
/// [`super::Store::generation`] moves with it.
pub(super) async fn note_change(conn: &mut Conn) -> Result<(), sqlx::Error> {
    sql::exec(conn, "UPDATE store_changes SET n = n + 1 WHERE id = 1", vec![]).await.map(|_| ())
}

/// Records the accounts the incumbent keeps an 'stx' balance row for (`stx_holders`, never
/// deleted): each transaction's fee payer, even at fee 0, each STX event's sender and
/// recipient, each miner reward's recipient; written with the totals at the flush.
fn note_stx_holders(totals: &mut Pending, d: &DerivedBlock) {
    let payers = d.txs.iter().map(|t| match (&t.sponsor_address, t.sponsored) {
        (Some(s), true) => s.as_str(),
        _ => t.sender_address.as_str(),
    });
    let movers =
        d.events.iter().filter(|e| e.kind.starts_with("stx_") && e.kind != "stx_lock").flat_map(|e| {
            let sender = e.sender.as_deref().filter(|_| e.kind != "stx_mint");
            let recipient = e.recipient.as_deref().filter(|_| e.kind != "stx_burn");
            sender.into_iter().chain(recipient)
        });
    let rewarded = d.miner_rewards.iter().map(|r| r.recipient.as_str());
    totals.add_stx_holders(payers.chain(movers).chain(rewarded));
}

/// FT balances are u128 text (zero-padded to sort numerically); negative only when the
/// history starts mid-chain.
pub(super) fn ft_text(v: i128) -> String {
    if v < 0 {
        format!("-{:039}", v.unsigned_abs())
    } else {
        format!("{v:039}")
    }
}

pub fn ft_parse(s: &str) -> i128 {
    s.parse().unwrap_or(0)
}

async fn apply_ft(conn: &mut Conn, deltas: &FtDeltas, sign: i128) -> Result<(), sqlx::Error> {
    let mut by_asset: BTreeMap<&str, Vec<(&str, i128)>> = BTreeMap::new();
    for ((asset, account), d) in deltas {
        // A zero net change still gets its row when applied: the incumbent keeps one for every
        // account an FT event touched.
        if *d != 0 || sign > 0 {
            by_asset.entry(asset).or_default().push((account, *d * sign));
        }
    }
    for (asset, changes) in by_asset {
        let accounts: Vec<String> = changes.iter().map(|(a, _)| a.to_string()).collect();
        let rows = fetch_in(
            conn,
            "SELECT account, balance FROM ft_balances WHERE asset_identifier = $1 AND account IN ({in})",
            vec![asset.into()],
            &accounts,
        )
        .await?;
        let mut current: HashMap<String, i128> = HashMap::new();
        for r in rows {
            current.insert(r.try_get("account")?, ft_parse(&r.try_get::<String, _>("balance")?));
        }
        let vals = changes
            .iter()
            .map(|(account, d)| {
                let v = current.get(*account).copied().unwrap_or(0) + d;
                vec![asset.into(), (*account).into(), ft_text(v).into()]
            })
            .collect();
        insert_rows(
            conn,
            "ft_balances",
            &["asset_identifier", "account", "balance"],
            vals,
            "ON CONFLICT (asset_identifier, account) DO UPDATE SET balance = excluded.balance",
        )
        .await?;
    }
    Ok(())
}

const NFT_COLS: &[&str] = &[
    "asset_identifier",
    "value_hex",
    "owner",
    "tx_id",
    "index_block_hash",
    "block_height",
    "tx_index",
    "event_index",
];
const NFT_UPSERT: &str = "ON CONFLICT (asset_identifier, value_hex) DO UPDATE SET owner = excluded.owner, \
    tx_id = excluded.tx_id, index_block_hash = excluded.index_block_hash, block_height = excluded.block_height, \
    tx_index = excluded.tx_index, event_index = excluded.event_index";

/// Where a transaction ran within its block: confirmed microblock transactions ran before the
/// block's own, though the block lists them after (the incumbent orders by microblock sequence,
/// with the block's own transactions last).
fn execution_key(micro_seq: Option<i64>, tx_index: i64) -> (i64, i64) {
    (micro_seq.unwrap_or(i64::MAX), tx_index)
}

/// Custody after a canonical block: the last NFT event of each token, in execution order, wins.
async fn nft_upsert_from_events(conn: &mut Conn, d: &DerivedBlock) -> Result<(), sqlx::Error> {
    let seq: HashMap<&str, Option<i64>> =
        d.txs.iter().map(|t| (t.tx_id.as_str(), t.microblock_sequence)).collect();
    let mut nft: Vec<&ledger::EventRow> = d.events.iter().filter(|e| e.kind.starts_with("nft_")).collect();
    nft.sort_by_key(|e| {
        (execution_key(seq.get(e.tx_id.as_str()).copied().flatten(), e.tx_index), e.event_index)
    });
    let mut last: BTreeMap<(String, String), &ledger::EventRow> = BTreeMap::new();
    for e in nft {
        if let (Some(a), Some(v)) = (&e.asset_identifier, &e.value_hex) {
            last.insert((a.clone(), v.clone()), e);
        }
    }
    let vals = last
        .into_iter()
        .map(|((a, v), e)| {
            let owner =
                if e.kind == "nft_burn" { String::new() } else { e.recipient.clone().unwrap_or_default() };
            vec![
                a.into(),
                v.into(),
                owner.into(),
                (&e.tx_id).into(),
                (&d.block.index_block_hash).into(),
                d.block.block_height.into(),
                e.tx_index.into(),
                e.event_index.into(),
            ]
        })
        .collect();
    insert_rows(conn, "nft_custody", NFT_COLS, vals, NFT_UPSERT).await
}

/// Recomputes custody of tokens from their latest canonical event (after a reorg).
async fn nft_recompute(conn: &mut Conn, pairs: &BTreeSet<(String, String)>) -> Result<(), sqlx::Error> {
    for (asset, value) in pairs {
        let row = sql::fetch_optional(conn, "SELECT e.kind, e.recipient, e.tx_id, e.index_block_hash, e.block_height, e.tx_index, e.event_index \
             FROM events e JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash \
             AND t.microblock_hash = e.microblock_hash \
             WHERE e.asset_identifier = $1 AND e.value_hex = $2 AND e.canonical = true AND e.kind LIKE 'nft%' \
             ORDER BY e.block_height DESC, COALESCE(t.microblock_sequence, 9223372036854775807) DESC, \
             e.tx_index DESC, e.event_index DESC LIMIT 1",
            vec![asset.into(), value.into()])
        .await?;
        let vals = match row {
            Some(r) => {
                let kind: String = r.try_get("kind")?;
                let owner = if kind == "nft_burn" {
                    String::new()
                } else {
                    r.try_get::<Option<String>, _>("recipient")?.unwrap_or_default()
                };
                vec![
                    asset.into(),
                    value.into(),
                    owner.into(),
                    r.try_get::<String, _>("tx_id")?.into(),
                    r.try_get::<String, _>("index_block_hash")?.into(),
                    r.try_get::<i64, _>("block_height")?.into(),
                    r.try_get::<i64, _>("tx_index")?.into(),
                    r.try_get::<i64, _>("event_index")?.into(),
                ]
            }
            // No canonical event left: nobody holds it.
            None => vec![
                asset.into(),
                value.into(),
                "".into(),
                "".into(),
                "".into(),
                0i64.into(),
                0i64.into(),
                0i64.into(),
            ],
        };
        insert_rows(conn, "nft_custody", NFT_COLS, vec![vals], NFT_UPSERT).await?;
    }
    Ok(())
}

fn nft_pairs(d: &DerivedBlock) -> impl Iterator<Item = (String, String)> + '_ {
    d.events
        .iter()
        .filter(|e| e.kind.starts_with("nft_"))
        .filter_map(|e| Some((e.asset_identifier.clone()?, e.value_hex.clone()?)))
}

/// The anchor block decides the fate of the stream built on its parent: streamed microblocks
/// it does not accept are orphaned, and their transactions that it does not include go back
/// to the mempool.
async fn settle_stream(conn: &mut Conn, d: &DerivedBlock, receipt: Receipt) -> Result<(), sqlx::Error> {
    let rows = sql::fetch_all(conn, "SELECT microblock_hash FROM microblocks WHERE parent_index_block_hash = $1 AND index_block_hash = '' \
         AND microblock_canonical = true",
        vec![(&d.block.parent_index_block_hash).into()])
    .await?;
    let accepted: BTreeSet<&str> = d.microblocks.iter().map(|m| m.microblock_hash.as_str()).collect();
    let mut orphaned = Vec::new();
    for r in rows {
        let h: String = r.try_get("microblock_hash")?;
        if !accepted.contains(h.as_str()) {
            orphaned.push(h);
        }
    }
    if orphaned.is_empty() {
        return Ok(());
    }
    exec_in(
        conn,
        "UPDATE microblocks SET microblock_canonical = false WHERE index_block_hash = '' AND microblock_hash IN ({in})",
        vec![],
        &orphaned,
    )
    .await?;
    let included: BTreeSet<&str> = d.txs.iter().map(|t| t.tx_id.as_str()).collect();
    let txs =
        mempool_rows_where(conn, "index_block_hash = '' AND microblock_hash IN ({in})", &orphaned).await?;
    let back: Vec<MempoolTxRow> = txs.into_iter().filter(|t| !included.contains(t.tx_id.as_str())).collect();
    restore_mempool(conn, back, receipt).await
}

async fn mempool_rows_where(
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
async fn restore_mempool(
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

const BLOCK_ADDED: &str = "block_added";
const BLOCK_REMOVED: &str = "block_removed";

/// Appends one change of the canonical chain to the block event log (`/events/blocks`), with
/// the next sequence. Runs inside the transaction that flips the flags, so the log and the
/// chain never disagree; the write path is the only writer, and the primary key refuses a
/// duplicate sequence rather than reordering the log.
async fn log_block_event(
    conn: &mut Conn,
    kind: &str,
    index_block_hash: &str,
    block_hash: &str,
    block_height: i64,
) -> Result<(), sqlx::Error> {
    exec(
        conn,
        "INSERT INTO block_events (sequence, kind, index_block_hash, block_hash, block_height) \
         SELECT COALESCE(MAX(sequence), 0) + 1, $1, $2, $3, $4 FROM block_events",
        vec![kind.into(), index_block_hash.into(), block_hash.into(), block_height.into()],
    )
    .await?;
    Ok(())
}

async fn flip(conn: &mut Conn, blocks: &[String], canonical: bool) -> Result<(), sqlx::Error> {
    for t in BLOCK_TABLES {
        let sql = format!("UPDATE {t} SET canonical = $1 WHERE index_block_hash IN ({{in}})");
        exec_in(conn, &sql, vec![canonical.into()], blocks).await?;
    }
    Ok(())
}

/// A block arrived above the tip on a non-canonical parent: the fork ending at that parent
/// becomes canonical and the blocks it replaces are orphaned (the incumbent's
/// `restoreOrphanedChain`). Nothing is deleted; flags flip and the tip caches follow.
async fn restore_chain(
    conn: &mut Conn,
    ctx: &Ctx,
    parent: &StoredBlock,
    receipt: Receipt,
    totals: &mut Pending,
) -> Result<(), ApplyError> {
    // The principal-list rows of the blocks about to be orphaned must be stored to be deleted,
    // and the restored blocks' rows continue the counts below the fork point.
    totals.flush(conn).await?;
    let mut fork = vec![parent.clone()];
    while let Some(last) = fork.last().filter(|b| b.block_height > 1) {
        let p = stored_block(conn, &last.parent_index_block_hash).await?.ok_or_else(|| {
            StoreError::Corrupt(format!("parent of stored block {} is missing", last.index_block_hash))
        })?;
        if p.canonical || p.block_height == 0 {
            break;
        }
        fork.push(p);
    }
    fork.reverse();
    let lowest = fork[0].block_height;
    let orphaned_rows = sql::fetch_all(
        conn,
        &format!("{STORED_BLOCK} WHERE canonical = true AND block_height >= $1 ORDER BY block_height"),
        vec![lowest.into()],
    )
    .await?;
    let orphaned: Vec<StoredBlock> = orphaned_rows.iter().map(stored_block_of).collect::<Result<_, _>>()?;
    tracing::info!(
        fork_height = lowest,
        orphaned = orphaned.len(),
        restored = fork.len(),
        "reorg: restoring an orphaned fork"
    );

    // Orphan the replaced blocks and undo their effect on the tip caches.
    let ids: Vec<String> = orphaned.iter().map(|b| b.index_block_hash.clone()).collect();
    let mut nft = BTreeSet::new();
    for b in &orphaned {
        let d = derive_stored(conn, b, ctx.network).await?;
        apply_ft(conn, &ft_deltas(&d.token_ops), -1).await?;
        totals.apply(&d, -1);
        nft.extend(nft_pairs(&d));
    }
    flip(conn, &ids, false).await?;
    super::totals::remove_tx_lists(conn, &ids).await?;
    // Followers of the event log see the orphaned blocks removed from the tip down.
    for b in orphaned.iter().rev() {
        log_block_event(conn, BLOCK_REMOVED, &b.index_block_hash, &b.block_hash, b.block_height).await?;
    }
    let accounts: Vec<String> = fetch_in(
        conn,
        "SELECT DISTINCT account FROM stx_balances WHERE index_block_hash IN ({in})",
        vec![],
        &ids,
    )
    .await?
    .iter()
    .map(|r| r.try_get("account"))
    .collect::<Result<_, _>>()?;
    recompute_accounts(conn, &accounts).await?;
    let back = mempool_rows_where(conn, "index_block_hash IN ({in})", &ids).await?;
    restore_mempool(conn, back, receipt).await?;

    // Restore the fork, lowest first, each on top of the canonical chain so far.
    for b in &fork {
        let d = derive_stored(conn, b, ctx.network).await?;
        flip(conn, std::slice::from_ref(&b.index_block_hash), true).await?;
        canonicalize(conn, &d, b.materialized, false, receipt, totals).await?;
        log_block_event(conn, BLOCK_ADDED, &b.index_block_hash, &b.block_hash, b.block_height).await?;
        nft.extend(nft_pairs(&d));
    }
    nft_recompute(conn, &nft).await?;
    Ok(())
}

/// Resets the tip cache of `accounts` to their latest canonical balance row.
async fn recompute_accounts(conn: &mut Conn, accounts: &[String]) -> Result<(), sqlx::Error> {
    exec_in(conn, "DELETE FROM stx_accounts WHERE account IN ({in})", vec![], accounts).await?;
    let cols = ACCOUNT_COLS.iter().map(|c| format!("b.{c}")).collect::<Vec<_>>().join(", ");
    let sql = format!(
        "INSERT INTO stx_accounts ({}) SELECT {cols} FROM stx_balances b WHERE b.account IN ({{in}}) \
         AND b.canonical = true AND b.block_height = (SELECT MAX(b2.block_height) FROM stx_balances b2 \
         WHERE b2.account = b.account AND b2.canonical = true)",
        ACCOUNT_COLS.join(", ")
    );
    exec_in(conn, &sql, vec![], accounts).await?;
    Ok(())
}

async fn apply_burn_block(conn: &mut Conn, ctx: &Ctx, b: &NewBurnBlock) -> Result<(), ApplyError> {
    let r = ledger::burn::derive_burn_block(b);
    // A burn block at height h replaces whatever was at h or above on another branch. The
    // other tables' rows are written and flipped only here, together with their burn block's
    // row (same hash, same height), so a canonical row of theirs has a canonical `burn_blocks`
    // row: when `burn_blocks` has none to flip (no burn fork, nearly always), neither have
    // they, and their three UPDATEs are skipped.
    let flip = |t: &str| {
        format!("UPDATE {t} SET canonical = false WHERE burn_block_height >= $1 AND burn_block_hash <> $2 AND canonical = true")
    };
    let at_and_hash = || vec![r.burn_block_height.into(), (&r.burn_block_hash).into()];
    if exec(conn, &flip("burn_blocks"), at_and_hash()).await? > 0 {
        for t in ["burnchain_rewards", "reward_slot_holders", "burn_block_pox_txs"] {
            exec(conn, &flip(t), at_and_hash()).await?;
        }
    }
    let at = |h: &String| -> Vec<Val> { vec![h.into(), r.burn_block_height.into()] };
    insert_rows(
        conn,
        "burn_blocks",
        &[
            "burn_block_hash",
            "burn_block_height",
            "burn_amount",
            "consensus_hash",
            "parent_burn_block_hash",
            "canonical",
            "raw_event_id",
        ],
        vec![vec![
            (&r.burn_block_hash).into(),
            r.burn_block_height.into(),
            r.burn_amount.into(),
            (&r.consensus_hash).into(),
            (&r.parent_burn_block_hash).into(),
            true.into(),
            ctx.raw_event_id.into(),
        ]],
        "ON CONFLICT (burn_block_hash) DO UPDATE SET canonical = true, raw_event_id = excluded.raw_event_id",
    )
    .await?;
    let rewards = r.rewards.iter().enumerate().map(|(i, (who, amt))| {
        let mut v = at(&r.burn_block_hash);
        v.extend([(i as i64).into(), who.into(), (*amt).into(), true.into()]);
        v
    });
    insert_rows(
        conn,
        "burnchain_rewards",
        &["burn_block_hash", "burn_block_height", "reward_index", "recipient", "amount", "canonical"],
        rewards.collect(),
        "ON CONFLICT (burn_block_hash, reward_index) DO UPDATE SET canonical = true",
    )
    .await?;
    let slots = r.slot_holders.iter().enumerate().map(|(i, who)| {
        let mut v = at(&r.burn_block_hash);
        v.extend([(i as i64).into(), who.into(), true.into()]);
        v
    });
    insert_rows(
        conn,
        "reward_slot_holders",
        &["burn_block_hash", "burn_block_height", "slot_index", "address", "canonical"],
        slots.collect(),
        "ON CONFLICT (burn_block_hash, slot_index) DO UPDATE SET canonical = true",
    )
    .await?;
    let pox_txs = r.pox_txs.iter().map(|(tx_id, utxo, who, amt)| {
        let mut v = at(&r.burn_block_hash);
        v.extend([tx_id.into(), (*utxo).into(), who.into(), (*amt).into(), true.into()]);
        v
    });
    insert_rows(
        conn,
        "burn_block_pox_txs",
        &["burn_block_hash", "burn_block_height", "tx_id", "utxo_idx", "recipient", "amount", "canonical"],
        pox_txs.collect(),
        "ON CONFLICT (burn_block_hash, tx_id, utxo_idx) DO UPDATE SET canonical = true",
    )
    .await?;
    Ok(())
}

async fn apply_mempool(conn: &mut Conn, ctx: &Ctx, m: &NewMempoolTx) -> Result<(), ApplyError> {
    let rows = posted_txs(m, ctx.network, ctx.raw_event_id, ctx.receipt_time)?;
    let mined = mined_of(conn, rows.iter().map(|p| &p.row.tx_id)).await?;
    let height = tip_height(conn).await?;
    insert_mempool(conn, rows, &mined, height).await?;
    Ok(())
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

async fn apply_drop(conn: &mut Conn, d: &DropMempoolTx) -> Result<(), ApplyError> {
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

/// A streamed microblock batch: kept as a preview when it builds on the canonical tip and
/// connects to what is already streamed (the incumbent ignores other batches, as we do).
async fn apply_microblocks(conn: &mut Conn, ctx: &Ctx, m: &NewMicroblocks) -> Result<(), ApplyError> {
    let mut s = ledger::microblocks::derive_stream(m, ctx.network)?;
    for mb in &mut s.microblocks {
        mb.stream_receipt_time = Some(ctx.receipt_time);
    }
    let Some(tip) = tip(conn).await? else {
        tracing::info!("microblocks before any block: ignored");
        return Ok(());
    };
    if s.parent_index_block_hash != tip.index_block_hash {
        tracing::info!(parent = %s.parent_index_block_hash, tip = %tip.index_block_hash, "microblocks not built on the canonical tip: ignored");
        return Ok(());
    }
    let Some(first) = s.microblocks.first() else { return Ok(()) };
    let streamed = sql::fetch_all(
        conn,
        "SELECT microblock_hash, microblock_sequence FROM microblocks WHERE parent_index_block_hash = $1 \
         AND index_block_hash = '' AND microblock_canonical = true",
        vec![(&tip.index_block_hash).into()],
    )
    .await?;
    let known: HashMap<String, i64> = streamed
        .iter()
        .map(|r| Ok((r.try_get("microblock_hash")?, r.try_get("microblock_sequence")?)))
        .collect::<Result<_, sqlx::Error>>()?;
    // A stream's first microblock should name the anchor block as its parent; the incumbent
    // does not check that (only the parent index block hash, checked above), and recorded
    // streams exist that break it, so it is only logged.
    let connects = if first.microblock_sequence == 0 {
        if first.microblock_parent_hash != tip.block_hash {
            tracing::warn!(microblock = %first.microblock_hash, parent = %first.microblock_parent_hash,
                anchor = %tip.block_hash, "first microblock does not name the anchor block as its parent");
        }
        true
    } else {
        known.contains_key(&first.microblock_parent_hash)
    };
    if !connects {
        tracing::info!(microblock = %first.microblock_hash, "gap in the microblock stream: batch ignored");
        return Ok(());
    }
    // A micro-fork: streamed microblocks at or after the new batch's start are replaced.
    let new: BTreeSet<&str> = s.microblocks.iter().map(|m| m.microblock_hash.as_str()).collect();
    let replaced: Vec<String> = known
        .iter()
        .filter(|(h, seq)| **seq >= first.microblock_sequence && !new.contains(h.as_str()))
        .map(|(h, _)| h.clone())
        .collect();
    if !replaced.is_empty() {
        exec_in(
            conn,
            "UPDATE microblocks SET microblock_canonical = false WHERE index_block_hash = '' AND microblock_hash IN ({in})",
            vec![],
            &replaced,
        )
        .await?;
        let in_batch: BTreeSet<&str> = s.txs.iter().map(|t| t.tx_id.as_str()).collect();
        let back = mempool_rows_where(conn, "index_block_hash = '' AND microblock_hash IN ({in})", &replaced)
            .await?;
        restore_mempool(
            conn,
            back.into_iter().filter(|t| !in_batch.contains(t.tx_id.as_str())).collect(),
            Receipt {
                time: ctx.receipt_time,
                block_height: tip.block_height,
                raw_event_id: ctx.raw_event_id,
            },
        )
        .await?;
    }
    let at = At {
        index_block_hash: "",
        block_hash: "",
        block_height: tip.block_height + 1,
        burn_block_height: tip.burn_block_height,
        canonical: false,
    };
    let mbs = s.microblocks.iter().map(|mb| microblock_vals(mb, &at, true)).collect();
    insert_rows(
        conn,
        "microblocks",
        MICROBLOCK_COLS,
        mbs,
        "ON CONFLICT (microblock_hash, index_block_hash) DO NOTHING",
    )
    .await?;
    let txs = s.txs.iter().map(|t| tx_vals(t, &at)).collect();
    insert_rows(
        conn,
        "txs",
        TX_COLS,
        txs,
        "ON CONFLICT (tx_id, index_block_hash, microblock_hash) DO NOTHING",
    )
    .await?;
    let micro_of: HashMap<&str, &str> =
        s.txs.iter().map(|t| (t.tx_id.as_str(), t.microblock_hash.as_str())).collect();
    let evs =
        s.events.iter().map(|e| event_vals(e, micro_of.get(e.tx_id.as_str()).copied().unwrap_or(""), &at));
    insert_rows(
        conn,
        "events",
        EVENT_COLS,
        evs.collect(),
        "ON CONFLICT (tx_id, index_block_hash, microblock_hash, event_index) DO NOTHING",
    )
    .await?;
    let ids: Vec<String> = s.txs.iter().map(|t| t.tx_id.clone()).collect();
    exec_in(
        conn,
        &format!("UPDATE mempool_txs SET pruned = true WHERE {STILL_PENDING} AND tx_id IN ({{in}})"),
        vec![],
        &ids,
    )
    .await?;
    Ok(())
}
