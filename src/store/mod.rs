//! The ledger store: the only module that knows SQL. SQLite (embedded default) and PostgreSQL
//! through one `sqlx::Any` query path; see `docs/store.md` for the schema and reorg handling.
//!
//! Ingestion parses an event, derives its rows (`crate::ledger`, pure) and writes the raw event
//! and its effects in **one** database transaction, one writer at a time.

mod digest;
mod explorer;
mod read;
mod rows;
mod sql;
mod write;

use std::path::Path;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, ConnectOptions, Executor};
use thiserror::Error;
use tokio::sync::Mutex;

use crate::events::{EventPath, EventPayload, RawEvent};
use crate::ingest::{EventSink, IncomingEvent, IngestError, IngestOutcome, RawEventLog};
use crate::ledger::{LedgerError, Network};

pub use read::{BlockInfo, NonceUsage, Supply, TxInfo};

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

pub struct Store {
    pool: AnyPool,
    engine: Engine,
    network: Network,
    /// One writer at a time: concurrent POSTs must not interleave their transactions.
    writer: Mutex<()>,
}

impl Store {
    /// Opens (creating if needed) and migrates the database at `url`: `sqlite://PATH` (file and
    /// parent directory created, WAL) or `postgres://...`.
    pub async fn open(url: &str, network: Network) -> Result<Store, StoreError> {
        sqlx::any::install_default_drivers();
        let (engine, url) =
            if let Some(path) = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")) {
                let path = path.split('?').next().unwrap_or(path);
                if path != ":memory:" {
                    if let Some(dir) = Path::new(path).parent().filter(|d| !d.as_os_str().is_empty()) {
                        std::fs::create_dir_all(dir)
                            .map_err(|source| StoreError::Dir { path: dir.display().to_string(), source })?;
                    }
                }
                (Engine::Sqlite, format!("sqlite://{path}?mode=rwc"))
            } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
                (Engine::Postgres, url.to_owned())
            } else {
                return Err(StoreError::Url(url.to_owned()));
            };
        let options = AnyConnectOptions::from_str(&url)?.disable_statement_logging();
        let pool = AnyPoolOptions::new()
            // No ping before every checkout: the writer checks out once per event.
            .test_before_acquire(false)
            .max_connections(if engine == Engine::Sqlite { 4 } else { 8 })
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if engine == Engine::Sqlite {
                        // WAL lets readers run beside the single writer; NORMAL sync is safe
                        // with WAL (a crash loses at most the last commits, never integrity).
                        conn.execute("PRAGMA journal_mode = WAL").await?;
                        conn.execute("PRAGMA synchronous = NORMAL").await?;
                        conn.execute("PRAGMA busy_timeout = 10000").await?;
                        conn.execute("PRAGMA cache_size = -65536").await?;
                        conn.execute("PRAGMA temp_store = MEMORY").await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await?;
        match engine {
            Engine::Sqlite => SQLITE_MIGRATIONS.run(&pool).await?,
            Engine::Postgres => POSTGRES_MIGRATIONS.run(&pool).await?,
        }
        Ok(Store { pool, engine, network, writer: Mutex::new(()) })
    }

    pub fn engine(&self) -> Engine {
        self.engine
    }

    pub fn network(&self) -> Network {
        self.network
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }

    async fn ingest_inner(&self, ev: IncomingEvent) -> Result<IngestOutcome, ApplyError> {
        // Parse before touching the database: a malformed body changes nothing.
        let payload = EventPayload::parse(ev.path, &ev.payload)
            .map_err(|e| ApplyError::Invalid(e.source.to_string()))?;
        let _writer = self.writer.lock().await;
        let mut tx = self.pool.begin().await?;
        let id = match ev.id {
            Some(id) => {
                if write::raw_event_exists(&mut tx, id).await? {
                    return Ok(IngestOutcome::AlreadyStored { id });
                }
                id
            }
            None => write::next_raw_event_id(&mut tx).await?,
        };
        let (timestamp, unix) = match ev.receive_timestamp {
            Some(ts) => {
                let unix = parse_pg_timestamp(&ts).unwrap_or_else(now_unix);
                (ts, unix)
            }
            None => {
                let unix = now_unix();
                (format_pg_timestamp(unix), unix)
            }
        };
        write::insert_raw_event(&mut tx, id, &timestamp, ev.path.as_str(), &ev.payload).await?;
        let ctx = write::Ctx { network: self.network, raw_event_id: id, receipt_time: unix };
        write::apply(&mut tx, &ctx, &payload).await?;
        tx.commit().await?;
        Ok(IngestOutcome::Applied { id })
    }
}

impl RawEventLog for Store {
    async fn raw_events_after(
        &self,
        after_id: Option<i64>,
        limit: usize,
    ) -> Result<Vec<RawEvent>, IngestError> {
        Ok(read::raw_events_after(&self.pool, after_id, limit).await?)
    }

    /// Raw events are the source of everything else: no raw event means no ledger data.
    async fn is_empty(&self) -> Result<bool, IngestError> {
        Ok(read::last_event_id(&self.pool).await?.is_none())
    }

    async fn wipe(&self) -> Result<(), IngestError> {
        let _writer = self.writer.lock().await;
        Ok(write::wipe(&self.pool).await?)
    }
}

impl EventSink for Store {
    async fn ingest(&self, event: IncomingEvent) -> Result<IngestOutcome, IngestError> {
        let path = event.path;
        let outcome = self.ingest_inner(event).await;
        match &outcome {
            Err(e) => tracing::warn!(%path, error = %e, "event not applied"),
            Ok(IngestOutcome::Applied { id }) => tracing::debug!(%path, id, "event applied"),
            Ok(IngestOutcome::AlreadyStored { id }) => tracing::debug!(%path, id, "event already stored"),
        }
        outcome.map_err(|e| ingest_error(path, e))
    }

    async fn last_event_id(&self) -> Result<Option<i64>, IngestError> {
        Ok(read::last_event_id(&self.pool).await?)
    }
}

fn now_unix() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// `YYYY-MM-DD HH:MM:SS+00`, the way PostgreSQL prints a UTC `timestamptz`.
pub fn format_pg_timestamp(unix: i64) -> String {
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400);
    // Civil-from-days (H. Hinnant).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}+00", secs / 3600, secs % 3600 / 60, secs % 60)
}

/// Unix seconds of a `YYYY-MM-DD HH:MM:SS[.ffffff]+00` text (UTC only; other offsets applied).
pub fn parse_pg_timestamp(s: &str) -> Option<i64> {
    let (date, rest) = s.split_once(' ')?;
    let mut d = date.split('-').map(|x| x.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let time_end = rest.find(['+', '-']).unwrap_or(rest.len());
    let (time, offset) = rest.split_at(time_end);
    let mut t = time.split(':');
    let (hh, mm) = (t.next()?.parse::<i64>().ok()?, t.next()?.parse::<i64>().ok()?);
    let ss = t.next()?.split('.').next()?.parse::<i64>().ok()?;
    let off = if offset.is_empty() {
        0
    } else {
        let sign = if offset.starts_with('-') { -1 } else { 1 };
        let mut o = offset[1..].split(':');
        let oh = o.next()?.parse::<i64>().ok()?;
        let om = o.next().map(|x| x.parse::<i64>().ok()).unwrap_or(Some(0))?;
        sign * (oh * 3600 + om * 60)
    };
    // Days-from-civil.
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss - off)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pg_timestamps_round_trip() {
        for t in [0, 1_610_645_304, 1_795_319_244, 951_782_400] {
            assert_eq!(parse_pg_timestamp(&format_pg_timestamp(t)), Some(t));
        }
        assert_eq!(format_pg_timestamp(1_610_645_304), "2021-01-14 17:28:24+00");
        assert_eq!(parse_pg_timestamp("2021-01-14 17:28:24.123456+00"), Some(1_610_645_304));
        assert_eq!(parse_pg_timestamp("2021-01-14 19:28:24+02"), Some(1_610_645_304));
    }
}
