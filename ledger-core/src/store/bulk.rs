//! Bulk replay (`import-events` into an empty store): the secondary indexes that only reads
//! use are dropped before the replay and each built once at its end.
//!
//! Every transaction adds ~25 index entries, most at random keys (txids, addresses), and
//! inserting them one by one into B-trees that outgrow the page cache was most of a long
//! replay's time. A `CREATE INDEX` over the finished table sorts the keys once instead.
//! Only indexes the write path never reads are deferred (checked with PostgreSQL's
//! `pg_stat_user_indexes` after a replay: none of them is scanned): the lookups, the
//! canonical flips by block and the reorg recomputations keep theirs.
//!
//! On SQLite the writer's page cache grows to `BULK_WRITER_CACHE_KIB` for the replay (a fixed
//! size, restored after the build): the random-key B-trees that remain (txids) then stay in
//! memory, and a batch's dirty pages are not spilled to the WAL before its commit. The writer
//! also leaves the WAL checkpoints (and their fsyncs) to the background checkpointer
//! (`BULK_WRITER_AUTOCHECKPOINT_BYTES`).
//!
//! The definitions of the dropped indexes are kept in `deferred_indexes`, in the same
//! transaction as the drops, so an interrupted replay loses none: the next replay builds them
//! at its end, and so does [`Store::open`] (any use of the store but a replay).

use sqlx::migrate::Migrator;

use super::conn::Conn;
use super::db_row::DbRow;
use super::sql;
use super::sql::exec;
use super::{Engine, Store, StoreError};

/// How many indexes a bulk replay has dropped and not built yet.
const COUNT_DEFERRED: &str = "SELECT COUNT(*) AS n FROM deferred_indexes";

/// The deferred indexes: read-side only (explorer, Rosetta and v2 queries), never unique.
const READ_ONLY_INDEXES: &[&str] = &[
    "txs_canonical_order",
    "txs_sender_nonce",
    "txs_sponsor_nonce",
    "txs_contract",
    "txs_recipient",
    "txs_sender_height",
    "txs_sponsor_height",
    "events_contract_log",
    "events_sender",
    "events_recipient",
    "operations_account",
    "operations_tx",
    "account_txs_page",
    "account_txs_listed_seq",
    "account_txs_listed_rid",
    "account_block_txs_cum",
    "mempool_pending",
    "mempool_sender",
    "mempool_sponsor",
    "mempool_recipient",
    "ft_balances_account",
    "ft_balances_holders",
    "nft_custody_owner",
    "nft_custody_owner_order",
    "raw_events_path",
    "miner_rewards_recipient",
    "pox_events_stacker",
    "pox_events_delegate",
    "pox_events_name",
    "pox_events_contract_order",
    "pox_events_tx",
    "burnchain_rewards_recipient",
    "reward_slot_holders_address",
    "burn_block_pox_txs_recipient",
];

/// The sort memory of one PostgreSQL index build (the server default, 64 MB, spills the
/// bigger ones to disk).
const PG_BUILD_MEMORY: &str = "256MB";

/// An index as the catalog defines it: its table, name and `CREATE INDEX` statement.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct IndexDefinition {
    pub table: String,
    pub name: String,
    pub definition: String,
}

/// The definition of index `name` in the catalog, if it exists.
async fn catalog_definition(
    conn: &mut Conn,
    engine: Engine,
    name: &str,
) -> Result<Option<String>, sqlx::Error> {
    let sql = match engine {
        Engine::Sqlite => "SELECT sql AS def FROM sqlite_master WHERE type = 'index' AND name = $1",
        Engine::Postgres => {
            "SELECT indexdef AS def FROM pg_indexes WHERE schemaname = current_schema() AND indexname = $1"
        }
    };
    let row = sql::fetch_optional(conn, sql, vec![name.into()]).await?;
    row.map(|r| r.try_get::<Option<String>, _>("def")).transpose().map(Option::flatten)
}

/// `CREATE INDEX name ...` as `CREATE INDEX IF NOT EXISTS name ...`: a build that was
/// interrupted after creating an index, before forgetting it, runs again harmlessly.
fn if_not_exists(definition: &str) -> Option<String> {
    definition.strip_prefix("CREATE INDEX ").map(|rest| format!("CREATE INDEX IF NOT EXISTS {rest}"))
}

impl Store {
    /// Drops the read-only secondary indexes for a bulk replay, keeping their definitions to
    /// build them later ([`Store::build_deferred_indexes`]). Returns how many it dropped (0 when
    /// they are deferred already). Reads still answer meanwhile, only slower.
    pub async fn defer_read_indexes(&self) -> Result<usize, StoreError> {
        let mut writer = self.writer.lock().await;
        let conn = self.writer_conn(&mut writer).await?;
        let mut tx = conn.begin().await?;
        let mut dropped = 0;
        for name in READ_ONLY_INDEXES {
            let Some(definition) = catalog_definition(&mut tx, self.engine(), name).await? else {
                continue;
            };
            if if_not_exists(&definition).is_none() {
                return Err(StoreError::Corrupt(format!(
                    "index {name} is not a plain index, it cannot be deferred: {definition}"
                )));
            }
            exec(
                &mut tx,
                "INSERT INTO deferred_indexes (name, definition) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
                vec![(*name).into(), definition.into()],
            )
            .await?;
            exec(&mut tx, &format!("DROP INDEX {name}"), vec![]).await?;
            dropped += 1;
        }
        tx.commit().await?;
        if self.engine() == Engine::Sqlite {
            super::set_writer_mode(conn, true).await?;
            self.bulk_writer.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        if dropped > 0 {
            tracing::info!("{dropped} read-only indexes dropped for the replay; they are built at its end");
        }
        Ok(dropped)
    }

    /// Every index of the store (secondary and primary-key ones), as the catalog defines it,
    /// sorted by name: the same for every store at this schema, whether or not a replay
    /// deferred some.
    pub async fn index_definitions(&self) -> Result<Vec<IndexDefinition>, StoreError> {
        let rows = sql::select(index_definitions_sql(self.engine()), vec![]).fetch_all(self).await?;
        Ok(index_definitions(&rows)?)
    }

    /// How many indexes a bulk replay has dropped and not built yet.
    pub async fn deferred_index_count(&self) -> Result<usize, StoreError> {
        let row = sql::select(COUNT_DEFERRED, vec![]).fetch_one(self).await?;
        Ok(row.try_get::<i64, _>("n")? as usize)
    }

    /// Builds every index a bulk replay deferred, one at a time, each forgotten in the
    /// transaction that creates it. Returns how many it built.
    pub async fn build_deferred_indexes(&self) -> Result<usize, StoreError> {
        let mut writer = self.writer.lock().await;
        let conn = self.writer_conn(&mut writer).await?;
        if self.engine() == Engine::Sqlite {
            // Each index is one large commit: checkpointed right after it, so the WAL the next
            // build's table scan looks pages up in stays short (the replay's cache stays).
            super::set_autocheckpoint(conn, super::WRITER_AUTOCHECKPOINT_BYTES).await?;
        }
        let built = build_deferred(conn, self.engine()).await;
        if self.engine() == Engine::Sqlite {
            super::set_writer_mode(conn, false).await?;
            self.bulk_writer.store(false, std::sync::atomic::Ordering::Relaxed);
        }
        built
    }
}

/// [`Store::build_deferred_indexes`] on `conn` (also used by `Store::open`, before the store
/// has a writer).
pub(super) async fn build_deferred(conn: &mut Conn, engine: Engine) -> Result<usize, StoreError> {
    let rows =
        sql::fetch_all(conn, "SELECT name, definition FROM deferred_indexes ORDER BY name", vec![]).await?;
    if rows.is_empty() {
        return Ok(0);
    }
    let total = rows.len();
    let started = std::time::Instant::now();
    tracing::info!("building {total} deferred indexes");
    match engine {
        // The sort runs in temporary files rather than in memory (the connection's default),
        // so memory stays at the page cache's size however big the index; a helper thread
        // sorts beside the main one.
        Engine::Sqlite => {
            conn.batch("PRAGMA temp_store = FILE").await?;
            conn.batch("PRAGMA threads = 2").await?;
        }
        Engine::Postgres => {
            conn.batch(&format!("SET maintenance_work_mem = '{PG_BUILD_MEMORY}'")).await?;
        }
    }
    let built = build_each(conn, &rows, total).await;
    match engine {
        Engine::Sqlite => {
            conn.batch("PRAGMA temp_store = MEMORY").await?;
            conn.batch("PRAGMA threads = 0").await?;
        }
        Engine::Postgres => {
            conn.batch("RESET maintenance_work_mem").await?;
        }
    }
    built?;
    tracing::info!("{total} deferred indexes built in {:.1} s", started.elapsed().as_secs_f64());
    Ok(total)
}

async fn build_each(conn: &mut Conn, rows: &[DbRow], total: usize) -> Result<(), StoreError> {
    for (i, row) in rows.iter().enumerate() {
        let name: String = row.try_get("name")?;
        let definition: String = row.try_get("definition")?;
        let create = if_not_exists(&definition).ok_or_else(|| {
            StoreError::Corrupt(format!("deferred index {name} has no CREATE INDEX definition: {definition}"))
        })?;
        let started = std::time::Instant::now();
        let mut tx = conn.begin().await?;
        exec(&mut tx, &create, vec![]).await?;
        exec(&mut tx, "DELETE FROM deferred_indexes WHERE name = $1", vec![name.clone().into()]).await?;
        tx.commit().await?;
        tracing::info!("index {name} built ({}/{total}, {:.1} s)", i + 1, started.elapsed().as_secs_f64());
    }
    Ok(())
}

/// How many indexes are deferred, read before the migrations run: 0 when the table does not
/// exist yet (a new or older store).
pub(super) async fn deferred_before_migrations(conn: &mut Conn) -> usize {
    let row = sql::fetch_one(conn, COUNT_DEFERRED, vec![]).await;
    row.and_then(|r| r.try_get::<i64, _>("n")).map_or(0, |n| n as usize)
}

/// Whether `migrator` has migrations the store has not applied.
pub(super) async fn migrations_pending(conn: &mut Conn, migrator: &Migrator) -> bool {
    let applied =
        sql::fetch_one(conn, "SELECT MAX(version) AS v FROM _sqlx_migrations WHERE success = true", vec![])
            .await
            .ok()
            .and_then(|r| r.try_get::<Option<i64>, _>("v").ok().flatten());
    let latest = migrator.iter().map(|m| m.version).max();
    latest > applied
}

/// The catalog query behind [`Store::index_definitions`].
fn index_definitions_sql(engine: Engine) -> &'static str {
    match engine {
        Engine::Sqlite => {
            "SELECT tbl_name AS t, name AS n, sql AS d FROM sqlite_master \
             WHERE type = 'index' AND sql IS NOT NULL ORDER BY name"
        }
        Engine::Postgres => {
            "SELECT CAST(tablename AS TEXT) AS t, CAST(indexname AS TEXT) AS n, indexdef AS d FROM pg_indexes \
             WHERE schemaname = current_schema() ORDER BY indexname"
        }
    }
}

fn index_definitions(rows: &[DbRow]) -> Result<Vec<IndexDefinition>, sqlx::Error> {
    rows.iter()
        .map(|r| {
            Ok(IndexDefinition { table: r.try_get("t")?, name: r.try_get("n")?, definition: r.try_get("d")? })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_indexes_are_rebuilt_if_missing() {
        assert_eq!(
            if_not_exists("CREATE INDEX txs_contract ON txs (contract_id)").as_deref(),
            Some("CREATE INDEX IF NOT EXISTS txs_contract ON txs (contract_id)")
        );
        assert_eq!(if_not_exists("CREATE UNIQUE INDEX u ON t (a)"), None);
    }

    #[test]
    fn deferred_names_are_distinct() {
        let mut names = READ_ONLY_INDEXES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), READ_ONLY_INDEXES.len());
    }
}
