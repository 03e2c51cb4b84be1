//! Response helpers every route family shares: JSON with the incumbent's ETag / `If-None-Match`
//! handling, the deprecation warning, and the 302 to the `0x` form of an id.

use sha2::{Digest, Sha256};
use warp::http::header::{CACHE_CONTROL, ETAG, LOCATION};
use warp::http::{HeaderValue, StatusCode};
use warp::reply::Response;

use crate::headers::with_common_headers;

pub const MUST_REVALIDATE: &str = "public, no-cache, must-revalidate";
const DEPRECATED: &str = "299 - \"Deprecated: See https://docs.hiro.so/stacks/api for more information\"";

/// Does `If-None-Match` name `etag` (a quoted value)? Quotes and `W/` prefixes are ignored, as
/// the incumbent parses the header permissively.
pub fn etag_matches(if_none_match: Option<&str>, etag: &str) -> bool {
    let bare = etag.trim_matches('"');
    if_none_match.is_some_and(|h| {
        h.split(',').map(|v| v.trim().trim_start_matches("W/").trim_matches('"')).any(|v| v == bare)
    })
}

/// `304 Not Modified` with the incumbent's headers.
pub fn not_modified() -> Response {
    let res = warp::reply::with_status(warp::reply(), StatusCode::NOT_MODIFIED);
    with_cache(with_common_headers(res), MUST_REVALIDATE)
}

/// A JSON body, with `ETag` and revalidation caching when there is an ETag value (unquoted).
pub fn json_with_etag<T: serde::Serialize>(body: &T, etag: Option<&str>) -> Response {
    let mut res = with_common_headers(warp::reply::json(body));
    if let Some(v) = etag.and_then(|e| HeaderValue::from_str(&format!("\"{e}\"")).ok()) {
        res.headers_mut().insert(ETAG, v);
        res = with_cache(res, MUST_REVALIDATE);
    }
    res
}

pub fn with_cache(mut res: Response, value: &'static str) -> Response {
    res.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static(value));
    res
}

/// Adds the incumbent's `Warning` header of deprecated routes.
pub fn deprecated(mut res: Response) -> Response {
    res.headers_mut().insert("warning", HeaderValue::from_static(DEPRECATED));
    res
}

/// `302` to `location` (the incumbent's redirect of `0x`-less ids).
pub fn found(location: &str) -> Response {
    let mut res = with_common_headers(warp::reply::with_status(warp::reply(), StatusCode::FOUND));
    if let Ok(v) = HeaderValue::from_str(location) {
        res.headers_mut().insert(LOCATION, v);
    }
    res
}

/// Hex SHA-256 of `text` (the incumbent's transaction and principal ETags).
pub fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_none_match_is_parsed_permissively() {
        assert!(etag_matches(Some("\"abc\""), "\"abc\""));
        assert!(etag_matches(Some("W/\"x\", \"abc\""), "abc"));
        assert!(!etag_matches(Some("\"abd\""), "abc"));
        assert!(!etag_matches(None, "abc"));
    }

    #[test]
    fn redirects_and_etags_carry_their_headers() {
        let r = found("/extended/v1/tx/0xab?x=1");
        assert_eq!(r.status(), 302);
        assert_eq!(r.headers()["location"], "/extended/v1/tx/0xab?x=1");
        let r = json_with_etag(&serde_json::json!({}), Some("e1"));
        assert_eq!(r.headers()["etag"], "\"e1\"");
        assert_eq!(r.headers()["cache-control"], MUST_REVALIDATE);
        assert_eq!(json_with_etag(&serde_json::json!({}), None).headers()["cache-control"], "no-store");
    }
}
