//! The request parameters every `/extended/v1/tx/*` route family reads (transaction ids, event
//! paging, the raw query): a leaf, so the route files share them without importing each other.

use warp::Filter;

use crate::error::{ApiError, In, Rule, HASH_PATTERN};
use crate::params::LimitRule;

/// Event paging on single-transaction lookups.
pub const EVENT_LIMIT: LimitRule = LimitRule::new(20, 100);

/// The query string as sent, for redirects that keep it.
pub fn raw_query() -> impl Filter<Extract = (String,), Error = std::convert::Infallible> + Clone {
    warp::query::raw().or(warp::any().map(String::new)).unify()
}

/// A `tx_id` path parameter: `Ok(Some(id))` for the lower-case `0x` form, `Ok(None)` for a
/// valid id without `0x` (the incumbent redirects it), else the invalid-parameter error.
pub fn parse_tx_id(param: &'static str, raw: &str) -> Result<Option<String>, ApiError> {
    parse_tx_id_in(In::Path, param, raw)
}

/// [`parse_tx_id`] of a parameter read from `place` (the incumbent's message names it).
pub fn parse_tx_id_in(place: In, param: &'static str, raw: &str) -> Result<Option<String>, ApiError> {
    let (has_prefix, hex) = match raw.strip_prefix("0x").or_else(|| raw.strip_prefix("0X")) {
        Some(h) => (true, h),
        None => (false, raw),
    };
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ApiError::schema(place, param, Rule::Pattern(HASH_PATTERN)));
    }
    Ok(has_prefix.then(|| format!("0x{}", hex.to_ascii_lowercase())))
}
