//! The v3 list envelope `{total, limit, cursor: {next, previous, current}, results}` and the
//! per-resource `limit` rules of the incumbent's `pagingQueryLimits`, validated as its v3
//! schema validates them (`minimum: 1`, the resource's `maximum`; absent means the default).

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

    /// [`CursorPage::map`] with a fallible renderer.
    pub fn try_map<U, E>(self, f: impl FnMut(T) -> Result<U, E>) -> Result<CursorPage<U>, E> {
        let results = self.results.into_iter().map(f).collect::<Result<Vec<U>, E>>()?;
        Ok(CursorPage { total: self.total, limit: self.limit, cursor: self.cursor, results })
    }
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
