//! The v3 list envelope `{total, limit, cursor: {next, previous, current}, results}` and the
//! per-resource `limit` rules of the incumbent's `pagingQueryLimits`, validated as its v3
//! schema validates them (`minimum: 1`, the resource's `maximum`; absent means the default),
//! and [`paged`], the pager of the lists read whole before paging (a principal's balances and
//! balance changes).

use serde::Serialize;

use crate::error::{ApiError, In, Rule};
use crate::params::{non_negative, LimitRule, Query};

/// `ResourceType.Tx`: transactions, mempool transactions, balance changes, bonds.
pub const TX: LimitRule = LimitRule::new(20, 50);
/// `ResourceType.Event`: a transaction's events.
pub const EVENT: LimitRule = LimitRule::new(20, 100);
/// `ResourceType.FtBalance`.
pub const FT_BALANCE: LimitRule = LimitRule::new(100, 200);
/// `ResourceType.NftBalance`.
pub const NFT_BALANCE: LimitRule = LimitRule::new(100, 200);
/// `ResourceType.Signer`: staking signers, a cycle's signers, a signer's stakers.
pub const SIGNER: LimitRule = LimitRule::new(100, 250);
/// A signer's stakers: the `ResourceType.Signer` default, the `ResourceType.Stacker` maximum
/// (the incumbent's route mixes the two).
pub const STAKER: LimitRule = LimitRule::new(100, 200);

/// The page's cursors: each `null` when there is no such page (all three on an empty page).
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Cursors {
    pub next: Option<String>,
    pub previous: Option<String>,
    pub current: Option<String>,
}

/// One page of a v3 list.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CursorPage<T> {
    pub total: u64,
    pub limit: u32,
    pub cursor: Cursors,
    pub results: Vec<T>,
}

impl<T> CursorPage<T> {
    pub fn new(total: u64, limit: u32, cursor: Cursors, results: Vec<T>) -> Self {
        CursorPage { total, limit, cursor, results }
    }

    /// Renders each row with `f`, keeping the envelope.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> CursorPage<U> {
        CursorPage {
            total: self.total,
            limit: self.limit,
            cursor: self.cursor,
            results: self.results.into_iter().map(f).collect(),
        }
    }
}

/// Where the previous page's cursor points: the incumbent finds it with one of two lookups
/// from the page's first row, backwards in page order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Previous {
    /// The furthest of up to `limit` rows before (`LIMIT limit`, its last row): any row before
    /// the page gives one (FT and NFT balances, as every keyset list of the incumbent).
    UpToLimit,
    /// The row exactly `limit` rows before (`OFFSET limit - 1 LIMIT 1`): none unless a whole
    /// page precedes (a principal's balance changes).
    WholePage,
}

/// Pages `rows` (the whole list, in page order) from the first row `before` does not hold for
/// (`before(row)`: the row comes before the request's cursor in page order; every cursor is
/// inclusive, naming a page's first row). `total` is the list's length, 0 on an empty page as
/// the incumbent reads it with the page's rows; `encode` writes a row's cursor.
pub fn paged<T>(
    rows: Vec<T>,
    limit: u32,
    previous: Previous,
    before: impl Fn(&T) -> bool,
    encode: impl Fn(&T) -> String,
) -> CursorPage<T> {
    let total = rows.len() as u64;
    let n = limit as usize;
    let start = rows.iter().position(|row| !before(row)).unwrap_or(rows.len());
    if start == rows.len() {
        return CursorPage::new(0, limit, Cursors::default(), vec![]);
    }
    let back = match previous {
        Previous::UpToLimit => (start > 0).then(|| start.saturating_sub(n)),
        Previous::WholePage => start.checked_sub(n),
    };
    let cursors = Cursors {
        next: rows.get(start + n).map(&encode),
        previous: back.map(|i| encode(&rows[i])),
        current: Some(encode(&rows[start])),
    };
    CursorPage::new(total, limit, cursors, rows.into_iter().skip(start).take(n).collect())
}

/// The request's `limit` under `rule`: absent is the default; `0` or less, above the maximum,
/// or not an integer is the validator's error (`querystring/limit must be >= 1`, ...).
pub fn limit(q: &Query, rule: LimitRule) -> Result<u32, ApiError> {
    let Some(raw) = q.get("limit") else { return Ok(rule.default) };
    let v = match non_negative(In::Query, "limit", raw) {
        Ok(v) => v,
        Err(_) if raw.trim().parse::<i64>().is_ok() => {
            return Err(ApiError::schema(In::Query, "limit", Rule::Min(1)))
        }
        Err(e) => return Err(e),
    };
    match v {
        0 => Err(ApiError::schema(In::Query, "limit", Rule::Min(1))),
        v if v > u64::from(rule.max) => Err(ApiError::schema(In::Query, "limit", Rule::Max(rule.max.into()))),
        v => Ok(v as u32),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(e: ApiError) -> String {
        match e {
            ApiError::InvalidParam { message, .. } => message,
            other => panic!("{other}"),
        }
    }

    #[test]
    fn limits_are_validated_as_the_v3_schema() {
        assert_eq!(limit(&Query::parse(""), TX).unwrap(), 20);
        assert_eq!(limit(&Query::parse("limit=50"), TX).unwrap(), 50);
        assert_eq!(limit(&Query::parse("limit=100"), EVENT).unwrap(), 100);
        assert_eq!(msg(limit(&Query::parse("limit=51"), TX).unwrap_err()), "querystring/limit must be <= 50");
        assert_eq!(msg(limit(&Query::parse("limit=0"), TX).unwrap_err()), "querystring/limit must be >= 1");
        assert_eq!(msg(limit(&Query::parse("limit=-3"), TX).unwrap_err()), "querystring/limit must be >= 1");
        assert_eq!(
            msg(limit(&Query::parse("limit=x"), TX).unwrap_err()),
            "querystring/limit must be integer"
        );
    }

    #[test]
    fn pages_point_back_as_the_incumbents_two_lookups() {
        let rows: Vec<u32> = (0..5).collect();
        let page =
            |limit, previous, from: u32| paged(rows.clone(), limit, previous, |v| *v < from, u32::to_string);
        let p = page(2, Previous::UpToLimit, 3);
        assert_eq!(p.results, [3, 4]);
        assert_eq!(p.total, 5);
        assert_eq!(
            (p.cursor.previous.as_deref(), p.cursor.current.as_deref(), p.cursor.next.as_deref()),
            (Some("1"), Some("3"), None)
        );
        // One row before a page of two: up to `limit` back finds it, a whole page back does not.
        let p = page(2, Previous::UpToLimit, 1);
        assert_eq!((p.cursor.previous.as_deref(), p.cursor.next.as_deref()), (Some("0"), Some("3")));
        assert_eq!(page(2, Previous::WholePage, 1).cursor.previous, None);
        assert_eq!(page(2, Previous::WholePage, 2).cursor.previous.as_deref(), Some("0"));
        assert_eq!(page(2, Previous::UpToLimit, 0).cursor.previous, None);
        // Past the end: the empty page, all cursors null and total 0.
        let p = page(2, Previous::UpToLimit, 9);
        assert_eq!((p.total, p.cursor, p.results.len()), (0, Cursors::default(), 0));
    }

    #[test]
    fn the_envelope_serializes_with_null_cursors_when_empty() {
        let page: CursorPage<u8> = CursorPage::new(0, 20, Cursors::default(), vec![]);
        assert_eq!(
            serde_json::to_string(&page).unwrap(),
            r#"{"total":0,"limit":20,"cursor":{"next":null,"previous":null,"current":null},"results":[]}"#
        );
        let page =
            CursorPage::new(3, 2, Cursors { next: Some("1:0:0".into()), ..Default::default() }, vec![1, 2]);
        let doubled = page.map(|v| v * 2);
        assert_eq!(doubled.results, [2, 4]);
        assert_eq!(doubled.cursor.next.as_deref(), Some("1:0:0"));
    }
}
