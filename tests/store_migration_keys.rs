//! Migration 0030 re-keys `events`, `account_txs` and `stx_balances` (primary keys that new rows
//! append to); 0031 re-keys `smart_contracts` (a row per deploy, with `success` and the ABI in
//! jsonb order, backfilled when the store opens), lists sponsored transactions among their
//! sponsors' and gives streamed microblocks their receipt time (backfilled from raw events);
//! 0041 gives `account_txs` its transaction's microblock sequence (`seq`, backfilled by the
//! migration); 0042 keeps each block's transaction ids (`blocks.tx_ids`, backfilled by the
//! migration from the `txs` rows, the same text the write path stores); 0043 copies each
//! block's fields onto its transactions' rows; 0044 stores each mined row's whole list JSON
//! (`txs.api_json`, after 0032's backfill of its parts: both backfilled when the store opens).
//! A store holding a ledger at the schema before them must come out of the migrations with
//! exactly the ledger, the indexes and the primary keys of a store created at the new schema: a
//! forking devnet chain is ingested into a new store, its rows copied into a store migrated only
//! up to 0029 (sponsor links unlisted and no token operations, as older stores hold them), and
//! that store opened (which migrates it, 0035's token-operation backfill included). On SQLite
//! and PostgreSQL.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{
    check_invariants, devnet_config, devnet_events, digest_diff, ingest_all, Db, TestDb, TestStore,
};
use sqlx::migrate::Migrator;
use sqlx::{Connection, PgConnection, Row};
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;

/// The first migration this test is about.
const REKEY: u32 = 30;

/// The engine's migrations before [`REKEY`], copied out of the source tree (same text, so
/// the same checksums as the ones the store embeds).
async fn migrations_before_rekey(engine: Db, dir: &Path) -> Migrator {
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("ledger-core/src/store/migrations").join(match engine {
            Db::Sqlite => "sqlite",
            Db::Postgres => "postgres",
        });
    let mut copied = 0;
    let mut rekey_found = false;
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let version: u32 = name.split('_').next().unwrap().parse().unwrap();
        rekey_found |= version == REKEY;
        if version < REKEY {
            std::fs::copy(&path, dir.join(&name)).unwrap();
            copied += 1;
        }
    }
    assert!(rekey_found && copied > 10, "{engine:?}: {copied} migrations before {REKEY}");
    Migrator::new(dir).await.unwrap()
}

/// A connection of the test's own to a store's database: rusqlite on SQLite, sqlx on
/// PostgreSQL, as the store has them. Every value read comes back as text.
enum Raw {
    Lite(rusqlite::Connection),
    Pg(PgConnection),
}

impl Raw {
    async fn open(url: &str) -> Raw {
        match url.strip_prefix("sqlite://") {
            Some(path) => {
                std::fs::create_dir_all(Path::new(path).parent().unwrap()).unwrap();
                Raw::Lite(rusqlite::Connection::open(path).unwrap())
            }
            None => Raw::Pg(PgConnection::connect(url).await.unwrap()),
        }
    }

    /// The rows of `sql` with `binds` (`$N`), each column as text (NULL: `None`).
    async fn texts(&mut self, sql: &str, binds: &[&str]) -> Vec<Vec<Option<String>>> {
        match self {
            Raw::Lite(c) => {
                let mut stmt = c.prepare(sql).unwrap();
                let n = stmt.column_count();
                let rows = stmt
                    .query_map(rusqlite::params_from_iter(binds), |r| {
                        (0..n)
                            .map(|i| {
                                Ok(match r.get::<_, rusqlite::types::Value>(i)? {
                                    rusqlite::types::Value::Null => None,
                                    rusqlite::types::Value::Integer(v) => Some(v.to_string()),
                                    rusqlite::types::Value::Real(v) => Some(v.to_string()),
                                    rusqlite::types::Value::Text(v) => Some(v),
                                    rusqlite::types::Value::Blob(v) => Some(hex::encode(v)),
                                })
                            })
                            .collect()
                    })
                    .unwrap();
                rows.map(Result::unwrap).collect()
            }
            Raw::Pg(c) => {
                let mut q = sqlx::query(sql);
                for b in binds {
                    q = q.bind(*b);
                }
                let rows = q.fetch_all(&mut *c).await.unwrap();
                rows.iter().map(|r| (0..r.len()).map(|i| r.get::<Option<String>, _>(i)).collect()).collect()
            }
        }
    }

    /// The one text value of `sql`'s first row.
    async fn text(&mut self, sql: &str) -> Option<String> {
        self.texts(sql, &[]).await.into_iter().next().and_then(|r| r.into_iter().next().flatten())
    }

    /// Runs `sql` with `binds` (`$N`); the rows it changed.
    async fn execute(&mut self, sql: &str, binds: &[&str]) -> u64 {
        match self {
            Raw::Lite(c) => c.execute(sql, rusqlite::params_from_iter(binds)).unwrap() as u64,
            Raw::Pg(c) => {
                let mut q = sqlx::query(sql);
                for b in binds {
                    q = q.bind(*b);
                }
                q.execute(&mut *c).await.unwrap().rows_affected()
            }
        }
    }

    /// Applies `migrator`'s migrations. On SQLite with the bookkeeping sqlx's SQLite driver
    /// keeps (its `_sqlx_migrations` table, a row per migration with its SHA-384 checksum),
    /// which the store's own migration runner reads and continues.
    async fn migrate(&mut self, migrator: &Migrator) {
        match self {
            Raw::Lite(c) => {
                c.execute_batch(
                    "CREATE TABLE _sqlx_migrations (version BIGINT PRIMARY KEY, description TEXT NOT NULL, \
                     installed_on TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, success BOOLEAN NOT NULL, \
                     checksum BLOB NOT NULL, execution_time BIGINT NOT NULL)",
                )
                .unwrap();
                for m in migrator.iter() {
                    let tx = c.transaction().unwrap();
                    tx.execute_batch(&m.sql).unwrap();
                    tx.execute(
                        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
                         VALUES (?1, ?2, TRUE, ?3, 1)",
                        rusqlite::params![m.version, &*m.description, &*m.checksum],
                    )
                    .unwrap();
                    tx.commit().unwrap();
                }
            }
            Raw::Pg(c) => migrator.run_direct(c).await.unwrap(),
        }
    }

    async fn close(self) {
        if let Raw::Pg(c) = self {
            c.close().await.unwrap();
        }
    }
}

/// The ledger tables (everything but the migrator's own).
async fn tables(raw: &mut Raw, engine: Db) -> Vec<String> {
    let sql = match engine {
        Db::Sqlite => {
            "SELECT name AS t FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
             AND name <> '_sqlx_migrations' ORDER BY name"
        }
        Db::Postgres => {
            "SELECT CAST(tablename AS TEXT) AS t FROM pg_tables WHERE schemaname = current_schema() \
             AND tablename <> '_sqlx_migrations' ORDER BY tablename"
        }
    };
    raw.texts(sql, &[]).await.into_iter().map(|r| r[0].clone().unwrap()).collect()
}

/// Per table, its primary-key columns in key order.
async fn primary_keys(raw: &mut Raw, engine: Db) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for t in tables(raw, engine).await {
        let sql = match engine {
            Db::Sqlite => format!("SELECT name AS c, pk AS k FROM pragma_table_info('{t}') WHERE pk > 0"),
            Db::Postgres => format!(
                "SELECT CAST(k.column_name AS TEXT) AS c, CAST(k.ordinal_position AS TEXT) AS k \
                 FROM information_schema.table_constraints c JOIN information_schema.key_column_usage k \
                 ON k.constraint_name = c.constraint_name AND k.table_name = c.table_name \
                 AND k.table_schema = c.table_schema \
                 WHERE c.constraint_type = 'PRIMARY KEY' AND c.table_name = '{t}' \
                 AND c.table_schema = current_schema()"
            ),
        };
        let mut cols: Vec<(i64, String)> = raw
            .texts(&sql, &[])
            .await
            .into_iter()
            .map(|r| (r[1].as_deref().unwrap().parse().unwrap(), r[0].clone().unwrap()))
            .collect();
        cols.sort();
        out.insert(t, cols.into_iter().map(|(_, c)| c).collect());
    }
    out
}

/// The rows a store written before migrations 0031 and 0035 holds: no contract row of a failed
/// deploy (0031's backfill derives them again from the raw `/new_block` events) and no token
/// operation (0035's backfill derives them from the stored FT/NFT events).
fn old_rows(table: &str) -> &'static str {
    match table {
        "smart_contracts" => " WHERE success = true",
        "operations" => " WHERE asset_identifier IS NULL",
        _ => "",
    }
}

/// Copies every ledger row of `from` that a store at the old schema holds into `to` (whose
/// tables it empties first).
async fn copy_rows(engine: Db, from: &TestDb, to: &mut Raw) {
    let tables = tables(to, engine).await;
    match engine {
        Db::Sqlite => {
            let path = from.sqlite_path().unwrap();
            to.execute(&format!("ATTACH DATABASE '{}' AS a", path.display()), &[]).await;
            for t in &tables {
                // The old schema's columns only (later migrations add some).
                let cols: Vec<String> = to
                    .texts(&format!("SELECT name FROM pragma_table_info('{t}') ORDER BY cid"), &[])
                    .await
                    .into_iter()
                    .map(|r| r[0].clone().unwrap())
                    .collect();
                let cols = cols.join(", ");
                to.execute(&format!("DELETE FROM main.{t}"), &[]).await;
                let only = old_rows(t);
                to.execute(&format!("INSERT INTO main.{t} ({cols}) SELECT {cols} FROM a.{t}{only}"), &[])
                    .await;
            }
            to.execute("DETACH DATABASE a", &[]).await;
        }
        Db::Postgres => {
            let mut source = Raw::open(&from.url).await;
            for t in &tables {
                let rows = source
                    .text(&format!("SELECT CAST(json_agg(x) AS TEXT) AS j FROM {t} x{}", old_rows(t)))
                    .await;
                to.execute(&format!("DELETE FROM {t}"), &[]).await;
                if let Some(rows) = rows {
                    to.execute(
                        &format!("INSERT INTO {t} SELECT * FROM json_populate_recordset(NULL::{t}, CAST($1 AS JSON))"),
                        &[&rows],
                    )
                    .await;
                }
            }
            source.close().await;
        }
    }
}

async fn rekey_keeps_the_ledger(engine: Db) {
    // With failed deploys, sponsored calls and ABIs in a node's key order (migration 0031).
    let (events, _) = devnet_events(devnet_config(31, 60, 6).with_real_chain_cases());
    let Some(reference) = TestStore::new(engine, "rekey_ref", Network::Testnet).await else { return };
    ingest_all(&reference.store, events.iter().cloned(), &[], "reference").await;
    let digest = reference.store.ledger_digest().await.unwrap();
    // The write path gives each link its transaction's microblock sequence (2147483647 for an
    // anchored one, migration 0041); the chain has microblock transactions.
    let (micro, bad) = reference.store.account_tx_seqs().await.unwrap();
    assert!(micro > 0 && bad == 0, "{engine:?}: {micro} links of microblock transactions, {bad} wrong");
    let indexes = reference.store.index_definitions().await.unwrap();
    let mut ref_raw = Raw::open(&reference.db.url).await;
    let keys = primary_keys(&mut ref_raw, engine).await;
    ref_raw.close().await;
    assert_eq!(keys["events"], ["index_block_hash", "tx_id", "microblock_hash", "event_index"], "{engine:?}");
    assert_eq!(keys["account_txs"], ["principal", "block_height", "index_block_hash", "tx_id"], "{engine:?}");
    assert_eq!(keys["stx_balances"], ["account", "block_height", "index_block_hash"], "{engine:?}");
    assert_eq!(keys["smart_contracts"], ["contract_id", "index_block_hash", "tx_id"], "{engine:?}");

    // A store at the schema before the re-keying, holding the same rows.
    let old = TestDb::new(engine, "rekey_old").await.unwrap();
    let mut old_raw = Raw::open(&old.url).await;
    let dir = tempfile::tempdir().unwrap();
    old_raw.migrate(&migrations_before_rekey(engine, dir.path()).await).await;
    let old_keys = primary_keys(&mut old_raw, engine).await;
    assert_eq!(
        old_keys["events"],
        ["tx_id", "index_block_hash", "microblock_hash", "event_index"],
        "{engine:?}"
    );
    copy_rows(engine, &reference.db, &mut old_raw).await;
    // As stores written before migration 0031 hold them: a sponsor's links to the transactions
    // it sponsored not listed, and its list counts without them (0031 lists and counts them).
    let sponsored = "SELECT sponsor_address FROM txs WHERE sponsored = true";
    let unlisted = old_raw
        .execute(
            &format!(
                "UPDATE account_txs SET listed = false WHERE principal IN ({sponsored}) AND EXISTS \
                 (SELECT 1 FROM txs t WHERE t.tx_id = account_txs.tx_id AND t.sponsored = true \
                 AND t.sponsor_address = account_txs.principal)"
            ),
            &[],
        )
        .await;
    old_raw.execute(&format!("DELETE FROM account_block_txs WHERE principal IN ({sponsored})"), &[]).await;
    assert!(unlisted > 0, "{engine:?}: the chain has sponsored transactions");
    let failed = digest["txs"].0 > 0
        && !old_raw
            .texts("SELECT tx_id FROM txs WHERE tx_type = 'smart_contract' AND status <> 'success'", &[])
            .await
            .is_empty();
    assert!(failed, "{engine:?}: the chain has failed deploys");
    old_raw.close().await;
    reference.finish().await;

    // Opening it runs the migration.
    let store = Store::open(&old.url, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap();
    let label = format!("{engine:?} migrated store");
    assert_eq!(store.index_definitions().await.unwrap(), indexes, "{label}: indexes");
    // The backfill that adds rows counts as a change (readers' caches learn of it): the change
    // counter is the one thing allowed to differ.
    let without_changes = |mut d: BTreeMap<String, _>| {
        assert!(d.remove("store_changes").is_some());
        d
    };
    let diff =
        digest_diff(&without_changes(store.ledger_digest().await.unwrap()), &without_changes(digest.clone()));
    assert!(diff.is_empty(), "{label}: ledger differs from the store created at the new schema: {diff:#?}");
    assert!(digest["events"].0 > 0 && digest["account_txs"].0 > 0 && digest["stx_balances"].0 > 0);
    check_invariants(&store, &label, true).await;
    // Migration 0041 gave the links of microblock transactions their sequence (the digest
    // above compares every `seq` with the new store's, which the write path filled).
    let (micro, bad) = store.account_tx_seqs().await.unwrap();
    assert!(micro > 0 && bad == 0, "{label}: {micro} links of microblock transactions, {bad} wrong");
    // Migration 0042 listed every block's transactions (the digest above compares each
    // backfilled `tx_ids` text with the one the write path stored; `check_invariants` each list
    // with the queries it replaces): the chain's blocks do hold transactions.
    store.close().await;
    let mut migrated = Raw::open(&old.url).await;
    let listed: i64 = migrated
        .text("SELECT CAST(COUNT(*) AS TEXT) AS n FROM blocks WHERE tx_ids <> '[]'")
        .await
        .unwrap()
        .parse()
        .unwrap();
    assert!(listed > 10, "{label}: {listed} blocks with transaction ids");
    assert_eq!(primary_keys(&mut migrated, engine).await, keys, "{label}: primary keys");
    // The check sees a list that is not its block's: one canonical block's ids reversed.
    let row = migrated
        .texts(
            "SELECT index_block_hash, tx_ids FROM blocks WHERE canonical = true AND block_height > 1 \
             AND tx_ids LIKE '%,%' ORDER BY block_height LIMIT 1",
            &[],
        )
        .await
        .remove(0);
    let (ibh, text) = (row[0].clone().unwrap(), row[1].clone().unwrap());
    let mut ids: Vec<String> = serde_json::from_str(&text).unwrap();
    ids.reverse();
    let reversed = serde_json::to_string(&ids).unwrap();
    migrated.execute("UPDATE blocks SET tx_ids = $1 WHERE index_block_hash = $2", &[&reversed, &ibh]).await;
    // Migration 0043 copied each block's fields onto its transactions' rows (the digest above
    // compares them with the write path's); the check sees a row whose copy is not its block's.
    let copied: i64 = migrated
        .text("SELECT CAST(COUNT(*) AS TEXT) AS n FROM txs WHERE index_block_hash <> '' AND in_parent_block_hash <> ''")
        .await
        .unwrap()
        .parse()
        .unwrap();
    assert!(copied > 10, "{label}: {copied} transaction rows with their block's fields");
    let row = migrated
        .texts(
            "SELECT tx_id, index_block_hash FROM txs WHERE index_block_hash <> '' ORDER BY block_height DESC, tx_id LIMIT 1",
            &[],
        )
        .await
        .remove(0);
    let (tx_id, tx_block) = (row[0].clone().unwrap(), row[1].clone().unwrap());
    migrated
        .execute(
            "UPDATE txs SET in_burn_block_time = in_burn_block_time + 1 WHERE tx_id = $1 AND index_block_hash = $2",
            &[&tx_id, &tx_block],
        )
        .await;
    migrated.close().await;
    let store = Store::open(&old.url, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap();
    let bad = store.block_tx_id_mismatches().await.unwrap();
    assert!(!bad.is_empty() && bad.iter().all(|b| b.starts_with(&ibh)), "{label}: {bad:?}");
    let bad = store.tx_block_field_mismatches().await.unwrap();
    assert_eq!(bad, vec![format!("{tx_id}@{tx_block}")], "{label}");
    // Migration 0044 rewrote each mined row's text (the digest above compares them with the
    // write path's); the tampered block field no longer renders as the stored text.
    let bad = store.tx_row_text_mismatches().await.unwrap();
    assert_eq!(bad, vec![format!("{tx_id}@{tx_block}")], "{label}");
    store.close().await;
    old.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_rekey_keeps_the_ledger() {
    rekey_keeps_the_ledger(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_rekey_keeps_the_ledger() {
    rekey_keeps_the_ledger(Db::Postgres).await;
}
