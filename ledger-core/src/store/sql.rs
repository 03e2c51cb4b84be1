//! The one query path shared by both engines (PostgreSQL through `sqlx::Any`, SQLite through
//! rusqlite: `lite`, `conn::Conn`): SQL written once with `$N`
//! placeholders (SQLite accepts them too), values limited to what both engines share
//! (`i64`, text, booleans), and multi-row INSERTs chunked under SQLite's parameter limit
//! (PostgreSQL gets rows and lists as arrays).

use std::borrow::Cow;

use futures_util::TryStreamExt;
use sqlx::any::AnyArguments;
use sqlx::Any;

use super::conn::Conn;
use super::db_row::DbRow;
use super::{Reads, Store};

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

/// Executes `sql` with `vals`; returns the number of rows affected. Writes go through here
/// only inside a transaction (see [`for_engine`]).
pub async fn exec(conn: &mut Conn, sql: &str, vals: Vec<Val>) -> Result<u64, sqlx::Error> {
    let (sql, vals) = for_engine(conn, sql, vals);
    conn.execute(&sql, vals, true).await
}

/// The rows of `sql` with `vals` on `conn`.
pub async fn fetch_all(conn: &mut Conn, sql: &str, vals: Vec<Val>) -> Result<Vec<DbRow>, sqlx::Error> {
    let (sql, vals) = for_engine(conn, sql, vals);
    conn.fetch(&sql, vals, true).await
}

/// `f` on each row of `sql` with `vals` on `conn`, in order, without holding them all, until it
/// returns `false`.
pub async fn for_each(
    conn: &mut Conn,
    sql: &str,
    vals: Vec<Val>,
    f: impl FnMut(DbRow) -> Result<bool, sqlx::Error>,
) -> Result<(), sqlx::Error> {
    let (sql, vals) = for_engine(conn, sql, vals);
    conn.for_each(&sql, vals, f).await
}

/// [`fetch_all`]'s first row, if any.
pub async fn fetch_optional(
    conn: &mut Conn,
    sql: &str,
    vals: Vec<Val>,
) -> Result<Option<DbRow>, sqlx::Error> {
    Ok(fetch_all(conn, sql, vals).await?.into_iter().next())
}

/// [`fetch_all`]'s first row (`RowNotFound` without one).
pub async fn fetch_one(conn: &mut Conn, sql: &str, vals: Vec<Val>) -> Result<DbRow, sqlx::Error> {
    fetch_optional(conn, sql, vals).await?.ok_or(sqlx::Error::RowNotFound)
}

/// [`fetch_all`] of a statement PostgreSQL plans for its values each time (see [`pg_any`]).
pub async fn fetch_unprepared(conn: &mut Conn, sql: &str, vals: Vec<Val>) -> Result<Vec<DbRow>, sqlx::Error> {
    let (sql, vals) = for_engine(conn, sql, vals);
    conn.fetch(&sql, vals, false).await
}

/// A read statement as SQLite gets it (see [`for_engine`]), for the `lite` read path.
pub(super) fn sqlite_read(sql: &str, vals: Vec<Val>) -> (std::sync::Arc<SqliteText>, Vec<Val>) {
    let text = sqlite_text(sql, vals.len());
    let vals = text.bind(vals);
    (text, vals)
}

/// A read of the store: on SQLite on the calling thread (`lite`), on PostgreSQL through sqlx.
/// The same text (`$N` placeholders) and values on both.
pub struct Select<'s> {
    sql: &'s str,
    vals: Vec<Val>,
}

pub fn select(sql: &str, vals: Vec<Val>) -> Select<'_> {
    Select { sql, vals }
}

impl Select<'_> {
    async fn fetch(self, store: &Store, max: usize) -> Result<Vec<DbRow>, sqlx::Error> {
        match &store.reads {
            Reads::Lite(lite) => lite.fetch(self.sql, self.vals, max),
            Reads::Pg(pool) if max == 1 => Ok(query(self.sql, self.vals)
                .fetch_optional(pool)
                .await?
                .map(DbRow::Any)
                .into_iter()
                .collect()),
            Reads::Pg(pool) => {
                Ok(query(self.sql, self.vals).fetch_all(pool).await?.into_iter().map(DbRow::Any).collect())
            }
        }
    }

    /// `f` on each row, in order, without holding them all (scans of whole tables), until it
    /// returns `false`.
    pub async fn for_each(
        self,
        store: &Store,
        mut f: impl FnMut(DbRow) -> Result<bool, sqlx::Error>,
    ) -> Result<(), sqlx::Error> {
        match &store.reads {
            Reads::Lite(lite) => lite.for_each(self.sql, self.vals, f),
            Reads::Pg(pool) => {
                let mut rows = query(self.sql, self.vals).fetch(pool);
                while let Some(row) = rows.try_next().await? {
                    if !f(DbRow::Any(row))? {
                        break;
                    }
                }
                Ok(())
            }
        }
    }

    pub async fn fetch_all(self, store: &Store) -> Result<Vec<DbRow>, sqlx::Error> {
        self.fetch(store, usize::MAX).await
    }

    pub async fn fetch_optional(self, store: &Store) -> Result<Option<DbRow>, sqlx::Error> {
        Ok(self.fetch(store, 1).await?.pop())
    }

    pub async fn fetch_one(self, store: &Store) -> Result<DbRow, sqlx::Error> {
        self.fetch_optional(store).await?.ok_or(sqlx::Error::RowNotFound)
    }
}

/// [`fetch_in`] as a [`select`]: the rows of `sql` for every chunk of `items` (on PostgreSQL
/// one statement, on a kept read connection like [`select`]'s).
pub async fn select_in(
    store: &Store,
    sql: &str,
    fixed: Vec<Val>,
    items: &[String],
) -> Result<Vec<DbRow>, sqlx::Error> {
    let mut out = Vec::new();
    if items.is_empty() {
        return Ok(out);
    }
    let lite = match &store.reads {
        Reads::Lite(lite) => lite,
        Reads::Pg(pool) => {
            return fetch_in(&mut Conn::pooled(pool.acquire().await?), sql, fixed, items).await
        }
    };
    for (size, list) in in_chunks(items, fixed.len()) {
        let text = sql.replace("{in}", &placeholders(fixed.len() + 1, size));
        let mut vals = fixed.clone();
        vals.extend(list);
        out.extend(lite.fetch(&text, vals, usize::MAX)?);
    }
    Ok(out)
}

/// Statements with more values than this are bound positionally on SQLite (see
/// [`for_engine`]).
const POSITIONAL_FROM: usize = 16;

/// The statement as SQLite gets it (PostgreSQL gets it unchanged):
///
/// - `INSERT` / `UPDATE` with the FAIL conflict algorithm. With the default, ABORT, SQLite
///   must be able to undo a failed statement alone, so a statement that may write several
///   rows copies every page it changes into a statement journal first: a replay spent 12% of
///   its CPU copying pages (and allocating for them) into a journal it never used. Our writes
///   run inside a transaction that is rolled back whole when any statement fails, so FAIL
///   (stop at the error, which then rolls everything back) loses nothing.
/// - Long statements rewritten from `$N` placeholders to anonymous `?`s, with the values in
///   the order the placeholders appear. SQLite keeps named parameters (`$N`, and `?N` too) in
///   a list it searches linearly, and sqlx asks it the name of every parameter when it binds,
///   so binding an n-value statement cost O(n²) string compares: a 100-row INSERT of
///   transactions (3,600 values) spent longer binding than inserting. Anonymous parameters
///   are not in that list.
fn for_engine<'s>(conn: &Conn, sql: &'s str, vals: Vec<Val>) -> (EngineSql<'s>, Vec<Val>) {
    if conn.is_postgres() {
        return (EngineSql::As(sql), vals);
    }
    let text = sqlite_text(sql, vals.len());
    let vals = text.bind(vals);
    (EngineSql::Sqlite(text), vals)
}

/// A statement's text as its engine gets it: the caller's, or SQLite's kept rewrite.
enum EngineSql<'s> {
    As(&'s str),
    Sqlite(std::sync::Arc<SqliteText>),
}

impl std::ops::Deref for EngineSql<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            EngineSql::As(sql) => sql,
            EngineSql::Sqlite(text) => &text.sql,
        }
    }
}

/// A statement as SQLite gets it (see [`for_engine`]): its text, and when it binds
/// positionally in another order than the values come, the value each `?` takes.
pub(super) struct SqliteText {
    sql: String,
    order: Option<Vec<usize>>,
    /// Its result's column names, as the read path (`lite`) first found them: a statement
    /// text's columns do not change, and reading them per run cost an allocation per column.
    names: std::sync::OnceLock<std::sync::Arc<super::db_row::Names>>,
}

impl SqliteText {
    /// `sql` with the FAIL algorithm, its `$N` placeholders anonymous when `positional`.
    fn new(sql: &str, n_vals: usize, positional: bool) -> SqliteText {
        let fail = with_fail_conflict(sql);
        let names = std::sync::OnceLock::new();
        if !positional {
            return SqliteText { sql: fail.into_owned(), order: None, names };
        }
        let (sql, order) = self::positional(&fail, n_vals);
        let order = (!order.iter().copied().eq(0..n_vals)).then_some(order);
        SqliteText { sql, order, names }
    }

    pub(super) fn sql(&self) -> &str {
        &self.sql
    }

    pub(super) fn names(&self) -> &std::sync::OnceLock<std::sync::Arc<super::db_row::Names>> {
        &self.names
    }

    /// `vals` in the order this text binds them.
    fn bind(&self, vals: Vec<Val>) -> Vec<Val> {
        match &self.order {
            None => vals,
            Some(order) => in_order(vals, order),
        }
    }
}

/// Statement texts kept by [`sqlite_text`] and [`sqlite_insert_text`]; past this many, texts
/// are rewritten per call (our statements are a few hundred shapes, so only a caller
/// formatting values into its SQL would get there).
const SQLITE_TEXTS_KEPT: usize = 4096;

/// The rewritten texts, kept for the process: the writer runs the same few hundred statements
/// hundreds of thousands of times in a replay.
#[derive(Default)]
struct KeptTexts {
    /// By value count, then by the caller's text.
    by_text: std::collections::HashMap<usize, std::collections::HashMap<String, std::sync::Arc<SqliteText>>>,
    /// Multi-row INSERTs, by [`insert_key`].
    inserts: std::collections::HashMap<String, std::sync::Arc<SqliteText>>,
    count: usize,
}

fn kept_texts() -> std::sync::MutexGuard<'static, KeptTexts> {
    static KEPT: std::sync::OnceLock<std::sync::Mutex<KeptTexts>> = std::sync::OnceLock::new();
    KEPT.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner())
}

/// [`for_engine`]'s rewrite of `sql` for `n_vals` values, done once per statement text.
fn sqlite_text(sql: &str, n_vals: usize) -> std::sync::Arc<SqliteText> {
    if let Some(t) = kept_texts().by_text.get(&n_vals).and_then(|m| m.get(sql)) {
        return t.clone();
    }
    let text = std::sync::Arc::new(SqliteText::new(sql, n_vals, n_vals >= POSITIONAL_FROM));
    let mut kept = kept_texts();
    if kept.count < SQLITE_TEXTS_KEPT {
        kept.count += 1;
        kept.by_text.entry(n_vals).or_default().insert(sql.to_owned(), text.clone());
    }
    text
}

/// `INSERT INTO` → `INSERT OR FAIL INTO`, `UPDATE t` → `UPDATE OR FAIL t` (see [`for_engine`]);
/// statements that name their own algorithm, and all others, unchanged.
fn with_fail_conflict(sql: &str) -> Cow<'_, str> {
    if let Some(rest) = sql.strip_prefix("INSERT INTO ") {
        Cow::Owned(format!("INSERT OR FAIL INTO {rest}"))
    } else if let Some(rest) = sql.strip_prefix("UPDATE ").filter(|r| !r.starts_with("OR ")) {
        Cow::Owned(format!("UPDATE OR FAIL {rest}"))
    } else {
        Cow::Borrowed(sql)
    }
}

/// `vals` in placeholder `order`: each value moves to its last use, earlier uses get a clone.
fn in_order(vals: Vec<Val>, order: &[usize]) -> Vec<Val> {
    let mut uses = vec![0usize; vals.len()];
    for &k in order {
        uses[k] += 1;
    }
    let mut slots: Vec<Option<Val>> = vals.into_iter().map(Some).collect();
    order
        .iter()
        .map(|&k| {
            uses[k] -= 1;
            let v = if uses[k] == 0 { slots[k].take() } else { slots[k].clone() };
            v.expect("a value is taken only at its last use")
        })
        .collect()
}

/// `sql` with its placeholders `$1..$n_vals` replaced by `?`, and the (0-based) value each `?`
/// takes.
fn positional(sql: &str, n_vals: usize) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(sql.len());
    let mut order = Vec::with_capacity(n_vals);
    let bytes = sql.as_bytes();
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        if bytes[i] == b'$' {
            let digits = bytes[i + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
            if digits > 0 {
                let n: usize = sql[i + 1..i + 1 + digits].parse().unwrap_or(0);
                if let Some(k) = n.checked_sub(1).filter(|&k| k < n_vals) {
                    out.push_str(&sql[copied..i]);
                    out.push('?');
                    order.push(k);
                    i += 1 + digits;
                    copied = i;
                    continue;
                }
            }
        }
        i += 1;
    }
    out.push_str(&sql[copied..]);
    (out, order)
}

/// `$a, $a+1, ...` placeholders for `n` values starting at `first`.
pub fn placeholders(first: usize, n: usize) -> String {
    let mut out = String::with_capacity(n * 6);
    push_placeholders(&mut out, first, n);
    out
}

/// [`placeholders`], appended to `out` (a 64-row INSERT has thousands: no string each).
fn push_placeholders(out: &mut String, first: usize, n: usize) {
    use std::fmt::Write;
    for i in first..first + n {
        if i > first {
            out.push_str(", ");
        }
        let _ = write!(out, "${i}");
    }
}

/// Rows per multi-row INSERT on SQLite (PostgreSQL takes any number in one statement, see
/// [`pg_unnest_insert`]). Statements are prepared once per connection and cached by their
/// text, so a statement whose shape follows the row count would be a new statement (parsed
/// and planned again, and evicting others from the cache) for nearly every block. A batch is
/// therefore cut greedily into chunks of these sizes: at most seven shapes per table, 100 rows
/// take 4 statements (64 + 16 + 16 + 4), and fewer than 16 rows at most 4 (8 + 4 + 2 + 1; with
/// only 4 and 1, 15 rows took 6: on the live path, where every block is a few rows per table,
/// that was 5 % of all statements).
const CHUNK_ROWS: [usize; 7] = [256, 64, 16, 8, 4, 2, 1];

/// Sizes of `IN (...)` lists: a list is padded up to the next one by repeating its last item
/// (harmless in `IN`), for the same reason as [`CHUNK_ROWS`]. Longer lists go in chunks of the
/// largest.
const IN_SIZES: [usize; 6] = [1, 4, 16, 64, 256, 1024];

/// Inserts `rows` (each `columns.len()` values): on SQLite in multi-row INSERTs of fixed sizes
/// (see [`CHUNK_ROWS`]), on PostgreSQL in one (see [`pg_unnest_insert`]). `suffix` is appended
/// (e.g. an `ON CONFLICT` clause).
pub async fn insert_rows(
    conn: &mut Conn,
    table: &str,
    columns: &[&str],
    rows: Vec<Vec<Val>>,
    suffix: &str,
) -> Result<(), sqlx::Error> {
    insert_chunks(conn, table, columns, rows, suffix, false).await.map(|_| ())
}

/// [`insert_rows`] with a `RETURNING` clause in `suffix`: the rows it returns, of all chunks.
pub async fn insert_rows_returning(
    conn: &mut Conn,
    table: &str,
    columns: &[&str],
    rows: Vec<Vec<Val>>,
    suffix: &str,
) -> Result<Vec<DbRow>, sqlx::Error> {
    insert_chunks(conn, table, columns, rows, suffix, true).await
}

async fn insert_chunks(
    conn: &mut Conn,
    table: &str,
    columns: &[&str],
    rows: Vec<Vec<Val>>,
    suffix: &str,
    returning: bool,
) -> Result<Vec<DbRow>, sqlx::Error> {
    let mut out = Vec::new();
    if rows.is_empty() {
        return Ok(out);
    }
    if conn.is_postgres() {
        let (sql, vals) = pg_unnest_insert(table, columns, rows, suffix);
        if returning {
            out = fetch_all(conn, &sql, vals).await?;
        } else {
            exec(conn, &sql, vals).await?;
        }
        return Ok(out);
    }
    let width = columns.len();
    let max_rows = (MAX_PARAMS / width).max(1);
    let mut rows = rows.into_iter();
    let mut left = rows.len();
    while left > 0 {
        let n = CHUNK_ROWS.into_iter().find(|&c| c <= left && c <= max_rows).unwrap_or(1);
        let mut vals = Vec::with_capacity(n * width);
        for row in rows.by_ref().take(n) {
            debug_assert_eq!(row.len(), width, "{table}");
            vals.extend(row);
        }
        let text = sqlite_insert_text(table, columns, n, suffix);
        let vals = text.bind(vals);
        if returning {
            out.extend(conn.fetch(&text.sql, vals, true).await?);
        } else {
            conn.execute(&text.sql, vals, true).await?;
        }
        left -= n;
    }
    Ok(out)
}

/// The SQLite text of an `n`-row INSERT as [`exec`] would send it (the FAIL algorithm,
/// anonymous placeholders), built once per shape (see [`KeptTexts`]). A replay runs hundreds of
/// thousands of these, and the thread that feeds SQLite (whose time adds to SQLite's own)
/// formatted thousands of `$N` placeholders and rewrote them again for each one. There are a
/// few shapes per table (see [`CHUNK_ROWS`]).
fn sqlite_insert_text(table: &str, columns: &[&str], n: usize, suffix: &str) -> std::sync::Arc<SqliteText> {
    let key = insert_key(table, columns, n, suffix);
    if let Some(t) = kept_texts().inserts.get(&key) {
        return t.clone();
    }
    let n_vals = n * columns.len();
    let text = std::sync::Arc::new(SqliteText::new(&insert_sql(table, columns, n, suffix), n_vals, true));
    let mut kept = kept_texts();
    if kept.count < SQLITE_TEXTS_KEPT {
        kept.count += 1;
        kept.inserts.insert(key, text.clone());
    }
    text
}

/// What identifies an INSERT's shape in [`KeptTexts::inserts`].
fn insert_key(table: &str, columns: &[&str], n: usize, suffix: &str) -> String {
    let mut key = String::with_capacity(table.len() + suffix.len() + 16 * columns.len());
    key.push_str(table);
    for c in columns {
        key.push('|');
        key.push_str(c);
    }
    key.push_str(&format!("|{n}|{suffix}"));
    key
}

/// PostgreSQL: all rows in one statement, one array value per column:
/// `INSERT INTO t (a, b) SELECT * FROM UNNEST(CAST($1 AS BIGINT[]), CAST($2 AS TEXT[])) suffix`.
/// One statement text per table whatever the row count (parsed and planned once per
/// connection), and `columns.len()` values to bind instead of rows × columns. A column's type
/// is taken from its values' kind (integers `BIGINT`, texts `TEXT`, booleans `BOOLEAN`), the
/// types the row values are bound with on the other path.
fn pg_unnest_insert(table: &str, columns: &[&str], rows: Vec<Vec<Val>>, suffix: &str) -> (String, Vec<Val>) {
    let (unnest, vals) = pg_unnest(columns.len(), rows, 1);
    let sql = format!("INSERT INTO {table} ({}) SELECT * FROM {unnest} {suffix}", columns.join(", "));
    (sql, vals)
}

/// `rows` (each `width` values) as `UNNEST(CAST($first AS BIGINT[]), ...)`, one array value
/// per column bound from `$first` on (see [`pg_unnest_insert`]), for a statement that selects
/// from it.
pub fn pg_unnest(width: usize, rows: Vec<Vec<Val>>, first: usize) -> (String, Vec<Val>) {
    let mut arrays: Vec<String> = vec![String::from("{"); width];
    let mut kinds: Vec<Option<&'static str>> = vec![None; width];
    for (r, row) in rows.into_iter().enumerate() {
        debug_assert_eq!(row.len(), width);
        for (c, v) in row.into_iter().enumerate() {
            let out = &mut arrays[c];
            if r > 0 {
                out.push(',');
            }
            let kind = match v {
                Val::I(i) | Val::OI(Some(i)) => {
                    use std::fmt::Write;
                    let _ = write!(out, "{i}");
                    "BIGINT"
                }
                Val::OI(None) => {
                    out.push_str("NULL");
                    "BIGINT"
                }
                Val::T(t) | Val::OT(Some(t)) => {
                    push_quoted(out, &t);
                    "TEXT"
                }
                Val::OT(None) => {
                    out.push_str("NULL");
                    "TEXT"
                }
                Val::B(b) => {
                    out.push(if b { 't' } else { 'f' });
                    "BOOLEAN"
                }
            };
            kinds[c] = Some(kind);
        }
    }
    let mut sql = String::from("UNNEST(");
    for (c, kind) in kinds.iter().enumerate() {
        if c > 0 {
            sql.push_str(", ");
        }
        use std::fmt::Write;
        let _ = write!(sql, "CAST(${} AS {}[])", c + first, kind.unwrap_or("TEXT"));
    }
    sql.push(')');
    let vals = arrays
        .into_iter()
        .map(|mut a| {
            a.push('}');
            Val::T(a)
        })
        .collect();
    (sql, vals)
}

/// One row as a one-row table `(SELECT CAST($first AS BIGINT), ...)`, its values bound as they
/// are (no array literal): the one-row counterpart of [`pg_unnest`], for a statement that
/// selects from it (alias its columns). PostgreSQL estimates an `UNNEST` of array parameters
/// at 10 rows in a generic plan and at the array's length in a custom one, so a prepared
/// statement over `UNNEST` is planned again at every execution whenever a per-row subquery
/// makes the 10-row estimate the dearer; over this table both plans cost the same, and the
/// generic one is kept after five executions.
pub fn pg_row(row: Vec<Val>, first: usize) -> (String, Vec<Val>) {
    use std::fmt::Write;
    let mut sql = String::from("(SELECT ");
    for (c, v) in row.iter().enumerate() {
        if c > 0 {
            sql.push_str(", ");
        }
        let kind = match v {
            Val::I(_) | Val::OI(_) => "BIGINT",
            Val::T(_) | Val::OT(_) => "TEXT",
            Val::B(_) => "BOOLEAN",
        };
        let _ = write!(sql, "CAST(${} AS {kind})", c + first);
    }
    sql.push(')');
    (sql, row)
}

/// `"item"` with `\` and `"` escaped, as an element of a PostgreSQL array literal.
fn push_quoted(out: &mut String, item: &str) {
    out.push('"');
    for c in item.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

/// `INSERT INTO table (columns) VALUES ($1, ...), ... suffix` for `n` rows.
fn insert_sql(table: &str, columns: &[&str], n: usize, suffix: &str) -> String {
    let width = columns.len();
    let mut sql = format!("INSERT INTO {table} ({}) VALUES ", columns.join(", "));
    for i in 0..n {
        if i > 0 {
            sql.push_str(", ");
        }
        sql.push('(');
        push_placeholders(&mut sql, i * width + 1, width);
        sql.push(')');
    }
    sql.push(' ');
    sql.push_str(suffix);
    sql
}

/// `items` cut into `IN` lists of the fixed [`IN_SIZES`], each padded with its last item.
fn in_chunks(items: &[String], fixed: usize) -> impl Iterator<Item = (usize, Vec<Val>)> + '_ {
    let largest = IN_SIZES.into_iter().filter(|&n| n + fixed <= MAX_PARAMS).max().unwrap_or(1);
    items.chunks(largest).map(move |chunk| {
        let size = IN_SIZES.into_iter().find(|&n| n >= chunk.len()).unwrap_or(largest);
        let mut vals: Vec<Val> = chunk.iter().map(Val::from).collect();
        let last = chunk[chunk.len() - 1].clone();
        vals.resize_with(size, || Val::T(last.clone()));
        (size, vals)
    })
}

/// PostgreSQL gets a list as one array value, `col = ANY(CAST($k AS TEXT[]))`, instead of
/// `col IN ($k, ...)`: one statement shape for any length, and a plan that probes the index
/// once per item. With padded `IN` lists the generic plan PostgreSQL caches after a few
/// executions (chosen while the tables were small) filtered the rows of another index through
/// the list, comparing texts per row (`texteq` under `ExecEvalScalarArrayOp` was the server's
/// top entry in a replay). These statements are sent unprepared (`persistent(false)`), so
/// each execution is planned for its list: a prepared one is planned for its values five times
/// and may then keep a generic plan for the connection's life, and the writer's statements
/// first run on empty tables, where a sequential scan is as good as an index (the mempool's
/// "already mined?" lookup then scanned all of `txs`, 2.8 ms a call after 20,000 txs: 60% of
/// the server's time in a replay). `None` on SQLite, which keeps the padded lists.
fn pg_any(conn: &Conn, sql: &str, fixed: &[Val], items: &[String]) -> Option<(String, Vec<Val>)> {
    conn.is_postgres().then(|| pg_any_text(sql, fixed, items))
}

/// [`pg_any`]'s statement and values.
fn pg_any_text(sql: &str, fixed: &[Val], items: &[String]) -> (String, Vec<Val>) {
    let sql = sql.replace("IN ({in})", &format!("= ANY(CAST(${} AS TEXT[]))", fixed.len() + 1));
    let mut vals = fixed.to_vec();
    vals.push(Val::T(pg_text_array(items)));
    (sql, vals)
}

/// A PostgreSQL array literal of texts: `{"a","b"}`, every item quoted (so `NULL` and empty
/// strings stay texts), `\` and `"` escaped.
fn pg_text_array(items: &[String]) -> String {
    let mut out = String::with_capacity(2 + items.iter().map(|s| s.len() + 3).sum::<usize>());
    out.push('{');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_quoted(&mut out, item);
    }
    out.push('}');
    out
}

/// Runs `sql` (which must contain `IN ({in})` where the list goes, and may use `$1..$k` for
/// the `fixed` values) once per chunk of `items` (PostgreSQL: once, see [`pg_any`]).
pub async fn exec_in(
    conn: &mut Conn,
    sql: &str,
    fixed: Vec<Val>,
    items: &[String],
) -> Result<u64, sqlx::Error> {
    if items.is_empty() {
        return Ok(0);
    }
    if let Some((sql, vals)) = pg_any(conn, sql, &fixed, items) {
        return conn.execute(&sql, vals, false).await;
    }
    let mut n = 0;
    for (size, list) in in_chunks(items, fixed.len()) {
        let text = sql.replace("{in}", &placeholders(fixed.len() + 1, size));
        let mut vals = fixed.clone();
        vals.extend(list);
        n += exec(conn, &text, vals).await?;
    }
    Ok(n)
}

/// Like [`exec_in`] for a SELECT: the rows of every chunk.
pub async fn fetch_in(
    conn: &mut Conn,
    sql: &str,
    fixed: Vec<Val>,
    items: &[String],
) -> Result<Vec<DbRow>, sqlx::Error> {
    if items.is_empty() {
        return Ok(Vec::new());
    }
    if let Some((sql, vals)) = pg_any(conn, sql, &fixed, items) {
        return conn.fetch(&sql, vals, false).await;
    }
    let mut out = Vec::new();
    for (size, list) in in_chunks(items, fixed.len()) {
        let text = sql.replace("{in}", &placeholders(fixed.len() + 1, size));
        let mut vals = fixed.clone();
        vals.extend(list);
        out.extend(fetch_all(conn, &text, vals).await?);
    }
    Ok(out)
}

/// A list of texts as a one-column table `l(item)`, bound as one value `$n`, to drive a query
/// from the list itself (e.g. one correlated index seek per item): PostgreSQL unnests an
/// array, SQLite reads a JSON array with `json_each`. An `IN` list cannot do that: the engines
/// then drive from the table's rows that match the list, all of them.
pub fn text_list_table(conn: &Conn, n: usize, items: &[String]) -> (String, Val) {
    if conn.is_postgres() {
        (format!("UNNEST(CAST(${n} AS TEXT[])) AS l(item)"), Val::T(pg_text_array(items)))
    } else {
        let json = serde_json::to_string(items).unwrap_or_else(|_| "[]".to_owned());
        (format!("(SELECT value AS item FROM json_each(${n})) AS l"), Val::T(json))
    }
}

/// A boolean column selected as an integer: the `Any` driver maps PostgreSQL booleans but not
/// SQLite's, and `CASE` yields an integer on both.
pub fn bool_col(col: &str) -> String {
    let name = col.rsplit('.').next().unwrap_or(col);
    format!("(CASE WHEN {col} THEN 1 ELSE 0 END) AS {name}")
}

/// Reads a column selected with [`bool_col`].
pub fn get_bool(row: &impl super::db_row::Cols, col: &str) -> Result<bool, sqlx::Error> {
    row.flag(col)
}

/// Counts a change committed without a raw event (in the caller's transaction), so readers'
/// [`super::Store::generation`] moves with it.
pub(super) async fn note_change(conn: &mut Conn) -> Result<(), sqlx::Error> {
    exec(conn, "UPDATE store_changes SET n = n + 1 WHERE id = 1", vec![]).await.map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `$N` → `?`, and the values in placeholder order (a value used twice is bound twice, and
    /// only then cloned). The statements are ours: no `$` occurs in their string literals.
    fn to_positional(sql: &str, vals: Vec<Val>) -> (String, Vec<Val>) {
        let (out, order) = positional(sql, vals.len());
        (out, in_order(vals, &order))
    }

    fn texts(vals: &[Val]) -> Vec<String> {
        vals.iter()
            .map(|v| match v {
                Val::T(s) => s.clone(),
                Val::I(i) => i.to_string(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn positional_follows_placeholder_order() {
        let vals: Vec<Val> = vec!["a".into(), "b".into(), 3i64.into()];
        let (sql, ordered) =
            to_positional("UPDATE t SET x = $2, y = $3 WHERE z = $1 OR w = $2 AND v = '$'", vals);
        assert_eq!(sql, "UPDATE t SET x = ?, y = ? WHERE z = ? OR w = ? AND v = '$'");
        assert_eq!(texts(&ordered), ["b", "3", "a", "b"]);
        let (sql, ordered) = to_positional(
            &insert_sql("t", &["a", "b"], 2, "ON CONFLICT DO NOTHING"),
            vec!["1".into(), "2".into(), "3".into(), "4".into()],
        );
        assert_eq!(sql, "INSERT INTO t (a, b) VALUES (?, ?), (?, ?) ON CONFLICT DO NOTHING");
        assert_eq!(texts(&ordered), ["1", "2", "3", "4"]);
    }

    #[test]
    fn sqlite_insert_texts_are_the_rewritten_ones() {
        let cols = ["a", "b", "c"];
        let text = sqlite_insert_text("t_cached", &cols, 2, "ON CONFLICT (a) DO NOTHING");
        let (rewritten, _) = to_positional(
            &with_fail_conflict(&insert_sql("t_cached", &cols, 2, "ON CONFLICT (a) DO NOTHING")),
            vec![Val::I(0); 6],
        );
        assert_eq!(text.sql, rewritten);
        assert_eq!(
            text.sql,
            "INSERT OR FAIL INTO t_cached (a, b, c) VALUES (?, ?, ?), (?, ?, ?) ON CONFLICT (a) DO NOTHING"
        );
        // The values bind in row order, as given.
        assert!(text.order.is_none());
        // Another shape, and the same one again from the cache.
        assert_eq!(
            sqlite_insert_text("t_cached", &cols[..2], 1, "").sql,
            "INSERT OR FAIL INTO t_cached (a, b) VALUES (?, ?) "
        );
        assert!(std::sync::Arc::ptr_eq(
            &text,
            &sqlite_insert_text("t_cached", &cols, 2, "ON CONFLICT (a) DO NOTHING")
        ));
    }

    #[test]
    fn sqlite_writes_use_the_fail_algorithm() {
        assert_eq!(
            with_fail_conflict("INSERT INTO t (a) VALUES ($1)"),
            "INSERT OR FAIL INTO t (a) VALUES ($1)"
        );
        assert_eq!(with_fail_conflict("UPDATE t SET a = 1"), "UPDATE OR FAIL t SET a = 1");
        for unchanged in [
            "INSERT OR IGNORE INTO t VALUES (1)",
            "UPDATE OR REPLACE t SET a = 1",
            "SELECT 1",
            "DELETE FROM t",
        ] {
            assert_eq!(with_fail_conflict(unchanged), unchanged);
        }
    }

    #[test]
    fn pg_arrays_quote_every_item() {
        let items = ["ab".to_owned(), "NULL".to_owned(), String::new(), r#"q"b\s"#.to_owned()];
        assert_eq!(pg_text_array(&items), r#"{"ab","NULL","","q\"b\\s"}"#);
        assert_eq!(pg_text_array(&[]), "{}");
    }

    #[test]
    fn pg_inserts_bind_one_array_per_column() {
        let rows = vec![
            vec![1i64.into(), "a\"b".into(), Val::OI(None), true.into(), Val::OT(None)],
            vec![Val::I(-2), "".into(), Val::OI(Some(7)), false.into(), Val::OT(Some("NULL".into()))],
        ];
        let (sql, vals) = pg_unnest_insert("t", &["a", "b", "c", "d", "e"], rows, "ON CONFLICT DO NOTHING");
        assert_eq!(
            sql,
            "INSERT INTO t (a, b, c, d, e) SELECT * FROM UNNEST(CAST($1 AS BIGINT[]), CAST($2 AS TEXT[]), \
             CAST($3 AS BIGINT[]), CAST($4 AS BOOLEAN[]), CAST($5 AS TEXT[])) ON CONFLICT DO NOTHING"
        );
        assert_eq!(texts(&vals), ["{1,-2}", r#"{"a\"b",""}"#, "{NULL,7}", "{t,f}", r#"{NULL,"NULL"}"#]);
    }

    #[test]
    fn pg_row_binds_each_value_as_is() {
        let row = vec![1i64.into(), "a\"b".into(), Val::OI(None), true.into(), Val::OT(None)];
        let (sql, vals) = pg_row(row, 4);
        assert_eq!(
            sql,
            "(SELECT CAST($4 AS BIGINT), CAST($5 AS TEXT), CAST($6 AS BIGINT), CAST($7 AS BOOLEAN), \
             CAST($8 AS TEXT))"
        );
        // The values themselves (no array literal, nothing quoted): a NULL stays a NULL.
        assert_eq!(texts(&vals), ["1", "a\"b", "OI(None)", "B(true)", "OT(None)"]);
    }

    #[test]
    fn in_lists_have_fixed_sizes() {
        let items: Vec<String> = (0..5).map(|i| i.to_string()).collect();
        let chunks: Vec<_> = in_chunks(&items, 2).collect();
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].0, 16);
        assert_eq!(
            texts(&chunks[0].1),
            ["0", "1", "2", "3", "4", "4", "4", "4", "4", "4", "4", "4", "4", "4", "4", "4"]
        );
        let many: Vec<String> = (0..1500).map(|i| i.to_string()).collect();
        let sizes: Vec<usize> = in_chunks(&many, 0)
            .map(|(n, v)| {
                assert_eq!(v.len(), n);
                n
            })
            .collect();
        assert_eq!(sizes, [1024, 1024]);
        assert_eq!(in_chunks(&[], 0).count(), 0);
    }

    #[test]
    fn insert_chunks_use_few_shapes() {
        let mut shapes = Vec::new();
        for total in [1usize, 3, 100, 255, 256, 1000] {
            let mut left = total;
            let mut n_stmts = 0;
            while left > 0 {
                let n = CHUNK_ROWS.into_iter().find(|&c| c <= left).unwrap_or(1);
                shapes.push(n);
                left -= n;
                n_stmts += 1;
            }
            assert!(n_stmts <= 16, "{total} rows took {n_stmts} statements");
        }
        shapes.sort_unstable();
        shapes.dedup();
        assert_eq!(shapes, CHUNK_ROWS.iter().rev().copied().collect::<Vec<_>>());
    }
}
