//! CORS preflight (`OPTIONS`) as the incumbent answers it, for every path.

use warp::http::header::{
    HeaderValue, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN, ACCESS_CONTROL_EXPOSE_HEADERS,
    VARY,
};
use warp::http::StatusCode;
use warp::reply::Response;
use warp::{Filter, Reply};

/// `204` allowing any origin and the methods the API serves.
pub fn preflight() -> impl Filter<Extract = (Response,), Error = warp::Rejection> + Clone {
    warp::options().map(|| {
        let mut res = warp::reply::with_status(warp::reply(), StatusCode::NO_CONTENT).into_response();
        let h = res.headers_mut();
        h.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        h.insert(ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET,HEAD,POST"));
        h.insert(ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static("X-API-Version"));
        h.insert(VARY, HeaderValue::from_static("Access-Control-Request-Headers"));
        res
    })
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn preflight_allows_any_origin() {
        let res = warp::test::request()
            .method("OPTIONS")
            .path("/extended/v1/tx")
            .header("origin", "http://example.test")
            .header("access-control-request-method", "GET")
            .reply(&super::preflight())
            .await;
        assert_eq!(res.status(), 204);
        assert_eq!(res.headers()["access-control-allow-origin"], "*");
        assert_eq!(res.headers()["access-control-allow-methods"], "GET,HEAD,POST");
        assert!(res.body().is_empty());
    }
}
