//! The SQLite and PostgreSQL migrations (`ledger-core/src/store/migrations/{sqlite,postgres}`) are kept
//! once per engine; this test is what keeps them defining one schema. Each engine's store is
//! opened on an empty database (migrations and the backfills the store runs when it opens),
//! and the two schemas are compared: the same tables; per table the same columns (names,
//! types through [`SAME_TYPES`], nullability) and primary key; the same indexes (name, table,
//! key columns and their order, uniqueness, partial or not) and unique constraints. What the
//! engines are meant to differ in is listed in [`EXCEPTIONS`], each with its reason. Not
//! compared: column order and defaults, an index's predicate and expression texts (each
//! engine prints them its own way), and storage settings (PostgreSQL's 0018).
//!
//! PostgreSQL comes from `STACKS_LEDGER_TEST_PG_URL` (a database of its own is created); outside
//! CI the test says so and skips without it, under `CI=true` it fails.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use common::{Db, TestDb};
use sqlx::{Connection, PgConnection, Row};
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;

/// Declared SQLite type ~ PostgreSQL `information_schema.columns.data_type` pairs that store the
/// same values.
const SAME_TYPES: &[(&str, &str)] = &[
    ("BIGINT", "bigint"),
    // SQLite stores every integer in up to 64 bits, whatever width the declaration names.
    ("INTEGER", "bigint"),
    ("INTEGER", "integer"),
    // SQLite has no boolean type: 0/1 in an integer column (the store binds and reads them so).
    ("INTEGER", "boolean"),
    ("TEXT", "text"),
    ("BLOB", "bytea"),
    ("REAL", "double precision"),
];

/// What one engine has and the other does not, on purpose.
const EXCEPTIONS: &[(&str, &str)] = &[
    (
        "sqlite column account_txs.tx_rid",
        "0045 (SQLite only): the rowid of the entry's `txs` row, so a principal's page reads its \
         rows by address from the index alone; PostgreSQL has no stable row address and joins by key",
    ),
    (
        "sqlite index account_txs_listed_rid",
        "0045 (SQLite only): `account_txs_listed_seq` with `tx_rid` appended, which it replaces",
    ),
    (
        "postgres index account_txs_listed_seq",
        "replaced on SQLite by `account_txs_listed_rid` (0045); PostgreSQL keeps it",
    ),
];

#[derive(Debug, Clone, PartialEq, Eq)]
struct Column {
    ty: String,
    not_null: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Index {
    table: String,
    /// Key columns in order; ` DESC` appended where descending, `(expression)` for an
    /// expression (SQLite does not give the expression's text back).
    columns: Vec<String>,
    unique: bool,
    partial: bool,
}

impl fmt::Display for Index {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{} ON {} ({})",
            if self.unique { "UNIQUE " } else { "" },
            if self.partial { "PARTIAL" } else { "INDEX" },
            self.table,
            self.columns.join(", ")
        )
    }
}

#[derive(Debug, Default)]
struct Schema {
    /// Table → column → its type and nullability.
    tables: BTreeMap<String, BTreeMap<String, Column>>,
    /// Table → primary key columns in key order (empty: none).
    primary_keys: BTreeMap<String, Vec<String>>,
    /// Indexes created by name (`CREATE INDEX`), by name.
    indexes: BTreeMap<String, Index>,
    /// Indexes behind `UNIQUE` constraints (named by each engine its own way), as
    /// `table (columns)`.
    unique_constraints: BTreeSet<String>,
}

fn sqlite_schema(path: &str) -> Schema {
    let c = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let rows = |sql: &str, arg: &str, n: usize| -> Vec<Vec<rusqlite::types::Value>> {
        let mut stmt = c.prepare(sql).unwrap();
        let params: &[&dyn rusqlite::ToSql] = if sql.contains('?') { &[&arg] } else { &[] };
        let got = stmt
            .query_map(params, |r| (0..n).map(|i| r.get::<_, rusqlite::types::Value>(i)).collect())
            .unwrap()
            .map(Result::unwrap)
            .collect();
        got
    };
    let text = |v: &rusqlite::types::Value| match v {
        rusqlite::types::Value::Text(t) => Some(t.clone()),
        _ => None,
    };
    let int = |v: &rusqlite::types::Value| match v {
        rusqlite::types::Value::Integer(i) => *i,
        other => panic!("an integer expected, not {other:?}"),
    };
    let mut schema = Schema::default();
    let tables: Vec<String> = rows(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
         AND name <> '_sqlx_migrations' ORDER BY name",
        "",
        1,
    )
    .iter()
    .map(|r| text(&r[0]).unwrap())
    .collect();
    for table in tables {
        let mut columns = BTreeMap::new();
        let mut pk: Vec<(i64, String)> = Vec::new();
        for r in rows("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?) ORDER BY cid", &table, 4)
        {
            let (name, ty, not_null, pk_pos) =
                (text(&r[0]).unwrap(), text(&r[1]).unwrap(), int(&r[2]) != 0, int(&r[3]));
            if pk_pos > 0 {
                pk.push((pk_pos, name.clone()));
            }
            // A primary key column counts as NOT NULL: PostgreSQL makes it so, and the store
            // never writes the NULL SQLite's legacy rule would let a non-INTEGER key hold.
            columns.insert(name, Column { ty: ty.to_ascii_uppercase(), not_null: not_null || pk_pos > 0 });
        }
        pk.sort();
        schema.primary_keys.insert(table.clone(), pk.into_iter().map(|(_, n)| n).collect());
        schema.tables.insert(table.clone(), columns);

        let indexes = rows(
            "SELECT name, \"unique\", origin, partial FROM pragma_index_list(?) ORDER BY name",
            &table,
            4,
        );
        for ix in indexes {
            let (name, unique, origin, partial) =
                (text(&ix[0]).unwrap(), int(&ix[1]) != 0, text(&ix[2]).unwrap(), int(&ix[3]) != 0);
            let columns: Vec<String> = rows(
                "SELECT name, \"desc\" FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno",
                &name,
                2,
            )
            .iter()
            .map(|r| {
                let col = text(&r[0]).unwrap_or_else(|| "(expression)".into());
                if int(&r[1]) != 0 {
                    format!("{col} DESC")
                } else {
                    col
                }
            })
            .collect();
            let index = Index { table: table.clone(), columns, unique, partial };
            match origin.as_str() {
                "pk" => {}
                "u" => {
                    schema.unique_constraints.insert(format!("{table} ({})", index.columns.join(", ")));
                }
                _ => {
                    schema.indexes.insert(name, index);
                }
            }
        }
    }
    schema
}

async fn postgres_schema(url: &str) -> Schema {
    let mut c = PgConnection::connect(url).await.unwrap();
    let mut schema = Schema::default();
    let columns = sqlx::query(
        "SELECT CAST(c.table_name AS TEXT), CAST(c.column_name AS TEXT), CAST(c.data_type AS TEXT), \
                c.is_nullable = 'NO' \
         FROM information_schema.columns c JOIN information_schema.tables t \
           ON t.table_schema = c.table_schema AND t.table_name = c.table_name \
         WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' \
           AND c.table_name <> '_sqlx_migrations'",
    )
    .fetch_all(&mut c)
    .await
    .unwrap();
    for r in columns {
        let (table, name, ty, not_null): (String, String, String, bool) =
            (r.get(0), r.get(1), r.get(2), r.get(3));
        schema.tables.entry(table.clone()).or_default().insert(name, Column { ty, not_null });
        schema.primary_keys.entry(table).or_default();
    }
    let indexes = sqlx::query(
        "SELECT CAST(i.relname AS TEXT), CAST(t.relname AS TEXT), x.indisunique, x.indisprimary, \
                x.indpred IS NOT NULL, \
                EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid AND k.contype = 'u'), \
                (SELECT string_agg(CASE WHEN x.indkey[k - 1] = 0 THEN '(expression)' \
                                        ELSE pg_get_indexdef(x.indexrelid, k, true) END \
                                   || CASE WHEN x.indoption[k - 1] & 1 = 1 THEN ' DESC' ELSE '' END, \
                                   E'\\x1f' ORDER BY k) \
                   FROM generate_series(1, x.indnkeyatts) AS k) \
         FROM pg_index x \
         JOIN pg_class i ON i.oid = x.indexrelid \
         JOIN pg_class t ON t.oid = x.indrelid \
         JOIN pg_namespace n ON n.oid = t.relnamespace \
         WHERE n.nspname = current_schema() AND t.relname <> '_sqlx_migrations'",
    )
    .fetch_all(&mut c)
    .await
    .unwrap();
    for r in indexes {
        let (name, table, unique, primary, partial, constraint, cols): (
            String,
            String,
            bool,
            bool,
            bool,
            bool,
            String,
        ) = (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5), r.get(6));
        let columns: Vec<String> = cols.split('\u{1f}').map(str::to_owned).collect();
        if primary {
            schema.primary_keys.insert(table, columns);
        } else if constraint {
            schema.unique_constraints.insert(format!("{table} ({})", columns.join(", ")));
        } else {
            schema.indexes.insert(name, Index { table, columns, unique, partial });
        }
    }
    c.close().await.unwrap();
    schema
}

/// Every way the two schemas differ, as lines keyed like [`EXCEPTIONS`] (`<engine> <what>
/// <name>`) followed by the detail.
fn differences(sqlite: &Schema, pg: &Schema) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let tables: BTreeSet<&String> = sqlite.tables.keys().chain(pg.tables.keys()).collect();
    for table in tables {
        let (s, p) = match (sqlite.tables.get(table), pg.tables.get(table)) {
            (Some(s), Some(p)) => (s, p),
            (Some(_), None) => {
                out.push((format!("sqlite table {table}"), "not in PostgreSQL".into()));
                continue;
            }
            (None, _) => {
                out.push((format!("postgres table {table}"), "not in SQLite".into()));
                continue;
            }
        };
        let names: BTreeSet<&String> = s.keys().chain(p.keys()).collect();
        for name in names {
            let key = format!("{table}.{name}");
            match (s.get(name), p.get(name)) {
                (Some(sc), Some(pc)) => {
                    if !SAME_TYPES.iter().any(|(a, b)| *a == sc.ty && *b == pc.ty) {
                        out.push((
                            format!("column type {key}"),
                            format!("SQLite {:?}, PostgreSQL {:?}: not in SAME_TYPES", sc.ty, pc.ty),
                        ));
                    }
                    if sc.not_null != pc.not_null {
                        let null = |n: bool| if n { "NOT NULL" } else { "nullable" };
                        out.push((
                            format!("column nullability {key}"),
                            format!("SQLite {}, PostgreSQL {}", null(sc.not_null), null(pc.not_null)),
                        ));
                    }
                }
                (Some(sc), None) => {
                    out.push((format!("sqlite column {key}"), format!("{} not in PostgreSQL", sc.ty)))
                }
                (None, Some(pc)) => {
                    out.push((format!("postgres column {key}"), format!("{} not in SQLite", pc.ty)))
                }
                (None, None) => unreachable!(),
            }
        }
        let (spk, ppk) = (&sqlite.primary_keys[table], &pg.primary_keys[table]);
        if spk != ppk {
            out.push((
                format!("primary key {table}"),
                format!("SQLite ({}), PostgreSQL ({})", spk.join(", "), ppk.join(", ")),
            ));
        }
    }
    let names: BTreeSet<&String> = sqlite.indexes.keys().chain(pg.indexes.keys()).collect();
    for name in names {
        match (sqlite.indexes.get(name), pg.indexes.get(name)) {
            (Some(s), Some(p)) if s != p => {
                out.push((format!("index {name}"), format!("SQLite {s}, PostgreSQL {p}")));
            }
            (Some(_), Some(_)) => {}
            (Some(s), None) => out.push((format!("sqlite index {name}"), format!("{s} not in PostgreSQL"))),
            (None, Some(p)) => out.push((format!("postgres index {name}"), format!("{p} not in SQLite"))),
            (None, None) => unreachable!(),
        }
    }
    for u in sqlite.unique_constraints.symmetric_difference(&pg.unique_constraints) {
        let engine = if sqlite.unique_constraints.contains(u) { "sqlite" } else { "postgres" };
        out.push((format!("{engine} unique constraint {u}"), "only in this engine".into()));
    }
    out
}

#[tokio::test]
async fn sqlite_and_postgres_migrations_define_one_schema() {
    let Some(pg_db) = TestDb::new(Db::Postgres, "schema_agreement").await else {
        println!("skipping the schema comparison: it needs PostgreSQL (STACKS_LEDGER_TEST_PG_URL)");
        return;
    };
    let sqlite_db = TestDb::new(Db::Sqlite, "schema_agreement").await.unwrap();
    for db in [&sqlite_db, &pg_db] {
        let store = Store::open(&db.url, Network::Testnet, stacks_ledger::compose::tx_render())
            .await
            .expect("open and migrate");
        store.close().await;
    }
    let sqlite = sqlite_schema(sqlite_db.sqlite_path().unwrap().to_str().unwrap());
    let pg = postgres_schema(&pg_db.url).await;
    sqlite_db.drop_db().await;
    pg_db.drop_db().await;

    // The comparison sees what it claims to: both schemas hold the ledger's main tables.
    for table in ["blocks", "txs", "events", "account_txs"] {
        assert!(sqlite.tables.contains_key(table) && pg.tables.contains_key(table), "{table}");
    }
    assert!(sqlite.indexes.len() > 20 && pg.indexes.len() > 20);

    let found = differences(&sqlite, &pg);
    let columns = |s: &Schema| s.tables.values().map(BTreeMap::len).sum::<usize>();
    println!(
        "compared {} tables, {} columns, {} indexes, {} unique constraints (SQLite's); {} differences",
        sqlite.tables.len(),
        columns(&sqlite),
        sqlite.indexes.len(),
        sqlite.unique_constraints.len(),
        found.len()
    );
    let unexpected: Vec<String> = found
        .iter()
        .filter(|(key, _)| !EXCEPTIONS.iter().any(|(k, _)| k == key))
        .map(|(key, detail)| format!("  {key}: {detail}"))
        .collect();
    let stale: Vec<&str> =
        EXCEPTIONS.iter().map(|(k, _)| *k).filter(|k| !found.iter().any(|(key, _)| key == k)).collect();
    assert!(
        unexpected.is_empty() && stale.is_empty(),
        "the SQLite and PostgreSQL migrations disagree.\n\
         Differences (fix the wrong engine's set with a new migration, or list the difference \
         in EXCEPTIONS with its reason):\n{}\n\
         Exceptions no longer found (remove them): {stale:?}",
        unexpected.join("\n")
    );
}
