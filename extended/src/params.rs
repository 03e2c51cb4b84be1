//! Query-string parameters shared by every `/extended` route: the raw pairs (repeated keys kept,
//! for the incumbent's `type=a&type=b` arrays), typed accessors that turn a bad value into the
//! spec's invalid-parameter error, and the `{limit, offset, total, results}` envelope.

use serde::Serialize;
use warp::Filter;

use crate::error::{ApiError, In, Rule};

/// The decoded query string of one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query(Vec<(String, String)>);

/// A route's `limit` rule from the incumbent's table: the default and the maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitRule {
    pub default: u32,
    pub max: u32,
}

impl LimitRule {
    pub const fn new(default: u32, max: u32) -> Self {
        LimitRule { default, max }
    }
}

/// `limit` and `offset` after validation: the read interface's page.
pub use ledger_read::Paging;

/// The incumbent's list envelope.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Page<T> {
    pub limit: u32,
    pub offset: u64,
    pub total: u64,
    pub results: Vec<T>,
}

impl<T> Page<T> {
    pub fn new(paging: Paging, total: u64, results: Vec<T>) -> Self {
        Page { limit: paging.limit, offset: paging.offset, total, results }
    }

    /// A page whose `total` the incumbent reads from the page's first row (`COUNT(*) OVER()`
    /// or a count joined to each row): 0 when the page is empty, as past the end.
    pub fn first_row_total(paging: Paging, total: u64, results: Vec<T>) -> Self {
        let total = if results.is_empty() { 0 } else { total };
        Page::new(paging, total, results)
    }
}

/// Extracts the request's [`Query`] (empty when there is no query string).
pub fn query() -> impl Filter<Extract = (Query,), Error = std::convert::Infallible> + Clone {
    warp::query::raw().or(warp::any().map(String::new)).unify().map(|raw: String| Query::parse(&raw))
}

impl Query {
    pub fn parse(raw: &str) -> Self {
        Query(serde_urlencoded::from_str::<Vec<(String, String)>>(raw).unwrap_or_default())
    }

    /// The first value of `name`, if present.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// Every value of `name`, accepting both repeated keys and comma lists (`type=a,b`), and the
    /// `name[]` form generated clients send.
    pub fn all(&self, name: &str) -> Vec<String> {
        let bracket = format!("{name}[]");
        self.0
            .iter()
            .filter(|(k, _)| k == name || *k == bracket)
            .flat_map(|(_, v)| v.split(','))
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(String::from)
            .collect()
    }

    /// An unsigned integer parameter; a malformed value is the spec's invalid-parameter error.
    pub fn u64(&self, name: &'static str) -> Result<Option<u64>, ApiError> {
        self.get(name).map(|v| non_negative(In::Query, name, v)).transpose()
    }

    /// A boolean parameter as the incumbent coerces them: `true`/`1` and `false`/`0`.
    pub fn bool(&self, name: &'static str) -> Result<Option<bool>, ApiError> {
        self.get(name)
            .map(|v| match v.trim() {
                "true" | "1" => Ok(true),
                "false" | "0" => Ok(false),
                _ => Err(ApiError::schema(In::Query, name, Rule::Boolean)),
            })
            .transpose()
    }

    /// `limit` (default and maximum from `rule`; above the maximum is an invalid value, as the
    /// incumbent's schema has it; `limit=0` means the default, as the incumbent reads it) and
    /// `offset`.
    pub fn paging(&self, rule: LimitRule) -> Result<Paging, ApiError> {
        let limit = match self.u64("limit")? {
            None | Some(0) => rule.default,
            Some(l) if l > u64::from(rule.max) => {
                return Err(ApiError::schema(In::Query, "limit", Rule::Max(rule.max.into())))
            }
            Some(l) => l as u32,
        };
        let offset = self.u64("offset")?.unwrap_or(0);
        Ok(Paging { limit, offset })
    }

    /// Like [`Query::paging`] for routes whose parameters have other names (`event_limit`,
    /// `event_offset`); 0 means the default here too (the incumbent's `getPagingQueryLimit`).
    pub fn paging_named(
        &self,
        rule: LimitRule,
        limit_name: &'static str,
        offset_name: &'static str,
    ) -> Result<Paging, ApiError> {
        let limit = match self.u64(limit_name)? {
            None | Some(0) => rule.default,
            Some(l) if l > u64::from(rule.max) => {
                return Err(ApiError::schema(In::Query, limit_name, Rule::Max(rule.max.into())))
            }
            Some(l) => l as u32,
        };
        let offset = self.u64(offset_name)?.unwrap_or(0);
        Ok(Paging { limit, offset })
    }
}

/// A non-negative integer parameter: an integer below 0 breaks the incumbent's `minimum: 0`,
/// anything else that is not an integer its `type: integer`.
pub fn non_negative(place: In, name: &'static str, raw: &str) -> Result<u64, ApiError> {
    let v = raw.trim();
    v.parse::<u64>().map_err(|_| match v.parse::<i64>() {
        Ok(_) => ApiError::schema(place, name, Rule::Min(0)),
        Err(_) => ApiError::schema(place, name, Rule::Integer),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_keys_comma_lists_and_brackets_all_count() {
        let q = Query::parse("type=coinbase,token_transfer&type=smart_contract&type%5B%5D=tenure_change&x=1");
        assert_eq!(q.all("type"), ["coinbase", "token_transfer", "smart_contract", "tenure_change"]);
        assert_eq!(q.get("x"), Some("1"));
        assert!(q.all("nothing").is_empty());
    }

    #[test]
    fn paging_defaults_and_limits() {
        let rule = LimitRule::new(20, 50);
        assert_eq!(Query::parse("").paging(rule).unwrap(), Paging { limit: 20, offset: 0 });
        assert_eq!(Query::parse("limit=50&offset=7").paging(rule).unwrap(), Paging { limit: 50, offset: 7 });
        assert_eq!(Query::parse("limit=0&offset=3").paging(rule).unwrap(), Paging { limit: 20, offset: 3 });
        let e = Query::parse("limit=51").paging(rule).unwrap_err();
        assert!(matches!(e, ApiError::InvalidParam { param: "limit", .. }), "{e}");
        assert!(e.to_string().contains("50"));
        let e = Query::parse("offset=-1").paging(rule).unwrap_err();
        assert!(matches!(e, ApiError::InvalidParam { param: "offset", .. }), "{e}");
        assert!(e.to_string().ends_with("querystring/offset must be >= 0"), "{e}");
        let e = Query::parse("limit=abc").paging(rule).unwrap_err();
        assert!(e.to_string().ends_with("querystring/limit must be integer"), "{e}");
    }

    #[test]
    fn booleans_are_coerced_like_the_incumbent() {
        let q = Query::parse("a=true&b=0&c=yes");
        assert_eq!(q.bool("a").unwrap(), Some(true));
        assert_eq!(q.bool("b").unwrap(), Some(false));
        assert!(q.bool("c").is_err());
        assert_eq!(q.bool("d").unwrap(), None);
    }

    #[test]
    fn a_first_row_total_is_zero_past_the_end() {
        let paging = Paging { limit: 2, offset: 9 };
        assert_eq!(Page::<u8>::first_row_total(paging, 9, vec![]).total, 0);
        assert_eq!(Page::first_row_total(paging, 11, vec![1]).total, 11);
    }

    #[test]
    fn the_envelope_serializes_in_the_incumbents_order() {
        let page = Page::new(Paging { limit: 2, offset: 4 }, 9, vec![1, 2]);
        assert_eq!(
            serde_json::to_string(&page).unwrap(),
            r#"{"limit":2,"offset":4,"total":9,"results":[1,2]}"#
        );
    }
}
