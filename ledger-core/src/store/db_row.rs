//! A row of a read: from sqlx (`AnyRow`, PostgreSQL) or from the SQLite read path (`lite`).
//! Columns are read as with sqlx (`try_get::<T, _>(name or ordinal)`), with the `Any`
//! driver's rules on SQLite values: integers for `i64`, texts for `String`, NULL only into an
//! `Option`, so a decoder reads both kinds of row alike and fails alike.

use std::sync::Arc;

use rusqlite::types::Value;
use sqlx::any::AnyRow;
use sqlx::Any;

#[derive(Clone)]
pub(super) enum DbRow {
    Any(AnyRow),
    Lite(LiteRow),
}

/// A row read by `lite`: its statement's column names (shared by its rows, and kept with the
/// statement's text across reads) and its values.
#[derive(Clone)]
pub(super) struct LiteRow {
    pub(super) names: Arc<Names>,
    pub(super) vals: Vec<Value>,
}

/// A statement's column names. A decoder finds a column by comparing names in order: an index
/// by name measured no faster on the read benchmarks (`docs/benchmarks.md`, "Machinery").
pub(super) struct Names {
    list: Vec<String>,
}

impl Names {
    pub(super) fn new(list: Vec<String>) -> Names {
        Names { list }
    }

    pub(super) fn len(&self) -> usize {
        self.list.len()
    }

    /// The first column named `name`.
    fn position(&self, name: &str) -> Option<usize> {
        self.list.iter().position(|n| n == name)
    }
}

/// A column by name or ordinal.
pub(super) trait Col: sqlx::ColumnIndex<AnyRow> + std::fmt::Debug {
    fn position(&self, names: &Names) -> Option<usize>;
}

impl Col for &str {
    fn position(&self, names: &Names) -> Option<usize> {
        names.position(self)
    }
}

impl Col for usize {
    fn position(&self, names: &Names) -> Option<usize> {
        (*self < names.len()).then_some(*self)
    }
}

/// A Rust value a column is read into.
pub(super) trait Get: Sized + sqlx::Type<Any> + for<'r> sqlx::Decode<'r, Any> {
    /// From a non-NULL SQLite value.
    fn from_lite(v: &Value) -> Option<Self>;
    /// From a NULL (only an `Option` takes one).
    fn from_null() -> Option<Self> {
        None
    }
}

impl Get for String {
    fn from_lite(v: &Value) -> Option<Self> {
        match v {
            Value::Text(s) => Some(s.clone()),
            _ => None,
        }
    }
}

impl Get for i64 {
    fn from_lite(v: &Value) -> Option<Self> {
        match v {
            Value::Integer(i) => Some(*i),
            _ => None,
        }
    }
}

impl Get for i32 {
    fn from_lite(v: &Value) -> Option<Self> {
        i64::from_lite(v).and_then(|i| i32::try_from(i).ok())
    }
}

impl Get for f64 {
    fn from_lite(v: &Value) -> Option<Self> {
        match v {
            Value::Real(r) => Some(*r),
            _ => None,
        }
    }
}

impl Get for Vec<u8> {
    fn from_lite(v: &Value) -> Option<Self> {
        match v {
            Value::Blob(b) => Some(b.clone()),
            _ => None,
        }
    }
}

impl<T: Get> Get for Option<T> {
    fn from_lite(v: &Value) -> Option<Self> {
        T::from_lite(v).map(Some)
    }
    fn from_null() -> Option<Self> {
        Some(None)
    }
}

impl DbRow {
    pub(super) fn try_get<T: Get, I: Col>(&self, col: I) -> Result<T, sqlx::Error> {
        match self {
            DbRow::Any(r) => sqlx::Row::try_get(r, col),
            DbRow::Lite(r) => {
                let i =
                    col.position(&r.names).ok_or_else(|| sqlx::Error::ColumnNotFound(format!("{col:?}")))?;
                let v = &r.vals[i];
                let got = match v {
                    Value::Null => T::from_null(),
                    v => T::from_lite(v),
                };
                got.ok_or_else(|| sqlx::Error::ColumnDecode {
                    index: format!("{col:?}"),
                    source: format!("expected {}, got {v:?}", std::any::type_name::<T>()).into(),
                })
            }
        }
    }
}

impl DbRow {
    /// Column `col`'s text, moved out of a SQLite row (which then holds NULL there); copied
    /// from a sqlx row.
    pub(super) fn take_text(&mut self, col: &str) -> Result<String, sqlx::Error> {
        self.take_opt_text(col)?.ok_or_else(|| sqlx::Error::ColumnDecode {
            index: format!("{col:?}"),
            source: "expected alloc::string::String, got Null".into(),
        })
    }

    /// [`DbRow::take_text`] of a column that may be NULL.
    pub(super) fn take_opt_text(&mut self, col: &str) -> Result<Option<String>, sqlx::Error> {
        match self {
            DbRow::Any(r) => sqlx::Row::try_get(r, col),
            DbRow::Lite(r) => {
                let i =
                    col.position(&r.names).ok_or_else(|| sqlx::Error::ColumnNotFound(format!("{col:?}")))?;
                match std::mem::replace(&mut r.vals[i], Value::Null) {
                    Value::Null => Ok(None),
                    Value::Text(s) => Ok(Some(s)),
                    v => {
                        let err = sqlx::Error::ColumnDecode {
                            index: format!("{col:?}"),
                            source: format!("expected alloc::string::String, got {v:?}").into(),
                        };
                        r.vals[i] = v;
                        Err(err)
                    }
                }
            }
        }
    }
}

/// A column read by name: what the row decoders shared by both engines take (a `DbRow`; a
/// `&mut DbRow` moves texts out instead, `explorer_tx::TxCols`).
pub(super) trait Cols {
    fn text(&self, col: &str) -> Result<String, sqlx::Error>;
    fn opt_text(&self, col: &str) -> Result<Option<String>, sqlx::Error>;
    fn int(&self, col: &str) -> Result<i64, sqlx::Error>;
    fn opt_int(&self, col: &str) -> Result<Option<i64>, sqlx::Error>;
    /// A flag selected as `CASE WHEN … THEN 1 ELSE 0 END`.
    fn flag(&self, col: &str) -> Result<bool, sqlx::Error>;
}

impl Cols for DbRow {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn lite(names: &[&str], vals: Vec<Value>) -> DbRow {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        DbRow::Lite(LiteRow { names: Arc::new(Names::new(names)), vals })
    }

    #[test]
    fn taken_texts_are_moved_out_once() {
        let mut r = lite(&["a", "n", "i"], vec![Value::Text("x".into()), Value::Null, Value::Integer(3)]);
        assert_eq!(r.take_text("a").unwrap(), "x");
        // Taken: NULL from then on, as a text column read twice would be a bug.
        assert_eq!(r.take_opt_text("a").unwrap(), None);
        assert!(r.take_text("a").is_err());
        assert_eq!(r.take_opt_text("n").unwrap(), None);
        assert!(r.take_text("n").is_err());
        // Not a text: an error, and the value stays.
        assert!(r.take_opt_text("i").is_err());
        assert_eq!(r.try_get::<i64, _>("i").unwrap(), 3);
        assert!(matches!(r.take_text("missing"), Err(sqlx::Error::ColumnNotFound(_))));
    }

    #[test]
    fn the_first_column_of_a_name_is_found() {
        let names = Names::new(["tx_id", "a", "b", "a"].iter().map(|n| n.to_string()).collect());
        assert_eq!(names.position("a"), Some(1));
        assert_eq!(names.position("tx_id"), Some(0));
        assert_eq!(names.position("missing"), None);
        assert_eq!(Names::new(vec![]).position("a"), None);
    }

    #[test]
    fn lite_rows_decode_as_the_any_driver_does() {
        let r = lite(
            &["a", "b", "c", "d"],
            vec![Value::Text("x".into()), Value::Integer(7), Value::Null, Value::Real(1.5)],
        );
        assert_eq!(r.try_get::<String, _>("a").unwrap(), "x");
        assert_eq!(r.try_get::<i64, _>("b").unwrap(), 7);
        assert_eq!(r.try_get::<i64, _>(1).unwrap(), 7);
        assert_eq!(r.try_get::<Option<i64>, _>("c").unwrap(), None);
        assert_eq!(r.try_get::<Option<String>, _>("a").unwrap().as_deref(), Some("x"));
        assert_eq!(r.try_get::<f64, _>("d").unwrap(), 1.5);
        assert!(r.flag("b").unwrap());
        // NULL only into an Option; no conversions between integers and texts.
        assert!(r.try_get::<i64, _>("c").is_err());
        assert!(r.try_get::<String, _>("b").is_err());
        assert!(r.try_get::<i64, _>("a").is_err());
        assert!(r.try_get::<Option<i64>, _>("a").is_err());
        assert!(matches!(r.try_get::<i64, _>("missing"), Err(sqlx::Error::ColumnNotFound(_))));
        assert!(r.try_get::<i64, _>(9).is_err());
    }
}
