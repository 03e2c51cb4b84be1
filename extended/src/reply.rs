//! Response helpers every route family shares: JSON with the incumbent's ETag / `If-None-Match`
//! handling, the deprecation warning, and the 302 to the `0x` form of an id.

use sha2::{Digest, Sha256};
use warp::http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, LOCATION};
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

/// [`json_with_etag`] of a body already written as JSON text (as `warp::reply::json` sends a
/// serialized one: the same bytes and headers).
pub fn json_text_with_etag(body: String, etag: Option<&str>) -> Response {
    let mut res = Response::new(body.into());
    res.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let mut res = with_common_headers(res);
    if let Some(v) = etag.and_then(|e| HeaderValue::from_str(&format!("\"{e}\"")).ok()) {
        res.headers_mut().insert(ETAG, v);
        res = with_cache(res, MUST_REVALIDATE);
    }
    res
}

/// A list page as JSON text: `envelope` (the page without rows, its `results` member last, as
/// in every list envelope) with `rows`, each already JSON text, spliced in as its `results`.
/// Rows written as text are not parsed again (as a `RawValue` is checked) nor built as a tree.
pub fn page_text<T: serde::Serialize>(envelope: &T, rows: &[String]) -> String {
    const EMPTY: &str = "\"results\":[]}";
    // Serializing the envelope's numbers, strings and options into a String cannot fail.
    let empty = serde_json::to_string(envelope).unwrap_or_default();
    let Some(head) = empty.strip_suffix("[]}").filter(|_| empty.ends_with(EMPTY)) else {
        debug_assert!(false, "a list envelope ends with an empty `results`: {empty}");
        return empty;
    };
    let mut out = String::with_capacity(head.len() + 2 + rows.iter().map(|r| r.len() + 1).sum::<usize>());
    out.push_str(head);
    out.push('[');
    for (i, r) in rows.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(r);
    }
    out.push_str("]}");
    out
}

/// [`page_text`] with each row written by `write` straight into the page's one buffer.
pub fn page_bytes<T: serde::Serialize, I: IntoIterator>(
    envelope: &T,
    rows: I,
    mut write: impl FnMut(I::Item, &mut Vec<u8>),
) -> Vec<u8> {
    const EMPTY: &[u8] = b"\"results\":[]}";
    // Serializing the envelope's numbers, strings and options into a Vec cannot fail.
    let mut out = serde_json::to_vec(envelope).unwrap_or_default();
    if !out.ends_with(EMPTY) {
        debug_assert!(false, "a list envelope ends with an empty `results`");
        return out;
    }
    out.truncate(out.len() - 2);
    for (i, row) in rows.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write(row, &mut out);
    }
    out.extend_from_slice(b"]}");
    out
}

/// A JSON body already written as bytes, as `warp::reply::json` sends a serialized one (the
/// same bytes and headers), with the common headers.
pub fn json_bytes(body: Vec<u8>) -> Response {
    let mut res = Response::new(body.into());
    res.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    with_common_headers(res)
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
    fn page_text_is_the_serialized_page() {
        let rows = [r#"{"a":1}"#.to_string(), r#"{"b":"x\"y"}"#.to_string()];
        let page = crate::params::Page { limit: 2, offset: 0, total: 9, results: Vec::<String>::new() };
        let full: Vec<serde_json::Value> = rows.iter().map(|r| serde_json::from_str(r).unwrap()).collect();
        let expected = crate::params::Page { limit: 2, offset: 0, total: 9, results: full };
        assert_eq!(page_text(&page, &rows), serde_json::to_string(&expected).unwrap());
        assert_eq!(page_text(&page, &[]), serde_json::to_string(&page).unwrap());
        let bytes = page_bytes(&page, &rows, |r, out| out.extend_from_slice(r.as_bytes()));
        assert_eq!(String::from_utf8(bytes).unwrap(), serde_json::to_string(&expected).unwrap());
        let none = page_bytes(&page, Vec::<String>::new(), |r, out| out.extend_from_slice(r.as_bytes()));
        assert_eq!(String::from_utf8(none).unwrap(), serde_json::to_string(&page).unwrap());
    }

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
