//! Keyset windows over rows already in page order, as the incumbent computes them in SQL: the
//! page starts at the first row at or after the cursor; `next` is the row after the page,
//! `previous` the row `limit` rows before its start (or the first row when fewer precede it),
//! `current` the page's first row; all `null` on an empty page.

use serde_json::Value;

use crate::v3::page::{CursorPage, Cursors};

/// The rows of one page and its cursors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window<'a, T> {
    pub rows: &'a [T],
    pub next: Option<String>,
    pub previous: Option<String>,
    pub current: Option<String>,
}

/// The page of `limit` rows from `start` (the first row the cursor admits) of `rows`.
pub fn window<T>(rows: &[T], start: usize, limit: usize, key: impl Fn(&T) -> String) -> Window<'_, T> {
    let start = start.min(rows.len());
    let end = (start + limit).min(rows.len());
    let page = &rows[start..end];
    let first = page.first();
    Window {
        rows: page,
        next: rows.get(end).filter(|_| end > start).map(&key),
        previous: first.filter(|_| start > 0).map(|_| key(&rows[start.saturating_sub(limit)])),
        current: first.map(&key),
    }
}

/// The window as the v3 envelope, its rows rendered by `render`.
pub fn to_page<T>(total: i64, limit: u32, w: &Window<'_, T>, render: impl Fn(&T) -> Value) -> Value {
    let cursor = Cursors { next: w.next.clone(), previous: w.previous.clone(), current: w.current.clone() };
    let page = CursorPage::new(
        u64::try_from(total).unwrap_or(0),
        limit,
        cursor,
        w.rows.iter().map(render).collect(),
    );
    serde_json::to_value(page).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_follow_the_incumbents_keyset_rules() {
        let rows: Vec<i64> = (0..7).collect();
        let k = |r: &i64| r.to_string();
        let w = window(&rows, 0, 3, k);
        assert_eq!(
            (w.rows, w.next.as_deref(), w.previous, w.current.as_deref()),
            (&rows[0..3], Some("3"), None, Some("0"))
        );
        let w = window(&rows, 3, 3, k);
        assert_eq!((w.next.as_deref(), w.previous.as_deref()), (Some("6"), Some("0")));
        // Fewer than `limit` rows precede the start: `previous` is the first row.
        let w = window(&rows, 2, 3, k);
        assert_eq!(w.previous.as_deref(), Some("0"));
        let w = window(&rows, 6, 3, k);
        assert_eq!((w.rows, w.next, w.previous.as_deref()), (&rows[6..7], None, Some("3")));
        let w = window(&rows, 9, 3, k);
        assert_eq!((w.rows.len(), w.next, w.previous, w.current), (0, None, None, None));
    }
}
