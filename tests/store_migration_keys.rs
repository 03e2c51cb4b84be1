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
use sqlx::any::AnyPoolOptions;
use sqlx::migrate::Migrator;
use sqlx::{AnyPool, Executor, Row};
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;

/// The first migration this test is about.
const REKEY: u32 = 30;

/// The engine's migrations before [`REKEY`], copied out of the source tree (same text, so
/// the same checksums as the ones the store embeds).
async fn migrations_before_rekey(engine: Db, dir: &Path) -> Migrator {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store/migrations").join(match engine {
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

async fn pool(url: &str) -> AnyPool {
    let url = match url.strip_prefix("sqlite://") {
        Some(path) => {
            std::fs::create_dir_all(std::path::Path::new(path).parent().unwrap()).unwrap();
            format!("sqlite://{path}?mode=rwc")
        }
        None => url.to_owned(),
    };
    AnyPoolOptions::new().max_connections(1).connect(&url).await.unwrap()
}

/// The ledger tables (everything but the migrator's own).
async fn tables(pool: &AnyPool, engine: Db) -> Vec<String> {
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
    let rows = sqlx::query(sql).fetch_all(pool).await.unwrap();
    rows.iter().map(|r| r.get::<String, _>("t")).collect()
}

/// Per table, its primary-key columns in key order.
async fn primary_keys(pool: &AnyPool, engine: Db) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for t in tables(pool, engine).await {
        let sql = match engine {
            Db::Sqlite => format!(
                "SELECT name AS c, CAST(pk AS BIGINT) AS k FROM pragma_table_info('{t}') WHERE pk > 0"
            ),
            Db::Postgres => format!(
                "SELECT CAST(k.column_name AS TEXT) AS c, CAST(k.ordinal_position AS BIGINT) AS k \
                 FROM information_schema.table_constraints c JOIN information_schema.key_column_usage k \
                 ON k.constraint_name = c.constraint_name AND k.table_name = c.table_name \
                 AND k.table_schema = c.table_schema \
                 WHERE c.constraint_type = 'PRIMARY KEY' AND c.table_name = '{t}' \
                 AND c.table_schema = current_schema()"
            ),
        };
        let mut cols: Vec<(i64, String)> = sqlx::query(&sql)
            .fetch_all(pool)
            .await
            .unwrap()
            .iter()
            .map(|r| (r.get("k"), r.get("c")))
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
async fn copy_rows(engine: Db, from: &TestDb, to: &AnyPool) {
    let tables = tables(to, engine).await;
    let mut conn = to.acquire().await.unwrap();
    match engine {
        Db::Sqlite => {
            let path = from.sqlite_path().unwrap();
            conn.execute(format!("ATTACH DATABASE '{}' AS a", path.display()).as_str()).await.unwrap();
            for t in &tables {
                // The old schema's columns only (later migrations add some).
                let cols: Vec<String> =
                    sqlx::query(&format!("SELECT name FROM pragma_table_info('{t}') ORDER BY cid"))
                        .fetch_all(&mut *conn)
                        .await
                        .unwrap()
                        .iter()
                        .map(|r| r.get::<String, _>("name"))
                        .collect();
                let cols = cols.join(", ");
                conn.execute(format!("DELETE FROM main.{t}").as_str()).await.unwrap();
                let only = old_rows(t);
                conn.execute(
                    format!("INSERT INTO main.{t} ({cols}) SELECT {cols} FROM a.{t}{only}").as_str(),
                )
                .await
                .unwrap();
            }
            conn.execute("DETACH DATABASE a").await.unwrap();
        }
        Db::Postgres => {
            let source = pool(&from.url).await;
            for t in &tables {
                let rows: Option<String> =
                    sqlx::query(&format!("SELECT CAST(json_agg(x) AS TEXT) AS j FROM {t} x{}", old_rows(t)))
                        .fetch_one(&source)
                        .await
                        .unwrap()
                        .get("j");
                conn.execute(format!("DELETE FROM {t}").as_str()).await.unwrap();
                if let Some(rows) = rows {
                    sqlx::query(&format!(
                        "INSERT INTO {t} SELECT * FROM json_populate_recordset(NULL::{t}, CAST($1 AS JSON))"
                    ))
                    .bind(rows)
                    .execute(&mut *conn)
                    .await
                    .unwrap();
                }
            }
            source.close().await;
        }
    }
}

async fn rekey_keeps_the_ledger(engine: Db) {
    sqlx::any::install_default_drivers();
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
    let ref_pool = pool(&reference.db.url).await;
    let keys = primary_keys(&ref_pool, engine).await;
    ref_pool.close().await;
    assert_eq!(keys["events"], ["index_block_hash", "tx_id", "microblock_hash", "event_index"], "{engine:?}");
    assert_eq!(keys["account_txs"], ["principal", "block_height", "index_block_hash", "tx_id"], "{engine:?}");
    assert_eq!(keys["stx_balances"], ["account", "block_height", "index_block_hash"], "{engine:?}");
    assert_eq!(keys["smart_contracts"], ["contract_id", "index_block_hash", "tx_id"], "{engine:?}");

    // A store at the schema before the re-keying, holding the same rows.
    let old = TestDb::new(engine, "rekey_old").await.unwrap();
    let old_pool = pool(&old.url).await;
    let dir = tempfile::tempdir().unwrap();
    migrations_before_rekey(engine, dir.path()).await.run(&old_pool).await.unwrap();
    let old_keys = primary_keys(&old_pool, engine).await;
    assert_eq!(
        old_keys["events"],
        ["tx_id", "index_block_hash", "microblock_hash", "event_index"],
        "{engine:?}"
    );
    copy_rows(engine, &reference.db, &old_pool).await;
    // As stores written before migration 0031 hold them: a sponsor's links to the transactions
    // it sponsored not listed, and its list counts without them (0031 lists and counts them).
    let sponsored = "SELECT sponsor_address FROM txs WHERE sponsored = true";
    let unlisted = sqlx::query(&format!(
        "UPDATE account_txs SET listed = false WHERE principal IN ({sponsored}) AND EXISTS \
         (SELECT 1 FROM txs t WHERE t.tx_id = account_txs.tx_id AND t.sponsored = true \
         AND t.sponsor_address = account_txs.principal)"
    ))
    .execute(&old_pool)
    .await
    .unwrap()
    .rows_affected();
    sqlx::query(&format!("DELETE FROM account_block_txs WHERE principal IN ({sponsored})"))
        .execute(&old_pool)
        .await
        .unwrap();
    assert!(unlisted > 0, "{engine:?}: the chain has sponsored transactions");
    let failed = digest["txs"].0 > 0
        && sqlx::query("SELECT 1 FROM txs WHERE tx_type = 'smart_contract' AND status <> 'success'")
            .fetch_optional(&old_pool)
            .await
            .unwrap()
            .is_some();
    assert!(failed, "{engine:?}: the chain has failed deploys");
    old_pool.close().await;
    reference.finish().await;

    // Opening it runs the migration.
    let store = Store::open(&old.url, Network::Testnet).await.unwrap();
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
    let migrated = pool(&old.url).await;
    let listed = sqlx::query("SELECT CAST(COUNT(*) AS BIGINT) AS n FROM blocks WHERE tx_ids <> '[]'")
        .fetch_one(&migrated)
        .await
        .unwrap()
        .get::<i64, _>("n");
    assert!(listed > 10, "{label}: {listed} blocks with transaction ids");
    assert_eq!(primary_keys(&migrated, engine).await, keys, "{label}: primary keys");
    // The check sees a list that is not its block's: one canonical block's ids reversed.
    let row = sqlx::query(
        "SELECT index_block_hash, tx_ids FROM blocks WHERE canonical = true AND block_height > 1 \
         AND tx_ids LIKE '%,%' ORDER BY block_height LIMIT 1",
    )
    .fetch_one(&migrated)
    .await
    .unwrap();
    let (ibh, text): (String, String) = (row.get("index_block_hash"), row.get("tx_ids"));
    let mut ids: Vec<String> = serde_json::from_str(&text).unwrap();
    ids.reverse();
    sqlx::query("UPDATE blocks SET tx_ids = $1 WHERE index_block_hash = $2")
        .bind(serde_json::to_string(&ids).unwrap())
        .bind(&ibh)
        .execute(&migrated)
        .await
        .unwrap();
    // Migration 0043 copied each block's fields onto its transactions' rows (the digest above
    // compares them with the write path's); the check sees a row whose copy is not its block's.
    let copied = sqlx::query(
        "SELECT CAST(COUNT(*) AS BIGINT) AS n FROM txs WHERE index_block_hash <> '' AND in_parent_block_hash <> ''",
    )
    .fetch_one(&migrated)
    .await
    .unwrap()
    .get::<i64, _>("n");
    assert!(copied > 10, "{label}: {copied} transaction rows with their block's fields");
    let row = sqlx::query(
        "SELECT tx_id, index_block_hash FROM txs WHERE index_block_hash <> '' ORDER BY block_height DESC, tx_id LIMIT 1",
    )
    .fetch_one(&migrated)
    .await
    .unwrap();
    let (tx_id, tx_block): (String, String) = (row.get("tx_id"), row.get("index_block_hash"));
    sqlx::query("UPDATE txs SET in_burn_block_time = in_burn_block_time + 1 WHERE tx_id = $1 AND index_block_hash = $2")
        .bind(&tx_id)
        .bind(&tx_block)
        .execute(&migrated)
        .await
        .unwrap();
    migrated.close().await;
    let store = Store::open(&old.url, Network::Testnet).await.unwrap();
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
