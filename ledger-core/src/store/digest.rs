//! A deterministic digest of everything the store holds, to prove two stores identical (an
//! export re-imported, a resumed import against a one-shot one, SQLite against PostgreSQL).
//!
//! Every table of the schema is covered, found in the engine's catalog (so a table or column
//! added by a later migration is covered without touching this file), every column, every row:
//! canonical and orphaned rows alike, the raw event log included. Left out: sqlx's
//! `_sqlx_migrations` bookkeeping, which records when and how fast each migration ran on this
//! particular database, and the checksum of each engine's own migration text, so it is per
//! store and per engine by nature; and `deferred_indexes`, the indexes a bulk replay has set
//! aside (`bulk`), which say how the store was filled, not what it holds. Neither holds
//! ledger data. Nor does `account_txs.tx_rid` (SQLite only, migration 0045): a row's address
//! in this file, which a restore may renumber; `Store::account_tx_rid_mismatches` checks it
//! against the rows instead.
//!
//! Values are compared as text, the same on both engines: `CAST(col AS TEXT)`, except that
//! PostgreSQL booleans are rendered `1`/`0` as SQLite stores them; NULL is distinct from `''`.
//! Each row is hashed (SHA-256 over its length-prefixed fields, columns in name order) and a
//! table's digest is the SHA-256 of its sorted row hashes: independent of row order (and of
//! either engine's collation), dependent on every value and on how many times each row occurs.

use std::collections::BTreeMap;

use stacks_codec::hash::sha256;

use super::sql::select;
use super::{Engine, Store, StoreError};

/// Schema bookkeeping, not ledger data (see the module docs).
const NOT_LEDGER: &[&str] = &["_sqlx_migrations", "deferred_indexes"];

/// Columns (table, column) that hold row addresses of one store, not ledger data.
const ADDRESSES: &[(&str, &str)] = &[("account_txs", "tx_rid")];

impl Store {
    /// Per table: `(row count, hex SHA-256 of its rows)`. See the module docs for what is
    /// covered and how values are normalized across engines.
    pub async fn ledger_digest(&self) -> Result<BTreeMap<String, (u64, String)>, StoreError> {
        let mut out = BTreeMap::new();
        for table in self.digest_tables().await? {
            let columns = self.digest_columns(&table).await?;
            if columns.is_empty() {
                return Err(StoreError::Corrupt(format!("table {table} has no columns in the catalog")));
            }
            let list = columns
                .iter()
                .enumerate()
                .map(|(i, (name, boolean))| {
                    if *boolean {
                        format!(
                            "(CASE WHEN {name} IS NULL THEN NULL WHEN {name} THEN '1' ELSE '0' END) AS c{i}"
                        )
                    } else {
                        format!("CAST({name} AS TEXT) AS c{i}")
                    }
                })
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!("SELECT {list} FROM {table}");
            let mut hashes: Vec<[u8; 32]> = Vec::new();
            let mut buf = Vec::new();
            select(&sql, vec![])
                .for_each(self, |row| {
                    buf.clear();
                    for i in 0..columns.len() {
                        match row.try_get::<Option<String>, _>(i)? {
                            None => buf.push(b'N'),
                            Some(v) => {
                                buf.push(b'S');
                                buf.extend_from_slice(&(v.len() as u64).to_be_bytes());
                                buf.extend_from_slice(v.as_bytes());
                            }
                        }
                    }
                    hashes.push(sha256(&buf));
                    Ok(true)
                })
                .await?;
            hashes.sort_unstable();
            let mut all = Vec::with_capacity(64 + hashes.len() * 32);
            for (name, _) in &columns {
                all.extend_from_slice(&(name.len() as u64).to_be_bytes());
                all.extend_from_slice(name.as_bytes());
            }
            for h in &hashes {
                all.extend_from_slice(h);
            }
            out.insert(table, (hashes.len() as u64, hex::encode(sha256(&all))));
        }
        Ok(out)
    }

    /// The schema's tables, migration bookkeeping excluded.
    async fn digest_tables(&self) -> Result<Vec<String>, StoreError> {
        let sql = match self.engine() {
            Engine::Sqlite => {
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
            }
            Engine::Postgres => {
                "SELECT CAST(table_name AS TEXT) AS name FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1"
            }
        };
        let rows = select(sql, vec![]).fetch_all(self).await?;
        let mut tables: Vec<String> = rows
            .iter()
            .map(|r| r.try_get::<String, _>("name"))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .filter(|t| !NOT_LEDGER.contains(&t.as_str()))
            .collect();
        if let Some(t) = tables.iter().find(|t| !is_identifier(t)) {
            return Err(StoreError::Corrupt(format!("unexpected table name {t:?}")));
        }
        tables.sort();
        Ok(tables)
    }

    /// `(column, is a PostgreSQL boolean)` of `table`, sorted by name. Names are checked to be
    /// plain identifiers, since they are spliced into the SELECT.
    async fn digest_columns(&self, table: &str) -> Result<Vec<(String, bool)>, StoreError> {
        let rows = match self.engine() {
            Engine::Sqlite => {
                select("SELECT name, type FROM pragma_table_info($1)", vec![table.into()]).fetch_all(self).await?
            }
            Engine::Postgres => {
                select(
                    "SELECT CAST(column_name AS TEXT) AS name, CAST(data_type AS TEXT) AS type \
                     FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1",
                    vec![table.into()],
                )
                .fetch_all(self)
                .await?
            }
        };
        let mut columns = Vec::with_capacity(rows.len());
        for r in &rows {
            let name: String = r.try_get("name")?;
            let ty: String = r.try_get("type")?;
            if !is_identifier(&name) {
                return Err(StoreError::Corrupt(format!("unexpected column name {name:?} in {table}")));
            }
            if ADDRESSES.contains(&(table, name.as_str())) {
                continue;
            }
            let boolean = self.engine() == Engine::Postgres && ty.eq_ignore_ascii_case("boolean");
            columns.push((name, boolean));
        }
        columns.sort();
        Ok(columns)
    }
}

/// A plain SQL identifier, safe to splice into a statement.
fn is_identifier(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}
