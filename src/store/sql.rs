//! The one query path shared by both engines (`sqlx::Any`): SQL written once with `$N`
//! placeholders (SQLite accepts them too), values limited to what both engines share
//! (`i64`, text, booleans), and multi-row INSERTs chunked under SQLite's parameter limit.

use sqlx::any::AnyArguments;
use sqlx::{Any, AnyConnection};

/// SQLite's default `SQLITE_MAX_VARIABLE_NUMBER` (PostgreSQL allows 65535).
pub const MAX_PARAMS: usize = 32_766;

/// One bound value.
#[derive(Debug, Clone)]
pub enum Val {
    I(i64),
    OI(Option<i64>),
    T(String),
    OT(Option<String>),
    B(bool),
}

impl From<i64> for Val {
    fn from(v: i64) -> Self {
        Val::I(v)
    }
}
impl From<Option<i64>> for Val {
    fn from(v: Option<i64>) -> Self {
        Val::OI(v)
    }
}
impl From<String> for Val {
    fn from(v: String) -> Self {
        Val::T(v)
    }
}
impl From<&str> for Val {
    fn from(v: &str) -> Self {
        Val::T(v.to_owned())
    }
}
impl From<&String> for Val {
    fn from(v: &String) -> Self {
        Val::T(v.clone())
    }
}
impl From<Option<String>> for Val {
    fn from(v: Option<String>) -> Self {
        Val::OT(v)
    }
}
impl From<&Option<String>> for Val {
    fn from(v: &Option<String>) -> Self {
        Val::OT(v.clone())
    }
}
impl From<bool> for Val {
    fn from(v: bool) -> Self {
        Val::B(v)
    }
}

/// A query with its values bound.
pub fn query(sql: &str, vals: Vec<Val>) -> sqlx::query::Query<'_, Any, AnyArguments<'_>> {
    let mut q = sqlx::query::<Any>(sql);
    for v in vals {
        q = match v {
            Val::I(i) => q.bind(i),
            Val::OI(o) => q.bind(o),
            Val::T(s) => q.bind(s),
            Val::OT(o) => q.bind(o),
            Val::B(b) => q.bind(b),
        };
    }
    q
}

/// Executes `sql` with `vals`; returns the number of rows affected.
pub async fn exec(conn: &mut AnyConnection, sql: &str, vals: Vec<Val>) -> Result<u64, sqlx::Error> {
    Ok(query(sql, vals).execute(conn).await?.rows_affected())
}

/// `$a, $a+1, ...` placeholders for `n` values starting at `first`.
pub fn placeholders(first: usize, n: usize) -> String {
    (first..first + n).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ")
}

/// Inserts `rows` (each `columns.len()` values) with as few multi-row INSERTs as the parameter
/// limit allows. `suffix` is appended (e.g. an `ON CONFLICT` clause).
pub async fn insert_rows(
    conn: &mut AnyConnection,
    table: &str,
    columns: &[&str],
    rows: Vec<Vec<Val>>,
    suffix: &str,
) -> Result<(), sqlx::Error> {
    if rows.is_empty() {
        return Ok(());
    }
    let width = columns.len();
    let per_chunk = (MAX_PARAMS / width).max(1);
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let chunk: Vec<Vec<Val>> = rows.by_ref().take(per_chunk).collect();
        let mut sql = format!("INSERT INTO {table} ({}) VALUES ", columns.join(", "));
        let mut vals = Vec::with_capacity(chunk.len() * width);
        for (i, row) in chunk.into_iter().enumerate() {
            debug_assert_eq!(row.len(), width, "{table}");
            if i > 0 {
                sql.push_str(", ");
            }
            sql.push('(');
            sql.push_str(&placeholders(i * width + 1, width));
            sql.push(')');
            vals.extend(row);
        }
        sql.push(' ');
        sql.push_str(suffix);
        exec(conn, &sql, vals).await?;
    }
    Ok(())
}

/// Runs `sql` (which must contain `{in}` where the list goes, and may use `$1..$k` for the
/// `fixed` values) once per chunk of `items`.
pub async fn exec_in(
    conn: &mut AnyConnection,
    sql: &str,
    fixed: Vec<Val>,
    items: &[String],
) -> Result<u64, sqlx::Error> {
    let mut n = 0;
    for chunk in items.chunks(MAX_PARAMS - fixed.len()) {
        let text = sql.replace("{in}", &placeholders(fixed.len() + 1, chunk.len()));
        let mut vals = fixed.clone();
        vals.extend(chunk.iter().map(Val::from));
        n += exec(conn, &text, vals).await?;
    }
    Ok(n)
}

/// Like [`exec_in`] for a SELECT: the rows of every chunk.
pub async fn fetch_in(
    conn: &mut AnyConnection,
    sql: &str,
    fixed: Vec<Val>,
    items: &[String],
) -> Result<Vec<sqlx::any::AnyRow>, sqlx::Error> {
    let mut out = Vec::new();
    for chunk in items.chunks(MAX_PARAMS - fixed.len()) {
        let text = sql.replace("{in}", &placeholders(fixed.len() + 1, chunk.len()));
        let mut vals = fixed.clone();
        vals.extend(chunk.iter().map(Val::from));
        out.extend(query(&text, vals).fetch_all(&mut *conn).await?);
    }
    Ok(out)
}

/// A boolean column selected as an integer: the `Any` driver maps PostgreSQL booleans but not
/// SQLite's, and `CASE` yields an integer on both.
pub fn bool_col(col: &str) -> String {
    let name = col.rsplit('.').next().unwrap_or(col);
    format!("(CASE WHEN {col} THEN 1 ELSE 0 END) AS {name}")
}

/// Reads a column selected with [`bool_col`].
pub fn get_bool(row: &sqlx::any::AnyRow, col: &str) -> Result<bool, sqlx::Error> {
    use sqlx::Row;
    Ok(row.try_get::<i64, _>(col)? != 0)
}
