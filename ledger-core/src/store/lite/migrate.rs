//! The SQLite schema's migrations, run on the store's rusqlite connection. sqlx's `Migrator`
//! runs only on a sqlx connection, and SQLite has one driver here (rusqlite), so this applies
//! the migrations sqlx's `migrate!` embedded (their versions, texts and SHA-384 checksums)
//! with the same bookkeeping as sqlx's SQLite driver: the `_sqlx_migrations` table, each
//! migration and its row in one transaction, and the same refusals (a failed migration left
//! behind, an applied one missing from or changed in this binary). A store migrated by either
//! opens with the other, and PostgreSQL's `_sqlx_migrations` reads the same.

use std::collections::HashMap;
use std::time::Instant;

use rusqlite::{params, Connection};
use sqlx::migrate::{MigrateError, Migrator};

use super::sql_error;

const TABLE: &str = "CREATE TABLE IF NOT EXISTS _sqlx_migrations ( \
    version BIGINT PRIMARY KEY, \
    description TEXT NOT NULL, \
    installed_on TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, \
    success BOOLEAN NOT NULL, \
    checksum BLOB NOT NULL, \
    execution_time BIGINT NOT NULL)";

fn failed(e: rusqlite::Error) -> MigrateError {
    MigrateError::Execute(sql_error(e))
}

/// Applies every migration of `migrator` that `conn`'s database has not applied, in order.
pub(in crate::store) fn run(conn: &Connection, migrator: &Migrator) -> Result<(), MigrateError> {
    conn.execute_batch(TABLE).map_err(failed)?;
    let dirty: Option<i64> = conn
        .query_row(
            "SELECT version FROM _sqlx_migrations WHERE success = false ORDER BY version LIMIT 1",
            [],
            |r| r.get(0),
        )
        .map(Some)
        .or_else(|e| if e == rusqlite::Error::QueryReturnedNoRows { Ok(None) } else { Err(e) })
        .map_err(failed)?;
    if let Some(v) = dirty {
        return Err(MigrateError::Dirty(v));
    }
    let applied: HashMap<i64, Vec<u8>> = {
        let mut stmt = conn
            .prepare("SELECT version, checksum FROM _sqlx_migrations ORDER BY version")
            .map_err(failed)?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).map_err(failed)?;
        rows.collect::<Result<_, _>>().map_err(failed)?
    };
    if let Some(v) = applied.keys().copied().filter(|v| !migrator.iter().any(|m| m.version == *v)).min() {
        return Err(MigrateError::VersionMissing(v));
    }
    for m in migrator.iter().filter(|m| !m.migration_type.is_down_migration()) {
        match applied.get(&m.version) {
            Some(sum) if sum.as_slice() != &*m.checksum => {
                return Err(MigrateError::VersionMismatch(m.version))
            }
            Some(_) => {}
            None => {
                let started = Instant::now();
                conn.execute_batch("BEGIN").map_err(failed)?;
                let applied = conn
                    .execute_batch(&m.sql)
                    .map_err(|e| MigrateError::ExecuteMigration(sql_error(e), m.version))
                    .and_then(|()| {
                        conn.execute(
                            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
                             VALUES (?1, ?2, TRUE, ?3, -1)",
                            params![m.version, &*m.description, &*m.checksum],
                        )
                        .map_err(failed)
                    })
                    .and_then(|_| conn.execute_batch("COMMIT").map_err(failed));
                if let Err(e) = applied {
                    // Nothing of the migration stays; the error says which one failed.
                    let _ = conn.execute_batch("ROLLBACK");
                    return Err(e);
                }
                let nanos = i64::try_from(started.elapsed().as_nanos()).unwrap_or(i64::MAX);
                conn.execute(
                    "UPDATE _sqlx_migrations SET execution_time = ?1 WHERE version = ?2",
                    params![nanos, m.version],
                )
                .map_err(failed)?;
                tracing::debug!(version = m.version, description = %m.description, "migration applied");
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use sqlx::migrate::{Migration, MigrationType};

    use super::*;

    fn migration(version: i64, sql: &'static str) -> Migration {
        Migration::new(version, Cow::Borrowed("step"), MigrationType::Simple, Cow::Borrowed(sql), false)
    }

    fn migrator(list: Vec<Migration>) -> Migrator {
        Migrator { migrations: Cow::Owned(list), ..Migrator::DEFAULT }
    }

    fn versions(c: &Connection) -> Vec<(i64, bool)> {
        let mut stmt = c.prepare("SELECT version, success FROM _sqlx_migrations ORDER BY version").unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
    }

    #[test]
    fn applies_what_is_new_once_and_refuses_what_changed() {
        let c = Connection::open_in_memory().unwrap();
        let one = migration(1, "CREATE TABLE a (x INTEGER); INSERT INTO a VALUES (1);");
        run(&c, &migrator(vec![one.clone()])).unwrap();
        run(&c, &migrator(vec![one.clone(), migration(2, "INSERT INTO a VALUES (2);")])).unwrap();
        // Run again: nothing applied twice.
        run(&c, &migrator(vec![one.clone(), migration(2, "INSERT INTO a VALUES (2);")])).unwrap();
        assert_eq!(c.query_row("SELECT SUM(x) FROM a", [], |r| r.get::<_, i64>(0)).unwrap(), 3);
        assert_eq!(versions(&c), [(1, true), (2, true)]);
        let nanos: i64 =
            c.query_row("SELECT MIN(execution_time) FROM _sqlx_migrations", [], |r| r.get(0)).unwrap();
        assert!(nanos >= 0, "execution time recorded");
        // An applied migration whose text changed, or that this binary no longer has.
        let changed = migrator(vec![one.clone(), migration(2, "INSERT INTO a VALUES (20);")]);
        assert!(matches!(run(&c, &changed), Err(MigrateError::VersionMismatch(2))));
        assert!(matches!(run(&c, &migrator(vec![one])), Err(MigrateError::VersionMissing(2))));
    }

    #[test]
    fn a_failing_migration_leaves_nothing_and_says_which() {
        let c = Connection::open_in_memory().unwrap();
        let list = vec![
            migration(1, "CREATE TABLE a (x INTEGER);"),
            migration(2, "CREATE TABLE b (y INTEGER); INSERT INTO nowhere VALUES (1);"),
        ];
        assert!(matches!(run(&c, &migrator(list)), Err(MigrateError::ExecuteMigration(_, 2))));
        assert_eq!(versions(&c), [(1, true)]);
        let b: i64 =
            c.query_row("SELECT COUNT(*) FROM sqlite_master WHERE name = 'b'", [], |r| r.get(0)).unwrap();
        assert_eq!(b, 0, "the failed migration's first statement rolled back");
        // A store another tool left with a failed migration is refused, not migrated over.
        c.execute("UPDATE _sqlx_migrations SET success = false WHERE version = 1", []).unwrap();
        assert!(matches!(run(&c, &migrator(vec![])), Err(MigrateError::Dirty(1))));
    }

    /// The bookkeeping is sqlx's own: the checksums `migrate!` computed, which a store
    /// migrated by sqlx's SQLite driver holds, are what this records.
    #[test]
    fn records_the_checksums_sqlx_embedded() {
        let c = Connection::open_in_memory().unwrap();
        let m = crate::store::migrator(crate::store::Engine::Sqlite);
        run(&c, m).unwrap();
        let stored: Vec<(i64, Vec<u8>)> = {
            let mut stmt =
                c.prepare("SELECT version, checksum FROM _sqlx_migrations ORDER BY version").unwrap();
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
        };
        let embedded: Vec<(i64, Vec<u8>)> = m.iter().map(|m| (m.version, m.checksum.to_vec())).collect();
        assert_eq!(stored, embedded);
        assert!(embedded.iter().all(|(_, sum)| sum.len() == 48), "SHA-384");
    }
}
