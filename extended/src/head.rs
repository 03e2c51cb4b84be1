//! `HEAD` on every GET route, as the incumbent (Express) answers it: the GET's status and
//! headers, no body.
//!
//! warp cannot rewrite a request's method inside a filter chain, so the HEAD request is
//! replayed as a GET through the same filters run as a service. That service runs on its own
//! task: warp forbids starting a route while another one is being polled on the same thread.

use std::convert::Infallible;

use tower_service::Service;
use warp::http::{HeaderMap, Method, Request};
use warp::path::FullPath;
use warp::reply::Response;
use warp::{Filter, Rejection, Reply};

use crate::error::recover;

/// Answers `HEAD` with what `get` answers a GET of the same URL, minus the body. URLs `get`
/// does not serve are left to the caller's fallback.
pub fn head_as_get<F, R>(get: F) -> impl Filter<Extract = (Response,), Error = Rejection> + Clone
where
    F: Filter<Extract = (R,), Error = Rejection> + Clone + Send + Sync + 'static,
    R: Reply,
{
    // The GET's errors rendered as the API renders them; an unmatched URL marked as such.
    let inner = get
        .map(|r: R| (true, r.into_response()))
        .recover(|rej| async move { recover(rej).await.map(|r| (true, r)) })
        .unify()
        .or(warp::any().map(|| (false, warp::reply().into_response())))
        .unify();
    let inner = warp::service(inner.map(|(matched, res): (bool, Response)| MatchedReply(matched, res)));
    warp::head().and(warp::path::full()).and(query_string()).and(warp::header::headers_cloned()).and_then(
        move |path: FullPath, query: String, headers: HeaderMap| {
            let mut svc = inner.clone();
            async move {
                let uri = if query.is_empty() {
                    path.as_str().to_owned()
                } else {
                    format!("{}?{query}", path.as_str())
                };
                let mut req = Request::new(String::new());
                *req.method_mut() = Method::GET;
                *req.uri_mut() = uri.parse().map_err(|_| warp::reject::not_found())?;
                *req.headers_mut() = headers;
                let res = tokio::spawn(async move { svc.call(req).await })
                    .await
                    .map_err(|_| warp::reject::not_found())?;
                let Ok(res) = res;
                let matched = res.headers().contains_key(MATCHED);
                if !matched {
                    return Err(warp::reject::not_found());
                }
                let (mut parts, _) = res.into_parts();
                parts.headers.remove(MATCHED);
                let mut out = warp::reply().into_response();
                *out.status_mut() = parts.status;
                *out.headers_mut() = parts.headers;
                Ok::<_, Rejection>(out)
            }
        },
    )
}

/// Internal marker header: the GET filters matched the URL (removed before replying).
const MATCHED: &str = "x-stacks-ledger-head-matched";

struct MatchedReply(bool, Response);

impl Reply for MatchedReply {
    fn into_response(self) -> Response {
        let mut res = self.1;
        if self.0 {
            res.headers_mut().insert(MATCHED, warp::http::HeaderValue::from_static("1"));
        }
        res
    }
}

/// The raw query string, empty when there is none.
fn query_string() -> impl Filter<Extract = (String,), Error = Infallible> + Clone {
    warp::query::raw().or(warp::any().map(String::new)).unify()
}

#[cfg(test)]
mod tests {
    use warp::http::header::ETAG;
    use warp::{Filter, Reply};

    fn get() -> impl Filter<Extract = (warp::reply::Response,), Error = warp::Rejection> + Clone {
        warp::get()
            .and(warp::path!("thing"))
            .and(warp::query::raw())
            .map(|q: String| warp::reply::with_header(q, ETAG, "\"e\"").into_response())
    }

    #[tokio::test]
    async fn head_has_the_gets_status_and_headers_and_no_body() {
        let api = super::head_as_get(get()).or(get());
        let res = warp::test::request().method("HEAD").path("/thing?a=1").reply(&api).await;
        assert_eq!(res.status(), 200);
        assert_eq!(res.headers()[ETAG], "\"e\"");
        assert!(res.body().is_empty());
        let res = warp::test::request().method("GET").path("/thing?a=1").reply(&api).await;
        assert_eq!(res.body().as_ref(), b"a=1");
    }

    #[tokio::test]
    async fn head_of_an_unserved_url_is_left_to_the_fallback() {
        let api = super::head_as_get(get());
        let res = warp::test::request().method("HEAD").path("/other").filter(&api).await;
        assert!(res.is_err());
    }
}
