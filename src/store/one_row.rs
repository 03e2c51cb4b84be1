//! A page of rows read as ONE row: the engine aggregates the page into a JSON array of one
//! array per row (SQLite `json_group_array`, PostgreSQL `json_agg`), and the reader decodes it
//! here. sqlx's SQLite driver runs each connection on a worker thread and hands every row to
//! the async task through a channel, each row converted column by column into an `AnyRow`:
//! on a 50-row page that hand-off and its allocations cost more than the query itself
//! (`perf` of the uncached list routes). One row, one text column, crosses instead.
//!
//! [`Cols`] reads a column the same way from an `AnyRow` and from a row of such a page, so
//! that one decoder (e.g. `explorer_tx::mined_tx`) serves both.

use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::Row;

use super::db_row::DbRow;
use super::sql::{select, Val};
use super::{Engine, Store};

/// The output names of a select list: each top-level item's alias (`… AS name`), else its last
/// identifier (`t.tx_id` → `tx_id`).
pub(super) fn column_names(columns: &str) -> Vec<String> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in columns.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&columns[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&columns[start..]);
    items
        .into_iter()
        .map(|item| {
            let item = item.trim();
            let name = match item.rfind(" AS ") {
                Some(k) if !item[k..].contains(')') => &item[k + 4..],
                _ => item.rsplit('.').next().unwrap_or(item),
            };
            name.trim().to_string()
        })
        .collect()
}

/// `inner` (a SELECT whose output columns are `names`) as one value, for a select list: a
/// scalar subquery giving a JSON array that holds one array per row (values in `names`
/// order), in `inner`'s order (both engines aggregate a sorted subquery's rows in its order).
pub(super) fn rows_sql(engine: Engine, names: &[String], inner: &str) -> String {
    let cols: Vec<String> = names.iter().map(|n| format!("p.{n}")).collect();
    let cols = cols.join(", ");
    match engine {
        Engine::Sqlite => format!("(SELECT json_group_array(json_array({cols})) FROM ({inner}) p)"),
        Engine::Postgres => format!(
            "(SELECT CAST(COALESCE(json_agg(json_build_array({cols})), '[]') AS TEXT) FROM ({inner}) p)"
        ),
    }
}

/// The rows of a [`rows_sql`] answer's `rows` text.
pub(super) fn decode_rows<'n>(names: &'n [String], text: &str) -> Result<Vec<JsonRow<'n>>, sqlx::Error> {
    let rows: Vec<Vec<Value>> = serde_json::from_str(text).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
    Ok(rows.into_iter().map(|vals| JsonRow { names, vals }).collect())
}

/// A row of a page read by [`Store::page_rows`]: as read, or one of a [`rows_sql`] answer.
pub(super) enum PageRow<'n> {
    Db(DbRow),
    Json(JsonRow<'n>),
}

impl Store {
    /// The rows of `inner` (a SELECT whose output columns are `names`, bound to `vals`). On
    /// SQLite the store reads on the calling thread (`lite`), where rows cross for free: they
    /// come as rows, since one JSON row would be built, escaped and parsed again for nothing
    /// (more CPU than the page query itself). Elsewhere as one row ([`rows_sql`]).
    pub(super) async fn page_rows<'n>(
        &self,
        names: &'n [String],
        inner: &str,
        vals: Vec<Val>,
    ) -> Result<Vec<PageRow<'n>>, sqlx::Error> {
        if self.lite().is_some() {
            return Ok(select(inner, vals).fetch_all(self).await?.into_iter().map(PageRow::Db).collect());
        }
        let sql = format!("SELECT {} AS rows", rows_sql(self.engine, names, inner));
        let text: Option<String> = select(&sql, vals).fetch_one(self).await?.try_get("rows")?;
        Ok(decode_rows(names, text.as_deref().unwrap_or("[]"))?.into_iter().map(PageRow::Json).collect())
    }
}

impl PageRow<'_> {
    /// Column `col`'s text, moved out of a SQLite row ([`DbRow::take_text`]), else copied.
    pub(super) fn take_text(&mut self, col: &str) -> Result<String, sqlx::Error> {
        match self {
            PageRow::Db(r) => r.take_text(col),
            PageRow::Json(r) => r.text(col),
        }
    }
}

impl Cols for PageRow<'_> {
    fn text(&self, col: &str) -> Result<String, sqlx::Error> {
        match self {
            PageRow::Db(r) => r.text(col),
            PageRow::Json(r) => r.text(col),
        }
    }
    fn opt_text(&self, col: &str) -> Result<Option<String>, sqlx::Error> {
        match self {
            PageRow::Db(r) => r.opt_text(col),
            PageRow::Json(r) => r.opt_text(col),
        }
    }
    fn int(&self, col: &str) -> Result<i64, sqlx::Error> {
        match self {
            PageRow::Db(r) => r.int(col),
            PageRow::Json(r) => r.int(col),
        }
    }
    fn opt_int(&self, col: &str) -> Result<Option<i64>, sqlx::Error> {
        match self {
            PageRow::Db(r) => r.opt_int(col),
            PageRow::Json(r) => r.opt_int(col),
        }
    }
    fn flag(&self, col: &str) -> Result<bool, sqlx::Error> {
        match self {
            PageRow::Db(r) => r.flag(col),
            PageRow::Json(r) => r.flag(col),
        }
    }
}

/// One row of a [`rows_sql`] page.
pub(super) struct JsonRow<'n> {
    names: &'n [String],
    vals: Vec<Value>,
}

impl JsonRow<'_> {
    fn get(&self, col: &str) -> Result<&Value, sqlx::Error> {
        self.names
            .iter()
            .position(|n| n == col)
            .and_then(|i| self.vals.get(i))
            .ok_or_else(|| sqlx::Error::ColumnNotFound(col.to_string()))
    }
}

fn mismatch(col: &str, want: &str, v: &Value) -> sqlx::Error {
    sqlx::Error::Decode(format!("column {col}: expected {want}, found {v}").into())
}

/// A column read by name, from either kind of row.
pub(super) trait Cols {
    fn text(&self, col: &str) -> Result<String, sqlx::Error>;
    fn opt_text(&self, col: &str) -> Result<Option<String>, sqlx::Error>;
    fn int(&self, col: &str) -> Result<i64, sqlx::Error>;
    fn opt_int(&self, col: &str) -> Result<Option<i64>, sqlx::Error>;
    /// A flag selected as `CASE WHEN … THEN 1 ELSE 0 END` (or a boolean).
    fn flag(&self, col: &str) -> Result<bool, sqlx::Error>;
}

impl Cols for AnyRow {
    fn text(&self, col: &str) -> Result<String, sqlx::Error> {
        self.try_get(col)
    }
    fn opt_text(&self, col: &str) -> Result<Option<String>, sqlx::Error> {
        self.try_get(col)
    }
    fn int(&self, col: &str) -> Result<i64, sqlx::Error> {
        self.try_get(col)
    }
    fn opt_int(&self, col: &str) -> Result<Option<i64>, sqlx::Error> {
        self.try_get(col)
    }
    fn flag(&self, col: &str) -> Result<bool, sqlx::Error> {
        Ok(self.try_get::<i64, _>(col)? != 0)
    }
}

impl Cols for JsonRow<'_> {
    fn text(&self, col: &str) -> Result<String, sqlx::Error> {
        self.opt_text(col)?.ok_or_else(|| sqlx::Error::Decode(format!("column {col} is NULL").into()))
    }
    fn opt_text(&self, col: &str) -> Result<Option<String>, sqlx::Error> {
        match self.get(col)? {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s.clone())),
            v => Err(mismatch(col, "text", v)),
        }
    }
    fn int(&self, col: &str) -> Result<i64, sqlx::Error> {
        self.opt_int(col)?.ok_or_else(|| sqlx::Error::Decode(format!("column {col} is NULL").into()))
    }
    fn opt_int(&self, col: &str) -> Result<Option<i64>, sqlx::Error> {
        match self.get(col)? {
            Value::Null => Ok(None),
            v @ Value::Number(n) => n.as_i64().map(Some).ok_or_else(|| mismatch(col, "an integer", v)),
            v => Err(mismatch(col, "an integer", v)),
        }
    }
    fn flag(&self, col: &str) -> Result<bool, sqlx::Error> {
        match self.get(col)? {
            Value::Bool(b) => Ok(*b),
            _ => Ok(self.int(col)? != 0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_aliases_or_last_identifiers() {
        let cols = "t.tx_id, (CASE WHEN t.canonical THEN 1 ELSE 0 END) AS canonical, \
                    COALESCE(t.microblock_sequence, 2147483647) AS seq, b.block_time, raw_tx";
        assert_eq!(column_names(cols), ["tx_id", "canonical", "seq", "block_time", "raw_tx"]);
    }

    #[test]
    fn json_rows_read_like_sql_rows() {
        let names = column_names("a, b, c AS flag, d");
        let rows = decode_rows(&names, r#"[["x",7,1,null],["y",-2,true,"z"]]"#).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].text("a").unwrap(), "x");
        assert_eq!(rows[0].int("b").unwrap(), 7);
        assert!(rows[0].flag("flag").unwrap());
        assert_eq!(rows[0].opt_text("d").unwrap(), None);
        assert_eq!(rows[1].opt_int("b").unwrap(), Some(-2));
        assert!(rows[1].flag("flag").unwrap());
        assert_eq!(rows[1].opt_text("d").unwrap().as_deref(), Some("z"));
        assert!(rows[0].text("d").is_err());
        assert!(rows[0].int("a").is_err());
        assert!(rows[0].text("missing").is_err());
    }
}
