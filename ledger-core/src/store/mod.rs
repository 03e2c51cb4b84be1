//! The ledger store: the only module that knows SQL. SQLite (embedded default, through
//! rusqlite: `lite`) and PostgreSQL (through sqlx) run the same statement texts (`sql`,
//! `conn`); see `docs/store.md` for the schema and reorg handling.
//!
//! Ingestion parses an event, derives its rows (`crate::ledger`, pure) and writes the raw event
//! and its effects in **one** database transaction, one writer at a time.

mod account;
mod amount;
mod backfill_0031;
mod backfill_0032;
mod backfill_0035;
mod backfill_0044;
mod backfill_txs;
mod block_log;
mod bns;
pub mod bns_genesis;
mod bns_import;
mod bulk;
mod conn;
mod db_row;
mod digest;
mod explorer_address;
mod explorer_block_list;
mod explorer_burn_pox;
mod explorer_chain;
mod explorer_contract;
mod explorer_holders;
mod explorer_microblock;
mod explorer_pox;
mod explorer_search;
mod explorer_tokens;
mod explorer_tx;
mod explorer_tx_stats;
mod faucet;
mod inbox;
mod lite;
mod live;
mod local_tx;
mod prepare;
mod read;
mod replica;
pub mod rosetta;
mod rows;
mod sql;
mod staking;
mod tip;
mod totals;
mod v2;
mod v3_principals;
mod v3_tx;
mod write;

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use ledger_read::TxRender;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, ConnectOptions};

use block_log::AppliedBlock;
use conn::Conn;
use thiserror::Error;
use tokio::sync::Mutex;

use crate::events::{EventPath, EventPayload, RawEvent};
use crate::ingest::{EventSink, IncomingEvent, IngestError, IngestOutcome, RawEventLog};
use crate::ledger::block::DerivedBlock;
use crate::ledger::{LedgerError, Network};

pub use crate::timestamp::{format_pg_timestamp, format_pg_timestamp_micros, now_unix, parse_pg_timestamp};
pub use bns_import::{BnsGenesis, ImportedName};
pub use bulk::IndexDefinition;
pub use ledger_read::{LocalSource, LocalTxError, LocalTxOutcome};
pub use live::{LiveNotifier, LIVE_CHANNEL, MAX_NOTIFY_PAYLOAD};
pub use local_tx::LocalTx;
pub use prepare::{prepare_batch, PreparedBatch};
pub use read::{BlockInfo, Generation, NonceUsage, Supply, TxInfo};
pub use replica::ReplicaLag;
pub use v2::STABLE_CONFIRMATIONS;

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("src/store/migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("src/store/migrations/postgres");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("unsupported database URL `{0}` (expected sqlite://PATH or postgres://...)")]
    Url(String),
    #[error("cannot create the database directory {path}: {source}")]
    Dir {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("database error: {0}")]
    Sql(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("stored data is inconsistent: {0}")]
    Corrupt(String),
    #[error("preparing a batch of events failed: {0}")]
    Prepare(String),
    #[error("{0}")]
    Schema(String),
}

impl StoreError {
    /// Whether the store was closed (`Store::close`, at shutdown).
    pub fn is_closed(&self) -> bool {
        matches!(self, StoreError::Sql(sqlx::Error::PoolClosed))
    }
}

/// Why applying an event failed: the event's fault (invalid / not applicable yet) or ours.
#[derive(Debug, Error)]
pub(crate) enum ApplyError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Rejected(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A refused event's error, kept to report it again on a later pass of a batch.
#[derive(Debug, Clone)]
enum Refusal {
    Invalid(String),
    Rejected(String),
}

impl Refusal {
    /// The refusal an apply error stands for (a store error is never one: callers return it).
    fn of(e: ApplyError) -> Refusal {
        match e {
            ApplyError::Invalid(reason) => Refusal::Invalid(reason),
            ApplyError::Rejected(reason) => Refusal::Rejected(reason),
            ApplyError::Store(e) => Refusal::Invalid(e.to_string()),
        }
    }
}

/// Whether a prepared event can join a run of mempool events (`write::apply_mempool_run`):
/// parsed, a mempool post or drop, with its id (an event without one gets the next id, read
/// from the store, so it goes alone).
fn mempool_run_member(p: &prepare::Prepared) -> bool {
    p.ev.id.is_some()
        && matches!(p.payload, Ok(EventPayload::NewMempoolTx(_)) | Ok(EventPayload::DropMempoolTx(_)))
}

/// A [`mempool_run_member`] as `write::apply_mempool_run` takes it.
fn run_event(p: &prepare::Prepared) -> Option<write::RunEvent<'_>> {
    let effect = match &p.payload {
        Ok(EventPayload::NewMempoolTx(m)) => write::MempoolEvent::Post(m),
        Ok(EventPayload::DropMempoolTx(d)) => write::MempoolEvent::Drop(d),
        _ => return None,
    };
    let (timestamp, receipt_time) = event_time(&p.ev);
    Some(write::RunEvent {
        id: p.ev.id?,
        timestamp,
        receipt_time,
        path: p.ev.path.as_str(),
        body: &p.ev.payload,
        effect,
    })
}

/// An event's receive timestamp (as stored) and its Unix seconds: the one it came with, or now.
fn event_time(ev: &IncomingEvent) -> (Cow<'_, str>, i64) {
    match &ev.receive_timestamp {
        Some(ts) => (Cow::Borrowed(ts.as_str()), parse_pg_timestamp(ts).unwrap_or_else(now_unix)),
        None => {
            let unix = now_unix();
            (Cow::Owned(format_pg_timestamp(unix)), unix)
        }
    }
}

impl From<Refusal> for ApplyError {
    fn from(r: Refusal) -> Self {
        match r {
            Refusal::Invalid(reason) => ApplyError::Invalid(reason),
            Refusal::Rejected(reason) => ApplyError::Rejected(reason),
        }
    }
}

impl From<sqlx::Error> for ApplyError {
    fn from(e: sqlx::Error) -> Self {
        ApplyError::Store(StoreError::Sql(e))
    }
}

impl From<LedgerError> for ApplyError {
    fn from(e: LedgerError) -> Self {
        ApplyError::Invalid(e.to_string())
    }
}

/// The one place store and ledger errors become ingest errors.
fn ingest_error(path: EventPath, e: ApplyError) -> IngestError {
    match e {
        ApplyError::Invalid(reason) => IngestError::Invalid { path, reason },
        ApplyError::Rejected(reason) => IngestError::Rejected { path, reason },
        ApplyError::Store(e) => IngestError::Store(Box::new(e)),
    }
}

impl From<StoreError> for IngestError {
    fn from(e: StoreError) -> Self {
        IngestError::Store(Box::new(e))
    }
}

/// Connections of the pool: open (`size`), of which idle, and the bound.
#[derive(Debug, Clone, Copy)]
pub struct PoolStats {
    pub size: u32,
    pub idle: u32,
    pub max: u32,
}

pub struct Store {
    /// How the store reads (and, on PostgreSQL, where the writer's connection comes from); its
    /// engine ([`Store::engine`]).
    reads: Reads,
    network: Network,
    /// The text a surface serves of each transaction, rendered when its block is applied and
    /// stored with the row (`txs.api_json`), whose shape only the renderer knows.
    render: Arc<dyn TxRender>,
    /// One writer at a time: concurrent POSTs must not interleave their transactions. The
    /// writer keeps its own connection, taken out of the pool on first use, so that every event
    /// lands on the same connection: its prepared statements stay cached and, on SQLite, its
    /// page cache stays valid. (A connection sees another connection's commit as a change of
    /// the database and throws its whole page cache away; alternating pooled connections
    /// made every event re-read the B-tree pages it touched from the file.)
    /// On a SQLite file, a rusqlite connection (`conn`, `lite::LiteWriter`).
    writer: Mutex<Option<Conn>>,
    /// SQLite: the last generation read and the wal-index header of its state
    /// (`Store::generation`).
    generation_seen: std::sync::Mutex<Option<(lite::WalHeader, Generation)>>,
    /// Events applied outside a bulk replay (SQLite: when to size the writer's cache again).
    live_events: std::sync::atomic::AtomicU64,
    /// SQLite: the writer has the bulk replay's settings (`set_writer_mode`), which the live
    /// cache sizing must leave alone.
    bulk_writer: std::sync::atomic::AtomicBool,
    /// Whether each block applied is logged ([`block_log`]).
    block_log: std::sync::atomic::AtomicBool,
    /// The database URL as opened: live updates LISTEN on their own PostgreSQL connection.
    url: String,
    /// SQLite: the background WAL checkpointer (see [`lite::Checkpointer`]).
    checkpointer: std::sync::Mutex<Option<lite::Checkpointer>>,
    /// What the unfiltered `/extended/v1/tx` list derives from the canonical chain (its total,
    /// the boot shift), kept with the canonical tip it was read at (`explorer_tx::TipMemo`).
    tip_memo: std::sync::Mutex<explorer_tx::TipMemo>,
    /// Opened by a `readonly` process: never migrates, ingests or checkpoints (see `replica`).
    readonly: bool,
    /// A `readonly` process's PostgreSQL primary, when `reads` is a streaming replica: what
    /// the API records goes there, and live updates are heard there.
    primary: Option<replica::Primary>,
    /// SQLite: the transactions this process recorded locally (`local_tx`), for its live updates.
    local_recorded: tokio::sync::broadcast::Sender<String>,
    /// The connection the event inbox is written on (`inbox`), so that logging an event never
    /// waits for the batch being applied: PostgreSQL's own beside the writer's, or one to a
    /// SQLite file's `-inbox` file.
    inbox_conn: Mutex<Option<Conn>>,
}

/// Where reads go: SQLite's read connections, or PostgreSQL's pool.
enum Reads {
    Lite(lite::LiteReader),
    Pg(AnyPool),
}

impl Reads {
    fn engine(&self) -> Engine {
        match self {
            Reads::Lite(_) => Engine::Sqlite,
            Reads::Pg(_) => Engine::Postgres,
        }
    }
}

/// Reads admitted at once by default on SQLite (`api::Admission`, from [`Store::pool_stats`]),
/// the bound the mixed-load benchmark's figures were measured with: SQLite reads run on the
/// API's own threads, so more at once only queue there.
const SQLITE_READS_AT_ONCE: u32 = 4;

/// The writer's automatic checkpoint while it builds the indexes a replay deferred, in bytes of
/// WAL (SQLite counts pages, whose size depends on how the file was created: `LIVE_PAGE_SIZE`,
/// `REPLAY_PAGE_SIZE`).
const WRITER_AUTOCHECKPOINT_BYTES: i64 = 64 << 20;
/// The writer's automatic checkpoint during a bulk replay (`bulk`). One commit of a
/// 2,000-event batch writes hundreds of MB of WAL, so at 64 MiB the writer checkpointed after
/// every commit itself: it copied the frames back and waited for the database file's fsync
/// (on a 1M-transaction replay a sixth of its time, most of it blocked on the disk). With this
/// bound the background checkpointer copies a commit while the writer applies the next batch.
/// The WAL then grows to this size (it can only start over at a write that began after
/// everything was copied, and the writer starts its next batch right after each commit), where
/// the writer checkpoints itself: little is left to copy by then. Same durability: every
/// checkpoint still fsyncs.
const BULK_WRITER_AUTOCHECKPOINT_BYTES: i64 = 1 << 30;

/// The live writer's SQLite page cache: a quarter of the database file, between
/// [`WRITER_CACHE_MIN_KIB`] and [`WRITER_CACHE_MAX_KIB`] (readers keep 64 MiB each). Every
/// transaction inserts into a dozen indexes keyed by random txids and addresses, so once the
/// database outgrows the cache nearly every insert is a page read (a `pread` and a copy from
/// the OS cache); a large cache on the one connection that writes keeps the hot interior pages
/// of those indexes. Below 1 GiB of file a large cache costs instead: a commit whose B-tree
/// balance reordered pages (most blocks) walks the whole page cache (SQLite parks a page at
/// the pending-byte page number for a moment, `pcache1TruncateUnsafe`), 7 % of the realnode-2
/// POST benchmark's CPU with 256 MiB. Sized to the file, the cache holds the interior pages
/// and the walk stays short; from 1 GiB on, the walk no longer happens and the cache is at
/// its maximum. Re-sized as the file grows ([`WRITER_RESIZE_EVERY`]).
fn writer_cache_kib(file_bytes: i64) -> i64 {
    (file_bytes / 4 / 1024).clamp(WRITER_CACHE_MIN_KIB, WRITER_CACHE_MAX_KIB)
}
const WRITER_CACHE_MIN_KIB: i64 = 16 * 1024;
const WRITER_CACHE_MAX_KIB: i64 = 256 * 1024;
/// Live events between two sizings of the writer's cache.
const WRITER_RESIZE_EVERY: u64 = 4096;
/// The live writer's automatic checkpoint, in bytes of WAL. The background checkpointer copies
/// the frames while the writer goes on, but the WAL can only start over after a checkpoint
/// that saw no newer frame, which a node syncing from genesis (one POST right after the other)
/// never leaves room for; the writer then checkpoints itself when the WAL reaches this size, in
/// its commit, before the node gets its `200` (an fsync of the database file each time): 6 %
/// of the POST benchmark's CPU at 64 MiB, under 1 % at 256 MiB. At a node's pace the background
/// checkpointer completes and the WAL starts over long before. The WAL file keeps the size it
/// reached (up to this, plus a commit): cutting it back when it starts over
/// (`journal_size_limit`) cost an `ftruncate` and the file's regrowth each time, 3 % and more
/// of the same benchmark.
const LIVE_WRITER_AUTOCHECKPOINT_BYTES: i64 = 256 << 20;
/// The writer's page cache during a bulk replay (`bulk`): a batch of thousands of transactions
/// dirties a page of every random-key B-tree per few rows, and pages that do not fit are
/// written to the WAL before the commit (and again when dirtied again). Fixed.
const BULK_WRITER_CACHE_KIB: i64 = 1024 * 1024;

/// The SQLite writer's page cache and automatic checkpoint: live, [`writer_cache_kib`] and
/// [`LIVE_WRITER_AUTOCHECKPOINT_BYTES`]; during a bulk replay [`BULK_WRITER_CACHE_KIB`] and
/// [`BULK_WRITER_AUTOCHECKPOINT_BYTES`].
async fn set_writer_mode(conn: &mut Conn, bulk: bool) -> Result<(), sqlx::Error> {
    if bulk {
        set_autocheckpoint(conn, BULK_WRITER_AUTOCHECKPOINT_BYTES).await?;
        return conn.batch(&format!("PRAGMA cache_size = -{BULK_WRITER_CACHE_KIB}")).await;
    }
    set_autocheckpoint(conn, LIVE_WRITER_AUTOCHECKPOINT_BYTES).await?;
    size_writer_cache(conn).await
}

/// Sizes the live writer's page cache to the database file ([`writer_cache_kib`]).
async fn size_writer_cache(conn: &mut Conn) -> Result<(), sqlx::Error> {
    let row = sql::fetch_one(
        conn,
        "SELECT page_count * page_size AS n FROM pragma_page_count, pragma_page_size",
        vec![],
    )
    .await?;
    let kib = writer_cache_kib(row.try_get("n")?);
    conn.batch(&format!("PRAGMA cache_size = -{kib}")).await
}

/// The SQLite connection's automatic checkpoint, in bytes of WAL.
async fn set_autocheckpoint(conn: &mut Conn, bytes: i64) -> Result<(), sqlx::Error> {
    let page_size: i64 = sql::fetch_one(conn, "PRAGMA page_size", vec![]).await?.try_get(0)?;
    let pages = bytes / page_size.max(512);
    conn.batch(&format!("PRAGMA wal_autocheckpoint = {pages}")).await
}

/// The page size of a SQLite file created for live ingestion (`serve`, `Store::open`). A node
/// POSTs one event at a time and each is one commit, which writes every page it dirtied to the
/// WAL (checksummed, copied by the kernel): a mempool transaction dirties one page in each of
/// ~10 B-trees, a block ~100. With 4 KiB pages the realnode-2 POST benchmark spent 19 % less
/// CPU than with 16 KiB.
const LIVE_PAGE_SIZE: u32 = 4096;
/// The page size of a SQLite file created by a bulk replay (`import-events`,
/// `Store::open_for_replay`): a 2,000-event commit rewrites whole B-trees, where larger pages
/// mean shallower trees and fewer frames (docs/store.md: 1.35× faster than 4 KiB).
const REPLAY_PAGE_SIZE: u32 = 16384;

/// What a database URL names: a SQLite file (`sqlite://PATH`, `sqlite:PATH`, options after
/// `?` ignored) or a PostgreSQL database.
enum Target {
    Sqlite(String),
    Postgres(String),
}

impl Target {
    fn of(url: &str) -> Result<Target, StoreError> {
        if let Some(path) = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")) {
            let path = path.split('?').next().unwrap_or(path);
            if path.is_empty() || path == ":memory:" {
                return Err(StoreError::Url(format!(
                    "{url}: a SQLite store is a file (an in-memory database would be gone with the process)"
                )));
            }
            Ok(Target::Sqlite(path.to_owned()))
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Ok(Target::Postgres(url.to_owned()))
        } else {
            Err(StoreError::Url(url.to_owned()))
        }
    }

    /// The URL the store keeps (`Store::url`).
    fn url(&self) -> String {
        match self {
            Target::Sqlite(path) => format!("sqlite://{path}"),
            Target::Postgres(url) => url.clone(),
        }
    }
}

/// The SQLite file at `path`, its directory created, and a first connection to it (the file
/// created with `page_size` bytes a page if new, WAL mode).
fn create_sqlite(path: &str, page_size: u32) -> Result<lite::LiteWriter, StoreError> {
    if let Some(dir) = Path::new(path).parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|source| StoreError::Dir { path: dir.display().to_string(), source })?;
    }
    Ok(lite::LiteWriter::create(path, page_size)?)
}

/// PostgreSQL's pool over `url`.
async fn connect_pg(url: &str) -> Result<AnyPool, StoreError> {
    sqlx::any::install_default_drivers();
    let options = AnyConnectOptions::from_str(url)?.disable_statement_logging();
    Ok(AnyPoolOptions::new()
        // No ping before every checkout: the writer checks out once per event.
        .test_before_acquire(false)
        .max_connections(8)
        .connect_with(options)
        .await?)
}

/// The file of a `sqlite://PATH` URL as [`Target::url`] makes it.
fn sqlite_path(url: &str) -> Option<&str> {
    url.strip_prefix("sqlite://")
}

/// The engine's migrations (SQLite's applied by `lite::migrate`, PostgreSQL's by sqlx).
fn migrator(engine: Engine) -> &'static sqlx::migrate::Migrator {
    match engine {
        Engine::Sqlite => &SQLITE_MIGRATIONS,
        Engine::Postgres => &POSTGRES_MIGRATIONS,
    }
}

/// Brings the database on `conn` to this binary's schema: the indexes an interrupted bulk replay
/// deferred (built first: a migration may expect any index; a replay builds them at its end
/// unless a migration is pending), the migrations (PostgreSQL's through sqlx on `pg`, its
/// pool), then the backfills pending migrations left.
async fn prepare_schema(
    conn: &mut Conn,
    pg: Option<&AnyPool>,
    network: Network,
    render: &dyn TxRender,
    replay: bool,
) -> Result<(), StoreError> {
    let engine = if pg.is_some() { Engine::Postgres } else { Engine::Sqlite };
    let migrator = migrator(engine);
    let deferred = bulk::deferred_before_migrations(conn).await;
    if deferred > 0 && (!replay || bulk::migrations_pending(conn, migrator).await) {
        bulk::build_deferred(conn, engine).await?;
    }
    match pg {
        Some(pool) => migrator.run(pool).await?,
        None => conn.migrate_sqlite(migrator)?,
    }
    totals::backfill(conn).await?;
    backfill_0031::backfill(conn, network).await?;
    backfill_0032::backfill(conn, render).await?;
    backfill_0035::backfill(conn).await?;
    backfill_0044::backfill(conn, render).await?;
    Ok(())
}

impl Store {
    /// Opens (creating if needed) and migrates the database at `url`: `sqlite://PATH` (file and
    /// parent directory created, WAL) or `postgres://...`. Indexes that an interrupted bulk
    /// replay left unbuilt are built first (see `bulk`). `render` writes the transaction text
    /// stored with each row (the composition root hands in the serving surface's).
    pub async fn open(url: &str, network: Network, render: Arc<dyn TxRender>) -> Result<Store, StoreError> {
        Store::open_with(url, network, render, false).await
    }

    /// [`Store::open`] for a bulk replay (`import-events`): indexes an interrupted replay
    /// deferred stay deferred, for the replay to build at its end; a new SQLite file gets
    /// the replay's larger pages (`REPLAY_PAGE_SIZE`).
    pub async fn open_for_replay(
        url: &str,
        network: Network,
        render: Arc<dyn TxRender>,
    ) -> Result<Store, StoreError> {
        Store::open_with(url, network, render, true).await
    }

    async fn open_with(
        url: &str,
        network: Network,
        render: Arc<dyn TxRender>,
        replay: bool,
    ) -> Result<Store, StoreError> {
        let target = Target::of(url)?;
        let (reads, checkpointer) = match &target {
            Target::Sqlite(path) => {
                let page_size = if replay { REPLAY_PAGE_SIZE } else { LIVE_PAGE_SIZE };
                let mut conn = Conn::lite(create_sqlite(path, page_size)?);
                prepare_schema(&mut conn, None, network, &*render, replay).await?;
                conn.close().await;
                let reads = Reads::Lite(lite::LiteReader::open(path, true)?);
                (reads, Some(lite::Checkpointer::start(path)?))
            }
            Target::Postgres(url) => {
                let pool = connect_pg(url).await?;
                let mut conn = Conn::pooled(pool.acquire().await?);
                prepare_schema(&mut conn, Some(&pool), network, &*render, replay).await?;
                conn.close().await;
                (Reads::Pg(pool), None)
            }
        };
        Ok(Store::assemble(reads, network, render, target.url(), checkpointer, None, false))
    }

    /// Opens `url` for a `readonly` process (`serve --mode readonly`): no migrations, backfills
    /// or checkpoints, and it waits for a writer to have migrated the database to this
    /// binary's schema. `url` is a PostgreSQL streaming replica (give its `primary`) or the
    /// database a writer process uses (a SQLite file on this machine, or the primary itself).
    pub async fn open_readonly(
        url: &str,
        primary: Option<&str>,
        network: Network,
        render: Arc<dyn TxRender>,
    ) -> Result<Store, StoreError> {
        let target = Target::of(url)?;
        let reads = match &target {
            // The file is the writer's: it exists, with its page size, before the schema does.
            Target::Sqlite(path) => Reads::Lite(replica::open_written(path).await?),
            Target::Postgres(url) => Reads::Pg(connect_pg(url).await?),
        };
        let primary = match primary {
            Some(primary) => Some(replica::Primary::connect(reads.engine(), primary).await?),
            None => None,
        };
        let store = Store::assemble(reads, network, render, target.url(), None, primary, true);
        store.wait_for_schema(migrator(store.engine())).await?;
        Ok(store)
    }

    fn assemble(
        reads: Reads,
        network: Network,
        render: Arc<dyn TxRender>,
        url: String,
        checkpointer: Option<lite::Checkpointer>,
        primary: Option<replica::Primary>,
        readonly: bool,
    ) -> Store {
        Store {
            reads,
            network,
            render,
            url,
            writer: Mutex::new(None),
            live_events: std::sync::atomic::AtomicU64::new(0),
            bulk_writer: std::sync::atomic::AtomicBool::new(false),
            block_log: std::sync::atomic::AtomicBool::new(false),
            generation_seen: std::sync::Mutex::new(None),
            checkpointer: std::sync::Mutex::new(checkpointer),
            tip_memo: std::sync::Mutex::new(Default::default()),
            readonly,
            primary,
            local_recorded: local_tx::recorded_channel(),
            inbox_conn: Mutex::new(None),
        }
    }

    /// SQLite's read connections (`None` on PostgreSQL).
    fn lite(&self) -> Option<&lite::LiteReader> {
        match &self.reads {
            Reads::Lite(lite) => Some(lite),
            Reads::Pg(_) => None,
        }
    }

    /// PostgreSQL's pool; an error on SQLite (a PostgreSQL-only path reached on SQLite is a
    /// bug, reported rather than panicking).
    fn pg(&self) -> Result<&AnyPool, sqlx::Error> {
        match &self.reads {
            Reads::Pg(pool) => Ok(pool),
            Reads::Lite(_) => {
                Err(sqlx::Error::Configuration("a PostgreSQL-only path on a SQLite store".into()))
            }
        }
    }

    /// Whether a `readonly` process opened this store.
    pub fn is_readonly(&self) -> bool {
        self.readonly
    }

    pub fn engine(&self) -> Engine {
        self.reads.engine()
    }

    pub fn network(&self) -> Network {
        self.network
    }

    /// The read connections now, for the metrics and the admission bound.
    pub fn pool_stats(&self) -> PoolStats {
        match &self.reads {
            Reads::Lite(lite) => {
                let (size, idle) = lite.connections();
                let n = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
                PoolStats { size: n(size), idle: n(idle), max: SQLITE_READS_AT_ONCE }
            }
            Reads::Pg(pool) => PoolStats {
                size: pool.size(),
                idle: u32::try_from(pool.num_idle()).unwrap_or(u32::MAX),
                max: pool.options().get_max_connections(),
            },
        }
    }

    pub async fn close(&self) {
        let checkpointer = self.checkpointer.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(c) = checkpointer {
            c.stop().await;
        }
        // SQLite deletes the WAL only when the connection closing is the last one open. So the
        // readers close first, then one connection copies the WAL into the database and
        // empties it (TRUNCATE) before it closes too: nothing is left to replay at the next open.
        // A `readonly` process leaves that to the writer's process.
        let writer = self.writer.lock().await.take();
        if let Some(inbox) = self.inbox_conn.lock().await.take() {
            inbox.close().await;
        }
        match &self.reads {
            Reads::Lite(lite) => lite.close(),
            Reads::Pg(pool) => pool.close().await,
        }
        if let Some(primary) = &self.primary {
            primary.pool.close().await;
        }
        let last = match (writer, sqlite_path(&self.url)) {
            (Some(conn), _) => Some(conn),
            (None, Some(path)) if !self.readonly => lite::LiteWriter::open(path, None).ok().map(Conn::lite),
            (None, _) => None,
        };
        if let Some(mut conn) = last {
            if self.engine() == Engine::Sqlite && !self.readonly {
                if let Err(e) = conn.batch("PRAGMA wal_checkpoint(TRUNCATE)").await {
                    tracing::warn!(error = %e, "closing the store: WAL checkpoint failed");
                }
            }
            conn.close().await;
        }
    }

    /// The writer's connection (taken from the pool the first time, or again after a failure).
    async fn writer_conn<'a>(&self, slot: &'a mut Option<Conn>) -> Result<&'a mut Conn, sqlx::Error> {
        if slot.is_none() {
            let mut conn = match sqlite_path(&self.url) {
                Some(path) => {
                    Conn::lite(lite::LiteWriter::open(path, self.lite().map(lite::LiteReader::fence))?)
                }
                None => Conn::sqlx(self.write_pool()?.acquire().await?.detach()),
            };
            if self.engine() == Engine::Sqlite {
                set_writer_mode(&mut conn, false).await?;
            }
            *slot = Some(conn);
        }
        Ok(slot.as_mut().expect("writer connection just set"))
    }

    async fn ingest_inner(&self, ev: IncomingEvent) -> Result<IngestOutcome, ApplyError> {
        // Parse before touching the database: a malformed body changes nothing.
        let payload = parse(&ev)?;
        if self.readonly {
            return Err(ApplyError::Store(StoreError::Schema(
                "a readonly process does not ingest events".into(),
            )));
        }
        let mut writer = self.writer.lock().await;
        let started = std::time::Instant::now();
        let conn = self.writer_conn(&mut writer).await?;
        let result = self.apply_event(conn, &ev, &payload).await;
        if matches!(result, Err(ApplyError::Store(_))) {
            self.drop_writer(&mut writer).await;
        } else {
            self.count_live(conn, 1).await;
        }
        if matches!(result, Ok(IngestOutcome::Applied { .. })) && self.logs_blocks() {
            if let Some(block) = AppliedBlock::of(&payload, started) {
                block.log();
            }
        }
        result
    }

    /// Counts `n` events applied on the live writer; each [`WRITER_RESIZE_EVERY`] of them, sizes
    /// the SQLite writer's cache to the file again (a node syncing from genesis grows it from
    /// nothing). Not during a bulk replay, whose cache is fixed.
    async fn count_live(&self, conn: &mut Conn, n: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        if self.engine() != Engine::Sqlite || self.bulk_writer.load(Relaxed) {
            return;
        }
        let before = self.live_events.fetch_add(n, Relaxed);
        if (before + n) / WRITER_RESIZE_EVERY > before / WRITER_RESIZE_EVERY {
            if let Err(e) = size_writer_cache(conn).await {
                tracing::warn!(error = %e, "sizing the SQLite writer's page cache");
            }
        }
    }

    /// Bulk import: applies `events` in order in **one** database transaction, and commits once
    /// at the end.
    ///
    /// Per event the semantics of [`EventSink::ingest`] hold: an event is applied whole (its
    /// raw event and all its effects) or not at all; a refused event (`Invalid`, `Rejected`)
    /// gets its error in the result, and the batch goes on with the next one, which sees the
    /// store exactly as if the refused event had never come.
    ///
    /// What changes is when events become durable: none of the batch is committed until the
    /// whole batch is. Nothing is acknowledged before that either: only an `Ok` from this
    /// call says the `Applied` events are stored; an `Err` (a database failure, or a failed
    /// commit) means that no event of the batch was stored, and a replay resumes from
    /// [`EventSink::last_event_id`] as after a crash. Hence it is for replaying a log
    /// (`import-events`, benchmarks), never for live node POSTs, which are acknowledged one
    /// by one. The gain: one commit (a WAL flush, and an fsync on PostgreSQL) per batch
    /// instead of per event, and the pages that consecutive events touch are written once.
    pub async fn ingest_batch(
        &self,
        events: Vec<IncomingEvent>,
    ) -> Result<Vec<Result<IngestOutcome, IngestError>>, IngestError> {
        self.batch(events, false).await
    }

    /// [`Store::ingest_batch`], stopping at the first refused event when `stop_at_refusal`.
    async fn batch(
        &self,
        events: Vec<IncomingEvent>,
        stop_at_refusal: bool,
    ) -> Result<Vec<Result<IngestOutcome, IngestError>>, IngestError> {
        self.apply_source(prepare::Source::ahead(events, self.network, self.render.clone()), stop_at_refusal)
            .await
    }

    /// [`Store::ingest_batch`] of a batch already parsed and derived by [`prepare_batch`]
    /// (possibly on another thread, while the writer applied the previous batch).
    pub async fn ingest_prepared(
        &self,
        mut batch: PreparedBatch,
    ) -> Result<Vec<Result<IngestOutcome, IngestError>>, IngestError> {
        if batch.network != self.network {
            for p in &mut batch.events {
                p.derived = None;
            }
        }
        self.apply_source(prepare::Source::ready(batch.events), false).await
    }

    async fn apply_source(
        &self,
        mut source: prepare::Source,
        stop_at_refusal: bool,
    ) -> Result<Vec<Result<IngestOutcome, IngestError>>, IngestError> {
        let mut writer = self.writer.lock().await;
        let result = self.apply_batch(&mut writer, &mut source, stop_at_refusal).await;
        match &result {
            Err(_) => self.drop_writer(&mut writer).await,
            Ok(outcomes) => {
                if let Some(conn) = writer.as_mut() {
                    self.count_live(conn, outcomes.len() as u64).await;
                }
            }
        }
        result.map_err(IngestError::from)
    }

    /// Applies the batch optimistically, without a savepoint per event (they cost a B-tree
    /// savepoint on SQLite and a subtransaction on PostgreSQL for every event, and refusals
    /// are rare in a replay). When an event is refused after it may have written something,
    /// the whole transaction is rolled back and the batch re-applied from the start with that
    /// event skipped: at most one extra pass per refused event.
    async fn apply_batch(
        &self,
        writer: &mut Option<Conn>,
        events: &mut prepare::Source,
        stop_at_refusal: bool,
    ) -> Result<Vec<Result<IngestOutcome, IngestError>>, StoreError> {
        // Events refused while applying, found on earlier passes.
        let mut refused: HashMap<usize, Refusal> = HashMap::new();
        'pass: loop {
            let mut tx = self.writer_conn(writer).await?.begin().await?;
            let mut totals = totals::Pending::default();
            let mut out = Vec::with_capacity(events.len());
            // Logged once the batch is committed.
            let mut blocks = Vec::new();
            let mut i = 0;
            while i < events.len() {
                // A run of mempool events goes in a few statements (`write::apply_mempool_run`).
                let run =
                    events.run_from(i, |k, p| !refused.contains_key(&k) && mempool_run_member(p)).await?;
                if run.len() > 1 {
                    let items: Vec<write::RunEvent> = run.iter().filter_map(run_event).collect();
                    match write::apply_mempool_run(&mut tx, self.network, &items).await {
                        Ok(applied) => {
                            for (p, applied) in run.iter().zip(applied) {
                                let id = p.ev.id.unwrap_or_default();
                                out.push(Ok(if applied {
                                    IngestOutcome::Applied { id }
                                } else {
                                    IngestOutcome::AlreadyStored { id }
                                }));
                            }
                            i += run.len();
                            continue;
                        }
                        Err((_, ApplyError::Store(e))) => return Err(e),
                        Err((k, refusal)) => {
                            tx.rollback().await?;
                            refused.insert(i + k, Refusal::of(refusal));
                            continue 'pass;
                        }
                    }
                }
                let k = i;
                i += 1;
                let prepare::Prepared { ev, payload, derived } = events.get(k).await?;
                let outcome = match (refused.get(&k), payload) {
                    (Some(r), _) | (None, Err(r)) => Err(ApplyError::from(r.clone())),
                    (None, Ok(payload)) => {
                        let started = std::time::Instant::now();
                        match self.apply_in(&mut tx, ev, payload, derived.as_ref(), &mut totals).await {
                            Ok(o) => {
                                if matches!(o, IngestOutcome::Applied { .. }) && self.logs_blocks() {
                                    blocks.extend(AppliedBlock::of(payload, started));
                                }
                                Ok(o)
                            }
                            Err(ApplyError::Store(e)) => return Err(e),
                            Err(refusal) => {
                                // It may have written part of itself: start over without it.
                                tx.rollback().await?;
                                refused.insert(k, Refusal::of(refusal));
                                continue 'pass;
                            }
                        }
                    }
                };
                match outcome {
                    Ok(o) => out.push(Ok(o)),
                    Err(e) => {
                        out.push(Err(ingest_error(ev.path, e)));
                        if stop_at_refusal {
                            break;
                        }
                    }
                }
            }
            totals.flush(&mut tx).await?;
            tx.commit().await?;
            blocks.iter().for_each(AppliedBlock::log);
            for e in out.iter().filter_map(|o| o.as_ref().err()) {
                tracing::warn!(error = %e, "event not applied");
            }
            return Ok(out);
        }
    }

    /// Where PostgreSQL writes go: the primary of a `readonly` process on a replica, else the
    /// store's pool.
    fn write_pool(&self) -> Result<&AnyPool, sqlx::Error> {
        self.primary.as_ref().map_or_else(|| self.pg(), |p| Ok(&p.pool))
    }

    /// Closes the writer's connection after a database error: it may be broken, or still in a
    /// transaction after a failed rollback. The next event starts on a fresh one.
    async fn drop_writer(&self, writer: &mut Option<Conn>) {
        if let Some(conn) = writer.take() {
            conn.close().await;
        }
    }

    /// One event in one transaction on `conn` (a savepoint when `conn` is in a transaction
    /// already): the raw event and its effects, or nothing.
    async fn apply_event(
        &self,
        conn: &mut Conn,
        ev: &IncomingEvent,
        payload: &EventPayload,
    ) -> Result<IngestOutcome, ApplyError> {
        if let EventPayload::NewMempoolTx(m) = payload {
            // On PostgreSQL, one statement (`write::post_alone`).
            let (timestamp, unix) = event_time(ev);
            let raw = write::RawInsert {
                id: ev.id,
                timestamp: &timestamp,
                path: ev.path.as_str(),
                payload: &ev.payload,
            };
            if let Some(stored) = write::post_alone(conn, self.network, &raw, unix, m).await? {
                return Ok(match stored {
                    Some(id) => IngestOutcome::Applied { id },
                    None => IngestOutcome::AlreadyStored { id: ev.id.unwrap_or_default() },
                });
            }
        }
        let mut tx = conn.begin().await?;
        let mut totals = totals::Pending::default();
        let applied = match self.apply_in(&mut tx, ev, payload, None, &mut totals).await {
            Ok(outcome) => totals.flush(&mut tx).await.map(|()| outcome).map_err(ApplyError::from),
            Err(e) => Err(e),
        };
        match applied {
            Ok(outcome) => {
                tx.commit().await?;
                Ok(outcome)
            }
            Err(e) => {
                tx.rollback().await?;
                Err(e)
            }
        }
    }

    async fn apply_in(
        &self,
        conn: &mut Conn,
        ev: &IncomingEvent,
        payload: &EventPayload,
        derived: Option<&DerivedBlock>,
        totals: &mut totals::Pending,
    ) -> Result<IngestOutcome, ApplyError> {
        let (timestamp, unix) = event_time(ev);
        // One statement stores the raw event, or finds its id taken (then nothing is written).
        let Some(id) =
            write::insert_raw_event(conn, ev.id, &timestamp, ev.path.as_str(), &ev.payload).await?
        else {
            return Ok(IngestOutcome::AlreadyStored { id: ev.id.unwrap_or_default() });
        };
        let ctx =
            write::Ctx { network: self.network, render: &*self.render, raw_event_id: id, receipt_time: unix };
        write::apply(conn, &ctx, payload, derived, totals).await?;
        Ok(IngestOutcome::Applied { id })
    }
}

impl RawEventLog for Store {
    async fn raw_events_after(
        &self,
        after_id: Option<i64>,
        limit: usize,
    ) -> Result<Vec<RawEvent>, IngestError> {
        Ok(self.read_raw_events_after(after_id, limit).await?)
    }

    /// Raw events are the source of everything else: no raw event means no ledger data.
    async fn is_empty(&self) -> Result<bool, IngestError> {
        Ok(self.read_last_event_id().await?.is_none())
    }

    async fn wipe(&self) -> Result<(), IngestError> {
        let mut writer = self.writer.lock().await;
        let conn = self.writer_conn(&mut writer).await.map_err(StoreError::from)?;
        write::wipe(conn).await?;
        drop(writer);
        Ok(self.inbox_clear().await?)
    }

    async fn begin_bulk_replay(&self) -> Result<(), IngestError> {
        self.defer_read_indexes().await?;
        Ok(())
    }

    async fn end_bulk_replay(&self) -> Result<usize, IngestError> {
        Ok(self.build_deferred_indexes().await?)
    }
}

/// Parses an event's body: a malformed one is refused before the database is touched.
fn parse(ev: &IncomingEvent) -> Result<EventPayload, ApplyError> {
    EventPayload::parse(ev.path, &ev.payload).map_err(|e| ApplyError::Invalid(e.source.to_string()))
}

impl EventSink for Store {
    async fn ingest(&self, event: IncomingEvent) -> Result<IngestOutcome, IngestError> {
        let path = event.path;
        let outcome = self.ingest_inner(event).await;
        // On SQLite the writer runs synchronously on this worker (`conn::Conn`) and never
        // awaits: hand the worker to the tasks waiting on it (the live notifier, readers) between
        // events, as a node's POST round trip would, so a run of events cannot monopolize it.
        tokio::task::yield_now().await;
        match &outcome {
            Err(e) => tracing::warn!(%path, error = %e, "event not applied"),
            Ok(IngestOutcome::Applied { id } | IngestOutcome::Logged { id }) => {
                tracing::debug!(%path, id, "event applied")
            }
            Ok(IngestOutcome::AlreadyStored { id }) => tracing::debug!(%path, id, "event already stored"),
        }
        outcome.map_err(|e| ingest_error(path, e))
    }

    async fn last_event_id(&self) -> Result<Option<i64>, IngestError> {
        Ok(self.read_last_event_id().await?)
    }

    /// One database transaction for the whole run (see [`Store::ingest_batch`]): the events
    /// before a refused one are committed, the refused one and those after it are not applied.
    async fn ingest_many(
        &self,
        events: Vec<IncomingEvent>,
    ) -> Result<Vec<Result<IngestOutcome, IngestError>>, IngestError> {
        self.batch(events, true).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_writer_cache_follows_the_file_within_its_bounds() {
        assert_eq!(writer_cache_kib(0), 16 * 1024);
        assert_eq!(writer_cache_kib(100 << 20), 25 * 1024);
        assert_eq!(writer_cache_kib(1 << 30), 256 * 1024, "at 1 GiB the cache is at its maximum");
        assert_eq!(writer_cache_kib(11 << 30), 256 * 1024);
    }

    #[test]
    fn a_database_url_names_a_sqlite_file_or_a_postgresql_database() {
        let url = |u: &str| Target::of(u).map(|t| t.url());
        assert_eq!(url("sqlite://data/l.db").unwrap(), "sqlite://data/l.db");
        assert_eq!(url("sqlite:///var/l.db?mode=rwc").unwrap(), "sqlite:///var/l.db");
        assert_eq!(url("sqlite:l.db").unwrap(), "sqlite://l.db");
        assert_eq!(url("postgres://u@h/db").unwrap(), "postgres://u@h/db");
        assert_eq!(url("postgresql://u@h/db").unwrap(), "postgresql://u@h/db");
        for bad in ["sqlite::memory:", "sqlite://:memory:", "sqlite://", "mysql://h/db", "ledger.db"] {
            let e = url(bad).expect_err(bad).to_string();
            assert!(e.contains(bad), "{bad}: {e}");
        }
    }

    /// A store opened, closed and opened again: the second open finds every migration applied
    /// (the runner's bookkeeping read back) and the close left no WAL to replay.
    #[tokio::test]
    async fn a_sqlite_store_reopens_migrated_and_closes_checkpointed() {
        let dir = tempfile::tempdir().unwrap();
        let store = file_store(&dir).await;
        store.close().await;
        assert!(!dir.path().join("s.db-wal").exists(), "the WAL is checkpointed and removed at close");
        let store = file_store(&dir).await;
        let applied = sql::select("SELECT COUNT(*) AS n FROM _sqlx_migrations WHERE success = true", vec![])
            .fetch_one(&store)
            .await
            .unwrap()
            .try_get::<i64, _>("n")
            .unwrap();
        assert_eq!(applied as usize, migrator(Engine::Sqlite).iter().count());
        store.close().await;
    }

    /// A new SQLite file store (in `dir`), to take its writer's connection from.
    async fn file_store(dir: &tempfile::TempDir) -> Store {
        let url = format!("sqlite://{}/s.db", dir.path().display());
        Store::open(&url, crate::ledger::Network::Testnet, crate::test_render::marked()).await.unwrap()
    }

    /// A PRAGMA's value on `conn`.
    async fn pragma(conn: &mut Conn, pragma: &str) -> i64 {
        sql::fetch_one(conn, pragma, vec![]).await.unwrap().try_get(0).unwrap()
    }

    /// The live writer's settings as `set_writer_mode` leaves them on a new store's writer.
    #[tokio::test]
    async fn the_live_writer_is_sized_to_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = file_store(&dir).await;
        let mut writer = store.writer.lock().await;
        let conn = store.writer_conn(&mut writer).await.unwrap();
        let cache = pragma(conn, "PRAGMA cache_size").await;
        let checkpoint = pragma(conn, "PRAGMA wal_autocheckpoint").await;
        assert_eq!(cache, -16 * 1024, "a new store's file is small: the minimum");
        assert_eq!(checkpoint, (256 << 20) / i64::from(LIVE_PAGE_SIZE));
    }

    /// Events applied one by one or in batches (`--event-ack logged`) both size the writer's
    /// cache again each `WRITER_RESIZE_EVERY` events; a bulk replay's fixed cache is left alone.
    #[tokio::test]
    async fn the_live_writer_is_sized_again_as_events_are_applied() {
        let dir = tempfile::tempdir().unwrap();
        let store = file_store(&dir).await;
        let mut writer = store.writer.lock().await;
        let conn = store.writer_conn(&mut writer).await.unwrap();
        async fn cache(conn: &mut Conn) -> i64 {
            pragma(conn, "PRAGMA cache_size").await
        }
        conn.batch("PRAGMA cache_size = -1234").await.unwrap();
        store.count_live(conn, WRITER_RESIZE_EVERY - 10).await;
        assert_eq!(cache(conn).await, -1234, "not yet");
        store.count_live(conn, 20).await;
        assert_eq!(cache(conn).await, -16 * 1024, "a batch crossing the mark sizes it");
        conn.batch("PRAGMA cache_size = -1234").await.unwrap();
        store.bulk_writer.store(true, std::sync::atomic::Ordering::Relaxed);
        store.count_live(conn, WRITER_RESIZE_EVERY).await;
        assert_eq!(cache(conn).await, -1234, "a bulk replay's cache is left alone");
    }
}
