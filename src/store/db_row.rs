//! A row of a read: from sqlx (`AnyRow`, PostgreSQL) or from the SQLite read path (`lite`).
//! Columns are read as with sqlx (`try_get::<T, _>(name or ordinal)`), with the `Any`
//! driver's rules on SQLite values: integers for `i64`, texts for `String`, NULL only into an
//! `Option`, so a decoder reads both kinds of row alike and fails alike.

use std::sync::Arc;

use rusqlite::types::Value;
use sqlx::any::AnyRow;
use sqlx::Any;

use super::one_row::Cols;

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

/// A statement's column names, with an index by name: a row decoder reads ~30 columns by name
/// (a linear search comparing names was ~3 % of a transaction list's CPU; a sorted index of
/// FNV hashes, hashing every byte and searching by halves, still 5 %).
pub(super) struct Names {
    list: Vec<String>,
    /// Open addressing by [`name_key`]: `position + 1` of each name (the first of duplicates),
    /// 0 for an empty slot; at most half full, a power of two long.
    slots: Vec<u16>,
}

impl Names {
    pub(super) fn new(list: Vec<String>) -> Names {
        let len = (list.len() * 2).next_power_of_two().max(16);
        let mut names = Names { list, slots: vec![0; len] };
        for i in 0..names.list.len().min(usize::from(u16::MAX) - 1) {
            // The first of equal names keeps the slot: it is the one found.
            if names.position(&names.list[i]).is_none() {
                let mut at = names.start(&names.list[i]);
                while names.slots[at] != 0 {
                    at = (at + 1) & (names.slots.len() - 1);
                }
                names.slots[at] = u16::try_from(i + 1).unwrap_or(u16::MAX);
            }
        }
        names
    }

    pub(super) fn len(&self) -> usize {
        self.list.len()
    }

    fn start(&self, name: &str) -> usize {
        name_key(name.as_bytes()) & (self.slots.len() - 1)
    }

    /// The first column named `name`.
    fn position(&self, name: &str) -> Option<usize> {
        let mut at = self.start(name);
        loop {
            let i = usize::from(self.slots[at]).checked_sub(1)?;
            if self.list[i] == name {
                return Some(i);
            }
            at = (at + 1) & (self.slots.len() - 1);
        }
    }
}

/// A hash of a column name from its length and its first and last 8 bytes: O(1) whatever the
/// name (names are trusted: they come from our own statements; collisions only cost a probe).
fn name_key(b: &[u8]) -> usize {
    let n = b.len();
    let word = |s: &[u8]| s.iter().rev().fold(0u64, |w, &x| (w << 8) | u64::from(x));
    let (head, tail) = match (b.first_chunk::<8>(), b.last_chunk::<8>()) {
        (Some(h), Some(t)) => (u64::from_le_bytes(*h), u64::from_le_bytes(*t)),
        _ => (word(b), 0),
    };
    let h = (head ^ tail.rotate_left(29) ^ n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> 32) as usize
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
    fn names_are_found_as_a_linear_search_finds_them() {
        let list: Vec<String> =
            ["tx_id", "a", "b", "a", "", "execution_cost_read_count", "execution_cost_read_length", "tx_id"]
                .iter()
                .map(|n| n.to_string())
                .collect();
        let names = Names::new(list.clone());
        for probe in list.iter().map(String::as_str).chain(["missing", "tx_i", "A"]) {
            assert_eq!(names.position(probe), list.iter().position(|n| n == probe), "{probe}");
        }
        assert_eq!(Names::new(vec![]).position("a"), None);
        // Many names sharing their first and last bytes and lengths (colliding keys).
        let list: Vec<String> = (0..200).map(|i| format!("col_{i:03}_x")).collect();
        let names = Names::new(list.clone());
        for (i, n) in list.iter().enumerate() {
            assert_eq!(names.position(n), Some(i), "{n}");
        }
        assert_eq!(names.position("col_200_x"), None);
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
