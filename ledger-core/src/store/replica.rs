//! A `readonly` process's side of the store: waiting for a writer's schema, the PostgreSQL
//! primary it writes to when it reads a streaming replica, and how far that replica is behind
//! (replay position and chain tip). See `docs/deployment.md`.

use std::time::{Duration, Instant};

use sqlx::any::AnyPoolOptions;
use sqlx::{AnyPool, Row};

use super::lite::LiteReader;
use super::sql::{query, select};
use super::{Engine, Store, StoreError};

/// How long a `readonly` process waits for a writer to create or migrate the schema.
const SCHEMA_WAIT: Duration = Duration::from_secs(120);
/// How often a wait (schema, replay) looks again.
const POLL: Duration = Duration::from_millis(10);

/// The primary a `readonly` process on a replica writes to.
pub(super) struct Primary {
    pub(super) pool: AnyPool,
    pub(super) url: String,
}

impl Primary {
    pub(super) async fn connect(engine: Engine, url: &str) -> Result<Primary, StoreError> {
        if engine != Engine::Postgres {
            return Err(StoreError::Schema(
                "a primary applies to a PostgreSQL replica only (a SQLite file has no replicas)".into(),
            ));
        }
        // Few writes (faucet requests, accepted broadcasts) and the replay position.
        let pool = AnyPoolOptions::new().max_connections(4).connect(url).await?;
        Ok(Primary { pool, url: url.to_owned() })
    }
}

/// The read connections of the SQLite file a writer process makes at `path`: a `readonly`
/// process started first waits for it (up to the schema wait), and never creates it.
pub(super) async fn open_written(path: &str) -> Result<LiteReader, StoreError> {
    let started = Instant::now();
    while !std::path::Path::new(path).exists() {
        if started.elapsed() >= SCHEMA_WAIT {
            return Err(StoreError::Schema(format!(
                "no SQLite database at {path}: a readonly process never creates one; start a writer \
                 (`serve` in the default or writeonly mode) on it first"
            )));
        }
        tokio::time::sleep(POLL * 50).await;
    }
    Ok(LiteReader::open(path, false)?)
}

impl Store {
    /// Waits until a writer has migrated the database to `migrator`'s newest version (a
    /// `readonly` process never migrates). A database with a newer schema is refused at once.
    pub(super) async fn wait_for_schema(&self, migrator: &sqlx::migrate::Migrator) -> Result<(), StoreError> {
        let wanted = migrator.iter().map(|m| m.version).max().unwrap_or(0);
        let started = Instant::now();
        let mut logged = false;
        loop {
            let found: Option<i64> = select(
                "SELECT CAST(MAX(version) AS BIGINT) AS v FROM _sqlx_migrations WHERE success = true",
                vec![],
            )
            .fetch_one(self)
            .await
            .ok()
            .and_then(|row| row.try_get::<Option<i64>, _>("v").ok().flatten());
            match found {
                Some(v) if v == wanted => return Ok(()),
                Some(v) if v > wanted => {
                    return Err(StoreError::Schema(format!(
                        "the database's schema is at migration {v}, newer than this binary's {wanted}: upgrade this process"
                    )))
                }
                _ if started.elapsed() >= SCHEMA_WAIT => {
                    let at = found.map_or("none".to_owned(), |v| v.to_string());
                    return Err(StoreError::Schema(format!(
                        "the database's schema is at migration {at} and this binary needs {wanted}: a readonly \
                         process never migrates; start a writer (`serve` in the default or writeonly mode) on \
                         the primary first"
                    )));
                }
                _ => {
                    if !logged {
                        tracing::info!(
                            "readonly: waiting for a writer to migrate the database to migration {wanted} \
                             (found {found:?})"
                        );
                        logged = true;
                    }
                    tokio::time::sleep(POLL * 50).await;
                }
            }
        }
    }
}

/// How far a replica is behind its primary.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ReplicaLag {
    /// The canonical tip's height on the primary and on the replica (`None`: no block yet).
    pub primary_tip_height: Option<i64>,
    pub replica_tip_height: Option<i64>,
    /// WAL bytes the primary has written that the replica has not replayed.
    pub replay_lag_bytes: u64,
}

impl ReplicaLag {
    /// Blocks the replica's tip is behind the primary's.
    pub fn blocks_behind(&self) -> u64 {
        let p = self.primary_tip_height.unwrap_or(0);
        let r = self.replica_tip_height.unwrap_or(0);
        u64::try_from(p - r).unwrap_or(0)
    }
}

/// A PostgreSQL LSN (`16/B374D848`) as a byte position.
fn parse_lsn(text: &str) -> Option<u64> {
    let (hi, lo) = text.split_once('/')?;
    Some((u64::from_str_radix(hi, 16).ok()? << 32) | u64::from_str_radix(lo, 16).ok()?)
}

async fn lsn(pool: &AnyPool, function: &str) -> Result<Option<u64>, StoreError> {
    let row = query(&format!("SELECT CAST({function}() AS TEXT) AS lsn"), vec![]).fetch_one(pool).await?;
    Ok(row.try_get::<Option<String>, _>("lsn")?.as_deref().and_then(parse_lsn))
}

async fn tip_height(pool: &AnyPool) -> Result<Option<i64>, StoreError> {
    let row =
        query("SELECT CAST(MAX(block_height) AS BIGINT) AS h FROM blocks WHERE canonical = true", vec![])
            .fetch_one(pool)
            .await?;
    Ok(row.try_get("h")?)
}

impl Store {
    /// How far this `readonly` store's replica is behind its primary; `None` without a primary.
    pub async fn replica_lag(&self) -> Result<Option<ReplicaLag>, StoreError> {
        let Some(primary) = &self.primary else { return Ok(None) };
        // The replica's position first: a primary read after it can only be further ahead.
        let replayed = lsn(self.pg()?, "pg_last_wal_replay_lsn").await?;
        let replica_tip_height = tip_height(self.pg()?).await?;
        let written = lsn(&primary.pool, "pg_current_wal_lsn").await?;
        let primary_tip_height = tip_height(&primary.pool).await?;
        let replay_lag_bytes = match (written, replayed) {
            (Some(w), Some(r)) => w.saturating_sub(r),
            // Not a standby (no replay position): it is the primary's own data.
            _ => 0,
        };
        Ok(Some(ReplicaLag { primary_tip_height, replica_tip_height, replay_lag_bytes }))
    }

    /// Waits until this `readonly` store's replica has replayed everything its primary had
    /// written when this was called (at once without a primary). Returns `false` when
    /// `timeout` passed first.
    pub async fn wait_for_replay(&self, timeout: Duration) -> Result<bool, StoreError> {
        let Some(primary) = &self.primary else { return Ok(true) };
        let Some(target) = lsn(&primary.pool, "pg_current_wal_lsn").await? else { return Ok(true) };
        let started = Instant::now();
        loop {
            match lsn(self.pg()?, "pg_last_wal_replay_lsn").await? {
                None => return Ok(true),
                Some(replayed) if replayed >= target => return Ok(true),
                Some(_) if started.elapsed() >= timeout => return Ok(false),
                Some(_) => tokio::time::sleep(POLL).await,
            }
        }
    }

    /// The URL live updates LISTEN on: the primary's when there is one (a replica cannot
    /// LISTEN), else this store's.
    pub(super) fn listen_url(&self) -> &str {
        self.primary.as_ref().map_or(&self.url, |p| &p.url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsns_are_byte_positions() {
        assert_eq!(parse_lsn("0/0"), Some(0));
        assert_eq!(parse_lsn("16/B374D848"), Some((0x16 << 32) | 0xB374_D848));
        assert_eq!(parse_lsn("garbage"), None);
        assert_eq!(parse_lsn("1/xyz"), None);
    }

    #[test]
    fn blocks_behind_never_goes_negative() {
        let lag = |p, r| ReplicaLag { primary_tip_height: p, replica_tip_height: r, replay_lag_bytes: 0 };
        assert_eq!(lag(Some(10), Some(7)).blocks_behind(), 3);
        assert_eq!(lag(Some(10), None).blocks_behind(), 10);
        assert_eq!(lag(Some(7), Some(10)).blocks_behind(), 0);
    }
}
