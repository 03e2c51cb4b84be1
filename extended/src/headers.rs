//! Headers every response carries, as the incumbent sends them.

use warp::http::header::{
    HeaderName, HeaderValue, ACCESS_CONTROL_ALLOW_ORIGIN, ACCESS_CONTROL_EXPOSE_HEADERS, CACHE_CONTROL,
};
use warp::reply::Response;
use warp::Reply;

/// `X-API-Version`: which server and version answered.
pub const API_VERSION: &str = concat!("stacks-ledger v", env!("CARGO_PKG_VERSION"));
/// `server_version` in `GET /extended`.
pub const SERVER_VERSION: &str = concat!("stacks-ledger v", env!("CARGO_PKG_VERSION"));

const X_API_VERSION: HeaderName = HeaderName::from_static("x-api-version");

/// Adds `X-API-Version`, CORS and, unless the route chose its own, `Cache-Control: no-store`.
pub fn with_common_headers(reply: impl Reply) -> Response {
    let mut res = reply.into_response();
    let h = res.headers_mut();
    h.insert(X_API_VERSION, HeaderValue::from_static(API_VERSION));
    h.insert(ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static("X-API-Version"));
    h.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    h.entry(CACHE_CONTROL).or_insert(HeaderValue::from_static("no-store"));
    res
}
